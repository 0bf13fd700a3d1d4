//! Experiment 21: a rate-based TCP on the seeds' paths. The 1988 messages ask a window TCP
//! for a loss rate below .01/(bandwidth x delay) and a buffer of 2 x bandwidth x delay, and
//! say that a sender estimating the pipe apart from the loss would turn 1% loss into a 1%
//! throughput effect (11 Feb 1988; 7 Mar 1988). BBR (Cardwell et al., ACM Queue 2016) is such
//! a sender: on experiment 5's Satnet, experiment 6's Satnet trace, a 100 Mbit/s x 100 ms pipe
//! with 0.001% to 20% random loss (the BBR paper's loss figure and Dumazet's netperf test of
//! the Linux commit), and experiment 13's path with 2 and 0.1 BDP of buffer, BBR v1 and v3
//! beside Tahoe, Reno and CUBIC.

mod paths;
mod render;

use crate::claims::{Judge, Ours};
use crate::stats::{mean, sd};
use crate::suite::{files, Experiment, Files, Params, Rendered, Verdict};
use crate::text::Text;
use ackclock_sim::{RunResult, Scenario};
use anyhow::Result;
use paths::{
    bdp_pkts, cases, data_rate, fat_losses, link_rate, Case, Net, Tcp, Variant, BUFFER_RTT,
    LINUX_PAYLOAD, TRACE_BER,
};
use std::path::Path;

pub struct RateBased;

/// Satnet and trace runs in quick mode: ~200 round trips, a few dozen losses at 1%.
const QUICK_SATNET_S: f64 = 400.0;
/// The fat pipe's runs: netperf's `-l 30` of Dumazet's test.
const FAT_S: f64 = 30.0;
/// The buffer path's runs, and what is left out of their start (the first slow start).
const BUFFER_S: f64 = 60.0;
const BUFFER_S_QUICK: f64 = 30.0;
const WARM_S: f64 = 10.0;
/// The Satnet seconds of the window figure.
pub(crate) const PLOT_S: f64 = 200.0;
/// BBR's smallest window (Linux's `bbr_cwnd_min_target`), in packets: PROBE_RTT holds it.
const FLOOR_PKTS: u32 = 4;

/// The length of a run on `net`.
fn duration(p: Params, base: &Scenario, net: Net) -> f64 {
    match (net, p.quick) {
        (Net::Satnet | Net::Trace, false) => base.duration_s,
        (Net::Satnet | Net::Trace, true) => QUICK_SATNET_S,
        (Net::Fat, _) => FAT_S,
        (Net::Buffer, false) => BUFFER_S,
        (Net::Buffer, true) => BUFFER_S_QUICK,
    }
}

/// A series of (time in seconds, value) points.
type Series = Vec<(f64, f64)>;

/// The bottleneck's queue on the buffer path, after the warm-up.
#[derive(Clone, Copy, Debug, Default)]
pub struct Queue {
    /// Busy share of the bottleneck (bytes it started sending over its rate).
    pub util: f64,
    /// Median and 95th percentile of the queueing delay a packet arriving at a sample time
    /// would see (bytes queued over the rate), in milliseconds, over samples every 10 ms.
    pub median_ms: f64,
    /// See `median_ms`.
    pub p95_ms: f64,
    /// Packets the bottleneck's queue dropped, over the whole run.
    pub drops: u64,
}

/// What the experiment keeps of one run.
pub struct Run {
    /// Goodput over data rate (the path's rate times payload per packet).
    pub eff: f64,
    /// Goodput, bits per second.
    pub goodput: f64,
    /// Retransmission timeouts.
    pub timeouts: f64,
    /// Share of the run at BBR's floor of 4 packets or below (traced runs only).
    pub floor: Option<f64>,
    /// The buffer path's queue.
    pub queue: Option<Queue>,
    /// Fat pipe: what the bottleneck carried over seconds 2-10 and over the last 10 s, in
    /// Mbit/s (from its queue samples, one a second).
    pub rates: Option<(f64, f64)>,
    /// Wall-clock seconds and events of the run (for the cost of the fat pipe).
    pub wall_s: f64,
    /// See `wall_s`.
    pub events: u64,
    /// The window in packets against time, for the figure (Satnet, 1%, first seed, BBRs).
    pub cwnd: Option<Vec<(f64, f64)>>,
    /// The queueing delay in ms against time, for the figure (buffer path, 2 BDP).
    pub qdelay: Option<Vec<(f64, f64)>>,
}

/// Whether run `c` is drawn in the window figure.
fn cwnd_plotted(c: &Case) -> bool {
    c.net == Net::Satnet
        && c.tcp.is_bbr()
        && c.variant == Variant::Plain
        && (c.loss - 0.01).abs() < 1e-12
        && c.seed == 1
}

/// Whether a run is traced: the BBRs on every path but the fat pipe (their time at the
/// floor; the fat pipe's runs are the heavy ones).
fn traced(c: &Case) -> bool {
    c.net != Net::Fat && c.tcp.is_bbr()
}

/// What the bottleneck carried over seconds 2-10 and over the last 10 s, in Mbit/s.
fn early_late(r: &RunResult) -> Option<(f64, f64)> {
    let (_, samples) = r.queues.iter().find(|(n, _)| n == "gw-rcv")?;
    let end = r.summary.duration_s;
    let sent_at = |t: f64| {
        samples
            .iter()
            .rev()
            .find(|s| s.at.as_nanos() as f64 / 1e9 <= t + 1e-9)
            .map(|s| (s.at.as_nanos() as f64 / 1e9, s.sent_bytes as f64))
    };
    let rate = |a: f64, b: f64| {
        let ((ta, xa), (tb, xb)) = (sent_at(a)?, sent_at(b)?);
        (tb > ta).then(|| (xb - xa) * 8.0 / (tb - ta) / 1e6)
    };
    Some((rate(2.0, 10.0)?, rate(end - 10.0, end)?))
}

/// The share of the run from its first event to its end with cwnd at [`FLOOR_PKTS`] segments
/// of `mss` bytes or below, and (if `keep`) the window in packets up to [`PLOT_S`].
fn floor_share(r: &RunResult, mss: u32, end: f64, keep: bool) -> (f64, Option<Series>) {
    let floor = FLOOR_PKTS * mss;
    let ev = &r.traces[0];
    let secs = |e: &ackclock_tcp::TraceEvent| e.time.as_nanos() as f64 / 1e9;
    let mut at_floor = 0.0;
    let mut series = Vec::new();
    let first = ev.first().map_or(0.0, secs);
    for (i, e) in ev.iter().enumerate() {
        let t = secs(e);
        let next = ev.get(i + 1).map_or(end, secs);
        if e.cwnd <= floor {
            at_floor += next - t;
        }
        if keep && t <= PLOT_S {
            series.push((t, f64::from(e.cwnd) / f64::from(mss)));
        }
    }
    let share = at_floor / (end - first).max(1e-9);
    (share, keep.then_some(series))
}

/// The sorted sample at quantile `q` (nearest rank); 0 for none.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[(((sorted.len() - 1) as f64) * q).round() as usize]
}

/// The bottleneck's queue after [`WARM_S`], and (if `keep`) its delay against time.
fn queue_of(r: &RunResult, keep: bool) -> Result<(Queue, Option<Series>)> {
    let rate = link_rate(Net::Buffer);
    let samples = &r
        .queues
        .iter()
        .find(|(n, _)| n == "gw-rcv")
        .ok_or_else(|| anyhow::anyhow!("no queue samples of gw-rcv"))?
        .1;
    let at = |s: &ackclock_sim::net::PortSample| s.at.as_nanos() as f64 / 1e9;
    let delay = |s: &ackclock_sim::net::PortSample| f64::from(s.queue_bytes) * 8.0 / rate * 1e3;
    let after: Vec<_> = samples.iter().filter(|s| at(s) >= WARM_S).collect();
    let (Some(a), Some(b)) = (after.first(), after.last()) else {
        anyhow::bail!("no queue samples after {WARM_S} s");
    };
    let mut d: Vec<f64> = after.iter().map(|s| delay(s)).collect();
    d.sort_by(f64::total_cmp);
    let util = (b.sent_bytes - a.sent_bytes) as f64 * 8.0 / (rate * (at(b) - at(a)).max(1e-9));
    let q = Queue {
        util: util.min(1.0),
        median_ms: quantile(&d, 0.5),
        p95_ms: quantile(&d, 0.95),
        drops: crate::stats::link(r, "gw-rcv")?.queue_drops,
    };
    let series = keep.then(|| samples.iter().map(|s| (at(s), delay(s))).collect());
    Ok((q, series))
}

/// Everything measured: each run with its case, in the plan's order.
pub struct Measured {
    runs: Vec<(Case, Run)>,
    /// Run lengths: Satnet and trace, fat pipe, buffer path.
    satnet_s: f64,
    buffer_s: f64,
}

impl Measured {
    /// The runs of one configuration (every seed).
    fn of(&self, net: Net, tcp: Tcp, loss: f64, buffer: f64, variant: Variant) -> Vec<&Run> {
        self.runs
            .iter()
            .filter(|(c, _)| {
                c.net == net
                    && c.tcp == tcp
                    && (c.loss - loss).abs() <= 1e-9 * loss.max(1e-9)
                    && (c.buffer - buffer).abs() < 1e-9
                    && c.variant == variant
            })
            .map(|(_, r)| r)
            .collect()
    }

    /// The plain runs of a configuration with random loss (or none).
    fn at(&self, net: Net, tcp: Tcp, loss: f64) -> Vec<&Run> {
        self.of(net, tcp, loss, 0.0, Variant::Plain)
    }

    /// Mean and sd of `f` over runs; `None` when there are none.
    fn stat(runs: &[&Run], f: impl Fn(&Run) -> f64) -> Option<(f64, f64)> {
        let v: Vec<f64> = runs.iter().map(|r| f(r)).collect();
        (!v.is_empty()).then(|| (mean(&v), sd(&v)))
    }

    /// Mean efficiency of a plain configuration.
    fn eff(&self, net: Net, tcp: Tcp, loss: f64) -> Option<f64> {
        Self::stat(&self.at(net, tcp, loss), |r| r.eff).map(|s| s.0)
    }

    /// Mean efficiency on the fat pipe over the bound 1 - p (the BBR paper's).
    fn fat_ratio(&self, tcp: Tcp, p: f64) -> Option<f64> {
        self.eff(Net::Fat, tcp, p).map(|e| e / (1.0 - p))
    }

    /// Mean timeouts of a plain configuration.
    fn timeouts(&self, net: Net, tcp: Tcp, loss: f64) -> f64 {
        Self::stat(&self.at(net, tcp, loss), |r| r.timeouts).map_or(0.0, |s| s.0)
    }

    /// Mean share of time at BBR's floor.
    fn floor(&self, net: Net, tcp: Tcp, loss: f64) -> f64 {
        Self::stat(&self.at(net, tcp, loss), |r| r.floor.unwrap_or(0.0)).map_or(0.0, |s| s.0)
    }

    /// The buffer path's queue of `tcp` with `buffer` BDPs.
    fn queue(&self, tcp: Tcp, buffer: f64) -> Queue {
        self.of(Net::Buffer, tcp, 0.0, buffer, Variant::Plain)
            .first()
            .and_then(|r| r.queue)
            .unwrap_or_default()
    }
}

/// `x` with two decimals, or "-" when not measured.
fn f2(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.2}"))
}

impl Experiment for RateBased {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "rate_based"
    }

    fn files(&self) -> Files {
        files!("e21_rate_based")
    }

    fn records_queues(&self) -> bool {
        true
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        Ok(cases(p)
            .iter()
            .map(|c| paths::scenario(base, c, duration(p, base, c.net), traced(c)))
            .collect())
    }

    fn reduce(&self, p: Params, i: usize, r: RunResult) -> Result<Run> {
        let c = cases(p)
            .get(i)
            .copied()
            .ok_or_else(|| anyhow::anyhow!("no run {i} in the plan"))?;
        let f = &r.summary.flows[0];
        let (floor, cwnd) = if traced(&c) {
            // The buffer path's Linux segment is at most 1460 bytes.
            let seg = match c.net {
                Net::Satnet => paths::SATNET_MSS,
                Net::Trace => paths::TRACE_MSS,
                _ => 1460,
            } as u32;
            let (s, series) = floor_share(&r, seg, r.summary.duration_s, cwnd_plotted(&c));
            (Some(s), series)
        } else {
            (None, None)
        };
        let (queue, qdelay) = if c.net == Net::Buffer {
            let (q, s) = queue_of(&r, (c.buffer - 2.0).abs() < 1e-9)?;
            (Some(q), s)
        } else {
            (None, None)
        };
        Ok(Run {
            eff: f.goodput_bps / data_rate(c.net),
            goodput: f.goodput_bps,
            timeouts: f.timeouts as f64,
            floor,
            queue,
            rates: if c.net == Net::Fat {
                early_late(&r)
            } else {
                None
            },
            wall_s: r.wall_s,
            events: r.summary.events,
            cwnd,
            qdelay,
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let base = Scenario::from_str_named(
            self.files().scenario,
            Path::new("e21_rate_based/scenario.toml"),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        let cases = cases(p);
        if cases.len() != runs.len() {
            anyhow::bail!("{} runs for {} cases", runs.len(), cases.len());
        }
        Ok(Measured {
            runs: cases.into_iter().zip(runs).collect(),
            satnet_s: duration(p, &base, Net::Satnet),
            buffer_s: duration(p, &base, Net::Buffer),
        })
    }

    fn judge(&self, p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_satnet(p, m, text, j)?;
        judge_fat(p, m, text, j)?;
        judge_buffer(m, text, j)
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        render::render(p, m, text, out)
    }
}

/// The Satnet and trace claims.
fn judge_satnet(p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let n = p.seeds;
    let runs = m.at(Net::Satnet, Tcp::Bbr, 0.01);
    let (e1, s1) = Measured::stat(&runs, |r| r.eff).unwrap_or_default();
    let e0 = m.eff(Net::Satnet, Tcp::Bbr, 0.0).unwrap_or(f64::NAN);
    let reno = m.eff(Net::Satnet, Tcp::Reno, 0.01).unwrap_or(f64::NAN);
    let nodsack = m.of(Net::Satnet, Tcp::Bbr, 0.01, 0.0, Variant::NoDsack);
    let (nd_eff, _) = Measured::stat(&nodsack, |r| r.eff).unwrap_or_default();
    let (nd_to, _) = Measured::stat(&nodsack, |r| r.timeouts).unwrap_or_default();
    let floor_values = [
        (
            "floor",
            format!("{:.0}", 100.0 * m.floor(Net::Satnet, Tcp::Bbr, 0.01)),
        ),
        (
            "floor0",
            format!("{:.0}", 100.0 * m.floor(Net::Satnet, Tcp::Bbr, 0.0)),
        ),
        ("lossless", format!("{e0:.3}")),
    ];
    let ok = (0.95..=1.0).contains(&e1);
    j.claim(
        "satnet_1pct",
        Ours::num(e1, format!("{e1:.3} (sd {s1:.3}, {n} RNG seeds)")),
        Verdict::pass_or_disagree(ok),
        if ok {
            String::new()
        } else {
            text.fill("note satnet_1pct", &floor_values)?
        },
    )?;
    let cost = e1 / e0;
    let ok = (0.97..=1.0).contains(&cost);
    let cost_values = [
        (
            "timeouts",
            format!("{:.0}", m.timeouts(Net::Satnet, Tcp::Bbr, 0.01)),
        ),
        (
            "timeouts0",
            format!("{:.0}", m.timeouts(Net::Satnet, Tcp::Bbr, 0.0)),
        ),
        ("nodsack_timeouts", format!("{nd_to:.0}")),
        ("nodsack_ratio", format!("{:.3}", nd_eff / e0)),
    ];
    j.claim(
        "satnet_loss_cost",
        Ours::num(cost, format!("{cost:.3} ({e1:.3} / {e0:.3} lossless)")),
        Verdict::pass_or_disagree(ok),
        if ok {
            String::new()
        } else {
            text.fill("note satnet_loss_cost", &cost_values)?
        },
    )?;
    let factor = e1 / reno;
    j.claim(
        "satnet_factor",
        Ours::num(
            factor,
            format!("{factor:.2} (BBR v1 {e1:.3}, Reno {reno:.3})"),
        ),
        Verdict::pass_or_disagree(factor >= 1.5),
        text.get("note satnet_factor")?,
    )?;
    let v3 = m.eff(Net::Satnet, Tcp::Bbr3, 0.01).unwrap_or(f64::NAN);
    let v3_0 = m.eff(Net::Satnet, Tcp::Bbr3, 0.0).unwrap_or(f64::NAN);
    j.claim(
        "satnet_bbr3",
        Ours::num(v3, format!("{v3:.3} (lossless {v3_0:.3})")),
        Verdict::Info,
        text.fill(
            "note satnet_bbr3",
            &[
                ("flight", (2 * paths::SATNET_PIPE).to_string()),
                (
                    "budget",
                    format!("{:.1}", 0.02 * 2.0 * paths::SATNET_PIPE as f64),
                ),
            ],
        )?,
    )?;
    let t1 = m.eff(Net::Trace, Tcp::Bbr, TRACE_BER).unwrap_or(f64::NAN);
    let t0 = m.eff(Net::Trace, Tcp::Bbr, 0.0).unwrap_or(f64::NAN);
    let below = t1 <= 0.80;
    let note = text.fill(
        if below {
            "note trace_78"
        } else {
            "note trace_78 above"
        },
        &[
            ("lossless", format!("{t0:.3}")),
            ("ratio", format!("{:.3}", t1 / t0)),
            (
                "floor",
                format!("{:.0}", 100.0 * m.floor(Net::Trace, Tcp::Bbr, TRACE_BER)),
            ),
        ],
    )?;
    j.claim(
        "trace_78",
        Ours::num(t1, format!("{t1:.3} (lossless {t0:.3})")),
        Verdict::pass_or_disagree(below),
        note,
    )
}

/// The fat pipe's claims: the BBR paper's loss figure, the seeds' error-rate rule,
/// Dumazet's netperf figures and BBR v3's loss threshold.
fn judge_fat(p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let ps: Vec<f64> = fat_losses(p, Tcp::Bbr)
        .iter()
        .copied()
        .filter(|&x| x <= 0.05)
        .collect();
    let per_p: Vec<(f64, f64, f64)> = ps
        .iter()
        .filter_map(|&x| {
            Some((
                x,
                m.fat_ratio(Tcp::Bbr, x)?,
                m.timeouts(Net::Fat, Tcp::Bbr, x),
            ))
        })
        .collect();
    let (worst_p, worst, _) = per_p
        .iter()
        .copied()
        .fold((f64::NAN, f64::INFINITY, 0.0), |a, b| {
            if b.1 < a.1 {
                b
            } else {
                a
            }
        });
    let list = per_p
        .iter()
        .map(|(x, r, t)| format!("{}%: {r:.2} ({t:.1} timeouts)", x * 100.0))
        .collect::<Vec<_>>()
        .join(", ");
    let ok = worst >= 0.90;
    j.claim(
        "fat_bbr_bound",
        Ours::num(worst, format!("{worst:.2} (at {}%)", worst_p * 100.0)),
        Verdict::pass_or_disagree(ok),
        text.fill(
            if ok {
                "note fat_bbr_bound"
            } else {
                "note fat_bbr_bound below"
            },
            &[("list", list), ("lowest", fat_lowest_run(m, worst_p))],
        )?,
    )?;
    judge_fat_15(m, text, j)?;
    let cubic = |x| m.eff(Net::Fat, Tcp::Cubic, x);
    let (c5, c3) = (cubic(1e-5), cubic(1e-3));
    let ten = c3.zip(c5).map(|(a, b)| a / b).unwrap_or(f64::NAN);
    j.claim(
        "fat_cubic_10x",
        Ours::num(
            ten,
            format!("{ten:.3} ({} / {} of the data rate)", f2(c3), f2(c5)),
        ),
        Verdict::of((0.03..=0.3).contains(&ten)),
        "",
    )?;
    let stalls = fat_losses(p, Tcp::Cubic)
        .iter()
        .filter(|&&x| x >= 0.02)
        .filter_map(|&x| cubic(x))
        .fold(f64::NAN, f64::max);
    j.claim(
        "fat_cubic_stalls",
        Ours::num(stalls, format!("{stalls:.4} (largest at p >= 2%)")),
        Verdict::of(stalls <= 0.02),
        "",
    )?;
    let reno = |x| m.eff(Net::Fat, Tcp::LinuxReno, x);
    let reno = match (reno(1e-3), reno(1e-5)) {
        (Some(a), Some(b)) => format!("Reno (Linux) {a:.2} ({b:.2})"),
        _ => "Reno (Linux) not run".into(),
    };
    let rule_ok = c3.is_some_and(|v| v <= 0.5);
    j.claim(
        "window_rule",
        format!("CUBIC {} at 1e-3 ({} at 1e-5); {reno}", f2(c3), f2(c5)),
        Verdict::of(rule_ok),
        text.fill(
            "note window_rule",
            &[("limit", format!("{:.1e}", 0.01 / bdp_pkts(Net::Fat)))],
        )?,
    )?;
    judge_dumazet(m, text, j)
}

/// The paper's "close to the bound up to 15 percent" (full run only).
fn judge_fat_15(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    match m.fat_ratio(Tcp::Bbr, 0.15) {
        Some(r) => {
            let runs = m.at(Net::Fat, Tcp::Bbr, 0.15);
            let rate = |f: fn((f64, f64)) -> f64| {
                Measured::stat(&runs, |x| x.rates.map_or(f64::NAN, f)).map_or(f64::NAN, |s| s.0)
            };
            let timeouts = m.timeouts(Net::Fat, Tcp::Bbr, 0.15);
            // The runs split: those whose STARTUP ended at a fraction of the link stay there.
            let low = runs
                .iter()
                .filter(|x| {
                    x.rates
                        .is_some_and(|(early, _)| early < 0.25 * data_rate(Net::Fat) / 1e6)
                })
                .count();
            j.claim(
                "fat_bbr_15",
                Ours::num(r, format!("{r:.2} ({timeouts:.1} timeouts per run)")),
                Verdict::pass_or_disagree(r >= 0.75),
                if r >= 0.75 {
                    String::new()
                } else {
                    text.fill(
                        "note fat_bbr_15",
                        &[
                            ("timeouts", format!("{timeouts:.1}")),
                            ("low", low.to_string()),
                            ("runs", runs.len().to_string()),
                            ("early", format!("{:.1}", rate(|x| x.0))),
                            ("late", format!("{:.1}", rate(|x| x.1))),
                        ],
                    )?
                },
            )?
        }
        None => j.skip(
            "fat_bbr_15",
            "quick run: the 15% point is run in the full run only",
        )?,
    }
    Ok(())
}

/// The run with the lowest efficiency at `p` (BBR v1, fat pipe), in words.
fn fat_lowest_run(m: &Measured, p: f64) -> String {
    m.runs
        .iter()
        .filter(|(c, _)| c.net == Net::Fat && c.tcp == Tcp::Bbr && (c.loss - p).abs() < 1e-12)
        .min_by(|a, b| a.1.eff.total_cmp(&b.1.eff))
        .map_or("-".into(), |(c, r)| {
            let (early, late) = r.rates.unwrap_or((f64::NAN, f64::NAN));
            format!(
                "RNG seed {}, {:.2} of the bound, {:.0} timeouts; the bottleneck carried {early:.1} Mbit/s over seconds 2-10 and {late:.1} over the last 10 s",
                c.seed,
                r.eff / (1.0 - p),
                r.timeouts
            )
        })
}

/// Dumazet's netperf figures and BBR v3's loss threshold.
fn judge_dumazet(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let share = m
        .eff(Net::Fat, Tcp::Bbr, 0.01)
        .map(|e| e * LINUX_PAYLOAD / 1500.0);
    let share = share.unwrap_or(f64::NAN);
    j.claim(
        "dumazet_bbr",
        Ours::num(
            share,
            format!("{share:.3} ({:.1} of 100 Mbit/s)", share * 100.0),
        ),
        Verdict::of((0.85..=0.96).contains(&share)),
        "",
    )?;
    let runs = m.at(Net::Fat, Tcp::Cubic, 0.01);
    let (c, csd) = Measured::stat(&runs, |r| r.goodput / 1e6).unwrap_or((f64::NAN, 0.0));
    let spread = match runs.len() {
        1 => "1 RNG seed".to_string(),
        k => format!("sd {csd:.2}, {k} RNG seeds"),
    };
    j.claim(
        "dumazet_cubic",
        Ours::num(c, format!("{c:.2} Mbit/s ({spread})")),
        Verdict::of((1.0..=6.5).contains(&c)),
        text.fill(
            "note dumazet_cubic",
            &[(
                "mathis",
                format!("{:.2}", mathis_bps(0.01, paths::FAT_RTT) / 1e6),
            )],
        )?,
    )?;
    let (h1, h5) = (m.fat_ratio(Tcp::Bbr3, 0.01), m.fat_ratio(Tcp::Bbr3, 0.05));
    let ok = h1.is_some_and(|x| x >= 0.5) && h5.is_some_and(|x| x < 0.5);
    j.claim(
        "bbr3_loss_thresh",
        format!("{} of the bound at 1%, {} at 5%", f2(h1), f2(h5)),
        Verdict::of(ok),
        "",
    )
}

/// Mathis et al. 1997: 1.22 MSS / (RTT sqrt(p)), for Linux's 1448-byte segments.
pub(crate) fn mathis_bps(p: f64, rtt: f64) -> f64 {
    1.22 * LINUX_PAYLOAD * 8.0 / (rtt * p.sqrt())
}

/// The buffer-sizing claims.
fn judge_buffer(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let rtt_ms = BUFFER_RTT * 1e3;
    let bbr = m.queue(Tcp::Bbr, 2.0);
    let q = bbr.p95_ms / rtt_ms;
    j.claim(
        "buffer_bbr_queue",
        Ours::num(
            q,
            format!(
                "{q:.2} ({:.1} ms p95, {:.1} ms median)",
                bbr.p95_ms, bbr.median_ms
            ),
        ),
        Verdict::of(q <= 0.5),
        "",
    )?;
    let (reno, cubic) = (m.queue(Tcp::LinuxReno, 2.0), m.queue(Tcp::Cubic, 2.0));
    let w = reno.median_ms.min(cubic.median_ms) / rtt_ms;
    j.claim(
        "buffer_window_fills",
        Ours::num(
            w,
            format!(
                "{w:.2} (medians: Reno {:.0} ms, CUBIC {:.0} ms)",
                reno.median_ms, cubic.median_ms
            ),
        ),
        Verdict::of(w >= 0.5),
        "",
    )?;
    let shallow = m.queue(Tcp::Bbr, 0.1);
    let r01 = m.queue(Tcp::LinuxReno, 0.1);
    let c01 = m.queue(Tcp::Cubic, 0.1);
    let floor = m
        .of(Net::Buffer, Tcp::Bbr, 0.0, 0.1, Variant::Plain)
        .first()
        .and_then(|r| r.floor)
        .unwrap_or(f64::NAN);
    let ok = shallow.util >= 0.95;
    j.claim(
        "buffer_bbr_shallow",
        Ours::num(shallow.util, format!("{:.3}", shallow.util)),
        Verdict::pass_or_disagree(ok),
        text.fill(
            if ok {
                "note buffer_bbr_shallow"
            } else {
                "note buffer_bbr_shallow below"
            },
            &[
                ("reno", format!("{:.3}", r01.util)),
                ("cubic", format!("{:.3}", c01.util)),
                ("drops", shallow.drops.to_string()),
                ("floor", format!("{:.1}", 100.0 * floor)),
            ],
        )?,
    )
}
