//! Experiment 1: startup without and with slow start (seed 000, 11 Feb 1988; Jacobson and
//! Karels, "Congestion Avoidance and Control", 1988, Figs 3 and 4). One bulk transfer over
//! the paper's path of seven 256 kb/s hops: the 4.3BSD TCP of 1986 (no congestion window)
//! wastes much of the line on retransmissions, while Tahoe's slow start opens the window in
//! about log2(W) round trips, never sends faster than twice the path's rate and retransmits
//! nothing. Four deterministic runs: vanilla, Tahoe, Tahoe with a receiver that ACKs every
//! packet, and vanilla with the 1986 retransmit timer.

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::results::FlowSummary;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::{anyhow, Result};
use std::collections::HashMap;
use std::path::Path;

pub struct Startup;

/// The runs, in plan order: vanilla 4.3BSD, Tahoe, Tahoe with a receiver that ACKs every
/// packet, and vanilla with the 1986 timer.
const RUNS: usize = 4;
/// The plotted runs, vanilla and Tahoe (indices in the plan).
const VANILLA: usize = 0;
const TAHOE: usize = 1;
/// The run length of vanilla and Tahoe in quick mode (60 s in the scenario).
const QUICK_DURATION_S: f64 = 20.0;

/// Data capacity of the 256 kb/s hop for 512-byte segments in 552-byte packets.
fn data_rate_bps() -> f64 {
    256e3 * 512.0 / 552.0
}

/// One run reduced to the numbers the claims and the table use (each claim reads those of
/// the run it is about), and the whole result of the plotted runs.
pub struct Run {
    flow: FlowSummary,
    /// The most transmissions of one segment.
    most_sends: u32,
    /// Round trips from the first ACK until cwnd reaches 32 packets, and the mean RTT
    /// meanwhile; `None` if the window never gets there.
    opening: Option<(f64, Duration)>,
    /// Goodput from the ACKs over the first 10 s, and over the whole run, as a share of the
    /// line's data rate.
    share10: f64,
    share_all: f64,
    /// The run's length (the scenario's `duration_s`: the simulator runs to its end).
    duration_s: f64,
    /// Peak rate of first transmissions over any one RTT, over the line rate.
    peak_ratio: f64,
    plotted: Option<RunResult>,
}

pub struct Measured {
    vanilla: Run,
    tahoe: Run,
    /// Tahoe with a receiver that ACKs every packet.
    tahoe_ack1: Run,
    /// Vanilla without Karn's algorithm and with the 500 ms clock.
    vanilla_1986: Run,
}

/// The most transmissions of one segment in a flow's trace.
fn most_sends(trace: &[TraceEvent]) -> u32 {
    let mut sends: HashMap<u32, u32> = HashMap::new();
    for e in trace {
        if let TraceKind::Send { seq, len, .. } = e.kind {
            if len > 0 {
                *sends.entry(seq.get()).or_default() += 1;
            }
        }
    }
    sends.values().copied().max().unwrap_or(0)
}

/// Round trips to open the window to 32 packets, counted in the RTT measured while it opens
/// (the queue at r1 grows as the window passes the pipe's 17 packets), and that mean RTT.
fn opening(tr: &[TraceEvent]) -> Option<(f64, Duration)> {
    let first_ack = tr
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Ack { .. }))?
        .time;
    let at32 = tr.iter().find(|e| e.cwnd >= 32 * 512)?.time;
    let samples: Vec<Duration> = tr
        .iter()
        .filter(|e| e.time <= at32)
        .filter_map(|e| match e.kind {
            TraceKind::RttSample { rtt } => Some(rtt),
            _ => None,
        })
        .collect();
    let mean = Duration::from_nanos(
        samples.iter().map(|d| d.as_nanos()).sum::<u64>() / samples.len().max(1) as u64,
    );
    Some(((at32 - first_ack).as_secs_f64() / mean.as_secs_f64(), mean))
}

/// Bytes acknowledged from the first ACK up to time `t` (s).
fn acked_by(tr: &[TraceEvent], t: f64) -> f64 {
    let limit = Instant::ZERO + Duration::from_secs_f64(t);
    let mut first = None;
    let mut last = None;
    for e in tr {
        if e.time > limit {
            break;
        }
        if let TraceKind::Ack { ack, .. } = e.kind {
            first.get_or_insert(ack);
            last = Some(ack);
        }
    }
    match (first, last) {
        (Some(a), Some(b)) => f64::from(b.since(a)),
        _ => 0.0,
    }
}

/// Peak rate of first transmissions (headers included) over a sliding window of one RTT
/// (the smallest sample, 170 ms without one), over the line rate; the first nine sends are
/// not counted as the end of a window.
fn peak_ratio(tr: &[TraceEvent]) -> f64 {
    let rtt = tr
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::RttSample { rtt } => Some(rtt),
            _ => None,
        })
        .min()
        .unwrap_or(Duration::from_millis(170));
    let sent: Vec<(Instant, u32)> = tr
        .iter()
        .filter_map(|e| match e.kind {
            TraceKind::Send {
                len,
                retransmit: false,
                ..
            } if len > 0 => Some((e.time, len + 40)),
            _ => None,
        })
        .collect();
    let mut peak = 0.0f64;
    let mut j = 0;
    let mut bytes = 0u64;
    for i in 0..sent.len() {
        bytes += u64::from(sent[i].1);
        while sent[i].0 - sent[j].0 > rtt {
            bytes -= u64::from(sent[j].1);
            j += 1;
        }
        if i > 8 {
            peak = peak.max(bytes as f64 * 8.0 / rtt.as_secs_f64());
        }
    }
    peak / 256e3
}

/// Records a claim; a failed one without a note of its own points to the discussion.
fn claim(
    j: &mut Judge,
    text: &Text,
    id: &str,
    ours: impl Into<Ours>,
    verdict: Verdict,
    note: String,
) -> Result<()> {
    let note = if verdict == Verdict::Fail && note.is_empty() {
        text.get("note missed")?
    } else {
        note
    };
    j.claim(id, ours, verdict, note)
}

/// Vanilla: goodput share, retransmitted share, most sends of one segment.
fn judge_vanilla(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let cap = data_rate_bps();
    let fv = &m.vanilla.flow;
    let v_share = fv.goodput_bps / cap;
    let v_rexmit = fv.retransmitted_segments as f64 / fv.segments_sent.max(1) as f64;
    claim(
        j,
        text,
        "vanilla_waste",
        Ours::num(
            v_share,
            format!(
                "{:.2} ({:.1} KBps of {:.1})",
                v_share,
                fv.goodput_bps / 8e3,
                cap / 8e3
            ),
        ),
        Verdict::of((0.20..=0.50).contains(&v_share)),
        String::new(),
    )?;
    claim(
        j,
        text,
        "vanilla_rexmit",
        Ours::num(v_rexmit, format!("{v_rexmit:.2}")),
        Verdict::of(v_rexmit >= 0.30),
        String::new(),
    )?;
    let most = m.vanilla.most_sends;
    let (verdict, note) = if most >= 3 {
        (Verdict::Pass, String::new())
    } else {
        let f1986 = &m.vanilla_1986.flow;
        let note = text.fill(
            "note vanilla_five",
            &[
                ("timeouts", fv.timeouts.to_string()),
                ("timeouts_1986", f1986.timeouts.to_string()),
                ("share_1986", format!("{:.2}", f1986.goodput_bps / cap)),
                ("most_1986", m.vanilla_1986.most_sends.to_string()),
            ],
        )?;
        (Verdict::Disagree, note)
    };
    claim(
        j,
        text,
        "vanilla_five",
        Ours::num(most as f64, format!("{most}")),
        verdict,
        note,
    )
}

/// Tahoe: retransmissions, round trips to cwnd 32, goodput over 10 s and the run, peak
/// rate over one RTT.
fn judge_tahoe(p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let ft = &m.tahoe.flow;
    claim(
        j,
        text,
        "ss_no_rexmit",
        Ours::num(
            ft.retransmitted_segments as f64,
            ft.retransmitted_segments.to_string(),
        ),
        Verdict::of(ft.retransmitted_segments == 0),
        String::new(),
    )?;
    let round_trips =
        |o: Option<(f64, Duration)>| o.map_or("never".into(), |(r, _)| format!("{r:.1} RTT"));
    let open1 = m.tahoe_ack1.opening;
    let rtt_ms = open1.map_or(0.0, |(_, rtt)| rtt.as_secs_f64() * 1e3);
    claim(
        j,
        text,
        "ss_log2w",
        Ours {
            text: round_trips(open1),
            value: open1.map(|(r, _)| r),
        },
        Verdict::of(open1.is_some_and(|(r, _)| (4.0..=7.0).contains(&r))),
        text.fill(
            "note ss_log2w",
            &[
                ("rtt_ms", format!("{rtt_ms:.0}")),
                ("delayed", round_trips(m.tahoe.opening)),
            ],
        )?,
    )?;
    let (share10, share_all, dur) = (m.tahoe.share10, m.tahoe.share_all, m.tahoe.duration_s);
    claim(
        j,
        text,
        "ss_goodput",
        format!("{share10:.2} (10 s), {share_all:.2} ({dur:.0} s)"),
        Verdict::of(share10 >= 0.70 && (share_all >= 0.93 || p.quick)),
        if p.quick {
            text.get("note ss_goodput_quick")?
        } else {
            String::new()
        },
    )?;
    let peak_ratio = m.tahoe.peak_ratio;
    claim(
        j,
        text,
        "ss_twice",
        Ours::num(peak_ratio, format!("{peak_ratio:.2}")),
        Verdict::of(peak_ratio <= 2.0),
        text.get("note ss_twice")?,
    )
}

/// The whole result of a plotted run.
fn plotted(r: &Run) -> Result<&RunResult> {
    r.plotted
        .as_ref()
        .ok_or_else(|| anyhow!("a plotted run was not kept"))
}

impl Experiment for Startup {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "startup"
    }

    fn files(&self) -> Files {
        files!("e01_startup")
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let mut vanilla = base.clone();
        vanilla.flow[0].tcp = "vanilla_4_3bsd".into();
        let mut tahoe = base.clone();
        tahoe.flow[0].tcp = "tahoe".into();
        if p.quick {
            vanilla.duration_s = QUICK_DURATION_S;
            tahoe.duration_s = QUICK_DURATION_S;
        }
        // The same with a receiver that acknowledges every packet, as the message's "when
        // you get an ack for new data, increase the congestion window by one packet"
        // counts; a delayed-ACK receiver makes slow start grow x1.5 per round trip.
        let mut tahoe1 = tahoe.clone();
        tahoe1.duration_s = 10.0;
        tahoe1.flow[0].tcp_overrides.ack_every = Some(1);
        tahoe1.flow[0].receiver_overrides.ack_every = Some(1);
        // Vanilla with the 1986 timer: no Karn's algorithm (4.3BSD as released kept timing a
        // segment through its retransmission and ended the backoff on any new ACK) and the
        // 500 ms clock of tcp_slowtimo.
        let mut vanilla_nokarn = vanilla.clone();
        vanilla_nokarn.flow[0].tcp_overrides.karn = Some(false);
        vanilla_nokarn.flow[0].tcp_overrides.clock_granularity_ms = Some(500.0);
        Ok(vec![vanilla, tahoe, tahoe1, vanilla_nokarn])
    }

    fn reduce(&self, _p: Params, i: usize, r: RunResult) -> Result<Run> {
        let tr = &r.traces[0];
        let cap = data_rate_bps();
        let dur = r.summary.duration_s;
        Ok(Run {
            flow: r.summary.flows[0].clone(),
            most_sends: most_sends(tr),
            opening: opening(tr),
            share10: acked_by(tr, 10.0) * 8.0 / 10.0 / cap,
            share_all: acked_by(tr, dur) * 8.0 / dur / cap,
            duration_s: dur,
            peak_ratio: peak_ratio(tr),
            plotted: (i == VANILLA || i == TAHOE).then_some(r),
        })
    }

    fn measure(&self, _p: Params, runs: Vec<Run>) -> Result<Measured> {
        let [vanilla, tahoe, tahoe_ack1, vanilla_1986]: [Run; RUNS] = runs
            .try_into()
            .map_err(|r: Vec<Run>| anyhow!("{} runs, not {RUNS}", r.len()))?;
        Ok(Measured {
            vanilla,
            tahoe,
            tahoe_ack1,
            vanilla_1986,
        })
    }

    fn judge(&self, p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_vanilla(m, text, j)?;
        judge_tahoe(p, m, text, j)
    }

    fn render(&self, _p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let f1 = Figure::from_text(
            out,
            "tseq-vanilla",
            "Startup without slow start (vanilla 4.3BSD): the first 10 s",
            text,
            &[],
        )?;
        let f2 = Figure::from_text(
            out,
            "tseq-tahoe",
            "Startup with slow start (Tahoe): the first 10 s",
            text,
            &[],
        )?;
        // The second caption says "the same axes".
        let [c1, c2]: [plots::Chart; 2] = plots::time_sequences_same_axes(
            &[
                (plotted(&m.vanilla)?, 0, &f1.title),
                (plotted(&m.tahoe)?, 0, &f2.title),
            ],
            Some(10.0),
        )?
        .try_into()
        .map_err(|_| anyhow!("two charts"))?;
        let (f1, f2) = (f1.draw(c1)?, f2.draw(c2)?);
        let rows = [
            ("vanilla 4.3BSD", &m.vanilla.flow),
            ("Tahoe", &m.tahoe.flow),
        ]
        .iter()
        .map(|(n, f)| {
            vec![
                n.to_string(),
                format!("{:.1} KBps", f.goodput_bps / 8e3),
                f.segments_sent.to_string(),
                f.retransmitted_segments.to_string(),
                f.timeouts.to_string(),
            ]
        })
        .collect();
        Ok(Rendered {
            setup: text.get("setup")?,
            tables: vec![Table {
                caption: "Both runs".into(),
                header: vec![
                    "TCP".into(),
                    "goodput".into(),
                    "segments sent".into(),
                    "retransmitted".into(),
                    "timeouts".into(),
                ],
                rows,
            }],
            plots: vec![f1, f2],
            discussion: text.get("discussion")?,
        })
    }
}
