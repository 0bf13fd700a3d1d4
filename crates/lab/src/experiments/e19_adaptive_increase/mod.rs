//! Experiment 19: the increment of additive increase (seed 000, "Re: Your congestion
//! scheme", 16 Nov 1987). One NewReno flow over an Arpanet-sized pipe through a drop-tail
//! gateway (the cliff) and a RED gateway that drops past the knee: the increment swept from 1
//! to 1/16 segment per round trip, and the second-order loop the message proposes (the
//! engine's `adaptive_increase`) asked for a loss rate.

use crate::claims::{Judge, Ours};
use crate::plots::{palette, Chart, Mark, Series};
use crate::suite::{files, Experiment, Figure, Files, Params, PerSeed, Rendered, Table, Verdict};
use crate::text::Text;
use crate::{gateways, stats};
use ackclock_gateway::QdiscConfig;
use ackclock_sim::{RunResult, Scenario};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct AdaptiveIncrease;

/// The increments of the sweep, in segments per round trip (the receiver ACKs every segment).
const INCREMENTS: [f64; 5] = [1.0, 0.5, 0.25, 0.125, 0.0625];

/// The adaptive loop's runs: the gateway and the target, in congestion signals per segment.
const LOOP: [(Gateway, f64); 3] = [
    (Gateway::Knee, 0.01),
    (Gateway::Knee, 0.003),
    (Gateway::Cliff, 0.003),
];

/// The segment size of the scenario (the mean window is counted in these).
const MSS: f64 = 512.0;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Gateway {
    /// Drop-tail with 8 packets of buffer: windows reach the pipe plus the buffer, 12-13
    /// packets, before a drop (the message's "just to the left of the cliff").
    Cliff,
    /// RED dropping once the average queue passes one packet (thresholds 1 and 3 packets,
    /// max_p 0.1, w_q 0.02 for a line of 14 packets a second): the message's gateways "fixed
    /// so they start dropping packets when the queue gets pushed past the knee".
    Knee,
}

impl Gateway {
    fn label(self) -> &'static str {
        match self {
            Gateway::Cliff => "drop-tail (cliff)",
            Gateway::Knee => "RED (knee)",
        }
    }

    fn queue(self) -> Result<QdiscConfig> {
        let toml = match self {
            Gateway::Cliff => "kind = \"drop_tail\"\nlimit_pkts = 8",
            Gateway::Knee => {
                "kind = \"red\"\nlimit_pkts = 40\nmin_th_pkts = 1.0\nmax_th_pkts = 3.0\nmax_p = 0.1\nw_q = 0.02"
            }
        };
        toml::from_str(toml).map_err(|e| anyhow!("adaptive_increase: {e}"))
    }
}

/// What one configuration sets.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Control {
    Fixed(f64),
    /// The adaptive loop with this target loss rate (signals per segment).
    Adaptive(f64),
}

/// Configuration `c`: the sweep at each gateway, then the loop's runs.
fn config(c: usize) -> (Gateway, Control) {
    let n = INCREMENTS.len();
    if c < 2 * n {
        let g = if c < n { Gateway::Cliff } else { Gateway::Knee };
        (g, Control::Fixed(INCREMENTS[c % n]))
    } else {
        let (g, target) = LOOP[c - 2 * n];
        (g, Control::Adaptive(target))
    }
}

/// RNG seeds per configuration: at most five (the drop-tail runs of one flow are the same
/// for every seed; RED's drops are not, and five seeds of 4,000 s each are plenty).
fn grid(p: Params) -> PerSeed {
    PerSeed {
        configs: 2 * INCREMENTS.len() + LOOP.len(),
        seeds: if p.quick { 1 } else { p.seeds.clamp(1, 5) },
    }
}

/// Simulated seconds per run: the smallest increment has to go through a few dozen sawteeth.
fn duration(quick: bool) -> f64 {
    if quick {
        1500.0
    } else {
        4000.0
    }
}

fn variant(base: &Scenario, c: usize, seed: u64, quick: bool) -> Result<Scenario> {
    let (g, control) = config(c);
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = duration(quick);
    gateways::set_bottleneck(&mut s, g.queue()?, "adaptive_increase")?;
    let f = s
        .flow
        .first_mut()
        .ok_or_else(|| anyhow!("adaptive_increase: the scenario has no flow"))?;
    match control {
        Control::Fixed(u) => f.tcp_overrides.increase = Some(u),
        Control::Adaptive(target) => f.tcp_overrides.adaptive_increase = Some(target),
    }
    Ok(s)
}

/// One run's figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Run {
    /// Fast retransmits and timeouts.
    signals: f64,
    timeouts: f64,
    segments: f64,
    /// Packets dropped at the bottleneck over packets offered to it.
    drop_rate: f64,
    /// Goodput times the mean RTT, in segments (Little's law: the mean window).
    mean_window: f64,
    goodput_bps: f64,
}

/// A configuration's figures, averaged over its seeds.
pub struct Measured {
    /// Per configuration, in [`config`]'s order: the means over the seeds.
    per_config: Vec<Run>,
    /// The same, the sample standard deviations over the seeds.
    sd_per_config: Vec<Run>,
}

impl Measured {
    fn index(&self, g: Gateway, control: Control) -> usize {
        (0..self.per_config.len())
            .find(|&c| config(c) == (g, control))
            .expect("every configuration is planned")
    }

    fn at(&self, g: Gateway, control: Control) -> &Run {
        &self.per_config[self.index(g, control)]
    }

    fn sweep(&self, g: Gateway) -> Vec<(f64, &Run)> {
        INCREMENTS
            .iter()
            .map(|&u| (u, self.at(g, Control::Fixed(u))))
            .collect()
    }

    /// The sweep at gateway `g` as (increment, mean, standard deviation) of `f`.
    fn sweep_spread(&self, g: Gateway, f: fn(&Run) -> f64) -> Vec<(f64, f64, f64)> {
        INCREMENTS
            .iter()
            .map(|&u| {
                let c = self.index(g, Control::Fixed(u));
                (u, f(&self.per_config[c]), f(&self.sd_per_config[c]))
            })
            .collect()
    }
}

impl Run {
    fn signal_rate(&self) -> f64 {
        self.signals / self.segments.max(1.0)
    }
}

/// The increment at which the knee's drop rate equals `rate`, interpolated between the two
/// increments of the sweep that bracket it (log-log: the drop rate is near a power of the
/// increment); None when no two do.
fn increment_for(sweep: &[(f64, &Run)], rate: f64) -> Option<f64> {
    sweep.windows(2).find_map(|w| {
        let ((u0, r0), (u1, r1)) = ((w[0].0, w[0].1.drop_rate), (w[1].0, w[1].1.drop_rate));
        if r0 >= rate && rate >= r1 && r0 > 0.0 && r1 > 0.0 && r0 != r1 {
            let t = (rate.ln() - r0.ln()) / (r1.ln() - r0.ln());
            Some((u0.ln() + t * (u1.ln() - u0.ln())).exp())
        } else {
            None
        }
    })
}

impl Experiment for AdaptiveIncrease {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "adaptive_increase"
    }

    fn files(&self) -> Files {
        files!("e19_adaptive_increase")
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        grid(p).plan(base, |c, seed| variant(base, c, seed, p.quick))
    }

    fn reduce(&self, _p: Params, _i: usize, r: RunResult) -> Result<Run> {
        let f = r
            .summary
            .flows
            .first()
            .ok_or_else(|| anyhow!("adaptive_increase: no flow in the run"))?;
        let l = stats::link(&r, "gw_left-gw_right")?;
        let offered = (l.packets + l.queue_drops) as f64;
        let rtt_s = f.rtt_mean_ms.unwrap_or(0.0) / 1e3;
        Ok(Run {
            signals: (f.fast_retransmits + f.timeouts) as f64,
            timeouts: f.timeouts as f64,
            segments: f.segments_sent as f64,
            drop_rate: if offered > 0.0 {
                l.queue_drops as f64 / offered
            } else {
                0.0
            },
            mean_window: f.goodput_bps / 8.0 / MSS * rtt_s,
            goodput_bps: f.goodput_bps,
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let groups = grid(p).groups(runs);
        let reduce = |g: &[Run], stat: fn(&[f64]) -> f64| {
            let m = |f: fn(&Run) -> f64| stat(&g.iter().map(f).collect::<Vec<_>>());
            Run {
                signals: m(|r| r.signals),
                timeouts: m(|r| r.timeouts),
                segments: m(|r| r.segments),
                drop_rate: m(|r| r.drop_rate),
                mean_window: m(|r| r.mean_window),
                goodput_bps: m(|r| r.goodput_bps),
            }
        };
        Ok(Measured {
            per_config: groups.iter().map(|g| reduce(g, stats::mean)).collect(),
            sd_per_config: groups.iter().map(|g| reduce(g, stats::sd)).collect(),
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let cliff = m.sweep(Gateway::Cliff);
        let base = cliff[0].1;
        let pct = |v: f64| format!("{:.2}%", 100.0 * v);
        j.claim(
            "one_percent",
            Ours::num(
                100.0 * base.drop_rate,
                format!(
                    "{} (mean window {:.1} packets)",
                    pct(base.drop_rate),
                    base.mean_window
                ),
            ),
            Verdict::pass_or_disagree((0.003..=0.015).contains(&base.drop_rate)),
            "",
        )?;
        let windows: Vec<f64> = cliff.iter().map(|(_, r)| r.mean_window).collect();
        let (lo, hi) = windows
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), &w| (lo.min(w), hi.max(w)));
        let spread = hi / lo.max(f64::MIN_POSITIVE);
        let list = |f: &dyn Fn(&Run) -> String| {
            cliff
                .iter()
                .map(|(_, r)| f(r))
                .collect::<Vec<_>>()
                .join(", ")
        };
        j.claim(
            "frequency_not_mean",
            Ours::num(
                spread,
                format!(
                    "{spread:.3} ({} packets)",
                    list(&|r| format!("{:.2}", r.mean_window))
                ),
            ),
            Verdict::pass_or_disagree(spread <= 1.1),
            text.fill(
                "note frequency_not_mean",
                &[("signals", list(&|r| format!("{:.0}", r.signals)))],
            )?,
        )?;
        let last = cliff[cliff.len() - 1].1;
        let ratio = base.signals / last.signals.max(1.0);
        j.claim(
            "frequency_scales",
            Ours::num(ratio, format!("{ratio:.1}")),
            Verdict::pass_or_disagree((8.0..=32.0).contains(&ratio)),
            "",
        )?;
        let knee = m.sweep(Gateway::Knee);
        let (factor, ours) = match increment_for(&knee, base.drop_rate) {
            Some(u) => (1.0 / u, format!("{:.1} (increment {u:.3})", 1.0 / u)),
            None if knee[0].1.drop_rate <= base.drop_rate => (1.0, "1 (none needed)".into()),
            None => (
                1.0 / INCREMENTS[INCREMENTS.len() - 1],
                format!("more than {:.0}", 1.0 / INCREMENTS[INCREMENTS.len() - 1]),
            ),
        };
        j.claim(
            "knee_factor",
            Ours::num(factor, ours),
            Verdict::pass_or_disagree(factor >= 4.0),
            text.fill(
                "note knee_factor",
                &[
                    ("cliff", pct(base.drop_rate)),
                    ("knee", pct(knee[0].1.drop_rate)),
                    ("w_cliff", format!("{:.1}", base.mean_window)),
                    ("w_knee", format!("{:.1}", knee[0].1.mean_window)),
                ],
            )?,
        )?;
        let achieved: Vec<(Gateway, f64, f64)> = LOOP
            .iter()
            .map(|&(g, t)| (g, t, m.at(g, Control::Adaptive(t)).signal_rate() / t))
            .collect();
        let worst = achieved.iter().map(|&(_, _, a)| a).fold(1.0, |w, a| {
            if (a - 1.0).abs() > (w - 1.0f64).abs() {
                a
            } else {
                w
            }
        });
        let each = achieved
            .iter()
            .map(|(g, t, a)| format!("{} {}: {a:.2}", g.label(), pct(*t)))
            .collect::<Vec<_>>()
            .join("; ");
        j.claim(
            "loop_converges",
            Ours::num(worst, format!("{worst:.2} ({each})")),
            Verdict::pass_or_disagree((0.75..=1.25).contains(&worst)),
            "",
        )?;
        Ok(())
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let row = |g: Gateway, label: String, r: &Run| {
            vec![
                g.label().to_string(),
                label,
                format!("{:.2}%", 100.0 * r.drop_rate),
                format!("{:.3}%", 100.0 * r.signal_rate()),
                format!("{:.1}", r.signals),
                format!("{:.1}", r.timeouts),
                format!("{:.2}", r.mean_window),
                format!("{:.1}", r.goodput_bps / 1e3),
            ]
        };
        let mut rows = Vec::new();
        for c in 0..m.per_config.len() {
            let (g, control) = config(c);
            let label = match control {
                Control::Fixed(u) => format!("{u}"),
                Control::Adaptive(t) => format!("adaptive, target {}%", 100.0 * t),
            };
            rows.push(row(g, label, &m.per_config[c]));
        }
        let series = |f: fn(&Run) -> f64| -> Vec<Series> {
            [Gateway::Cliff, Gateway::Knee]
                .iter()
                .enumerate()
                .flat_map(|(i, &g)| {
                    let v = m.sweep(g).iter().map(|(u, r)| (*u, f(r))).collect();
                    // +- one standard deviation over the seeds (f is linear: its sd is f of
                    // the sd, up to the sign).
                    let bars: Vec<(f64, f64, f64)> = m
                        .sweep_spread(g, f)
                        .into_iter()
                        .map(|(u, mu, sd)| (u, mu - sd.abs(), mu + sd.abs()))
                        .collect();
                    [
                        Series::new(g.label(), palette(i), Mark::LinePoints, v),
                        Series::error_bars("", palette(i), &bars),
                    ]
                })
                .collect()
        };
        let mut drops = series(|r| 100.0 * r.drop_rate);
        // The message's model: packets between drops in proportion to 1 / increment, from
        // the cliff's rate at increment 1.
        let base = m.at(Gateway::Cliff, Control::Fixed(1.0)).drop_rate;
        drops.push(Series::new(
            "drop rate in proportion to the increment (from drop-tail at 1)",
            palette(0),
            Mark::Dashed,
            INCREMENTS.iter().map(|&u| (u, 100.0 * base * u)).collect(),
        ));
        let f1 = Figure::from_text(
            out,
            "drops",
            "Drop rate against the increment, at the cliff and at the knee",
            text,
            &[],
        )?
        .draw(Chart {
            x_desc: "additive increase (segments per round trip)".into(),
            y_desc: "packets dropped at the gateway (%)".into(),
            log_x: true,
            ..Chart::one_panel(drops)
        })?;
        let f2 = Figure::from_text(
            out,
            "mean-window",
            "Mean window against the increment",
            text,
            &[],
        )?
        .draw(Chart {
            x_desc: "additive increase (segments per round trip)".into(),
            y_desc: "mean window (packets: goodput x mean RTT)".into(),
            log_x: true,
            y_max: Some(12.0),
            ..Chart::one_panel(series(|r| r.mean_window))
        })?;
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", format!("{:.0}", duration(p.quick))),
                    ("seeds", grid(p).seeds.to_string()),
                ],
            )?,
            tables: vec![Table {
                caption: "Per gateway and increment (means over the RNG seeds)".into(),
                header: Table::header(&[
                    "gateway",
                    "increment (segments per RTT)",
                    "drop rate",
                    "signals per segment",
                    "congestion signals",
                    "of which timeouts",
                    "mean window (packets)",
                    "goodput (kb/s)",
                ]),
                rows,
            }],
            plots: vec![f1, f2],
            discussion: text.get("discussion")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configurations_are_the_sweep_at_each_gateway_then_the_loop() {
        assert_eq!(config(0), (Gateway::Cliff, Control::Fixed(1.0)));
        assert_eq!(config(4), (Gateway::Cliff, Control::Fixed(0.0625)));
        assert_eq!(config(5), (Gateway::Knee, Control::Fixed(1.0)));
        assert_eq!(config(10), (Gateway::Knee, Control::Adaptive(0.01)));
        assert_eq!(config(12), (Gateway::Cliff, Control::Adaptive(0.003)));
    }

    #[test]
    fn the_increment_for_a_rate_is_interpolated_log_log() {
        let run = |drop_rate| Run {
            drop_rate,
            ..Run::default()
        };
        let (a, b, c) = (run(0.04), run(0.01), run(0.0025));
        let sweep = [(1.0, &a), (0.5, &b), (0.25, &c)];
        // Rate in proportion to the square of the increment: 2% at 1/sqrt(2).
        let u = increment_for(&sweep, 0.02).unwrap();
        assert!((u - 0.5f64.sqrt()).abs() < 1e-12, "{u}");
        assert!((increment_for(&sweep, 0.01).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(increment_for(&sweep, 0.001), None);
    }
}
