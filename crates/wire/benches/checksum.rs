//! Throughput of the Internet checksum and of checksum-and-copy, against memory-bandwidth
//! baselines measured in the same run: a read-sum (the cheapest loop that reads every byte:
//! wrapping sum of u64 words, in its fastest form on this CPU) and a memcpy.
//!
//! Groups `sum/<size>` and `copy/<size>` for 64 B, 1500 B, 64 KiB and 64 MiB, on buffers
//! that start on a 64-byte boundary, and `sum_unaligned` and `copy_unaligned` for 1500 B and
//! 64 KiB at the offsets of a real packet's payload. Criterion prints throughput in GiB/s;
//! BENCHMARKS.md reports GB/s (1e9 bytes/s) computed from the median times.
//!
//! `ACKCLOCK_BENCH_CROSSOVER=1 cargo bench -p ackclock-wire --bench checksum -- crossover`
//! adds the small sizes used to choose the crossover lengths (`__bench::min_len`).

use ackclock_wire::checksum::{self, __bench};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use std::hint::black_box;
use std::time::Duration;

const SIZES: [(usize, &str); 4] = [
    (64, "64B"),
    (1500, "1500B"),
    (64 << 10, "64KiB"),
    (64 << 20, "64MiB"),
];

/// A buffer of `len` pseudo-random bytes starting on a 64-byte boundary (so that every
/// implementation and baseline sees the same alignment), inside a `Vec` we keep alive.
struct Buf {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl Buf {
    fn new(len: usize, seed: u64) -> Buf {
        Buf::at(len, seed, 0)
    }

    /// As `new` but starting `offset` bytes after a 64-byte boundary.
    fn at(len: usize, seed: u64, offset: usize) -> Buf {
        let mut storage = vec![0u8; len + 128];
        let start = storage.as_ptr().align_offset(64) + offset;
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for b in &mut storage[start..start + len] {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = (x >> 32) as u8;
        }
        Buf {
            storage,
            start,
            len,
        }
    }
    fn get(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

// ---------------------------------------------------------------------------------------
// Read-sum baselines: wrapping sum of the little-endian u64 words (a trailing partial word
// is ignored). Each is as fast as we could make it; the yardstick is the fastest of them.

/// Plain Rust; LLVM vectorizes it for the baseline x86-64 target (SSE2).
#[inline(always)]
fn readsum_words(data: &[u8]) -> u64 {
    data.chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .fold(0u64, u64::wrapping_add)
}

fn readsum_sse2(data: &[u8]) -> u64 {
    readsum_words(data)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::asm;

    /// The same Rust loop compiled for AVX2: LLVM unrolls it into four independent 256-bit
    /// accumulators (two loads per cycle).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn readsum_avx2(data: &[u8]) -> u64 {
        super::readsum_words(data)
    }

    /// AVX-512: eight 512-bit accumulators, `vpaddq` with a memory operand (one load and
    /// one add per 64 bytes), the remainder in 256/128/64-byte steps and the last whole
    /// words by one masked add. In `asm!` because `#[target_feature(enable = "avx512f")]`
    /// and the AVX-512 intrinsics need Rust 1.89 and the workspace's MSRV is 1.85.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    pub unsafe fn readsum_avx512(data: &[u8]) -> u64 {
        let len = data.len() & !7;
        // The whole words after the last 64-byte vector, as a mask of u64 lanes.
        let tail_words = (1u32 << ((len % 64) / 8)) - 1;
        let sum: u64;
        // SAFETY: the caller promises AVX-512F. The block reads `len <= data.len()` bytes
        // from `data` (the last words by a masked add, which does not touch masked-off
        // lanes) and writes no memory; `clobber_abi("C")` covers every vector and mask
        // register it uses.
        unsafe {
            asm!(
                "vpxor xmm0, xmm0, xmm0",
                "vpxor xmm1, xmm1, xmm1",
                "vpxor xmm2, xmm2, xmm2",
                "vpxor xmm3, xmm3, xmm3",
                "vpxor xmm4, xmm4, xmm4",
                "vpxor xmm5, xmm5, xmm5",
                "vpxor xmm6, xmm6, xmm6",
                "vpxor xmm7, xmm7, xmm7",
                "cmp rcx, 512",
                "jb 3f",
                ".p2align 4",
                "2:",
                "vpaddq zmm0, zmm0, zmmword ptr [rsi]",
                "vpaddq zmm1, zmm1, zmmword ptr [rsi + 64]",
                "vpaddq zmm2, zmm2, zmmword ptr [rsi + 128]",
                "vpaddq zmm3, zmm3, zmmword ptr [rsi + 192]",
                "vpaddq zmm4, zmm4, zmmword ptr [rsi + 256]",
                "vpaddq zmm5, zmm5, zmmword ptr [rsi + 320]",
                "vpaddq zmm6, zmm6, zmmword ptr [rsi + 384]",
                "vpaddq zmm7, zmm7, zmmword ptr [rsi + 448]",
                "add rsi, 512",
                "sub rcx, 512",
                "cmp rcx, 512",
                "jae 2b",
                "3:",
                "test ecx, 256",
                "jz 4f",
                "vpaddq zmm0, zmm0, zmmword ptr [rsi]",
                "vpaddq zmm1, zmm1, zmmword ptr [rsi + 64]",
                "vpaddq zmm2, zmm2, zmmword ptr [rsi + 128]",
                "vpaddq zmm3, zmm3, zmmword ptr [rsi + 192]",
                "add rsi, 256",
                "4:",
                "test ecx, 128",
                "jz 5f",
                "vpaddq zmm4, zmm4, zmmword ptr [rsi]",
                "vpaddq zmm5, zmm5, zmmword ptr [rsi + 64]",
                "add rsi, 128",
                "5:",
                "test ecx, 64",
                "jz 6f",
                "vpaddq zmm6, zmm6, zmmword ptr [rsi]",
                "add rsi, 64",
                "6:",
                "kmovw k1, edx",
                "vpaddq zmm7 {{k1}}, zmm7, zmmword ptr [rsi]",
                "vpaddq zmm0, zmm0, zmm1",
                "vpaddq zmm2, zmm2, zmm3",
                "vpaddq zmm4, zmm4, zmm5",
                "vpaddq zmm6, zmm6, zmm7",
                "vpaddq zmm0, zmm0, zmm2",
                "vpaddq zmm4, zmm4, zmm6",
                "vpaddq zmm0, zmm0, zmm4",
                "vextracti64x4 ymm1, zmm0, 1",
                "vpaddq ymm0, ymm0, ymm1",
                "vextracti128 xmm1, ymm0, 1",
                "vpaddq xmm0, xmm0, xmm1",
                "vpshufd xmm1, xmm0, 0x4e",
                "vpaddq xmm0, xmm0, xmm1",
                "vmovq rax, xmm0",
                "vzeroupper",
                inout("rsi") data.as_ptr() => _,
                inout("rcx") len => _,
                in("edx") tail_words,
                lateout("rax") sum,
                clobber_abi("C"),
                options(nostack),
            );
        }
        sum
    }
}

type ReadSum = fn(&[u8]) -> u64;

/// The read-sum variants this CPU runs.
fn readsums() -> Vec<(&'static str, ReadSum)> {
    #[allow(unused_mut)]
    let mut v: Vec<(&'static str, ReadSum)> = vec![("readsum_sse2", readsum_sse2)];
    #[cfg(target_arch = "x86_64")]
    {
        fn avx2(d: &[u8]) -> u64 {
            // SAFETY: only listed when AVX2 was detected.
            unsafe { x86::readsum_avx2(d) }
        }
        fn avx512(d: &[u8]) -> u64 {
            // SAFETY: only listed when AVX-512F was detected.
            unsafe { x86::readsum_avx512(d) }
        }
        if is_x86_feature_detected!("avx2") {
            v.push(("readsum_avx2", avx2));
        }
        if is_x86_feature_detected!("avx512f") {
            v.push(("readsum_avx512", avx512));
        }
    }
    v
}

/// Short runs, so that the whole suite takes a few minutes: enough samples for a stable
/// median on small sizes, few on 64 MiB (each iteration there takes milliseconds).
fn configure(g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, len: usize) {
    g.throughput(Throughput::Bytes(len as u64));
    g.warm_up_time(Duration::from_millis(300));
    if len >= 16 << 20 {
        g.sample_size(10)
            .measurement_time(Duration::from_millis(2500));
    } else {
        g.sample_size(50)
            .measurement_time(Duration::from_millis(1500));
    }
}

fn bench_sum(c: &mut Criterion) {
    let (sum_min, copy_min) = __bench::min_len();
    eprintln!(
        "checksum: dispatch selects {:?} from {sum_min} bytes (sum) and {copy_min} bytes \
         (copy_and_sum)",
        __bench::selected(),
    );
    for (len, label) in SIZES {
        let buf = Buf::new(len, 1);
        let data = buf.get();
        let mut g = c.benchmark_group(format!("sum/{label}"));
        configure(&mut g, len);
        for (name, f) in readsums() {
            g.bench_function(name, |b| b.iter(|| f(black_box(data))));
        }
        g.bench_function("reference_sum", |b| {
            b.iter(|| checksum::reference_sum(black_box(data)))
        });
        g.bench_function("sum", |b| b.iter(|| checksum::sum(black_box(data))));
        for i in __bench::implementations() {
            let f = i.sum;
            g.bench_function(i.name, |b| b.iter(|| f(black_box(data))));
        }
        g.finish();
    }
}

fn bench_copy(c: &mut Criterion) {
    for (len, label) in SIZES {
        let src = Buf::new(len, 2);
        let mut dst = Buf::new(len, 3);
        let s = src.get();
        let mut g = c.benchmark_group(format!("copy/{label}"));
        configure(&mut g, len);
        g.bench_function("memcpy", |b| {
            b.iter(|| black_box(dst.get_mut()).copy_from_slice(black_box(s)))
        });
        g.bench_function("copy_and_sum", |b| {
            b.iter(|| checksum::copy_and_sum(black_box(dst.get_mut()), black_box(s)))
        });
        for i in __bench::implementations() {
            let f = i.copy_and_sum;
            g.bench_function(i.name, |b| {
                b.iter(|| f(black_box(dst.get_mut()), black_box(s)))
            });
        }
        g.finish();
    }
}

/// The same at realistic, unaligned offsets: the payload of a TCP segment with timestamps
/// starts 52 bytes into the IP packet; the copy's destination is one byte off a boundary.
/// The vector code aligns its own loads (sum) or stores (copy); the baselines are shown at
/// the same offsets.
fn bench_unaligned(c: &mut Criterion) {
    for (len, label) in [SIZES[1], SIZES[2]] {
        let buf = Buf::at(len, 6, 52);
        let data = buf.get();
        let mut g = c.benchmark_group(format!("sum_unaligned/{label}"));
        configure(&mut g, len);
        for (name, f) in readsums() {
            g.bench_function(name, |b| b.iter(|| f(black_box(data))));
        }
        g.bench_function("sum", |b| b.iter(|| checksum::sum(black_box(data))));
        g.finish();

        let mut dst = Buf::at(len, 7, 1);
        let mut g = c.benchmark_group(format!("copy_unaligned/{label}"));
        configure(&mut g, len);
        g.bench_function("memcpy", |b| {
            b.iter(|| black_box(dst.get_mut()).copy_from_slice(black_box(data)))
        });
        g.bench_function("copy_and_sum", |b| {
            b.iter(|| checksum::copy_and_sum(black_box(dst.get_mut()), black_box(data)))
        });
        g.finish();
    }
}

/// Small sizes around the portable/vector crossover; only with ACKCLOCK_BENCH_CROSSOVER set.
fn bench_crossover(c: &mut Criterion) {
    if std::env::var_os("ACKCLOCK_BENCH_CROSSOVER").is_none() {
        return;
    }
    for len in [32usize, 64, 96, 128, 192, 256, 384, 512] {
        let src = Buf::new(len, 4);
        let mut dst = Buf::new(len, 5);
        let s = src.get();
        let mut g = c.benchmark_group(format!("crossover/{len}B"));
        g.throughput(Throughput::Bytes(len as u64));
        g.warm_up_time(Duration::from_millis(300));
        g.sample_size(30).measurement_time(Duration::from_secs(1));
        for i in __bench::implementations() {
            let (f, cp) = (i.sum, i.copy_and_sum);
            g.bench_function(format!("sum_{}", i.name), |b| b.iter(|| f(black_box(s))));
            g.bench_function(format!("copy_{}", i.name), |b| {
                b.iter(|| cp(black_box(dst.get_mut()), black_box(s)))
            });
        }
        g.finish();
    }
}

/// Every implementation and baseline agrees before anything is timed.
fn check(_: &mut Criterion) {
    let rs = readsums();
    for len in [0, 7, 8, 64, 1500, 4095, 100_003] {
        let buf = Buf::new(len, 9);
        let d = buf.get();
        let want = checksum::reference_sum(d);
        let mut out = vec![0u8; d.len()];
        for i in __bench::implementations() {
            assert_eq!((i.sum)(d), want, "{} len {len}", i.name);
            assert_eq!((i.copy_and_sum)(&mut out, d), want, "{} len {len}", i.name);
            assert_eq!(out, d, "{} len {len}", i.name);
        }
        for (name, f) in &rs {
            assert_eq!(f(d), rs[0].1(d), "{name} len {len}");
        }
    }
}

criterion_group! {
    name = benches;
    // No plots: they take longer than the measurements; the numbers are in
    // target/criterion/*/new/estimates.json and on the console.
    config = Criterion::default().without_plots();
    targets = check, bench_sum, bench_copy, bench_unaligned, bench_crossover
}
criterion_main!(benches);
