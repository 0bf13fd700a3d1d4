//! Experiment 18: congestion control for connectionless traffic, the third part of the seed's
//! plan (11 Feb 1988): NFS-like RPC clients with fixed timers against the TCP's timer and
//! rate control (rate AIMD, TFRC), from 1 to 32 clients; RPC beside a TCP transfer; and a
//! TFRC stream's share against TCP's (Floyd et al. 2000).

use crate::claims::{Judge, Ours};
use crate::gateways::Queue;
use crate::plots::{self, Chart, Mark, Series};
use crate::stats::{link, mean, uniform};
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::scenario::{
    AppSpec, FlowSpec, RateControlName, RpcSpec, StreamSpec, TimerName, Topology,
};
use ackclock_sim::{RunResult, Scenario};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct Connectionless;

/// The responses' direction of the gateway.
const PORT: &str = "gw_left-gw_right";
/// IP bytes of a response (1024 + UDP 8 + IP 20).
const RESPONSE_IP_BYTES: f64 = 1052.0;
/// Clients beside the TCP transfer.
const SHARED_CLIENTS: usize = 16;
/// The stream part's gateway rate (b/s) and buffer (packets).
const STREAM_RATE_BPS: f64 = 2e6;
const STREAM_BUFFER: usize = 50;

/// How an RPC client retransmits and paces.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scheme {
    Fixed,
    Adaptive,
    Aimd,
    Tfrc,
}

const SCHEMES: [Scheme; 4] = [Scheme::Fixed, Scheme::Adaptive, Scheme::Aimd, Scheme::Tfrc];

impl Scheme {
    fn label(self) -> &'static str {
        match self {
            Scheme::Fixed => "fixed 0.7 s timer (NFS, 1987)",
            Scheme::Adaptive => "the TCP's timer (RFC 6298, backoff)",
            Scheme::Aimd => "the TCP's timer and rate AIMD",
            Scheme::Tfrc => "the TCP's timer and TFRC (RFC 5348)",
        }
    }
    fn app(self) -> AppSpec {
        let (timer, rate) = match self {
            Scheme::Fixed => (TimerName::Fixed, RateControlName::None),
            Scheme::Adaptive => (TimerName::Adaptive, RateControlName::None),
            Scheme::Aimd => (TimerName::Adaptive, RateControlName::Aimd),
            Scheme::Tfrc => (TimerName::Adaptive, RateControlName::Tfrc),
        };
        AppSpec::Rpc(RpcSpec {
            timer: Some(timer),
            timeout_ms: (timer == TimerName::Fixed).then_some(700.0),
            rate_control: Some(rate),
            ..RpcSpec::default()
        })
    }
}

/// A datagram stream beside TCP.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stream {
    Tfrc,
    Aimd,
    /// 1.5 Mb/s without congestion control.
    Uncontrolled,
}

const STREAMS: [Stream; 3] = [Stream::Tfrc, Stream::Aimd, Stream::Uncontrolled];

impl Stream {
    fn label(self) -> &'static str {
        match self {
            Stream::Tfrc => "TFRC",
            Stream::Aimd => "rate AIMD",
            Stream::Uncontrolled => "uncontrolled, 1.5 Mb/s",
        }
    }
}

/// One run of the plan.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Config {
    /// `n` clients alone.
    Clients { scheme: Scheme, n: usize },
    /// [`SHARED_CLIENTS`] clients and a NewReno transfer.
    WithTcp { scheme: Scheme },
    /// A stream and a NewReno transfer, RNG seed `k`.
    Stream { stream: Stream, k: u64 },
}

fn client_counts(quick: bool) -> &'static [usize] {
    if quick {
        &[1, 8, 32]
    } else {
        &[1, 2, 4, 8, 16, 32]
    }
}

/// Run length and warm-up (s).
fn timing(quick: bool) -> (f64, f64) {
    if quick {
        (30.0, 5.0)
    } else {
        (60.0, 10.0)
    }
}

fn stream_seeds(p: Params) -> u64 {
    p.seeds.clamp(1, 5)
}

fn configs(p: Params) -> Vec<Config> {
    let mut v = Vec::new();
    for &scheme in &SCHEMES {
        for &n in client_counts(p.quick) {
            v.push(Config::Clients { scheme, n });
        }
    }
    for &scheme in &SCHEMES {
        v.push(Config::WithTcp { scheme });
    }
    for &stream in &STREAMS {
        for k in 0..stream_seeds(p) {
            v.push(Config::Stream { stream, k });
        }
    }
    v
}

fn flow(name: String, from: String, to: String, start_s: f64, app: AppSpec) -> FlowSpec {
    FlowSpec {
        name: Some(name),
        from,
        to,
        port: None,
        start_s,
        tcp: "newreno".into(),
        tcp_overrides: Default::default(),
        receiver_overrides: Default::default(),
        app,
    }
}

fn tcp_flow(pair: usize, start_s: f64) -> FlowSpec {
    flow(
        "tcp".into(),
        format!("left{pair}"),
        format!("right{pair}"),
        start_s,
        AppSpec::Bulk {
            bytes: None,
            duration_s: None,
            chunk_bytes: None,
        },
    )
}

fn variant(base: &Scenario, c: Config, quick: bool) -> Result<Scenario> {
    let mut s = base.clone();
    s.duration_s = timing(quick).0;
    s.output.trace = false;
    s.output.queues = false;
    s.output.plots = false;
    let rpc = |scheme: Scheme, n: usize, seed: u64| -> Vec<FlowSpec> {
        (1..=n)
            .map(|i| {
                // Starts spread over the first 100 ms, so the clients are not in lock step.
                flow(
                    format!("rpc{i}"),
                    format!("right{i}"),
                    format!("left{i}"),
                    0.1 * uniform(seed, i as u64),
                    scheme.app(),
                )
            })
            .collect()
    };
    match c {
        Config::Clients { scheme, n } => s.flow = rpc(scheme, n, s.seed),
        Config::WithTcp { scheme } => {
            s.flow = rpc(scheme, SHARED_CLIENTS, s.seed);
            s.flow.push(tcp_flow(SHARED_CLIENTS + 1, 0.0));
        }
        Config::Stream { stream, k } => {
            s.seed = base.seed + k;
            let Some(Topology::Dumbbell { bottleneck, .. }) = s.topology.as_mut() else {
                return Err(anyhow!("connectionless: the scenario is not a dumbbell"));
            };
            bottleneck.rate_bps = STREAM_RATE_BPS;
            bottleneck.queue = Some(Queue::DropTail.config(STREAM_BUFFER, false)?);
            let app = AppSpec::DatagramStream(match stream {
                Stream::Tfrc => StreamSpec {
                    rate_control: Some(RateControlName::Tfrc),
                    ..StreamSpec::default()
                },
                Stream::Aimd => StreamSpec {
                    rate_control: Some(RateControlName::Aimd),
                    ..StreamSpec::default()
                },
                Stream::Uncontrolled => StreamSpec {
                    rate_control: Some(RateControlName::None),
                    rate_bps: Some(1.5e6),
                    ..StreamSpec::default()
                },
            });
            s.flow = vec![
                flow(
                    "stream".into(),
                    "left1".into(),
                    "right1".into(),
                    uniform(s.seed, 1),
                    app,
                ),
                tcp_flow(2, uniform(s.seed, 2)),
            ];
        }
    }
    Ok(s)
}

/// What one run gives.
#[derive(Clone, Copy, Debug, Default)]
pub struct Run {
    /// Responses completed per second, as IP bytes over the gateway's rate.
    useful: f64,
    /// Transmissions per completed request.
    tx_per_done: f64,
    /// Requests given up, per issued.
    failed: f64,
    /// Mean over the clients of their median completion time (ms).
    latency_ms: f64,
    /// The gateway's drops per packet offered.
    loss: f64,
    queue_delay_ms: f64,
    /// A TCP transfer's goodput (b/s), when there is one.
    tcp_bps: f64,
    /// The datagram stream's goodput (b/s), when there is one.
    stream_bps: f64,
    stream_p: f64,
}

fn reduce_run(r: &RunResult, rate_bps: f64) -> Result<Run> {
    let link = link(r, PORT)?;
    let dur = r.summary.duration_s;
    let mut run = Run {
        queue_delay_ms: link.queue_delay_mean_ms.unwrap_or(0.0),
        ..Run::default()
    };
    let offered = link.packets + link.queue_drops;
    if offered > 0 {
        run.loss = link.queue_drops as f64 / offered as f64;
    }
    let (mut done, mut tx, mut issued, mut failed) = (0u64, 0u64, 0u64, 0u64);
    let mut lat = Vec::new();
    for f in &r.summary.flows {
        match f.datagram.as_ref() {
            Some(d) => {
                if let Some(rpc) = &d.rpc {
                    done += rpc.completed;
                    tx += rpc.transmissions;
                    issued += rpc.issued;
                    failed += rpc.failed;
                    if let Some(l) = rpc.latency_p50_ms {
                        lat.push(l);
                    }
                }
                if let Some(st) = &d.stream {
                    run.stream_bps = f.goodput_bps;
                    run.stream_p = st.loss_event_rate;
                }
            }
            None => run.tcp_bps = f.goodput_bps,
        }
    }
    run.useful = done as f64 * RESPONSE_IP_BYTES * 8.0 / (rate_bps * dur);
    if done > 0 {
        run.tx_per_done = tx as f64 / done as f64;
    }
    if issued > 0 {
        run.failed = failed as f64 / issued as f64;
    }
    run.latency_ms = mean(&lat);
    Ok(run)
}

pub struct Measured {
    configs: Vec<Config>,
    runs: Vec<Run>,
    rpc_rate_bps: f64,
}

impl Measured {
    fn get(&self, c: Config) -> Option<&Run> {
        self.configs
            .iter()
            .position(|&x| x == c)
            .map(|i| &self.runs[i])
    }
    fn clients(&self, scheme: Scheme, n: usize) -> Run {
        self.get(Config::Clients { scheme, n })
            .copied()
            .unwrap_or_default()
    }
    fn with_tcp(&self, scheme: Scheme) -> Run {
        self.get(Config::WithTcp { scheme })
            .copied()
            .unwrap_or_default()
    }
    /// Mean over seeds of a stream's goodput over TCP's, and of each.
    fn stream_ratio(&self, stream: Stream) -> (f64, Vec<f64>, f64, f64) {
        let runs: Vec<&Run> = self
            .configs
            .iter()
            .zip(&self.runs)
            .filter(|(c, _)| matches!(c, Config::Stream { stream: s, .. } if *s == stream))
            .map(|(_, r)| r)
            .collect();
        let ratios: Vec<f64> = runs
            .iter()
            .map(|r| {
                if r.tcp_bps > 0.0 {
                    r.stream_bps / r.tcp_bps
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let s = mean(&runs.iter().map(|r| r.stream_bps).collect::<Vec<_>>());
        let t = mean(&runs.iter().map(|r| r.tcp_bps).collect::<Vec<_>>());
        (mean(&ratios), ratios, s, t)
    }
}

impl Experiment for Connectionless {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "connectionless"
    }

    fn files(&self) -> Files {
        files!("e18_connectionless")
    }

    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        configs(p)
            .into_iter()
            .map(|c| variant(base, c, p.quick))
            .collect()
    }

    fn reduce(&self, p: Params, index: usize, r: RunResult) -> Result<Run> {
        let rate = match configs(p)[index] {
            Config::Stream { .. } => STREAM_RATE_BPS,
            _ => rpc_rate(&r)?,
        };
        reduce_run(&r, rate)
    }

    fn measure(&self, p: Params, runs: Vec<Run>) -> Result<Measured> {
        Ok(Measured {
            configs: configs(p),
            runs,
            rpc_rate_bps: 256e3,
        })
    }

    fn judge(&self, p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let nmax = *client_counts(p.quick).last().unwrap_or(&32);
        let fixed = m.clients(Scheme::Fixed, nmax);
        let storm = fixed.tx_per_done;
        j.claim(
            "rpc_storm",
            Ours::num(
                storm,
                format!(
                    "{storm:.2} transmissions per completed request; {:.0}% of requests given up; useful goodput {:.0}% of the link",
                    fixed.failed * 100.0,
                    fixed.useful * 100.0
                ),
            ),
            Verdict::of(storm >= 2.0),
            text.fill(
                "note rpc_storm",
                &[
                    ("adaptive_tx", format!("{:.2}", m.clients(Scheme::Adaptive, nmax).tx_per_done)),
                    ("queue_ms", format!("{:.0}", fixed.queue_delay_ms)),
                ],
            )?,
        )?;
        let (a, t) = (m.clients(Scheme::Aimd, nmax), m.clients(Scheme::Tfrc, nmax));
        let low = a.useful.min(t.useful);
        j.claim(
            "rpc_controlled",
            Ours::num(
                low,
                format!(
                    "AIMD {:.0}% ({:.2} transmissions per request, {:.0} ms queue), TFRC {:.0}% ({:.2}, {:.0} ms)",
                    a.useful * 100.0,
                    a.tx_per_done,
                    a.queue_delay_ms,
                    t.useful * 100.0,
                    t.tx_per_done,
                    t.queue_delay_ms
                ),
            ),
            Verdict::of(low >= 0.9),
            text.fill(
                "note rpc_controlled",
                &[(
                    "adaptive_useful",
                    format!("{:.0}", m.clients(Scheme::Adaptive, nmax).useful * 100.0),
                )],
            )?,
        )?;
        let fair = m.rpc_rate_bps / (SHARED_CLIENTS as f64 + 1.0);
        let share = |s: Scheme| m.with_tcp(s).tcp_bps / fair;
        let worst = share(Scheme::Aimd).min(share(Scheme::Tfrc));
        j.claim(
            "rpc_tcp_share",
            Ours::num(
                worst,
                format!(
                    "AIMD {:.2}, TFRC {:.2} (fixed timers {:.2}, the TCP's timer alone {:.2})",
                    share(Scheme::Aimd),
                    share(Scheme::Tfrc),
                    share(Scheme::Fixed),
                    share(Scheme::Adaptive)
                ),
            ),
            Verdict::Info,
            text.fill(
                if worst >= 0.5 {
                    "note rpc_tcp_share"
                } else {
                    "note rpc_tcp_share_short"
                },
                &[
                    ("fair_kbps", format!("{:.1}", fair / 1e3)),
                    ("fixed_share", format!("{:.2}", share(Scheme::Fixed))),
                    ("low_share", format!("{:.2}", worst)),
                ],
            )?,
        )?;
        let (ratio, ratios, sb, tb) = m.stream_ratio(Stream::Tfrc);
        j.claim(
            "tfrc_friendly",
            Ours::num(
                ratio,
                format!(
                    "{ratio:.2} (per seed {}); TFRC {:.0} kb/s, TCP {:.0} kb/s",
                    ratios
                        .iter()
                        .map(|r| format!("{r:.2}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    sb / 1e3,
                    tb / 1e3
                ),
            ),
            Verdict::of((0.5..=2.0).contains(&ratio)),
            text.fill("note tfrc_friendly", &[])?,
        )?;
        let (ra, _, _, _) = m.stream_ratio(Stream::Aimd);
        let (ru, _, _, tu) = m.stream_ratio(Stream::Uncontrolled);
        j.claim(
            "datagram_baselines",
            format!(
                "rate AIMD {ra:.2}; uncontrolled 1.5 Mb/s {ru:.2} (TCP left with {:.0} kb/s)",
                tu / 1e3
            ),
            Verdict::Info,
            text.fill("note datagram_baselines", &[])?,
        )
    }

    fn render(&self, p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let (duration, _) = timing(p.quick);
        let plots = vec![
            clients_plot(p, m, text, out, false)?,
            clients_plot(p, m, text, out, true)?,
            share_plot(m, text, out)?,
        ];
        let nmax = *client_counts(p.quick).last().unwrap_or(&32);
        Ok(Rendered {
            setup: text.fill(
                "setup",
                &[
                    ("duration", format!("{duration:.0}")),
                    ("seeds", stream_seeds(p).to_string()),
                ],
            )?,
            tables: vec![table(p, m)],
            plots,
            discussion: text.fill(
                "discussion",
                &[
                    ("n", nmax.to_string()),
                    (
                        "fixed_tx",
                        format!("{:.1}", m.clients(Scheme::Fixed, nmax).tx_per_done),
                    ),
                    (
                        "fixed_failed",
                        format!("{:.0}", m.clients(Scheme::Fixed, nmax).failed * 100.0),
                    ),
                    (
                        "tfrc_queue",
                        format!("{:.0}", m.clients(Scheme::Tfrc, nmax).queue_delay_ms),
                    ),
                    (
                        "adaptive_queue",
                        format!("{:.0}", m.clients(Scheme::Adaptive, nmax).queue_delay_ms),
                    ),
                ],
            )?,
        })
    }
}

/// The gateway's rate of an RPC run (the scenario's bottleneck).
fn rpc_rate(r: &RunResult) -> Result<f64> {
    Ok(link(r, PORT)?.rate_bps as f64)
}

/// Useful goodput (or transmissions per completed request) against the number of clients.
fn clients_plot(p: Params, m: &Measured, text: &Text, out: &Path, tx: bool) -> Result<Figure> {
    let (stem, title, y_desc) = if tx {
        (
            "transmissions",
            "Transmissions per completed request against the number of RPC clients",
            "transmissions per completed request",
        )
    } else {
        (
            "goodput",
            "Useful goodput against the number of RPC clients",
            "responses completed (% of the gateway's rate)",
        )
    };
    let fig = Figure::from_text(out, stem, title, text, &[])?;
    let series = SCHEMES
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            Series::new(
                s.label(),
                plots::palette(i),
                Mark::LinePoints,
                client_counts(p.quick)
                    .iter()
                    .map(|&n| {
                        let r = m.clients(s, n);
                        (n as f64, if tx { r.tx_per_done } else { r.useful * 100.0 })
                    })
                    .collect(),
            )
        })
        .collect();
    fig.draw(Chart {
        x_desc: "NFS-like clients, 4 requests outstanding each".into(),
        y_desc: y_desc.into(),
        log_x: true,
        y_max: if tx { None } else { Some(110.0) },
        ..Chart::one_panel(series)
    })
}

/// Each datagram sender's goodput against TCP's, per RNG seed, and the RPC schemes' TCP share.
fn share_plot(m: &Measured, text: &Text, out: &Path) -> Result<Figure> {
    let fig = Figure::from_text(
        out,
        "tcp-share",
        "Datagram streams beside a NewReno transfer at 2 Mb/s, one ring per RNG seed",
        text,
        &[],
    )?;
    let mut series: Vec<Series> = STREAMS
        .iter()
        .enumerate()
        .map(|(i, &st)| {
            let pts = m
                .configs
                .iter()
                .zip(&m.runs)
                .filter(|(c, _)| matches!(c, Config::Stream { stream: s, .. } if *s == st))
                .map(|(_, r)| (r.tcp_bps / 1e6, r.stream_bps / 1e6))
                .collect();
            Series::new(st.label(), plots::palette(i), Mark::Rings, pts)
        })
        .collect();
    // The line of equal shares.
    series.push(Series::new(
        "equal shares",
        plots::palette(7),
        Mark::Dashed,
        vec![(0.0, 0.0), (2.0, 2.0)],
    ));
    fig.draw(Chart {
        x_desc: "NewReno goodput (Mb/s)".into(),
        y_desc: "datagram stream goodput (Mb/s)".into(),
        x_range: Some((0.0, 2.0)),
        y_max: Some(2.0),
        ..Chart::one_panel(series)
    })
}

fn table(p: Params, m: &Measured) -> Table {
    // The scheme, the clients, the RPC run's figures, and TCP's goodput where a TCP ran.
    let row = |s: Scheme, clients: String, r: Run, tcp: String| {
        vec![
            s.label().to_string(),
            clients,
            format!("{:.0}%", r.useful * 100.0),
            format!("{:.2}", r.tx_per_done),
            format!("{:.1}%", r.failed * 100.0),
            format!("{:.0}", r.latency_ms),
            format!("{:.0}", r.queue_delay_ms),
            format!("{:.1}%", r.loss * 100.0),
            tcp,
        ]
    };
    let mut rows = Vec::new();
    for &s in &SCHEMES {
        for &n in client_counts(p.quick) {
            rows.push(row(s, n.to_string(), m.clients(s, n), "-".into()));
        }
        let r = m.with_tcp(s);
        let tcp = format!("{:.1}", r.tcp_bps / 1e3);
        rows.push(row(s, format!("{SHARED_CLIENTS} + TCP"), r, tcp));
    }
    Table {
        caption: format!(
            "RPC clients through the 256 kb/s gateway, {:.0} s runs. Useful: completed responses (IP bytes) over the gateway's rate. Latency: the clients' median completion time, averaged. Queue and drops: the responses' direction of the gateway.",
            timing(p.quick).0
        ),
        header: Table::header(&[
            "clients' timer and rate control",
            "clients",
            "useful",
            "transmissions per completed",
            "given up",
            "latency (ms)",
            "queue (ms)",
            "dropped",
            "TCP (kb/s)",
        ]),
        rows,
    }
}
