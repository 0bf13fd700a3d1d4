//! The reproduction suite of ackclock: the experiments of the seed messages re-run in the simulator.
//!
//! Each experiment (under `experiments/`, one directory each) varies an embedded scenario,
//! runs it in the simulator, judges the claims the seed message or paper makes against our numbers
//! (pass, fail, disagree with the reason, or report), and renders a section of the report:
//! the seed message's words, the setup, tables, plots and a discussion. A disagreement is reported
//! with its reason, never tuned away.
//!
//! `ackclock repro` calls [`run`]; so do the snapshot tests, in quick mode.

pub mod claims;
pub mod experiments;
pub mod gateways;
pub mod plots;
pub mod report;
pub mod runinfo;
pub mod stats;
pub mod suite;
pub mod text;

pub use claims::{ClaimSpec, Judge, Ours};
pub use runinfo::RunInfo;
pub use suite::{
    run, run_with, ClaimResult, Ctx, Experiment, Figure, Files, Options, Outcome, Params, PerSeed,
    Progress, Rendered, Runnable, Section, Table, Verdict,
};
pub use text::Text;
