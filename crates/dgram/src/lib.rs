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
//!
//! Like the TCP engine, nothing here reads a clock or does I/O: time comes in as
//! [`Instant`](ackclock_wire::Instant) arguments, datagrams go through a
//! [`DatagramSocket`](stack::DatagramSocket).

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
    #[error("port {0} is already bound")]
    PortInUse(u16),
    #[error("no ephemeral port is free")]
    NoEphemeralPort,
    #[error("the socket is not bound")]
    NotBound,
    #[error("a {0}-byte payload does not fit an unfragmented IPv4 datagram (at most 65507)")]
    TooLong(usize),
    #[error("the output queue is full")]
    QueueFull,
    /// The operating system refused (a kernel socket): its errno.
    #[error("{}", std::io::Error::from_raw_os_error(*.0))]
    Os(i32),
}
