//! Experiment 5: Satnet at 1% random loss, vanilla TCP against the new TCP (seed 000,
//! 11 Feb 1988; REFERENCES S-b, with the footnote-6 model of A4).

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_gateway::ImpairmentsConfig;
use ackclock_sim::{RunResult, Scenario};
use anyhow::Result;

pub struct Satnet;

const TEXT: &str = include_str!("scenario.toml");
const TCPS: [&str; 3] = ["vanilla_4_3bsd", "tahoe", "reno"];
/// Loss rates of the sweep; the claim is at 1% (index 1).
const LOSS: [f64; 3] = [0.003, 0.01, 0.03];
/// Packets that fill the pipe, and its round trip (40 x 256 bytes at 40 kb/s).
const W: f64 = 40.0;
const RTT_S: f64 = 2.048;
/// Channel rate, packet and segment sizes.
const RATE: f64 = 40e3;
const PKT: f64 = 256.0;
const MSS: f64 = 216.0;

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

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn sd(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt()
}

/// What one run says about the mechanism.
struct Run {
    eff: f64,
    timeouts: f64,
    losses: f64,
    /// Seconds the channel carried no new data, per timeout.
    dead_per_timeout: f64,
}

fn measure(r: &RunResult) -> Run {
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
    Run {
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

impl Experiment for Satnet {
    fn name(&self) -> &'static str {
        "satnet"
    }
    fn title(&self) -> &'static str {
        "5. Satnet: vanilla 56% vs the new TCP 49% at 1% loss"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, _quick: bool, seeds: u64) -> u64 {
        (TCPS.len() * LOSS.len() + 1) as u64 * seeds
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("satnet", TEXT)?;
        // ~500 (quick: ~200) round trips per run: at 1% loss a few dozen loss episodes.
        let dur = if ctx.quick { 400.0 } else { base.duration_s };
        let mut scen = Vec::new();
        for tcp in TCPS {
            for (j, &p) in LOSS.iter().enumerate() {
                for k in 0..ctx.seeds {
                    // Traces only where a plot needs them (seed 1 at 1% loss).
                    let trace = j == 1 && k == 0 && tcp != "reno";
                    scen.push(variant(&base, tcp, p, 1 + k, dur, trace));
                }
            }
        }
        // Vanilla with the timer pinned to one round trip, which would make it fire 2 RTT
        // after a lost packet was sent, as the footnote-6 model has it.
        for k in 0..ctx.seeds {
            let mut s = variant(&base, "vanilla_4_3bsd", 0.01, 1 + k, dur, false);
            s.flow[0].tcp_overrides.rto_min_ms = Some(RTT_S * 1e3);
            s.flow[0].tcp_overrides.rto_max_ms = Some(RTT_S * 1e3);
            scen.push(s);
        }
        let results = ctx.run_all(scen)?;
        let n = ctx.seeds as usize;
        let pinned: Vec<Run> = results[TCPS.len() * LOSS.len() * n..]
            .iter()
            .map(measure)
            .collect();
        let at = |t: usize, j: usize| -> &[RunResult] {
            let i = (t * LOSS.len() + j) * n;
            &results[i..i + n]
        };
        let runs = |t: usize, j: usize| -> Vec<Run> { at(t, j).iter().map(measure).collect() };
        let effs = |t: usize, j: usize| -> Vec<f64> { runs(t, j).iter().map(|r| r.eff).collect() };

        // The table: every TCP at every loss rate, with the models.
        let mut rows = Vec::new();
        for (j, &p) in LOSS.iter().enumerate() {
            let mut row = vec![format!("{:.1}%", p * 100.0)];
            for t in 0..TCPS.len() {
                let e = effs(t, j);
                row.push(format!("{:.3} ± {:.3}", mean(&e), sd(&e)));
            }
            row.push(format!("{:.3}", fixed_window_model(p)));
            row.push(format!("{:.3}", mathis(p)));
            row.push(format!(
                "{:.3}",
                pftk(p, RTT_S, 2.0 * RTT_S) * PKT * 8.0 / RATE
            ));
            rows.push(row);
        }
        // The vanilla mechanism: per timeout, how many losses it repaired and how long
        // the channel carried nothing new.
        let mut mech = Vec::new();
        for (j, &p) in LOSS.iter().enumerate() {
            let r = runs(0, j);
            let timeouts: f64 = r.iter().map(|x| x.timeouts).sum();
            let losses: f64 = r.iter().map(|x| x.losses).sum();
            let dead = mean(&r.iter().map(|x| x.dead_per_timeout).collect::<Vec<_>>());
            mech.push(vec![
                format!("{:.1}%", p * 100.0),
                format!("{:.1}", losses / n as f64),
                format!("{:.1}", timeouts / n as f64),
                format!("{:.2}", losses / timeouts.max(1.0)),
                format!("{:.2}", dead / RTT_S),
                format!("{:.3}", mean(&r.iter().map(|x| x.eff).collect::<Vec<_>>())),
            ]);
        }
        {
            let timeouts: f64 = pinned.iter().map(|x| x.timeouts).sum();
            let losses: f64 = pinned.iter().map(|x| x.losses).sum();
            mech.push(vec![
                "1%, RTO pinned to 1 RTT".into(),
                format!("{:.1}", losses / n as f64),
                format!("{:.1}", timeouts / n as f64),
                format!("{:.2}", losses / timeouts.max(1.0)),
                format!(
                    "{:.2}",
                    mean(
                        &pinned
                            .iter()
                            .map(|x| x.dead_per_timeout)
                            .collect::<Vec<_>>()
                    ) / RTT_S
                ),
                format!(
                    "{:.3}",
                    mean(&pinned.iter().map(|x| x.eff).collect::<Vec<_>>())
                ),
            ]);
        }
        let pinned_eff = mean(&pinned.iter().map(|x| x.eff).collect::<Vec<_>>());
        let pinned_to = pinned.iter().map(|x| x.timeouts).sum::<f64>() / n as f64;
        let plain_to = runs(0, 1).iter().map(|x| x.timeouts).sum::<f64>() / n as f64;

        let van = effs(0, 1);
        let tah = effs(1, 1);
        let ren = effs(2, 1);
        let (mv, mt, mr) = (mean(&van), mean(&tah), mean(&ren));
        let vr = runs(0, 1);
        let per_to = vr.iter().map(|x| x.losses).sum::<f64>()
            / vr.iter().map(|x| x.timeouts).sum::<f64>().max(1.0);
        let dead_rtt = mean(&vr.iter().map(|x| x.dead_per_timeout).collect::<Vec<_>>()) / RTT_S;
        let e = self.name();
        let van_ok = (0.53..=0.59).contains(&mv);
        let new_ok = (0.44..=0.54).contains(&mt);
        let claims = vec![
            judged(
                &base,
                e,
                "vanilla_56",
                format!("{mv:.3} (sd {:.3}, {n} seeds)", sd(&van)),
                if van_ok { Verdict::Pass } else { Verdict::Disagree },
                format!(
                    "vanilla_4_3bsd as it is, not a model: each timeout costs {dead_rtt:.1} RTT of channel time (the timer is restarted by the last good ACK, so it fires ~1 RTT + 2 srtt after the loss, and the go-back-N resend of the window fills the next RTT), not the model's 2, but one timeout repairs every loss of the window ({per_to:.2} losses per timeout). The two effects nearly cancel; (1+2pw)^-1 = {:.3}.{}",
                    fixed_window_model(0.01),
                    if van_ok { "" } else { " Outside the band because the mechanism is not the model's (see the discussion)." }
                ),
            )?,
            judged(
                &base,
                e,
                "new_49",
                format!("{mt:.3} (Tahoe; Reno {mr:.3})"),
                if new_ok { Verdict::Pass } else { Verdict::Disagree },
                if new_ok {
                    String::new()
                } else {
                    format!(
                        "49% is above every steady-state AIMD model for this path (Mathis {:.2}, PFTK {:.2}-{:.2}; REFERENCES S-b): halving the window at every one of the 1% random losses holds it near 1.22/sqrt(p) = 12 packets of the 40 the pipe holds. Tahoe is lower still, because it slow-starts from one packet after every fast retransmit. 49% needs a sender that does not halve on isolated losses, non-Bernoulli loss, or a transfer short enough to stay in the first slow start.",
                        mathis(0.01),
                        pftk(0.01, RTT_S, 8.0) * PKT * 8.0 / RATE,
                        pftk(0.01, RTT_S, 1.0) * PKT * 8.0 / RATE,
                    )
                },
            )?,
            judged(
                &base,
                e,
                "aimd_models",
                format!("Reno {mr:.3}, Tahoe {mt:.3}"),
                Verdict::of((0.25..=0.35).contains(&mr)),
                "Mathis and PFTK model a sender that halves on a triple duplicate ACK (Reno); Tahoe, the 1988 TCP, restarts from one packet instead and pays log2(W/2) extra round trips per loss, so it sits below them.",
            )?,
        ];

        // Plots: efficiency against loss with the models; the two time-sequence diagrams.
        let mut series = Vec::new();
        for (t, name) in ["vanilla 4.3BSD", "Tahoe", "Reno"].iter().enumerate() {
            let pts = LOSS
                .iter()
                .enumerate()
                .map(|(j, &p)| (p * 100.0, mean(&effs(t, j))))
                .collect();
            series.push((name.to_string(), pts));
        }
        let grid: Vec<f64> = (0..=20)
            .map(|i| 0.3 * (10f64).powf(f64::from(i) / 20.0))
            .collect();
        series.push((
            "(1+2pw)^-1, w = 40".into(),
            grid.iter()
                .map(|&x| (x, fixed_window_model(x / 100.0)))
                .collect(),
        ));
        series.push((
            "Mathis 1.22/sqrt(p)".into(),
            grid.iter().map(|&x| (x, mathis(x / 100.0))).collect(),
        ));
        series.push((
            "PFTK (T0 = 2 RTT)".into(),
            grid.iter()
                .map(|&x| (x, pftk(x / 100.0, RTT_S, 2.0 * RTT_S) * PKT * 8.0 / RATE))
                .collect(),
        ));
        let p1 = ctx.out.join("efficiency-vs-loss.svg");
        plots::lines(
            &p1,
            "Satnet (40 kb/s, 2.048 s): share of the channel vs random loss",
            "packet loss (%)",
            "goodput / channel data rate",
            &series,
            true,
        )?;
        let p2 = ctx.out.join("tseq-vanilla.svg");
        plots::time_sequence_titled(
            &at(0, 1)[0],
            0,
            &p2,
            "vanilla 4.3BSD at 1% loss: timeouts and go-back-N",
            Some(120.0),
        )?;
        let p3 = ctx.out.join("tseq-tahoe.svg");
        plots::time_sequence_titled(
            &at(1, 1)[0],
            0,
            &p3,
            "Tahoe at 1% loss: the window held near 12 packets",
            Some(120.0),
        )?;

        Ok(Section {
            quote: "it takes 40 256-byte packets to fill the Satnet pipe. Satnet currently shows a random, 1% average packet loss. The maximum throughput a vanilla tcp could achieve at this loss rate is 56% of the 40kbs channel bandwidth. The maximum throughput our TCP can achieve at this loss rate is 49% of the channel bandwidth.".into(),
            quote_source: "seed 000_a2655ca5932a6b6b.txt, 11 Feb 1988".into(),
            setup: format!(
                "A 10 Mb/s host link, then a 40 kb/s channel with a 2.048 s unloaded round trip (40 packet times); 256-byte packets (MSS 216), a receiver window of 40 packets that ACKs every packet; Bernoulli loss on the data packets of the channel at 0.3%, 1% and 3%; {} s per run, {} seeds. Efficiency = goodput / channel data rate ({:.2} kb/s). vanilla_4_3bsd = no congestion window, RFC 793 timer (alpha 0.9, beta 2, 1 s floor), Karn, backoff, go-back-N after a timeout, no fast retransmit; the receiver caches out-of-order data. Tahoe = slow start, congestion avoidance, Jacobson's timer, fast retransmit then slow start. Reno = Tahoe with the 1990 fast recovery.",
                dur, n, data_rate() / 1e3
            ),
            claims,
            tables: vec![
                Table {
                    caption: "Goodput / channel data rate (mean ± sd over seeds) and the models".into(),
                    header: vec!["loss".into(), "vanilla 4.3BSD".into(), "Tahoe".into(), "Reno".into(), "(1+2pw)^-1".into(), "Mathis".into(), "PFTK, T0 = 2 RTT".into()],
                    rows,
                },
                Table {
                    caption: "How vanilla 4.3BSD pays for its losses (per run)".into(),
                    header: vec!["loss".into(), "data packets lost".into(), "timeouts".into(), "losses per timeout".into(), "dead time per timeout (RTT)".into(), "efficiency".into()],
                    rows: mech,
                },
            ],
            plots: vec![p1, p2, p3],
            discussion: format!(
                "Which TCP is the 56%? The number is JK88's footnote-6 model, (1+2pw)^-1 with w = 40 and p = 0.01: a fixed-window RFC 793 TCP with a per-segment timer that resends only the lost segment, so that every loss costs 2 RTT. We ran our vanilla_4_3bsd unchanged rather than a configuration built to reproduce the formula, because the claim is about what a vanilla TCP gets; the engine cannot resend only the timed-out segment after a timeout anyway (4.3BSD goes back N). Its mechanism differs from the model in two ways that nearly cancel: the single BSD timer is restarted by every ACK of new data, so after a loss it fires about 1 RTT + 2 srtt after the lost packet was sent, and the go-back-N resend then spends another RTT of channel time on packets the receiver already holds, in all ~{dead_rtt:.1} RTT per timeout instead of 2; but one timeout repairs every loss of the window, {per_to:.2} on average at 1%. Pinning the RTO to 1 RTT, so that the timer fires 2 RTT after the lost packet was sent as in the model, does not realise the model either: the ACKs of the data sent after a go-back-N resend come back later than one RTT and the timer fires again ({pinned_to:.0} timeouts per run instead of {plain_to:.0}; efficiency {pinned_eff:.2}). The new TCP: {mt:.2} for Tahoe and {mr:.2} for Reno against the published 49%, a factor of two below; REFERENCES S-b shows that 49% is above every steady-state model of a TCP that halves its window on each loss, so we report the gap and do not tune toward it. The seed's own next paragraph already points the way out: with a receiver window of twice the pipe, a sender that estimates the pipe separately 'would translate [1% loss] into a 1% throughput effect, not a factor-of-two effect' (experiment 8)."
            ),
            ..Section::default()
        })
    }
}
