//! The wall clock enters live mode here and nowhere else: the engine and the gateway models
//! see only the [`Instant`]s this clock hands out (nanoseconds since the process started
//! its loop, on `CLOCK_MONOTONIC`).

use crate::sys;
use ackclock_wire::{Duration, Instant};

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

/// Sleeps of [`PACING_BURST_PROBE`] each that [`live_pacing_burst`] times.
const PACING_BURST_SAMPLES: usize = 32;
/// How long each of those sleeps asks for: about a paced segment's gap at 50 to 100 Mbit/s.
const PACING_BURST_PROBE: std::time::Duration = std::time::Duration::from_micros(200);
/// The least allowance: below it a paced sender on any host loses rate to its wake-ups.
const PACING_BURST_MIN: Duration = Duration::from_micros(250);
/// The most: more is a burst the path's queue sees, not pacing.
const PACING_BURST_MAX: Duration = Duration::from_millis(2);

/// The burst allowance a paced sender gets in live mode when `--pacing-burst-ms` is not
/// given ([`TcpConfig::pacing_burst`](ackclock_tcp::TcpConfig::pacing_burst)): twice the
/// 90th percentile of how late this host wakes from a short sleep (measured once per
/// process, 32 sleeps of 200 us, about 8 ms), within 0.25 to 2 ms. The loop sleeps until a
/// paced segment's send time on a timerfd, and wakes late by the kernel's timer slack
/// (50 us by default) plus scheduling; the allowance lets the segments whose time passed
/// meanwhile go at once, so the lateness costs no rate. The loop's own wake-ups are
/// counted in `DeviceCounters::timer_late_us_log2` and printed after a run.
pub fn live_pacing_burst() -> Duration {
    static BURST: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *BURST.get_or_init(|| {
        let mut late: Vec<u64> = (0..PACING_BURST_SAMPLES)
            .map(|_| {
                let t0 = std::time::Instant::now();
                std::thread::sleep(PACING_BURST_PROBE);
                let over = t0.elapsed().saturating_sub(PACING_BURST_PROBE);
                u64::try_from(over.as_nanos()).unwrap_or(u64::MAX)
            })
            .collect();
        late.sort_unstable();
        let p90 = late[late.len() * 9 / 10];
        Duration::from_nanos(p90.saturating_mul(2)).clamp(PACING_BURST_MIN, PACING_BURST_MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_live_pacing_burst_stays_within_its_bounds() {
        let b = live_pacing_burst();
        assert!((PACING_BURST_MIN..=PACING_BURST_MAX).contains(&b), "{b:?}");
        assert_eq!(live_pacing_burst(), b, "measured once per process");
    }
}
