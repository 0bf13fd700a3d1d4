//! The live commands: `stream`, `discard`, `chargen`, `echo`, `emulate`, `live-demo`, and
//! the datagram ones, `rpc`, `rpc-server` and `dgram-stream` (ackclock on a Linux TUN
//! device, or the datagram applications on a kernel socket; see the `ackclock-tun` crate).

pub mod demo;
pub mod dgram;
pub mod emulate;
pub mod services;
pub mod stream;

/// Prints a live command's human text: to stdout, or to stderr under `--json`, whose
/// stdout then holds the JSON document alone (as `iperf3 -J`), so `| jq .` reads it.
macro_rules! say {
    ($json:expr, $($t:tt)*) => {
        if $json { eprint!($($t)*) } else { print!($($t)*) }
    };
}
pub(crate) use say;

pub use ackclock_tun::netcfg::{check_address, check_connect, check_listen, check_prefix};
use ackclock_wire::Duration;
use anyhow::{bail, Result};

/// The shortest interval of `-i`: each report is a line (a line per stream with
/// `stream -P`), and below this the printing rather than the transfer would be measured.
const MIN_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// `-i SECONDS` (`--interval-secs`) of `stream` and `dgram-stream`: None for no interval
/// reports (0, or not given), else at least [`MIN_INTERVAL`].
pub fn interval_flag(i: Option<std::time::Duration>) -> Result<Option<Duration>> {
    match i {
        Some(i) if i.is_zero() => Ok(None),
        Some(i) if i < MIN_INTERVAL => bail!(
            "--interval-secs {}: at least 10ms (or 0 for no interval reports)",
            ackclock_units::format_time(i)
        ),
        i => Ok(i.map(Duration::from)),
    }
}

/// Live commands need root (TUN devices, namespaces): say so before anything fails
/// obscurely.
pub fn require_root(what: &str) -> Result<()> {
    if !ackclock_tun::is_root() {
        bail!(
            "ackclock {what} creates a TUN device{}: run it as root (sudo) or with CAP_NET_ADMIN",
            if what == "emulate" {
                " and network namespaces"
            } else {
                ""
            }
        );
    }
    Ok(())
}
