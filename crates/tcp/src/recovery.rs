//! Loss recovery: duplicate-ACK counting, fast retransmit, and the recovery episode. How big
//! the window is belongs to the congestion controller; this module decides what to resend
//! and how far the window is inflated while the receiver caches out-of-order segments.
//!
//! - Tahoe (4.3BSD-Tahoe): on the threshold, retransmit one segment and slow-start.
//! - Reno, exactly as the 30 Apr 1990 diff (seed 001) and its correction sent the next
//!   morning: on the threshold, ssthresh from min(snd_wnd, cwnd)/2, retransmit the one
//!   segment, cwnd = ssthresh + 3*MSS ("bump cwnd by the amount in the receiver"); each
//!   further duplicate ACK inflates cwnd by one MSS; the ACK of new data retracts cwnd to
//!   ssthresh (only if larger, the correction) and clears the count; a timeout clears it
//!   too (the tcp_timer.c hunk). The inflation is kept here as `inflation_bytes` on top of
//!   the controller's cwnd, which is the message's "effective window of
//!   min(snd_wnd, cwnd + dupacks*mss)" without the multiply the diff avoided.
//! - NewReno (RFC 6582): a recovery point; partial ACKs retransmit the next hole and stay in
//!   recovery; only an ACK covering the recovery point ends it.
//! - SACK (RFC 6675): the scoreboard of [`crate::sack`]; recovery starts on the threshold or
//!   when IsLost(SND.UNA); while in it the sender keeps `pipe` below cwnd and chooses what
//!   to send with NextSeg (see `Connection`'s output path); no window inflation.
//!
//! With [`WindowReduction::Prr`](crate::WindowReduction::Prr) the episode is the same, but
//! how much each ACK may send is RFC 9937's SndCnt ([`crate::prr`], kept by the connection),
//! not SACK's pipe < cwnd nor Reno's inflation, and the episode ends with cwnd = ssthresh.

use crate::cc::{CongestionControl, CongestionEvent};
use crate::config::RecoveryAlgorithm;
use crate::sack::{NextSeg, Scoreboard};
use crate::seq::SeqNum;
use ackclock_wire::SackBlocks;

/// What a duplicate ACK led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DupAckOutcome {
    /// Counted, nothing else.
    Counted,
    /// RFC 3042: one new segment may be sent beyond cwnd.
    LimitedTransmit,
    /// The threshold was reached: a retransmission is queued.
    FastRetransmit,
    /// Window inflated by one segment during fast recovery.
    Inflated,
}

/// What an ACK of new data led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NewAckOutcome {
    /// No recovery episode was in progress.
    Normal,
    /// A partial ACK: SND.UNA advanced but not past the recovery point. With NewReno the
    /// next hole is queued for retransmission; with SACK the scoreboard decides what goes
    /// next.
    PartialAck {
        /// The first partial ACK of the episode (RFC 6582 restarts the retransmission
        /// timer on this one only).
        first: bool,
    },
    /// The recovery episode ended.
    Exit,
}

/// A segment the recovery wants resent now, ahead of new data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RetransmitRequest {
    /// Sequence number of the first byte to resend (one segment from here).
    pub seq: SeqNum,
    /// Restart the retransmission timer when it is sent (the diff zeroes TCPT_REXMT so that
    /// tcp_output re-arms it; RFC 6582 restarts it on the first partial ACK only).
    pub restart_timer: bool,
}

/// The loss-recovery state of one connection: the duplicate-ACK count, the recovery
/// episode, the window inflation and the SACK scoreboard, run by the algorithm of
/// [`TcpConfig::recovery`](crate::TcpConfig::recovery).
///
/// The connection reports ACKs to it (`on_dupack`, `on_new_ack`, `on_other_ack`,
/// `on_sack_blocks`) and timeouts (`on_rto`); it asks for retransmissions
/// (`take_retransmit`) ahead of new data, and adds `extra_window` to cwnd.
#[derive(Clone, Debug)]
// `repr(C)`, in this order: what only losses touch first (the SACK scoreboard, whose
// per-ACK count comes last), then what every ACK reads or writes, in the last 40 bytes:
// in a `Connection`, which is aligned to 64 bytes, they share the first cache line of its
// hot block (see its layout).
#[repr(C)]
pub(crate) struct Recovery {
    /// A loss the controller must answer (`CongestionControl::on_congestion`), taken by the
    /// connection right after the duplicate ACK that detected it.
    congestion: Option<CongestionEvent>,
    threshold: u32,
    /// RFC 6582 `recover`: the highest sequence sent when the episode began.
    recover: SeqNum,
    limited_transmit: bool,
    recover_valid: bool,
    first_partial_done: bool,
    /// RFC 8985 RACK detects the losses (SACK recovery only): the duplicate-ACK threshold
    /// no longer starts an episode; [`enter_on_rack_loss`](Self::enter_on_rack_loss) does.
    rack: bool,
    /// The SACK scoreboard (used by [`RecoveryAlgorithm::Sack`] only); only the recovery
    /// writes it.
    sb: Scoreboard,
    pending: Option<RetransmitRequest>,
    /// The congestion window the recovery asks for (Tahoe's one segment, the retraction at
    /// the end of an episode), taken by the connection, which alone writes cwnd.
    window: Option<u32>,
    /// Consecutive duplicate ACKs (BSD's t_dupacks).
    dupacks: u32,
    /// Bytes added to cwnd while the receiver caches segments (Reno/NewReno inflation).
    inflation: u32,
    /// RFC 3042 allowance beyond cwnd for the first two duplicate ACKs, in bytes.
    limited_extra: u32,
    alg: RecoveryAlgorithm,
    in_recovery: bool,
}

impl Recovery {
    /// The size of the tail of the structure (`repr(C)`) that holds what every ACK touches:
    /// the scoreboard's count of ranges, the pending retransmission and window, the
    /// duplicate-ACK count, the inflation, limited transmit's allowance, the algorithm and
    /// whether an episode is in progress. (For the layout tests.)
    #[cfg(test)]
    pub(crate) const PER_ACK_BYTES: usize = 40;

    /// Idle recovery for `alg`, with fast retransmit on the `threshold`th duplicate ACK (at
    /// least 1) and RFC 3042 limited transmit if `limited_transmit`.
    pub(crate) fn new(alg: RecoveryAlgorithm, threshold: u32, limited_transmit: bool) -> Self {
        Recovery {
            alg,
            threshold: threshold.max(1),
            limited_transmit,
            rack: false,
            dupacks: 0,
            in_recovery: false,
            recover: SeqNum::new(0),
            recover_valid: false,
            first_partial_done: false,
            inflation: 0,
            limited_extra: 0,
            pending: None,
            congestion: None,
            window: None,
            sb: Scoreboard::default(),
        }
    }

    /// True while SACK-based recovery (RFC 6675) drives the output.
    pub(crate) fn sack_recovery(&self) -> bool {
        self.in_recovery && self.alg == RecoveryAlgorithm::Sack
    }

    /// RFC 6675 Update(): record the SACK blocks of an arriving ACK. `low` is the
    /// cumulative ACK (or SND.UNA if larger).
    pub(crate) fn on_sack_blocks(&mut self, low: SeqNum, snd_max: SeqNum, blocks: &SackBlocks) {
        if self.alg == RecoveryAlgorithm::Sack && !blocks.is_empty() {
            self.sb.update(low, snd_max, blocks);
        }
    }

    /// A retransmission was sent: in SACK recovery, HighRxt moves past it. For the rescue
    /// retransmission (`rescue`), RFC 6675 rule 4 of NextSeg instead: RescueRxt =
    /// RecoveryPoint, and "HighRxt MUST NOT be updated", or every hole found later would
    /// wait for the timer.
    pub(crate) fn on_retransmit_sent(&mut self, seq: SeqNum, len: u32, rescue: bool) {
        if rescue {
            self.sb.rescue_rxt = Some(self.recover);
            return;
        }
        if self.alg == RecoveryAlgorithm::Sack && self.in_recovery {
            let end = seq + len;
            if end > self.sb.high_rxt {
                self.sb.high_rxt = end;
            }
        }
    }

    /// RFC 6675 §4 `pipe`: the octets the scoreboard estimates in flight.
    pub(crate) fn pipe(&self, snd_una: SeqNum, snd_max: SeqNum, mss: u32) -> u32 {
        self.sb.pipe(snd_una, snd_max, self.threshold, mss)
    }

    /// Bytes the scoreboard holds SACKed (RFC 9937's "bytes SACKed in scoreboard").
    pub(crate) fn sacked_bytes(&self) -> u32 {
        self.sb.sacked_bytes()
    }

    /// Bytes the scoreboard holds SACKed above `s`.
    pub(crate) fn sacked_above(&self, s: SeqNum) -> u32 {
        self.sb.sacked_above(s)
    }

    /// RFC 6675 §4 `NextSeg`: what SACK recovery sends next (`new_ok`: new data may go).
    pub(crate) fn next_seg(&self, snd_una: SeqNum, mss: u32, new_ok: bool) -> Option<NextSeg> {
        self.sb
            .next_seg(snd_una, self.threshold, mss, new_ok, self.recover)
    }

    /// The recovery algorithm.
    pub(crate) fn algorithm(&self) -> RecoveryAlgorithm {
        self.alg
    }
    /// Consecutive duplicate ACKs counted (BSD's `t_dupacks`). Cleared by any ACK that is
    /// not a duplicate while no episode is in progress, when an episode ends, and by a
    /// timeout.
    pub(crate) fn dupacks(&self) -> u32 {
        self.dupacks
    }
    /// True while a recovery episode (Reno, NewReno or SACK fast recovery) is in progress.
    /// Tahoe and timeout-only recovery never have one.
    pub(crate) fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// Bytes the effective window exceeds cwnd by (inflation plus limited transmit).
    pub(crate) fn extra_window(&self) -> u32 {
        self.inflation.saturating_add(self.limited_extra)
    }
    /// Takes the retransmission the recovery asked for, if any (the connection sends it
    /// before new data).
    pub(crate) fn take_retransmit(&mut self) -> Option<RetransmitRequest> {
        self.pending.take()
    }
    /// Puts back a retransmission taken but not sent (pacing held it).
    pub(crate) fn restore_retransmit(&mut self, req: RetransmitRequest) {
        self.pending = Some(req);
    }
    /// Takes the loss the controller must answer, if the last duplicate ACK detected one.
    pub(crate) fn take_congestion(&mut self) -> Option<CongestionEvent> {
        self.congestion.take()
    }
    /// Takes the congestion window the recovery asks for, if any. The connection applies
    /// it after [`take_congestion`](Self::take_congestion)'s response, as 4.3BSD sets
    /// ssthresh before cwnd.
    pub(crate) fn take_window(&mut self) -> Option<u32> {
        self.window.take()
    }

    /// A duplicate ACK (RFC 5681 §2's definition, checked by the caller) arrived while data
    /// was outstanding. `resending`: SND.NXT lies below SND.MAX (a timeout pulled it back),
    /// so what would be sent next is not new data.
    pub(crate) fn on_dupack(
        &mut self,
        snd_una: SeqNum,
        snd_max: SeqNum,
        resending: bool,
        cc: &dyn CongestionControl,
        ev: &CongestionEvent,
    ) -> DupAckOutcome {
        self.dupacks = self.dupacks.saturating_add(1);
        let mss = ev.mss;
        match self.alg {
            RecoveryAlgorithm::TimeoutOnly => DupAckOutcome::Counted,
            RecoveryAlgorithm::Tahoe => {
                if self.dupacks == self.threshold {
                    // 4.3BSD-Tahoe: ssthresh from half the window, cwnd = 1 segment, resend
                    // the one segment and let the next real ACK slow-start the window.
                    self.congestion = Some(self.excluding_limited_transmit(cc, ev));
                    self.window = Some(mss);
                    self.limited_extra = 0;
                    self.pending = Some(RetransmitRequest {
                        seq: snd_una,
                        restart_timer: true,
                    });
                    DupAckOutcome::FastRetransmit
                } else {
                    self.limited(mss, resending)
                }
            }
            RecoveryAlgorithm::Reno => {
                if self.dupacks == self.threshold {
                    self.congestion = Some(self.excluding_limited_transmit(cc, ev));
                    self.in_recovery = true;
                    // "tp->snd_cwnd = tp->snd_ssthresh + tp->t_maxseg * tp->t_dupacks"
                    self.inflation = mss.saturating_mul(self.dupacks);
                    self.limited_extra = 0;
                    self.pending = Some(RetransmitRequest {
                        seq: snd_una,
                        restart_timer: true,
                    });
                    DupAckOutcome::FastRetransmit
                } else if self.dupacks > self.threshold {
                    // "else if (tp->t_dupacks > tcprexmtthresh) tp->snd_cwnd += tp->t_maxseg"
                    self.inflation = self.inflation.saturating_add(mss);
                    DupAckOutcome::Inflated
                } else {
                    self.limited(mss, resending)
                }
            }
            RecoveryAlgorithm::Sack => {
                if self.in_recovery {
                    return DupAckOutcome::Counted;
                }
                if self.rack {
                    // RACK decides (the connection asks it after the ACK's SACK blocks
                    // are in); the count still drives limited transmit.
                    return self.limited(mss, resending);
                }
                // RFC 6675 §5 step 2: the threshold, or IsLost(HighACK + 1).
                let lost = self.sb.is_lost(snd_una, self.threshold, mss);
                if self.dupacks < self.threshold && !lost {
                    return self.limited(mss, resending);
                }
                // §5.1: no new episode until HighACK reaches the previous RecoveryPoint.
                if self.recover_valid && snd_una < self.recover {
                    return DupAckOutcome::Counted;
                }
                // Step 4.3: retransmit the first segment presumed dropped.
                self.begin_sack_episode(snd_una, snd_max, snd_una, cc, ev);
                DupAckOutcome::FastRetransmit
            }
            RecoveryAlgorithm::NewReno => {
                if self.in_recovery {
                    self.inflation = self.inflation.saturating_add(mss);
                    return DupAckOutcome::Inflated;
                }
                if self.dupacks != self.threshold {
                    return self.limited(mss, resending);
                }
                // RFC 6582 §3.2 step 2: enter only if the cumulative ACK covers more than
                // `recover` (duplicate ACKs for data sent before a timeout do not start a
                // second episode).
                if self.recover_valid && snd_una <= self.recover {
                    return DupAckOutcome::Counted;
                }
                self.congestion = Some(self.excluding_limited_transmit(cc, ev));
                self.in_recovery = true;
                self.recover = snd_max;
                self.recover_valid = true;
                self.first_partial_done = false;
                self.inflation = mss.saturating_mul(self.threshold);
                self.limited_extra = 0;
                self.pending = Some(RetransmitRequest {
                    seq: snd_una,
                    restart_timer: true,
                });
                DupAckOutcome::FastRetransmit
            }
        }
    }

    /// Loss detection by RFC 8985 RACK (`on`) instead of the duplicate-ACK threshold, for
    /// SACK recovery.
    pub(crate) fn set_rack(&mut self, on: bool) {
        self.rack = on && self.alg == RecoveryAlgorithm::Sack;
    }

    /// RACK marked a segment lost: a SACK recovery episode begins as RFC 6675 §5 steps 4.1
    /// and 4.2 begin one on the threshold (RFC 8985 §3.3: RACK decides when, the recovery
    /// what to send), with `first`, the first segment RACK marked, queued for
    /// retransmission. Returns false, changing nothing, during an episode, for another
    /// algorithm, and (§5.1) before SND.UNA reaches the previous RecoveryPoint (after a
    /// timeout, go-back-N resends the flight).
    pub(crate) fn enter_on_rack_loss(
        &mut self,
        snd_una: SeqNum,
        snd_max: SeqNum,
        first: SeqNum,
        cc: &dyn CongestionControl,
        ev: &CongestionEvent,
    ) -> bool {
        if self.in_recovery
            || self.alg != RecoveryAlgorithm::Sack
            || (self.recover_valid && snd_una < self.recover)
        {
            return false;
        }
        self.begin_sack_episode(snd_una, snd_max, first, cc, ev);
        true
    }

    /// RFC 6675 §5 steps 4.1 to 4.3: the loss for the controller, RecoveryPoint = SND.MAX,
    /// HighRxt and RescueRxt reset, and `first` queued for retransmission.
    fn begin_sack_episode(
        &mut self,
        snd_una: SeqNum,
        snd_max: SeqNum,
        first: SeqNum,
        cc: &dyn CongestionControl,
        ev: &CongestionEvent,
    ) {
        self.congestion = Some(self.excluding_limited_transmit(cc, ev));
        self.in_recovery = true;
        self.recover = snd_max;
        self.recover_valid = true;
        self.first_partial_done = false;
        self.limited_extra = 0;
        self.sb.high_rxt = snd_una;
        self.sb.rescue_rxt = None;
        self.pending = Some(RetransmitRequest {
            seq: first,
            restart_timer: true,
        });
    }

    /// One past the highest byte resent in this SACK episode (RFC 6675 HighRxt + 1): SND.UNA
    /// at or past it means no resend of the episode is still unacknowledged.
    pub(crate) fn high_rxt(&self) -> SeqNum {
        self.sb.high_rxt
    }

    /// RFC 6582's `recover`: SND.MAX when the last episode or timeout began.
    pub(crate) fn recover_point(&self) -> SeqNum {
        self.recover
    }

    /// The episode's reduction was undone (RFC 3708 / RFC 3522: it was needless): the episode
    /// ends here, as Linux's undo returns to the open state, and a loss still evident may
    /// start a new episode at once (so RecoveryPoint no longer holds it back). The
    /// scoreboard stays: what was SACKed is still SACKed.
    pub(crate) fn end_on_undo(&mut self) {
        if !self.in_recovery {
            return;
        }
        self.in_recovery = false;
        self.recover_valid = false;
        self.dupacks = 0;
        self.inflation = 0;
        self.limited_extra = 0;
        self.pending = None;
        self.window = None;
    }

    /// A timeout turned out spurious (RFC 4015): its recovery is over, and a loss found
    /// later may start a fast recovery at once.
    pub(crate) fn end_rto_recovery(&mut self) {
        if !self.in_recovery {
            self.recover_valid = false;
        }
    }

    /// After a timeout, until SND.UNA passes what had been sent when it fired (RFC 8985's
    /// "RTO recovery"; no fast recovery may begin before, RFC 6675 §5.1).
    pub(crate) fn in_rto_recovery(&self, snd_una: SeqNum) -> bool {
        !self.in_recovery && self.recover_valid && snd_una < self.recover
    }

    /// The congestion event with the segments limited transmit sent taken out of the
    /// FlightSize: RFC 5681 §3.2 step 2, "When [RFC3042] is in use, additional data sent in
    /// limited transmit MUST NOT be included in this calculation" (of ssthresh). What limited
    /// transmit sent is what the flight exceeds cwnd by, up to its allowance.
    fn excluding_limited_transmit(
        &self,
        cc: &dyn CongestionControl,
        ev: &CongestionEvent,
    ) -> CongestionEvent {
        let sent = self
            .limited_extra
            .min(ev.flight_bytes.saturating_sub(cc.cwnd()));
        CongestionEvent {
            flight_bytes: ev.flight_bytes - sent,
            ..*ev
        }
    }

    /// RFC 3042 limited transmit on the first two duplicate ACKs: previously unsent data
    /// only (§2), so not while `resending`.
    fn limited(&mut self, mss: u32, resending: bool) -> DupAckOutcome {
        if self.limited_transmit && !resending && self.dupacks <= 2 && self.dupacks < self.threshold
        {
            self.limited_extra = mss.saturating_mul(self.dupacks);
            DupAckOutcome::LimitedTransmit
        } else {
            DupAckOutcome::Counted
        }
    }

    /// An ACK advanced SND.UNA from `prev_una` to `ack`. `flight_after` is what remains
    /// outstanding after it.
    pub(crate) fn on_new_ack(
        &mut self,
        prev_una: SeqNum,
        ack: SeqNum,
        flight_after: u32,
        cc: &dyn CongestionControl,
        mss: u32,
    ) -> NewAckOutcome {
        self.limited_extra = 0;
        match self.alg {
            RecoveryAlgorithm::TimeoutOnly | RecoveryAlgorithm::Tahoe => {
                self.dupacks = 0;
                NewAckOutcome::Normal
            }
            RecoveryAlgorithm::Reno => {
                self.dupacks = 0;
                if self.in_recovery {
                    // The corrected retraction: "if (tp->snd_cwnd > tp->snd_ssthresh)
                    // tp->snd_cwnd = tp->snd_ssthresh". The controller's own cwnd was set
                    // to ssthresh at entry, so removing the inflation is the retraction.
                    self.in_recovery = false;
                    self.inflation = 0;
                    if cc.cwnd() > cc.ssthresh() {
                        self.window = Some(cc.ssthresh());
                    }
                    NewAckOutcome::Exit
                } else {
                    NewAckOutcome::Normal
                }
            }
            RecoveryAlgorithm::Sack => {
                self.sb.advance(ack);
                if !self.in_recovery {
                    self.dupacks = 0;
                    return NewAckOutcome::Normal;
                }
                if ack >= self.recover {
                    // RFC 6675 §5 (A): the episode ends; cwnd stays at ssthresh.
                    self.in_recovery = false;
                    self.dupacks = 0;
                    let s = cc.ssthresh();
                    if cc.cwnd() > s {
                        self.window = Some(s);
                    }
                    NewAckOutcome::Exit
                } else {
                    // (B): the scoreboard and pipe decide what goes next; no retransmission
                    // is forced here.
                    let first = !self.first_partial_done;
                    self.first_partial_done = true;
                    NewAckOutcome::PartialAck { first }
                }
            }
            RecoveryAlgorithm::NewReno => {
                if !self.in_recovery {
                    self.dupacks = 0;
                    return NewAckOutcome::Normal;
                }
                if ack >= self.recover {
                    // RFC 6582 §3.2 step 3, full acknowledgment: cwnd =
                    // min(ssthresh, max(FlightSize, SMSS) + SMSS).
                    self.in_recovery = false;
                    self.inflation = 0;
                    self.dupacks = 0;
                    let deflated = cc.ssthresh().min(flight_after.max(mss).saturating_add(mss));
                    self.window = Some(deflated);
                    NewAckOutcome::Exit
                } else {
                    // Step 4, partial acknowledgment: retransmit the first unacknowledged
                    // segment, deflate by the amount acknowledged and add back one SMSS if
                    // at least one SMSS was acknowledged.
                    let acked = ack.since(prev_una);
                    self.inflation = self.inflation.saturating_sub(acked);
                    if acked >= mss {
                        self.inflation = self.inflation.saturating_add(mss);
                    }
                    let first = !self.first_partial_done;
                    self.first_partial_done = true;
                    self.pending = Some(RetransmitRequest {
                        seq: ack,
                        restart_timer: first,
                    });
                    NewAckOutcome::PartialAck { first }
                }
            }
        }
    }

    /// A non-duplicate ACK that did not advance SND.UNA (it carried data or a window
    /// change): BSD clears the count ("else tp->t_dupacks = 0"); inside a NewReno episode
    /// the episode goes on.
    #[inline]
    pub(crate) fn on_other_ack(&mut self) {
        if !self.in_recovery {
            self.dupacks = 0;
            self.limited_extra = 0;
        }
    }

    /// [`on_other_ack`](Self::on_other_ack) when the caller knows there is no episode and
    /// no duplicate ACK counted (header prediction): only the limited-transmit allowance
    /// can be left to clear.
    #[inline(always)]
    pub(crate) fn on_other_ack_quiet(&mut self) {
        debug_assert!(!self.in_recovery && self.dupacks == 0);
        self.limited_extra = 0;
    }

    /// The retransmission timer expired: the episode, the count and any inflation end
    /// (the tcp_timer.c hunk of the diff adds "tp->t_dupacks = 0"); NewReno remembers the
    /// highest sequence sent so that stale duplicate ACKs do not start a new episode.
    pub(crate) fn on_rto(&mut self, snd_max: SeqNum) {
        self.dupacks = 0;
        self.in_recovery = false;
        self.inflation = 0;
        self.limited_extra = 0;
        self.pending = None;
        // RFC 2018 §8: a timeout may mean the receiver reneged on what it SACKed, so the
        // SACKed bits are turned off; RFC 6675 §5.1 resets HighRxt and RescueRxt.
        self.sb.clear();
        self.sb.high_rxt = snd_max;
        self.sb.rescue_rxt = None;
        if matches!(
            self.alg,
            RecoveryAlgorithm::NewReno | RecoveryAlgorithm::Sack
        ) {
            self.recover = snd_max;
            self.recover_valid = true;
        }
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use core::mem::{offset_of, size_of};

    /// What every ACK touches lies in the last `PER_ACK_BYTES` of the structure, which a
    /// `Connection` puts at the start of its hot block (see its layout).
    #[test]
    fn the_per_ack_fields_are_the_last_forty_bytes() {
        let tail = size_of::<Recovery>() - Recovery::PER_ACK_BYTES;
        let count = offset_of!(Recovery, sb) + size_of::<Scoreboard>() - size_of::<usize>();
        assert_eq!(
            count, tail,
            "the scoreboard's count of ranges begins the tail"
        );
        for (name, off) in [
            ("pending", offset_of!(Recovery, pending)),
            ("window", offset_of!(Recovery, window)),
            ("dupacks", offset_of!(Recovery, dupacks)),
            ("inflation", offset_of!(Recovery, inflation)),
            ("limited_extra", offset_of!(Recovery, limited_extra)),
            ("alg", offset_of!(Recovery, alg)),
            ("in_recovery", offset_of!(Recovery, in_recovery)),
        ] {
            assert!(
                off >= tail,
                "{name} at {off}, before the per-ACK tail at {tail}"
            );
        }
    }
}
