//! Interface, address, route and namespace configuration, by running iproute2's `ip`.
//!
//! Why `ip` and not netlink: the handful of operations happen once at start-up, `ip` is on
//! every Linux box that has TUN devices, its error messages are the ones administrators
//! know, and the commands we run are printed in our own errors so they can be repeated by
//! hand. A netlink crate would add an async runtime or a large dependency for a few
//! messages.

use crate::Error;
use std::fmt::Display;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `ip [-n NETNS] ARGS...`; the error carries the command line and `ip`'s stderr.
pub fn ip(netns: Option<&str>, args: &[&str]) -> Result<String, Error> {
    let mut cmd = Command::new("ip");
    if let Some(ns) = netns {
        cmd.args(["-n", ns]);
    }
    cmd.args(args);
    let line = format!(
        "ip {}{}",
        netns.map(|n| format!("-n {n} ")).unwrap_or_default(),
        args.join(" ")
    );
    let out = cmd.output().map_err(|e| Error::Command {
        cmd: line.clone(),
        msg: format!("{e} (is iproute2 installed?)"),
    })?;
    if !out.status.success() {
        return Err(Error::Command {
            cmd: line,
            msg: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether the named network namespace exists: whether `/run/netns/NAME`, where
/// `ip netns add` puts it and what `ip netns list` lists, does.
pub fn netns_exists(name: &str) -> bool {
    std::path::Path::new("/run/netns").join(name).exists()
}

/// A network namespace created by us and deleted when dropped (even on panic), with its
/// loopback up.
#[derive(Debug)]
pub struct NetNs {
    name: String,
    keep: bool,
}

impl NetNs {
    /// Creates `name` (`ip netns add NAME`) and brings its loopback up
    /// (`ip -n NAME link set lo up`); fails if it exists (we never take over someone
    /// else's namespace). Dropping it runs `ip netns del NAME`.
    pub fn create(name: &str) -> Result<NetNs, Error> {
        if netns_exists(name) {
            return Err(Error::Config(format!(
                "network namespace {name:?} already exists; delete it (ip netns del {name}) or choose another name"
            )));
        }
        ip(None, &["netns", "add", name])?;
        let ns = NetNs {
            name: name.to_string(),
            keep: false,
        };
        ip(Some(name), &["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name (`ip netns add NAME`, `ip -n NAME ...`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `sysctl -w KEY=VALUE` inside the namespace.
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), Error> {
        let kv = format!("{key}={value}");
        let out = Command::new("ip")
            .args(["netns", "exec", &self.name, "sysctl", "-q", "-w", &kv])
            .output()
            .map_err(|e| Error::Command {
                cmd: format!("ip netns exec {} sysctl -w {kv}", self.name),
                msg: e.to_string(),
            })?;
        if !out.status.success() {
            return Err(Error::Command {
                cmd: format!("ip netns exec {} sysctl -w {kv}", self.name),
                msg: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        Ok(())
    }

    /// Leaves the namespace in place when dropped; returns its name.
    pub fn keep(mut self) -> String {
        self.keep = true;
        self.name.clone()
    }
}

impl Drop for NetNs {
    fn drop(&mut self) {
        if !self.keep {
            let _ = ip(None, &["netns", "del", &self.name]);
        }
    }
}

/// How a TUN interface is set up: the kernel's address on it, the address of the host
/// behind it (ackclock's, or the far side of the emulator), and extra routes through it.
#[derive(Clone, Debug)]
pub struct IfConfig {
    /// Namespace to move the interface into first (`None`: stay where it was created).
    pub netns: Option<String>,
    /// A new name once moved (the interface keeps its name otherwise).
    pub rename: Option<String>,
    /// The interface's MTU, bytes (`ip link set dev NAME mtu MTU`).
    pub mtu: u32,
    /// The kernel's own address on the interface.
    pub local: Ipv4Addr,
    /// The point-to-point peer: a host route to it goes through the interface.
    pub peer: Ipv4Addr,
    /// More prefixes routed through the interface.
    pub routes: Vec<(Ipv4Addr, u8)>,
    /// The `txqueuelen` to set (packets the kernel may queue on the interface toward
    /// us; `None`: leave the kernel's default).
    pub txqueuelen: Option<u32>,
}

/// Applies `cfg` to the interface `dev`; returns the interface's final name. The
/// commands, each with `-n NETNS` once the interface is in its namespace:
///
/// 1. `ip link set dev DEV netns NETNS`, then `ip link set dev DEV name NEW` (with
///    `netns` and `rename`);
/// 2. `ip link set dev NAME addrgenmode none`: no IPv6 link-local address (allowed to
///    fail);
/// 3. `ip link set dev NAME mtu MTU [txqueuelen N] up`;
/// 4. `ip addr add LOCAL peer PEER dev NAME noprefixroute` (again without
///    `noprefixroute` if that fails);
/// 5. `ip route replace PEER dev NAME src LOCAL` (allowed to fail);
/// 6. `ip route replace PREFIX dev NAME src LOCAL` for each of `routes`.
pub fn configure(dev: &str, cfg: &IfConfig) -> Result<String, Error> {
    let mut name = dev.to_string();
    if let Some(ns) = cfg.netns.as_deref() {
        ip(None, &["link", "set", "dev", dev, "netns", ns])?;
        if let Some(new) = cfg.rename.as_deref() {
            ip(Some(ns), &["link", "set", "dev", dev, "name", new])?;
            name = new.to_string();
        }
    }
    let ns = cfg.netns.as_deref();
    // No IPv6 link-local address: the kernel then sends no router solicitations or
    // neighbour discovery into the device (live mode is IPv4 only).
    let _ = ip(ns, &["link", "set", "dev", &name, "addrgenmode", "none"]);
    let mtu = cfg.mtu.to_string();
    let mut args = vec!["link", "set", "dev", &name, "mtu", &mtu];
    let q;
    if let Some(t) = cfg.txqueuelen {
        q = t.to_string();
        args.extend(["txqueuelen", &q]);
    }
    args.push("up");
    ip(ns, &args)?;
    let local = cfg.local.to_string();
    let peer = cfg.peer.to_string();
    ip(
        ns,
        &[
            "addr",
            "add",
            &local,
            "peer",
            &peer,
            "dev",
            &name,
            "noprefixroute",
        ],
    )
    .or_else(|_| ip(ns, &["addr", "add", &local, "peer", &peer, "dev", &name]))?;
    // The host route to the peer (noprefixroute suppressed the automatic one so that a
    // route that already exists is not an error).
    let _ = ip(
        ns,
        &["route", "replace", &peer, "dev", &name, "src", &local],
    );
    for (net, len) in &cfg.routes {
        let p = format!("{net}/{len}");
        ip(ns, &["route", "replace", &p, "dev", &name, "src", &local])?;
    }
    Ok(name)
}

/// Waits until the interface reports carrier and up (a freshly attached TUN drops what
/// the kernel routes into it for a moment), then a little longer (20 ms): the `ip` view
/// turns up slightly before the device's queue is attached. Polls
/// `ip [-n NETNS] -o link show dev DEV` every 10 ms; an error after `timeout`.
pub fn wait_up(netns: Option<&str>, dev: &str, timeout: Duration) -> Result<(), Error> {
    let start = Instant::now();
    loop {
        let out = ip(netns, &["-o", "link", "show", "dev", dev])?;
        let up = out.contains("state UP") || (out.contains(",UP,") && out.contains("LOWER_UP"));
        if up {
            std::thread::sleep(Duration::from_millis(20));
            return Ok(());
        }
        if start.elapsed() > timeout {
            return Err(Error::Config(format!(
                "interface {dev} did not come up within {timeout:?}: {}",
                out.trim()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Parses `A.B.C.D/N`.
pub fn parse_prefix(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let (a, n) = s
        .split_once('/')
        .ok_or_else(|| format!("{s:?}: expected ADDRESS/PREFIXLEN, e.g. 198.18.0.0/15"))?;
    let a: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("{s:?}: {a:?} is not an IPv4 address"))?;
    let n: u8 = n
        .parse()
        .ok()
        .filter(|n| *n <= 32)
        .ok_or_else(|| format!("{s:?}: prefix length must be 0 to 32"))?;
    Ok((a, n))
}

/// The range live mode keeps to unless told otherwise: 198.18.0.0/15, set aside for
/// benchmarking network devices (RFC 2544, RFC 6890), so that nothing ackclock sends or
/// routes through a TUN device is meant for a real network.
pub const LIVE_RANGE: (Ipv4Addr, u8) = (Ipv4Addr::new(198, 18, 0, 0), 15);

/// Whether `a` is in [`LIVE_RANGE`].
pub fn in_live_range(a: Ipv4Addr) -> bool {
    u32::from(a) >> (32 - LIVE_RANGE.1) == u32::from(LIVE_RANGE.0) >> (32 - LIVE_RANGE.1)
}

/// `flag value` names an address outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_address(
    flag: &str,
    value: &dyn Display,
    a: Ipv4Addr,
    allow_any: bool,
) -> Result<(), Error> {
    if allow_any || in_live_range(a) {
        return Ok(());
    }
    Err(Error::Config(format!(
        "{flag} {value}: {a} is outside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
    )))
}

/// `--listen ADDR:PORT` outside [`LIVE_RANGE`]: an error unless `allow_any` (0.0.0.0
/// stands for the default address, or for all of a kernel socket's, and passes).
pub fn check_listen(l: &SocketAddrV4, allow_any: bool) -> Result<(), Error> {
    if l.ip().is_unspecified() {
        return Ok(());
    }
    check_address("--listen", l, *l.ip(), allow_any)
}

/// `--connect ADDR:PORT` outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_connect(c: &SocketAddrV4, allow_any: bool) -> Result<(), Error> {
    check_address("--connect", c, *c.ip(), allow_any)
}

/// `flag prefix` reaches outside [`LIVE_RANGE`]: an error unless `allow_any`.
pub fn check_prefix(flag: &str, (a, len): (Ipv4Addr, u8), allow_any: bool) -> Result<(), Error> {
    if allow_any || (len >= LIVE_RANGE.1 && in_live_range(a)) {
        return Ok(());
    }
    Err(Error::Config(format!(
        "{flag} {a}/{len}: the prefix is not inside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(
            parse_prefix("198.18.0.0/15").unwrap(),
            (Ipv4Addr::new(198, 18, 0, 0), 15)
        );
        assert!(parse_prefix("198.18.0.0").is_err());
        assert!(parse_prefix("198.18.0.0/33").is_err());
        assert!(parse_prefix("x/3").is_err());
    }

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
