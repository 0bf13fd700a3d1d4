//! RACK-TLP (RFC 8985): loss detection by time rather than by counting duplicate ACKs.
//!
//! RACK ("recent acknowledgment", §6) keeps the time each segment was last sent. When an
//! ACK shows that a segment sent at time T arrived (cumulatively or by SACK), any segment
//! sent before T that has not arrived, and has waited longer than RACK.rtt plus a
//! reordering window, is taken as lost. The reordering window starts at zero once three
//! segments are SACKed (which keeps the duplicate-ACK rule's speed when nothing is
//! reordered), becomes min_RTT/4 once reordering has been seen, and grows with each
//! round in which D-SACK shows a retransmission was needless (§6.2 step 4).
//!
//! TLP ("tail loss probe", §7) answers the other limit the seed names: a loss at the tail
//! of a flight brings no duplicate ACKs, so the sender waits for the RTO and "must
//! slow-start". After about two round trips without an ACK the sender sends one probe
//! (new data, or the last segment again); the ACK it draws lets RACK find the loss, and
//! the RTO stays the last resort.
//!
//! This module holds RACK's per-segment record and state and TLP's state; the connection
//! feeds it transmissions and ACKs and runs the timers (`conn/rack.rs`).
//!
//! Two choices where the RFC leaves room:
//! - the record is kept per transmitted segment, in sequence order, in a ring that grows
//!   with the flight (24 bytes a segment) and is reused; a segment that is resent in
//!   part is split at the resent edges. A segment counts as SACKed only when SACK blocks
//!   cover all of it.
//! - after an RTO the engine resends from SND.UNA (go-back-N, RFC 5681 §3.1) as without
//!   RACK, rather than only the segments §6.3 would mark lost.

use crate::rate::{RateSampler, TxStamp};
use crate::seq::SeqNum;
use ackclock_wire::{Duration, Instant, SackBlocks};
use std::collections::VecDeque;

/// The segment has been sent more than once (RFC 8985 §5.2 `Segment.retransmitted`).
const RETRANS: u8 = 1;
/// RACK marked it lost and it has not been sent again since (`Segment.lost`).
const LOST: u8 = 2;
/// SACK blocks covered all of it.
const SACKED: u8 = 4;
/// Its last sequence number is the FIN.
const FIN: u8 = 8;
/// Delivery-rate estimation has counted it delivered (by SACK). Unlike `SACKED` it
/// survives a timeout (which drops the SACK marks, RFC 2018 §8), so that a segment SACKed
/// before the timeout and acknowledged after it is not delivered twice.
const COUNTED: u8 = 16;
/// Delivery-rate estimation has counted this transmission lost (`C.lost`): RACK marked it
/// or a timeout took it for lost, as Linux counts `tp->lost` when a segment is marked. Its
/// resend then does not count it again; the resend clears the mark (a new transmission).
const TALLIED_LOST: u8 = 32;

/// RFC 8985 §7.2 WCDelAckT: the worst-case delayed-ACK time a PTO allows for when a single
/// segment is in flight (RFC 5681's delayed-ACK limit of 200 ms is the RFC's default).
pub(crate) const WC_DEL_ACK: Duration = Duration::from_millis(200);
/// RFC 8985 §7.2: the PTO before the first RTT sample.
pub(crate) const PTO_WITHOUT_RTT: Duration = Duration::from_secs(1);
/// RFC 8985 §6.2 step 4: a reordering window grown by D-SACK is kept for 16 recoveries.
const REO_WND_PERSIST: u32 = 16;

/// One transmitted segment (RFC 8985 §5.2): `[start, end)` in sequence space (a FIN
/// counts one), when it was last sent and that transmission's place in the connection's
/// order of transmissions, and the flag bits above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sent {
    start: SeqNum,
    end: SeqNum,
    xmit: Instant,
    order: u32,
    flags: u8,
}

impl Sent {
    fn len(&self) -> u32 {
        self.end.since(self.start)
    }

    /// Whether a SACK block `[l, r)` reports all of the segment. A FIN's sequence number
    /// need not be in it: RFC 2018's blocks report data, and receivers differ (Linux's
    /// cover the FIN, this engine's and FreeBSD's the data only); a segment that carries
    /// data and the FIN is SACKed when its data is.
    fn covered_by(&self, l: SeqNum, r: SeqNum) -> bool {
        let data_end = if self.flags & FIN != 0 && self.len() > 1 {
            self.end - 1
        } else {
            self.end
        };
        self.start >= l && data_end <= r
    }
}

/// RFC 8985 §6.2 step 2, `RACK_sent_after`: whether the transmission (t1, o1) was later
/// than (t2, o2). Ties of time (segments sent in one burst share a timestamp) are broken
/// by the order of transmission, where the RFC breaks them by end sequence: that order
/// is the same for new data, but a resend of a low sequence made at the same instant as,
/// and after, segments of higher sequence would count as sent before them, and be taken for
/// lost when they are delivered (on a link without serialization delay every segment of a
/// burst shares the instant; `rfc8985_3_3_a_single_loss_...` found it).
pub(crate) fn sent_after(t1: Instant, o1: u32, t2: Instant, o2: u32) -> bool {
    t1 > t2 || (t1 == t2 && (o1.wrapping_sub(o2) as i32) > 0)
}

/// The D-SACK block of an ACK, if it carries one (RFC 2883 §4): the first SACK block, when
/// it lies (at least in part) below the cumulative ACK or inside the second block.
pub(crate) fn dsack_block(ack: SeqNum, blocks: &SackBlocks) -> Option<(SeqNum, SeqNum)> {
    let mut it = blocks.iter();
    let first = it.next()?;
    let (l, r) = (SeqNum::new(first.left), SeqNum::new(first.right));
    if r <= l {
        return None;
    }
    if l < ack {
        return Some((l, r));
    }
    let second = it.next()?;
    let (l2, r2) = (SeqNum::new(second.left), SeqNum::new(second.right));
    (l >= l2 && r <= r2).then_some((l, r))
}

/// What the shared loss timer stands for (RFC 8985 lets the reordering timer, the PTO and
/// the RTO share one; here the RTO keeps its own and the other two share one slot, the
/// reordering timer taking precedence as Linux's does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LossTimer {
    /// RACK's reordering timer (§6.2 step 5): segments wait out the reordering window.
    Reorder,
    /// TLP's probe timeout (§7.2).
    Probe,
}

/// What [`Rack::tlp_on_ack`] concluded about an outstanding probe (RFC 8985 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TlpOutcome {
    /// No probe outstanding, or not decided yet.
    Pending,
    /// The probe's episode ended without a loss: new data delivered, or D-SACK showed the
    /// original and the probe both arrived.
    NoLoss,
    /// The probe repaired a loss: the congestion controller must answer it (§7.4.2).
    Repaired,
}

/// What an ACK told RACK (RFC 8985 §6.2 steps 2 to 4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AckSummary {
    /// RACK.xmit_ts moved: a segment sent later than any before was delivered, so loss
    /// detection (step 5) may find new losses.
    pub advanced: bool,
    /// The ACK carried a D-SACK block.
    pub dsack: bool,
}

/// Delivery-rate estimation on the transmit record (draft-cheng-iccrg-delivery-rate-
/// estimation, `crate::rate`), kept when the congestion controller asks for it (BBR): a
/// stamp per segment of the record, in a ring parallel to it (entry i stamps segment i).
#[derive(Clone, Debug)]
struct RateLog {
    sampler: RateSampler,
    stamps: VecDeque<TxStamp>,
    /// The RTT of the most recently sent segment the last ACK delivered that was never
    /// resent, measured on the engine's clock (the timestamp option's are whole
    /// milliseconds): what Linux gives BBR as `rs->rtt_us`. Taken by the connection.
    ack_rtt: Option<Duration>,
}

/// RACK's per-connection state (RFC 8985 §5.2) with its per-segment record, and TLP's.
///
/// The record is also the connection's transmit log for delivery-rate estimation: a
/// controller that models the path (BBR) has it kept, with a stamp per segment, whether or
/// not RACK detects losses ([`Rack::with_rate`]).
#[derive(Clone, Debug)]
pub(crate) struct Rack {
    log: VecDeque<Sent>,
    /// The rate stamps, when the controller asks for delivery-rate samples.
    rate: Option<RateLog>,
    /// Bytes of the record marked lost and not sent again.
    lost_bytes: u32,
    /// Bytes of the record SACKed.
    sacked_bytes: u32,
    /// RACK.segs_sacked.
    segs_sacked: u32,
    /// RACK.xmit_ts, and in place of RACK.end_seq the transmission's order (see
    /// [`sent_after`]): the latest transmission known delivered.
    xmit_ts: Option<Instant>,
    xmit_order: u32,
    /// The order the next transmission gets.
    next_order: u32,
    /// RACK.rtt: the RTT of that delivery.
    rtt: Duration,
    /// RACK.min_RTT: the least RTT of a segment never resent, on the engine's clock (to
    /// the nanosecond, as Linux's `tcp_min_rtt` is to the microsecond). The RTT
    /// estimator's minimum will not do when timestamps are on: their samples are whole
    /// milliseconds, so a 30.4 ms path can have a minimum of 31 ms, and a resend delivered
    /// in 30.7 ms looks too fast to be the resend (step 2) and is not believed delivered.
    /// Also the floor a rate sample's interval must reach (draft-cheng §3.3) and BBR's
    /// minimum RTT.
    min_rtt: Option<Duration>,
    /// The handshake's RTT, on the same clock: part of RACK.min_RTT as it is of Linux's
    /// `tcp_min_rtt` (a SYN is not delayed behind its own serialization as a full segment
    /// is, so on a live path with jitter it keeps the minimum below the RTT a resend can
    /// show), but not of the delivery-rate minimum, which Linux's BBR takes from data.
    syn_rtt: Option<Duration>,
    /// RACK.fack: the highest end sequence delivered.
    fack: SeqNum,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// RACK.reo_wnd_mult and RACK.reo_wnd_persist.
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    /// RACK.dsack_round.
    dsack_round: Option<SeqNum>,
    /// TLP is enabled (RACK alone otherwise).
    tlp: bool,
    /// TLP.end_seq and TLP.is_retrans: the outstanding probe.
    tlp_end: Option<SeqNum>,
    tlp_is_retrans: bool,
    /// The PTO expired: the output path sends a probe.
    pub probe_due: bool,
    /// What the connection's loss-timer slot is armed for.
    pub timer: Option<LossTimer>,
    /// The latest event that restarts the probe timeout (new data sent, new data
    /// acknowledged, §7.2). While the timer is armed for a probe, a restart only moves this
    /// time; when the timer fires early for it, it is armed again from here (one store per
    /// segment instead of re-arming the timer for each).
    pub probe_base: Instant,
    /// The probe timer was armed with one segment in flight (WCDelAckT added).
    pub probe_one_segment: bool,
}

impl Rack {
    /// RACK with TLP if `tlp`. `fack` starts at the initial sequence number.
    pub(crate) fn new(tlp: bool, iss: SeqNum) -> Self {
        Rack {
            log: VecDeque::new(),
            rate: None,
            lost_bytes: 0,
            sacked_bytes: 0,
            segs_sacked: 0,
            xmit_ts: None,
            xmit_order: 0,
            next_order: 0,
            rtt: Duration::ZERO,
            min_rtt: None,
            syn_rtt: None,
            fack: iss,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
            tlp,
            tlp_end: None,
            tlp_is_retrans: false,
            probe_due: false,
            timer: None,
            probe_base: Instant::ZERO,
            probe_one_segment: false,
        }
    }

    /// The same record with delivery-rate stamps kept beside it.
    pub(crate) fn with_rate(mut self) -> Self {
        self.rate = Some(RateLog {
            sampler: RateSampler::new(),
            stamps: VecDeque::new(),
            ack_rtt: None,
        });
        self
    }

    /// With rate stamps: the last ACK's unambiguous RTT (taken: `None` next time unless an
    /// ACK measured one) and the connection's minimum, both to the nanosecond.
    pub(crate) fn take_ack_rtt(&mut self) -> (Option<Duration>, Option<Duration>) {
        match self.rate.as_mut() {
            Some(rl) => (rl.ack_rtt.take(), self.min_rtt),
            None => (None, None),
        }
    }

    /// The delivery-rate sampler, when stamps are kept.
    pub(crate) fn sampler(&mut self) -> Option<&mut RateSampler> {
        self.rate.as_mut().map(|r| &mut r.sampler)
    }

    /// TLP is enabled.
    pub(crate) fn tlp_enabled(&self) -> bool {
        self.tlp
    }
    /// Bytes marked lost and not yet sent again.
    #[cfg(test)]
    pub(crate) fn lost_bytes(&self) -> u32 {
        self.lost_bytes
    }
    /// Bytes SACKed.
    #[cfg(test)]
    pub(crate) fn sacked_bytes(&self) -> u32 {
        self.sacked_bytes
    }
    /// RACK.segs_sacked: segments SACKed and not yet cumulatively acknowledged.
    pub(crate) fn segs_sacked(&self) -> u32 {
        self.segs_sacked
    }
    /// RACK.reordering_seen.
    #[cfg(test)]
    pub(crate) fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
    /// RACK.reo_wnd_mult.
    #[cfg(test)]
    pub(crate) fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }
    /// TLP.end_seq: the end of the outstanding probe's episode.
    pub(crate) fn tlp_end(&self) -> Option<SeqNum> {
        self.tlp_end
    }
    /// Segments in the record.
    #[cfg(test)]
    pub(crate) fn segments(&self) -> usize {
        self.log.len()
    }

    /// The pipe with RACK's marks (as RFC 6675's SetPipe, with "lost" meaning what RACK
    /// marked): what is outstanding less what was SACKed and what is lost and not resent.
    pub(crate) fn pipe(&self, flight: u32) -> u32 {
        flight
            .saturating_sub(self.sacked_bytes)
            .saturating_sub(self.lost_bytes)
    }

    /// Frees the record's memory (the connection is done sending).
    pub(crate) fn release(&mut self) {
        self.log = VecDeque::new();
        if let Some(r) = self.rate.as_mut() {
            r.stamps = VecDeque::new();
        }
        self.lost_bytes = 0;
        self.sacked_bytes = 0;
        self.segs_sacked = 0;
    }

    /// RFC 8985 §6.1: `[start, end)` was sent at `now` (`fin`: its last sequence number is
    /// the FIN). Parts already in the record are resends (their time moves to `now`, they
    /// are marked retransmitted and no longer lost); the part beyond the record is new.
    /// `repair`: a resend made to repair a loss (not a tail loss probe), whose bytes count
    /// as lost for delivery-rate estimation unless RACK's mark or a timeout counted them.
    pub(crate) fn on_transmit(
        &mut self,
        start: SeqNum,
        end: SeqNum,
        now: Instant,
        fin: bool,
        repair: bool,
    ) {
        let fin_flag = if fin { FIN } else { 0 };
        if end <= start {
            return;
        }
        let was_empty = self.log.is_empty();
        let order = self.next_order;
        self.next_order = order.wrapping_add(1);
        let last_end = match self.log.back() {
            Some(s) if start < s.end => s.end,
            _ => {
                // The common case: new data at the end of the record.
                self.log.push_back(Sent {
                    start,
                    end,
                    xmit: now,
                    order,
                    flags: fin_flag,
                });
                if self.rate.is_some() {
                    self.stamp_range(now, was_empty, self.log.len() - 1, 0);
                }
                return;
            }
        };
        let start = start.max(self.log.front().map_or(start, |s| s.start));
        let mid = end.min(last_end);
        let mut first = self.log.len();
        // Resent bytes not already counted lost (by RACK's mark or a timeout).
        let mut untallied = 0;
        if start < mid {
            self.split_at(start);
            self.split_at(mid);
            let mut i = self.index_of(start);
            first = i;
            while i < self.log.len() && self.log[i].start < mid {
                let s = &mut self.log[i];
                if s.flags & LOST != 0 {
                    self.lost_bytes -= s.len();
                }
                if s.flags & TALLIED_LOST == 0 {
                    untallied += s.len();
                }
                s.flags = (s.flags & !(LOST | TALLIED_LOST)) | RETRANS;
                if s.end == end {
                    s.flags |= fin_flag;
                }
                s.xmit = now;
                s.order = order;
                i += 1;
            }
        }
        if end > last_end {
            self.log.push_back(Sent {
                start: last_end,
                end,
                xmit: now,
                order,
                flags: fin_flag,
            });
        }
        if self.rate.is_some() {
            let lost = if repair { untallied } else { 0 };
            self.stamp_range(now, was_empty, first, lost);
        }
    }

    /// Delivery-rate estimation's part of a transmission (draft-cheng §3.2): one stamp for
    /// it, given to the segments from index `first` to the end of what it touched (new ones
    /// at the back get theirs pushed). `lost`: bytes it resent to repair a loss.
    #[cold]
    fn stamp_range(&mut self, now: Instant, was_empty: bool, first: usize, lost: u32) {
        let pipe = self.pipe(self.span());
        let Some(rl) = self.rate.as_mut() else {
            return;
        };
        rl.sampler.note_lost(lost);
        let stamp = rl.sampler.on_send(now, was_empty, pipe);
        let Some(order) = self.log.get(first).map(|s| s.order) else {
            return;
        };
        // The resent segments are contiguous from `first`; a new one, if any, is last.
        let mut i = first;
        while i < rl.stamps.len() && self.log[i].order == order {
            rl.stamps[i] = stamp;
            i += 1;
        }
        if rl.stamps.len() < self.log.len() {
            rl.stamps.push_back(stamp);
        }
    }

    /// The sequence space the record spans: SND.UNA (or the part of the first segment not
    /// yet acknowledged) to SND.MAX.
    fn span(&self) -> u32 {
        match (self.log.front(), self.log.back()) {
            (Some(f), Some(b)) => b.end.since(f.start),
            _ => 0,
        }
    }

    /// Delivery-rate estimation's part of a delivery: `bytes` of segment `i` arrived (with
    /// its stamp), unless they were counted already; `mark` records that they were (a SACK:
    /// a timeout will drop the SACK mark, not this one).
    fn rate_deliver(&mut self, now: Instant, i: usize, bytes: u32, mark: bool) {
        let Some(rl) = self.rate.as_mut() else {
            return;
        };
        if self.log[i].flags & COUNTED != 0 {
            return;
        }
        if let Some(st) = rl.stamps.get(i) {
            rl.sampler.on_delivered(now, st, bytes);
        }
        if mark {
            self.log[i].flags |= COUNTED;
        }
    }

    /// The index of the first segment that ends after `s`.
    fn index_of(&self, s: SeqNum) -> usize {
        self.log.partition_point(|e| e.end <= s)
    }

    /// Splits the segment that holds `s` inside it into two at `s`.
    fn split_at(&mut self, s: SeqNum) {
        let i = self.index_of(s);
        if let Some(e) = self.log.get(i).copied() {
            if e.start < s && s < e.end {
                self.log[i].end = s;
                // The FIN, if any, is in the right part.
                self.log[i].flags &= !FIN;
                self.log.insert(i + 1, Sent { start: s, ..e });
                if let Some(rl) = self.rate.as_mut() {
                    // Both parts keep the transmission's stamp.
                    if let Some(st) = rl.stamps.get(i).copied() {
                        rl.stamps.insert(i + 1, st);
                    }
                }
                if e.flags & SACKED != 0 {
                    // Two SACKed segments where there was one.
                    self.segs_sacked += 1;
                }
            }
        }
    }

    /// Removes what a segment's marks count from the totals (it is leaving the record or
    /// losing those marks).
    fn uncount(&mut self, s: &Sent) {
        if s.flags & LOST != 0 {
            self.lost_bytes -= s.len();
        }
        if s.flags & SACKED != 0 {
            self.sacked_bytes -= s.len();
            self.segs_sacked -= 1;
        }
    }

    /// RFC 8985 §6.2 steps 2 to 4 for one ACK: the segments it delivered (cumulatively
    /// up to `snd_una`, or by its SACK blocks) update RACK.xmit_ts, RACK.end_seq, RACK.rtt
    /// and RACK.fack, and show reordering; a D-SACK block grows the reordering window.
    ///
    /// `echo` is the ACK's timestamp echo with our clock's reading of a time (`ts_of`);
    /// `min_rtt` the RTT estimator's minimum, RACK.min_RTT until a segment never resent
    /// has been delivered (step 1; see [`Rack::min_rtt`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        snd_una: SeqNum,
        snd_nxt: SeqNum,
        blocks: &SackBlocks,
        echo: Option<(u32, &dyn Fn(Instant) -> u32)>,
        min_rtt: Option<Duration>,
    ) -> AckSummary {
        let mut latest: Option<(Instant, u32)> = None;
        let mut latest_rtt = Duration::ZERO;
        let fack_before = self.fack;
        let mut fack = fack_before;
        let mut reordered = false;
        // Step 2: whether a delivered segment's timing may be used. A retransmitted
        // segment's is ambiguous: one delivered sooner than min_RTT after the resend must
        // have been the original. The RFC also rejects one whose ACK echoes a timestamp
        // older than the resend; but a receiver echoes the last in-order segment's
        // timestamp (RFC 7323 §4.3), so the SACK of a resend that arrived out of order
        // (a tail loss probe above a second lost segment) always echoes an older one, and
        // RACK would never see it delivered: only the echo of a cumulative ACK is taken
        // (Linux's RACK uses min_RTT alone).
        let min_rtt = self.min_rtt().or(min_rtt);
        let usable = |s: &Sent, cumulative: bool| {
            if s.flags & RETRANS == 0 {
                return true;
            }
            if let (true, Some((tsecr, ts_of))) = (cumulative, echo) {
                if (tsecr.wrapping_sub(ts_of(s.xmit)) as i32) < 0 {
                    return false;
                }
            }
            min_rtt.is_none_or(|m| now.saturating_since(s.xmit) >= m)
        };
        // The most recently sent segment delivered that was never resent: its RTT is
        // unambiguous (Karn), to the nanosecond (for delivery-rate estimation).
        let mut clean: Option<(Instant, u32)> = None;
        let mut deliver = |s: &Sent, cumulative: bool| {
            if s.flags & RETRANS == 0
                && clean.is_none_or(|(t, o)| sent_after(s.xmit, s.order, t, o))
            {
                clean = Some((s.xmit, s.order));
            }
            if usable(s, cumulative)
                && latest.is_none_or(|(t, o)| sent_after(s.xmit, s.order, t, o))
            {
                latest = Some((s.xmit, s.order));
                latest_rtt = now.saturating_since(s.xmit);
            }
            // Step 3: a never-resent segment delivered below RACK.fack arrived out of
            // order.
            if s.end > fack {
                fack = s.end;
            } else if s.end < fack_before && s.flags & RETRANS == 0 {
                reordered = true;
            }
        };
        // Cumulatively acknowledged segments leave the record.
        while let Some(s) = self.log.front().copied() {
            if s.end > snd_una {
                if s.start < snd_una {
                    // Acknowledged in part: the rest stays, still unacknowledged.
                    let cut = snd_una.since(s.start);
                    if s.flags & LOST != 0 {
                        self.lost_bytes -= cut;
                    }
                    if s.flags & SACKED != 0 {
                        self.sacked_bytes -= cut;
                    }
                    // (Not marked counted: the rest is delivered when it is acknowledged.)
                    self.rate_deliver(now, 0, cut, false);
                    self.log[0].start = snd_una;
                }
                break;
            }
            self.rate_deliver(now, 0, s.len(), false);
            self.log.pop_front();
            if let Some(rl) = self.rate.as_mut() {
                rl.stamps.pop_front();
            }
            if s.flags & SACKED == 0 {
                deliver(&s, true);
            }
            self.uncount(&s);
        }
        // SACKed segments: those the blocks cover whole, newly.
        let dsack = dsack_block(snd_una, blocks);
        for (k, b) in blocks.iter().enumerate() {
            if k == 0 && dsack.is_some() {
                continue;
            }
            let (l, r) = (SeqNum::new(b.left).max(snd_una), SeqNum::new(b.right));
            if r <= l {
                continue;
            }
            let mut i = self.index_of(l);
            while i < self.log.len() && self.log[i].start < r {
                let s = self.log[i];
                if s.covered_by(l, r) && s.flags & SACKED == 0 {
                    deliver(&s, false);
                    self.rate_deliver(now, i, s.len(), true);
                    if s.flags & LOST != 0 {
                        self.lost_bytes -= s.len();
                    }
                    self.log[i].flags = (self.log[i].flags & !LOST) | SACKED;
                    self.sacked_bytes += s.len();
                    self.segs_sacked += 1;
                }
                i += 1;
            }
        }
        self.fack = fack;
        if let Some((t, _)) = clean {
            self.note_clean_rtt(now.saturating_since(t));
        }
        self.reordering_seen |= reordered;
        let mut advanced = false;
        if let Some((t, o)) = latest {
            self.rtt = latest_rtt;
            if self
                .xmit_ts
                .is_none_or(|x| sent_after(t, o, x, self.xmit_order))
            {
                self.xmit_ts = Some(t);
                self.xmit_order = o;
                advanced = true;
            }
        }
        // Step 4, first half: one step of growth per round trip that brings a D-SACK.
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        if dsack.is_some() {
            // A D-SACK says a resent segment had arrived: the original was reordered (or
            // the network duplicated it). Step 3 cannot see that reordering when the
            // original was resent before it arrived (a zero window marks it lost on the
            // third SACK), and step 4's growth below only counts once reordering is seen,
            // so the D-SACK marks it seen, as Linux's SACK tagging does (a D-SACKed
            // retransmission updates its reordering state).
            self.reordering_seen = true;
        }
        if dsack.is_some() && self.dsack_round.is_none() {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult = self.reo_wnd_mult.saturating_add(1);
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
        AckSummary {
            advanced,
            dsack: dsack.is_some(),
        }
    }

    /// An ACK delivered a segment never resent, the newest of them sent `rtt` ago: RACK's
    /// minimum RTT and the rate sample's RTT.
    fn note_clean_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        if let Some(rl) = self.rate.as_mut() {
            rl.ack_rtt = Some(rtt);
        }
    }

    /// RACK.min_RTT (see the fields `min_rtt` and `syn_rtt`), `None` until the handshake
    /// or a segment never resent is timed.
    pub(crate) fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt.into_iter().chain(self.syn_rtt).min()
    }

    /// The handshake was timed (Karn: an unambiguous SYN or SYN-ACK) at `rtt`.
    pub(crate) fn note_syn_rtt(&mut self, rtt: Duration) {
        self.syn_rtt = Some(rtt);
    }

    /// A fast retransmit was found needless by timestamps (RFC 3522, `conn/undo.rs`): the
    /// segment it resent had only been reordered. Reordering is seen (as Linux's
    /// `tcp_try_undo_partial` records it), so the reordering window is no longer zero.
    pub(crate) fn note_reordering(&mut self) {
        self.reordering_seen = true;
    }

    /// RFC 8985 §6.2 step 4, the rest of the first half: a recovery (fast or RTO) ended;
    /// after 16 without a D-SACK the reordering window's multiplier returns to 1.
    pub(crate) fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RFC 8985 §6.2 step 4, `RACK_update_reo_wnd`'s result: zero while no reordering has
    /// been seen and the sender is recovering or DupThresh segments are SACKed (the
    /// duplicate-ACK rule's speed), else reo_wnd_mult · min_RTT/4, at most SRTT.
    pub(crate) fn reo_wnd(
        &self,
        recovering: bool,
        dupthresh: u32,
        min_rtt: Option<Duration>,
        srtt: Duration,
    ) -> Duration {
        if !self.reordering_seen && (recovering || self.segs_sacked >= dupthresh) {
            return Duration::ZERO;
        }
        let quarter = Duration::from_nanos(min_rtt.unwrap_or(Duration::ZERO).as_nanos() / 4);
        quarter
            .saturating_mul(u64::from(self.reo_wnd_mult))
            .min(srtt)
    }

    /// RFC 8985 §6.2 step 5, `RACK_detect_loss`: marks lost every unacknowledged segment
    /// sent before RACK.xmit_ts that has waited RACK.rtt + `reo_wnd`. Returns the bytes newly
    /// marked and, if others still wait, how long until the last of them would be lost
    /// (the RFC's max: the reordering timer is armed for that).
    pub(crate) fn detect_loss(&mut self, now: Instant, reo_wnd: Duration) -> (u32, Duration) {
        let Some(rx) = self.xmit_ts else {
            return (0, Duration::ZERO);
        };
        let wait = self.rtt.saturating_add(reo_wnd);
        let (mut newly, mut timeout) = (0u32, Duration::ZERO);
        let mut tallied = 0;
        for s in self.log.iter_mut() {
            if s.flags & (SACKED | LOST) != 0 {
                continue;
            }
            if !sent_after(rx, self.xmit_order, s.xmit, s.order) {
                // Segments are sent in sequence order, and a resend is later than its
                // original: past a never-resent segment sent after RACK.xmit_ts, every
                // later one was sent after it too.
                if s.flags & RETRANS == 0 {
                    break;
                }
                continue;
            }
            let waited = now.saturating_since(s.xmit);
            if waited >= wait {
                if s.flags & TALLIED_LOST == 0 {
                    tallied += s.len();
                }
                s.flags |= LOST | TALLIED_LOST;
                newly += s.len();
            } else {
                timeout = timeout.max(wait - waited);
            }
        }
        self.lost_bytes += newly;
        if let Some(rl) = self.rate.as_mut() {
            rl.sampler.note_lost(tallied);
        }
        (newly, timeout)
    }

    /// Whether the output path should look at RACK before anything else: a probe is due, or
    /// segments are marked lost and not resent (tested on every send; the rest is out of
    /// line).
    #[inline]
    pub(crate) fn wants_to_send_first(&self) -> bool {
        self.probe_due || self.lost_bytes != 0
    }

    /// The first segment marked lost and not yet resent, for the output path to resend:
    /// `(start, len)`.
    pub(crate) fn first_lost(&self) -> Option<(SeqNum, u32)> {
        if self.lost_bytes == 0 {
            return None;
        }
        self.log
            .iter()
            .find(|s| s.flags & LOST != 0)
            .map(|s| (s.start, s.len()))
    }

    /// The last segment sent, for a probe that resends it (§7.3): `(start, len)`.
    pub(crate) fn last_segment(&self) -> Option<(SeqNum, u32)> {
        self.log.back().map(|s| (s.start, s.len()))
    }

    /// The retransmission timer expired: the receiver may have reneged on what it SACKed
    /// (RFC 2018 §8), and go-back-N resends everything, so the marks go; no probe is
    /// outstanding any more.
    ///
    /// For delivery-rate estimation every segment not yet delivered is lost now (Linux's
    /// `tcp_timeout_mark_lost` counts them in `tp->lost` at the timeout): counted once
    /// here, not again as go-back-N resends each.
    pub(crate) fn on_rto(&mut self) {
        let mut tallied = 0;
        for s in self.log.iter_mut() {
            if s.flags & (COUNTED | TALLIED_LOST) == 0 {
                tallied += s.len();
                s.flags |= TALLIED_LOST;
            }
            s.flags &= !(LOST | SACKED);
        }
        if let Some(rl) = self.rate.as_mut() {
            rl.sampler.note_lost(tallied);
        }
        self.lost_bytes = 0;
        self.sacked_bytes = 0;
        self.segs_sacked = 0;
        self.tlp_end = None;
        self.probe_due = false;
        self.timer = None;
    }

    /// Forgets the outstanding probe (a recovery began: its loss is being repaired there).
    pub(crate) fn end_probe_episode(&mut self) {
        self.tlp_end = None;
    }

    /// RFC 8985 §7.2, `TLP_calc_PTO`: 2·SRTT, plus WCDelAckT when one segment is in flight;
    /// one second before an RTT sample; never later than the RTO (`rto_left`).
    pub(crate) fn pto(srtt: Option<Duration>, one_segment: bool, rto_left: Duration) -> Duration {
        let pto = match srtt {
            Some(s) => {
                let p = s.saturating_mul(2);
                if one_segment {
                    p.saturating_add(WC_DEL_ACK)
                } else {
                    p
                }
            }
            None => PTO_WITHOUT_RTT,
        };
        pto.min(rto_left)
    }

    /// RFC 8985 §7.3: a probe was sent; its episode lasts until SND.NXT is acknowledged.
    pub(crate) fn on_probe_sent(&mut self, snd_nxt: SeqNum, retransmission: bool) {
        self.tlp_end = Some(snd_nxt);
        self.tlp_is_retrans = retransmission;
    }

    /// RFC 8985 §7.4.2, `TLP_process_ack`, for an ACK of `ack` with D-SACK block `dsack`;
    /// `dupack_without_sack`: the ACK is a duplicate that carries no SACK option.
    pub(crate) fn tlp_on_ack(
        &mut self,
        ack: SeqNum,
        dsack: Option<(SeqNum, SeqNum)>,
        dupack_without_sack: bool,
    ) -> TlpOutcome {
        let Some(end) = self.tlp_end else {
            return TlpOutcome::Pending;
        };
        if ack < end {
            return TlpOutcome::Pending;
        }
        if !self.tlp_is_retrans {
            // The probe carried new data, and it was delivered.
            self.tlp_end = None;
            TlpOutcome::NoLoss
        } else if dsack.is_some_and(|(_, r)| r == end) {
            // The probe's resend was needless: the original had arrived.
            self.tlp_end = None;
            TlpOutcome::NoLoss
        } else if ack > end {
            // The probe repaired the only loss.
            self.tlp_end = None;
            TlpOutcome::Repaired
        } else if dupack_without_sack {
            // Both the original and the probe arrived (the receiver sent a plain
            // duplicate for the second).
            self.tlp_end = None;
            TlpOutcome::NoLoss
        } else {
            TlpOutcome::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::SackBlock;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }
    fn d(v: u64) -> Duration {
        Duration::from_millis(v)
    }
    fn sq(v: u32) -> SeqNum {
        SeqNum::new(v)
    }
    fn blocks(list: &[(u32, u32)]) -> SackBlocks {
        let mut b = SackBlocks::default();
        for &(left, right) in list {
            b.push(SackBlock { left, right });
        }
        b
    }
    /// `n` 100-byte segments from sequence 0, one sent each millisecond from 1 ms.
    fn send_segments(r: &mut Rack, n: u32) {
        for k in 0..n {
            r.on_transmit(
                sq(k * 100),
                sq(k * 100 + 100),
                ms(1 + u64::from(k)),
                false,
                true,
            );
        }
    }

    /// Ten such segments, with TLP.
    fn ten_segments() -> Rack {
        let mut r = Rack::new(true, sq(0));
        send_segments(&mut r, 10);
        r
    }

    /// The stamps of delivery-rate estimation stay beside their segments when a resend
    /// splits one, each byte is delivered once (by SACK or by the cumulative ACK, not
    /// both), and bytes resent to repair a loss count as lost (draft-cheng §3.2, §3.3).
    #[test]
    fn draft_cheng_3_2_stamps_follow_the_record_through_splits_sacks_and_acks() {
        let mut r = Rack::new(false, sq(0)).with_rate();
        send_segments(&mut r, 4);
        // Part of the second segment is resent: it splits in two, each part with a stamp.
        r.on_transmit(sq(150), sq(200), ms(8), false, true);
        let rl = r.rate.as_ref().expect("stamps kept");
        assert_eq!((r.log.len(), rl.stamps.len()), (5, 5));
        assert_eq!(rl.sampler.lost(), 50, "the repair's bytes count as lost");
        assert_eq!(rl.stamps[1].sent_time(), ms(2));
        assert_eq!(rl.stamps[2].sent_time(), ms(8));
        // A SACK of the last two segments delivers 200 bytes; the newest sent at 4 ms.
        r.on_ack(ms(30), sq(0), sq(400), &blocks(&[(200, 400)]), None, None);
        let s = r.sampler().unwrap();
        assert_eq!(s.delivered(), 200);
        let rs = s.generate_sample(None).expect("a sample");
        assert_eq!(rs.rtt, d(26));
        // The cumulative ACK of everything delivers the other 200 only.
        r.on_ack(ms(40), sq(400), sq(400), &blocks(&[]), None, None);
        let s = r.sampler().unwrap();
        assert_eq!(s.delivered(), 400);
        let rs = s.generate_sample(None).expect("a sample");
        assert_eq!(rs.rtt, d(32), "the newest delivered is the resend at 8 ms");
        assert_eq!(rs.lost, 0, "nothing was lost after the resend was sent");
        assert!(r.log.is_empty() && r.rate.as_ref().unwrap().stamps.is_empty());
        // The unambiguous RTT comes from the newest segment never resent (the part of the
        // split segment that was not resent, sent at 2 ms), not from the resend.
        assert_eq!(r.take_ack_rtt(), (Some(d(38)), Some(d(26))));
    }

    /// A timeout drops the SACK marks (the receiver may have reneged, RFC 2018 §8), but
    /// what was SACKed was delivered once: the cumulative ACK after the timeout does not
    /// deliver it again (it did: C.delivered ran ahead of the bytes sent, and BBR's
    /// bandwidth samples with it, on a path with 1% loss).
    #[test]
    fn draft_cheng_3_3_a_segment_sacked_before_a_timeout_is_delivered_once() {
        let mut r = Rack::new(false, sq(0)).with_rate();
        for k in 0..4u32 {
            r.on_transmit(sq(k * 100), sq(k * 100 + 100), ms(1), false, true);
        }
        r.on_ack(ms(30), sq(0), sq(400), &blocks(&[(200, 400)]), None, None);
        assert_eq!(r.sampler().unwrap().delivered(), 200);
        r.on_rto();
        // Go-back-N resends the first two; the cumulative ACK covers all four.
        r.on_transmit(sq(0), sq(200), ms(300), false, true);
        r.on_ack(ms(330), sq(400), sq(400), &blocks(&[]), None, None);
        assert_eq!(r.sampler().unwrap().delivered(), 400);
    }

    /// Linux counts `C.lost` when a segment is marked lost (`tcp_mark_skb_lost`), and a
    /// timeout marks the whole flight (`tcp_timeout_mark_lost`): here the timeout counts
    /// what was not delivered once, and go-back-N's resends of it count nothing more. (They
    /// counted again, one segment on each ACK after the timeout: BBR took that much out of
    /// its window on every ACK and stayed at 4 packets for seconds on a 7-packet buffer.)
    #[test]
    fn draft_cheng_3_3_a_timeout_counts_the_undelivered_flight_lost_once() {
        let mut r = Rack::new(false, sq(0)).with_rate();
        send_segments(&mut r, 4);
        r.on_ack(ms(30), sq(0), sq(400), &blocks(&[(300, 400)]), None, None);
        r.on_rto();
        assert_eq!(
            r.sampler().unwrap().lost(),
            300,
            "all but the SACKed segment"
        );
        for k in 0..3u32 {
            let at = ms(300 + u64::from(k));
            r.on_transmit(sq(k * 100), sq(k * 100 + 100), at, false, true);
        }
        assert_eq!(r.sampler().unwrap().lost(), 300, "the resends add nothing");
        // A resend lost again and repaired again counts again: a new transmission.
        r.on_transmit(sq(0), sq(100), ms(700), false, true);
        assert_eq!(r.sampler().unwrap().lost(), 400);
    }

    /// RACK's mark counts a segment lost at once (on the ACK that found it, as Linux's
    /// `tp->lost`), and its resend does not count it again.
    #[test]
    fn draft_cheng_3_3_a_segment_rack_marks_lost_counts_once_when_marked() {
        let mut r = Rack::new(false, sq(0)).with_rate();
        send_segments(&mut r, 4);
        r.on_ack(ms(30), sq(0), sq(400), &blocks(&[(100, 400)]), None, None);
        assert_eq!(r.detect_loss(ms(30), Duration::ZERO).0, 100);
        assert_eq!(r.sampler().unwrap().lost(), 100, "counted when marked");
        r.on_transmit(sq(0), sq(100), ms(31), false, true);
        assert_eq!(r.sampler().unwrap().lost(), 100, "not again when resent");
    }

    #[test]
    fn rfc8985_6_2_step2_sent_after_breaks_ties_of_time_by_transmission_order() {
        assert!(sent_after(ms(2), 1, ms(1), 5));
        assert!(!sent_after(ms(1), 5, ms(2), 1));
        assert!(sent_after(ms(1), 2, ms(1), 1));
        assert!(!sent_after(ms(1), 1, ms(1), 1));
        // The order wraps.
        assert!(sent_after(ms(1), 0, ms(1), u32::MAX));
    }

    #[test]
    fn rfc8985_6_2_step5_a_resend_at_the_same_instant_as_higher_data_is_later_than_it() {
        let mut r = Rack::new(false, sq(0));
        for k in 0..5u32 {
            r.on_transmit(sq(k * 100), sq(k * 100 + 100), ms(1), false, true);
        }
        r.on_ack(ms(10), sq(0), sq(500), &blocks(&[(100, 500)]), None, None);
        assert_eq!(r.detect_loss(ms(10), Duration::ZERO).0, 100);
        // More data and the resend at one instant, the resend last.
        r.on_transmit(sq(500), sq(600), ms(10), false, true);
        r.on_transmit(sq(0), sq(100), ms(10), false, true);
        r.on_ack(ms(20), sq(0), sq(600), &blocks(&[(100, 600)]), None, None);
        assert_eq!(
            r.detect_loss(ms(20), Duration::ZERO).0,
            0,
            "the resend is not lost"
        );
    }

    #[test]
    fn rfc2883_4_the_first_block_below_the_ack_or_inside_the_second_is_a_dsack() {
        assert_eq!(
            dsack_block(sq(1000), &blocks(&[(500, 600)])),
            Some((sq(500), sq(600)))
        );
        assert_eq!(
            dsack_block(sq(1000), &blocks(&[(1500, 1600), (1200, 2000)])),
            Some((sq(1500), sq(1600)))
        );
        assert_eq!(dsack_block(sq(1000), &blocks(&[(1500, 1600)])), None);
        assert_eq!(
            dsack_block(sq(1000), &blocks(&[(1500, 1600), (2000, 2100)])),
            None
        );
    }

    #[test]
    fn rfc8985_6_1_resent_parts_are_split_off_and_take_the_new_time() {
        let mut r = ten_segments();
        assert_eq!(r.segments(), 10);
        // Resend 150..250: the second and third segments split at 150 and 250.
        r.on_transmit(sq(150), sq(250), ms(50), false, true);
        assert_eq!(r.segments(), 12);
        let spans: Vec<_> = r.log.iter().map(|s| (s.start.get(), s.end.get())).collect();
        assert_eq!(
            &spans[..5],
            &[(0, 100), (100, 150), (150, 200), (200, 250), (250, 300)]
        );
        assert_eq!(r.log[2].xmit, ms(50));
        assert_eq!(r.log[2].flags, RETRANS);
        assert_eq!(r.log[1].xmit, ms(2));
        // A send that overlaps the end resends the old part and adds the new.
        r.on_transmit(sq(950), sq(1100), ms(60), false, true);
        let last: Vec<_> = r
            .log
            .iter()
            .rev()
            .take(2)
            .map(|s| (s.start.get(), s.end.get(), s.flags))
            .collect();
        assert_eq!(last, vec![(1000, 1100, 0), (950, 1000, RETRANS)]);
    }

    #[test]
    fn rfc2018_a_segment_ending_with_the_fin_is_sacked_when_its_data_is() {
        for right in [200, 201] {
            let mut r = Rack::new(true, sq(0));
            r.on_transmit(sq(0), sq(100), ms(1), false, true);
            // 100 data bytes and the FIN.
            r.on_transmit(sq(100), sq(201), ms(2), true, true);
            // This engine's receiver reports the data (200), Linux's the FIN too (201).
            let s = r.on_ack(ms(30), sq(0), sq(201), &blocks(&[(100, right)]), None, None);
            assert!(s.advanced, "right edge {right}");
            assert_eq!(r.segs_sacked(), 1);
            assert_eq!(r.detect_loss(ms(30), Duration::ZERO).0, 100);
        }
        // A resend of part of it leaves the FIN with the right part.
        let mut r = Rack::new(true, sq(0));
        r.on_transmit(sq(0), sq(101), ms(1), true, true);
        r.on_transmit(sq(0), sq(50), ms(5), false, true);
        assert_eq!(r.log[0].flags & FIN, 0);
        assert_eq!(r.log[1].flags & FIN, FIN);
    }

    #[test]
    fn rfc8985_6_2_step2_the_latest_delivered_transmission_sets_rack_xmit_ts_and_rtt() {
        let mut r = ten_segments();
        // SACK of segments 3 and 4 (300..500) at 30 ms: RACK.xmit_ts is segment 4's, 5 ms.
        let s = r.on_ack(ms(30), sq(0), sq(1000), &blocks(&[(300, 500)]), None, None);
        assert!(s.advanced);
        assert_eq!(r.xmit_ts, Some(ms(5)));
        assert_eq!(r.xmit_order, 4);
        assert_eq!(r.rtt, d(25));
        assert_eq!(r.segs_sacked(), 2);
        assert_eq!(r.sacked_bytes(), 200);
        // An older delivery does not move it back.
        let s = r.on_ack(
            ms(31),
            sq(100),
            sq(1000),
            &SackBlocks::default(),
            None,
            None,
        );
        assert!(!s.advanced);
        assert_eq!(r.xmit_ts, Some(ms(5)));
    }

    #[test]
    fn rfc8985_6_2_step2_an_ambiguous_retransmission_is_not_a_sample() {
        let mut r = ten_segments();
        r.on_transmit(sq(0), sq(100), ms(40), false, true);
        // Delivered 2 ms after the resend, with a minimum RTT of 10 ms: the original arrived.
        let s = r.on_ack(
            ms(42),
            sq(100),
            sq(1000),
            &SackBlocks::default(),
            None,
            Some(d(10)),
        );
        assert!(!s.advanced);
        assert_eq!(r.xmit_ts, None);
        // With timestamps, an echo older than the resend says the same.
        let mut r = ten_segments();
        r.on_transmit(sq(0), sq(100), ms(40), false, true);
        let ts_of = |t: Instant| (t.as_nanos() / 1_000_000) as u32;
        let s = r.on_ack(
            ms(60),
            sq(100),
            sq(1000),
            &SackBlocks::default(),
            Some((1, &ts_of)),
            Some(d(10)),
        );
        assert!(!s.advanced);
        let s = r.on_ack(
            ms(61),
            sq(200),
            sq(1000),
            &SackBlocks::default(),
            Some((40, &ts_of)),
            Some(d(10)),
        );
        assert!(s.advanced);
    }

    /// Step 2's ambiguity test compares with RACK.min_RTT on the engine's clock. With
    /// timestamps, the RTT estimator's samples are whole milliseconds: on a 30.4 ms path
    /// its minimum can be 31 ms, and a tail loss probe's SACK 30.7 ms after the probe was
    /// taken for the original's, so RACK never saw the hole below it and the tail waited
    /// for the RTO (the live tail-loss test against Linux, 3 runs in 20).
    #[test]
    fn rfc8985_6_2_step2_min_rtt_is_measured_on_the_engines_clock() {
        let mut r = ten_segments();
        let at = |us: u64| Instant::ZERO + Duration::from_micros(us);
        let coarse = Some(d(31));
        // The first segment, sent at 1 ms, acknowledged at 31.4 ms: RACK.min_RTT = 30.4 ms.
        r.on_ack(
            at(31_400),
            sq(100),
            sq(1000),
            &SackBlocks::default(),
            None,
            coarse,
        );
        assert_eq!(r.min_rtt(), Some(Duration::from_micros(30_400)));
        // Segments 100..1000 are lost; the probe resends the last at 100 ms and its SACK
        // comes back 30.7 ms later: the resend's, not the original's.
        r.on_transmit(sq(900), sq(1000), ms(100), false, true);
        let s = r.on_ack(
            at(130_700),
            sq(100),
            sq(1000),
            &blocks(&[(900, 1000)]),
            None,
            coarse,
        );
        assert!(s.advanced, "the probe's delivery is a sample");
        let (lost, _) = r.detect_loss(at(130_700), Duration::ZERO);
        assert_eq!(
            lost, 800,
            "the eight segments sent before the probe are lost"
        );
    }

    /// RACK.min_RTT includes the handshake's RTT, as Linux's `tcp_min_rtt` does: a live
    /// path's jitter put a probe's SACK 13 µs under the least RTT of the data segments
    /// (30.665 against 30.678 ms), and the SYN, which is not delayed by its own
    /// serialization as a full segment is, keeps the minimum under what a resend shows.
    #[test]
    fn rfc8985_6_2_step2_min_rtt_includes_the_handshake() {
        let mut r = ten_segments();
        let at = |us: u64| Instant::ZERO + Duration::from_micros(us);
        r.note_syn_rtt(Duration::from_micros(30_400));
        r.on_ack(
            at(31_678),
            sq(100),
            sq(1000),
            &SackBlocks::default(),
            None,
            None,
        );
        assert_eq!(r.min_rtt(), Some(Duration::from_micros(30_400)));
        r.on_transmit(sq(900), sq(1000), ms(100), false, true);
        let s = r.on_ack(
            at(130_665),
            sq(100),
            sq(1000),
            &blocks(&[(900, 1000)]),
            None,
            None,
        );
        assert!(s.advanced, "the probe's delivery is a sample");
        // Delivered sooner than the handshake's RTT after the resend: the original's.
        let mut r = ten_segments();
        r.note_syn_rtt(Duration::from_micros(30_400));
        r.on_transmit(sq(900), sq(1000), ms(100), false, true);
        let s = r.on_ack(
            at(130_000),
            sq(0),
            sq(1000),
            &blocks(&[(900, 1000)]),
            None,
            None,
        );
        assert!(!s.advanced);
    }

    #[test]
    fn rfc8985_6_2_step3_a_never_resent_segment_delivered_below_fack_is_reordering() {
        let mut r = ten_segments();
        r.on_ack(ms(20), sq(0), sq(1000), &blocks(&[(500, 600)]), None, None);
        assert!(!r.reordering_seen());
        assert_eq!(r.fack, sq(600));
        // Segment 2 arrives after segment 5: reordering.
        r.on_ack(
            ms(21),
            sq(0),
            sq(1000),
            &blocks(&[(200, 300), (500, 600)]),
            None,
            None,
        );
        assert!(r.reordering_seen());
    }

    #[test]
    fn rfc8985_6_2_step3_a_resent_segment_below_fack_is_not_reordering() {
        let mut r = ten_segments();
        r.on_ack(ms(20), sq(0), sq(1000), &blocks(&[(500, 600)]), None, None);
        r.on_transmit(sq(0), sq(100), ms(21), false, true);
        r.on_ack(
            ms(40),
            sq(100),
            sq(1000),
            &blocks(&[(500, 600)]),
            None,
            None,
        );
        assert!(!r.reordering_seen());
    }

    #[test]
    fn rfc8985_6_2_step4_the_window_is_zero_until_reordering_then_a_quarter_min_rtt() {
        let mut r = ten_segments();
        let (min, srtt) = (Some(d(40)), d(50));
        // Nothing SACKed, not recovering: min_RTT/4.
        assert_eq!(r.reo_wnd(false, 3, min, srtt), d(10));
        // Recovering, no reordering seen: zero.
        assert_eq!(r.reo_wnd(true, 3, min, srtt), Duration::ZERO);
        // DupThresh segments SACKed: zero.
        r.on_ack(ms(20), sq(0), sq(1000), &blocks(&[(300, 600)]), None, None);
        assert_eq!(r.reo_wnd(false, 3, min, srtt), Duration::ZERO);
        r.reordering_seen = true;
        assert_eq!(r.reo_wnd(true, 3, min, srtt), d(10));
        // Bounded by SRTT.
        r.reo_wnd_mult = 8;
        assert_eq!(r.reo_wnd(true, 3, min, srtt), d(50));
    }

    /// A reordered segment resent before it arrived (the window is zero until reordering is
    /// seen) is never delivered as a never-resent one below RACK.fack, so step 3 cannot see
    /// the reordering; the D-SACK of the resend does, or the window stays zero in every
    /// recovery and the growth step 4 makes on D-SACK has no effect.
    #[test]
    fn rfc8985_6_2_step4_a_dsack_shows_reordering_the_window_can_then_grow() {
        let mut r = ten_segments();
        let (min, srtt) = (Some(d(40)), d(50));
        assert!(!r.reordering_seen());
        assert_eq!(r.reo_wnd(true, 3, min, srtt), Duration::ZERO);
        r.on_ack(ms(20), sq(100), sq(1000), &blocks(&[(0, 100)]), None, None);
        assert!(r.reordering_seen());
        assert_eq!(r.reo_wnd(true, 3, min, srtt), d(20), "min_RTT/4 x 2");
    }

    #[test]
    fn rfc8985_6_2_step4_dsack_grows_the_window_once_per_round_and_16_recoveries_reset_it() {
        let mut r = ten_segments();
        r.on_ack(ms(20), sq(100), sq(1000), &blocks(&[(0, 100)]), None, None);
        assert_eq!(r.reo_wnd_mult(), 2);
        // A second D-SACK in the same round (SND.UNA below the round's end) does not grow it.
        r.on_ack(
            ms(21),
            sq(200),
            sq(1000),
            &blocks(&[(100, 200)]),
            None,
            None,
        );
        assert_eq!(r.reo_wnd_mult(), 2);
        // Once SND.UNA passes the round's end, the next one does.
        r.on_ack(
            ms(22),
            sq(1000),
            sq(1000),
            &SackBlocks::default(),
            None,
            None,
        );
        r.on_ack(
            ms(23),
            sq(1000),
            sq(1000),
            &blocks(&[(900, 1000)]),
            None,
            None,
        );
        assert_eq!(r.reo_wnd_mult(), 3);
        for _ in 0..15 {
            r.on_recovery_exit();
            assert_eq!(r.reo_wnd_mult(), 3);
        }
        r.on_recovery_exit();
        assert_eq!(r.reo_wnd_mult(), 1);
    }

    #[test]
    fn rfc8985_6_2_step5_segments_sent_before_the_delivered_one_are_lost_after_rtt_plus_reo_wnd() {
        let mut r = ten_segments();
        // Segments 3..9 SACKed at 30 ms; 0..2 were sent at 1..3 ms, RACK.xmit_ts = 10 ms,
        // RACK.rtt = 20 ms.
        r.on_ack(ms(30), sq(0), sq(1000), &blocks(&[(300, 1000)]), None, None);
        assert_eq!(r.rtt, d(20));
        // With a window of 5 ms, a segment sent at t is lost once now >= t + 25 ms.
        let (lost, timeout) = r.detect_loss(ms(27), d(5));
        assert_eq!(lost, 200, "segments 0 and 1 (sent at 1 and 2 ms) are lost");
        assert_eq!(timeout, d(1), "segment 2 waits until 28 ms");
        assert_eq!(r.first_lost(), Some((sq(0), 100)));
        let (lost, timeout) = r.detect_loss(ms(28), d(5));
        assert_eq!((lost, timeout), (100, Duration::ZERO));
        assert_eq!(r.lost_bytes(), 300);
        assert_eq!(r.pipe(1000), 0);
        // Resending one takes its mark off.
        r.on_transmit(sq(0), sq(100), ms(29), false, true);
        assert_eq!(r.lost_bytes(), 200);
        assert_eq!(r.first_lost(), Some((sq(100), 100)));
        assert_eq!(r.pipe(1000), 100);
    }

    #[test]
    fn rfc8985_6_2_step5_a_lost_retransmission_is_found_by_time() {
        let mut r = ten_segments();
        r.on_ack(ms(30), sq(0), sq(1000), &blocks(&[(100, 1000)]), None, None);
        r.detect_loss(ms(30), Duration::ZERO);
        assert_eq!(r.first_lost(), Some((sq(0), 100)));
        r.on_transmit(sq(0), sq(100), ms(31), false, true);
        // Nothing is delivered past the resend yet: it is not lost.
        assert_eq!(r.detect_loss(ms(80), Duration::ZERO).0, 0);
        // New data sent after the resend is delivered: the resend, older, is lost.
        r.on_transmit(sq(1000), sq(1100), ms(32), false, true);
        r.on_ack(ms(60), sq(0), sq(1100), &blocks(&[(100, 1100)]), None, None);
        assert_eq!(r.detect_loss(ms(60), Duration::ZERO).0, 100);
    }

    #[test]
    fn rfc8985_7_2_pto_is_two_srtt_plus_the_delayed_ack_allowance_for_one_segment() {
        assert_eq!(Rack::pto(Some(d(50)), false, d(1000)), d(100));
        assert_eq!(Rack::pto(Some(d(50)), true, d(1000)), d(300));
        assert_eq!(Rack::pto(None, false, d(3000)), d(1000));
        // Never past the RTO.
        assert_eq!(Rack::pto(Some(d(50)), true, d(250)), d(250));
    }

    #[test]
    fn rfc8985_7_4_2_the_probe_episode_ends_by_delivery_dsack_or_a_repair() {
        let mut r = Rack::new(true, sq(0));
        // New data probe: delivered, no loss.
        r.on_probe_sent(sq(1000), false);
        assert_eq!(r.tlp_on_ack(sq(900), None, false), TlpOutcome::Pending);
        assert_eq!(r.tlp_on_ack(sq(1000), None, false), TlpOutcome::NoLoss);
        assert_eq!(r.tlp_end(), None);
        // A resent probe that D-SACK shows was needless.
        r.on_probe_sent(sq(1000), true);
        assert_eq!(
            r.tlp_on_ack(sq(1000), Some((sq(900), sq(1000))), false),
            TlpOutcome::NoLoss
        );
        // A resent probe acknowledged exactly, without a D-SACK: undecided ...
        r.on_probe_sent(sq(1000), true);
        assert_eq!(r.tlp_on_ack(sq(1000), None, false), TlpOutcome::Pending);
        // ... until a plain duplicate (both arrived) or an ACK beyond it (it repaired a loss).
        assert_eq!(r.tlp_on_ack(sq(1000), None, true), TlpOutcome::NoLoss);
        r.on_probe_sent(sq(1000), true);
        assert_eq!(r.tlp_on_ack(sq(1100), None, false), TlpOutcome::Repaired);
        assert_eq!(r.tlp_end(), None);
    }
}
