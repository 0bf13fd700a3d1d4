//! `ackclock-tun`: the real network (docs/ARCHITECTURE.md). The same sans-IO TCP the simulator
//! measures, driven on a Linux TUN device against the kernel's own TCP, and a real-time
//! path emulator built from the simulator's gateway models.
//!
//! - [`sys`]: the TUN device (`/dev/net/tun`, IFF_TUN without packet information), epoll,
//!   a timerfd, clocks: a few `libc` calls.
//! - [`netcfg`]: addresses, routes and namespaces, by running `ip`.
//! - [`clock`]: the wall clock, which enters only here; the engine sees only `now`.
//! - [`host`]: a live host: device + [`ackclock_tcp::Endpoint`] + a UDP stack
//!   ([`ackclock_dgram::UdpStack`]) + the poll loop, running any
//!   [`ackclock_apps::App`] (the applications the simulator's hosts run).
//! - [`kernel_udp`]: Linux's UDP as a host's sockets, and a loop running an application
//!   on them (the Linux side of a live test; no root needed).
//! - [`place`]: where a live command's datagram application runs (a TUN host or kernel
//!   sockets) and what its run leaves for the report.
//! - [`demo`]: `ackclock live-demo`'s services and the `nc` script run against them.
//! - [`emulator`]: two namespaces joined through the gateway models in real time
//!   (`ackclock emulate`).
//!
//! Everything here but [`kernel_udp`] needs root (or CAP_NET_ADMIN) at run time.

pub mod clock;
pub mod demo;
pub mod emulator;
pub mod host;
pub mod kernel_udp;
pub mod netcfg;
pub mod place;
pub mod signals;
pub mod sys;

pub use clock::Clock;
pub use emulator::{Emulator, EmulatorConfig, EmulatorReport, PathConfig, Topology};
pub use host::{Device, DeviceConfig, Host, RunEnd};
pub use kernel_udp::{KernelHost, KernelUdp, KernelUdpSocket, KernelUdpStats};
pub use place::{Place, Ran};

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
