//! Profile F: the FreeBSD defaults the suite's scripts assume, as an ackclock
//! configuration, and the `sysctl -w` lines that may select it.

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

/// What a `sysctl -w NAME=VALUE` line means under profile F.
pub enum Sysctl {
    /// The value is profile F's (or has no effect on anything the engine does).
    Matches,
    /// Not profile F's value: the script wants a stack this profile is not.
    Differs {
        /// The value profile F has.
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
