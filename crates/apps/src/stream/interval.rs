//! Interval reports of a bulk test, as iperf3's `-i` prints them: every interval, what
//! each stream delivered and retransmitted in it, and its congestion window and smoothed
//! RTT at its end.
//!
//! [`IntervalMeter`] only does the accounting, from the cumulative counts it is given, so
//! it is tested without a device. The boundaries fall at `start + k * every`; an interval
//! ends at the first look at or after its boundary (the loop wakes there by its timer),
//! and its times are the real ones of those looks, so a late look makes a longer interval,
//! never a lost one. The last interval ends when the data does, however short it is: the
//! bytes of all intervals of a stream always add up to the stream's total.

use ackclock_wire::{Duration, Instant};

/// A stream's counts since the test started, at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cumulative {
    /// Payload bytes delivered (acknowledged by the peer when sending, read when
    /// receiving).
    pub bytes: u64,
    /// Segments with data sent again.
    pub retransmits: u64,
    /// Congestion window now, in bytes.
    pub cwnd_bytes: u32,
    /// Smoothed RTT now (zero before the first sample).
    pub srtt: Duration,
    /// The pacing rate now, bits per second (0: not paced).
    pub pacing_rate_bps: u64,
}

/// One stream's part of an interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntervalStream {
    /// Payload bytes delivered in the interval.
    pub bytes: u64,
    /// Segments retransmitted in the interval.
    pub retransmits: u64,
    /// The congestion window at the interval's end.
    pub cwnd_bytes: u32,
    /// The smoothed RTT at the interval's end.
    pub srtt: Duration,
    /// The pacing rate at the interval's end, bits per second (0: not paced).
    pub pacing_rate_bps: u64,
}

/// One interval report. Times are since the test started (the first connection
/// established).
#[derive(Clone, Copy, Debug)]
pub struct Interval<'a> {
    /// 0 for the first interval.
    pub index: usize,
    /// Since the test started (the first connection established).
    pub start: Duration,
    /// Since the test started.
    pub end: Duration,
    /// Stream `k` (numbered `k + 1` in reports) at index `k`.
    pub streams: &'a [IntervalStream],
    /// The test's last interval (it ends with the data, so may be short).
    pub last: bool,
}

impl Interval<'_> {
    /// Its length, seconds.
    pub fn seconds(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
    /// All streams' bytes.
    pub fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.bytes).sum()
    }
    /// All streams' retransmitted segments.
    pub fn retransmits(&self) -> u64 {
        self.streams.iter().map(|s| s.retransmits).sum()
    }
    /// Bits per second of `bytes` over this interval (0 for an empty one).
    pub fn rate_bps(&self, bytes: u64) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
    /// An owned copy (to keep for a JSON document).
    pub fn to_record(&self) -> IntervalRecord {
        IntervalRecord {
            index: self.index,
            start: self.start,
            end: self.end,
            streams: self.streams.to_vec(),
            last: self.last,
        }
    }
}

/// An [`Interval`] that owns its streams.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntervalRecord {
    /// Its place among the reports, from 0.
    pub index: usize,
    /// Since the test started.
    pub start: Duration,
    /// Since the test started.
    pub end: Duration,
    /// Each stream's part, stream 1 first.
    pub streams: Vec<IntervalStream>,
    /// The last interval (it ends with the data).
    pub last: bool,
}

impl IntervalRecord {
    /// The report as an [`Interval`] borrowing its streams.
    pub fn as_interval(&self) -> Interval<'_> {
        Interval {
            index: self.index,
            start: self.start,
            end: self.end,
            streams: &self.streams,
            last: self.last,
        }
    }
}

/// The accounting of interval reports over a fixed set of streams.
#[derive(Clone, Debug)]
pub struct IntervalMeter {
    every: Duration,
    start: Instant,
    prev_end: Instant,
    next: Instant,
    index: usize,
    prev: Vec<Cumulative>,
    /// The report being handed out: allocated once, reused every interval.
    cur: Vec<IntervalStream>,
    closed: bool,
}

impl IntervalMeter {
    /// A meter for `streams` streams whose test started at `start`, reporting `every`
    /// (more than zero) from then.
    pub fn new(start: Instant, every: Duration, streams: usize) -> IntervalMeter {
        assert!(
            every > Duration::ZERO,
            "an interval must be longer than zero"
        );
        IntervalMeter {
            every,
            start,
            prev_end: start,
            next: start + every,
            index: 0,
            prev: vec![Cumulative::default(); streams],
            cur: vec![IntervalStream::default(); streams],
            closed: false,
        }
    }

    /// The time the current interval ends (for the loop's timer); `None` once the last
    /// interval was taken.
    pub fn next_boundary(&self) -> Option<Instant> {
        (!self.closed).then_some(self.next)
    }

    /// Whether the current interval's end has come.
    pub fn due(&self, now: Instant) -> bool {
        !self.closed && now >= self.next
    }

    /// Whether the last interval has been taken.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Ends the current interval at `now`, given each stream's counts since the test
    /// started (`totals[k]` for stream `k`). `last` ends the test's last interval; no
    /// further ones are taken. Returns `None` for a last interval that is empty (no time,
    /// no bytes, no retransmissions: the data ended exactly at the previous boundary), and
    /// always once closed.
    pub fn take(
        &mut self,
        now: Instant,
        totals: &[Cumulative],
        last: bool,
    ) -> Option<Interval<'_>> {
        assert_eq!(totals.len(), self.prev.len(), "one count per stream");
        if self.closed {
            return None;
        }
        let now = now.max(self.prev_end);
        let mut empty = now == self.prev_end;
        for ((cur, prev), t) in self.cur.iter_mut().zip(&self.prev).zip(totals) {
            *cur = IntervalStream {
                bytes: t.bytes.saturating_sub(prev.bytes),
                retransmits: t.retransmits.saturating_sub(prev.retransmits),
                cwnd_bytes: t.cwnd_bytes,
                srtt: t.srtt,
                pacing_rate_bps: t.pacing_rate_bps,
            };
            empty &= cur.bytes == 0 && cur.retransmits == 0;
        }
        self.prev.copy_from_slice(totals);
        let start = self.prev_end - self.start;
        self.prev_end = now;
        // The next boundary after `now` on the grid start + k * every: a look that came
        // late (past several boundaries) makes one long interval, and the grid stays.
        let k = (now - self.start).as_nanos() / self.every.as_nanos() + 1;
        self.next = self.start + Duration::from_nanos(k.saturating_mul(self.every.as_nanos()));
        self.closed = last;
        if last && empty {
            return None;
        }
        let index = self.index;
        self.index += 1;
        Some(Interval {
            index,
            start,
            end: now - self.start,
            streams: &self.cur,
            last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }
    fn at(v: u64) -> Instant {
        Instant::ZERO + ms(v)
    }
    fn cum(bytes: u64, retransmits: u64) -> Cumulative {
        Cumulative {
            bytes,
            retransmits,
            cwnd_bytes: 14_480,
            srtt: ms(2),
            pacing_rate_bps: 0,
        }
    }

    #[test]
    fn intervals_end_at_the_first_look_past_each_boundary() {
        // Test started at 500 ms; 1 s intervals; the loop looks at irregular times.
        let mut m = IntervalMeter::new(at(500), Duration::from_secs(1), 1);
        assert_eq!(m.next_boundary(), Some(at(1500)));
        assert!(!m.due(at(1499)));
        assert!(m.due(at(1500)));
        let i = m.take(at(1503), &[cum(1000, 1)], false).unwrap();
        assert_eq!((i.index, i.start, i.end), (0, ms(0), ms(1003)));
        assert_eq!(i.streams[0].bytes, 1000);
        assert_eq!(m.next_boundary(), Some(at(2500)), "the grid does not drift");
        // A look 2.2 s late: one long interval, and the next boundary is back on the grid.
        assert!(m.due(at(4700)));
        let i = m.take(at(4700), &[cum(5000, 1)], false).unwrap();
        assert_eq!((i.index, i.start, i.end), (1, ms(1003), ms(4200)));
        assert_eq!((i.streams[0].bytes, i.streams[0].retransmits), (4000, 0));
        assert_eq!(m.next_boundary(), Some(at(5500)));
        // The data ends 300 ms into the next interval: a short last one.
        let i = m.take(at(5000), &[cum(5300, 3)], true).unwrap();
        assert_eq!(
            (i.index, i.start, i.end, i.last),
            (2, ms(4200), ms(4500), true)
        );
        assert_eq!((i.streams[0].bytes, i.streams[0].retransmits), (300, 2));
        assert!((i.rate_bps(300) - 300.0 * 8.0 / 0.3).abs() < 1e-6);
        assert!(m.is_closed());
        assert_eq!(m.next_boundary(), None);
        assert!(!m.due(at(9000)));
        assert!(m.take(at(9000), &[cum(9999, 9)], true).is_none());
    }

    #[test]
    fn a_last_interval_with_nothing_in_it_is_not_reported() {
        let mut m = IntervalMeter::new(at(0), ms(100), 2);
        let i = m.take(at(100), &[cum(10, 0), cum(20, 0)], false).unwrap();
        assert_eq!(i.bytes(), 30);
        assert!(m.take(at(100), &[cum(10, 0), cum(20, 0)], true).is_none());
        assert!(m.is_closed());
        // The same moment with bytes still counted is reported (zero seconds, so rate 0).
        let mut m = IntervalMeter::new(at(0), ms(100), 1);
        m.take(at(100), &[cum(10, 0)], false).unwrap();
        let i = m.take(at(100), &[cum(12, 0)], true).unwrap();
        assert_eq!((i.bytes(), i.seconds(), i.rate_bps(2)), (2, 0.0, 0.0));
    }

    /// Pseudo-random streams and looks: every stream's interval bytes and retransmissions
    /// add up to its final counts, each interval's sum is the sum of its streams, the
    /// intervals tile the test without gaps, and each interval but the last ends at or
    /// after its boundary and before the next.
    #[test]
    fn interval_bytes_add_up_to_the_totals() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for case in 0..200 {
            let streams = 1 + rnd(8) as usize;
            let every = ms(1 + rnd(1000));
            let start = at(rnd(10_000));
            let mut m = IntervalMeter::new(start, every, streams);
            let mut totals = vec![Cumulative::default(); streams];
            let mut sums = vec![(0u64, 0u64); streams];
            let mut now = start;
            let mut prev_end = Duration::ZERO;
            let mut taken = 0;
            let looks = 1 + rnd(300);
            for look in 0..looks {
                now += Duration::from_micros(rnd(3 * every.as_nanos() / 1000 + 1));
                for t in totals.iter_mut() {
                    t.bytes += rnd(100_000);
                    t.retransmits += rnd(3);
                }
                let last = look + 1 == looks;
                if !(m.due(now) || last) {
                    continue;
                }
                let boundary = m.next_boundary().unwrap();
                let Some(i) = m.take(now, &totals, last) else {
                    assert!(last, "case {case}");
                    continue;
                };
                assert_eq!(i.index, taken, "case {case}");
                taken += 1;
                assert_eq!(i.start, prev_end, "case {case}: intervals tile the test");
                assert_eq!(i.end, now - start, "case {case}");
                prev_end = i.end;
                let mut b = 0;
                for (k, s) in i.streams.iter().enumerate() {
                    sums[k].0 += s.bytes;
                    sums[k].1 += s.retransmits;
                    b += s.bytes;
                }
                assert_eq!(i.bytes(), b, "case {case}");
                if !last {
                    assert!(now >= boundary, "case {case}");
                    assert!(m.next_boundary().unwrap() > now, "case {case}");
                }
            }
            assert!(m.is_closed());
            for (k, t) in totals.iter().enumerate() {
                assert_eq!(sums[k], (t.bytes, t.retransmits), "case {case} stream {k}");
            }
        }
    }
}
