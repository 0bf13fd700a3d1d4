//! Sequence-space bookkeeping: 32-bit sequence numbers unwrapped to a 64-bit line, and a
//! bounded set of byte ranges on it.

use std::collections::BTreeMap;

/// Most ranges a [`RangeSet`] holds. A sender's capture has one range (it sends in order);
/// a receiver's has one per hole in flight. Beyond this many, the two lowest ranges are
/// joined (the bytes between them counted as present), so that absurd input (a million
/// one-byte segments with gaps) costs bounded memory; the counts of such input are then
/// approximate, which [`RangeSet::merged_gaps`] records.
pub(crate) const MAX_RANGES: usize = 1 << 14;

/// `v` (a raw sequence or acknowledgment number) as an offset from `base` on a 64-bit line,
/// choosing the wrap nearest to `near` (RFC 9293 §3.4: comparisons are modulo 2^32, and a
/// connection never has 2^31 bytes in flight). Offsets below `base` (a keepalive's
/// SEG.SEQ = SND.UNA - 1 before any data) are negative.
pub(crate) fn unwrap(base: u32, v: u32, near: i64) -> i64 {
    let rel = i64::from(v.wrapping_sub(base));
    let mut c = (near & !0xffff_ffff) + rel;
    if c > near + (1 << 31) {
        c -= 1 << 32;
    } else if c + (1 << 31) < near {
        c += 1 << 32;
    }
    c
}

/// A set of half-open byte ranges `[start, end)`, kept merged (no two overlap or touch).
#[derive(Clone, Debug, Default)]
pub(crate) struct RangeSet {
    /// start -> end.
    map: BTreeMap<i64, i64>,
    merged_gaps: u64,
}

impl RangeSet {
    /// Adds `[s, e)`; returns how many of its bytes were already in the set.
    pub(crate) fn insert(&mut self, s: i64, e: i64) -> u64 {
        if e <= s {
            return 0;
        }
        let (mut lo, mut hi) = (s, e);
        let mut overlap = 0u64;
        // Ranges that overlap or touch [s, e): start <= e and end >= s. Disjoint and
        // sorted, so take them from the last start at or below e down; no allocation per
        // segment (a sender's capture merges into the one range each time).
        while let Some((&rs, &re)) = self.map.range(..=e).next_back() {
            if re < s {
                break;
            }
            overlap += (re.min(e) - rs.max(s)).max(0) as u64;
            lo = lo.min(rs);
            hi = hi.max(re);
            self.map.remove(&rs);
        }
        self.map.insert(lo, hi);
        if self.map.len() > MAX_RANGES {
            self.join_lowest();
        }
        overlap
    }

    fn join_lowest(&mut self) {
        let Some((s0, _)) = self.map.pop_first() else {
            return;
        };
        if let Some((_, e1)) = self.map.pop_first() {
            self.map.insert(s0, e1);
            self.merged_gaps += 1;
        }
    }

    /// True when every byte of `[s, e)` is in the set.
    pub(crate) fn covers(&self, s: i64, e: i64) -> bool {
        if e <= s {
            return true;
        }
        match self.map.range(..=s).next_back() {
            Some((_, &re)) => re >= e,
            None => false,
        }
    }

    /// Whether `[s, e)` is out of order against the set, by tcptrace's rule: walking from
    /// `s`, the first range it meets that starts after the point reached also ends after
    /// `e`. The part of it inside a range is a resend; the part before a range is new data
    /// sent after that range.
    pub(crate) fn out_of_order(&self, s: i64, e: i64) -> bool {
        let mut pos = s;
        // Ranges are disjoint and apart, so this looks at two ranges at most.
        loop {
            let holding = self
                .map
                .range(..=pos)
                .next_back()
                .filter(|(_, &re)| re > pos);
            match holding {
                Some((_, &re)) if e > re => pos = re,
                Some(_) => return false,
                None => {
                    return self
                        .map
                        .range(pos + 1..)
                        .next()
                        .is_some_and(|(_, &re)| e < re)
                }
            }
        }
    }

    /// Drops every byte below `x`.
    pub(crate) fn remove_below(&mut self, x: i64) {
        while let Some((&s, &e)) = self.map.first_key_value() {
            if s >= x {
                break;
            }
            self.map.remove(&s);
            if e > x {
                self.map.insert(x, e);
                break;
            }
        }
    }

    /// How many times two ranges were joined to keep the set within [`MAX_RANGES`].
    pub(crate) fn merged_gaps(&self) -> u64 {
        self.merged_gaps
    }

    /// The number of ranges held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_follows_the_wrap_and_allows_offsets_below_the_base() {
        assert_eq!(unwrap(100, 150, 0), 50);
        assert_eq!(unwrap(100, 99, 0), -1);
        let base = u32::MAX - 10;
        // 20 bytes later the raw number has wrapped past zero.
        assert_eq!(unwrap(base, 9, 15), 20);
        // Far along: near 5 GB, the same raw value lies one wrap further.
        assert_eq!(unwrap(0, 10, 5_000_000_000), (1 << 32) + 10);
    }

    #[test]
    fn insert_counts_overlap_and_merges() {
        let mut r = RangeSet::default();
        assert_eq!(r.insert(0, 10), 0);
        assert_eq!(r.insert(20, 30), 0);
        assert_eq!(r.len(), 2);
        assert_eq!(r.insert(5, 25), 10);
        assert_eq!(r.len(), 1);
        assert!(r.covers(0, 30));
        assert!(!r.covers(0, 31));
        assert_eq!(r.insert(30, 40), 0);
        assert_eq!(r.len(), 1);
        r.remove_below(35);
        assert!(r.covers(35, 40) && !r.covers(34, 40));
    }

    #[test]
    fn out_of_order_as_tcptrace_walks_its_records() {
        let mut r = RangeSet::default();
        r.insert(0, 1000);
        r.insert(2000, 3000);
        assert!(r.out_of_order(1000, 2000)); // fills the hole
        assert!(r.out_of_order(500, 1500)); // a resend, then new data before 2000..3000
        assert!(!r.out_of_order(0, 1000)); // a resend
        assert!(!r.out_of_order(3000, 4000)); // in order
        assert!(!r.out_of_order(1000, 3500)); // covers the later range: a resend
    }

    #[test]
    fn the_set_stays_bounded() {
        let mut r = RangeSet::default();
        for i in 0..(MAX_RANGES as i64 + 10) {
            r.insert(i * 10, i * 10 + 1);
        }
        assert!(r.len() <= MAX_RANGES);
        assert_eq!(r.merged_gaps(), 10);
    }
}
