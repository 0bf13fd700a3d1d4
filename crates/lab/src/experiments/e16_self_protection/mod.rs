//! Experiment 16: gateway self protection (seed 000, 11 Feb 1988): one host running the
//! pre-1988 4.3BSD TCP, which always sends its whole window, against four NewReno hosts
//! through drop-tail, random drop, RED, DRR and FQ-CoDel: the mis-behaving host's share of
//! the line, everyone's goodput and who loses the packets.

use crate::claims::{Judge, Ours};
use crate::gateways::{self, Queue};
use crate::plots::{self, Chart, Mark, Panel, Series};
use crate::stats::{link, mean, sd, secs, uniform};
use crate::suite::{files, Experiment, Figure, Files, Params, PerSeed, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::net::PortSample;
use ackclock_sim::scenario::{AppSpec, CrossKindName, CrossSpec};
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{TraceEvent, TraceKind};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct SelfProtection;

/// The bottleneck direction's port name (the dumbbell's gateways).
const PORT: &str = "gw_left-gw_right";
/// The bottleneck's rate (b/s), as in the scenario file.
const RATE_BPS: f64 = 1.5e6;
/// Hosts sharing the line; host 0 (flow 0) is the mis-behaving one.
const HOSTS: usize = 5;
/// Payload and IP bytes of a full segment (MSS 512).
const MSS: f64 = 512.0;
const PKT_BYTES: f64 = 552.0;
/// Packets of buffer at the gateway and of the pipe (1.5 Mb/s x 100 ms / 552 bytes).
const BUFFER_PKTS: usize = 34;
const PIPE_PKTS: f64 = 34.0;
/// The mis-behaving host's window (its socket buffers, bytes): the 4.3BSD default of 4 KB,
/// 8 KB, seed 003's 16 KB, and 32 KB (about the pipe plus the buffer).
const WINDOWS: [usize; 4] = [4096, 8192, 16384, 32768];
/// The window the claims are judged at: seed 003's 16 KB (32 packets).
const W16: usize = 2;
/// Per gateway, the windows of [`WINDOWS`], then the reference run without a mis-behaving
/// host (all five NewReno), then host 1 as a source without any flow control (a flood).
const PER_GATEWAY: usize = WINDOWS.len() + 2;
const REFERENCE: usize = WINDOWS.len();
const FLOOD: usize = WINDOWS.len() + 1;
/// The flood's rate: twice the line's, as the ill-behaved source of Demers, Keshav and
/// Shenker's scenario 3 ("sending packets at twice the rate of the gateway's outgoing line").
const FLOOD_BPS: f64 = 2.0 * RATE_BPS;
/// The senders stop writing this long before the end, so the line has drained when the
/// per-host drops are counted (offered minus delivered).
const DRAIN_S: f64 = 3.0;
/// What "protects" means here: the mis-behaving host takes at most this many fair shares.
const PROTECT_MAX: f64 = 2.0;

/// The gateways, each with [`BUFFER_PKTS`] packets of buffer.
const GATEWAYS: [Queue; 5] = [
    Queue::DropTail,
    Queue::RandomDrop,
    Queue::Red { max_p: 0.02 },
    Queue::Drr,
    Queue::FqCodel,
];
const DT: usize = 0;
/// The gateways whose protection is judged, with their claim ids.
const JUDGED: [(usize, &str); 4] = [
    (1, "protect_random_drop"),
    (2, "protect_red"),
    (3, "protect_drr"),
    (4, "protect_fq_codel"),
];

/// Run length and warm-up (s).
fn timing(quick: bool) -> (f64, f64) {
    if quick {
        (20.0, 5.0)
    } else {
        (40.0, 10.0)
    }
}

/// RNG seeds per configuration: each run is cheap but there are 25 configurations; five
/// start-time draws show the spread.
fn seeds(p: Params) -> u64 {
    p.seeds.clamp(1, 5)
}

/// The runs: per gateway, each window, the reference and the flood, [`seeds`] RNG seeds each.
fn grid(p: Params) -> PerSeed {
    PerSeed {
        configs: GATEWAYS.len() * PER_GATEWAY,
        seeds: seeds(p),
    }
}

/// The fair share of goodput: the line's rate in payload bytes, split evenly (b/s).
fn fair_goodput() -> f64 {
    RATE_BPS * MSS / PKT_BYTES / HOSTS as f64
}

/// Configuration `c` is gateway `c / PER_GATEWAY`, window (or reference) `c % PER_GATEWAY`.
fn variant(base: &Scenario, c: usize, seed: u64, quick: bool) -> Result<Scenario> {
    let (g, k) = (c / PER_GATEWAY, c % PER_GATEWAY);
    let (duration, _) = timing(quick);
    let mut s = base.clone();
    s.seed = seed;
    s.duration_s = duration;
    // Counters every 100 ms are enough for the shares and the 1 s throughput bins.
    s.output.sample_ms = 100.0;
    let q = GATEWAYS[g].config(BUFFER_PKTS, false)?;
    gateways::set_bottleneck(&mut s, q, "self_protection")?;
    if s.flow.len() != HOSTS {
        return Err(anyhow!("self_protection: expected {HOSTS} flows"));
    }
    let n = s.flow.len() as u64;
    let stop = duration - DRAIN_S;
    for (i, f) in s.flow.iter_mut().enumerate() {
        // Start times within the first second, drawn from the RNG seed, so the seeds differ
        // even through the deterministic gateways.
        f.start_s = uniform(seed, i as u64 + n * 1000);
        f.app = AppSpec::Bulk {
            bytes: None,
            duration_s: Some(stop - f.start_s),
            chunk_bytes: None,
        };
        if i == 0 {
            if k == REFERENCE || k == FLOOD {
                f.tcp = "newreno".into();
            } else {
                // The vanilla sender's window is the receiver's offer, set by the buffers.
                f.tcp_overrides.send_buffer_bytes = Some(WINDOWS[k]);
                f.tcp_overrides.recv_buffer_bytes = Some(WINDOWS[k]);
            }
        }
    }
    if k == FLOOD {
        // Host 1 sends raw IP packets at twice the line's rate instead of running a TCP.
        let f = s.flow.remove(0);
        s.cross.push(CrossSpec {
            from: f.from,
            to: f.to,
            kind: CrossKindName::Cbr,
            rate_bps: FLOOD_BPS,
            mean_on_ms: None,
            mean_off_ms: None,
            packet_bytes: PKT_BYTES as usize,
            start_s: f.start_s,
            stop_s: Some(stop),
        });
    }
    Ok(s)
}

/// Bytes acknowledged to a flow between `from` and `to` s, per second (b/s).
fn goodput(tr: &[TraceEvent], from: f64, to: f64) -> f64 {
    let mut first = None;
    let mut last = None;
    for e in tr {
        let t = secs(e.time);
        if t > to {
            break;
        }
        if let TraceKind::Ack { ack, .. } = e.kind {
            if t >= from {
                first.get_or_insert(ack);
                last = Some(ack);
            }
        }
    }
    match (first, last) {
        (Some(a), Some(b)) => f64::from(b.since(a)) * 8.0 / (to - from),
        _ => 0.0,
    }
}

/// A port's samples by name.
fn samples<'a>(r: &'a RunResult, name: &str) -> Result<&'a [PortSample]> {
    r.queues
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, s)| s.as_slice())
        .ok_or_else(|| anyhow!("no samples of {name}"))
}

/// The bytes a port had sent by time `t` (the last sample at or before it).
fn sent_at(s: &[PortSample], t: f64) -> u64 {
    s.iter()
        .take_while(|x| secs(x.at) <= t + 1e-9)
        .last()
        .map_or(0, |x| x.sent_bytes)
}

/// A link direction's packets over the whole run, from the summary.
fn packets(r: &RunResult, name: &str) -> Result<u64> {
    Ok(link(r, name)?.packets)
}

/// One run, reduced.
#[derive(Clone, Debug, Default)]
struct Metrics {
    /// Each host's part of the bytes that crossed the line between the warm-up and the
    /// senders' stop (retransmissions included: what it took of the line).
    share: [f64; HOSTS],
    /// Each host's goodput over the same interval (b/s of payload acknowledged).
    goodput: [f64; HOSTS],
    /// Packets each host sent into the gateway, and packets of each that crossed the line,
    /// over the whole run (the line has drained by the end): the difference is its drops.
    offered: [u64; HOSTS],
    delivered: [u64; HOSTS],
    /// Bottleneck utilization between the warm-up and the senders' stop.
    util: f64,
    /// The mis-behaving host's retransmitted segments and timeouts, whole run.
    retx0: u64,
    rtos0: u64,
    /// The part of the gateway's drops made at a full buffer (not early), whole run.
    overflow: f64,
}

impl Metrics {
    fn drops(&self, i: usize) -> u64 {
        self.offered[i].saturating_sub(self.delivered[i])
    }
    /// Host 0's share of the line in fair shares (1: exactly its fair share).
    fn share0(&self) -> f64 {
        self.share[0] * HOSTS as f64
    }
    /// Host 0's goodput in fair shares of goodput.
    fn goodput0(&self) -> f64 {
        self.goodput[0] / fair_goodput()
    }
    /// Hosts 1-4's mean goodput in fair shares of goodput.
    fn goodput_aimd(&self) -> f64 {
        mean(&self.goodput[1..]) / fair_goodput()
    }
    /// Host 0's packets dropped over those it sent.
    fn loss0(&self) -> f64 {
        ratio(self.drops(0) as f64, self.offered[0] as f64)
    }
    /// Hosts 1-4's packets dropped over those they sent.
    fn loss_aimd(&self) -> f64 {
        let d: u64 = (1..HOSTS).map(|i| self.drops(i)).sum();
        let o: u64 = self.offered[1..].iter().sum();
        ratio(d as f64, o as f64)
    }
    /// Host 0's part of all the gateway's drops.
    fn drop_part0(&self) -> f64 {
        let all: u64 = (0..HOSTS).map(|i| self.drops(i)).sum();
        ratio(self.drops(0) as f64, all as f64)
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// A host's throughput through the line per second: (mid-second, kb/s).
type Series1s = Vec<(f64, f64)>;

/// The metrics of one run; with `flood`, host 1 is the raw-IP source and has no flow (its
/// goodput is what crossed the line, all of it new data).
fn metrics(r: &RunResult, warmup: f64, stop: f64, flood: bool) -> Result<(Metrics, Vec<Series1s>)> {
    let mut m = Metrics::default();
    let mut crossed = [0.0; HOSTS];
    let mut series = Vec::with_capacity(HOSTS);
    for i in 0..HOSTS {
        let (into, out) = (
            format!("left{}-gw_left", i + 1),
            format!("gw_right-right{}", i + 1),
        );
        let s = samples(r, &out)?;
        crossed[i] = (sent_at(s, stop) - sent_at(s, warmup)) as f64;
        m.offered[i] = packets(r, &into)?;
        m.delivered[i] = packets(r, &out)?;
        m.goodput[i] = match (flood, i) {
            (true, 0) => crossed[0] * MSS / PKT_BYTES * 8.0 / (stop - warmup),
            (true, _) => goodput(&r.traces[i - 1], warmup, stop),
            _ => goodput(&r.traces[i], warmup, stop),
        };
        // What the host got through the line per 1 s, in kb/s (IP bytes).
        let end = r.summary.duration_s;
        series.push(
            (0..end as usize)
                .map(|t| {
                    let t = t as f64;
                    let b = sent_at(s, t + 1.0) - sent_at(s, t);
                    (t + 0.5, b as f64 * 8.0 / 1e3)
                })
                .collect(),
        );
    }
    let total: f64 = crossed.iter().sum();
    m.share = crossed.map(|c| ratio(c, total));
    let line = samples(r, PORT)?;
    m.util =
        (sent_at(line, stop) - sent_at(line, warmup)) as f64 * 8.0 / (RATE_BPS * (stop - warmup));
    if !flood {
        let f0 = r.summary.flows.first().ok_or_else(|| anyhow!("no flows"))?;
        m.retx0 = f0.retransmitted_segments;
        m.rtos0 = f0.timeouts;
    }
    let link = link(r, PORT)?;
    m.overflow = ratio(link.queue_drops_overflow as f64, link.queue_drops as f64);
    Ok((m, series))
}

/// One run: its metrics and, for the first seed at 16 KB, each host's throughput per second.
pub struct Run {
    metrics: Metrics,
    series: Option<Vec<Series1s>>,
    seed: u64,
}

pub struct Measured {
    /// Per configuration, per seed.
    all: Vec<Vec<Metrics>>,
    /// Per gateway, the first seed's throughput of each host at 16 KB.
    series: Vec<Vec<Series1s>>,
    /// The first seed.
    seed: u64,
}

impl Measured {
    fn runs(&self, g: usize, k: usize) -> &[Metrics] {
        &self.all[g * PER_GATEWAY + k]
    }
    /// Mean and sample standard deviation of `f` over the seeds of gateway `g`, window `k`.
    fn stat(&self, g: usize, k: usize, f: fn(&Metrics) -> f64) -> (f64, f64) {
        let v: Vec<f64> = self.runs(g, k).iter().map(f).collect();
        (mean(&v), sd(&v))
    }
    fn mean(&self, g: usize, k: usize, f: fn(&Metrics) -> f64) -> f64 {
        self.stat(g, k, f).0
    }
}

/// "m ± s" with `d` decimals.
fn pm(x: (f64, f64), d: usize) -> String {
    format!("{:.d$} ± {:.d$}", x.0, x.1)
}

fn pct(v: f64) -> String {
    format!("{:.1}", v * 100.0)
}

impl Experiment for SelfProtection {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "self_protection"
    }

    fn files(&self) -> Files {
        files!("e16_self_protection")
    }

    /// The shares come from the per-host ports' byte counters.
    fn records_queues(&self) -> bool {
        true
    }

    /// Every gateway, each window and the reference, `seeds` runs each, in that order.
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        grid(p).plan(base, |c, seed| variant(base, c, seed, p.quick))
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let (c, first) = grid(p).config_of(index);
        let (duration, warmup) = timing(p.quick);
        let (m, series) = metrics(&r, warmup, duration - DRAIN_S, c % PER_GATEWAY == FLOOD)?;
        Ok(Run {
            metrics: m,
            series: (first && c % PER_GATEWAY == W16).then_some(series),
            seed: r.summary.seed,
        })
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        let (mut all, mut series) = (Vec::new(), Vec::new());
        let mut seed = 0;
        for (c, group) in grid(p).groups(runs).into_iter().enumerate() {
            if c == 0 {
                seed = group.first().map_or(0, |r| r.seed);
            }
            all.push(group.iter().map(|r| r.metrics.clone()).collect());
            if c % PER_GATEWAY == W16 {
                let s = group.into_iter().next().and_then(|r| r.series);
                series.push(s.ok_or_else(|| anyhow!("no throughput series"))?);
            }
        }
        Ok(Measured { all, series, seed })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        judge_protection(m, text, j)?;
        judge_dropped(m, text, j)?;
        judge_flood(m, text, j)?;
        judge_aimd_fair(m, text, j)
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let plots = vec![
            sweep_plot(m, text, out, Sweep::Share)?,
            sweep_plot(m, text, out, Sweep::Aimd)?,
            throughput_plot(p, m, text, out)?,
        ];
        let (duration, warmup) = timing(p.quick);
        let share = |g: usize| format!("{:.2}", m.mean(g, W16, Metrics::share0));
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", format!("{duration:.0}")),
                    ("warmup", format!("{warmup:.0}")),
                    ("stop", format!("{:.0}", duration - DRAIN_S)),
                    ("seeds", seeds(p).to_string()),
                    ("fair", format!("{:.0}", fair_goodput() / 1e3)),
                    (
                        "fair_window",
                        format!("{:.0}", (PIPE_PKTS + BUFFER_PKTS as f64) / HOSTS as f64),
                    ),
                ],
            )?,
            tables: vec![table(p, m), sweep_table(m)],
            plots,
            discussion: text.fill(
                "discussion",
                &[
                    ("dt", share(DT)),
                    ("rd", share(1)),
                    ("red", share(2)),
                    ("drr", share(3)),
                    ("fqc", share(4)),
                    (
                        "red_util",
                        format!("{:.0}", m.mean(2, W16, |x| x.util) * 100.0),
                    ),
                    (
                        "red_aimd",
                        format!("{:.2}", m.mean(2, W16, Metrics::goodput_aimd)),
                    ),
                    (
                        "dt_loss0",
                        format!("{:.2}", m.mean(DT, W16, Metrics::loss0) * 100.0),
                    ),
                    (
                        "dt_aimd",
                        format!("{:.2}", m.mean(DT, W16, Metrics::goodput_aimd)),
                    ),
                    ("dt4", format!("{:.2}", m.mean(DT, 0, Metrics::share0))),
                    ("dt32", format!("{:.2}", m.mean(DT, 3, Metrics::share0))),
                    (
                        "rtos32",
                        format!("{:.0}", m.mean(DT, 3, |x| x.rtos0 as f64)),
                    ),
                ],
            )?,
        })
    }
}

/// Whether each gateway protects the NewReno hosts from the host that does not back off,
/// at the window of seed 003 (`dt_share`, and `protect_*` for the others): drop-tail does
/// not when that host takes more than [`PROTECT_MAX`] fair shares of the line, another
/// gateway does when it holds the host to at most that.
fn judge_protection(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    let describe = |g: usize| -> String {
        format!(
            "{:.2} fair shares of the line ({:.2} of goodput); NewReno hosts {:.2} each",
            m.mean(g, W16, Metrics::share0),
            m.mean(g, W16, Metrics::goodput0),
            m.mean(g, W16, Metrics::goodput_aimd),
        )
    };
    // Every per-gateway note ends with the same numbers.
    let note = |key: &str, g: usize| -> Result<String> {
        Ok(format!(
            "{} {}",
            text.get(key)?,
            text.fill(
                "note numbers",
                &[
                    ("gateway", GATEWAYS[g].label().to_string()),
                    (
                        "goodput0",
                        format!("{:.2}", m.mean(g, W16, Metrics::goodput0))
                    ),
                    (
                        "aimd_ref",
                        format!("{:.2}", m.mean(g, REFERENCE, Metrics::goodput_aimd)),
                    ),
                    ("loss0", pct(m.mean(g, W16, Metrics::loss0))),
                    ("loss_aimd", pct(m.mean(g, W16, Metrics::loss_aimd))),
                    (
                        "part0",
                        format!("{:.0}", m.mean(g, W16, Metrics::drop_part0) * 100.0),
                    ),
                    ("util", format!("{:.0}", m.mean(g, W16, |x| x.util) * 100.0)),
                    (
                        "overflow",
                        format!("{:.0}", m.mean(g, W16, |x| x.overflow) * 100.0),
                    ),
                    (
                        "rtos0",
                        format!("{:.1}", m.mean(g, W16, |x| x.rtos0 as f64)),
                    ),
                ],
            )?
        ))
    };
    // Drop-tail: the baseline the seed wants to improve on. It does not protect when the
    // host that does not back off takes more than PROTECT_MAX fair shares.
    let dt = m.mean(DT, W16, Metrics::share0);
    let unprotected = dt > PROTECT_MAX;
    j.claim(
        "dt_share",
        Ours::num(dt, describe(DT)),
        Verdict::pass_or_disagree(unprotected),
        note(
            if unprotected {
                "note dt_share"
            } else {
                "note dt_share_protected"
            },
            DT,
        )?,
    )?;
    // Each of the other gateways protects when it holds the host to at most
    // PROTECT_MAX fair shares of the line.
    for (g, id) in JUDGED {
        let s = m.mean(g, W16, Metrics::share0);
        let protects = s <= PROTECT_MAX;
        j.claim(
            id,
            Ours::num(s, describe(g)),
            Verdict::pass_or_disagree(protects),
            note(
                &format!("note {id}{}", if protects { "" } else { "_not" }),
                g,
            )?,
        )?;
    }
    Ok(())
}

/// Who loses the packets (`dropped`): the mis-behaving host's loss rate and its part of
/// the drops, per gateway.
fn judge_dropped(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    j.claim(
        "dropped",
        per_gateway(|g| {
            format!(
                "{}% of its packets, {}% of the drops",
                pct(m.mean(g, W16, Metrics::loss0)),
                format_args!("{:.0}", m.mean(g, W16, Metrics::drop_part0) * 100.0)
            )
        }),
        Verdict::Info,
        text.fill(
            "note dropped",
            &[
                ("loss_dt", pct(m.mean(DT, W16, Metrics::loss_aimd))),
                ("loss_drr", pct(m.mean(3, W16, Metrics::loss_aimd))),
            ],
        )?,
    )
}

/// Fair queueing against a source without flow control at twice the line's rate
/// (`flood`): the NewReno hosts behind DRR and behind FQ-CoDel must each get at least 0.8
/// fair shares of goodput.
fn judge_flood(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    // Fair queueing against a source that does not respond at all: the lower of DRR's and
    // FQ-CoDel's NewReno goodput.
    let fq = m
        .mean(3, FLOOD, Metrics::goodput_aimd)
        .min(m.mean(4, FLOOD, Metrics::goodput_aimd));
    let fq_ok = fq >= 0.8;
    j.claim(
        "flood",
        Ours::num(
            fq,
            per_gateway(|g| {
                format!(
                    "{:.2} (the flood {:.2})",
                    m.mean(g, FLOOD, Metrics::goodput_aimd),
                    m.mean(g, FLOOD, Metrics::share0)
                )
            }),
        ),
        Verdict::of(fq_ok),
        text.fill(
            "note flood",
            &[
                (
                    "dt",
                    format!("{:.2}", m.mean(DT, FLOOD, Metrics::goodput_aimd)),
                ),
                (
                    "rd",
                    format!("{:.2}", m.mean(1, FLOOD, Metrics::goodput_aimd)),
                ),
                (
                    "red",
                    format!("{:.2}", m.mean(2, FLOOD, Metrics::goodput_aimd)),
                ),
                ("drr", format!("{:.2}", m.mean(3, FLOOD, Metrics::share0))),
                ("fqc", format!("{:.2}", m.mean(4, FLOOD, Metrics::share0))),
            ],
        )?,
    )
}

/// The NewReno hosts' goodput and loss beside the mis-behaving host, and without it
/// (`aimd_fair`), per gateway.
fn judge_aimd_fair(m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
    j.claim(
        "aimd_fair",
        per_gateway(|g| {
            format!(
                "{:.2} ({:.2} without the vanilla host), loss {}% ({}%)",
                m.mean(g, W16, Metrics::goodput_aimd),
                m.mean(g, REFERENCE, Metrics::goodput_aimd),
                pct(m.mean(g, W16, Metrics::loss_aimd)),
                pct(m.mean(g, REFERENCE, Metrics::loss_aimd)),
            )
        }),
        Verdict::Info,
        text.fill(
            "note aimd_fair",
            &[
                ("fair", format!("{:.0}", fair_goodput() / 1e3)),
                (
                    "dt",
                    format!("{:.2}", m.mean(DT, W16, Metrics::goodput_aimd)),
                ),
                ("dt_loss", pct(m.mean(DT, W16, Metrics::loss_aimd))),
                ("dt_ref", pct(m.mean(DT, REFERENCE, Metrics::loss_aimd))),
                (
                    "red",
                    format!("{:.2}", m.mean(2, W16, Metrics::goodput_aimd)),
                ),
            ],
        )?,
    )
}

/// `f` of each gateway after its name, joined with "; ".
fn per_gateway(f: impl Fn(usize) -> String) -> String {
    (0..GATEWAYS.len())
        .map(|g| format!("{} {}", GATEWAYS[g].label(), f(g)))
        .collect::<Vec<_>>()
        .join("; ")
}

#[derive(Clone, Copy)]
enum Sweep {
    /// The mis-behaving host's share of the line.
    Share,
    /// The NewReno hosts' mean goodput.
    Aimd,
}

/// One measure against the mis-behaving host's window (packets), one line per gateway.
fn sweep_plot(m: &Measured, text: &Text, out: &Path, what: Sweep) -> Result<Figure> {
    let (stem, title, y_desc, f): (&str, &str, &str, fn(&Metrics) -> f64) = match what {
        Sweep::Share => (
            "share-vs-window",
            "The vanilla host's share of the line against its window",
            "vanilla host's share of the line (fair shares)",
            Metrics::share0,
        ),
        Sweep::Aimd => (
            "newreno-vs-window",
            "The NewReno hosts' goodput against the vanilla host's window",
            "NewReno hosts' mean goodput (fair shares)",
            Metrics::goodput_aimd,
        ),
    };
    let fig = Figure::from_text(out, stem, title, text, &[])?;
    let pkts = |k: usize| WINDOWS[k] as f64 / MSS;
    let mut series: Vec<Series> = GATEWAYS
        .iter()
        .enumerate()
        .map(|(g, q)| {
            Series::new(
                q.label(),
                plots::palette(g),
                Mark::LinePoints,
                (0..WINDOWS.len())
                    .map(|k| (pkts(k), m.mean(g, k, f)))
                    .collect(),
            )
        })
        .collect();
    // The spread over the seeds: +- one standard deviation (the caption says so).
    for g in 0..GATEWAYS.len() {
        let bars: Vec<(f64, f64, f64)> = (0..WINDOWS.len())
            .map(|k| {
                let (mu, sd) = m.stat(g, k, f);
                (pkts(k), mu - sd, mu + sd)
            })
            .collect();
        series.push(Series::error_bars("", plots::palette(g), &bars));
    }
    let (x0, x1) = (pkts(0), pkts(WINDOWS.len() - 1));
    let fair_window = (PIPE_PKTS + BUFFER_PKTS as f64) / HOSTS as f64;
    series.push(Series::new(
        "fair share",
        plots::palette(7),
        Mark::Dashed,
        vec![(x0, 1.0), (x1, 1.0)],
    ));
    let y_top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .fold(PROTECT_MAX, f64::max)
        * 1.1;
    if let Sweep::Share = what {
        series.push(Series::new(
            "protection limit (2 fair shares)",
            plots::palette(3),
            Mark::Dashed,
            vec![(x0, PROTECT_MAX), (x1, PROTECT_MAX)],
        ));
    }
    series.push(Series::new(
        format!("fair window ({fair_window:.0} packets)"),
        plots::palette(5),
        Mark::Dashed,
        vec![(fair_window, 0.0), (fair_window, y_top)],
    ));
    fig.draw(Chart {
        x_desc: "vanilla host's window (packets of 512 bytes, log scale)".into(),
        y_desc: y_desc.into(),
        log_x: true,
        x_range: Some((x0, x1)),
        y_max: Some(y_top),
        ..Chart::one_panel(series)
    })
}

/// Each host's throughput through the line, one panel per gateway, first seed, 16 KB.
fn throughput_plot(p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let fig = Figure::from_text(
        out,
        "throughput",
        format!(
            "Each host's throughput through the line (IP bytes per second), vanilla window 16 KB, RNG seed {}",
            m.seed
        ),
        text,
        &[],
    )?;
    let panels = GATEWAYS
        .iter()
        .enumerate()
        .map(|(g, q)| Panel {
            name: q.label().to_string(),
            series: m.series[g]
                .iter()
                .enumerate()
                .map(|(i, pts)| {
                    Series::new(
                        if i == 0 {
                            "host 1: vanilla 4.3BSD".to_string()
                        } else {
                            format!("host {}: NewReno", i + 1)
                        },
                        // The vanilla host red, the NewReno hosts in the other colours.
                        plots::palette([3, 0, 1, 2, 4][i]),
                        Mark::Line,
                        pts.clone(),
                    )
                })
                .collect(),
        })
        .collect();
    fig.draw(Chart {
        x_desc: "time (s)".into(),
        y_desc: "kb/s".into(),
        x_range: Some((0.0, timing(p.quick).0)),
        panels,
        ..Chart::default()
    })
}

/// One row per gateway at 16 KB, and the reference without the vanilla host.
fn table(p: Params, m: &Measured) -> Table {
    let mut rows = Vec::new();
    for (g, name) in GATEWAYS.iter().map(|q| q.label()).enumerate() {
        rows.push(vec![
            format!("{name}, vanilla at 16 KB"),
            pm(m.stat(g, W16, Metrics::share0), 2),
            pm(m.stat(g, W16, Metrics::goodput0), 2),
            pm(m.stat(g, W16, Metrics::goodput_aimd), 2),
            format!("{}%", pct(m.mean(g, W16, Metrics::loss0))),
            format!("{}%", pct(m.mean(g, W16, Metrics::loss_aimd))),
            format!("{:.0}%", m.mean(g, W16, Metrics::drop_part0) * 100.0),
            format!("{:.0}%", m.mean(g, W16, |x| x.overflow) * 100.0),
            format!("{:.0}%", m.mean(g, W16, |x| x.util) * 100.0),
            format!(
                "{:.0} / {:.0}",
                m.mean(g, W16, |x| x.retx0 as f64),
                m.mean(g, W16, |x| x.rtos0 as f64)
            ),
        ]);
    }
    for (g, name) in GATEWAYS.iter().map(|q| q.label()).enumerate() {
        rows.push(vec![
            format!("{name}, flooding at 3 Mb/s"),
            pm(m.stat(g, FLOOD, Metrics::share0), 2),
            "-".into(),
            pm(m.stat(g, FLOOD, Metrics::goodput_aimd), 2),
            format!("{}%", pct(m.mean(g, FLOOD, Metrics::loss0))),
            format!("{}%", pct(m.mean(g, FLOOD, Metrics::loss_aimd))),
            format!("{:.0}%", m.mean(g, FLOOD, Metrics::drop_part0) * 100.0),
            format!("{:.0}%", m.mean(g, FLOOD, |x| x.overflow) * 100.0),
            format!("{:.0}%", m.mean(g, FLOOD, |x| x.util) * 100.0),
            "-".into(),
        ]);
    }
    for (g, name) in GATEWAYS.iter().map(|q| q.label()).enumerate() {
        rows.push(vec![
            format!("{name}, NewReno (five NewReno hosts)"),
            "-".into(),
            "-".into(),
            pm(m.stat(g, REFERENCE, Metrics::goodput_aimd), 2),
            "-".into(),
            format!("{}%", pct(m.mean(g, REFERENCE, Metrics::loss_aimd))),
            "-".into(),
            format!("{:.0}%", m.mean(g, REFERENCE, |x| x.overflow) * 100.0),
            format!("{:.0}%", m.mean(g, REFERENCE, |x| x.util) * 100.0),
            "-".into(),
        ]);
    }
    let (_, warmup) = timing(p.quick);
    Table {
        caption: format!(
            "Mean ± standard deviation over {} RNG seeds. Host 1 is the vanilla 4.3BSD host (window 16 KB), the flood (raw packets at twice the line's rate) or, in the reference rows, a fifth NewReno host. A fair share is a fifth of the line; shares and goodput are measured from {warmup:.0} s to the senders' stop, drops over the whole run (packets a host sent into the gateway minus those that crossed the line).",
            seeds(p)
        ),
        header: Table::header(&[
            "gateway, host 1",
            "host 1: share of the line",
            "host 1: goodput",
            "hosts 2-5 (NewReno): goodput, each",
            "host 1: packets dropped",
            "hosts 2-5: packets dropped",
            "host 1: part of the drops",
            "drops at a full buffer",
            "utilization",
            "host 1: retransmitted / timeouts",
        ]),
        rows,
    }
}

/// The vanilla host's share of the line per gateway and window.
fn sweep_table(m: &Measured) -> Table {
    let rows = GATEWAYS
        .iter()
        .enumerate()
        .map(|(g, q)| {
            let mut row = vec![q.label().to_string()];
            for k in 0..WINDOWS.len() {
                row.push(format!(
                    "{} ({:.2})",
                    pm(m.stat(g, k, Metrics::share0), 2),
                    m.mean(g, k, Metrics::goodput_aimd)
                ));
            }
            row
        })
        .collect();
    let mut header = vec!["gateway".to_string()];
    header.extend(
        WINDOWS
            .iter()
            .map(|w| format!("{} KB ({:.0} packets)", w / 1024, *w as f64 / MSS)),
    );
    Table {
        caption: "The vanilla host's share of the line in fair shares (mean ± standard deviation over the seeds) at each of its windows; in brackets the NewReno hosts' mean goodput in fair shares.".into(),
        header,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drops of a host are what it sent into the gateway less what crossed the line;
    /// its share of the drops and its loss rate follow from them.
    #[test]
    fn drops_and_shares_follow_from_the_counters() {
        let m = Metrics {
            share: [0.4, 0.15, 0.15, 0.15, 0.15],
            goodput: [0.0, fair_goodput(), fair_goodput(), 0.0, 0.0],
            offered: [100, 50, 50, 50, 50],
            delivered: [80, 45, 50, 50, 45],
            ..Metrics::default()
        };
        assert!((m.share0() - 2.0).abs() < 1e-12);
        assert_eq!(m.drops(0), 20);
        assert!((m.loss0() - 0.2).abs() < 1e-12);
        assert!((m.loss_aimd() - 10.0 / 200.0).abs() < 1e-12);
        assert!((m.drop_part0() - 20.0 / 30.0).abs() < 1e-12);
        assert!((m.goodput_aimd() - 0.5).abs() < 1e-12);
    }

    /// Every configuration builds: the vanilla host's window is its buffers, the reference
    /// runs NewReno on every host, and every sender stops DRAIN_S before the end.
    #[test]
    fn variants_set_the_window_and_the_stop() {
        let e = SelfProtection;
        let base = Scenario::from_str_named(e.files().scenario, Path::new("scenario.toml"))
            .expect("scenario");
        let s = variant(&base, W16, 3, true).unwrap();
        assert_eq!(s.flow[0].tcp, "vanilla_4_3bsd");
        assert_eq!(s.flow[0].tcp_overrides.recv_buffer_bytes, Some(16384));
        for f in &s.flow {
            let AppSpec::Bulk {
                duration_s: Some(d),
                ..
            } = f.app
            else {
                panic!("bulk app with a duration");
            };
            assert!((f.start_s + d - (20.0 - DRAIN_S)).abs() < 1e-9);
            assert!(f.start_s < 1.0);
        }
        let r = variant(&base, PER_GATEWAY + REFERENCE, 3, true).unwrap();
        assert!(r.flow.iter().all(|f| f.tcp == "newreno"));
    }
}
