//! The ACK policy: when an ACK is due (every second full segment, the delayed-ACK timer or
//! the 4.3BSD fast-timeout clock, RFC 9293 §3.8.6.3, RFC 5681 §4.2) and what each ACK says:
//! the advertised window (receiver SWS avoidance, RFC 9293 §3.8.6.2.2; window scaling,
//! RFC 7323) and the SACK blocks (RFC 2018 §4).

use super::*;

impl Connection {
    /// The ACK policy for in-order data: ACK every N full-sized segments (N = 2 by default,
    /// RFC 5681 §4.2 and seed 000 Oct 1988; up to 32 as HP-UX's tcp_deferred_ack_max, seed
    /// 002), or every N segments of any size with `count_small_segments` (FreeBSD),
    /// otherwise within the delayed-ACK time.
    #[inline(always)]
    pub(super) fn ack_policy_on_data(&mut self, now: Instant, len: usize) {
        if len >= self.ack_count_min as usize {
            self.unacked_segs += 1;
        }
        self.unacked_bytes = self.unacked_bytes.saturating_add(len as u32);
        if self.unacked_segs >= self.ack_every_segs || self.unacked_bytes >= self.ack_every_bytes {
            self.ack_now = true;
        } else if !self.timers.is_armed(Timer::DelayedAck) {
            self.timers
                .set(Timer::DelayedAck, now + self.cfg.ack.delayed_ack);
        }
    }

    /// When the delayed ACK goes out. Its timer is set `delayed_ack` after the first
    /// unacknowledged segment; with `delayed_ack_clock` the ACK waits instead for the next
    /// tick, after that segment, of the 4.3BSD fast timeout: a clock of period `delayed_ack`
    /// whose phase comes from the connection's timestamp offset, so that connections do not
    /// tick together. (Worked out here, off the per-segment path.)
    #[inline]
    pub(super) fn delack_deadline(&self) -> Option<Instant> {
        let t = self.timers.get(Timer::DelayedAck)?;
        if !self.cfg.ack.delayed_ack_clock {
            return Some(t);
        }
        let period = self.cfg.ack.delayed_ack.as_nanos().max(1);
        let started = t.as_nanos().saturating_sub(period);
        let phase = u64::from(self.ts_offset) * 1_000_000 % period;
        let into = (started + phase) % period;
        Some(Instant::from_nanos(started + (period - into)))
    }

    /// The window we can offer now, in bytes, before scaling and SWS avoidance.
    /// RCV.WND for the acceptability test: what we advertised (RFC 9293 §3.10.7.4 and RFC
    /// 5961 §3.2 judge "in window" against RCV.NXT + RCV.WND as sent, not against free
    /// buffer we never offered).
    pub(super) fn rcv_window_now(&self) -> u32 {
        self.rcv_adv.since(self.rcv_nxt)
    }

    /// The window field for a segment, recording the right edge it advertises.
    pub(super) fn advertise_window(&mut self, syn: bool) -> u16 {
        let (field, right) = self.window_field(syn);
        if right > self.rcv_adv {
            self.rcv_adv = right;
        }
        field
    }

    /// The window field a segment would carry now, and the right edge it would offer.
    pub(super) fn window_field(&self, syn: bool) -> (u16, SeqNum) {
        let mut win = self.recv_buf.window() as u32;
        // Receiver SWS avoidance (RFC 9293 §3.8.6.2.2, as 4.3BSD): do not advertise a small
        // window; wait until it is a quarter of the buffer or a full segment.
        let cap = self.recv_buf.capacity() as u32;
        if win < cap / 4 && win < self.rcv_mss {
            win = 0;
        }
        // Never shrink the window: keep the right edge already offered. With scaling the
        // field is rounded up just enough to cover that edge (RFC 7323 §2.4 and Appendix
        // F); fresh window is rounded down so we never offer buffer we lack.
        let edge = self.rcv_adv.since(self.rcv_nxt);
        let shift = if syn { 0 } else { self.rcv_wscale };
        let edge_field = edge.div_ceil(1u32 << shift);
        let field = (win >> shift).max(edge_field).min(65535);
        (field as u16, self.rcv_nxt + (field << shift))
    }

    /// The largest window the 16-bit field can express with our scale.
    pub(super) fn max_advertisable(&self) -> u32 {
        65535u32 << self.rcv_wscale
    }

    /// BSD's window-update rule: announce when the window can grow by two segments or by
    /// half the buffer since the last advertisement.
    pub(super) fn window_update_due(&self) -> bool {
        if !matches!(
            self.state,
            State::Established | State::FinWait1 | State::FinWait2
        ) || self.fin_received
        {
            return false;
        }
        let win = (self.recv_buf.window() as u32).min(self.max_advertisable());
        let adv = self.rcv_adv.since(self.rcv_nxt);
        let growth = win.saturating_sub(adv);
        // 4.3BSD announces growth of two segments, which is also what made it "deliver one
        // ack for every two data packets"; with ACK avoidance (N > 2) the threshold grows
        // with N so the window update does not undo the policy. Or half the buffer: the
        // smaller of the two is precomputed in `set_rcv_mss`.
        // The update must also move the right edge it advertises: with a tiny buffer the
        // threshold is 0, and growth finer than the window-scale unit or than receiver SWS
        // avoidance lets through cannot be announced (RFC 7323 §2.3, RFC 9293 §3.8.6.2.2);
        // counting it as due would send the same ACK for ever.
        growth >= self.wnd_update_growth && self.window_field(false).1 > self.rcv_adv
    }

    pub(super) fn note_sack_block(&mut self, seq: SeqNum) {
        if !self.sack_ok {
            return;
        }
        // Move `seq` to the front, dropping entries of the same block.
        let off = seq.since(self.rcv_nxt) as usize;
        let this = self.recv_buf.range_containing(off);
        let mut kept = [SeqNum::new(0); 4];
        let mut n = 0;
        kept[n] = seq;
        n += 1;
        for i in 0..self.sack_recent_len {
            let s = self.sack_recent[i];
            if s <= self.rcv_nxt {
                continue;
            }
            let r = self
                .recv_buf
                .range_containing(s.since(self.rcv_nxt) as usize);
            if r.is_none() || r == this {
                continue;
            }
            if n < 4 {
                kept[n] = s;
                n += 1;
            }
        }
        self.sack_recent = kept;
        self.sack_recent_len = n;
    }

    pub(super) fn prune_sack_recent(&mut self) {
        let mut n = 0;
        for i in 0..self.sack_recent_len {
            let s = self.sack_recent[i];
            if s > self.rcv_nxt
                && self
                    .recv_buf
                    .range_containing(s.since(self.rcv_nxt) as usize)
                    .is_some()
            {
                self.sack_recent[n] = s;
                n += 1;
            }
        }
        self.sack_recent_len = n;
    }

    /// Notes the duplicate data of a segment carrying `len` bytes from `seq` for a D-SACK
    /// block (RFC 2883 §4), when D-SACK is configured and SACK negotiated: the part below
    /// RCV.NXT if there is one, else the first part already held out of order. A segment
    /// that duplicates several ranges reports the first (lowest) only, as FreeBSD does
    /// (RFC 2883 leaves the choice to the receiver). Called before the data is stored. The
    /// ACK carrying the block goes out at once: the next in-order ACK would lose it, and a
    /// duplicate is the sender's sign of a needless retransmission.
    #[inline]
    pub(super) fn note_dsack(&mut self, seq: SeqNum, len: usize) {
        if len == 0
            || !(self.sack_ok && self.cfg.dsack)
            || !(seq < self.rcv_nxt || self.recv_buf.has_out_of_order())
        {
            return;
        }
        self.note_dsack_range(seq, len);
    }

    #[cold]
    #[inline(never)]
    fn note_dsack_range(&mut self, seq: SeqNum, len: usize) {
        let end = seq + len;
        let range = if seq < self.rcv_nxt {
            Some((seq, end.min(self.rcv_nxt)))
        } else {
            let off = seq.since(self.rcv_nxt) as usize;
            self.recv_buf
                .first_held_overlap(off, len)
                .map(|(s, e)| (self.rcv_nxt + s, self.rcv_nxt + e))
        };
        if let Some(r) = range {
            self.dsack = Some(r);
            self.ack_now = true;
        }
    }

    /// RFC 2018 §4: the first block covers the most recently received segment, the next
    /// ones the most recently reported blocks; at most 3 with timestamps. A pending D-SACK
    /// block comes before them all (RFC 2883 §4), and is not counted as a duplicate of the
    /// block that contains it, which follows it (RFC 2883 §4.1.2 reports both).
    pub(super) fn fill_sack_blocks(&self, options: &mut TcpOptions) {
        let mut first = 0;
        if let Some((left, right)) = self.dsack {
            options.sack.push(SackBlock {
                left: left.get(),
                right: right.get(),
            });
            first = 1;
        }
        if !self.recv_buf.has_out_of_order() {
            return;
        }
        let max = if options.timestamps.is_some() { 3 } else { 4 };
        let push = |o: &mut TcpOptions, (s, e): (usize, usize)| {
            let b = SackBlock {
                left: (self.rcv_nxt + s).get(),
                right: (self.rcv_nxt + e).get(),
            };
            if o.sack.len() < max && !o.sack.as_slice()[first..].contains(&b) {
                o.sack.push(b);
            }
        };
        for s in &self.sack_recent[..self.sack_recent_len] {
            if *s > self.rcv_nxt {
                if let Some(r) = self
                    .recv_buf
                    .range_containing(s.since(self.rcv_nxt) as usize)
                {
                    push(options, r);
                }
            }
        }
        for r in self.recv_buf.out_of_order_ranges() {
            push(options, r);
        }
    }
}
