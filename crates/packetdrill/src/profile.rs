//! The profiles a script runs under: the stack the script was written for, as an ackclock
//! configuration, and the sysctl lines that may select it.
//!
//! - **Profile F** ([`Profile::FreeBsd`], the default): the FreeBSD defaults the FreeBSD
//!   TCP test suite assumes ([`tcp_config`], [`sysctl`]).
//! - **Profile L** ([`Profile::Linux`]): the defaults google/packetdrill's Linux runner
//!   sets before each script (its `gtests/net/common/defaults.sh`), on top of
//!   [`TcpConfig::linux`]: IW10, window scale 8, Linux's option order, SACK, D-SACK and
//!   timestamps offered, CUBIC, RACK-TLP (RFC 8985), PRR (RFC 9937), undo (RFC 3708, RFC
//!   3522/4015) and F-RTO (RFC 5682), RTO 200 ms to 120 s, delayed ACK 40 ms, no slow
//!   start after idle ([`linux_tcp_config`], [`linux_sysctl`]).

use ackclock_tcp::{AckPolicy, InitialWindow, OptionLayout, RecoveryAlgorithm, TcpConfig};
use ackclock_wire::Duration;

/// The receive buffer a script asks for (`net.inet.tcp.recvspace`).
pub const RECVSPACE: usize = 65536;

/// FreeBSD rounds the receive buffer up to a multiple of the MSS once the MSS is known
/// (65536 -> 65700 with MSS 1460): RCV.WND and the windows after unread data follow it.
pub const RECVSPACE_ROUNDED: usize = 65700;

/// The connection configuration of profile F.
pub fn tcp_config() -> TcpConfig {
    TcpConfig {
        mss: 1460,
        recv_buffer_bytes: RECVSPACE_ROUNDED,
        send_buffer_bytes: 32768,
        sack: true,
        timestamps: true,
        window_scale: true,
        // kern.ipc.maxsockbuf=2097152: FreeBSD offers the smallest shift that lets the
        // largest socket buffer be advertised (65535 << 6 >= 2 MiB), whatever this
        // socket's buffer is.
        window_scale_shift: Some(6),
        option_layout: OptionLayout::FreeBsd,
        dsack: true,
        ack: AckPolicy {
            segments_per_ack: 2,
            // net.inet.tcp.delacktime=40 (FreeBSD's default).
            delayed_ack: Duration::from_millis(40),
            quickack: false,
            delayed_ack_clock: false,
            // FreeBSD ACKs every second segment whatever its size.
            count_small_segments: true,
        },
        // net.inet.tcp.initcwnd_segments=10 (FreeBSD's default; RFC 6928). The FreeBSD
        // suite never has the engine send data; ackclock's own scripts do.
        initial_window: InitialWindow::Rfc6928,
        // net.inet.tcp.rfc3042=1: limited transmit.
        limited_transmit: true,
        // SACK loss recovery (RFC 6675) when the peer offers SACK, NewReno (RFC 6582)
        // when it does not, as FreeBSD.
        recovery: RecoveryAlgorithm::Sack,
        ..TcpConfig::newreno()
    }
}

/// The stack a script is run as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// Profile F: the FreeBSD defaults of the FreeBSD TCP test suite.
    #[default]
    FreeBsd,
    /// Profile L: the defaults of google/packetdrill's Linux runner.
    Linux,
}

impl Profile {
    /// The names [`FromStr`](core::str::FromStr) accepts, as `--profile` spells them.
    pub const NAMES: &'static [&'static str] = &["freebsd", "linux"];

    /// `F` or `L`, as the documentation names the profiles.
    pub fn letter(self) -> char {
        match self {
            Profile::FreeBsd => 'F',
            Profile::Linux => 'L',
        }
    }

    /// The profile's name, one of [`NAMES`](Self::NAMES).
    pub fn name(self) -> &'static str {
        match self {
            Profile::FreeBsd => "freebsd",
            Profile::Linux => "linux",
        }
    }

    /// The connection configuration of the profile.
    pub fn tcp_config(self) -> TcpConfig {
        match self {
            Profile::FreeBsd => tcp_config(),
            Profile::Linux => linux_tcp_config(),
        }
    }

    /// What a sysctl setting means under the profile (`net.inet.*` names under F,
    /// `net.ipv4.*` names under L).
    pub fn sysctl(self, name: &str, value: &str) -> Sysctl {
        match self {
            Profile::FreeBsd => sysctl(name, value),
            Profile::Linux => linux_sysctl(name, value),
        }
    }

    /// What `getsockopt(SO_RCVBUF)` reports: the receive buffer the profile's stack
    /// gives a new socket, before and after the peer's SYN is processed.
    pub fn rcvbuf(self, peer_syn_seen: bool) -> usize {
        match (self, peer_syn_seen) {
            (Profile::FreeBsd, false) => RECVSPACE,
            (Profile::FreeBsd, true) => RECVSPACE_ROUNDED,
            (Profile::Linux, _) => LINUX_RMEM_DEFAULT,
        }
    }
}

impl core::fmt::Display for Profile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for Profile {
    type Err = String;

    /// `freebsd` (or `F`) and `linux` (or `L`), case-insensitive; the error lists them.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "freebsd" | "f" => Ok(Profile::FreeBsd),
            "linux" | "l" => Ok(Profile::Linux),
            _ => Err(format!(
                "unknown profile {s:?}: expected freebsd (profile F) or linux (profile L)"
            )),
        }
    }
}

/// `net.ipv4.tcp_rmem`'s default (second) value in google/packetdrill's `defaults.sh`:
/// the receive buffer of a new socket under profile L.
pub const LINUX_RMEM_DEFAULT: usize = 540_000;

/// The receive window Linux opens a connection with (65535, before autotuning grows it):
/// profile L's receive buffer.
pub const LINUX_INITIAL_RCV_WND: usize = 65535;

/// `net.ipv4.tcp_wmem`'s default (second) value in `defaults.sh`, 256 KiB: the send
/// buffer of a new socket under profile L.
pub const LINUX_WMEM_DEFAULT: usize = 256 * 1024;

/// The connection configuration of profile L: [`TcpConfig::linux`] with the values
/// google/packetdrill's `defaults.sh` sets where they differ from Linux's own defaults.
pub fn linux_tcp_config() -> TcpConfig {
    TcpConfig {
        // The MSS of a 1500-byte MTU (the tun device's); the peer's SYN lowers it.
        mss: 1460,
        // tcp_rmem = "4096 540000 15728640", tcp_wmem = "4096 262144 4194304": the
        // buffers a socket starts with (autotuning, which grows them, is not modelled).
        // The engine advertises its whole receive buffer; Linux's first window is 64 KiB
        // (tcp_select_initial_window caps it at U16_MAX), grown later by autotuning: the
        // buffer here is that window, so no window update follows the handshake.
        recv_buffer_bytes: LINUX_INITIAL_RCV_WND,
        send_buffer_bytes: LINUX_WMEM_DEFAULT,
        // Linux offers the smallest shift that lets max(tcp_rmem[2], rmem_max) be
        // advertised: 15 MiB >> 8 <= 65535, so 8 (tcp_select_initial_window).
        window_scale_shift: Some(8),
        // tcp_slow_start_after_idle = 0 (defaults.sh turns Linux's default off).
        idle_restart: false,
        // tcp_syn_retries = 5.
        max_syn_retransmits: 5,
        // tcp_ecn = 0.
        ecn: false,
        ..TcpConfig::linux()
    }
}

/// The sysctls google/packetdrill's `defaults.sh` sets, with profile L's value. A script
/// that sets one of them to another value wants a stack profile L is not.
const LINUX_SYSCTLS: &[(&str, &str)] = &[
    ("net.ipv4.tcp_rmem", "4096 540000 15728640"),
    ("net.ipv4.tcp_wmem", "4096 262144 4194304"),
    ("net.ipv4.tcp_timestamps", "1"),
    ("net.ipv4.tcp_syn_retries", "5"),
    // Only SYN,ACKs a listener resends; the engine's SYN retry limit covers both.
    ("net.ipv4.tcp_synack_retries", "5"),
    // RFC 5682 F-RTO (Linux's 2 is the SACK-enhanced variant, §3; the engine's is §2.1).
    ("net.ipv4.tcp_frto", "2"),
    ("net.ipv4.tcp_sack", "1"),
    ("net.ipv4.tcp_dsack", "1"),
    // FACK is gone from Linux; off, as the engine.
    ("net.ipv4.tcp_fack", "0"),
    ("net.ipv4.tcp_reordering", "3"),
    ("net.ipv4.tcp_congestion_control", "cubic"),
    ("net.ipv4.tcp_slow_start_after_idle", "0"),
    // RFC 8985 TLP and RACK.
    ("net.ipv4.tcp_early_retrans", "4"),
    ("net.ipv4.tcp_recovery", "1"),
    ("net.ipv4.tcp_window_scaling", "1"),
    ("net.ipv4.tcp_ecn", "0"),
    // TSO, pacing, not-sent low-water mark, Fast Open, SYN cookies: nothing the engine
    // models changes with them at these values.
    ("net.ipv4.tcp_ecn_option", "2"),
    ("net.ipv4.tcp_tso_win_divisor", "3"),
    ("net.ipv4.tcp_pacing_ss_ratio", "200"),
    ("net.ipv4.tcp_pacing_ca_ratio", "120"),
    ("net.ipv4.tcp_notsent_lowat", "4294967295"),
    ("net.ipv4.tcp_syncookies", "1"),
];

/// Looks a sysctl setting up in profile L (quotes around the value are ignored, and runs
/// of blanks count as one, as `sysctl` reads `"4096 540000 15728640"`).
pub fn linux_sysctl(name: &str, value: &str) -> Sysctl {
    let norm = |v: &str| {
        v.trim_matches(|c| c == '"' || c == '\'')
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    match LINUX_SYSCTLS.iter().find(|(n, _)| *n == name) {
        Some((_, v)) if norm(v) == norm(value) => Sysctl::Matches,
        Some((_, v)) => Sysctl::Differs { profile: v },
        None => Sysctl::Unknown,
    }
}

/// What a sysctl line means under a profile.
pub enum Sysctl {
    /// The value is the profile's (or has no effect on anything the engine does).
    Matches,
    /// Not the profile's value: the script wants a stack this profile is not.
    Differs {
        /// The value the profile has.
        profile: &'static str,
    },
    /// A name the profile does not know.
    Unknown,
}

/// The sysctls the suite sets, with profile F's value and why it holds.
const SYSCTLS: &[(&str, &str)] = &[
    // Receive buffer 65536, rounded to 65700 once the MSS is known.
    ("net.inet.tcp.recvspace", "65536"),
    ("net.inet.tcp.sendspace", "32768"),
    ("net.inet.tcp.sack.enable", "1"),
    // Nothing is cached between scripts: each gets a fresh endpoint.
    ("net.inet.tcp.hostcache.purgenow", "1"),
    // Window scaling and timestamps offered.
    ("net.inet.tcp.rfc1323", "1"),
    // Segments to closed ports draw a RST.
    ("net.inet.tcp.blackhole", "0"),
    // ECN server mode: FreeBSD never asks for ECN in its SYN, only answers a peer's
    // ECN-setup SYN. Profile F leaves ECN off (`TcpConfig::ecn`), which differs only for
    // such a SYN, and no script sends one.
    ("net.inet.tcp.ecn.enable", "2"),
    // The shift offered in a SYN is 6.
    ("kern.ipc.maxsockbuf", "2097152"),
    // RFC 5961 §3 and §4: ackclock's only behaviour.
    ("net.inet.tcp.insecure_rst", "0"),
    ("net.inet.tcp.insecure_syn", "0"),
    // Adds 200 ms to data RTOs; no script retransmits data.
    ("net.inet.tcp.rexmit_slop", "200"),
    // SYN options kept on retransmission: ackclock's behaviour.
    ("net.inet.tcp.rexmit_drop_options", "0"),
    // Initial RTO 1 s (RFC 6298).
    ("net.inet.tcp.rexmit_initial", "1000"),
    ("net.inet.tcp.delacktime", "40"),
    // A SYN+FIN is processed as a SYN: ackclock's behaviour.
    ("net.inet.tcp.drop_synfin", "0"),
    ("net.inet.tcp.initcwnd_segments", "10"),
    ("net.inet.tcp.rfc3042", "1"),
];

/// Looks a sysctl setting up in profile F.
pub fn sysctl(name: &str, value: &str) -> Sysctl {
    match SYSCTLS.iter().find(|(n, _)| *n == name) {
        Some((_, v)) if *v == value => Sysctl::Matches,
        Some((_, v)) => Sysctl::Differs { profile: v },
        None => Sysctl::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_by_name() {
        assert_eq!("linux".parse::<Profile>(), Ok(Profile::Linux));
        assert_eq!("L".parse::<Profile>(), Ok(Profile::Linux));
        assert_eq!("FreeBSD".parse::<Profile>(), Ok(Profile::FreeBsd));
        let e = "bsd".parse::<Profile>().unwrap_err();
        assert!(
            e.contains("freebsd (profile F) or linux (profile L)"),
            "{e}"
        );
        assert_eq!(Profile::default(), Profile::FreeBsd);
        for n in Profile::NAMES {
            assert_eq!(n.parse::<Profile>().unwrap().name(), *n);
        }
    }

    #[test]
    fn profile_l_is_the_linux_preset_with_defaults_sh() {
        let c = linux_tcp_config();
        assert_eq!(c.initial_window, InitialWindow::Rfc6928);
        assert_eq!(c.option_layout, OptionLayout::Linux);
        assert_eq!(c.window_scale_shift, Some(8));
        assert!(c.sack && c.dsack && c.timestamps && c.undo && c.frto);
        assert!(!c.idle_restart);
        assert_eq!(c.rtt.min_rto, Duration::from_millis(200));
        // defaults.sh's values match; others are refused with profile L's value.
        assert!(matches!(
            linux_sysctl("net.ipv4.tcp_rmem", "\"4096 540000 15728640\""),
            Sysctl::Matches
        ));
        assert!(matches!(
            linux_sysctl("net.ipv4.tcp_frto", "0"),
            Sysctl::Differs { profile: "2" }
        ));
        assert!(matches!(
            Profile::Linux.sysctl("net.inet.tcp.sack.enable", "1"),
            Sysctl::Unknown
        ));
    }
}
