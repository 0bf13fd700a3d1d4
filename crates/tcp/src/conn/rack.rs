//! RFC 8985 RACK-TLP in the connection (with [`LossDetection::Rack`] or
//! [`LossDetection::RackTlp`], SACK agreed and SACK recovery in use): every transmission is
//! recorded, every ACK updates RACK and may mark segments lost and start a recovery, the
//! reordering timer and the probe timeout share the `Loss` timer slot, and a due probe is
//! sent ahead of anything else. The record and the rules are in [`crate::rack`].

use super::*;
use crate::config::LossDetection;
use crate::rack::{dsack_block, LossTimer, TlpOutcome};

impl Connection {
    /// Turns RACK on or off once the handshake has settled what the peer offers: it needs
    /// SACK (RFC 8985 §3.3's time rule compares what arrived; a duplicate ACK without SACK
    /// blocks does not say what), and the SACK recovery it feeds.
    pub(super) fn init_rack(&mut self) {
        let on = self.cfg.loss_detection != LossDetection::DupAck
            && self.sack_ok
            && self.rec.algorithm() == RecoveryAlgorithm::Sack;
        self.rack_on = on;
        self.rec.set_rack(on);
        let tlp = on && self.cfg.loss_detection == LossDetection::RackTlp;
        // A controller that models the path (BBR) needs the record as its transmit log,
        // with RACK's loss detection or without.
        self.rack = if self.cc_model {
            Some(Box::new(Rack::new(tlp, self.iss).with_rate()))
        } else {
            on.then(|| Box::new(Rack::new(tlp, self.iss)))
        };
    }

    /// RFC 8985 §6.1: `[seq, seq + advance)` was just sent (`fin`: ending with the FIN);
    /// `repair`: a resend that repairs a loss (see `Rack::on_transmit`).
    #[inline]
    pub(super) fn rack_sent(
        &mut self,
        now: Instant,
        seq: SeqNum,
        advance: u32,
        fin: bool,
        repair: bool,
    ) {
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_transmit(seq, seq + advance, now, fin, repair);
        }
    }

    /// The pipe a SACK recovery keeps below cwnd (or PRR measures): RFC 6675's from the
    /// scoreboard, or with RACK from its marks.
    pub(super) fn recovery_pipe(&self, mss: u32) -> u32 {
        match self.rack.as_deref() {
            Some(r) if self.rack_on => r.pipe(self.snd_max.since(self.snd_una)),
            _ => self.rec.pipe(self.snd_una, self.snd_max, mss),
        }
    }

    /// RFC 8985 §6.2 and §7.4 for an ACK the ACK path has processed (SND.UNA moved from
    /// `prev_una`; `was_recovering`, a fast recovery was in progress before it; `dupack`, it
    /// was a duplicate ACK): RACK's state, loss detection, the probe's episode, and the
    /// probe timeout restarted on an ACK of new data (§7.2).
    #[inline(never)]
    pub(super) fn rack_on_ack(
        &mut self,
        now: Instant,
        seg: &Segment<'_>,
        prev_una: SeqNum,
        was_recovering: bool,
        dupack: bool,
    ) {
        let Some(mut r) = self.rack.take() else {
            return;
        };
        let offset = self.ts_offset;
        let ts_of = move |t: Instant| ((t.as_nanos() / 1_000_000) as u32).wrapping_add(offset);
        let echo = seg
            .options
            .timestamps
            .filter(|t| self.ts_ok && t.tsecr != 0)
            .map(|t| (t.tsecr, &ts_of as &dyn Fn(Instant) -> u32));
        let blocks = &seg.options.sack;
        let summary = r.on_ack(
            now,
            self.snd_una,
            self.snd_max,
            blocks,
            echo,
            self.rtt.min_rtt(),
        );
        if !self.rack_on {
            // The record only as the transmit log of delivery-rate estimation.
            self.rack = Some(r);
            return;
        }
        let was_rto_recovery = self.rec.in_rto_recovery(prev_una);
        if (was_recovering && !self.rec.in_recovery())
            || (was_rto_recovery && !self.rec.in_rto_recovery(self.snd_una))
        {
            r.on_recovery_exit();
        }
        // (`dsacks_in` is counted on the ACK path, for every loss detection.)
        let dsack = if summary.dsack {
            dsack_block(self.snd_una, blocks)
        } else {
            None
        };
        if r.tlp_on_ack(seg.ack, dsack, dupack && blocks.is_empty()) == TlpOutcome::Repaired {
            // RFC 8985 §7.4.2: the probe repaired a loss, which the congestion controller
            // answers as a loss (outside a recovery, which has answered already).
            self.stats.tlp_recoveries += 1;
            if !self.rec.in_recovery() {
                let ev = self.congestion_event(now);
                self.cc.on_congestion(&ev);
            }
            self.emit(now, TraceKind::TlpRecovery);
        }
        if summary.advanced {
            self.rack_detect(now, &mut r);
        }
        self.rack = Some(r);
        if self.snd_una > prev_una {
            self.rack_schedule_probe(now);
        }
    }

    /// RFC 8985 §6.2 step 5 (from an ACK or the reordering timer): marks losses, starts a
    /// recovery on the first (§3.3), and arms or stops the reordering timer.
    fn rack_detect(&mut self, now: Instant, r: &mut Rack) {
        let recovering = self.rec.in_recovery() || self.rec.in_rto_recovery(self.snd_una);
        let reo_wnd = r.reo_wnd(
            recovering,
            self.cfg.dupack_threshold,
            r.min_rtt().or(self.rtt.min_rtt()),
            self.rtt.srtt(),
        );
        let (newly, timeout) = r.detect_loss(now, reo_wnd);
        if newly > 0 && !self.rec.in_recovery() {
            if let Some((first, _)) = r.first_lost() {
                let ev = self.congestion_event(now);
                let (una, max) = (self.snd_una, self.snd_max);
                if self.rec.enter_on_rack_loss(una, max, first, &*self.cc, &ev) {
                    if let Some(ev) = self.rec.take_congestion() {
                        self.undo_begin(false);
                        self.cc.on_congestion(&ev);
                    }
                    self.undo_note_fast_retransmit(now);
                    self.stats.fast_retransmits += 1;
                    self.stats.recoveries += 1;
                    if self.rtt.config().karn {
                        self.rtt_timed = None;
                    }
                    // The recovery repairs what a probe was sent for.
                    r.end_probe_episode();
                    self.emit(now, TraceKind::FastRetransmit);
                    self.emit(now, TraceKind::RecoveryEnter);
                }
            }
        }
        if timeout > Duration::ZERO {
            // Past the RTO the timeout repairs the flight anyway.
            let mut at = now + timeout;
            if let Some(rto) = self.timers.get(Timer::Rto) {
                at = at.min(rto);
            }
            self.timers.set(Timer::Loss, at);
            r.timer = Some(LossTimer::Reorder);
        } else if r.timer == Some(LossTimer::Reorder) {
            self.timers.cancel(Timer::Loss);
            r.timer = None;
        }
    }

    /// RFC 8985 §7.2: (re)starts the probe timeout after new data was sent or an ACK of new
    /// data arrived, when the connection is not recovering (fast or after a timeout), has
    /// nothing SACKed, no probe outstanding and data in flight; otherwise stops it. The
    /// reordering timer, when armed, keeps the slot.
    ///
    /// While the timer is armed for a probe, a restart only notes the time (`probe_base`);
    /// the expiry checks again and, if the restart moved the probe later, re-arms.
    pub(super) fn rack_schedule_probe(&mut self, now: Instant) {
        let Some(r) = self.rack.as_deref_mut() else {
            return;
        };
        if r.timer == Some(LossTimer::Probe) {
            r.probe_base = now;
            // A restart only moves the deadline later, except when the timer was armed
            // for a single segment in flight (with WCDelAckT) and more are now: then the
            // new deadline may be earlier, and the timer is armed again.
            if !r.probe_one_segment {
                return;
            }
        }
        if !r.tlp_enabled() || r.timer == Some(LossTimer::Reorder) {
            return;
        }
        r.probe_base = now;
        if let Some((at, one_segment)) = self.probe_deadline() {
            self.timers.set(Timer::Loss, at);
            if let Some(r) = self.rack.as_deref_mut() {
                r.timer = Some(LossTimer::Probe);
                r.probe_one_segment = one_segment;
            }
        }
    }

    /// When a probe is due (RFC 8985 §7.2) counting from the last restart, or `None` when
    /// none may be sent: during a recovery (fast or after a timeout), with segments SACKed,
    /// with a probe outstanding, or with nothing in flight.
    fn probe_deadline(&self) -> Option<(Instant, bool)> {
        let r = self.rack.as_deref()?;
        let quiet = r.tlp_enabled()
            && !self.rec.in_recovery()
            && !self.rec.in_rto_recovery(self.snd_una)
            && r.segs_sacked() == 0
            && r.tlp_end().is_none()
            && self.snd_max > self.snd_una;
        let rto_at = self.timers.get(Timer::Rto)?;
        if !quiet {
            return None;
        }
        let base = r.probe_base;
        let srtt = self.rtt.min_rtt().map(|_| self.rtt.srtt());
        // The data in flight (a FIN takes a sequence number, not a segment's worth).
        let fin_out = self.fin_queued && self.snd_max > self.fin_seq();
        let data = self.snd_max.since(self.snd_una) - u32::from(fin_out);
        let one_segment = data <= self.snd_mss;
        let pto = Rack::pto(srtt, one_segment, rto_at.saturating_since(base));
        Some((base + pto, one_segment))
    }

    /// The `Loss` timer fired: RACK's reordering timer (§6.2 step 5 again, the waiting
    /// segments' time having come) or TLP's probe timeout (a probe goes out on the next
    /// `poll_transmit`).
    pub(super) fn on_loss_timer(&mut self, now: Instant) {
        let Some(mut r) = self.rack.take() else {
            return;
        };
        match r.timer.take() {
            Some(LossTimer::Reorder) => {
                self.stats.rack_reorder_timeouts += 1;
                self.emit(now, TraceKind::RackReorderTimeout);
                self.rack_detect(now, &mut r);
                self.rack = Some(r);
                self.rack_schedule_probe(now);
                return;
            }
            Some(LossTimer::Probe) => {
                self.rack = Some(r);
                // The conditions and the restarts since the timer was armed decide.
                match self.probe_deadline() {
                    Some((at, one_segment)) if at > now => {
                        self.timers.set(Timer::Loss, at);
                        if let Some(r) = self.rack.as_deref_mut() {
                            r.timer = Some(LossTimer::Probe);
                            r.probe_one_segment = one_segment;
                        }
                    }
                    Some(_) => {
                        if let Some(r) = self.rack.as_deref_mut() {
                            r.probe_due = true;
                        }
                        // The probe goes instead of a timeout due now (it re-arms the RTO
                        // when sent).
                        if self.timers.get(Timer::Rto).is_some_and(|t| t <= now) {
                            self.timers.set(Timer::Rto, now + self.rtt.rto());
                        }
                    }
                    None => {}
                }
                return;
            }
            None => {}
        }
        self.rack = Some(r);
    }

    /// The retransmission timer fired: RACK's marks and any probe go (see `Rack::on_rto`).
    pub(super) fn rack_on_rto(&mut self) {
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_rto();
            self.timers.cancel(Timer::Loss);
            // The timeout's losses are in `C.lost` but in no ACK's count of newly lost
            // bytes: Linux marks them outside ACK processing, so its BBR sees them as the
            // timeout (cwnd to one packet), not as losses to take out of the window again
            // on the ACKs that follow.
            if let Some(s) = r.sampler() {
                self.model_seen.1 = s.lost();
            }
        }
    }

    /// Whether a tail loss probe is due (tested on every `send_data` while RACK is on).
    #[inline]
    pub(super) fn probe_due(&self) -> bool {
        self.rack_on && self.rack.as_deref().is_some_and(|r| r.probe_due)
    }

    /// RFC 8985 §7.3, `TLP_send_probe`: one segment of new data if the receive window
    /// allows, else the last segment sent again; whatever cwnd says. The RTO, not the PTO,
    /// is armed after it.
    #[cold]
    #[inline(never)]
    pub(super) fn send_probe(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let last = {
            let r = self.rack.as_deref_mut()?;
            r.probe_due = false;
            r.last_segment()
        };
        let mss = self.payload_limit();
        let data_end = self.buf_seq + self.send_buf.len();
        let unsent = data_end.since(self.snd_nxt);
        let rwnd_room = (self.snd_una + self.snd_wnd).since(self.snd_nxt);
        let (t, retransmission) = if unsent > 0 && rwnd_room > 0 && self.snd_nxt == self.snd_max {
            let seq = self.snd_nxt;
            let len = unsent.min(mss).min(rwnd_room);
            let fin_here = self.fin_queued && seq + len == self.fin_seq();
            let mut flags = TcpFlags::ACK | self.push_flag(seq, len, data_end);
            if fin_here {
                flags |= TcpFlags::FIN;
            }
            let t = self.write_segment(now, buf, seq, len, flags, false)?;
            let advance = len + u32::from(fin_here);
            self.account_sent(now, seq, advance, false, false);
            self.rack_sent(now, seq, advance, fin_here, false);
            self.pace_on_sent(now, len);
            self.last_send_at = now;
            (t, false)
        } else {
            let (seq, len) = last?;
            (self.retransmit(now, buf, seq, len, Resend::Probe)?, true)
        };
        let end = self.snd_max;
        if let Some(r) = self.rack.as_deref_mut() {
            r.on_probe_sent(end, retransmission);
        }
        self.stats.tlp_probes += 1;
        self.emit(now, TraceKind::TailLossProbe);
        self.timers.set(Timer::Rto, now + self.rtt.rto());
        Some(t)
    }
}
