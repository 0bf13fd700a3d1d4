//! A connection's timers in one table, as 4.3BSD keeps them in `t_timer[TCPT_NTIMERS]`:
//! retransmission (RFC 6298), persist (RFC 9293 §3.8.6.1), delayed ACK (RFC 9293
//! §3.8.6.3) and TIME-WAIT (RFC 9293 §3.10.7.4, 2 MSL). Each is a deadline or unarmed;
//! the connection's next deadline is the least of them.
//!
//! The table also remembers whether a timer was armed earlier than the time the
//! endpoint's timer heap will next look at this connection (`heap_deadline`): only then
//! does the heap need a new entry, so re-arming the retransmission timer on every ACK costs
//! a compare, not a heap push.

use ackclock_wire::Instant;
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
}

/// An unarmed slot: later than every deadline, so the earliest is a plain minimum.
const UNARMED: u64 = u64::MAX;

/// The four deadlines, in nanoseconds of [`Instant`] (`UNARMED` when off).
#[derive(Debug)]
pub(crate) struct Timers {
    at: [u64; 4],
    /// A timer was armed earlier than `heap_deadline` since the last `take_armed_early`.
    armed_early: bool,
    /// When the endpoint's timer heap will next look at this connection (`None`: never).
    heap_deadline: Cell<Option<Instant>>,
}

impl Timers {
    pub(crate) fn new() -> Self {
        Timers {
            at: [UNARMED; 4],
            armed_early: false,
            heap_deadline: Cell::new(None),
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
        if self.heap_deadline.get().is_none_or(|k| at < k) {
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
        self.cancel(Timer::Persist);
        self.cancel(Timer::DelayedAck);
    }

    pub(crate) fn cancel_all(&mut self) {
        self.at = [UNARMED; 4];
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
            .min(self.at[Timer::TimeWait as usize]);
        (m != UNARMED).then(|| Instant::from_nanos(m))
    }

    /// Whether a timer was armed earlier than the heap's deadline since the last call.
    #[inline]
    pub(crate) fn take_armed_early(&mut self) -> bool {
        std::mem::take(&mut self.armed_early)
    }

    #[inline]
    pub(crate) fn set_heap_deadline(&self, t: Option<Instant>) {
        self.heap_deadline.set(t);
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
