//! The reproduction suite of ackclock: the seeds' experiments re-run in the simulator.
//!
//! Each experiment (under `experiments/`, one directory each) varies an embedded scenario,
//! runs it in the simulator, judges the claims the seed or paper makes against our numbers
//! (pass, fail, disagree with the reason, or report), and renders a section of the report:
//! the seed's words, the setup, tables, plots and a discussion. A disagreement is reported
//! with its reason, never tuned away.
//!
//! `ackclock repro` calls [`run`]; so do the snapshot tests, in quick mode.

pub mod claims;
pub mod experiments;
pub mod plots;
pub mod report;
pub mod stats;
pub mod suite;
pub mod text;

pub use claims::{ClaimSpec, Judge};
pub use suite::{
    run, ClaimResult, Ctx, Experiment, Files, Options, Outcome, Params, Rendered, Runnable,
    Section, Table, Verdict,
};
pub use text::Text;
