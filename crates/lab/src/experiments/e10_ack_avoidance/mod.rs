//! Experiment 10: ACK avoidance (seed 002, 25 Apr 2003): segments per ACK against host CPU
//! service demand, throughput, and the sender's window growth with and without RFC 3465
//! byte counting.

use crate::claims::Judge;
use crate::plots;
use crate::stats::mean;
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::{DropTailConfig, QdiscConfig};
use ackclock_sim::scenario::CpuSpec;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::TraceKind;
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct AckAvoidance;

const NS: [u32; 5] = [2, 4, 8, 16, 32];
const K: usize = NS.len();
const MSS: f64 = 1460.0;
/// Rick Jones's table (seed 002): throughput (Mb/s), service demand (us/KB) of netperf (the
/// receiver in TCP_MAERTS, "local") and of netserver (the sender, "remote").
const RICK: [(f64, f64, f64); 5] = [
    (478.13, 11.230, 9.654),
    (570.90, 10.226, 8.577),
    (641.37, 9.253, 8.168),
    (680.75, 9.384, 7.637),
    (693.86, 8.804, 7.798),
];

#[derive(Clone, Copy, PartialEq)]
enum Model {
    Sun,
    PerPacket,
}

/// The host cost models, in plan order.
const MODELS: [Model; 2] = [Model::Sun, Model::PerPacket];
/// The `abc` settings of the WAN runs, in plan order: counting ACKs, byte counting L = 2.
const ABCS: [u32; 2] = [0, 2];

/// Index in the plan of the WAN run with ABC setting `abc` (index in [`ABCS`]) at `NS[i]`,
/// lossless or through the 40-packet queue. The gigabit runs come first, `m * K + i` for
/// cost model `m` (index in [`MODELS`]).
fn wan_index(abc: usize, i: usize, congested: bool) -> usize {
    2 * K + abc * 2 * K + 2 * i + usize::from(congested)
}

/// The lossless WAN runs whose cwnd is plotted, in the plot's order with their labels.
const PLOTTED: [(usize, usize, &str); 3] = [
    (0, K - 1, "N=32, ACK counting"),
    (1, K - 1, "N=32, ABC L=2"),
    (0, 0, "N=2, ACK counting"),
];

fn lan(base: &Scenario, model: Model, n: u32, quick: bool) -> Scenario {
    let mut s = base.clone();
    if model == Model::PerPacket {
        // Every packet, ACK or data, costs what a data packet costs the Sun sender.
        let c = CpuSpec {
            tx_packet_us: 533.0 + 1500.0 * 0.471,
            rx_packet_us: 533.0 + 1500.0 * 0.471,
            ..CpuSpec::default()
        };
        s.node[0].cpu = Some(c);
        s.node[1].cpu = Some(c);
    }
    s.flow[0].receiver_overrides.ack_every = Some(n);
    if quick {
        s.duration_s = 4.0;
    }
    s
}

/// The 10 Mb/s, 100 ms path without host costs; `queue` packets of drop-tail buffer.
fn wan(base: &Scenario, n: u32, abc: u32, queue: usize, quick: bool) -> Scenario {
    let mut s = base.clone();
    for node in &mut s.node {
        node.cpu = None;
    }
    s.link[0].rate_bps = 100e6;
    s.link[0].delay_ms = 1.0;
    s.link[1].rate_bps = 10e6;
    s.link[1].delay_ms = 49.0;
    s.link[1].queue = Some(QdiscConfig::DropTail(DropTailConfig::packets(queue)));
    let f = &mut s.flow[0];
    f.receiver_overrides.ack_every = Some(n);
    f.tcp_overrides.abc = Some(abc);
    f.tcp_overrides.initial_window_segments = Some(1);
    f.tcp_overrides.send_buffer_bytes = Some(1 << 20);
    f.tcp_overrides.recv_buffer_bytes = Some(1 << 20);
    if queue >= 1000 {
        // Lossless: slow start to 32 segments, then congestion avoidance.
        f.tcp_overrides.initial_ssthresh_bytes = Some(32 * 1460);
        s.duration_s = if quick { 20.0 } else { 30.0 };
    } else {
        s.duration_s = if quick { 30.0 } else { 60.0 };
    }
    s
}

fn kb(r: &RunResult) -> f64 {
    r.summary.flows[0].bytes_delivered as f64 / 1024.0
}

fn acks(r: &RunResult) -> usize {
    r.traces[0]
        .iter()
        .filter(|e| matches!(e.kind, TraceKind::Ack { .. } | TraceKind::DupAck { .. }))
        .count()
}

/// Service demand (CPU us per KB delivered) of the sender and the receiver.
fn demand(r: &RunResult) -> (f64, f64) {
    let d = |i: usize| r.summary.hosts[i].cpu_busy_s * 1e6 / kb(r);
    (d(0), d(1))
}

/// ACK cost over data-segment cost that makes a per-packet model fall by `ratio` from
/// N = 2 to N = 32: (1 + a/32) / (1 + a/2) = ratio.
fn implied_ack_cost(ratio: f64) -> f64 {
    (1.0 - ratio) / (ratio / 2.0 - 1.0 / 32.0)
}

/// Seconds from the first data segment until cwnd reaches 32 segments.
fn slow_start_s(r: &RunResult) -> Option<f64> {
    let tr = &r.traces[0];
    let t0 = tr
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Send { len, .. } if len > 0))?
        .time;
    let t1 = tr.iter().find(|e| f64::from(e.cwnd) >= 32.0 * MSS)?.time;
    Some((t1 - t0).as_secs_f64())
}

/// cwnd growth per RTT (segments) in congestion avoidance: from when cwnd passes 32
/// segments to the end, over the round trips (mean measured RTT) in between.
fn ca_growth(r: &RunResult) -> Option<f64> {
    let tr = &r.traces[0];
    let i0 = tr.iter().position(|e| f64::from(e.cwnd) >= 32.0 * MSS)?;
    let (a, b) = (&tr[i0], tr.last()?);
    let rtts: Vec<f64> = tr[i0..]
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::RttSample { rtt } => Some(rtt.as_secs_f64()),
            _ => None,
        })
        .collect();
    if rtts.is_empty() {
        return None;
    }
    let rounds = (b.time - a.time).as_secs_f64() / mean(&rtts);
    Some((f64::from(b.cwnd) - f64::from(a.cwnd)) / MSS / rounds)
}

fn mbps(r: &RunResult) -> f64 {
    r.summary.flows[0].goodput_bps / 1e6
}

/// A gigabit run between CPU-bound hosts.
#[derive(Clone, Copy)]
pub struct Lan {
    acks_per_kb: f64,
    /// Service demand (us/KB) of the sender and of the receiver.
    sender: f64,
    receiver: f64,
    mbps: f64,
}

/// A WAN run without losses: seconds until cwnd reaches 32 segments, growth per RTT after.
#[derive(Clone, Copy)]
pub struct Lossless {
    slow_start: Option<f64>,
    ca_growth: Option<f64>,
}

/// A WAN run through the 40-packet queue.
#[derive(Clone, Copy)]
pub struct Congested {
    goodput: f64,
    retransmitted: u64,
}

/// One run, reduced; the lossless runs of [`PLOTTED`] keep their whole result.
pub enum Run {
    Lan(Lan),
    /// Boxed: most runs keep no result, and a whole result is large beside the others.
    Lossless(Lossless, Option<Box<RunResult>>),
    Congested(Congested),
}

pub struct Measured {
    /// Per cost model of [`MODELS`], per N of [`NS`].
    lan: Vec<Vec<Lan>>,
    /// Per ABC setting of [`ABCS`], per N of [`NS`].
    lossless: Vec<Vec<Lossless>>,
    congested: Vec<Vec<Congested>>,
    /// The cwnd traces of [`PLOTTED`], as one result with a flow per trace.
    cwnd: RunResult,
}

impl Measured {
    /// Service demand at N = 32 over N = 2, of cost model `m`, the sender's or receiver's.
    fn ratio(&self, m: usize, receiver: bool) -> f64 {
        let d = |l: &Lan| if receiver { l.receiver } else { l.sender };
        d(&self.lan[m][K - 1]) / d(&self.lan[m][0])
    }

    /// Goodput at N = 32 over N = 2, of cost model `m`.
    fn tp_ratio(&self, m: usize) -> f64 {
        self.lan[m][K - 1].mbps / self.lan[m][0].mbps
    }

    /// How much slower slow start reaches 32 segments at N = 32 than at N = 2 (infinite
    /// when only N = 2 gets there).
    fn ss_slower(&self, abc: usize) -> Option<f64> {
        match (
            self.lossless[abc][0].slow_start,
            self.lossless[abc][K - 1].slow_start,
        ) {
            (Some(a), Some(b)) => Some(b / a),
            (Some(_), None) => Some(f64::INFINITY),
            _ => None,
        }
    }
}

fn fmt_s(x: Option<f64>) -> String {
    x.map_or("never".into(), |v| format!("{v:.2} s"))
}

/// Puts the three plotted runs' first traces into one result, one named flow each (the
/// summary is the first run's).
fn cwnd_runs(runs: Vec<RunResult>) -> Result<RunResult> {
    let mut summary = runs
        .first()
        .ok_or_else(|| anyhow!("the plotted runs are missing"))?
        .summary
        .clone();
    let f0 = summary.flows[0].clone();
    summary.flows = PLOTTED
        .iter()
        .map(|(_, _, n)| {
            let mut f = f0.clone();
            f.name = n.to_string();
            f
        })
        .collect();
    Ok(RunResult {
        summary,
        wall_s: 0.0,
        traces: runs
            .into_iter()
            .map(|mut r| r.traces.swap_remove(0))
            .collect(),
        queues: Vec::new(),
        captures: Vec::new(),
    })
}

impl Experiment for AckAvoidance {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "ack_avoidance"
    }

    fn files(&self) -> Files {
        files!("e10_ack_avoidance")
    }

    /// Two cost models on the gigabit link; two WAN runs (lossless, congested) per ABC
    /// setting and N (see [`wan_index`]).
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let mut runs = Vec::new();
        for m in MODELS {
            for n in NS {
                runs.push(lan(base, m, n, p.quick));
            }
        }
        for abc in ABCS {
            for n in NS {
                runs.push(wan(base, n, abc, 1000, p.quick));
                runs.push(wan(base, n, abc, 40, p.quick));
            }
        }
        Ok(runs)
    }

    fn reduce(&self, _p: Params, index: usize, r: RunResult) -> Result<Run> {
        if index < 2 * K {
            let (sender, receiver) = demand(&r);
            return Ok(Run::Lan(Lan {
                acks_per_kb: acks(&r) as f64 / kb(&r),
                sender,
                receiver,
                mbps: mbps(&r),
            }));
        }
        if (index - 2 * K) % 2 == 1 {
            return Ok(Run::Congested(Congested {
                goodput: mbps(&r),
                retransmitted: r.summary.flows[0].retransmitted_segments,
            }));
        }
        let plotted = PLOTTED
            .iter()
            .any(|&(abc, i, _)| wan_index(abc, i, false) == index);
        Ok(Run::Lossless(
            Lossless {
                slow_start: slow_start_s(&r),
                ca_growth: ca_growth(&r),
            },
            plotted.then(|| Box::new(r)),
        ))
    }

    /// The runs come in plan order, so each list fills in the order of [`NS`].
    fn measure(&self, _p: Params, runs: Vec<Run>) -> Result<Measured> {
        let mut lan = vec![Vec::new(); MODELS.len()];
        let mut lossless = vec![Vec::new(); ABCS.len()];
        let mut congested = vec![Vec::new(); ABCS.len()];
        let mut plotted: Vec<Option<RunResult>> = PLOTTED.iter().map(|_| None).collect();
        for (index, run) in runs.into_iter().enumerate() {
            match run {
                Run::Lan(l) => lan[index / K].push(l),
                Run::Lossless(l, r) => {
                    lossless[(index - 2 * K) / (2 * K)].push(l);
                    if let Some(k) = PLOTTED
                        .iter()
                        .position(|&(abc, i, _)| wan_index(abc, i, false) == index)
                    {
                        plotted[k] = r.map(|r| *r);
                    }
                }
                Run::Congested(c) => congested[(index - 2 * K) / (2 * K)].push(c),
            }
        }
        let plotted = plotted
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| anyhow!("a plotted run is missing"))?;
        Ok(Measured {
            lan,
            lossless,
            congested,
            cwnd: cwnd_runs(plotted)?,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_cpu(m, text, j)?;
        judge_window(m, text, j)
    }

    fn render(&self, _p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let f1 = Figure::from_text(
            out,
            "service-demand",
            "Service demand against segments per ACK, relative to an ACK every 2 segments",
            text,
            &[],
        )?;
        plot_demand(m, &f1.file, &f1.title)?;
        let f2 = Figure::from_text(
            out,
            "cwnd-n32",
            "Window growth with an ACK every 32 segments, counting ACKs or bytes (ABC)",
            text,
            &[],
        )?;
        plots::cwnd_titled(&m.cwnd, &f2.file, &f2.title)?;
        Ok(Rendered {
            setup: text.get("setup")?,
            tables: vec![cpu_table(m), window_table(m)],
            plots: vec![f1, f2],
            discussion: text.get("discussion")?,
        })
    }
}

/// The gigabit claims: ACKs per KB, service demand, the implied ACK cost, throughput.
fn judge_cpu(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let apk_ok = NS
        .iter()
        .zip(&m.lan[0])
        .all(|(&n, l)| (l.acks_per_kb / (1024.0 / (MSS * f64::from(n))) - 1.0).abs() <= 0.10);
    let apk_verdict = Verdict::of(apk_ok);
    j.claim(
        "acks_per_kb",
        m.lan[0]
            .iter()
            .map(|l| format!("{:.3}", l.acks_per_kb))
            .collect::<Vec<_>>()
            .join(", "),
        apk_verdict,
        // The only claim without a note of its own.
        if apk_verdict == Verdict::Fail {
            text.get("note missed")?
        } else {
            String::new()
        },
    )?;
    let rick_rr = RICK[4].1 / RICK[0].1;
    let rick_sr = RICK[4].2 / RICK[0].2;
    let band = |x: f64| (0.65..=0.95).contains(&x);
    let both = |receiver: bool| {
        format!(
            "{:.2} (Sun 3/60), {:.2} (per packet)",
            m.ratio(0, receiver),
            m.ratio(1, receiver)
        )
    };
    let rick = |r: f64| text.fill("note rick_table", &[("ratio", format!("{r:.2}"))]);
    j.claim(
        "sd_receiver",
        both(true),
        Verdict::of(band(m.ratio(0, true)) && band(m.ratio(1, true))),
        rick(rick_rr)?,
    )?;
    j.claim(
        "sd_sender",
        both(false),
        Verdict::of(band(m.ratio(0, false)) && band(m.ratio(1, false))),
        rick(rick_sr)?,
    )?;
    j.claim(
        "ack_cost",
        format!(
            "Sun 3/60: receiver {:.2}, sender {:.2}; per packet: {:.2}, {:.2}",
            implied_ack_cost(m.ratio(0, true)),
            implied_ack_cost(m.ratio(0, false)),
            implied_ack_cost(m.ratio(1, true)),
            implied_ack_cost(m.ratio(1, false))
        ),
        Verdict::Info,
        text.fill(
            "note ack_cost",
            &[
                ("receiver", format!("{:.2}", implied_ack_cost(rick_rr))),
                ("sender", format!("{:.2}", implied_ack_cost(rick_sr))),
            ],
        )?,
    )?;
    j.claim(
        "throughput",
        format!(
            "{:.2} (Sun 3/60), {:.2} (per packet)",
            m.tp_ratio(0),
            m.tp_ratio(1)
        ),
        Verdict::of(m.tp_ratio(0) >= 1.10 && m.tp_ratio(1) >= 1.10),
        text.get("note throughput")?,
    )
}

/// The WAN claims: window growth with and without byte counting (N = 32 is the last N).
fn judge_window(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let ca_off = m.lossless[0][K - 1].ca_growth;
    let ca_on = m.lossless[1][K - 1].ca_growth;
    let inv_n = 1.0 / 32.0;
    let ca_ok = ca_off.is_some_and(|g| (0.5 * inv_n..=1.5 * inv_n).contains(&g))
        && ca_on.is_some_and(|g| (0.7..=1.3).contains(&g));
    j.claim(
        "ca_counting",
        format!(
            "{} off, {} on",
            ca_off.map_or("-".into(), |g| format!("{g:.3}")),
            ca_on.map_or("-".into(), |g| format!("{g:.2}"))
        ),
        Verdict::of(ca_ok),
        text.get("note ca_counting")?,
    )?;
    let (sso, ssn) = (m.ss_slower(0), m.ss_slower(1));
    let ss = |abc: usize, i: usize| fmt_s(m.lossless[abc][i].slow_start);
    let times = |x: Option<f64>| x.map_or("-".into(), |x| format!("x{x:.1}"));
    j.claim(
        "ss_counting",
        format!(
            "off: {} vs {} ({}); on: {} vs {} ({})",
            ss(0, K - 1),
            ss(0, 0),
            times(sso),
            ss(1, K - 1),
            ss(1, 0),
            times(ssn)
        ),
        Verdict::of(sso.is_some_and(|x| x >= 3.0) && ssn.is_some_and(|x| x >= 3.0)),
        text.get("note ss_counting")?,
    )?;
    j.claim(
        "abc_goodput",
        format!(
            "{:.2} / {:.2} Mb/s",
            m.congested[1][K - 1].goodput,
            m.congested[0][K - 1].goodput
        ),
        Verdict::Info,
        format!(
            "with N = 2: {:.2} (on) / {:.2} (off) Mb/s",
            m.congested[1][0].goodput, m.congested[0][0].goodput
        ),
    )
}

/// Service demand and throughput per N: Rick Jones's beside both cost models'.
fn cpu_table(m: &Measured) -> Table {
    let rows = NS
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let (sun, pp) = (&m.lan[0][i], &m.lan[1][i]);
            vec![
                n.to_string(),
                format!("{:.0}", RICK[i].0),
                format!("{:.3}", RICK[i].1),
                format!("{:.3}", RICK[i].2),
                format!("{:.3}", sun.acks_per_kb),
                format!("{:.2}", sun.mbps),
                format!("{:.0}", sun.receiver),
                format!("{:.0}", sun.sender),
                format!("{:.2}", pp.mbps),
                format!("{:.0}", pp.receiver),
                format!("{:.0}", pp.sender),
            ]
        })
        .collect();
    Table {
        caption: "Service demand (us/KB) and throughput, CPU-bound hosts on a gigabit link; Rick Jones's HP-UX TCP_MAERTS numbers beside ours (netperf = the receiver)".into(),
        header: Table::header(&[
            "N (segments per ACK)",
            "Rick: Mb/s",
            "Rick: receiver us/KB",
            "Rick: sender us/KB",
            "ACKs per KB",
            "Sun 3/60: Mb/s",
            "receiver us/KB",
            "sender us/KB",
            "per packet: Mb/s",
            "receiver us/KB",
            "sender us/KB",
        ]),
        rows,
    }
}

/// Slow start, congestion-avoidance growth and congested goodput per ABC setting and N.
fn window_table(m: &Measured) -> Table {
    let mut rows = Vec::new();
    for (abc, name) in [(0, "off"), (1, "L = 2")] {
        for (i, &n) in NS.iter().enumerate() {
            let (l, c) = (&m.lossless[abc][i], &m.congested[abc][i]);
            rows.push(vec![
                n.to_string(),
                name.into(),
                fmt_s(l.slow_start),
                l.ca_growth.map_or("-".into(), |g| format!("{g:.3}")),
                format!("{:.2}", c.goodput),
                c.retransmitted.to_string(),
            ]);
        }
    }
    Table {
        caption: "10 Mb/s, 100 ms path: slow start to 32 segments and congestion-avoidance growth (lossless), goodput through a 40-packet drop-tail queue".into(),
        header: Table::header(&[
            "N",
            "ABC",
            "slow start to 32 segments",
            "CA growth (segments/RTT)",
            "goodput, 40-packet queue (Mb/s)",
            "retransmitted",
        ]),
        rows,
    }
}

/// Service demand relative to N = 2: Rick Jones's and our models'.
fn plot_demand(m: &Measured, path: &Path, title: &str) -> Result<()> {
    let rel = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
        (0..K).map(|i| (f64::from(NS[i]), f(i) / f(0))).collect()
    };
    plots::lines(
        path,
        title,
        "segments per ACK, N (log scale)",
        "us/KB, relative to N = 2",
        &[
            ("Rick Jones: receiver (netperf)".into(), rel(&|i| RICK[i].1)),
            ("Rick Jones: sender (netserver)".into(), rel(&|i| RICK[i].2)),
            (
                "Sun 3/60 model: receiver".into(),
                rel(&|i| m.lan[0][i].receiver),
            ),
            (
                "Sun 3/60 model: sender".into(),
                rel(&|i| m.lan[0][i].sender),
            ),
            (
                "per-packet model: receiver".into(),
                rel(&|i| m.lan[1][i].receiver),
            ),
        ],
        true,
    )
}
