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

/// The repository's root (testkit sits at `crates/testkit`).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every scenario file in the repository, sorted: the examples in `scenarios/` and the
/// reproduction suite's, one directory per experiment under `crates/lab/src/experiments/`.
pub fn repo_scenarios() -> Vec<std::path::PathBuf> {
    let root = repo_root();
    let mut dirs = vec![root.join("scenarios")];
    if let Ok(rd) = std::fs::read_dir(root.join("crates/lab/src/experiments")) {
        dirs.extend(rd.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    let mut files: Vec<_> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        // An experiment's claims.toml holds its published claims, not a scenario.
        .filter(|p| p.file_name().is_none_or(|n| n != "claims.toml"))
        .collect();
    files.sort();
    files
}
