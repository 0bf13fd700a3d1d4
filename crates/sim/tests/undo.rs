//! The undo counters reach a flow's summary (summary.json): a bulk flow of the `linux`
//! preset (SACK and D-SACK, RFC 2883) with the duplicate-ACK rule, through a path that holds
//! back 2 % of packets by 15 ms, makes needless fast retransmits that D-SACK reveals (RFC
//! 3708 §3); with `undo` their reductions are undone (`spurious_recoveries`, `undos`),
//! without it (nor F-RTO, RFC 5682) nothing is undone.

use ackclock_sim::results::FlowSummary;
use ackclock_sim::{build, Scenario};
use std::path::Path;

/// A bulk flow of `linux` with the duplicate-ACK rule and `overrides` through a path that
/// reorders 2 % of packets.
fn run(overrides: &str) -> FlowSummary {
    let text = format!(
        r#"
name = "undo"
seed = 5
duration_s = 20
[topology]
kind = "dumbbell"
pairs = 1
access = {{ rate_bps = 100e6, delay_ms = 1 }}
bottleneck = {{ rate_bps = 10e6, delay_ms = 20, impair = {{ reorder = {{ prob = 0.02, delay_ms = 15 }} }} }}
[topology.flows]
tcp = "linux"
tcp_overrides = {{ loss_detection = "dupack", {overrides} }}
app = {{ kind = "bulk" }}
"#
    );
    let s = Scenario::from_str_named(&text, Path::new("undo.toml")).unwrap();
    let mut flows = build(&s, None).unwrap().run(|_| {}).summary.flows;
    assert_eq!(flows.len(), 1);
    flows.remove(0)
}

#[test]
fn needless_recoveries_are_counted_and_undone_in_the_flow_summary() {
    let f = run("undo = true, frto = false");
    assert!(f.spurious_recoveries > 0, "{f:?}");
    assert!(f.undos >= f.spurious_recoveries, "{f:?}");
    // Off (every preset's default but linux's): the same D-SACKs come, nothing is undone.
    let f = run("undo = false, frto = false");
    assert_eq!((f.spurious_recoveries, f.undos), (0, 0), "{f:?}");
}
