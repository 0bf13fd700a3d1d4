//! What an application is, as data: [`AppSpec`], the `app` of a scenario's flow (serde,
//! TOML), and the parts of it a live command's flags fill in too ([`RpcSpec`] for `ackclock
//! rpc`, [`StreamSpec`] for `ackclock dgram-stream`), with the defaults in one place. A
//! flow's spec builds its two applications ([`AppSpec::build`]).

use crate::bulk::{Amount, BulkSender, Sink};
use crate::dgram::{
    RpcClientApp, RpcServerApp, Schedule, StreamAppOptions, StreamReceiverApp, StreamSenderApp,
};
use crate::request::{RequestClient, RequestServer};
use crate::services::{Service, ServiceOptions, ServicesApp};
use crate::App;
use ackclock_dgram::rate::{AimdRate, Controller, TfrcRate};
use ackclock_dgram::rpc::{
    rpc_rtt_config, Arrivals, RateControl, RpcClientConfig, RpcServer, Timer, IP_UDP_HEADERS,
};
use ackclock_dgram::stream::StreamSenderConfig;
use ackclock_tcp::{Endpoint, TcpConfig, TcpError};
use ackclock_wire::{Duration, Instant};
use serde::{Deserialize, Serialize};
use std::net::SocketAddrV4;

/// The application of a flow, the `app` table of a scenario (docs/SCENARIOS.md).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// chargen to discard: `bytes`, or for `duration_s`, or until the run ends.
    Bulk {
        /// Send this many bytes, then close.
        #[serde(default)]
        bytes: Option<f64>,
        /// Send for this long after the start, then close.
        #[serde(default)]
        duration_s: Option<f64>,
        /// Bytes handed to TCP per write call.
        #[serde(default)]
        chunk_bytes: Option<usize>,
    },
    /// `count` transactions of `request_bytes` up and `response_bytes` down.
    RequestResponse {
        /// Bytes of each request.
        request_bytes: usize,
        /// Bytes of each response.
        response_bytes: usize,
        /// Transactions (1).
        #[serde(default = "one")]
        count: u32,
        /// Pause between a response and the next request, ms (0).
        #[serde(default)]
        think_ms: f64,
    },
    /// Sends `bytes` to an echo server and reads them back.
    Echo {
        /// Bytes sent, and read back.
        bytes: f64,
    },
    /// NFS-like RPC over UDP: `outstanding` requests at a time (closed loop, or Poisson
    /// arrivals with `requests_per_s`), retransmitted on a fixed or adaptive timer, with
    /// optional rate control. The flow's `tcp` fields do not apply.
    Rpc(RpcSpec),
    /// DNS-like queries over UDP: the same fields as `rpc`, with a query's defaults (40-byte
    /// queries, 200-byte answers, one outstanding, 10 a second, the adaptive timer).
    Dns(RpcSpec),
    /// A rate-controlled datagram stream (TFRC, RFC 5348; rate AIMD; or a fixed rate) with
    /// its receiver's feedback once per round trip.
    DatagramStream(StreamSpec),
}

/// An RPC or DNS-like client and its server. Absent fields take the kind's defaults.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RpcSpec {
    /// UDP payload bytes of a request (rpc 128, dns 40).
    #[serde(default)]
    pub request_bytes: Option<f64>,
    /// UDP payload bytes of a response (rpc 1024, dns 200).
    #[serde(default)]
    pub response_bytes: Option<f64>,
    /// Requests outstanding at most (rpc 4, as four biods; dns 1).
    #[serde(default)]
    pub outstanding: Option<f64>,
    /// Poisson arrivals per second (dns 10); absent for rpc: closed loop.
    #[serde(default)]
    pub requests_per_s: Option<f64>,
    /// Stop issuing after this many requests.
    #[serde(default)]
    pub requests: Option<f64>,
    /// Stop issuing after this long.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// "fixed" (rpc) or "adaptive" (dns): the TCP's estimator with backoff.
    #[serde(default)]
    pub timer: Option<TimerName>,
    /// The fixed timer's timeout (700 ms, SunOS NFS's timeo).
    #[serde(default)]
    pub timeout_ms: Option<f64>,
    /// Transmissions of one request before it is given up (rpc 5, dns 4).
    #[serde(default)]
    pub max_transmissions: Option<f64>,
    /// "none", "aimd" or "tfrc".
    #[serde(default)]
    pub rate_control: Option<RateControlName>,
    /// The server's service time per request (0: answers at once).
    #[serde(default)]
    pub service_ms: Option<f64>,
    /// Requests the server queues before dropping (64).
    #[serde(default)]
    pub server_queue: Option<f64>,
}

/// A datagram stream's sender and receiver.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    /// UDP payload bytes per packet (1000).
    #[serde(default)]
    pub packet_bytes: Option<f64>,
    /// "tfrc" (default), "aimd", or "none" (a fixed `rate_bps`, no congestion control).
    #[serde(default)]
    pub rate_control: Option<RateControlName>,
    /// The fixed rate of `rate_control = "none"`, IP bits per second.
    #[serde(default)]
    pub rate_bps: Option<f64>,
    /// Stop after this many payload bytes.
    #[serde(default)]
    pub bytes: Option<f64>,
    /// Stop sending this long after the start.
    #[serde(default)]
    pub duration_s: Option<f64>,
}

/// An RPC client's retransmission timer, by name.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimerName {
    /// The same timeout for every transmission.
    Fixed,
    /// The TCP's estimator (Jacobson's mean and deviation, RFC 6298) with backoff.
    Adaptive,
}

/// Rate control of datagrams, by name.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RateControlName {
    /// None: an RPC client only its outstanding limit, a stream a fixed rate.
    None,
    /// The TCP window algorithm as a rate.
    Aimd,
    /// TCP-Friendly Rate Control (RFC 5348).
    Tfrc,
}

impl RateControlName {
    /// The name as written.
    pub fn name(self) -> &'static str {
        match self {
            RateControlName::None => "none",
            RateControlName::Aimd => "aimd",
            RateControlName::Tfrc => "tfrc",
        }
    }
}

impl RpcSpec {
    /// The client's configuration: the kind's (`dns`: a query client; else NFS-like)
    /// defaults, then the fields given; it starts at `start` and draws its arrivals from
    /// `seed`.
    pub fn client_config(
        &self,
        dns: bool,
        dst: SocketAddrV4,
        start: Instant,
        seed: u64,
    ) -> RpcClientConfig {
        let r = self;
        let mut c = if dns {
            RpcClientConfig::dns(dst)
        } else {
            RpcClientConfig::nfs(dst)
        };
        c.start = start;
        c.seed = seed;
        if let Some(v) = r.request_bytes {
            c.request_bytes = v as usize;
        }
        if let Some(v) = r.response_bytes {
            c.response_bytes = v as usize;
        }
        if let Some(v) = r.outstanding {
            c.outstanding = v as usize;
        }
        if let Some(per_sec) = r.requests_per_s {
            c.arrivals = Arrivals::Poisson {
                per_sec,
                backlog: 1000,
            };
        }
        c.requests = r.requests.map(|n| n as u64);
        c.stop = r.duration_s.map(|d| start + Duration::from_secs_f64(d));
        let fixed = |ms: Option<f64>, default: Duration| {
            Timer::Fixed(ms.map_or(default, |ms| Duration::from_secs_f64(ms / 1000.0)))
        };
        c.timer = match (r.timer, c.timer) {
            (Some(TimerName::Adaptive), _) => Timer::Adaptive(rpc_rtt_config()),
            (Some(TimerName::Fixed), _) | (None, Timer::Fixed(_)) => {
                let default = match c.timer {
                    Timer::Fixed(t) => t,
                    Timer::Adaptive(_) => Duration::from_millis(700),
                };
                fixed(r.timeout_ms, default)
            }
            (None, t) => t,
        };
        if let Some(v) = r.max_transmissions {
            c.max_transmissions = v as u32;
        }
        c.rate = match r.rate_control {
            None | Some(RateControlName::None) => RateControl::None,
            Some(RateControlName::Aimd) => RateControl::Aimd,
            Some(RateControlName::Tfrc) => RateControl::Tfrc,
        };
        c
    }

    /// The server: `service_ms` per request (0), a queue of `server_queue` (64), and
    /// responses up to `max_response` bytes.
    pub fn server(&self, max_response: usize) -> RpcServer {
        RpcServer::new(
            Duration::from_secs_f64(self.service_ms.unwrap_or(0.0) / 1000.0),
            self.server_queue.map_or(64, |q| q as usize),
            max_response,
        )
    }
}

impl StreamSpec {
    /// UDP payload bytes per packet (1000).
    pub fn packet_bytes(&self) -> usize {
        self.packet_bytes.unwrap_or(1000.0) as usize
    }

    /// The sender's rate controller: TFRC by default, rate AIMD, or `rate_bps` (1 Mbit/s)
    /// with no control.
    pub fn controller(&self) -> Controller {
        let ip_bytes = self.packet_bytes() + IP_UDP_HEADERS;
        match self.rate_control.unwrap_or(RateControlName::Tfrc) {
            RateControlName::Tfrc => Controller::Tfrc(TfrcRate::new(ip_bytes)),
            RateControlName::Aimd => Controller::Aimd(AimdRate::new(ip_bytes)),
            RateControlName::None => Controller::Fixed(self.rate_bps.unwrap_or(1e6) / 8.0),
        }
    }

    /// The sender's configuration: to `dst` from `start`, for `duration_s` or `bytes`.
    pub fn sender_config(&self, dst: SocketAddrV4, start: Instant) -> StreamSenderConfig {
        StreamSenderConfig {
            dst,
            packet_bytes: self.packet_bytes(),
            start,
            stop: self.duration_s.map(|d| start + Duration::from_secs_f64(d)),
            bytes: self.bytes.map(|b| b as u64),
        }
    }
}

fn one() -> u32 {
    1
}

/// Where a flow's applications run: what [`AppSpec::build`] needs of the world.
pub struct FlowPlace<'a> {
    /// The server's (receiver's) host's TCP: servers listen as they are built, before any
    /// SYN can arrive.
    pub server_ep: &'a mut Endpoint,
    /// The server's address and port.
    pub dst: SocketAddrV4,
    /// When the client (sender) starts.
    pub start: Instant,
    /// The client's (sender's) TCP configuration.
    pub sender: TcpConfig,
    /// The server's (receiver's) TCP configuration.
    pub receiver: TcpConfig,
    /// The seed of the client's random draws (Poisson arrivals).
    pub seed: u64,
}

/// A flow's two applications.
pub struct FlowApps {
    /// On the flow's `from` host: the sender or client.
    pub client: Box<dyn App>,
    /// On the flow's `to` host: the receiver or server.
    pub server: Box<dyn App>,
    /// Whether the client counts what the flow delivered (the responses it read: RPC,
    /// request/response, echo) rather than the server (a sink, a stream's receiver).
    pub client_counts: bool,
}

impl AppSpec {
    /// The flow's client and server.
    ///
    /// # Errors
    /// The server's port is taken on its host.
    pub fn build(&self, at: FlowPlace<'_>) -> Result<FlowApps, TcpError> {
        let (dst, start, port) = (at.dst, at.start, at.dst.port());
        let (client, server, client_counts): (Box<dyn App>, Box<dyn App>, bool) = match self {
            AppSpec::Bulk {
                bytes,
                duration_s,
                chunk_bytes,
            } => {
                let amount = match (bytes, duration_s) {
                    (Some(b), _) => Amount::Bytes(*b as u64),
                    (None, Some(d)) => Amount::Until(start + Duration::from_secs_f64(*d)),
                    (None, None) => Amount::Forever,
                };
                let sink = Sink::new(at.server_ep, port, at.receiver)?;
                let chunk = chunk_bytes.unwrap_or(64 * 1024);
                let sender = BulkSender::new(dst, at.sender, start, amount, chunk);
                (Box::new(sender), Box::new(sink), false)
            }
            AppSpec::RequestResponse {
                request_bytes,
                response_bytes,
                count,
                think_ms,
            } => {
                let server = RequestServer::new(
                    at.server_ep,
                    port,
                    at.receiver,
                    *request_bytes as u64,
                    *response_bytes as u64,
                )?;
                let think = Duration::from_secs_f64(think_ms / 1000.0);
                let client = RequestClient::new(
                    dst,
                    at.sender,
                    start,
                    *request_bytes,
                    *response_bytes as u64,
                    *count,
                    think,
                );
                (Box::new(client), Box::new(server), true)
            }
            AppSpec::Echo { bytes } => {
                let mut server = ServicesApp::new(
                    vec![(port, Service::Echo)],
                    ServiceOptions::new(at.receiver),
                );
                server.listen_now(at.server_ep)?;
                let n = *bytes as usize;
                let client =
                    RequestClient::new(dst, at.sender, start, n, n as u64, 1, Duration::ZERO);
                (Box::new(client), Box::new(server), true)
            }
            AppSpec::Rpc(r) | AppSpec::Dns(r) => {
                let dns = matches!(self, AppSpec::Dns(_));
                let cfg = r.client_config(dns, dst, start, at.seed);
                let kind = if dns { "dns" } else { "rpc" };
                let client = RpcClientApp::new(cfg, kind, Schedule::at(start));
                let server = RpcServerApp::new(
                    r.server(ackclock_wire::udp::MAX_PAYLOAD),
                    port,
                    Schedule::default(),
                );
                (Box::new(client), Box::new(server), true)
            }
            AppSpec::DatagramStream(st) => {
                let opts = StreamAppOptions::default();
                let sender = StreamSenderApp::new(
                    st.sender_config(dst, start),
                    st.controller(),
                    Schedule::at(start),
                    &opts,
                );
                let receiver = StreamReceiverApp::new(port, Schedule::default(), &opts);
                (Box::new(sender), Box::new(receiver), false)
            }
        };
        Ok(FlowApps {
            client,
            server,
            client_counts,
        })
    }
}
