//! Body of the scenario fuzz target (`crates/sim/fuzz`), kept in the library so that a
//! property test runs the same check on stable Rust in CI. Any text must either be a
//! scenario that builds, or an error that names the file: never a panic, and never an
//! allocation failure (a buffer or queue size out of reason is an error, not an abort).
//!
//! Running the built simulation is left out: a valid scenario may ask for any amount of
//! work, which is slow, not wrong. What a scenario may cost is bounded by a budget (as
//! `ackclock sim` bounds it), so building never allocates without limit either.

use crate::cost::Budget;
use crate::{build, Scenario};
use std::path::Path;

/// 1 GiB and a billion events: any scenario within it builds in well under a second.
pub const FUZZ_BUDGET: Budget = Budget {
    max_memory_bytes: 1 << 30,
    max_events: 1_000_000_000,
    memory_source: std::borrow::Cow::Borrowed("the fuzz budget"),
};

/// One input of the fuzz target: `data`, decoded as UTF-8 (invalid bytes replaced), is read
/// as the scenario file `fuzz.toml` within [`FUZZ_BUDGET`]. An error must start with the
/// file's name; a scenario that reads must build, or fail with a message. Panics when one of
/// those does not hold (that is the finding).
pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let file = Path::new("fuzz.toml");
    match Scenario::from_str_within(&text, file, &FUZZ_BUDGET) {
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("fuzz.toml"),
                "error without the file: {msg}"
            );
        }
        Ok(s) => {
            if let Err(e) = build(&s, None) {
                assert!(!e.is_empty());
            }
        }
    }
}
