//! Experiment 11: AIMD convergence and fairness; multiplicative increase; d = 0.5 against
//! Jain's 7/8 (seed 003, 2 Nov 1987; seed 000, 16 Nov 1987 and 11 Feb 1988).

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::stats::{jain, mean, uniform};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::scenario::Topology;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct AimdFairness;

const SEG: f64 = 512.0;
const PKT: f64 = 552.0;
/// Per-epoch Jain index that counts as "equal shares".
const FAIR: f64 = 0.95;
/// The bottleneck port (data direction).
const PORT: &str = "gw_left-gw_right";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Law {
    /// Additive increase (u = 1), multiplicative decrease d.
    Aimd(f64),
    /// W <- b W per RTT, d = 0.5.
    Mimd(f64),
}

const LAWS: [Law; 3] = [Law::Aimd(0.5), Law::Aimd(0.875), Law::Mimd(1.5)];

impl Law {
    fn label(self) -> String {
        match self {
            Law::Aimd(d) => format!("additive increase, d = {d}"),
            Law::Mimd(b) => format!("multiplicative increase b = {b}, d = 0.5"),
        }
    }
}

fn variant(base: &Scenario, law: Law, seed: u64, duration: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed + 1;
    s.duration_s = duration;
    s.flow[1].start_s = base.flow[1].start_s + 5.0 * uniform(seed + 1, 1);
    for f in &mut s.flow {
        match law {
            Law::Aimd(d) => f.tcp_overrides.decrease = Some(d),
            Law::Mimd(b) => {
                f.tcp_overrides.decrease = Some(0.5);
                f.tcp_overrides.multiplicative_increase = Some(b);
            }
        }
    }
    s
}

fn secs(e: &TraceEvent) -> f64 {
    e.time.as_nanos() as f64 / 1e9
}

/// Bytes each flow had acknowledged by time t (from the ACK trace), for interval sums.
struct Acked {
    /// Per flow: (time, cumulative bytes acknowledged).
    series: Vec<Vec<(f64, f64)>>,
}

impl Acked {
    fn new(r: &RunResult) -> Self {
        let series = r
            .traces
            .iter()
            .map(|tr| {
                let mut v = Vec::new();
                let mut first = None;
                for e in tr {
                    if let TraceKind::Ack { ack, .. } = e.kind {
                        let f = *first.get_or_insert(ack);
                        v.push((secs(e), f64::from(ackclock_tcp::SeqNum::since(ack, f))));
                    }
                }
                v
            })
            .collect();
        Acked { series }
    }
    fn at(&self, flow: usize, t: f64) -> f64 {
        let v = &self.series[flow];
        match v.partition_point(|p| p.0 <= t) {
            0 => 0.0,
            i => v[i - 1].1,
        }
    }
    /// Throughput of each flow over [a, b), bytes/s.
    fn rates(&self, a: f64, b: f64) -> Vec<f64> {
        (0..self.series.len())
            .map(|f| (self.at(f, b) - self.at(f, a)) / (b - a).max(1e-9))
            .collect()
    }
}

/// What one run gives; the plotted runs (the first seed of [`PLOTTED_LAWS`]) keep their
/// whole result.
pub struct Run {
    /// Per-epoch Jain index after the second flow's first data packet, with the epoch start.
    epochs: Vec<(f64, f64)>,
    /// Epochs (1-based) until the index stays >= FAIR, and the time since the second start.
    converged: Option<(usize, f64)>,
    /// Mean epoch length, s.
    epoch_len: f64,
    jain_late: f64,
    /// Goodput of both flows over the second half, bits/s (over the line's data rate in
    /// [`Measured::goodput`]).
    goodput_bps: f64,
    loss: f64,
    timeouts: u64,
    /// Coefficient of variation of each flow's cwnd over the second half, averaged.
    cwnd_cov: f64,
    /// Coefficient of variation of the aggregate throughput in 1 s bins, second half.
    tput_cov: f64,
    plotted: Option<RunResult>,
}

/// The laws (indices in [`LAWS`]) whose first seed's cwnd is plotted, with the file.
const PLOTTED_LAWS: [(usize, &str); 2] = [(0, "cwnd-aimd"), (2, "cwnd-mimd")];

/// Congestion epochs after `t2`: the start of each epoch and the Jain index of the two
/// flows' throughput over it; and the starts of the epochs that congestion events opened.
fn epochs(r: &RunResult, acked: &Acked, t2: f64, dur: f64) -> (Vec<(f64, f64)>, Vec<f64>) {
    // Congestion events of either flow; those within one smoothed RTT of the previous one
    // belong to the same epoch (a drop-tail overflow hits both flows within an RTT).
    let mut events: Vec<(f64, f64)> = r
        .traces
        .iter()
        .flatten()
        .filter(|e| matches!(e.kind, TraceKind::FastRetransmit | TraceKind::Timeout))
        .map(|e| (secs(e), e.srtt.as_secs_f64().max(0.05)))
        .filter(|(t, _)| *t >= t2)
        .collect();
    events.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut starts: Vec<f64> = Vec::new();
    let mut last = f64::NEG_INFINITY;
    for (t, srtt) in events {
        if t - last > srtt {
            starts.push(t);
        }
        last = t;
    }
    // Epoch k runs from the k-th congestion event to the next (the first from t2); the index
    // is taken over the whole epoch, one sawtooth of each window.
    let mut bounds = vec![t2];
    bounds.extend(starts.iter().copied());
    bounds.push(dur);
    let epochs = bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| (w[0], jain(&acked.rates(w[0], w[1]))))
        .collect();
    (epochs, starts)
}

/// Each flow's cwnd (segments) on a 10 ms grid from `from` to `dur`: its coefficient of
/// variation, averaged over the flows.
fn cwnd_cov(r: &RunResult, from: f64, dur: f64) -> f64 {
    let mut covs = Vec::new();
    for tr in &r.traces {
        let mut samples = Vec::new();
        let mut cw = 0.0;
        let mut i = 0;
        let mut t = from;
        while t < dur {
            while i < tr.len() && secs(&tr[i]) <= t {
                cw = f64::from(tr[i].cwnd) / SEG;
                i += 1;
            }
            samples.push(cw);
            t += 0.01;
        }
        covs.push(cov(&samples));
    }
    mean(&covs)
}

fn reduce_run(r: &RunResult) -> Run {
    let dur = r.summary.duration_s;
    let acked = Acked::new(r);
    // The second flow's first data packet starts the comparison.
    let t2 = r.traces[1]
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Send { len, .. } if len > 0))
        .map_or(dur, secs);
    let (epochs, starts) = epochs(r, &acked, t2, dur);
    // The last (cut) epoch is not judged.
    let judged_epochs = &epochs[..epochs.len().saturating_sub(1)];
    let converged = (0..judged_epochs.len())
        .find(|&k| judged_epochs[k..].iter().all(|e| e.1 >= FAIR))
        .map(|k| (k + 1, judged_epochs[k].0 - t2));
    let epoch_len = if starts.len() > 1 {
        (starts[starts.len() - 1] - starts[0]) / (starts.len() - 1) as f64
    } else {
        0.0
    };
    let half = t2 + (dur - t2) / 2.0;
    let (tx, drops) = r
        .summary
        .links
        .iter()
        .find(|l| l.name == PORT)
        .map_or((0, 0), |l| (l.packets, l.queue_drops));
    let mut bins = Vec::new();
    let mut t = half;
    while t + 1.0 <= dur {
        bins.push(acked.rates(t, t + 1.0).iter().sum::<f64>());
        t += 1.0;
    }
    Run {
        epochs,
        converged,
        epoch_len,
        jain_late: jain(&acked.rates(half, dur)),
        goodput_bps: acked.rates(half, dur).iter().sum::<f64>() * 8.0,
        loss: drops as f64 / (tx + drops).max(1) as f64,
        timeouts: r.summary.flows.iter().map(|f| f.timeouts).sum(),
        cwnd_cov: cwnd_cov(r, half, dur),
        tput_cov: cov(&bins),
        plotted: None,
    }
}

fn cov(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = mean(v);
    // The population variance (n in the denominator), unlike stats::sd.
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    if m > 0.0 {
        var.sqrt() / m
    } else {
        0.0
    }
}

/// The bottleneck's rate of the base scenario, which must be a dumbbell.
fn line_bps(base: &Scenario) -> Result<f64> {
    match &base.topology {
        Some(Topology::Dumbbell { bottleneck, .. }) => Ok(bottleneck.rate_bps),
        _ => Err(anyhow!("aimd_fairness.toml must use a dumbbell")),
    }
}

fn duration(p: Params, base: &Scenario) -> f64 {
    if p.quick {
        150.0
    } else {
        base.duration_s
    }
}

pub struct Measured {
    /// Per law of [`LAWS`], per seed.
    runs: Vec<Vec<Run>>,
    /// The line's rate of data (segments without headers), bits/s.
    data_bps: f64,
    /// Seconds per run.
    duration: f64,
}

impl Measured {
    /// The mean over the seeds of law `g`.
    fn avg(&self, g: usize, f: impl Fn(&Run) -> f64) -> f64 {
        mean(&self.runs[g].iter().map(f).collect::<Vec<_>>())
    }

    /// Goodput over the line's data rate, mean over the seeds of law `g`.
    fn goodput(&self, g: usize) -> f64 {
        self.avg(g, |r| r.goodput_bps / self.data_bps)
    }

    fn loss_pct(&self, g: usize) -> f64 {
        100.0 * self.avg(g, |r| r.loss)
    }

    fn timeouts(&self, g: usize) -> f64 {
        self.avg(g, |r| r.timeouts as f64)
    }

    /// How many runs of law `g` converge, and the mean epochs and seconds they take.
    fn conv(&self, g: usize) -> (usize, Option<f64>, Option<f64>) {
        let ok: Vec<(usize, f64)> = self.runs[g].iter().filter_map(|r| r.converged).collect();
        (
            ok.len(),
            (!ok.is_empty()).then(|| mean(&ok.iter().map(|c| c.0 as f64).collect::<Vec<_>>())),
            (!ok.is_empty()).then(|| mean(&ok.iter().map(|c| c.1).collect::<Vec<_>>())),
        )
    }

    /// The most epochs any run of law `g` takes to converge; `None` if one never does.
    fn max_epochs(&self, g: usize) -> Option<usize> {
        self.runs[g]
            .iter()
            .map(|r| r.converged.map(|c| c.0))
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().max().unwrap_or(0))
    }

    fn fmt_conv(&self, g: usize) -> String {
        let (k, e, t) = self.conv(g);
        match (e, t) {
            (Some(e), Some(t)) => format!(
                "{e:.1} epochs, {t:.0} s ({k} of {} runs converge)",
                self.runs[g].len()
            ),
            _ => format!("never (0 of {} runs)", self.runs[g].len()),
        }
    }
}

impl AimdFairness {
    /// The base scenario (the suite hands it to `plan` only; `measure` needs its line rate).
    fn base(&self) -> Result<Scenario> {
        Scenario::from_str_named(
            self.files().scenario,
            Path::new("e11_aimd_fairness/scenario.toml"),
        )
        .map_err(|e| anyhow!("{e}"))
    }
}

impl Experiment for AimdFairness {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "aimd_fairness"
    }

    fn files(&self) -> Files {
        files!("e11_aimd_fairness")
    }

    /// `seeds` runs per law, law after law.
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        line_bps(base)?;
        let duration = duration(p, base);
        let mut runs = Vec::new();
        for &law in &LAWS {
            for seed in 0..p.seeds {
                runs.push(variant(base, law, seed, duration));
            }
        }
        Ok(runs)
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let mut run = reduce_run(&r);
        let (law, seed) = (index / p.seeds as usize, index % p.seeds as usize);
        if seed == 0 && PLOTTED_LAWS.iter().any(|&(g, _)| g == law) {
            run.plotted = Some(r);
        }
        Ok(run)
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let base = self.base()?;
        let mut per_law: Vec<Vec<Run>> = Vec::new();
        let mut runs = runs.into_iter();
        for _ in LAWS {
            per_law.push(runs.by_ref().take(p.seeds as usize).collect());
        }
        Ok(Measured {
            runs: per_law,
            data_bps: line_bps(&base)? * SEG / PKT,
            duration: duration(p, &base),
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let aimd_max = m.max_epochs(0);
        j.claim(
            "converge",
            Ours {
                text: format!(
                    "{}; most {}",
                    m.fmt_conv(0),
                    aimd_max.map_or("never".into(), |m| m.to_string())
                ),
                value: aimd_max.map(|m| m as f64),
            },
            Verdict::of(aimd_max.is_some_and(|m| m <= 8)),
            text.get("note converge")?,
        )?;
        let (cov_a, cov_m) = (m.avg(0, |r| r.cwnd_cov), m.avg(2, |r| r.cwnd_cov));
        let (gp_a, gp_m) = (m.goodput(0), m.goodput(2));
        j.claim(
            "mi_wild",
            format!(
                "CoV {cov_m:.3} vs {cov_a:.3} ({:.1}x); goodput {gp_m:.3} vs {gp_a:.3}",
                cov_m / cov_a.max(1e-9)
            ),
            Verdict::of(cov_m >= 1.5 * cov_a && gp_m < gp_a),
            text.fill(
                "note mi_wild",
                &[
                    ("tput_mi", format!("{:.3}", m.avg(2, |r| r.tput_cov))),
                    ("tput_ai", format!("{:.3}", m.avg(0, |r| r.tput_cov))),
                    ("loss_mi", format!("{:.2}", m.loss_pct(2))),
                    ("loss_ai", format!("{:.2}", m.loss_pct(0))),
                    ("timeouts_mi", format!("{:.1}", m.timeouts(2))),
                    ("timeouts_ai", format!("{:.1}", m.timeouts(0))),
                ],
            )?,
        )?;
        j.claim(
            "mi_fair",
            format!(
                "Jain {:.3} (AIMD {:.3}); {}",
                m.avg(2, |r| r.jain_late),
                m.avg(0, |r| r.jain_late),
                m.fmt_conv(2)
            ),
            Verdict::Info,
            "",
        )?;
        j.claim(
            "decrease_78",
            format!("d = 0.5: {}; d = 7/8: {}", m.fmt_conv(0), m.fmt_conv(1)),
            Verdict::Info,
            text.fill(
                "note decrease_78",
                &[
                    ("loss_half", format!("{:.2}", m.loss_pct(0))),
                    ("loss_78", format!("{:.2}", m.loss_pct(1))),
                    ("goodput_half", format!("{:.3}", m.goodput(0))),
                    ("goodput_78", format!("{:.3}", m.goodput(1))),
                    ("epoch_half", format!("{:.1}", m.avg(0, |r| r.epoch_len))),
                    ("epoch_78", format!("{:.1}", m.avg(1, |r| r.epoch_len))),
                ],
            )?,
        )
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let mut plots = vec![plot_jain(m, text, out)?];
        for (g, stem) in PLOTTED_LAWS {
            let r = m.runs[g][0]
                .plotted
                .as_ref()
                .ok_or_else(|| anyhow!("the plotted run of law {g} is missing"))?;
            let fig = Figure::from_text(
                out,
                stem,
                format!("Two flows' windows, {} (RNG seed 1)", LAWS[g].label()),
                text,
                &[],
            )?;
            plots::cwnd_titled(r, &fig.file, &fig.title)?;
            plots.push(fig);
        }
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", format!("{:.0}", m.duration)),
                    ("seeds", p.seeds.to_string()),
                ],
            )?,
            tables: vec![law_table(m)],
            plots,
            discussion: text.get("discussion")?,
        })
    }
}

/// Per law, means over the seeds.
fn law_table(m: &Measured) -> Table {
    let rows = (0..LAWS.len())
        .map(|g| {
            vec![
                LAWS[g].label(),
                m.fmt_conv(g),
                format!("{:.1} s", m.avg(g, |r| r.epoch_len)),
                format!("{:.3}", m.avg(g, |r| r.jain_late)),
                format!("{:.3}", m.goodput(g)),
                format!("{:.2}%", m.loss_pct(g)),
                format!("{:.1}", m.timeouts(g)),
                format!("{:.3}", m.avg(g, |r| r.cwnd_cov)),
                format!("{:.3}", m.avg(g, |r| r.tput_cov)),
            ]
        })
        .collect();
    Table {
        caption:
            "Per law, means over RNG seeds (second half of the run for the index, goodput, CoVs)"
                .into(),
        header: Table::header(&[
            "law",
            "to Jain >= 0.95 for good",
            "epoch length",
            "Jain (late)",
            "goodput / line",
            "loss",
            "timeouts per run",
            "cwnd CoV",
            "throughput CoV (1 s)",
        ]),
        rows,
    }
}

/// Per-epoch Jain index of the first seed of each law.
fn plot_jain(m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let series: Vec<(String, Vec<(f64, f64)>)> = (0..LAWS.len())
        .map(|g| {
            (
                LAWS[g].label(),
                m.runs[g][0]
                    .epochs
                    .iter()
                    .enumerate()
                    .take(40)
                    .map(|(k, e)| (k as f64 + 1.0, e.1))
                    .collect(),
            )
        })
        .collect();
    let fig = Figure::from_text(
        out,
        "jain-per-epoch",
        "Jain's index per congestion epoch after the second flow starts (RNG seed 1)",
        text,
        &[],
    )?;
    plots::lines(
        &fig.file,
        &fig.title,
        "congestion epoch",
        "Jain's fairness index",
        &series,
        false,
    )?;
    Ok(fig)
}
