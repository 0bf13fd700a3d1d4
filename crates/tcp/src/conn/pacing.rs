//! Pacing: data segments spaced at a rate rather than sent in the bursts that ACKs open
//! the window by. The rate is the congestion controller's own (BBR paces at its model of
//! the bottleneck, Cardwell et al. 2016) or, with [`Pacing::Linux`], Linux's rule for a
//! window-based controller (`tcp_update_pacing_rate`): max(cwnd, flight) / SRTT, times 2
//! while cwnd is below half ssthresh and 1.2 after.
//!
//! Each segment sent moves the next send time on by its length at the rate (Linux's
//! `tcp_wstamp_ns`); `send_data` holds data until then and marks it held (`pace_held`),
//! and `poll_timeout` reports the send time as a deadline (kept outside the timer table,
//! whose size is one cache line's worth with the configuration pointer). A sender that wakes late keeps up to
//! [`TcpConfig::pacing_burst`] of the lost time as credit (a token bucket of rate x burst
//! bytes): the schedule restarts from `now - burst`, not from `now`. ACKs, SYNs and RSTs are
//! never held.
//!
//! [`Pacing::Linux`]: crate::config::Pacing::Linux
//! [`TcpConfig::pacing_burst`]: crate::TcpConfig::pacing_burst

use super::*;
use crate::config::Pacing;

/// Linux's `tcp_pacing_ss_ratio` (percent): the pacing rate in slow start.
const PACING_SS_RATIO: u64 = 200;
/// Linux's `tcp_pacing_ca_ratio` (percent): the pacing rate in congestion avoidance.
const PACING_CA_RATIO: u64 = 120;
/// Nanoseconds in a second.
const NANOS_PER_SEC: u128 = 1_000_000_000;

impl Connection {
    /// Recomputes the pacing rate after an ACK (the controller may have changed its rate or
    /// its window, the estimator its SRTT). Zero: not paced.
    pub(super) fn update_pacing_rate(&mut self) {
        self.pace_rate = match self.cc.pacing_rate() {
            Some(rate) => rate.max(1),
            None if self.cfg.pacing == Pacing::Linux => self.linux_pacing_rate(),
            None => 0,
        };
    }

    /// Linux's `tcp_update_pacing_rate` for a window-based controller, in bytes per second;
    /// zero before an RTT sample (Linux then leaves the rate unlimited).
    fn linux_pacing_rate(&self) -> u64 {
        let srtt = self.rtt.srtt().as_nanos();
        if srtt == 0 {
            return 0;
        }
        let cwnd = self.cc.cwnd();
        let ratio = if cwnd < self.cc.ssthresh() / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let window = u128::from(cwnd.max(self.flight()));
        let rate = window * u128::from(ratio) * NANOS_PER_SEC / 100 / u128::from(srtt);
        u64::try_from(rate).unwrap_or(u64::MAX).max(1)
    }

    /// Whether pacing holds data back at `now` (see [`pace_allows`](Self::pace_allows)).
    #[inline(always)]
    pub(super) fn pace_blocks(&mut self, now: Instant) -> bool {
        self.pace_rate != 0 && !self.pace_allows(now)
    }

    /// Whether pacing lets a data segment go at `now` (the caller tests `pace_rate != 0`
    /// first). If not, and something waits to be sent, the send time becomes a deadline.
    #[inline(never)]
    pub(super) fn pace_allows(&mut self, now: Instant) -> bool {
        if self.pace_at <= now {
            self.pace_held = false;
            return true;
        }
        let data_end = self.buf_seq + self.send_buf.len();
        let waiting = data_end > self.snd_nxt
            || self.snd_nxt < self.snd_max
            || self.fin_queued
            || self.rec.in_recovery()
            || self.probe_now;
        if waiting && !self.pace_held {
            self.pace_held = true;
            self.timers.note_deadline(self.pace_at);
        }
        false
    }

    /// A data segment of `len` bytes went out at `now`: the next may go `len / rate` after
    /// this one's send time, which is never earlier than `now - pacing_burst` (the credit a
    /// late wake-up keeps).
    #[inline]
    pub(super) fn pace_on_sent(&mut self, now: Instant, len: u32) {
        // Tested here, the arithmetic out of line: the unpaced send path stays as short
        // (and as light on registers) as before pacing existed.
        if self.pace_rate != 0 {
            self.pace_schedule(now, len);
        }
    }

    /// [`pace_on_sent`](Self::pace_on_sent)'s arithmetic, when paced.
    #[inline(never)]
    fn pace_schedule(&mut self, now: Instant, len: u32) {
        let gap = u128::from(len.max(1)) * NANOS_PER_SEC / u128::from(self.pace_rate);
        let gap = Duration::from_nanos(u64::try_from(gap).unwrap_or(u64::MAX / 2));
        // `Instant`'s arithmetic saturates.
        let floor = now - self.cfg.pacing_burst;
        self.pace_at = self.pace_at.max(floor) + gap;
    }
}
