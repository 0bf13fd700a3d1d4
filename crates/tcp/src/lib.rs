//! `ackclock-tcp`: the sans-IO TCP engine (see DESIGN.md).
//!
//! Time is passed in; packets go in through `handle_segment` (or an [`Endpoint`]'s
//! `handle_packet`) and come out of `poll_transmit`. Nothing here reads a clock or does I/O.
//!
//! The algorithms are those of the seed messages (Jacobson and Karels' 4BSD TCP) and the
//! RFCs that grew from them; each module cites its source.

pub mod cc;
pub mod config;
mod conn;
pub mod cubic;
pub mod endpoint;
#[doc(hidden)]
pub mod fuzzing;
pub mod harness;
pub mod recovery;
pub mod recv_buf;
pub mod rtt;
pub mod sack;
pub mod send_buf;
pub mod seq;
pub mod stats;
pub mod syn_cookie;

pub use config::{AckPolicy, CongestionAlgorithm, InitialWindow, RecoveryAlgorithm, TcpConfig};
pub use conn::{Connection, Transmit};
pub use endpoint::{ConnId, Endpoint, EndpointConfig, EndpointStats};
pub use seq::SeqNum;
pub use stats::{Stats, TraceEvent, TraceKind};

use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{packet::ParsedPacket, TcpFlags, TcpOptions, WireError};
use core::net::SocketAddrV4;

/// RFC 9293 §3.3.2 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum State {
    #[default]
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl State {
    /// States after the handshake (RFC 9293 calls them synchronized).
    pub fn is_synchronized(self) -> bool {
        !matches!(self, State::Closed | State::Listen | State::SynSent)
    }
    pub fn name(self) -> &'static str {
        match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN-SENT",
            State::SynReceived => "SYN-RECEIVED",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN-WAIT-1",
            State::FinWait2 => "FIN-WAIT-2",
            State::CloseWait => "CLOSE-WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST-ACK",
            State::TimeWait => "TIME-WAIT",
        }
    }
}

impl core::fmt::Display for State {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Errors the application sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TcpError {
    #[error("no data available yet")]
    WouldBlock,
    #[error("connection is not open for sending (closed by us, or not connected)")]
    NotOpenForSending,
    #[error("connection is not connected")]
    NotConnected,
    #[error("connection reset by peer")]
    Reset,
    #[error("connection refused")]
    Refused,
    #[error("connection timed out")]
    TimedOut,
    #[error("connection aborted")]
    Aborted,
    #[error("segment checksum does not verify")]
    BadChecksum,
    #[error("address or port in use")]
    AddrInUse,
    #[error("no free ephemeral port")]
    NoPorts,
    #[error("listen backlog full")]
    BacklogFull,
    #[error("no such connection")]
    NoSuchConnection,
}

/// Whether a segment's TCP checksum has been verified yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentChecksum {
    /// Verified (or verified by a device).
    Verified,
    /// Not yet: `header_sum` is the one's complement sum of the pseudo-header and the TCP
    /// header; the connection finishes it over the data, on the fast path while copying the
    /// data into the receive buffer (checksum-and-copy).
    Pending { header_sum: u16 },
}

/// A parsed TCP segment as the engine consumes it.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a> {
    pub src: SocketAddrV4,
    pub dst: SocketAddrV4,
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: TcpFlags,
    pub window: u16,
    pub options: TcpOptions,
    pub payload: &'a [u8],
    pub checksum: SegmentChecksum,
    /// The IP header's ECN field (RFC 3168).
    pub ecn: u8,
    /// `options` as parsed holds nothing but (possibly) timestamps: no MSS, window scale,
    /// SACK-permitted or SACK. Header prediction's option test, made once by the parser
    /// (which sees the common layouts directly) instead of four tests per segment.
    only_timestamps: bool,
}

impl<'a> Segment<'a> {
    /// From a packet parsed by `ackclock_wire::parse_ipv4_tcp` (`verified = true`) or
    /// `parse_ipv4_tcp_deferred` (`verified = false`). Fails only on malformed options.
    #[inline]
    pub fn from_packet(p: &ParsedPacket<'a>, verified: bool) -> Result<Self, WireError> {
        let t = &p.tcp;
        // Built in place with no options, which the common layouts then fill in directly
        // (building the options apart and moving them in copies them twice).
        let mut seg = Segment {
            src: SocketAddrV4::new(p.ip.src(), t.src_port()),
            dst: SocketAddrV4::new(p.ip.dst(), t.dst_port()),
            seq: SeqNum::new(t.seq()),
            ack: SeqNum::new(t.ack()),
            flags: t.flags(),
            window: t.window(),
            options: TcpOptions::NONE,
            payload: t.payload(),
            checksum: if verified {
                SegmentChecksum::Verified
            } else {
                SegmentChecksum::Pending {
                    header_sum: p.header_sum(),
                }
            },
            ecn: p.ip.ecn(),
            only_timestamps: true,
        };
        // The options area parsed as `TcpOptions::parse` does. The two layouts nearly every
        // segment has, none (data offset 5) and RFC 7323 Appendix A's NOP, NOP, timestamps
        // (what we and most stacks send), are recognised without walking the list.
        match *t.options_bytes() {
            [] => {}
            [1, 1, 8, 10, v0, v1, v2, v3, e0, e1, e2, e3] => {
                seg.options.timestamps = Some(Timestamps {
                    tsval: u32::from_be_bytes([v0, v1, v2, v3]),
                    tsecr: u32::from_be_bytes([e0, e1, e2, e3]),
                });
            }
            ref raw => {
                let o = TcpOptions::parse(raw)?;
                seg.only_timestamps = o.mss.is_none()
                    && o.window_scale.is_none()
                    && !o.sack_permitted
                    && o.sack.is_empty();
                seg.options = o;
            }
        }
        Ok(seg)
    }

    /// Whether the options carry nothing but (possibly) timestamps, as parsed.
    #[inline]
    pub fn only_timestamps(&self) -> bool {
        debug_assert_eq!(
            self.only_timestamps,
            self.options.mss.is_none()
                && self.options.window_scale.is_none()
                && !self.options.sack_permitted
                && self.options.sack.is_empty(),
            "Segment::options changed after parsing"
        );
        self.only_timestamps
    }

    /// Sequence space the segment occupies (data, SYN and FIN).
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32
            + u32::from(self.flags.contains(TcpFlags::SYN))
            + u32::from(self.flags.contains(TcpFlags::FIN))
    }
}
