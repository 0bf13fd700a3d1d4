//! What an analysis finds: the result types, serialised as `ackclock analyze --json` writes
//! them (docs/OUTPUTS.md lists the fields).

use crate::stats::Summary;
use serde::Serialize;
use std::collections::BTreeMap;

/// The analysis of one capture.
#[derive(Clone, Debug, Serialize)]
pub struct Analysis {
    /// What the packets of the capture were.
    pub packets: PacketCounts,
    /// Every TCP connection, in the order of its first packet.
    pub connections: Vec<Connection>,
    /// Why reading stopped before the end of the file (a broken record: nothing after it
    /// can be framed), if it did; what came before was analysed.
    pub stopped: Option<String>,
}

/// The packets of a capture, by what they were.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PacketCounts {
    /// Records read.
    pub total: u64,
    /// TCP/IPv4 segments analysed.
    pub tcp: u64,
    /// Frames that are not IPv4 (ARP, IPv6, an unknown link type).
    pub not_ipv4: u64,
    /// IPv4 packets of another protocol than TCP (UDP, ICMP).
    pub not_tcp: u64,
    /// IPv4 fragments (not reassembled; TCP over fragments is not analysed).
    pub fragments: u64,
    /// Malformed packets skipped, by reason (a bad IPv4 header or checksum, a TCP header
    /// cut short, ...). The TCP checksum is not checked: a capture on the sending host
    /// holds segments whose checksum the NIC fills in later (checksum offload), as tcptrace
    /// does not check it either.
    pub malformed: BTreeMap<String, u64>,
    /// Segments whose TCP options could not be parsed: analysed as if they had none.
    pub bad_options: u64,
    /// Segments of connections beyond the most this analysis tracks
    /// ([`crate::MAX_CONNECTIONS`]), not analysed.
    pub untracked: u64,
}

/// One TCP connection: a 4-tuple from its first packet (a SYN, or whatever the capture
/// began with) to its last; a SYN on the tuple after the connection closed (both FINs, or
/// a RST) starts another.
#[derive(Clone, Debug, Serialize)]
pub struct Connection {
    /// 1, 2, ... in the order of the first packet.
    pub index: usize,
    /// Host a: the source of the connection's first packet (tcptrace's "host a").
    pub a: String,
    /// Host b, the other end.
    pub b: String,
    /// Time of the first packet, in seconds since the capture's first packet.
    pub first_s: f64,
    /// Time of the last packet, in seconds since the capture's first packet.
    pub last_s: f64,
    /// `last_s - first_s`: tcptrace's "elapsed time", over which goodput is reckoned.
    pub duration_s: f64,
    /// Segments of this connection, both directions.
    pub packets: u64,
    /// Both SYNs and both FINs were seen (tcptrace's "complete conn"), or a RST ended it.
    pub complete: bool,
    /// A RST was seen.
    pub reset: bool,
    /// Window scaling (RFC 7323 §2).
    pub window_scaling: WindowScaling,
    /// The two directions: `[a to b, b to a]`.
    pub directions: [Direction; 2],
    /// The points of the figures (not serialised).
    #[serde(skip)]
    pub series: [crate::track::Series; 2],
}

/// Window scaling as the capture shows it (RFC 7323 §2.2: in effect only when both SYNs
/// carry the option; a SYN's own window is never scaled).
#[derive(Clone, Debug, Serialize)]
pub struct WindowScaling {
    /// Both SYNs were captured, so whether scaling is in effect is known. When not, the
    /// windows are taken unscaled and the text output says so.
    pub known: bool,
    /// Scaling is in effect (both SYNs offered it).
    pub in_effect: bool,
    /// The shift a offered in its SYN.
    pub a_shift: Option<u8>,
    /// The shift b offered in its SYN.
    pub b_shift: Option<u8>,
}

/// One direction of a connection: the segments its source sent, and what the other end's
/// ACKs said about them. As in tcptrace's columns, a direction's own packets give the
/// counts of what it sent (packets, data, retransmissions, SACK blocks sent, windows
/// advertised); the ACKs of its data, sent by the other end, give its RTT samples and its
/// duplicate ACKs. Sequence numbers are relative to the source's ISN (its SYN's sequence
/// number; without a SYN in the capture, one less than its first segment's).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Direction {
    /// Source, `ip:port`.
    pub from: String,
    /// Destination, `ip:port`.
    pub to: String,
    /// Segments sent ("total packets").
    pub packets: u64,
    /// Segments with the ACK flag ("ack pkts sent").
    pub ack_pkts: u64,
    /// Segments with the ACK flag, no data and no SYN, FIN or RST ("pure acks sent").
    pub pure_acks: u64,
    /// Segments carrying data ("actual data pkts").
    pub data_pkts: u64,
    /// Data bytes, retransmissions included ("actual data bytes").
    pub data_bytes: u64,
    /// Data bytes sent for the first time: `data_bytes`, less the data bytes of
    /// `rexmt_bytes` (not its SYN and FIN) and `zwnd_probe_bytes` ("unique bytes sent").
    pub unique_bytes: u64,
    /// `unique_bytes * 8 / duration_s` of the connection, bits per second (tcptrace's
    /// "throughput", in bits).
    pub goodput_bps: f64,
    /// Segments any sequence number of which (a data byte, a SYN or a FIN) had been sent
    /// before in this direction: tcptrace's "rexmt data pkts", which counts a retransmitted
    /// SYN or FIN too. Zero-window probes are not counted (as tcptrace).
    pub rexmt_pkts: u64,
    /// The sequence numbers of those segments that had been sent before, a SYN or FIN
    /// counting one ("rexmt data bytes").
    pub rexmt_bytes: u64,
    /// Retransmissions found unnecessary: covered by a D-SACK (RFC 2883 §4) or already
    /// acknowledged when sent. Each retransmission is counted once.
    pub spurious: Spurious,
    /// Data segments that start before bytes sent already and end before the end of those
    /// bytes (tcptrace's "outoforder pkts"): new data filling a hole, which arrived at the
    /// capture point after later data (reordered, or the capture missed its first
    /// sending), or a resend that stops short of the data after it, which then is also a
    /// retransmission. "Those bytes" are the contiguous range sent after the segment's
    /// start, where tcptrace takes the one segment record there; they differ only for a
    /// resend that ends inside a later record.
    pub out_of_order_pkts: u64,
    /// ACKs of this direction's data (sent by the other end) that repeat the highest
    /// acknowledgment number, which ends something acknowledged already (the SYN counts),
    /// and the acknowledgment number and the window of their sender's previous segment,
    /// with no data, once this direction has had data outstanding: tcptrace's "duplicate
    /// acks" by its default (BSD) rule, close to RFC 5681 §2's definition. A SYN of this
    /// direction resets "previous" (tcptrace does).
    pub dup_acks: u64,
    /// Third duplicate ACKs in a row, anything else between them ending the row
    /// ("triple dupacks").
    pub triple_dup_acks: u64,
    /// Segments with the ACK flag advertising a zero receive window ("zero win adv").
    pub zero_window_adv: u64,
    /// Data segments, not SYNs, sent while the window of the other end's last segment was
    /// zero ("zwnd probe pkts"): not in the sequence record, so not retransmissions.
    pub zwnd_probe_pkts: u64,
    /// Their data bytes ("zwnd probe bytes").
    pub zwnd_probe_bytes: u64,
    /// Segments carrying a SACK option ("sack pkts sent").
    pub sack_pkts: u64,
    /// Segments whose first SACK block is a D-SACK ("dsack pkts sent"): it starts below the
    /// cumulative ACK or lies inside the second block (RFC 2883 §4), or overlaps the second
    /// block (tcptrace's third case).
    pub dsack_pkts: u64,
    /// Most SACK blocks in one segment ("max sack blks/ack").
    pub max_sack_blocks: u64,
    /// SYNs sent; a second is a retransmitted SYN.
    pub syns: u64,
    /// FINs sent.
    pub fins: u64,
    /// RSTs sent.
    pub rsts: u64,
    /// The MSS option of this side's SYN.
    pub mss_option: Option<u16>,
    /// Largest data segment, bytes ("max segm size").
    pub max_segment: u64,
    /// Smallest data segment, bytes ("min segm size").
    pub min_segment: u64,
    /// Largest window advertised, bytes, scaled ("max win adv").
    pub max_window: u64,
    /// Smallest window advertised, bytes, scaled ("min win adv").
    pub min_window: u64,
    /// RTT samples of this direction's data, in ms (a sample per ACK of new data whose
    /// acknowledgment number is the end of a segment that was sent once and after every
    /// segment before it that the ACK covers: Karn's rule, and tcptrace's; no sample from
    /// a segment any byte of which was sent twice; a FIN counts as a byte of its segment,
    /// as in tcptrace). `None`: no sample.
    pub rtt_ms: Option<Summary>,
    /// RTT samples from timestamps (RFC 7323 §4): an ACK that acknowledges new data and
    /// echoes, for the first time, a TSval this direction sent, against the time the
    /// first segment with that TSval was sent. It includes the receiver's delayed-ACK wait:
    /// the receiver echoes the earliest unacknowledged segment's TSval on purpose (RFC 7323
    /// §4.3), so these samples run above [`rtt_ms`](Self::rtt_ms), whose segment is the
    /// one the ACK ends. `None`: no timestamps, or no sample.
    pub ts_rtt_ms: Option<Summary>,
    /// The handshake's RTT, ms: from this side's SYN (sent once) to the segment that
    /// acknowledged it (tcptrace's "RTT from 3WHS", which tcptrace also counts among its
    /// RTT samples; here it is only this field).
    pub handshake_rtt_ms: Option<f64>,
    /// Time shares of what limited this direction's sending.
    pub limits: Limits,
    /// Samples or records dropped to bound memory (RTT samples beyond
    /// [`crate::MAX_SAMPLES`], transmissions beyond [`crate::MAX_RECORDS`] outstanding,
    /// sequence ranges joined): non-zero means the counts above are approximate.
    pub bounded: u64,
}

/// Retransmissions found unnecessary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spurious {
    /// All of them (each counted once).
    pub total: u64,
    /// Whose bytes the other end had acknowledged, cumulatively or by SACK blocks, before
    /// the retransmission was captured.
    pub already_acked: u64,
    /// Reported by a D-SACK (RFC 2883 §4), and not already acknowledged when sent.
    pub dsack: u64,
    /// D-SACKs that matched no retransmission (the network duplicated a segment, or the
    /// capture missed the retransmission).
    pub dsack_unmatched: u64,
}

/// What held this direction's sending back, from its first data segment to the
/// connection's last packet, inferred at the capture point: outstanding data is the
/// highest sequence number sent minus the highest acknowledged, against the other end's
/// last advertised window (scaled). Exact for a capture at the sender; a capture elsewhere
/// shifts it by the one-way delay between.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Limits {
    /// Seconds with outstanding data of at least the window minus one MSS (the largest
    /// segment so far): the receive window limited the sender.
    pub rwnd_limited_s: f64,
    /// Seconds with data outstanding below that: an inference, not a measurement. The
    /// sender could have sent more and did not: its congestion window held it back, or its
    /// application had nothing to send; a capture cannot tell which.
    pub cwnd_limited_inferred_s: f64,
    /// Seconds with nothing outstanding.
    pub idle_s: f64,
    /// The most data outstanding, bytes.
    pub max_outstanding: u64,
}

impl Limits {
    /// What limited the sender most of the time it had data outstanding: `"receive
    /// window"`, `"cwnd (inferred)"`, or `"nothing outstanding"` when it never had any.
    pub fn main_limit(&self) -> &'static str {
        if self.rwnd_limited_s == 0.0 && self.cwnd_limited_inferred_s == 0.0 {
            "nothing outstanding"
        } else if self.rwnd_limited_s >= self.cwnd_limited_inferred_s {
            "receive window"
        } else {
            "cwnd (inferred)"
        }
    }
}
