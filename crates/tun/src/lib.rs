//! `ackclock-tun`: the real network (docs/ARCHITECTURE.md). The same sans-IO TCP the simulator
//! measures, driven on a Linux TUN device against the kernel's own TCP, and a real-time
//! path emulator built from the simulator's gateway models.
//!
//! - [`sys`]: the TUN device (`/dev/net/tun`, IFF_TUN without packet information), epoll,
//!   a timerfd, clocks: a few `libc` calls.
//! - [`signals`]: SIGINT and SIGTERM as a readable descriptor in the loops' epoll sets.
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
//!
//! # Example
//!
//! A live [`Host`] serving echo (RFC 862) on port 7 to the Linux kernel behind its TUN
//! device: [`Host::new`] creates the device (`ack%d`), gives the kernel 198.18.0.1 on it
//! and routes ackclock's 198.18.0.2 into it (`ip link`, `ip addr`, `ip route`);
//! [`Host::run`] drives the application with the wall clock until it is done (this one
//! serves until stopped) or a signal stops it: the first SIGINT or SIGTERM asks it to
//! close its connections and gives them [`Host::grace`], a second stops at once.
//! Meanwhile `nc 198.18.0.2 7` on the same machine talks to ackclock's TCP. Needs root.
//!
//! ```no_run
//! use ackclock_apps::services::{Service, ServiceOptions, ServicesApp};
//! use ackclock_tcp::TcpConfig;
//! use ackclock_tun::{DeviceConfig, Host};
//!
//! let mut host = Host::new(&DeviceConfig::default())?;
//! let mut app = ServicesApp::new(
//!     vec![(7, Service::Echo)],
//!     ServiceOptions::new(TcpConfig::newreno()),
//! );
//! let end = host.run(&mut app)?;
//! host.finish()?;
//! println!("{end:?}");
//! print!("{}", host.counters_text());
//! # Ok::<(), ackclock_tun::Error>(())
//! ```
//!
//! A datagram application on Linux's own UDP, no root needed: a [`KernelHost`] running
//! `ackclock-dgram`'s RPC server on a kernel socket at 127.0.0.1:2049 for ten seconds
//! ([`place::run_datagram`] does the same for the live commands, on either kind of host).
//!
//! ```no_run
//! use ackclock_apps::dgram::{RpcServerApp, Schedule};
//! use ackclock_dgram::rpc::RpcServer;
//! use ackclock_tun::KernelHost;
//! use ackclock_wire::Duration;
//! use std::net::Ipv4Addr;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut host = KernelHost::new(Ipv4Addr::LOCALHOST)?;
//! let mut app = RpcServerApp::new(
//!     RpcServer::new(Duration::ZERO, 64, 1472),
//!     2049,
//!     Schedule::live(Some(Duration::from_secs(10))),
//! );
//! let at = app.bind_now(&mut host.udp)?;
//! println!("serving on {at}");
//! host.run(&mut app)?;
//! println!("{} requests", app.server().stats().requests);
//! print!("{}", host.counters_text());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod clock;
pub mod demo;
pub mod emulator;
pub mod flags;
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
    /// An operating-system operation failed (a system call, a file): what was being done
    /// (it starts the message), and the OS error. The OS error is in the message and not
    /// also a `source`: a reporter that prints the chain (anyhow's `{:#}`) said it twice.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// A command we ran (`ip`, or `sysctl` through `ip netns exec`) failed or could not
    /// start.
    #[error("`{cmd}` failed: {msg}")]
    Command {
        /// The command line, as it could be typed again by hand.
        cmd: String,
        /// Its stderr, or why it could not be started.
        msg: String,
    },
    /// A setting that cannot work (an address outside the live range, a namespace that
    /// exists already, a queue without a rate...): the whole message.
    #[error("{0}")]
    Config(String),
}

/// Whether this process may create TUN devices and namespaces (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
