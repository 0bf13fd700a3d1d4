//! ECN end to end in the simulator (RFC 3168): TCPs that negotiate it, gateways that mark
//! instead of dropping (RED, CoDel, FQ-CoDel, drop-tail's step marker), the marks echoed and
//! answered. Against the same flows without ECN, the marking gateways drop.

use ackclock_sim::{build, RunResult, Scenario};
use std::path::Path;

/// Two long-lived NewReno flows through a 10 Mbit/s, 20 ms bottleneck with `queue`; `ecn`
/// at both ends of each flow or not.
fn run(queue: &str, ecn: bool) -> RunResult {
    let text = format!(
        r#"
name = "ecn"
seed = 7
duration_s = 20
[topology]
kind = "dumbbell"
pairs = 2
access = {{ rate_bps = 100e6, delay_ms = 1 }}
bottleneck = {{ rate_bps = 10e6, delay_ms = 20, queue = {queue} }}
[topology.flows]
tcp = "newreno"
tcp_overrides = {{ ecn = {ecn} }}
app = {{ kind = "bulk" }}
"#
    );
    let s = Scenario::from_str_named(&text, Path::new("ecn.toml")).unwrap();
    build(&s, None).unwrap().run(|_| {})
}

fn bottleneck(r: &RunResult) -> &ackclock_sim::results::LinkSummary {
    r.summary
        .links
        .iter()
        .find(|l| l.name == "gw_left-gw_right")
        .expect("the bottleneck")
}

const QUEUES: [&str; 4] = [
    r#"{ kind = "red", limit_pkts = 100, min_th_pkts = 5, max_th_pkts = 15, max_p = 0.1, ecn = true }"#,
    r#"{ kind = "codel", limit_pkts = 100, ecn = true }"#,
    r#"{ kind = "fq_codel", limit_pkts = 100, ecn = true }"#,
    r#"{ kind = "drop_tail", limit_pkts = 100, mark_threshold_pkts = 20 }"#,
];

#[test]
fn rfc3168_marking_gateways_mark_ecn_flows_instead_of_dropping_them() {
    for q in QUEUES {
        let r = run(q, true);
        let b = bottleneck(&r);
        assert!(b.queue_marks > 20, "{q}: {} marks", b.queue_marks);
        assert_eq!(b.queue_drops, 0, "{q}: drops of ECN traffic");
        for f in &r.summary.flows {
            assert!(f.ecn, "{q}: {} did not negotiate ECN", f.name);
            assert!(f.ce_marks_received > 0, "{q}: {}", f.name);
            assert!(f.ecn_reductions > 0, "{q}: {}", f.name);
            // At most one reduction per window: fewer reductions than marks received.
            assert!(f.ecn_reductions <= f.ce_marks_received, "{q}: {}", f.name);
            // The marks did the work losses would: no loss recovery at all.
            assert_eq!(f.retransmitted_segments, 0, "{q}: {}", f.name);
        }
        // Two AIMD flows keep the bottleneck busy (RED's low thresholds least: 83%).
        assert!(b.utilization > 0.8, "{q}: {}", b.utilization);
    }
}

#[test]
fn rfc3168_without_ecn_the_same_gateways_drop() {
    for q in QUEUES {
        let (with, without) = (run(q, true), run(q, false));
        let b = bottleneck(&without);
        assert_eq!(b.queue_marks, 0, "{q}");
        assert!(without
            .summary
            .flows
            .iter()
            .all(|f| !f.ecn && f.ecn_reductions == 0));
        if q.contains("drop_tail") {
            // The step marker leaves Not-ECT traffic alone: the queue grows towards its
            // limit (these windows, 64 KiB unscaled, stop short of it) and waits longer.
            let delay = |r: &RunResult| bottleneck(r).queue_delay_mean_ms.unwrap();
            assert!(
                delay(&without) > 3.0 * delay(&with),
                "{q}: {} vs {}",
                delay(&without),
                delay(&with)
            );
        } else {
            let rexmit: u64 = without
                .summary
                .flows
                .iter()
                .map(|f| f.retransmitted_segments)
                .sum();
            assert!(
                b.queue_drops > 20 && rexmit > 0,
                "{q}: {} drops",
                b.queue_drops
            );
        }
    }
}
