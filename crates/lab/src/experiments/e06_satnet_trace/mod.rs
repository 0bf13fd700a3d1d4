//! Experiment 6: the Satnet trace of March 1988 and the error-rate rule for fat pipes
//! (seed 004, 7 Mar 1988; REFERENCES S-c, with the footnote-6 model of A4).

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_gateway::{DropTailConfig, ImpairmentsConfig, QdiscConfig};
use ackclock_sim::scenario::LinkSpec;
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::TraceKind;
use anyhow::Result;

pub struct SatnetTrace;

const TEXT: &str = include_str!("scenario.toml");

/// The trace's numbers: segment size, user data rate (bytes/s), round trip, bit error rate.
const SEG: f64 = 420.0;
const DATA_BPS: f64 = 4000.0;
const RTT_S: f64 = 2.2;
const BER: f64 = 1.8e-6;

/// The DS3 of the seed's lesson: 45 Mb/s, 90 ms, 4352-byte packets.
const DS3_RATE: f64 = 45e6;
const DS3_RTT: f64 = 0.09;
const DS3_PKT: usize = 4352;
/// BER x bandwidth x delay (bits) of the sweep.
const X_FULL: [f64; 7] = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0];
const X_QUICK: [f64; 3] = [0.01, 0.1, 1.0];

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn sd(v: &[f64]) -> f64 {
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len().max(2) - 1) as f64).sqrt()
}

/// The pipe in packets of the Satnet path, from the seed's numbers.
fn pipe() -> f64 {
    RTT_S * DATA_BPS / SEG
}

/// Footnote 6: (1 + 2pw)^-1.
fn model(p: f64, w: f64) -> f64 {
    1.0 / (1.0 + 2.0 * p * w)
}

/// Probability that a packet of `bytes` carries at least one bit error.
fn pkt_err(ber: f64, bytes: f64) -> f64 {
    1.0 - (1.0 - ber).powf(8.0 * bytes)
}

fn ds3_bdp_bits() -> f64 {
    DS3_RATE * DS3_RTT
}

fn ds3_pipe() -> f64 {
    ds3_bdp_bits() / (DS3_PKT as f64 * 8.0)
}

/// A Satnet-path run: `tcp`, receiver window in bytes, BER, seed.
fn satnet(base: &Scenario, tcp: &str, rwnd: usize, ber: f64, seed: u64, dur: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = dur;
    let f = &mut s.flow[0];
    f.tcp = tcp.to_string();
    f.tcp_overrides.recv_buffer_bytes = Some(rwnd);
    s.link[1].impair_ab = (ber > 0.0).then(|| ImpairmentsConfig {
        ber: Some(ber),
        ..Default::default()
    });
    s
}

/// A DS3 run: one 45 Mb/s link of 90 ms round trip, BER = x / bdp. `vanilla` is the
/// footnote-6 model TCP (window = pipe, timer floored at 2 RTT); otherwise Tahoe with a
/// window of two pipes and a pipe of buffer.
fn ds3(base: &Scenario, vanilla: bool, x: f64, seed: u64, rtts: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = rtts * DS3_RTT;
    s.output.trace = true;
    s.node.retain(|n| n.name != "gw");
    let pkt_s = DS3_PKT as f64 * 8.0 / DS3_RATE;
    let ack_s = 40.0 * 8.0 / DS3_RATE;
    let w = ds3_pipe().floor() as usize;
    let link: LinkSpec = LinkSpec {
        a: "snd".into(),
        b: "rcv".into(),
        rate_bps: DS3_RATE,
        delay_ms: (DS3_RTT - pkt_s - ack_s) / 2.0 * 1e3,
        mtu_bytes: DS3_PKT,
        queue: Some(QdiscConfig::DropTail(DropTailConfig {
            limit_pkts: Some(if vanilla { 2 * w } else { w }),
            limit_bytes: None,
        })),
        impair_ab: Some(ImpairmentsConfig {
            ber: Some(x / ds3_bdp_bits()),
            ..Default::default()
        }),
        ..s.link[1].clone()
    };
    s.link = vec![link];
    let f = &mut s.flow[0];
    let mss = DS3_PKT - 40;
    f.tcp_overrides.mss = Some(mss as u16);
    f.tcp_overrides.window_scale = Some(true);
    f.tcp_overrides.send_buffer_bytes = Some(8 * w * mss);
    if vanilla {
        f.tcp = "vanilla_4_3bsd".into();
        f.tcp_overrides.recv_buffer_bytes = Some(w * mss);
        f.tcp_overrides.rto_min_ms = Some(2.0 * DS3_RTT * 1e3);
    } else {
        f.tcp = "tahoe".into();
        f.tcp_overrides.recv_buffer_bytes = Some(2 * w * mss);
    }
    s
}

/// Goodput (bytes/s) from the sender's ACKs after `from_s`.
fn goodput_after(r: &RunResult, from_s: f64) -> f64 {
    let mut first = None;
    let mut last = None;
    for e in &r.traces[0] {
        let t = e.time.as_nanos() as f64 / 1e9;
        if let TraceKind::Ack { ack } = e.kind {
            if t >= from_s {
                first.get_or_insert((t, ack));
                last = Some((t, ack));
            }
        }
    }
    match (first, last) {
        (Some((_, a)), Some((_, b))) => {
            f64::from(b.since(a)) / (r.summary.duration_s - from_s).max(1e-9)
        }
        _ => 0.0,
    }
}

fn eff(r: &RunResult) -> f64 {
    r.summary.flows[0].goodput_bps / 8.0 / DATA_BPS
}

impl Experiment for SatnetTrace {
    fn name(&self) -> &'static str {
        "satnet_trace"
    }
    fn title(&self) -> &'static str {
        "6. A Satnet trace: best possible 78%, and the error-rate rule for fat pipes"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, quick: bool, seeds: u64) -> u64 {
        let xs = if quick { X_QUICK.len() } else { X_FULL.len() };
        2 + 6 * seeds + 2 * xs as u64 * seeds
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("satnet_trace", TEXT)?;
        let n = ctx.seeds as usize;
        let dur = if ctx.quick { 500.0 } else { base.duration_s };
        let seg = SEG as usize;
        let w21 = 21 * seg;
        let kb16 = 16 * 1024;
        let kb8 = 8 * 1024;
        // The Satnet runs, by group of seeds: vanilla w = 21, vanilla w = 20, fixed window
        // with fast retransmit, Tahoe 16 KB, Tahoe 8 KB, Tahoe 16 KB at a tenth of the BER.
        let mut scen = Vec::new();
        for k in 0..ctx.seeds {
            scen.push(satnet(&base, "vanilla_4_3bsd", w21, BER, 1 + k, dur));
        }
        for k in 0..ctx.seeds {
            scen.push(satnet(&base, "vanilla_4_3bsd", 20 * seg, BER, 1 + k, dur));
        }
        for k in 0..ctx.seeds {
            let mut s = satnet(&base, "reno", w21, BER, 1 + k, dur);
            s.flow[0].tcp_overrides.cc = Some("none".into());
            scen.push(s);
        }
        for (rwnd, ber) in [(kb16, BER), (kb8, BER), (kb16, BER / 10.0)] {
            for k in 0..ctx.seeds {
                scen.push(satnet(&base, "tahoe", rwnd, ber, 1 + k, dur));
            }
        }
        // The lossless run that measures the pipe (deterministic: one seed).
        let mut cal = satnet(&base, "tahoe", kb16, 0.0, 1, 300.0);
        cal.output.trace = true;
        scen.push(cal);
        let res = ctx.run_all(scen)?;
        let group = |g: usize| -> &[RunResult] { &res[g * n..(g + 1) * n] };
        let effs = |g: usize| -> Vec<f64> { group(g).iter().map(eff).collect() };
        let cal = &res[6 * n];

        // The pipe: the data rate the lossless flow reaches times the unloaded RTT (its
        // smallest sample, taken while the window is one packet).
        let min_rtt = cal.traces[0]
            .iter()
            .filter_map(|e| match e.kind {
                TraceKind::RttSample { rtt } => Some(rtt.as_secs_f64()),
                _ => None,
            })
            .fold(f64::INFINITY, f64::min);
        let rate = goodput_after(cal, 60.0);
        let pipe_meas = rate * min_rtt / SEG;

        // The loss rate of the channel in every BER 1.8e-6 run.
        let (mut bad, mut pkts) = (0u64, 0u64);
        for g in [0, 1, 2, 3, 4] {
            for r in group(g) {
                if let Some(l) = r.summary.links.iter().find(|l| l.name == "gw-rcv") {
                    bad += l.corrupted + l.lost_on_wire;
                    pkts += l.packets;
                }
            }
        }
        let loss = bad as f64 / pkts.max(1) as f64;

        let v21 = mean(&effs(0));
        let v20 = mean(&effs(1));
        let fr = mean(&effs(2));
        let t16 = mean(&effs(3));
        let t8 = mean(&effs(4));
        let t16b = mean(&effs(5));
        let timeouts: f64 = group(0)
            .iter()
            .map(|r| r.summary.flows[0].timeouts as f64)
            .sum();
        let lost: f64 = group(0)
            .iter()
            .filter_map(|r| r.summary.links.iter().find(|l| l.name == "gw-rcv"))
            .map(|l| (l.corrupted + l.lost_on_wire) as f64)
            .sum();

        // The DS3 sweep, one loss level at a time (traces are dropped as soon as read).
        let xs: &[f64] = if ctx.quick { &X_QUICK } else { &X_FULL };
        let rtts = if ctx.quick { 150.0 } else { 250.0 };
        let warm = 20.0 * DS3_RTT;
        let data_rate = DS3_RATE * (DS3_PKT - 40) as f64 / DS3_PKT as f64 / 8.0;
        let mut ds3_rows = Vec::new();
        let mut pts_v = Vec::new();
        let mut pts_t = Vec::new();
        for &x in xs {
            let mut scen = Vec::new();
            for v in [true, false] {
                for k in 0..ctx.seeds {
                    scen.push(ds3(&base, v, x, 1 + k, rtts));
                }
            }
            let r = ctx.run_all(scen)?;
            let e: Vec<f64> = r
                .iter()
                .map(|r| goodput_after(r, warm) / data_rate)
                .collect();
            let (ev, et) = (&e[..n], &e[n..]);
            let p = pkt_err(x / ds3_bdp_bits(), DS3_PKT as f64);
            let mathis = (1.22 / p.sqrt() / ds3_pipe()).min(1.0);
            ds3_rows.push(vec![
                format!("{x}"),
                format!("{:.2e}", x / ds3_bdp_bits()),
                format!("{:.2e}", p),
                format!("{:.3} ± {:.3}", mean(ev), sd(ev)),
                format!("{:.3}", model(p, ds3_pipe())),
                format!("{:.3} ± {:.3}", mean(et), sd(et)),
                format!("{mathis:.3}"),
            ]);
            pts_v.push((x, mean(ev)));
            pts_t.push((x, mean(et)));
        }
        let find = |pts: &[(f64, f64)], x: f64| {
            pts.iter()
                .find(|p| (p.0 - x).abs() < 1e-12)
                .map_or(f64::NAN, |p| p.1)
        };
        let (v01, t01) = (find(&pts_v, 0.01), find(&pts_t, 0.01));
        let (v1, t1) = (find(&pts_v, 1.0), find(&pts_t, 1.0));
        // Judged on the footnote-6 model TCP, whose arithmetic the rule comes from; Tahoe's
        // knee depends on the pipe as well (see the note).
        let rule_ok = v01 >= 0.9 && v1 <= 0.5;

        let e = self.name();
        let best_ok = (0.75..=0.80).contains(&v21);
        let window_gain = t8 / t16 - 1.0;
        let ber_gain = t16b / t16 - 1.0;
        let claims = vec![
            judged(
                &base,
                e,
                "pipe_21",
                format!("{pipe_meas:.1} ({:.0} B/s x {:.3} s)", rate, min_rtt),
                Verdict::of((20.0..=22.0).contains(&pipe_meas)),
                "",
            )?,
            judged(
                &base,
                e,
                "loss_07",
                format!("{:.2}% ({bad} of {pkts})", loss * 100.0),
                Verdict::of((0.005..=0.009).contains(&loss)),
                format!(
                    "1-(1-BER)^(460 x 8) = {:.2}% for a 460-byte packet",
                    pkt_err(BER, SEG + 40.0) * 100.0
                ),
            )?,
            judged(
                &base,
                e,
                "best_78",
                format!("{v21:.3} (w = 21; w = 20: {v20:.3})"),
                if best_ok { Verdict::Pass } else { Verdict::Disagree },
                format!(
                    "(1+2pw)^-1 = {:.3} at w = 21. Our vanilla 4.3BSD pays ~3 RTT of channel time per timeout (the timer restarts on the last good ACK; go-back-N resends the window) and at pw = {:.2} seldom repairs two losses with one timeout ({:.2} losses per timeout), so it lands below the model{}. A fixed window of 21 with fast retransmit (no congestion control) gets {fr:.3}: a TCP that detects a loss in 1 RTT beats the \"best possible\", which assumes 2 RTT per loss.",
                    model(pkt_err(BER, SEG + 40.0), 21.0),
                    pkt_err(BER, SEG + 40.0) * 21.0,
                    lost / timeouts.max(1.0),
                    if best_ok { "" } else { "; the claim's 2 RTT per loss is a model detail the BSD timer does not have" },
                ),
            )?,
            judged(
                &base,
                e,
                "xtcp_58",
                format!("{t16:.3} (sd {:.3})", sd(&effs(3))),
                if (0.40..=0.58).contains(&t16) { Verdict::Pass } else { Verdict::Disagree },
                "",
            )?,
            judged(
                &base,
                e,
                "window_pipe",
                format!("{:+.0}% ({t8:.3} vs {t16:.3})", window_gain * 100.0),
                if (0.05..=0.25).contains(&window_gain) { Verdict::Pass } else { Verdict::Disagree },
                if (0.05..=0.25).contains(&window_gain) {
                    String::new()
                } else {
                    "With random loss only and 42 packets of buffer, a 16 KB window costs nothing but queueing delay: Tahoe's window rarely exceeds the 21-packet pipe between losses at 0.66%. The trace's gain came from what we do not model: its four congestion losses at a full Satnet queue and the 'window shrinking' of the xtcp of the time.".to_string()
                },
            )?,
            judged(
                &base,
                e,
                "ber_tenth",
                format!("{:+.0}% ({t16b:.3} vs {t16:.3})", ber_gain * 100.0),
                if (0.6..=1.2).contains(&ber_gain) { Verdict::Pass } else { Verdict::Disagree },
                "",
            )?,
            judged(
                &base,
                e,
                "ber_rule",
                format!("x = 0.01: {v01:.2} / {t01:.2}; x = 1: {v1:.2} / {t1:.2} (model TCP / Tahoe)"),
                Verdict::of(rule_ok),
                format!(
                    "Judged on the model TCP (window = pipe, timeouts): the rule is its arithmetic. x = BER x bandwidth x delay is the expected number of damaged packets per window (p w). The pipe here is {:.0} packets; for an AIMD TCP the knee is where 1.22/sqrt(p) = w, i.e. x = 1.5/w, so on a DS3 with 1500-byte packets ({:.0} of them) the .01/bdp rule would not be enough for Tahoe (x = {:.4}).",
                    ds3_pipe(),
                    ds3_bdp_bits() / 12000.0,
                    1.5 / (ds3_bdp_bits() / 12000.0)
                ),
            )?,
        ];

        let p1 = ctx.out.join("ber-rule-ds3.svg");
        let grid: Vec<f64> = (0..=24)
            .map(|i| 10f64.powf(-3.0 + f64::from(i) / 8.0))
            .collect();
        plots::lines(
            &p1,
            "DS3 (45 Mb/s, 90 ms, 4 Mb bdp): efficiency vs BER x bandwidth x delay",
            "BER x bandwidth x delay (damaged packets per window)",
            "goodput / data rate",
            &[
                ("vanilla, window = pipe, RTO 2 RTT".into(), pts_v.clone()),
                (
                    "Tahoe, window = 2 pipes, buffer = pipe".into(),
                    pts_t.clone(),
                ),
                (
                    "(1+2x)^-1".into(),
                    grid.iter().map(|&x| (x, 1.0 / (1.0 + 2.0 * x))).collect(),
                ),
                (
                    "Mathis, min(1, 1.22/sqrt(x w))".into(),
                    grid.iter()
                        .map(|&x| (x, (1.22 / (x * ds3_pipe()).sqrt()).min(1.0)))
                        .collect(),
                ),
            ],
            true,
        )?;
        let p2 = ctx.out.join("tseq-tahoe-16k.svg");
        let mut one = satnet(&base, "tahoe", kb16, BER, 1, 200.0);
        one.output.trace = true;
        let r1 = ctx.run_one(&one)?;
        plots::time_sequence_titled(
            &r1,
            0,
            &p2,
            "Tahoe (xtcp), 16 KB window, BER 1.8e-6",
            Some(200.0),
        )?;

        let rows = vec![
            vec![
                "vanilla 4.3BSD, window 21 (the pipe)".into(),
                format!("{v21:.3} ± {:.3}", sd(&effs(0))),
                format!("{:.3}", model(pkt_err(BER, SEG + 40.0), 21.0)),
            ],
            vec![
                "vanilla 4.3BSD, window 20".into(),
                format!("{v20:.3} ± {:.3}", sd(&effs(1))),
                format!(
                    "{:.3} (x 20/pipe)",
                    model(pkt_err(BER, SEG + 40.0), 20.0) * (20.0 / pipe()).min(1.0)
                ),
            ],
            vec![
                "window 21 + fast retransmit, no congestion control".into(),
                format!("{fr:.3} ± {:.3}", sd(&effs(2))),
                format!(
                    "{:.3} (1 RTT per loss)",
                    1.0 / (1.0 + pkt_err(BER, SEG + 40.0) * 21.0)
                ),
            ],
            vec![
                "Tahoe, 16 KB window".into(),
                format!("{t16:.3} ± {:.3}", sd(&effs(3))),
                "".into(),
            ],
            vec![
                "Tahoe, 8 KB window".into(),
                format!("{t8:.3} ± {:.3}", sd(&effs(4))),
                "".into(),
            ],
            vec![
                "Tahoe, 16 KB window, BER 1.8e-7".into(),
                format!("{t16b:.3} ± {:.3}", sd(&effs(5))),
                "".into(),
            ],
        ];
        Ok(Section {
            quote: "17 losses for 2400 packets --> .7% avg loss rate or 144 packets between losses on the average. The Satnet pipe size is 2.2 sec * ~4KBs (user data bandwidth) = 8.8KB / 420 B/packet = 21 packets. Thus for every 144/21 = 7 windows of data we transfer, we let the pipe sit empty for 2 rtt while we recover from a loss. So the best throughput any tcp could get at this error rate is 7/9 = 78% of the available bandwidth. ... the error rate on a link with a large bandwidth-delay product *must* be small, at most .01/(bandwidth delay), or you're going to take a big throughput hit".into(),
            quote_source: "seed 004_2d5bebbc4a7c34a2.txt, 7 Mar 1988".into(),
            setup: format!(
                "Satnet: a 10 Mb/s host link, then a 35.05 kb/s channel (4000 B/s of 420-byte segments in 460-byte packets) with a 2.2 s unloaded round trip (pipe {:.2} packets by the seed's numbers), 42 packets of buffer (2 x bandwidth x delay), bit errors at 1.8e-6 on the data direction, a receiver that ACKs every packet; {dur} s per run, {n} seeds. Efficiency = goodput / 4000 B/s. DS3: one 45 Mb/s link, 90 ms round trip, 4352-byte packets ({:.1} fill the pipe of {:.2e} bits), BER = x / bdp for x = {:?}, {rtts} round trips per run, goodput after the first 20 round trips; the model TCP is vanilla 4.3BSD with a window of {} packets and its timer floored at 2 RTT, Tahoe has a window of two pipes and a pipe of drop-tail buffer.",
                pipe(), ds3_pipe(), ds3_bdp_bits(), xs, ds3_pipe().floor()
            ),
            claims,
            tables: vec![
                Table {
                    caption: "Satnet, BER 1.8e-6: goodput / data rate (mean ± sd over seeds)".into(),
                    header: vec!["TCP".into(), "efficiency".into(), "footnote-6 model".into()],
                    rows,
                },
                Table {
                    caption: "DS3: goodput / data rate against BER x bandwidth x delay".into(),
                    header: vec!["x = BER x bdp".into(), "BER".into(), "packet loss".into(), "vanilla, window = pipe".into(), "(1+2pw)^-1".into(), "Tahoe".into(), "Mathis".into()],
                    rows: ds3_rows,
                },
            ],
            plots: vec![p1, p2],
            discussion: format!(
                "The trace's arithmetic holds: 1.8e-6 errors per bit is {:.2}% of 460-byte packets, and the path holds {pipe_meas:.1} packets. The 78% is the footnote-6 model with 2 RTT per loss. Our vanilla TCP with a window of the pipe measures {v21:.2}: a timeout costs it ~3 RTT, not 2, as in experiment 5, but here (pw = {:.2}) one timeout rarely covers two losses, so nothing offsets the third RTT. With fast retransmit the same fixed window gets {fr:.2}, above the \"best possible\": the bound is for a TCP that needs a timeout to find a loss, which the fast retransmit of 4.3BSD-Tahoe (later in 1988) removed. The xtcp (Tahoe) lands at {t16:.2}, between the 40% the trace delivered and the 58% Van expected; dividing the error rate by ten nearly doubles it ({:+.0}%), as the seed says. The 8 KB window does not help here ({:+.0}%): the seed's 15% came from the trace's congestion losses at a full queue, which a 2 x bandwidth x delay buffer does not have. On the DS3 the model TCP follows (1+2x)^-1 ({v01:.2} at x = 0.01, {v1:.2} at x = 1) and Tahoe keeps {t01:.2} at x = 0.01 but {t1:.2} at x = 1: at the rule's limit the hit is small for both, above it it grows fast, and faster for Tahoe, whose knee (x = 1.5/w) falls below 0.01 once the pipe holds more than 150 packets.",
                pkt_err(BER, SEG + 40.0) * 100.0,
                pkt_err(BER, SEG + 40.0) * 21.0,
                ber_gain * 100.0,
                window_gain * 100.0,
            ),
            ..Section::default()
        })
    }
}
