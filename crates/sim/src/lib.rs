//! `ackclock-sim`: the deterministic discrete-event network that runs the unchanged
//! ackclock TCP (docs/ARCHITECTURE.md). Same scenario and seed, same bytes out.

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
