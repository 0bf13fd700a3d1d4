//! The datagram applications on simulated hosts: the `ackclock-dgram` clients, servers and
//! streams, each on a socket of its host's UDP.

use crate::app::{App, AppCtx};
use crate::results::{DatagramSummary, RpcSummary, StreamSummary};
use ackclock_dgram::rpc::{RpcClient, RpcServer};
use ackclock_dgram::stream::{StreamReceiver, StreamSender};
use ackclock_dgram::{SocketId, StackSocket};
use ackclock_wire::Instant;

/// Binds `port` on first use (0: an ephemeral port) and runs `f` with the socket.
fn with_socket<R>(
    ctx: &mut AppCtx<'_>,
    sock: &mut Option<SocketId>,
    port: u16,
    f: impl FnOnce(Instant, &mut StackSocket<'_>) -> R,
) -> Option<R> {
    if sock.is_none() {
        *sock = ctx.udp.bind(port).ok();
    }
    let id = (*sock)?;
    let mut s = StackSocket { stack: ctx.udp, id };
    Some(f(ctx.now, &mut s))
}

/// An RPC or DNS-like client.
pub struct RpcClientApp {
    pub client: RpcClient,
    sock: Option<SocketId>,
    kind: &'static str,
}

impl RpcClientApp {
    pub fn new(client: RpcClient, kind: &'static str) -> Self {
        RpcClientApp {
            client,
            sock: None,
            kind,
        }
    }
}

impl App for RpcClientApp {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        let start = self.client.config().start;
        if ctx.now < start {
            return Some(start);
        }
        let c = &mut self.client;
        with_socket(ctx, &mut self.sock, 0, |now, s| c.poll(now, s)).flatten()
    }
    fn bytes(&self) -> u64 {
        self.client.stats().goodput_bytes
    }
    fn finished_at(&self) -> Option<Instant> {
        self.client.finished_at()
    }
    fn datagram(&self) -> Option<DatagramSummary> {
        let st = self.client.stats();
        let cfg = self.client.config();
        let ms = |v: Option<f64>| v.map(|ns| ns / 1e6);
        Some(DatagramSummary {
            kind: self.kind.into(),
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
                srtt_ms: self.client.srtt().as_secs_f64() * 1000.0,
                final_rate_bps: self.client.rate().map(|x| x * 8.0),
                server_requests: 0,
                server_retransmitted_requests: 0,
                server_queue_drops: 0,
            }),
            stream: None,
        })
    }
}

/// The server of an RPC or DNS-like flow.
pub struct RpcServerApp {
    pub server: RpcServer,
    port: u16,
    sock: Option<SocketId>,
}

impl RpcServerApp {
    pub fn new(server: RpcServer, port: u16) -> Self {
        RpcServerApp {
            server,
            port,
            sock: None,
        }
    }
}

impl App for RpcServerApp {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        let s = &mut self.server;
        with_socket(ctx, &mut self.sock, self.port, |now, k| s.poll(now, k)).flatten()
    }
    fn datagram(&self) -> Option<DatagramSummary> {
        let st = self.server.stats();
        Some(DatagramSummary {
            rpc: Some(RpcSummary {
                server_requests: st.requests,
                server_retransmitted_requests: st.retransmitted_requests,
                server_queue_drops: st.queue_drops,
                ..RpcSummary::default()
            }),
            ..DatagramSummary::default()
        })
    }
}

/// A stream's sender.
pub struct StreamSenderApp {
    pub sender: StreamSender,
    start: Instant,
    sock: Option<SocketId>,
}

impl StreamSenderApp {
    pub fn new(sender: StreamSender, start: Instant) -> Self {
        StreamSenderApp {
            sender,
            start,
            sock: None,
        }
    }
}

impl App for StreamSenderApp {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        if ctx.now < self.start {
            return Some(self.start);
        }
        let s = &mut self.sender;
        with_socket(ctx, &mut self.sock, 0, |now, k| s.poll(now, k)).flatten()
    }
    fn bytes(&self) -> u64 {
        self.sender.stats().bytes
    }
    fn datagram(&self) -> Option<DatagramSummary> {
        let st = self.sender.stats();
        Some(DatagramSummary {
            kind: "datagram_stream".into(),
            rate_control: self.sender.controller().name().into(),
            rpc: None,
            stream: Some(StreamSummary {
                packets_sent: st.packets,
                feedbacks: st.feedbacks,
                no_feedback_timeouts: st.no_feedback_timeouts,
                final_rate_bps: self.sender.controller().rate() * 8.0,
                mean_rate_bps: self.sender.mean_rate().map(|x| x * 8.0),
                ..StreamSummary::default()
            }),
        })
    }
}

/// A stream's receiver.
pub struct StreamReceiverApp {
    pub receiver: StreamReceiver,
    port: u16,
    sock: Option<SocketId>,
}

impl StreamReceiverApp {
    pub fn new(port: u16) -> Self {
        StreamReceiverApp {
            receiver: StreamReceiver::new(),
            port,
            sock: None,
        }
    }
}

impl App for StreamReceiverApp {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        let r = &mut self.receiver;
        with_socket(ctx, &mut self.sock, self.port, |now, k| r.poll(now, k)).flatten()
    }
    fn bytes(&self) -> u64 {
        self.receiver.stats().bytes
    }
    fn datagram(&self) -> Option<DatagramSummary> {
        let st = self.receiver.stats();
        Some(DatagramSummary {
            stream: Some(StreamSummary {
                packets_received: st.packets,
                packets_lost: st.lost,
                loss_events: st.loss_events,
                loss_event_rate: self.receiver.p(),
                ..StreamSummary::default()
            }),
            ..DatagramSummary::default()
        })
    }
}
