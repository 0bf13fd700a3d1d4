//! Where a live command's datagram application runs: ackclock's UDP on a TUN host, or
//! Linux's kernel sockets (`--kernel`, no root), and what the run leaves for its report.

use crate::host::{DeviceConfig, Host, RunEnd};
use crate::kernel_udp::KernelHost;
use crate::Error;
use ackclock_apps::dgram::report::RunFacts;
use ackclock_apps::dgram::{DatagramApp, DatagramPart};
use ackclock_dgram::rpc::IP_UDP_HEADERS;
use std::io::Write;
use std::net::SocketAddrV4;

/// The largest UDP payload of an unfragmented IPv4 datagram.
pub const MAX_UDP_PAYLOAD: usize = 65_507;

/// Where a datagram application runs.
#[derive(Clone, Debug)]
pub enum Place {
    /// ackclock's UDP on a TUN device with this configuration.
    Tun(DeviceConfig),
    /// A kernel socket bound at this address (its port is the application's).
    Kernel(SocketAddrV4),
}

impl Place {
    /// "tun" or "kernel", as the JSON reports name it.
    pub fn name(&self) -> &'static str {
        match self {
            Place::Tun(_) => "tun",
            Place::Kernel(_) => "kernel",
        }
    }
    /// Where a server or receiver bound to `port` answers, for its first line: `w` is
    /// where it runs (on a TUN device the host's address, on a kernel socket the socket's).
    pub fn listening_at(&self, port: u16, w: &str) -> String {
        match self {
            Place::Tun(_) => format!("port {port} of {w}"),
            Place::Kernel(_) => w.to_string(),
        }
    }
    /// The largest UDP payload that crosses without fragments (ackclock's UDP neither
    /// fragments nor reassembles).
    pub fn max_payload(&self) -> usize {
        match self {
            Place::Tun(d) => (d.mtu as usize).saturating_sub(IP_UDP_HEADERS),
            Place::Kernel(_) => MAX_UDP_PAYLOAD,
        }
    }
}

/// What a run left: the application, how it ended, the facts its report needs, and the
/// device's (or socket's) lines to print.
pub struct Ran<A> {
    /// The application, as the run left it.
    pub app: A,
    /// Why the run ended.
    pub end: RunEnd,
    /// Where its socket was, the clock at the end, the socket's counters.
    pub facts: RunFacts,
    /// The device's or socket's counters, as lines.
    pub counters: String,
}

impl<A> Ran<A> {
    /// The end of a command's output: the counters' lines, then the JSON document when
    /// there is one (the last line of stdout).
    pub fn print_tail(&self, json: Option<serde_json::Value>) {
        match json {
            // stdout holds the JSON document alone; the counters go with the text, to stderr.
            Some(j) => {
                eprint!("{}", self.counters);
                println!("{j}");
            }
            None => print!("{}", self.counters),
        }
    }
}

/// Runs the datagram application `app` at `place`; `banner` gets where it runs ("198.18.0.2
/// on ack0 (kernel side 198.18.0.1)", or the kernel socket's address) once its socket is
/// bound, before the loop starts.
///
/// # Errors
/// The device or the socket cannot be set up, or the socket's port cannot be bound.
pub fn run_datagram<P: DatagramPart>(
    mut app: DatagramApp<P>,
    place: &Place,
    banner: impl FnOnce(&str),
) -> Result<Ran<DatagramApp<P>>, Error> {
    match place {
        Place::Tun(dev) => {
            let mut host = Host::new(dev)?;
            if let Err(e) = app.bind_now(&mut host.udp) {
                return Err(Error::Config(format!(
                    "cannot bind UDP port {} on ackclock's UDP: {e}",
                    app.port()
                )));
            }
            banner(&format!(
                "{} on {} (kernel side {})",
                dev.our_addr, host.device.name, dev.kernel_addr
            ));
            let _ = std::io::stdout().flush();
            let end = host.run(&mut app)?;
            host.finish()?;
            Ok(Ran {
                facts: RunFacts {
                    socket: place.name(),
                    local: app.local(),
                    now: host.clock.now(),
                    udp: host.udp_report(),
                },
                counters: host.counters_text(),
                app,
                end,
            })
        }
        Place::Kernel(addr) => {
            let mut host = KernelHost::new(*addr.ip())?;
            let local = match app.bind_now(&mut host.udp) {
                Ok(l) => l,
                Err(_) => {
                    return Err(Error::Config(
                        host.udp
                            .bind_error
                            .clone()
                            .unwrap_or_else(|| format!("cannot bind a UDP socket to {addr}")),
                    ))
                }
            };
            banner(&format!("{local} on Linux's UDP (a kernel socket)"));
            let _ = std::io::stdout().flush();
            let end = host.run(&mut app)?;
            Ok(Ran {
                facts: RunFacts {
                    socket: place.name(),
                    local: Some(local),
                    now: host.now(),
                    udp: host.udp.report(),
                },
                counters: host.counters_text(),
                app,
                end,
            })
        }
    }
}
