//! Experiment 2: the retransmit timer (seed 000, 15 Jun 1987 and 11 Feb 1988; Jacobson &
//! Karels 1988 Figs 5-6 and App. C; REFERENCES A2 and A6).
//!
//! Part 1 sweeps the load rho of Poisson cross traffic on a 56 kb/s line and counts the
//! retransmissions of one bulk transfer with the RFC 793 timer and with Jacobson's. The
//! gateway never drops, so every retransmission is spurious: the trace count is exact.
//! Part 2 is App. C's slow start on a 2400-baud serial line, k = 2 against k = 4.

use crate::plots;
use crate::suite::{
    judged, scenario, Ctx, LegacyExperiment as Experiment, Section, Table, Verdict,
};
use ackclock_gateway::{ImpairmentsConfig, ReorderConfig, ScriptedDrop};
use ackclock_sim::{RunResult, Scenario};
use ackclock_tcp::{State, TraceEvent, TraceKind};
use ackclock_wire::{Duration, Instant};
use anyhow::Result;

pub struct RtoTimer;

const TEXT: &str = include_str!("scenario.toml");
const SLIP: &str = include_str!("slip_scenario.toml");

/// The timers compared: RFC 793 (alpha 0.9, beta 2) and Jacobson's A + k D.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Timer {
    Rfc793,
    Vj(u32),
}

const TIMERS: [Timer; 3] = [Timer::Rfc793, Timer::Vj(2), Timer::Vj(4)];

/// The measured connection. `Light`: a window of one segment, so each packet's RTT is its
/// sojourn through the queue the cross traffic loads (the queueing argument of seed 000,
/// 11 Feb 1988, and the per-packet RTTs of JK88 Figs 5-6); the claims are judged on it.
/// `Bulk`: the 4.3BSD default window of 4 KB (8 segments), above the pipe of 4.5, so the
/// connection queues its own packets and takes all the line the cross traffic leaves.
/// `LightTicks`: the light connection with 4.3BSD's 500 ms clock (the slow timeout), whose
/// one-tick floor under the deviation term the 1988 timer had.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Conn {
    Light,
    LightTicks,
    Bulk,
}

const CONNS: [Conn; 3] = [Conn::Light, Conn::LightTicks, Conn::Bulk];

impl Conn {
    fn window_segments(self) -> usize {
        match self {
            Conn::Light | Conn::LightTicks => 1,
            Conn::Bulk => 8,
        }
    }
    fn clock_ms(self) -> f64 {
        match self {
            Conn::LightTicks => 500.0,
            _ => 1.0,
        }
    }
    fn rhos(self, quick: bool) -> &'static [f64] {
        match (self, quick) {
            (Conn::Light, false) => &[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9],
            (Conn::Light, true) => &[0.1, 0.3, 0.5, 0.75, 0.9],
            (_, false) => &[0.1, 0.3, 0.5, 0.75, 0.9],
            (_, true) => &[0.3, 0.75, 0.9],
        }
    }
}
/// Retransmissions are counted after the connection's first 100 s, so that the handshake's
/// RTT sample (a 44-byte SYN timed against 552-byte data) does not count as load.
const WARMUP_S: f64 = 100.0;
/// The RTO floor of the scenario file (below the path's smallest RTT of 355 ms).
const FLOOR_MS: f64 = 200.0;
/// Repetitions of the serial-line slow start (REFERENCES A6).
const SLIP_REPS: u64 = 20;
/// Runs of the sweep kept in memory at once (traces are large).
const CHUNK: usize = 24;

impl Timer {
    fn label(self) -> String {
        match self {
            Timer::Rfc793 => "RFC 793 (beta = 2)".into(),
            Timer::Vj(k) => format!("A + {k}D"),
        }
    }
    fn apply(self, s: &mut Scenario) {
        let o = &mut s.flow[0].tcp_overrides;
        match self {
            Timer::Rfc793 => {
                o.rtt_estimator = Some("rfc793".into());
                o.rfc793_alpha = Some(0.9);
                o.rfc793_beta = Some(2.0);
                o.rto_k = None;
            }
            Timer::Vj(k) => {
                o.rtt_estimator = Some("jacobson".into());
                o.rto_k = Some(k);
            }
        }
    }
}

/// What one run of the sweep leaves behind.
#[derive(Clone, Debug, Default)]
struct Counts {
    /// Data segments sent after the warm-up, retransmissions included.
    sent: u64,
    /// Retransmitted segments after the warm-up (all spurious: nothing is dropped).
    rexmit: u64,
    /// Timeouts after the warm-up.
    timeouts: u64,
    /// Spurious timeouts the engine's Eifel detector found (timestamps runs only).
    eifel: u64,
    /// RTT samples after the warm-up, and those above the RTO in force before them (the
    /// measure of JK88 Figs 5-6: a sample above the line would have timed out).
    samples: u64,
    samples_over: u64,
    /// Samples after which the RTO sat on the floor.
    floor_bound: u64,
    /// Packets lost anywhere (must be 0).
    drops: u64,
    util: f64,
    /// (RTT, RTO before it) of the first 150 samples after the warm-up, in seconds.
    series: Vec<(f64, f64)>,
}

fn reduce(r: &RunResult, keep_series: bool) -> Counts {
    let mut c = Counts::default();
    let warm = Instant::ZERO + Duration::from_secs_f64(WARMUP_S);
    let mut rto_before = Duration::ZERO;
    for e in &r.traces[0] {
        if e.time >= warm {
            match e.kind {
                TraceKind::Send {
                    len, retransmit, ..
                } if len > 0 => {
                    c.sent += 1;
                    c.rexmit += u64::from(retransmit);
                }
                TraceKind::Timeout => c.timeouts += 1,
                TraceKind::SpuriousRetransmit => c.eifel += 1,
                TraceKind::RttSample { rtt } => {
                    c.samples += 1;
                    c.samples_over += u64::from(rtt > rto_before);
                    c.floor_bound += u64::from(e.rto.as_secs_f64() * 1e3 <= FLOOR_MS + 1e-6);
                    if keep_series && c.series.len() < 150 {
                        c.series.push((rtt.as_secs_f64(), rto_before.as_secs_f64()));
                    }
                }
                _ => {}
            }
        }
        rto_before = e.rto;
    }
    for l in &r.summary.links {
        c.drops += l.queue_drops + l.lost_on_wire + l.corrupted;
        if l.name == "gw-rcv" {
            c.util = l.utilization;
        }
    }
    c
}

/// Runs `scens` a few at a time, reducing each result before the next batch so that the
/// traces of hundreds of runs are never in memory together.
fn run_reduced<T: Send>(
    ctx: &Ctx,
    scens: Vec<Scenario>,
    f: impl Fn(usize, &RunResult) -> T + Sync,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(scens.len());
    for (ci, chunk) in scens.chunks(CHUNK).enumerate() {
        let rs = ctx.run_all(chunk.to_vec())?;
        for (j, r) in rs.iter().enumerate() {
            out.push(f(ci * CHUNK + j, r));
        }
    }
    Ok(out)
}

/// The serial-line runs: timeouts after the first data segment, and what the first data
/// segment met (its RTO, its RTT).
#[derive(Clone, Debug, Default)]
struct Slip {
    spurious: u64,
    first_rto: f64,
    first_rtt: Option<f64>,
    syn_rtt: Option<f64>,
    data_samples: Vec<f64>,
}

fn slip_counts(tr: &[TraceEvent]) -> Slip {
    let mut s = Slip::default();
    let mut first_send: Option<Instant> = None;
    let mut established = false;
    for e in tr {
        match e.kind {
            TraceKind::StateChange {
                to: State::Established,
            } => established = true,
            TraceKind::RttSample { rtt } if !established => s.syn_rtt = Some(rtt.as_secs_f64()),
            TraceKind::Send { len, .. } if len > 0 && first_send.is_none() => {
                first_send = Some(e.time);
                s.first_rto = e.rto.as_secs_f64();
            }
            TraceKind::Timeout if first_send.is_some() => s.spurious += 1,
            // The first data packet's round trip, whether or not it was timed.
            TraceKind::Ack { .. } if s.first_rtt.is_none() => {
                if let Some(t0) = first_send {
                    s.first_rtt = Some((e.time - t0).as_secs_f64());
                }
            }
            TraceKind::RttSample { rtt } if first_send.is_some() => {
                s.data_samples.push(rtt.as_secs_f64());
            }
            _ => {}
        }
    }
    s
}

fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (mut s, mut n) = (0.0, 0.0);
    for x in v {
        s += x;
        n += 1.0;
    }
    if n > 0.0 {
        s / n
    } else {
        0.0
    }
}

impl Experiment for RtoTimer {
    fn name(&self) -> &'static str {
        "rto_timer"
    }
    fn title(&self) -> &'static str {
        "2. The retransmit timer"
    }
    fn scenario(&self) -> &'static str {
        TEXT
    }
    fn runs(&self, quick: bool, seeds: u64) -> u64 {
        let rhos: u64 = CONNS.iter().map(|c| c.rhos(quick).len() as u64).sum();
        // Sweep, the timestamp runs at rho = 0.75, and the serial line (2 k x 2 variants).
        TIMERS.len() as u64 * seeds * (rhos + 1) + 4 * SLIP_REPS
    }

    fn run(&self, ctx: &Ctx) -> Result<Section> {
        let base = scenario("rto_timer", TEXT)?;
        let slip = scenario("rto_slip", SLIP)?;
        let rhos = Conn::Light.rhos(ctx.quick);
        let line_bps = base.link[2].rate_bps;
        let duration = if ctx.quick { 1000.0 } else { base.duration_s };
        let mss = base.flow[0].tcp_overrides.mss.unwrap_or(512) as usize;
        let variant = |conn: Conn, t: Timer, rho: f64, seed: u64, timestamps: bool| {
            let mut s = base.clone();
            s.seed = seed + 1;
            s.duration_s = duration;
            s.cross[0].rate_bps = rho * line_bps;
            let w = conn.window_segments() * mss;
            s.flow[0].tcp_overrides.send_buffer_bytes = Some(w);
            s.flow[0].tcp_overrides.recv_buffer_bytes = Some(w);
            s.flow[0].tcp_overrides.clock_granularity_ms = Some(conn.clock_ms());
            t.apply(&mut s);
            if timestamps {
                s.flow[0].tcp_overrides.timestamps = Some(true);
            }
            s
        };

        // ---- Part 1: the load sweep ----
        let mut scens = Vec::new();
        let mut keys = Vec::new();
        for conn in CONNS {
            for &t in &TIMERS {
                for &rho in conn.rhos(ctx.quick) {
                    for seed in 0..ctx.seeds {
                        scens.push(variant(conn, t, rho, seed, false));
                        keys.push((conn, t, rho, seed));
                    }
                }
            }
        }
        let counts = run_reduced(ctx, scens, |i, r| {
            let (conn, t, rho, seed) = keys[i];
            let keep =
                conn == Conn::Light && seed == 0 && (rho - 0.75).abs() < 1e-9 && t != Timer::Vj(2);
            reduce(r, keep)
        })?;
        let cell = |conn: Conn, t: Timer, rho: f64| -> Vec<&Counts> {
            keys.iter()
                .zip(&counts)
                .filter(|((cc, tt, rr, _), _)| *cc == conn && *tt == t && (*rr - rho).abs() < 1e-9)
                .map(|(_, c)| c)
                .collect()
        };
        // Mean over seeds of the per-run rate (each run weighs the same).
        let per1000 = |conn: Conn, t: Timer, rho: f64| -> f64 {
            mean(
                cell(conn, t, rho)
                    .iter()
                    .map(|c| 1000.0 * c.rexmit as f64 / c.sent.max(1) as f64),
            )
        };
        let rto_per1000 = |conn: Conn, t: Timer, rho: f64| -> f64 {
            mean(
                cell(conn, t, rho)
                    .iter()
                    .map(|c| 1000.0 * c.timeouts as f64 / c.sent.max(1) as f64),
            )
        };
        let over = |conn: Conn, t: Timer, rho: f64| -> f64 {
            mean(
                cell(conn, t, rho)
                    .iter()
                    .map(|c| 100.0 * c.samples_over as f64 / c.samples.max(1) as f64),
            )
        };
        let total_drops: u64 = counts.iter().map(|c| c.drops).sum();
        let floor_bound: u64 = counts.iter().map(|c| c.floor_bound).sum();

        let table_for = |conn: Conn, with_over: bool| -> Vec<Vec<String>> {
            let mut rows = Vec::new();
            for &rho in conn.rhos(ctx.quick) {
                let mut row = vec![
                    format!("{rho:.2}"),
                    format!(
                        "{:.2}",
                        mean(cell(conn, TIMERS[0], rho).iter().map(|c| c.util))
                    ),
                ];
                for &t in &TIMERS {
                    row.push(if with_over {
                        format!(
                            "{:.2} ({:.2} RTOs; {:.1}% of samples > rto)",
                            per1000(conn, t, rho),
                            rto_per1000(conn, t, rho),
                            over(conn, t, rho)
                        )
                    } else {
                        format!(
                            "{:.2} ({:.2} RTOs)",
                            per1000(conn, t, rho),
                            rto_per1000(conn, t, rho)
                        )
                    });
                }
                row.push(format!(
                    "{:.0}",
                    mean(cell(conn, Timer::Vj(4), rho).iter().map(|c| c.sent as f64))
                ));
                rows.push(row);
            }
            rows
        };
        let light_rows = table_for(Conn::Light, false);
        let ticks_rows = table_for(Conn::LightTicks, false);
        let bulk_rows = table_for(Conn::Bulk, true);

        // ---- The timestamp runs: the engine's Eifel count against the trace ----
        let ts_scens: Vec<Scenario> = TIMERS
            .iter()
            .flat_map(|&t| (0..ctx.seeds).map(move |seed| (t, seed)))
            .map(|(t, seed)| variant(Conn::Light, t, 0.75, seed, true))
            .collect();
        let ts_counts = run_reduced(ctx, ts_scens, |_, r| reduce(r, false))?;
        let mut eifel_rows = Vec::new();
        let mut eifel_note = Vec::new();
        for (i, &t) in TIMERS.iter().enumerate() {
            let cs = &ts_counts[i * ctx.seeds as usize..(i + 1) * ctx.seeds as usize];
            let sum = |f: fn(&Counts) -> u64| cs.iter().map(f).sum::<u64>();
            let (to, ei, rx, se) = (
                sum(|c| c.timeouts),
                sum(|c| c.eifel),
                sum(|c| c.rexmit),
                sum(|c| c.sent),
            );
            eifel_rows.push(vec![
                t.label(),
                to.to_string(),
                ei.to_string(),
                rx.to_string(),
                format!("{:.2}", 1000.0 * rx as f64 / se.max(1) as f64),
                format!("{:.2}", per1000(Conn::Light, t, 0.75)),
            ]);
            eifel_note.push(format!("{}: {to} timeouts, Eifel {ei}", t.label()));
        }

        // ---- Part 2: App. C on a 2400-baud line ----
        let slip_run = |k: u32, rep: u64, no_syn_sample: bool| {
            let mut s = slip.clone();
            s.seed = rep + 1;
            s.flow[0].tcp_overrides.rto_k = Some(k);
            if no_syn_sample {
                // The SYN is lost once: Karn's rule leaves the handshake untimed and RFC
                // 6298 (5.7) starts the data with RTO = 3 s, so the first sample is a data
                // packet's.
                s.link[0].impair_ab = Some(ImpairmentsConfig {
                    reorder: Some(ReorderConfig {
                        prob: 0.5,
                        delay_ms: 48.0,
                    }),
                    scripted: vec![ScriptedDrop::Packets { nth: vec![1] }],
                    ..Default::default()
                });
            }
            s
        };
        let mut slip_scens = Vec::new();
        for no_syn in [false, true] {
            for k in [2u32, 4] {
                for rep in 0..SLIP_REPS {
                    slip_scens.push(slip_run(k, rep, no_syn));
                }
            }
        }
        let slip_results = ctx.run_all(slip_scens)?;
        let slip_c: Vec<Slip> = slip_results
            .iter()
            .map(|r| slip_counts(&r.traces[0]))
            .collect();
        let group = |no_syn: bool, k: u32| -> &[Slip] {
            let g = usize::from(no_syn) * 2 + usize::from(k == 4);
            &slip_c[g * SLIP_REPS as usize..(g + 1) * SLIP_REPS as usize]
        };
        let reps_with = |g: &[Slip]| g.iter().filter(|s| s.spurious > 0).count();
        let slip_drops: u64 = slip_results
            .iter()
            .take(2 * SLIP_REPS as usize)
            .flat_map(|r| &r.summary.links)
            .map(|l| l.queue_drops + l.lost_on_wire)
            .sum();
        let mut slip_rows = Vec::new();
        for no_syn in [false, true] {
            for k in [2u32, 4] {
                let g = group(no_syn, k);
                slip_rows.push(vec![
                    if no_syn {
                        "first sample from data (SYN lost once)".to_string()
                    } else {
                        "handshake timed (as 4.3BSD)".to_string()
                    },
                    k.to_string(),
                    format!("{} of {}", reps_with(g), g.len()),
                    format!("{:.1}", mean(g.iter().map(|s| s.spurious as f64))),
                    g[0].syn_rtt
                        .map_or("-".into(), |v| format!("{:.0} ms", v * 1e3)),
                    format!("{:.0} ms", mean(g.iter().map(|s| s.first_rto)) * 1e3),
                    format!("{:.0} ms", mean(g.iter().filter_map(|s| s.first_rtt)) * 1e3),
                ]);
            }
        }

        // ---- Claims ----
        let e = self.name();
        let rfc = Timer::Rfc793;
        let vj4 = Timer::Vj(4);
        let low: Vec<f64> = rhos
            .iter()
            .filter(|&&r| r <= 0.3 + 1e-9)
            .map(|&r| per1000(Conn::Light, rfc, r))
            .collect();
        let low_max = low.iter().copied().fold(0.0, f64::max);
        let high: Vec<(f64, f64)> = rhos
            .iter()
            .filter(|&&r| r >= 0.5 - 1e-9)
            .map(|&r| (r, per1000(Conn::Light, rfc, r)))
            .collect();
        let high_ok = high.iter().all(|&(_, v)| v > 0.0);
        let vj_max = rhos
            .iter()
            .map(|&r| (r, per1000(Conn::Light, vj4, r)))
            .fold((0.0, 0.0), |a, b| if b.1 > a.1 { b } else { a });
        let (r75, v75) = (
            per1000(Conn::Light, rfc, 0.75),
            per1000(Conn::Light, vj4, 0.75),
        );
        let ratio = if v75 > 0.0 { r75 / v75 } else { f64::INFINITY };
        let fmt_ratio = if ratio.is_finite() {
            format!("{ratio:.1}x ({r75:.2} vs {v75:.2})")
        } else {
            format!("inf ({r75:.2} vs 0)")
        };
        let k4_plain = reps_with(group(false, 4));
        let k2_plain = reps_with(group(false, 2));
        let k4_data = reps_with(group(true, 4));
        let k2_data = reps_with(group(true, 2));
        let g4 = group(false, 4);
        let syn_ms = g4[0].syn_rtt.unwrap_or(0.0) * 1e3;
        let first_rto_ms = mean(g4.iter().map(|s| s.first_rto)) * 1e3;
        let first_rtt_ms = mean(g4.iter().filter_map(|s| s.first_rtt)) * 1e3;
        let data_growth = {
            // Successive data RTT samples of the no-handshake k = 4 runs: the most one
            // sample exceeds the previous by (App. C assumes up to 2x per round).
            let mut m = 0.0f64;
            for s in group(true, 4) {
                for w in s.data_samples.windows(2) {
                    m = m.max(w[1] / w[0]);
                }
            }
            m
        };

        // The same timers on 4.3BSD's 500 ms clock, for the notes.
        let tick_vals: Vec<String> = Conn::LightTicks
            .rhos(ctx.quick)
            .iter()
            .map(|&r| format!("{:.2}", per1000(Conn::LightTicks, vj4, r)))
            .collect();
        let ticks_note = format!(
            "The timer fires on a low-variance path: at rho = 0.1 nearly every packet finds the queue empty, the mean deviation decays to the 1 ms clock tick, RTO = A + 4 ms, and a 576-byte datagram ahead of a packet (up to 82 ms) fires it. The 1988 timer ran on 4.3BSD's 500 ms clock, whose tick is a floor under the deviation term (RFC 6298's max(G, K*RTTVAR)); with it, A + 4D makes {} per 1000 at rho = {}.",
            tick_vals.join(" / "),
            Conn::LightTicks
                .rhos(ctx.quick)
                .iter()
                .map(|r| format!("{r}"))
                .collect::<Vec<_>>()
                .join(" / ")
        );
        let why_ticks = "The claim holds for the 1988 timer with its clock, not for the estimator alone on a fine clock; hence RFC 6298's G term and 1 s minimum (Linux: 200 ms).";
        let (tr75, tv75) = (
            per1000(Conn::LightTicks, rfc, 0.75),
            per1000(Conn::LightTicks, vj4, 0.75),
        );
        let ticks_ratio = if tv75 > 0.0 {
            format!("{:.1}x ({tr75:.2} vs {tv75:.2})", tr75 / tv75)
        } else {
            format!("inf ({tr75:.2} vs 0)")
        };
        let claims = vec![
            judged(
                &base,
                e,
                "beta2_low",
                format!("{low_max:.2}"),
                Verdict::of(low_max <= 1.0),
                "",
            )?,
            judged(
                &base,
                e,
                "beta2_high",
                high.iter()
                    .filter(|(r, _)| [0.5, 0.75, 0.9].iter().any(|x| (x - r).abs() < 1e-9))
                    .map(|(_, v)| format!("{v:.2}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                Verdict::of(high_ok),
                "",
            )?,
            judged(
                &base,
                e,
                "vj_none",
                format!("{:.2} (rho = {:.2})", vj_max.1, vj_max.0),
                if vj_max.1 <= 1.0 {
                    Verdict::Pass
                } else {
                    Verdict::Disagree
                },
                if vj_max.1 <= 1.0 {
                    String::new()
                } else {
                    format!("{ticks_note} {why_ticks}")
                },
            )?,
            judged(
                &base,
                e,
                "vj_5x",
                fmt_ratio,
                if ratio >= 5.0 {
                    Verdict::Pass
                } else {
                    Verdict::Disagree
                },
                if ratio >= 5.0 {
                    String::new()
                } else {
                    format!(
                        "{ticks_note} With the 500 ms clock, RFC 793 / (A + 4D) at rho = 0.75 is {}.",
                        ticks_ratio
                    )
                },
            )?,
            judged(
                &base,
                e,
                "eifel",
                eifel_note.join("; "),
                Verdict::Info,
                "No packet is dropped, so every timeout is spurious and every retransmission needless: the trace count is exact, with or without timestamps. The engine's Eifel detector (RFC 3522) flags at most one per timeout episode and needs timestamps, which make every ACK an RTT sample (with a window of one segment that changes nothing; with larger windows it changes the estimator under test) and add 12 bytes to every segment. Here each timeout resends one segment, so the counts coincide; after a go-back-N resend of a larger window the trace counts every needless segment and Eifel one event. The sweep runs without timestamps and counts from the trace.",
            )?,
            judged(
                &base,
                e,
                "k4_slip",
                format!("{k4_plain} of {SLIP_REPS} ({k4_data} when the first sample is a data packet's)"),
                if k4_plain == 0 { Verdict::Pass } else { Verdict::Disagree },
                if k4_plain == 0 {
                    String::new()
                } else {
                    format!("The first data packet is timed against an RTO from the handshake's sample: the 44-byte SYN and SYN-ACK take {syn_ms:.0} ms, so RTO = R + 4V = 3R = {first_rto_ms:.0} ms, while the first 576-byte packet needs {first_rtt_ms:.0} ms (2.4 s on the line, the delayed ACK, the ACK). App. C's bound rto_i = 3R_i > R_(i+1) holds only while successive samples at most double; SYN to first data is x{:.1}. 4.3BSD timed in 500 ms ticks counted from 1, so it read such a SYN sample as 1 or 2 ticks (RTO 1.5 or 3 s with 4V), of which only the second clears the first data packet; our clock measures the sample exactly. With the first sample taken from a data packet no repetition times out, for either k (successive data samples grow at most x{data_growth:.2}; the timer restarts on every ACK, which arrive one packet time, 2.4 s, apart).", first_rtt_ms / syn_ms.max(1e-9))
                },
            )?,
            judged(
                &base,
                e,
                "k2_slip",
                format!("{k2_plain} of {SLIP_REPS} ({k2_data} when the first sample is a data packet's)"),
                Verdict::of(2 * k2_plain >= SLIP_REPS as usize),
                if k4_plain > 0 {
                    "both k time out on the first data packet, for the same reason (see the k = 4 row)"
                } else {
                    ""
                },
            )?,
        ];

        // ---- Plots ----
        let mut plots_out = Vec::new();
        let p = ctx.out.join("spurious-vs-load.svg");
        let mut series: Vec<(String, Vec<(f64, f64)>)> = TIMERS
            .iter()
            .map(|&t| {
                (
                    format!("{}, 1 ms clock", t.label()),
                    rhos.iter()
                        .map(|&r| (r, per1000(Conn::Light, t, r)))
                        .collect(),
                )
            })
            .collect();
        for t in [Timer::Vj(2), vj4] {
            series.push((
                format!("{}, 500 ms clock", t.label()),
                Conn::LightTicks
                    .rhos(ctx.quick)
                    .iter()
                    .map(|&r| (r, per1000(Conn::LightTicks, t, r)))
                    .collect(),
            ));
        }
        plots::lines(
            &p,
            "spurious retransmissions vs load, window of one segment (no packet is lost)",
            "load rho of the Poisson cross traffic",
            "spurious retransmissions per 1000 segments",
            &series,
            false,
        )?;
        plots_out.push(p);
        for t in [rfc, vj4] {
            let c = keys
                .iter()
                .zip(&counts)
                .find(|((cc, tt, rr, s), _)| {
                    *cc == Conn::Light && *tt == t && (*rr - 0.75).abs() < 1e-9 && *s == 0
                })
                .map(|(_, c)| c);
            if let Some(c) = c {
                let name = match t {
                    Timer::Rfc793 => "rtt-rfc793.svg",
                    Timer::Vj(_) => "rtt-jacobson.svg",
                };
                let p = ctx.out.join(name);
                let rtt: Vec<(f64, f64)> = c
                    .series
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as f64 + 1.0, s.0))
                    .collect();
                let rto: Vec<(f64, f64)> = c
                    .series
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as f64 + 1.0, s.1))
                    .collect();
                plots::lines(
                    &p,
                    &format!(
                        "{}: RTT samples and the RTO in force, rho = 0.75 (JK88 Figs 5-6)",
                        t.label()
                    ),
                    "RTT sample number (after 100 s)",
                    "seconds",
                    &[("RTT".into(), rtt), ("RTO before the sample".into(), rto)],
                    false,
                )?;
                plots_out.push(p);
            }
        }
        let p = ctx.out.join("tseq-slip-k4.svg");
        plots::time_sequence_titled(
            &slip_results[SLIP_REPS as usize],
            0,
            &p,
            "2400 baud, k = 4, handshake timed: slow start from 1 to 8 segments",
            None,
        )?;
        plots_out.push(p);

        let mut discussion = format!(
            "No packet was lost in any run of the sweep ({total_drops} drops), so a retransmission is spurious by construction; the RTO sat on the 200 ms floor after {floor_bound} of the samples. The TCP restarts its timer on every ACK, as 4.3BSD did, so a spurious timeout needs a gap between two ACKs longer than the RTO, not a single RTT above it; the column '% of samples > rto' gives the JK88 Figs 5-6 measure (a sample above the RTO computed before it) beside the real count. "
        );
        discussion.push_str("With a window of 8 packets the connection's own packets make up much of its RTT; the cross traffic adds the variation, and the RTT grows with load like 1/(1-rho). ");
        if k4_plain > 0 {
            discussion.push_str("App. C (k = 4 against k = 2) is not reproduced as stated: on a pure serial line the handshake's RTT sample is an order of magnitude below a data packet's, so the first data packet times out with either k; once a data packet has been timed, the per-ACK restart of the timer keeps both timers clear of the 2.4 s gaps between ACKs. The paper's analysis (R doubling per round, rto compared with the next round's RTT) describes a timer measured from each packet's transmission. ");
        }
        Ok(Section {
            quote: "The RFC793 parameter \"beta\" accounts for rtt variation. The suggested value of \"2\" can adapt to loads of at most 30%. Above this point, a connection will respond to load increases by retransmitting packets that have only been delayed in transit. ... the resulting retransmit timer essentially eliminates spurious retransmissions.".into(),
            quote_source: "seed 000_a2655ca5932a6b6b.txt, 11 Feb 1988 (and 15 Jun 1987 for the estimator); JK88 App. C".into(),
            setup: format!("Sweep: one Tahoe bulk transfer (MSS 512, 4 KB window) and Poisson cross traffic of 576-byte datagrams at load rho of a 56 kb/s line, pipe 4.5 packets (355 ms), a 1000-packet gateway queue (no drops); {duration:.0} s per run, counted after {WARMUP_S:.0} s; {} seeds per point; RTO floor 200 ms (below every RTT), 1 ms clock. Timers: RFC 793 (alpha 0.9, beta 2), A + 2D (15 Jun 1987), A + 4D (1988 paper). Serial line: 2400 baud (1920 b/s of data bits, 2.4 s per 576-byte packet), no propagation delay, MSS 536, window 8 segments, 15 segments of slow start, +-1% service jitter, {SLIP_REPS} repetitions, RTO floor 1 s (4.3BSD's and RFC 6298's).", ctx.seeds),
            claims,
            tables: vec![
                Table {
                    caption: "Window of one segment, 1 ms clock (the claims): spurious retransmissions per 1000 segments (spurious timeouts per 1000 segments), mean over seeds".into(),
                    header: vec!["rho".into(), "line utilization".into(), TIMERS[0].label(), TIMERS[1].label(), TIMERS[2].label(), "segments per run (A + 4D)".into()],
                    rows: light_rows,
                },
                Table {
                    caption: "Window of one segment, 4.3BSD's 500 ms clock (samples in whole ticks, RTO >= A + 1 tick): the same".into(),
                    header: vec!["rho".into(), "line utilization".into(), TIMERS[0].label(), TIMERS[1].label(), TIMERS[2].label(), "segments per run (A + 4D)".into()],
                    rows: ticks_rows,
                },
                Table {
                    caption: "Window of 8 segments (4.3BSD's 4 KB, above the pipe), 1 ms clock: the same, with the share of RTT samples above the RTO in force".into(),
                    header: vec!["rho".into(), "line utilization".into(), TIMERS[0].label(), TIMERS[1].label(), TIMERS[2].label(), "segments per run (A + 4D)".into()],
                    rows: bulk_rows,
                },
                Table {
                    caption: "Counting methods at rho = 0.75, timestamps on (sums over seeds)".into(),
                    header: vec!["timer".into(), "timeouts (all spurious)".into(), "Eifel spurious".into(), "retransmitted segments".into(), "per 1000 (timestamps)".into(), "per 1000 (no timestamps, sweep)".into()],
                    rows: eifel_rows,
                },
                Table {
                    caption: format!("Serial line, slow start 1 -> 8 segments ({slip_drops} drops in the runs with the handshake timed)"),
                    header: vec!["variant".into(), "k".into(), "repetitions with a spurious timeout".into(), "spurious timeouts (mean)".into(), "handshake RTT".into(), "RTO for the first data packet".into(), "first data RTT".into()],
                    rows: slip_rows,
                },
            ],
            plots: plots_out,
            discussion,
            ..Section::default()
        })
    }
}
