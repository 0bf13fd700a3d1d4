//! RFC 8985 RACK-TLP's counters reach a flow's summary (summary.json): request-response
//! flows through a lossy path lose the only segment in flight often, the tail loss a probe
//! (§7.3) repairs before the RTO; with the duplicate-ACK rule no probe is ever sent.

use ackclock_sim::results::FlowSummary;
use ackclock_sim::{build, Scenario};
use std::path::Path;

/// Two request-response flows of `sack` with `overrides` through a path that loses 3 % of
/// packets each way.
fn run(overrides: &str) -> Vec<FlowSummary> {
    let text = format!(
        r#"
name = "rack_tlp"
seed = 11
duration_s = 30
[topology]
kind = "dumbbell"
pairs = 2
access = {{ rate_bps = 100e6, delay_ms = 1 }}
bottleneck = {{ rate_bps = 10e6, delay_ms = 20, impair = {{ loss_prob = 0.03 }} }}
[topology.flows]
tcp = "sack"
tcp_overrides = {{ {overrides} }}
app = {{ kind = "request_response", request_bytes = 3000, response_bytes = 3000, count = 200 }}
"#
    );
    let s = Scenario::from_str_named(&text, Path::new("rack_tlp.toml")).unwrap();
    build(&s, None).unwrap().run(|_| {}).summary.flows
}

#[test]
fn tail_loss_probes_are_counted_in_the_flow_summary() {
    let flows = run(r#"loss_detection = "rack-tlp""#);
    let probes: u64 = flows.iter().map(|f| f.tlp_probes).sum();
    assert!(probes > 0, "{flows:?}");
    for f in &flows {
        assert!(f.tlp_recoveries <= f.tlp_probes, "{f:?}");
    }
    // The preset's own rule, the duplicate-ACK threshold (RFC 5681 §3.2): no probe, no
    // reordering timer.
    for f in run("") {
        assert_eq!(
            (f.tlp_probes, f.tlp_recoveries, f.rack_reorder_timeouts),
            (0, 0, 0),
            "{f:?}"
        );
    }
}
