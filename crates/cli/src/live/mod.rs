//! The live commands: `stream`, `discard`, `chargen`, `echo`, `emulate`, `live-demo`, and
//! the datagram ones, `rpc`, `rpc-server` and `dgram-stream` (ackclock on a Linux TUN
//! device, or the datagram applications on a kernel socket; see the `ackclock-tun` crate).

pub mod args;
pub mod demo;
pub mod dgram;
pub mod emulate;
pub mod services;
pub mod stream;

use ackclock_wire::Duration;
use anyhow::{bail, Result};
use std::fmt::Display;
use std::net::{Ipv4Addr, SocketAddrV4};

/// The range live mode keeps to unless told otherwise: 198.18.0.0/15, set aside for
/// benchmarking network devices (RFC 2544, RFC 6890), so that nothing ackclock sends or
/// routes through a TUN device is meant for a real network.
pub const LIVE_RANGE: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);

/// Whether `a` is in [`LIVE_RANGE`].
pub fn in_live_range(a: Ipv4Addr) -> bool {
    u32::from(a) >> (32 - LIVE_RANGE.1) == u32::from(LIVE_RANGE.0) >> (32 - LIVE_RANGE.1)
}

/// `flag value` names an address outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_address(flag: &str, value: &dyn Display, a: Ipv4Addr, allow_any: bool) -> Result<()> {
    if allow_any || in_live_range(a) {
        return Ok(());
    }
    bail!(
        "{flag} {value}: {a} is outside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
    );
}

/// `--listen ADDR:PORT` outside [`LIVE_RANGE`]: an error unless `allow_any` (0.0.0.0
/// stands for the default address, or for all of a kernel socket's, and passes).
pub fn check_listen(l: &SocketAddrV4, allow_any: bool) -> Result<()> {
    if l.ip().is_unspecified() {
        return Ok(());
    }
    check_address("--listen", l, *l.ip(), allow_any)
}

/// `--connect ADDR:PORT` outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_connect(c: &SocketAddrV4, allow_any: bool) -> Result<()> {
    check_address("--connect", c, *c.ip(), allow_any)
}

/// A time from the command line in the stack's nanoseconds (saturating).
pub fn dur(d: std::time::Duration) -> Duration {
    Duration::from_nanos(d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

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
        i => Ok(i.map(dur)),
    }
}

/// `flag prefix` reaches outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_prefix(flag: &str, (a, len): (Ipv4Addr, u8), allow_any: bool) -> Result<()> {
    if allow_any || (len >= LIVE_RANGE.1 && in_live_range(a)) {
        return Ok(());
    }
    bail!(
        "{flag} {a}/{len}: the prefix is not inside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_range_is_198_18_0_0_15() {
        for a in ["198.18.0.0", "198.18.0.1", "198.19.255.255", "198.19.0.7"] {
            assert!(in_live_range(a.parse().unwrap()), "{a}");
        }
        for a in [
            "198.17.255.255",
            "198.20.0.0",
            "10.0.0.1",
            "0.0.0.0",
            "8.8.8.8",
        ] {
            assert!(!in_live_range(a.parse().unwrap()), "{a}");
        }
    }

    #[test]
    fn addresses_outside_the_range_need_allow_any_address() {
        let a: Ipv4Addr = "8.8.8.8".parse().unwrap();
        let e = check_address("--connect", &"8.8.8.8:80", a, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--connect 8.8.8.8:80: 8.8.8.8 is outside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
        );
        assert!(check_address("--connect", &"8.8.8.8:80", a, true).is_ok());
        let inside: Ipv4Addr = "198.19.1.1".parse().unwrap();
        assert!(check_address("--addr", &inside, inside, false).is_ok());
    }

    #[test]
    fn prefixes_must_lie_inside_the_range() {
        let p = |a: &str, l| (a.parse::<Ipv4Addr>().unwrap(), l);
        assert!(check_prefix("--route", p("198.18.0.0", 15), false).is_ok());
        assert!(check_prefix("--route", p("198.19.4.0", 24), false).is_ok());
        assert!(check_prefix("--route", p("198.18.0.0", 32), false).is_ok());
        let e = check_prefix("--route", p("198.16.0.0", 12), false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--route 198.16.0.0/12: the prefix is not inside"),
            "{e}"
        );
        assert!(check_prefix("--route", p("0.0.0.0", 0), false).is_err());
        assert!(check_prefix("--route", p("10.0.0.0", 8), false).is_err());
        assert!(check_prefix("--route", p("10.0.0.0", 8), true).is_ok());
    }
}
