//! Experiment 5: Satnet at 1% random loss, vanilla TCP against the new TCP (seed 000,
//! 11 Feb 1988): the message puts a vanilla TCP at 56% of the 40 kb/s channel and the new
//! TCP (slow start and congestion avoidance) at 49%. The 56% is the fixed-window model of
//! footnote 6 of Jacobson and Karels, "Congestion Avoidance and Control" (1988); the new TCP
//! is set beside the steady-state models of a halving sender (Mathis et al. 1997, Padhye et
//! al. 1998). Vanilla 4.3BSD, Tahoe and Reno at 0.3%, 1% and 3% loss over several seeds, and
//! vanilla once more with its timer pinned to one round trip.

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::stats::{mean, sd};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::ImpairmentsConfig;
use ackclock_sim::{RunResult, Scenario};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct Satnet;

const TCPS: [&str; 3] = ["vanilla_4_3bsd", "tahoe", "reno"];
/// Loss rates of the sweep; the claim is at 1% (index 1).
const LOSS: [f64; 3] = [0.003, 0.01, 0.03];
const AT_1PCT: usize = 1;
/// Packets that fill the pipe, and its round trip (40 x 256 bytes at 40 kb/s).
const W: f64 = 40.0;
const RTT_S: f64 = 2.048;
/// Channel rate, packet and segment sizes.
const RATE: f64 = 40e3;
const PKT: f64 = 256.0;
const MSS: f64 = 216.0;
/// ~200 round trips per quick run: at 1% loss still a few dozen loss episodes.
const QUICK_S: f64 = 400.0;

/// The channel's data rate: 216 payload bytes in every 256-byte packet.
fn data_rate() -> f64 {
    RATE * MSS / PKT
}

/// JK88 footnote 6: a fixed window w whose every loss costs 2 RTT: (1 + 2pw)^-1.
fn fixed_window_model(p: f64) -> f64 {
    1.0 / (1.0 + 2.0 * p * W)
}

/// Mathis et al. 1997 (C = 1.22, an ACK per packet) as a share of the pipe.
fn mathis(p: f64) -> f64 {
    (1.22 / p.sqrt() / W).min(1.0)
}

/// Padhye et al. 1998, full model, b = 1 packet per ACK, window cap W, in packets per
/// second; `t0` is the first timeout.
fn pftk(p: f64, rtt: f64, t0: f64) -> f64 {
    let b = 1.0;
    let d = rtt * (2.0 * b * p / 3.0).sqrt()
        + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    (1.0 / d).min(W / rtt)
}

/// PFTK as a share of the channel.
fn pftk_share(p: f64, t0: f64) -> f64 {
    pftk(p, RTT_S, t0) * PKT * 8.0 / RATE
}

/// The length of every run: the scenario's (~500 round trips), shorter in quick mode.
fn duration_s(p: Params, base: &Scenario) -> f64 {
    if p.quick {
        QUICK_S
    } else {
        base.duration_s
    }
}

fn variant(base: &Scenario, tcp: &str, p: f64, seed: u64, dur: f64, trace: bool) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = dur;
    s.output.trace = trace;
    s.flow[0].tcp = tcp.to_string();
    s.link[1].impair_ab = Some(ImpairmentsConfig {
        loss_prob: Some(p),
        ..Default::default()
    });
    s
}

/// The plan's index of seed `k` of TCP `t` at loss rate `j`; the pinned-timer runs follow
/// the whole grid.
fn index(t: usize, j: usize, k: usize, seeds: usize) -> usize {
    (t * LOSS.len() + j) * seeds + k
}

/// The two plotted runs: the first seed of vanilla and of Tahoe at 1% loss.
fn plotted(i: usize, seeds: usize) -> bool {
    i == index(0, AT_1PCT, 0, seeds) || i == index(1, AT_1PCT, 0, seeds)
}

/// What one run says about the mechanism.
#[derive(Clone, Copy)]
struct Stats {
    eff: f64,
    timeouts: f64,
    losses: f64,
    /// Seconds the channel carried no new data, per timeout.
    dead_per_timeout: f64,
}

fn stats(r: &RunResult) -> Stats {
    let f = &r.summary.flows[0];
    let eff = f.goodput_bps / data_rate();
    let losses = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "gw-rcv")
        .map_or(0, |l| l.lost_on_wire) as f64;
    // Time the channel spent on data that got through, once: the rest is dead time
    // (waiting for the timer, or resending what the receiver already holds).
    let useful = f.bytes_delivered as f64 / MSS * PKT * 8.0 / RATE;
    let active = r.summary.duration_s - f.start_s;
    let dead = (active - useful).max(0.0);
    Stats {
        eff,
        timeouts: f.timeouts as f64,
        losses,
        dead_per_timeout: if f.timeouts > 0 {
            dead / f.timeouts as f64
        } else {
            0.0
        },
    }
}

fn effs(runs: &[Stats]) -> Vec<f64> {
    runs.iter().map(|x| x.eff).collect()
}

/// Losses and timeouts summed over seeds.
fn totals(runs: &[Stats]) -> (f64, f64) {
    (
        runs.iter().map(|x| x.losses).sum(),
        runs.iter().map(|x| x.timeouts).sum(),
    )
}

/// Mean dead time per timeout, in round trips.
fn dead_rtt(runs: &[Stats]) -> f64 {
    mean(&runs.iter().map(|x| x.dead_per_timeout).collect::<Vec<_>>()) / RTT_S
}

/// One run: its numbers, and the whole result if it is plotted.
pub struct Run {
    stats: Stats,
    plotted: Option<RunResult>,
}

pub struct Measured {
    duration_s: f64,
    /// Per TCP of [`TCPS`], per loss rate of [`LOSS`], one per seed.
    grid: Vec<Vec<Vec<Stats>>>,
    /// Vanilla at 1% with its timer pinned to one round trip, one per seed.
    pinned: Vec<Stats>,
    tseq_vanilla: RunResult,
    tseq_tahoe: RunResult,
}

impl Measured {
    fn at(&self, t: usize, j: usize) -> &[Stats] {
        &self.grid[t][j]
    }

    fn mean_eff(&self, t: usize, j: usize) -> f64 {
        mean(&effs(self.at(t, j)))
    }

    /// Vanilla at 1%: losses repaired per timeout.
    fn per_timeout(&self) -> f64 {
        let (losses, timeouts) = totals(self.at(0, AT_1PCT));
        losses / timeouts.max(1.0)
    }
}

impl Experiment for Satnet {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "satnet"
    }

    fn files(&self) -> Files {
        files!("e05_satnet")
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let dur = duration_s(p, base);
        let n = p.seeds as usize;
        let mut scen = Vec::new();
        for (t, tcp) in TCPS.iter().enumerate() {
            for (j, &loss) in LOSS.iter().enumerate() {
                for k in 0..n {
                    // Traces only where a plot needs them.
                    let trace = plotted(index(t, j, k, n), n);
                    scen.push(variant(base, tcp, loss, 1 + k as u64, dur, trace));
                }
            }
        }
        // Vanilla with the timer pinned to one round trip, which would make it fire 2 RTT
        // after a lost packet was sent, as the footnote-6 model has it.
        for k in 0..p.seeds {
            let mut s = variant(base, "vanilla_4_3bsd", 0.01, 1 + k, dur, false);
            s.flow[0].tcp_overrides.rto_min_ms = Some(RTT_S * 1e3);
            s.flow[0].tcp_overrides.rto_max_ms = Some(RTT_S * 1e3);
            scen.push(s);
        }
        Ok(scen)
    }

    fn reduce(&self, p: Params, i: usize, r: RunResult) -> Result<Run> {
        Ok(Run {
            stats: stats(&r),
            plotted: plotted(i, p.seeds as usize).then_some(r),
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let n = p.seeds as usize;
        let base =
            Scenario::from_str_named(self.files().scenario, Path::new("e05_satnet/scenario.toml"))
                .map_err(|e| anyhow!("{e}"))?;
        let (mut tseq_vanilla, mut tseq_tahoe) = (None, None);
        let mut stats = Vec::with_capacity(runs.len());
        for (i, r) in runs.into_iter().enumerate() {
            if i == index(0, AT_1PCT, 0, n) {
                tseq_vanilla = r.plotted;
            } else if i == index(1, AT_1PCT, 0, n) {
                tseq_tahoe = r.plotted;
            }
            stats.push(r.stats);
        }
        let grid = (0..TCPS.len())
            .map(|t| {
                (0..LOSS.len())
                    .map(|j| stats[index(t, j, 0, n)..index(t, j, n, n)].to_vec())
                    .collect()
            })
            .collect();
        Ok(Measured {
            duration_s: duration_s(p, &base),
            grid,
            pinned: stats[index(TCPS.len(), 0, 0, n)..].to_vec(),
            tseq_vanilla: tseq_vanilla.ok_or_else(|| anyhow!("the vanilla 1% run is missing"))?,
            tseq_tahoe: tseq_tahoe.ok_or_else(|| anyhow!("the Tahoe 1% run is missing"))?,
        })
    }

    fn judge(&self, p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let n = p.seeds;
        let van = effs(m.at(0, AT_1PCT));
        let (mv, mt, mr) = (mean(&van), m.mean_eff(1, AT_1PCT), m.mean_eff(2, AT_1PCT));
        let van_ok = (0.53..=0.59).contains(&mv);
        let mut note = text.fill(
            "note vanilla_56",
            &[
                ("dead_rtt", format!("{:.1}", dead_rtt(m.at(0, AT_1PCT)))),
                ("per_timeout", format!("{:.2}", m.per_timeout())),
                ("model", format!("{:.3}", fixed_window_model(0.01))),
            ],
        )?;
        if !van_ok {
            note.push(' ');
            note.push_str(&text.get("note vanilla_56 outside")?);
        }
        j.claim(
            "vanilla_56",
            Ours::num(mv, format!("{mv:.3} (sd {:.3}, {n} RNG seeds)", sd(&van))),
            Verdict::pass_or_disagree(van_ok),
            note,
        )?;
        let new_ok = (0.44..=0.54).contains(&mt);
        j.claim(
            "new_49",
            Ours::num(mt, format!("{mt:.3} (Tahoe; Reno {mr:.3})")),
            Verdict::pass_or_disagree(new_ok),
            if new_ok {
                String::new()
            } else {
                text.fill(
                    "note new_49",
                    &[
                        ("mathis", format!("{:.2}", mathis(0.01))),
                        ("pftk_t0_8s", format!("{:.2}", pftk_share(0.01, 8.0))),
                        ("pftk_t0_1s", format!("{:.2}", pftk_share(0.01, 1.0))),
                    ],
                )?
            },
        )?;
        j.claim(
            "aimd_models",
            Ours::num(mr, format!("Reno {mr:.3}, Tahoe {mt:.3}")),
            Verdict::of((0.25..=0.35).contains(&mr)),
            text.get("note aimd_models")?,
        )?;
        Ok(())
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let plots = plot(m, text, out)?;
        let (_, plain_timeouts) = totals(m.at(0, AT_1PCT));
        let (_, pinned_timeouts) = totals(&m.pinned);
        let n = p.seeds as f64;
        let discussion = text.fill(
            "discussion",
            &[
                ("dead_rtt", format!("{:.1}", dead_rtt(m.at(0, AT_1PCT)))),
                ("per_timeout", format!("{:.2}", m.per_timeout())),
                ("pinned_timeouts", format!("{:.0}", pinned_timeouts / n)),
                ("plain_timeouts", format!("{:.0}", plain_timeouts / n)),
                ("pinned_eff", format!("{:.2}", mean(&effs(&m.pinned)))),
                ("tahoe", format!("{:.2}", m.mean_eff(1, AT_1PCT))),
                ("reno", format!("{:.2}", m.mean_eff(2, AT_1PCT))),
            ],
        )?;
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", m.duration_s.to_string()),
                    ("seeds", p.seeds.to_string()),
                    ("data_rate", format!("{:.2}", data_rate() / 1e3)),
                ],
            )?,
            tables: vec![efficiency_table(m), mechanism_table(p, m)],
            plots,
            discussion,
        })
    }
}

/// Every TCP at every loss rate, with the models.
fn efficiency_table(m: &Measured) -> Table {
    let rows = LOSS
        .iter()
        .enumerate()
        .map(|(j, &p)| {
            let mut row = vec![format!("{:.1}%", p * 100.0)];
            for t in 0..TCPS.len() {
                let e = effs(m.at(t, j));
                row.push(format!("{:.3} ± {:.3}", mean(&e), sd(&e)));
            }
            row.push(format!("{:.3}", fixed_window_model(p)));
            row.push(format!("{:.3}", mathis(p)));
            row.push(format!("{:.3}", pftk_share(p, 2.0 * RTT_S)));
            row
        })
        .collect();
    Table {
        caption: "Goodput / channel data rate (mean ± sd over RNG seeds) and the models".into(),
        header: vec![
            "loss".into(),
            "vanilla 4.3BSD".into(),
            "Tahoe".into(),
            "Reno".into(),
            "(1+2pw)^-1".into(),
            "Mathis".into(),
            "PFTK, T0 = 2 RTT".into(),
        ],
        rows,
    }
}

/// The vanilla mechanism: per timeout, how many losses it repaired and how long the channel
/// carried nothing new.
fn mechanism_table(p: Params, m: &Measured) -> Table {
    let n = p.seeds as f64;
    let row = |label: String, r: &[Stats]| {
        let (losses, timeouts) = totals(r);
        vec![
            label,
            format!("{:.1}", losses / n),
            format!("{:.1}", timeouts / n),
            format!("{:.2}", losses / timeouts.max(1.0)),
            format!("{:.2}", dead_rtt(r)),
            format!("{:.3}", mean(&effs(r))),
        ]
    };
    let mut rows: Vec<Vec<String>> = LOSS
        .iter()
        .enumerate()
        .map(|(j, &loss)| row(format!("{:.1}%", loss * 100.0), m.at(0, j)))
        .collect();
    rows.push(row("1%, RTO pinned to 1 RTT".into(), &m.pinned));
    Table {
        caption: "How vanilla 4.3BSD pays for its losses (per run)".into(),
        header: vec![
            "loss".into(),
            "data packets lost".into(),
            "timeouts".into(),
            "losses per timeout".into(),
            "dead time per timeout (RTT)".into(),
            "efficiency".into(),
        ],
        rows,
    }
}

/// Efficiency against loss with the models; the two time-sequence diagrams.
fn plot(m: &Measured, text: &Text, out: &Path) -> Result<Vec<Figure>> {
    let mut series = Vec::new();
    for (t, name) in ["vanilla 4.3BSD", "Tahoe", "Reno"].iter().enumerate() {
        let pts = LOSS
            .iter()
            .enumerate()
            .map(|(j, &p)| {
                let e = effs(m.at(t, j));
                (p * 100.0, mean(&e), sd(&e))
            })
            .collect::<Vec<_>>();
        series.push((name.to_string(), pts));
    }
    let grid: Vec<f64> = (0..=20)
        .map(|i| 0.3 * (10f64).powf(f64::from(i) / 20.0))
        .collect();
    let models = vec![
        (
            "(1+2pw)^-1, w = 40".into(),
            grid.iter()
                .map(|&x| (x, fixed_window_model(x / 100.0)))
                .collect(),
        ),
        (
            "Mathis 1.22/sqrt(p)".into(),
            grid.iter().map(|&x| (x, mathis(x / 100.0))).collect(),
        ),
        (
            "PFTK (T0 = 2 RTT)".into(),
            grid.iter()
                .map(|&x| (x, pftk_share(x / 100.0, 2.0 * RTT_S)))
                .collect(),
        ),
    ];
    let f1 = Figure::from_text(
        out,
        "efficiency-vs-loss",
        "Satnet (40 kb/s, 2.048 s RTT): share of the channel against random loss",
        text,
        &[],
    )?;
    let f1 = f1.draw(plots::means_chart(
        "packet loss (%, log scale)",
        "goodput / channel data rate",
        &series,
        &models,
        true,
    ))?;
    let f2 = Figure::from_text(
        out,
        "tseq-vanilla",
        "Vanilla 4.3BSD on Satnet at 1% loss: timeouts and go-back-N",
        text,
        &[],
    )?;
    let f3 = Figure::from_text(
        out,
        "tseq-tahoe",
        "Tahoe on Satnet at 1% loss: the window held near 12 packets",
        text,
        &[],
    )?;
    // The second caption says "same axes".
    let mut charts = plots::time_sequences_same_axes(
        &[
            (&m.tseq_vanilla, 0, &f2.title),
            (&m.tseq_tahoe, 0, &f3.title),
        ],
        Some(120.0),
    )?
    .into_iter();
    let (Some(c2), Some(c3)) = (charts.next(), charts.next()) else {
        anyhow::bail!("two charts");
    };
    Ok(vec![f1, f2.draw(c2)?, f3.draw(c3)?])
}
