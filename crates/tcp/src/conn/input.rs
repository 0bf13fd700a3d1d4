//! The input phase (RFC 9293 §3.10.7, "SEGMENT ARRIVES"): header prediction (the seed's
//! fast paths for a pure ACK and for in-order data), then the general path: the SYN-SENT
//! handshake, the acceptability test, RST and SYN checks (RFC 5961), PAWS (RFC 7323), ACK
//! processing (RTT samples, duplicate ACKs and recovery, the send window), data delivery and
//! FIN.

use super::*;
use crate::config::RecoveryAlgorithm;

impl Connection {
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
    pub(super) fn handle_segment_general(&mut self, now: Instant, seg: &Segment<'_>) {
        self.input_general(now, seg);
        self.refresh_prediction();
    }

    #[inline(always)]
    pub(super) fn input_general(&mut self, now: Instant, seg: &Segment<'_>) {
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
    pub(super) fn header_prediction(&self, seg: &Segment<'_>) -> Prediction {
        // ECE and CWR (RFC 3168) take the general path too: the ECN reactions live there.
        const CHECKED: TcpFlags = TcpFlags::SYN
            .union(TcpFlags::FIN)
            .union(TcpFlags::RST)
            .union(TcpFlags::URG)
            .union(TcpFlags::ACK)
            .union(TcpFlags::ECE)
            .union(TcpFlags::CWR);
        // `hp_ready` (tested by the caller) covers ESTABLISHED, SND.NXT = SND.MAX, no probe
        // due, no duplicate ACKs counted and no recovery episode; `only_timestamps` that the
        // segment carries no MSS, window scale, SACK-permitted or SACK option.
        // A CE-marked segment (ECN field 11) too: its mark must be echoed.
        if seg.flags & CHECKED != TcpFlags::ACK
            || seg.seq != self.rcv_nxt
            || !seg.only_timestamps()
            || seg.ecn == ECN_CE
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
    pub(super) fn predicted_ack(&mut self, now: Instant, seg: &Segment<'_>, wnd: u32) {
        self.stats.segs_in += 1;
        // A predicted segment counts as a hit even if its checksum then fails.
        self.stats.hp_ack_hits += 1;
        if let SegmentChecksum::Pending { header_sum } = seg.checksum {
            if header_sum != 0xffff {
                self.stats.bad_checksum += 1;
                return;
            }
        }
        let prev_una = self.snd_una;
        // (A model-based controller's ACKs are not predicted: `prediction_allowed`.)
        self.process_new_ack(now, seg);
        if self.rack_on {
            self.rack_on_ack(now, seg, prev_una, false, false);
        }
        self.update_send_window(seg.seq, seg.ack, wnd, true);
        self.update_ts_recent(now, seg);
        self.update_timers(now);
    }

    /// Header prediction's in-order data: the seed's "pure in-sequence data packet" case.
    /// The caller has checked that the ACK acknowledges nothing new, nothing is held out of
    /// order, and the data fits the window.
    #[inline(never)]
    pub(super) fn predicted_data(&mut self, now: Instant, seg: &Segment<'_>, wnd: u32) {
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
        self.update_send_window(seg.seq, seg.ack, wnd, false);
        self.update_ts_recent(now, seg);
        self.advance_rcv_nxt(len as u32);
        self.stats.bytes_received += len as u64;
        self.ack_policy_on_data(now, len);
        self.update_timers_open(now, false);
    }

    pub(super) fn input_syn_sent(&mut self, now: Instant, seg: &Segment<'_>) {
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
                self.error = Some(ConnectionError::Refused);
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
            // RFC 9293 §3.10.7.3: "If there are other controls or text in the segment,
            // queue them for processing after the ESTABLISHED state has been reached": the
            // SYN,ACK acknowledges only the SYN.
            if !seg.payload.is_empty() {
                self.hold_syn_data(seg.payload);
            }
        }
    }

    /// Holds data that came on a SYN (LISTEN, RFC 9293 §3.10.7.2, or SYN-SENT without ACK,
    /// §3.10.7.3) until ESTABLISHED: copied to the receive ring's in-order edge but not
    /// committed, so RCV.NXT stays at IRS+1 (the SYN-ACK acknowledges the SYN alone) and
    /// reads find nothing. Nothing else writes the ring before the handshake completes:
    /// text is processed only from ESTABLISHED on.
    pub(super) fn hold_syn_data(&mut self, data: &[u8]) {
        let (n, _) = self.recv_buf.stage_with_sum(data);
        self.syn_data_held = n as u32;
    }

    /// The handshake completed: the data held from the SYN is processed as text arriving
    /// now (RCV.NXT advances over it, it becomes readable, and the ACK policy decides when
    /// it is acknowledged, RFC 9293 §3.10.7.4 "seventh").
    pub(super) fn release_syn_data(&mut self, now: Instant) {
        let held = core::mem::take(&mut self.syn_data_held);
        if held == 0 {
            return;
        }
        // Still staged in full: nothing wrote the ring meanwhile (see `hold_syn_data`).
        debug_assert_eq!(held as usize, self.recv_buf.staged());
        let n = held.min(self.recv_buf.staged() as u32);
        self.recv_buf.commit(n as usize);
        self.advance_rcv_nxt(n);
        self.stats.bytes_received += u64::from(n);
        self.ack_policy_on_data(now, n as usize);
    }

    /// Our SYN was acknowledged: take the RTT sample of the handshake and move the send
    /// sequence past the SYN.
    pub(super) fn ack_syn(&mut self, now: Instant, ack: SeqNum) {
        if let Some((end, t0)) = self.rtt_timed {
            if ack >= end {
                self.take_rtt_sample(now, now - t0);
                self.rtt_timed = None;
                if let Some(r) = self.rack.as_deref_mut() {
                    r.note_syn_rtt(now - t0);
                }
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
            CongestionAlgorithm::Fixed => self.cc = make_cc(&self.cfg, mss, self.iss),
            _ => self.set_cwnd(self.cfg.initial_window.bytes(mss)),
        }
        // A controller's pacing rate holds from the first segment of data (BBR's initial
        // rate comes from the initial window; Linux sets it when the controller starts).
        self.update_pacing_rate();
    }

    pub(super) fn take_syn_options(&mut self, now: Instant, seg: &Segment<'_>) {
        let o = &seg.options;
        let peer_mss = o
            .mss
            .map_or(DEFAULT_MSS, |m| u32::from(m.max(crate::config::MIN_MSS)));
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        // RFC 3168 §6.1.1: a SYN asks for ECN with ECE and CWR, a SYN,ACK agrees with ECE
        // alone (ECE and CWR together on a SYN,ACK is a reflected SYN, not an agreement).
        let f = seg.flags;
        self.ecn_ok = self.cfg.ecn
            && if f.contains(TcpFlags::ACK) {
                f.contains(TcpFlags::ECE) && !f.contains(TcpFlags::CWR)
            } else {
                f.contains(TcpFlags::ECE.union(TcpFlags::CWR))
            };
        if !self.sack_ok && self.cfg.recovery == RecoveryAlgorithm::Sack {
            // RFC 6675 needs the receiver's SACK blocks; without them the sender recovers
            // as RFC 6582 says (NewReno), as FreeBSD and Linux do with a peer that does
            // not offer SACK.
            self.rec = Recovery::new(
                RecoveryAlgorithm::NewReno,
                self.cfg.dupack_threshold,
                self.cfg.limited_transmit,
            );
        }
        self.ws_ok = self.cfg.window_scale && o.window_scale.is_some();
        if self.ws_ok {
            self.snd_wscale = o.window_scale.unwrap_or(0).min(MAX_WSCALE);
            self.rcv_wscale = offered_wscale(&self.cfg);
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
        self.cc = make_cc(&self.cfg, self.snd_mss, self.iss);
        self.last_ack_sent = seg.seq + 1u32;
        self.rcv_adv = self.rcv_nxt;
        self.init_rack();
    }

    /// PAWS (RFC 7323 §5.3) and a retransmitted SYN in SYN-RECEIVED: whether the segment
    /// goes on to the acceptability test (false: it was handled here).
    #[inline]
    fn passes_paws_and_syn_checks(&mut self, now: Instant, seg: &Segment<'_>) -> bool {
        let f = seg.flags;
        // PAWS (RFC 7323 §5.3): a timestamp older than TS.Recent marks an old duplicate.
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if !f.contains(TcpFlags::RST)
                && !ts_geq(ts.tsval, self.ts_recent)
                && now.saturating_since(self.ts_recent_age) < PAWS_IDLE
            {
                self.stats.paws_drops += 1;
                if !f.contains(TcpFlags::SYN) {
                    // Its data below RCV.NXT, or already held, is a duplicate (RFC 2883 §4).
                    self.note_dsack(seg.seq, seg.payload.len());
                }
                self.ack_invalid(now, seg);
                return false;
            }
        }
        // In SYN-RECEIVED a retransmitted SYN means our SYN,ACK was lost: resend it.
        if self.state == State::SynReceived
            && f.contains(TcpFlags::SYN)
            && !f.contains(TcpFlags::ACK)
            && seg.seq == self.irs
        {
            self.syn_pending = true;
            return false;
        }
        true
    }

    /// The acceptability test (RFC 9293 §3.10.7.4, first check): whether the segment is in
    /// the receive window (false: it was answered or dropped here, as the RFC says).
    #[inline]
    fn acceptable(&mut self, now: Instant, seg: &Segment<'_>) -> bool {
        let f = seg.flags;
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
            // Not for a RST: RFC 5961 §3.2 defines its window strictly, and one at the
            // right edge is outside it and dropped without a challenge ACK (as FreeBSD).
            (0, w) if f.contains(TcpFlags::RST) => seg.seq.in_range(self.rcv_nxt, w),
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
                        // Data below RCV.NXT is an old duplicate: RFC 2883 §4 reports it.
                        self.note_dsack(seg.seq, seg.payload.len());
                        self.ack_invalid(now, seg);
                    }
                    // A retransmitted FIN in TIME-WAIT restarts the 2 MSL timer.
                    if self.state == State::TimeWait && f.contains(TcpFlags::FIN) {
                        self.timers.set(Timer::TimeWait, now + self.cfg.time_wait);
                    }
                }
                return false;
            }
        }
        true
    }

    /// A segment in a synchronized state, through the general path of RFC 9293 §3.10.7.4
    /// in the RFC's order (header prediction took the common cases before).
    pub(super) fn input_synchronized(&mut self, now: Instant, seg: &Segment<'_>) {
        let f = seg.flags;
        // RFC 7323 §3.2: once negotiated, a non-RST segment without timestamps is dropped.
        if self.ts_ok && seg.options.timestamps.is_none() && !f.contains(TcpFlags::RST) {
            self.stats.malformed += 1;
            return;
        }
        if !self.passes_paws_and_syn_checks(now, seg) {
            return;
        }
        // First: the acceptability test (RFC 9293 §3.10.7.4).
        if !self.acceptable(now, seg) {
            return;
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

        if self.ecn_ok {
            self.input_ecn(seg);
        }

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
    pub(super) fn input_ack(&mut self, now: Instant, seg: &Segment<'_>) -> Flow {
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
                self.release_syn_data(now);
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
        // RFC 9937 §6.2 needs the change in the bytes SACKed: the scoreboard before this ACK
        // (all of it, and the part above the new SND.UNA), with PRR only.
        let prr_on = self.cfg.window_reduction == WindowReduction::Prr && !self.cc_owns_recovery;
        let prior_in_flight = self.model_before_ack();
        let prr_before = if prr_on && self.sack_ok {
            let low = ack.max(self.snd_una);
            (
                self.rec.sacked_bytes(),
                self.rec.sacked_above(low),
                self.fin_delivered(),
            )
        } else {
            (0, 0, prr_on && self.fin_delivered())
        };
        let prev_una = self.snd_una;
        let was_recovering = self.rec.in_recovery();
        if self.sack_ok {
            // RFC 6675 Update(), before the duplicate-ACK logic reads IsLost.
            self.rec
                .on_sack_blocks(ack.max(self.snd_una), self.snd_max, &seg.options.sack);
            if !seg.options.sack.is_empty() {
                let low = ack.max(self.snd_una);
                if let Some((l, r)) = crate::rack::dsack_block(low, &seg.options.sack) {
                    self.stats.dsacks_in += 1;
                    if self.undo.is_some() {
                        self.undo_on_dsack(now, l, r);
                    }
                }
            }
            if self.tracing() {
                for b in seg.options.sack.iter() {
                    let (left, right) = (SeqNum::new(b.left), SeqNum::new(b.right));
                    self.emit(now, TraceKind::Sack { left, right });
                }
            }
        }
        let acked_new = ack > self.snd_una;
        let mut is_dup = false;
        if !acked_new {
            // RFC 5681 §2: a duplicate ACK acknowledges nothing new, carries no data, no
            // SYN/FIN, the same window, while data is outstanding.
            is_dup = ack == self.snd_una
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
        if self.rack.is_some() {
            // Before PRR: the ACK on which RACK starts a recovery is PRR's first (§6.1).
            self.rack_on_ack(now, seg, prev_una, was_recovering, is_dup);
        }
        if prr_on {
            self.prr_on_ack(prev_una, prr_before, is_dup);
        }
        if self.frto.is_some() {
            self.frto_on_ack(now, prev_una, is_dup);
        }
        if self.cc_model {
            let ece = self.ecn_ok && seg.flags.contains(TcpFlags::ECE);
            self.model_on_ack(now, prev_una, prior_in_flight, ece);
        }
        self.update_send_window(seg.seq, ack, wnd, acked_new);
        if self.ecn_ok && seg.flags.contains(TcpFlags::ECE) {
            self.on_ece(now);
        }
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

    /// Window update (RFC 9293 §3.10.7.4): only from segments newer than the last update,
    /// or from one that acknowledged new data (`acked_new`). RFC 9293's test alone lets one
    /// blind segment inside the receive window but far ahead of the peer's sequence numbers
    /// set SND.WL1 where the peer's real segments never reach, and its window (1 byte, say)
    /// then holds for good; an ACK of new data is the peer's latest word on its window
    /// whatever its SEQ (Linux's `tcp_may_update_window` takes it too).
    #[inline(always)]
    pub(super) fn update_send_window(
        &mut self,
        seq: SeqNum,
        ack: SeqNum,
        wnd: u32,
        acked_new: bool,
    ) {
        if acked_new || self.snd_wl1 < seq || (self.snd_wl1 == seq && self.snd_wl2 <= ack) {
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

    /// ECN at the receiver. RFC 3168 §6.1.3 (latched): a CE mark sets ECE on every ACK until
    /// the sender's CWR. RFC 8257 §3.2 (per packet, for DCTCP and the DEC bit): ECE says
    /// whether the data an ACK acknowledges was marked; when a data segment's mark differs
    /// from the last one, the data received before it and not yet acknowledged gets its
    /// own ACK at once, with the old state, so no ACK covers marked and unmarked data.
    #[inline(never)]
    pub(super) fn input_ecn(&mut self, seg: &Segment<'_>) {
        let ce = seg.ecn == ECN_CE;
        if ce {
            self.stats.ce_segs_in += 1;
        }
        match self.cfg.ecn_echo {
            EcnEcho::Latched => {
                if seg.flags.contains(TcpFlags::CWR) {
                    self.ece_pending = false;
                }
                if ce {
                    self.ece_pending = true;
                }
            }
            EcnEcho::PerPacket => {
                if seg.payload.is_empty() || ce == self.ece_pending {
                    return;
                }
                if self.unacked_bytes > 0 {
                    // What is held unacknowledged is acknowledged by that ACK: the new
                    // segment starts the ACK policy's count afresh. (If an earlier such ACK
                    // is still waiting to be sent, this one, further on, replaces it.)
                    self.ecn_pre_ack = Some((self.rcv_nxt, self.ece_pending));
                    self.unacked_segs = 0;
                    self.unacked_bytes = 0;
                }
                self.ece_pending = ce;
            }
        }
    }

    /// An ACK echoed a CE mark (RFC 3168 §6.1.2): the controller's decrease, as for a loss
    /// but with nothing to retransmit, at most once per window of data (until SND.UNA
    /// passes SND.MAX as it was at the last reduction) and not inside a loss recovery, which
    /// has already reduced. The next new data segment carries CWR.
    #[cold]
    #[inline(never)]
    pub(super) fn on_ece(&mut self, now: Instant) {
        self.stats.ece_in += 1;
        if self.rec.in_recovery() || self.ecn_recover.is_some_and(|p| self.snd_una <= p) {
            return;
        }
        let ev = self.congestion_event(now);
        if !self.cc.on_ece(&ev) {
            // A controller that counts marks per window (DEC-bit) decides in `on_ack`.
            return;
        }
        self.cwr_pending = true;
        self.ecn_recover = Some(self.snd_max);
        self.stats.ecn_reductions += 1;
        if self.cfg.window_reduction == WindowReduction::Prr && !self.cc_owns_recovery {
            // RFC 9937 §1: PRR brings the flight down to the new ssthresh over the next
            // round trip, as in a fast recovery, with RecoverFS the flight (nothing is
            // missing, none of it SACKed).
            self.prr
                .start(self.snd_max.since(self.snd_una), self.cc.ssthresh());
            self.prr_cwr = true;
        }
        self.emit(now, TraceKind::EcnReduction);
    }

    /// Our FIN has been sent and is acknowledged, cumulatively or by a SACK block.
    fn fin_delivered(&self) -> bool {
        if !self.fin_queued {
            return false;
        }
        let fin = self.fin_seq();
        self.snd_max > fin && (self.snd_una > fin || self.rec.sacked_above(fin) > 0)
    }

    /// RFC 9937 PRR, after an ACK has been through the recovery: starts the reduction on
    /// the ACK that started a fast recovery (§6.1), takes each ACK's step during it (§6.2),
    /// and on the ACK that ends it sets cwnd = ssthresh. `before` is the scoreboard's SACKed
    /// bytes before the ACK (all, and above the new SND.UNA) and whether our FIN was already
    /// delivered; `dupack`, that the ACK was a duplicate.
    ///
    /// Safe ACK (SND.UNA advanced, no further loss indicated): with SACK, an ACK that moved
    /// SND.UNA and SACKed nothing new. Without SACK, none during an episode: every ACK that
    /// moves SND.UNA without ending it is a partial ACK, which RFC 6582 takes as the loss of
    /// the next segment.
    #[cold]
    #[inline(never)]
    pub(super) fn prr_on_ack(&mut self, prev_una: SeqNum, before: (u32, u32, bool), dupack: bool) {
        let mss = self.snd_mss;
        if self.rec.in_recovery() && self.prr_cwr {
            // A loss during an ECN reduction: the recovery's reduction replaces it, from
            // this ACK (§6.1).
            self.prr.stop();
            self.prr_cwr = false;
        }
        let cwr = self.prr_cwr && self.ecn_recover.is_some_and(|p| self.snd_una < p);
        if !self.rec.in_recovery() && !cwr {
            if self.prr.is_active() {
                // The ACK that ends the episode is not a PRR step: the reduction ends with
                // cwnd = ssthresh (RFC 9937 §6).
                self.prr.stop();
                self.prr_cwr = false;
                let s = self.cc.ssthresh();
                self.set_cwnd(s);
            }
            return;
        }
        let acked = self.snd_una.since(prev_una);
        let flight = self.snd_max.since(self.snd_una);
        let sack = self.rec.algorithm() == RecoveryAlgorithm::Sack;
        let (sacked_before, above_before, fin_before) = before;
        let sacked_after = if sack { self.rec.sacked_bytes() } else { 0 };
        let newly_sacked = sacked_after.saturating_sub(above_before);
        if !self.prr.is_active() {
            // §6.1: the ACK that started recovery. Without SACK, the duplicate ACKs before it
            // stand for the segments SACKed before recovery.
            let prior = self.rec.dupacks().saturating_sub(1);
            let fs = if sack {
                crate::prr::recover_fs(flight, sacked_after, newly_sacked, acked)
            } else {
                crate::prr::recover_fs(flight, prior.saturating_mul(mss), 0, acked)
            };
            self.prr.start(fs, self.cc.ssthresh());
            if !sack {
                self.prr.note_prior_dupacks(prior, mss);
            }
        }
        let (delivered, pipe, safe) = if sack {
            let d = Prr::delivered_data(acked, sacked_before, sacked_after);
            let pipe = self.recovery_pipe(mss);
            (d, pipe, acked > 0 && newly_sacked == 0)
        } else {
            let (d, pipe) = self.prr.on_ack_without_sack(acked, dupack, flight, mss);
            (d, pipe, false)
        };
        // DeliveredData counts data (§6.2): the FIN's sequence number, acknowledged or SACKed
        // by this ACK (a Linux receiver's block covers it), is not a byte delivered. Counted,
        // it made the bound one byte more than a segment, and a second segment went.
        let delivered = delivered.saturating_sub(u32::from(!fin_before && self.fin_delivered()));
        self.prr.on_ack(delivered, pipe, safe, mss);
    }

    pub(super) fn on_dupack(&mut self, now: Instant, seg: &Segment<'_>) {
        self.stats.dup_acks_in += 1;
        let ev = self.congestion_event(now);
        let (una, max) = (self.snd_una, self.snd_max);
        let resending = self.snd_nxt < self.snd_max;
        let outcome = self.rec.on_dupack(una, max, resending, &*self.cc, &ev);
        // The recovery detects, the controller answers: ssthresh (and cwnd) from the loss,
        // then any window the recovery sets on top (Tahoe's one segment).
        if let Some(ev) = self.rec.take_congestion() {
            self.undo_begin(false);
            self.cc.on_congestion(&ev);
        }
        if let Some(w) = self.rec.take_window() {
            self.set_cwnd(w);
        }
        let _ = seg;
        let count = self.rec.dupacks();
        self.emit(now, TraceKind::DupAck { count });
        if outcome == DupAckOutcome::FastRetransmit {
            self.undo_note_fast_retransmit(now);
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
    pub(super) fn process_new_ack(&mut self, now: Instant, seg: &Segment<'_>) {
        let ack = seg.ack;
        let prev_una = self.snd_una;
        let flight_before = self.flight();
        let acked = ack.since(prev_una);
        // RTT: from the timestamp echo when negotiated (unambiguous even for
        // retransmissions, RFC 7323 §4), else the timed segment (Karn).
        let mut sample = None;
        let mut spurious_timeout = false;
        let mut spurious_recovery = false;
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
                        self.stats.spurious_rtos += 1;
                        self.emit(now, TraceKind::SpuriousRetransmit);
                        spurious_timeout = self.cfg.undo;
                    }
                }
                if let (true, Some(ft)) = (self.rec.in_recovery(), self.fr_retransmit_ts) {
                    // The same detection for the fast retransmit that began this recovery,
                    // on each ACK of new data in it (as Linux's `tcp_try_undo_partial`): an
                    // echo older than the retransmission means originals filled the holes.
                    // TS.Recent never moves back (RFC 7323 §5.3 R3), so once a resend has
                    // filled one, no later echo in the episode is older.
                    spurious_recovery = ts_geq(ft, ts.tsecr) && ft != ts.tsecr;
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
            .on_new_ack(prev_una, ack, flight_after, &*self.cc, mss);
        if let Some(w) = self.rec.take_window() {
            // The retraction or deflation at the end of an episode (a controller that owns
            // the recovery's window sets its own).
            if !self.cc_owns_recovery {
                self.set_cwnd(w);
            }
        }
        if outcome == NewAckOutcome::Exit {
            self.fr_retransmit_ts = None;
            self.cc.on_recovery_exit(now);
        }
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
            ece: self.ecn_ok && seg.flags.contains(TcpFlags::ECE),
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            delivery: None,
        };
        // Reno opens the window on the recovery ACK after the retraction, as 4.3BSD-Reno's
        // tcp_input does; NewReno's full ACK has already set cwnd (RFC 6582 §3.2 step 3).
        let grow = match outcome {
            NewAckOutcome::Exit => self.cfg.recovery == crate::config::RecoveryAlgorithm::Reno,
            _ => true,
        };
        // A model-based controller hears of this ACK after loss detection (`model_on_ack`).
        if grow && !self.cc_model {
            self.cc.on_ack(&ev);
            if self.pace_window {
                self.update_pacing_rate();
            }
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
        self.emit(
            now,
            TraceKind::Ack {
                ack,
                window: u32::from(seg.window) << self.snd_wscale,
            },
        );
        if spurious_timeout {
            // RFC 4015's response to what Eifel detection found.
            self.undo_spurious_timeout(now, acked);
        }
        if spurious_recovery {
            self.undo_spurious_recovery(now);
        }
    }

    pub(super) fn take_rtt_sample(&mut self, now: Instant, rtt: Duration) {
        self.rtt.on_sample(rtt);
        self.emit(now, TraceKind::RttSample { rtt });
    }

    /// Stores in-window data, advancing RCV.NXT, and applies the ACK policy.
    pub(super) fn deliver_data(&mut self, now: Instant, seq: SeqNum, data: &[u8]) {
        // Duplicate data, below RCV.NXT or already held out of order: a D-SACK block for
        // the next ACK (RFC 2883 §4), asked before the data is stored.
        self.note_dsack(seq, data.len());
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
    pub(super) fn advance_rcv_nxt(&mut self, n: u32) {
        // In-order data or the FIN: either way a read now returns something (or the end).
        self.events |= EV_READABLE;
        self.rcv_nxt += n;
        if self.rcv_adv < self.rcv_nxt {
            self.rcv_adv = self.rcv_nxt;
        }
    }

    pub(super) fn receive_fin(&mut self, now: Instant, fin_seq: SeqNum) {
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

    pub(super) fn on_reset(&mut self, now: Instant) {
        // RFC 9293 §3.10.7.4: in SYN-RECEIVED from a passive open the endpoint returns to
        // LISTEN (it drops this connection); in SYN-RECEIVED entered from SYN-SENT (a
        // simultaneous open, so an active OPEN) "the connection was refused; signal the
        // user 'connection refused'"; everywhere else the user hears "reset".
        let refused = self.state == State::SynReceived && !self.passive;
        self.error = Some(if refused {
            ConnectionError::Refused
        } else {
            ConnectionError::Reset
        });
        self.enter_closed();
        self.set_state(now, State::Closed);
    }

    /// RFC 5961 challenge ACK, rate limited per connection (§7).
    /// An ACK in answer to an invalid segment (out of window, failing PAWS): always for a
    /// segment with data or a FIN (it may be a retransmission whose ACK was lost), at most
    /// one per `invalid_ack_interval` for one without (as Linux's tcp_oow_rate_limited):
    /// such segments answering each other make an ACK storm.
    pub(super) fn ack_invalid(&mut self, now: Instant, seg: &Segment<'_>) {
        let carries = !seg.payload.is_empty() || seg.flags.contains(TcpFlags::FIN);
        if carries || self.invalid_ack_allowed(now) {
            self.ack_now = true;
        }
    }

    pub(super) fn invalid_ack_allowed(&mut self, now: Instant) -> bool {
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

    pub(super) fn challenge_ack(&mut self, now: Instant) {
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

    pub(super) fn update_ts_recent(&mut self, now: Instant, seg: &Segment<'_>) {
        // RFC 7323 §4.3: "If SEG.TSval >= TS.Recent and SEG.SEQ <= Last.ACK.sent then
        // TS.Recent = SEG.TSval."
        if let (true, Some(ts)) = (self.ts_ok, seg.options.timestamps) {
            if ts_geq(ts.tsval, self.ts_recent) && seg.seq <= self.last_ack_sent {
                self.ts_recent = ts.tsval;
                self.ts_recent_age = now;
            }
        }
    }
}
