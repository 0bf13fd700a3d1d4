//! Engine bugs found by the reproduction experiments, each with the scenario that showed it.

use ackclock_sim::{build, RunResult, Scenario};
use std::path::Path;

fn run(text: &str) -> RunResult {
    let s = Scenario::from_str_named(text, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}"));
    build(&s, None).unwrap().run(|_| {})
}

/// RFC 6675 rule 4: the rescue retransmission must not move HighRxt. When it did, every
/// hole found after a rescue waited for the timer: 29 timeouts in 60 s here (a receiver
/// window of exactly 100 segments keeps NextSeg choosing the rescue over new data).
#[test]
fn sack_rescue_leaves_high_rxt_alone() {
    let r = run(r#"
seed = 1
duration_s = 30
[[node]]
name = "snd"
[[node]]
name = "rcv"
[[link]]
a = "snd"
b = "rcv"
rate_bps = 10e6
delay_ms = 59.4
queue = { kind = "drop_tail", limit_pkts = 1000 }
impair_ab = { loss_prob = 0.01 }
[[flow]]
from = "snd"
to = "rcv"
tcp = "reno"
tcp_overrides = { cc = "none", recovery = "sack", ack_every = 1, send_buffer_bytes = 4000000, recv_buffer_bytes = 146000, window_scale = true }
app = { kind = "bulk" }
"#);
    let f = &r.summary.flows[0];
    assert!(
        f.timeouts <= 3,
        "{} timeouts (the bug gave 15 in 30 s)",
        f.timeouts
    );
    assert!(f.goodput_bps > 5e6, "{}", f.goodput_bps);
}

/// RFC 6582 §3.2 step 4: only the first partial ACK restarts the timer. Restarting on every
/// one kept a flow after a slow-start overshoot in a single recovery for ~30 s, repairing one
/// hole per round trip at ~2% of the link (2.3 Mb/s of 5 over 60 s).
#[test]
fn newreno_later_partial_acks_do_not_restart_the_timer() {
    let r = run(r#"
seed = 1
duration_s = 60
[topology]
kind = "dumbbell"
pairs = 1
access = { rate_bps = 100e6, delay_ms = 1, queue = { kind = "drop_tail", limit_pkts = 1000 } }
bottleneck = { rate_bps = 5e6, delay_ms = 57.6, queue = { kind = "drop_tail", limit_pkts = 100 } }
[topology.flows]
tcp = "newreno"
tcp_overrides = { ack_every = 1, send_buffer_bytes = 4000000, recv_buffer_bytes = 1000000, window_scale = true }
app = { kind = "bulk" }
"#);
    let f = &r.summary.flows[0];
    assert!(f.timeouts >= 1, "the long recovery should end in a timeout");
    assert!(f.goodput_bps > 3.5e6, "{} b/s", f.goodput_bps);
}
