//! `ackclock-wire`: the ground every ackclock crate stands on.
//!
//! - [`ipv4`]: a zero-copy, validating view of IPv4 packets and a header builder.
//! - [`tcp`]: a zero-copy view of TCP segments, their options, and a builder.
//! - [`checksum`]: RFC 1071 sums, the pseudo-header, RFC 1624 incremental update, and
//!   checksum-and-copy.
//! - [`udp`]: UDP datagrams (RFC 768) over IPv4, parsed and built whole.
//! - [`pcap`]: classic libpcap files with nanosecond timestamps and raw-IP link type.
//! - [`time`]: the nanosecond `Instant`/`Duration` every crate passes around (no crate but
//!   the drivers reads a clock).
//!
//! Parsing never panics on any input: every malformation is a [`WireError`] value.

pub mod checksum;
mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod ipv4;
pub mod packet;
pub mod pcap;
pub mod tcp;
pub mod time;
pub mod udp;

pub use error::WireError;
pub use ipv4::{flow_hash, Ipv4Header, Ipv4HeaderMut, Ipv4Packet};
pub use packet::{parse_ipv4_tcp, write_ipv4_tcp, ParsedPacket};
pub use tcp::{
    OptionLayout, SackBlock, SackBlocks, TcpFlags, TcpHeader, TcpOption, TcpOptions, TcpSegment,
};
pub use time::{Duration, Instant};
pub use udp::{parse_ipv4_udp, write_ipv4_udp, UdpPacket, IPPROTO_UDP};

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
