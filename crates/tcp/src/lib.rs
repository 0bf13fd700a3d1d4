//! `ackclock-tcp`: a sans-IO TCP engine for IPv4.
//!
//! The crate holds the protocol and nothing else. It reads no clock, does no I/O, starts
//! no thread and never blocks. A driver owns the sockets, the timers and the clock: it
//! passes every IPv4 packet in as a byte slice, passes the current time (an
//! [`ackclock_wire::Instant`], nanoseconds on a clock the driver chooses) into every call,
//! and sends the packets the engine writes into a buffer the driver provides. The same
//! code therefore runs in the discrete-event simulator (simulated time), on a TUN device
//! (the monotonic wall clock) and in the tests (the in-memory path of `ackclock-testkit`).
//!
//! The algorithms are those of the 4BSD TCP of Van Jacobson and Mike Karels, as their
//! messages of 1987 to 1993 describe it, and of the RFCs that grew from it. Comments cite
//! those messages as "seeds" (by number and date) and the RFCs by section; each module
//! names its sources.
//!
//! # Main types
//!
//! - [`Endpoint`]: one host's TCP. It owns the connections of one IPv4 address,
//!   demultiplexes arriving packets by 4-tuple, keeps listeners and their accept queues,
//!   answers SYN floods with SYN cookies and segments for no connection with RSTs, and
//!   keeps every connection's timers in one heap. Its documentation states the calling
//!   protocol a driver follows.
//! - [`Connection`]: one connection, the RFC 9293 state machine. The application reaches
//!   it through [`Endpoint::conn`] and [`Endpoint::conn_mut`] and calls
//!   [`send`](Connection::send), [`recv`](Connection::recv) and
//!   [`close`](Connection::close) on it.
//! - [`ConnId`]: a handle to a connection of an endpoint, returned by
//!   [`Endpoint::connect`] and [`Endpoint::accept`].
//! - [`Event`]: what the application may act on (a connection to accept, data to read,
//!   room to write, the peer's close, a connection closed and why), from
//!   [`Endpoint::poll_event`].
//! - Errors, one type per operation, each variant saying what to do next: [`SendError`],
//!   [`RecvError`], [`CloseError`], [`AddrError`] (listen and connect), [`AcceptError`];
//!   [`ConnectionError`] says why a connection ended abnormally. [`TcpError`] is their sum,
//!   for code that handles every error alike.
//! - [`TcpConfig`]: every setting of one connection. Presets give the TCPs the project
//!   compares: [`TcpConfig::vanilla_4_3bsd`], [`TcpConfig::tahoe`], [`TcpConfig::reno`],
//!   [`TcpConfig::newreno`] (the default), [`TcpConfig::sack`], [`TcpConfig::cubic`] and
//!   [`TcpConfig::modern`]; [`TcpConfig::preset`] finds one by name.
//!   [`EndpointConfig`] holds the settings of an endpoint.
//! - [`Stats`]: a connection's counters and a snapshot of its state
//!   ([`Connection::stats`]). [`TraceEvent`] and [`TraceKind`]: the per-event record a
//!   connection keeps when tracing is on ([`Connection::set_tracing`]).
//!   [`EndpointStats`]: the endpoint's own counters.
//!
//! Three modules are public besides: [`config`] (the [`TcpConfig`] presets and the typed
//! [`config::Overrides`] that scenario files and flags apply), [`cc`] (congestion control:
//! AIMD's parameters, and the [`cc::CongestionControlFactory`] through which a researcher's
//! controller runs in the engine) and [`rtt`] (RTT estimation and the retransmission
//! timeout). The rest of the engine (sequence numbers, CUBIC, DCTCP and the DEC-bit window,
//! loss recovery and the SACK scoreboard, the socket buffers, SYN cookies) is private;
//! what of it a caller names is re-exported here: [`SeqNum`], [`CubicConfig`],
//! [`DctcpConfig`], [`DecBitConfig`]. The tests' in-memory path (two endpoints, delay,
//! loss) is `pair` in `ackclock-testkit`, which is not published.
//!
//! # Example
//!
//! Two endpoints in one process, joined by a path with no delay. A connects to B, sends a
//! few bytes and B reads them; B's delayed ACK goes out when the driver runs B's timer;
//! both close, and the endpoints remove the connections once they are fully closed. The
//! `loopback` example (`cargo run -p ackclock-tcp --example loopback`) does the same with
//! a path delay and 1 MiB of data.
//!
//! ```
//! use ackclock_tcp::{Endpoint, EndpointConfig, TcpConfig};
//! use ackclock_wire::{Duration, Instant};
//! use core::net::{Ipv4Addr, SocketAddrV4};
//!
//! /// Moves packets both ways until neither endpoint has anything to send.
//! fn exchange(now: Instant, x: &mut Endpoint, y: &mut Endpoint, buf: &mut [u8]) {
//!     let mut moved = true;
//!     while moved {
//!         moved = false;
//!         while let Some(t) = x.poll_transmit(now, buf) {
//!             y.handle_packet(now, &buf[..t.len]);
//!             moved = true;
//!         }
//!         while let Some(t) = y.poll_transmit(now, buf) {
//!             x.handle_packet(now, &buf[..t.len]);
//!             moved = true;
//!         }
//!     }
//! }
//! /// Runs the earliest timer of either endpoint; false when no timer is armed.
//! fn run_timer(now: &mut Instant, x: &mut Endpoint, y: &mut Endpoint, buf: &mut [u8]) -> bool {
//!     let Some(t) = [x.poll_timeout(), y.poll_timeout()].into_iter().flatten().min() else {
//!         return false;
//!     };
//!     *now = (*now).max(t);
//!     x.handle_timeout(*now);
//!     y.handle_timeout(*now);
//!     exchange(*now, x, y, buf);
//!     true
//! }
//!
//! let b_addr = Ipv4Addr::new(198, 18, 0, 2);
//! // Fixed ISN keys keep the run repeatable; a live driver draws them from the OS.
//! let mut a = Endpoint::new(EndpointConfig::new(Ipv4Addr::new(198, 18, 0, 1), [1; 16]));
//! let mut b = Endpoint::new(EndpointConfig::new(b_addr, [2; 16]));
//! let cfg = TcpConfig::newreno();
//! // Room for the largest packet: the MSS plus 80 bytes of headers and options.
//! let mut buf = vec![0u8; usize::from(cfg.mss) + 80];
//! let mut now = Instant::ZERO;
//! b.listen(80, cfg.clone(), 16)?;
//! let ca = a.connect(now, SocketAddrV4::new(b_addr, 80), cfg)?;
//! exchange(now, &mut a, &mut b, &mut buf); // SYN, SYN,ACK, ACK
//! let cb = b.accept(80).expect("the handshake is complete");
//! let msg = b"fourteen bytes";
//! assert_eq!(a.conn_mut(ca).unwrap().send(msg)?, msg.len());
//! exchange(now, &mut a, &mut b, &mut buf);
//! let mut got = [0u8; 64];
//! let n = b.conn_mut(cb).unwrap().recv(&mut got)?;
//! assert_eq!(&got[..n], msg);
//! // B delays its ACK (200 ms by default); until the timer runs, A holds the bytes.
//! assert_eq!(a.conn(ca).unwrap().send_queued(), msg.len());
//! run_timer(&mut now, &mut a, &mut b, &mut buf);
//! assert_eq!(now, Instant::ZERO + Duration::from_millis(200));
//! assert_eq!(a.conn(ca).unwrap().send_queued(), 0);
//! // A closes first and waits in TIME-WAIT (60 s); then both connections are removed.
//! a.close(ca)?;
//! exchange(now, &mut a, &mut b, &mut buf);
//! b.close(cb)?;
//! exchange(now, &mut a, &mut b, &mut buf);
//! while run_timer(&mut now, &mut a, &mut b, &mut buf) {}
//! assert_eq!(a.connections().count() + b.connections().count(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![warn(unreachable_pub)]
// A type in the public API that no path names: a module made private without re-exporting
// what callers see of it.
#![warn(unnameable_types)]

// Public: the modules other crates name (`config::Overrides` and the names it uses,
// `cc::SsthreshBase` and the congestion-control traits, `rtt::RttConfig` and
// `rtt::RttEstimator`). The others are private; what callers see of them is re-exported
// below.
mod bbr;
mod bbr3;
pub mod cc;
pub mod config;
mod conn;
mod cubic;
mod ecn_cc;
mod endpoint;
mod error;
mod hystart;
mod prr;
mod rack;
mod rate;
mod recovery;
mod recv_buf;
pub mod rtt;
mod sack;
mod send_buf;
mod seq;
mod stats;
mod syn_cookie;
mod table_alloc;

pub use ackclock_wire::OptionLayout;
pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use bbr3::{Bbr3, Bbr3Config, ProbeBwPhase};
pub use config::{
    AckPolicy, CongestionAlgorithm, HyStart, InitialWindow, LossDetection, Pacing,
    RecoveryAlgorithm, TcpConfig, WindowReduction, MIN_MSS,
};
pub use conn::{Connection, Transmit};
pub use cubic::CubicConfig;
pub use ecn_cc::{DctcpConfig, DecBitConfig};
pub use endpoint::{ConnId, Endpoint, EndpointConfig, EndpointStats, Event};
pub use error::{
    AcceptError, AddrError, CloseError, ConnectionError, RecvError, SendError, TcpError,
};
pub use seq::SeqNum;
pub use stats::{Stats, TraceEvent, TraceKind};

use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{packet::ParsedPacket, TcpFlags, TcpOptions, WireError};
use core::net::SocketAddrV4;

/// RFC 9293 §3.3.2 connection states.
///
/// A [`Connection`] starts in SYN-SENT (active open) or SYN-RECEIVED (passive open) and
/// ends in CLOSED. [`Connection::state`] reports the current one. With tracing on, state
/// changes are recorded as [`TraceKind::StateChange`] events (all but the one an abort
/// makes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum State {
    /// No connection: the state after the close completes, after TIME-WAIT, after a reset,
    /// an abort, or a timeout ([`Connection::error`] then says which). A closed
    /// connection arms no timer and sends nothing but the RST an abort or a timeout
    /// queued.
    #[default]
    Closed,
    /// Waiting for a SYN. Listeners live in the [`Endpoint`], not in a [`Connection`], so no
    /// connection reports this state.
    Listen,
    /// Our SYN is sent (or waiting to be sent); waiting for the peer's SYN and its
    /// acknowledgment of ours.
    SynSent,
    /// The peer's SYN arrived and our SYN,ACK is sent (or waiting to be sent); waiting for
    /// the ACK of our SYN.
    SynReceived,
    /// The handshake is complete; data flows both ways.
    Established,
    /// We closed: our FIN is queued or sent and not yet acknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's FIN. We send nothing but ACKs.
    FinWait2,
    /// The peer's FIN arrived; waiting for the application to close. We may still send.
    CloseWait,
    /// Both sides closed at once: our FIN is not yet acknowledged and the peer's has
    /// arrived.
    Closing,
    /// The peer closed first, then we did; waiting for the ACK of our FIN.
    LastAck,
    /// Both FINs are acknowledged. The connection waits [`TcpConfig::time_wait`] (2 MSL)
    /// so that late segments of this connection die out, then becomes CLOSED. A
    /// retransmitted FIN restarts the wait.
    TimeWait,
}

impl State {
    /// States after the handshake (RFC 9293 calls them synchronized).
    pub fn is_synchronized(self) -> bool {
        !matches!(self, State::Closed | State::Listen | State::SynSent)
    }
    /// The name RFC 9293 uses, e.g. `"SYN-SENT"`; also the `Display` form.
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

/// Whether a segment's TCP checksum has been verified yet.
///
/// [`Endpoint::handle_packet`] passes segments on with `Pending`: the checksum is finished
/// where the data is read anyway, and a segment that fails it is counted and dropped
/// without effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentChecksum {
    /// Verified (or verified by a device).
    Verified,
    /// Not yet: `header_sum` is the one's complement sum of the pseudo-header and the TCP
    /// header; the connection finishes it over the data, on the fast path while copying the
    /// data into the receive buffer (checksum-and-copy).
    Pending {
        /// One's complement sum of the pseudo-header and the TCP header (options included).
        header_sum: u16,
    },
}

/// A parsed TCP segment as the engine consumes it.
///
/// Built by [`Segment::from_packet`] from a packet parsed by `ackclock_wire`; a driver that
/// parses packets itself passes it to [`Endpoint::handle_segment`] or
/// [`Connection::handle_segment`]. The payload is borrowed from the packet.
#[derive(Clone, Copy, Debug)]
pub struct Segment<'a> {
    /// The sender's address and port (the peer's, as seen by the receiving connection).
    pub src: SocketAddrV4,
    /// The receiver's address and port (ours).
    pub dst: SocketAddrV4,
    /// SEG.SEQ: sequence number of the first byte (of the SYN, if set).
    pub seq: SeqNum,
    /// SEG.ACK: the next sequence number the sender expects. Meaningful only with the ACK
    /// flag.
    pub ack: SeqNum,
    /// The control bits.
    pub flags: TcpFlags,
    /// The window field as sent, before window scaling (RFC 7323 §2.3) is applied.
    pub window: u16,
    /// The TCP options (MSS, window scale, SACK-permitted, SACK blocks, timestamps).
    pub options: TcpOptions,
    /// The segment's data.
    pub payload: &'a [u8],
    /// Whether the TCP checksum still has to be verified over `payload`.
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
