//! Counters and trace events: `stats()` is our TCP_INFO, and the trace is the stream of
//! state changes the simulator draws the seeds' pictures from.

use crate::seq::SeqNum;
use crate::State;
use ackclock_wire::{Duration, Instant};

/// Counters of one connection, plus a snapshot of its current state.
///
/// [`Connection::stats`](crate::Connection::stats) returns a copy: the snapshot fields are
/// filled in at that moment, the counters count since the connection was made. All byte
/// counts are payload bytes (no headers); all segment counts are TCP segments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    // --- snapshot (filled in by `Connection::stats`) ---
    /// The connection's state.
    pub state: State,
    /// Congestion window in bytes, without fast-recovery inflation (`u32::MAX` without
    /// congestion control).
    pub cwnd_bytes: u32,
    /// Slow-start threshold in bytes.
    pub ssthresh_bytes: u32,
    /// Smoothed RTT (zero before the first sample).
    pub srtt: Duration,
    /// RTT mean deviation (zero before the first sample, and always with the RFC 793
    /// estimator, which keeps none).
    pub rttvar: Duration,
    /// The retransmission timeout now, backoff included.
    pub rto: Duration,
    /// Smallest RTT sample so far; `None` before the first.
    pub min_rtt: Option<Duration>,
    /// The rate data is paced at, in bits per second of payload (the controller's, e.g.
    /// BBR's pacing gain times its bandwidth estimate, or Linux's rule for a window-based
    /// controller); 0 when not paced. Linux's `ss -i` shows the same as `pacing_rate`.
    pub pacing_rate_bps: u64,
    /// Payload bytes of a full-sized segment we send: the smaller of our and the peer's
    /// MSS, less 12 bytes when timestamps are in use.
    pub snd_mss: u32,
    /// The peer's advertised window in bytes, scaled (SND.WND).
    pub snd_wnd_bytes: u32,
    /// Free space in our receive buffer in bytes: the most we could advertise, before
    /// receiver SWS avoidance and scaling.
    pub rcv_wnd_bytes: u32,
    /// Sequence space sent and not acknowledged, SND.NXT - SND.UNA (a SYN or FIN counts
    /// one). A timeout pulls SND.NXT back, so this drops to zero then.
    pub flight_bytes: u32,
    /// A loss-recovery episode (Reno, NewReno or SACK fast recovery) is in progress.
    pub in_recovery: bool,
    /// Both ends offered SACK (RFC 2018): SACK blocks are sent and used.
    pub sack_enabled: bool,
    /// Both ends offered timestamps (RFC 7323): every segment carries them.
    pub timestamps_enabled: bool,
    /// Shift applied to the windows the peer advertises (RFC 7323 §2); 0 without scaling.
    pub snd_wscale: u8,
    /// Shift applied to the windows we advertise; 0 without scaling.
    pub rcv_wscale: u8,
    // --- counters ---
    /// Segments received in any state but CLOSED, bad ones included (the SYN that made a
    /// passive connection counts).
    pub segs_in: u64,
    /// Segments sent, RSTs and retransmissions included.
    pub segs_out: u64,
    /// Segments with data whose checksum verified, duplicates and out-of-window ones
    /// included.
    pub data_segs_in: u64,
    /// Segments sent with data, retransmissions and zero-window probes included.
    pub data_segs_out: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes sent again (a subset of `bytes_sent`).
    pub bytes_retransmitted: u64,
    /// Payload bytes acknowledged by the peer.
    pub bytes_acked: u64,
    /// Payload bytes received in order (delivered to the receive buffer).
    pub bytes_received: u64,
    /// Segments with data sent again: by timeout, fast retransmit or recovery. Resent SYNs
    /// and FINs without data are not counted.
    pub retransmitted_segs: u64,
    /// Times the duplicate-ACK threshold was reached and a fast retransmit started (RFC
    /// 5681 §3.2), or, with RACK, a loss RACK marked started a recovery (RFC 8985).
    pub fast_retransmits: u64,
    /// Retransmission timer expirations, in the handshake too; the one that makes the
    /// connection give up included.
    pub timeouts: u64,
    /// Retransmissions found needless afterwards (timestamps show the original arrived).
    pub spurious_retransmits: u64,
    /// Recovery episodes entered (Reno, NewReno, SACK; Tahoe's fast retransmit enters
    /// none).
    pub recoveries: u64,
    /// Duplicate ACKs received (RFC 5681 §2's definition).
    pub dup_acks_in: u64,
    /// ACKs sent without data, SYN or FIN, window updates included.
    pub pure_acks_out: u64,
    /// Delayed-ACK timer expirations that found data unacknowledged; each sends an ACK.
    pub delayed_acks_out: u64,
    /// Zero-window probes sent (one byte past a zero window, RFC 9293 §3.8.6.1).
    pub window_probes: u64,
    /// Pure ACKs sent only to announce a larger window (a subset of `pure_acks_out`).
    pub window_updates_out: u64,
    /// Segments whose data was stored beyond RCV.NXT, to wait for a hole to fill.
    pub out_of_order_segs_in: u64,
    /// Segments whose data had all been received before.
    pub duplicate_segs_in: u64,
    /// Out-of-order segments dropped because the receive buffer already tracks as many
    /// separate ranges as it may (32, or one per 2 KiB of a larger buffer).
    pub reassembly_drops: u64,
    /// Segments header prediction took as a pure ACK for new data.
    pub hp_ack_hits: u64,
    /// Segments header prediction took as in-order data.
    pub hp_data_hits: u64,
    /// Segments that took the general input path while header prediction was enabled
    /// ([`TcpConfig::header_prediction`](crate::TcpConfig::header_prediction)).
    pub hp_misses: u64,
    /// Segments dropped because their TCP checksum did not verify.
    pub bad_checksum: u64,
    /// Segments dropped because they carried no timestamps after timestamps were
    /// negotiated (RFC 7323 §3.2). Nothing else is counted here.
    pub malformed: u64,
    /// Segments dropped by the acceptability test (RFC 9293 §3.10.7.4) or for an
    /// unacceptable ACK (RFC 5961 §5.2).
    pub out_of_window: u64,
    /// Segments dropped by PAWS (RFC 7323 §5.3): a timestamp older than TS.Recent.
    pub paws_drops: u64,
    /// Challenge ACKs sent (RFC 5961), within
    /// [`TcpConfig::challenge_ack_limit_per_sec`](crate::TcpConfig::challenge_ack_limit_per_sec).
    pub challenge_acks: u64,
    /// ACKs not sent for invalid segments because of `invalid_ack_interval`.
    pub invalid_acks_suppressed: u64,
    /// Zero-window probes that drew no segment at all before the next one.
    pub probes_unanswered: u64,
    /// RSTs received that passed the acceptability test. One at RCV.NXT resets the
    /// connection; others draw a challenge ACK (RFC 5961 §3.2). In SYN-SENT, one with an
    /// acceptable ACK refuses the connection.
    pub rst_in: u64,
    /// RSTs this connection sent (abort, giving up, an unacceptable ACK in the handshake).
    pub rst_out: u64,
    /// Both ends agreed on ECN in the handshake (RFC 3168 §6.1.1).
    pub ecn_enabled: bool,
    /// Data segments sent ECT(0) (new data only: RFC 3168 §6.1.5 keeps retransmissions,
    /// pure ACKs and window probes Not-ECT).
    pub ect_segs_out: u64,
    /// Segments received with the IP ECN field CE: a gateway on the way marked them.
    pub ce_segs_in: u64,
    /// ACKs received with ECE (the peer echoing a CE mark).
    pub ece_in: u64,
    /// Window reductions in answer to ECE (at most one per window of data, §6.1.2).
    pub ecn_reductions: u64,
    /// Segments sent with CWR (the first new data after each reduction).
    pub cwr_out: u64,
    /// ACKs received carrying a D-SACK block (RFC 2883): the peer got some data twice.
    pub dsacks_in: u64,
    /// Tail loss probes sent (RFC 8985 §7.3), new data or the last segment again.
    pub tlp_probes: u64,
    /// Probes that repaired a loss (RFC 8985 §7.4: the ACK went past the probe without a
    /// D-SACK saying the original had arrived).
    pub tlp_recoveries: u64,
    /// Expirations of RACK's reordering timer (RFC 8985 §6.2 step 5).
    pub rack_reorder_timeouts: u64,
    /// Timeouts found spurious: the first ACK after one echoed a timestamp older than the
    /// retransmission (Eifel detection, RFC 3522), or F-RTO found it (RFC 5682, with
    /// [`TcpConfig::frto`](crate::TcpConfig::frto)).
    pub spurious_rtos: u64,
    /// Fast recoveries found needless: D-SACK reported every retransmission received twice
    /// (RFC 3708), or the first ACK of new data after the fast retransmit echoed the
    /// original's timestamp (RFC 3522). Tracked with
    /// [`TcpConfig::undo`](crate::TcpConfig::undo) (D-SACK also with `frto`).
    pub spurious_recoveries: u64,
    /// Reductions undone (with [`TcpConfig::undo`](crate::TcpConfig::undo) or `frto`).
    pub undos: u64,
}

/// Declares [`Counters`] with the given fields of [`Stats`], in that order, and the
/// `snapshot` that copies each into a `Stats`: the list is written once.
macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// The counters of [`Stats`] as a connection keeps them (its snapshot fields are made
        /// when asked). `repr(C)`, in this order: the counters every segment updates first,
        /// where they end the connection's hot block (two cache lines: see `Connection`'s
        /// layout), the others after, among the fields only losses, invalid segments and
        /// ECN touch.
        #[derive(Clone, Copy, Default)]
        #[repr(C)]
        pub(crate) struct Counters {
            $(pub(crate) $name: u64,)*
        }

        impl Counters {
            /// `snapshot` with these counters filled in.
            pub(crate) fn snapshot(&self, snapshot: Stats) -> Stats {
                Stats {
                    $($name: self.$name,)*
                    ..snapshot
                }
            }
        }
    };
}

counters!(
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
    hp_misses,
    bytes_retransmitted,
    retransmitted_segs,
    fast_retransmits,
    timeouts,
    spurious_retransmits,
    recoveries,
    dup_acks_in,
    delayed_acks_out,
    window_probes,
    window_updates_out,
    out_of_order_segs_in,
    duplicate_segs_in,
    reassembly_drops,
    bad_checksum,
    malformed,
    out_of_window,
    paws_drops,
    challenge_acks,
    invalid_acks_suppressed,
    probes_unanswered,
    rst_in,
    rst_out,
    ect_segs_out,
    ce_segs_in,
    ece_in,
    ecn_reductions,
    cwr_out,
    dsacks_in,
    tlp_probes,
    tlp_recoveries,
    rack_reorder_timeouts,
    spurious_rtos,
    spurious_recoveries,
    undos,
);

/// Why a trace event was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A segment with data, a SYN or a FIN left (pure ACKs and RSTs are not traced).
    Send {
        /// Sequence number of its first byte (or of its SYN or FIN).
        seq: SeqNum,
        /// Data bytes.
        len: u32,
        /// It resends what was sent before.
        retransmit: bool,
    },
    /// An ACK for new data arrived.
    Ack {
        /// SEG.ACK: the new SND.UNA.
        ack: SeqNum,
        /// The window it advertised, in bytes (scaled): the receiver's window ends at
        /// `ack + window` (tcptrace's receive-window line).
        window: u32,
    },
    /// One SACK block of an arriving ACK (RFC 2018), recorded before the ACK's own event:
    /// the receiver holds `left..right`.
    Sack {
        /// The block's first sequence number.
        left: SeqNum,
        /// One past its last.
        right: SeqNum,
    },
    /// A duplicate ACK arrived (RFC 5681 §2).
    DupAck {
        /// Duplicate ACKs in a row so far (BSD's `t_dupacks`).
        count: u32,
    },
    /// The duplicate-ACK threshold was reached: a fast retransmit is queued.
    FastRetransmit,
    /// A recovery episode began (right after `FastRetransmit`, for Reno, NewReno and SACK).
    RecoveryEnter,
    /// NewReno/SACK partial ACK inside recovery.
    PartialAck,
    /// The recovery episode ended: the recovery point was acknowledged.
    RecoveryExit,
    /// The retransmission timer expired (not recorded for the expiry that gives up).
    Timeout,
    /// An RTT sample was taken.
    RttSample {
        /// The sample.
        rtt: Duration,
    },
    /// The connection changed state.
    StateChange {
        /// The new state.
        to: State,
    },
    /// Eifel detection (RFC 3522): an ACK showed that a retransmission by timeout was
    /// needless.
    SpuriousRetransmit,
    /// RFC 5681 §4.1: cwnd cut to the restart window after an idle period.
    IdleRestart,
    /// An ACK with ECE reduced the window (RFC 3168 §6.1.2).
    EcnReduction,
    /// A tail loss probe was sent (RFC 8985 §7.3).
    TailLossProbe,
    /// An ACK showed that a tail loss probe repaired a loss (RFC 8985 §7.4).
    TlpRecovery,
    /// RACK's reordering timer expired (RFC 8985 §6.2 step 5).
    RackReorderTimeout,
    /// A reduction found needless was undone (RFC 3708, RFC 4015, RFC 5682).
    Undo,
}

/// One trace record: the event and the sender's state right after it.
///
/// Recorded only while tracing is on
/// ([`Connection::set_tracing`](crate::Connection::set_tracing)); collected with
/// [`Connection::take_trace`](crate::Connection::take_trace).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    /// When it happened (the `now` of the call that caused it).
    pub time: Instant,
    /// What happened.
    pub kind: TraceKind,
    /// Congestion window in bytes.
    pub cwnd: u32,
    /// Slow-start threshold in bytes.
    pub ssthresh: u32,
    /// Smoothed RTT.
    pub srtt: Duration,
    /// RTT mean deviation.
    pub rttvar: Duration,
    /// Retransmission timeout, backoff included.
    pub rto: Duration,
    /// SND.UNA: the oldest unacknowledged sequence number.
    pub snd_una: SeqNum,
    /// SND.NXT: the next sequence number to send.
    pub snd_nxt: SeqNum,
    /// SND.MAX: one past the highest sequence number sent.
    pub snd_max: SeqNum,
    /// SND.NXT - SND.UNA in bytes.
    pub flight: u32,
}
