//! `ackclock-sim`: the deterministic discrete-event network that runs the unchanged
//! ackclock TCP (docs/ARCHITECTURE.md, "From a scenario file to a run"). Same scenario and
//! seed, same bytes out.
//!
//! A run goes through the modules in this order:
//!
//! 1. [`scenario`]: the TOML file (docs/SCENARIOS.md) parsed into a [`Scenario`]; errors
//!    are [`ScenarioError`]s with the file, the line and the field.
//! 2. [`resolve`]: the `[topology]` shortcuts expanded and every value checked against the
//!    ranges of [`limits`]; [`locate`] maps a field's path back to its line.
//! 3. [`cost`]: the run's memory and events predicted, so that a run beyond a
//!    [`cost::Budget`] is refused before it starts.
//! 4. [`build()`]: the [`net::Network`] of hosts (each with an engine `Endpoint`), routers,
//!    link directions, applications and cross traffic, as a [`Simulation`].
//! 5. [`Simulation::run`]: the event queue run to the scenario's end ([`net`], with the
//!    packets of [`packet`]), and its [`RunResult`]: the [`RunSummary`] of every flow and
//!    link, traces, queue samples and captures ([`results`]).
//!
//! ```
//! use ackclock_sim::{build, Scenario};
//! use std::path::Path;
//!
//! // 100 kB from h1 to h2 over one 10 Mb/s link with 1 ms of delay each way.
//! const TEXT: &str = r#"
//! duration_s = 1
//!
//! [[node]]
//! name = "h1"
//! [[node]]
//! name = "h2"
//!
//! [[link]]
//! a = "h1"
//! b = "h2"
//! rate_bps = 10e6
//! delay_ms = 1
//!
//! [[flow]]
//! from = "h1"
//! to = "h2"
//! tcp = "newreno"
//! app = { kind = "bulk", bytes = 100000 }
//! "#;
//!
//! let s = Scenario::from_str_named(TEXT, Path::new("x.toml")).unwrap();
//! let result = build(&s, None).unwrap().run(|_| {});
//! let flow = &result.summary.flows[0];
//! assert_eq!(flow.name, "flow0");
//! assert_eq!(flow.bytes_delivered, 100_000);
//! assert!(flow.completed_s.is_some());
//! ```

#![warn(missing_docs)]

pub mod build;
pub mod cost;
pub mod fuzzing;
pub mod limits;
pub mod locate;
pub mod net;
pub mod packet;
pub mod resolve;
pub mod results;
pub mod scenario;

pub use build::{build, component_seed, Simulation};
pub use results::{RunResult, RunSummary};
pub use scenario::{Scenario, ScenarioError};
