//! `ackclock-dgram`: datagram traffic and its congestion control, the part of the seeds' plan
//! for "connectionless traffic (e.g., domain server queries, RPC requests)" (seed 000,
//! 11 Feb 1988).
//!
//! - [`stack`]: a sans-IO UDP host (RFC 768) the simulator and the live TUN loop drive, as
//!   they drive the TCP endpoint.
//! - [`msg`]: the messages of our applications (requests, responses, stream data and
//!   RFC 5348 feedback).
//! - [`rpc`]: an NFS-like RPC client and a DNS-like query client with fixed or adaptive
//!   (the TCP's estimator) retransmission timers, and their server.
//! - [`stream`]: a rate-controlled datagram stream and its receiver.
//! - [`rate`]: the rate controllers, TFRC (RFC 5348) and rate-based AIMD.
//! - [`hist`]: a fixed-size latency histogram (no allocation per request).
//! - [`virtual_wire`]: two stacks joined by a fixed delay in virtual time, for tests and
//!   examples.
//!
//! Like the TCP engine, nothing here reads a clock or does I/O: time comes in as
//! [`Instant`](ackclock_wire::Instant) arguments, datagrams go through a
//! [`DatagramSocket`]. Whoever drives a [`UdpStack`] hands it the
//! IPv4 packets that arrive ([`UdpStack::handle_packet`]) and sends the ones it emits
//! ([`UdpStack::poll_transmit`]): the simulator's hosts, the live TUN host of
//! `ackclock-tun`, or, in tests, a [`VirtualWire`]. The applications that run these parts
//! on a host (binding their socket, starting and stopping them) are `ackclock-apps`'s
//! `dgram` module.
//!
//! # Example
//!
//! Two stacks 5 ms apart: a datagram from an ephemeral port of one to port 53 of the
//! other, then an NFS-like RPC client against a server on the same wire.
//!
//! ```
//! use ackclock_dgram::rpc::{RpcClient, RpcClientConfig, RpcServer};
//! use ackclock_dgram::{StackSocket, VirtualWire};
//! use ackclock_wire::{Duration, Instant};
//! use std::net::{Ipv4Addr, SocketAddrV4};
//!
//! let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
//! let mut net = VirtualWire::new(a, b, Duration::from_millis(5));
//!
//! // One datagram, RFC 768: it arrives 5 ms later with its source address and port.
//! let sa = net.a.bind(0)?;
//! let sb = net.b.bind(53)?;
//! net.a.send_to(sa, SocketAddrV4::new(b, 53), b"who is 198.18.0.9")?;
//! let t0 = Instant::ZERO;
//! net.transmit(t0);
//! assert_eq!(net.deliver(t0 + Duration::from_millis(4)), (false, false));
//! assert_eq!(net.deliver(t0 + Duration::from_millis(5)), (false, true));
//! let mut buf = [0u8; 64];
//! let (n, from, _ecn) = net.b.recv_from(sb, &mut buf).expect("a datagram");
//! assert_eq!(&buf[..n], b"who is 198.18.0.9");
//! assert_eq!(Some(from), net.a.local(sa));
//!
//! // 20 requests, 4 outstanding, each answered at once by the server on port 2049.
//! let server_sock = net.b.bind(2049)?;
//! let client_sock = net.a.bind(0)?;
//! let mut server = RpcServer::new(Duration::ZERO, 64, 1024);
//! let mut client = RpcClient::new(RpcClientConfig {
//!     requests: Some(20),
//!     ..RpcClientConfig::nfs(SocketAddrV4::new(b, 2049))
//! });
//! let mut now = Instant::ZERO;
//! while client.finished_at().is_none() && now < Instant::ZERO + Duration::from_secs(10) {
//!     net.deliver(now);
//!     client.poll(now, &mut StackSocket { stack: &mut net.a, id: client_sock });
//!     server.poll(now, &mut StackSocket { stack: &mut net.b, id: server_sock });
//!     net.transmit(now);
//!     now += Duration::from_millis(1);
//! }
//! let st = client.stats();
//! assert_eq!((st.completed, st.retransmissions), (20, 0));
//! // Every request took one round trip of the wire: 10 ms.
//! assert_eq!(st.latency.max(), Some(10_000_000));
//! assert_eq!(server.stats().responses, 20);
//! # Ok::<(), ackclock_dgram::DgramError>(())
//! ```

#![warn(missing_docs)]

pub mod hist;
pub mod msg;
pub mod rate;
pub mod rpc;
pub mod stack;
pub mod stream;
pub mod virtual_wire;

pub use stack::{DatagramSocket, SocketId, StackSocket, UdpConfig, UdpSockets, UdpStack, UdpStats};
pub use virtual_wire::VirtualWire;

/// Why a datagram operation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DgramError {
    /// Binding asked for a port another socket of the host holds: the port. A
    /// [`UdpStack`] refuses it itself; a kernel socket's `EADDRINUSE` becomes this too.
    #[error("port {0} is already bound")]
    PortInUse(u16),
    /// Binding port 0 found every port of the ephemeral range (49152-65535, RFC 6335 §6)
    /// taken.
    #[error("no ephemeral port is free")]
    NoEphemeralPort,
    /// The [`SocketId`] names no bound socket (it was closed, or never bound here).
    #[error("the socket is not bound")]
    NotBound,
    /// The payload, of this many bytes, is longer than the 65,507 bytes an unfragmented
    /// IPv4 datagram carries (65,535 less the 20-byte IP and 8-byte UDP headers).
    #[error("a {0}-byte payload does not fit an unfragmented IPv4 datagram (at most 65507)")]
    TooLong(usize),
    /// The stack's output queue already holds [`UdpConfig::tx_queue`] datagrams (BSD's
    /// ENOBUFS from a full interface queue): this one is not sent.
    #[error("the output queue is full")]
    QueueFull,
    /// The operating system refused (a kernel socket): its errno.
    #[error("{}", std::io::Error::from_raw_os_error(*.0))]
    Os(i32),
}
