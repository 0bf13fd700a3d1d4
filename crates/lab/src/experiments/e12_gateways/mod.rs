//! Experiment 12: gateway algorithms (seed 003, 2 Nov 1987; RED, DRR, CoDel, FQ-CoDel):
//! drop-tail, random drop, RED, DRR, CoDel and FQ-CoDel under flows of mixed round-trip
//! times and bursty cross traffic.

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_gateway::QdiscConfig;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::{anyhow, Result};

pub struct Gateways;

const TEXT: &str = include_str!("scenario.toml");
/// The bottleneck direction's port name.
const PORT: &str = "gw1-gw2";
/// Base round-trip times of the three flows (s), in flow order.
const RTTS: [f64; 3] = [0.020, 0.060, 0.180];
/// Window for "cut together": the longest round trip plus some queueing, since each flow
/// learns of a drop one (own) round trip after it.
const SYNC_WINDOW_S: f64 = 0.2;

/// (name, queue discipline as a scenario file spells it), each with 100 packets of buffer.
const DISCIPLINES: [(&str, &str); 6] = [
    (
        "drop-tail",
        r#"kind = "drop_tail"
limit_pkts = 100"#,
    ),
    (
        "random drop",
        r#"kind = "random_drop"
limit_pkts = 100"#,
    ),
    (
        "RED",
        r#"kind = "red"
limit_pkts = 100
min_th_pkts = 5.0
max_th_pkts = 15.0
max_p = 0.02
w_q = 0.002"#,
    ),
    (
        "DRR",
        r#"kind = "drr"
limit_pkts = 100"#,
    ),
    (
        "CoDel",
        r#"kind = "codel"
limit_pkts = 100
target_ms = 5.0
interval_ms = 100.0"#,
    ),
    (
        "FQ-CoDel",
        r#"kind = "fq_codel"
limit_pkts = 100
target_ms = 5.0
interval_ms = 100.0"#,
    ),
];
const DT: usize = 0;
const RD: usize = 1;
const RED: usize = 2;
const DRR: usize = 3;
const CODEL: usize = 4;
const FQC: usize = 5;
/// DRR with NewReno senders (index after the disciplines).
const DRR_NR: usize = 6;

fn label(d: usize) -> &'static str {
    DISCIPLINES.get(d).map_or("DRR, NewReno senders", |x| x.0)
}

fn warmup(quick: bool) -> f64 {
    if quick {
        5.0
    } else {
        10.0
    }
}

fn variant(base: &Scenario, disc: usize, seed: u64, quick: bool) -> Result<Scenario> {
    let mut s = base.clone();
    if disc == DISCIPLINES.len() {
        // DRR again, with NewReno senders (no SACK).
        for f in &mut s.flow {
            f.tcp = "newreno".into();
        }
        return variant(&s, DRR, seed, quick);
    }
    let q: QdiscConfig =
        toml::from_str(DISCIPLINES[disc].1).map_err(|e| anyhow!("{}: {e}", DISCIPLINES[disc].0))?;
    s.link[0].queue_ab = Some(q);
    s.seed = seed;
    if quick {
        s.duration_s = 30.0;
    }
    Ok(s)
}

fn secs(t: Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// Bytes acknowledged to flow `i` after `from` s, per second to the end (b/s).
fn goodput_after(r: &RunResult, i: usize, from: f64) -> f64 {
    let mut first = None;
    let mut last = None;
    for e in &r.traces[i] {
        if let TraceKind::Ack { ack } = e.kind {
            if secs(e.time) >= from {
                first.get_or_insert(ack);
                last = Some(ack);
            }
        }
    }
    match (first, last) {
        (Some(a), Some(b)) => f64::from(b.since(a)) * 8.0 / (r.summary.duration_s - from),
        _ => 0.0,
    }
}

/// Times a flow cut its window (fast retransmit or timeout) after `from` s; a cut within a
/// round trip of the previous one is the same congestion event.
fn cuts(tr: &[TraceEvent], from: f64, base_rtt: f64) -> Vec<f64> {
    let mut v: Vec<f64> = Vec::new();
    for e in tr {
        if matches!(e.kind, TraceKind::FastRetransmit | TraceKind::Timeout) {
            let t = secs(e.time);
            let rtt = e.srtt.as_secs_f64().max(base_rtt);
            if t >= from && v.last().is_none_or(|&l| t - l > rtt) {
                v.push(t);
            }
        }
    }
    v
}

#[derive(Clone, Copy, Default)]
struct Metrics {
    goodput: [f64; 3],
    jain: f64,
    util: f64,
    delay_mean_ms: f64,
    delay_p99_ms: f64,
    cuts_per_s: f64,
    /// Fraction of cuts with another flow's cut within the window.
    together: f64,
    /// The same fraction expected if the flows cut independently at their rates.
    expected: f64,
    /// Fraction of cuts that have both other flows cutting within the window.
    all_three: f64,
    drops: f64,
    /// Queueing delay the 20 ms flow sees: its mean RTT after the warm-up minus its smallest
    /// RTT (ms). With ACKs every second segment the echoed timestamp is the first segment's,
    /// so this also counts up to one segment spacing of that flow (~3 ms here).
    tcp_delay_ms: f64,
    /// Retransmission timeouts, all flows, whole run.
    rtos: f64,
}

fn measure(r: &RunResult, from: f64) -> Metrics {
    let goodput = [0, 1, 2].map(|i| goodput_after(r, i, from));
    let jain = ackclock_sim::results::jain(&goodput).unwrap_or(0.0);
    let link = r.summary.links.iter().find(|l| l.name == PORT);
    let span = r.summary.duration_s - from;
    let c: Vec<Vec<f64>> = (0..3).map(|i| cuts(&r.traces[i], from, RTTS[i])).collect();
    let rates: Vec<f64> = c.iter().map(|v| v.len() as f64 / span).collect();
    let near = |j: usize, t: f64| c[j].iter().any(|&u| (u - t).abs() <= SYNC_WINDOW_S);
    let (mut n, mut together, mut expected, mut all) = (0.0, 0.0, 0.0, 0.0);
    for (i, ci) in c.iter().enumerate() {
        let others: Vec<usize> = (0..3).filter(|&j| j != i).collect();
        let lam: f64 = others.iter().map(|&j| rates[j]).sum();
        for &t in ci {
            n += 1.0;
            let hits = others.iter().filter(|&&j| near(j, t)).count();
            if hits > 0 {
                together += 1.0;
            }
            if hits == others.len() {
                all += 1.0;
            }
            expected += 1.0 - (-2.0 * SYNC_WINDOW_S * lam).exp();
        }
    }
    let per = |x: f64| if n > 0.0 { x / n } else { 0.0 };
    let inflation = |tr: &[TraceEvent]| {
        let rtts: Vec<(f64, f64)> = tr
            .iter()
            .filter_map(|e| match e.kind {
                TraceKind::RttSample { rtt } => Some((secs(e.time), rtt.as_secs_f64())),
                _ => None,
            })
            .collect();
        let min = rtts.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
        let late: Vec<f64> = rtts.iter().filter(|x| x.0 >= from).map(|x| x.1).collect();
        if late.is_empty() {
            0.0
        } else {
            (late.iter().sum::<f64>() / late.len() as f64 - min) * 1e3
        }
    };
    let tcp_delay_ms = inflation(&r.traces[0]);
    Metrics {
        goodput,
        jain,
        util: link.map_or(0.0, |l| l.utilization),
        delay_mean_ms: link.and_then(|l| l.queue_delay_mean_ms).unwrap_or(0.0),
        delay_p99_ms: link.and_then(|l| l.queue_delay_p99_ms).unwrap_or(0.0),
        cuts_per_s: rates.iter().sum(),
        together: per(together),
        expected: per(expected),
        all_three: per(all),
        drops: link.map_or(0.0, |l| l.queue_drops as f64),
        tcp_delay_ms,
        rtos: r.summary.flows.iter().map(|f| f.timeouts as f64).sum(),
    }
}

impl Metrics {
    fn sync_ratio(&self) -> f64 {
        if self.expected > 0.0 {
            self.together / self.expected
        } else {
            0.0
        }
    }
}

/// Mean of the metrics of several seeds (sync ratio of the means, not mean of ratios).
fn mean(ms: &[Metrics]) -> Metrics {
    let n = ms.len().max(1) as f64;
    let avg = |f: &dyn Fn(&Metrics) -> f64| ms.iter().map(f).sum::<f64>() / n;
    Metrics {
        goodput: [0, 1, 2].map(|i| avg(&|m| m.goodput[i])),
        jain: avg(&|m| m.jain),
        util: avg(&|m| m.util),
        delay_mean_ms: avg(&|m| m.delay_mean_ms),
        delay_p99_ms: avg(&|m| m.delay_p99_ms),
        cuts_per_s: avg(&|m| m.cuts_per_s),
        together: avg(&|m| m.together),
        expected: avg(&|m| m.expected),
        all_three: avg(&|m| m.all_three),
        drops: avg(&|m| m.drops),
        tcp_delay_ms: avg(&|m| m.tcp_delay_ms),
        rtos: avg(&|m| m.rtos),
    }
}

/// Flow traces between `from` and `from + len` s, shifted to start at zero.
fn window(r: &RunResult, from: f64, len: f64) -> RunResult {
    let t0 = Instant::ZERO + Duration::from_secs_f64(from);
    let t1 = t0 + Duration::from_secs_f64(len);
    let shift = |t: Instant| Instant::ZERO + (t - t0);
    let mut summary = r.summary.clone();
    summary.duration_s = len;
    RunResult {
        summary,
        wall_s: 0.0,
        traces: r
            .traces
            .iter()
            .map(|tr| {
                tr.iter()
                    .filter(|e| e.time >= t0 && e.time <= t1)
                    .map(|e| TraceEvent {
                        time: shift(e.time),
                        ..*e
                    })
                    .collect()
            })
            .collect(),
        queues: r
            .queues
            .iter()
            .filter(|(n, _)| n == PORT)
            .map(|(n, s)| {
                (
                    n.clone(),
                    s.iter()
                        .filter(|x| x.0 >= t0 && x.0 <= t1)
                        .map(|x| (shift(x.0), x.1, x.2))
                        .collect(),
                )
            })
            .collect(),
    }
}

impl Experiment for Gateways {
    fn name(&self) -> &'static str {
        "gateways"
    }
    fn title(&self) -> &'static str {
        "12. Gateways: drop-tail, random drop, RED, fair queueing, CoDel"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, _quick: bool, seeds: u64) -> u64 {
        (DISCIPLINES.len() + 1) as u64 * seeds.max(1)
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("gateways", TEXT)?;
        let q = ctx.quick;
        let seeds = ctx.seeds.max(1);
        let warm = warmup(q);
        let mut runs = Vec::new();
        for d in 0..=DISCIPLINES.len() {
            for k in 0..seeds {
                runs.push(variant(&base, d, base.seed + k, q)?);
            }
        }
        let res = ctx.run_all_with_queues(runs)?;
        let per: Vec<&[RunResult]> = res.chunks(seeds as usize).collect();
        let all: Vec<Vec<Metrics>> = per
            .iter()
            .map(|rs| rs.iter().map(|r| measure(r, warm)).collect())
            .collect();
        let m: Vec<Metrics> = all.iter().map(|v| mean(v)).collect();
        let spread = |d: usize, f: &dyn Fn(&Metrics) -> f64| {
            let v: Vec<f64> = all[d].iter().map(f).collect();
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };

        let e = self.name();
        let dt_ratio = m[DT].goodput[0] / m[DT].goodput[2].max(1.0);
        let (dts, reds, rds) = (m[DT].sync_ratio(), m[RED].sync_ratio(), m[RD].sync_ratio());
        let sync_note = |d: usize| {
            format!(
                "{:.0}% of cuts had another flow's cut within 200 ms ({:.0}% expected if independent; {:.1} cuts/s in all); all three together {:.0}%",
                m[d].together * 100.0,
                m[d].expected * 100.0,
                m[d].cuts_per_s,
                m[d].all_three * 100.0
            )
        };
        // Fair queueing: DRR must be fair (it holds up to the whole buffer for one flow);
        // FQ-CoDel may not be, and if so the note says why.
        let (drr_ok, fqc_ok) = (m[DRR].jain >= 0.95, m[FQC].jain >= 0.95);
        let fq_verdict = match (drr_ok, fqc_ok) {
            (true, true) => Verdict::Pass,
            (true, false) => Verdict::Disagree,
            _ => Verdict::Fail,
        };
        let fq_why = if drr_ok && !fqc_ok {
            format!(
                " FQ-CoDel gives each flow its own queue but keeps it near 5 ms: the 180 ms flow's window must swing by half its {:.0}-packet share of the pipe at every cut, far more than 5 ms of queue absorbs, so the flow leaves part of its share unused and the others take it ({:.2} Mb/s against the 20 ms flow's {:.2}). DRR lets the same flow queue up to the whole buffer, and is fair.",
                3.2e6 * 0.18 / 12e3,
                m[FQC].goodput[2] / 1e6,
                m[FQC].goodput[0] / 1e6
            )
        } else {
            String::new()
        };
        let (codel_ok, fqcd_ok) = (m[CODEL].delay_mean_ms <= 15.0, m[FQC].delay_mean_ms <= 15.0);
        let codel_verdict = match (codel_ok, fqcd_ok) {
            (true, true) => Verdict::Pass,
            (true, false) => Verdict::Disagree,
            _ => Verdict::Fail,
        };
        let codel_note = format!(
            "p99 {:.1} and {:.1} ms; the 20 ms flow's RTT rises by {:.1} and {:.1} ms (drop-tail {:.1}).{}",
            m[CODEL].delay_p99_ms,
            m[FQC].delay_p99_ms,
            m[CODEL].tcp_delay_ms,
            m[FQC].tcp_delay_ms,
            m[DT].tcp_delay_ms,
            if codel_ok && !fqcd_ok {
                " The mean counts every packet. In FQ-CoDel the unresponsive on/off source has a queue of its own: it sends 5 Mb/s into a quarter of the link while on, and CoDel's drop rate, which grows with the square root of the drop count, does not catch up within a 200 ms burst, so its packets wait up to the buffer (the p99). The TCP flows' own queues stay about as short as under CoDel (the 20 ms flow's RTT rise, above); the claim holds for them, not for every packet."
            } else {
                ""
            }
        );
        let mut claims = vec![
            judged(
                &base,
                e,
                "dt_unfair",
                format!(
                    "{dt_ratio:.1} ({:.2} vs {:.2} Mb/s)",
                    m[DT].goodput[0] / 1e6,
                    m[DT].goodput[2] / 1e6
                ),
                Verdict::of(dt_ratio >= 2.0),
                format!("Jain {:.2}", m[DT].jain),
            )?,
            judged(
                &base,
                e,
                "fq_fair",
                format!("DRR {:.3}, FQ-CoDel {:.3}", m[DRR].jain, m[FQC].jain),
                fq_verdict,
                format!(
                    "worst seed: DRR {:.3}, FQ-CoDel {:.3}; DRR with NewReno senders {:.3} (worst {:.3}: a slow-start overshoot repaired one loss per round trip).{fq_why}",
                    spread(DRR, &|x| x.jain).0,
                    spread(FQC, &|x| x.jain).0,
                    m[DRR_NR].jain,
                    spread(DRR_NR, &|x| x.jain).0
                ),
            )?,
            judged(
                &base,
                e,
                "dt_sync",
                format!("{dts:.2}"),
                if dts > 1.2 { Verdict::Pass } else { Verdict::Disagree },
                sync_note(DT),
            )?,
            judged(
                &base,
                e,
                "red_desync",
                format!("{reds:.2} (drop-tail {dts:.2})"),
                if reds < dts { Verdict::Pass } else { Verdict::Disagree },
                sync_note(RED),
            )?,
            judged(
                &base,
                e,
                "random_desync",
                format!("{rds:.2} (drop-tail {dts:.2})"),
                if rds < dts { Verdict::Pass } else { Verdict::Disagree },
                format!(
                    "{}; Jain {:.2}.{}",
                    sync_note(RD),
                    m[RD].jain,
                    if rds < dts {
                        ""
                    } else {
                        " Dropping a random packet only when the buffer overflows drops at the same moments as drop-tail: the buffer still fills, and each overflow hits the flows together. It changes who loses (in proportion to each flow's packets in the queue), not when; RED's answer is to decide early, on an averaged queue, one packet at a time."
                    }
                ),
            )?,
            judged(
                &base,
                e,
                "red_delay",
                format!(
                    "{:.1} ms (drop-tail {:.1} ms)",
                    m[RED].delay_mean_ms, m[DT].delay_mean_ms
                ),
                Verdict::of(m[RED].delay_mean_ms <= 18.0),
                format!("p99 {:.1} ms", m[RED].delay_p99_ms),
            )?,
            judged(
                &base,
                e,
                "codel_delay",
                format!(
                    "CoDel {:.1} ms, FQ-CoDel {:.1} ms",
                    m[CODEL].delay_mean_ms, m[FQC].delay_mean_ms
                ),
                codel_verdict,
                codel_note,
            )?,
            judged(
                &base,
                e,
                "utilization",
                DISCIPLINES
                    .iter()
                    .zip(&m)
                    .map(|((n, _), x)| format!("{n} {:.0}%", x.util * 100.0))
                    .collect::<Vec<_>>()
                    .join(", "),
                Verdict::Info,
                "",
            )?,
        ];
        for c in &mut claims {
            if c.verdict == Verdict::Fail && c.note.is_empty() {
                c.note = "ackclock misses the published band; see the discussion".into();
            }
        }

        let rows = (0..=DISCIPLINES.len())
            .map(|d| {
                let name = label(d);
                let x = &m[d];
                let (jlo, jhi) = spread(d, &|y| y.jain);
                vec![
                    name.to_string(),
                    format!("{:.1}%", x.util * 100.0),
                    format!("{:.2}", x.goodput[0] / 1e6),
                    format!("{:.2}", x.goodput[1] / 1e6),
                    format!("{:.2}", x.goodput[2] / 1e6),
                    format!("{:.3} ({jlo:.2}-{jhi:.2})", x.jain),
                    format!("{:.1}", x.delay_mean_ms),
                    format!("{:.1}", x.delay_p99_ms),
                    format!("{:.1}", x.tcp_delay_ms),
                    format!("{:.0}", x.drops),
                    format!("{:.1}", x.rtos),
                    format!("{:.2}", x.cuts_per_s),
                    format!("{:.0}% / {:.0}%", x.together * 100.0, x.expected * 100.0),
                    format!("{:.2}", x.sync_ratio()),
                    format!("{:.0}%", x.all_three * 100.0),
                ]
            })
            .collect();
        let table = Table {
            caption: format!(
                "Mean over {seeds} seeds, after a {warm:.0} s warm-up (Jain: mean, and the range over seeds). Delay: time in the bottleneck queue, whole run. Cuts: fast retransmits and timeouts, one per round trip per flow."
            ),
            header: [
                "gateway",
                "utilization",
                "20 ms flow (Mb/s)",
                "60 ms (Mb/s)",
                "180 ms (Mb/s)",
                "Jain",
                "queue delay, all packets: mean (ms)",
                "p99 (ms)",
                "20 ms flow: RTT - min RTT (ms)",
                "drops",
                "timeouts",
                "window cuts/s",
                "cut within 200 ms of another: observed / if independent",
                "ratio",
                "all three together",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        };

        // Plots from the first seed: queue of four gateways over 10 s; cwnd with drop-tail
        // and RED over 20 s.
        let from = warm + 10.0;
        let p1 = ctx.out.join("queues.svg");
        let mut qr = window(&per[DT][0], from, 10.0);
        qr.queues.clear();
        for d in [DT, RED, CODEL, FQC] {
            let w = window(&per[d][0], from, 10.0);
            if let Some((_, s)) = w.queues.into_iter().next() {
                qr.queues.push((DISCIPLINES[d].0.to_string(), s));
            }
        }
        plots::queues(&qr, &p1)?;
        let mut out = vec![p1];
        for (d, file) in [
            (DT, "cwnd-drop-tail.svg"),
            (RED, "cwnd-red.svg"),
            (DRR, "cwnd-drr.svg"),
        ] {
            let p = ctx.out.join(file);
            plots::cwnd(&window(&per[d][0], from, 20.0), &p)?;
            out.push(p);
        }

        Ok(Section {
            quote: "I think fair-queuing, combined with some cleverness in figuring out when to drop packets and which to drop, would be a workable algorithm. But I think we can do things that are a lot simpler ... I have some \"random\" gateway algorithms that I think would do as good a job for congestion control as fair-queuing but require no state and have negligible per-packet cost.".into(),
            quote_source: "seed 003, 2 Nov 1987 (to the IETF); Floyd & Jacobson 1993 (RED); RFC 8289 (CoDel); RFC 8290 (FQ-CoDel); Shreedhar & Varghese 1995 (DRR)".into(),
            setup: format!(
                "Three bulk flows with SACK recovery (RFC 6675, Reno AIMD; window scaling, 1 MB buffers) and base RTTs of 20, 60 and 180 ms, started 0.5 s apart, share a 10 Mb/s bottleneck (gw1 -> gw2) with 100 packets of buffer; an on/off UDP source (1000-byte packets at 5 Mb/s while on; exponential on and off periods, means 200 and 800 ms) crosses it. The bottleneck queue is drop-tail, random drop (a random queued packet pushed out on overflow), RED (5/15 packets, max_p 0.02, w_q 0.002), DRR (1500-byte quantum), CoDel (5 ms / 100 ms) or FQ-CoDel, each holding at most 100 packets; DRR once more with NewReno senders. {} s runs, {seeds} seeds each (seed changes the on/off periods and the random drops). Synchronization: for each window cut, whether another flow cut within 200 ms (the longest RTT plus queueing), against the fraction expected if the flows cut independently at their measured rates.",
                if q { 30 } else { 60 }
            ),
            claims,
            tables: vec![table],
            plots: out,
            discussion: format!(
                "The synchronization ratio compares coincident window cuts with chance, since a flow learns of a drop one of its own round trips later and cuts happen often: a ratio near 1 means the flows cut independently. Drop-tail and random drop (on overflow only) keep the buffer full, so every burst that overflows it hits several flows; random drop chooses its victim in proportion to each flow's share of the queue, which spreads the drops but not their timing. RED drops early and at random, so it marks flows one at a time while the queue is still short. Fair queueing (DRR, FQ-CoDel) gives each flow its own queue and drops from the longest, so the 180 ms flow gets its share whatever its RTT; the AIMD endpoints alone (drop-tail, RED, CoDel) leave it a fraction of the 20 ms flow's rate, 'fairness -- that's hard to do at the endpoints' (seed 003). CoDel keeps the sojourn time near its target with one queue; FQ-CoDel adds the fairness. RED here runs the link at {:.0}%: with thresholds of 5 and 15 packets (6-18 ms) the queue is too short to cover the halving of windows that need ~50 packets of pipe, and its random drops often hit retransmissions, which only a timeout repairs; after such a timeout the engine sets ssthresh to half of FlightSize (RFC 5681 eq. 4), and FlightSize has grown during the SACK recovery, so the flow slow-starts well past its old window (reported to the lead). All numbers are means over seeds of one topology; the absolute unfairness depends on the RTT ratio and the buffer.",
                m[RED].util * 100.0
            ),
            ..Section::default()
        })
    }
}
