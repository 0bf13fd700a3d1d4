//! Deterministic property tests in CI, random exploration on demand.
//!
//! By default (what `cargo test` and CI run) every property test:
//! - draws its cases from a fixed seed, so a run on a fresh clone tests exactly what the
//!   last run tested, and a pass means the same thing every time;
//! - first replays the cases committed in its `*.proptest-regressions` file (every crash a
//!   random run once found);
//! - never writes a regression file: a failing run leaves the checkout as it was.
//!
//! Exploration, before every submission and whenever a parser or the engine changes:
//!
//! ```sh
//! ACKCLOCK_PROPTEST_SCALE=100 cargo test --workspace           # 100x the cases, fresh seed
//! ACKCLOCK_PROPTEST_SCALE=100 ACKCLOCK_PROPTEST_SEED=7 cargo test -p ackclock-sim
//! ```
//!
//! `ACKCLOCK_PROPTEST_SCALE=N` multiplies every test's case count by N and draws a random
//! seed (printed by proptest on failure; `ACKCLOCK_PROPTEST_SEED` fixes it instead). In this
//! mode a failure is saved to the test's regression file next to the test source: fix the
//! bug, keep the file's new line (it is then replayed by every CI run) and add a named
//! regression test for the rule it broke.

use proptest::test_runner::{
    Config, FailurePersistence, FileFailurePersistence, PersistedSeed, RngSeed,
};
use std::any::Any;
use std::fmt;

/// The seed of every deterministic run. Changing it changes which cases CI tests; there is
/// no reason to, except to look at a different fixed sample on purpose.
pub const CI_SEED: u64 = 0xac_c10c_1987;

/// What the environment asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Mode {
    /// Case-count multiplier; `None` is the deterministic CI mode.
    scale: Option<u32>,
    seed: RngSeed,
}

impl Mode {
    fn from_env() -> Mode {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let scale = var("ACKCLOCK_PROPTEST_SCALE").map(|v| {
            v.trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .unwrap_or_else(|| {
                    panic!("ACKCLOCK_PROPTEST_SCALE={v:?}: expected a whole number >= 1, e.g. 100")
                })
        });
        let seed = match var("ACKCLOCK_PROPTEST_SEED") {
            Some(v) => RngSeed::Fixed(v.trim().parse().unwrap_or_else(|_| {
                panic!("ACKCLOCK_PROPTEST_SEED={v:?}: expected a whole number, e.g. 7")
            })),
            None if scale.is_some() => RngSeed::Random,
            None => RngSeed::Fixed(CI_SEED),
        };
        Mode { scale, seed }
    }
}

/// The configuration for a property test that runs `cases` cases in CI.
///
/// ```
/// use proptest::prelude::*;
///
/// proptest! {
///     #![proptest_config(ackclock_testkit::proptest_config(64))]
///     // (#[test] in a test file)
///     fn reversing_twice_changes_nothing(v in proptest::collection::vec(any::<u8>(), 0..64)) {
///         let mut w = v.clone();
///         w.reverse();
///         w.reverse();
///         prop_assert_eq!(v, w);
///     }
/// }
/// # fn main() { reversing_twice_changes_nothing(); }
/// ```
pub fn proptest_config(cases: u32) -> Config {
    config_for(Mode::from_env(), cases)
}

fn config_for(mode: Mode, cases: u32) -> Config {
    Config {
        cases: cases.saturating_mul(mode.scale.unwrap_or(1)),
        rng_seed: mode.seed,
        failure_persistence: Some(Box::new(CommittedCases {
            save: mode.scale.is_some(),
        })),
        ..Config::default()
    }
}

/// proptest's own regression files (`tests/x.rs` -> `tests/x.proptest-regressions`), read
/// in every mode and written only while exploring.
#[derive(Clone, Debug, PartialEq)]
struct CommittedCases {
    save: bool,
}

const FILES: FileFailurePersistence =
    FileFailurePersistence::SourceParallel("proptest-regressions");

impl FailurePersistence for CommittedCases {
    fn load_persisted_failures2(&self, source_file: Option<&'static str>) -> Vec<PersistedSeed> {
        FILES.load_persisted_failures2(source_file)
    }

    fn save_persisted_failure2(
        &mut self,
        source_file: Option<&'static str>,
        seed: PersistedSeed,
        shrunken_value: &dyn fmt::Debug,
    ) {
        if self.save {
            let mut files = FILES;
            files.save_persisted_failure2(source_file, seed, shrunken_value);
        }
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other
            .as_any()
            .downcast_ref::<Self>()
            .is_some_and(|o| o == self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_mode_is_a_fixed_seed_that_never_writes() {
        let mode = Mode {
            scale: None,
            seed: RngSeed::Fixed(CI_SEED),
        };
        let c = config_for(mode, 300);
        assert_eq!(c.cases, 300);
        assert_eq!(c.rng_seed, RngSeed::Fixed(CI_SEED));
        let p = c.failure_persistence.expect("committed cases are replayed");
        let p = p.as_any().downcast_ref::<CommittedCases>().expect("ours");
        assert!(!p.save);
    }

    #[test]
    fn exploring_multiplies_the_cases_and_saves_failures() {
        let mode = Mode {
            scale: Some(100),
            seed: RngSeed::Random,
        };
        let c = config_for(mode, 300);
        assert_eq!(c.cases, 30_000);
        assert_eq!(c.rng_seed, RngSeed::Random);
        let p = c.failure_persistence.expect("persistence");
        assert!(
            p.as_any()
                .downcast_ref::<CommittedCases>()
                .expect("ours")
                .save
        );
    }

    #[test]
    fn saving_in_ci_mode_writes_nothing() {
        let dir = std::env::temp_dir().join(format!("ackclock-testkit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src: &'static str = Box::leak(
            dir.join("t.rs")
                .to_string_lossy()
                .into_owned()
                .into_boxed_str(),
        );
        let mut p = CommittedCases { save: false };
        let seed: PersistedSeed =
            "cc 6cc5a309f7010dab075a3a513fba25943c4711a2f46b4aa92c3338aa3844adea"
                .parse()
                .unwrap_or_else(|_| panic!("a persisted seed"));
        p.save_persisted_failure2(Some(src), seed, &"value");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(left.is_empty(), "a CI-mode run wrote {left:?}");
    }
}
