//! Experiment 15: a bit or a drop (seed 000, 16 Nov 1987 and 11 Feb 1988): Jain's DEC bit
//! (Ramakrishnan and Jain 1988, 7/8 on half a window of bits), ECN (RFC 3168, halving once
//! per window) and loss (halving on a drop) at one gateway, and the decrease factor d swept
//! on drops and on bits.

use crate::claims::{Judge, Ours};
use crate::gateways::{self, Queue};
use crate::plots::{self, Chart, Mark, Panel, Series};
use crate::stats::{goodput_after, jain, mean, sd, secs, uniform};
use crate::suite::{files, Experiment, Figure, Files, Params, PerSeed, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::cc::SsthreshBase;
use ackclock_tcp::config::CongestionName;
use ackclock_tcp::TraceEvent;
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct BitVsDrop;

/// The bottleneck direction's port name (the dumbbell's gateways).
const PORT: &str = "gw_left-gw_right";
/// The bottleneck's rate (b/s), as in the scenario file.
const RATE_BPS: f64 = 10e6;
/// IP bytes of a full data segment (1460 + 40).
const PKT_BYTES: f64 = 1500.0;
/// The decrease factors swept: the seed's 0.5, Jain's 7/8, and two between and beyond.
const DS: [f64; 4] = [0.5, 0.7, 0.875, 0.95];

/// Packets of buffer at the gateway.
const LIMIT_PKTS: usize = 100;
/// RED with Floyd's suggested max_th = 3 min_th and max_p 0.1.
const RED: Queue = Queue::Red { max_p: 0.1 };

/// The sender's reaction.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sender {
    /// The DEC-bit sender (7/8 when half the last window's bits were set, +1 otherwise).
    DecBit,
    /// NewReno with AIMD decrease d, with or without ECN (RFC 3168: once per window).
    Aimd { d: f64, ecn: bool },
}

/// One configuration: its label, its gateway queue (marking instead of dropping early with
/// `marks`) and its senders.
#[derive(Clone, Copy, Debug)]
struct Config {
    label: &'static str,
    queue: Queue,
    marks: bool,
    sender: Sender,
}

/// The configurations, in run order: the three schemes beside the sweep, then the sweep on
/// drops (drop-tail) and on bits (DEC-bit gateway), one per d of [`DS`].
fn configs() -> Vec<Config> {
    let mut v = vec![
        Config {
            label: "DEC bit: 7/8 on bits, DEC-bit gateway",
            queue: Queue::DecBit,
            marks: false,
            sender: Sender::DecBit,
        },
        Config {
            label: "ECN: halving on RED marks",
            queue: RED,
            marks: true,
            sender: Sender::Aimd { d: 0.5, ecn: true },
        },
        Config {
            label: "loss: halving on RED drops",
            queue: RED,
            marks: false,
            sender: Sender::Aimd { d: 0.5, ecn: false },
        },
    ];
    for &d in &DS {
        v.push(Config {
            label: if d == 0.5 {
                "loss: halving on drop-tail drops"
            } else {
                "loss, drop-tail"
            },
            queue: Queue::DropTail,
            marks: false,
            sender: Sender::Aimd { d, ecn: false },
        });
    }
    for &d in &DS {
        v.push(Config {
            label: if d == 0.5 {
                "ECN: halving on DEC-bit gateway bits"
            } else {
                "bits, DEC-bit gateway"
            },
            queue: Queue::DecBit,
            marks: false,
            sender: Sender::Aimd { d, ecn: true },
        });
    }
    v
}

const C_DECBIT: usize = 0;
const C_ECN_RED: usize = 1;
const C_RED_DROP: usize = 2;
/// The sweep on drops, d = [`DS`]\[k\] at `C_LOSS + k`.
const C_LOSS: usize = 3;
/// The sweep on bits.
const C_MARK: usize = C_LOSS + DS.len();
/// The schemes compared for claim 1 (and plotted), in the table's order.
const SCHEMES: [usize; 5] = [C_DECBIT, C_ECN_RED, C_MARK, C_LOSS, C_RED_DROP];
/// Index of d = 0.875 in [`DS`].
const K875: usize = 2;

/// Label of configuration `c` with its d where the label does not say it.
fn label(c: usize) -> String {
    let cf = configs()[c];
    match cf.sender {
        Sender::Aimd { d, .. } if c >= C_LOSS && d != 0.5 => format!("{}, d = {d}", cf.label),
        _ => cf.label.to_string(),
    }
}

/// Run length and warm-up (s): the flows need a few seconds to leave slow start and settle.
fn timing(quick: bool) -> (f64, f64) {
    if quick {
        (10.0, 3.0)
    } else {
        (20.0, 5.0)
    }
}

/// RNG seeds per configuration: the runs are cheap but there are eleven configurations; five
/// start-time draws already show the spread.
fn seeds(p: Params) -> u64 {
    p.seeds.clamp(1, 5)
}

/// The runs: every configuration, [`seeds`] RNG seeds each.
fn grid(p: Params) -> PerSeed {
    PerSeed {
        configs: configs().len(),
        seeds: seeds(p),
    }
}

fn variant(base: &Scenario, c: usize, seed: u64, quick: bool) -> Result<Scenario> {
    let cf = configs()[c];
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = timing(quick).0;
    let q = cf.queue.config(LIMIT_PKTS, cf.marks)?;
    gateways::set_bottleneck(&mut s, q, "bit_vs_drop")?;
    let n = s.flow.len() as u64;
    for (i, f) in s.flow.iter_mut().enumerate() {
        // The flows start within the first second at times drawn from the RNG seed, so the
        // seeds differ even through deterministic gateways.
        f.start_s = uniform(seed, i as u64 + n * 1000);
        let o = &mut f.tcp_overrides;
        match cf.sender {
            Sender::DecBit => o.cc = Some(CongestionName::DecBit),
            Sender::Aimd { d, ecn } => {
                o.cc = Some(CongestionName::Aimd);
                o.decrease = Some(d);
                o.ecn = Some(ecn);
                // d multiplies the window, as in the seed's code (`win = min(snd_wnd, cwnd)
                // / maxseg / 2`) and Jain's W(i) = d W(i-1), and as RFC 3168 §6.1.2 halves
                // cwnd: not the flight at the ACK that carries the signal, which with windows
                // of a few packets is a packet or two less and would make every d cut deeper.
                o.ssthresh_base = Some(SsthreshBase::Window);
            }
        }
    }
    Ok(s)
}

/// A flow's cwnd every 100 ms after `from` (the value set by the last event before each
/// instant), and its coefficient of variation: the size of the sawtooth relative to its mean.
fn cwnd_cov(tr: &[TraceEvent], from: f64, end: f64) -> f64 {
    let mut v = Vec::new();
    let mut t = from;
    let mut cur = None;
    let mut it = tr.iter().peekable();
    while t < end {
        while let Some(e) = it.next_if(|e| secs(e.time) <= t) {
            cur = Some(f64::from(e.cwnd));
        }
        if let Some(c) = cur {
            v.push(c);
        }
        t += 0.1;
    }
    let m = mean(&v);
    if m > 0.0 {
        sd(&v) / m
    } else {
        0.0
    }
}

/// One run, after the warm-up.
#[derive(Clone, Copy, Debug, Default)]
struct Metrics {
    util: f64,
    /// Queueing delay an arrival would see: queued bytes over the link rate, sampled (ms).
    delay_mean_ms: f64,
    delay_p99_ms: f64,
    /// Packets dropped by the gateway / packets offered to it.
    loss: f64,
    /// Retransmitted segments / segments sent, every flow, whole run.
    retx: f64,
    /// CE marks set by the gateway, whole run, per second.
    marks_per_s: f64,
    jain: f64,
    /// Mean over the flows of the cwnd's coefficient of variation.
    cwnd_cov: f64,
}

fn metrics(r: &RunResult, from: f64) -> Result<(Metrics, Vec<(f64, f64)>)> {
    let end = r.summary.duration_s;
    let samples = &r
        .queues
        .iter()
        .find(|(n, _)| n == PORT)
        .ok_or_else(|| anyhow!("no queue samples of {PORT}"))?
        .1;
    let late: Vec<_> = samples.iter().filter(|x| secs(x.at) >= from).collect();
    let (a, b) = match (late.first(), late.last()) {
        (Some(a), Some(b)) if secs(b.at) > secs(a.at) => (a, b),
        _ => return Err(anyhow!("no queue samples after the warm-up")),
    };
    let span = secs(b.at) - secs(a.at);
    let sent = (b.sent_bytes - a.sent_bytes) as f64;
    let dropped = (b.dropped - a.dropped) as f64;
    let mut delays: Vec<f64> = late
        .iter()
        .map(|x| f64::from(x.queue_bytes) * 8.0 / RATE_BPS * 1e3)
        .collect();
    let delay_mean_ms = mean(&delays);
    delays.sort_by(f64::total_cmp);
    let p99 = delays[((delays.len() as f64 * 0.99) as usize).min(delays.len() - 1)];
    let offered = dropped + sent / PKT_BYTES;
    let flows = &r.summary.flows;
    let segs: u64 = flows.iter().map(|f| f.segments_sent).sum();
    let retx: u64 = flows.iter().map(|f| f.retransmitted_segments).sum();
    let link = r.summary.links.iter().find(|l| l.name == PORT);
    let goodputs: Vec<f64> = r
        .traces
        .iter()
        .map(|tr| goodput_after(tr, from, end))
        .collect();
    let covs: Vec<f64> = r.traces.iter().map(|tr| cwnd_cov(tr, from, end)).collect();
    let queue = samples
        .iter()
        .filter(|x| secs(x.at) >= from && secs(x.at) <= from + 10.0)
        .map(|x| (secs(x.at) - from, f64::from(x.queue_pkts)))
        .collect();
    Ok((
        Metrics {
            util: sent * 8.0 / (RATE_BPS * span),
            delay_mean_ms,
            delay_p99_ms: p99,
            loss: if offered > 0.0 {
                dropped / offered
            } else {
                0.0
            },
            retx: if segs > 0 {
                retx as f64 / segs as f64
            } else {
                0.0
            },
            marks_per_s: link.map_or(0.0, |l| l.queue_marks as f64 / end),
            jain: jain(&goodputs),
            cwnd_cov: mean(&covs),
        },
        queue,
    ))
}

fn mean_metrics(ms: &[Metrics]) -> Metrics {
    let avg = |f: &dyn Fn(&Metrics) -> f64| mean(&ms.iter().map(f).collect::<Vec<_>>());
    Metrics {
        util: avg(&|m| m.util),
        delay_mean_ms: avg(&|m| m.delay_mean_ms),
        delay_p99_ms: avg(&|m| m.delay_p99_ms),
        loss: avg(&|m| m.loss),
        retx: avg(&|m| m.retx),
        marks_per_s: avg(&|m| m.marks_per_s),
        jain: avg(&|m| m.jain),
        cwnd_cov: avg(&|m| m.cwnd_cov),
    }
}

/// One run: its metrics and, for the first seed of a plotted scheme, 10 s of its queue.
pub struct Run {
    metrics: Metrics,
    queue: Option<Vec<(f64, f64)>>,
    seed: u64,
}

pub struct Measured {
    /// Per configuration, per seed.
    all: Vec<Vec<Metrics>>,
    /// Per configuration, the mean over seeds.
    mean: Vec<Metrics>,
    /// Per configuration, the first seed's queue over 10 s after the warm-up (plotted schemes).
    queues: Vec<Option<Vec<(f64, f64)>>>,
    /// The first seed.
    seed: u64,
}

impl Experiment for BitVsDrop {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "bit_vs_drop"
    }

    fn files(&self) -> Files {
        files!("e15_bit_vs_drop")
    }

    /// The delay, utilization and drops come from the bottleneck's samples.
    fn records_queues(&self) -> bool {
        true
    }

    /// Every configuration, `seeds` runs each, in that order.
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        grid(p).plan(base, |c, seed| variant(base, c, seed, p.quick))
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let (c, first) = grid(p).config_of(index);
        let (m, q) = metrics(&r, timing(p.quick).1)?;
        Ok(Run {
            metrics: m,
            queue: (first && SCHEMES.contains(&c)).then_some(q),
            seed: r.summary.seed,
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let (mut all, mut means, mut queues) = (Vec::new(), Vec::new(), Vec::new());
        let mut seed = 0;
        for (c, group) in grid(p).groups(runs).into_iter().enumerate() {
            if c == 0 {
                seed = group.first().map_or(0, |r| r.seed);
            }
            let ms: Vec<Metrics> = group.iter().map(|r| r.metrics).collect();
            means.push(mean_metrics(&ms));
            all.push(ms);
            queues.push(group.into_iter().next().and_then(|r| r.queue));
        }
        Ok(Measured {
            all,
            mean: means,
            queues,
            seed,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_schemes(&m.mean, text, j)?;
        judge_decrease(&m.mean, text, j)
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let plots = vec![
            schemes_plot(m, text, out)?,
            sweep_plot(m, text, out, SweepPlot::Util)?,
            sweep_plot(m, text, out, SweepPlot::Loss)?,
            sweep_plot(m, text, out, SweepPlot::Cov)?,
            queues_plot(m, text, out)?,
        ];
        let (duration, warmup) = timing(p.quick);
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", format!("{duration:.0}")),
                    ("warmup", format!("{warmup:.0}")),
                    ("seeds", seeds(p).to_string()),
                ],
            )?,
            tables: vec![table(p, m)],
            plots,
            discussion: text.fill(
                "discussion",
                &[
                    ("bit_util", format!("{:.0}", m.mean[C_DECBIT].util * 100.0)),
                    (
                        "bit_delay",
                        format!("{:.1}", m.mean[C_DECBIT].delay_mean_ms),
                    ),
                    ("loss_delay", format!("{:.0}", m.mean[C_LOSS].delay_mean_ms)),
                    (
                        "halving_bits",
                        format!("{:.0}", m.mean[C_MARK].util * 100.0),
                    ),
                    (
                        "bits875",
                        format!("{:.0}", m.mean[C_MARK + K875].util * 100.0),
                    ),
                    (
                        "bits95",
                        format!("{:.0}", m.mean[C_MARK + DS.len() - 1].util * 100.0),
                    ),
                    (
                        "loss875",
                        format!("{:.2}", m.mean[C_LOSS + K875].loss * 100.0),
                    ),
                    ("loss5", format!("{:.2}", m.mean[C_LOSS].loss * 100.0)),
                ],
            )?,
        })
    }
}

/// The schemes compared (`bit_queue`, `drop_util`, `drop_delay`, `ecn_halving`): the queue
/// the DEC bit leaves standing, the utilization and delay with drops, and ECN's halving on
/// RED's and the DEC-bit gateway's marks. `x` holds each configuration's means over the
/// seeds.
fn judge_schemes(x: &[Metrics], text: &Text, j: &mut Judge) -> Result<()> {
    let (bit, loss) = (&x[C_DECBIT], &x[C_LOSS]);
    let values = [
        ("bit_delay", ms(bit.delay_mean_ms)),
        ("bit_util", pct(bit.util)),
        ("loss_delay", ms(loss.delay_mean_ms)),
        ("loss_util", pct(loss.util)),
        ("loss_p99", ms(loss.delay_p99_ms)),
    ];
    // Claim 1, first half: a bit leaves a standing queue. "Stuck" is read as at least
    // half of the loss case's queueing delay.
    let stuck = bit.delay_mean_ms >= 0.5 * loss.delay_mean_ms;
    j.claim(
        "bit_queue",
        Ours::num(
            bit.delay_mean_ms,
            format!(
                "{:.1} ms at {:.0}% utilization (drop-tail: {:.1} ms at {:.0}%)",
                bit.delay_mean_ms,
                bit.util * 100.0,
                loss.delay_mean_ms,
                loss.util * 100.0
            ),
        ),
        Verdict::pass_or_disagree(stuck),
        text.fill(
            if stuck {
                "note bit_queue_stuck"
            } else {
                "note bit_queue"
            },
            &values,
        )?,
    )?;
    j.claim(
        "drop_util",
        Ours::num(loss.util, format!("{:.1}%", loss.util * 100.0)),
        Verdict::of(loss.util >= 0.95),
        format!(
            "drops {:.2}% of packets; retransmitted {:.2}% of segments",
            loss.loss * 100.0,
            loss.retx * 100.0
        ),
    )?;
    let minimal = loss.delay_mean_ms <= bit.delay_mean_ms;
    j.claim(
        "drop_delay",
        Ours::num(
            loss.delay_mean_ms,
            format!(
                "{:.1} ms mean, {:.1} ms p99 (DEC bit {:.1} ms)",
                loss.delay_mean_ms, loss.delay_p99_ms, bit.delay_mean_ms
            ),
        ),
        Verdict::pass_or_disagree(minimal),
        text.fill(
            if minimal {
                "note drop_delay_minimal"
            } else {
                "note drop_delay"
            },
            &values,
        )?,
    )?;
    let (er, eb) = (&x[C_ECN_RED], &x[C_MARK]);
    j.claim(
        "ecn_halving",
        format!(
            "RED marks: {:.0}%, {:.1} ms, {:.2}% retransmitted; DEC-bit gateway: {:.0}%, {:.1} ms, {:.2}% retransmitted",
            er.util * 100.0,
            er.delay_mean_ms,
            er.retx * 100.0,
            eb.util * 100.0,
            eb.delay_mean_ms,
            eb.retx * 100.0
        ),
        Verdict::Info,
        text.fill(
            "note ecn_halving",
            &[
                ("red_loss", format!("{:.2}", er.loss * 100.0)),
                ("loss_retx", format!("{:.2}", loss.retx * 100.0)),
            ],
        )?,
    )?;
    Ok(())
}

/// The sweep of the decrease factor d (`decrease_loss`, `decrease_bit`, `oscillation`): the
/// packets dropped on drops, the utilization on bits, and the window's oscillation beside
/// the sawtooth model's. `x` holds each configuration's means over the seeds.
fn judge_decrease(x: &[Metrics], text: &Text, j: &mut Judge) -> Result<()> {
    let bit = &x[C_DECBIT];
    let (l5, l875) = (&x[C_LOSS], &x[C_LOSS + K875]);
    let more = l875.loss > l5.loss;
    j.claim(
        "decrease_loss",
        Ours::num(
            l875.loss * 100.0,
            format!(
                "{:.2}% at d = 0.875, {:.2}% at d = 0.5",
                l875.loss * 100.0,
                l5.loss * 100.0
            ),
        ),
        Verdict::pass_or_disagree(more),
        text.fill(
            "note decrease_loss",
            &[
                ("util5", pct(l5.util)),
                ("util875", pct(l875.util)),
                ("delay5", ms(l5.delay_mean_ms)),
                ("delay875", ms(l875.delay_mean_ms)),
            ],
        )?,
    )?;
    let (m5, m875) = (&x[C_MARK], &x[C_MARK + K875]);
    let better = m875.util > m5.util;
    j.claim(
        "decrease_bit",
        Ours::num(
            m875.util,
            format!(
                "{:.1}% at d = 0.875, {:.1}% at d = 0.5 (DEC-bit senders {:.1}%)",
                m875.util * 100.0,
                m5.util * 100.0,
                bit.util * 100.0
            ),
        ),
        Verdict::pass_or_disagree(better),
        text.fill(
            "note decrease_bit",
            &[
                ("delay875", ms(m875.delay_mean_ms)),
                ("loss875", format!("{:.2}", m875.loss * 100.0)),
            ],
        )?,
    )?;
    let cov = |base: usize| {
        DS.iter()
            .enumerate()
            .map(|(k, d)| format!("{d}: {:.2}", x[base + k].cwnd_cov))
            .collect::<Vec<_>>()
            .join(", ")
    };
    j.claim(
        "oscillation",
        format!("drops {}; bits {}", cov(C_LOSS), cov(C_MARK)),
        Verdict::Info,
        text.fill(
            "note oscillation",
            &[
                ("model5", format!("{:.2}", sawtooth_cov(0.5))),
                ("model875", format!("{:.2}", sawtooth_cov(0.875))),
            ],
        )?,
    )
}

/// A time in milliseconds with one decimal, for the notes.
fn ms(v: f64) -> String {
    format!("{v:.1}")
}

/// A fraction as a percentage with one decimal, for the notes.
fn pct(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

/// The coefficient of variation of a window sawing evenly between d W and W (a uniform
/// distribution on [dW, W]): (1 - d) / ((1 + d) sqrt 3).
fn sawtooth_cov(d: f64) -> f64 {
    (1.0 - d) / ((1.0 + d) * 3f64.sqrt())
}

/// Queueing delay against utilization, one ring per run, one colour per scheme.
fn schemes_plot(m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let fig = Figure::from_text(
        out,
        "delay-vs-utilization",
        "Queueing delay against utilization, each scheme, one ring per RNG seed",
        text,
        &[],
    )?;
    let series = SCHEMES
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            Series::new(
                label(c),
                plots::palette(i),
                Mark::Rings,
                m.all[c]
                    .iter()
                    .map(|x| (x.util * 100.0, x.delay_mean_ms))
                    .collect(),
            )
        })
        .collect();
    fig.draw(Chart {
        x_desc: "bottleneck utilization after the warm-up (%)".into(),
        y_desc: "mean queueing delay (ms)".into(),
        x_range: Some((0.0, 100.0)),
        ..Chart::one_panel(series)
    })
}

#[derive(Clone, Copy)]
enum SweepPlot {
    Util,
    Loss,
    Cov,
}

/// One measure against d, on drops and on bits (and the sawtooth model for the cwnd's
/// variation).
fn sweep_plot(m: &Measured, text: &Text, out: &Path, what: SweepPlot) -> Result<Figure> {
    let (stem, title, y_desc, f): (&str, &str, &str, fn(&Metrics) -> f64) = match what {
        SweepPlot::Util => (
            "decrease-utilization",
            "Utilization against the decrease factor d, on drops and on bits",
            "bottleneck utilization (%)",
            |x| x.util * 100.0,
        ),
        SweepPlot::Loss => (
            "decrease-loss",
            "Packets dropped at the gateway against the decrease factor d",
            "dropped (% of packets)",
            |x| x.loss * 100.0,
        ),
        SweepPlot::Cov => (
            "decrease-cwnd-cov",
            "Window oscillation against the decrease factor d",
            "cwnd coefficient of variation",
            |x| x.cwnd_cov,
        ),
    };
    let fig = Figure::from_text(out, stem, title, text, &[])?;
    // Mean and sample standard deviation over the seeds (f is linear in the metrics, so
    // the mean is f of the mean metrics).
    let line = |base: usize| -> Vec<(f64, f64, f64)> {
        DS.iter()
            .enumerate()
            .map(|(k, &d)| {
                let v: Vec<f64> = m.all[base + k].iter().map(f).collect();
                (d, f(&m.mean[base + k]), crate::stats::sd(&v))
            })
            .collect()
    };
    let measured = vec![
        ("drops (drop-tail)".to_string(), line(C_LOSS)),
        (
            "bits (DEC-bit gateway, RFC 3168 echo)".to_string(),
            line(C_MARK),
        ),
    ];
    let models = match what {
        SweepPlot::Cov => vec![(
            "sawtooth between dW and W".to_string(),
            (0..=45)
                .map(|i| {
                    let d = 0.5 + 0.01 * f64::from(i);
                    (d, sawtooth_cov(d))
                })
                .collect(),
        )],
        _ => Vec::new(),
    };
    fig.draw(plots::means_chart(
        "decrease factor d",
        y_desc,
        &measured,
        &models,
        false,
    ))
}

/// The bottleneck queue of each scheme over the same 10 s after the warm-up, first seed.
fn queues_plot(m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let fig = Figure::from_text(
        out,
        "queues",
        format!(
            "Bottleneck queue of each scheme, 10 s after the warm-up (RNG seed {})",
            m.seed
        ),
        text,
        &[],
    )?;
    let panels = SCHEMES
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let q = m.queues[c]
                .as_ref()
                .ok_or_else(|| anyhow!("no queue of {}", label(c)))?;
            Ok(Panel {
                name: label(c),
                series: vec![Series::new(
                    String::new(),
                    plots::palette(i),
                    Mark::Line,
                    plots::step_path(q.iter().copied()),
                )],
            })
        })
        .collect::<Result<Vec<_>>>()?;
    fig.draw(Chart {
        x_desc: "time after the warm-up (s)".into(),
        y_desc: "packets".into(),
        x_range: Some((0.0, 10.0)),
        panels,
        ..Chart::default()
    })
}

/// One row per configuration, means over the seeds.
fn table(p: Params, m: &Measured) -> Table {
    let rows = (0..configs().len())
        .map(|c| {
            let x = &m.mean[c];
            let lo = m.all[c]
                .iter()
                .map(|y| y.util)
                .fold(f64::INFINITY, f64::min);
            let hi = m.all[c]
                .iter()
                .map(|y| y.util)
                .fold(f64::NEG_INFINITY, f64::max);
            let d = match configs()[c].sender {
                Sender::DecBit => "7/8".to_string(),
                Sender::Aimd { d, .. } => format!("{d}"),
            };
            vec![
                label(c),
                d,
                format!(
                    "{:.1}% ({:.0}-{:.0})",
                    x.util * 100.0,
                    lo * 100.0,
                    hi * 100.0
                ),
                format!("{:.1}", x.delay_mean_ms),
                format!("{:.1}", x.delay_p99_ms),
                format!("{:.2}%", x.loss * 100.0),
                format!("{:.2}%", x.retx * 100.0),
                format!("{:.0}", x.marks_per_s),
                format!("{:.3}", x.jain),
                format!("{:.2}", x.cwnd_cov),
            ]
        })
        .collect();
    let (_, warmup) = timing(p.quick);
    Table {
        caption: format!(
            "Mean over {} RNG seeds after a {warmup:.0} s warm-up (utilization: the range over the seeds in brackets). Queueing delay: queued bytes over the link rate, sampled every 10 ms. Retransmitted and marks: whole run.",
            seeds(p)
        ),
        header: Table::header(&[
            "configuration",
            "d",
            "utilization",
            "queue delay mean (ms)",
            "p99 (ms)",
            "dropped",
            "retransmitted",
            "marks/s",
            "Jain",
            "cwnd CoV",
        ]),
        rows,
    }
}
