//! A latency histogram of fixed size: log-linear buckets (32 per power of two), so a
//! client's memory does not grow with the requests it completes and a quantile is within
//! 1/32 (3%) of the true value.

/// Sub-buckets per power of two.
const SUB: u64 = 32;
const SUB_BITS: u32 = 5;
/// Values below `SUB` have a bucket each; above, 64 - 5 powers of two of 32 buckets.
const BUCKETS: usize = (SUB as usize) * (64 - SUB_BITS as usize + 1);

/// Counts of `u64` values (the RPC client records latencies in nanoseconds) in 1,920
/// log-linear buckets: one per value below 32, then 32 per power of two, so it covers the
/// whole `u64` range in 15 KiB allocated once. The count, mean and maximum are exact; a
/// quantile is the middle of its bucket.
#[derive(Clone, PartialEq)]
pub struct Histogram {
    counts: Box<[u64]>,
    n: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            n: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl core::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Histogram")
            .field("n", &self.n)
            .field("mean", &self.mean())
            .field("p50", &self.quantile(0.5))
            .field("max", &self.max())
            .finish()
    }
}

fn bucket(v: u64) -> usize {
    if v < SUB {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let sub = (v >> shift) & (SUB - 1);
    ((shift as u64 + 1) * SUB + sub) as usize
}

/// The smallest value of a bucket.
fn low(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let shift = b / SUB - 1;
    let sub = b % SUB;
    (SUB + sub) << shift
}

impl Histogram {
    /// Counts the value `v`.
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
    }
    /// How many values were recorded.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// The mean of the values recorded (from their exact sum, not the buckets); `None`
    /// when there are none.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }
    /// The largest value recorded; `None` when there are none.
    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }
    /// The value at quantile `q` (0..=1, clamped): the middle of the bucket holding the
    /// `ceil(q n)`th smallest value (the smallest for `q` = 0), at most the maximum;
    /// `None` when nothing was recorded.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let lo = low(b) as f64;
                let hi = if b + 1 < BUCKETS {
                    low(b + 1) as f64
                } else {
                    lo
                };
                return Some(((lo + hi) / 2.0).min(self.max as f64));
            }
        }
        Some(self.max as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut last = 0;
        for v in (0..10_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket(v);
            assert!(b < BUCKETS);
            assert!(b >= last);
            assert!(low(b) <= v);
            last = b;
        }
    }

    #[test]
    fn quantiles_are_within_three_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for q in [0.5, 0.9, 0.99] {
            let want = q * 100_000.0 * 1000.0;
            let got = h.quantile(q).unwrap();
            assert!((got - want).abs() / want < 0.035, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.mean(), Some(50_000.5 * 1000.0));
        assert_eq!(h.count(), 100_000);
        assert_eq!(Histogram::default().quantile(0.5), None);
    }
}
