//! The Internet checksum: RFC 1071 (the one's complement sum of 16-bit big-endian words),
//! the TCP/UDP pseudo-header, incremental update per RFC 1624, and checksum-and-copy (seed
//! 000, Jul 1988: "if you combine the move with the checksum ... it costs 200us/KB, not the
//! 300us/KB you'd expect from adding the move and sum times").
//!
//! Conventions: a *sum* is the folded one's complement sum, not complemented, in
//! `0..=0xffff`; it is `0` only when every word is zero (RFC 1071 §2: end-around carry never
//! produces negative zero from a non-zero addend). A *checksum* is the complement of a sum,
//! the value written into a header. A packet verifies when the sum over it, checksum field
//! included, is `0xffff`.
//!
//! The fast paths sum native-endian (little-endian) machine words and swap the bytes of the
//! folded result at the end: the one's complement sum is byte-order independent up to that
//! swap (RFC 1071 §2(B)).

use core::net::Ipv4Addr;

/// The plain RFC 1071 reference: 16-bit big-endian words added into a 32-bit accumulator,
/// carries folded at the end. Slow and obviously right; every fast path is tested against it.
pub fn reference_sum(data: &[u8]) -> u16 {
    let mut acc: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for w in &mut chunks {
        acc += u64::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = chunks.remainder() {
        // RFC 1071 §4.1: an odd final byte is padded with a zero byte on the right.
        acc += u64::from(*last) << 8;
    }
    fold64(acc)
}

/// Folds a 64-bit one's complement accumulator to 16 bits with end-around carries.
#[inline]
pub const fn fold64(mut acc: u64) -> u16 {
    // Four folds suffice for any u64: 64 -> 49 -> 33 -> 17 -> 16 bits, but loop to be clear.
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// One's complement addition of two sums.
#[inline]
pub const fn add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    ((s & 0xffff) + (s >> 16)) as u16
}

/// One's complement subtraction: `a - b` = `a + !b`.
#[inline]
pub const fn sub(a: u16, b: u16) -> u16 {
    add(a, !b)
}

/// The sum of `data`, big-endian words, as [`reference_sum`] computes it, with the fastest
/// implementation this CPU offers.
#[inline]
pub fn sum(data: &[u8]) -> u16 {
    fold64(sum_native(data, 0)).swap_bytes()
}

/// The checksum of `data`: the complement of its sum.
#[inline]
pub fn checksum(data: &[u8]) -> u16 {
    !sum(data)
}

/// Sum of `a` followed by `b` where `a` has `a_len` bytes: when `a` has odd length, `b`'s
/// words straddle the boundary, which one's complement arithmetic handles by swapping the
/// bytes of `b`'s sum (RFC 1071 §2(B)).
#[inline]
pub const fn concat(a: u16, a_len: usize, b: u16) -> u16 {
    if a_len % 2 == 1 {
        add(a, b.swap_bytes())
    } else {
        add(a, b)
    }
}

/// The sum of the TCP/UDP pseudo-header (RFC 9293 §3.1): source, destination, zero, protocol,
/// and the TCP length (header plus data).
#[inline]
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: u16) -> u16 {
    let s = src.octets();
    let d = dst.octets();
    let acc = u32::from(u16::from_be_bytes([s[0], s[1]]))
        + u32::from(u16::from_be_bytes([s[2], s[3]]))
        + u32::from(u16::from_be_bytes([d[0], d[1]]))
        + u32::from(u16::from_be_bytes([d[2], d[3]]))
        + u32::from(protocol)
        + u32::from(len);
    fold64(u64::from(acc))
}

/// RFC 1624 eqn. 3: the new checksum after one 16-bit word of the covered data changed from
/// `old` to `new`, `HC' = ~(~HC + ~m + m')`. Unlike RFC 1141's `HC - ~m - m'` it gives the
/// same `0x0000` a full recomputation gives when the new sum is `0xffff` (RFC 1624 §3).
#[inline]
pub const fn update16(checksum: u16, old: u16, new: u16) -> u16 {
    !add(add(!checksum, !old), new)
}

/// [`update16`] for a 32-bit field (a sequence number, an address): two word updates.
#[inline]
pub const fn update32(checksum: u16, old: u32, new: u32) -> u16 {
    let c = update16(checksum, (old >> 16) as u16, (new >> 16) as u16);
    update16(c, old as u16, new as u16)
}

/// Copies `src` into the front of `dst` and returns the sum of the bytes copied, in one pass
/// over the data (the seed's Jul 1988 "combine the move with the checksum").
///
/// # Panics
/// If `dst` is shorter than `src`, as `copy_from_slice` would.
#[inline]
pub fn copy_and_sum(dst: &mut [u8], src: &[u8]) -> u16 {
    let dst = &mut dst[..src.len()];
    fold64(copy_and_sum_native(dst, src, 0)).swap_bytes()
}

// ---------------------------------------------------------------------------------------
// Implementation: native-endian sums returning an unfolded u64 accumulator.

/// Adds with end-around carry: the 64-bit one's complement addition.
#[inline(always)]
fn adc(acc: u64, w: u64) -> u64 {
    let (s, carry) = acc.overflowing_add(w);
    s + carry as u64
}

#[inline(always)]
fn load_u64(b: &[u8]) -> u64 {
    u64::from_ne_bytes(b[..8].try_into().unwrap())
}

/// Native-endian one's complement sum of `data` added to `acc` (unfolded).
fn sum_native(data: &[u8], acc: u64) -> u64 {
    sum_native_portable(data, acc)
}

/// Portable: four independent 64-bit end-around-carry accumulators over 32-byte blocks so
/// the additions pipeline, then 8-byte and tail steps.
fn sum_native_portable(data: &[u8], acc: u64) -> u64 {
    let mut a = [acc, 0, 0, 0];
    let mut blocks = data.chunks_exact(32);
    for b in &mut blocks {
        a[0] = adc(a[0], load_u64(&b[0..]));
        a[1] = adc(a[1], load_u64(&b[8..]));
        a[2] = adc(a[2], load_u64(&b[16..]));
        a[3] = adc(a[3], load_u64(&b[24..]));
    }
    let mut acc = adc(adc(a[0], a[1]), adc(a[2], a[3]));
    tail_native(blocks.remainder(), &mut acc);
    acc
}

/// Sums fewer than 32 bytes into `acc` (native-endian words, odd byte as the low byte of a
/// final native u16, which after the closing swap is the high byte of a big-endian word).
#[inline(always)]
fn tail_native(rest: &[u8], acc: &mut u64) {
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        *acc = adc(*acc, load_u64(w));
    }
    let mut rest = words.remainder();
    if rest.len() >= 4 {
        *acc = adc(
            *acc,
            u64::from(u32::from_ne_bytes(rest[..4].try_into().unwrap())),
        );
        rest = &rest[4..];
    }
    if rest.len() >= 2 {
        *acc = adc(*acc, u64::from(u16::from_ne_bytes([rest[0], rest[1]])));
        rest = &rest[2..];
    }
    if let [b] = rest {
        *acc = adc(
            *acc,
            u64::from(u16::from_ne_bytes(if cfg!(target_endian = "little") {
                [*b, 0]
            } else {
                [0, *b]
            })),
        );
    }
}

fn copy_and_sum_native(dst: &mut [u8], src: &[u8], acc: u64) -> u64 {
    copy_and_sum_portable(dst, src, acc)
}

fn copy_and_sum_portable(dst: &mut [u8], src: &[u8], acc: u64) -> u64 {
    debug_assert_eq!(dst.len(), src.len());
    let mut a = [acc, 0, 0, 0];
    let n = src.len() / 32 * 32;
    for (d, s) in dst[..n].chunks_exact_mut(32).zip(src[..n].chunks_exact(32)) {
        let w0 = load_u64(&s[0..]);
        let w1 = load_u64(&s[8..]);
        let w2 = load_u64(&s[16..]);
        let w3 = load_u64(&s[24..]);
        d[0..8].copy_from_slice(&w0.to_ne_bytes());
        d[8..16].copy_from_slice(&w1.to_ne_bytes());
        d[16..24].copy_from_slice(&w2.to_ne_bytes());
        d[24..32].copy_from_slice(&w3.to_ne_bytes());
        a[0] = adc(a[0], w0);
        a[1] = adc(a[1], w1);
        a[2] = adc(a[2], w2);
        a[3] = adc(a[3], w3);
    }
    let mut acc = adc(adc(a[0], a[1]), adc(a[2], a[3]));
    dst[n..].copy_from_slice(&src[n..]);
    tail_native(&src[n..], &mut acc);
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    #[test]
    fn rfc1071_numerical_example() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (big-endian words).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(reference_sum(&data), 0xddf2);
        assert_eq!(sum(&data), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn zero_only_for_all_zero_words() {
        assert_eq!(sum(&[]), 0);
        assert_eq!(sum(&[0; 77]), 0);
        assert_eq!(sum(&[0xff, 0xff]), 0xffff);
        assert_eq!(sum(&[0xff, 0xff, 0x00, 0x01]), 0x0001);
    }

    #[test]
    fn fast_sum_matches_reference_every_length_and_alignment() {
        let buf = pattern(2000 + 64, 7);
        for align in 0..16 {
            for len in 0..=2000 {
                let d = &buf[align..align + len];
                assert_eq!(sum(d), reference_sum(d), "len {len} align {align}");
            }
        }
    }

    #[test]
    fn copy_and_sum_matches_reference_every_length_and_alignment() {
        let src = pattern(2000 + 64, 9);
        let mut dst = vec![0u8; 2000 + 64];
        for align_src in [0usize, 1, 3, 8] {
            for align_dst in [0usize, 1, 5, 8] {
                for len in 0..=2000 {
                    dst.fill(0xaa);
                    let s = &src[align_src..align_src + len];
                    let got = copy_and_sum(&mut dst[align_dst..], s);
                    assert_eq!(got, reference_sum(s), "len {len}");
                    assert_eq!(&dst[align_dst..align_dst + len], s);
                    // Nothing outside the destination range was touched.
                    assert!(dst[..align_dst].iter().all(|&b| b == 0xaa));
                    assert!(dst[align_dst + len..].iter().all(|&b| b == 0xaa));
                }
            }
        }
    }

    #[test]
    fn concat_handles_odd_boundaries() {
        let d = pattern(301, 3);
        for cut in 0..=d.len() {
            let (a, b) = d.split_at(cut);
            assert_eq!(concat(sum(a), a.len(), sum(b)), sum(&d), "cut {cut}");
        }
    }

    #[test]
    fn rfc1624_incremental_update_matches_recompute() {
        let mut d = pattern(64, 11);
        for i in 0..32 {
            let ck = checksum(&d);
            let old = u16::from_be_bytes([d[2 * i], d[2 * i + 1]]);
            let new = (old ^ 0x5a5a).wrapping_add(i as u16);
            d[2 * i..2 * i + 2].copy_from_slice(&new.to_be_bytes());
            let upd = update16(ck, old, new);
            // The one's complement zero has two forms; compare as sums mod 0xffff.
            assert_eq!(u32::from(upd) % 0xffff, u32::from(checksum(&d)) % 0xffff);
        }
    }

    #[test]
    fn rfc1624_example_keeps_positive_zero() {
        // RFC 1624 §3: the other words sum to 0xCD7A and m changes from 0x5555 to 0x3285.
        // HC = ~(0xCD7A + 0x5555) = 0xDD2F; recomputation gives 0x0000, and so must eqn. 3
        // (RFC 1141's eqn. 2 gives 0xFFFF).
        let hc = !add(0xcd7a, 0x5555);
        assert_eq!(hc, 0xdd2f);
        assert_eq!(update16(hc, 0x5555, 0x3285), 0x0000);
    }
}
