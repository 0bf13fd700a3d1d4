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

/// Two flows through a 100 Mbit/s bottleneck of about 1.2 ms round trip (a 10-packet pipe)
/// and drop-tail's step marker at `k` packets (RFC 8257 §3.1), with `overrides`.
fn run_dc(overrides: &str, k: usize) -> RunResult {
    run_q(
        overrides,
        &format!(r#"{{ kind = "drop_tail", limit_pkts = 300, mark_threshold_pkts = {k} }}"#),
    )
}

/// [`run_dc`]'s path with the bottleneck queue `queue`.
fn run_q(overrides: &str, queue: &str) -> RunResult {
    let text = format!(
        r#"
name = "dctcp"
seed = 3
duration_s = 5
[topology]
kind = "dumbbell"
pairs = 2
access = {{ rate_bps = 1e9, delay_ms = 0.05 }}
bottleneck = {{ rate_bps = 100e6, delay_ms = 0.5, queue = {queue} }}
[topology.flows]
tcp = "newreno"
tcp_overrides = {{ window_scale = true, recv_buffer_bytes = 4194304, send_buffer_bytes = 4194304, {overrides} }}
app = {{ kind = "bulk" }}
"#
    );
    let s = Scenario::from_str_named(&text, Path::new("dctcp.toml")).unwrap();
    build(&s, None).unwrap().run(|_| {})
}

/// DCTCP's claim (Alizadeh et al. 2010; RFC 8257 §1): with the step marker far below the
/// bandwidth-delay product it still fills the pipe, because a few marks cut the window a
/// little; Reno answering each window of marks by halving (RFC 3168) leaves the link idle
/// at the same threshold. The pipe here holds about 10 packets.
#[test]
fn rfc8257_dctcp_fills_the_pipe_with_a_marker_far_below_the_bdp_where_halving_does_not() {
    for k in [2, 5] {
        let dc = run_dc(r#"cc = "dctcp""#, k);
        let reno = run_dc("ecn = true", k);
        let (bd, br) = (bottleneck(&dc), bottleneck(&reno));
        assert!(bd.utilization > 0.98, "DCTCP, K = {k}: {}", bd.utilization);
        assert!(
            br.utilization < 0.9,
            "Reno with ECN, K = {k}: {}",
            br.utilization
        );
        // The queue stays near K: at most twice it and a packet.
        assert!(
            bd.max_queue_pkts <= 2 * k as u64 + 1,
            "K = {k}: {}",
            bd.max_queue_pkts
        );
        for r in [&dc, &reno] {
            assert_eq!(bottleneck(r).queue_drops, 0);
            assert!(r
                .summary
                .flows
                .iter()
                .all(|f| f.ecn && f.retransmitted_segments == 0));
        }
        // DCTCP cuts often and little: more reductions than Reno's halvings.
        let cuts = |r: &RunResult| {
            r.summary
                .flows
                .iter()
                .map(|f| f.ecn_reductions)
                .sum::<u64>()
        };
        assert!(
            cuts(&dc) > 2 * cuts(&reno),
            "{} vs {}",
            cuts(&dc),
            cuts(&reno)
        );
    }
}

/// The DEC-bit sender (Ramakrishnan and Jain 1988) holds its window near the pipe on the
/// bits alone: without a marker the same sender's window grows one packet per two windows
/// without bound (here until the 4 MiB buffers stop it).
#[test]
fn dec_bit_sender_is_held_near_the_pipe_by_the_bits() {
    let marked = run_dc(r#"cc = "dec_bit""#, 2);
    let b = bottleneck(&marked);
    assert!(
        b.queue_marks > 1000 && b.queue_drops == 0,
        "{} marks",
        b.queue_marks
    );
    assert!(b.utilization > 0.9, "{}", b.utilization);
    for f in &marked.summary.flows {
        assert!(f.ecn && f.ce_marks_received > 0);
        // Decided per window in the controller, never by the ECE-once-per-window rule.
        assert_eq!(f.ecn_reductions, 0);
        assert!(f.final_cwnd_bytes < 20 * 1460, "{}", f.final_cwnd_bytes);
    }
    // The marker off (a threshold at the limit's edge marks only when 299 are queued).
    let unmarked = run_dc(r#"cc = "dec_bit""#, 299);
    for f in &unmarked.summary.flows {
        assert!(f.final_cwnd_bytes > 100 * 1460, "{}", f.final_cwnd_bytes);
    }
}

/// Ramakrishnan and Jain's pairing: a gateway that sets the bit at an average queue of one
/// packet, and senders that cut to 7/8 on half a window of bits and add a packet otherwise,
/// run the bottleneck busy with about one packet waiting. The same bits answered by halving
/// on every window with a bit (RFC 3168 Reno) leave it half idle: the gentle 7/8 is what
/// makes such an early, frequent signal affordable (seed 000, 16 Nov 1987).
#[test]
fn dec_bit_senders_and_gateway_keep_the_link_busy_with_a_queue_of_about_one() {
    let gateway = r#"{ kind = "dec_bit", limit_pkts = 300 }"#;
    let dec = run_q(r#"cc = "dec_bit""#, gateway);
    let b = bottleneck(&dec);
    assert!(b.utilization > 0.8, "{}", b.utilization);
    assert!(b.queue_marks > 1000 && b.queue_drops == 0);
    // One 1500-byte packet takes 0.12 ms at 100 Mbit/s: about one waiting on average.
    let delay = b.queue_delay_mean_ms.unwrap();
    assert!(delay < 0.3, "{delay} ms");
    let reno = run_q("ecn = true", gateway);
    let br = bottleneck(&reno);
    assert!(br.utilization < 0.6, "{}", br.utilization);
    assert!(b.utilization > br.utilization + 0.2);
}
