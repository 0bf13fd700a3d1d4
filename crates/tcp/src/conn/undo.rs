//! Spurious retransmissions and undoing the reductions they caused ([`TcpConfig::undo`],
//! [`TcpConfig::frto`]).
//!
//! - A fast recovery is found spurious when D-SACK blocks (RFC 2883) report every segment it
//!   resent as received twice (RFC 3708 §3: the original had arrived; reordering or a
//!   delayed ACK started the episode).
//! - A timeout is found spurious by its first ACK echoing a timestamp older than the
//!   retransmission (Eifel detection, RFC 3522), or, without timestamps, by F-RTO (RFC 5682
//!   §2.1): the ACK after two new segments acknowledges data that was not resent.
//!
//! The response restores cwnd and ssthresh from before the reduction (RFC 3708 leaves the
//! response open; this is Linux's undo); for a timeout it is RFC 4015's (ssthresh back to
//! what it was, cwnd the flight plus at most an initial window, and sending resumes with new
//! data instead of resending the rest of the flight).

use super::*;

/// What a reduction changed, kept until it is undone or a later reduction replaces it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Undo {
    /// cwnd and ssthresh before the reduction.
    prior_cwnd: u32,
    prior_ssthresh: u32,
    /// RFC 4015's pipe_prev, max(FlightSize, ssthresh) at a timeout.
    pipe_prev: u32,
    /// SND.UNA when the reduction began: D-SACKs below it are about older data.
    marker: SeqNum,
    /// SND.MAX at the last retransmission: D-SACKs at or above it are about newer data.
    horizon: SeqNum,
    /// Segments resent since the reduction and not yet reported received twice.
    retrans: u32,
    /// The reduction was a timeout's (else a fast recovery's).
    rto: bool,
}

/// F-RTO's steps (RFC 5682 §2.1): waiting for the first ACK after the timeout's
/// retransmission (step 2), or for the ACK after the two new segments (step 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Frto {
    /// Step 2: the retransmission of SND.UNA is out; it ends at `rtx_end`.
    FirstAck { rtx_end: SeqNum },
    /// Step 3: two new segments are out.
    SecondAck,
}

impl Connection {
    /// A reduction is about to be made (fast recovery or a first timeout): remember what to
    /// restore. An earlier reduction whose episode is still open keeps its values (the
    /// window before the first of them is the one to restore).
    pub(super) fn undo_begin(&mut self, rto: bool) {
        if !(self.cfg.undo || self.cfg.frto) {
            return;
        }
        if let Some(u) = self.undo.as_mut() {
            if self.rec.in_recovery() || self.rec.in_rto_recovery(self.snd_una) {
                u.rto |= rto;
                return;
            }
        }
        let flight = self.snd_max.since(self.snd_una);
        self.undo = Some(Undo {
            prior_cwnd: self.cc.cwnd(),
            prior_ssthresh: self.cc.ssthresh(),
            pipe_prev: flight.max(self.cc.ssthresh()),
            marker: self.snd_una,
            horizon: self.snd_max,
            retrans: 0,
            rto,
        });
    }

    /// A segment was resent while a reduction may still be undone.
    #[cold]
    pub(super) fn undo_count_retransmission(&mut self) {
        let max = self.snd_max;
        if let Some(u) = self.undo.as_mut() {
            u.retrans += 1;
            u.horizon = u.horizon.max(max);
        }
    }

    /// RFC 3708 §3: an ACK carried the D-SACK block `[left, right)`. Each resent segment it
    /// covers was received twice; when all are, the reduction was needless.
    #[cold]
    #[inline(never)]
    pub(super) fn undo_on_dsack(&mut self, now: Instant, left: SeqNum, right: SeqNum) {
        let mss = self.snd_mss.max(1);
        let Some(u) = self.undo.as_mut() else {
            return;
        };
        if left < u.marker || right > u.horizon || u.retrans == 0 {
            return;
        }
        u.retrans = u.retrans.saturating_sub(right.since(left).div_ceil(mss));
        if u.retrans == 0 && self.cfg.undo {
            let u = *u;
            if u.rto {
                self.stats.spurious_rtos += 1;
            } else {
                self.stats.spurious_recoveries += 1;
            }
            self.undo_restore(now, u.prior_cwnd, u.prior_ssthresh);
            if !u.rto {
                self.undo_end_episode(now);
            }
        }
    }

    /// A fast retransmit began a recovery: with `undo` and timestamps, its TSval (the
    /// retransmission goes out at this `now`) is kept for Eifel detection (RFC 3522 §2: the
    /// algorithm is for any retransmission, as Linux's `tcp_packet_delayed` applies it).
    pub(super) fn undo_note_fast_retransmit(&mut self, now: Instant) {
        if self.cfg.undo && self.ts_ok && self.rec.in_recovery() {
            self.fr_retransmit_ts = Some(self.ts_now(now));
        }
    }

    /// RFC 3522's detection found the fast retransmit needless (the first ACK of new data
    /// after it echoed the original's timestamp: the original was only delayed, by
    /// reordering): the reduction is undone, as for D-SACK (RFC 3708), without waiting for
    /// a D-SACK of every retransmission, but only when no segment resent in the episode is
    /// still unacknowledged (as Linux's `tcp_try_undo_partial`): the hole the echo shows
    /// delayed may be another than the one resent, which was lost for real. The episode
    /// ends with it.
    pub(super) fn undo_spurious_recovery(&mut self, now: Instant) {
        let Some(u) = self.undo.filter(|u| !u.rto) else {
            return;
        };
        if self.rec.algorithm() == RecoveryAlgorithm::Sack && self.snd_una < self.rec.high_rxt() {
            return;
        }
        self.stats.spurious_recoveries += 1;
        if let Some(r) = self.rack.as_deref_mut() {
            r.note_reordering();
        }
        self.undo_restore(now, u.prior_cwnd, u.prior_ssthresh);
        self.undo_end_episode(now);
    }

    /// A fast recovery's reduction was undone while its episode is still open: the episode
    /// ends (Linux's undo returns to the open state; a loss still evident starts a new one).
    /// Left open, PRR would start over on the next ACK from the restored ssthresh, and the
    /// episode's end would set cwnd to it: the unbounded ssthresh of a slow start (found by a
    /// scenario with reordering).
    fn undo_end_episode(&mut self, now: Instant) {
        if !self.rec.in_recovery() {
            return;
        }
        self.rec.end_on_undo();
        self.fr_retransmit_ts = None;
        // (RACK counts the exit on this ACK's pass: `rack_on_ack` sees the episode gone.)
        self.cc.on_recovery_exit(now);
        self.emit(now, TraceKind::RecoveryExit);
        self.refresh_prediction();
    }

    /// Restores cwnd and ssthresh to at least `cwnd` and `ssthresh` and forgets the
    /// reduction.
    ///
    /// PRR's reduction ends here too, also when the episode has just ended on this ACK: its
    /// last step would set cwnd to the restored ssthresh, which in slow start is unbounded.
    fn undo_restore(&mut self, now: Instant, cwnd: u32, ssthresh: u32) {
        self.undo = None;
        self.prr.stop();
        self.prr_cwr = false;
        self.cc.undo(cwnd, ssthresh);
        self.stats.undos += 1;
        self.emit(now, TraceKind::Undo);
    }

    /// RFC 4015 §3.2's response to a spurious timeout (found by Eifel detection or F-RTO),
    /// on the ACK that showed it (`acked` bytes): ssthresh back to pipe_prev, cwnd to the
    /// flight plus min(acked, IW), and sending resumes with new data (SND.NXT = SND.MAX)
    /// rather than resending what the timeout pulled back.
    pub(super) fn undo_spurious_timeout(&mut self, now: Instant, acked: u32) {
        let Some(u) = self.undo.filter(|u| u.rto) else {
            return;
        };
        self.frto = None;
        if self.snd_nxt < self.snd_max {
            self.snd_nxt = self.snd_max;
            self.refresh_prediction();
        }
        let iw = self.cfg.initial_window.bytes(self.snd_mss);
        // At least one segment: with nothing left in flight and a byte acknowledged, the
        // formula would leave a window of a byte.
        let cwnd = (self.snd_max.since(self.snd_una) + acked.min(iw)).max(self.snd_mss);
        // RFC 4015 §3.2: cwnd is set (down, too: the window before the timeout may be far
        // larger than what is in flight now), ssthresh only raised.
        self.set_cwnd(cwnd);
        self.undo_restore(now, cwnd, u.pipe_prev.max(u.prior_ssthresh));
        // The timeout's episode is over: a later loss may start a fast recovery.
        self.rec.end_rto_recovery();
    }

    /// RFC 5682 §2.1 step 1: a first timeout with F-RTO: the retransmission of SND.UNA goes
    /// out as usual; step 2 waits for the next ACK. Not when the timeout comes during a
    /// recovery after an earlier one (`in_rto_recovery`), as the RFC says.
    pub(super) fn frto_on_rto(&mut self, first: bool, was_rto_recovery: bool) {
        self.frto = None;
        // Step 2.b opens the window by two new segments over the flight through `set_cwnd`;
        // a controller that sets its own window (BBR) would keep its own, and with that
        // below the flight nothing would go until the next timeout. Such a controller's
        // timeouts are recovered conventionally (Eifel detection still undoes a spurious
        // one, with timestamps).
        if !self.cfg.frto || !first || was_rto_recovery || self.cc_owns_recovery {
            return;
        }
        let len = self.snd_max.since(self.snd_una).min(self.snd_mss);
        self.frto = Some(Frto::FirstAck {
            rtx_end: self.snd_una + len,
        });
    }

    /// RFC 5682 §2.1 steps 2 and 3, on each ACK while F-RTO runs (the general input path:
    /// header prediction is off meanwhile). `prev_una` is SND.UNA before the ACK, `dupack`
    /// whether it was a duplicate ACK.
    #[cold]
    #[inline(never)]
    pub(super) fn frto_on_ack(&mut self, now: Instant, prev_una: SeqNum, dupack: bool) {
        let Some(step) = self.frto else {
            return;
        };
        let ack = self.snd_una;
        let acked = ack.since(prev_una);
        let recover = self.rec.recover_point();
        match step {
            Frto::FirstAck { rtx_end } => {
                // (2.a) A duplicate ACK, an ACK of everything outstanding at the timeout, or
                // one that does not cover the retransmission: the conventional recovery.
                let data_end = self.buf_seq + self.send_buf.len();
                let rwnd_room = (self.snd_una + self.snd_wnd).since(self.snd_max);
                if dupack || ack >= recover || ack < rtx_end {
                    self.frto = None;
                    self.refresh_prediction();
                    return;
                }
                if data_end.since(self.snd_max) == 0 || rwnd_room == 0 {
                    // Nothing new to send: F-RTO cannot tell (RFC 5682 §2.1, note on
                    // step 2.b); resend as usual.
                    self.frto = None;
                    self.refresh_prediction();
                    return;
                }
                // (2.b) Two new segments instead of resending: SND.NXT to SND.MAX, and the
                // window opened by two segments over what is in flight.
                self.snd_nxt = self.snd_max;
                let mss = self.snd_mss;
                let w = self.snd_max.since(self.snd_una) + 2 * mss;
                self.set_cwnd(w);
                self.frto = Some(Frto::SecondAck);
            }
            Frto::SecondAck => {
                self.frto = None;
                if acked > 0 && !dupack {
                    // (3.b) It acknowledges data that was not resent: the timeout was
                    // spurious.
                    self.stats.spurious_rtos += 1;
                    self.undo_spurious_timeout(now, acked);
                } else {
                    // (3.a) A duplicate ACK: the timeout was real. cwnd to at most 3 SMSS,
                    // and resend the rest of the flight in slow start.
                    let w = self.cc.cwnd().min(3 * self.snd_mss);
                    self.set_cwnd(w);
                    self.snd_nxt = self.snd_una;
                }
                self.refresh_prediction();
            }
        }
    }
}
