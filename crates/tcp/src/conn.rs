//! One TCP connection: the RFC 9293 state machine with the 4BSD algorithms of the seeds.
//!
//! Sans-IO: segments come in through [`Connection::handle_segment`], timers through
//! [`Connection::handle_timeout`]; complete IPv4 packets come out of
//! [`Connection::poll_transmit`], and [`Connection::poll_timeout`] says when to call back.
//! Time is always passed in.
//!
//! Structure of the input path (RFC 9293 §3.10.7 "SEGMENT ARRIVES", in order): header
//! prediction (the seeds' Sep 1993 fast path) first, then the general path: SYN-SENT
//! handling, PAWS (RFC 7323 §5), the acceptability test, RST (RFC 5961 §3), SYN (RFC 5961
//! §4), the ACK (RFC 5961 §5 acceptability, then the send side: RTT, congestion control,
//! recovery, window update), the data, and the FIN.

use crate::cc::{
    AckEvent, Aimd, CcInit, CongestionControl, CongestionEvent, FixedWindow, NoCongestionControl,
};
use crate::config::{CongestionAlgorithm, TcpConfig};
use crate::cubic::Cubic;
use crate::recovery::{DupAckOutcome, NewAckOutcome, Recovery};
use crate::recv_buf::RecvBuffer;
use crate::rtt::RttEstimator;
use crate::sack::NextSeg;
use crate::send_buf::SendBuffer;
use crate::seq::SeqNum;
use crate::stats::{Stats, TraceEvent, TraceKind};
use timers::{Timer, Timers};
use crate::{Segment, SegmentChecksum, State, TcpError};
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    checksum, packet, Duration, Instant, Ipv4Header, SackBlock, TcpFlags, TcpHeader, TcpOptions,
};
use core::net::SocketAddrV4;
use std::sync::Arc;

mod timers;

/// `Connection::hp_ready` bits: a pure ACK may be predicted; in-order data may be.
const HP_ACK: u8 = 1;
const HP_DATA: u8 = 2;
/// Bytes the timestamps option takes in every segment once negotiated (NOP NOP TS).
const TS_OPTION_LEN: u32 = 12;
/// RFC 9293 §3.7.1: the send MSS when the peer sends no MSS option (IPv4).
const DEFAULT_MSS: u32 = 536;
/// RFC 7323 §2.3: shifts above 14 are treated as 14.
const MAX_WSCALE: u8 = 14;
/// RFC 7323 §5.5: TS.Recent older than 24 days is invalid.
const PAWS_IDLE: Duration = Duration::from_secs(24 * 24 * 3600);

/// What `poll_transmit` produced: a complete IPv4 packet in the caller's buffer.
///
/// The packet is `&buf[..len]`, checksums included, ready for the wire. The other fields
/// describe it, for drivers that count or log without parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes of the packet written at the front of the buffer.
    pub len: usize,
    /// The segment's sequence number: its first data byte, or its SYN or FIN when it
    /// carries no data.
    pub seq: SeqNum,
    /// Data bytes the segment carries (0 for SYNs, pure ACKs, a FIN alone and RSTs).
    pub payload_len: u32,
    /// The segment's control bits.
    pub flags: TcpFlags,
    /// The segment resends data (or a SYN, or a FIN) sent before.
    pub retransmit: bool,
}

/// A pending RST to send: sequence and acknowledgment numbers and flags.
#[derive(Clone, Copy, Debug)]
struct RstRequest {
    seq: SeqNum,
    ack: SeqNum,
    with_ack: bool,
}

/// What header prediction made of a segment.
enum Prediction {
    Miss,
    /// A pure ACK for new data; `wnd` is the advertised window, scaled.
    Ack {
        wnd: u32,
    },
    /// Pure in-order data that fits.
    Data {
        wnd: u32,
    },
}

/// Outcome of the input checks that decide whether a segment goes further.
enum Flow {
    Continue,
    Drop,
}

/// One TCP connection: the RFC 9293 state machine, its send and receive buffers, its
/// timers, congestion control and loss recovery.
///
/// Connections are normally made and owned by an [`Endpoint`](crate::Endpoint): the
/// application gets one through [`Endpoint::conn_mut`](crate::Endpoint::conn_mut) and
/// uses the application interface ([`send`](Self::send), [`recv`](Self::recv),
/// [`close`](Self::close), [`abort`](Self::abort), [`stats`](Self::stats) and the
/// accessors). The endpoint hands it its segments and timer events and collects its
/// output.
///
/// A connection can also be driven without an endpoint, made with
/// [`connect`](Self::connect) or [`accept`](Self::accept), by a driver that
/// demultiplexes packets itself. The protocol is the endpoint's, for one connection:
///
/// - give it each segment of its 4-tuple with [`handle_segment`](Self::handle_segment);
///   it does not check the addresses, and it does not answer segments of other
///   connections (an endpoint sends those a RST);
/// - when the time reaches [`poll_timeout`](Self::poll_timeout), call
///   [`handle_timeout`](Self::handle_timeout);
/// - after either, and after every application call, call
///   [`poll_transmit`](Self::poll_transmit) until it returns `None` and send what it
///   writes. Its buffer must hold [`TcpConfig::mss`] + 80 bytes (see "The transmit
///   buffer" in the [`Endpoint`](crate::Endpoint) documentation);
/// - read `poll_timeout` again after draining (sending arms timers).
///
/// `now` never decreases from one call to the next. The application calls take no `now`;
/// what they change is stamped with the latest time passed in.
///
/// A connection never panics on what a peer sends: malformed, out-of-window and
/// checksum-failing segments are counted in [`Stats`] and dropped.
pub struct Connection {
    /// Shared with the listener's other connections (one copy per listener, not per
    /// connection: it is read, never written).
    cfg: Arc<TcpConfig>,
    state: State,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    passive: bool,

    // --- send sequence space (RFC 9293 §3.3.1) ---
    iss: SeqNum,
    snd_una: SeqNum,
    snd_nxt: SeqNum,
    /// Highest sequence number sent + 1 (BSD's snd_max): go-back-N after a timeout pulls
    /// snd_nxt back, snd_max remembers how far we had been.
    snd_max: SeqNum,
    snd_wnd: u32,
    max_snd_wnd: u32,
    snd_wl1: SeqNum,
    snd_wl2: SeqNum,
    /// Shift applied to windows the peer advertises.
    snd_wscale: u8,
    send_buf: SendBuffer,
    /// Sequence number of the first byte in `send_buf`.
    buf_seq: SeqNum,
    /// The application closed its side: a FIN follows the data.
    fin_queued: bool,

    // --- receive sequence space ---
    irs: SeqNum,
    rcv_nxt: SeqNum,
    /// Right edge of the window last advertised (never moved left: RFC 9293 §3.8.6.2.2).
    rcv_adv: SeqNum,
    /// Shift we apply to the windows we advertise.
    rcv_wscale: u8,
    recv_buf: RecvBuffer,
    /// Sequence number of a FIN that arrived out of order.
    peer_fin: Option<SeqNum>,
    fin_received: bool,

    // --- events for the application (Endpoint::poll_event) ---
    /// `EV_*` bits set since the endpoint last took them.
    events: u8,
    /// A `send` took less than it was given, or filled the buffer: space coming back is
    /// worth an event.
    send_blocked: bool,

    // --- negotiated options ---
    /// Payload bytes per full-sized segment we send (SMSS, options accounted).
    snd_mss: u32,
    /// Payload of a full-sized segment from the peer (for the ACK-every-N rule).
    rcv_mss: u32,
    ts_ok: bool,
    ws_ok: bool,
    ts_recent: u32,
    ts_recent_age: Instant,
    /// Offset added to our timestamp clock (RFC 7323 §5.4 suggests a random one).
    ts_offset: u32,
    last_ack_sent: SeqNum,
    sack_ok: bool,
    /// Left edges of SACK blocks in most-recently-received order (RFC 2018 §4).
    sack_recent: [SeqNum; 4],
    sack_recent_len: usize,

    // --- timers ---
    rtt: RttEstimator,
    /// The segment being timed (4.3BSD t_rtseq/t_rtt): its end and when it was sent.
    rtt_timed: Option<(SeqNum, Instant)>,
    /// Retransmission, persist, delayed-ACK and TIME-WAIT deadlines (`conn/timers.rs`).
    timers: Timers,
    /// Consecutive timeouts (BSD's t_rxtshift).
    rto_count: u32,
    persist_shift: u32,
    probe_now: bool,
    /// Whether header prediction may be tried (`HP_ACK`): it is enabled, the state is
    /// ESTABLISHED, we are not retransmitting (SND.NXT = SND.MAX), no probe is due and the
    /// recovery is quiet (no duplicate ACKs counted,
    /// not recovering); and for in-order data (`HP_DATA`) also nothing is held out of
    /// order and no FIN is waiting. The seed's prediction tests one state word; this is
    /// that word, recomputed by `refresh_prediction` wherever one of its inputs may
    /// change, so the fast path tests one byte instead of seven fields.
    hp_ready: u8,
    last_send_at: Instant,
    /// Our timestamp value of the last retransmission by timeout, for spurious detection.
    rto_retransmit_ts: Option<u32>,

    // --- congestion control and recovery ---
    cc: Box<dyn CongestionControl>,
    rec: Recovery,

    // --- ACK policy ---
    /// Full-sized segments received since we last sent an ACK.
    unacked_segs: u32,
    unacked_bytes: u32,
    ack_now: bool,
    /// The ACK policy's thresholds, computed once from `cfg.ack` and `rcv_mss` (see
    /// `set_rcv_mss`) rather than on every data segment: ACK at once once this many
    /// full-sized segments (0 with quick ACK or no delayed-ACK timer: every segment) ...
    ack_every_segs: u32,
    /// ... or this many bytes are unacknowledged.
    ack_every_bytes: u32,
    /// Window growth worth announcing on its own (`window_update_due`).
    wnd_update_growth: u32,
    syn_pending: bool,
    rst_pending: Option<RstRequest>,
    challenge_window_start: Instant,
    challenge_count: u32,
    /// When an ACK last answered an invalid segment without data (`invalid_ack_interval`).
    last_invalid_ack_at: Option<Instant>,
    /// Zero-window probes in a row that drew no segment at all, and `stats.segs_in` when the
    /// last one went out (an answer is any segment after it: counting costs the input path
    /// nothing).
    probes_unanswered: u32,
    probe_segs_in_mark: u64,
    /// When the send sequence last made progress (SND.UNA moved, or data became
    /// outstanding), for the user timeout.
    progress_at: Instant,

    error: Option<TcpError>,
    /// The latest time passed in, for events the application triggers (close, abort).
    now: Instant,
    stats: Stats,
    trace: Option<Vec<TraceEvent>>,
    ip_id: u16,
    /// The IPv4 and TCP headers this connection sends, prebuilt (4.3BSD's `tcp_template`):
    /// every segment but SYNs, RSTs and ACKs carrying SACK blocks is written from it.
    template: packet::Ipv4TcpTemplate,
}

impl core::fmt::Debug for Connection {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Connection")
            .field("state", &self.state)
            .field("local", &self.local)
            .field("remote", &self.remote)
            .field("snd_una", &self.snd_una)
            .field("snd_nxt", &self.snd_nxt)
            .field("snd_max", &self.snd_max)
            .field("snd_wnd", &self.snd_wnd)
            .field("rcv_nxt", &self.rcv_nxt)
            .field("cwnd", &self.cc.cwnd())
            .field("ssthresh", &self.cc.ssthresh())
            .finish()
    }
}

// What happened to a connection since the application last heard (`Endpoint::poll_event`).
/// An active open completed (SYN-SENT to ESTABLISHED).
pub(crate) const EV_CONNECTED: u8 = 1;
/// Space came back in the send buffer after a `send` that did not take everything (or
/// filled it).
pub(crate) const EV_WRITABLE: u8 = 2;
/// In-order data, or the FIN, arrived: a read returns something.
pub(crate) const EV_READABLE: u8 = 4;
/// The peer's FIN arrived in order.
pub(crate) const EV_PEER_CLOSED: u8 = 8;
/// The connection reached CLOSED.
pub(crate) const EV_CLOSED: u8 = 16;

fn make_cc(cfg: &TcpConfig, mss: u32) -> Box<dyn CongestionControl> {
    match &cfg.congestion {
        CongestionAlgorithm::None => Box::new(NoCongestionControl),
        CongestionAlgorithm::Fixed => Box::new(FixedWindow::new(cfg.initial_window.bytes(mss))),
        CongestionAlgorithm::Aimd(a) => Box::new(Aimd::new(
            *a,
            cfg.initial_window.bytes(mss),
            cfg.initial_ssthresh,
        )),
        CongestionAlgorithm::Cubic(c) => Box::new(Cubic::new(
            *c,
            mss,
            cfg.initial_window.bytes(mss),
            cfg.initial_ssthresh,
        )),
        CongestionAlgorithm::Custom(f) => f.build(CcInit {
            mss,
            initial_window: cfg.initial_window.bytes(mss),
            initial_ssthresh: cfg.initial_ssthresh,
        }),
    }
}

/// The smallest shift that lets `buffer` bytes be advertised in 16 bits (RFC 7323 §2.3).
fn wscale_for(buffer: usize) -> u8 {
    let mut s = 0u8;
    while s < MAX_WSCALE && (buffer >> s) > 65535 {
        s += 1;
    }
    s
}

impl Connection {
    fn new(
        now: Instant,
        cfg: Arc<TcpConfig>,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        iss: SeqNum,
        state: State,
    ) -> Self {
        let mss = u32::from(cfg.mss).max(1);
        let cc = make_cc(&cfg, mss);
        let rec = Recovery::new(cfg.recovery, cfg.dupack_threshold, cfg.limited_transmit);
        let trace = None;
        let template = packet::Ipv4TcpTemplate::new(
            &Ipv4Header {
                ttl: cfg.ttl,
                ..Ipv4Header::new(*local.ip(), *remote.ip(), ackclock_wire::IPPROTO_TCP)
            },
            local.port(),
            remote.port(),
        );
        let mut c = Connection {
            state,
            local,
            remote,
            passive: state == State::SynReceived,
            iss,
            snd_una: iss,
            snd_nxt: iss,
            snd_max: iss,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wl1: SeqNum::new(0),
            snd_wl2: iss,
            snd_wscale: 0,
            send_buf: SendBuffer::new(cfg.send_buffer_bytes),
            buf_seq: iss + 1u32,
            fin_queued: false,
            irs: SeqNum::new(0),
            rcv_nxt: SeqNum::new(0),
            rcv_adv: SeqNum::new(0),
            rcv_wscale: 0,
            recv_buf: RecvBuffer::new(cfg.recv_buffer_bytes.max(1)),
            peer_fin: None,
            fin_received: false,
            events: 0,
            send_blocked: false,
            snd_mss: DEFAULT_MSS.min(mss),
            rcv_mss: mss,
            ts_ok: false,
            ws_ok: false,
            ts_recent: 0,
            ts_recent_age: now,
            ts_offset: iss.get().rotate_left(13),
            last_ack_sent: SeqNum::new(0),
            sack_ok: false,
            sack_recent: [SeqNum::new(0); 4],
            sack_recent_len: 0,
            rtt: RttEstimator::new(cfg.rtt),
            rtt_timed: None,
            timers: Timers::new(),
            rto_count: 0,
            persist_shift: 0,
            probe_now: false,
            hp_ready: 0,
            last_send_at: now,
            rto_retransmit_ts: None,
            cc,
            rec,
            unacked_segs: 0,
            unacked_bytes: 0,
            ack_now: false,
            ack_every_segs: 0,
            ack_every_bytes: 0,
            wnd_update_growth: 0,
            syn_pending: true,
            rst_pending: None,
            challenge_window_start: now,
            challenge_count: 0,
            last_invalid_ack_at: None,
            probes_unanswered: 0,
            probe_segs_in_mark: 0,
            progress_at: now,
            error: None,
            now,
            stats: Stats::default(),
            trace,
            ip_id: (iss.get() >> 16) as u16,
            template,
            cfg,
        };
        c.set_rcv_mss(mss);
        c
    }

    /// Recomputes `hp_ready` from its inputs. Called wherever one of them may have changed
    /// (the state, SND.NXT against SND.MAX, `probe_now`, the recovery's duplicate-ACK count
    /// or episode, out-of-order data, a waiting FIN): after the general input path, after
    /// timers, on state changes and where the output path moves SND.NXT other than in step
    /// with SND.MAX. Debug builds check the flag against its inputs on every segment.
    #[inline]
    fn refresh_prediction(&mut self) {
        self.hp_ready = self.prediction_allowed();
    }

    #[inline]
    fn prediction_allowed(&self) -> u8 {
        let ack = self.cfg.header_prediction
            && self.state == State::Established
            && self.snd_nxt == self.snd_max
            && !self.probe_now
            && self.rec.dupacks() == 0
            && !self.rec.in_recovery();
        // The data path copies into the receive ring without asking: it must exist (the
        // first data segment, on the general path, allocates it).
        let data = ack
            && !self.recv_buf.has_out_of_order()
            && self.peer_fin.is_none()
            && self.recv_buf.is_allocated();
        (u8::from(ack) * HP_ACK) | (u8::from(data) * HP_DATA)
    }

    /// Sets the payload size of a full-sized segment from the peer and the ACK-policy
    /// thresholds that depend on it (RFC 5681 §4.2; 4.3BSD's window-update rule).
    fn set_rcv_mss(&mut self, rcv_mss: u32) {
        self.rcv_mss = rcv_mss;
        let p = self.cfg.ack;
        let n = p.segments_per_ack.clamp(1, 64);
        // `unacked_segs >= 0` always holds: quick ACK needs no test of its own.
        let immediately = p.quickack || p.delayed_ack == Duration::ZERO;
        self.ack_every_segs = if immediately { 0 } else { n };
        self.ack_every_bytes = n.saturating_mul(rcv_mss);
        // `window_update_due` announces growth of `segs` segments or of half the buffer,
        // whichever is smaller (segs <= 64 and rcv_mss < 2^16, so no overflow).
        let segs = p.segments_per_ack.clamp(2, 64);
        self.wnd_update_growth = (segs * rcv_mss).min(self.recv_buf.capacity() as u32 / 2);
    }

    /// Active open (RFC 9293 §3.10.1): a connection in SYN-SENT whose SYN goes out on the
    /// next `poll_transmit`. `iss` is the initial send sequence number (an endpoint uses
    /// RFC 6528's); `local` and `remote` are the 4-tuple.
    pub fn connect(
        now: Instant,
        cfg: impl Into<Arc<TcpConfig>>,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        iss: SeqNum,
    ) -> Self {
        Self::new(now, cfg.into(), local, remote, iss, State::SynSent)
    }

    /// Passive open: `syn` arrived for a listener; the connection starts in SYN-RECEIVED
    /// and answers with a SYN-ACK. The caller has checked that `syn` is a SYN without ACK
    /// or RST. The options the SYN offered are taken up to what `cfg` allows, and data on
    /// the SYN is kept.
    ///
    /// # Errors
    /// [`TcpError::BadChecksum`] when `syn`'s checksum is pending and does not verify.
    pub fn accept(
        now: Instant,
        cfg: impl Into<Arc<TcpConfig>>,
        syn: &Segment<'_>,
        iss: SeqNum,
    ) -> Result<Self, TcpError> {
        let cfg = cfg.into();
        if let SegmentChecksum::Pending { header_sum } = syn.checksum {
            if checksum::add(header_sum, checksum::sum(syn.payload)) != 0xffff {
                return Err(TcpError::BadChecksum);
            }
        }
        let mut c = Self::new(now, cfg, syn.dst, syn.src, iss, State::SynReceived);
        c.stats.segs_in += 1;
        c.irs = syn.seq;
        c.rcv_nxt = syn.seq + 1u32;
        c.take_syn_options(now, syn);
        c.snd_wnd = u32::from(syn.window);
        c.max_snd_wnd = c.snd_wnd;
        c.snd_wl1 = syn.seq;
        c.snd_wl2 = iss;
        // Data on a SYN is legal; we keep it (inside the window) rather than making the peer
        // resend it.
        if !syn.payload.is_empty() {
            c.deliver_data(now, syn.seq + 1u32, syn.payload);
        }
        Ok(c)
    }

    /// A connection in SYN-RECEIVED whose SYN,ACK (with ISN `iss`) has already been sent by
    /// the endpoint's SYN-cookie path, which kept no state: `syn` is rebuilt from the
    /// handshake's ACK and the options its cookie carried. The ACK itself is processed next.
    pub(crate) fn from_cookie(
        now: Instant,
        cfg: Arc<TcpConfig>,
        syn: &Segment<'_>,
        iss: SeqNum,
    ) -> Result<Self, TcpError> {
        let mut c = Self::accept(now, cfg, syn, iss)?;
        c.syn_pending = false;
        c.snd_nxt = iss + 1u32;
        c.snd_max = c.snd_nxt;
        // The SYN,ACK offered the window a fresh connection offers (its field unscaled):
        // record that right edge, or the first ACK would look like a window to announce.
        c.advertise_window(true);
        Ok(c)
    }

    // ------------------------------------------------------------------------------------
    // Application interface

    /// The current state (RFC 9293 §3.3.2).
    pub fn state(&self) -> State {
        self.state
    }
    /// Our address and port.
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }
    /// The peer's address and port.
    pub fn remote(&self) -> SocketAddrV4 {
        self.remote
    }
    /// The configuration the connection was made with (one copy shared by every
    /// connection of a listener).
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Why the connection ended abnormally, if it did.
    pub fn error(&self) -> Option<TcpError> {
        self.error
    }
    /// True once the connection has left every state that needs packets or timers.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    /// True in ESTABLISHED only: false before the handshake completes and once either side
    /// has closed.
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }
    /// Whether the passive side created this connection.
    pub fn is_passive(&self) -> bool {
        self.passive
    }

    /// Queues data for sending; returns how much fit in the send buffer (possibly 0).
    ///
    /// Allowed in SYN-SENT and SYN-RECEIVED (the data waits for the handshake), ESTABLISHED
    /// and CLOSE-WAIT, until the application closes. The data goes out on the driver's
    /// next drain of `poll_transmit`, as the windows allow; Nagle's rule
    /// ([`TcpConfig::nagle`]) holds a small segment back while data is unacknowledged. The
    /// buffer's space comes back as the peer acknowledges data
    /// ([`send_capacity`](Self::send_capacity)).
    ///
    /// # Errors
    /// The connection's error ([`error`](Self::error)) if it ended abnormally, else
    /// [`TcpError::NotOpenForSending`].
    pub fn send(&mut self, data: &[u8]) -> Result<usize, TcpError> {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
                if !self.fin_queued =>
            {
                let n = self.send_buf.write(data);
                if n < data.len() || self.send_buf.free() == 0 {
                    self.send_blocked = true;
                }
                Ok(n)
            }
            _ => Err(self.error.unwrap_or(TcpError::NotOpenForSending)),
        }
    }

    /// Queues data the application writes straight into the send buffer: `f` is lent the
    /// free space after the queued bytes, up to the end of the ring (one contiguous slice,
    /// possibly shorter than [`send_capacity`](Self::send_capacity): call again for the
    /// rest; empty when the buffer is full), writes its bytes at the start and returns how
    /// many it wrote together with a result of its own, which `send_with` returns. This saves
    /// the copy [`send`](Self::send) makes from the application's buffer for an application
    /// that produces its data (reads a file, encodes a message) in place, as smoltcp's
    /// `TcpSocket::send` does. The same states and rules as `send` apply; `f` is not called
    /// when sending is not allowed.
    ///
    /// # Errors
    /// As [`send`](Self::send).
    pub fn send_with<R>(&mut self, f: impl FnOnce(&mut [u8]) -> (usize, R)) -> Result<R, TcpError> {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
                if !self.fin_queued =>
            {
                let r = self.send_buf.write_with(f);
                if self.send_buf.free() == 0 {
                    // Full: `Writable` tells the application when space comes back.
                    self.send_blocked = true;
                }
                Ok(r)
            }
            _ => Err(self.error.unwrap_or(TcpError::NotOpenForSending)),
        }
    }

    /// Free space in the send buffer.
    pub fn send_capacity(&self) -> usize {
        self.send_buf.free()
    }
    /// Bytes queued and not yet acknowledged.
    pub fn send_queued(&self) -> usize {
        self.send_buf.len()
    }

    /// Reads received data. `Ok(0)` means end of stream (the peer's FIN and all data before
    /// it were read); `Err(WouldBlock)` means nothing yet. An empty `buf` gives `Ok(0)`.
    ///
    /// Reading frees receive buffer. Once the window can grow by
    /// [`AckPolicy::segments_per_ack`](crate::AckPolicy::segments_per_ack) segments (at
    /// least two) or by half the buffer, whichever is smaller (4.3BSD's rule), the next
    /// drain of `poll_transmit` announces it.
    ///
    /// # Errors
    /// [`TcpError::WouldBlock`] while the connection may still receive; after that, the
    /// connection's error ([`error`](Self::error)) if it ended abnormally, else
    /// [`TcpError::NotConnected`]. Data that arrived before a reset can still be read.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<usize, TcpError> {
        if buf.is_empty() {
            return Ok(0);
        }
        let n = self.recv_buf.read(buf);
        if n > 0 {
            return Ok(n);
        }
        if self.fin_received {
            // The stream has ended and been read: its ring can go.
            self.recv_buf.release();
            return Ok(0);
        }
        if let Some(e) = self.error {
            return Err(e);
        }
        match self.state {
            State::SynSent
            | State::SynReceived
            | State::Established
            | State::FinWait1
            | State::FinWait2 => Err(TcpError::WouldBlock),
            _ => Err(TcpError::NotConnected),
        }
    }

    /// Reads received data in place: `f` is lent the in-order bytes at the front of the
    /// receive buffer (one contiguous slice: when the data wraps around the end of the ring,
    /// the rest comes on the next call), returns how many of them it consumed together with a
    /// result of its own, which `recv_with` returns. Consumed bytes are freed as by
    /// [`recv`](Self::recv) (the window opens the same way); bytes `f` leaves stay for the
    /// next read. This saves [`recv`](Self::recv)'s copy into the application's buffer, as
    /// smoltcp's `TcpSocket::recv` does. At the end of the stream `f` is lent an empty
    /// slice, as `recv` returns `Ok(0)`.
    ///
    /// # Errors
    /// As [`recv`](Self::recv): [`TcpError::WouldBlock`] when nothing is readable yet (`f`
    /// is not called), the connection's error, or [`TcpError::NotConnected`].
    pub fn recv_with<R>(&mut self, f: impl FnOnce(&[u8]) -> (usize, R)) -> Result<R, TcpError> {
        if self.recv_buf.is_empty() {
            // The same end-of-stream and error rules as `recv`.
            let mut none = [0u8; 1];
            self.recv(&mut none)?;
            return Ok(f(&[]).1);
        }
        let (first, _) = self.recv_buf.readable_slices();
        let (n, r) = f(first);
        let n = n.min(first.len());
        self.recv_buf.consume(n);
        Ok(r)
    }

    /// Gives back the memory of buffers that hold nothing (they are allocated again when
    /// data comes). A driver with many idle connections may call it now and then; the
    /// engine itself releases a direction's buffer once that direction has ended. Returns
    /// the bytes freed.
    pub fn trim_buffers(&mut self) -> usize {
        let mut freed = 0;
        if self.send_buf.release() {
            freed += self.send_buf.capacity();
        }
        if self.recv_buf.release() {
            freed += self.recv_buf.capacity();
            // Header prediction needs the ring: off until data allocates it again.
            self.refresh_prediction();
        }
        freed
    }

    /// In-order bytes waiting to be read.
    pub fn recv_available(&self) -> usize {
        self.recv_buf.len()
    }
    /// Discards up to `n` readable bytes without copying (a discard server's read).
    pub fn recv_discard(&mut self, n: usize) -> usize {
        let n = n.min(self.recv_buf.len());
        self.recv_buf.consume(n);
        n
    }
    /// The `EV_*` bits set since the last call, cleared (for the endpoint's event queue).
    #[inline]
    pub(crate) fn take_events(&mut self) -> u8 {
        std::mem::take(&mut self.events)
    }

    /// Returns bits taken by `take_events` and not yet delivered.
    #[inline]
    pub(crate) fn put_back_events(&mut self, bits: u8) {
        self.events |= bits;
    }

    /// Whether `take_events` would return anything.
    #[inline]
    pub(crate) fn has_events(&self) -> bool {
        self.events != 0
    }

    /// True when the peer has closed its side and everything before its FIN was read.
    pub fn is_eof(&self) -> bool {
        self.fin_received && self.recv_buf.is_empty()
    }

    /// Closes our sending side (RFC 9293 §3.10.4): a FIN follows the queued data.
    ///
    /// ESTABLISHED becomes FIN-WAIT-1 and CLOSE-WAIT becomes LAST-ACK; in SYN-RECEIVED the
    /// FIN waits for the handshake; in SYN-SENT the connection goes straight to CLOSED
    /// (nothing sent). A second close while closing is accepted and does nothing. The
    /// application may keep reading until the peer's FIN.
    ///
    /// Through an [`Endpoint`](crate::Endpoint), prefer
    /// [`Endpoint::close`](crate::Endpoint::close), which also lets the endpoint remove the
    /// connection when it is done.
    ///
    /// # Errors
    /// On a CLOSED connection: its error if it ended abnormally, else
    /// [`TcpError::NotConnected`].
    pub fn close(&mut self) -> Result<(), TcpError> {
        match self.state {
            State::SynSent => {
                self.enter_closed();
                self.set_state(self.now, State::Closed);
                Ok(())
            }
            State::SynReceived => {
                // The FIN waits for the handshake; ESTABLISHED then becomes FIN-WAIT-1.
                self.fin_queued = true;
                Ok(())
            }
            State::Established => {
                self.fin_queued = true;
                self.set_state(self.now, State::FinWait1);
                Ok(())
            }
            State::CloseWait => {
                self.fin_queued = true;
                self.set_state(self.now, State::LastAck);
                Ok(())
            }
            State::FinWait1
            | State::FinWait2
            | State::Closing
            | State::LastAck
            | State::TimeWait => Ok(()),
            State::Closed | State::Listen => Err(self.error.unwrap_or(TcpError::NotConnected)),
        }
    }

    /// Aborts (RFC 9293 §3.10.5): a RST to the peer in SYN-RECEIVED, ESTABLISHED,
    /// FIN-WAIT-1, FIN-WAIT-2 and CLOSE-WAIT (not in CLOSING, LAST-ACK or TIME-WAIT, as the
    /// RFC says), then CLOSED with [`TcpError::Aborted`]. Queued data is not sent. The RST
    /// goes out on the next `poll_transmit`.
    ///
    /// Through an [`Endpoint`](crate::Endpoint), prefer
    /// [`Endpoint::abort`](crate::Endpoint::abort), which also lets the endpoint remove the
    /// connection.
    pub fn abort(&mut self) {
        if matches!(
            self.state,
            State::SynReceived
                | State::Established
                | State::FinWait1
                | State::FinWait2
                | State::CloseWait
        ) {
            self.rst_pending = Some(RstRequest {
                seq: self.snd_nxt,
                ack: self.rcv_nxt,
                with_ack: false,
            });
        }
        self.error = Some(TcpError::Aborted);
        self.enter_closed();
    }

    /// Starts or stops recording trace events (see [`take_trace`](Self::take_trace)).
    pub fn set_tracing(&mut self, on: bool) {
        self.trace = if on { Some(Vec::new()) } else { None };
    }
    /// Moves the recorded trace events into `out`.
    pub fn take_trace(&mut self, out: &mut Vec<TraceEvent>) {
        if let Some(t) = self.trace.as_mut() {
            out.append(t);
        }
    }

    /// Counters and the current state, in the spirit of Linux's TCP_INFO.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        s.state = self.state;
        s.cwnd_bytes = self.cc.cwnd();
        s.ssthresh_bytes = self.cc.ssthresh();
        s.srtt = self.rtt.srtt();
        s.rttvar = self.rtt.rttvar();
        s.rto = self.rtt.rto();
        s.min_rtt = self.rtt.min_rtt();
        s.snd_mss = self.snd_mss;
        s.snd_wnd_bytes = self.snd_wnd;
        s.rcv_wnd_bytes = self.recv_buf.window() as u32;
        s.flight_bytes = self.flight();
        s.in_recovery = self.rec.in_recovery();
        s.sack_enabled = self.sack_ok;
        s.timestamps_enabled = self.ts_ok;
        s.snd_wscale = self.snd_wscale;
        s.rcv_wscale = self.rcv_wscale;
        s
    }

    /// Sender state for tests and tools: (snd_una, snd_nxt, snd_max).
    pub fn send_sequence(&self) -> (SeqNum, SeqNum, SeqNum) {
        (self.snd_una, self.snd_nxt, self.snd_max)
    }
    /// Receiver state: (rcv_nxt, advertised right edge).
    pub fn recv_sequence(&self) -> (SeqNum, SeqNum) {
        (self.rcv_nxt, self.rcv_adv)
    }
    /// The congestion window in bytes, as the congestion controller holds it (without the
    /// fast-recovery inflation, [`Recovery::extra_window`]). `u32::MAX` with
    /// [`CongestionAlgorithm::None`].
    pub fn cwnd(&self) -> u32 {
        self.cc.cwnd()
    }
    /// The slow-start threshold in bytes, as the congestion controller holds it (for AIMD
    /// and CUBIC, [`TcpConfig::initial_ssthresh`] until the first loss).
    pub fn ssthresh(&self) -> u32 {
        self.cc.ssthresh()
    }
    /// The RTT estimator: smoothed RTT, deviation, the RTO and its backoff.
    pub fn rtt_estimator(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The loss-recovery state: duplicate-ACK count, recovery episode, SACK scoreboard.
    pub fn recovery(&self) -> &Recovery {
        &self.rec
    }
    /// Payload bytes per full-sized segment we send.
    pub fn mss(&self) -> u32 {
        self.snd_mss
    }

    /// Checks the invariants every state must keep (for fuzzing and property tests):
    /// SND.UNA <= SND.NXT <= SND.MAX, nothing outstanding beyond the buffered data plus SYN
    /// and FIN, the receive buffer within its capacity, the advertised edge not behind
    /// RCV.NXT, and every armed timer within its longest possible delay of `now`.
    pub fn check_invariants(&self, now: Instant) -> Result<(), String> {
        if self.snd_una > self.snd_nxt {
            return Err(format!(
                "snd_una {} > snd_nxt {}",
                self.snd_una, self.snd_nxt
            ));
        }
        if self.snd_nxt > self.snd_max {
            return Err(format!(
                "snd_nxt {} > snd_max {}",
                self.snd_nxt, self.snd_max
            ));
        }
        let outstanding = self.snd_max.since(self.snd_una) as usize;
        if outstanding > self.send_buf.len() + 2 {
            return Err(format!(
                "{outstanding} bytes outstanding but only {} buffered",
                self.send_buf.len()
            ));
        }
        if self.send_buf.len() > self.send_buf.capacity() {
            return Err("send buffer over capacity".into());
        }
        if self.recv_buf.len() + self.recv_buf.window() != self.recv_buf.capacity() {
            return Err("receive buffer accounting broken".into());
        }
        if self.state.is_synchronized() && self.rcv_adv < self.rcv_nxt {
            return Err(format!(
                "rcv_adv {} behind rcv_nxt {}",
                self.rcv_adv, self.rcv_nxt
            ));
        }
        if self.cc.cwnd() == 0 {
            return Err("cwnd is zero".into());
        }
        let longest = self
            .cfg
            .rtt
            .max_rto
            .max(self.cfg.time_wait)
            .max(self.cfg.persist_max)
            .max(self.cfg.ack.delayed_ack)
            .max(self.rtt.rto());
        if let Some(t) = self.poll_timeout() {
            if t.saturating_since(now) > longest {
                return Err(format!("timer {t:?} too far beyond {now:?}"));
            }
        }
        if self.state == State::Closed && self.poll_timeout().is_some() {
            return Err("timer armed in CLOSED".into());
        }
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Timers

    /// Whether, since the last call, a timer was armed earlier than the time given to
    /// `set_heap_deadline` (any timer, if none was given): only then must a driver that keeps
    /// deadlines in a heap look at `poll_timeout`.
    #[inline]
    pub fn take_timer_armed(&mut self) -> bool {
        self.timers.take_armed_early()
    }

    /// Tells the connection when its driver's timer heap will next look at it (`None`:
    /// never), so arming a later timer needs no look (`take_timer_armed`).
    #[inline]
    pub fn set_heap_deadline(&self, t: Option<Instant>) {
        self.timers.set_heap_deadline(t);
    }

    /// The earliest armed timer (retransmission, persist, delayed ACK or TIME-WAIT), or
    /// `None` when none is. When the time reaches it, call
    /// [`handle_timeout`](Self::handle_timeout). Any call that takes `now` or changes the
    /// connection may move it.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.cfg.ack.delayed_ack_clock {
            self.timers.earliest(Some(self.delack_deadline()))
        } else {
            self.timers.earliest(None)
        }
    }

    /// Runs the timers due at `now`; the others are left alone, so an early call is
    /// harmless.
    ///
    /// - TIME-WAIT ends: CLOSED.
    /// - Delayed ACK: an ACK is due.
    /// - Retransmission timeout (RFC 6298 §5): the RTO backs off, the congestion controller
    ///   responds, and sending goes back to SND.UNA (go-back-N, as 4.3BSD); after more than
    ///   [`TcpConfig::max_retransmits`] timeouts in a row (or the user timeout) the
    ///   connection gives up with [`TcpError::TimedOut`]. In the handshake the SYN (or
    ///   SYN,ACK) is resent, up to [`TcpConfig::max_syn_retransmits`].
    /// - Persist timer: a zero-window probe (RFC 9293 §3.8.6.1, with backoff), or the
    ///   RFC 9293 §3.8.6.2.1 override that sends data sender SWS avoidance held back.
    ///
    /// What the timers queue goes out on the following `poll_transmit` calls.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.timers.take_due(Timer::TimeWait, now) {
            self.enter_closed();
            self.set_state(now, State::Closed);
            return;
        }
        if self.delack_deadline().is_some_and(|t| t <= now) {
            self.timers.cancel(Timer::DelayedAck);
            if self.unacked_segs > 0 || self.unacked_bytes > 0 {
                self.ack_now = true;
                self.stats.delayed_acks_out += 1;
            }
        }
        if self.timers.take_due(Timer::Rto, now) {
            self.on_rto(now);
        }
        if self.timers.take_due(Timer::Persist, now) {
            // RFC 1122 4.2.2.17: a peer that answers our probes may keep its window closed
            // for ever; one that answers nothing is gone, and its probes count against the
            // retry limit as retransmissions do (an answer is any segment since the last
            // probe).
            if self.stats.segs_in == self.probe_segs_in_mark && self.stats.window_probes > 0 {
                self.probes_unanswered += 1;
                self.stats.probes_unanswered += 1;
            } else {
                self.probes_unanswered = 0;
            }
            self.probe_segs_in_mark = self.stats.segs_in;
            if self.probes_unanswered > self.cfg.max_retransmits || self.user_timed_out(now) {
                self.give_up(now);
                return;
            }
            // RFC 9293 §3.8.6.1: probe the zero window, backing off.
            self.probe_now = true;
            if self.snd_wnd == 0 {
                self.persist_shift = (self.persist_shift + 1).min(16);
            }
        }
        self.update_timers(now);
        self.refresh_prediction();
    }

    /// RFC 5482: sent data unacknowledged for longer than the user timeout.
    fn user_timed_out(&self, now: Instant) -> bool {
        self.cfg.user_timeout.is_some_and(|uto| {
            self.snd_max > self.snd_una && now.saturating_since(self.progress_at) >= uto
        })
    }

    /// RFC 9293 §3.8.3 R2 (and the user timeout): give up; tell the peer if it thinks we
    /// are connected.
    fn give_up(&mut self, now: Instant) {
        if self.state.is_synchronized() {
            self.rst_pending = Some(RstRequest {
                seq: self.snd_max,
                ack: self.rcv_nxt,
                with_ack: false,
            });
        }
        self.error = Some(TcpError::TimedOut);
        self.enter_closed();
        self.set_state(now, State::Closed);
    }

    fn on_rto(&mut self, now: Instant) {
        self.rto_count += 1;
        self.stats.timeouts += 1;
        let limit = match self.state {
            State::SynSent | State::SynReceived => self.cfg.max_syn_retransmits,
            _ => self.cfg.max_retransmits,
        };
        if self.rto_count > limit || self.user_timed_out(now) {
            self.give_up(now);
            return;
        }
        self.rtt.on_timeout();
        // Karn: the timed segment is being resent, so its sample would be ambiguous.
        // (4.3BSD before Karn kept timing it: `karn = false`.)
        if self.rtt.config().karn {
            self.rtt_timed = None;
        }
        match self.state {
            State::SynSent | State::SynReceived => {
                self.syn_pending = true;
            }
            _ => {
                let ev = self.congestion_event(now);
                // One response per congestion event: a timeout during a recovery episode
                // keeps the ssthresh that episode set, rather than halving a FlightSize that
                // grew while SACKs clocked out new data past the lost retransmission (as
                // Linux does; RFC 5681 §3.1 already keeps ssthresh on a repeated timeout).
                let first = self.rto_count == 1 && !self.rec.in_recovery();
                self.cc.on_rto(&ev, first);
                self.rec.on_rto(self.snd_max);
                // Go back N: resend from the first unacknowledged byte (4.3BSD, RFC 5681
                // §3.1 "retransmit from snd_una in slow start").
                self.snd_nxt = self.snd_una;
                self.rto_retransmit_ts = Some(self.ts_now(now));
            }
        }
        self.emit(now, TraceKind::Timeout);
        // The timer is re-armed by the retransmission in `poll_transmit`.
    }

    // ------------------------------------------------------------------------------------
    // Input

    /// Processes one segment addressed to this connection. Malformed, out-of-window and
    /// checksum-failing segments are counted and dropped; none of them can panic or corrupt
    /// the stream.
    ///
    /// The caller has matched the segment to this connection (its `dst` is
    /// [`local`](Self::local), its `src` [`remote`](Self::remote)); the addresses are not
    /// checked again. Drain [`poll_transmit`](Self::poll_transmit) afterwards: an ACK, data
    /// or a retransmission may be due.
    pub fn handle_segment(&mut self, now: Instant, seg: &Segment<'_>) {
        self.now = now;
        // Header prediction first, inlined here so that a predicted segment pays for no
        // call and no general-path prologue (the seeds' Sep 1993 fast path).
        // Each outcome ends in a tail call, so this function needs no stack frame.
        debug_assert_eq!(self.hp_ready, self.prediction_allowed());
        if self.hp_ready != 0 {
            match self.header_prediction(seg) {
                Prediction::Ack { wnd } => return self.predicted_ack(now, seg, wnd),
                Prediction::Data { wnd } => return self.predicted_data(now, seg, wnd),
                Prediction::Miss => {}
            }
        }
        self.handle_segment_general(now, seg);
    }

    /// Everything header prediction did not take.
    #[inline(never)]
    fn handle_segment_general(&mut self, now: Instant, seg: &Segment<'_>) {
        self.input_general(now, seg);
        self.refresh_prediction();
    }

    #[inline(always)]
    fn input_general(&mut self, now: Instant, seg: &Segment<'_>) {
        if self.state == State::Closed || self.state == State::Listen {
            return;
        }
        self.stats.segs_in += 1;
        if self.cfg.header_prediction {
            // `header_prediction` already declined this segment (it changes nothing when
            // it does).
            self.stats.hp_misses += 1;
        }
        if let SegmentChecksum::Pending { header_sum } = seg.checksum {
            if checksum::add(header_sum, checksum::sum(seg.payload)) != 0xffff {
                self.stats.bad_checksum += 1;
                return;
            }
        }
        if !seg.payload.is_empty() {
            self.stats.data_segs_in += 1;
        }
        if self.state == State::SynSent {
            self.input_syn_sent(now, seg);
        } else {
            self.input_synchronized(now, seg);
        }
        self.update_timers(now);
    }

    /// The seeds' header prediction (Sep 1993 message; 4.3BSD-Reno tcp_input): in
    /// ESTABLISHED, a segment with only ACK set, exactly at RCV.NXT, while we are not
    /// retransmitting or recovering, is either a pure ACK for new data or pure in-order data.
    /// Both skip the general checks and run the same updates the general path would, so the
    /// outcome is identical (a property test compares them).
    ///
    /// One deliberate difference from 4.3BSD: BSD also required the advertised window to be
    /// unchanged (`tiwin == tp->snd_wnd`), because its window-update code was long. Ours is
    /// the three-line RFC 9293 rule, run here as on the general path; requiring an unchanged
    /// window would send most ACKs down the slow path, since a receiver that acknowledges
    /// before its application reads advertises a slightly different window each time. A
    /// zero window still takes the general path (the persist logic).
    ///
    /// Changes nothing: says which of the two cases the segment is, if either, and the
    /// window it advertises (scaled). The caller has tested `hp_ready`.
    #[inline(always)]
    fn header_prediction(&self, seg: &Segment<'_>) -> Prediction {
        const CHECKED: TcpFlags = TcpFlags::SYN
            .union(TcpFlags::FIN)
            .union(TcpFlags::RST)
            .union(TcpFlags::URG)
            .union(TcpFlags::ACK);
        // `hp_ready` (tested by the caller) covers ESTABLISHED, SND.NXT = SND.MAX, no probe
        // due, no duplicate ACKs counted and no recovery episode; `only_timestamps` that the
        // segment carries no MSS, window scale, SACK-permitted or SACK option.
        if seg.flags & CHECKED != TcpFlags::ACK || seg.seq != self.rcv_nxt || !seg.only_timestamps()
        {
            return Prediction::Miss;
        }
        let wnd = u32::from(seg.window) << self.snd_wscale;
        if wnd == 0 {
            return Prediction::Miss;
        }
        // Timestamps: present exactly when negotiated, and not older than TS.Recent (the
        // PAWS test would otherwise have to run).
        match (self.ts_ok, seg.options.timestamps) {
            (true, Some(ts)) if ts_geq(ts.tsval, self.ts_recent) => {}
            (false, None) => {}
            _ => return Prediction::Miss,
        }
        if seg.payload.is_empty() {
            if !(seg.ack > self.snd_una && seg.ack <= self.snd_max) {
                return Prediction::Miss;
            }
            Prediction::Ack { wnd }
        } else {
            // `HP_DATA`: nothing held out of order, no FIN waiting for the data before it.
            if seg.ack != self.snd_una
                || self.hp_ready & HP_DATA == 0
                || seg.payload.len() > self.recv_buf.window()
            {
                return Prediction::Miss;
            }
            Prediction::Data { wnd }
        }
    }

    /// Header prediction's pure ACK for new data: what `input_ack` would do for it.
    #[inline(never)]
    fn predicted_ack(&mut self, now: Instant, seg: &Segment<'_>, wnd: u32) {
        self.stats.segs_in += 1;
        // A predicted segment counts as a hit even if its checksum then fails.
        self.stats.hp_ack_hits += 1;
        if let SegmentChecksum::Pending { header_sum } = seg.checksum {
            if header_sum != 0xffff {
                self.stats.bad_checksum += 1;
                return;
            }
        }
        self.process_new_ack(now, seg);
        self.update_send_window(seg.seq, seg.ack, wnd);
        self.update_ts_recent(now, seg);
        self.update_timers(now);
    }

    /// Header prediction's in-order data: the seed's "pure in-sequence data packet" case.
    /// The caller has checked that the ACK acknowledges nothing new, nothing is held out of
    /// order, and the data fits the window.
    #[inline(never)]
    fn predicted_data(&mut self, now: Instant, seg: &Segment<'_>, wnd: u32) {
        let len = seg.payload.len();
        self.stats.segs_in += 1;
        self.stats.hp_data_hits += 1;
        match seg.checksum {
            SegmentChecksum::Pending { header_sum } if self.cfg.checksum_and_copy => {
                // Checksum-and-copy: one pass moves and sums the data; the bytes become
                // readable only if the sum verifies.
                // (`stage_with_sum` without its tests: the caller made them.)
                let sum = self.recv_buf.stage_fitting_with_sum(seg.payload);
                if checksum::add(header_sum, sum) != 0xffff {
                    self.stats.bad_checksum += 1;
                    return;
                }
                self.recv_buf.commit_fitting(len);
            }
            SegmentChecksum::Pending { header_sum } => {
                if checksum::add(header_sum, checksum::sum(seg.payload)) != 0xffff {
                    self.stats.bad_checksum += 1;
                    return;
                }
                let _ = self.recv_buf.insert(0, seg.payload);
            }
            SegmentChecksum::Verified => {
                let _ = self.recv_buf.insert(0, seg.payload);
            }
        }
        self.stats.data_segs_in += 1;
        self.rec.on_other_ack_quiet();
        self.update_send_window(seg.seq, seg.ack, wnd);
        self.update_ts_recent(now, seg);
        self.advance_rcv_nxt(len as u32);
        self.stats.bytes_received += len as u64;
        self.ack_policy_on_data(now, len);
        self.update_timers_open(now, false);
    }

    fn input_syn_sent(&mut self, now: Instant, seg: &Segment<'_>) {
        let f = seg.flags;
        // RFC 9293 §3.10.7.3, first: the ACK must acknowledge our SYN.
        let ack_ok = if f.contains(TcpFlags::ACK) {
            if seg.ack <= self.iss || seg.ack > self.snd_max {
                if !f.contains(TcpFlags::RST) {
                    self.queue_rst(seg.ack, SeqNum::new(0), false);
                }
                return;
            }
            true
        } else {
            false
        };
        // Second: RST. Acceptable only with an acceptable ACK: the connection is refused.
        if f.contains(TcpFlags::RST) {
            self.stats.rst_in += 1;
            if ack_ok {
                self.error = Some(TcpError::Refused);
                self.enter_closed();
                self.set_state(now, State::Closed);
            }
            return;
        }
        // Fourth: SYN.
        if !f.contains(TcpFlags::SYN) {
            return;
        }
        self.irs = seg.seq;
        self.rcv_nxt = seg.seq + 1u32;
        self.take_syn_options(now, seg);
        if ack_ok {
            // Our SYN is acknowledged: ESTABLISHED. The window of a SYN is never scaled.
            self.snd_wnd = u32::from(seg.window);
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = seg.seq;
            self.snd_wl2 = seg.ack;
            self.ack_syn(now, seg.ack);
            self.set_state(now, State::Established);
            self.ack_now = true;
            if !seg.payload.is_empty() {
                self.deliver_data(now, seg.seq + 1u32, seg.payload);
            }
            if f.contains(TcpFlags::FIN) {
                self.receive_fin(now, seg.seq + 1u32 + seg.payload.len());
            }
        } else {
            // Simultaneous open (RFC 9293 Figure 7): SYN-RECEIVED, send SYN,ACK.
            self.snd_wnd = u32::from(seg.window);
            self.max_snd_wnd = self.snd_wnd;
            self.snd_wl1 = seg.seq;
            self.set_state(now, State::SynReceived);
            self.syn_pending = true;
            if !seg.payload.is_empty() {
                self.deliver_data(now, seg.seq + 1u32, seg.payload);
            }
        }
    }

    /// Our SYN was acknowledged: take the RTT sample of the handshake and move the send
    /// sequence past the SYN.
    fn ack_syn(&mut self, now: Instant, ack: SeqNum) {
        if let Some((end, t0)) = self.rtt_timed {
            if ack >= end {
                self.take_rtt_sample(now, now - t0);
                self.rtt_timed = None;
            }
        }
        if self.rto_count > 0 {
            // RFC 6298 §5.7: a SYN timed out, so start data transfer with RTO >= 3 s.
            self.rtt.on_syn_timeout_recovered();
        }
        self.rto_count = 0;
        self.rtt.reset_backoff();
        self.snd_una = ack;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.timers.cancel(Timer::Rto);
        // The first congestion window and, per RFC 5681 §3.1, ssthresh stay as configured.
        let mss = self.snd_mss;
        match self.cfg.congestion {
            CongestionAlgorithm::None => {}
            // The fixed window is counted in segments of the negotiated MSS.
            CongestionAlgorithm::Fixed => self.cc = make_cc(&self.cfg, mss),
            _ => self.cc.set_cwnd(self.cfg.initial_window.bytes(mss)),
        }
    }

    fn take_syn_options(&mut self, now: Instant, seg: &Segment<'_>) {
        let o = &seg.options;
        let peer_mss = o.mss.map(u32::from).unwrap_or(DEFAULT_MSS);
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ws_ok = self.cfg.window_scale && o.window_scale.is_some();
        if self.ws_ok {
            self.snd_wscale = o.window_scale.unwrap_or(0).min(MAX_WSCALE);
            self.rcv_wscale = wscale_for(self.cfg.recv_buffer_bytes);
        } else {
            self.snd_wscale = 0;
            self.rcv_wscale = 0;
        }
        if let (true, Some(ts)) = (self.ts_ok, o.timestamps) {
            self.ts_recent = ts.tsval;
            self.ts_recent_age = now;
        }
        let ts_len = if self.ts_ok { TS_OPTION_LEN } else { 0 };
        self.snd_mss = u32::from(self.cfg.mss)
            .min(peer_mss)
            .saturating_sub(ts_len)
            .max(1);
        self.set_rcv_mss(u32::from(self.cfg.mss).saturating_sub(ts_len).max(1));
        // Before the handshake completes the controller was built for the configured MSS;
        // rebuild it for the one negotiated.
        self.cc = make_cc(&self.cfg, self.snd_mss);
        self.last_ack_sent = seg.seq + 1u32;
        self.rcv_adv = self.rcv_nxt;
    }

    fn input_synchronized(&mut self, now: Instant, seg: &Segment<'_>) {
        let f = seg.flags;
        // RFC 7323 §3.2: once negotiated, a non-RST segment without timestamps is dropped.
        if self.ts_ok && seg.options.timestamps.is_none() && !f.contains(TcpFlags::RST) {
            self.stats.malformed += 1;
            return;
        }
        // PAWS (RFC 7323 §5.3): a timestamp older than TS.Recent marks an old duplicate.
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if !f.contains(TcpFlags::RST)
                && !ts_geq(ts.tsval, self.ts_recent)
                && now.saturating_since(self.ts_recent_age) < PAWS_IDLE
            {
                self.stats.paws_drops += 1;
                self.ack_invalid(now, seg);
                return;
            }
        }
        // In SYN-RECEIVED a retransmitted SYN means our SYN,ACK was lost: resend it.
        if self.state == State::SynReceived
            && f.contains(TcpFlags::SYN)
            && !f.contains(TcpFlags::ACK)
            && seg.seq == self.irs
        {
            self.syn_pending = true;
            return;
        }

        // First: the acceptability test (RFC 9293 §3.10.7.4), and trimming to the window.
        let rcv_wnd = self.rcv_window_now();
        let seg_len = seg.payload.len() as u32
            + u32::from(f.contains(TcpFlags::SYN))
            + u32::from(f.contains(TcpFlags::FIN));
        let acceptable = match (seg_len, rcv_wnd) {
            (0, 0) => seg.seq == self.rcv_nxt,
            // A deliberate departure from RFC 9293 (RCV.NXT <= SEG.SEQ < RCV.NXT+RCV.WND):
            // a segment without data exactly at the right edge is accepted, as 4.3BSD's
            // tcp_input (it trims only what lies beyond) and Linux's tcp_sequence do. It
            // carries nothing beyond the window, and a peer that filled our window and lost
            // that data sends its ACKs from there: rejecting them drops acknowledgments and
            // left a listener in SYN-RECEIVED while its client thought itself established.
            (0, w) => seg.seq.in_range(self.rcv_nxt, w + 1),
            (_, 0) => false,
            (l, w) => {
                seg.seq.in_range(self.rcv_nxt, w) || (seg.seq + (l - 1)).in_range(self.rcv_nxt, w)
            }
        };
        if !acceptable {
            // A zero window still processes ACKs, RSTs and URGs of segments at RCV.NXT
            // (RFC 9293: "special allowance should be made to accept valid ACKs").
            let zero_window_ok = rcv_wnd == 0 && seg.seq == self.rcv_nxt;
            if !zero_window_ok {
                if !f.contains(TcpFlags::RST) {
                    self.stats.out_of_window += 1;
                    if seg_len > 0 && seg.seq < self.rcv_nxt {
                        self.stats.duplicate_segs_in += 1;
                    }
                    if f.contains(TcpFlags::SYN) {
                        // RFC 5961 §4.2: a SYN "irrespective of the sequence number" draws a
                        // challenge ACK, under the challenge-ACK limit.
                        self.challenge_ack(now);
                    } else {
                        self.ack_invalid(now, seg);
                    }
                    // A retransmitted FIN in TIME-WAIT restarts the 2 MSL timer.
                    if self.state == State::TimeWait && f.contains(TcpFlags::FIN) {
                        self.timers.set(Timer::TimeWait, now + self.cfg.time_wait);
                    }
                }
                return;
            }
        }

        // Second: RST (RFC 5961 §3.2).
        if f.contains(TcpFlags::RST) {
            self.stats.rst_in += 1;
            if seg.seq == self.rcv_nxt {
                self.on_reset(now);
            } else {
                self.challenge_ack(now);
            }
            return;
        }

        // Fourth: SYN in a synchronized state: challenge ACK, never a reset (RFC 5961 §4.2).
        if f.contains(TcpFlags::SYN) {
            self.challenge_ack(now);
            return;
        }

        // Fifth: the ACK field.
        if !f.contains(TcpFlags::ACK) {
            return;
        }
        if let Flow::Drop = self.input_ack(now, seg) {
            return;
        }
        if self.state == State::Closed {
            return;
        }

        // Timestamps: remember the peer's clock for the echo (RFC 7323 §4.3).
        self.update_ts_recent(now, seg);

        // Seventh: the segment text.
        if !seg.payload.is_empty() {
            match self.state {
                State::Established | State::FinWait1 | State::FinWait2 => {
                    self.deliver_data(now, seg.seq, seg.payload);
                }
                _ => {
                    // CLOSE-WAIT and later: the peer already sent its FIN; ignore text.
                }
            }
        }

        // Eighth: FIN.
        if f.contains(TcpFlags::FIN) {
            match self.state {
                State::SynReceived | State::Established | State::FinWait1 | State::FinWait2 => {
                    self.receive_fin(now, seg.seq + seg.payload.len());
                }
                State::CloseWait | State::Closing | State::LastAck => {
                    self.ack_now = true;
                }
                State::TimeWait => {
                    self.ack_now = true;
                    self.timers.set(Timer::TimeWait, now + self.cfg.time_wait);
                }
                _ => {}
            }
        }
    }

    /// The ACK field of a segment in a synchronized state.
    fn input_ack(&mut self, now: Instant, seg: &Segment<'_>) -> Flow {
        let ack = seg.ack;
        if self.state == State::SynReceived {
            // RFC 9293: SND.UNA < SEG.ACK <= SND.NXT moves to ESTABLISHED.
            if ack > self.snd_una && ack <= self.snd_max {
                self.snd_wnd = u32::from(seg.window) << self.snd_wscale;
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.snd_wl1 = seg.seq;
                self.snd_wl2 = ack;
                self.ack_syn(now, ack);
                let next = if self.fin_queued {
                    State::FinWait1
                } else {
                    State::Established
                };
                self.set_state(now, next);
            } else {
                self.queue_rst(ack, SeqNum::new(0), false);
                return Flow::Drop;
            }
        }
        // RFC 5961 §5.2: acceptable iff SND.UNA - MAX.SND.WND <= SEG.ACK <= SND.NXT
        // (we use SND.MAX: after go-back-N, ACKs up to what was sent are valid).
        if ack > self.snd_max {
            self.stats.out_of_window += 1;
            // Rate-limited whatever the segment carries: it is dropped either way.
            if self.invalid_ack_allowed(now) {
                self.ack_now = true;
            }
            return Flow::Drop;
        }
        if ack < self.snd_una - self.max_snd_wnd.max(1) {
            self.stats.out_of_window += 1;
            self.challenge_ack(now);
            return Flow::Drop;
        }
        let wnd = u32::from(seg.window) << self.snd_wscale;
        if self.sack_ok {
            // RFC 6675 Update(), before the duplicate-ACK logic reads IsLost.
            self.rec
                .on_sack_blocks(ack.max(self.snd_una), self.snd_max, &seg.options.sack);
        }
        if ack <= self.snd_una {
            // RFC 5681 §2: a duplicate ACK acknowledges nothing new, carries no data, no
            // SYN/FIN, the same window, while data is outstanding.
            let is_dup = ack == self.snd_una
                && seg.payload.is_empty()
                && !seg.flags.intersects(TcpFlags::SYN.union(TcpFlags::FIN))
                && wnd == self.snd_wnd
                && self.snd_max > self.snd_una
                && self.timers.is_armed(Timer::Rto);
            if is_dup {
                self.on_dupack(now, seg);
            } else {
                self.rec.on_other_ack();
            }
        } else {
            self.process_new_ack(now, seg);
        }
        self.update_send_window(seg.seq, ack, wnd);
        // State changes on our FIN being acknowledged.
        let fin_acked = self.fin_queued && self.snd_una > self.fin_seq();
        match self.state {
            State::FinWait1 if fin_acked => self.set_state(now, State::FinWait2),
            State::Closing if fin_acked => self.enter_time_wait(now),
            State::LastAck if fin_acked => {
                self.enter_closed();
                self.set_state(now, State::Closed);
                return Flow::Drop;
            }
            _ => {}
        }
        Flow::Continue
    }

    /// Window update (RFC 9293 §3.10.7.4): only from segments newer than the last update.
    #[inline(always)]
    fn update_send_window(&mut self, seq: SeqNum, ack: SeqNum, wnd: u32) {
        if self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack) {
            if wnd > self.snd_wnd {
                // The window opened: the persist backoff starts over.
                self.persist_shift = 0;
            }
            self.snd_wnd = wnd;
            self.max_snd_wnd = self.max_snd_wnd.max(wnd);
            self.snd_wl1 = seq;
            self.snd_wl2 = ack;
        }
    }

    fn on_dupack(&mut self, now: Instant, seg: &Segment<'_>) {
        self.stats.dup_acks_in += 1;
        let ev = self.congestion_event(now);
        let (una, max) = (self.snd_una, self.snd_max);
        let outcome = self.rec.on_dupack(una, max, &mut *self.cc, &ev);
        let _ = seg;
        let count = self.rec.dupacks();
        self.emit(now, TraceKind::DupAck { count });
        if outcome == DupAckOutcome::FastRetransmit {
            self.stats.fast_retransmits += 1;
            self.stats.recoveries += u64::from(self.rec.in_recovery());
            // Karn: the retransmission makes the timed segment's sample ambiguous
            // (the diff's "tp->t_rtt = 0").
            if self.rtt.config().karn {
                self.rtt_timed = None;
            }
            self.emit(now, TraceKind::FastRetransmit);
            if self.rec.in_recovery() {
                self.emit(now, TraceKind::RecoveryEnter);
            }
        }
    }

    /// SEG.ACK advanced SND.UNA: RTT, recovery, congestion control, the send buffer.
    fn process_new_ack(&mut self, now: Instant, seg: &Segment<'_>) {
        let ack = seg.ack;
        let prev_una = self.snd_una;
        let flight_before = self.flight();
        let acked = ack.since(prev_una);
        // RTT: from the timestamp echo when negotiated (unambiguous even for
        // retransmissions, RFC 7323 §4), else the timed segment (Karn).
        let mut sample = None;
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if ts.tsecr != 0 {
                let ticks = self.ts_now(now).wrapping_sub(ts.tsecr);
                if ticks < 0x8000_0000 {
                    sample = Some(Duration::from_millis(u64::from(ticks)));
                }
                if let Some(rt) = self.rto_retransmit_ts.take() {
                    // Eifel detection (RFC 3522): the ACK echoes a timestamp older than the
                    // retransmission, so the original arrived and the resend was needless.
                    if ts_geq(rt, ts.tsecr) && rt != ts.tsecr {
                        self.stats.spurious_retransmits += 1;
                        self.emit(now, TraceKind::SpuriousRetransmit);
                    }
                }
            }
            self.rtt_timed = None;
        } else if let Some((end, t0)) = self.rtt_timed {
            if ack >= end {
                sample = Some(now - t0);
                self.rtt_timed = None;
            }
        }
        if let Some(rtt) = sample {
            self.take_rtt_sample(now, rtt);
        } else if !self.rtt.config().karn {
            // 4.3BSD (1986) tcp_input: an ACK of new data ends the backoff (`t_rxtshift =
            // 0`) whether or not it carried a sample; Karn keeps it until a valid sample.
            self.rtt.reset_backoff();
        }
        self.rto_count = 0;

        // Free the acknowledged bytes; SYN and FIN take sequence space but no buffer.
        let data_acked = ack.since(self.buf_seq).min(self.send_buf.len() as u32);
        self.send_buf.consume(data_acked as usize);
        if data_acked > 0 && self.send_blocked {
            self.send_blocked = false;
            self.events |= EV_WRITABLE;
        }
        self.buf_seq += data_acked;
        self.stats.bytes_acked += u64::from(data_acked);
        self.snd_una = ack;
        self.progress_at = now;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let flight_after = self.flight();
        let mss = self.snd_mss;
        let outcome = self
            .rec
            .on_new_ack(prev_una, ack, flight_after, &mut *self.cc, mss, now);
        match outcome {
            NewAckOutcome::Exit => self.emit(now, TraceKind::RecoveryExit),
            NewAckOutcome::PartialAck { .. } => {
                if self.rtt.config().karn {
                    self.rtt_timed = None;
                }
                self.emit(now, TraceKind::PartialAck);
            }
            NewAckOutcome::Normal => {}
        }
        let ev = AckEvent {
            now,
            bytes_acked: acked,
            mss,
            flight_bytes: flight_before,
            rtt: sample,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            in_recovery: self.rec.in_recovery()
                || matches!(outcome, NewAckOutcome::PartialAck { .. }),
        };
        // Reno opens the window on the recovery ACK after the retraction, as 4.3BSD-Reno's
        // tcp_input does; NewReno's full ACK has already set cwnd (RFC 6582 §3.2 step 3).
        let grow = match outcome {
            NewAckOutcome::Exit => self.cfg.recovery == crate::config::RecoveryAlgorithm::Reno,
            _ => true,
        };
        if grow {
            self.cc.on_ack(&ev);
        }
        // RFC 6298 §5.2/5.3: stop the timer when all is acknowledged, else restart it;
        // except that NewReno's later partial ACKs do not (RFC 6582 §3.2 step 4, the
        // "Impatient" variant): a recovery repairing one hole per round trip must not hold
        // off the timer indefinitely.
        let impatient = matches!(outcome, NewAckOutcome::PartialAck { first: false })
            && self.cfg.recovery == crate::config::RecoveryAlgorithm::NewReno;
        if self.snd_una == self.snd_max {
            self.timers.cancel(Timer::Rto);
        } else if !impatient || !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        self.emit(now, TraceKind::Ack { ack });
    }

    fn take_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.rtt.on_sample(rtt);
        self.emit(now, TraceKind::RttSample { rtt });
    }

    /// Stores in-window data, advancing RCV.NXT, and applies the ACK policy.
    fn deliver_data(&mut self, now: Instant, seq: SeqNum, data: &[u8]) {
        // Trim what we already have (left edge) and what lies beyond the buffer (right).
        let (seq, data) = if seq < self.rcv_nxt {
            let skip = self.rcv_nxt.since(seq) as usize;
            if skip >= data.len() {
                self.stats.duplicate_segs_in += 1;
                self.ack_now = true;
                return;
            }
            (self.rcv_nxt, &data[skip..])
        } else {
            (seq, data)
        };
        let offset = seq.since(self.rcv_nxt) as usize;
        let had_ooo = self.recv_buf.has_out_of_order();
        match self.recv_buf.insert(offset, data) {
            Ok(advanced) => {
                self.advance_rcv_nxt(advanced as u32);
                self.stats.bytes_received += advanced as u64;
                if offset > 0 {
                    // RFC 5681 §4.2: an out-of-order segment is acknowledged at once (the
                    // duplicate ACK that drives fast retransmit), with SACK blocks.
                    self.stats.out_of_order_segs_in += 1;
                    self.note_sack_block(seq);
                    self.ack_now = true;
                } else if had_ooo {
                    // "... and an immediate ACK when a segment fills in all or part of a
                    // gap in the sequence space."
                    self.ack_now = true;
                    self.prune_sack_recent();
                } else if advanced < data.len() {
                    // Part of it did not fit (a zero-window probe, or a sender overrunning
                    // the window): answer at once with the window we have (RFC 9293
                    // §3.10.7.4: an unacceptable segment draws an ACK).
                    self.ack_now = true;
                } else {
                    self.ack_policy_on_data(now, data.len());
                }
            }
            Err(_) => {
                self.stats.reassembly_drops += 1;
                self.ack_now = true;
            }
        }
        if let Some(fin) = self.peer_fin {
            if fin == self.rcv_nxt {
                self.receive_fin(now, fin);
            }
        }
    }

    /// Moves RCV.NXT forward. Data (or a FIN) can arrive past the last advertised edge,
    /// e.g. on a SYN before we advertised anything, or a FIN into a zero window; the
    /// advertised edge never lags RCV.NXT.
    fn advance_rcv_nxt(&mut self, n: u32) {
        // In-order data or the FIN: either way a read now returns something (or the end).
        self.events |= EV_READABLE;
        self.rcv_nxt += n;
        if self.rcv_adv < self.rcv_nxt {
            self.rcv_adv = self.rcv_nxt;
        }
    }

    /// The ACK policy for in-order data: ACK every N full-sized segments (N = 2 by default,
    /// RFC 5681 §4.2 and seed 000 Oct 1988; up to 32 as HP-UX's tcp_deferred_ack_max, seed
    /// 002), otherwise within the delayed-ACK time.
    #[inline(always)]
    fn ack_policy_on_data(&mut self, now: Instant, len: usize) {
        if len >= self.rcv_mss as usize {
            self.unacked_segs += 1;
        }
        self.unacked_bytes = self.unacked_bytes.saturating_add(len as u32);
        if self.unacked_segs >= self.ack_every_segs || self.unacked_bytes >= self.ack_every_bytes {
            self.ack_now = true;
        } else if !self.timers.is_armed(Timer::DelayedAck) {
            self.timers.set(Timer::DelayedAck, now + self.cfg.ack.delayed_ack);
        }
    }

    /// When the delayed ACK goes out. Its timer is set `delayed_ack` after the first
    /// unacknowledged segment; with `delayed_ack_clock` the ACK waits instead for the next
    /// tick, after that segment, of the 4.3BSD fast timeout: a clock of period `delayed_ack`
    /// whose phase comes from the connection's timestamp offset, so that connections do not
    /// tick together. (Worked out here, off the per-segment path.)
    #[inline]
    fn delack_deadline(&self) -> Option<Instant> {
        let t = self.timers.get(Timer::DelayedAck)?;
        if !self.cfg.ack.delayed_ack_clock {
            return Some(t);
        }
        let period = self.cfg.ack.delayed_ack.as_nanos().max(1);
        let started = t.as_nanos().saturating_sub(period);
        let phase = u64::from(self.ts_offset) * 1_000_000 % period;
        let into = (started + phase) % period;
        Some(Instant::from_nanos(started + (period - into)))
    }

    fn receive_fin(&mut self, now: Instant, fin_seq: SeqNum) {
        if fin_seq != self.rcv_nxt {
            // Out of order: remember it until the data before it arrives.
            if fin_seq > self.rcv_nxt {
                self.peer_fin = Some(fin_seq);
            }
            self.ack_now = true;
            return;
        }
        if self.fin_received {
            self.ack_now = true;
            return;
        }
        self.peer_fin = None;
        self.fin_received = true;
        self.events |= EV_PEER_CLOSED;
        self.advance_rcv_nxt(1);
        self.ack_now = true;
        match self.state {
            State::SynReceived | State::Established => self.set_state(now, State::CloseWait),
            State::FinWait1 => {
                if self.fin_queued && self.snd_una > self.fin_seq() {
                    self.enter_time_wait(now);
                } else {
                    self.set_state(now, State::Closing);
                }
            }
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    fn on_reset(&mut self, now: Instant) {
        // RFC 9293 §3.10.7.4: in SYN-RECEIVED from a passive open the endpoint returns to
        // LISTEN (it drops this connection); everywhere else the user hears "reset".
        self.error = Some(TcpError::Reset);
        self.enter_closed();
        self.set_state(now, State::Closed);
    }

    /// RFC 5961 challenge ACK, rate limited per connection (§7).
    /// An ACK in answer to an invalid segment (out of window, failing PAWS): always for a
    /// segment with data or a FIN (it may be a retransmission whose ACK was lost), at most
    /// one per `invalid_ack_interval` for one without (as Linux's tcp_oow_rate_limited):
    /// such segments answering each other make an ACK storm.
    fn ack_invalid(&mut self, now: Instant, seg: &Segment<'_>) {
        let carries = !seg.payload.is_empty() || seg.flags.contains(TcpFlags::FIN);
        if carries || self.invalid_ack_allowed(now) {
            self.ack_now = true;
        }
    }

    fn invalid_ack_allowed(&mut self, now: Instant) -> bool {
        let interval = self.cfg.invalid_ack_interval;
        match self.last_invalid_ack_at {
            Some(t) if interval > Duration::ZERO && now.saturating_since(t) < interval => {
                self.stats.invalid_acks_suppressed += 1;
                false
            }
            _ => {
                self.last_invalid_ack_at = Some(now);
                true
            }
        }
    }

    fn challenge_ack(&mut self, now: Instant) {
        if now.saturating_since(self.challenge_window_start) >= Duration::from_secs(1) {
            self.challenge_window_start = now;
            self.challenge_count = 0;
        }
        if self.challenge_count < self.cfg.challenge_ack_limit_per_sec {
            self.challenge_count += 1;
            self.stats.challenge_acks += 1;
            self.ack_now = true;
        }
    }

    fn update_ts_recent(&mut self, now: Instant, seg: &Segment<'_>) {
        // RFC 7323 §4.3: "If SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent then
        // TS.Recent = SEG.TSval."
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if ts_geq(ts.tsval, self.ts_recent) && seg.seq <= self.last_ack_sent {
                self.ts_recent = ts.tsval;
                self.ts_recent_age = now;
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // Output

    /// Writes the next packet to send into `buf` and describes it, or returns `None` when
    /// there is nothing to send now. Call it until it returns `None`.
    ///
    /// `buf` must hold [`TcpConfig::mss`] + 80 bytes: the MSS payload plus 40 bytes of
    /// headers and up to 40 of options (a data segment that carries SACK blocks is larger
    /// than the MTU the MSS is derived from). A packet that does not fit is not written and
    /// the call returns `None`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.now = now;
        if let Some(r) = self.rst_pending.take() {
            return self.write_rst(now, buf, r);
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynReceived => {
                if self.syn_pending {
                    return self.send_syn(now, buf);
                }
                if self.state == State::SynSent {
                    return None;
                }
            }
            _ => {}
        }
        if self.can_send_data() {
            if let Some(t) = self.send_data(now, buf) {
                return Some(t);
            }
        }
        if self.ack_now || self.window_update_due() {
            let update = !self.ack_now;
            // From SND.MAX, not SND.NXT (4.3BSD tcp_output): after a timeout pulls SND.NXT
            // back, SND.NXT lies below what the peer may have received, and the peer would
            // find the ACK unacceptable and drop its acknowledgment (RFC 9293 §3.10.7.4).
            let t = self.write_segment(now, buf, self.snd_max, 0, TcpFlags::ACK, false);
            if t.is_some() {
                self.stats.pure_acks_out += 1;
                if update {
                    self.stats.window_updates_out += 1;
                }
            }
            return t;
        }
        // Nothing more to send now: arm the persist timer for a zero window (also after an
        // application write or a probe, which no input follows) or the SWS override.
        self.update_timers_after(now, true);
        None
    }

    fn can_send_data(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        )
    }

    /// Sequence number of our FIN (valid once `fin_queued`).
    fn fin_seq(&self) -> SeqNum {
        self.buf_seq + self.send_buf.len()
    }

    fn flight(&self) -> u32 {
        self.snd_nxt.since(self.snd_una)
    }

    /// The most data the next segment may carry: the send MSS, less the room its SACK
    /// blocks will take. RFC 9293 §3.7.1 limits data plus TCP options to Eff.snd.MSS + 20
    /// bytes of TCP header, and SACK blocks (RFC 2018) ride on data segments too; without
    /// this a two-way transfer with loss sends packets up to 36 bytes over the MTU.
    /// (Timestamps are taken off `snd_mss` once, at the handshake.)
    fn payload_limit(&self) -> u32 {
        if !(self.sack_ok && self.recv_buf.has_out_of_order()) {
            return self.snd_mss;
        }
        let mut options = TcpOptions::NONE;
        if self.ts_ok {
            options.timestamps = Some(Timestamps { tsval: 0, tsecr: 0 });
        }
        let ts_len = options.encoded_len();
        self.fill_sack_blocks(&mut options);
        let sack_len = (options.encoded_len() - ts_len) as u32;
        self.snd_mss.saturating_sub(sack_len).max(1)
    }

    fn send_data(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let mss = self.payload_limit();
        let data_end = self.buf_seq + self.send_buf.len();
        // 1. A retransmission the recovery asked for goes first, whatever the window.
        if let Some(req) = self.rec.take_retransmit() {
            if req.seq >= self.snd_una && req.seq < self.snd_max {
                let t = self.retransmit(now, buf, req.seq, mss);
                if t.is_some() && req.restart_timer {
                    self.timers.set(Timer::Rto, now + self.rtt.rto());
                }
                if t.is_some() {
                    return t;
                }
            }
        }
        // 1b. SACK recovery (RFC 6675 §5 step C): while cwnd - pipe >= 1 SMSS, send what
        // NextSeg chooses.
        let mut sack_usable = None;
        if self.rec.sack_recovery() {
            let thresh = self.rec.threshold();
            let pipe = self.rec.sb.pipe(self.snd_una, self.snd_max, thresh, mss);
            let room = self.cc.cwnd().saturating_sub(pipe);
            if room < mss {
                return None;
            }
            let rwnd_room = (self.snd_una + self.snd_wnd).since(self.snd_nxt);
            let new_ok = data_end.since(self.snd_nxt) > 0 && rwnd_room > 0;
            let recover = self.rec.recover();
            match self
                .rec
                .sb
                .next_seg(self.snd_una, thresh, mss, new_ok, recover)
            {
                Some(NextSeg::Retransmit { seq, len }) => {
                    return self.retransmit(now, buf, seq, len);
                }
                Some(NextSeg::Rescue { seq, len }) => {
                    // RFC 6675 rule 4: "HighRxt MUST NOT be updated" by the rescue, or every
                    // hole found later would wait for the timer.
                    let high_rxt = self.rec.sb.high_rxt;
                    let t = self.retransmit(now, buf, seq, len);
                    self.rec.sb.high_rxt = high_rxt;
                    if t.is_some() {
                        // RFC 6675 rule 4: RescueRxt = RecoveryPoint; HighRxt unchanged.
                        self.rec.sb.rescue_rxt = Some(recover);
                    }
                    return t;
                }
                Some(NextSeg::NewData) => sack_usable = Some(room.min(rwnd_room)),
                None => return None,
            }
        }
        // 2. New data (or the go-back-N resend after a timeout) from SND.NXT.
        if self.cfg.idle_restart
            && self.snd_una == self.snd_max
            && now.saturating_since(self.last_send_at) > self.rtt.rto()
        {
            // RFC 5681 §4.1: after an idle period longer than RTO, restart from the
            // initial window rather than bursting a stale cwnd.
            let rw = self.cfg.initial_window.bytes(mss).min(self.cc.cwnd());
            self.cc.set_cwnd(rw);
            self.emit(now, TraceKind::IdleRestart);
        }
        // Nothing unsent, no probe due and no FIN queued: below, `len` would be 0 and
        // nothing sent. Return before the congestion window is asked (a virtual call), as
        // happens on most calls (every ACK a receiver sends is followed by one).
        if data_end == self.snd_nxt && !self.probe_now && !self.fin_queued {
            return None;
        }
        let cwnd = self.cc.cwnd().saturating_add(self.rec.extra_window());
        let wnd = self.snd_wnd.min(cwnd);
        let flight = self.flight();
        let unsent = data_end.since(self.snd_nxt);
        let usable = sack_usable.unwrap_or_else(|| wnd.saturating_sub(flight));
        let mut len = unsent.min(usable).min(mss);
        let mut forced = false;
        let mut override_sws = false;
        if self.probe_now {
            self.probe_now = false;
            self.refresh_prediction();
            if self.snd_wnd == 0 && unsent > 0 && len == 0 {
                // Zero-window probe: one byte past the window (RFC 9293 §3.8.6.1).
                len = 1;
                forced = true;
                self.stats.window_probes += 1;
            } else if len > 0 {
                // RFC 9293 §3.8.6.2.1 (4): the override timeout expired with data held back
                // by sender SWS avoidance; send what the window allows.
                override_sws = true;
            }
        }
        let fin_here = self.fin_queued && self.snd_nxt + len == self.fin_seq();
        let retransmitting = self.snd_nxt < self.snd_max;
        let send = if len == 0 {
            // A FIN alone needs no window: it is sent once all data is out.
            fin_here
        } else if len == mss || forced || override_sws || retransmitting {
            true
        } else if len == unsent && (!self.cfg.nagle || flight == 0 || fin_here) {
            // RFC 9293 §3.8.6.2.1 (2): pushed data that empties the queue; Nagle holds a
            // small segment while anything is unacknowledged.
            true
        } else {
            // (3) at least half the largest window the peer has offered.
            self.max_snd_wnd > 0 && len >= self.max_snd_wnd / 2
        };
        if !send {
            return None;
        }
        let seq = self.snd_nxt;
        let mut flags = TcpFlags::ACK;
        if fin_here && !forced {
            flags |= TcpFlags::FIN;
        }
        if len > 0 && seq + len == data_end && !self.fin_queued {
            flags |= TcpFlags::PSH;
        }
        let t = self.write_segment(now, buf, seq, len, flags, retransmitting)?;
        let advance = len + u32::from(flags.contains(TcpFlags::FIN));
        if self.snd_una == self.snd_max {
            // Nothing was outstanding: the user timeout counts from now.
            self.progress_at = now;
        }
        if forced {
            // The probe byte is not counted as sent: SND.NXT stays so that the byte is
            // sent normally once the window opens (BSD pulls snd_nxt back the same way),
            // but SND.MAX covers it so the peer may acknowledge it.
            self.snd_max = self.snd_max.max(seq + advance);
            self.refresh_prediction();
        } else {
            if !retransmitting && self.rtt_timed.is_none() && !self.ts_ok && advance > 0 {
                // Time this segment (4.3BSD times one segment per round trip).
                self.rtt_timed = Some((seq + advance, now));
            }
            self.snd_nxt = seq + advance;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            if retransmitting {
                // SND.NXT may have caught up with SND.MAX (it always equals it otherwise).
                self.refresh_prediction();
            }
            if !self.timers.is_armed(Timer::Rto) && advance > 0 {
                self.timers.set(Timer::Rto, now + self.rtt.rto());
            }
        }
        self.last_send_at = now;
        Some(t)
    }

    /// Resends up to `max_len` sequence bytes from `seq` (data, and the FIN if it was sent
    /// right after them), marking it a retransmission.
    fn retransmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        seq: SeqNum,
        max_len: u32,
    ) -> Option<Transmit> {
        let data_end = self.buf_seq + self.send_buf.len();
        // Only bytes that were sent are resent (RFC 5681 §3.2 "the segment that appears to
        // have been lost"): past SND.MAX they would be new data, whose acknowledgment the
        // ACK check below SND.MAX would then refuse.
        let sent_end = if self.snd_max < data_end {
            self.snd_max
        } else {
            data_end
        };
        let len = sent_end.since(seq).min(max_len).min(self.payload_limit());
        let fin = self.fin_queued
            && seq + len == self.fin_seq()
            && self.snd_max > self.fin_seq()
            && max_len > len;
        if len == 0 && !fin {
            return None;
        }
        let mut flags = TcpFlags::ACK;
        if fin {
            flags |= TcpFlags::FIN;
        }
        let t = self.write_segment(now, buf, seq, len, flags, true)?;
        self.rec.on_retransmit_sent(seq, len + u32::from(fin));
        // Karn: a resent segment's timing would be ambiguous.
        if let (Some((end, _)), true) = (self.rtt_timed, self.rtt.config().karn) {
            if seq < end {
                self.rtt_timed = None;
            }
        }
        if !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        Some(t)
    }

    fn send_syn(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let mut flags = TcpFlags::SYN;
        if self.state == State::SynReceived {
            flags |= TcpFlags::ACK;
        }
        let t = self.write_segment(now, buf, self.iss, 0, flags, self.snd_max > self.iss)?;
        self.syn_pending = false;
        if self.snd_max == self.iss {
            self.rtt_timed = Some((self.iss + 1u32, now));
        }
        self.snd_nxt = self.iss + 1u32;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        Some(t)
    }

    /// Builds one segment carrying `len` bytes from `seq` (data from the send buffer) into
    /// `buf`, with the ACK, window and options every segment carries.
    fn write_segment(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        seq: SeqNum,
        len: u32,
        flags: TcpFlags,
        retransmit: bool,
    ) -> Option<Transmit> {
        let has_ack = flags.contains(TcpFlags::ACK);
        let n = if flags.contains(TcpFlags::SYN)
            || (self.sack_ok && has_ack && self.recv_buf.has_out_of_order())
        {
            self.write_headers_general(now, buf, seq, len, flags)?
        } else {
            // Every other segment carries at most the timestamps option: written from the
            // template (`fill_sack_blocks` would add nothing without out-of-order data).
            let ts = self.ts_ok.then(|| (self.ts_now(now), self.ts_recent));
            let window = self.advertise_window(false);
            let ack = if has_ack { self.rcv_nxt.get() } else { 0 };
            let data = if len > 0 {
                let off = seq.since(self.buf_seq) as usize;
                self.send_buf.slices(off, len as usize)
            } else {
                (&[][..], &[][..])
            };
            self.template
                .write(buf, seq.get(), ack, flags, window, ts, self.ip_id, data)
                .ok()?
        };
        self.ip_id = self.ip_id.wrapping_add(1);
        self.stats.segs_out += 1;
        if len > 0 {
            self.stats.data_segs_out += 1;
            self.stats.bytes_sent += u64::from(len);
            if retransmit {
                self.stats.retransmitted_segs += 1;
                self.stats.bytes_retransmitted += u64::from(len);
            }
        }
        if has_ack {
            // Any segment carrying an ACK satisfies the ACK policy.
            self.ack_now = false;
            self.timers.cancel(Timer::DelayedAck);
            self.unacked_segs = 0;
            self.unacked_bytes = 0;
            self.last_ack_sent = self.rcv_nxt;
        }
        if len > 0 || flags.intersects(TcpFlags::SYN.union(TcpFlags::FIN)) {
            self.emit(
                now,
                TraceKind::Send {
                    seq,
                    len,
                    retransmit,
                },
            );
        }
        Some(Transmit {
            len: n,
            seq,
            payload_len: len,
            flags,
            retransmit,
        })
    }

    /// The headers of a SYN, or of an ACK with SACK blocks, built field by field.
    #[inline(never)]
    fn write_headers_general(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        seq: SeqNum,
        len: u32,
        flags: TcpFlags,
    ) -> Option<usize> {
        let syn = flags.contains(TcpFlags::SYN);
        let mut options = TcpOptions::NONE;
        if syn {
            options.mss = Some(self.cfg.mss);
            // A SYN offers what we are configured for; a SYN,ACK may only answer what the
            // peer's SYN offered (RFC 7323 §1.3, RFC 2018 §2).
            let offer = self.state == State::SynSent;
            if self.cfg.window_scale && (offer || self.ws_ok) {
                options.window_scale = Some(wscale_for(self.cfg.recv_buffer_bytes));
            }
            if self.cfg.sack && (offer || self.sack_ok) {
                options.sack_permitted = true;
            }
            if self.cfg.timestamps && (offer || self.ts_ok) {
                options.timestamps = Some(Timestamps {
                    tsval: self.ts_now(now),
                    tsecr: if offer { 0 } else { self.ts_recent },
                });
            }
        } else {
            if self.ts_ok {
                options.timestamps = Some(Timestamps {
                    tsval: self.ts_now(now),
                    tsecr: self.ts_recent,
                });
            }
            if self.sack_ok && flags.contains(TcpFlags::ACK) {
                self.fill_sack_blocks(&mut options);
            }
        }
        let has_ack = flags.contains(TcpFlags::ACK);
        let window = self.advertise_window(syn);
        let header = TcpHeader {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq: seq.get(),
            ack: if has_ack { self.rcv_nxt.get() } else { 0 },
            flags,
            window,
            urgent: 0,
            options,
        };
        let ip = self.ip_header();
        let (a, b) = if len > 0 {
            let off = seq.since(self.buf_seq) as usize;
            self.send_buf.slices(off, len as usize)
        } else {
            (&[][..], &[][..])
        };
        let n = packet::write_ipv4_tcp_vectored(buf, &ip, &header, &[a, b]).ok()?;
        Some(n)
    }

    fn write_rst(&mut self, now: Instant, buf: &mut [u8], r: RstRequest) -> Option<Transmit> {
        let mut flags = TcpFlags::RST;
        if r.with_ack {
            flags |= TcpFlags::ACK;
        }
        let header = TcpHeader {
            src_port: self.local.port(),
            dst_port: self.remote.port(),
            seq: r.seq.get(),
            ack: if r.with_ack { r.ack.get() } else { 0 },
            flags,
            window: 0,
            urgent: 0,
            options: TcpOptions::NONE,
        };
        let ip = self.ip_header();
        let n = packet::write_ipv4_tcp(buf, &ip, &header, &[]).ok()?;
        let _ = now;
        self.stats.segs_out += 1;
        self.stats.rst_out += 1;
        Some(Transmit {
            len: n,
            seq: r.seq,
            payload_len: 0,
            flags,
            retransmit: false,
        })
    }

    fn queue_rst(&mut self, seq: SeqNum, ack: SeqNum, with_ack: bool) {
        self.rst_pending = Some(RstRequest { seq, ack, with_ack });
    }

    fn ip_header(&self) -> Ipv4Header {
        Ipv4Header {
            ttl: self.cfg.ttl,
            identification: self.ip_id,
            ..Ipv4Header::new(
                *self.local.ip(),
                *self.remote.ip(),
                ackclock_wire::IPPROTO_TCP,
            )
        }
    }

    /// The window we can offer now, in bytes, before scaling and SWS avoidance.
    /// RCV.WND for the acceptability test: what we advertised (RFC 9293 §3.10.7.4 and RFC
    /// 5961 §3.2 judge "in window" against RCV.NXT + RCV.WND as sent, not against free
    /// buffer we never offered).
    fn rcv_window_now(&self) -> u32 {
        self.rcv_adv.since(self.rcv_nxt)
    }

    /// The window field for a segment, recording the right edge it advertises.
    fn advertise_window(&mut self, syn: bool) -> u16 {
        let (field, right) = self.window_field(syn);
        if right > self.rcv_adv {
            self.rcv_adv = right;
        }
        field
    }

    /// The window field a segment would carry now, and the right edge it would offer.
    fn window_field(&self, syn: bool) -> (u16, SeqNum) {
        let mut win = self.recv_buf.window() as u32;
        // Receiver SWS avoidance (RFC 9293 §3.8.6.2.2, as 4.3BSD): do not advertise a small
        // window; wait until it is a quarter of the buffer or a full segment.
        let cap = self.recv_buf.capacity() as u32;
        if win < cap / 4 && win < self.rcv_mss {
            win = 0;
        }
        // Never shrink the window: keep the right edge already offered. With scaling the
        // field is rounded up just enough to cover that edge (RFC 7323 §2.4 and Appendix
        // F); fresh window is rounded down so we never offer buffer we lack.
        let edge = self.rcv_adv.since(self.rcv_nxt);
        let shift = if syn { 0 } else { self.rcv_wscale };
        let edge_field = edge.div_ceil(1u32 << shift);
        let field = (win >> shift).max(edge_field).min(65535);
        (field as u16, self.rcv_nxt + (field << shift))
    }

    /// The largest window the 16-bit field can express with our scale.
    fn max_advertisable(&self) -> u32 {
        65535u32 << self.rcv_wscale
    }

    /// BSD's window-update rule: announce when the window can grow by two segments or by
    /// half the buffer since the last advertisement.
    fn window_update_due(&self) -> bool {
        if !matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) || self.fin_received
        {
            return false;
        }
        let win = (self.recv_buf.window() as u32).min(self.max_advertisable());
        let adv = self.rcv_adv.since(self.rcv_nxt);
        let growth = win.saturating_sub(adv);
        // 4.3BSD announces growth of two segments, which is also what made it "deliver one
        // ack for every two data packets"; with ACK avoidance (N > 2) the threshold grows
        // with N so the window update does not undo the policy. Or half the buffer: the
        // smaller of the two is precomputed in `set_rcv_mss`.
        // The update must also move the right edge it advertises: with a tiny buffer the
        // threshold is 0, and growth finer than the window-scale unit or than receiver SWS
        // avoidance lets through cannot be announced (RFC 7323 §2.3, RFC 9293 §3.8.6.2.2);
        // counting it as due would send the same ACK for ever.
        growth >= self.wnd_update_growth && self.window_field(false).1 > self.rcv_adv
    }

    /// Re-arms the RTO and persist timers after input or output changed what is
    /// outstanding.
    #[inline(always)]
    fn update_timers(&mut self, now: Instant) {
        self.update_timers_after(now, false);
    }

    /// Re-arms the timers. `quiescent` means the output path just found nothing it may
    /// send, so data still waiting with nothing in flight is held back by the window.
    #[inline(always)]
    fn update_timers_after(&mut self, now: Instant, quiescent: bool) {
        if self.state == State::Closed {
            self.timers.cancel_transfer_timers();
            return;
        }
        self.update_timers_open(now, quiescent);
    }

    /// [`update_timers_after`](Self::update_timers_after) in a state other than CLOSED
    /// (header prediction runs in ESTABLISHED only).
    #[inline(always)]
    fn update_timers_open(&mut self, now: Instant, quiescent: bool) {
        debug_assert!(self.state != State::Closed);
        let outstanding = self.snd_max > self.snd_una;
        let data_end = self.buf_seq + self.send_buf.len();
        // Both special cases need data waiting to be sent; test that first, since a
        // receiver (the header-prediction data path) usually has none.
        if data_end.since(self.snd_nxt) > 0 {
            if self.snd_wnd == 0 && self.snd_nxt == self.snd_una {
                // Zero window with data waiting: the persist timer replaces the RTO.
                self.timers.cancel(Timer::Rto);
                if !self.timers.is_armed(Timer::Persist) && !self.probe_now {
                    let base = self
                        .rtt
                        .rto()
                        .saturating_mul(1u64 << self.persist_shift.min(16));
                    let t = base.max(self.cfg.persist_min).min(self.cfg.persist_max);
                    self.timers.set(Timer::Persist, now + t);
                }
                return;
            }
            if !outstanding && self.snd_wnd > 0 {
                // Sender SWS avoidance is holding back data and nothing in flight will
                // bring an ACK: RFC 9293 §3.8.6.2.1 (4)'s override timeout (0.1 to 1 s)
                // sends it anyway, as 4.3BSD's persist timer did for a small window.
                if quiescent && !self.timers.is_armed(Timer::Persist) && !self.probe_now {
                    let t = self
                        .rtt
                        .rto()
                        .max(Duration::from_millis(100))
                        .min(Duration::from_secs(1));
                    self.timers.set(Timer::Persist, now + t);
                }
                self.timers.cancel(Timer::Rto);
                return;
            }
        }
        self.timers.cancel(Timer::Persist);
        if !outstanding {
            self.timers.cancel(Timer::Rto);
        } else if !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
    }

    fn enter_time_wait(&mut self, now: Instant) {
        self.set_state(now, State::TimeWait);
        self.timers.cancel(Timer::Rto);
        self.timers.cancel(Timer::Persist);
        self.timers.set(Timer::TimeWait, now + self.cfg.time_wait);
    }

    fn enter_closed(&mut self) {
        // Rings that still hold data stay until the connection is removed.
        self.send_buf.release();
        self.recv_buf.release();
        self.timers.cancel_all();
        self.ack_now = false;
        self.syn_pending = false;
        self.state = State::Closed;
        self.events |= EV_CLOSED;
        self.hp_ready = 0;
    }

    fn set_state(&mut self, now: Instant, to: State) {
        if self.state != to || to == State::Closed {
            match (self.state, to) {
                (State::SynSent, State::Established) => self.events |= EV_CONNECTED,
                (_, State::Closed) => self.events |= EV_CLOSED,
                _ => {}
            }
            self.state = to;
            if matches!(to, State::FinWait2 | State::TimeWait | State::Closed) {
                // Our FIN is acknowledged: nothing more will be sent, the ring can go.
                self.send_buf.release();
            }
            self.refresh_prediction();
            self.emit(now, TraceKind::StateChange { to });
        }
    }

    fn congestion_event(&self, now: Instant) -> CongestionEvent {
        CongestionEvent {
            now,
            mss: self.snd_mss,
            flight_bytes: self.snd_max.since(self.snd_una),
            snd_wnd: self.snd_wnd,
        }
    }

    /// Our timestamp clock: milliseconds plus a per-connection offset (RFC 7323 §5.4).
    fn ts_now(&self, now: Instant) -> u32 {
        ((now.as_nanos() / 1_000_000) as u32).wrapping_add(self.ts_offset)
    }

    fn note_sack_block(&mut self, seq: SeqNum) {
        if !self.sack_ok {
            return;
        }
        // Move `seq` to the front, dropping entries of the same block.
        let off = seq.since(self.rcv_nxt) as usize;
        let this = self.recv_buf.range_containing(off);
        let mut kept = [SeqNum::new(0); 4];
        let mut n = 0;
        kept[n] = seq;
        n += 1;
        for i in 0..self.sack_recent_len {
            let s = self.sack_recent[i];
            if s <= self.rcv_nxt {
                continue;
            }
            let r = self
                .recv_buf
                .range_containing(s.since(self.rcv_nxt) as usize);
            if r.is_none() || r == this {
                continue;
            }
            if n < 4 {
                kept[n] = s;
                n += 1;
            }
        }
        self.sack_recent = kept;
        self.sack_recent_len = n;
    }

    fn prune_sack_recent(&mut self) {
        let mut n = 0;
        for i in 0..self.sack_recent_len {
            let s = self.sack_recent[i];
            if s > self.rcv_nxt
                && self
                    .recv_buf
                    .range_containing(s.since(self.rcv_nxt) as usize)
                    .is_some()
            {
                self.sack_recent[n] = s;
                n += 1;
            }
        }
        self.sack_recent_len = n;
    }

    /// RFC 2018 §4: the first block covers the most recently received segment, the next
    /// ones the most recently reported blocks; at most 3 with timestamps.
    fn fill_sack_blocks(&self, options: &mut TcpOptions) {
        if !self.recv_buf.has_out_of_order() {
            return;
        }
        let max = if options.timestamps.is_some() { 3 } else { 4 };
        let push = |o: &mut TcpOptions, (s, e): (usize, usize)| {
            let b = SackBlock {
                left: (self.rcv_nxt + s).get(),
                right: (self.rcv_nxt + e).get(),
            };
            if o.sack.len() < max && !o.sack.iter().any(|x| *x == b) {
                o.sack.push(b);
            }
        };
        for s in &self.sack_recent[..self.sack_recent_len] {
            if *s > self.rcv_nxt {
                if let Some(r) = self
                    .recv_buf
                    .range_containing(s.since(self.rcv_nxt) as usize)
                {
                    push(options, r);
                }
            }
        }
        for r in self.recv_buf.out_of_order_ranges() {
            push(options, r);
        }
    }

    /// Records a trace event if tracing is on. The test is inlined at every call site (on
    /// every segment sent and ACK processed) and the recording kept out of line.
    #[inline(always)]
    fn emit(&mut self, now: Instant, kind: TraceKind) {
        if self.trace.is_some() {
            self.record(now, kind);
        }
    }

    #[cold]
    #[inline(never)]
    fn record(&mut self, now: Instant, kind: TraceKind) {
        if let Some(t) = self.trace.as_mut() {
            t.push(TraceEvent {
                time: now,
                kind,
                cwnd: self.cc.cwnd(),
                ssthresh: self.cc.ssthresh(),
                srtt: self.rtt.srtt(),
                rttvar: self.rtt.rttvar(),
                rto: self.rtt.rto(),
                snd_una: self.snd_una,
                snd_nxt: self.snd_nxt,
                snd_max: self.snd_max,
                flight: self.snd_nxt.since(self.snd_una),
            });
        }
    }
}

/// `a >= b` for 32-bit timestamps compared modulo 2^32 (RFC 7323 §5.2).
fn ts_geq(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}
