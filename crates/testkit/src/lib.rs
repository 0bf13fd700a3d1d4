//! Test support shared by the ackclock crates. A dev-dependency only: nothing here reaches
//! a release build.
//!
//! - [`proptest_config`]: the one configuration every property test uses, so that
//!   `cargo test` is deterministic (fixed seed, committed regression cases, no file written)
//!   while a developer can still explore with fresh random cases on demand.

pub mod proptest_config;

pub use proptest_config::proptest_config;
