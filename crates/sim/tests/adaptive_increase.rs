//! The second-order loop of Jacobson's message of 16 Nov 1987 (seed 000): "changing the
//! increment affects the frequency of oscillation but not the mean window size", and a loop
//! can "adaptively determine the appropriate increment to use for a path". One NewReno flow
//! through a drop-tail bottleneck whose pipe holds about five packets, the message's Arpanet
//! ("my measurements on an unloaded Arpanet or Milnet place their 'pipe size' at 4-5
//! packets").

use ackclock_sim::{build, results::FlowSummary, Scenario};
use std::path::Path;

/// The drop-tail gateway of the first tests: 6 packets of buffer.
const DROP_TAIL: &str = r#"{ kind = "drop_tail", limit_pkts = 6 }"#;

/// One bulk flow for 120 s through a 1.5 Mbit/s, 10 ms bottleneck with 6 packets of
/// drop-tail buffer (a round trip of about 24 ms plus queueing: a pipe of about 3 packets,
/// 9 in all), with `overrides` on the NewReno preset.
fn run(overrides: &str) -> FlowSummary {
    run_through(DROP_TAIL, overrides)
}

/// [`run`] through another gateway.
fn run_through(queue: &str, overrides: &str) -> FlowSummary {
    let text = format!(
        r#"
name = "adaptive_increase"
seed = 3
duration_s = 120
[topology]
kind = "dumbbell"
pairs = 1
access = {{ rate_bps = 100e6, delay_ms = 1 }}
bottleneck = {{ rate_bps = 1.5e6, delay_ms = 10, queue = {queue} }}
[topology.flows]
tcp = "newreno"
tcp_overrides = {{ {overrides} }}
app = {{ kind = "bulk" }}
"#
    );
    let s = Scenario::from_str_named(&text, Path::new("adaptive_increase.toml")).unwrap();
    let r = build(&s, None).unwrap().run(|_| {});
    r.summary.flows.into_iter().next().expect("one flow")
}

/// Congestion signals (fast retransmits and timeouts) per segment sent.
fn signal_rate(f: &FlowSummary) -> f64 {
    (f.fast_retransmits + f.timeouts) as f64 / f.segments_sent as f64
}

/// "Changing the increment affects the frequency of oscillation but not the mean window
/// size": each halving of the increment about halves the congestion signals, while the
/// goodput and the mean round trip (the mean window over a fixed pipe) stay put.
#[test]
fn seed000_16nov1987_the_increment_sets_the_frequency_of_oscillation_not_the_mean_window() {
    let runs: Vec<(f64, FlowSummary)> = [1.0, 0.5, 0.25, 0.125]
        .into_iter()
        .map(|u| (u, run(&format!("increase = {u}"))))
        .collect();
    let (_, base) = &runs[0];
    let base_rtt = base.rtt_mean_ms.unwrap();
    for pair in runs.windows(2) {
        let ((u0, f0), (u1, f1)) = (&pair[0], &pair[1]);
        let ratio = signal_rate(f0) / signal_rate(f1);
        assert!(
            (1.5..=2.5).contains(&ratio),
            "u {u0} -> {u1}: signals per segment {:.4} -> {:.4}",
            signal_rate(f0),
            signal_rate(f1)
        );
    }
    for (u, f) in &runs {
        let g = f.goodput_bps / base.goodput_bps;
        let rtt = f.rtt_mean_ms.unwrap() / base_rtt;
        assert!(
            (0.99..=1.01).contains(&g),
            "u {u}: goodput {g:.4} of u = 1's"
        );
        assert!(
            (0.95..=1.05).contains(&rtt),
            "u {u}: mean RTT {rtt:.4} of u = 1's"
        );
    }
}

/// The loop "to adaptively determine the appropriate increment": asked for a loss rate
/// below what 4BSD's increment of one segment gives on this path (about 0.9%), it finds an
/// increment that delivers that rate, and the mean window stays where it was.
#[test]
fn seed000_16nov1987_the_adaptive_loop_finds_the_increment_for_a_target_loss_rate() {
    let base = run("");
    assert!(signal_rate(&base) > 0.006, "{}", signal_rate(&base));
    for target in [0.003, 0.0015] {
        let f = run(&format!("adaptive_increase = {target}"));
        let rate = signal_rate(&f);
        assert!(
            (0.75 * target..=1.25 * target).contains(&rate),
            "target {target}: {rate:.5} signals per segment"
        );
        let g = f.goodput_bps / base.goodput_bps;
        let rtt = f.rtt_mean_ms.unwrap() / base.rtt_mean_ms.unwrap();
        assert!(
            (0.99..=1.01).contains(&g),
            "target {target}: goodput {g:.4}"
        );
        assert!(
            (0.95..=1.05).contains(&rtt),
            "target {target}: mean RTT {rtt:.4}"
        );
    }
}

/// The same through a RED gateway that drops near the knee (thresholds of 2 and 6 packets),
/// whose drops are random: signals come irregularly, sometimes two close together, and the
/// loop, which averages N u over signals, still lands on the target.
#[test]
fn seed000_16nov1987_the_adaptive_loop_reaches_its_target_through_random_drops() {
    const RED: &str = r#"{ kind = "red", limit_pkts = 40, min_th_pkts = 2.0, max_th_pkts = 6.0, max_p = 0.1, w_q = 0.02 }"#;
    let base = run_through(RED, "");
    assert!(signal_rate(&base) > 0.006, "{}", signal_rate(&base));
    for target in [0.003, 0.0015] {
        let f = run_through(RED, &format!("adaptive_increase = {target}"));
        let rate = signal_rate(&f);
        assert!(
            (0.75 * target..=1.25 * target).contains(&rate),
            "target {target}: {rate:.5} signals per segment"
        );
    }
}
