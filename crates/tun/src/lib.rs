//! `ackclock-tun`: the real network (docs/ARCHITECTURE.md). The same sans-IO TCP the simulator
//! measures, driven on a Linux TUN device against the kernel's own TCP, and a real-time
//! path emulator built from the simulator's gateway models.
//!
//! - [`sys`]: the TUN device (`/dev/net/tun`, IFF_TUN without packet information), epoll,
//!   a timerfd, clocks: a few `libc` calls.
//! - [`netcfg`]: addresses, routes and namespaces, by running `ip`.
//! - [`clock`]: the wall clock, which enters only here; the engine sees only `now`.
//! - [`host`]: a live host: device + [`ackclock_tcp::Endpoint`] + a UDP stack
//!   ([`ackclock_dgram::UdpStack`]) + the poll loop.
//! - [`apps`]: the bulk test (`ackclock stream`) and discard/chargen/echo.
//! - [`dgram`]: the datagram applications (`ackclock rpc`, `rpc-server`, `dgram-stream`)
//!   on the host's UDP stack.
//! - [`kernel_udp`]: Linux's UDP as a datagram socket, and a loop running one of those
//!   applications on it (the Linux side of a live test; no root needed).
//! - [`interval`]: the accounting of the bulk test's interval reports (iperf3's `-i`).
//! - [`emulator`]: two namespaces joined through the gateway models in real time
//!   (`ackclock emulate`).
//!
//! Everything here but [`kernel_udp`] needs root (or CAP_NET_ADMIN) at run time.

pub mod apps;
pub mod clock;
pub mod dgram;
pub mod emulator;
pub mod host;
pub mod interval;
pub mod kernel_udp;
pub mod netcfg;
pub mod signals;
pub mod sys;

pub use apps::{
    Limit, Service, ServiceOptions, ServicesApp, StreamApp, StreamDirection, StreamOptions,
    StreamReport, StreamRole, MAX_PARALLEL,
};
pub use clock::Clock;
pub use dgram::{
    DatagramApp, DgramInterval, OnHost, RpcClientApp, RpcServerApp, StreamAppOptions,
    StreamReceiverApp, StreamSenderApp,
};
pub use emulator::{Emulator, EmulatorConfig, EmulatorReport, PathConfig, Topology};
pub use host::{App, Control, Device, DeviceConfig, Host, RunEnd};
pub use interval::{Interval, IntervalRecord, IntervalStream};
pub use kernel_udp::{KernelHost, KernelUdpSocket, KernelUdpStats};

/// What can go wrong in live mode; every message says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("`{cmd}` failed: {msg}")]
    Command { cmd: String, msg: String },
    #[error("{0}")]
    Config(String),
}

/// Whether this process may create TUN devices and namespaces (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
