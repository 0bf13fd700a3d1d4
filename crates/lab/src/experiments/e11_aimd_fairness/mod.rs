//! Experiment 11: AIMD convergence and fairness; multiplicative increase; d = 0.5 against
//! Jain's 7/8 (seed 003, 2 Nov 1987; seed 000, 16 Nov 1987 and 11 Feb 1988).

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_sim::scenario::Topology;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use anyhow::{anyhow, Result};

pub struct AimdFairness;

const TEXT: &str = include_str!("scenario.toml");
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

/// SplitMix64: a reproducible uniform number in [0, 1) per (seed, index).
fn uniform(seed: u64, i: u64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_mul(0xbf58_476d_1ce4_e5b9))
        .wrapping_add(0x94d0_49bb_1331_11eb);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
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
                    if let TraceKind::Ack { ack } = e.kind {
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

fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 > 0.0 {
        s * s / (x.len() as f64 * s2)
    } else {
        0.0
    }
}

/// What one run gives.
#[derive(Clone, Debug, Default)]
struct Run {
    /// Per-epoch Jain index after the second flow's first data packet, with the epoch start.
    epochs: Vec<(f64, f64)>,
    /// Epochs (1-based) until the index stays >= FAIR, and the time since the second start.
    converged: Option<(usize, f64)>,
    /// Mean epoch length, s.
    epoch_len: f64,
    jain_late: f64,
    goodput: f64,
    loss: f64,
    timeouts: u64,
    /// Coefficient of variation of each flow's cwnd over the second half, averaged.
    cwnd_cov: f64,
    /// Coefficient of variation of the aggregate throughput in 1 s bins, second half.
    tput_cov: f64,
}

fn measure(r: &RunResult, data_bps: f64) -> Run {
    let dur = r.summary.duration_s;
    let acked = Acked::new(r);
    // The second flow's first data packet starts the comparison.
    let t2 = r.traces[1]
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Send { len, .. } if len > 0))
        .map_or(dur, secs);
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
    let epochs: Vec<(f64, f64)> = bounds
        .windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| (w[0], jain(&acked.rates(w[0], w[1]))))
        .collect();
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
    let jain_late = jain(&acked.rates(half, dur));
    let goodput = acked.rates(half, dur).iter().sum::<f64>() * 8.0 / data_bps;
    let (tx, drops) = r
        .summary
        .links
        .iter()
        .find(|l| l.name == PORT)
        .map_or((0, 0), |l| (l.packets, l.queue_drops));
    // cwnd on a 10 ms grid over the second half.
    let mut covs = Vec::new();
    for tr in &r.traces {
        let mut samples = Vec::new();
        let mut cw = 0.0;
        let mut i = 0;
        let mut t = half;
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
        jain_late,
        goodput,
        loss: drops as f64 / (tx + drops).max(1) as f64,
        timeouts: r.summary.flows.iter().map(|f| f.timeouts).sum(),
        cwnd_cov: covs.iter().sum::<f64>() / covs.len().max(1) as f64,
        tput_cov: cov(&bins),
    }
}

fn cov(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64;
    if m > 0.0 {
        var.sqrt() / m
    } else {
        0.0
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl Experiment for AimdFairness {
    fn name(&self) -> &'static str {
        "aimd_fairness"
    }
    fn title(&self) -> &'static str {
        "11. AIMD convergence and fairness"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, _quick: bool, seeds: u64) -> u64 {
        LAWS.len() as u64 * seeds
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("aimd_fairness", TEXT)?;
        let line = match &base.topology {
            Some(Topology::Dumbbell { bottleneck, .. }) => bottleneck.rate_bps,
            _ => return Err(anyhow!("aimd_fairness.toml must use a dumbbell")),
        };
        let data_bps = line * SEG / PKT;
        let duration = if ctx.quick { 150.0 } else { base.duration_s };
        let mut scens = Vec::new();
        for &law in &LAWS {
            for seed in 0..ctx.seeds {
                scens.push(variant(&base, law, seed, duration));
            }
        }
        let n = ctx.seeds as usize;
        let mut runs: Vec<Vec<Run>> = Vec::new();
        let mut plot_files = Vec::new();
        // One law at a time, so that only `seeds` traces are in memory at once.
        for (g, chunk) in scens.chunks(n).enumerate() {
            let rs = ctx.run_all(chunk.to_vec())?;
            runs.push(rs.iter().map(|r| measure(r, data_bps)).collect());
            let file = match LAWS[g] {
                _ if g == 0 => Some("cwnd-aimd.svg"),
                Law::Mimd(_) => Some("cwnd-mimd.svg"),
                _ => None,
            };
            if let Some(file) = file {
                let p = ctx.out.join(file);
                plots::cwnd(&rs[0], &p)?;
                plot_files.push(p);
            }
        }
        let avg = |g: usize, f: fn(&Run) -> f64| mean(&runs[g].iter().map(f).collect::<Vec<_>>());
        let conv = |g: usize| -> (usize, Option<f64>, Option<f64>) {
            let ok: Vec<(usize, f64)> = runs[g].iter().filter_map(|r| r.converged).collect();
            (
                ok.len(),
                (!ok.is_empty()).then(|| mean(&ok.iter().map(|c| c.0 as f64).collect::<Vec<_>>())),
                (!ok.is_empty()).then(|| mean(&ok.iter().map(|c| c.1).collect::<Vec<_>>())),
            )
        };
        let max_epochs = |g: usize| -> Option<usize> {
            runs[g]
                .iter()
                .map(|r| r.converged.map(|c| c.0))
                .collect::<Option<Vec<_>>>()
                .map(|v| v.into_iter().max().unwrap_or(0))
        };
        let fmt_conv = |g: usize| -> String {
            let (k, e, t) = conv(g);
            match (e, t) {
                (Some(e), Some(t)) => format!(
                    "{e:.1} epochs, {t:.0} s ({k} of {} runs converge)",
                    runs[g].len()
                ),
                _ => format!("never (0 of {} runs)", runs[g].len()),
            }
        };
        let rows: Vec<Vec<String>> = (0..LAWS.len())
            .map(|g| {
                vec![
                    LAWS[g].label(),
                    fmt_conv(g),
                    format!("{:.1} s", avg(g, |r| r.epoch_len)),
                    format!("{:.3}", avg(g, |r| r.jain_late)),
                    format!("{:.3}", avg(g, |r| r.goodput)),
                    format!("{:.2}%", 100.0 * avg(g, |r| r.loss)),
                    format!("{:.1}", avg(g, |r| r.timeouts as f64)),
                    format!("{:.3}", avg(g, |r| r.cwnd_cov)),
                    format!("{:.3}", avg(g, |r| r.tput_cov)),
                ]
            })
            .collect();

        let e = self.name();
        let aimd_max = max_epochs(0);
        let (cov_a, cov_m) = (avg(0, |r| r.cwnd_cov), avg(2, |r| r.cwnd_cov));
        let (gp_a, gp_m) = (avg(0, |r| r.goodput), avg(2, |r| r.goodput));
        let claims = vec![
            judged(
                &base,
                e,
                "converge",
                format!(
                    "{}; most {}",
                    fmt_conv(0),
                    aimd_max.map_or("never".into(), |m| m.to_string())
                ),
                Verdict::of(aimd_max.is_some_and(|m| m <= 8)),
                "an epoch runs from one congestion event (fast retransmit or timeout of either flow, events within one RTT merged) to the next; the index is over the bytes each flow had acknowledged in it",
            )?,
            judged(
                &base,
                e,
                "mi_wild",
                format!(
                    "CoV {cov_m:.3} vs {cov_a:.3} ({:.1}x); goodput {gp_m:.3} vs {gp_a:.3}",
                    cov_m / cov_a.max(1e-9)
                ),
                Verdict::of(cov_m >= 1.5 * cov_a && gp_m < gp_a),
                format!(
                    "aggregate throughput CoV in 1 s bins {:.3} vs {:.3}; loss {:.2}% vs {:.2}%; timeouts per run {:.1} vs {:.1}",
                    avg(2, |r| r.tput_cov),
                    avg(0, |r| r.tput_cov),
                    100.0 * avg(2, |r| r.loss),
                    100.0 * avg(0, |r| r.loss),
                    avg(2, |r| r.timeouts as f64),
                    avg(0, |r| r.timeouts as f64)
                ),
            )?,
            judged(
                &base,
                e,
                "mi_fair",
                format!(
                    "Jain {:.3} (AIMD {:.3}); {}",
                    avg(2, |r| r.jain_late),
                    avg(0, |r| r.jain_late),
                    fmt_conv(2)
                ),
                Verdict::Info,
                "",
            )?,
            judged(
                &base,
                e,
                "decrease_78",
                format!("d = 0.5: {}; d = 7/8: {}", fmt_conv(0), fmt_conv(1)),
                Verdict::Info,
                format!(
                    "loss {:.2}% vs {:.2}%, goodput {:.3} vs {:.3}, epoch {:.1} s vs {:.1} s",
                    100.0 * avg(0, |r| r.loss),
                    100.0 * avg(1, |r| r.loss),
                    avg(0, |r| r.goodput),
                    avg(1, |r| r.goodput),
                    avg(0, |r| r.epoch_len),
                    avg(1, |r| r.epoch_len)
                ),
            )?,
        ];

        // Per-epoch Jain index of the first seed of each law.
        let p = ctx.out.join("jain-per-epoch.svg");
        let series: Vec<(String, Vec<(f64, f64)>)> = (0..LAWS.len())
            .map(|g| {
                (
                    LAWS[g].label(),
                    runs[g][0]
                        .epochs
                        .iter()
                        .enumerate()
                        .take(40)
                        .map(|(k, e)| (k as f64 + 1.0, e.1))
                        .collect(),
                )
            })
            .collect();
        plots::lines(
            &p,
            "Jain's index per congestion epoch after the second flow starts (seed 1)",
            "congestion epoch",
            "Jain's fairness index",
            &series,
            false,
        )?;
        plot_files.insert(0, p);

        Ok(Section {
            quote: "During the Boston presentation, it hit me that this was the only scheme that was guaranteed to converge for an arbitrary, first order linear system ... The first thought is to use a symmetric, multiplicative increase ... This is a mistake. The result will oscillate wildly and, on the average, deliver poor throughput.".into(),
            quote_source: "seed 003_01e49002e6786d80.txt, 2 Nov 1987; seed 000_a2655ca5932a6b6b.txt, 11 Feb 1988".into(),
            setup: format!("Dumbbell: two Reno senders (MSS 512) on 10 Mb/s access links, a 1.5 Mb/s line with 100 ms of propagation round trip (pipe 34 packets) and 34 packets of drop-tail buffer; receivers ACK every packet (u = 1 packet per RTT). Flow 1 starts at 0 s, flow 2 at 30-35 s; {duration:.0} s per run, {} seeds per law. Laws: additive increase with d = 0.5 and d = 7/8, multiplicative increase 1.5x per RTT with d = 0.5.", ctx.seeds),
            claims,
            tables: vec![Table {
                caption: "Per law, means over seeds (second half of the run for the index, goodput, CoVs)".into(),
                header: vec!["law".into(), "to Jain >= 0.95 for good".into(), "epoch length".into(), "Jain (late)".into(), "goodput / line".into(), "loss".into(), "timeouts per run".into(), "cwnd CoV".into(), "throughput CoV (1 s)".into()],
                rows,
            }],
            plots: plot_files,
            discussion: "The per-epoch index compares the two flows over one sawtooth: with drop-tail both flows often lose in the same overflow, and then the gap between their windows halves each epoch (Chiu and Jain). Under multiplicative increase both windows grow in proportion, so the gap between them is kept, not closed, except where unsynchronized losses happen to even it out.".into(),
            ..Section::default()
        })
    }
}
