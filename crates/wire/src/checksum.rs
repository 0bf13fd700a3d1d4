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
//!
//! Implementations, chosen once per process by CPU feature detection (the choice is cached,
//! so a call pays one predictable branch):
//!
//! - portable: four 64-bit end-around-carry accumulators; every CPU, and buffers shorter than
//!   the measured crossover (192 bytes to sum and 128 to copy with AVX-512 VNNI; headers
//!   always), where the vector set-up and the horizontal reduction cost more than they save;
//! - AVX2 (`std::arch` intrinsics): 16-bit words summed into 32-bit lanes by `vpmaddwd`;
//! - AVX-512BW, and AVX-512BW + AVX-512 VNNI (`vpdpwssd`, the multiply-add and the
//!   accumulation in one instruction): written with `asm!`, because the AVX-512 intrinsics
//!   and `#[target_feature(enable = "avx512bw")]` need Rust 1.89 and the workspace promises
//!   1.85. Masked loads and stores handle the tail with no scalar loop.
//!
//! All of them give exactly [`reference_sum`]'s value, including zero only for all-zero
//! data; the tests run each one against it.

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
pub const fn fold64(acc: u64) -> u16 {
    // Two end-around-carry additions of halves, 64 -> 32 -> 16 bits, with no data-dependent
    // loop (a loop of "fold while above 0xffff" runs 1 to 4 times and mispredicts). Each
    // step keeps the value modulo 2^n - 1, which 0xffff divides, and never makes 0 from a
    // non-zero input (an overflowing add leaves at least the carry), so the result is the
    // same as folding 16 bits at a time.
    let (s, c) = (acc as u32).overflowing_add((acc >> 32) as u32);
    let s = s + c as u32;
    let (t, c) = (s as u16).overflowing_add((s >> 16) as u16);
    t + c as u16
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

/// Buffers shorter than this take the portable path with no dispatch at all: for them the
/// vector set-up and the horizontal reduction cost more than the vector loop saves. Headers
/// (20 to 60 bytes) stay here. It is the smallest of the per-implementation crossovers in
/// `x86::min_len`.
#[cfg(target_arch = "x86_64")]
const SIMD_MIN_LEN: usize = 128;

/// Native-endian one's complement sum of `data` added to `acc` (unfolded).
#[inline]
fn sum_native(data: &[u8], acc: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if data.len() >= SIMD_MIN_LEN {
        return adc(acc, x86::sum(data));
    }
    sum_native_portable(data, acc)
}

/// Portable: four independent 64-bit end-around-carry accumulators over 32-byte blocks so
/// the additions pipeline, then 8-byte and tail steps.
fn sum_native_portable(data: &[u8], acc: u64) -> u64 {
    if data.len() < 32 {
        // Headers (20 to 60 bytes) are the commonest input: no block set-up for them.
        let mut acc = acc;
        tail_native(data, &mut acc);
        return acc;
    }
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
/// One test per bit of the length, 16, 8, 4, 2, 1, and no loop.
#[inline(always)]
fn tail_native(rest: &[u8], acc: &mut u64) {
    debug_assert!(rest.len() < 32);
    let n = rest.len();
    let mut rest = rest;
    if n & 16 != 0 {
        *acc = adc(*acc, load_u64(&rest[..8]));
        *acc = adc(*acc, load_u64(&rest[8..16]));
        rest = &rest[16..];
    }
    if n & 8 != 0 {
        *acc = adc(*acc, load_u64(&rest[..8]));
        rest = &rest[8..];
    }
    if n & 4 != 0 {
        *acc = adc(
            *acc,
            u64::from(u32::from_ne_bytes(rest[..4].try_into().unwrap())),
        );
        rest = &rest[4..];
    }
    if n & 2 != 0 {
        *acc = adc(*acc, u64::from(u16::from_ne_bytes([rest[0], rest[1]])));
        rest = &rest[2..];
    }
    if n & 1 != 0 {
        let b = rest[0];
        *acc = adc(
            *acc,
            u64::from(u16::from_ne_bytes(if cfg!(target_endian = "little") {
                [b, 0]
            } else {
                [0, b]
            })),
        );
    }
}

#[inline]
fn copy_and_sum_native(dst: &mut [u8], src: &[u8], acc: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if src.len() >= SIMD_MIN_LEN {
        return adc(acc, x86::copy_and_sum(dst, src));
    }
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
    // The last < 32 bytes in fixed-size pieces: `copy_from_slice` of a length known only
    // at run time calls memcpy, which costs more than a whole small copy here.
    let (d, s) = (&mut dst[n..], &src[n..]);
    let tail = s.len();
    let mut i = 0;
    if tail & 16 != 0 {
        d[..16].copy_from_slice(&s[..16]);
        i = 16;
    }
    if tail & 8 != 0 {
        d[i..i + 8].copy_from_slice(&s[i..i + 8]);
        i += 8;
    }
    if tail & 4 != 0 {
        d[i..i + 4].copy_from_slice(&s[i..i + 4]);
        i += 4;
    }
    if tail & 2 != 0 {
        d[i..i + 2].copy_from_slice(&s[i..i + 2]);
        i += 2;
    }
    if tail & 1 != 0 {
        d[i] = s[i];
    }
    tail_native(s, &mut acc);
    acc
}

// ---------------------------------------------------------------------------------------
// x86-64 vector implementations.
//
// All of them use the same arithmetic. A 16-bit word `w` (native order) is biased to the
// signed word `w ^ 0x8000 = w - 32768`, and `vpmaddwd` against a vector of ones adds
// adjacent pairs into signed 32-bit lanes: each lane gains `a + b - 65536`, in
// [-65536, 65534], per vector. The bias is undone in 64 bits at the end: every vector
// processed (a zero-padded partial one included, whose zero words are biased the same way)
// owes `65536` per lane. What comes out is the exact, non-negative sum of the words, so it is
// zero only for all-zero data, as RFC 1071 requires.
//
// Lanes must not overflow: a chunk of at most `2^14` whole vectors (plus at most two
// partial ones, head and tail) keeps every lane, and the sum of all accumulators in one lane,
// within `65536 * (2^14 + 2) < 2^31`. Longer buffers are cut into chunks whose exact sums
// are added with end-around carry.
//
// Both vector paths first step over a head so that the main loop's loads (when summing) or
// stores (when copying) are aligned to the vector size (split accesses cost up to twice as
// much). The rest then starts at an odd offset when the head is odd, which pairs bytes into
// words the other way round: its sum is then the byte swap of the right one (RFC 1071
// §2(B)), which we undo once, folded.

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{adc, sum_native_portable};
    use core::arch::asm;
    use core::arch::x86_64::*;
    use core::sync::atomic::{AtomicU8, Ordering};

    /// Vectors per chunk; see the overflow bound above.
    const CHUNK_VECTORS: usize = 1 << 14;
    /// AVX2 chunk: 512 KiB of 32-byte vectors.
    const AVX2_CHUNK: usize = CHUNK_VECTORS * 32;
    /// AVX-512 chunk: 1 MiB of 64-byte vectors.
    const AVX512_CHUNK: usize = CHUNK_VECTORS * 64;

    /// The best implementation this CPU runs.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    pub(super) enum Level {
        Portable = 1,
        Avx2 = 2,
        Avx512 = 3,
        Avx512Vnni = 4,
    }

    /// 0 until the first call detects the CPU; then a `Level`.
    static LEVEL: AtomicU8 = AtomicU8::new(0);

    #[inline(always)]
    pub(super) fn level() -> Level {
        match LEVEL.load(Ordering::Relaxed) {
            4 => Level::Avx512Vnni,
            3 => Level::Avx512,
            2 => Level::Avx2,
            1 => Level::Portable,
            _ => detect(),
        }
    }

    #[cold]
    #[inline(never)]
    fn detect() -> Level {
        let level = if has_avx512vnni() {
            Level::Avx512Vnni
        } else if has_avx512() {
            Level::Avx512
        } else if has_avx2() {
            Level::Avx2
        } else {
            Level::Portable
        };
        // Racing first calls store the same value.
        LEVEL.store(level as u8, Ordering::Relaxed);
        level
    }

    pub(super) fn has_avx2() -> bool {
        is_x86_feature_detected!("avx2")
    }

    pub(super) fn has_avx512() -> bool {
        // `avx512f` also tells us the OS saves the ZMM and mask registers (XCR0).
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    }

    pub(super) fn has_avx512vnni() -> bool {
        has_avx512() && is_x86_feature_detected!("avx512vnni")
    }

    /// The shortest buffer each implementation is handed, to sum or (`copy`) to copy and
    /// sum: below it the portable code is as fast or faster. Measured crossovers (the
    /// `crossover` benchmark group, BENCHMARKS.md): the AVX-512 kernels' fixed cost
    /// (constants, masked head and tail, reduction) is about that of the portable loop over
    /// 160 to 200 bytes when summing (more with the two-instruction AVX-512BW step) and 128
    /// bytes when copying; the AVX2 code, whose head and tail are scalar, pays off later.
    #[inline(always)]
    pub(super) const fn min_len(level: Level, copy: bool) -> usize {
        match (level, copy) {
            (Level::Avx512Vnni, false) => 192,
            (Level::Avx512, false) => 256,
            (Level::Avx512Vnni | Level::Avx512, true) => 128,
            (Level::Avx2, _) => 384,
            (Level::Portable, _) => usize::MAX,
        }
    }

    // Shorter buffers than SIMD_MIN_LEN never get here; it must not hide a crossover.
    const _: () = assert!(super::SIMD_MIN_LEN <= min_len(Level::Avx512, true));

    /// Native-endian sum (unfolded, end-around-carry accumulator) with the best
    /// implementation for this CPU and length.
    pub(super) fn sum(data: &[u8]) -> u64 {
        let level = level();
        if data.len() < min_len(level, false) {
            return sum_native_portable(data, 0);
        }
        match level {
            // SAFETY: `level()` returns a vector level only when detection found its features.
            Level::Avx512Vnni => unsafe { sum_avx512vnni(data) },
            // SAFETY: as above.
            Level::Avx512 => unsafe { sum_avx512(data) },
            // SAFETY: as above.
            Level::Avx2 => unsafe { sum_avx2(data) },
            Level::Portable => sum_native_portable(data, 0),
        }
    }

    /// As [`sum`] while copying `src` into `dst`, which has the same length.
    pub(super) fn copy_and_sum(dst: &mut [u8], src: &[u8]) -> u64 {
        let level = level();
        if src.len() < min_len(level, true) {
            return super::copy_and_sum_portable(dst, src, 0);
        }
        match level {
            // SAFETY: `level()` returns a vector level only when detection found its features.
            Level::Avx512Vnni => unsafe { copy_and_sum_avx512vnni(dst, src) },
            // SAFETY: as above.
            Level::Avx512 => unsafe { copy_and_sum_avx512(dst, src) },
            // SAFETY: as above.
            Level::Avx2 => unsafe { copy_and_sum_avx2(dst, src) },
            Level::Portable => super::copy_and_sum_portable(dst, src, 0),
        }
    }

    // ---------------------------------------------------------------------------------
    // AVX2, with intrinsics.

    /// Bytes 32..64 set: `MASK[k..k + 32]` keeps the last `k` bytes of a 32-byte vector.
    static TAIL_MASK: [u8; 64] = {
        let mut m = [0u8; 64];
        let mut i = 32;
        while i < 64 {
            m[i] = 0xff;
            i += 1;
        }
        m
    };

    /// The sum of data that starts `offset` bytes into the buffer, in the buffer's word
    /// order: an odd offset pairs bytes the other way round, which swaps the bytes of the
    /// folded sum (RFC 1071 §2(B)).
    #[inline(always)]
    fn at_offset(acc: u64, offset: usize) -> u64 {
        if offset % 2 == 1 {
            u64::from(super::fold64(acc).swap_bytes())
        } else {
            acc
        }
    }

    /// Bytes from `p` to the next `align`-byte boundary, at most `len`.
    #[inline(always)]
    fn head_len(p: *const u8, align: usize, len: usize) -> usize {
        ((p as usize).wrapping_neg() % align).min(len)
    }

    /// Native-endian sum of `data`: a head up to the first 32-byte boundary with the
    /// portable code (so that the vector loads are aligned), then chunks of at most
    /// `AVX2_CHUNK` bytes, each summed exactly, added with end-around carry.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sum_avx2(data: &[u8]) -> u64 {
        let (head, rest) = data.split_at(head_len(data.as_ptr(), 32, data.len()));
        let mut acc = 0;
        for c in rest.chunks(AVX2_CHUNK) {
            // SAFETY: AVX2 is available (our caller's promise); `c` is readable for its
            // length; the null destination is never written when COPY is false.
            let s = unsafe { avx2_chunk::<false>(c.as_ptr(), core::ptr::null_mut(), c.len()) };
            acc = adc(acc, s);
        }
        adc(sum_native_portable(head, 0), at_offset(acc, head.len()))
    }

    /// Copies `src` to `dst` (same length) and returns the native-endian sum of `src`; as
    /// [`sum_avx2`] but with the head chosen to align the stores (as memcpy does: split
    /// stores cost more than split loads).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn copy_and_sum_avx2(dst: &mut [u8], src: &[u8]) -> u64 {
        assert_eq!(dst.len(), src.len());
        let n = head_len(dst.as_ptr(), 32, src.len());
        let (head, rest) = src.split_at(n);
        let (dst_head, dst_rest) = dst.split_at_mut(n);
        let mut acc = 0;
        for (d, s) in dst_rest.chunks_mut(AVX2_CHUNK).zip(rest.chunks(AVX2_CHUNK)) {
            // SAFETY: AVX2 is available; `s` is readable and `d` writable for `s.len()`
            // bytes, and they do not overlap (a `&mut` and a `&` slice).
            let x = unsafe { avx2_chunk::<true>(s.as_ptr(), d.as_mut_ptr(), s.len()) };
            acc = adc(acc, x);
        }
        let h = super::copy_and_sum_portable(dst_head, head, 0);
        adc(h, at_offset(acc, n))
    }

    /// Exact native-endian sum of `len <= AVX2_CHUNK` bytes at `src`, copying them to `dst`
    /// when `COPY`.
    ///
    /// Eight accumulators over 256-byte blocks keep the three vector ports busy; what is
    /// left is taken as 128 + 64 + 32 bytes as needed, then the last `< 32` bytes as one
    /// vector loaded to end there (overlapping bytes already summed, which a mask clears),
    /// so there is no scalar loop. Below 32 bytes there is no such vector: portable.
    ///
    /// # Safety
    /// AVX2; `src` readable for `len` bytes; when `COPY`, `dst` writable for `len` bytes
    /// and not overlapping `src`.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn avx2_chunk<const COPY: bool>(src: *const u8, dst: *mut u8, len: usize) -> u64 {
        debug_assert!(len <= AVX2_CHUNK);
        if len < 32 {
            // SAFETY: `src` is readable for `len` bytes and `dst` writable (when COPY).
            let s = unsafe { core::slice::from_raw_parts(src, len) };
            return if COPY {
                // SAFETY: as above; the caller promises no overlap.
                let d = unsafe { core::slice::from_raw_parts_mut(dst, len) };
                super::copy_and_sum_portable(d, s, 0)
            } else {
                sum_native_portable(s, 0)
            };
        }
        let bias = _mm256_set1_epi16(i16::MIN);
        let ones = _mm256_set1_epi16(1);
        // One 32-byte vector at byte offset `$off`: load (and store), bias, pairwise add
        // into the 32-bit lanes of `$acc`.
        macro_rules! step {
            ($acc:ident, $off:expr) => {{
                let off = $off;
                // SAFETY: every caller below keeps `off + 32 <= len`.
                let x = unsafe { _mm256_loadu_si256(src.add(off).cast()) };
                if COPY {
                    // SAFETY: as for the load; `dst` is writable for `len` bytes.
                    unsafe { _mm256_storeu_si256(dst.add(off).cast(), x) };
                }
                $acc = _mm256_add_epi32($acc, _mm256_madd_epi16(_mm256_xor_si256(x, bias), ones));
            }};
        }
        let z = _mm256_setzero_si256();
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let (mut a4, mut a5, mut a6, mut a7) = (z, z, z, z);
        let mut off = 0;
        while len - off >= 256 {
            step!(a0, off);
            step!(a1, off + 32);
            step!(a2, off + 64);
            step!(a3, off + 96);
            step!(a4, off + 128);
            step!(a5, off + 160);
            step!(a6, off + 192);
            step!(a7, off + 224);
            off += 256;
        }
        let rest = len - off;
        if rest & 128 != 0 {
            step!(a0, off);
            step!(a1, off + 32);
            step!(a2, off + 64);
            step!(a3, off + 96);
            off += 128;
        }
        if rest & 64 != 0 {
            step!(a4, off);
            step!(a5, off + 32);
            off += 64;
        }
        if rest & 32 != 0 {
            step!(a6, off);
            off += 32;
        }
        let mut vectors = off / 32;
        let tail = len - off;
        let even = tail & !1;
        if even != 0 {
            // The 32 bytes ending at `off + even`: `len >= 32` put at least one whole vector
            // before `off`, so `start >= 0`; `start` is even, so words stay whole. The first
            // `32 - even` bytes were summed already and are masked to zero (and stored again
            // unchanged when copying).
            let start = off + even - 32;
            // SAFETY: `start + 32 = off + even <= len`.
            let x = unsafe { _mm256_loadu_si256(src.add(start).cast()) };
            if COPY {
                // SAFETY: as for the load.
                unsafe { _mm256_storeu_si256(dst.add(start).cast(), x) };
            }
            // SAFETY: `even < 32`, so `even + 32 <= 64 = TAIL_MASK.len()`.
            let m = unsafe { _mm256_loadu_si256(TAIL_MASK.as_ptr().add(even).cast()) };
            let x = _mm256_and_si256(x, m);
            a7 = _mm256_add_epi32(a7, _mm256_madd_epi16(_mm256_xor_si256(x, bias), ones));
            vectors += 1;
        }
        let mut odd = 0;
        if tail & 1 != 0 {
            // The last byte starts a word (its offset `off + even` is even): it is the low
            // byte of a native word, padded with zero (RFC 1071 §4.1 after the final swap).
            // SAFETY: `len - 1 < len`.
            let b = unsafe { *src.add(len - 1) };
            if COPY {
                // SAFETY: as for the read.
                unsafe { *dst.add(len - 1) = b };
            }
            odd = u64::from(b);
        }
        // Each lane of each accumulator is within `65536 * vectors`, and `vectors <= 2^14`,
        // so the eight add up without overflow; the total needs 64 bits.
        let a = _mm256_add_epi32(
            _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)),
            _mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)),
        );
        let lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(a));
        let hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256::<1>(a));
        let q = _mm256_add_epi64(lo, hi);
        let q = _mm_add_epi64(_mm256_castsi256_si128(q), _mm256_extracti128_si256::<1>(q));
        let q = _mm_add_epi64(q, _mm_unpackhi_epi64(q, q));
        // Undo the bias: 8 lanes x 65536 per vector.
        let exact = _mm_cvtsi128_si64(q) + ((vectors as i64) << 19);
        exact as u64 + odd
    }

    // ---------------------------------------------------------------------------------
    // AVX-512, with `asm!` (see the module docs for why not intrinsics).
    //
    // Register use, inside each asm block only: rsi source, rdi destination, rcx bytes left,
    // r9 and rdx the head and tail masks (moved to k2 and k1), r10 the head's length, r8
    // scratch, rax the result; zmm0-zmm7 the main loop's accumulators, zmm15 the head's and
    // tail's, zmm8 the 0x8000 bias, zmm9 the ones, zmm10-zmm14 data. `clobber_abi("C")` declares
    // every caller-saved register clobbered, all vector and mask registers included (the
    // System V ABI preserves none of them), so the compiler keeps nothing there across the
    // block; with it, operands must name their registers. Without AVX-512 enabled at
    // compile time the compiler never uses zmm upper halves, zmm16-31 or k registers, so
    // there is nothing of its own there for us to destroy either.

    /// `acc += madd(x, ones)`, the AVX-512BW way: two instructions.
    macro_rules! step_bw {
        ($acc:literal, $x:literal) => {
            concat!(
                concat!("vpmaddwd ", $x, ", ", $x, ", zmm9\n"),
                concat!("vpaddd ", $acc, ", ", $acc, ", ", $x, "\n"),
            )
        };
    }

    /// `acc += madd(x, ones)` in one AVX-512 VNNI instruction.
    macro_rules! step_vnni {
        ($acc:literal, $x:literal) => {
            concat!("vpdpwssd ", $acc, ", ", $x, ", zmm9\n")
        };
    }

    /// Loads the vector at `[rsi + off]` into `x`, stores it to `[rdi + off]` when copying,
    /// and biases it.
    macro_rules! load_sum {
        ($x:literal, $off:literal) => {
            concat!("vpxord ", $x, ", zmm8, zmmword ptr [rsi + ", $off, "]\n")
        };
    }
    macro_rules! load_copy {
        ($x:literal, $off:literal) => {
            concat!(
                concat!("vmovdqu64 ", $x, ", zmmword ptr [rsi + ", $off, "]\n"),
                concat!("vmovdqu64 zmmword ptr [rdi + ", $off, "], ", $x, "\n"),
                concat!("vpxord ", $x, ", ", $x, ", zmm8\n"),
            )
        };
    }

    /// The body shared by the four AVX-512 kernels: `$load` brings in (and maybe stores)
    /// one biased vector, `$step` accumulates it. On entry `rsi` (and `rdi`) point at the
    /// head vector, `r9` holds the head's byte mask and `r10` how far to advance past it;
    /// then `rcx` bytes follow (the body), and `rdx` holds the mask of its final
    /// `rcx % 64` bytes. On exit `rax` holds the signed sum of all 32-bit lanes, over
    /// `rcx / 64 + 2` vectors (the head and tail vectors are always processed, maybe
    /// empty).
    macro_rules! avx512_body {
        ($load:ident, $step:ident, $($operands:tt)*) => {
            asm!(
                // VEX-encoded xor of an xmm register zeroes the whole zmm register.
                "vpxor xmm0, xmm0, xmm0",
                "vpxor xmm1, xmm1, xmm1",
                "vpxor xmm2, xmm2, xmm2",
                "vpxor xmm3, xmm3, xmm3",
                "vpxor xmm4, xmm4, xmm4",
                "vpxor xmm5, xmm5, xmm5",
                "vpxor xmm6, xmm6, xmm6",
                "vpxor xmm7, xmm7, xmm7",
                "mov r8d, 0x80008000",
                "vpbroadcastd zmm8, r8d",
                "mov r8d, 0x00010001",
                "vpbroadcastd zmm9, r8d",
                // The head: the bytes before the 64-byte boundary we align to, by masked
                // load (and store), then step over them.
                "kmovq k2, r9",
                avx512_body!(@head $load),
                "vpxord zmm14, zmm10, zmm8",
                // The head and the tail have accumulators of their own, so that the long
                // latency of a masked load does not delay the main loop's chains.
                "vpxor xmm15, xmm15, xmm15",
                $step!("zmm15", "zmm14"),
                "add rsi, r10",
                avx512_body!(@advance_dst $load, "r10"),
                "cmp rcx, 512",
                "jb 3f",
                // Main loop: 512 bytes, eight vectors into eight accumulators (the VNNI
                // accumulate has a 5-cycle latency; eight chains hide it).
                ".p2align 4",
                "2:",
                $load!("zmm10", "0"),
                $load!("zmm11", "64"),
                $load!("zmm12", "128"),
                $load!("zmm13", "192"),
                $step!("zmm0", "zmm10"),
                $step!("zmm1", "zmm11"),
                $step!("zmm2", "zmm12"),
                $step!("zmm3", "zmm13"),
                $load!("zmm10", "256"),
                $load!("zmm11", "320"),
                $load!("zmm12", "384"),
                $load!("zmm13", "448"),
                $step!("zmm4", "zmm10"),
                $step!("zmm5", "zmm11"),
                $step!("zmm6", "zmm12"),
                $step!("zmm7", "zmm13"),
                "add rsi, 512",
                avx512_body!(@advance_dst $load, "512"),
                "sub rcx, 512",
                "cmp rcx, 512",
                "jae 2b",
                // Now rcx < 512: its bits 8, 7 and 6 say whether 256, 128 and 64 remain.
                "3:",
                "test ecx, 256",
                "jz 4f",
                $load!("zmm10", "0"),
                $load!("zmm11", "64"),
                $load!("zmm12", "128"),
                $load!("zmm13", "192"),
                $step!("zmm0", "zmm10"),
                $step!("zmm1", "zmm11"),
                $step!("zmm2", "zmm12"),
                $step!("zmm3", "zmm13"),
                "add rsi, 256",
                avx512_body!(@advance_dst $load, "256"),
                "4:",
                "test ecx, 128",
                "jz 5f",
                $load!("zmm10", "0"),
                $load!("zmm11", "64"),
                $step!("zmm4", "zmm10"),
                $step!("zmm5", "zmm11"),
                "add rsi, 128",
                avx512_body!(@advance_dst $load, "128"),
                "5:",
                "test ecx, 64",
                "jz 6f",
                $load!("zmm10", "0"),
                $step!("zmm6", "zmm10"),
                "add rsi, 64",
                avx512_body!(@advance_dst $load, "64"),
                // The final rcx % 64 bytes (maybe none) with a masked load: masked-off
                // bytes read as zero and are never accessed, so nothing beyond the buffer is
                // read (or, copying, written).
                "6:",
                "kmovq k1, rdx",
                avx512_body!(@tail $load),
                "vpxord zmm10, zmm10, zmm8",
                $step!("zmm15", "zmm10"),
                // Reduce: the accumulators in 32 bits (see the overflow bound), then each
                // 64-bit lane's two signed halves widened in place (no lane crossing), then
                // the eight 64-bit lanes.
                "vpaddd zmm0, zmm0, zmm1",
                "vpaddd zmm2, zmm2, zmm3",
                "vpaddd zmm4, zmm4, zmm5",
                "vpaddd zmm6, zmm6, zmm7",
                "vpaddd zmm0, zmm0, zmm2",
                "vpaddd zmm4, zmm4, zmm6",
                "vpaddd zmm0, zmm0, zmm15",
                "vpaddd zmm0, zmm0, zmm4",
                "vpsllq zmm1, zmm0, 32",
                "vpsraq zmm1, zmm1, 32",
                "vpsraq zmm0, zmm0, 32",
                "vpaddq zmm0, zmm0, zmm1",
                "vextracti64x4 ymm1, zmm0, 1",
                "vpaddq ymm0, ymm0, ymm1",
                "vextracti128 xmm1, ymm0, 1",
                "vpaddq xmm0, xmm0, xmm1",
                "vpshufd xmm1, xmm0, 0x4e",
                "vpaddq xmm0, xmm0, xmm1",
                "vmovq rax, xmm0",
                // Leave the upper halves clean for the SSE code around us.
                "vzeroupper",
                $($operands)*
                // Also covers r8, used for the constants.
                clobber_abi("C"),
                options(nostack),
            )
        };
        (@advance_dst load_sum, $n:literal) => { "" };
        (@advance_dst load_copy, $n:literal) => { concat!("add rdi, ", $n) };
        (@head load_sum) => { "vmovdqu8 zmm10 {{k2}}{{z}}, zmmword ptr [rsi]" };
        (@head load_copy) => {
            concat!(
                "vmovdqu8 zmm10 {{k2}}{{z}}, zmmword ptr [rsi]\n",
                "vmovdqu8 zmmword ptr [rdi] {{k2}}, zmm10",
            )
        };
        (@tail load_sum) => { "vmovdqu8 zmm10 {{k1}}{{z}}, zmmword ptr [rsi]" };
        (@tail load_copy) => {
            concat!(
                "vmovdqu8 zmm10 {{k1}}{{z}}, zmmword ptr [rsi]\n",
                "vmovdqu8 zmmword ptr [rdi] {{k1}}, zmm10",
            )
        };
    }

    /// Mask of the final `len % 64` bytes for the masked tail vector.
    #[inline(always)]
    fn tail_mask(len: usize) -> u64 {
        (1u64 << (len % 64)).wrapping_sub(1)
    }

    /// How the AVX-512 kernels cut a buffer of `len` bytes whose accesses we align at `p`
    /// (the source when summing, the destination when copying): a head of `head < 64` bytes
    /// up to the first 64-byte boundary of `p`, so that the main loop's 64-byte accesses
    /// there never straddle two cache lines (a split access costs two; summing 64 KiB from
    /// L2 with misaligned loads took twice as long), then chunks of at most `AVX512_CHUNK`
    /// bytes.
    ///
    /// The body then starts at offset `head`. When `head` is odd its words pair the bytes
    /// the other way round, and its sum comes out byte-swapped (RFC 1071 §2(B)); we load
    /// the head one byte early (that byte masked off) so that it pairs the same way, and
    /// swap the folded total once at the end.
    #[derive(Clone, Copy)]
    struct Plan {
        head: usize,
        /// 1 when `head` is odd: the head is loaded and stored from one byte earlier.
        shift: usize,
    }

    impl Plan {
        #[inline(always)]
        fn new(p: *const u8, len: usize) -> Plan {
            let head = head_len(p, 64, len);
            Plan {
                head,
                shift: head & 1,
            }
        }

        /// The mask of the head vector, loaded from `shift` bytes before the data.
        #[inline(always)]
        fn head_mask(self) -> u64 {
            ((1u64 << self.head) - 1) << self.shift
        }

        /// The exact sum from a kernel's lane sum over a body of `body` bytes: every one of
        /// the `body / 64 + 2` vectors owes 16 lanes x 65536 of bias.
        #[inline(always)]
        fn unbias(lanes: i64, body: usize) -> u64 {
            (lanes + (((body / 64) as i64 + 2) << 20)) as u64
        }

        /// The sum in the buffer's word order from the accumulated chunk sums.
        #[inline(always)]
        fn finish(self, acc: u64) -> u64 {
            at_offset(acc, self.head)
        }
    }

    macro_rules! avx512_sum_fn {
        ($(#[$doc:meta])* $name:ident, $step:ident) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// The CPU must support the instructions named above (checked by the caller
            /// with `is_x86_feature_detected!`).
            pub(super) unsafe fn $name(data: &[u8]) -> u64 {
                let len = data.len();
                let plan = Plan::new(data.as_ptr(), len);
                let (mut acc, mut off) = (0, 0);
                let (mut head, mut shift, mut head_mask) = (plan.head, plan.shift, plan.head_mask());
                loop {
                    let body = (len - off - head).min(AVX512_CHUNK);
                    let lanes: i64;
                    // SAFETY: the caller promises the instructions exist. The block reads
                    // `data[off..off + head + body]`: the head by a masked load from
                    // `shift` bytes earlier whose mask leaves out that byte (masked-off
                    // bytes are not accessed, so the pointer one before the slice is never
                    // dereferenced), the body by plain loads and a masked tail. It writes
                    // no memory and declares every register it changes.
                    unsafe {
                        avx512_body!(load_sum, $step,
                            inout("rsi") data.as_ptr().add(off).wrapping_sub(shift) => _,
                            inout("rcx") body => _,
                            in("rdx") tail_mask(body),
                            in("r9") head_mask,
                            in("r10") head + shift,
                            lateout("rax") lanes,
                        );
                    }
                    acc = adc(acc, Plan::unbias(lanes, body));
                    off += head + body;
                    if off == len {
                        return plan.finish(acc);
                    }
                    // Later chunks start 64-byte aligned: no head.
                    (head, shift, head_mask) = (0, 0, 0);
                }
            }
        };
    }

    macro_rules! avx512_copy_fn {
        ($(#[$doc:meta])* $name:ident, $step:ident) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// The CPU must support the instructions named above (checked by the caller
            /// with `is_x86_feature_detected!`).
            pub(super) unsafe fn $name(dst: &mut [u8], src: &[u8]) -> u64 {
                assert_eq!(dst.len(), src.len());
                let len = src.len();
                // Align the stores, as memcpy does: with one of the two pointers
                // misaligned, split stores cost more than split loads (measured on 16
                // and 64 KiB with the source, then the destination, 64-byte aligned).
                let plan = Plan::new(dst.as_ptr(), len);
                let (mut acc, mut off) = (0, 0);
                let (mut head, mut shift, mut head_mask) = (plan.head, plan.shift, plan.head_mask());
                loop {
                    let body = (len - off - head).min(AVX512_CHUNK);
                    let lanes: i64;
                    // SAFETY: the caller promises the instructions exist. The block reads
                    // `src[off..off + head + body]` and writes the same range of `dst`
                    // (same length; a `&mut` slice cannot overlap `src`): the head by a
                    // masked load and store from `shift` bytes earlier whose mask leaves
                    // out that byte (masked-off bytes are not accessed, so the pointers
                    // one before the slices are never dereferenced), the body by plain
                    // loads and stores and a masked tail. It declares every register it
                    // changes.
                    unsafe {
                        avx512_body!(load_copy, $step,
                            inout("rsi") src.as_ptr().add(off).wrapping_sub(shift) => _,
                            inout("rdi") dst.as_mut_ptr().add(off).wrapping_sub(shift) => _,
                            inout("rcx") body => _,
                            in("rdx") tail_mask(body),
                            in("r9") head_mask,
                            in("r10") head + shift,
                            lateout("rax") lanes,
                        );
                    }
                    acc = adc(acc, Plan::unbias(lanes, body));
                    off += head + body;
                    if off == len {
                        return plan.finish(acc);
                    }
                    (head, shift, head_mask) = (0, 0, 0);
                }
            }
        };
    }

    avx512_sum_fn!(
        /// Native-endian sum with AVX-512F + AVX-512BW (`vpmaddwd` + `vpaddd`).
        sum_avx512,
        step_bw
    );
    avx512_sum_fn!(
        /// Native-endian sum with AVX-512F + AVX-512BW + AVX-512 VNNI (`vpdpwssd`).
        sum_avx512vnni,
        step_vnni
    );
    avx512_copy_fn!(
        /// Copy and native-endian sum with AVX-512F + AVX-512BW.
        copy_and_sum_avx512,
        step_bw
    );
    avx512_copy_fn!(
        /// Copy and native-endian sum with AVX-512F + AVX-512BW + AVX-512 VNNI.
        copy_and_sum_avx512vnni,
        step_vnni
    );
}

/// Internal implementations, exposed for the benchmarks in `benches/` only: not part of
/// the API, and may change without notice.
#[doc(hidden)]
pub mod __bench {
    use super::{copy_and_sum_portable, fold64, sum_native_portable};

    /// The shortest buffers `(sum, copy_and_sum)` send to the selected vector code; shorter
    /// ones take the portable code. `(usize::MAX, usize::MAX)` when it is portable.
    pub fn min_len() -> (usize, usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let level = super::x86::level();
            (
                super::x86::min_len(level, false),
                super::x86::min_len(level, true),
            )
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            (usize::MAX, usize::MAX)
        }
    }

    /// One implementation of [`super::sum`] and [`super::copy_and_sum`], with the same
    /// results (folded and in network order).
    #[derive(Clone, Copy, Debug)]
    pub struct Implementation {
        pub name: &'static str,
        pub sum: fn(&[u8]) -> u16,
        pub copy_and_sum: fn(&mut [u8], &[u8]) -> u16,
    }

    fn portable_sum(data: &[u8]) -> u16 {
        fold64(sum_native_portable(data, 0)).swap_bytes()
    }

    fn portable_copy(dst: &mut [u8], src: &[u8]) -> u16 {
        let dst = &mut dst[..src.len()];
        fold64(copy_and_sum_portable(dst, src, 0)).swap_bytes()
    }

    /// Every implementation this CPU can run, portable first, then in the order the
    /// dispatcher prefers them least to most.
    pub fn implementations() -> Vec<Implementation> {
        #[allow(unused_mut)]
        let mut v = vec![Implementation {
            name: "portable",
            sum: portable_sum,
            copy_and_sum: portable_copy,
        }];
        #[cfg(target_arch = "x86_64")]
        v.extend(x86_impls::available());
        v
    }

    /// The implementation [`super::sum`] uses for buffers of at least [`min_len`] bytes.
    pub fn selected() -> &'static str {
        #[cfg(target_arch = "x86_64")]
        {
            match super::x86::level() {
                super::x86::Level::Avx512Vnni => "avx512vnni",
                super::x86::Level::Avx512 => "avx512bw",
                super::x86::Level::Avx2 => "avx2",
                super::x86::Level::Portable => "portable",
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            "portable"
        }
    }

    #[cfg(target_arch = "x86_64")]
    mod x86_impls {
        use super::super::{fold64, x86};
        use super::Implementation;

        // These safe wrappers are reachable only through `available()`, which hands them
        // out only after detecting the features they need.
        macro_rules! wrap {
            ($name:literal, $sum:ident, $copy:ident) => {{
                fn s(data: &[u8]) -> u16 {
                    // SAFETY: only handed out by `available()` when the CPU has the features.
                    fold64(unsafe { x86::$sum(data) }).swap_bytes()
                }
                fn c(dst: &mut [u8], src: &[u8]) -> u16 {
                    let dst = &mut dst[..src.len()];
                    // SAFETY: as above.
                    fold64(unsafe { x86::$copy(dst, src) }).swap_bytes()
                }
                Implementation {
                    name: $name,
                    sum: s,
                    copy_and_sum: c,
                }
            }};
        }

        pub(super) fn available() -> Vec<Implementation> {
            let mut v = Vec::new();
            if x86::has_avx2() {
                v.push(wrap!("avx2", sum_avx2, copy_and_sum_avx2));
            }
            if x86::has_avx512() {
                v.push(wrap!("avx512bw", sum_avx512, copy_and_sum_avx512));
            }
            if x86::has_avx512vnni() {
                v.push(wrap!("avx512vnni", sum_avx512vnni, copy_and_sum_avx512vnni));
            }
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    /// Every implementation this CPU runs (portable always), as the benchmarks see them.
    fn implementations() -> Vec<__bench::Implementation> {
        let v = __bench::implementations();
        // Say which ones ran, so a log shows whether the vector paths were exercised.
        let names: Vec<_> = v.iter().map(|i| i.name).collect();
        eprintln!("checksum implementations under test: {names:?}");
        v
    }

    #[test]
    fn detection_selects_an_available_implementation() {
        let names: Vec<_> = implementations().iter().map(|i| i.name).collect();
        assert!(names.contains(&__bench::selected()), "{names:?}");
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                assert!(names.contains(&"avx2"));
            }
            if is_x86_feature_detected!("avx512bw") {
                assert!(names.contains(&"avx512bw"));
            }
        }
    }

    #[test]
    fn every_implementation_matches_reference_every_length_and_alignment() {
        let impls = implementations();
        let buf = pattern(2000 + 64, 21);
        for align in 0..64 {
            for len in 0..=2000 {
                let d = &buf[align..align + len];
                let want = reference_sum(d);
                for i in &impls {
                    assert_eq!((i.sum)(d), want, "{} len {len} align {align}", i.name);
                }
            }
        }
    }

    #[test]
    fn every_implementation_copies_and_sums_every_length_and_alignment() {
        let impls = implementations();
        let src = pattern(2000 + 64, 23);
        let mut dst = vec![0u8; 2000 + 64];
        for align_src in 0..64 {
            // Every destination alignment too, paired differently with the source's.
            let align_dst = (align_src * 7 + 3) % 64;
            for len in 0..=2000 {
                let s = &src[align_src..align_src + len];
                let want = reference_sum(s);
                for i in &impls {
                    dst.fill(0xaa);
                    // A longer destination: only the front `len` bytes may change.
                    let got = (i.copy_and_sum)(&mut dst[align_dst..], s);
                    assert_eq!(
                        got, want,
                        "{} len {len} align {align_src}/{align_dst}",
                        i.name
                    );
                    assert!(
                        dst[align_dst..align_dst + len] == *s,
                        "{} copy len {len}",
                        i.name
                    );
                    assert!(dst[..align_dst].iter().all(|&b| b == 0xaa), "{}", i.name);
                    assert!(
                        dst[align_dst + len..].iter().all(|&b| b == 0xaa),
                        "{}",
                        i.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_implementation_on_big_and_adversarial_buffers() {
        let impls = implementations();
        const MIB: usize = 1 << 20;
        // Around 64 KiB, and around the chunk lengths at which the vector code flushes its
        // 32-bit lanes (512 KiB for AVX2, 1 MiB for AVX-512), with odd bytes.
        let lens = [
            64 << 10,
            (64 << 10) + 1,
            MIB / 2 - 1,
            MIB / 2 + 33,
            MIB - 1,
            MIB,
            MIB + 1,
            MIB + 63,
            MIB + 64 + 3,
            2 * MIB + 1,
            3 * MIB + 31,
        ];
        let max = 3 * MIB + 31 + 64;
        let data: [(&str, Vec<u8>); 5] = [
            ("pattern", pattern(max, 5)),
            // 0xffff words carry on every addition, and bias to the largest lane value.
            ("all 0xff", vec![0xff; max]),
            // Zero words bias to the smallest lane value; the sum must stay 0, not 0xffff.
            ("all zero", vec![0; max]),
            // 0x8000 words bias to exactly zero.
            (
                "0x80 0x00",
                (0..max)
                    .map(|i| if i % 2 == 0 { 0x80 } else { 0 })
                    .collect(),
            ),
            (
                "0x00 0x80",
                (0..max)
                    .map(|i| if i % 2 == 0 { 0 } else { 0x80 })
                    .collect(),
            ),
        ];
        let mut dst = vec![0u8; max];
        for (what, buf) in &data {
            for &len in &lens {
                for align in [0, 1, 63] {
                    let d = &buf[align..align + len];
                    let want = reference_sum(d);
                    for i in &impls {
                        let ctx = format!("{} {what} len {len} align {align}", i.name);
                        assert_eq!((i.sum)(d), want, "{ctx}");
                        dst[..len].fill(0x5a);
                        assert_eq!((i.copy_and_sum)(&mut dst[3..], d), want, "{ctx}");
                        assert!(dst[3..3 + len] == *d, "{ctx}");
                    }
                    assert_eq!(sum(d), want);
                }
            }
        }
        // Zero only for all-zero data, for every implementation and length.
        for len in 0..=300 {
            for i in &impls {
                assert_eq!((i.sum)(&vec![0; len]), 0, "{} len {len}", i.name);
                let mut ones = vec![0; len];
                if len > 0 {
                    ones[len - 1] = 1;
                    assert_ne!((i.sum)(&ones), 0, "{} len {len}", i.name);
                }
                // Words summing to a multiple of 0xffff give 0xffff, never 0.
                if len >= 4 {
                    let mut v = vec![0; len];
                    v[..4].copy_from_slice(&[0x80, 0x00, 0x7f, 0xff]);
                    assert_eq!((i.sum)(&v), 0xffff, "{} len {len}", i.name);
                }
            }
        }
    }

    #[test]
    fn fold64_matches_folding_sixteen_bits_at_a_time() {
        fn slow(mut acc: u64) -> u16 {
            while acc >> 16 != 0 {
                acc = (acc & 0xffff) + (acc >> 16);
            }
            acc as u16
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let edge = [
            0,
            1,
            0xffff,
            0x1_0000,
            0xffff_ffff,
            1 << 32,
            u64::MAX,
            u64::MAX - 1,
        ];
        for v in edge.into_iter().chain((0..100_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x >> (x % 64)
        })) {
            assert_eq!(fold64(v), slow(v), "{v:#x}");
        }
    }

    type CopyFn = fn(&mut [u8], &[u8]) -> u16;

    /// Bytes biased towards the values that stress carries and the lane bias.
    fn bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![4 => any::<u8>(), 1 => Just(0u8), 1 => Just(0xffu8), 1 => Just(0x80u8)],
            0..max_len,
        )
    }

    proptest! {
        #![proptest_config(ackclock_testkit::proptest_config(400))]

        #[test]
        fn prop_sum_equals_reference(data in bytes(5000), align in 0usize..64) {
            let mut buf = vec![0u8; data.len() + 64];
            buf[align..align + data.len()].copy_from_slice(&data);
            let d = &buf[align..align + data.len()];
            let want = reference_sum(d);
            prop_assert_eq!(sum(d), want);
            for i in __bench::implementations() {
                prop_assert_eq!((i.sum)(d), want, "{}", i.name);
            }
        }

        #[test]
        fn prop_copy_and_sum_copies_exactly(
            data in bytes(5000),
            align_src in 0usize..64,
            align_dst in 0usize..64,
            slack in 0usize..80,
        ) {
            let mut src = vec![0u8; data.len() + 64];
            src[align_src..align_src + data.len()].copy_from_slice(&data);
            let s = &src[align_src..align_src + data.len()];
            let want = reference_sum(s);
            let mut impls = vec![("copy_and_sum", copy_and_sum as CopyFn)];
            impls.extend(__bench::implementations().iter().map(|i| (i.name, i.copy_and_sum)));
            for (name, f) in impls {
                let mut dst = vec![0x3cu8; align_dst + data.len() + slack];
                prop_assert_eq!(f(&mut dst[align_dst..], s), want, "{}", name);
                prop_assert!(dst[align_dst..align_dst + s.len()] == *s, "{}", name);
                prop_assert!(dst[..align_dst].iter().all(|&b| b == 0x3c), "{}", name);
                prop_assert!(dst[align_dst + s.len()..].iter().all(|&b| b == 0x3c), "{}", name);
            }
        }
    }

    proptest! {
        // Fewer, longer buffers: several main-loop iterations and chunk flushes.
        #![proptest_config(ackclock_testkit::proptest_config(24))]

        #[test]
        fn prop_long_buffers(seed in any::<u32>(), len in 0usize..(1 << 21) + 100, align in 0usize..64) {
            let buf = pattern(len + 64, seed);
            let d = &buf[align..align + len];
            let want = reference_sum(d);
            let mut dst = vec![0u8; len];
            prop_assert_eq!(sum(d), want);
            for i in __bench::implementations() {
                prop_assert_eq!((i.sum)(d), want, "{}", i.name);
                prop_assert_eq!((i.copy_and_sum)(&mut dst, d), want, "{}", i.name);
                prop_assert!(dst == d, "{}", i.name);
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
