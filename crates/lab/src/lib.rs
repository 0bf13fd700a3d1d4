//! The reproduction suite of ackclock: the experiments of the seed messages re-run in the simulator.
//!
//! Each experiment (under `experiments/`, one directory each) varies an embedded scenario,
//! runs it in the simulator, judges the claims the seed message or paper makes against our numbers
//! (pass, fail, disagree with the reason, or report), and renders a section of the report:
//! the seed message's words, the setup, tables, plots and a discussion. A disagreement is reported
//! with its reason, never tuned away.
//!
//! The suite is driven through [`Options`]: which experiments ([`suite::select`] lists them
//! by the names `--only` takes), quick or full, how many RNG seeds per stochastic
//! configuration, and whether to render the report's sections or only judge the claims.
//! `ackclock repro` calls [`run_with`] (with its command line and progress bar); the
//! snapshot tests call [`run`] in quick mode. Either writes `index.html`, `claims.json`,
//! `run.json` and one directory per experiment under [`Options::out`], and returns the
//! [`Outcome`].
//!
//! ```
//! use ackclock_lab::{suite, Options, Verdict};
//!
//! // The experiments, in report order.
//! let names: Vec<&str> = suite::select(None)?.iter().map(|e| e.name()).collect();
//! assert_eq!(names.len(), 21);
//!
//! // One of them, shortened and judged without rendering, into a temporary directory.
//! let out = std::env::temp_dir().join(format!("ackclock-lab-doc-{}", std::process::id()));
//! let opts = Options {
//!     out: out.clone(),
//!     only: Some(vec!["fast_recovery".to_string()]),
//!     quick: true,
//!     seeds: 1,
//!     render: false,
//! };
//! let runs = suite::planned_runs(&opts)?;
//! let outcome = ackclock_lab::run(&opts, &|done| assert!(done <= runs))?;
//! for c in outcome.claims() {
//!     println!("{}: {} [{}]", c.spec.id, c.ours, c.verdict.word());
//! }
//! assert!(outcome.claims().count() > 0);
//! assert!(out.join("claims.json").exists());
//! std::fs::remove_dir_all(&out)?;
//! # Ok::<(), anyhow::Error>(())
//! ```

#![warn(missing_docs)]

pub mod claims;
pub mod experiments;
pub mod gateways;
pub mod plots;
pub mod progress;
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
