//! Experiment 8: fat pipes and loss, Reno-era recovery against SACK (seed 000/001,
//! 30 Apr 1990): a 1% loss rate costs a Reno-era TCP with a 100-packet bandwidth-delay
//! product 50-75% of its throughput, and with selective acknowledgements throughput would be
//! insensitive to the bandwidth-delay product. A grid of bandwidth-delay products and loss
//! rates, with Reno, NewReno (RFC 6582) and SACK (RFC 6675) recovery, in two readings: e1,
//! the window pinned at the pipe (loss not taken as congestion; SACK also with its congestion
//! window held at the pipe inside a receiver window of two), and e2, congestion control on,
//! set against the model of Mathis et al. (1997).

use crate::claims::{Judge, Ours};
use crate::plots;
use crate::stats::{mean, sd};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_gateway::{DropTailConfig, ImpairmentsConfig, QdiscConfig};
use ackclock_sim::{RunResult, Scenario};
use anyhow::Result;
use std::path::Path;

pub struct FatPipes;

const RTT_S: f64 = 0.1;
const PKT: f64 = 1500.0;
const MSS: usize = 1460;
const W_FULL: [u32; 4] = [10, 30, 100, 300];
const W_QUICK: [u32; 3] = [10, 100, 300];
const P_FULL: [f64; 4] = [0.001, 0.003, 0.01, 0.02];
const P_QUICK: [f64; 1] = [0.01];
/// Recovery algorithms (tcp presets); each is run pinned (e1) and with AIMD (e2).
const ALGS: [&str; 3] = ["reno", "newreno", "sack"];
const RENO: usize = 0;
const NEWRENO: usize = 1;
const SACK: usize = 2;

fn grid(quick: bool) -> (&'static [u32], &'static [f64]) {
    if quick {
        (&W_QUICK, &P_QUICK)
    } else {
        (&W_FULL, &P_FULL)
    }
}

fn mathis(w: f64, p: f64) -> f64 {
    (1.22 / (w * p.sqrt())).min(1.0)
}

/// One stall of a round trip per loss (fast retransmit of one hole per RTT).
fn one_rtt(w: f64, p: f64) -> f64 {
    1.0 / (1.0 + p * w)
}

/// One stall of a round trip per window that holds a loss (all its holes repaired at once,
/// but the receiver's window cannot slide past the first).
fn per_window(w: f64, p: f64) -> f64 {
    1.0 / (2.0 - (1.0 - p).powf(w))
}

/// The data rate (bits/s) of the path whose bandwidth-delay product is `w` packets.
fn data_rate(w: u32) -> f64 {
    f64::from(w) * PKT * 8.0 / RTT_S * MSS as f64 / PKT
}

/// A run: bandwidth-delay product `w` packets (the link rate is w packets per 100 ms), loss
/// `p`, recovery `alg`, pinned (`e1`) or with congestion control.
fn variant(base: &Scenario, w: u32, p: f64, alg: &str, e1: bool, seed: u64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    let wf = f64::from(w);
    let rate = wf * PKT * 8.0 / RTT_S;
    let tau = PKT * 8.0 / rate;
    let l = &mut s.link[0];
    l.rate_bps = rate;
    l.delay_ms = (RTT_S - tau - 40.0 * 8.0 / rate) / 2.0 * 1e3;
    l.queue = Some(QdiscConfig::DropTail(DropTailConfig {
        mark_threshold_pkts: None,
        limit_pkts: Some(w as usize),
        limit_bytes: None,
    }));
    l.impair_ab = Some(ImpairmentsConfig {
        loss_prob: Some(p),
        ..Default::default()
    });
    let f = &mut s.flow[0];
    f.tcp = alg.to_string();
    let rwnd = if e1 { w as usize } else { 2 * w as usize } * MSS;
    f.tcp_overrides.recv_buffer_bytes = Some(rwnd);
    f.tcp_overrides.send_buffer_bytes = Some(4 * rwnd);
    f.tcp_overrides.cc = e1.then_some(ackclock_tcp::config::CongestionName::None);
    // Run long enough for ~30 losses (at most 10,000 packets sent, unless 100 round trips
    // need more), guessing the efficiency from the models so that slow configurations still
    // see their losses. At least 100 round trips of data as well, so that the handshake and
    // the first window (one round trip each) stay a small part of the run on the fattest
    // pipes.
    let pkts = (30.0 / p).min(10_000.0).max(100.0 * wf);
    let guess = if e1 {
        1.0 / (1.0 + 2.0 * p * wf)
    } else {
        0.8 * mathis(wf, p)
    };
    s.duration_s = (pkts * tau / guess).max(50.0 * RTT_S);
    s
}

/// e1 as the claim states it for SACK: the congestion window held at w through every loss
/// and timeout (cc = "fixed", initial window w) inside a receiver window of 2w, so new data
/// keeps flowing while the holes are repaired.
fn variant_sack_cwnd(base: &Scenario, w: u32, p: f64, seed: u64) -> Scenario {
    let mut s = variant(base, w, p, "sack", false, seed);
    let o = &mut s.flow[0].tcp_overrides;
    o.cc = Some(ackclock_tcp::config::CongestionName::Fixed);
    o.initial_window_segments = Some(w);
    let wf = f64::from(w);
    let pkts = (30.0 / p).min(10_000.0).max(100.0 * wf);
    s.duration_s = (pkts * RTT_S / wf / 0.9).max(50.0 * RTT_S);
    s
}

/// One run: its goodput (bits/s) and timeouts.
pub struct Run {
    goodput_bps: f64,
    timeouts: f64,
}

/// A cell of the grid: efficiency and timeouts per run, mean over seeds (and the
/// efficiency's sample standard deviation over them).
#[derive(Clone, Copy)]
struct Cell {
    eff: f64,
    eff_sd: f64,
    timeouts: f64,
}

fn cell(runs: &[Run], w: u32) -> Cell {
    let effs: Vec<f64> = runs.iter().map(|r| r.goodput_bps / data_rate(w)).collect();
    Cell {
        eff: mean(&effs),
        eff_sd: sd(&effs),
        timeouts: mean(&runs.iter().map(|r| r.timeouts).collect::<Vec<_>>()),
    }
}

pub struct Measured {
    ws: &'static [u32],
    ps: &'static [f64],
    /// Per regime (e1, e2), algorithm of [`ALGS`], w and p, in that order.
    cells: Vec<Cell>,
    /// SACK with cwnd held at w, per w and p.
    sack_cwnd: Vec<Cell>,
}

impl Measured {
    fn cell(&self, e1: bool, a: usize, wi: usize, pi: usize) -> Cell {
        let (nw, np) = (self.ws.len(), self.ps.len());
        self.cells[((usize::from(!e1) * ALGS.len() + a) * nw + wi) * np + pi]
    }
    fn eff(&self, e1: bool, a: usize, wi: usize, pi: usize) -> f64 {
        self.cell(e1, a, wi, pi).eff
    }
    fn sack_cwnd(&self, wi: usize, pi: usize) -> Cell {
        self.sack_cwnd[wi * self.ps.len() + pi]
    }
    /// The index of 1% loss (the claims' loss rate).
    fn pi1(&self) -> usize {
        self.ps
            .iter()
            .position(|&p| (p - 0.01).abs() < 1e-12)
            .unwrap_or(0)
    }
    /// The index of w = 100 packets.
    fn wi100(&self) -> usize {
        self.ws.iter().position(|&w| w == 100).unwrap_or(0)
    }
    /// Efficiency at 1% loss for every w.
    fn by_w(&self, f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        (0..self.ws.len()).map(|wi| f(wi, self.pi1())).collect()
    }
}

/// Efficiencies to two decimals, comma-separated.
fn list(v: &[f64]) -> String {
    v.iter()
        .map(|e| format!("{e:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Experiment for FatPipes {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "fat_pipes"
    }

    fn files(&self) -> Files {
        files!("e08_fat_pipes")
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        let (ws, ps) = grid(p.quick);
        let mut scen = Vec::new();
        for e1 in [true, false] {
            for alg in ALGS {
                for &w in ws {
                    for &loss in ps {
                        for k in 1..=p.seeds {
                            scen.push(variant(base, w, loss, alg, e1, k));
                        }
                    }
                }
            }
        }
        for &w in ws {
            for &loss in ps {
                for k in 1..=p.seeds {
                    scen.push(variant_sack_cwnd(base, w, loss, k));
                }
            }
        }
        Ok(scen)
    }

    fn reduce(&self, _p: Params, _i: usize, r: RunResult) -> Result<Run> {
        let f = &r.summary.flows[0];
        Ok(Run {
            goodput_bps: f.goodput_bps,
            timeouts: f.timeouts as f64,
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let (ws, ps) = grid(p.quick);
        // Every group of seeds is one cell; the cells come in the plan's order, w before p.
        let w_of = |c: usize| ws[c / ps.len() % ws.len()];
        let cells: Vec<Cell> = runs
            .chunks(p.seeds as usize)
            .enumerate()
            .map(|(c, r)| cell(r, w_of(c)))
            .collect();
        let n_main = 2 * ALGS.len() * ws.len() * ps.len();
        Ok(Measured {
            ws,
            ps,
            sack_cwnd: cells[n_main..].to_vec(),
            cells: cells[..n_main].to_vec(),
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let (pi1, wi100) = (m.pi1(), m.wi100());
        let reno100 = m.eff(true, RENO, wi100, pi1);
        let newreno100 = m.eff(true, NEWRENO, wi100, pi1);
        j.claim(
            "reno_cost",
            Ours::num(
                reno100,
                format!("Reno {reno100:.3} (NewReno {newreno100:.3})"),
            ),
            Verdict::of((0.25..=0.50).contains(&reno100)),
            "",
        )?;
        let reno_by_w = m.by_w(|wi, pi| m.eff(true, RENO, wi, pi));
        j.claim(
            "reno_falls",
            format!("w = {:?}: {}", m.ws, list(&reno_by_w)),
            Verdict::of(reno_by_w.windows(2).all(|v| v[1] < v[0])),
            "",
        )?;
        judge_sack_flat(m, text, j)?;
        let m100 = mathis(100.0, 0.01);
        let ratios = ALGS
            .iter()
            .enumerate()
            .map(|(a, name)| format!("{name} x{:.2}", m.eff(false, a, wi100, pi1) / m100))
            .collect::<Vec<_>>()
            .join(", ");
        let sack_e2 = m.by_w(|wi, pi| m.eff(false, SACK, wi, pi));
        j.claim(
            "e2_mathis",
            format!(
                "{ratios} (Mathis {m100:.3}); SACK at w = {:?}: {}",
                m.ws,
                list(&sack_e2)
            ),
            Verdict::Info,
            text.get("note e2_mathis")?,
        )?;
        Ok(())
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let (pi1, wi100) = (m.pi1(), m.wi100());
        let discussion = text.fill(
            "discussion",
            &[
                ("reno", format!("{:.2}", m.eff(true, RENO, wi100, pi1))),
                (
                    "newreno",
                    format!("{:.2}", m.eff(true, NEWRENO, wi100, pi1)),
                ),
                ("sack_cwnd", list(&m.by_w(|wi, pi| m.sack_cwnd(wi, pi).eff))),
                ("ws", format!("{:?}", m.ws)),
                (
                    "sack_rwnd",
                    list(&m.by_w(|wi, pi| m.eff(true, SACK, wi, pi))),
                ),
            ],
        )?;
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("ws", format!("{:?}", m.ws)),
                    ("ps", format!("{:?}", m.ps)),
                    ("seeds", p.seeds.to_string()),
                ],
            )?,
            tables: vec![table(m, true), table(m, false)],
            plots: vec![plot(m, true, text, out)?, plot(m, false, text, out)?],
            discussion,
        })
    }
}

/// SACK with cwnd held at w: flat in w (efficiency >= 0.95 everywhere, the least-squares
/// slope against log10 w within 0.02 per decade), or the note says what is missing.
fn judge_sack_flat(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let sack_by_w = m.by_w(|wi, pi| m.sack_cwnd(wi, pi).eff);
    let lx: Vec<f64> = m.ws.iter().map(|&w| f64::from(w).log10()).collect();
    let (mx, my) = (mean(&lx), mean(&sack_by_w));
    let slope = lx
        .iter()
        .zip(&sack_by_w)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / lx.iter()
            .map(|x| (x - mx) * (x - mx))
            .sum::<f64>()
            .max(1e-12);
    let sack_ok = sack_by_w.iter().all(|&e| e >= 0.95) && slope.abs() <= 0.02;
    let note = if sack_ok {
        String::new()
    } else {
        let timeouts = m
            .by_w(|wi, pi| m.sack_cwnd(wi, pi).timeouts)
            .iter()
            .map(|t| format!("{t:.1}"))
            .collect::<Vec<_>>()
            .join(" / ");
        text.fill(
            "note sack_flat",
            &[
                ("sack_w0", format!("{:.2}", sack_by_w[0])),
                ("w0", m.ws[0].to_string()),
                ("reno_w0", format!("{:.2}", m.eff(true, RENO, 0, m.pi1()))),
                ("ws", format!("{:?}", m.ws)),
                ("timeouts", timeouts),
                (
                    "sack_rwnd",
                    list(&m.by_w(|wi, pi| m.eff(true, SACK, wi, pi))),
                ),
            ],
        )?
    };
    j.claim(
        "sack_flat",
        format!("{} (slope {slope:+.2} per decade)", list(&sack_by_w)),
        Verdict::pass_or_disagree(sack_ok),
        note,
    )
}

/// Every cell of the grid in one regime.
fn table(m: &Measured, e1: bool) -> Table {
    let mut rows = Vec::new();
    for (wi, &w) in m.ws.iter().enumerate() {
        for (pi, &p) in m.ps.iter().enumerate() {
            let wf = f64::from(w);
            let mut row = vec![
                w.to_string(),
                format!("{:.1}%", p * 100.0),
                format!("{:.1}", p * wf),
            ];
            for a in 0..ALGS.len() {
                let c = m.cell(e1, a, wi, pi);
                row.push(format!("{:.3} ({:.1} RTO)", c.eff, c.timeouts));
            }
            if e1 {
                let c = m.sack_cwnd(wi, pi);
                row.push(format!("{:.3} ({:.1} RTO)", c.eff, c.timeouts));
                row.push(format!("{:.3}", one_rtt(wf, p)));
                row.push(format!("{:.3}", per_window(wf, p)));
            } else {
                row.push(format!("{:.3}", mathis(wf, p)));
            }
            rows.push(row);
        }
    }
    let mut header: Vec<String> = vec!["w (packets)".into(), "loss".into(), "p w".into()];
    header.extend(ALGS.iter().map(|a| format!("{a} (timeouts per run)")));
    if e1 {
        header.push("sack, cwnd held at w, receiver window 2w".into());
        header.push("1/(1+pw)".into());
        header.push("1/(2-(1-p)^w)".into());
    } else {
        header.push("Mathis".into());
    }
    Table {
        caption: if e1 {
            "e1, window pinned at w (no congestion control, receiver window w; and SACK with cwnd held at w by AIMD d = 1, u = 0 inside a receiver window of 2w): goodput / data rate".into()
        } else {
            "e2, congestion control on (receiver window 2w, buffer w): goodput / data rate".into()
        },
        header,
        rows,
    }
}

/// Efficiency against w at 1% loss in one regime, per algorithm, with the models.
fn plot(m: &Measured, e1: bool, text: &Text, out: &Path) -> Result<Figure> {
    let pi1 = m.pi1();
    let wgrid: Vec<f64> = (0..=20)
        .map(|i| 10f64 * 30f64.powf(f64::from(i) / 20.0))
        .collect();
    let at_w = |f: &dyn Fn(usize) -> Cell| -> Vec<(f64, f64, f64)> {
        m.ws.iter()
            .enumerate()
            .map(|(wi, &w)| (f64::from(w), f(wi).eff, f(wi).eff_sd))
            .collect()
    };
    let mut measured: Vec<crate::plots::MeanLine> = ALGS
        .iter()
        .enumerate()
        .map(|(a, name)| (name.to_string(), at_w(&|wi| m.cell(e1, a, wi, pi1))))
        .collect();
    let p = m.ps[pi1];
    let models: Vec<(String, Vec<(f64, f64)>)> = if e1 {
        measured.push((
            "sack, cwnd held at w".into(),
            at_w(&|wi| m.sack_cwnd(wi, pi1)),
        ));
        vec![
            (
                "1/(1+pw)".into(),
                wgrid.iter().map(|&w| (w, one_rtt(w, p))).collect(),
            ),
            (
                "1/(2-(1-p)^w)".into(),
                wgrid.iter().map(|&w| (w, per_window(w, p))).collect(),
            ),
        ]
    } else {
        vec![(
            "Mathis 1.22/(w sqrt p)".into(),
            wgrid.iter().map(|&w| (w, mathis(w, p))).collect(),
        )]
    };
    let fig = Figure::from_text(
        out,
        if e1 { "e1-pinned" } else { "e2-aimd" },
        format!(
            "{}, {:.1}% loss: efficiency against the bandwidth-delay product w",
            if e1 {
                "e1, window pinned at w"
            } else {
                "e2, congestion control on"
            },
            p * 100.0
        ),
        text,
        &[("loss", format!("{:.1}%", p * 100.0))],
    )?;
    fig.draw(plots::means_chart(
        "bandwidth-delay product w (packets, log scale)",
        "goodput / data rate",
        &measured,
        &models,
        true,
    ))
}
