//! Experiment 9: Ethernet throughput against the socket buffer size (seed 000 and 001,
//! 24 Oct 1988; REFERENCES S-f), with host costs from the seed's Jul 1988 budget.

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::Result;

pub struct Ethernet;

const TEXT: &str = include_str!("scenario.toml");
const MSS: usize = 1460;
/// The seed's 3/60-to-3/60 column (KB/s) for 1..12 packets of socket buffer.
const SEED_3_60: [f64; 12] = [
    384.0, 606.0, 690.0, 784.0, 866.0, 904.0, 946.0, 954.0, 974.0, 983.0, 995.0, 1001.0,
];
/// The seed's "theoretical maximum" (KB/s, read as KiB/s: REFERENCES S-f).
const SEED_MAX: f64 = 1104.0;
/// Framing bounds without host costs (REFERENCES S-f, derived): 1460 data bytes per
/// 1538 + 84 byte-times (one ACK per segment) or 1538 + 42 (one per two segments).
const BOUND_ACK1: f64 = 1460.0 * 10e6 / 8.0 / 1622.0 / 1024.0;
const BOUND_ACK2: f64 = 1460.0 * 10e6 / 8.0 / 1580.0 / 1024.0;
/// Receive-buffer and send-buffer sizes of the off-diagonal grid (packets).
const GRID: [usize; 4] = [2, 4, 8, 12];

fn sizes(quick: bool) -> std::ops::RangeInclusive<usize> {
    if quick {
        1..=12
    } else {
        1..=17
    }
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
        if let TraceKind::Ack { ack } = e.kind {
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
    }
}

impl Experiment for Ethernet {
    fn name(&self) -> &'static str {
        "ethernet"
    }
    fn title(&self) -> &'static str {
        "9. Ethernet throughput against the socket buffer"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, quick: bool, _seeds: u64) -> u64 {
        let grid = if quick {
            0
        } else {
            GRID.len() * (GRID.len() - 1)
        };
        (sizes(quick).count() + 2 + grid) as u64
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("ethernet", TEXT)?;
        let q = ctx.quick;
        let mut runs: Vec<Scenario> = sizes(q).map(|n| with_buffers(&base, n, n)).collect();
        runs.push(no_cpu(&base, 1));
        runs.push(no_cpu(&base, 2));
        let mut grid_cells = Vec::new();
        if !q {
            for &r in &GRID {
                for &s in GRID.iter().filter(|&&s| s != r) {
                    grid_cells.push((s, r));
                    runs.push(with_buffers(&base, s, r));
                }
            }
        }
        let res = ctx.run_all(runs)?;
        let n_diag = sizes(q).count();
        let diag = &res[..n_diag];
        let ours: Vec<f64> = diag.iter().map(kib_s).collect();
        let max1 = steady_kib_s(&res[n_diag], 1.0);
        let max2 = steady_kib_s(&res[n_diag + 1], 1.0);

        // Claims.
        let at = |n: usize| ours[n - 1];
        let plateau = (at(10) + at(11) + at(12)) / 3.0;
        let plateau_share = plateau / SEED_MAX;
        let one = at(1) / at(12);
        let knee = (1..=ours.len()).find(|&n| at(n) >= 0.9 * at(12));
        let worst_drop = ours
            .windows(2)
            .map(|w| (w[0] - w[1]) / w[0])
            .fold(0.0f64, f64::max);
        let table_err = SEED_3_60
            .iter()
            .enumerate()
            .map(|(i, p)| (ours[i] - p).abs() / p)
            .sum::<f64>()
            / SEED_3_60.len() as f64;
        let near = |x: f64, y: f64| (x - y).abs() / y <= 0.005;
        let e = self.name();
        let mut claims = vec![
            judged(
                &base,
                e,
                "max_framing",
                format!("{max1:.1} KiB/s"),
                Verdict::of(near(max1, BOUND_ACK1) && near(max1, SEED_MAX)),
                format!(
                    "bound {BOUND_ACK1:.1}; {:+.2}% from 1,104 (which needs 1614 byte-times per segment, e.g. no preamble counted on ACKs)",
                    (max1 / SEED_MAX - 1.0) * 100.0
                ),
            )?,
            judged(
                &base,
                e,
                "max_ack2",
                format!("{max2:.1} KiB/s"),
                Verdict::of(near(max2, BOUND_ACK2)),
                format!("bound {BOUND_ACK2:.1}"),
            )?,
            judged(
                &base,
                e,
                "plateau",
                format!("{plateau_share:.2} ({plateau:.0} KiB/s)"),
                Verdict::of((0.80..=0.95).contains(&plateau_share)),
                "",
            )?,
            judged(
                &base,
                e,
                "one_packet",
                format!("{one:.2} ({:.0} of {:.0} KiB/s)", at(1), at(12)),
                Verdict::of((0.25..=0.50).contains(&one)),
                "",
            )?,
            judged(
                &base,
                e,
                "knee",
                knee.map_or("never".into(), |k| format!("{k} packets")),
                Verdict::of(knee.is_some_and(|k| (3..=9).contains(&k))),
                "",
            )?,
            judged(
                &base,
                e,
                "rising",
                format!("{:.1}%", worst_drop * 100.0),
                Verdict::of(worst_drop <= 0.03),
                "",
            )?,
            judged(
                &base,
                e,
                "table",
                format!("{:.0}%", table_err * 100.0),
                Verdict::Info,
                "see the table: our rise is steeper (the knee comes earlier) and the plateau lower; the discussion says why",
            )?,
        ];

        // Unequal buffers (full runs only).
        let mut tables = Vec::new();
        if !q {
            let cell = |s: usize, r: usize| -> f64 {
                if s == r {
                    at(s)
                } else {
                    let i = grid_cells.iter().position(|&c| c == (s, r)).expect("cell");
                    kib_s(&res[n_diag + 2 + i])
                }
            };
            let mut rows = Vec::new();
            let mut best_equal = 0;
            for &r in &GRID {
                let mut row = vec![format!("{r}")];
                let mut best = (0usize, 0.0f64);
                for &s in &GRID {
                    let v = cell(s, r);
                    if v > best.1 * 1.005 {
                        best = (s, v);
                    }
                    row.push(format!("{v:.0}"));
                }
                if best.0 == r {
                    best_equal += 1;
                }
                row.push(format!("{}", best.0));
                rows.push(row);
            }
            claims.push(judged(
                &base,
                e,
                "equal_buffers",
                format!("best at send = receive in {best_equal} of {} rows", GRID.len()),
                Verdict::Info,
                "our Ethernet has no collisions (data and ACKs take turns), the seed's reason; a larger send buffer than receive buffer costs nothing here",
            )?);
            let mut header = vec!["receive buffer \\ send buffer".to_string()];
            header.extend(GRID.iter().map(|s| format!("{s}")));
            header.push("best send buffer".into());
            tables.push(Table {
                caption: "Unequal buffers (KiB/s; best = within 0.5% of the row's maximum, smallest first)".into(),
                header,
                rows,
            });
        }

        let rows: Vec<Vec<String>> = diag
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let (t, ua, ub) = transfer(r);
                let seed = SEED_3_60.get(i);
                vec![
                    format!("{}", i + 1),
                    seed.map_or("-".into(), |p| format!("{p:.0}")),
                    format!("{:.0}", ours[i]),
                    seed.map_or("-".into(), |p| format!("{:.2}", ours[i] / p)),
                    format!("{:.1}", wire_mbps(r)),
                    format!("{:.0}%", ua * 100.0),
                    format!("{:.0}%", ub * 100.0),
                    format!("{t:.2}"),
                ]
            })
            .collect();
        tables.insert(
            0,
            Table {
                caption: "Send = receive buffer: the seed's 3/60 column beside ours (seed KB/s read as KiB/s)".into(),
                header: [
                    "buffer (packets)",
                    "seed 3/60 (KB/s)",
                    "ackclock (KiB/s)",
                    "ours / seed",
                    "wire (Mb/s)",
                    "sender CPU",
                    "receiver CPU",
                    "transfer (s)",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
                rows,
            },
        );
        tables.push(Table {
            caption: "Framing bounds without host costs (steady state, KiB/s)".into(),
            header: vec![
                "ACK policy".into(),
                "derived bound".into(),
                "ackclock".into(),
            ],
            rows: vec![
                vec![
                    "every segment".into(),
                    format!("{BOUND_ACK1:.1}"),
                    format!("{max1:.1}"),
                ],
                vec![
                    "every 2nd segment".into(),
                    format!("{BOUND_ACK2:.1}"),
                    format!("{max2:.1}"),
                ],
            ],
        });

        let p = ctx.out.join("throughput-vs-buffer.svg");
        let xs = |v: &[f64]| -> Vec<(f64, f64)> {
            v.iter()
                .enumerate()
                .map(|(i, y)| ((i + 1) as f64, *y))
                .collect()
        };
        plots::lines(
            &p,
            "task-to-task throughput vs socket buffer, 10 Mb/s Ethernet",
            "socket buffer (packets of 1460 bytes)",
            "KB/s (KiB/s)",
            &[
                (
                    "seed: Sun 3/60 to 3/60 (24 Oct 1988)".into(),
                    xs(&SEED_3_60),
                ),
                ("ackclock, Sun 3/60 cost model".into(), xs(&ours)),
                (
                    "theoretical max 1,104".into(),
                    vec![(1.0, SEED_MAX), (ours.len() as f64, SEED_MAX)],
                ),
            ],
            false,
        )?;
        let p2 = ctx.out.join("tseq-3-packets.svg");
        plots::time_sequence_titled(
            &zoom(&diag[2], 0, 1.0, 0.04),
            0,
            &p2,
            "40 ms from t = 1 s, 3-packet buffers: ACKs for pairs, one segment left waiting",
            None,
        )?;
        for c in &mut claims {
            if c.verdict == Verdict::Fail && c.note.is_empty() {
                c.note = "ackclock misses the published band; see the discussion".into();
            }
        }
        Ok(Section {
            quote: "The free parameters for the tests were the sender and receiver socket buffer sizes (which control the amount of 'pipelining' possible between the sender, wire and receiver). ... You can see that the 3/60s get 91% of the the theoretical max. ... TCP delivers one ack for every two data packets.".into(),
            quote_source: "seed 000 and 001, 24 Oct 1988 (the table); seed 000, 20 Jul 1988 (the per-packet budget)".into(),
            setup: format!(
                "Two hosts on one shared half-duplex 10 Mb/s Ethernet (1538 byte-times per full frame, 84 per ACK; data and ACKs take turns, no collisions), Tahoe TCP, 1460-byte segments, 8 MB per test, send buffer = receive buffer = 1..{} packets. Each host runs one CPU (jobs one at a time; output a job triggers runs next, before queued input) with costs from the Jul 1988 budget: checksum + LANCE DMA 334 ns per byte in and out, plus the 137 ns/byte copy where data crosses the user boundary; per packet 533 us at the sender (800 us of fixed costs = one output + half an ACK's input) and 223 us at the receiver (set so the receiver runs at the measured 65-70% when the sender is saturated). The receiver ACKs every second segment (200 ms delayed-ACK timer, BSD window updates). The scenario file gives the arithmetic.",
                sizes(q).end()
            ),
            claims,
            tables,
            plots: vec![p, p2],
            discussion: format!(
                "The shape holds: throughput climbs as the buffer lets the sender, the wire and the receiver work in parallel, then levels off where the sender's CPU is saturated (one 1460-byte packet per ~1.5 ms, {:.0}% of the seed's 1,104 KB/s), as the July message found (sender at 100%). The seed's plateau is higher ({:.0}%) because the October code was faster than the July budget the model is built from (the July message's 890 KB/s rose to ~1 MB/s once the sosend/LANCE interaction was fixed). Our rise is steeper and the 1-packet point lower: in the model the LANCE's 300 us of DMA is CPU time spent before the frame goes out (and after it arrives), while the real LANCE moved the frame during its 1.2 ms on the wire, so a stop-and-wait round is ~0.6 ms shorter there; and the real hosts added scheduling delays (process wakeups for every window update) that spread the knee over more buffer sizes. Odd buffer sizes gain little over the even size below them: with an ACK every two segments one segment of the window waits for the next pair (the time-sequence plot of 3 packets). The off-diagonal grid cannot show the seed's 'best when equal' effect, which it attributes to collisions: our shared medium serializes data and ACKs without collisions.",
                plateau_share * 100.0,
                SEED_3_60[11] / SEED_MAX * 100.0
            ),
            ..Section::default()
        })
    }
}
