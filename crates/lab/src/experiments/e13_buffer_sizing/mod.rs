//! Experiment 13: buffer sizing, a bandwidth-delay product (or two) at the bottleneck
//! (seed 004, 7 Mar 1988; seed 000/001, 30 Apr 1990).

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_gateway::{DropTailConfig, QdiscConfig};
use ackclock_sim::scenario::{FlowSpec, LinkSpec, NodeSpec};
use ackclock_sim::{component_seed, RunResult, Scenario};
use ackclock_tcp::TraceKind;
use anyhow::Result;

pub struct BufferSizing;

const TEXT: &str = include_str!("scenario.toml");
/// Bandwidth-delay product of the path in packets (10 Mb/s x 120 ms / 1500 bytes).
const BDP: f64 = 100.0;
const RATE: f64 = 10e6;
const MSS: f64 = 1460.0;
const WARM_S: f64 = 10.0;
const B_FULL: [f64; 6] = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0];
const B_QUICK: [f64; 4] = [0.1, 0.25, 1.0, 2.0];
/// (flows, tcp) configurations; one flow alone is deterministic (one run), 8 flows vary
/// with the seed.
const ONE: [&str; 3] = ["tahoe", "reno", "newreno"];
const MANY: [&str; 2] = ["reno", "newreno"];
const ONE_QUICK: [&str; 2] = ["tahoe", "reno"];
const MANY_QUICK: [&str; 1] = ["newreno"];
const N_MANY: usize = 8;

fn configs(
    quick: bool,
) -> (
    &'static [f64],
    &'static [&'static str],
    &'static [&'static str],
) {
    if quick {
        (&B_QUICK, &ONE_QUICK, &MANY_QUICK)
    } else {
        (&B_FULL, &ONE, &MANY)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// A uniform draw in [0, 1) from the seed and a label.
fn unit(seed: u64, label: &str) -> f64 {
    (component_seed(seed, label) >> 11) as f64 / (1u64 << 53) as f64
}

/// The dumbbell with `n` pairs, `b` packets of bottleneck buffer and `tcp` flows.
fn variant(base: &Scenario, n: usize, b: usize, tcp: &str, seed: u64, dur: f64) -> Scenario {
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = dur;
    let node = |name: String| NodeSpec {
        name,
        ..base.node[0].clone()
    };
    let proto_l = base.link[0].clone();
    let proto_r = base.link[2].clone();
    let mut bottleneck: LinkSpec = base.link[1].clone();
    bottleneck.queue = Some(QdiscConfig::DropTail(DropTailConfig {
        limit_pkts: Some(b),
        limit_bytes: None,
    }));
    let routers: Vec<NodeSpec> = base.node[2..].to_vec();
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    let mut flows = Vec::new();
    let share = (((BDP + b as f64) / n as f64).max(2.0) * MSS) as u32;
    for i in 1..=n {
        let (l, r) = (format!("left{i}"), format!("right{i}"));
        nodes.push(node(l.clone()));
        nodes.push(node(r.clone()));
        let mut a = proto_l.clone();
        a.a = l.clone();
        if n > 1 {
            // Different round trips (1-6 ms of access delay) so the flows do not move in
            // lock-step through the drop-tail queue.
            a.delay_ms = 1.0 + 5.0 * unit(seed, &format!("access/{i}"));
        }
        links.push(a);
        let mut c = proto_r.clone();
        c.b = r.clone();
        links.push(c);
        let mut f: FlowSpec = base.flow[0].clone();
        f.from = l;
        f.to = r;
        f.tcp = tcp.to_string();
        f.tcp_overrides.initial_ssthresh_bytes = Some(share);
        if n > 1 {
            f.start_s = 2.0 * unit(seed, &format!("start/{i}"));
        }
        flows.push(f);
    }
    nodes.extend(routers);
    links.push(bottleneck);
    s.node = nodes;
    s.link = links;
    s.flow = flows;
    s
}

/// Goodput of all flows after `from_s`, as a share of the bottleneck's data rate.
fn utilization(r: &RunResult, from_s: f64) -> f64 {
    let mut bytes = 0.0;
    for tr in &r.traces {
        let mut first = None;
        let mut last = None;
        for e in tr {
            if let TraceKind::Ack { ack } = e.kind {
                if e.time.as_nanos() as f64 / 1e9 >= from_s {
                    first.get_or_insert(ack);
                    last = Some(ack);
                }
            }
        }
        if let (Some(a), Some(b)) = (first, last) {
            bytes += f64::from(b.since(a));
        }
    }
    bytes * 8.0 / (r.summary.duration_s - from_s) / (RATE * MSS / (MSS + 40.0))
}

/// Drops at the bottleneck / packets offered to it.
fn loss(r: &RunResult) -> f64 {
    r.summary
        .links
        .iter()
        .find(|l| l.name == "gw_left-gw_right")
        .map_or(0.0, |l| {
            l.queue_drops as f64 / (l.packets + l.queue_drops).max(1) as f64
        })
}

impl Experiment for BufferSizing {
    fn name(&self) -> &'static str {
        "buffer_sizing"
    }
    fn title(&self) -> &'static str {
        "13. Buffer sizing: a bandwidth-delay product at the bottleneck"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, quick: bool, seeds: u64) -> u64 {
        let (bs, one, many) = configs(quick);
        (bs.len() * one.len()) as u64 + (bs.len() * many.len()) as u64 * seeds
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("buffer_sizing", TEXT)?;
        let (bs, one, many) = configs(ctx.quick);
        let n = ctx.seeds as usize;
        let dur1 = if ctx.quick { 60.0 } else { base.duration_s };
        let dur8 = if ctx.quick { 25.0 } else { 40.0 };
        let bufs: Vec<usize> = bs.iter().map(|&x| (x * BDP).round() as usize).collect();

        // One flow: one run per (tcp, buffer). Keep two runs for the queue plot.
        let mut scen = Vec::new();
        for tcp in one {
            for &b in &bufs {
                scen.push(variant(&base, 1, b, tcp, 1, dur1));
            }
        }
        let r1 = ctx.run_all(scen)?;
        let u1: Vec<Vec<f64>> = (0..one.len())
            .map(|t| {
                (0..bufs.len())
                    .map(|j| utilization(&r1[t * bufs.len() + j], WARM_S))
                    .collect()
            })
            .collect();
        let l1: Vec<Vec<f64>> = (0..one.len())
            .map(|t| {
                (0..bufs.len())
                    .map(|j| loss(&r1[t * bufs.len() + j]))
                    .collect()
            })
            .collect();
        let reno_i = one.iter().position(|&t| t == "reno").unwrap_or(0);
        let qplot = ctx.out.join("queue-reno-1flow.svg");
        let j_small = bs
            .iter()
            .position(|&x| (x - 0.25).abs() < 1e-9)
            .unwrap_or(0);
        let j_one = bs.iter().position(|&x| (x - 1.0).abs() < 1e-9).unwrap_or(0);
        let j_two = bs.iter().position(|&x| (x - 2.0).abs() < 1e-9).unwrap_or(0);
        let j_tenth = bs.iter().position(|&x| (x - 0.1).abs() < 1e-9).unwrap_or(0);
        plots::queues(&r1[reno_i * bufs.len() + j_one], &qplot)?;
        let tplot = ctx.out.join("tseq-reno-1flow-quarter-bdp.svg");
        plots::time_sequence_titled(
            &r1[reno_i * bufs.len() + j_small],
            0,
            &tplot,
            "one Reno flow, buffer 0.25 bdp",
            Some(dur1),
        )?;
        drop(r1);

        // Eight flows: seeds per (tcp, buffer), run a group at a time so that the traces
        // are dropped once read.
        let mut u8_: Vec<Vec<f64>> = Vec::new();
        let mut l8: Vec<Vec<f64>> = Vec::new();
        let mut jain8: Vec<Vec<f64>> = Vec::new();
        for tcp in many {
            let (mut us, mut ls, mut js) = (Vec::new(), Vec::new(), Vec::new());
            for &b in &bufs {
                let scen = (0..ctx.seeds)
                    .map(|k| variant(&base, N_MANY, b, tcp, 1 + k, dur8))
                    .collect();
                let r = ctx.run_all(scen)?;
                us.push(mean(
                    &r.iter().map(|r| utilization(r, WARM_S)).collect::<Vec<_>>(),
                ));
                ls.push(mean(&r.iter().map(loss).collect::<Vec<_>>()));
                js.push(mean(
                    &r.iter()
                        .filter_map(|r| r.summary.jain_fairness)
                        .collect::<Vec<_>>(),
                ));
            }
            u8_.push(us);
            l8.push(ls);
            jain8.push(js);
        }

        // Table and plots.
        let mut rows = Vec::new();
        for (j, &x) in bs.iter().enumerate() {
            let mut row = vec![format!("{x}"), bufs[j].to_string()];
            for t in 0..one.len() {
                row.push(format!("{:.3} ({:.2}%)", u1[t][j], l1[t][j] * 100.0));
            }
            for t in 0..many.len() {
                row.push(format!(
                    "{:.3} ({:.2}%, J {:.2})",
                    u8_[t][j],
                    l8[t][j] * 100.0,
                    jain8[t][j]
                ));
            }
            rows.push(row);
        }
        let mut header = vec!["buffer / bdp".to_string(), "packets".to_string()];
        header.extend(one.iter().map(|t| format!("1 {t}")));
        header.extend(many.iter().map(|t| format!("{N_MANY} {t}")));
        let mut su = Vec::new();
        let mut sl = Vec::new();
        for (t, tcp) in one.iter().enumerate() {
            su.push((
                format!("1 {tcp}"),
                bs.iter().copied().zip(u1[t].iter().copied()).collect(),
            ));
            sl.push((
                format!("1 {tcp}"),
                bs.iter()
                    .copied()
                    .zip(l1[t].iter().map(|x| x * 100.0))
                    .collect(),
            ));
        }
        for (t, tcp) in many.iter().enumerate() {
            su.push((
                format!("{N_MANY} {tcp}"),
                bs.iter().copied().zip(u8_[t].iter().copied()).collect(),
            ));
            sl.push((
                format!("{N_MANY} {tcp}"),
                bs.iter()
                    .copied()
                    .zip(l8[t].iter().map(|x| x * 100.0))
                    .collect(),
            ));
        }
        let p1 = ctx.out.join("utilization-vs-buffer.svg");
        plots::lines(
            &p1,
            "Bottleneck utilization vs buffer (10 Mb/s, 120 ms, bdp 100 packets)",
            "buffer / bandwidth-delay product",
            "goodput / data rate",
            &su,
            false,
        )?;
        let p2 = ctx.out.join("loss-vs-buffer.svg");
        plots::lines(
            &p2,
            "Drop rate at the bottleneck vs buffer",
            "buffer / bandwidth-delay product",
            "drops / packets offered (%)",
            &sl,
            false,
        )?;

        // Judgements.
        let newreno_one = one.iter().position(|&t| t == "newreno");
        let tahoe_i = one.iter().position(|&t| t == "tahoe");
        let reno1 = u1[reno_i][j_one];
        let one_ok = reno1 >= 0.95;
        let fragile = u1[reno_i][j_tenth] <= reno1 - 0.05;
        let mut at2: Vec<(String, f64)> = one
            .iter()
            .enumerate()
            .map(|(t, tcp)| (format!("1 {tcp}"), u1[t][j_two]))
            .collect();
        at2.extend(
            many.iter()
                .enumerate()
                .map(|(t, tcp)| (format!("{N_MANY} {tcp}"), u8_[t][j_two])),
        );
        let (worst_name, worst) =
            at2.iter()
                .cloned()
                .fold((String::new(), f64::INFINITY), |a, b| {
                    if b.1 < a.1 {
                        b
                    } else {
                        a
                    }
                });
        let nr8 = many.iter().position(|&t| t == "newreno").unwrap_or(0);
        let nr1 = newreno_one.unwrap_or(reno_i);
        let e = self.name();
        let claims = vec![
            judged(
                &base,
                e,
                "one_bdp",
                format!(
                    "Reno {reno1:.3}{}",
                    newreno_one.map_or(String::new(), |t| format!(", NewReno {:.3}", u1[t][j_one]))
                ),
                Verdict::of(one_ok),
                "",
            )?,
            judged(
                &base,
                e,
                "less_is_fragile",
                format!(
                    "{:.3} at 0.1, {:.3} at 0.25, {reno1:.3} at 1 bdp",
                    u1[reno_i][j_tenth], u1[reno_i][j_small]
                ),
                Verdict::of(fragile),
                "after each halving the window (bdp + B)/2 is below the pipe and the link idles until it grows back",
            )?,
            judged(
                &base,
                e,
                "two_bdp",
                format!("{worst:.3} ({worst_name})"),
                Verdict::of(worst >= 0.95),
                "",
            )?,
            judged(
                &base,
                e,
                "tahoe_needs_more",
                tahoe_i.map_or("not run".into(), |t| {
                    format!(
                        "{:.3} at 0.25, {:.3} at 1, {:.3} at 2 bdp",
                        u1[t][j_small], u1[t][j_one], u1[t][j_two]
                    )
                }),
                Verdict::Info,
                "Tahoe restarts from one packet after every loss: the buffer keeps the link busy while the window re-opens, so it gains from buffer beyond one bdp where Reno no longer does; with a small buffer its slow-start bursts overflow the queue early, ssthresh collapses and the window crawls back linearly",
            )?,
            judged(
                &base,
                e,
                "many_flows",
                format!(
                    "{:.3} ({N_MANY} flows) vs {:.3} (1 flow)",
                    u8_[nr8][j_small], u1[nr1][j_small]
                ),
                Verdict::Info,
                "desynchronized flows do not all halve at once, so the aggregate window dips less",
            )?,
        ];

        Ok(Section {
            quote: "Another is that any bottleneck needs to have 2*bandwidth*delay worth of buffering *at the bottleneck* or it's going to be `fragile'. ... (1990:) good engineering practise suggests a b-d p worth of buffer at each bottleneck -- less buffer and your simulation will exhibit the interesting pathologies of a poorly engineered network".into(),
            quote_source: "seed 004_2d5bebbc4a7c34a2.txt, 7 Mar 1988; seed 000/001, 30 Apr 1990".into(),
            setup: format!(
                "Dumbbell: 100 Mb/s access links, a 10 Mb/s bottleneck, 120 ms unloaded round trip, so the bandwidth-delay product is {BDP} packets of 1500 bytes; drop-tail with B = {:?} x bdp. One flow (tahoe, reno, newreno; deterministic, one run, {dur1} s) and {N_MANY} flows (reno, newreno; access delays 1-6 ms and start times 0-2 s drawn per seed; {n} seeds, {dur8} s). Receivers ACK every packet and offer 2 MB; each flow starts with ssthresh at its share of pipe + buffer. Utilization = goodput of all flows after the first {WARM_S} s / (10 Mb/s x 1460/1500); loss = drops / packets offered at the bottleneck.",
                bs
            ),
            claims,
            tables: vec![Table {
                caption: "Utilization (drop rate; for several flows Jain's fairness index J)".into(),
                header,
                rows,
            }],
            plots: vec![p1, p2, qplot, tplot],
            discussion: format!(
                "One Reno flow keeps the link busy from one bandwidth-delay product of buffer on ({reno1:.2}), the 1990 rule, and below it the link idles after every halving ({:.2} at 0.1 bdp). The 1988 rule of two products is what the TCP of 1988 needs: Tahoe slow-starts after each loss and uses the extra buffer to cover the round trips the window takes to re-open. With {N_MANY} flows whose losses are not synchronized the aggregate needs far less buffer. The runs start each flow with ssthresh at its share of the path so that the measurement is the congestion-avoidance sawtooth; from ssthresh = infinity, one NewReno flow with 2 bdp of buffer overshoots in slow start and then spends tens of seconds in one recovery, repairing one hole per round trip, because the engine restarts the retransmission timer on every partial ACK (reported to the lead).",
                u1[reno_i][j_tenth]
            ),
            ..Section::default()
        })
    }
}
