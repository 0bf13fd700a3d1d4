//! Test support shared by the ackclock crates. A dev-dependency only: nothing here reaches
//! a release build.
//!
//! - [`proptest_config`]: the one configuration every property test uses, so that
//!   `cargo test` is deterministic (fixed seed, committed regression cases, no file written)
//!   while a developer can still explore with fresh random cases on demand.
//! - [`bytes`]: reproducible test data.

pub mod proptest_config;

pub use proptest_config::proptest_config;

/// `n` reproducible pseudo-random bytes (xorshift64), different for each `seed`: test data
/// whose corruption or reordering a comparison will catch.
pub fn bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}
