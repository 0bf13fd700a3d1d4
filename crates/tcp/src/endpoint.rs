//! An endpoint: one host's TCP. It owns connections, demultiplexes arriving packets by
//! 4-tuple, keeps listeners with bounded backlogs and accept queues, picks initial sequence
//! numbers per RFC 6528, and answers segments that match nothing with a RST (RFC 9293
//! §3.10.7.1).
//!
//! Half-open state is bounded: a listener holds at most `backlog` connections that are
//! either still in the handshake or waiting in the accept queue (a half-open one holds no
//! buffers). Beyond that it answers SYNs with SYN cookies (RFC 4987 §3.6, `syn_cookie`):
//! the SYN,ACK's sequence number remembers the handshake, nothing is kept, and the
//! connection is made when the ACK returns the cookie. A SYN flood then costs a hash and a
//! reply per SYN, and legitimate clients keep connecting.

use crate::conn::{
    Connection, Transmit, EV_CLOSED, EV_CONNECTED, EV_PEER_CLOSED, EV_READABLE, EV_WRITABLE,
};
use crate::seq::SeqNum;
use crate::syn_cookie;
use crate::table_alloc::TableAlloc;
use crate::{AddrError, CloseError, ConnectionError, Segment, SegmentChecksum, State, TcpConfig};
use ackclock_wire::packet::parse_ipv4_tcp_deferred;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    checksum, packet, Duration, Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions,
};
use ackclock_wire::{WireError, IPPROTO_TCP};
use core::cell::{Cell, RefCell};
use core::cmp::Reverse;
use core::hash::Hasher;
use core::net::{Ipv4Addr, SocketAddrV4};
use hashbrown::HashTable;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

/// Endpoint-wide settings. [`EndpointConfig::new`] gives the defaults; the fields are public
/// so a driver can change any of them before [`Endpoint::new`].
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// This host's IPv4 address: the source of every packet the endpoint writes, and the
    /// only destination [`Endpoint::handle_packet`] accepts (others are counted in
    /// [`EndpointStats::not_for_us`]).
    pub addr: Ipv4Addr,
    /// Secret of the RFC 6528 ISN function. A simulator derives it from its seed (so runs
    /// repeat); a live driver takes it from the OS's random source.
    pub isn_key: [u8; 16],
    /// Local ports for active opens, inclusive (RFC 6335 dynamic range by default).
    pub ephemeral_ports: (u16, u16),
    /// RSTs waiting to be sent are bounded; beyond this they are dropped (counted).
    pub max_pending_rsts: usize,
    /// Answer SYNs beyond a full backlog with SYN cookies (RFC 4987) rather than dropping
    /// them.
    pub syn_cookies: bool,
    /// Cookie SYN,ACKs waiting to be sent are bounded; beyond this the SYN is dropped
    /// (counted): a flood must not turn into unbounded memory or output.
    pub max_pending_synacks: usize,
    /// Keep the endpoint's per-connection tables, once they reach 2 MiB (about 32,000
    /// connections), in 2 MiB blocks advised to Linux as transparent huge pages: at a
    /// million connections a segment's lookup then costs no page walks (BENCHMARKS.md, "Many
    /// connections"). The advice is ignored when the kernel's THP mode is `never`, and
    /// elsewhere than Linux. Off, the tables are still in aligned 2 MiB blocks, in whatever
    /// pages the kernel gives.
    pub huge_pages: bool,
}

impl EndpointConfig {
    /// Settings for `addr` with the ISN secret `isn_key`: ephemeral ports 49152 to 65535,
    /// at most 64 RSTs and 256 cookie SYN,ACKs waiting to be sent, SYN cookies on, large
    /// tables in huge pages.
    pub fn new(addr: Ipv4Addr, isn_key: [u8; 16]) -> Self {
        EndpointConfig {
            addr,
            isn_key,
            ephemeral_ports: (49152, 65535),
            max_pending_rsts: 64,
            syn_cookies: true,
            max_pending_synacks: 256,
            huge_pages: true,
        }
    }
}

/// A handle to a connection of an endpoint. Stale handles (of removed connections) are
/// detected by a generation number and find nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId {
    index: u32,
    generation: u32,
}

impl ConnId {
    /// The connection's slot in the endpoint: unique among live connections, and reused
    /// once a connection is removed (the generation tells the two apart). Small and dense,
    /// so a driver can index a `Vec` of per-connection data with it.
    pub fn index(self) -> usize {
        self.index as usize
    }
}

/// Endpoint-level counters, all counts since [`Endpoint::new`]. Per-connection counters are
/// in each connection's [`Stats`](crate::Stats) ([`Connection::stats`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Packets given to [`Endpoint::handle_packet`], whatever became of them. Segments
    /// given to [`Endpoint::handle_segment`] are not counted.
    pub packets_in: u64,
    /// Packets [`Endpoint::poll_transmit`] wrote: the connections' segments, the
    /// endpoint's RSTs and its cookie SYN,ACKs.
    pub packets_out: u64,
    /// Packets dropped as malformed: the sum of the six reasons below (see
    /// `ackclock_wire::WireError`).
    pub malformed: u64,
    /// Malformed: shorter than a header says, or a bad version, header length, total
    /// length, data offset or options length.
    pub truncated: u64,
    /// Malformed: the IPv4 header checksum does not verify.
    pub bad_ip_checksum: u64,
    /// Malformed: an IPv4 fragment (the endpoint does not reassemble).
    pub fragments: u64,
    /// Malformed: the IPv4 protocol is not TCP.
    pub not_tcp: u64,
    /// Malformed: the TCP checksum of a segment that matched no connection does not
    /// verify (SYNs for a listener and ACKs returning a cookie included); such segments
    /// never draw a RST. Failures in a connection's segments are counted in that
    /// connection's [`Stats::bad_checksum`](crate::Stats::bad_checksum).
    pub bad_tcp_checksum: u64,
    /// Malformed: the TCP options do not parse.
    pub bad_options: u64,
    /// Packets whose destination is not [`EndpointConfig::addr`]; dropped.
    pub not_for_us: u64,
    /// Segments that matched no connection and that no listener took. Each is answered
    /// with a RST (RFC 9293 §3.10.7.1) or counted in `rsts_dropped`. Segments that carry a
    /// RST themselves are dropped without being counted.
    pub no_connection: u64,
    /// RSTs the endpoint sent for segments that matched no connection. A connection's own
    /// RSTs are in its [`Stats::rst_out`](crate::Stats::rst_out).
    pub rsts_sent: u64,
    /// RSTs not sent because [`EndpointConfig::max_pending_rsts`] were already waiting.
    pub rsts_dropped: u64,
    /// SYNs (without ACK) that reached a listener.
    pub syns_received: u64,
    /// SYNs dropped: backlog full with cookies off, or too many cookie SYN,ACKs waiting.
    pub syns_dropped_backlog: u64,
    /// SYNs answered with a SYN cookie (counted when the SYN,ACK is queued).
    pub syn_cookies_sent: u64,
    /// ACKs that could have returned a cookie, to a listener that sent none lately (its
    /// backlog has not overflowed within the last 32 s, two cookie periods): not checked,
    /// reset.
    pub syn_cookies_not_expected: u64,
    /// Handshakes completed from a valid cookie: each made a connection.
    pub syn_cookies_accepted: u64,
    /// Handshakes completed from a valid cookie while the accept queue was full (dropped;
    /// the client's retransmission may find room).
    pub syn_cookies_accept_queue_full: u64,
    /// Active opens ([`Endpoint::connect`], [`Endpoint::connect_from_port`]).
    pub connections_opened: u64,
    /// Connections handed to the application by [`Endpoint::accept`].
    pub connections_accepted: u64,
    /// `Incoming` and `Closed` events dropped because 4096 (`MAX_QUEUED_EVENTS`) were waiting
    /// (an application that never calls [`Endpoint::poll_event`] costs no memory).
    pub events_dropped: u64,
}

/// The most `Incoming` and `Closed` events kept for [`Endpoint::poll_event`]; the other
/// events are flags on their connection and need no room.
pub(crate) const MAX_QUEUED_EVENTS: usize = 4096;

/// What happened that the application may want to act on, from
/// [`Endpoint::poll_event`].
///
/// Events are per connection and coalesced: several arrivals of data before the
/// application polls make one `Readable`. They are hints, never the only source of truth:
/// after `Readable`, [`Connection::recv`] until `WouldBlock`; a connection's state can
/// always be read directly. A connection's events are delivered once the application holds
/// it: from [`Endpoint::connect`], or from [`Endpoint::accept`] for a passive one (events of
/// a passive connection before it is accepted, such as data that arrived with the
/// handshake, come right after the accept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A handshake completed on the listener of `port`: [`Endpoint::accept`] returns the
    /// connection.
    Incoming {
        /// The listening port.
        port: u16,
    },
    /// An active open ([`Endpoint::connect`]) completed its handshake: sending and receiving
    /// data may start (sending could already, the data waited for the handshake).
    Connected(ConnId),
    /// In-order data arrived, or the peer's FIN: [`Connection::recv`] returns something
    /// (`Ok(0)` at the end of the stream).
    Readable(ConnId),
    /// Space came back in the send buffer after a [`Connection::send`] that did not take all
    /// it was given, or that filled the buffer: send the rest.
    Writable(ConnId),
    /// The peer closed its side (its FIN arrived, in order): read what is left, then
    /// [`Endpoint::close`] when done sending.
    PeerClosed(ConnId),
    /// The connection is CLOSED. `error` is `None` when both sides closed normally (after
    /// TIME-WAIT for the side that closed first), else why: [`ConnectionError::Reset`],
    /// [`ConnectionError::Refused`], [`ConnectionError::TimedOut`] or
    /// [`ConnectionError::Aborted`]. A connection
    /// the application still holds stays readable until it calls [`Endpoint::remove`] or
    /// [`Endpoint::close`]; one it released is gone.
    Closed {
        /// The connection (its handle finds nothing once the endpoint removed it).
        conn: ConnId,
        /// Why it closed, if not normally.
        error: Option<ConnectionError>,
    },
}

/// The endpoint's bookkeeping of one connection. One cache line, aligned: the lookup of a
/// segment's 4-tuple, the timer heap and the ready list each read one line of it, never two.
#[repr(align(64))]
struct Slot {
    generation: u32,
    /// The connection's 4-tuple, for the table's lookups (which read the slot next anyway).
    key: ConnKey,
    /// Boxed: the slot array stays small (its growth slack is a line per slot, not a
    /// connection's 1.4 KB), so memory per idle connection is what the connection needs.
    conn: Option<Box<Connection>>,
    /// For passive connections: the listener port, until accepted.
    listener: Option<u16>,
    /// The application let go of it (closed or aborted through the endpoint); removed once
    /// CLOSED with nothing left to send.
    released: bool,
    queued_for_accept: bool,
    /// The time of this connection's entry in the timer heap: never after its real
    /// deadline (a deadline that moved later is found when the entry comes up).
    scheduled: Cell<Option<Instant>>,
    /// In `dirty`: its deadline may have moved earlier since it was scheduled.
    dirty: Cell<bool>,
    /// In `ready`: it may have something to send.
    ready: bool,
    /// In `reap_check`: it may have become removable.
    reap_check: bool,
    /// In `event_conns`: it has events for the application.
    in_events: bool,
    /// Its `Closed` event was delivered (so removal does not report it again).
    closed_reported: bool,
}

impl Slot {
    /// Records the time of this connection's heap entry, here and in the connection.
    #[inline]
    fn set_scheduled(&self, t: Option<Instant>) {
        self.scheduled.set(t);
        if let Some(c) = self.conn.as_ref() {
            c.set_heap_deadline(t);
        }
    }

    fn new(generation: u32, key: ConnKey, conn: Connection, listener: Option<u16>) -> Slot {
        Slot {
            generation,
            key,
            conn: Some(Box::new(conn)),
            listener,
            released: false,
            queued_for_accept: false,
            scheduled: Cell::new(None),
            dirty: Cell::new(false),
            ready: false,
            reap_check: false,
            in_events: false,
            closed_reported: false,
        }
    }
}

/// A timer heap entry: (deadline, slot index, slot generation), earliest first.
type TimerEntry = Reverse<(Instant, u32, u32)>;

struct Listener {
    /// Shared by every connection the listener makes.
    cfg: Arc<TcpConfig>,
    backlog: usize,
    accept_queue: VecDeque<ConnId>,
    /// Connections of this listener still in SYN-RECEIVED.
    half_open: usize,
    /// When this listener last answered a SYN with a cookie (its backlog was full), if
    /// ever. A cookie is taken only within [`syn_cookie::VALID_S`] of it, as Linux's
    /// `tcp_synq_no_recent_overflow`: otherwise every ACK to a quiet listener is a guess at
    /// a 24-bit MAC (blind ACKs forged 5 connections in 10^8, data included).
    last_overflow: Option<Instant>,
}

/// A SYN answered with a cookie: what its SYN,ACK is built from.
#[derive(Clone, Copy, Debug)]
struct PendingSynAck {
    /// The SYN's source (the client) and destination (our listener).
    from: SocketAddrV4,
    to: SocketAddrV4,
    irs: SeqNum,
    iss: SeqNum,
    window: u16,
    mss: Option<u16>,
    window_scale: Option<u8>,
    sack_permitted: bool,
    tsval: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct PendingRst {
    from: SocketAddrV4,
    to: SocketAddrV4,
    seq: SeqNum,
    ack: SeqNum,
    with_ack: bool,
}

/// A connection's 4-tuple packed into 96 bits: the two addresses, then the two ports.
/// Hashing it is one 16-byte write instead of six writes for a pair of `SocketAddrV4`s,
/// comparing it two word compares; 16 bytes, kept in the connection's slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ConnKey {
    addrs: u64,
    ports: u32,
}

impl ConnKey {
    #[inline]
    fn new(local: SocketAddrV4, remote: SocketAddrV4) -> Self {
        ConnKey {
            addrs: u64::from(local.ip().to_bits()) << 32 | u64::from(remote.ip().to_bits()),
            ports: u32::from(local.port()) << 16 | u32::from(remote.port()),
        }
    }

    #[inline]
    fn hash(self, h: &RandomState) -> u64 {
        h.hash_one(u128::from(self.addrs) << 32 | u128::from(self.ports))
    }
}

/// One host's TCP: the connections and listeners of one IPv4 address, and the timers of
/// all of them.
///
/// An endpoint does no I/O and reads no clock. A driver owns it, gives it packets and the
/// time, and sends what it writes. Every call that can change something takes `now`; the
/// driver passes a value that never decreases.
///
/// # Calling protocol
///
/// A driver runs a loop with four kinds of call:
///
/// 1. **Input.** Each IPv4 packet addressed to this host goes to
///    [`handle_packet`](Self::handle_packet). It never panics on any input: malformed
///    packets are counted in [`EndpointStats`] and dropped. (A driver that parses packets
///    itself calls [`handle_segment`](Self::handle_segment) instead.)
/// 2. **Timers.** When the time reaches [`poll_timeout`](Self::poll_timeout), the driver
///    calls [`handle_timeout`](Self::handle_timeout). `poll_timeout` is `None` when no
///    timer is armed: an idle ESTABLISHED connection arms none (there are no
///    keep-alives). Calling `handle_timeout` early is harmless; it runs only the timers
///    that are due at `now`.
/// 3. **Application.** [`poll_event`](Self::poll_event) says what happened since the
///    last call (see [`Event`]); then [`connect`](Self::connect), [`listen`](Self::listen),
///    [`accept`](Self::accept), [`conn_mut`](Self::conn_mut) (to
///    [`send`](Connection::send), [`recv`](Connection::recv) or otherwise change a
///    connection), [`close`](Self::close), [`abort`](Self::abort) and
///    [`remove`](Self::remove).
/// 4. **Output.** After each `handle_packet` (or batch of them), after `handle_timeout`
///    and after the application's calls, the driver calls
///    [`poll_transmit`](Self::poll_transmit) until it returns `None`, and sends each packet
///    it writes. Nothing leaves the engine any other way: until the driver drains, ACKs,
///    data, retransmissions and SYNs wait, and the retransmission timer that sending
///    arms is not armed. Draining is also when the endpoint removes connections that have
///    finished.
///
/// After draining, the driver reads `poll_timeout` again (sending arms timers) and waits
/// for the next packet or that deadline, whichever comes first. Draining after every
/// packet, as a BSD `tcp_input` answers every segment, keeps the ACK clock per segment;
/// draining after a batch works too, but one ACK may then cover more segments than the
/// ACK policy asks for.
///
/// # The transmit buffer
///
/// [`poll_transmit`](Self::poll_transmit) writes one complete IPv4 packet at the front of
/// the buffer it is given and returns its length in [`Transmit::len`]. The largest packet
/// is 20 bytes of IPv4 header, 20 of TCP header, up to 40 of TCP options and a payload of
/// at most [`TcpConfig::mss`] bytes: a buffer of `mss + 80` bytes (the largest `mss` of
/// any configuration in use) always suffices. `mss + 40`, the MTU the MSS is usually
/// derived from, does not: a data segment that carries SACK blocks is larger. When the next
/// packet does not fit, it is not written: that connection sends nothing on this call (a
/// RST is lost), and `poll_transmit` may return `None` although there was something to
/// send.
///
/// # Connections
///
/// [`connect`](Self::connect) and [`accept`](Self::accept) return a [`ConnId`];
/// [`conn`](Self::conn) and [`conn_mut`](Self::conn_mut) look it up. A handle whose
/// connection was removed finds nothing, even after its slot is reused.
///
/// `conn_mut` marks the connection as touched: the next `poll_transmit` looks at it and
/// the next `poll_timeout` reads its deadline again. That is how changes the application
/// makes through the `&mut Connection` (data to send, a window opened by a read, a close)
/// reach the wire, so a driver must drain `poll_transmit` after using it. `conn` marks
/// nothing.
///
/// Connections leave the endpoint in one of three ways:
///
/// - [`close`](Self::close) closes our side and releases the connection: the endpoint
///   removes it once it is CLOSED (after TIME-WAIT if we closed first) and has nothing
///   left to send.
/// - [`abort`](Self::abort) sends a RST (where RFC 9293 §3.10.5 calls for one) and
///   releases it: it is removed on the next drain.
/// - [`remove`](Self::remove) takes it out at once, in any state, and sends nothing.
///
/// A passive connection that closes before it is accepted (reset or timed out in the
/// handshake) is removed by the endpoint too. A connection the application holds and has
/// not released stays when it reaches CLOSED, after a reset, a timeout, or a
/// [`Connection::close`] or [`Connection::abort`] called through `conn_mut`, so that its
/// error and statistics can be read; the application then calls `remove` (which returns
/// the connection), `close` or `abort`. The statistics of connections the endpoint removed on its own are kept for
/// [`take_reaped`](Self::take_reaped).
///
/// # Example
///
/// The crate documentation has a complete driver loop for two endpoints;
/// `examples/loopback.rs` adds a path delay and a bulk transfer.
pub struct Endpoint {
    cfg: EndpointConfig,
    /// Every connection's slot, by `ConnId::index`; from 2 MiB on in huge pages, as the
    /// table below (`table_alloc.rs`).
    slots: allocator_api2::vec::Vec<Slot, TableAlloc>,
    free: Vec<u32>,
    /// The live connections by 4-tuple: slot indices only, each slot keeps its key. At a
    /// million connections this is 10 MB per endpoint (2^21 entries of 4 bytes and their
    /// control bytes) where a map of keys and handles (32-byte entries) was 66 MB:
    /// more of it stays in the caches, and a lookup reads the slot it leads to anyway.
    map: HashTable<u32, TableAlloc>,
    hasher: RandomState,
    /// The connection the last segment was for: 4.3BSD's one-entry `tcp_last_inpcb` cache,
    /// checked before the hash table (a bulk flow hits it on nearly every segment, as the
    /// seed's header prediction assumed). Cleared when that connection is removed.
    last: Option<(ConnKey, ConnId)>,
    /// Connections that may have become removable (closed, or released): `reap` looks at
    /// these, not at every slot.
    reap_check: Vec<u32>,
    /// Every connection's next deadline, in a heap: `poll_timeout` and `handle_timeout` cost
    /// O(log n) in the number of connections, not a scan. Behind a `RefCell` because
    /// `poll_timeout` takes `&self` and brings it up to date.
    timers: RefCell<BinaryHeap<TimerEntry>>,
    /// Connections touched since their deadline was last looked at.
    dirty: RefCell<Vec<u32>>,
    /// Connections that may have something to send, in the order they became so:
    /// `poll_transmit` visits only these, round robin.
    ready: VecDeque<u32>,
    /// Scratch for `handle_timeout`: the connections due now.
    due: Vec<u32>,
    listeners: HashMap<u16, Listener>,
    rsts: VecDeque<PendingRst>,
    synacks: VecDeque<PendingSynAck>,
    next_port: u16,
    stats: EndpointStats,
    /// Statistics of connections removed by the endpoint itself (after TIME-WAIT, or once
    /// released and closed), kept until a driver collects them.
    reaped: Vec<(ConnId, crate::Stats)>,
    /// Connections with events for the application, each once, oldest first.
    event_conns: VecDeque<u32>,
    /// Events not tied to a live slot: `Incoming`, and `Closed` of connections the endpoint
    /// removed before the application polled.
    events: VecDeque<Event>,
}

impl Endpoint {
    /// An endpoint with no connections and no listeners.
    pub fn new(cfg: EndpointConfig) -> Self {
        let next_port = cfg.ephemeral_ports.0;
        let tables = TableAlloc::new(cfg.huge_pages);
        Endpoint {
            cfg,
            slots: allocator_api2::vec::Vec::new_in(tables),
            free: Vec::new(),
            map: HashTable::new_in(tables),
            hasher: RandomState::new(),
            last: None,
            reap_check: Vec::new(),
            timers: RefCell::new(BinaryHeap::new()),
            dirty: RefCell::new(Vec::new()),
            ready: VecDeque::new(),
            due: Vec::new(),
            listeners: HashMap::new(),
            rsts: VecDeque::new(),
            synacks: VecDeque::new(),
            next_port,
            stats: EndpointStats::default(),
            reaped: Vec::new(),
            event_conns: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// This host's address ([`EndpointConfig::addr`]).
    pub fn addr(&self) -> Ipv4Addr {
        self.cfg.addr
    }
    /// The endpoint's counters.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// RFC 6528: ISN = M + F(localip, localport, remoteip, remoteport, secretkey), with M a
    /// 4-microsecond clock and F a keyed hash (SipHash-2-4).
    fn isn(&self, now: Instant, local: SocketAddrV4, remote: SocketAddrV4) -> SeqNum {
        let mut h = siphasher::sip::SipHasher24::new_with_key(&self.cfg.isn_key);
        h.write(&local.ip().octets());
        h.write(&local.port().to_be_bytes());
        h.write(&remote.ip().octets());
        h.write(&remote.port().to_be_bytes());
        let f = h.finish() as u32;
        let m = (now.as_nanos() / 4_000) as u32;
        SeqNum::new(f.wrapping_add(m))
    }

    /// Accepts connections on `port` with `cfg`, holding at most `backlog` connections in
    /// the handshake or the accept queue (at least 1).
    ///
    /// Every connection the listener makes shares the one `cfg`. SYNs beyond the backlog
    /// are answered with SYN cookies ([`EndpointConfig::syn_cookies`]) or dropped.
    ///
    /// # Errors
    /// [`AddrError::AddrInUse`] when `port` already has a listener.
    pub fn listen(&mut self, port: u16, cfg: TcpConfig, backlog: usize) -> Result<(), AddrError> {
        if self.listeners.contains_key(&port) {
            return Err(AddrError::AddrInUse);
        }
        self.listeners.insert(
            port,
            Listener {
                cfg: Arc::new(cfg),
                backlog: backlog.max(1),
                accept_queue: VecDeque::new(),
                half_open: 0,
                last_overflow: None,
            },
        );
        Ok(())
    }

    /// Stops listening; connections already accepted are unaffected. Connections of the
    /// listener still in the handshake or in its accept queue stay in the endpoint but can
    /// no longer be accepted ([`connections`](Self::connections) finds them). Does nothing
    /// when `port` has no listener.
    pub fn unlisten(&mut self, port: u16) {
        self.listeners.remove(&port);
    }

    /// Active open (RFC 9293 §3.10.1) to `remote` from an ephemeral port of
    /// [`EndpointConfig::ephemeral_ports`], taken in turn from where the last search
    /// stopped. The connection starts in SYN-SENT; its SYN goes out on the next
    /// [`poll_transmit`](Self::poll_transmit). The ISN is RFC 6528's: a keyed hash of the
    /// 4-tuple ([`EndpointConfig::isn_key`]) plus a 4-microsecond clock read from `now`.
    ///
    /// # Errors
    /// [`AddrError::NoPorts`] when every ephemeral port is in use toward `remote` or has a
    /// listener.
    pub fn connect(
        &mut self,
        now: Instant,
        remote: SocketAddrV4,
        cfg: TcpConfig,
    ) -> Result<ConnId, AddrError> {
        let (lo, hi) = self.cfg.ephemeral_ports;
        let span = u32::from(hi.saturating_sub(lo)) + 1;
        for _ in 0..span {
            let port = self.next_port;
            self.next_port = if port >= hi { lo } else { port + 1 };
            let local = SocketAddrV4::new(self.cfg.addr, port);
            if self.lookup(ConnKey::new(local, remote)).is_some()
                || self.listeners.contains_key(&port)
            {
                continue;
            }
            return Ok(self.connect_from(now, local, remote, cfg));
        }
        Err(AddrError::NoPorts)
    }

    /// Active open from a chosen local port, otherwise as [`connect`](Self::connect). A
    /// listener on `local_port` does not prevent it.
    ///
    /// # Errors
    /// [`AddrError::AddrInUse`] when a connection already uses this 4-tuple.
    pub fn connect_from_port(
        &mut self,
        now: Instant,
        local_port: u16,
        remote: SocketAddrV4,
        cfg: TcpConfig,
    ) -> Result<ConnId, AddrError> {
        let local = SocketAddrV4::new(self.cfg.addr, local_port);
        if self.lookup(ConnKey::new(local, remote)).is_some() {
            return Err(AddrError::AddrInUse);
        }
        Ok(self.connect_from(now, local, remote, cfg))
    }

    fn connect_from(
        &mut self,
        now: Instant,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        cfg: TcpConfig,
    ) -> ConnId {
        let iss = self.isn(now, local, remote);
        let conn = Connection::connect(now, cfg, local, remote, iss);
        self.stats.connections_opened += 1;
        self.insert(conn, None)
    }

    fn insert(&mut self, conn: Connection, listener: Option<u16>) -> ConnId {
        let key = ConnKey::new(conn.local(), conn.remote());
        let id = if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            *slot = Slot::new(slot.generation.wrapping_add(1), key, conn, listener);
            ConnId {
                index,
                generation: slot.generation,
            }
        } else {
            self.slots.push(Slot::new(0, key, conn, listener));
            ConnId {
                index: (self.slots.len() - 1) as u32,
                generation: 0,
            }
        };
        let slots = &self.slots;
        let hasher = &self.hasher;
        self.map.insert_unique(key.hash(hasher), id.index, |&i| {
            slots[i as usize].key.hash(hasher)
        });
        self.touch(id.index);
        id
    }

    /// The live connection of a 4-tuple.
    #[inline]
    fn lookup(&self, key: ConnKey) -> Option<ConnId> {
        let slots = &self.slots;
        let &index = self
            .map
            .find(key.hash(&self.hasher), |&i| slots[i as usize].key == key)?;
        Some(ConnId {
            index,
            generation: slots[index as usize].generation,
        })
    }

    /// The next connection of the listener on `port` whose handshake has completed, in the
    /// order they completed; `None` when none is waiting or `port` has no listener.
    ///
    /// The connection is ESTABLISHED or later: the peer may already have sent data, its
    /// FIN, or a RST. Once accepted it belongs to the application: the endpoint no longer
    /// removes it on its own when it closes, until the application calls
    /// [`close`](Self::close), [`abort`](Self::abort) or [`remove`](Self::remove).
    pub fn accept(&mut self, port: u16) -> Option<ConnId> {
        let l = self.listeners.get_mut(&port)?;
        let id = l.accept_queue.pop_front()?;
        if let Some(slot) = self.slots.get_mut(id.index()) {
            slot.listener = None;
        }
        self.note_events(id.index);
        self.stats.connections_accepted += 1;
        Some(id)
    }

    /// The connection of `id`, for reading; `None` when the handle is stale. Marks nothing
    /// (see [`conn_mut`](Self::conn_mut)).
    pub fn conn(&self, id: ConnId) -> Option<&Connection> {
        let s = self.slots.get(id.index())?;
        if s.generation != id.generation {
            return None;
        }
        s.conn.as_deref()
    }

    /// The connection of `id`, for the application's calls ([`Connection::send`],
    /// [`Connection::recv`], ...); `None` when the handle is stale.
    ///
    /// Marks the connection as touched, whether or not the caller changes it: the next
    /// [`poll_transmit`](Self::poll_transmit) asks it for output and the next
    /// [`poll_timeout`](Self::poll_timeout) reads its deadline again. The driver drains
    /// `poll_transmit` afterwards, or what the call provoked (data, a window update, a FIN)
    /// is not sent.
    pub fn conn_mut(&mut self, id: ConnId) -> Option<&mut Connection> {
        let s = self.slots.get_mut(id.index())?;
        if s.generation != id.generation {
            return None;
        }
        s.conn.as_ref()?;
        // The caller may write, read (opening the window), close or abort: its deadline and
        // its output may change. (Whether it became removable is seen when `poll_transmit`
        // finds it closed with nothing to send, or when the endpoint releases it.)
        self.touch(id.index);
        self.slots[id.index()].conn.as_deref_mut()
    }

    /// Notes that a connection was handed work: it may have something to send and its
    /// deadline may have moved.
    #[inline]
    fn touch(&mut self, index: u32) {
        let s = &mut self.slots[index as usize];
        if !s.ready {
            s.ready = true;
            self.ready.push_back(index);
        }
        if !s.dirty.get() {
            s.dirty.set(true);
            self.dirty.get_mut().push(index);
        }
    }

    /// After the endpoint itself drove a connection (`&mut self`, no `RefCell` to borrow):
    /// a heap entry only if its deadline moved earlier than the one it has.
    #[inline]
    fn reschedule(&mut self, index: u32) {
        let s = &mut self.slots[index as usize];
        // Most calls arm nothing earlier: nothing to look at.
        if !s.conn.as_mut().is_some_and(|c| c.take_timer_armed()) {
            return;
        }
        self.schedule(index);
    }

    /// Puts a connection's deadline in the heap if it is earlier than its entry.
    fn schedule(&mut self, index: u32) {
        let s = &self.slots[index as usize];
        let Some(d) = s.conn.as_ref().and_then(|c| c.poll_timeout()) else {
            return;
        };
        if s.scheduled.get().is_none_or(|t| d < t) {
            s.set_scheduled(Some(d));
            let g = s.generation;
            self.timers.get_mut().push(Reverse((d, index, g)));
        }
    }

    #[inline]
    fn check_reap(&mut self, index: u32) {
        let s = &mut self.slots[index as usize];
        if !s.reap_check {
            s.reap_check = true;
            self.reap_check.push(index);
        }
    }

    /// Schedules the touched connections whose deadline moved earlier than their entry.
    fn flush_dirty(&self) {
        let mut dirty = self.dirty.borrow_mut();
        if dirty.is_empty() {
            return;
        }
        let mut timers = self.timers.borrow_mut();
        for &i in dirty.iter() {
            let s = &self.slots[i as usize];
            s.dirty.set(false);
            let Some(c) = s.conn.as_ref() else { continue };
            if let Some(d) = c.poll_timeout() {
                if s.scheduled.get().is_none_or(|t| d < t) {
                    s.set_scheduled(Some(d));
                    timers.push(Reverse((d, i, s.generation)));
                }
            }
        }
        dirty.clear();
    }

    /// Queues a connection the application holds that has events, once.
    #[inline]
    fn note_events(&mut self, index: u32) {
        let s = &mut self.slots[index as usize];
        if s.in_events || s.listener.is_some() || !s.conn.as_ref().is_some_and(|c| c.has_events()) {
            return;
        }
        s.in_events = true;
        self.event_conns.push_back(index);
    }

    /// The next event for the application, or `None` when there is none (see [`Event`]).
    ///
    /// Call it after the calls of the driver loop (`handle_packet`, `handle_timeout` and
    /// the drain of `poll_transmit`) until it returns `None`, and act on each event: accept
    /// on `Incoming`, read on `Readable`, send the rest on `Writable`, close on
    /// `PeerClosed`, forget the handle (or `remove` it) on `Closed`. Events of one
    /// connection come in this order: `Connected`, `Writable`, `Readable`, `PeerClosed`,
    /// `Closed`.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        while let Some(&i) = self.event_conns.front() {
            let s = &mut self.slots[i as usize];
            let id = ConnId {
                index: i,
                generation: s.generation,
            };
            let Some(c) = s.conn.as_mut() else {
                s.in_events = false;
                self.event_conns.pop_front();
                continue;
            };
            // One event per call: the lowest pending bit, the rest stays for the next call.
            let bits = c.take_events();
            let bit = bits & bits.wrapping_neg();
            let rest = bits & !bit;
            if rest != 0 {
                c.put_back_events(rest);
            } else {
                s.in_events = false;
                self.event_conns.pop_front();
            }
            let e = match bit {
                EV_CONNECTED => Event::Connected(id),
                EV_WRITABLE => Event::Writable(id),
                EV_READABLE => Event::Readable(id),
                EV_PEER_CLOSED => Event::PeerClosed(id),
                EV_CLOSED => {
                    s.closed_reported = true;
                    Event::Closed {
                        conn: id,
                        error: c.error(),
                    }
                }
                _ => continue,
            };
            return Some(e);
        }
        None
    }

    /// Every connection the endpoint holds, in slot order: those in the handshake, those
    /// waiting to be accepted, and closed ones not yet removed included.
    pub fn connections(&self) -> impl Iterator<Item = (ConnId, &Connection)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.conn.as_deref().map(|c| {
                (
                    ConnId {
                        index: i as u32,
                        generation: s.generation,
                    },
                    c,
                )
            })
        })
    }

    /// Final statistics of connections the endpoint removed on its own since the last call
    /// (released ones once closed, and passive ones that closed before being accepted). At
    /// most 4096 are kept between calls; later ones are dropped.
    pub fn take_reaped(&mut self) -> Vec<(ConnId, crate::Stats)> {
        std::mem::take(&mut self.reaped)
    }

    /// Closes our side ([`Connection::close`]: a FIN follows the queued data) and lets the
    /// endpoint remove the connection once it is fully closed (after TIME-WAIT where that
    /// applies) and has nothing left to send. The application may still read what arrives
    /// until then.
    ///
    /// # Errors
    /// [`CloseError::NoSuchConnection`] for a stale handle. On a connection that is already
    /// CLOSED, the error of [`Connection::close`] ([`CloseError::Lost`] with its cause, or
    /// [`CloseError::NotConnected`]); the connection is released all the same and removed
    /// on the next drain.
    pub fn close(&mut self, id: ConnId) -> Result<(), CloseError> {
        let c = self.conn_mut(id).ok_or(CloseError::NoSuchConnection)?;
        let r = c.close();
        self.slots[id.index()].released = true;
        r
    }

    /// Aborts ([`Connection::abort`]: a RST where RFC 9293 §3.10.5 sends one; queued data is
    /// not sent) and lets the endpoint remove the connection, which it does on the next
    /// drain of [`poll_transmit`](Self::poll_transmit), after the RST. Does nothing for a
    /// stale handle.
    pub fn abort(&mut self, id: ConnId) {
        if let Some(c) = self.conn_mut(id) {
            c.abort();
            self.slots[id.index()].released = true;
        }
    }

    /// Removes a connection now, whatever its state, and returns it (its statistics go with
    /// it); `None` for a stale handle. Nothing is sent: the peer learns of it only when its
    /// next segment draws a RST. The handle, and any copy of it, then finds nothing.
    pub fn remove(&mut self, id: ConnId) -> Option<Connection> {
        let s = self.slots.get_mut(id.index())?;
        if s.generation != id.generation {
            return None;
        }
        let conn = s.conn.take()?;
        // Its heap entry (if any) goes stale: the generation changes on reuse, and an empty
        // slot is skipped.
        s.set_scheduled(None);
        if let Some(port) = s.listener.take() {
            if let Some(l) = self.listeners.get_mut(&port) {
                if conn.state() == State::SynReceived {
                    l.half_open = l.half_open.saturating_sub(1);
                }
                l.accept_queue.retain(|x| *x != id);
            }
        }
        let key = ConnKey::new(conn.local(), conn.remote());
        let index = id.index;
        if let Ok(e) = self.map.find_entry(key.hash(&self.hasher), |&i| i == index) {
            e.remove();
        }
        if self.last.is_some_and(|(k, _)| k == key) {
            self.last = None;
        }
        self.free.push(id.index);
        Some(*conn)
    }

    /// Processes one IPv4 packet addressed to this host: `bytes` is the packet from the IPv4
    /// header on. Never panics: malformed packets are counted by reason and dropped, as are
    /// packets for another address. The IPv4 checksum is verified here; the TCP checksum
    /// where the segment's data is read.
    ///
    /// The segment goes to its connection, to a listener (a SYN, or the ACK that returns
    /// a SYN cookie), or draws a RST. Drain [`poll_transmit`](Self::poll_transmit)
    /// afterwards.
    pub fn handle_packet(&mut self, now: Instant, bytes: &[u8]) {
        self.stats.packets_in += 1;
        let p = match parse_ipv4_tcp_deferred(bytes) {
            Ok(p) => p,
            Err(e) => {
                self.count_malformed(e);
                return;
            }
        };
        if p.ip.dst() != self.cfg.addr {
            self.stats.not_for_us += 1;
            return;
        }
        let seg = match Segment::from_packet(&p, false) {
            Ok(s) => s,
            Err(e) => {
                self.count_malformed(e);
                return;
            }
        };
        self.handle_segment(now, &seg);
    }

    /// A SYN for a listener with room in its backlog (counted in its `half_open`): a
    /// connection in SYN-RECEIVED. Out of line, as `discard`.
    #[inline(never)]
    fn accept_syn(&mut self, now: Instant, seg: &Segment<'_>) {
        let port = seg.dst.port();
        let Some(l) = self.listeners.get(&port) else {
            return;
        };
        let cfg = l.cfg.clone();
        let iss = self.isn(now, seg.dst, seg.src);
        match Connection::accept(now, cfg, seg, iss) {
            Ok(conn) => {
                self.insert(conn, Some(port));
            }
            Err(_) => {
                if let Some(l) = self.listeners.get_mut(&port) {
                    l.half_open -= 1;
                }
            }
        }
    }

    /// Removes a connection and drops it. Out of line: a `Connection` by value (aligned to
    /// 64 bytes, see its layout) in `handle_segment`'s frame would make every call realign
    /// the stack.
    #[inline(never)]
    fn discard(&mut self, id: ConnId) {
        self.remove(id);
    }

    fn count_malformed(&mut self, e: WireError) {
        self.stats.malformed += 1;
        match e {
            WireError::Truncated { .. }
            | WireError::BadVersion(_)
            | WireError::BadHeaderLength(_)
            | WireError::BadTotalLength { .. }
            | WireError::BadDataOffset { .. }
            | WireError::TooLong(_)
            | WireError::OptionsTooLong { .. } => self.stats.truncated += 1,
            WireError::BadIpChecksum => self.stats.bad_ip_checksum += 1,
            WireError::Fragment { .. } => self.stats.fragments += 1,
            // The UDP errors come from a UDP parse, never from the TCP one; a driver that
            // hands a UDP error here has a packet that is not TCP.
            WireError::NotTcp(_)
            | WireError::NotUdp(_)
            | WireError::BadUdpLength { .. }
            | WireError::BadUdpChecksum => self.stats.not_tcp += 1,
            WireError::BadTcpChecksum => self.stats.bad_tcp_checksum += 1,
            WireError::BadOption { .. } => self.stats.bad_options += 1,
        }
    }

    /// Processes a parsed segment (for drivers that parse themselves), as
    /// [`handle_packet`](Self::handle_packet) does after parsing. The segment's destination
    /// address is not checked against [`EndpointConfig::addr`], and
    /// [`EndpointStats::packets_in`] is not counted.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment<'_>) {
        let key = ConnKey::new(seg.dst, seg.src);
        let found = match self.last {
            Some((k, id)) if k == key => Some(id),
            _ => {
                let id = self.lookup(key);
                if let Some(id) = id {
                    self.last = Some((key, id));
                }
                id
            }
        };
        if let Some(id) = found {
            let slot = &mut self.slots[id.index()];
            let Some(conn) = slot.conn.as_mut() else {
                return;
            };
            let before = conn.state();
            conn.handle_segment(now, seg);
            let after = conn.state();
            let s = &mut self.slots[id.index()];
            if !s.ready {
                s.ready = true;
                self.ready.push_back(id.index);
            }
            self.reschedule(id.index);
            self.note_events(id.index);
            if after == State::Closed {
                self.check_reap(id.index);
            }
            let slot = &mut self.slots[id.index()];
            if let Some(port) = slot.listener {
                if before == State::SynReceived && after != State::SynReceived {
                    if let Some(l) = self.listeners.get_mut(&port) {
                        l.half_open = l.half_open.saturating_sub(1);
                        if after == State::Closed {
                            // RFC 9293: a reset in SYN-RECEIVED of a passive open returns
                            // to LISTEN; the half-open connection simply goes away.
                            self.discard(id);
                        } else if !slot.queued_for_accept {
                            slot.queued_for_accept = true;
                            l.accept_queue.push_back(id);
                            if self.events.len() < MAX_QUEUED_EVENTS {
                                self.events.push_back(Event::Incoming { port });
                            } else {
                                self.stats.events_dropped += 1;
                            }
                        }
                    }
                }
            }
            return;
        }
        // No connection: verify before answering, so corrupted packets never draw a RST.
        if let SegmentChecksum::Pending { header_sum } = seg.checksum {
            if checksum::add(header_sum, checksum::sum(seg.payload)) != 0xffff {
                self.stats.malformed += 1;
                self.stats.bad_tcp_checksum += 1;
                return;
            }
        }
        let f = seg.flags;
        if f.contains(TcpFlags::RST) {
            return;
        }
        if !f.intersects(TcpFlags::SYN.union(TcpFlags::ACK))
            && self.listeners.contains_key(&seg.dst.port())
        {
            // RFC 9293 §3.10.7.2, fourth: to a listener, a segment with neither SYN, ACK nor
            // RST is dropped (an ACK draws a RST below).
            return;
        }
        if f.contains(TcpFlags::SYN) && !f.contains(TcpFlags::ACK) {
            if let Some(l) = self.listeners.get_mut(&seg.dst.port()) {
                self.stats.syns_received += 1;
                if l.half_open + l.accept_queue.len() >= l.backlog {
                    if !self.cfg.syn_cookies || self.synacks.len() >= self.cfg.max_pending_synacks {
                        self.stats.syns_dropped_backlog += 1;
                        return;
                    }
                    l.last_overflow = Some(now);
                    self.queue_cookie_synack(now, seg);
                    return;
                }
                l.half_open += 1;
                self.accept_syn(now, seg);
                return;
            }
        }
        // The third segment of a handshake answered with a SYN cookie.
        if self.cfg.syn_cookies
            && f.contains(TcpFlags::ACK)
            && !f.intersects(TcpFlags::SYN.union(TcpFlags::FIN))
            && self.listeners.contains_key(&seg.dst.port())
            && self.accept_cookie(now, seg)
        {
            return;
        }
        // RFC 9293 §3.10.7.1: reset anything that matches no connection.
        self.stats.no_connection += 1;
        let (seq, ack, with_ack) = if f.contains(TcpFlags::ACK) {
            (seg.ack, SeqNum::new(0), false)
        } else {
            (SeqNum::new(0), seg.seq + seg.seq_len(), true)
        };
        if self.rsts.len() >= self.cfg.max_pending_rsts {
            self.stats.rsts_dropped += 1;
            return;
        }
        self.rsts.push_back(PendingRst {
            from: seg.dst,
            to: seg.src,
            seq,
            ack,
            with_ack,
        });
    }

    /// Writes the next packet to send at the front of `buf` and describes it, or returns
    /// `None` when there is nothing to send now. Pending RSTs go first, then cookie
    /// SYN,ACKs, then the connections that may have output, round robin (so one busy
    /// connection cannot starve the others).
    ///
    /// Call it until it returns `None` after every other call (see the calling protocol
    /// in the [`Endpoint`] documentation); connections that have finished are removed when
    /// it returns `None`. `buf` must hold the largest packet: see "The transmit buffer"
    /// there. The packet is `&buf[..t.len]`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if !self.rsts.is_empty() {
            if let Some(t) = self.send_rst(buf) {
                return Some(t);
            }
        }
        while !self.synacks.is_empty() {
            if let Some(t) = self.send_cookie_synack(now, buf) {
                return Some(t);
            }
        }
        // The ready connections, round robin: a connection that sent goes to the back (when
        // there are others), one that had nothing leaves the list until it is handed work
        // again.
        while let Some(&i) = self.ready.front() {
            let s = &mut self.slots[i as usize];
            let Some(c) = s.conn.as_mut() else {
                s.ready = false;
                self.ready.pop_front();
                continue;
            };
            let t = c.poll_transmit(now, buf);
            let closed = t.is_none() && c.is_closed();
            // Sending arms timers; finding nothing to send may too (persist).
            self.reschedule(i);
            // What the application's own calls did (a close, an abort) shows here.
            self.note_events(i);
            if let Some(t) = t {
                if self.ready.len() > 1 {
                    self.ready.pop_front();
                    self.ready.push_back(i);
                }
                self.stats.packets_out += 1;
                return Some(t);
            }
            self.slots[i as usize].ready = false;
            self.ready.pop_front();
            if closed {
                self.check_reap(i);
            }
        }
        if !self.reap_check.is_empty() {
            self.reap();
        }
        None
    }

    /// The first pending RST, written into `buf` (out of line: its header building needs a
    /// large stack frame that the common path should not pay for).
    #[cold]
    #[inline(never)]
    fn send_rst(&mut self, buf: &mut [u8]) -> Option<Transmit> {
        if let Some(r) = self.rsts.pop_front() {
            let mut flags = TcpFlags::RST;
            if r.with_ack {
                flags |= TcpFlags::ACK;
            }
            let h = TcpHeader {
                src_port: r.from.port(),
                dst_port: r.to.port(),
                seq: r.seq.get(),
                ack: r.ack.get(),
                flags,
                window: 0,
                urgent: 0,
                options: TcpOptions::NONE,
            };
            let ip = Ipv4Header::new(*r.from.ip(), *r.to.ip(), IPPROTO_TCP);
            if let Ok(len) = packet::write_ipv4_tcp(buf, &ip, &h, &[]) {
                self.stats.rsts_sent += 1;
                self.stats.packets_out += 1;
                return Some(Transmit {
                    len,
                    seq: r.seq,
                    payload_len: 0,
                    flags,
                    retransmit: false,
                });
            }
        }
        None
    }

    /// The key of SYN cookies: the ISN secret, made distinct so the two hashes never share
    /// inputs.
    fn cookie_key(&self) -> [u8; 16] {
        let mut k = self.cfg.isn_key;
        for b in &mut k {
            *b ^= 0x5c;
        }
        k
    }

    /// Answers a SYN beyond a full backlog with a SYN cookie (RFC 4987 §3.6): nothing is
    /// kept but the SYN,ACK waiting to be sent.
    #[cold]
    #[inline(never)]
    fn queue_cookie_synack(&mut self, now: Instant, seg: &Segment<'_>) {
        if let SegmentChecksum::Pending { header_sum } = seg.checksum {
            if checksum::add(header_sum, checksum::sum(seg.payload)) != 0xffff {
                self.stats.malformed += 1;
                self.stats.bad_tcp_checksum += 1;
                return;
            }
        }
        let o = &seg.options;
        let opts = syn_cookie::CookieOptions::from_syn(o.mss, o.window_scale, o.sack_permitted);
        let iss = syn_cookie::encode(
            &self.cookie_key(),
            now.as_nanos() / 1_000_000_000,
            seg.dst,
            seg.src,
            seg.seq,
            opts,
        );
        self.synacks.push_back(PendingSynAck {
            from: seg.src,
            to: seg.dst,
            irs: seg.seq,
            iss,
            window: seg.window,
            mss: o.mss,
            window_scale: o.window_scale,
            sack_permitted: o.sack_permitted,
            tsval: o.timestamps.map(|t| t.tsval),
        });
        self.stats.syn_cookies_sent += 1;
    }

    /// Builds the first waiting cookie SYN,ACK: the connection the SYN would have made,
    /// asked for its SYN,ACK and dropped (no buffers are allocated for it).
    #[cold]
    #[inline(never)]
    fn send_cookie_synack(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let p = self.synacks.pop_front()?;
        let cfg = self.listeners.get(&p.to.port())?.cfg.clone();
        let syn = Segment {
            src: p.from,
            dst: p.to,
            seq: p.irs,
            ack: SeqNum::new(0),
            flags: TcpFlags::SYN,
            window: p.window,
            options: TcpOptions {
                mss: p.mss,
                window_scale: p.window_scale,
                sack_permitted: p.sack_permitted,
                timestamps: p.tsval.map(|tsval| Timestamps { tsval, tsecr: 0 }),
                ..TcpOptions::NONE
            },
            payload: &[],
            checksum: SegmentChecksum::Verified,
            ecn: 0,
            only_timestamps: false,
        };
        let mut c = Connection::accept(now, cfg, &syn, p.iss).ok()?;
        let t = c.poll_transmit(now, buf)?;
        self.stats.packets_out += 1;
        Some(t)
    }

    /// Completes a handshake whose SYN was answered with a cookie, if `seg` (an ACK that
    /// matched no connection) returns a valid one. Returns whether it did (or dropped the
    /// segment because the accept queue is full).
    #[cold]
    #[inline(never)]
    fn accept_cookie(&mut self, now: Instant, seg: &Segment<'_>) -> bool {
        // No cookie can be valid unless this listener sent one lately: checking the MAC of
        // every ACK to a quiet listener would let 2^24 blind guesses make a connection.
        let recent = self
            .listeners
            .get(&seg.dst.port())
            .and_then(|l| l.last_overflow);
        let valid = Duration::from_secs(syn_cookie::VALID_S);
        if recent.is_none_or(|t| now.saturating_since(t) > valid) {
            self.stats.syn_cookies_not_expected += 1;
            return false;
        }
        let irs = seg.seq - 1u32;
        let Some(opts) = syn_cookie::decode(
            &self.cookie_key(),
            now.as_nanos() / 1_000_000_000,
            seg.dst,
            seg.src,
            irs,
            seg.ack,
        ) else {
            return false;
        };
        let port = seg.dst.port();
        let Some(l) = self.listeners.get_mut(&port) else {
            return false;
        };
        if l.accept_queue.len() >= l.backlog {
            self.stats.syn_cookies_accept_queue_full += 1;
            return true;
        }
        let syn = Segment {
            src: seg.src,
            dst: seg.dst,
            seq: irs,
            ack: SeqNum::new(0),
            flags: TcpFlags::SYN,
            // The SYN's own window is unknown; the ACK, processed next, sets it.
            window: 0,
            options: TcpOptions {
                mss: Some(opts.mss),
                window_scale: opts.window_scale,
                sack_permitted: opts.sack_permitted,
                // A client that offered timestamps sends them on its ACK.
                timestamps: seg.options.timestamps.map(|t| Timestamps {
                    tsval: t.tsval,
                    tsecr: 0,
                }),
                ..TcpOptions::NONE
            },
            payload: &[],
            checksum: SegmentChecksum::Verified,
            ecn: 0,
            only_timestamps: false,
        };
        let Ok(conn) = Connection::from_cookie(now, l.cfg.clone(), &syn, seg.ack - 1u32) else {
            return false;
        };
        l.half_open += 1;
        self.insert(conn, Some(port));
        self.stats.syn_cookies_accepted += 1;
        // The ACK now finds its connection: SYN-RECEIVED to ESTABLISHED, into the accept
        // queue, as for any handshake.
        self.handle_segment(now, seg);
        true
    }

    /// The earliest deadline of any connection, or `None` when no timer is armed (O(log n):
    /// a heap, brought up to date here). When the time reaches it, call
    /// [`handle_timeout`](Self::handle_timeout). Read it after draining
    /// [`poll_transmit`](Self::poll_transmit): sending arms timers. The value may already be
    /// in the past if the driver is late; the timer is then due.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.flush_dirty();
        let mut timers = self.timers.borrow_mut();
        while let Some(&Reverse((t, i, generation))) = timers.peek() {
            let s = &self.slots[i as usize];
            if s.generation != generation || s.scheduled.get() != Some(t) {
                timers.pop();
                continue;
            }
            // Entries may be early (a deadline moved later is not rescheduled when it
            // moves): report only an exact one.
            let actual = s.conn.as_ref().and_then(|c| c.poll_timeout());
            if actual == Some(t) {
                return Some(t);
            }
            timers.pop();
            s.set_scheduled(actual);
            if let Some(a) = actual {
                timers.push(Reverse((a, i, generation)));
            }
        }
        None
    }

    /// Runs every connection timer that is due at `now` (in the order of the connections,
    /// as a scan would): retransmission, persist, delayed ACK and TIME-WAIT. Timers not yet
    /// due are left alone, so an early call is harmless. Drain
    /// [`poll_transmit`](Self::poll_transmit) afterwards: that sends what the timers
    /// queued and removes released connections whose TIME-WAIT ended.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.flush_dirty();
        let mut due = std::mem::take(&mut self.due);
        {
            let timers = self.timers.get_mut();
            while let Some(&Reverse((t, i, generation))) = timers.peek() {
                if t > now {
                    break;
                }
                timers.pop();
                let s = &self.slots[i as usize];
                if s.generation == generation && s.scheduled.get() == Some(t) {
                    s.set_scheduled(None);
                    due.push(i);
                }
            }
        }
        due.sort_unstable();
        for &i in &due {
            let s = &mut self.slots[i as usize];
            let Some(c) = s.conn.as_mut() else { continue };
            if c.poll_timeout().is_some_and(|t| t <= now) {
                let before = c.state();
                c.handle_timeout(now);
                let closed = c.is_closed();
                let after = c.state();
                if closed {
                    self.check_reap(i);
                }
                if before == State::SynReceived && after == State::Closed {
                    if let Some(port) = self.slots[i as usize].listener {
                        if let Some(l) = self.listeners.get_mut(&port) {
                            l.half_open = l.half_open.saturating_sub(1);
                        }
                        self.slots[i as usize].released = true;
                    }
                }
                let s = &mut self.slots[i as usize];
                if !s.ready {
                    s.ready = true;
                    self.ready.push_back(i);
                }
                self.note_events(i);
            }
            // Its next deadline, whether it fired or had moved later.
            self.schedule(i);
        }
        due.clear();
        self.due = due;
    }

    /// Drops connections that are closed, released by the application (or never accepted)
    /// and have nothing left to send; looks only at those that may have become so.
    #[cold]
    #[inline(never)]
    fn reap(&mut self) {
        let check = std::mem::take(&mut self.reap_check);
        for &i in &check {
            let s = &mut self.slots[i as usize];
            s.reap_check = false;
            let Some(c) = s.conn.as_ref() else { continue };
            let unaccepted = s.listener.is_some() && !s.queued_for_accept;
            if c.is_closed() && (s.released || unaccepted) {
                let id = ConnId {
                    index: i,
                    generation: s.generation,
                };
                let held = !unaccepted && !s.closed_reported;
                if let Some(conn) = self.remove(id) {
                    if held && self.events.len() < MAX_QUEUED_EVENTS {
                        self.events.push_back(Event::Closed {
                            conn: id,
                            error: conn.error(),
                        });
                    } else if held {
                        self.stats.events_dropped += 1;
                    }
                    if self.reaped.len() < 4096 {
                        self.reaped.push((id, conn.stats()));
                    }
                }
            }
        }
        let mut check = check;
        check.clear();
        if self.reap_check.is_empty() {
            // Keep the allocation.
            self.reap_check = check;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_with_its_key_is_one_cache_line() {
        // A lookup reads the slot: one line, never two (56-byte slots straddled two lines
        // three times in four). Memory per idle connection (BENCHMARKS.md, "Many
        // connections") counts every slot: the key moved here from the table (which had
        // 32-byte entries) for 16 bytes.
        assert_eq!(size_of::<ConnKey>(), 16);
        assert_eq!((size_of::<Slot>(), align_of::<Slot>()), (64, 64));
    }

    #[test]
    fn the_table_finds_each_live_connection_and_forgets_removed_ones() {
        let mut ep = Endpoint::new(EndpointConfig::new(Ipv4Addr::new(198, 18, 0, 1), [3; 16]));
        let now = Instant::ZERO;
        let peer = |i: u16| SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 2), 1000 + i);
        let ids: Vec<ConnId> = (0..3000)
            .map(|i| {
                ep.connect_from_port(now, 5000, peer(i), TcpConfig::newreno())
                    .unwrap()
            })
            .collect();
        let addr = ep.addr();
        let key = |i: u16| ConnKey::new(SocketAddrV4::new(addr, 5000), peer(i));
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(ep.lookup(key(i as u16)), Some(*id));
        }
        // Remove every other one; the slots are reused by new connections.
        for id in ids.iter().step_by(2) {
            assert!(ep.remove(*id).is_some());
        }
        for (i, id) in ids.iter().enumerate() {
            let expect = (i % 2 == 1).then_some(*id);
            assert_eq!(ep.lookup(key(i as u16)), expect, "connection {i}");
        }
        let again: Vec<ConnId> = (0..1500)
            .map(|i| {
                ep.connect_from_port(now, 6000, peer(i), TcpConfig::newreno())
                    .unwrap()
            })
            .collect();
        for (i, id) in again.iter().enumerate() {
            let k = ConnKey::new(SocketAddrV4::new(addr, 6000), peer(i as u16));
            assert_eq!(ep.lookup(k), Some(*id));
            assert_eq!(ep.lookup(key(i as u16)).is_some(), i % 2 == 1);
        }
        // A 4-tuple in use is refused.
        assert!(ep
            .connect_from_port(now, 6000, peer(0), TcpConfig::newreno())
            .is_err());
    }

    #[test]
    fn the_tables_of_many_connections_lie_in_whole_huge_pages() {
        // BENCHMARKS.md, "Many connections": a segment's lookup reads a random line of the
        // slot array; from 32,768 connections on (2 MiB of slots) the array is in 2 MiB
        // blocks, advised as huge pages, and lookups still find every connection.
        use crate::table_alloc::HUGE_PAGE;
        let mut ep = Endpoint::new(EndpointConfig::new(Ipv4Addr::new(198, 18, 0, 1), [3; 16]));
        let n = HUGE_PAGE / size_of::<Slot>();
        let peer = |i: usize| {
            SocketAddrV4::new(
                Ipv4Addr::new(198, 19, (i >> 8) as u8, i as u8),
                1000 + (i >> 16) as u16,
            )
        };
        let mut small = None;
        let ids: Vec<ConnId> = (0..n)
            .map(|i| {
                if i == 1000 {
                    small = Some(ep.slots.as_ptr() as usize);
                }
                ep.connect_from_port(Instant::ZERO, 5000, peer(i), TcpConfig::newreno())
                    .unwrap()
            })
            .collect();
        assert_eq!(ep.slots.len(), n);
        assert_eq!(ep.slots.as_ptr() as usize % HUGE_PAGE, 0);
        assert_ne!(small, Some(ep.slots.as_ptr() as usize), "the array moved");
        let addr = SocketAddrV4::new(ep.addr(), 5000);
        for (i, id) in ids.iter().enumerate().step_by(97) {
            assert_eq!(ep.lookup(ConnKey::new(addr, peer(i))), Some(*id));
        }
    }

    /// The third segment of a handshake carrying a cookie the endpoint itself would have
    /// made for a SYN with sequence number `irs` at `now`: what a blind attacker guesses
    /// with probability 2^-24 per try, built here exactly.
    fn forged_cookie_ack(ep: &Endpoint, now: Instant, port: u16, irs: u32) -> Segment<'static> {
        let local = SocketAddrV4::new(ep.addr(), port);
        // A source port of its own per guess, so no two share a connection.
        let remote = SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 66), 40_000 + irs as u16);
        let opts = syn_cookie::CookieOptions::from_syn(Some(1460), None, false);
        let cookie = syn_cookie::encode(
            &ep.cookie_key(),
            now.as_nanos() / 1_000_000_000,
            local,
            remote,
            SeqNum::new(irs),
            opts,
        );
        Segment {
            src: remote,
            dst: local,
            seq: SeqNum::new(irs.wrapping_add(1)),
            ack: cookie + 1u32,
            flags: TcpFlags::ACK,
            window: 1000,
            options: TcpOptions::NONE,
            payload: b"GET / HTTP/1.0\r\n\r\n",
            checksum: SegmentChecksum::Verified,
            ecn: 0,
            only_timestamps: false,
        }
    }

    #[test]
    fn rfc4987_3_6_a_listener_that_never_overflowed_takes_no_cookie() {
        // Linux's tcp_synq_no_recent_overflow: a cookie is only looked for shortly after
        // the listener answered a SYN with one. Before, a valid MAC on any ACK made an
        // established connection with its data readable (5 forged in 10^8 blind ACKs).
        let mut ep = Endpoint::new(EndpointConfig::new(Ipv4Addr::new(198, 18, 0, 1), [3; 16]));
        ep.listen(80, TcpConfig::sack(), 8).unwrap();
        let now = Instant::ZERO + Duration::from_secs(100);
        let seg = forged_cookie_ack(&ep, now, 80, 7_000);
        ep.handle_segment(now, &seg);
        assert_eq!(ep.stats().syn_cookies_accepted, 0);
        assert_eq!(ep.stats().syn_cookies_not_expected, 1);
        assert!(
            ep.accept(80).is_none(),
            "a connection forged on a quiet listener"
        );
        assert_eq!(ep.connections().count(), 0);
    }

    #[test]
    fn rfc4987_3_6_a_cookie_is_taken_only_within_its_validity_after_an_overflow() {
        let mut ep = Endpoint::new(EndpointConfig::new(Ipv4Addr::new(198, 18, 0, 1), [3; 16]));
        ep.listen(80, TcpConfig::sack(), 1).unwrap();
        // Fill the backlog, then overflow it: the second SYN is answered with a cookie.
        let t0 = Instant::ZERO + Duration::from_secs(100);
        for (i, port) in [(1u32, 30_001u16), (2, 30_002)] {
            let syn = Segment {
                src: SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 9), port),
                dst: SocketAddrV4::new(ep.addr(), 80),
                seq: SeqNum::new(i * 1000),
                ack: SeqNum::new(0),
                flags: TcpFlags::SYN,
                window: 1000,
                options: TcpOptions::NONE,
                payload: &[],
                checksum: SegmentChecksum::Verified,
                ecn: 0,
                only_timestamps: false,
            };
            ep.handle_segment(t0, &syn);
        }
        assert_eq!(ep.stats().syn_cookies_sent, 1);
        // Within the validity a cookie made now is taken (it completes a handshake)...
        let t1 = t0 + Duration::from_secs(5);
        ep.handle_segment(t1, &forged_cookie_ack(&ep, t1, 80, 9_000));
        assert_eq!(ep.stats().syn_cookies_accepted, 1);
        // ...and once the listener has been quiet for longer, not even a correct one is.
        let t2 = t0 + Duration::from_secs(syn_cookie::VALID_S + 1);
        ep.handle_segment(t2, &forged_cookie_ack(&ep, t2, 80, 11_000));
        assert_eq!(ep.stats().syn_cookies_accepted, 1);
        assert_eq!(ep.stats().syn_cookies_not_expected, 1);
    }
}
