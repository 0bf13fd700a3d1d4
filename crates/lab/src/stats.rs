//! The statistics the experiments share, and what they read of a run the same way (each used
//! to carry its own copy).

/// The summary of the link direction `name` (`"a-b"`) of a run; an error if the run has none.
pub fn link<'a>(
    r: &'a ackclock_sim::RunResult,
    name: &str,
) -> anyhow::Result<&'a ackclock_sim::results::LinkSummary> {
    r.summary
        .links
        .iter()
        .find(|l| l.name == name)
        .ok_or_else(|| anyhow::anyhow!("no link {name}"))
}

/// A simulated time in seconds since the start of the run.
pub fn secs(t: ackclock_wire::Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// Bytes a flow's ACKs acknowledged after `from` s (from the first such ACK to the last),
/// in bits per second over `from` to `end`; 0 without an ACK after `from`.
pub fn goodput_after(tr: &[ackclock_tcp::TraceEvent], from: f64, end: f64) -> f64 {
    let mut first = None;
    let mut last = None;
    for e in tr {
        if let ackclock_tcp::TraceKind::Ack { ack, .. } = e.kind {
            if secs(e.time) >= from {
                first.get_or_insert(ack);
                last = Some(ack);
            }
        }
    }
    match (first, last) {
        (Some(a), Some(b)) => f64::from(b.since(a)) * 8.0 / (end - from),
        _ => 0.0,
    }
}

/// Arithmetic mean; 0 for no values.
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Sample standard deviation (n - 1 in the denominator); 0 for fewer than two values.
pub fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

/// Jain's fairness index (Jain, Chiu and Hawe 1984): (sum x)^2 / (n sum x^2), 1 when all
/// shares are equal, 1/n when one takes everything; 0 when every share is 0.
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 > 0.0 {
        s * s / (x.len() as f64 * s2)
    } else {
        0.0
    }
}

/// A reproducible number in [0, 1) for draw `i` of `seed` (the SplitMix64 finalizer): the
/// experiments' start-time jitter, the same for the same seed whatever else changes.
pub fn uniform(seed: u64, i: u64) -> f64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_mul(0xbf58_476d_1ce4_e5b9))
        .wrapping_add(0x94d0_49bb_1331_11eb);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sd() {
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), 3.0);
        assert_eq!(sd(&[5.0]), 0.0);
        assert!((sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) - 2.138_089_935).abs() < 1e-9);
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain(&[3.0, 3.0, 3.0]), 1.0);
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), 0.25);
        assert_eq!(jain(&[0.0, 0.0]), 0.0);
    }

    #[test]
    fn uniform_is_reproducible_and_in_range() {
        assert_eq!(uniform(7, 3), uniform(7, 3));
        assert_ne!(uniform(7, 3), uniform(7, 4));
        let v: Vec<f64> = (0..10_000).map(|i| uniform(1, i)).collect();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
        assert!((mean(&v) - 0.5).abs() < 0.01);
    }
}
