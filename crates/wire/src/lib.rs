//! `ackclock-wire`: the ground every ackclock crate stands on. It turns bytes into
//! validated views of IPv4/TCP and IPv4/UDP packets, and headers back into bytes, with the
//! checksums done once and fast; the engine, the simulator and the live TUN driver all
//! exchange real packets built and parsed here.
//!
//! - [`packet`]: whole IPv4+TCP packets: [`write_ipv4_tcp`] builds one (copying the data
//!   with checksum-and-copy), [`parse_ipv4_tcp`] validates one, both checksums included.
//! - [`ipv4`]: a zero-copy, validating view of IPv4 packets and a header builder.
//! - [`tcp`]: a zero-copy view of TCP segments, their options, and a builder.
//! - [`checksum`]: RFC 1071 sums, the pseudo-header, RFC 1624 incremental update, and
//!   checksum-and-copy.
//! - [`udp`]: UDP datagrams (RFC 768) over IPv4, parsed and built whole.
//! - [`pcap`]: classic libpcap files with nanosecond timestamps and raw-IP link type.
//! - [`listing`]: a tcpdump-like listing of a capture (`ackclock decode`).
//! - [`time`]: the nanosecond `Instant`/`Duration` every crate passes around (no crate but
//!   the drivers reads a clock).
//!
//! Parsing never panics on any input: every malformation is a [`WireError`] value.
//!
//! Building a data segment and parsing it back:
//!
//! ```
//! use ackclock_wire::{parse_ipv4_tcp, write_ipv4_tcp, Ipv4Header, WireError, IPPROTO_TCP};
//! use ackclock_wire::{TcpFlags, TcpHeader, TcpOptions};
//! use ackclock_wire::tcp::Timestamps;
//! use core::net::Ipv4Addr;
//!
//! let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
//! let ip = Ipv4Header::new(a, b, IPPROTO_TCP); // DF set, TTL 64
//! let tcp = TcpHeader {
//!     src_port: 40000,
//!     dst_port: 80,
//!     seq: 1001,
//!     ack: 5001,
//!     flags: TcpFlags::ACK | TcpFlags::PSH,
//!     window: 65535,
//!     urgent: 0,
//!     options: TcpOptions {
//!         timestamps: Some(Timestamps { tsval: 7, tsecr: 3 }),
//!         ..TcpOptions::NONE
//!     },
//! };
//! let mut buf = [0u8; 1500];
//! let n = write_ipv4_tcp(&mut buf, &ip, &tcp, b"hello")?;
//! // IPv4 header, TCP header, options (NOP, NOP, timestamps), data.
//! assert_eq!(n, 20 + 20 + 12 + 5);
//!
//! // The parse checks the IPv4 header, the data offset and the TCP checksum.
//! let p = parse_ipv4_tcp(&buf[..n])?;
//! assert_eq!((p.ip.src(), p.ip.dst(), p.ip.ttl()), (a, b, 64));
//! assert_eq!((p.tcp.src_port(), p.tcp.dst_port()), (40000, 80));
//! assert_eq!((p.tcp.seq(), p.tcp.ack()), (1001, 5001));
//! assert!(p.tcp.flags().contains(TcpFlags::PSH));
//! assert_eq!(p.tcp.options()?.timestamps, Some(Timestamps { tsval: 7, tsecr: 3 }));
//! assert_eq!(p.tcp.payload(), b"hello");
//!
//! // One flipped bit of data and the TCP checksum no longer verifies.
//! buf[n - 1] ^= 0x01;
//! assert_eq!(parse_ipv4_tcp(&buf[..n]), Err(WireError::BadTcpChecksum));
//! # Ok::<(), WireError>(())
//! ```

#![warn(missing_docs)]

pub mod checksum;
mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod ipv4;
pub mod listing;
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

/// IP protocol number of TCP (RFC 9293).
pub const IPPROTO_TCP: u8 = 6;
