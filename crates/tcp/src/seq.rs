//! TCP sequence numbers: 32-bit values compared modulo 2^32 (RFC 9293 §3.4, RFC 1982).
//!
//! `SeqNum` implements `PartialOrd` with the wrapping rule `a < b` iff `(b - a) as i32 > 0`,
//! so engine code reads `if ack > snd_una` and never compares raw `u32`s. It is not `Ord`:
//! the relation is not transitive across more than half the space, which is why TCP keeps
//! every window below 2^30 bytes (RFC 7323 §2.3).

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

/// A TCP sequence number: a `u32` with modulo-2^32 ordering and arithmetic (see the module
/// documentation). `+` and `-` wrap.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNum(u32);

impl SeqNum {
    /// The sequence number with raw value `v`.
    #[inline]
    pub const fn new(v: u32) -> Self {
        SeqNum(v)
    }
    /// The raw value, for the wire.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }
    /// Distance from `earlier` to `self` as a signed count of bytes (negative when `self`
    /// precedes `earlier`).
    #[inline]
    pub const fn diff(self, earlier: SeqNum) -> i32 {
        self.0.wrapping_sub(earlier.0) as i32
    }
    /// Bytes from `earlier` to `self`, zero if `self` is not after `earlier`.
    #[inline]
    pub const fn since(self, earlier: SeqNum) -> u32 {
        let d = self.diff(earlier);
        if d > 0 {
            d as u32
        } else {
            0
        }
    }
    /// The later of the two in sequence space.
    #[inline]
    pub fn max(self, other: SeqNum) -> SeqNum {
        if other > self {
            other
        } else {
            self
        }
    }
    /// The earlier of the two in sequence space.
    #[inline]
    pub fn min(self, other: SeqNum) -> SeqNum {
        if other < self {
            other
        } else {
            self
        }
    }
    /// `start <= self < start + len` in sequence space.
    #[inline]
    pub const fn in_range(self, start: SeqNum, len: u32) -> bool {
        self.0.wrapping_sub(start.0) < len
    }
}

impl PartialOrd for SeqNum {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.diff(*other).cmp(&0))
    }
}

impl Add<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }
}
impl Add<usize> for SeqNum {
    type Output = SeqNum;
    /// Lengths of buffers: TCP windows are below 2^30, so truncating to 32 bits is exact.
    #[inline]
    fn add(self, n: usize) -> SeqNum {
        SeqNum(self.0.wrapping_add(n as u32))
    }
}
impl AddAssign<u32> for SeqNum {
    #[inline]
    fn add_assign(&mut self, n: u32) {
        *self = *self + n;
    }
}
impl AddAssign<usize> for SeqNum {
    #[inline]
    fn add_assign(&mut self, n: usize) {
        *self = *self + n;
    }
}
impl Sub<u32> for SeqNum {
    type Output = SeqNum;
    #[inline]
    fn sub(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(n))
    }
}
impl SubAssign<u32> for SeqNum {
    #[inline]
    fn sub_assign(&mut self, n: u32) {
        *self = *self - n;
    }
}

impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_wrap() {
        let a = SeqNum::new(u32::MAX - 10);
        let b = a + 20u32;
        assert_eq!(b.get(), 9);
        assert!(a < b);
        assert!(b > a);
        assert!(a.partial_cmp(&a) == Some(core::cmp::Ordering::Equal));
        assert_eq!(b.diff(a), 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(b.since(a), 20);
        assert_eq!(a.since(b), 0);
        assert_eq!(a.max(b), b);
        assert_eq!(a.min(b), a);
    }

    #[test]
    fn in_range_wraps() {
        let s = SeqNum::new(u32::MAX - 1);
        assert!(s.in_range(s, 1));
        assert!((s + 3u32).in_range(s, 4));
        assert!(!(s + 4u32).in_range(s, 4));
        assert!(!(s - 1).in_range(s, 4));
        assert!(!s.in_range(s, 0));
    }
}
