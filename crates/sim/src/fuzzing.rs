//! Body of the scenario fuzz target (`crates/sim/fuzz`), kept in the library so that a
//! property test runs the same check on stable Rust in CI. Any text must either be a
//! scenario that builds, or an error that names the file: never a panic, and never an
//! allocation failure (a buffer or queue size out of reason is an error, not an abort).
//!
//! Running the built simulation is left out: a valid scenario may ask for any amount of
//! work (a 10^15 b/s Poisson source, a year of simulated time), which is slow, not wrong.

use crate::{build, Scenario};
use std::path::Path;

pub fn scenario(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let file = Path::new("fuzz.toml");
    match Scenario::from_str_named(&text, file) {
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
