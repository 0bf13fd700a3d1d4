//! Experiment 9: task-to-task TCP throughput on a 10 Mb/s Ethernet against the socket
//! buffer size (seed 000 and 001, 24 Oct 1988): throughput rises while a larger buffer lets
//! the sender, the wire and the receiver work in parallel, then levels off at 91% of the
//! 1,104 KB/s framing maximum where the sender's CPU is saturated. The hosts' costs come
//! from the seed's Jul 1988 per-packet budget; runs without host costs check the framing
//! arithmetic, and (full variant only) unequal send and receive buffers test the seed's
//! "best when equal".

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct Ethernet;

const MSS: usize = 1460;
/// The seed's 3/60-to-3/60 column (KB/s) for 1..12 packets of socket buffer.
const SEED_3_60: [f64; 12] = [
    384.0, 606.0, 690.0, 784.0, 866.0, 904.0, 946.0, 954.0, 974.0, 983.0, 995.0, 1001.0,
];
/// The seed's "theoretical maximum" (KB/s). Its KB are KiB: 1,104 KiB/s is within 0.5% of
/// the framing bound below, 1,104 kB/s is not.
const SEED_MAX: f64 = 1104.0;
/// Framing bounds without host costs, derived from the frame sizes: 1460 data bytes per
/// 1538 + 84 byte-times (one ACK per segment) or 1538 + 42 (one per two segments).
const BOUND_ACK1: f64 = 1460.0 * 10e6 / 8.0 / 1622.0 / 1024.0;
const BOUND_ACK2: f64 = 1460.0 * 10e6 / 8.0 / 1580.0 / 1024.0;
/// Receive-buffer and send-buffer sizes of the off-diagonal grid (packets).
const GRID: [usize; 4] = [2, 4, 8, 12];
/// The buffer (packets) whose run is zoomed into in the time-sequence plot: with an ACK per
/// two segments, the odd one waits.
const ZOOMED: usize = 3;

/// The equal buffer sizes (packets): the seed's 1..12 in quick mode, on to 17 in full.
fn sizes(quick: bool) -> std::ops::RangeInclusive<usize> {
    if quick {
        1..=12
    } else {
        1..=17
    }
}

/// The off-diagonal cells (send, receive buffer), in plan order; none in quick mode.
fn grid_cells(quick: bool) -> Vec<(usize, usize)> {
    if quick {
        return Vec::new();
    }
    GRID.iter()
        .flat_map(|&r| GRID.iter().filter(move |&&s| s != r).map(move |&s| (s, r)))
        .collect()
}

fn with_buffers(base: &Scenario, send_pkts: usize, recv_pkts: usize) -> Scenario {
    let mut s = base.clone();
    let f = &mut s.flow[0];
    f.tcp_overrides.send_buffer_bytes = Some(send_pkts * MSS);
    f.tcp_overrides.recv_buffer_bytes = Some(recv_pkts * MSS);
    s
}

/// The same wire without host costs and with a window larger than the pipe: the framing
/// bound for a receiver that ACKs every `ack_every` segments.
fn no_cpu(base: &Scenario, ack_every: u32) -> Scenario {
    let mut s = with_buffers(base, 44, 44);
    for n in &mut s.node {
        n.cpu = None;
    }
    s.flow[0].tcp_overrides.ack_every = Some(ack_every);
    s.duration_s = 10.0;
    s.flow[0].app = ackclock_sim::scenario::AppSpec::Bulk {
        bytes: None,
        duration_s: None,
        chunk_bytes: None,
    };
    s
}

/// Task-to-task rate as the seed measured it: bytes over the whole transfer time (KiB/s).
fn kib_s(r: &RunResult) -> f64 {
    r.summary.flows[0].goodput_bps / 8.0 / 1024.0
}

/// Steady rate from the sender's trace: bytes acknowledged after `from_s` over the time to
/// the last ACK (KiB/s), so the handshake and slow start do not count.
fn steady_kib_s(r: &RunResult, from_s: f64) -> f64 {
    let mut first = None;
    let mut last = None;
    for e in &r.traces[0] {
        if let TraceKind::Ack { ack, .. } = e.kind {
            let t = e.time.as_nanos() as f64 / 1e9;
            if t >= from_s {
                first.get_or_insert((t, ack));
                last = Some((t, ack));
            }
        }
    }
    match (first, last) {
        (Some((t0, a0)), Some((t1, a1))) if t1 > t0 => f64::from(a1.since(a0)) / (t1 - t0) / 1024.0,
        _ => 0.0,
    }
}

/// Transfer time (s), and the CPU utilization of each host over it.
fn transfer(r: &RunResult) -> (f64, f64, f64) {
    let f = &r.summary.flows[0];
    let t = f.completed_s.unwrap_or(r.summary.duration_s) - f.start_s;
    let util = |i: usize| {
        r.summary
            .hosts
            .get(i)
            .map_or(0.0, |h| (h.cpu_busy_s / t).min(1.0))
    };
    (t, util(0), util(1))
}

/// Bits on the wire per second (both directions, framing included) over the transfer.
fn wire_mbps(r: &RunResult) -> f64 {
    let (t, _, _) = transfer(r);
    let busy: f64 = r.summary.links.iter().map(|l| l.utilization).sum();
    busy * r.summary.duration_s / t * 10.0
}

/// A copy of flow `flow`'s trace between `from_s` and `from_s + len_s`, shifted to start at
/// zero, for a zoomed time-sequence plot.
pub(super) fn zoom(r: &RunResult, flow: usize, from_s: f64, len_s: f64) -> RunResult {
    let t0 = Instant::ZERO + Duration::from_secs_f64(from_s);
    let t1 = t0 + Duration::from_secs_f64(len_s);
    let ev = r.traces[flow]
        .iter()
        .filter(|e| e.time >= t0 && e.time <= t1)
        .map(|e| TraceEvent {
            time: Instant::ZERO + (e.time - t0),
            ..*e
        })
        .collect();
    RunResult {
        summary: r.summary.clone(),
        wall_s: 0.0,
        traces: vec![ev],
        queues: Vec::new(),
        captures: Vec::new(),
    }
}

/// A run with equal buffers: the rate, and what the hosts and the wire did.
#[derive(Clone, Copy)]
pub struct Point {
    kib_s: f64,
    transfer_s: f64,
    sender_cpu: f64,
    receiver_cpu: f64,
    wire_mbps: f64,
}

/// One run, reduced.
pub enum Run {
    /// Equal buffers; the [`ZOOMED`] run keeps its 40 ms from t = 1 s.
    Equal(Point, Option<Box<RunResult>>),
    /// Without host costs: the steady rate (KiB/s).
    Bound(f64),
    /// Unequal buffers: the rate (KiB/s).
    Cell(f64),
}

pub struct Measured {
    /// Per equal buffer size of [`sizes`], from 1 packet.
    equal: Vec<Point>,
    /// The steady rates without host costs, an ACK per segment and per two (KiB/s).
    max1: f64,
    max2: f64,
    /// Per cell of [`grid_cells`], the rate (KiB/s); empty in quick mode.
    grid: Vec<((usize, usize), f64)>,
    /// The zoomed trace of the [`ZOOMED`]-packet run.
    zoomed: Box<RunResult>,
}

impl Measured {
    /// The rate with `n` packets of send and receive buffer (KiB/s).
    fn at(&self, n: usize) -> f64 {
        self.equal[n - 1].kib_s
    }

    fn rates(&self) -> Vec<f64> {
        self.equal.iter().map(|p| p.kib_s).collect()
    }

    /// The mean rate at 10-12 packets (KiB/s).
    fn plateau(&self) -> f64 {
        (self.at(10) + self.at(11) + self.at(12)) / 3.0
    }

    /// The plateau over the seed's maximum.
    fn plateau_share(&self) -> f64 {
        self.plateau() / SEED_MAX
    }

    /// The rate with a `s`-packet send and `r`-packet receive buffer (full mode).
    fn cell(&self, s: usize, r: usize) -> f64 {
        if s == r {
            self.at(s)
        } else {
            self.grid
                .iter()
                .find(|(c, _)| *c == (s, r))
                .map(|(_, v)| *v)
                .expect("cell")
        }
    }

    /// The best send buffer for an `r`-packet receive buffer: the smallest within 0.5% of
    /// the row's maximum as it rises.
    fn best_send(&self, r: usize) -> usize {
        let mut best = (0usize, 0.0f64);
        for &s in &GRID {
            let v = self.cell(s, r);
            if v > best.1 * 1.005 {
                best = (s, v);
            }
        }
        best.0
    }
}

impl Experiment for Ethernet {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "ethernet"
    }

    fn files(&self) -> Files {
        files!("e09_ethernet")
    }

    /// The equal buffers of [`sizes`], the two runs without host costs, then the unequal
    /// cells of [`grid_cells`].
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let mut runs: Vec<Scenario> = sizes(p.quick).map(|n| with_buffers(base, n, n)).collect();
        runs.push(no_cpu(base, 1));
        runs.push(no_cpu(base, 2));
        for (s, r) in grid_cells(p.quick) {
            runs.push(with_buffers(base, s, r));
        }
        Ok(runs)
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let n_equal = sizes(p.quick).count();
        if index < n_equal {
            let (transfer_s, sender_cpu, receiver_cpu) = transfer(&r);
            let point = Point {
                kib_s: kib_s(&r),
                transfer_s,
                sender_cpu,
                receiver_cpu,
                wire_mbps: wire_mbps(&r),
            };
            let zoomed = (index == ZOOMED - 1).then(|| Box::new(zoom(&r, 0, 1.0, 0.04)));
            Ok(Run::Equal(point, zoomed))
        } else if index < n_equal + 2 {
            Ok(Run::Bound(steady_kib_s(&r, 1.0)))
        } else {
            Ok(Run::Cell(kib_s(&r)))
        }
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let mut equal = Vec::new();
        let mut bounds = Vec::new();
        let mut cells = Vec::new();
        let mut zoomed = None;
        for run in runs {
            match run {
                Run::Equal(point, z) => {
                    equal.push(point);
                    zoomed = zoomed.or(z);
                }
                Run::Bound(v) => bounds.push(v),
                Run::Cell(v) => cells.push(v),
            }
        }
        let &[max1, max2] = bounds.as_slice() else {
            return Err(anyhow!("the runs without host costs are missing"));
        };
        Ok(Measured {
            equal,
            max1,
            max2,
            grid: grid_cells(p.quick).into_iter().zip(cells).collect(),
            zoomed: zoomed.ok_or_else(|| anyhow!("the {ZOOMED}-packet run is missing"))?,
        })
    }

    fn judge(&self, p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_bounds(m, text, j)?;
        judge_curve(m, text, j)?;
        if p.quick {
            // The unequal buffers are run in full mode only.
            return j.skip("equal_buffers", text.get("note equal_buffers_quick")?);
        }
        let best_equal = GRID.iter().filter(|&&r| m.best_send(r) == r).count();
        j.claim(
            "equal_buffers",
            format!(
                "best at send = receive in {best_equal} of {} rows",
                GRID.len()
            ),
            Verdict::Info,
            text.get("note equal_buffers")?,
        )
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let mut tables = vec![equal_table(m)];
        if !p.quick {
            tables.push(grid_table(m));
        }
        tables.push(bounds_table(m));
        Ok(Rendered {
            setup: text.fill("setup", &[("max", sizes(p.quick).end().to_string())])?,
            tables,
            plots: plot(m, text, out)?,
            discussion: text.fill(
                "discussion",
                &[
                    ("plateau", format!("{:.0}", m.plateau_share() * 100.0)),
                    (
                        "seed_plateau",
                        format!("{:.0}", SEED_3_60[11] / SEED_MAX * 100.0),
                    ),
                ],
            )?,
        })
    }
}

/// The note of a claim that has none of its own: a pointer to the discussion if it fails.
fn missed(text: &Text, v: Verdict) -> Result<String> {
    if v == Verdict::Fail {
        text.get("note missed")
    } else {
        Ok(String::new())
    }
}

/// The framing bounds without host costs.
fn judge_bounds(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let near = |x: f64, y: f64| (x - y).abs() / y <= 0.005;
    let (max1, max2) = (m.max1, m.max2);
    j.claim(
        "max_framing",
        Ours::num(max1, format!("{max1:.1} KiB/s")),
        Verdict::of(near(max1, BOUND_ACK1) && near(max1, SEED_MAX)),
        text.fill(
            "note max_framing",
            &[
                ("bound", format!("{BOUND_ACK1:.1}")),
                ("off", format!("{:+.2}", (max1 / SEED_MAX - 1.0) * 100.0)),
            ],
        )?,
    )?;
    j.claim(
        "max_ack2",
        Ours::num(max2, format!("{max2:.1} KiB/s")),
        Verdict::of(near(max2, BOUND_ACK2)),
        format!("bound {BOUND_ACK2:.1}"),
    )
}

/// The throughput curve with equal buffers: plateau, the 1-packet point, the knee, no
/// drop, and the distance from the seed's column.
fn judge_curve(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let ours = m.rates();
    let plateau_share = m.plateau_share();
    let plateau = m.plateau();
    let v = Verdict::of((0.80..=0.95).contains(&plateau_share));
    j.claim(
        "plateau",
        Ours::num(
            plateau_share,
            format!("{plateau_share:.2} ({plateau:.0} KiB/s)"),
        ),
        v,
        missed(text, v)?,
    )?;
    let one = m.at(1) / m.at(12);
    let v = Verdict::of((0.25..=0.50).contains(&one));
    j.claim(
        "one_packet",
        Ours::num(
            one,
            format!("{one:.2} ({:.0} of {:.0} KiB/s)", m.at(1), m.at(12)),
        ),
        v,
        missed(text, v)?,
    )?;
    let knee = (1..=ours.len()).find(|&n| m.at(n) >= 0.9 * m.at(12));
    let v = Verdict::of(knee.is_some_and(|k| (3..=9).contains(&k)));
    j.claim(
        "knee",
        Ours {
            text: knee.map_or("never".into(), |k| format!("{k} packets")),
            value: knee.map(|k| k as f64),
        },
        v,
        missed(text, v)?,
    )?;
    let worst_drop = ours
        .windows(2)
        .map(|w| (w[0] - w[1]) / w[0])
        .fold(0.0f64, f64::max);
    let v = Verdict::of(worst_drop <= 0.03);
    j.claim(
        "rising",
        Ours::num(worst_drop, format!("{:.1}%", worst_drop * 100.0)),
        v,
        missed(text, v)?,
    )?;
    let table_err = SEED_3_60
        .iter()
        .enumerate()
        .map(|(i, p)| (ours[i] - p).abs() / p)
        .sum::<f64>()
        / SEED_3_60.len() as f64;
    j.claim(
        "table",
        Ours::num(table_err, format!("{:.0}%", table_err * 100.0)),
        Verdict::Info,
        text.get("note table")?,
    )
}

/// Equal buffers: the seed's column beside ours, with the wire and the hosts' CPUs.
fn equal_table(m: &Measured) -> Table {
    let rows = m
        .equal
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let seed = SEED_3_60.get(i);
            vec![
                format!("{}", i + 1),
                seed.map_or("-".into(), |s| format!("{s:.0}")),
                format!("{:.0}", p.kib_s),
                seed.map_or("-".into(), |s| format!("{:.2}", p.kib_s / s)),
                format!("{:.1}", p.wire_mbps),
                format!("{:.0}%", p.sender_cpu * 100.0),
                format!("{:.0}%", p.receiver_cpu * 100.0),
                format!("{:.2}", p.transfer_s),
            ]
        })
        .collect();
    Table {
        caption:
            "Send = receive buffer: the published 3/60 column (24 Oct 1988) beside ours (published KB/s read as KiB/s)"
                .into(),
        header: Table::header(&[
            "buffer (packets)",
            "published 3/60 (KB/s)",
            "ackclock (KiB/s)",
            "ours / published",
            "wire (Mb/s)",
            "sender CPU",
            "receiver CPU",
            "transfer (s)",
        ]),
        rows,
    }
}

/// Unequal buffers: a row per receive buffer, a column per send buffer (full mode).
fn grid_table(m: &Measured) -> Table {
    let rows = GRID
        .iter()
        .map(|&r| {
            let mut row = vec![format!("{r}")];
            row.extend(GRID.iter().map(|&s| format!("{:.0}", m.cell(s, r))));
            row.push(format!("{}", m.best_send(r)));
            row
        })
        .collect();
    let mut header = vec!["receive buffer \\ send buffer".to_string()];
    header.extend(GRID.iter().map(|s| format!("{s}")));
    header.push("best send buffer".into());
    Table {
        caption: "Unequal buffers (KiB/s; best = within 0.5% of the row's maximum, smallest first)"
            .into(),
        header,
        rows,
    }
}

/// The framing bounds beside the runs without host costs.
fn bounds_table(m: &Measured) -> Table {
    Table {
        caption: "Framing bounds without host costs (steady state, KiB/s)".into(),
        header: Table::header(&["ACK policy", "derived bound", "ackclock"]),
        rows: vec![
            vec![
                "every segment".into(),
                format!("{BOUND_ACK1:.1}"),
                format!("{:.1}", m.max1),
            ],
            vec![
                "every 2nd segment".into(),
                format!("{BOUND_ACK2:.1}"),
                format!("{:.1}", m.max2),
            ],
        ],
    }
}

/// Throughput against the buffer, the seed's and ours; 40 ms of the 3-packet run.
fn plot(m: &Measured, text: &Text, out: &Path) -> Result<Vec<Figure>> {
    let ours = m.rates();
    let xs = |v: &[f64]| -> Vec<(f64, f64)> {
        v.iter()
            .enumerate()
            .map(|(i, y)| ((i + 1) as f64, *y))
            .collect()
    };
    let f1 = Figure::from_text(
        out,
        "throughput-vs-buffer",
        "Task-to-task throughput against socket buffer, Sun 3/60 to Sun 3/60 on 10 Mb/s Ethernet",
        text,
        &[],
    )?;
    plots::lines_with_models(
        &f1.file,
        &f1.title,
        "socket buffer (packets of 1460 bytes)",
        "throughput (KB/s, i.e. KiB/s)",
        &[
            (
                "published: Van Jacobson's measurements (24 Oct 1988)".into(),
                xs(&SEED_3_60),
            ),
            ("ackclock, Sun 3/60 cost model".into(), xs(&ours)),
        ],
        &[(
            "theoretical maximum, 1,104 KB/s".into(),
            vec![(1.0, SEED_MAX), (ours.len() as f64, SEED_MAX)],
        )],
        false,
    )?;
    let f2 = Figure::from_text(
        out,
        "tseq-3-packets",
        "40 ms from t = 1 s, 3-packet buffers: ACKs for pairs, one segment left waiting",
        text,
        &[],
    )?;
    plots::time_sequence_titled(&m.zoomed, 0, &f2.file, &f2.title, None)?;
    Ok(vec![f1, f2])
}
