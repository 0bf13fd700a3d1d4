//! Experiment 12: gateway algorithms (seed 003, 2 Nov 1987): drop-tail, random drop, RED
//! (Floyd and Jacobson 1993), DRR (Shreedhar and Varghese 1995), CoDel (RFC 8289) and
//! FQ-CoDel (RFC 8290) under flows of mixed round-trip times and bursty cross traffic.

use crate::claims::{Judge, Ours};
use crate::gateways::Queue;
use crate::plots;
use crate::stats::{goodput_after, jain, mean, secs};
use crate::suite::{files, Experiment, Figure, Files, Params, PerSeed, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::net::PortSample;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct Gateways;

/// The bottleneck direction's port name.
const PORT: &str = "gw1-gw2";
/// Base round-trip times of the three flows (s), in flow order.
const RTTS: [f64; 3] = [0.020, 0.060, 0.180];
/// Window for "cut together": the longest round trip plus some queueing, since each flow
/// learns of a drop one (own) round trip after it.
const SYNC_WINDOW_S: f64 = 0.2;

/// The queue disciplines, each with [`LIMIT_PKTS`] packets of buffer.
const DISCIPLINES: [Queue; 6] = [
    Queue::DropTail,
    Queue::RandomDrop,
    Queue::Red { max_p: 0.02 },
    Queue::Drr,
    Queue::Codel,
    Queue::FqCodel,
];
const LIMIT_PKTS: usize = 100;
const DT: usize = 0;
const RD: usize = 1;
const RED: usize = 2;
const DRR: usize = 3;
const CODEL: usize = 4;
const FQC: usize = 5;
/// DRR with NewReno senders (index after the disciplines).
const DRR_NR: usize = 6;

fn label(d: usize) -> &'static str {
    DISCIPLINES
        .get(d)
        .map_or("DRR, NewReno senders", |q| q.label())
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
    s.link[0].queue_ab = Some(DISCIPLINES[disc].config(LIMIT_PKTS, false)?);
    s.seed = seed;
    if quick {
        s.duration_s = 30.0;
    }
    Ok(s)
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

/// A flow's queueing delay: its mean RTT after `from` minus its smallest RTT (ms).
fn inflation(tr: &[TraceEvent], from: f64) -> f64 {
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
        (mean(&late) - min) * 1e3
    }
}

fn metrics(r: &RunResult, from: f64) -> Metrics {
    let goodput = [0, 1, 2].map(|i| goodput_after(&r.traces[i], from, r.summary.duration_s));
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
    Metrics {
        goodput,
        jain: jain(&goodput),
        util: link.map_or(0.0, |l| l.utilization),
        delay_mean_ms: link.and_then(|l| l.queue_delay_mean_ms).unwrap_or(0.0),
        delay_p99_ms: link.and_then(|l| l.queue_delay_p99_ms).unwrap_or(0.0),
        cuts_per_s: rates.iter().sum(),
        together: per(together),
        expected: per(expected),
        all_three: per(all),
        drops: link.map_or(0.0, |l| l.queue_drops as f64),
        tcp_delay_ms: inflation(&r.traces[0], from),
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
fn mean_metrics(ms: &[Metrics]) -> Metrics {
    let avg = |f: &dyn Fn(&Metrics) -> f64| mean(&ms.iter().map(f).collect::<Vec<_>>());
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
                        .filter(|x| x.at >= t0 && x.at <= t1)
                        .map(|x| PortSample {
                            at: shift(x.at),
                            ..*x
                        })
                        .collect(),
                )
            })
            .collect(),
        captures: Vec::new(),
    }
}

/// Which first-seed runs are plotted: the queue of every configuration over 10 s, and the
/// cwnd of three over 20 s, after the warm-up and 10 s more.
const CWND_PLOTTED: [(usize, &str); 3] =
    [(DT, "cwnd-drop-tail"), (RED, "cwnd-red"), (DRR, "cwnd-drr")];

/// Seeds per configuration (at least one).
fn seeds(p: Params) -> u64 {
    p.seeds.max(1)
}

/// The runs: every discipline, then DRR with NewReno senders, [`seeds`] RNG seeds each.
fn grid(p: Params) -> PerSeed {
    PerSeed {
        configs: DISCIPLINES.len() + 1,
        seeds: seeds(p),
    }
}

/// Where the plotted windows start.
fn plot_from(p: Params) -> f64 {
    warmup(p.quick) + 10.0
}

/// One run: its metrics, and for the first seed of a plotted gateway the plotted windows
/// of its traces and queue (not the whole run).
pub struct Run {
    metrics: Metrics,
    queue_window: Option<RunResult>,
    cwnd_window: Option<RunResult>,
}

pub struct Measured {
    /// Per configuration (the disciplines, then [`DRR_NR`]), per seed.
    all: Vec<Vec<Metrics>>,
    /// Per configuration, the mean over seeds.
    mean: Vec<Metrics>,
    /// The bottleneck queue of each configuration (first seed, over 10 s),
    /// one series each named after the gateway, with drop-tail's summary for the time axis.
    queues: RunResult,
    /// Per configuration, the first seed's plotted cwnd window (where plotted).
    cwnd_windows: Vec<Option<RunResult>>,
}

impl Measured {
    /// The lowest and highest value of `f` over the seeds of configuration `d`.
    fn range(&self, d: usize, f: &dyn Fn(&Metrics) -> f64) -> (f64, f64) {
        let v: Vec<f64> = self.all[d].iter().map(f).collect();
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }

    /// The note on window cuts under configuration `d`.
    fn sync_note(&self, d: usize, text: &Text) -> Result<String> {
        let m = &self.mean[d];
        text.fill(
            "note sync",
            &[
                ("together", format!("{:.0}", m.together * 100.0)),
                ("expected", format!("{:.0}", m.expected * 100.0)),
                ("cuts", format!("{:.1}", m.cuts_per_s)),
                ("all", format!("{:.0}", m.all_three * 100.0)),
            ],
        )
    }
}

impl Experiment for Gateways {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "gateways"
    }

    fn files(&self) -> Files {
        files!("e12_gateways")
    }

    /// The queue plot needs the bottleneck's queue samples.
    fn records_queues(&self) -> bool {
        true
    }

    /// Every discipline, then DRR with NewReno senders; `seeds` runs each, in that order.
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        grid(p).plan(base, |d, seed| variant(base, d, seed, p.quick))
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let (d, first) = grid(p).config_of(index);
        let from = plot_from(p);
        Ok(Run {
            metrics: metrics(&r, warmup(p.quick)),
            queue_window: first.then(|| window(&r, from, 10.0)),
            cwnd_window: (first && CWND_PLOTTED.iter().any(|c| c.0 == d))
                .then(|| window(&r, from, 20.0)),
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let (mut all, mut mean, mut queue_windows, mut cwnd_windows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for group in grid(p).groups(runs) {
            let metrics: Vec<Metrics> = group.iter().map(|r| r.metrics).collect();
            mean.push(mean_metrics(&metrics));
            all.push(metrics);
            let first = group.into_iter().next();
            let (q, c) = first.map_or((None, None), |r| (r.queue_window, r.cwnd_window));
            queue_windows.push(q);
            cwnd_windows.push(c);
        }
        Ok(Measured {
            all,
            mean,
            queues: queue_series(queue_windows)?,
            cwnd_windows,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_fairness(m, text, j)?;
        judge_sync(m, text, j)?;
        judge_delay(m, text, j)
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let queues = Figure::from_text(
            out,
            "queues",
            format!(
                "Bottleneck queue under each gateway discipline, the same 10 s of each run (RNG seed {})",
                m.queues.summary.seed
            ),
            text,
            &[],
        )?;
        plots::queues_titled(&m.queues, &queues.file, &queues.title)?;
        let mut plots = vec![queues];
        for (d, stem) in CWND_PLOTTED {
            let w = m.cwnd_windows[d]
                .as_ref()
                .ok_or_else(|| anyhow!("no cwnd window of {}", label(d)))?;
            let fig = Figure::from_text(
                out,
                stem,
                format!(
                    "Windows of the 20, 60 and 180 ms flows through {} (RNG seed {})",
                    label(d),
                    m.queues.summary.seed
                ),
                text,
                &[],
            )?;
            plots::cwnd_titled(w, &fig.file, &fig.title)?;
            plots.push(fig);
        }
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", (if p.quick { 30 } else { 60 }).to_string()),
                    ("seeds", seeds(p).to_string()),
                ],
            )?,
            tables: vec![table(p, m)],
            plots,
            discussion: text.fill(
                "discussion",
                &[("red_util", format!("{:.0}", m.mean[RED].util * 100.0))],
            )?,
        })
    }
}

/// Drop-tail's unfairness to the long round trip; fair queueing's fairness.
fn judge_fairness(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let x = &m.mean;
    let dt_ratio = x[DT].goodput[0] / x[DT].goodput[2].max(1.0);
    j.claim(
        "dt_unfair",
        Ours::num(
            dt_ratio,
            format!(
                "{dt_ratio:.1} ({:.2} vs {:.2} Mb/s)",
                x[DT].goodput[0] / 1e6,
                x[DT].goodput[2] / 1e6
            ),
        ),
        Verdict::of(dt_ratio >= 2.0),
        format!("Jain {:.2}", x[DT].jain),
    )?;
    // DRR must be fair (it holds up to the whole buffer for one flow); FQ-CoDel may not be,
    // and if so the note says why.
    let (drr_ok, fqc_ok) = (x[DRR].jain >= 0.95, x[FQC].jain >= 0.95);
    let verdict = match (drr_ok, fqc_ok) {
        (true, true) => Verdict::Pass,
        (true, false) => Verdict::Disagree,
        _ => Verdict::Fail,
    };
    let worst = |d: usize| format!("{:.3}", m.range(d, &|y| y.jain).0);
    let mut note = text.fill(
        "note fq_fair",
        &[
            ("drr_worst", worst(DRR)),
            ("fqc_worst", worst(FQC)),
            ("drr_newreno", format!("{:.3}", x[DRR_NR].jain)),
            ("drr_newreno_worst", worst(DRR_NR)),
        ],
    )?;
    if drr_ok && !fqc_ok {
        note.push(' ');
        note.push_str(&text.fill(
            "note fq_fair_fq_codel",
            &[
                ("share", format!("{:.0}", 3.2e6 * 0.18 / 12e3)),
                ("fqc_180", format!("{:.2}", x[FQC].goodput[2] / 1e6)),
                ("fqc_20", format!("{:.2}", x[FQC].goodput[0] / 1e6)),
            ],
        )?);
    }
    j.claim(
        "fq_fair",
        format!("DRR {:.3}, FQ-CoDel {:.3}", x[DRR].jain, x[FQC].jain),
        verdict,
        note,
    )
}

/// Synchronized window cuts under drop-tail; fewer under RED and random drop.
fn judge_sync(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let x = &m.mean;
    let (dts, reds, rds) = (x[DT].sync_ratio(), x[RED].sync_ratio(), x[RD].sync_ratio());
    j.claim(
        "dt_sync",
        Ours::num(dts, format!("{dts:.2}")),
        Verdict::pass_or_disagree(dts > 1.2),
        m.sync_note(DT, text)?,
    )?;
    j.claim(
        "red_desync",
        format!("{reds:.2} (drop-tail {dts:.2})"),
        Verdict::pass_or_disagree(reds < dts),
        m.sync_note(RED, text)?,
    )?;
    let mut note = text.fill(
        "note random_desync",
        &[
            ("sync", m.sync_note(RD, text)?),
            ("jain", format!("{:.2}", x[RD].jain)),
        ],
    )?;
    if rds >= dts {
        note.push(' ');
        note.push_str(&text.get("note random_desync_same_moments")?);
    }
    j.claim(
        "random_desync",
        format!("{rds:.2} (drop-tail {dts:.2})"),
        Verdict::pass_or_disagree(rds < dts),
        note,
    )
}

/// Queueing delay under RED, CoDel and FQ-CoDel; utilization.
fn judge_delay(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let x = &m.mean;
    j.claim(
        "red_delay",
        Ours::num(
            x[RED].delay_mean_ms,
            format!(
                "{:.1} ms (drop-tail {:.1} ms)",
                x[RED].delay_mean_ms, x[DT].delay_mean_ms
            ),
        ),
        Verdict::of(x[RED].delay_mean_ms <= 18.0),
        format!("p99 {:.1} ms", x[RED].delay_p99_ms),
    )?;
    let (codel_ok, fqcd_ok) = (x[CODEL].delay_mean_ms <= 15.0, x[FQC].delay_mean_ms <= 15.0);
    let verdict = match (codel_ok, fqcd_ok) {
        (true, true) => Verdict::Pass,
        (true, false) => Verdict::Disagree,
        _ => Verdict::Fail,
    };
    let ms = |v: f64| format!("{v:.1}");
    let mut note = text.fill(
        "note codel_delay",
        &[
            ("codel_p99", ms(x[CODEL].delay_p99_ms)),
            ("fqc_p99", ms(x[FQC].delay_p99_ms)),
            ("codel_rise", ms(x[CODEL].tcp_delay_ms)),
            ("fqc_rise", ms(x[FQC].tcp_delay_ms)),
            ("dt_rise", ms(x[DT].tcp_delay_ms)),
        ],
    )?;
    if codel_ok && !fqcd_ok {
        note.push(' ');
        note.push_str(&text.get("note codel_delay_fq_codel")?);
    }
    j.claim(
        "codel_delay",
        format!(
            "CoDel {:.1} ms, FQ-CoDel {:.1} ms",
            x[CODEL].delay_mean_ms, x[FQC].delay_mean_ms
        ),
        verdict,
        note,
    )?;
    j.claim(
        "utilization",
        DISCIPLINES
            .iter()
            .zip(x)
            .map(|(q, y)| format!("{} {:.0}%", q.label(), y.util * 100.0))
            .collect::<Vec<_>>()
            .join(", "),
        Verdict::Info,
        "",
    )
}

/// One row per configuration, means over the seeds.
fn table(p: Params, m: &Measured) -> Table {
    let rows = (0..=DISCIPLINES.len())
        .map(|d| {
            let x = &m.mean[d];
            let (jlo, jhi) = m.range(d, &|y| y.jain);
            vec![
                label(d).to_string(),
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
    Table {
        caption: format!(
            "Mean over {} RNG seeds, after a {:.0} s warm-up (Jain: mean, and the range over RNG seeds). Delay: time in the bottleneck queue, whole run. Cuts: fast retransmits and timeouts, one per round trip per flow.",
            seeds(p),
            warmup(p.quick)
        ),
        header: Table::header(&[
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
        ]),
        rows,
    }
}

/// Drop-tail's queue window with its queue series replaced by one series per configuration
/// (given the first seed's queue window of each), named after it.
fn queue_series(mut windows: Vec<Option<RunResult>>) -> Result<RunResult> {
    let mut qr = windows[DT]
        .take()
        .ok_or_else(|| anyhow!("no queue window of drop-tail"))?;
    let dt_queues = std::mem::take(&mut qr.queues);
    for (d, w) in windows.iter().enumerate() {
        let q = if d == DT {
            dt_queues.first()
        } else {
            w.as_ref().and_then(|w| w.queues.first())
        };
        if let Some((_, s)) = q {
            qr.queues.push((label(d).to_string(), s.clone()));
        }
    }
    Ok(qr)
}
