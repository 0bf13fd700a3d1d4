//! The output phase (`Connection::poll_transmit`): what may be sent now (Nagle, sender SWS
//! avoidance, the congestion and receive windows, recovery's choice of what to resend), and
//! the writing of segments: headers, options and the checksum-and-copy of the data.

use super::*;

/// Why a segment is resent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resend {
    /// To repair a loss (fast retransmit, a recovery's NextSeg, RACK's marks): its bytes
    /// count as lost for delivery-rate estimation.
    Repair,
    /// RFC 6675's rescue retransmission (rule 4 of NextSeg), which also repairs.
    Rescue,
    /// A tail loss probe (RFC 8985 §7.3): not taken for lost.
    Probe,
}

impl Connection {
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
        // Tested before taking: the common case reads the field and writes nothing.
        if self.ecn_pre_ack.is_some() {
            if let Some(t) = self.write_ecn_pre_ack(now, buf) {
                return Some(t);
            }
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
        // application write or a probe, which no input follows) or the SWS override (not
        // when pacing, not the window, holds the data back).
        let quiescent = !self.pace_held;
        self.update_timers_after(now, quiescent);
        None
    }

    pub(super) fn can_send_data(&self) -> bool {
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
    pub(super) fn fin_seq(&self) -> SeqNum {
        self.buf_seq + self.send_buf.len()
    }

    pub(super) fn flight(&self) -> u32 {
        self.snd_nxt.since(self.snd_una)
    }

    /// The most data the next segment may carry: the send MSS, less the room its SACK
    /// blocks will take. RFC 9293 §3.7.1 limits data plus TCP options to Eff.snd.MSS + 20
    /// bytes of TCP header, and SACK blocks (RFC 2018) ride on data segments too; without
    /// this a two-way transfer with loss sends packets up to 36 bytes over the MTU.
    /// (Timestamps are taken off `snd_mss` once, at the handshake.)
    #[inline]
    pub(super) fn payload_limit(&self) -> u32 {
        if !(self.sack_ok && (self.recv_buf.has_out_of_order() || self.dsack.is_some())) {
            return self.snd_mss;
        }
        self.payload_limit_with_sack()
    }

    /// [`payload_limit`](Self::payload_limit) when SACK or D-SACK blocks ride on the
    /// segment (kept out of line: the common case above is inlined into `send_data`).
    #[inline(never)]
    fn payload_limit_with_sack(&self) -> u32 {
        let mut options = TcpOptions::NONE;
        if self.ts_ok {
            options.timestamps = Some(Timestamps { tsval: 0, tsecr: 0 });
        }
        let layout = self.cfg.option_layout;
        let ts_len = options.encoded_len_with(layout);
        self.fill_sack_blocks(&mut options);
        let sack_len = (options.encoded_len_with(layout) - ts_len) as u32;
        self.snd_mss.saturating_sub(sack_len).max(1)
    }

    /// SACK recovery's part of [`send_data`](Self::send_data) (RFC 6675 §5 step C): while
    /// cwnd - pipe >= 1 SMSS, send what NextSeg chooses. `Ok`: new data may go, in this
    /// much room; `Err`: what to return (a retransmission, or nothing may be sent now).
    /// With PRR the room is its quota instead (RFC 9937 sets cwnd = pipe + SndCnt).
    #[cold]
    #[inline(never)]
    fn send_sack_recovery(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        mss: u32,
        data_end: SeqNum,
    ) -> Result<u32, Option<Transmit>> {
        let room = if self.prr.is_active() {
            self.prr_room(mss).ok_or(None)?
        } else {
            let pipe = self.recovery_pipe(mss);
            let room = self.cc.cwnd().saturating_sub(pipe);
            if room < mss {
                return Err(None);
            }
            room
        };
        let rwnd_room = (self.snd_una + self.snd_wnd).since(self.snd_nxt);
        let new_ok = data_end.since(self.snd_nxt) > 0 && rwnd_room > 0;
        if let (true, Some(r)) = (self.rack_on, self.rack.as_deref()) {
            // RFC 8985 §3.3: with RACK, what is resent is what RACK marked lost, oldest
            // first; then new data (RFC 6675's rules 3 and 4 stand in for the loss
            // detection RACK does).
            return match r.first_lost() {
                Some((seq, len)) => {
                    Err(self.retransmit(now, buf, seq, len.min(mss), Resend::Repair))
                }
                None if new_ok => Ok(room.min(rwnd_room)),
                None => Err(None),
            };
        }
        match self.rec.next_seg(self.snd_una, mss, new_ok) {
            Some(NextSeg::Retransmit { seq, len }) => {
                Err(self.retransmit(now, buf, seq, len, Resend::Repair))
            }
            // RFC 6675 rule 4: the recovery notes the rescue (RescueRxt) and leaves HighRxt
            // where it was.
            Some(NextSeg::Rescue { seq, len }) => {
                Err(self.retransmit(now, buf, seq, len, Resend::Rescue))
            }
            Some(NextSeg::NewData) => Ok(room.min(rwnd_room)),
            None => Err(None),
        }
    }

    /// PRR's room (RFC 9937): nothing once SndCnt is spent, else at least one whole
    /// segment. The RFC's examples count SndCnt in segments, CEIL rounding up to a whole
    /// one; in bytes, a quota of part of a segment lets one segment go and `prr_out` takes
    /// the excess off the next ACK's SndCnt, so the episode stays within a segment of the
    /// proportion.
    fn prr_room(&self, mss: u32) -> Option<u32> {
        let q = self.prr.quota();
        (q > 0).then(|| q.max(mss))
    }

    /// What a segment just written from `seq` (`advance` sequence numbers) changes: SND.NXT
    /// and SND.MAX (a zero-window probe's byte is not counted as sent), the RTT timing of
    /// one segment per round trip, the retransmission timer, the user timeout's start.
    #[inline(always)]
    pub(super) fn account_sent(
        &mut self,
        now: Instant,
        seq: SeqNum,
        advance: u32,
        forced: bool,
        retransmitting: bool,
    ) {
        if self.snd_una == self.snd_max {
            // Nothing was outstanding: the user timeout counts from now.
            self.progress_at = now;
            if self.cc_model && advance > 0 {
                self.model_send_from_idle(now);
            }
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
    }

    /// The next data segment (or FIN, or zero-window probe) to send, if any: the loss
    /// recovery's first, then new data as the windows, Nagle and sender SWS avoidance
    /// (RFC 9293 §3.8.6.2.1) allow.
    ///
    /// Pacing (`conn/pacing.rs`) holds every kind of data segment until its send time; it is
    /// tested in each branch that would send, so that the common call, which finds nothing
    /// to send, does not pay for it.
    pub(super) fn send_data(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let mss = self.payload_limit();
        let data_end = self.buf_seq + self.send_buf.len();
        if self.rack_on && self.rack.as_deref().is_some_and(Rack::wants_to_send_first) {
            // 0. A tail loss probe whose timeout expired (RFC 8985 §7.3); 0b. after a
            // timeout, a resend that RACK found lost again.
            match self.send_rack_first(now, buf, mss) {
                Ok(Some(t)) => return Some(t),
                Ok(None) => {}
                Err(()) => return None,
            }
        }
        // 1. A retransmission the recovery asked for goes first, whatever the window.
        if let Some(req) = self.rec.take_retransmit() {
            if self.pace_blocks(now) {
                self.rec.restore_retransmit(req);
                return None;
            }
            if req.seq >= self.snd_una && req.seq < self.snd_max {
                let t = self.retransmit(now, buf, req.seq, mss, Resend::Repair);
                if t.is_some() && req.restart_timer {
                    self.timers.set(Timer::Rto, now + self.rtt.rto());
                }
                if t.is_some() {
                    return t;
                }
            }
        }
        // 1b. SACK recovery (RFC 6675 §5 step C).
        let mut sack_usable = None;
        if self.rec.sack_recovery() {
            if self.pace_blocks(now) {
                return None;
            }
            match self.send_sack_recovery(now, buf, mss, data_end) {
                Ok(room) => sack_usable = Some(room),
                Err(t) => return t,
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
            self.set_cwnd(rw);
            self.emit(now, TraceKind::IdleRestart);
        }
        // Nothing unsent, no probe due and no FIN queued: below, `len` would be 0 and
        // nothing sent. Return before the congestion window is asked (a virtual call), as
        // happens on most calls (every ACK a receiver sends is followed by one).
        if data_end == self.snd_nxt && !self.probe_now && !self.fin_queued {
            return None;
        }
        if self.pace_blocks(now) {
            return None;
        }
        let cwnd = self.cc.cwnd().saturating_add(self.rec.extra_window());
        let wnd = self.snd_wnd.min(cwnd);
        let flight = self.flight();
        let unsent = data_end.since(self.snd_nxt);
        let usable = match sack_usable {
            Some(room) => room,
            // Reno and NewReno with PRR, and an ECN reduction with PRR: its quota instead of
            // the (inflated) window.
            None if self.prr.is_active() => self
                .prr_room(mss)
                .map_or(0, |room| room.min(self.snd_wnd.saturating_sub(flight))),
            None => wnd.saturating_sub(flight),
        };
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
        let mut flags = TcpFlags::ACK | self.push_flag(seq, len, data_end);
        if fin_here && !forced {
            flags |= TcpFlags::FIN;
        }
        let t = self.write_segment(now, buf, seq, len, flags, retransmitting)?;
        let advance = len + u32::from(flags.contains(TcpFlags::FIN));
        if self.prr.is_active() {
            // RFC 9937 prr_out.
            self.prr.on_sent(len);
        }
        self.account_sent(now, seq, advance, forced, retransmitting);
        self.last_send_at = now;
        if self.rack.is_some() {
            let fin = flags.contains(TcpFlags::FIN);
            self.rack_sent(now, seq, advance, fin, retransmitting);
            if self.rack_on && !retransmitting && !forced {
                // RFC 8985 §7.2: new data (re)starts the probe timeout.
                self.rack_schedule_probe(now);
            }
        }
        self.pace_on_sent(now, len);
        Some(t)
    }

    /// What RACK sends ahead of everything else (`Ok(Some)`), or `Err` when pacing holds it:
    /// a due tail loss probe (RFC 8985 §7.3), and, while the connection recovers from a
    /// timeout, a segment RACK has marked lost that the go-back-N resend has already passed
    /// (a lost retransmission, §6.3: RACK detects it by time; without this only the next,
    /// backed-off, timeout would repair it), once F-RTO, if it runs, is done. Window as in a
    /// SACK recovery: RACK's pipe below cwnd.
    #[cold]
    #[inline(never)]
    fn send_rack_first(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        mss: u32,
    ) -> Result<Option<Transmit>, ()> {
        if self.probe_due() {
            if self.pace_blocks(now) {
                return Err(());
            }
            if let Some(t) = self.send_probe(now, buf) {
                return Ok(Some(t));
            }
        }
        // F-RTO (RFC 5682 §2.1) decides what follows a timeout's first ACKs: new data, not
        // resends, until it has.
        if self.rec.in_recovery() || !self.rec.in_rto_recovery(self.snd_una) || self.frto.is_some()
        {
            return Ok(None);
        }
        let Some((seq, len)) = self.rack.as_deref().and_then(|r| r.first_lost()) else {
            return Ok(None);
        };
        if seq >= self.snd_nxt || self.cc.cwnd().saturating_sub(self.recovery_pipe(mss)) < mss {
            return Ok(None);
        }
        if self.pace_blocks(now) {
            return Err(());
        }
        Ok(self.retransmit(now, buf, seq, len.min(mss), Resend::Repair))
    }

    /// PSH for `len` data bytes from `seq` that empty the send buffer (ending at `data_end`)
    /// with no FIN queued behind them; none otherwise.
    #[inline]
    pub(super) fn push_flag(&self, seq: SeqNum, len: u32, data_end: SeqNum) -> TcpFlags {
        if len > 0 && seq + len == data_end && !self.fin_queued {
            TcpFlags::PSH
        } else {
            TcpFlags::NONE
        }
    }

    /// Resends up to `max_len` sequence bytes from `seq` (data, and the FIN if it was sent
    /// right after them), marking it a retransmission; `why` says what for.
    pub(super) fn retransmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        seq: SeqNum,
        max_len: u32,
        why: Resend,
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
        // PSH as on the first transmission, as BSD's tcp_output and Linux's resent skb do.
        let mut flags = TcpFlags::ACK | self.push_flag(seq, len, data_end);
        if fin {
            flags |= TcpFlags::FIN;
        }
        let t = self.write_segment(now, buf, seq, len, flags, true)?;
        self.rec
            .on_retransmit_sent(seq, len + u32::from(fin), why == Resend::Rescue);
        self.rack_sent(now, seq, len + u32::from(fin), fin, why != Resend::Probe);
        self.pace_on_sent(now, len);
        if self.prr.is_active() {
            // RFC 9937 prr_out counts retransmissions too.
            self.prr.on_sent(len);
        }
        // Karn: a resent segment's timing would be ambiguous.
        if let (Some((end, _)), true) = (self.rtt_timed, self.rtt.config().karn) {
            if seq < end {
                self.rtt_timed = None;
            }
        }
        // Linux restarts the timer when a recovery resends the oldest segment
        // (`rto_restart_on_head_resend`), so that a hole repaired late in a long recovery
        // gets a whole RTO to be acknowledged; RFC 6298 §5.1 only starts a stopped one.
        let restart =
            self.cfg.rto_restart_on_head_resend && why == Resend::Repair && seq == self.snd_una;
        if restart || !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
        Some(t)
    }

    pub(super) fn send_syn(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let mut flags = TcpFlags::SYN;
        if self.state == State::SynReceived {
            flags |= TcpFlags::ACK;
            // RFC 3168 §6.1.1: agree to the ECN the SYN asked for.
            if self.ecn_ok {
                flags |= TcpFlags::ECE;
            }
        } else if self.cfg.ecn {
            // An ECN-setup SYN.
            flags |= TcpFlags::ECE.union(TcpFlags::CWR);
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
    pub(super) fn write_segment(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        seq: SeqNum,
        len: u32,
        flags: TcpFlags,
        retransmit: bool,
    ) -> Option<Transmit> {
        let mut flags = flags;
        let mut ect = false;
        if self.ecn_ok {
            (flags, ect) = self.ecn_marks(flags, len, retransmit);
        }
        let has_ack = flags.contains(TcpFlags::ACK);
        let n = if flags.contains(TcpFlags::SYN)
            || (self.sack_ok
                && has_ack
                && (self.recv_buf.has_out_of_order() || self.dsack.is_some()))
        {
            self.write_headers_general(now, buf, seq, len, flags)?
        } else {
            // Every other segment carries at most the timestamps option: written from the
            // template (`fill_sack_blocks` would add nothing without out-of-order data or
            // a D-SACK block).
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
        if ect {
            self.mark_ect(buf, flags);
        }
        self.ip_id = self.ip_id.wrapping_add(1);
        self.stats.segs_out += 1;
        if len > 0 {
            self.stats.data_segs_out += 1;
            self.stats.bytes_sent += u64::from(len);
            if retransmit {
                self.stats.retransmitted_segs += 1;
                self.stats.bytes_retransmitted += u64::from(len);
                if self.undo.is_some() {
                    self.undo_count_retransmission();
                }
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

    /// The ACK RFC 8257 §3.2 sends when the per-packet echo changes state: it acknowledges
    /// up to `ack` (RCV.NXT before the segment that changed the state) with the old state
    /// `ece`. The ACK policy's count and timer belong to the data after it and are left as
    /// they are.
    #[cold]
    #[inline(never)]
    fn write_ecn_pre_ack(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let (ack, ece) = self.ecn_pre_ack.take()?;
        let (rcv_nxt, pending, last_ack_sent) =
            (self.rcv_nxt, self.ece_pending, self.last_ack_sent);
        let policy = (
            self.ack_now,
            self.unacked_segs,
            self.unacked_bytes,
            self.timers.get(Timer::DelayedAck),
        );
        self.rcv_nxt = ack;
        self.ece_pending = ece;
        let t = self.write_segment(now, buf, self.snd_max, 0, TcpFlags::ACK, false);
        self.rcv_nxt = rcv_nxt;
        self.ece_pending = pending;
        (self.ack_now, self.unacked_segs, self.unacked_bytes) = (policy.0, policy.1, policy.2);
        if let Some(at) = policy.3 {
            self.timers.set(Timer::DelayedAck, at);
        }
        if t.is_some() {
            self.stats.pure_acks_out += 1;
        } else {
            self.last_ack_sent = last_ack_sent;
        }
        t
    }

    /// The ECN side of a segment about to be written: ECE and CWR added to `flags`, and
    /// whether the packet goes out ECT(0). RFC 3168 §6.1.5: new data is ECT(0);
    /// retransmissions and, §6.1.6, window probes (data into a zero window) are not, nor are
    /// pure ACKs (§6.1.4) or SYNs (§6.1.1).
    #[inline(never)]
    fn ecn_marks(&self, mut flags: TcpFlags, len: u32, retransmit: bool) -> (TcpFlags, bool) {
        if flags.contains(TcpFlags::SYN) {
            return (flags, false);
        }
        let ect = len > 0 && !retransmit && self.snd_wnd != 0;
        if self.ece_pending && flags.contains(TcpFlags::ACK) {
            flags |= TcpFlags::ECE;
        }
        if self.cwr_pending && ect {
            flags |= TcpFlags::CWR;
        }
        (flags, ect)
    }

    /// Sets the IP ECN field of the segment just written to ECT(0), and counts it and its
    /// CWR.
    #[cold]
    #[inline(never)]
    fn mark_ect(&mut self, buf: &mut [u8], flags: TcpFlags) {
        if let Some(mut h) = ackclock_wire::Ipv4HeaderMut::new(buf) {
            h.set_ecn(ackclock_wire::ipv4::ECN_ECT0);
        }
        self.stats.ect_segs_out += 1;
        if flags.contains(TcpFlags::CWR) {
            self.cwr_pending = false;
            self.stats.cwr_out += 1;
        }
    }

    /// The headers of a SYN, or of an ACK with SACK blocks (or a D-SACK block), built field
    /// by field.
    #[inline(never)]
    pub(super) fn write_headers_general(
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
                options.window_scale = Some(offered_wscale(&self.cfg));
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
        // Every segment with options other than timestamps comes here: the layout applies
        // to all of them (the template's `nop, nop, TS` is the same in every layout).
        let n = packet::write_ipv4_tcp_vectored_with(
            buf,
            &ip,
            &header,
            self.cfg.option_layout,
            &[a, b],
        )
        .ok()?;
        if !syn {
            // The D-SACK block went out (first, when SACK is in use): it is reported once.
            self.dsack = None;
        }
        Some(n)
    }

    pub(super) fn write_rst(
        &mut self,
        now: Instant,
        buf: &mut [u8],
        r: RstRequest,
    ) -> Option<Transmit> {
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

    pub(super) fn queue_rst(&mut self, seq: SeqNum, ack: SeqNum, with_ack: bool) {
        self.rst_pending = Some(RstRequest { seq, ack, with_ack });
    }

    pub(super) fn ip_header(&self) -> Ipv4Header {
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
}
