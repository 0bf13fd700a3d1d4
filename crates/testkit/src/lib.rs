//! Test support shared by the ackclock crates. A dev-dependency only: nothing here reaches
//! a release build.
//!
//! - [`proptest_config`](mod@proptest_config): the one configuration every property test
//!   uses, so that `cargo test` is deterministic (fixed seed, committed regression cases, no
//!   file written) while a developer can still explore with fresh random cases on demand.
//! - [`pair`]: two `ackclock_tcp` endpoints on an in-memory path (the gateway's link and
//!   impairment models: delay, rate, loss, reordering, duplication, corruption; a drop-tail
//!   limit and scripted drops), driven in simulated time: the engine's scenario and
//!   property tests.
//! - [`peer`]: a packetdrill-style scripted peer facing one endpoint under test: the
//!   engine's conformance tests.
//! - [`fuzzing`]: the body of the engine's segment-input fuzz target, shared with its
//!   property test.
//! - [`trace`]: queries over a connection's trace (where an event happened, what was sent
//!   between two events).
//! - At the top: [`bytes`] (reproducible test data), [`TempDir`] (a temporary directory
//!   removed when dropped), [`repo_root`] and [`repo_scenarios`] (every scenario file in
//!   the repository, for the tests that check them all).
//!
//! testkit depends on `ackclock-tcp`, and the engine dev-depends on testkit: its
//! integration tests, benchmarks and examples may use both, but its unit tests (inside
//! `crates/tcp/src`) must not hand engine types to testkit, which links another copy of the
//! engine.

#![warn(missing_docs)]

pub mod fuzzing;
pub mod pair;
pub mod peer;
pub mod proptest_config;
pub mod trace;

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

/// A fresh directory under the system's temporary directory, named after the process and
/// `name`, removed when dropped, also when the test using it panics: test runs leave
/// nothing behind. Derefs to its path.
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    /// Creates `<tmp>/ackclock-<name>-<pid>`, empty.
    pub fn new(name: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("ackclock-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("create a temporary directory");
        TempDir(d)
    }

    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
