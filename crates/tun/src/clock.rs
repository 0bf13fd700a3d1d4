//! The wall clock enters live mode here and nowhere else: the engine and the gateway models
//! see only the [`Instant`]s this clock hands out (nanoseconds since the process started
//! its loop, on `CLOCK_MONOTONIC`).

use crate::sys;
use ackclock_wire::Instant;

/// A monotonic clock whose zero is the moment it was created.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    epoch_mono_ns: u64,
    epoch_real_ns: u64,
}

impl Clock {
    /// A clock whose zero is now: reads `CLOCK_MONOTONIC` (its epoch) and
    /// `CLOCK_REALTIME` (the Unix time of that zero, for pcap files) with
    /// `clock_gettime`.
    pub fn new() -> Clock {
        Clock {
            epoch_mono_ns: sys::monotonic_ns(),
            epoch_real_ns: sys::realtime_ns(),
        }
    }

    /// Now, as the engine sees it: `CLOCK_MONOTONIC` less the epoch, in ns (one
    /// `clock_gettime`, a vDSO call).
    #[inline]
    pub fn now(&self) -> Instant {
        Instant::from_nanos(sys::monotonic_ns().saturating_sub(self.epoch_mono_ns))
    }

    /// The `CLOCK_MONOTONIC` reading of `t` (for timerfd deadlines).
    pub fn to_monotonic_ns(&self, t: Instant) -> u64 {
        self.epoch_mono_ns.saturating_add(t.as_nanos())
    }

    /// Unix time of our zero in nanoseconds (pcap files carry real dates).
    pub fn epoch_unix_ns(&self) -> u64 {
        self.epoch_real_ns
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}
