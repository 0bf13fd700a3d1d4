//! Summaries of samples: exact percentiles from the sorted samples.

use serde::Serialize;

/// The distribution of a set of samples (RTTs, in milliseconds). Percentiles are exact,
/// by the nearest-rank method: the p-th percentile of n sorted samples is the
/// ceil(p/100 * n)-th smallest (so p50 of 4 samples is the 2nd, a sample that occurred).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample.
    pub min: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest sample.
    pub max: f64,
    /// Population standard deviation (divided by n, as tcptrace's "RTT stdev").
    pub sd: f64,
    /// 50th percentile (median).
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// The nearest-rank `p`-th percentile of `sorted` (ascending, not empty).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

impl Summary {
    /// The summary of `samples`, `None` when there are none. Sorts a copy.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        Some(Summary {
            count: v.len() as u64,
            min: v[0],
            mean,
            max: v[v.len() - 1],
            sd: var.sqrt(),
            p50: percentile(&v, 50.0),
            p90: percentile(&v, 90.0),
            p99: percentile(&v, 99.0),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_are_samples() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max),
            (1.0, 2.0, 4.0, 4.0, 4.0)
        );
        assert_eq!(s.mean, 2.5);
        assert!((s.sd - 1.25f64.sqrt()).abs() < 1e-12);
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::of(&v).unwrap();
        assert_eq!((s.p50, s.p90, s.p99), (50.0, 90.0, 99.0));
        assert!(Summary::of(&[]).is_none());
    }
}
