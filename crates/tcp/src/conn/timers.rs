//! A connection's timers in one table, as 4.3BSD keeps them in `t_timer[TCPT_NTIMERS]`:
//! retransmission (RFC 6298), persist (RFC 9293 §3.8.6.1), delayed ACK (RFC 9293
//! §3.8.6.3) and TIME-WAIT (RFC 9293 §3.10.7.4, 2 MSL). Each is a deadline or unarmed;
//! the connection's next deadline is the least of them.
//!
//! The table also remembers whether a timer was armed earlier than the time the
//! endpoint's timer heap will next look at this connection (`heap_deadline`): only then
//! does the heap need a new entry, so re-arming the retransmission timer on every ACK costs
//! a compare, not a heap push.

use super::*;
use core::cell::Cell;

/// Which timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// Retransmission timeout (BSD's TCPT_REXMT).
    Rto = 0,
    /// Zero-window probe, or the sender SWS override (TCPT_PERSIST).
    Persist = 1,
    /// Delayed ACK (4.3BSD's TF_DELACK, run from tcp_fasttimo).
    DelayedAck = 2,
    /// The end of TIME-WAIT (TCPT_2MSL).
    TimeWait = 3,
    /// RFC 8985: RACK's reordering timer or TLP's probe timeout, whichever the connection's
    /// RACK state says (`Rack::timer`); only with RACK.
    Loss = 4,
}

/// An unarmed slot: later than every deadline, so the earliest is a plain minimum.
const UNARMED: u64 = u64::MAX;

/// The five deadlines, in nanoseconds of [`Instant`] (`UNARMED` when off).
#[derive(Debug)]
pub(crate) struct Timers {
    at: [u64; 5],
    /// When the endpoint's timer heap will next look at this connection, in nanoseconds
    /// (`UNARMED`: never).
    heap_deadline: Cell<u64>,
    /// A timer was armed earlier than `heap_deadline` since the last `take_armed_early`.
    armed_early: bool,
}

impl Timers {
    pub(crate) fn new() -> Self {
        Timers {
            at: [UNARMED; 5],
            armed_early: false,
            heap_deadline: Cell::new(UNARMED),
        }
    }

    /// The deadline of `t`, if armed.
    #[inline(always)]
    pub(crate) fn get(&self, t: Timer) -> Option<Instant> {
        let v = self.at[t as usize];
        (v != UNARMED).then(|| Instant::from_nanos(v))
    }

    #[inline(always)]
    pub(crate) fn is_armed(&self, t: Timer) -> bool {
        self.at[t as usize] != UNARMED
    }

    /// Arms `t` for `at` (re-arms it if it was armed).
    #[inline(always)]
    pub(crate) fn set(&mut self, t: Timer, at: Instant) {
        if at.as_nanos() < self.heap_deadline.get() {
            self.armed_early = true;
        }
        // An instant at u64::MAX nanoseconds (584 years) would read as unarmed; the
        // engine's timers are bounded far below (config limits of 10^7 ms).
        self.at[t as usize] = at.as_nanos().min(UNARMED - 1);
    }

    #[inline(always)]
    pub(crate) fn cancel(&mut self, t: Timer) {
        self.at[t as usize] = UNARMED;
    }

    /// Stops every timer except TIME-WAIT's.
    #[inline]
    pub(crate) fn cancel_transfer_timers(&mut self) {
        self.cancel(Timer::Rto);
        self.cancel(Timer::Loss);
        self.cancel(Timer::Persist);
        self.cancel(Timer::DelayedAck);
    }

    pub(crate) fn cancel_all(&mut self) {
        self.at = [UNARMED; 5];
    }

    /// Whether `t` is armed and due at `now`; if so it is disarmed (it fires once).
    #[inline]
    pub(crate) fn take_due(&mut self, t: Timer, now: Instant) -> bool {
        let due = self.at[t as usize] <= now.as_nanos();
        if due {
            self.at[t as usize] = UNARMED;
        }
        due
    }

    /// The earliest deadline; `delack`, when given, stands in for the delayed-ACK slot
    /// (the 4.3BSD fast-timeout clock moves the ACK to the clock's next tick).
    #[inline]
    pub(crate) fn earliest(&self, delack: Option<Option<Instant>>) -> Option<Instant> {
        let d = match delack {
            Some(t) => t.map_or(UNARMED, Instant::as_nanos),
            None => self.at[Timer::DelayedAck as usize],
        };
        // Branch-free minimum: the endpoint asks after every segment.
        let m = self.at[Timer::Rto as usize]
            .min(self.at[Timer::Persist as usize])
            .min(d)
            .min(self.at[Timer::TimeWait as usize])
            .min(self.at[Timer::Loss as usize]);
        (m != UNARMED).then(|| Instant::from_nanos(m))
    }

    /// Notes a deadline kept outside the table (pacing's send time, `conn/pacing.rs`) that
    /// `poll_timeout` reports: earlier than the heap's, it needs a look as a timer does.
    #[inline]
    pub(crate) fn note_deadline(&mut self, at: Instant) {
        if at.as_nanos() < self.heap_deadline.get() {
            self.armed_early = true;
        }
    }

    /// Whether a timer was armed earlier than the heap's deadline since the last call.
    #[inline]
    pub(crate) fn take_armed_early(&mut self) -> bool {
        std::mem::take(&mut self.armed_early)
    }

    #[inline]
    pub(crate) fn set_heap_deadline(&self, t: Option<Instant>) {
        self.heap_deadline.set(t.map_or(UNARMED, Instant::as_nanos));
    }
}

impl super::Connection {
    /// Whether, since the last call, a timer was armed earlier than the time given to
    /// `set_heap_deadline` (any timer, if none was given): only then must a driver that keeps
    /// deadlines in a heap look at `poll_timeout`.
    #[inline]
    pub fn take_timer_armed(&mut self) -> bool {
        self.timers.take_armed_early()
    }

    /// Tells the connection when its driver's timer heap will next look at it (`None`:
    /// never), so arming a later timer needs no look (`take_timer_armed`).
    #[inline]
    pub fn set_heap_deadline(&self, t: Option<Instant>) {
        self.timers.set_heap_deadline(t);
    }

    /// The earliest armed timer (retransmission, persist, delayed ACK, TIME-WAIT, RACK's, or
    /// the send time of data held by pacing), or `None` when none is. When the time reaches it, call
    /// [`handle_timeout`](Self::handle_timeout). Any call that takes `now` or changes the
    /// connection may move it.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        let t = if self.cfg.ack.delayed_ack_clock {
            self.timers.earliest(Some(self.delack_deadline()))
        } else {
            self.timers.earliest(None)
        };
        if self.pace_held {
            // Data waits for its paced send time (`conn/pacing.rs`).
            return Some(t.map_or(self.pace_at, |t| t.min(self.pace_at)));
        }
        t
    }

    /// Runs the timers due at `now`; the others are left alone, so an early call is
    /// harmless.
    ///
    /// - TIME-WAIT ends: CLOSED.
    /// - Delayed ACK: an ACK is due.
    /// - Retransmission timeout (RFC 6298 §5): the RTO backs off, the congestion controller
    ///   responds, and sending goes back to SND.UNA (go-back-N, as 4.3BSD); after more than
    ///   [`TcpConfig::max_retransmits`] timeouts in a row (or the user timeout) the
    ///   connection gives up with [`ConnectionError::TimedOut`]. In the handshake the SYN (or
    ///   SYN,ACK) is resent, up to [`TcpConfig::max_syn_retransmits`].
    /// - Persist timer: a zero-window probe (RFC 9293 §3.8.6.1, with backoff), or the
    ///   RFC 9293 §3.8.6.2.1 override that sends data sender SWS avoidance held back.
    ///
    /// What the timers queue goes out on the following `poll_transmit` calls.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.timers.take_due(Timer::TimeWait, now) {
            self.enter_closed();
            self.set_state(now, State::Closed);
            return;
        }
        if self.delack_deadline().is_some_and(|t| t <= now) {
            self.timers.cancel(Timer::DelayedAck);
            if self.unacked_segs > 0 || self.unacked_bytes > 0 {
                self.ack_now = true;
                self.stats.delayed_acks_out += 1;
            }
        }
        // The loss timer first: a probe timeout capped at the RTO (RFC 8985 §7.2) expires
        // with it, and the probe, not the timeout, is what §7.2 sends then (the probe
        // re-arms the RTO).
        if self.timers.take_due(Timer::Loss, now) {
            self.on_loss_timer(now);
        }
        if self.pace_held && self.pace_at <= now {
            // The paced send time came: `poll_transmit` sends.
            self.pace_held = false;
        }
        if self.timers.take_due(Timer::Rto, now) {
            self.on_rto(now);
        }
        if self.timers.take_due(Timer::Persist, now) {
            // RFC 1122 4.2.2.17: a peer that answers our probes may keep its window closed
            // for ever; one that answers nothing is gone, and its probes count against the
            // retry limit as retransmissions do (an answer is any segment since the last
            // probe).
            if self.stats.segs_in == self.probe_segs_in_mark && self.stats.window_probes > 0 {
                self.probes_unanswered += 1;
                self.stats.probes_unanswered += 1;
            } else {
                self.probes_unanswered = 0;
            }
            self.probe_segs_in_mark = self.stats.segs_in;
            if self.probes_unanswered > self.cfg.max_retransmits || self.user_timed_out(now) {
                self.give_up(now);
                return;
            }
            // RFC 9293 §3.8.6.1: probe the zero window, backing off.
            self.probe_now = true;
            if self.snd_wnd == 0 {
                self.persist_shift = (self.persist_shift + 1).min(16);
            }
        }
        self.update_timers(now);
        self.refresh_prediction();
    }

    /// RFC 5482: sent data unacknowledged for longer than the user timeout.
    pub(super) fn user_timed_out(&self, now: Instant) -> bool {
        self.cfg.user_timeout.is_some_and(|uto| {
            self.snd_max > self.snd_una && now.saturating_since(self.progress_at) >= uto
        })
    }

    /// RFC 9293 §3.8.3 R2 (and the user timeout): give up; tell the peer if it thinks we
    /// are connected.
    pub(super) fn give_up(&mut self, now: Instant) {
        if self.state.is_synchronized() {
            self.rst_pending = Some(RstRequest {
                seq: self.snd_max,
                ack: self.rcv_nxt,
                with_ack: false,
            });
        }
        self.error = Some(ConnectionError::TimedOut);
        self.enter_closed();
        self.set_state(now, State::Closed);
    }

    pub(super) fn on_rto(&mut self, now: Instant) {
        self.rto_count += 1;
        self.stats.timeouts += 1;
        let limit = match self.state {
            State::SynSent | State::SynReceived => self.cfg.max_syn_retransmits,
            _ => self.cfg.max_retransmits,
        };
        if self.rto_count > limit || self.user_timed_out(now) {
            self.give_up(now);
            return;
        }
        self.rtt.on_timeout();
        // Karn: the timed segment is being resent, so its sample would be ambiguous.
        // (4.3BSD before Karn kept timing it: `karn = false`.)
        if self.rtt.config().karn {
            self.rtt_timed = None;
        }
        match self.state {
            State::SynSent | State::SynReceived => {
                self.syn_pending = true;
            }
            _ => {
                let ev = self.congestion_event(now);
                // One response per congestion event: a timeout during a recovery episode
                // keeps the ssthresh that episode set, rather than halving a FlightSize that
                // grew while SACKs clocked out new data past the lost retransmission (as
                // Linux does; RFC 5681 §3.1 already keeps ssthresh on a repeated timeout).
                let first = self.rto_count == 1 && !self.rec.in_recovery();
                let was_rto_recovery = self.rec.in_rto_recovery(self.snd_una);
                if self.rto_count == 1 {
                    self.undo_begin(true);
                }
                self.cc.on_rto(&ev, first);
                self.rec.on_rto(self.snd_max);
                self.frto_on_rto(self.rto_count == 1, was_rto_recovery);
                self.rack_on_rto();
                // A timeout ends the episode, and PRR's reduction with it.
                self.prr.stop();
                self.prr_cwr = false;
                self.fr_retransmit_ts = None;
                // Go back N: resend from the first unacknowledged byte (4.3BSD, RFC 5681
                // §3.1 "retransmit from snd_una in slow start").
                self.snd_nxt = self.snd_una;
                self.rto_retransmit_ts = Some(self.ts_now(now));
            }
        }
        self.emit(now, TraceKind::Timeout);
        // The timer is re-armed by the retransmission in `poll_transmit`.
    }

    /// Re-arms the RTO and persist timers after input or output changed what is
    /// outstanding.
    #[inline(always)]
    pub(super) fn update_timers(&mut self, now: Instant) {
        self.update_timers_after(now, false);
    }

    /// Re-arms the timers. `quiescent` means the output path just found nothing it may
    /// send, so data still waiting with nothing in flight is held back by the window.
    #[inline(always)]
    pub(super) fn update_timers_after(&mut self, now: Instant, quiescent: bool) {
        if self.state == State::Closed {
            self.timers.cancel_transfer_timers();
            return;
        }
        self.update_timers_open(now, quiescent);
    }

    /// [`update_timers_after`](Self::update_timers_after) in a state other than CLOSED
    /// (header prediction runs in ESTABLISHED only).
    #[inline(always)]
    pub(super) fn update_timers_open(&mut self, now: Instant, quiescent: bool) {
        debug_assert!(self.state != State::Closed);
        let outstanding = self.snd_max > self.snd_una;
        let data_end = self.buf_seq + self.send_buf.len();
        // Both special cases need data waiting to be sent; test that first, since a
        // receiver (the header-prediction data path) usually has none.
        if data_end.since(self.snd_nxt) > 0 {
            if self.snd_wnd == 0 && self.snd_nxt == self.snd_una {
                // Zero window with data waiting: the persist timer replaces the RTO.
                self.timers.cancel(Timer::Rto);
                if !self.timers.is_armed(Timer::Persist) && !self.probe_now {
                    let base = self
                        .rtt
                        .rto()
                        .saturating_mul(1u64 << self.persist_shift.min(16));
                    let t = base.max(self.cfg.persist_min).min(self.cfg.persist_max);
                    self.timers.set(Timer::Persist, now + t);
                }
                return;
            }
            if !outstanding && self.snd_wnd > 0 {
                // Sender SWS avoidance is holding back data and nothing in flight will
                // bring an ACK: RFC 9293 §3.8.6.2.1 (4)'s override timeout (0.1 to 1 s)
                // sends it anyway, as 4.3BSD's persist timer did for a small window.
                if quiescent && !self.timers.is_armed(Timer::Persist) && !self.probe_now {
                    let t = self
                        .rtt
                        .rto()
                        .max(Duration::from_millis(100))
                        .min(Duration::from_secs(1));
                    self.timers.set(Timer::Persist, now + t);
                }
                self.timers.cancel(Timer::Rto);
                return;
            }
        }
        self.timers.cancel(Timer::Persist);
        if !outstanding {
            self.timers.cancel(Timer::Rto);
        } else if !self.timers.is_armed(Timer::Rto) {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_nanos(v * 1_000_000)
    }

    #[test]
    fn the_earliest_armed_timer_is_the_deadline_and_each_fires_once() {
        let mut t = Timers::new();
        assert_eq!(t.earliest(None), None);
        t.set(Timer::Rto, ms(300));
        t.set(Timer::DelayedAck, ms(200));
        t.set(Timer::TimeWait, ms(60_000));
        assert_eq!(t.earliest(None), Some(ms(200)));
        // The fast-timeout clock's tick stands in for the delayed-ACK deadline.
        assert_eq!(t.earliest(Some(Some(ms(250)))), Some(ms(250)));
        assert_eq!(t.earliest(Some(None)), Some(ms(300)));
        assert!(!t.take_due(Timer::DelayedAck, ms(199)));
        assert!(t.take_due(Timer::DelayedAck, ms(200)));
        assert!(!t.take_due(Timer::DelayedAck, ms(200)), "fired twice");
        assert_eq!(t.earliest(None), Some(ms(300)));
        t.cancel_transfer_timers();
        assert_eq!(t.earliest(None), Some(ms(60_000)));
        t.cancel_all();
        assert_eq!(t.earliest(None), None);
        assert!(!t.take_due(Timer::Persist, ms(u64::MAX / 2_000_000)));
    }

    #[test]
    fn arming_earlier_than_the_heap_looks_is_noted_and_later_is_not() {
        let mut t = Timers::new();
        t.set(Timer::Rto, ms(300));
        assert!(
            t.take_armed_early(),
            "no heap entry yet: any timer needs a look"
        );
        assert!(!t.take_armed_early());
        t.set_heap_deadline(Some(ms(300)));
        t.set(Timer::Rto, ms(400)); // Re-armed later on an ACK: the heap finds it at 300.
        assert!(!t.take_armed_early());
        t.set(Timer::DelayedAck, ms(200));
        assert!(t.take_armed_early());
    }
}
