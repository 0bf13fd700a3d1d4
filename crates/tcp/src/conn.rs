//! One TCP connection: the RFC 9293 state machine with the 4BSD algorithms of the seeds.
//!
//! Sans-IO: segments come in through [`Connection::handle_segment`], timers through
//! [`Connection::handle_timeout`]; complete IPv4 packets come out of
//! [`Connection::poll_transmit`], and [`Connection::poll_timeout`] says when to call back.
//! Time is always passed in.
//!
//! The code is split by phase, with no change of logic: this file holds the connection's
//! state, its opening and the application's calls (send, receive, close); `conn/input.rs`
//! the segment-arrival path, `conn/output.rs` the sending path, `conn/ack_policy.rs` when
//! ACKs go out and what they advertise, `conn/timers.rs` the timer table and what each
//! timer does when it fires.
//!
//! Structure of the input path (RFC 9293 §3.10.7 "SEGMENT ARRIVES", in order): header
//! prediction (the seeds' Sep 1993 fast path) first, then the general path: SYN-SENT
//! handling, PAWS (RFC 7323 §5), the acceptability test, RST (RFC 5961 §3), SYN (RFC 5961
//! §4), the ACK (RFC 5961 §5 acceptability, then the send side: RTT, congestion control,
//! recovery, window update), the data, and the FIN.

use crate::cc::{
    AckEvent, Aimd, CcInit, CongestionControl, CongestionEvent, FixedWindow, NoCongestionControl,
};
use crate::config::{CongestionAlgorithm, EcnEcho, RecoveryAlgorithm, TcpConfig, WindowReduction};
use crate::cubic::Cubic;
use crate::ecn_cc::{Dctcp, DecBit};
use crate::prr::Prr;
use crate::rack::Rack;
use crate::recovery::{DupAckOutcome, NewAckOutcome, Recovery};
use crate::recv_buf::RecvBuffer;
use crate::rtt::RttEstimator;
use crate::sack::NextSeg;
use crate::send_buf::SendBuffer;
use crate::seq::SeqNum;
use crate::stats::{Counters, Stats, TraceEvent, TraceKind};
use crate::Segment;
use crate::{
    AcceptError, CloseError, ConnectionError, RecvError, SegmentChecksum, SendError, State,
};
use ackclock_wire::ipv4::ECN_CE;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    checksum, packet, Duration, Instant, Ipv4Header, SackBlock, TcpFlags, TcpHeader, TcpOptions,
};
use core::net::SocketAddrV4;
use output::Resend;
use std::sync::Arc;
use timers::{Timer, Timers};

mod ack_policy;
mod delivery;
mod input;
mod output;
mod pacing;
mod rack;
mod timers;
mod undo;

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
// The layout is a hot/cold split, for a host with many connections, where each cache line
// of a connection that a segment touches is a cache miss: the fields a segment in either
// direction reads or writes (header prediction, the ACK, the output path, the timers, the
// counters every segment updates) lie together in twelve 64-byte lines, between two cold
// parts that only handshakes, losses, SACK holes, ECN reactions and invalid segments
// touch. `repr(C)` keeps the fields in the order written, `align(64)` puts the lines where
// the offsets say. Lines 0 to 4 hold `rec`'s scoreboard; line 5 the recovery's per-ACK
// fields (its last 40 bytes), the controller and the time; line 6 the configuration and
// the timers (all the endpoint's timer heap reads, when an entry of an idle connection
// comes up); lines 7 to 16 the rest of the hot fields, largest alignment first so that no
// padding splits them, then the counters, the per-segment ones first; then the cold
// fields. A test (`the_per_segment_fields_lie_in_twelve_cache_lines`) keeps it so.
// BENCHMARKS.md ("Many connections") has the measurements.
#[repr(C, align(64))]
pub struct Connection {
    // --- congestion control and recovery ---
    /// Cold at its start (the SACK scoreboard, a pending congestion event), hot in its last
    /// 40 bytes (the duplicate-ACK count, the episode, the inflation), where the hot block
    /// begins.
    rec: Recovery,

    // ===== the hot block =====
    cc: Box<dyn CongestionControl>,
    /// The latest time passed in, for events the application triggers (close, abort).
    now: Instant,
    /// Shared with the listener's other connections (one copy per listener, not per
    /// connection: it is read, never written).
    cfg: Arc<TcpConfig>,
    /// Retransmission, persist, delayed-ACK and TIME-WAIT deadlines (`conn/timers.rs`).
    timers: Timers,

    // --- timers ---
    rtt: RttEstimator,
    /// The segment being timed (4.3BSD t_rtseq/t_rtt): its end and when it was sent.
    rtt_timed: Option<(SeqNum, Instant)>,

    send_buf: SendBuffer,
    recv_buf: RecvBuffer,
    trace: Option<Vec<TraceEvent>>,
    last_send_at: Instant,
    /// When the send sequence last made progress (SND.UNA moved, or data became
    /// outstanding), for the user timeout.
    progress_at: Instant,
    ts_recent_age: Instant,

    /// Sequence number of a FIN that arrived out of order.
    peer_fin: Option<SeqNum>,
    /// Receiver, per-packet echo (RFC 8257 §3.2): an ACK of (RCV.NXT, ECE) as they were
    /// before a segment whose mark changed the state, to be sent before anything else.
    ecn_pre_ack: Option<(SeqNum, bool)>,
    /// Our timestamp value of the last retransmission by timeout, for spurious detection.
    rto_retransmit_ts: Option<u32>,
    /// The IPv4 and TCP headers this connection sends, prebuilt (4.3BSD's `tcp_template`):
    /// every segment but SYNs, RSTs and ACKs carrying SACK blocks is written from it.
    template: packet::Ipv4TcpTemplate,
    rst_pending: Option<RstRequest>,
    /// A D-SACK block (RFC 2883), `[left, right)`, for the next ACK to carry first; taken
    /// when that ACK is written. Only with `TcpConfig::dsack` and SACK negotiated.
    dsack: Option<(SeqNum, SeqNum)>,

    // --- send sequence space (RFC 9293 §3.3.1) ---
    snd_una: SeqNum,
    snd_nxt: SeqNum,
    /// Highest sequence number sent + 1 (BSD's snd_max): go-back-N after a timeout pulls
    /// snd_nxt back, snd_max remembers how far we had been.
    snd_max: SeqNum,
    snd_wnd: u32,
    max_snd_wnd: u32,
    snd_wl1: SeqNum,
    snd_wl2: SeqNum,
    /// Sequence number of the first byte in `send_buf`.
    buf_seq: SeqNum,

    // --- receive sequence space ---
    rcv_nxt: SeqNum,
    /// Right edge of the window last advertised (never moved left: RFC 9293 §3.8.6.2.2).
    rcv_adv: SeqNum,
    last_ack_sent: SeqNum,

    // --- negotiated options ---
    /// Payload bytes per full-sized segment we send (SMSS, options accounted).
    snd_mss: u32,
    /// Payload of a full-sized segment from the peer (for the ACK-every-N rule).
    rcv_mss: u32,
    ts_recent: u32,
    /// Offset added to our timestamp clock (RFC 7323 §5.4 suggests a random one).
    ts_offset: u32,

    // --- ACK policy ---
    /// Full-sized segments received since we last sent an ACK.
    unacked_segs: u32,
    unacked_bytes: u32,
    /// The ACK policy's thresholds, computed once from `cfg.ack` and `rcv_mss` (see
    /// `set_rcv_mss`) rather than on every data segment: ACK at once once this many
    /// full-sized segments (0 with quick ACK or no delayed-ACK timer: every segment) ...
    ack_every_segs: u32,
    /// ... or this many bytes are unacknowledged. A data segment counts toward
    /// `ack_every_segs` when it carries at least `ack_count_min` bytes: a full segment
    /// (`rcv_mss`), or any (0) with `AckPolicy::count_small_segments`.
    ack_every_bytes: u32,
    ack_count_min: u32,
    /// Window growth worth announcing on its own (`window_update_due`).
    wnd_update_growth: u32,

    /// Consecutive timeouts (BSD's t_rxtshift).
    rto_count: u32,
    persist_shift: u32,
    ip_id: u16,

    state: State,
    /// Whether header prediction may be tried (`HP_ACK`): it is enabled, the state is
    /// ESTABLISHED, we are not retransmitting (SND.NXT = SND.MAX), no probe is due and the
    /// recovery is quiet (no duplicate ACKs counted,
    /// not recovering, no ECN reduction under PRR, no F-RTO); and for in-order data (`HP_DATA`) also nothing is held out of
    /// order and no FIN is waiting. The seed's prediction tests one state word; this is
    /// that word, recomputed by `refresh_prediction` wherever one of its inputs may
    /// change, so the fast path tests one byte instead of seven fields.
    hp_ready: u8,
    /// `EV_*` bits set since the endpoint last took them (`Endpoint::poll_event`).
    events: u8,
    /// Shift applied to windows the peer advertises.
    snd_wscale: u8,
    /// Shift we apply to the windows we advertise.
    rcv_wscale: u8,
    ts_ok: bool,
    sack_ok: bool,
    /// ECN agreed in the handshake (RFC 3168 §6.1.1).
    ecn_ok: bool,
    /// Receiver: a CE mark arrived and no CWR since; our ACKs carry ECE (§6.1.3).
    ece_pending: bool,
    ack_now: bool,
    /// A `send` took less than it was given, or filled the buffer: space coming back is
    /// worth an event.
    send_blocked: bool,
    /// The application closed its side: a FIN follows the data.
    fin_queued: bool,
    fin_received: bool,
    probe_now: bool,
    /// RFC 8985 RACK detects losses (configured, SACK agreed and SACK recovery in use):
    /// `rack` holds its state.
    rack_on: bool,
    /// The controller models the path from delivery-rate samples
    /// ([`CongestionControl::wants_delivery`]): `rack` holds the transmit log with its
    /// stamps, and the controller hears of every ACK after loss detection
    /// (`conn/delivery.rs`).
    cc_model: bool,
    /// The controller sets the window during a recovery
    /// ([`CongestionControl::owns_recovery_window`]): no PRR, no retraction.
    cc_owns_recovery: bool,
    /// Pacing by Linux's rule for a window-based controller ([`TcpConfig::pacing`]): the
    /// rate follows cwnd / SRTT after every ACK.
    pace_window: bool,
    /// The pacing rate in bytes per second, 0 when not paced (`conn/pacing.rs`).
    pace_rate: u64,
    /// The earliest time the next data segment may go when paced.
    pace_at: Instant,
    /// Data waits for `pace_at`: `poll_timeout` reports it.
    pace_held: bool,

    /// Counters, those of every segment first (the end of the hot block), the others after.
    stats: Counters,

    // ===== cold: handshakes, losses, SACK holes, ECN reactions, invalid segments =====
    /// When an ACK last answered an invalid segment without data (`invalid_ack_interval`).
    last_invalid_ack_at: Option<Instant>,
    challenge_window_start: Instant,
    /// `stats.segs_in` when the last zero-window probe went out (see `probes_unanswered`).
    probe_segs_in_mark: u64,
    sack_recent_len: usize,
    /// Left edges of SACK blocks in most-recently-received order (RFC 2018 §4).
    sack_recent: [SeqNum; 4],
    /// Sender: ECE is not answered again until SND.UNA passes this point (SND.MAX at the
    /// last reduction: one reduction per window of data, §6.1.2); `None` before the first.
    ecn_recover: Option<SeqNum>,
    iss: SeqNum,
    irs: SeqNum,
    /// Bytes that came on the peer's SYN, held in the receive ring (staged at the in-order
    /// edge, not readable, not acknowledged) until the handshake completes (RFC 9293
    /// §3.10.7.2, §3.10.7.3).
    syn_data_held: u32,
    challenge_count: u32,
    /// Zero-window probes in a row that drew no segment at all (an answer is any segment
    /// after the last one, `probe_segs_in_mark`: counting costs the input path nothing).
    probes_unanswered: u32,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    passive: bool,
    ws_ok: bool,
    syn_pending: bool,
    /// Sender: the window was reduced for ECE; the next new data segment carries CWR.
    cwr_pending: bool,
    /// RFC 9937 PRR's state during a fast recovery with [`WindowReduction::Prr`]: cold, read
    /// only while `rec` is in an episode (its hot `in_recovery` is tested first).
    prr: Prr,
    /// PRR runs for an ECN reduction (RFC 9937 §1: the same reduction for ECN's CWR), until
    /// SND.UNA passes `ecn_recover`, rather than for a loss recovery.
    prr_cwr: bool,
    /// What the last reduction changed, while it may still be undone (`conn/undo.rs`).
    undo: Option<undo::Undo>,
    /// F-RTO's step (RFC 5682 §2.1) after a timeout.
    frto: Option<undo::Frto>,
    /// Our timestamp on the fast retransmit that began the current recovery, with `undo`:
    /// Eifel detection (RFC 3522) applied to it (`conn/undo.rs`).
    fr_retransmit_ts: Option<u32>,
    /// RFC 8985 RACK-TLP's per-segment record and state, while `rack_on` or `cc_model`
    /// (boxed: a connection without it pays one pointer).
    rack: Option<Box<Rack>>,
    /// With `cc_model`: `C.delivered` and `C.lost` at the last event, for what an ACK adds.
    model_seen: (u64, u64),
    error: Option<ConnectionError>,
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

/// The controller of a connection whose initial sequence number is `iss` (BBR seeds the
/// random start of its gain cycle with it, so that flows of one configuration differ).
fn make_cc(cfg: &TcpConfig, mss: u32, iss: SeqNum) -> Box<dyn CongestionControl> {
    let init = CcInit {
        mss,
        initial_window: cfg.initial_window.bytes(mss),
        initial_ssthresh: cfg.initial_ssthresh,
    };
    let salt = u64::from(iss.get());
    match &cfg.congestion {
        CongestionAlgorithm::None => Box::new(NoCongestionControl),
        CongestionAlgorithm::Fixed => Box::new(FixedWindow::new(cfg.initial_window.bytes(mss))),
        CongestionAlgorithm::Aimd(a) => Box::new(
            Aimd::new(*a, cfg.initial_window.bytes(mss), cfg.initial_ssthresh)
                .with_hystart(cfg.hystart),
        ),
        CongestionAlgorithm::Cubic(c) => Box::new(
            Cubic::new(*c, mss, cfg.initial_window.bytes(mss), cfg.initial_ssthresh)
                .with_hystart(cfg.hystart),
        ),
        CongestionAlgorithm::Dctcp(c) => Box::new(Dctcp::new(
            *c,
            cfg.initial_window.bytes(mss),
            cfg.initial_ssthresh,
        )),
        CongestionAlgorithm::DecBit(c) => {
            Box::new(DecBit::new(*c, cfg.initial_window.bytes(mss), mss))
        }
        CongestionAlgorithm::Bbr(c) => Box::new(crate::bbr::Bbr::new(
            crate::bbr::BbrConfig {
                seed: c.seed ^ salt,
                ..*c
            },
            init,
        )),
        CongestionAlgorithm::Bbr3(c) => Box::new(crate::bbr3::Bbr3::new(
            crate::bbr3::Bbr3Config {
                seed: c.seed ^ salt,
                ..*c
            },
            init,
        )),
        CongestionAlgorithm::Custom(f) => f.build(init),
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

/// The shift our SYN or SYN-ACK offers: the configured one (at most 14, RFC 7323 §2.3),
/// else the one the receive buffer needs.
fn offered_wscale(cfg: &TcpConfig) -> u8 {
    match cfg.window_scale_shift {
        Some(s) => s.min(MAX_WSCALE),
        None => wscale_for(cfg.recv_buffer_bytes),
    }
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
        let cc = make_cc(&cfg, mss, iss);
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
        let (cc_model, cc_owns_recovery) = (cc.wants_delivery(), cc.owns_recovery_window());
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
            ecn_ok: false,
            ece_pending: false,
            cwr_pending: false,
            prr: Prr::default(),
            prr_cwr: false,
            undo: None,
            frto: None,
            fr_retransmit_ts: None,
            rack: None,
            rack_on: false,
            cc_model,
            cc_owns_recovery,
            pace_window: cfg.pacing != crate::config::Pacing::Off,
            pace_rate: 0,
            pace_at: now,
            pace_held: false,
            model_seen: (0, 0),
            ecn_pre_ack: None,
            ecn_recover: None,
            sack_recent: [SeqNum::new(0); 4],
            sack_recent_len: 0,
            dsack: None,
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
            ack_count_min: 0,
            wnd_update_growth: 0,
            syn_pending: true,
            syn_data_held: 0,
            rst_pending: None,
            challenge_window_start: now,
            challenge_count: 0,
            last_invalid_ack_at: None,
            probes_unanswered: 0,
            probe_segs_in_mark: 0,
            progress_at: now,
            error: None,
            now,
            stats: Counters::default(),
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
        let base = self.cfg.header_prediction
            && self.state == State::Established
            && self.snd_nxt == self.snd_max
            && !self.probe_now
            && self.rec.dupacks() == 0
            && !self.rec.in_recovery()
            // PRR takes every ACK of an ECN reduction (`prr_on_ack`, general path only), and
            // F-RTO the ACKs after a timeout.
            && !self.prr_cwr
            && self.frto.is_none();
        // A model-based controller (BBR) hears of every ACK after loss detection with the
        // transmit log's delivery (`conn/delivery.rs`): its segments take the general path,
        // which keeps that work off the predicted one. (Data alone could still be predicted,
        // but the prediction's ACK test relies on `HP_DATA` implying `HP_ACK`.)
        let ack = base && !self.cc_model;
        // The data path copies into the receive ring without asking: it must exist (the
        // first data segment, on the general path, allocates it).
        // With the per-packet ECN echo, data after a marked segment may change the echo
        // state: the general path looks at it (a marked segment always goes there).
        let data = ack
            && !self.recv_buf.has_out_of_order()
            && self.peer_fin.is_none()
            && self.recv_buf.is_allocated()
            && !(self.ece_pending && self.cfg.ecn_echo == EcnEcho::PerPacket);
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
        self.ack_count_min = if p.count_small_segments { 0 } else { rcv_mss };
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
    /// the SYN is kept (within the buffer) but neither acknowledged nor readable until the
    /// handshake completes (RFC 9293 §3.10.7.2).
    ///
    /// # Errors
    /// [`AcceptError::BadChecksum`] when `syn`'s checksum is pending and does not verify.
    pub fn accept(
        now: Instant,
        cfg: impl Into<Arc<TcpConfig>>,
        syn: &Segment<'_>,
        iss: SeqNum,
    ) -> Result<Self, AcceptError> {
        let cfg = cfg.into();
        if let SegmentChecksum::Pending { header_sum } = syn.checksum {
            if checksum::add(header_sum, checksum::sum(syn.payload)) != 0xffff {
                return Err(AcceptError::BadChecksum);
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
        // Data on a SYN is legal; we keep it (inside the buffer) rather than making the peer
        // resend it, but RFC 9293 §3.10.7.2 queues it "for processing later": the SYN-ACK
        // acknowledges only the SYN, and the data becomes readable, and acknowledged, in
        // ESTABLISHED.
        if !syn.payload.is_empty() {
            c.hold_syn_data(syn.payload);
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
    ) -> Result<Self, AcceptError> {
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
    pub fn error(&self) -> Option<ConnectionError> {
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
    /// [`SendError::Lost`] with the connection's error ([`error`](Self::error)) if it ended
    /// abnormally, else [`SendError::Closed`].
    pub fn send(&mut self, data: &[u8]) -> Result<usize, SendError> {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
                if !self.fin_queued =>
            {
                if self.cc_model {
                    // draft-cheng §3.4: tested before the data is queued.
                    self.rate_check_app_limited();
                }
                let n = self.send_buf.write(data);
                if n < data.len() || self.send_buf.free() == 0 {
                    self.send_blocked = true;
                }
                Ok(n)
            }
            _ => Err(self.error.map_or(SendError::Closed, SendError::Lost)),
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
    pub fn send_with<R>(
        &mut self,
        f: impl FnOnce(&mut [u8]) -> (usize, R),
    ) -> Result<R, SendError> {
        match self.state {
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
                if !self.fin_queued =>
            {
                if self.cc_model {
                    // draft-cheng §3.4: tested before the data is queued.
                    self.rate_check_app_limited();
                }
                let r = self.send_buf.write_with(f);
                if self.send_buf.free() == 0 {
                    // Full: `Writable` tells the application when space comes back.
                    self.send_blocked = true;
                }
                Ok(r)
            }
            _ => Err(self.error.map_or(SendError::Closed, SendError::Lost)),
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
    /// [`RecvError::WouldBlock`] while the connection may still receive; after that,
    /// [`RecvError::Lost`] with the connection's error ([`error`](Self::error)) if it ended
    /// abnormally, else [`RecvError::NotConnected`]. Data that arrived before a reset can
    /// still be read.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<usize, RecvError> {
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
            return Err(RecvError::Lost(e));
        }
        match self.state {
            State::SynSent
            | State::SynReceived
            | State::Established
            | State::FinWait1
            | State::FinWait2 => Err(RecvError::WouldBlock),
            _ => Err(RecvError::NotConnected),
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
    /// As [`recv`](Self::recv): [`RecvError::WouldBlock`] when nothing is readable yet (`f`
    /// is not called), [`RecvError::Lost`], or [`RecvError::NotConnected`].
    pub fn recv_with<R>(&mut self, f: impl FnOnce(&[u8]) -> (usize, R)) -> Result<R, RecvError> {
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
    /// On a CLOSED connection: [`CloseError::Lost`] with its error if it ended abnormally,
    /// else [`CloseError::NotConnected`].
    pub fn close(&mut self) -> Result<(), CloseError> {
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
            State::Closed | State::Listen => Err(self
                .error
                .map_or(CloseError::NotConnected, CloseError::Lost)),
        }
    }

    /// Aborts (RFC 9293 §3.10.5): a RST to the peer in SYN-RECEIVED, ESTABLISHED,
    /// FIN-WAIT-1, FIN-WAIT-2 and CLOSE-WAIT (not in CLOSING, LAST-ACK or TIME-WAIT, as the
    /// RFC says), then CLOSED with [`ConnectionError::Aborted`]. Queued data is not sent. The RST
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
        self.error = Some(ConnectionError::Aborted);
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
        self.stats.snapshot(Stats {
            state: self.state,
            cwnd_bytes: self.cc.cwnd(),
            ssthresh_bytes: self.cc.ssthresh(),
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.rttvar(),
            rto: self.rtt.rto(),
            min_rtt: self.rtt.min_rtt(),
            pacing_rate_bps: self.pace_rate.saturating_mul(8),
            snd_mss: self.snd_mss,
            snd_wnd_bytes: self.snd_wnd,
            rcv_wnd_bytes: self.recv_buf.window() as u32,
            flight_bytes: self.flight(),
            in_recovery: self.rec.in_recovery(),
            sack_enabled: self.sack_ok,
            ecn_enabled: self.ecn_ok,
            timestamps_enabled: self.ts_ok,
            snd_wscale: self.snd_wscale,
            rcv_wscale: self.rcv_wscale,
            ..Stats::default()
        })
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
    /// window the loss recovery adds during fast recovery). `u32::MAX` with
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
    /// The loss recovery in use: [`TcpConfig::recovery`], but NewReno (RFC 6582) when SACK
    /// recovery is configured and the peer did not offer SACK (RFC 6675 needs its blocks).
    pub fn recovery_algorithm(&self) -> RecoveryAlgorithm {
        self.rec.algorithm()
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

    fn enter_time_wait(&mut self, now: Instant) {
        self.set_state(now, State::TimeWait);
        self.timers.cancel(Timer::Rto);
        self.timers.cancel(Timer::Persist);
        self.timers.set(Timer::TimeWait, now + self.cfg.time_wait);
    }

    fn enter_closed(&mut self) {
        // Rings that still hold data stay until the connection is removed.
        self.send_buf.release();
        if let Some(r) = self.rack.as_deref_mut() {
            r.release();
        }
        self.recv_buf.release();
        self.timers.cancel_all();
        self.pace_held = false;
        self.ack_now = false;
        self.syn_pending = false;
        self.state = State::Closed;
        self.events |= EV_CLOSED;
        self.hp_ready = 0;
    }

    /// The one place outside the controller that writes the congestion window: the initial
    /// window after the handshake, RFC 5681 §4.1's restart after idle, and the windows
    /// `Recovery` asks for (Tahoe's one segment, the end of an episode). The controller's
    /// own responses (`on_ack`, `on_congestion`, `on_rto`) are its business.
    #[inline]
    fn set_cwnd(&mut self, cwnd: u32) {
        self.cc.set_cwnd(cwnd);
    }

    fn set_state(&mut self, now: Instant, to: State) {
        if self.state != to || to == State::Closed {
            match (self.state, to) {
                (State::SynSent, State::Established) => self.events |= EV_CONNECTED,
                // A simultaneous open (RFC 9293 §3.5, Figure 8) reaches ESTABLISHED through
                // SYN-RECEIVED: still an active open the application waits on.
                (State::SynReceived, State::Established) if !self.passive => {
                    self.events |= EV_CONNECTED
                }
                (_, State::Closed) => self.events |= EV_CLOSED,
                _ => {}
            }
            self.state = to;
            if matches!(to, State::FinWait2 | State::TimeWait | State::Closed) {
                // Our FIN is acknowledged: nothing more will be sent, the ring can go.
                self.send_buf.release();
                if let Some(r) = self.rack.as_deref_mut() {
                    r.release();
                }
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

    /// Tracing is on (callers skip building several events when it is not).
    #[inline(always)]
    fn tracing(&self) -> bool {
        self.trace.is_some()
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

#[cfg(test)]
mod layout_tests {
    use super::*;
    use core::mem::{align_of, offset_of, size_of};

    const LINE: usize = 64;

    /// Where each field the per-segment path touches lies: (name, offset, size).
    macro_rules! at {
        ($($f:ident: $t:ty),* $(,)?) => {
            [$((stringify!($f), offset_of!(Connection, $f), size_of::<$t>())),*]
        };
    }

    /// The hot/cold layout (see the comment on `Connection`): what a segment in either
    /// direction touches, on header prediction's paths, the general ACK and data path, the
    /// output path and the timers, lies in twelve cache lines, the first of them the
    /// recovery's per-ACK fields. Each further line a segment touches is a cache miss per
    /// connection when connections are many (BENCHMARKS.md, "Many connections").
    #[test]
    fn the_per_segment_fields_lie_in_twelve_cache_lines() {
        assert_eq!(align_of::<Connection>(), LINE);
        let rec_hot = offset_of!(Connection, rec) + size_of::<Recovery>() - Recovery::PER_ACK_BYTES;
        let mut hot = vec![("rec (per-ACK fields)", rec_hot, Recovery::PER_ACK_BYTES)];
        hot.extend(at! {
            cc: Box<dyn CongestionControl>,
            now: Instant,
            cfg: Arc<TcpConfig>,
            timers: Timers,
            rtt: RttEstimator,
            rtt_timed: Option<(SeqNum, Instant)>,
            send_buf: SendBuffer,
            recv_buf: RecvBuffer,
            trace: Option<Vec<TraceEvent>>,
            last_send_at: Instant,
            progress_at: Instant,
            ts_recent_age: Instant,
            peer_fin: Option<SeqNum>,
            ecn_pre_ack: Option<(SeqNum, bool)>,
            rto_retransmit_ts: Option<u32>,
            template: packet::Ipv4TcpTemplate,
            rst_pending: Option<RstRequest>,
            dsack: Option<(SeqNum, SeqNum)>,
            snd_una: SeqNum,
            snd_nxt: SeqNum,
            snd_max: SeqNum,
            snd_wnd: u32,
            max_snd_wnd: u32,
            snd_wl1: SeqNum,
            snd_wl2: SeqNum,
            buf_seq: SeqNum,
            rcv_nxt: SeqNum,
            rcv_adv: SeqNum,
            last_ack_sent: SeqNum,
            snd_mss: u32,
            rcv_mss: u32,
            ts_recent: u32,
            ts_offset: u32,
            unacked_segs: u32,
            unacked_bytes: u32,
            ack_every_segs: u32,
            ack_every_bytes: u32,
            ack_count_min: u32,
            wnd_update_growth: u32,
            rto_count: u32,
            persist_shift: u32,
            ip_id: u16,
            state: State,
            hp_ready: u8,
            events: u8,
            snd_wscale: u8,
            rcv_wscale: u8,
            ts_ok: bool,
            sack_ok: bool,
            ecn_ok: bool,
            ece_pending: bool,
            ack_now: bool,
            send_blocked: bool,
            fin_queued: bool,
            fin_received: bool,
            probe_now: bool,
            rack_on: bool,
        });
        macro_rules! counters {
            ($($f:ident),*) => {
                [$((stringify!($f), offset_of!(Connection, stats.$f), size_of::<u64>())),*]
            };
        }
        hot.extend(counters!(
            segs_in,
            segs_out,
            data_segs_in,
            data_segs_out,
            bytes_sent,
            bytes_received,
            bytes_acked,
            pure_acks_out,
            hp_ack_hits,
            hp_data_hits,
            hp_misses
        ));
        assert_eq!(rec_hot % LINE, 0, "the hot block starts a cache line");
        // When an idle connection's entry comes up in the endpoint's timer heap, its
        // deadline is all that is read: one line.
        let (cfg, timers) = (offset_of!(Connection, cfg), offset_of!(Connection, timers));
        assert_eq!(
            cfg / LINE,
            (timers + size_of::<Timers>() - 1) / LINE,
            "the configuration and the timers share a cache line"
        );
        let first = rec_hot / LINE;
        for (name, off, size) in hot {
            let (a, b) = (off / LINE, (off + size - 1) / LINE);
            assert!(
                a >= first && b < first + 12,
                "{name} at bytes {off}..{} lies in lines {a}..={b}, outside lines {first}..{}",
                off + size,
                first + 12
            );
        }
    }
}
