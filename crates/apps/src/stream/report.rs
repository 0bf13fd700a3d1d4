//! The reports of a [`StreamApp`](super::StreamApp) test: netperf's figures for one
//! stream, iperf3's interval and summary lines (its `unit_snprintf` units), and the
//! `--json` document in the shape of iperf3 -J (docs/OUTPUTS.md, `ackclock stream --json`).
//! They format; printing is the caller's.

use super::interval::{Interval, IntervalRecord};
use super::{Limit, StreamDirection, StreamOptions, StreamReport};
use ackclock_tcp::{LossDetection, Stats};
use ackclock_wire::Duration;
use std::fmt::Write as _;

/// `writeln!` into a `String`, which cannot fail.
macro_rules! w {
    ($out:expr, $($t:tt)*) => {
        let _ = writeln!($out, $($t)*);
    };
}

/// What a test's reports are about, for the text and JSON writers.
#[derive(Clone, Debug)]
pub struct StreamTest {
    /// netperf's name of the test: TCP_STREAM (we send) or TCP_MAERTS (we receive).
    pub name: &'static str,
    /// The TCP configuration's preset, as the user named it.
    pub preset: String,
    /// Which way the data flows.
    pub direction: StreamDirection,
    /// Streams at once.
    pub parallel: usize,
    /// The interval of the interval reports, if any.
    pub interval: Option<Duration>,
    /// How long the test runs.
    pub limit: Limit,
    /// The connections' loss detection: with RACK (RFC 8985) the text reports show its
    /// counters even when they are zero, since zero then says something.
    pub loss_detection: LossDetection,
    /// Undo of needless reductions (RFC 3708 D-SACK, RFC 3522 Eifel detection with RFC
    /// 4015's response): when on, the text reports show the spurious-reduction counters
    /// even when they are zero.
    pub undo: bool,
    /// F-RTO (RFC 5682): when on, the text reports show the spurious-reduction counters
    /// even when they are zero.
    pub frto: bool,
}

impl StreamTest {
    /// The test `opts` describe, with the preset's name.
    pub fn of(opts: &StreamOptions, preset: &str) -> StreamTest {
        StreamTest {
            name: match opts.direction {
                StreamDirection::Send => "TCP_STREAM",
                StreamDirection::Recv => "TCP_MAERTS",
            },
            preset: preset.to_string(),
            direction: opts.direction,
            parallel: opts.parallel,
            interval: opts.interval,
            limit: opts.limit,
            loss_detection: opts.tcp.loss_detection,
            undo: opts.tcp.undo,
            frto: opts.tcp.frto,
        }
    }
}

/// Service demand as netperf prints it: CPU time per KB (1024 bytes) moved.
pub fn service_demand_us_per_kb(cpu: Duration, bytes: u64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        cpu.as_nanos() as f64 / 1e3 / (bytes as f64 / 1024.0)
    }
}

/// The netperf-style report of a one-stream test: a row of figures, then the connection's
/// counters line by line.
pub fn single_report(
    test: &StreamTest,
    r: &StreamReport,
    cpu: Duration,
    interrupted: bool,
) -> String {
    let (name, preset) = (test.name, test.preset.as_str());
    let mut out = String::new();
    let s = r.stats.clone().unwrap_or_default();
    let secs = r.elapsed.as_secs_f64();
    figures_row(&mut out, r, &s, cpu);
    out.push('\n');
    w!(out, "test               {name} (preset {preset})");
    if let (Some(l), Some(p)) = (r.local, r.remote) {
        w!(out, "connection         {l} -> {p}");
    }
    w!(
        out,
        "goodput            {:.3} Mbit/s ({} bytes in {:.3} s)",
        r.goodput_bps() / 1e6,
        r.bytes,
        secs
    );
    if let Some(c) = r.connect_time {
        w!(
            out,
            "handshake          {:.3} ms",
            c.as_nanos() as f64 / 1e6
        );
    }
    w!(
        out,
        "retransmissions    {} segments, {} bytes; {} fast retransmits, {} timeouts, {} recoveries",
        s.retransmitted_segs,
        s.bytes_retransmitted,
        s.fast_retransmits,
        s.timeouts,
        s.recoveries
    );
    if let Some(l) = loss_detection_text(test, &s) {
        w!(out, "loss detection     {l}");
    }
    w!(
        out,
        "rtt                srtt {:.3} ms, rttvar {:.3} ms, rto {:.1} ms, min {}",
        s.srtt.as_nanos() as f64 / 1e6,
        s.rttvar.as_nanos() as f64 / 1e6,
        s.rto.as_nanos() as f64 / 1e6,
        s.min_rtt
            .map(|d| format!("{:.3} ms", d.as_nanos() as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    );
    w!(
        out,
        "window             cwnd {} bytes, ssthresh {}, peer window {} bytes, our window {} bytes{}",
        s.cwnd_bytes,
        if s.ssthresh_bytes == u32::MAX {
            "inf".to_string()
        } else {
            s.ssthresh_bytes.to_string()
        },
        s.snd_wnd_bytes,
        s.rcv_wnd_bytes,
        if s.pacing_rate_bps > 0 {
            format!(", pacing {}", iperf_rate(s.pacing_rate_bps as f64))
        } else {
            String::new()
        }
    );
    w!(
        out,
        "options            mss {}, wscale {}/{} (ours/peer's), sack {}, timestamps {}",
        s.snd_mss,
        s.rcv_wscale,
        s.snd_wscale,
        if s.sack_enabled { "on" } else { "off" },
        if s.timestamps_enabled { "on" } else { "off" }
    );
    w!(out,
        "segments           {} out ({} data, {} pure ACKs, {} delayed), {} in ({} data, {} dup ACKs, {} out of order)",
        s.segs_out, s.data_segs_out, s.pure_acks_out, s.delayed_acks_out, s.segs_in, s.data_segs_in, s.dup_acks_in, s.out_of_order_segs_in
    );
    w!(
        out,
        "window events      {} zero-window probes sent, {} window updates sent",
        s.window_probes,
        s.window_updates_out
    );
    if s.ecn_enabled {
        w!(out,
            "ecn                on: {} reductions for {} ECE received, {} CWR sent; {} CE marks received",
            s.ecn_reductions, s.ece_in, s.cwr_out, s.ce_segs_in
        );
    }
    w!(
        out,
        "header prediction  {} ACK hits, {} data hits, {} misses",
        s.hp_ack_hits,
        s.hp_data_hits,
        s.hp_misses
    );
    w!(
        out,
        "cpu                {:.3} s, service demand {:.3} us/KB",
        cpu.as_secs_f64(),
        service_demand_us_per_kb(cpu, r.bytes)
    );
    w!(out, "end                {}", end_text(r, interrupted));
    out
}

/// The retransmission details of RACK-TLP (RFC 8985) and D-SACK (RFC 2883), for the line
/// under `retransmissions`, and after them the spurious timeouts (RFC 3522 Eifel, RFC 5682
/// F-RTO), spurious recoveries (RFC 3708) and undone reductions when one is non-zero or
/// undo or F-RTO is on, labelled with what is on. `None` with the duplicate-ACK rule, undo
/// and F-RTO off and every counter zero, so the default report keeps its lines; with RACK,
/// undo or F-RTO the line is always there.
fn loss_detection_text(test: &StreamTest, s: &Stats) -> Option<String> {
    let ld = test.loss_detection;
    let rack = [
        s.tlp_probes,
        s.tlp_recoveries,
        s.rack_reorder_timeouts,
        s.dsacks_in,
    ];
    let undo = [s.spurious_rtos, s.spurious_recoveries, s.undos];
    let undo_shown = test.undo || test.frto || undo.iter().any(|&c| c != 0);
    if ld == LossDetection::DupAck && !undo_shown && rack.iter().all(|&c| c == 0) {
        return None;
    }
    let mut l = format!(
        "{ld}: tlp {} ({} repaired), rack reorder timeouts {}, dsacks {}",
        s.tlp_probes, s.tlp_recoveries, s.rack_reorder_timeouts, s.dsacks_in
    );
    if undo_shown {
        let on = match (test.undo, test.frto) {
            (true, true) => "undo+frto",
            (true, false) => "undo",
            (false, true) => "frto",
            (false, false) => "no undo",
        };
        let _ = write!(
            l,
            "; {on}: spurious timeouts {}, spurious recoveries {}, undos {}",
            s.spurious_rtos, s.spurious_recoveries, s.undos
        );
    }
    Some(l)
}

/// netperf's row of figures under its header.
fn figures_row(out: &mut String, r: &StreamReport, s: &Stats, cpu: Duration) {
    let secs = r.elapsed.as_secs_f64();
    out.push('\n');
    w!(
        *out,
        "{:>12} {:>9} {:>10} {:>9} {:>7} {:>8} {:>8} {:>10} {:>9}",
        "bytes",
        "elapsed_s",
        "goodput",
        "retrans",
        "fast_rx",
        "timeouts",
        "srtt_ms",
        "cwnd",
        "us/KB"
    );
    w!(
        *out,
        "{:>12} {:>9.3} {:>10} {:>9} {:>7} {:>8} {:>8.3} {:>10} {:>9.3}",
        r.bytes,
        secs,
        format!("{:.2}M", r.goodput_bps() / 1e6),
        s.retransmitted_segs,
        s.fast_retransmits,
        s.timeouts,
        s.srtt.as_nanos() as f64 / 1e6,
        s.cwnd_bytes,
        service_demand_us_per_kb(cpu, r.bytes),
    );
}

/// A quantity as iperf3 prints it (its `unit_snprintf`): three significant digits and the
/// largest unit the value reaches; bytes in powers of 1024 (KBytes, MBytes...), bits in
/// powers of 1000 (Kbits/sec, Mbits/sec...).
fn iperf_unit(v: f64, step: f64, units: [&str; 5]) -> String {
    let mut v = v;
    let mut u = 0;
    while u + 1 < units.len() && v >= step {
        v /= step;
        u += 1;
    }
    let digits = if v < 9.995 {
        2
    } else if v < 99.95 {
        1
    } else {
        0
    };
    format!("{v:4.digits$} {}", units[u])
}

/// Bytes in iperf3's units (KBytes, MBytes: powers of 1024).
pub fn iperf_bytes(b: u64) -> String {
    iperf_unit(
        b as f64,
        1024.0,
        ["Bytes", "KBytes", "MBytes", "GBytes", "TBytes"],
    )
}

/// A rate in iperf3's units (Kbits/sec, Mbits/sec: powers of 1000).
pub fn iperf_rate(bps: f64) -> String {
    iperf_unit(
        bps,
        1000.0,
        [
            "bits/sec",
            "Kbits/sec",
            "Mbits/sec",
            "Gbits/sec",
            "Tbits/sec",
        ],
    )
}

/// iperf3's separator between groups of lines.
pub const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -\n";

/// The column header of the interval lines (Retr and Cwnd only for a sender: they are our
/// sender's counters).
fn header(send: bool, cwnd: bool) -> String {
    format!(
        "[ ID] Interval           Transfer     Bitrate{}\n",
        match (send, cwnd) {
            (true, true) => "         Retr  Cwnd",
            (true, false) => "         Retr",
            _ => "",
        }
    )
}

/// One line: `[  1]   0.00-1.00   sec   112 MBytes   941 Mbits/sec    0    407 KBytes`.
fn line(
    id: &str,
    start: f64,
    end: f64,
    bytes: u64,
    bps: f64,
    retr: Option<u64>,
    tail: &str,
) -> String {
    let mut l = format!(
        "[{id:>3}] {start:6.2}-{end:<6.2} sec  {:>11}  {:>14}",
        iperf_bytes(bytes),
        iperf_rate(bps)
    );
    if let Some(r) = retr {
        l.push_str(&format!("  {r:>3}"));
    }
    l.push_str(tail);
    l.push('\n');
    l
}

/// The lines of one interval report: the header before the first, a line per stream, a
/// `[SUM]` line when there are several, a separator between groups (as iperf3 prints them).
pub fn interval_text(i: &Interval<'_>, parallel: usize, send: bool) -> String {
    let mut out = String::new();
    if i.index == 0 {
        out.push_str(&header(send, true));
    } else if parallel > 1 {
        out.push_str(SEPARATOR);
    }
    let (start, end) = (i.start.as_secs_f64(), i.end.as_secs_f64());
    for (k, s) in i.streams.iter().enumerate() {
        let cwnd = if send {
            format!("   {:>11}", iperf_bytes(u64::from(s.cwnd_bytes)))
        } else {
            String::new()
        };
        out.push_str(&line(
            &(k + 1).to_string(),
            start,
            end,
            s.bytes,
            i.rate_bps(s.bytes),
            send.then_some(s.retransmits),
            &cwnd,
        ));
    }
    if parallel > 1 {
        let b = i.bytes();
        out.push_str(&line(
            "SUM",
            start,
            end,
            b,
            i.rate_bps(b),
            send.then_some(i.retransmits()),
            "",
        ));
    }
    out
}

/// The final lines in iperf3's manner: each stream from its start to its data end, and the
/// sum over the whole test.
pub fn summary_text(
    test: &StreamTest,
    reports: &[&StreamReport],
    total: (u64, Duration),
) -> String {
    let send = test.direction == StreamDirection::Send;
    let role = if send { "  sender" } else { "  receiver" };
    let mut out = String::from(SEPARATOR);
    out.push_str(&header(send, false));
    let mut retr_sum = 0;
    for (k, r) in reports.iter().enumerate() {
        let retr = r.stats.as_ref().map_or(0, |s| s.retransmitted_segs);
        retr_sum += retr;
        match (r.start, r.end()) {
            (Some(s), Some(e)) => out.push_str(&line(
                &(k + 1).to_string(),
                s.as_secs_f64(),
                e.as_secs_f64(),
                r.bytes,
                r.goodput_bps(),
                send.then_some(retr),
                role,
            )),
            _ => out.push_str(&format!(
                "[{:>3}] no connection ({})\n",
                k + 1,
                r.error
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "none arrived".into())
            )),
        }
    }
    if reports.len() > 1 {
        let (bytes, elapsed) = total;
        out.push_str(&line(
            "SUM",
            0.0,
            elapsed.as_secs_f64(),
            bytes,
            rate(bytes, elapsed),
            send.then_some(retr_sum),
            role,
        ));
    }
    out
}

fn rate(bytes: u64, d: Duration) -> f64 {
    let s = d.as_secs_f64();
    if s > 0.0 {
        bytes as f64 * 8.0 / s
    } else {
        0.0
    }
}

/// The netperf-style report of a test with several streams: a row per stream and one for
/// the sum, then the totals.
pub fn parallel_report(
    test: &StreamTest,
    reports: &[&StreamReport],
    total: (u64, Duration),
    cpu: Duration,
    interrupted: bool,
) -> String {
    let mut out = String::new();
    let row = |out: &mut String, id: &str, bytes: u64, secs: f64, bps: f64, s: &Stats| {
        out.push_str(&format!(
            "{id:>6} {bytes:>12} {secs:>9.3} {:>10} {:>9} {:>7} {:>8} {:>8.3} {:>10}\n",
            format!("{:.2}M", bps / 1e6),
            s.retransmitted_segs,
            s.fast_retransmits,
            s.timeouts,
            s.srtt.as_nanos() as f64 / 1e6,
            s.cwnd_bytes,
        ));
    };
    out.push_str(&format!(
        "\n{:>6} {:>12} {:>9} {:>10} {:>9} {:>7} {:>8} {:>8} {:>10}\n",
        "stream",
        "bytes",
        "elapsed_s",
        "goodput",
        "retrans",
        "fast_rx",
        "timeouts",
        "srtt_ms",
        "cwnd"
    ));
    for (k, r) in reports.iter().enumerate() {
        let s = r.stats.clone().unwrap_or_default();
        row(
            &mut out,
            &(k + 1).to_string(),
            r.bytes,
            r.elapsed.as_secs_f64(),
            r.goodput_bps(),
            &s,
        );
    }
    let sum = sum_stats(reports);
    let (bytes, elapsed) = total;
    row(
        &mut out,
        "sum",
        bytes,
        elapsed.as_secs_f64(),
        rate(bytes, elapsed),
        &sum,
    );
    out.push('\n');
    out.push_str(&format!(
        "test               {} (preset {}), {} parallel streams\n",
        test.name, test.preset, test.parallel
    ));
    for (k, r) in reports.iter().enumerate() {
        if let (Some(l), Some(p)) = (r.local, r.remote) {
            out.push_str(&format!(
                "connection {:<7} {l} -> {p}: {}\n",
                k + 1,
                end_text(r, interrupted)
            ));
        } else {
            out.push_str(&format!(
                "connection {:<7} none: {}\n",
                k + 1,
                end_text(r, interrupted)
            ));
        }
    }
    out.push_str(&format!(
        "goodput            {:.3} Mbit/s ({bytes} bytes in {:.3} s, all streams)\n",
        rate(bytes, elapsed) / 1e6,
        elapsed.as_secs_f64()
    ));
    out.push_str(&format!(
        "retransmissions    {} segments, {} bytes; {} fast retransmits, {} timeouts, {} recoveries (all streams)\n",
        sum.retransmitted_segs, sum.bytes_retransmitted, sum.fast_retransmits, sum.timeouts, sum.recoveries
    ));
    if let Some(l) = loss_detection_text(test, &sum) {
        out.push_str(&format!("loss detection     {l} (all streams)\n"));
    }
    out.push_str(&format!(
        "cpu                {:.3} s, service demand {:.3} us/KB\n",
        cpu.as_secs_f64(),
        service_demand_us_per_kb(cpu, bytes)
    ));
    let done = reports.iter().filter(|r| r.completed).count();
    out.push_str(&format!(
        "end                {done} of {} streams completed{}\n",
        reports.len(),
        if interrupted { ", interrupted" } else { "" }
    ));
    out
}

/// How a stream ended: its state and why.
pub fn end_text(r: &StreamReport, interrupted: bool) -> String {
    format!(
        "{} ({}{})",
        r.final_state.map(|s| s.name()).unwrap_or("-"),
        match r.error {
            Some(e) => e.to_string(),
            None if r.completed => "completed".into(),
            None => "incomplete".into(),
        },
        if interrupted || r.interrupted {
            ", interrupted"
        } else {
            ""
        }
    )
}

/// The counters of all streams added up (a `Stats` so the same writers show it): sums of
/// the counts and of the congestion windows (the test's aggregate window), the mean
/// smoothed RTT of the streams that measured one.
pub fn sum_stats(reports: &[&StreamReport]) -> Stats {
    let mut t = Stats::default();
    let mut rtts = 0u64;
    let mut srtt_ns = 0u64;
    for s in reports.iter().filter_map(|r| r.stats.as_ref()) {
        t.retransmitted_segs += s.retransmitted_segs;
        t.bytes_retransmitted += s.bytes_retransmitted;
        t.fast_retransmits += s.fast_retransmits;
        t.timeouts += s.timeouts;
        t.recoveries += s.recoveries;
        t.window_probes += s.window_probes;
        t.window_updates_out += s.window_updates_out;
        t.ecn_reductions += s.ecn_reductions;
        t.dsacks_in += s.dsacks_in;
        t.tlp_probes += s.tlp_probes;
        t.tlp_recoveries += s.tlp_recoveries;
        t.rack_reorder_timeouts += s.rack_reorder_timeouts;
        t.spurious_rtos += s.spurious_rtos;
        t.spurious_recoveries += s.spurious_recoveries;
        t.undos += s.undos;
        t.ece_in += s.ece_in;
        t.ce_segs_in += s.ce_segs_in;
        t.cwr_out += s.cwr_out;
        t.cwnd_bytes = t.cwnd_bytes.saturating_add(s.cwnd_bytes);
        t.pacing_rate_bps = t.pacing_rate_bps.saturating_add(s.pacing_rate_bps);
        if s.srtt > Duration::ZERO {
            rtts += 1;
            srtt_ns += s.srtt.as_nanos();
        }
    }
    if let Some(mean) = srtt_ns.checked_div(rtts) {
        t.srtt = Duration::from_nanos(mean);
    }
    t
}

/// The value every stream agrees on, or JSON null.
fn common<T: PartialEq + Into<serde_json::Value>>(
    reports: &[&StreamReport],
    f: impl Fn(&StreamReport) -> Option<T>,
) -> serde_json::Value {
    let mut it = reports.iter().map(|r| f(r));
    match it.next().flatten() {
        Some(first) if it.all(|v| v.as_ref() == Some(&first)) => first.into(),
        _ => serde_json::Value::Null,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// The final result of one stream (`end.streams[]`); docs/OUTPUTS.md lists the fields.
fn json_stream(id: usize, r: &StreamReport) -> serde_json::Value {
    let s = r.stats.clone().unwrap_or_default();
    serde_json::json!({
        "id": id,
        "local": r.local.map(|a| a.to_string()),
        "remote": r.remote.map(|a| a.to_string()),
        "start_s": r.start.map(|d| d.as_secs_f64()),
        "end_s": r.end().map(|d| d.as_secs_f64()),
        "connect_ms": r.connect_time.map(ms),
        "bytes": r.bytes,
        "elapsed_s": r.elapsed.as_secs_f64(),
        "goodput_bps": r.goodput_bps(),
        "retransmitted_segs": s.retransmitted_segs,
        "bytes_retransmitted": s.bytes_retransmitted,
        "fast_retransmits": s.fast_retransmits,
        "timeouts": s.timeouts,
        "recoveries": s.recoveries,
        "dsacks_in": s.dsacks_in,
        "tlp_probes": s.tlp_probes,
        "tlp_recoveries": s.tlp_recoveries,
        "rack_reorder_timeouts": s.rack_reorder_timeouts,
        "spurious_rtos": s.spurious_rtos,
        "spurious_recoveries": s.spurious_recoveries,
        "undos": s.undos,
        "srtt_ms": ms(s.srtt),
        "cwnd_bytes": s.cwnd_bytes,
        "pacing_rate_bps": s.pacing_rate_bps,
        "snd_mss": s.snd_mss,
        "sack": s.sack_enabled,
        "timestamps": s.timestamps_enabled,
        "snd_wscale": s.snd_wscale,
        "rcv_wscale": s.rcv_wscale,
        "window_probes": s.window_probes,
        "window_updates_out": s.window_updates_out,
        "ecn": s.ecn_enabled,
        "ecn_reductions": s.ecn_reductions,
        "ece_in": s.ece_in,
        "ce_segs_in": s.ce_segs_in,
        "cwr_out": s.cwr_out,
        "completed": r.completed,
        "error": r.error.map(|e| e.to_string()),
        "final_state": r.final_state.map(|s| s.name()),
    })
}

/// The final result of the whole test (`end.sum`, and the top-level fields a single-stream
/// run has always printed): for one stream, exactly that stream's values.
fn json_sum(
    test: &StreamTest,
    reports: &[&StreamReport],
    total: (u64, Duration),
    cpu: Duration,
) -> serde_json::Map<String, serde_json::Value> {
    let (bytes, elapsed) = total;
    let t = sum_stats(reports);
    let stat = |f: fn(&Stats) -> serde_json::Value| common(reports, |r| r.stats.as_ref().map(f));
    let v = serde_json::json!({
        "test": test.name,
        "preset": &test.preset,
        "num_streams": reports.len(),
        "bytes": bytes,
        "elapsed_s": elapsed.as_secs_f64(),
        "goodput_bps": rate(bytes, elapsed),
        "retransmitted_segs": t.retransmitted_segs,
        "bytes_retransmitted": t.bytes_retransmitted,
        "fast_retransmits": t.fast_retransmits,
        "timeouts": t.timeouts,
        "recoveries": t.recoveries,
        "dsacks_in": t.dsacks_in,
        "tlp_probes": t.tlp_probes,
        "tlp_recoveries": t.tlp_recoveries,
        "rack_reorder_timeouts": t.rack_reorder_timeouts,
        "spurious_rtos": t.spurious_rtos,
        "spurious_recoveries": t.spurious_recoveries,
        "undos": t.undos,
        "srtt_ms": ms(t.srtt),
        "cwnd_bytes": t.cwnd_bytes,
        "pacing_rate_bps": t.pacing_rate_bps,
        "snd_mss": stat(|s| s.snd_mss.into()),
        "sack": stat(|s| s.sack_enabled.into()),
        "timestamps": stat(|s| s.timestamps_enabled.into()),
        "snd_wscale": stat(|s| s.snd_wscale.into()),
        "rcv_wscale": stat(|s| s.rcv_wscale.into()),
        "window_probes": t.window_probes,
        "window_updates_out": t.window_updates_out,
        "ecn": stat(|s| s.ecn_enabled.into()),
        "ecn_reductions": t.ecn_reductions,
        "ece_in": t.ece_in,
        "ce_segs_in": t.ce_segs_in,
        "cwr_out": t.cwr_out,
        "cpu_s": cpu.as_secs_f64(),
        "service_demand_us_per_kb": service_demand_us_per_kb(cpu, bytes),
        "completed": reports.iter().all(|r| r.completed),
        "error": reports.iter().find_map(|r| r.error).map(|e| e.to_string()),
        "final_state": common(reports, |r| r.final_state.map(|s| s.name())),
    });
    match v {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("json! of an object"),
    }
}

/// One interval report as JSON (`intervals[]`).
fn json_interval(i: &Interval<'_>) -> serde_json::Value {
    let (start, end) = (i.start.as_secs_f64(), i.end.as_secs_f64());
    let streams: Vec<serde_json::Value> = i
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| {
            serde_json::json!({
                "id": k + 1,
                "start": start,
                "end": end,
                "seconds": i.seconds(),
                "bytes": s.bytes,
                "bits_per_second": i.rate_bps(s.bytes),
                "retransmits": s.retransmits,
                "cwnd_bytes": s.cwnd_bytes,
                "srtt_ms": ms(s.srtt),
                "pacing_rate_bps": s.pacing_rate_bps,
            })
        })
        .collect();
    let b = i.bytes();
    serde_json::json!({
        "streams": streams,
        "sum": {
            "start": start,
            "end": end,
            "seconds": i.seconds(),
            "bytes": b,
            "bits_per_second": i.rate_bps(b),
            "retransmits": i.retransmits(),
        },
    })
}

/// The `--json` document, in the shape of iperf3 -J: `start` (the test), `intervals`
/// (every interval report), `end` (the final result per stream and in sum); and, at the
/// top level, the fields of `end.sum`, which are what a single-stream run has always
/// printed there. docs/OUTPUTS.md documents every field.
pub fn json_document(
    test: &StreamTest,
    reports: &[&StreamReport],
    total: (u64, Duration),
    intervals: &[IntervalRecord],
    cpu: Duration,
) -> String {
    let sum = json_sum(test, reports, total, cpu);
    let mut doc = sum.clone();
    let (limit_bytes, limit_s) = match test.limit {
        Limit::Bytes(b) => (Some(b), None),
        Limit::Time(d) => (None, Some(d.as_secs_f64())),
        Limit::Unlimited => (None, None),
    };
    doc.insert(
        "start".into(),
        serde_json::json!({
            "test": test.name,
            "preset": &test.preset,
            "direction": match test.direction {
                StreamDirection::Send => "send",
                StreamDirection::Recv => "recv",
            },
            "parallel": test.parallel,
            "interval_s": test.interval.map(|d| d.as_secs_f64()),
            "limit_bytes": limit_bytes,
            "limit_s": limit_s,
        }),
    );
    doc.insert(
        "intervals".into(),
        intervals
            .iter()
            .map(|i| json_interval(&i.as_interval()))
            .collect::<Vec<_>>()
            .into(),
    );
    doc.insert(
        "end".into(),
        serde_json::json!({
            "streams": reports
                .iter()
                .enumerate()
                .map(|(k, r)| json_stream(k + 1, r))
                .collect::<Vec<_>>(),
            "sum": sum,
        }),
    );
    serde_json::Value::Object(doc).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc_check::{documented_section, has_type, paths};
    use crate::stream::interval::IntervalStream;
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::net::SocketAddrV4;

    #[test]
    fn quantities_print_as_iperf3_prints_them() {
        assert_eq!(iperf_bytes(117_440_512), " 112 MBytes");
        assert_eq!(iperf_bytes(34_924_332), "33.3 MBytes");
        assert_eq!(iperf_bytes(2592), "2.53 KBytes");
        assert_eq!(iperf_bytes(0), "0.00 Bytes");
        assert_eq!(iperf_rate(941e6), " 941 Mbits/sec");
        assert_eq!(iperf_rate(1.176e9), "1.18 Gbits/sec");
        assert_eq!(iperf_rate(21.46e6), "21.5 Mbits/sec");
    }

    fn stats(mss: u32, retr: u64, srtt_ms: u64) -> Stats {
        Stats {
            snd_mss: mss,
            retransmitted_segs: retr,
            bytes_retransmitted: retr * u64::from(mss),
            srtt: Duration::from_millis(srtt_ms),
            cwnd_bytes: 10 * mss,
            sack_enabled: true,
            ..Stats::default()
        }
    }

    fn report(port: u16, bytes: u64, start_ms: u64, elapsed_ms: u64, s: Stats) -> StreamReport {
        StreamReport {
            local: Some(SocketAddrV4::new([198, 18, 0, 2].into(), port)),
            remote: Some(SocketAddrV4::new([198, 18, 0, 1].into(), 5001)),
            bytes,
            start: Some(Duration::from_millis(start_ms)),
            elapsed: Duration::from_millis(elapsed_ms),
            connect_time: Some(Duration::from_micros(150)),
            stats: Some(s),
            completed: true,
            final_state: Some(ackclock_tcp::State::TimeWait),
            ..StreamReport::default()
        }
    }

    fn test_of(parallel: usize) -> StreamTest {
        StreamTest {
            name: "TCP_STREAM",
            preset: "newreno".into(),
            direction: StreamDirection::Send,
            parallel,
            interval: Some(Duration::from_secs(1)),
            limit: Limit::Time(Duration::from_secs(2)),
            loss_detection: LossDetection::DupAck,
            undo: false,
            frto: false,
        }
    }

    fn interval(
        index: usize,
        start_ms: u64,
        end_ms: u64,
        bytes: &[u64],
        last: bool,
    ) -> IntervalRecord {
        IntervalRecord {
            index,
            start: Duration::from_millis(start_ms),
            end: Duration::from_millis(end_ms),
            streams: bytes
                .iter()
                .map(|&b| IntervalStream {
                    bytes: b,
                    retransmits: 1,
                    cwnd_bytes: 14_600,
                    srtt: Duration::from_millis(2),
                    pacing_rate_bps: 48_000_000,
                })
                .collect(),
            last,
        }
    }

    /// The rows of the `## ackclock stream --json` table of docs/OUTPUTS.md.
    fn documented() -> BTreeMap<String, String> {
        documented_section("ackclock stream --json")
    }

    /// The document of two streams (one that never connected) against docs/OUTPUTS.md:
    /// every field listed, typed as listed; every listed field there; the top level a
    /// copy of end.sum; sums that are the sums of the streams.
    #[test]
    fn the_json_document_is_as_docs_outputs_md_says() {
        let a = report(49152, 3000, 0, 2003, stats(1460, 2, 2));
        let b = StreamReport {
            error: Some(ackclock_tcp::ConnectionError::Refused.into()),
            ..StreamReport::default()
        };
        let reports = [&a, &b];
        let intervals = [
            interval(0, 0, 1001, &[1000, 0], false),
            interval(1, 1001, 2000, &[1500, 0], false),
            interval(2, 2000, 2003, &[500, 0], true),
        ];
        let text = json_document(
            &test_of(2),
            &reports,
            (3000, Duration::from_millis(2003)),
            &intervals,
            Duration::from_millis(30),
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        let listed = documented();
        let mut all = Vec::new();
        paths(&doc, "", &mut all);
        let mut seen = std::collections::BTreeSet::new();
        for (path, v) in &all {
            let root = path.split(['.', '[']).next().unwrap();
            if !["start", "intervals", "end"].contains(&root) {
                // The top level repeats end.sum.
                assert_eq!(&doc["end"]["sum"][path], v, "top-level {path}");
                continue;
            }
            if path.ends_with("[]") && v.is_object() {
                // An array's object elements: their fields are listed.
                continue;
            }
            let ty = listed
                .get(path)
                .unwrap_or_else(|| panic!("{path} is not in docs/OUTPUTS.md"));
            assert!(has_type(v, ty), "{path} is {v}, not {ty}");
            seen.insert(path.clone());
        }
        for path in listed.keys() {
            assert!(seen.contains(path), "{path} is documented but not written");
        }
        assert_eq!(
            doc.as_object().unwrap().len(),
            3 + doc["end"]["sum"].as_object().unwrap().len()
        );
        for i in doc["intervals"].as_array().unwrap() {
            let s: u64 = i["streams"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["bytes"].as_u64().unwrap())
                .sum();
            assert_eq!(i["sum"]["bytes"], s);
            assert_eq!(i["sum"]["retransmits"], 2);
        }
        let sum = &doc["end"]["sum"];
        assert_eq!(sum["bytes"], 3000);
        assert_eq!(sum["num_streams"], 2);
        assert_eq!(sum["completed"], false);
        assert_eq!(
            sum["error"],
            "connection refused: nothing listens on that port"
        );
        // Stream 2 has no counters: the options are not common to both.
        assert_eq!(sum["snd_mss"], Value::Null);
        assert_eq!(doc["end"]["streams"][1]["local"], Value::Null);
        assert_eq!(doc["start"]["limit_s"], 2.0);
        assert_eq!(doc["start"]["limit_bytes"], Value::Null);
    }

    /// RACK-TLP's and D-SACK's counters (RFC 8985, RFC 2883) get a line under the
    /// retransmissions only when one is non-zero or RACK is on: the default report keeps
    /// its lines. The JSON sums them over the streams.
    #[test]
    fn loss_detection_counters_are_shown_when_they_say_something() {
        let plain = report(49152, 3000, 0, 1000, stats(1460, 2, 2));
        let t = single_report(&test_of(1), &plain, Duration::ZERO, false);
        assert!(!t.contains("loss detection"), "{t}");
        let mut rack = test_of(1);
        rack.loss_detection = LossDetection::RackTlp;
        let t = single_report(&rack, &plain, Duration::ZERO, false);
        assert!(
            t.contains("\nloss detection     rack-tlp: tlp 0 (0 repaired), rack reorder timeouts 0, dsacks 0\n"),
            "{t}"
        );
        let s = Stats {
            tlp_probes: 2,
            tlp_recoveries: 1,
            dsacks_in: 3,
            ..stats(1460, 2, 2)
        };
        let probed = report(49153, 3000, 0, 1000, s);
        let t = single_report(&test_of(1), &probed, Duration::ZERO, false);
        let line = t
            .lines()
            .position(|l| l.starts_with("loss detection"))
            .unwrap();
        assert_eq!(
            t.lines().nth(line),
            Some(
                "loss detection     dupack: tlp 2 (1 repaired), rack reorder timeouts 0, dsacks 3"
            )
        );
        assert!(t
            .lines()
            .nth(line - 1)
            .unwrap()
            .starts_with("retransmissions"));
        let both = [&probed, &probed];
        let t = parallel_report(
            &test_of(2),
            &both,
            (6000, Duration::from_secs(1)),
            Duration::ZERO,
            false,
        );
        assert!(
            t.contains("loss detection     dupack: tlp 4 (2 repaired), rack reorder timeouts 0, dsacks 6 (all streams)\n"),
            "{t}"
        );
        let doc: Value = serde_json::from_str(&json_document(
            &test_of(2),
            &both,
            (6000, Duration::from_secs(1)),
            &[],
            Duration::ZERO,
        ))
        .unwrap();
        assert_eq!(doc["end"]["streams"][0]["tlp_probes"], 2);
        assert_eq!(doc["end"]["sum"]["tlp_probes"], 4);
        assert_eq!(doc["end"]["sum"]["tlp_recoveries"], 2);
        assert_eq!(doc["end"]["sum"]["dsacks_in"], 6);
        assert_eq!(doc["end"]["sum"]["rack_reorder_timeouts"], 0);
    }

    /// The spurious timeouts (RFC 3522 Eifel, RFC 5682 F-RTO), spurious recoveries (RFC
    /// 3708) and undos join the loss-detection line when one is non-zero or undo or F-RTO
    /// is on, labelled with what is on; the JSON has them per stream and summed.
    #[test]
    fn undo_counters_are_shown_when_they_say_something() {
        let plain = report(49152, 3000, 0, 1000, stats(1460, 2, 2));
        let mut undo = test_of(1);
        undo.undo = true;
        let t = single_report(&undo, &plain, Duration::ZERO, false);
        assert!(
            t.contains("\nloss detection     dupack: tlp 0 (0 repaired), rack reorder timeouts 0, dsacks 0; undo: spurious timeouts 0, spurious recoveries 0, undos 0\n"),
            "{t}"
        );
        let mut frto = test_of(1);
        frto.frto = true;
        frto.loss_detection = LossDetection::Rack;
        let t = single_report(&frto, &plain, Duration::ZERO, false);
        assert!(
            t.contains("\nloss detection     rack: tlp 0 (0 repaired), rack reorder timeouts 0, dsacks 0; frto: spurious timeouts 0, spurious recoveries 0, undos 0\n"),
            "{t}"
        );
        // RACK alone keeps the line of RFC 8985's counters only.
        let mut rack = test_of(1);
        rack.loss_detection = LossDetection::Rack;
        let t = single_report(&rack, &plain, Duration::ZERO, false);
        assert!(!t.contains("spurious timeouts"), "{t}");
        // Eifel detection counts with timestamps alone (RFC 3522): shown though undo is off.
        let s = Stats {
            spurious_rtos: 1,
            ..stats(1460, 2, 2)
        };
        let eifel = report(49153, 3000, 0, 1000, s);
        let t = single_report(&test_of(1), &eifel, Duration::ZERO, false);
        assert!(
            t.contains("\nloss detection     dupack: tlp 0 (0 repaired), rack reorder timeouts 0, dsacks 0; no undo: spurious timeouts 1, spurious recoveries 0, undos 0\n"),
            "{t}"
        );
        let s = Stats {
            spurious_rtos: 1,
            spurious_recoveries: 2,
            undos: 3,
            dsacks_in: 2,
            ..stats(1460, 2, 2)
        };
        let undone = report(49154, 3000, 0, 1000, s);
        let both = [&undone, &undone];
        let mut test = test_of(2);
        (test.undo, test.frto) = (true, true);
        let t = parallel_report(
            &test,
            &both,
            (6000, Duration::from_secs(1)),
            Duration::ZERO,
            false,
        );
        assert!(
            t.contains("loss detection     dupack: tlp 0 (0 repaired), rack reorder timeouts 0, dsacks 4; undo+frto: spurious timeouts 2, spurious recoveries 4, undos 6 (all streams)\n"),
            "{t}"
        );
        let doc: Value = serde_json::from_str(&json_document(
            &test,
            &both,
            (6000, Duration::from_secs(1)),
            &[],
            Duration::ZERO,
        ))
        .unwrap();
        assert_eq!(doc["end"]["streams"][1]["spurious_rtos"], 1);
        assert_eq!(doc["end"]["streams"][1]["undos"], 3);
        assert_eq!(doc["end"]["sum"]["spurious_rtos"], 2);
        assert_eq!(doc["end"]["sum"]["spurious_recoveries"], 4);
        assert_eq!(doc["end"]["sum"]["undos"], 6);
        assert_eq!(doc["undos"], 6);
    }

    /// With one stream, the top level has exactly the fields and values a single-stream
    /// run printed before parallel streams existed.
    #[test]
    fn one_stream_keeps_the_fields_it_always_had() {
        let a = report(49152, 123_456, 0, 1000, stats(1448, 3, 4));
        let text = json_document(
            &test_of(1),
            &[&a],
            (123_456, Duration::from_secs(1)),
            &[],
            Duration::from_millis(10),
        );
        let doc: Value = serde_json::from_str(&text).unwrap();
        let one = &doc["end"]["streams"][0];
        for k in [
            "bytes",
            "elapsed_s",
            "goodput_bps",
            "retransmitted_segs",
            "bytes_retransmitted",
            "fast_retransmits",
            "timeouts",
            "recoveries",
            "dsacks_in",
            "tlp_probes",
            "tlp_recoveries",
            "rack_reorder_timeouts",
            "spurious_rtos",
            "spurious_recoveries",
            "undos",
            "srtt_ms",
            "cwnd_bytes",
            "pacing_rate_bps",
            "snd_mss",
            "sack",
            "timestamps",
            "snd_wscale",
            "rcv_wscale",
            "window_probes",
            "window_updates_out",
            "ecn",
            "ecn_reductions",
            "ece_in",
            "ce_segs_in",
            "cwr_out",
            "completed",
            "error",
            "final_state",
        ] {
            assert_eq!(doc[k], one[k], "{k}");
            assert!(!doc[k].is_null() || k == "error", "{k}");
        }
        assert_eq!(doc["goodput_bps"], 123_456.0 * 8.0);
        for k in ["test", "preset", "cpu_s", "service_demand_us_per_kb"] {
            assert!(!doc[k].is_null(), "{k}");
        }
        assert_eq!(doc["test"], "TCP_STREAM");
    }

    #[test]
    fn interval_lines_have_a_sum_when_there_are_several_streams() {
        let i = interval(0, 0, 1000, &[1 << 20, 3 << 20], false);
        let t = interval_text(&i.as_interval(), 2, true);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].starts_with("[ ID] Interval") && lines[0].ends_with("Retr  Cwnd"));
        assert!(
            lines[1].starts_with("[  1]   0.00-1.00   sec  1.00 MBytes  8.39 Mbits/sec    1"),
            "{t}"
        );
        assert!(
            lines[3].starts_with("[SUM]   0.00-1.00   sec  4.00 MBytes  33.6 Mbits/sec    2"),
            "{t}"
        );
        // The next interval starts with iperf3's separator; a receiver has no Retr or Cwnd.
        let i = interval(1, 1000, 2000, &[10], false);
        let t = interval_text(&i.as_interval(), 1, false);
        assert_eq!(t, "[  1]   1.00-2.00   sec   10.0 Bytes   80.0 bits/sec\n");
        let t = interval_text(
            &interval(1, 1000, 2000, &[10, 20], true).as_interval(),
            2,
            false,
        );
        assert!(t.starts_with(SEPARATOR) && t.contains("[SUM]"), "{t}");
    }
}
