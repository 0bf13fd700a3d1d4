//! A trace-driven link with Mahimahi's semantics (Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015; the cellular traces of Winstein et al.,
//! "Stochastic Forecasts Achieve High Throughput and Low Delay over Cellular Networks",
//! NSDI 2013), written from the format's description, not from Mahimahi's code (GPL-3.0).
//!
//! - A trace is a text file with one non-negative integer per line: a time in milliseconds
//!   at which the link may deliver [`OPPORTUNITY_BYTES`] (1504) bytes. Lines are in
//!   non-decreasing order; a time repeated k times is k opportunities in that millisecond.
//! - A packet is delivered at the opportunity that carries its last byte. A packet larger
//!   than what is left of an opportunity uses the rest of it and carries its remaining
//!   bytes to the next ones; what a packet does not use of an opportunity serves the next
//!   packet if that one is already waiting, and is lost otherwise (an opportunity no packet
//!   is waiting for is lost whole: the link does not save capacity).
//! - A packet waiting at an opportunity's millisecond may use it: readiness at time t makes
//!   every opportunity at t or later usable.
//! - The trace repeats with a period of its last time (Mahimahi's rule: a trace whose last
//!   line is 1000 repeats every second), unless it is told to run once; after the end of a
//!   trace that runs once nothing more is delivered.
//!
//! Time zero of the trace is time zero of the run ([`Instant::ZERO`]).

use ackclock_wire::{Duration, Instant};

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`: an MTU of 1500 plus
/// 4 bytes of framing).
pub const OPPORTUNITY_BYTES: usize = 1504;

/// The most lines a trace may have: 10^8 (800 MB of opportunities in memory; Mahimahi's
/// longest shipped traces have a few million). A longer file is refused before it is read
/// whole into memory.
pub const MAX_TRACE_LINES: usize = 100_000_000;

/// The latest opportunity time a trace may give: 10^9 ms (about 11.6 days; Mahimahi's
/// traces span minutes). Later times are refused, so that no delivery time nears the end of
/// the clock.
pub const MAX_TRACE_MS: u64 = 1_000_000_000;

/// Why a trace cannot be read: the 1-based line and what is wrong with it (line 0: the
/// file as a whole).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {problem}")]
pub struct TraceError {
    /// The line, counted from 1; 0 when the problem is the whole file.
    pub line: usize,
    /// What is wrong and what is accepted.
    pub problem: String,
}

/// The delivery opportunities of a trace, in milliseconds from the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    ms: Vec<u64>,
    repeat: bool,
}

impl DeliveryTrace {
    /// Reads Mahimahi's format (see the module). Blank lines and lines starting with `#`
    /// are skipped; anything else that is not a non-negative integer, a time before the
    /// line above it, an empty trace, or a last time of 0 (a trace that repeats with a
    /// period of zero) is refused with its line.
    pub fn parse(text: &str, repeat: bool) -> Result<Self, TraceError> {
        let mut ms: Vec<u64> = Vec::new();
        for (k, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if ms.len() == MAX_TRACE_LINES {
                return Err(TraceError {
                    line: k + 1,
                    problem: format!("more than {MAX_TRACE_LINES} opportunities"),
                });
            }
            let t: u64 = line.parse().map_err(|_| TraceError {
                line: k + 1,
                problem: format!("`{line}` is not a time in whole milliseconds (an integer >= 0)"),
            })?;
            if t > MAX_TRACE_MS {
                return Err(TraceError {
                    line: k + 1,
                    problem: format!(
                        "{t} ms is past the latest time a trace may give ({MAX_TRACE_MS} ms)"
                    ),
                });
            }
            if let Some(&prev) = ms.last() {
                if t < prev {
                    return Err(TraceError {
                        line: k + 1,
                        problem: format!("{t} ms comes before the line above ({prev} ms)"),
                    });
                }
            }
            ms.push(t);
        }
        Self::from_ms(ms, repeat)
    }

    /// A trace from its opportunity times (milliseconds, non-decreasing).
    pub fn from_ms(ms: Vec<u64>, repeat: bool) -> Result<Self, TraceError> {
        let Some(&last) = ms.last() else {
            return Err(TraceError {
                line: 0,
                problem: "the trace has no delivery opportunity".into(),
            });
        };
        if last > MAX_TRACE_MS {
            return Err(TraceError {
                line: 0,
                problem: format!(
                    "{last} ms is past the latest time a trace may give ({MAX_TRACE_MS} ms)"
                ),
            });
        }
        if ms.windows(2).any(|w| w[1] < w[0]) {
            return Err(TraceError {
                line: 0,
                problem: "opportunity times must not decrease".into(),
            });
        }
        if repeat && last == 0 {
            return Err(TraceError {
                line: ms.len(),
                problem: "the last time is 0 ms: a repeating trace needs a period above 0".into(),
            });
        }
        Ok(DeliveryTrace { ms, repeat })
    }

    /// Opportunities per period.
    pub fn len(&self) -> usize {
        self.ms.len()
    }

    /// Always false: a trace has at least one opportunity.
    pub fn is_empty(&self) -> bool {
        self.ms.is_empty()
    }

    /// The period after which it repeats (its last time), or `None` if it runs once.
    pub fn period(&self) -> Option<Duration> {
        self.repeat
            .then(|| Duration::from_millis(*self.ms.last().unwrap_or(&0)))
    }

    /// The mean capacity over one period, in bits per second (the opportunities' bytes over
    /// the last time; `None` for a last time of 0).
    pub fn mean_rate_bps(&self) -> Option<f64> {
        let last = *self.ms.last()?;
        (last > 0).then(|| (self.ms.len() * OPPORTUNITY_BYTES * 8) as f64 / (last as f64 / 1e3))
    }

    /// The time of opportunity `n` counted over the repeats, or `None` past the end of a
    /// trace that runs once.
    fn time_of(&self, n: u64) -> Option<Instant> {
        let len = self.ms.len() as u64;
        let (lap, i) = (n / len, (n % len) as usize);
        if lap > 0 && !self.repeat {
            return None;
        }
        let period = *self.ms.last().unwrap_or(&0);
        let ms = lap.checked_mul(period)?.checked_add(self.ms[i])?;
        Some(Instant::ZERO + Duration::from_millis(ms.min(u64::MAX / 1_000_000)))
    }

    /// The first opportunity at or after `t`, as a count over the repeats.
    fn first_at_or_after(&self, t: Instant) -> u64 {
        let ms_ceil = t.as_nanos().div_ceil(1_000_000);
        let len = self.ms.len() as u64;
        let period = *self.ms.last().unwrap_or(&0);
        let (lap, into) = if self.repeat && period > 0 {
            (ms_ceil / period, ms_ceil % period)
        } else {
            (0, ms_ceil)
        };
        let i = self.ms.partition_point(|&m| m < into) as u64;
        if self.repeat && period > 0 && into == 0 && lap > 0 {
            // The last time of one lap and time 0 of the next are the same instant: the
            // previous lap's opportunities at its last time come first.
            let at_end = self.ms.partition_point(|&m| m < period) as u64;
            return (lap - 1) * len + at_end;
        }
        lap * len + i
    }
}

/// A link whose capacity a [`DeliveryTrace`] gives: one packet in service at a time, as the
/// constant-rate [`Link`](crate::Link)'s serializer, FIFO behind whatever queue discipline
/// is in front of it.
#[derive(Clone, Debug)]
pub struct TraceLink {
    trace: DeliveryTrace,
    /// An opportunity has been used; `cursor` is the last one (a count over the repeats),
    /// `cursor_at` its time and `left` the bytes left in it.
    used: bool,
    cursor: u64,
    cursor_at: Instant,
    left: usize,
}

impl TraceLink {
    /// The link at time zero, no opportunity used.
    pub fn new(trace: DeliveryTrace) -> Self {
        TraceLink {
            trace,
            used: false,
            cursor: 0,
            cursor_at: Instant::ZERO,
            left: 0,
        }
    }

    /// The trace it follows.
    pub fn trace(&self) -> &DeliveryTrace {
        &self.trace
    }

    /// A packet of `bytes` is ready for the link at `ready` (it arrived, or the packet
    /// before it was delivered, whichever is later): returns when its last byte is
    /// delivered, or `None` if a trace that runs once ends first (the packet is never
    /// delivered; the link then delivers nothing more).
    ///
    /// Calls must come in the order the packets are served, with `ready` not before the
    /// previous packet's delivery.
    pub fn transmit(&mut self, ready: Instant, bytes: usize) -> Option<Instant> {
        let mut need = bytes.max(1);
        // What is left of the opportunity last used serves a packet already waiting at its
        // time; otherwise it is lost.
        if self.used && self.left > 0 && self.cursor_at >= ready {
            let take = need.min(self.left);
            need -= take;
            self.left -= take;
            if need == 0 {
                return Some(self.cursor_at);
            }
        }
        let mut n = self.trace.first_at_or_after(ready);
        if self.used {
            n = n.max(self.cursor + 1);
        }
        loop {
            let at = self.trace.time_of(n)?;
            let take = need.min(OPPORTUNITY_BYTES);
            need -= take;
            if need == 0 {
                (self.used, self.cursor, self.cursor_at) = (true, n, at);
                self.left = OPPORTUNITY_BYTES - take;
                return Some(at);
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(t)
    }

    fn at_us(t: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(t)
    }

    /// The semantics worked out by hand for a hand-made trace and arrival sequence.
    ///
    /// Trace (repeating, period 10 ms): opportunities at 2, 2, 5, 9 and 10 ms.
    ///
    /// | packet | ready | bytes | served by | delivered |
    /// |---|---|---|---|---|
    /// | a | 0 | 1000 | 2 ms #1 (504 left) | 2 ms |
    /// | b | 0.5 ms | 1000 | 504 of 2 ms #1, 496 of 2 ms #2 (1008 left) | 2 ms |
    /// | c | 3 ms | 3000 | 1504 at 5, 1496 at 9 (8 left, lost: d is not waiting) | 9 ms |
    /// | d | 9.5 ms | 100 | 10 ms (1404 left) | 10 ms |
    /// | e | 10 ms | 1500 | 1404 of 10 ms, 96 at 12 (the next lap's first) | 12 ms |
    /// | f | 30 ms | 1504 | the third lap's last, at 2 x 10 + 10 = 30 ms | 30 ms |
    ///
    /// b waits behind a from 0.5 ms, so it is ready when a is delivered, at 2 ms. At 30 ms
    /// the third lap ends and the fourth begins: the end's opportunity comes first.
    #[test]
    fn mahimahi_semantics_by_hand() {
        let t = DeliveryTrace::parse("2\n2\n5\n9\n10\n", true).unwrap();
        let mut l = TraceLink::new(t);
        assert_eq!(l.transmit(ms(0), 1000), Some(ms(2)), "a");
        assert_eq!(l.transmit(at_us(500).max(ms(2)), 1000), Some(ms(2)), "b");
        assert_eq!(l.transmit(ms(3), 3000), Some(ms(9)), "c");
        assert_eq!(l.transmit(at_us(9500), 100), Some(ms(10)), "d");
        assert_eq!(l.transmit(ms(10), 1500), Some(ms(12)), "e");
        assert_eq!(l.transmit(ms(30), 1504), Some(ms(30)), "f");
    }

    /// Delivered bytes per millisecond with a queue that is never empty: exactly the
    /// trace's opportunities, 1504 bytes each, whatever the packet sizes.
    #[test]
    fn mahimahi_a_full_queue_gets_every_opportunity() {
        let t = DeliveryTrace::parse("1\n1\n1\n3\n4\n", true).unwrap();
        let mut l = TraceLink::new(t);
        let mut ready = Instant::ZERO;
        let mut delivered = Vec::new();
        for _ in 0..20 {
            let at = l.transmit(ready, 752).unwrap();
            delivered.push(at.as_nanos() / 1_000_000);
            ready = at;
        }
        // Two 752-byte packets per opportunity: 6 at 1 ms, 2 at 3, 2 at 4, then the lap
        // repeats at 4 + 1 = 5 ms (6), 7 (2), 8 (2).
        assert_eq!(
            delivered,
            [1, 1, 1, 1, 1, 1, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5, 7, 7, 8, 8]
        );
    }

    /// A trace told to run once delivers nothing after its last opportunity.
    #[test]
    fn mahimahi_a_trace_run_once_ends() {
        let t = DeliveryTrace::parse("1\n2\n", false).unwrap();
        let mut l = TraceLink::new(t);
        assert_eq!(l.transmit(ms(0), 1504), Some(ms(1)));
        assert_eq!(l.transmit(ms(1), 1504), Some(ms(2)));
        assert_eq!(l.transmit(ms(2), 1), None);
    }

    /// Bad traces are refused with their line.
    #[test]
    fn bad_traces_name_the_line() {
        let e = DeliveryTrace::parse("1\n# c\n\nx\n", true).unwrap_err();
        assert_eq!(e.line, 4);
        assert_eq!(DeliveryTrace::parse("5\n3\n", true).unwrap_err().line, 2);
        assert_eq!(
            DeliveryTrace::parse("\n# only\n", true).unwrap_err().line,
            0
        );
        assert_eq!(DeliveryTrace::parse("0\n0\n", true).unwrap_err().line, 2);
        assert!(DeliveryTrace::parse("0\n0\n", false).is_ok());
        assert!(DeliveryTrace::parse("-1\n", true).is_err());
        // Found by the fuzz target: a time of 2.2 x 10^13 ms put delivery times at the end
        // of the clock, and the next packet's readiness overflowed it.
        assert_eq!(
            DeliveryTrace::parse("1\n22222222222222\n", true)
                .unwrap_err()
                .line,
            2
        );
        crate::fuzzing::trace(b"22222222222222\n");
    }

    /// The mean rate of one period: 1000 opportunities a second is 12.032 Mbit/s.
    #[test]
    fn mean_rate_of_a_constant_trace() {
        let t = DeliveryTrace::from_ms((1..=1000).collect(), true).unwrap();
        assert_eq!(t.mean_rate_bps(), Some(12_032_000.0));
        assert_eq!(t.period(), Some(Duration::from_millis(1000)));
    }
}
