//! What the datagram applications report: the figures a simulation summarises per flow
//! ([`DatagramSummary`], in `summary.json`), and the live commands' text and JSON reports
//! (`ackclock rpc`, `rpc-server` and `dgram-stream`; docs/OUTPUTS.md).

use super::{DgramInterval, RpcClientApp, RpcServerApp, StreamReceiverApp, StreamSenderApp};
use ackclock_dgram::rate::Controller;
use ackclock_dgram::rpc::{
    Arrivals, RpcClient, RpcClientConfig, RpcServerStats, Timer, IP_UDP_HEADERS,
};
use ackclock_dgram::stream::{StreamReceiver, StreamSender};
use ackclock_wire::{Duration, Instant};
use serde::Serialize;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::net::SocketAddrV4;

/// `writeln!` into a `String`, which cannot fail.
macro_rules! w {
    ($out:expr, $($t:tt)*) => {
        let _ = writeln!($out, $($t)*);
    };
}

/// What a datagram flow did: its client's or sender's figures with its server's or
/// receiver's.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct DatagramSummary {
    /// "rpc", "dns" or "datagram_stream".
    pub kind: String,
    /// "none", "aimd" or "tfrc".
    pub rate_control: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// An RPC or DNS-like flow's figures.
    pub rpc: Option<RpcSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// A datagram stream's figures.
    pub stream: Option<StreamSummary>,
}

/// An RPC or DNS-like flow's figures: its client's, and its server's counts.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RpcSummary {
    /// "fixed" or "adaptive".
    pub timer: String,
    /// Requests issued.
    pub issued: u64,
    /// Requests answered.
    pub completed: u64,
    /// Given up after the last transmission.
    pub failed: u64,
    /// Arrivals refused because the client's backlog was full (Poisson arrivals).
    pub refused: u64,
    /// Requests sent, retransmissions included.
    pub transmissions: u64,
    /// Requests sent again.
    pub retransmissions: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Responses to requests already answered or given up: the storm's wasted work.
    pub duplicate_responses: u64,
    /// Loss events the rate controller saw (RFC 5348 §5.2).
    pub loss_events: u64,
    /// Mean completion time, issue to response, ms.
    pub latency_mean_ms: Option<f64>,
    /// Median completion time, ms.
    pub latency_p50_ms: Option<f64>,
    /// 99th percentile of the completion time, ms.
    pub latency_p99_ms: Option<f64>,
    /// The adaptive estimator's smoothed RTT (0 without a sample or with the fixed timer).
    pub srtt_ms: f64,
    /// The rate controller's allowed rate at the end (IP bits/s).
    pub final_rate_bps: Option<f64>,
    /// Requests the server received.
    pub server_requests: u64,
    /// Of them, retransmissions (transmission number above 1).
    pub server_retransmitted_requests: u64,
    /// Requests the server dropped at its full queue.
    pub server_queue_drops: u64,
}

/// A datagram stream's figures: its sender's, and what its receiver counted.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StreamSummary {
    /// Data packets sent.
    pub packets_sent: u64,
    /// Data packets the receiver got.
    pub packets_received: u64,
    /// Data packets the receiver counted lost.
    pub packets_lost: u64,
    /// Loss events the receiver counted.
    pub loss_events: u64,
    /// The receiver's loss event rate at the end (RFC 5348 §5).
    pub loss_event_rate: f64,
    /// Feedback reports the sender got.
    pub feedbacks: u64,
    /// Expiries of the sender's no-feedback timer (RFC 5348 §4.4).
    pub no_feedback_timeouts: u64,
    /// The allowed rate at the end and the mean sending rate, IP bits/s.
    pub final_rate_bps: f64,
    /// The mean sending rate, first packet to last, IP bits/s.
    pub mean_rate_bps: Option<f64>,
}

impl DatagramSummary {
    /// The client's (sender's) figures completed with the server's (receiver's).
    pub fn merge(mut self, other: Option<DatagramSummary>) -> DatagramSummary {
        let Some(o) = other else { return self };
        if let (Some(a), Some(b)) = (self.rpc.as_mut(), o.rpc) {
            a.server_requests = b.server_requests;
            a.server_retransmitted_requests = b.server_retransmitted_requests;
            a.server_queue_drops = b.server_queue_drops;
        }
        if let (Some(a), Some(b)) = (self.stream.as_mut(), o.stream) {
            a.packets_received = b.packets_received;
            a.packets_lost = b.packets_lost;
            a.loss_events = b.loss_events;
            a.loss_event_rate = b.loss_event_rate;
        }
        self
    }
}

/// An RPC or DNS-like client's figures (`kind`: "rpc" or "dns"); `client` is `None`
/// before it started.
pub fn client_summary(
    kind: &str,
    cfg: &RpcClientConfig,
    client: Option<&RpcClient>,
) -> DatagramSummary {
    let st = client.map(|c| c.stats().clone()).unwrap_or_default();
    let ms = |v: Option<f64>| v.map(|ns| ns / 1e6);
    DatagramSummary {
        kind: kind.into(),
        rate_control: cfg.rate.name().into(),
        rpc: Some(RpcSummary {
            timer: cfg.timer.name().into(),
            issued: st.issued,
            completed: st.completed,
            failed: st.failed,
            refused: st.refused,
            transmissions: st.transmissions,
            retransmissions: st.retransmissions,
            timeouts: st.timeouts,
            duplicate_responses: st.duplicate_responses,
            loss_events: st.loss_events,
            latency_mean_ms: ms(st.latency.mean()),
            latency_p50_ms: ms(st.latency.quantile(0.5)),
            latency_p99_ms: ms(st.latency.quantile(0.99)),
            srtt_ms: client.map_or(0.0, |c| c.srtt().as_secs_f64() * 1000.0),
            final_rate_bps: client.and_then(RpcClient::rate).map(|x| x * 8.0),
            server_requests: 0,
            server_retransmitted_requests: 0,
            server_queue_drops: 0,
        }),
        stream: None,
    }
}

/// An RPC server's counts, to complete its client's summary ([`DatagramSummary::merge`]).
pub fn server_summary(st: &RpcServerStats) -> DatagramSummary {
    DatagramSummary {
        rpc: Some(RpcSummary {
            server_requests: st.requests,
            server_retransmitted_requests: st.retransmitted_requests,
            server_queue_drops: st.queue_drops,
            ..RpcSummary::default()
        }),
        ..DatagramSummary::default()
    }
}

/// A stream sender's figures; before it started (`sender` `None`), its controller's name.
pub fn sender_summary(sender: Option<&StreamSender>, ctl: Option<&Controller>) -> DatagramSummary {
    let Some(s) = sender else {
        return DatagramSummary {
            kind: "datagram_stream".into(),
            rate_control: ctl.map_or("none", Controller::name).into(),
            rpc: None,
            stream: Some(StreamSummary::default()),
        };
    };
    let st = s.stats();
    DatagramSummary {
        kind: "datagram_stream".into(),
        rate_control: s.controller().name().into(),
        rpc: None,
        stream: Some(StreamSummary {
            packets_sent: st.packets,
            feedbacks: st.feedbacks,
            no_feedback_timeouts: st.no_feedback_timeouts,
            final_rate_bps: s.controller().rate() * 8.0,
            mean_rate_bps: s.mean_rate().map(|x| x * 8.0),
            ..StreamSummary::default()
        }),
    }
}

/// A stream receiver's counts, to complete its sender's summary.
pub fn receiver_summary(r: &StreamReceiver) -> DatagramSummary {
    let st = r.stats();
    DatagramSummary {
        stream: Some(StreamSummary {
            packets_received: st.packets,
            packets_lost: st.lost,
            loss_events: st.loss_events,
            loss_event_rate: r.p(),
            ..StreamSummary::default()
        }),
        ..DatagramSummary::default()
    }
}

fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// A socket's counters, the same whatever carries the socket (ackclock's UDP on a TUN
/// device, or a Linux kernel socket): the `udp` object of the JSON reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpReport {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// Payload bytes received.
    pub bytes_in: u64,
    /// Datagrams sent.
    pub datagrams_out: u64,
    /// Payload bytes sent.
    pub bytes_out: u64,
    /// Sends refused (a full queue or buffer) or failed.
    pub send_refused: u64,
    /// Arrivals dropped before the application saw them.
    pub receive_drops: u64,
}

impl UdpReport {
    /// As JSON (docs/OUTPUTS.md, the `udp` object).
    pub fn json(&self) -> Value {
        json!({
            "datagrams_in": self.datagrams_in,
            "bytes_in": self.bytes_in,
            "datagrams_out": self.datagrams_out,
            "bytes_out": self.bytes_out,
            "send_refused": self.send_refused,
            "receive_drops": self.receive_drops,
        })
    }
}

/// How a live datagram application's run went, for its report: where its socket was,
/// the time the run ended, and the socket's counters.
#[derive(Clone, Debug)]
pub struct RunFacts {
    /// "tun" (ackclock's UDP on a TUN device) or "kernel" (a Linux kernel socket).
    pub socket: &'static str,
    /// The socket's address.
    pub local: Option<SocketAddrV4>,
    /// The host's clock when the run ended.
    pub now: Instant,
    /// The socket's counters.
    pub udp: UdpReport,
}

/// A rate in bit/s as kbit/s below 1 Mbit/s, else Mbit/s.
fn bits_text(bps: f64) -> String {
    if bps < 1e6 {
        format!("{:.3} kbit/s", bps / 1e3)
    } else {
        format!("{:.3} Mbit/s", bps / 1e6)
    }
}

/// The figures of an RPC client's run.
pub struct RpcReport {
    kind: &'static str,
    timer: &'static str,
    timeout: Option<Duration>,
    rate_control: &'static str,
    socket: &'static str,
    local: Option<SocketAddrV4>,
    server: SocketAddrV4,
    request_bytes: usize,
    response_bytes: usize,
    max_outstanding: usize,
    requests_per_s: Option<f64>,
    limit_requests: Option<u64>,
    limit: Option<Duration>,
    max_transmissions: u32,
    /// Requests issued.
    pub issued: u64,
    /// Requests completed.
    pub completed: u64,
    failed: u64,
    refused: u64,
    outstanding_at_end: u64,
    transmissions: u64,
    retransmissions: u64,
    timeouts: u64,
    duplicate_responses: u64,
    malformed: u64,
    loss_events: u64,
    goodput_bytes: u64,
    elapsed: Duration,
    latency_ms: [Option<f64>; 4],
    srtt: Duration,
    final_rate_bps: Option<f64>,
    interrupted: bool,
}

impl RpcReport {
    /// The report of `app`'s run: `kind` ("nfs" or "dns"), its time limit.
    pub fn new(
        app: &RpcClientApp,
        facts: &RunFacts,
        kind: &'static str,
        limit: Option<Duration>,
    ) -> RpcReport {
        let cfg = app.config();
        let st = app.client().map(|c| c.stats().clone()).unwrap_or_default();
        let lat = &st.latency;
        let to_ms = |v: Option<f64>| v.map(|ns| ns / 1e6);
        RpcReport {
            kind,
            timer: match cfg.timer {
                Timer::Fixed(_) => "fixed",
                Timer::Adaptive(_) => "adaptive",
            },
            timeout: match cfg.timer {
                Timer::Fixed(t) => Some(t),
                Timer::Adaptive(_) => None,
            },
            rate_control: cfg.rate.name(),
            socket: facts.socket,
            local: facts.local,
            server: cfg.server,
            request_bytes: cfg.request_bytes,
            response_bytes: cfg.response_bytes,
            max_outstanding: cfg.outstanding,
            requests_per_s: match cfg.arrivals {
                Arrivals::Poisson { per_sec, .. } => Some(per_sec),
                Arrivals::Closed => None,
            },
            limit_requests: cfg.requests,
            limit,
            max_transmissions: cfg.max_transmissions,
            issued: st.issued,
            completed: st.completed,
            failed: st.failed,
            refused: st.refused,
            outstanding_at_end: app.outstanding(),
            transmissions: st.transmissions,
            retransmissions: st.retransmissions,
            timeouts: st.timeouts,
            duplicate_responses: st.duplicate_responses,
            malformed: st.malformed,
            loss_events: st.loss_events,
            goodput_bytes: st.goodput_bytes,
            elapsed: app.elapsed(facts.now),
            latency_ms: [
                to_ms(lat.mean()),
                to_ms(lat.quantile(0.5)),
                to_ms(lat.quantile(0.99)),
                to_ms(lat.max().map(|v| v as f64)),
            ],
            srtt: app.client().map_or(Duration::ZERO, |c| c.srtt()),
            final_rate_bps: app.client().and_then(|c| c.rate()).map(|x| x * 8.0),
            interrupted: app.interrupted,
        }
    }

    /// Response bytes over the run's time, bit/s.
    pub fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.goodput_bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }

    /// The lines of the report (after the banner).
    pub fn text(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3} ms"));
        let mut out = String::from("\n");
        out.push_str(&format!(
            "requests           {} issued, {} completed, {} failed (after {} transmissions), {} refused (backlog full), {} outstanding at the end\n",
            self.issued, self.completed, self.failed, self.max_transmissions, self.refused, self.outstanding_at_end
        ));
        out.push_str(&format!(
            "transmissions      {} ({} retransmissions after {} timeouts); {} duplicate responses, {} malformed\n",
            self.transmissions, self.retransmissions, self.timeouts, self.duplicate_responses, self.malformed
        ));
        out.push_str(&format!(
            "latency            mean {}, p50 {}, p99 {}, max {} (issue to response)\n",
            opt(self.latency_ms[0]),
            opt(self.latency_ms[1]),
            opt(self.latency_ms[2]),
            opt(self.latency_ms[3])
        ));
        out.push_str(&format!(
            "rtt                srtt {:.3} ms{}\n",
            ms(self.srtt),
            match self.timeout {
                Some(t) => format!(" (measured; the fixed timer waits {:.0} ms)", ms(t)),
                None => " (the adaptive timer's estimator)".into(),
            }
        ));
        match self.final_rate_bps {
            Some(r) => out.push_str(&format!(
                "rate control       {}: allowed {} at the end, {} loss events\n",
                self.rate_control,
                bits_text(r),
                self.loss_events
            )),
            None => out.push_str("rate control       none (only the outstanding limit)\n"),
        }
        out.push_str(&format!(
            "goodput            {} ({} response bytes in {:.3} s)\n",
            bits_text(self.goodput_bps()),
            self.goodput_bytes,
            self.elapsed.as_secs_f64()
        ));
        out.push_str(&format!(
            "end                {}\n",
            if self.interrupted {
                format!(
                    "interrupted ({} requests abandoned)",
                    self.outstanding_at_end
                )
            } else {
                "completed".into()
            }
        ));
        out
    }

    /// The `--json` document (docs/OUTPUTS.md).
    pub fn json(&self, udp: &UdpReport) -> Value {
        json!({
            "command": "rpc",
            "kind": self.kind,
            "timer": self.timer,
            "timeout_ms": self.timeout.map(ms),
            "rate_control": self.rate_control,
            "socket": self.socket,
            "local": self.local.map(|a| a.to_string()),
            "server": self.server.to_string(),
            "request_bytes": self.request_bytes,
            "response_bytes": self.response_bytes,
            "max_outstanding": self.max_outstanding,
            "requests_per_s": self.requests_per_s,
            "limit_requests": self.limit_requests,
            "limit_s": self.limit.map(|d| d.as_secs_f64()),
            "max_transmissions": self.max_transmissions,
            "issued": self.issued,
            "completed": self.completed,
            "failed": self.failed,
            "refused": self.refused,
            "outstanding_at_end": self.outstanding_at_end,
            "transmissions": self.transmissions,
            "retransmissions": self.retransmissions,
            "timeouts": self.timeouts,
            "duplicate_responses": self.duplicate_responses,
            "malformed": self.malformed,
            "loss_events": self.loss_events,
            "elapsed_s": self.elapsed.as_secs_f64(),
            "goodput_bps": self.goodput_bps(),
            "latency_mean_ms": self.latency_ms[0],
            "latency_p50_ms": self.latency_ms[1],
            "latency_p99_ms": self.latency_ms[2],
            "latency_max_ms": self.latency_ms[3],
            "srtt_ms": ms(self.srtt),
            "final_rate_bps": self.final_rate_bps,
            "interrupted": self.interrupted,
            "udp": udp.json(),
        })
    }
}

/// The lines of `rpc-server`'s report.
pub fn server_text(app: &RpcServerApp, facts: &RunFacts) -> String {
    let st = app.server().stats();
    let elapsed = app.elapsed(facts.now);
    let mut out = String::from("\n");
    w!(
        out,
        "requests           {} received ({} of them retransmissions), {} dropped at the full queue, {} malformed",
        st.requests, st.retransmitted_requests, st.queue_drops, st.malformed
    );
    w!(
        out,
        "responses          {} sent ({} bytes) in {:.3} s",
        st.responses,
        st.response_bytes,
        elapsed.as_secs_f64()
    );
    out
}

/// The settings of an RPC server, for its JSON document.
#[derive(Clone, Copy, Debug)]
pub struct ServerSettings {
    /// Service time per request, ms.
    pub service_ms: f64,
    /// Requests it queues at most.
    pub queue: usize,
    /// The largest response it sends, bytes.
    pub max_response: usize,
}

/// The JSON document of `rpc-server --json` (docs/OUTPUTS.md).
pub fn server_json(app: &RpcServerApp, facts: &RunFacts, set: &ServerSettings) -> Value {
    let st = app.server().stats();
    json!({
        "command": "rpc-server",
        "socket": facts.socket,
        "listen": facts.local.map(|a| a.to_string()),
        "service_ms": set.service_ms,
        "queue": set.queue,
        "max_response": set.max_response,
        "requests": st.requests,
        "retransmitted_requests": st.retransmitted_requests,
        "responses": st.responses,
        "response_bytes": st.response_bytes,
        "queue_drops": st.queue_drops,
        "malformed": st.malformed,
        "elapsed_s": app.elapsed(facts.now).as_secs_f64(),
        "interrupted": app.interrupted,
        "udp": facts.udp.json(),
    })
}

/// One interval line: `[  1]   0.00-1.00   sec   1.19 MBytes  9.97 Mbits/sec ...`.
pub fn interval_line(i: &DgramInterval, send: bool) -> String {
    let mut l = format!(
        "[  1] {:6.2}-{:<6.2} sec  {:>8} pkts  {:>10.3} Mbit/s",
        i.start.as_secs_f64(),
        i.end.as_secs_f64(),
        i.packets,
        i.ip_bps() / 1e6
    );
    if send {
        l.push_str(&format!(
            "  allowed {:>10.3} Mbit/s  rtt {:>8}  p {:.5}",
            i.allowed_bps.unwrap_or(0.0) / 1e6,
            i.rtt.map_or("-".to_string(), |r| format!("{:.2}ms", ms(r))),
            i.p
        ));
    } else {
        l.push_str(&format!(
            "  lost {:>6}  loss events {:>4}  p {:.5}",
            i.lost.unwrap_or(0),
            i.loss_events,
            i.p
        ));
    }
    l.push('\n');
    l
}

/// The header of the interval lines: a sender's (`send`) with its allowed rate and RTT, a
/// receiver's with its losses.
pub fn interval_header(send: bool) -> &'static str {
    if send {
        "[ ID] Interval           Packets    Rate (IP bytes)  Allowed rate          RTT        p"
    } else {
        "[ ID] Interval           Packets    Rate (IP bytes)  Lost    Loss events  p"
    }
}

/// Prints each interval report as a line, under a header before the first: a sender's
/// (`send`) with its allowed rate and RTT, a receiver's with its losses; on stdout, or on
/// stderr when stdout is kept for a JSON document (`to_stderr`).
pub fn print_intervals(send: bool, to_stderr: bool) -> super::OnDgramInterval {
    let mut header = Some(interval_header(send));
    Box::new(move |i: &DgramInterval| {
        let mut text = header.take().map(|h| format!("{h}\n")).unwrap_or_default();
        text += &interval_line(i, send);
        if to_stderr {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    })
}

/// One interval report as JSON (`intervals[]`).
pub fn interval_json(i: &DgramInterval) -> Value {
    json!({
        "start": i.start.as_secs_f64(),
        "end": i.end.as_secs_f64(),
        "seconds": i.seconds(),
        "packets": i.packets,
        "bytes": i.bytes,
        "bits_per_second": i.ip_bps(),
        "allowed_bps": i.allowed_bps,
        "rtt_ms": i.rtt.map(ms),
        "p": i.p,
        "loss_events": i.loss_events,
        "lost": i.lost,
    })
}

/// How a stream ended, for its report's last line.
pub fn end_text(interrupted: bool) -> &'static str {
    if interrupted {
        "interrupted"
    } else {
        "completed"
    }
}

/// The lines of a stream sender's report; `rc` names its rate control.
pub fn sender_text(app: &StreamSenderApp, facts: &RunFacts, rc: &str) -> String {
    let mut out = String::from("\n");
    let Some(s) = app.sender() else {
        return out;
    };
    let st = s.stats();
    let ctl = s.controller();
    let elapsed = app.elapsed(facts.now);
    let mean = s.mean_rate().map(|x| x * 8.0);
    let rtt = ctl.rtt().map(|r| r * 1e3);
    w!(
        out,
        "packets            {} sent ({} payload bytes) in {:.3} s: mean rate {} (IP bytes, first packet to last)",
        st.packets,
        st.bytes,
        elapsed.as_secs_f64(),
        mean.map_or("-".into(), |m| format!("{:.3} Mbit/s", m / 1e6))
    );
    w!(
        out,
        "rate control       {}: allowed {:.3} Mbit/s at the end, rtt {}; {} feedbacks, {} no-feedback timeouts",
        rc,
        ctl.rate() * 8.0 / 1e6,
        rtt.map_or("-".into(), |r| format!("{r:.3} ms")),
        st.feedbacks,
        st.no_feedback_timeouts
    );
    w!(
        out,
        "loss               loss event rate {:.6} (the receiver's last report), {} loss events, {} malformed feedbacks",
        st.p, st.loss_events, st.malformed
    );
    w!(out, "end                {}", end_text(app.interrupted));
    out
}

/// The lines of a stream receiver's report.
pub fn receiver_text(app: &StreamReceiverApp) -> String {
    let st = app.receiver().stats();
    let elapsed = app.data_elapsed();
    let rate = receive_rate(app);
    let mut out = String::from("\n");
    w!(
        out,
        "packets            {} received ({} payload bytes) in {:.3} s: {} (IP bytes, first packet to last){}",
        st.packets,
        st.bytes,
        elapsed.as_secs_f64(),
        rate.map_or("-".into(), |r| format!("{:.3} Mbit/s", r / 1e6)),
        app.peer().map_or(String::new(), |p| format!(", from {p}"))
    );
    w!(
        out,
        "loss               {} lost, {} loss events, loss event rate {:.6}; {} late or duplicate, {} malformed",
        st.lost,
        st.loss_events,
        app.receiver().p(),
        st.late_or_duplicate,
        st.malformed
    );
    w!(out, "feedback           {} reports sent", st.feedbacks);
    w!(out, "end                {}", end_text(app.interrupted));
    out
}

/// The JSON document of `dgram-stream --connect --json` (docs/OUTPUTS.md).
pub fn sender_json(
    app: &StreamSenderApp,
    facts: &RunFacts,
    rc: &str,
    time: Option<Duration>,
) -> Value {
    let c = app.config();
    let sender = app.sender().map(|s| {
        let st = s.stats();
        let ctl = s.controller();
        json!({
            "rate_control": rc,
            "packet_bytes": c.packet_bytes,
            "limit_s": time.map(|d| d.as_secs_f64()),
            "limit_bytes": c.bytes,
            "packets": st.packets,
            "bytes": st.bytes,
            "mean_rate_bps": s.mean_rate().map(|x| x * 8.0),
            "final_allowed_bps": ctl.rate() * 8.0,
            "rtt_ms": ctl.rtt().map(|r| r * 1e3),
            "feedbacks": st.feedbacks,
            "no_feedback_timeouts": st.no_feedback_timeouts,
            "loss_event_rate": st.p,
            "loss_events": st.loss_events,
            "malformed": st.malformed,
        })
    });
    let remote = json!(c.dst.to_string());
    let elapsed = app.elapsed(facts.now);
    let head = StreamJson {
        role: "send",
        remote,
        elapsed,
        interrupted: app.interrupted,
        interval: app.interval(),
        intervals: app.intervals(),
    };
    stream_json(&head, facts, sender.into(), Value::Null)
}

/// The JSON document of `dgram-stream --listen --json` (docs/OUTPUTS.md).
pub fn receiver_json(app: &StreamReceiverApp, facts: &RunFacts) -> Value {
    let st = app.receiver().stats();
    let receiver = json!({
        "packets": st.packets,
        "bytes": st.bytes,
        "rate_bps": receive_rate(app),
        "lost": st.lost,
        "loss_events": st.loss_events,
        "loss_event_rate": app.receiver().p(),
        "feedbacks": st.feedbacks,
        "late_or_duplicate": st.late_or_duplicate,
        "malformed": st.malformed,
    });
    let remote = json!(app.peer().map(|a| a.to_string()));
    let head = StreamJson {
        role: "recv",
        remote,
        elapsed: app.data_elapsed(),
        interrupted: app.interrupted,
        interval: app.interval(),
        intervals: app.intervals(),
    };
    stream_json(&head, facts, Value::Null, receiver)
}

/// What both ends' `dgram-stream --json` documents start with.
struct StreamJson<'a> {
    role: &'static str,
    remote: Value,
    elapsed: Duration,
    interrupted: bool,
    interval: Option<Duration>,
    intervals: &'a [DgramInterval],
}

/// The JSON document of `dgram-stream --json`, either end's (docs/OUTPUTS.md): `sender`
/// or `receiver` holds its figures, the other is null.
fn stream_json(h: &StreamJson<'_>, facts: &RunFacts, sender: Value, receiver: Value) -> Value {
    json!({
        "role": h.role,
        "socket": facts.socket,
        "local": facts.local.map(|a| a.to_string()),
        "remote": h.remote,
        "elapsed_s": h.elapsed.as_secs_f64(),
        "interrupted": h.interrupted,
        "interval_s": h.interval.map(|d| d.as_secs_f64()),
        "intervals": h.intervals.iter().map(interval_json).collect::<Vec<_>>(),
        "sender": sender,
        "receiver": receiver,
        "udp": facts.udp.json(),
    })
}

/// The rate data arrived at (IP bytes, bit/s), from the first packet to the last.
pub fn receive_rate(app: &StreamReceiverApp) -> Option<f64> {
    let st = app.receiver().stats();
    let e = app.data_elapsed();
    (e > Duration::ZERO)
        .then(|| (st.bytes + st.packets * IP_UDP_HEADERS as u64) as f64 * 8.0 / e.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dgram::{Schedule, StreamAppOptions};
    use crate::doc_check::{documented_section, has_type, paths};
    use crate::testing::{run_pair, OURS, THEIRS};
    use ackclock_dgram::rate::TfrcRate;
    use ackclock_dgram::rpc::{rpc_rtt_config, RateControl, RpcServer};
    use ackclock_dgram::stream::StreamSenderConfig;
    use std::collections::BTreeSet;

    fn facts(local: SocketAddrV4, socket: &'static str, now_ms: u64) -> RunFacts {
        RunFacts {
            socket,
            local: Some(local),
            now: Instant::ZERO + Duration::from_millis(now_ms),
            udp: UdpReport {
                datagrams_in: 3,
                bytes_in: 300,
                ..UdpReport::default()
            },
        }
    }

    /// Every field of `docs` is in the `## {title}` table of docs/OUTPUTS.md with the type
    /// given there, and every field listed is in one of them.
    fn check_documented(title: &str, docs: &[Value]) {
        let listed = documented_section(title);
        assert!(listed.len() >= 10, "{title}: {} rows", listed.len());
        let mut seen = BTreeSet::new();
        for doc in docs {
            let mut all = Vec::new();
            paths(doc, "", &mut all);
            for (path, v) in &all {
                if path.ends_with("[]") && v.is_object() {
                    continue;
                }
                let ty = listed
                    .get(path)
                    .unwrap_or_else(|| panic!("{title}: {path} is not in docs/OUTPUTS.md"));
                assert!(has_type(v, ty), "{title}: {path} is {v}, not {ty}");
                seen.insert(path.clone());
            }
        }
        for path in listed.keys() {
            assert!(
                seen.contains(path),
                "{title}: {path} is documented but not written"
            );
        }
    }

    #[test]
    fn the_json_documents_are_as_docs_outputs_md_says() {
        let server_at = SocketAddrV4::new(THEIRS, 2049);
        let local = SocketAddrV4::new(OURS, 49152);
        let live = Schedule::live(None);
        // An RPC client with TFRC that completes its requests, and one with a fixed timer
        // whose requests nobody answers (latencies null, no rate).
        let cfg = RpcClientConfig {
            requests: Some(20),
            rate: RateControl::Tfrc,
            timer: Timer::Adaptive(rpc_rtt_config()),
            ..RpcClientConfig::nfs(server_at)
        };
        let mut client = RpcClientApp::new(cfg, "nfs", live);
        let mut server = RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), 2049, live);
        let five = Duration::from_millis(5);
        run_pair(&mut client, &mut server, five, Duration::from_secs(10));
        assert!(crate::App::is_done(&client));
        let f1 = facts(local, "tun", 10_000);
        let rpc1 = RpcReport::new(&client, &f1, "nfs", None);
        assert_eq!(rpc1.completed, 20);
        let cfg2 = RpcClientConfig {
            requests: Some(1),
            max_transmissions: 1,
            ..RpcClientConfig::dns(server_at)
        };
        let mut lonely =
            RpcClientApp::new(cfg2, "dns", Schedule::live(Some(Duration::from_secs(1))));
        let mut deaf = RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), 9, live);
        run_pair(&mut lonely, &mut deaf, five, Duration::from_secs(5));
        let f2 = facts(local, "kernel", 5_000);
        let rpc2 = RpcReport::new(&lonely, &f2, "dns", Some(Duration::from_secs(1)));
        assert_eq!((rpc2.issued, rpc2.completed, rpc2.failed), (1, 0, 1));
        check_documented(
            "ackclock rpc --json",
            &[rpc1.json(&f1.udp), rpc2.json(&f2.udp)],
        );
        let set = ServerSettings {
            service_ms: 0.0,
            queue: 64,
            max_response: 1472,
        };
        check_documented(
            "ackclock rpc-server --json",
            &[server_json(&server, &facts(server_at, "tun", 10_000), &set)],
        );
        // A TFRC stream and its receiver, with interval reports.
        let opts = StreamAppOptions {
            idle_timeout: Some(Duration::from_millis(500)),
            interval: Some(Duration::from_secs(1)),
            keep_intervals: true,
        };
        let mut tx = StreamSenderApp::new(
            StreamSenderConfig {
                dst: SocketAddrV4::new(THEIRS, 5004),
                packet_bytes: 1000,
                start: Instant::ZERO,
                stop: None,
                bytes: None,
            },
            Controller::Tfrc(TfrcRate::new(1028)),
            Schedule::live(Some(Duration::from_secs(2))),
            &opts,
        );
        let mut rx = StreamReceiverApp::new(5004, live, &opts);
        let (t_done, r_done) = run_pair(&mut tx, &mut rx, five, Duration::from_secs(10));
        assert!(t_done && r_done);
        let sd = sender_json(
            &tx,
            &facts(local, "tun", 10_000),
            "tfrc",
            Some(Duration::from_secs(2)),
        );
        let rd = receiver_json(
            &rx,
            &facts(SocketAddrV4::new(THEIRS, 5004), "kernel", 10_000),
        );
        assert!(sd["intervals"].as_array().unwrap().len() >= 2);
        assert_eq!(sd["interval_s"], 1.0);
        assert_eq!(sd["sender"]["packets"], rd["receiver"]["packets"]);
        assert_eq!(rd["remote"], "198.18.0.2:49152");
        check_documented("ackclock dgram-stream --json", &[sd, rd]);
    }
}
