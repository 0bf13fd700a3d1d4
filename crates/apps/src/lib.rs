//! `ackclock-apps`: the applications, written once, sans-IO, for every world that runs
//! them. The simulator's hosts (`ackclock-sim`), the live TUN host and the kernel-socket
//! host (`ackclock-tun`) all drive the same [`App`] trait with a [`Ctx`]: the time, the
//! host's TCP [`Endpoint`], its UDP sockets, and, in the simulator, the host's CPU as an
//! optional capability ([`WriteCharge`]).
//!
//! - [`bulk`]: the simulator's bulk sender (chargen, optionally with charged writes) and
//!   sink (discard), the transfers of the seeds' experiments.
//! - [`request`]: a request/response client and server (a transaction workload).
//! - [`services`]: discard (RFC 863), chargen (RFC 864) and echo (RFC 862) on any ports.
//! - [`stream`]: a netperf/iperf3-style bulk test over one or several connections, with
//!   interval reports, and its text and iperf3-shaped JSON reports.
//! - [`dgram`]: the datagram applications of `ackclock-dgram` (the NFS- and DNS-like RPC
//!   client and its server, the TFRC / rate-AIMD stream and its receiver) on a socket of
//!   the host's UDP, with their reports.
//! - [`spec`]: the serde description of an application that a scenario file and the live
//!   commands' flags both build, and what it builds.
//!
//! Nothing here reads a clock or does I/O but through the context (the live stream test
//! may read and write a file the user named).
//!
//! # Example
//!
//! A bulk sender and a sink on two engine endpoints joined by an in-memory path
//! (`ackclock_testkit::pair` is the same idea with link models):
//!
//! ```
//! use ackclock_apps::bulk::{Amount, BulkSender, Sink};
//! use ackclock_apps::{App, Ctx};
//! use ackclock_dgram::{UdpConfig, UdpStack};
//! use ackclock_tcp::{Endpoint, EndpointConfig, TcpConfig};
//! use ackclock_wire::{Duration, Instant};
//! use std::net::{Ipv4Addr, SocketAddrV4};
//!
//! let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
//! let mut ea = Endpoint::new(EndpointConfig::new(a, [1; 16]));
//! let mut eb = Endpoint::new(EndpointConfig::new(b, [2; 16]));
//! let (mut ua, mut ub) = (UdpStack::new(UdpConfig::new(a)), UdpStack::new(UdpConfig::new(b)));
//! let mut sink = Sink::new(&mut eb, 9, TcpConfig::newreno()).unwrap();
//! let to = SocketAddrV4::new(b, 9);
//! let mut sender = BulkSender::new(to, TcpConfig::newreno(), Instant::ZERO, Amount::Bytes(100_000), 4096);
//! let mut now = Instant::ZERO;
//! let mut buf = vec![0u8; 2048];
//! while sink.finished_at().is_none() && now < Instant::ZERO + Duration::from_secs(10) {
//!     for ep in [&mut ea, &mut eb] {
//!         if ep.poll_timeout().is_some_and(|t| t <= now) {
//!             ep.handle_timeout(now);
//!         }
//!     }
//!     sender.poll(&mut Ctx::new(now, &mut ea, &mut ua));
//!     sink.poll(&mut Ctx::new(now, &mut eb, &mut ub));
//!     // A lossless wire with no delay: each side's output is the other's input.
//!     while let Some(t) = ea.poll_transmit(now, &mut buf) {
//!         eb.handle_packet(now, &buf[..t.len]);
//!     }
//!     while let Some(t) = eb.poll_transmit(now, &mut buf) {
//!         ea.handle_packet(now, &buf[..t.len]);
//!     }
//!     now += Duration::from_millis(1);
//! }
//! assert_eq!(sink.bytes(), 100_000);
//! ```

#![warn(missing_docs)]

pub mod bulk;
pub mod dgram;
#[cfg(test)]
mod doc_check;
pub mod request;
pub mod services;
pub mod spec;
pub mod stream;
#[cfg(test)]
mod testing;

use ackclock_dgram::UdpSockets;
use ackclock_tcp::{ConnId, Endpoint};
use ackclock_wire::Instant;

pub use dgram::{DatagramSummary, RpcSummary, StreamSummary};

/// What an application can touch on its host during one [`App::poll`].
pub struct Ctx<'a> {
    /// The host's time (the simulator's, or the live loop's one reading per turn).
    pub now: Instant,
    /// The host's TCP.
    pub ep: &'a mut Endpoint,
    /// The host's UDP sockets (a [`UdpStack`](ackclock_dgram::UdpStack), or kernel
    /// sockets on the kernel-socket host).
    pub udp: &'a mut dyn UdpSockets,
    /// The host's CPU, when it charges application writes (the simulator's CPU model):
    /// an application then asks for a write with [`WriteCharge::request`] instead of
    /// writing to the socket, and writes in [`App::write_done`] once the CPU has spent
    /// the copy's time. `None`: writes cost nothing (every live host).
    pub cpu: Option<WriteCharge>,
}

impl<'a> Ctx<'a> {
    /// A context without a CPU model (writes cost nothing).
    pub fn new(now: Instant, ep: &'a mut Endpoint, udp: &'a mut dyn UdpSockets) -> Self {
        Ctx {
            now,
            ep,
            udp,
            cpu: None,
        }
    }

    /// A context whose host charges application writes ([`Ctx::cpu`]).
    pub fn with_charged_writes(mut self) -> Self {
        self.cpu = Some(WriteCharge::default());
        self
    }
}

/// The simulator's CPU model as an application sees it: a write call is one unit of work
/// whose copy (copyin) takes CPU time, after which TCP sees the bytes (seed 000, Jul 1988:
/// "copy from user space to socket, call the protocol send routine").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteCharge {
    /// The write asked for in this poll, if any: its bytes.
    pub requested: Option<usize>,
}

impl WriteCharge {
    /// Asks the host's CPU to copy `bytes` into the socket (one write call); the host calls
    /// [`App::write_done`] when the copy is done.
    pub fn request(&mut self, bytes: usize) {
        self.requested = Some(bytes);
    }
}

/// An application on a host: it owns its connections' and sockets' handles and moves
/// data through the host's TCP and UDP. Hosts call [`poll`](Self::poll) after every event
/// that may concern it (the simulator: every event on its host; a live loop: every turn)
/// and at the time it asked for.
pub trait App: Send {
    /// Runs the application at `cx.now`; returns when it next needs to run on its own (a
    /// timer). A time not after `cx.now` asks for nothing more than this poll did.
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant>;
    /// Whether its work is over: a live host returns from its loop when its application
    /// is done. Applications that serve until stopped are never done by themselves.
    fn is_done(&self) -> bool {
        false
    }
    /// The first SIGINT or SIGTERM of a live run: close or reset what is open; the host
    /// then runs until [`is_done`](Self::is_done) or its grace period ends.
    fn shutdown(&mut self, _cx: &mut Ctx<'_>) {}
    /// The write of `bytes` asked for with [`WriteCharge::request`] has been copied (its
    /// CPU time spent): hand the bytes to TCP now.
    fn write_done(&mut self, _cx: &mut Ctx<'_>, _bytes: usize) {}
    /// The connection carrying this application's main data, once it exists (the
    /// simulator traces it).
    fn conn(&self) -> Option<ConnId> {
        None
    }
    /// Bytes this application has delivered to its peer's application (senders) or read
    /// (receivers and clients).
    fn bytes(&self) -> u64 {
        0
    }
    /// When the application finished its work, if it has.
    fn finished_at(&self) -> Option<Instant> {
        None
    }
    /// A datagram application's figures (RPC clients and servers, streams).
    fn datagram(&self) -> Option<DatagramSummary> {
        None
    }
}
