//! Experiment 20: the two limits of duplicate ACKs (seed 000, Jacobson, "modified TCP
//! congestion avoidance algorithm", end2end-interest, 30 Apr 1990). The message detects a
//! loss "(a) via a retransmit timeout or (b) when some small number (3-4) of consecutive
//! duplicate acks has been received", and trusts (b) only "if the `consecutive duplicates'
//! threshhold is set high enough". Three parts:
//!
//! 1. reordering without loss, of depth 1 to 10 packets, with the threshold of 3 and with
//!    RFC 8985 RACK, on the seed's 16-packet pipe and on one of 64 packets: every
//!    retransmission is spurious;
//! 2. a 20-segment transfer whose last 1, 2 or 3 segments are dropped once: no duplicate ACK
//!    can come, so the timer alone ("the pipe is guaranteed to be empty") against RFC 8985
//!    §7's tail loss probe;
//! 3. the message's arithmetic, "the pipe is 75% full when fast-retransmit detects a loss"
//!    for a threshold of 3 on a pipe of 16 packets, computed.

use crate::claims::{Judge, Ours};
use crate::plots::{self, palette, Chart, Mark, MeanLine, Series};
use crate::stats::{link, mean, sd, secs};
use crate::suite::{files, Experiment, Figure, Files, Params, PerSeed, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::{
    DropTailConfig, ImpairmentsConfig, QdiscConfig, ReorderConfig, ScriptedDrop,
};
use ackclock_sim::scenario::AppSpec;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{LossDetection, TraceEvent, TraceKind};
use anyhow::{anyhow, bail, Result};
use std::path::Path;

/// The experiment (`--only dupack_limits`).
pub struct DupackLimits;

/// The bottleneck direction (gateway to receiver), where packets are held back or dropped.
const PORT: &str = "gw-rcv";
/// The scenario's links: the access link, then the bottleneck.
const BOTTLENECK: usize = 1;
/// A full segment's payload and its packet on the wire (no options: timestamps are off).
const MSS: u32 = 1460;
const PACKET_BYTES: f64 = 1500.0;
/// The round trip without queueing, as the scenario's delays give it (2 x (1 + 63) ms).
const BASE_RTT_S: f64 = 0.128;

/// A path: its pipe (rate x 128 ms) in 1500-byte packets. The seed's LBL-MIT path is 24 KB,
/// "16 packets (assuming 1500 byte MTUs)"; the second has four times the rate.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pipe {
    packets: u32,
}

impl Pipe {
    /// The bottleneck's rate that makes the pipe `packets` long over 128 ms.
    fn rate_bps(self) -> f64 {
        f64::from(self.packets) * PACKET_BYTES * 8.0 / BASE_RTT_S
    }
    /// One packet time at the bottleneck (s).
    fn packet_time(self) -> f64 {
        PACKET_BYTES * 8.0 / self.rate_bps()
    }
    /// The receiver's window: twice the pipe, the seed's "at most twice the
    /// bandwidth-delay product", in bytes.
    fn rwnd(self) -> u32 {
        2 * self.packets * MSS
    }
    /// The transfer of the reordering runs: 40 pipes' worth of full segments.
    fn transfer(self) -> u32 {
        40 * self.packets * MSS
    }
}

/// The seed's pipe, then one four times as long.
const PIPES: [Pipe; 2] = [Pipe { packets: 16 }, Pipe { packets: 64 }];
/// The reordering depths: how many packets overtake a held one when the bottleneck sends
/// back to back.
const DEPTHS: std::ops::RangeInclusive<u32> = 1..=10;
/// The share of the data packets held back at the bottleneck.
const HOLD_PROB: f64 = 0.02;
/// The loss detection of the reordering runs: the threshold, then RACK.
const REORDER_DETECTORS: [LossDetection; 2] = [LossDetection::DupAck, LossDetection::Rack];
/// The loss detection of the tail runs: the timer alone (the threshold cannot fire), then
/// RACK with the tail loss probe.
const TAIL_DETECTORS: [LossDetection; 2] = [LossDetection::DupAck, LossDetection::RackTlp];
/// The tail runs' transfer, in full segments, and how many of the last are dropped once.
const TAIL_SEGMENTS: u64 = 20;
const TAIL_DROPS: [u64; 4] = [0, 1, 2, 3];
/// The tail run drawn as time-sequence diagrams (an index of [`TAIL_DROPS`]).
const PLOTTED_TAIL: usize = 2;
/// The seed's numbers for the arithmetic: the threshold and the pipe (packets).
const SEED_THRESHOLD: u32 = 3;
const SEED_PIPE: u32 = 16;

/// How a detector is named in tables and legends.
fn label(d: LossDetection) -> &'static str {
    match d {
        LossDetection::DupAck => "threshold of 3",
        LossDetection::Rack => "RACK",
        LossDetection::RackTlp => "RACK-TLP",
    }
}

/// How long a held packet waits beyond the link's delay: (depth + 1/2) packet times, so
/// that exactly `depth` packets sent back to back after it arrive first (half a packet time
/// keeps the arrivals apart).
fn hold_s(pipe: Pipe, depth: u32) -> f64 {
    (f64::from(depth) + 0.5) * pipe.packet_time()
}

/// RNG seeds per reordering configuration (which packets are held is random).
fn seeds(p: Params) -> u64 {
    p.seeds.clamp(1, 3)
}

/// The reordering runs: pipe x detector x depth, [`seeds`] RNG seeds each.
fn grid(p: Params) -> PerSeed {
    PerSeed {
        configs: PIPES.len() * REORDER_DETECTORS.len() * DEPTHS.count(),
        seeds: seeds(p),
    }
}

/// The configuration `c` of [`grid`]: (pipe, detector, depth).
fn config(c: usize) -> (usize, usize, u32) {
    let depths = DEPTHS.count();
    let per_pipe = REORDER_DETECTORS.len() * depths;
    (
        c / per_pipe,
        (c % per_pipe) / depths,
        *DEPTHS.start() + (c % depths) as u32,
    )
}

/// The base scenario on `pipe`: the bottleneck's rate, its buffer (four pipes, so the
/// window of two pipes never overflows it) and the receiver's window; impairments cleared.
fn on_pipe(base: &Scenario, pipe: Pipe, detector: LossDetection) -> Result<Scenario> {
    let mut s = base.clone();
    let l = s
        .link
        .get_mut(BOTTLENECK)
        .ok_or_else(|| anyhow!("dupack_limits: no bottleneck link"))?;
    l.rate_bps = pipe.rate_bps();
    l.queue_ab = Some(QdiscConfig::DropTail(DropTailConfig::packets(
        4 * pipe.packets as usize,
    )));
    l.impair_ab = None;
    let f = s
        .flow
        .get_mut(0)
        .ok_or_else(|| anyhow!("dupack_limits: no flow"))?;
    f.tcp_overrides.recv_buffer_bytes = Some(pipe.rwnd() as usize);
    f.tcp_overrides.loss_detection = Some(detector);
    Ok(s)
}

/// A reordering run: no loss, [`HOLD_PROB`] of the packets held back by [`hold_s`].
fn reorder_variant(base: &Scenario, c: usize, seed: u64) -> Result<Scenario> {
    let (pi, di, depth) = config(c);
    let pipe = PIPES[pi];
    let mut s = on_pipe(base, pipe, REORDER_DETECTORS[di])?;
    s.seed = seed;
    s.link[BOTTLENECK].impair_ab = Some(ImpairmentsConfig {
        reorder: Some(ReorderConfig {
            prob: HOLD_PROB,
            delay_ms: hold_s(pipe, depth) * 1e3,
        }),
        ..Default::default()
    });
    s.flow[0].app = AppSpec::Bulk {
        bytes: Some(f64::from(pipe.transfer())),
        duration_s: None,
        chunk_bytes: None,
    };
    Ok(s)
}

/// A tail run on the seed's pipe: [`TAIL_SEGMENTS`] full segments, the last `drops` of
/// them dropped once (data segments are counted from 1, and none is resent before them).
///
/// With `open`, the same 20 segments are one response on a connection that stays open (a
/// request-response flow whose client is at the receiver), so no FIN rides on the last
/// segment; only its completion time is used (the flow's counters are the client's).
fn tail_variant(
    base: &Scenario,
    detector: LossDetection,
    drops: u64,
    open: bool,
) -> Result<Scenario> {
    let mut s = on_pipe(base, PIPES[0], detector)?;
    let nth: Vec<u64> = (TAIL_SEGMENTS + 1 - drops..=TAIL_SEGMENTS).collect();
    if !nth.is_empty() {
        s.link[BOTTLENECK].impair_ab = Some(ImpairmentsConfig {
            scripted: vec![ScriptedDrop::DataSegment {
                flow: Some(0),
                src_port: None,
                dst_port: None,
                nth,
            }],
            ..Default::default()
        });
    }
    let bytes = TAIL_SEGMENTS * u64::from(MSS);
    let f = &mut s.flow[0];
    if open {
        // The client asks from the receiver's side; the server at the sender answers.
        std::mem::swap(&mut f.from, &mut f.to);
        f.app = AppSpec::RequestResponse {
            request_bytes: 100,
            response_bytes: bytes as usize,
            count: 1,
            think_ms: 0.0,
        };
    } else {
        f.app = AppSpec::Bulk {
            bytes: Some(bytes as f64),
            duration_s: None,
            chunk_bytes: None,
        };
    }
    Ok(s)
}

/// The tail runs: closed then open transfers, each detector, each drop count.
const TAIL_RUNS: usize = 2 * TAIL_DETECTORS.len() * TAIL_DROPS.len();

/// The tail run `j` (from 0): (open, detector index, drop index).
fn tail_config(j: usize) -> (bool, usize, usize) {
    let per_form = TAIL_DETECTORS.len() * TAIL_DROPS.len();
    (
        j >= per_form,
        (j % per_form) / TAIL_DROPS.len(),
        j % TAIL_DROPS.len(),
    )
}

/// What a reordering run is reduced to.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReorderRun {
    /// Data segments sent again: all spurious, since nothing is lost.
    retx: f64,
    /// Data segments sent, retransmissions included.
    segments: f64,
    fast_retransmits: f64,
    timeouts: f64,
    /// Goodput over the flow's active time, as a part of the bottleneck's rate.
    goodput: f64,
    /// Expirations of RACK's reordering timer.
    reorder_timeouts: f64,
    /// The least RTT sample (s): RACK's min_RTT.
    min_rtt: f64,
}

impl ReorderRun {
    /// Spurious retransmissions per 100 data segments sent ([`HOLD_PROB`] of them held).
    fn rate(&self) -> f64 {
        if self.segments > 0.0 {
            100.0 * self.retx / self.segments
        } else {
            0.0
        }
    }
}

/// What a tail run is reduced to.
#[derive(Clone, Debug, Default)]
pub struct TailRun {
    /// From the connect to the receiver's end of stream (s).
    completion: Option<f64>,
    timeouts: u64,
    fast_retransmits: u64,
    retx: u64,
    dupacks: u64,
    probes: u64,
    tlp_recoveries: u64,
    /// The least RTT sample (s).
    min_rtt: f64,
    /// At the first timeout: the RTO that expired (s), how long after the last ACK it
    /// fired (s), and the segments sent and not dropped that were not yet acknowledged
    /// (in the network, or held by the receiver unreported).
    rto: Option<f64>,
    quiet_before_timeout: Option<f64>,
    in_network_at_timeout: Option<u64>,
    /// The first probe: how long after the last ACK it went (s).
    probe_after_ack: Option<f64>,
    /// SRTT when the tail was sent (s).
    srtt: f64,
    /// A timeout came after a probe whose data the receiver had SACKed.
    sacked_probe_then_timeout: bool,
}

/// One run of the plan.
pub enum Run {
    /// A reordering run.
    Reorder(ReorderRun),
    /// A tail run; the plotted ones keep the whole result.
    Tail(Box<TailRun>, Option<RunResult>),
    /// A tail run on a connection that stays open: its completion time (s).
    Open(Option<f64>),
}

/// Everything the experiment measured.
pub struct Measured {
    /// Per reordering configuration (in [`grid`]'s order), the runs of each RNG seed.
    reorder: Vec<Vec<ReorderRun>>,
    /// Per tail detector of [`TAIL_DETECTORS`], per drop count of [`TAIL_DROPS`].
    tail: Vec<Vec<TailRun>>,
    /// The plotted tail runs, one per detector.
    tail_plotted: Vec<RunResult>,
    /// The same tails on a connection that stays open: per detector, per drop count, the
    /// completion time (s).
    open: Vec<Vec<Option<f64>>>,
    seeds: u64,
}

/// The least RTT sample of a trace (s); 0 without one.
fn min_rtt(trace: &[TraceEvent]) -> f64 {
    trace
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::RttSample { rtt } => Some(rtt.as_secs_f64()),
            _ => None,
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))))
        .unwrap_or(0.0)
}

/// How many events of a kind a trace has.
fn count(trace: &[TraceEvent], f: impl Fn(&TraceKind) -> bool) -> u64 {
    trace.iter().filter(|e| f(&e.kind)).count() as u64
}

fn reduce_reorder(r: &RunResult, pipe: Pipe) -> Result<ReorderRun> {
    let l = link(r, PORT)?;
    // The premise: nothing is lost, so every retransmission is spurious.
    if l.queue_drops + l.lost_on_wire > 0 {
        bail!(
            "dupack_limits: a reordering run lost {} packets at the gateway",
            l.queue_drops + l.lost_on_wire
        );
    }
    let f = &r.summary.flows[0];
    let tr = &r.traces[0];
    Ok(ReorderRun {
        retx: f.retransmitted_segments as f64,
        segments: f.segments_sent as f64,
        fast_retransmits: f.fast_retransmits as f64,
        timeouts: f.timeouts as f64,
        goodput: f.goodput_bps / pipe.rate_bps(),
        reorder_timeouts: count(tr, |k| *k == TraceKind::RackReorderTimeout) as f64,
        min_rtt: min_rtt(tr),
    })
}

fn reduce_tail(r: &RunResult, drops: u64) -> Result<TailRun> {
    let f = &r.summary.flows[0];
    let tr = &r.traces[0];
    let mut t = TailRun {
        completion: f.completed_s.map(|c| c - f.start_s),
        timeouts: f.timeouts,
        fast_retransmits: f.fast_retransmits,
        retx: f.retransmitted_segments,
        dupacks: count(tr, |k| matches!(k, TraceKind::DupAck { .. })),
        probes: count(tr, |k| *k == TraceKind::TailLossProbe),
        tlp_recoveries: count(tr, |k| *k == TraceKind::TlpRecovery),
        min_rtt: min_rtt(tr),
        ..TailRun::default()
    };
    let last_ack_before = |i: usize| {
        tr[..i]
            .iter()
            .rev()
            .find(|e| matches!(e.kind, TraceKind::Ack { .. }))
            .map(|e| secs(e.time))
    };
    if let Some(i) = tr.iter().position(|e| e.kind == TraceKind::Timeout) {
        let at = secs(tr[i].time);
        // The sender's state just before the timer fired.
        let before = &tr[i.saturating_sub(1)];
        t.rto = Some(before.rto.as_secs_f64());
        t.quiet_before_timeout = last_ack_before(i).map(|a| at - a);
        // Unacknowledged full segments (a FIN rides on the last one), less those dropped.
        let outstanding = u64::from(before.snd_nxt.since(before.snd_una)) / u64::from(MSS);
        t.in_network_at_timeout = Some(outstanding.saturating_sub(drops));
    }
    if let Some(i) = tr.iter().position(|e| e.kind == TraceKind::TailLossProbe) {
        t.probe_after_ack = last_ack_before(i).map(|a| secs(tr[i].time) - a);
        let after = &tr[i..];
        let timeout = after.iter().position(|e| e.kind == TraceKind::Timeout);
        let sack = after
            .iter()
            .position(|e| matches!(e.kind, TraceKind::Sack { .. }));
        t.sacked_probe_then_timeout = matches!((sack, timeout), (Some(a), Some(b)) if a < b);
    }
    // SRTT as the last new data left.
    t.srtt = tr
        .iter()
        .rev()
        .find(|e| matches!(e.kind, TraceKind::Send { retransmit: false, len, .. } if len > 0))
        .map_or(0.0, |e| e.srtt.as_secs_f64());
    Ok(t)
}

impl Experiment for DupackLimits {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "dupack_limits"
    }

    fn files(&self) -> Files {
        files!("e20_dupack_limits")
    }

    /// The reordering grid (pipe x detector x depth, the RNG seeds of each), then the tail
    /// runs (detector x drops, deterministic: the base seed).
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let mut runs = grid(p).plan(base, |c, seed| reorder_variant(base, c, seed))?;
        for j in 0..TAIL_RUNS {
            let (open, di, ki) = tail_config(j);
            runs.push(tail_variant(
                base,
                TAIL_DETECTORS[di],
                TAIL_DROPS[ki],
                open,
            )?);
        }
        Ok(runs)
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let g = grid(p);
        let n = g.configs * g.seeds as usize;
        if index < n {
            let (c, _) = g.config_of(index);
            return Ok(Run::Reorder(reduce_reorder(&r, PIPES[config(c).0])?));
        }
        let (open, _, k) = tail_config(index - n);
        if open {
            let f = &r.summary.flows[0];
            return Ok(Run::Open(f.completed_s.map(|c| c - f.start_s)));
        }
        let t = reduce_tail(&r, TAIL_DROPS[k])?;
        Ok(Run::Tail(Box::new(t), (k == PLOTTED_TAIL).then_some(r)))
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let g = grid(p);
        let n = g.configs * g.seeds as usize;
        let mut reorder = Vec::new();
        let mut tail: Vec<Vec<TailRun>> = vec![Vec::new(); TAIL_DETECTORS.len()];
        let mut tail_plotted = Vec::new();
        let mut open: Vec<Vec<Option<f64>>> = vec![Vec::new(); TAIL_DETECTORS.len()];
        for (i, r) in runs.into_iter().enumerate() {
            match r {
                Run::Reorder(x) if i < n => reorder.push(x),
                Run::Tail(t, plotted) if i >= n => {
                    tail[tail_config(i - n).1].push(*t);
                    tail_plotted.extend(plotted);
                }
                Run::Open(c) if i >= n => open[tail_config(i - n).1].push(c),
                _ => bail!("dupack_limits: run {i} is not what the plan made"),
            }
        }
        if tail_plotted.len() != TAIL_DETECTORS.len() {
            bail!("dupack_limits: the plotted tail runs are missing");
        }
        Ok(Measured {
            reorder: g.groups(reorder),
            tail,
            tail_plotted,
            open,
            seeds: g.seeds,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_onset(m, text, j)?;
        judge_rack(m, text, j)?;
        judge_goodput(m, text, j)?;
        judge_empty_pipe(m, text, j)?;
        judge_tlp(m, text, j)?;
        judge_arithmetic(text, j)
    }

    fn render(&self, _p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let mut plots = vec![
            sweep_plot(
                m,
                text,
                out,
                "spurious-vs-depth",
                "Spurious retransmissions against the depth of reordering (no loss)",
                "spurious retransmissions per 100 data segments sent",
                |r| r.rate(),
            )?,
            sweep_plot(
                m,
                text,
                out,
                "goodput-vs-depth",
                "Goodput against the depth of reordering (no loss)",
                "goodput / bottleneck rate",
                |r| r.goodput,
            )?,
            tail_plot(m, text, out)?,
        ];
        plots.extend(tseq_plots(m, text, out)?);
        let tail_rto = m.tail[0]
            .iter()
            .find_map(|t| t.rto)
            .map_or("-".into(), |v| format!("{:.0}", v * 1e3));
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("prob", format!("{:.0}", HOLD_PROB * 100.0)),
                    ("t16", format!("{:.0}", PIPES[0].packet_time() * 1e3)),
                    ("t64", format!("{:.0}", PIPES[1].packet_time() * 1e3)),
                    ("seeds", m.seeds.to_string()),
                    ("rto", tail_rto),
                ],
            )?,
            tables: vec![reorder_table(m), tail_table(m)],
            plots,
            discussion: text.fill("discussion", &discussion_values(m, text)?)?,
        })
    }
}

/// The numbers the discussion quotes, and its sentence on the tail loss probe (`tail ok` or
/// `tail fin` of `text.md`, as the claim came out).
fn discussion_values(m: &Measured, text: &Text) -> Result<Vec<(&'static str, String)>> {
    let last = *DEPTHS.end();
    let at = |pi: usize, di: usize, f: &dyn Fn(&ReorderRun) -> f64| {
        sweep(m, pi, di)
            .find(|(d, _)| *d == last)
            .map_or(0.0, |(_, v)| avg(v, f))
    };
    let ms = |x: Option<f64>| x.map_or("-".into(), |v| format!("{:.0}", v * 1e3));
    let tlp_ok = (1..TAIL_DROPS.len()).all(|ki| m.tail[1][ki].timeouts == 0);
    let tail = text.fill(
        if tlp_ok { "tail ok" } else { "tail fin" },
        &[
            ("tlp2", ms(extra(m, 1, 2))),
            ("timer2", ms(extra(m, 0, 2))),
            ("open_tlp2", ms(open_extra(m, 1, 2))),
            ("open_tlp3", ms(open_extra(m, 1, 3))),
            ("open_timer2", ms(open_extra(m, 0, 2))),
            ("open_timer3", ms(open_extra(m, 0, 3))),
        ],
    )?;
    let w = |pi: usize| rack_window(m, pi) / PIPES[pi].packet_time();
    let big = f64::from(PIPES[1].packets);
    Ok(vec![
        ("last", last.to_string()),
        ("thr16", format!("{:.2}", at(0, 0, &|r| r.rate()))),
        ("thr64", format!("{:.2}", at(1, 0, &|r| r.rate()))),
        ("rack16", format!("{:.2}", at(0, 1, &|r| r.rate()))),
        ("rack64", format!("{:.2}", at(1, 1, &|r| r.rate()))),
        ("prob", format!("{:.0}", HOLD_PROB * 100.0)),
        ("g16", format!("{:.2}", at(0, 0, &|r| r.goodput))),
        ("g64", format!("{:.2}", at(1, 0, &|r| r.goodput))),
        ("gr16", format!("{:.2}", at(0, 1, &|r| r.goodput))),
        ("gr64", format!("{:.2}", at(1, 1, &|r| r.goodput))),
        ("w16", format!("{:.1}", w(0))),
        ("w64", format!("{:.1}", w(1))),
        ("timer1", ms(extra(m, 0, 1))),
        ("tlp1", ms(extra(m, 1, 1))),
        ("rto", ms(m.tail[0].iter().find_map(|t| t.rto))),
        ("srtt", ms(Some(m.tail[0][0].srtt))),
        (
            "holds",
            if judged_onset(m) == Some(SEED_THRESHOLD) {
                "holds"
            } else {
                "does not hold as the claim states it"
            }
            .to_string(),
        ),
        ("tail", tail),
        (
            "full64",
            format!(
                "{:.1}",
                (big - f64::from(SEED_THRESHOLD) - 1.0) / big * 100.0
            ),
        ),
    ])
}

/// The runs of pipe `pi`, detector `di`, each depth of [`DEPTHS`] in order.
fn sweep(m: &Measured, pi: usize, di: usize) -> impl Iterator<Item = (u32, &Vec<ReorderRun>)> {
    (0..m.reorder.len())
        .filter(move |&c| config(c).0 == pi && config(c).1 == di)
        .map(move |c| (config(c).2, &m.reorder[c]))
}

/// The mean over the RNG seeds of `f`.
fn avg(runs: &[ReorderRun], f: impl Fn(&ReorderRun) -> f64) -> f64 {
    mean(&runs.iter().map(f).collect::<Vec<_>>())
}

/// RACK's reordering window once reordering is seen (s): a quarter of min_RTT (RFC 8985
/// §6.2 step 4), from the least RTT sample of the pipe's RACK runs.
fn rack_window(m: &Measured, pi: usize) -> f64 {
    let least = sweep(m, pi, 1)
        .flat_map(|(_, v)| v.iter().map(|r| r.min_rtt))
        .fold(f64::INFINITY, f64::min);
    least / 4.0
}

/// The least depth at which the threshold resends anything on pipe `pi`.
fn onset(m: &Measured, pi: usize) -> Option<u32> {
    sweep(m, pi, 0)
        .find(|(_, v)| avg(v, |r| r.retx) > 0.0)
        .map(|(d, _)| d)
}

/// The onset, when both pipes agree on it (the threshold counts packets, not time).
fn judged_onset(m: &Measured) -> Option<u32> {
    let o = onset(m, 0);
    o.filter(|_| o == onset(m, 1))
}

/// The seed's condition (`threshold_onset`): the least depth at which the threshold resends
/// anything, on each pipe; none below it.
fn judge_onset(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let show = |o: Option<u32>| o.map_or("none".to_string(), |d| d.to_string());
    let (o16, o64) = (onset(m, 0), onset(m, 1));
    let at = |pi: usize, d: u32| {
        sweep(m, pi, 0)
            .find(|(x, _)| *x == d)
            .map_or(0.0, |(_, v)| avg(v, |r| r.rate()))
    };
    let ours = format!(
        "depth {} on the 16-packet pipe, {} on the 64-packet pipe",
        show(o16),
        show(o64)
    );
    let value = judged_onset(m).map(f64::from);
    let ok = value == Some(f64::from(SEED_THRESHOLD));
    let note = text.fill(
        "note threshold_onset",
        &[
            ("at3_16", format!("{:.2}", at(0, 3))),
            ("at10_16", format!("{:.2}", at(0, 10))),
            ("at3_64", format!("{:.2}", at(1, 3))),
            ("at10_64", format!("{:.2}", at(1, 10))),
        ],
    )?;
    match value {
        Some(v) => j.claim("threshold_onset", Ours::num(v, ours), Verdict::of(ok), note),
        None => j.claim("threshold_onset", ours, Verdict::Fail, note),
    }
}

/// RACK against the threshold (`rack_window`, `rack_beyond`): the spurious retransmissions
/// of RACK as a part of the threshold's, over the depths whose hold is inside RACK's
/// window, and over those beyond it.
fn judge_rack(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    // (RACK's, the threshold's) totals over the depths inside and beyond the window.
    let mut inside = (0.0, 0.0);
    let mut beyond = (0.0, 0.0);
    let mut beyond_depths = Vec::new();
    for (pi, &pipe) in PIPES.iter().enumerate() {
        let w = rack_window(m, pi);
        for ((d, rack), (_, thr)) in sweep(m, pi, 1).zip(sweep(m, pi, 0)) {
            let (a, b) = (avg(rack, |r| r.rate()), avg(thr, |r| r.rate()));
            if hold_s(pipe, d) < w {
                inside.0 += a;
                inside.1 += b;
            } else {
                beyond.0 += a;
                beyond.1 += b;
                beyond_depths.push((pipe.packets, d));
            }
        }
    }
    let ratio = |x: (f64, f64)| if x.1 > 0.0 { x.0 / x.1 } else { 0.0 };
    let windows = format!(
        "{:.1} ms ({:.1} packet times) on the 16-packet pipe, {:.1} ms ({:.1}) on the 64",
        rack_window(m, 0) * 1e3,
        rack_window(m, 0) / PIPES[0].packet_time(),
        rack_window(m, 1) * 1e3,
        rack_window(m, 1) / PIPES[1].packet_time()
    );
    let r_in = ratio(inside);
    j.claim(
        "rack_window",
        Ours::num(
            r_in,
            format!(
                "{r_in:.2} ({:.2} against {:.2} per 100 segments, summed over the depths)",
                inside.0, inside.1
            ),
        ),
        Verdict::of(r_in <= 0.5),
        text.fill(
            "note rack_window",
            &[
                ("windows", windows.clone()),
                (
                    "first",
                    format!(
                        "{:.2}",
                        sweep(m, 1, 1)
                            .filter(|(d, _)| *d >= SEED_THRESHOLD)
                            .map(|(_, v)| avg(v, |r| r.rate()))
                            .fold(f64::INFINITY, f64::min)
                    ),
                ),
            ],
        )?,
    )?;
    let depths = match (beyond_depths.first(), beyond_depths.last()) {
        (Some(a), Some(b)) if a.0 == b.0 => {
            format!("{} to {} on the {}-packet pipe", a.1, b.1, a.0)
        }
        (Some(_), Some(_)) => beyond_depths
            .iter()
            .map(|(p, d)| format!("{d} ({p})"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => "none".into(),
    };
    let r_out = ratio(beyond);
    j.claim(
        "rack_beyond",
        format!(
            "{r_out:.2} ({:.2} against {:.2} per 100 segments; depths {depths})",
            beyond.0, beyond.1
        ),
        Verdict::Info,
        text.fill("note rack_beyond", &[("windows", windows)])?,
    )
}

/// Goodput (`goodput`): each pipe at depth 1 and 10, the threshold and RACK, with the
/// window a loss rate of [`HOLD_PROB`] would allow (Mathis et al. 1997) for comparison.
fn judge_goodput(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let at = |pi: usize, di: usize, d: u32| {
        sweep(m, pi, di)
            .find(|(x, _)| *x == d)
            .map_or(0.0, |(_, v)| avg(v, |r| r.goodput))
    };
    let last = *DEPTHS.end();
    let ours = PIPES
        .iter()
        .enumerate()
        .map(|(pi, pipe)| {
            format!(
                "{}-packet pipe: {:.2} at depth 1; at depth {last} {:.2} with the threshold, {:.2} with RACK",
                pipe.packets,
                at(pi, 0, 1),
                at(pi, 0, last),
                at(pi, 1, last)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    // Mathis, Semke, Mahdavi and Ott 1997: a window of sqrt(3/2) / sqrt(p) segments.
    let w = (1.5 / HOLD_PROB).sqrt();
    j.claim(
        "goodput",
        ours,
        Verdict::Info,
        text.fill(
            "note goodput",
            &[
                ("prob", format!("{:.0}", HOLD_PROB * 100.0)),
                ("w", format!("{w:.1}")),
                ("w16", format!("{:.2}", w / f64::from(PIPES[0].packets))),
                ("w64", format!("{:.2}", w / f64::from(PIPES[1].packets))),
            ],
        )?,
    )
}

/// "The pipe is guaranteed to be empty" (`timeout_empty_pipe`): with the threshold alone, a
/// tail drop brings no duplicate ACK, and when the timer fires nothing is in the network.
fn judge_empty_pipe(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let runs: Vec<(u64, &TailRun)> = TAIL_DROPS
        .iter()
        .copied()
        .zip(&m.tail[0])
        .filter(|(k, _)| *k > 0)
        .collect();
    let all_timed_out = runs
        .iter()
        .all(|(_, t)| t.timeouts >= 1 && t.fast_retransmits == 0);
    let most = runs
        .iter()
        .filter_map(|(_, t)| t.in_network_at_timeout)
        .max();
    let ours = runs
        .iter()
        .map(|(k, t)| {
            format!(
                "{k} dropped: {} in the network after {} quiet ({} dup ACKs)",
                t.in_network_at_timeout
                    .map_or("no timeout".into(), |n| n.to_string()),
                t.quiet_before_timeout
                    .map_or("-".into(), |q| format!("{:.0} ms", q * 1e3)),
                t.dupacks
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let rto = runs.iter().filter_map(|(_, t)| t.rto).fold(0.0, f64::max);
    let note = text.fill(
        "note timeout_empty_pipe",
        &[
            ("rto", format!("{:.0}", rto * 1e3)),
            (
                "rtt",
                format!("{:.0}", runs.first().map_or(0.0, |(_, t)| t.min_rtt) * 1e3),
            ),
        ],
    )?;
    match most {
        Some(n) if all_timed_out => j.claim(
            "timeout_empty_pipe",
            Ours::num(n as f64, ours),
            Verdict::of(n == 0),
            note,
        ),
        _ => j.claim("timeout_empty_pipe", ours, Verdict::Fail, note),
    }
}

/// The extra time of a tail run over the lossless run of its detector (s).
fn extra(m: &Measured, di: usize, ki: usize) -> Option<f64> {
    let t = &m.tail[di];
    Some(t[ki].completion? - t[0].completion?)
}

/// The extra time of a tail run on a connection kept open over its lossless run (s).
fn open_extra(m: &Measured, di: usize, ki: usize) -> Option<f64> {
    let t = &m.open[di];
    Some((*t.get(ki)?)? - (*t.first()?)?)
}

/// The tail loss probe (`tlp_instead_of_rto`): for each tail drop, no timeout and a shorter
/// completion than with the timer alone.
fn judge_tlp(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let mut ok = true;
    let mut parts = Vec::new();
    for (ki, &k) in TAIL_DROPS.iter().enumerate().skip(1) {
        let (timer, tlp) = (extra(m, 0, ki), extra(m, 1, ki));
        let t = &m.tail[1][ki];
        let shorter = matches!((timer, tlp), (Some(a), Some(b)) if b < a);
        let hit = t.timeouts == 0 && tlp.is_some();
        ok &= shorter && hit;
        let rtts = |x: Option<f64>| {
            x.map_or("not done".into(), |v| {
                format!("{:.0} ms ({:.1} RTT)", v * 1e3, v / t.min_rtt)
            })
        };
        let timeouts = match t.timeouts {
            0 => "no timeout".to_string(),
            1 => "1 timeout".to_string(),
            n => format!("{n} timeouts"),
        };
        parts.push(format!(
            "{k} dropped: +{} with TLP ({timeouts}), +{} with the timer",
            rtts(tlp),
            rtts(timer)
        ));
    }
    let first = &m.tail[1][1];
    let note = text.fill(
        if ok { "note tlp" } else { "note tlp_not" },
        &[
            ("srtt", format!("{:.0}", first.srtt * 1e3)),
            (
                "probe",
                first
                    .probe_after_ack
                    .map_or("-".into(), |v| format!("{:.0}", v * 1e3)),
            ),
            (
                "probes",
                m.tail[1]
                    .iter()
                    .map(|t| t.probes.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "timeouts",
                m.tail[1]
                    .iter()
                    .map(|t| t.timeouts.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "sacked",
                m.tail[1]
                    .iter()
                    .filter(|t| t.sacked_probe_then_timeout)
                    .count()
                    .to_string(),
            ),
        ],
    )?;
    // A timeout after a SACKed probe was the engine's FIN accounting, fixed on 2026-11-29
    // (the note says how, should it come back); a miss of either kind is a failure of the
    // engine, not a disagreement with the seed.
    j.claim(
        "tlp_instead_of_rto",
        parts.join("; "),
        if ok { Verdict::Pass } else { Verdict::Fail },
        note,
    )
}

/// The seed's arithmetic (`pipe_75`), computed: when the threshold's last duplicate ACK
/// arrives, the packets that made the duplicates and the dropped one have left a pipe of
/// 16; the rest are in transit.
fn judge_arithmetic(text: &Text, j: &mut Judge) -> Result<()> {
    let (t, w) = (f64::from(SEED_THRESHOLD), f64::from(SEED_PIPE));
    let full = (w - t - 1.0) / w;
    let without_drop = (w - t) / w;
    // The seed's 24 KB in 1500-byte packets, with KB = 1000 and 1024 bytes.
    let w_1024 = 24.0 * 1024.0 / PACKET_BYTES;
    let full_1024 = (w_1024 - t - 1.0) / w_1024;
    // The overfull pipe of the parenthesis: the receiver's window of two pipes.
    let full_2w = (2.0 * w - t - 1.0) / (2.0 * w);
    j.claim(
        "pipe_75",
        Ours::num(
            full * 100.0,
            format!(
                "{:.2}% ({} - {} - 1 = {} of {} packets in transit)",
                full * 100.0,
                SEED_PIPE,
                SEED_THRESHOLD,
                SEED_PIPE - SEED_THRESHOLD - 1,
                SEED_PIPE
            ),
        ),
        Verdict::of((full - 0.75).abs() < 1e-12),
        text.fill(
            "note pipe_75",
            &[
                ("without_drop", format!("{:.2}", without_drop * 100.0)),
                ("w1024", format!("{w_1024:.1}")),
                ("full1024", format!("{:.1}", full_1024 * 100.0)),
                ("full2w", format!("{:.1}", full_2w * 100.0)),
                ("least", format!("{}", 4 * (SEED_THRESHOLD + 1))),
            ],
        )?,
    )
}

/// Mean (and the standard deviation over the RNG seeds) of `f` against the depth: one line
/// per pipe and detector.
fn sweep_plot(
    m: &Measured,
    text: &Text,
    out: &Path,
    stem: &str,
    title: &str,
    y_desc: &str,
    f: impl Fn(&ReorderRun) -> f64 + Copy,
) -> Result<Figure> {
    let mut lines: Vec<MeanLine> = Vec::new();
    for (pi, pipe) in PIPES.iter().enumerate() {
        for (di, &d) in REORDER_DETECTORS.iter().enumerate() {
            let pts = sweep(m, pi, di)
                .map(|(depth, v)| {
                    let xs: Vec<f64> = v.iter().map(f).collect();
                    let s = if xs.len() > 1 { sd(&xs) } else { f64::NAN };
                    (f64::from(depth), mean(&xs), s)
                })
                .collect();
            lines.push((format!("{}, {}-packet pipe", label(d), pipe.packets), pts));
        }
    }
    // Where a held packet waits as long as RACK's window on the seed's pipe.
    let w = rack_window(m, 0) / PIPES[0].packet_time() - 0.5;
    let top = lines
        .iter()
        .flat_map(|(_, v)| {
            v.iter()
                .map(|p| p.1 + if p.2.is_finite() { p.2 } else { 0.0 })
        })
        .fold(0.0, f64::max)
        .max(1.0);
    let models = vec![(
        "RACK's window, 16-packet pipe".to_string(),
        vec![(w, 0.0), (w, top)],
    )];
    let fig = Figure::from_text(out, stem, title, text, &[("window", format!("{w:.1}"))])?;
    let chart = plots::means_chart(
        "depth: packets that overtake a held one (it waits depth + 1/2 packet times)",
        y_desc,
        &lines,
        &models,
        false,
    );
    fig.draw(chart)
}

/// Completion time against the number of segments dropped at the tail, per detector.
fn tail_plot(m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let fig = Figure::from_text(
        out,
        "tail-completion",
        "A 20-segment transfer whose last segments are dropped once: completion time",
        text,
        &[],
    )?;
    let series = TAIL_DETECTORS
        .iter()
        .enumerate()
        .map(|(di, &d)| {
            let name = match d {
                LossDetection::DupAck => "threshold and the timer",
                _ => "RACK-TLP",
            };
            let pts = TAIL_DROPS
                .iter()
                .zip(&m.tail[di])
                .filter_map(|(&k, t)| t.completion.map(|c| (k as f64, c)))
                .collect();
            Series::new(name, palette(di), Mark::LinePoints, pts)
        })
        .collect();
    fig.draw(Chart {
        x_desc: "segments dropped at the end of the transfer".into(),
        y_desc: "completion time, connect to the receiver's end of stream (s)".into(),
        ..Chart::one_panel(series)
    })
}

/// The plotted tail run of each detector, as time-sequence diagrams on the same axes.
fn tseq_plots(m: &Measured, text: &Text, out: &Path) -> Result<Vec<Figure>> {
    let k = TAIL_DROPS[PLOTTED_TAIL];
    let f1 = Figure::from_text(
        out,
        "tseq-tail-timer",
        format!("The last {k} of 20 segments dropped: the threshold and the timer"),
        text,
        &[],
    )?;
    let f2 = Figure::from_text(
        out,
        "tseq-tail-tlp",
        format!("The last {k} of 20 segments dropped: RACK-TLP"),
        text,
        &[],
    )?;
    let until = m
        .tail_plotted
        .iter()
        .filter_map(|r| r.summary.flows[0].completed_s)
        .fold(0.0, f64::max)
        + 0.1;
    let [c1, c2]: [Chart; 2] = plots::time_sequences_same_axes(
        &[
            (&m.tail_plotted[0], 0, &f1.title),
            (&m.tail_plotted[1], 0, &f2.title),
        ],
        Some(until),
    )?
    .try_into()
    .map_err(|_| anyhow!("two charts"))?;
    Ok(vec![f1.draw(c1)?, f2.draw(c2)?])
}

fn reorder_table(m: &Measured) -> Table {
    let mut rows = Vec::new();
    for (pi, pipe) in PIPES.iter().enumerate() {
        for depth in DEPTHS {
            let mut row = vec![
                pipe.packets.to_string(),
                format!("{depth} ({:.1} ms)", hold_s(*pipe, depth) * 1e3),
            ];
            for di in 0..REORDER_DETECTORS.len() {
                let v = sweep(m, pi, di)
                    .find(|(d, _)| *d == depth)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                row.push(format!(
                    "{:.2} ({:.1}: {:.1} fast, {:.1} RTO)",
                    avg(&v, |r| r.rate()),
                    avg(&v, |r| r.retx),
                    avg(&v, |r| r.fast_retransmits),
                    avg(&v, |r| r.timeouts)
                ));
                row.push(format!("{:.2}", avg(&v, |r| r.goodput)));
                if di == 1 {
                    row.push(format!("{:.1}", avg(&v, |r| r.reorder_timeouts)));
                }
            }
            rows.push(row);
        }
    }
    Table {
        caption: format!(
            "Reordering without loss: means over {} RNG seeds per row. Every retransmission is spurious: per 100 data segments sent ({:.0} of 100 are held back), and in brackets per transfer, with the recoveries started (fast) and the timeouts. Goodput is over the transfer's active time, as a part of the bottleneck's rate.",
            m.seeds,
            HOLD_PROB * 100.0
        ),
        header: Table::header(&[
            "pipe (packets)",
            "depth (hold)",
            "threshold: retransmissions per 100 (per transfer)",
            "threshold: goodput",
            "RACK: retransmissions per 100 (per transfer)",
            "RACK: goodput",
            "RACK: reordering-timer expiries",
        ]),
        rows,
    }
}

fn tail_table(m: &Measured) -> Table {
    let mut rows = Vec::new();
    for (di, &d) in TAIL_DETECTORS.iter().enumerate() {
        for (ki, (&k, t)) in TAIL_DROPS.iter().zip(&m.tail[di]).enumerate() {
            rows.push(vec![
                label(d).replace("threshold of 3", "threshold and timer"),
                k.to_string(),
                t.completion
                    .map_or("not done".into(), |c| format!("{:.3}", c)),
                extra(m, di, ki).map_or("-".into(), |e| format!("{:.0}", e * 1e3)),
                t.retx.to_string(),
                t.timeouts.to_string(),
                t.dupacks.to_string(),
                format!("{} ({} repaired)", t.probes, t.tlp_recoveries),
                open_extra(m, di, ki).map_or("-".into(), |e| format!("{:.0}", e * 1e3)),
            ]);
        }
    }
    Table {
        caption: "Tail drops on the 16-packet pipe: one run each (no randomness). Extra time is over the same detector's lossless run. The last column: the same 20 segments as one response on a connection that stays open (no FIN on the last segment), its extra time.".into(),
        header: Table::header(&[
            "detector",
            "segments dropped",
            "completion (s)",
            "extra (ms)",
            "retransmitted",
            "timeouts",
            "dup ACKs",
            "probes",
            "kept open: extra (ms)",
        ]),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Scenario {
        let e = DupackLimits;
        Scenario::from_str_named(e.files().scenario, Path::new("scenario.toml")).expect("scenario")
    }

    /// The pipes are 16 and 64 packets of 1500 bytes over 128 ms: the seed's 24 KB is
    /// 1.5 Mb/s; a held packet waits depth + 1/2 packet times.
    #[test]
    fn pipes_and_holds_are_as_stated() {
        assert!((PIPES[0].rate_bps() - 1.5e6).abs() < 1e-6);
        assert!((PIPES[1].rate_bps() - 6e6).abs() < 1e-6);
        assert!((PIPES[0].packet_time() - 0.008).abs() < 1e-12);
        assert!((hold_s(PIPES[0], 3) - 0.028).abs() < 1e-12);
        assert_eq!(PIPES[0].rwnd(), 32 * 1460);
    }

    /// The grid visits every pipe, detector and depth once, and the variants set them; the
    /// tail variants drop the last segments and nothing else.
    #[test]
    fn variants_set_what_the_grid_says() {
        let b = base();
        let n = grid(Params {
            quick: true,
            seeds: 1,
        })
        .configs;
        let mut seen: Vec<(usize, usize, u32)> = (0..n).map(config).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), n);
        let c = n - 1;
        let s = reorder_variant(&b, c, 7).unwrap();
        assert_eq!(s.seed, 7);
        assert_eq!(
            s.flow[0].tcp_overrides.loss_detection,
            Some(LossDetection::Rack)
        );
        let r = s.link[BOTTLENECK]
            .impair_ab
            .as_ref()
            .unwrap()
            .reorder
            .as_ref()
            .unwrap();
        assert!((r.delay_ms - 21.0).abs() < 1e-9, "{}", r.delay_ms);
        let t = tail_variant(&b, LossDetection::RackTlp, 3, false).unwrap();
        match &t.link[BOTTLENECK].impair_ab.as_ref().unwrap().scripted[..] {
            [ScriptedDrop::DataSegment { nth, .. }] => assert_eq!(nth, &[18, 19, 20]),
            other => panic!("{other:?}"),
        }
        assert!(tail_variant(&b, LossDetection::DupAck, 0, true)
            .unwrap()
            .link[BOTTLENECK]
            .impair_ab
            .is_none());
    }
}
