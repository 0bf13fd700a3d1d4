//! Counters and trace events: `stats()` is our TCP_INFO, and the trace is the stream of
//! state changes the simulator draws the seeds' pictures from.

use crate::seq::SeqNum;
use crate::State;
use ackclock_wire::{Duration, Instant};

/// Counters of one connection, plus a snapshot of its current state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    // --- snapshot (filled in by `Connection::stats`) ---
    pub state: State,
    pub cwnd_bytes: u32,
    pub ssthresh_bytes: u32,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub rto: Duration,
    pub min_rtt: Option<Duration>,
    pub snd_mss: u32,
    pub snd_wnd_bytes: u32,
    pub rcv_wnd_bytes: u32,
    pub flight_bytes: u32,
    pub in_recovery: bool,
    pub sack_enabled: bool,
    pub timestamps_enabled: bool,
    pub snd_wscale: u8,
    pub rcv_wscale: u8,
    // --- counters ---
    pub segs_in: u64,
    pub segs_out: u64,
    pub data_segs_in: u64,
    pub data_segs_out: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    pub bytes_retransmitted: u64,
    /// Payload bytes acknowledged by the peer.
    pub bytes_acked: u64,
    /// Payload bytes received in order (delivered to the receive buffer).
    pub bytes_received: u64,
    pub retransmitted_segs: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Retransmissions found needless afterwards (timestamps show the original arrived).
    pub spurious_retransmits: u64,
    pub recoveries: u64,
    pub dup_acks_in: u64,
    pub pure_acks_out: u64,
    pub delayed_acks_out: u64,
    pub window_probes: u64,
    pub window_updates_out: u64,
    pub out_of_order_segs_in: u64,
    pub duplicate_segs_in: u64,
    pub reassembly_drops: u64,
    pub hp_ack_hits: u64,
    pub hp_data_hits: u64,
    pub hp_misses: u64,
    pub bad_checksum: u64,
    pub malformed: u64,
    pub out_of_window: u64,
    pub paws_drops: u64,
    pub challenge_acks: u64,
    /// ACKs not sent for invalid segments because of `invalid_ack_interval`.
    pub invalid_acks_suppressed: u64,
    /// Zero-window probes that drew no segment at all before the next one.
    pub probes_unanswered: u64,
    pub rst_in: u64,
    pub rst_out: u64,
}

/// Why a trace event was emitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A data segment left (`seq`, `len`); `retransmit` marks resends.
    Send {
        seq: SeqNum,
        len: u32,
        retransmit: bool,
    },
    /// An ACK for new data arrived.
    Ack {
        ack: SeqNum,
    },
    DupAck {
        count: u32,
    },
    FastRetransmit,
    RecoveryEnter,
    /// NewReno/SACK partial ACK inside recovery.
    PartialAck,
    RecoveryExit,
    Timeout,
    /// An RTT sample was taken.
    RttSample {
        rtt: Duration,
    },
    StateChange {
        to: State,
    },
    SpuriousRetransmit,
    /// RFC 5681 §4.1: cwnd cut to the restart window after an idle period.
    IdleRestart,
}

/// One trace record: the event and the sender's state right after it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceEvent {
    pub time: Instant,
    pub kind: TraceKind,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt: Duration,
    pub rttvar: Duration,
    pub rto: Duration,
    pub snd_una: SeqNum,
    pub snd_nxt: SeqNum,
    pub snd_max: SeqNum,
    pub flight: u32,
}
