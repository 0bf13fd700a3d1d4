//! Datagram flows in the simulator (the seed's "connectionless traffic (e.g., domain server
//! queries, RPC requests)", 11 Feb 1988): RPC over each host's UDP with fixed and adaptive
//! timers, a TFRC stream (RFC 5348) beside TCP, and the worked example in `scenarios/`.

use ackclock_sim::results::{DatagramSummary, FlowSummary};
use ackclock_sim::{build, RunResult, Scenario};
use std::path::Path;

fn run_text(text: &str) -> RunResult {
    let s = Scenario::from_str_named(text, Path::new("datagram.toml")).unwrap();
    build(&s, None).unwrap().run(|_| {})
}

fn dumbbell(pairs: usize, rate_bps: f64, limit: usize, flows: &str) -> String {
    format!(
        r#"
name = "datagram"
seed = 3
duration_s = 60
[topology]
kind = "dumbbell"
pairs = {pairs}
access = {{ rate_bps = 10e6, delay_ms = 1 }}
bottleneck = {{ rate_bps = {rate_bps}, delay_ms = 20, queue = {{ kind = "drop_tail", limit_pkts = {limit} }} }}
[output]
trace = false
queues = false
plots = false
{flows}
"#
    )
}

fn rpc_flows(n: usize, app: &str) -> String {
    (1..=n)
        .map(|i| format!("[[flow]]\nfrom = \"right{i}\"\nto = \"left{i}\"\napp = {app}\n"))
        .collect()
}

fn dgram(f: &FlowSummary) -> &DatagramSummary {
    f.datagram.as_ref().expect("a datagram flow")
}

/// Totals over the RPC flows: (completed, transmissions, failed, duplicates).
fn rpc_totals(r: &RunResult) -> (u64, u64, u64, u64) {
    r.summary
        .flows
        .iter()
        .filter_map(|f| f.datagram.as_ref()?.rpc.clone())
        .fold((0, 0, 0, 0), |a, x| {
            (
                a.0 + x.completed,
                a.1 + x.transmissions,
                a.2 + x.failed,
                a.3 + x.duplicate_responses,
            )
        })
}

#[test]
fn seed_nfs_fixed_timers_storm_where_the_tcps_timer_does_not() {
    let fixed = run_text(&dumbbell(
        17,
        256e3,
        30,
        &rpc_flows(16, r#"{ kind = "rpc", timer = "fixed" }"#),
    ));
    let adaptive = run_text(&dumbbell(
        17,
        256e3,
        30,
        &rpc_flows(16, r#"{ kind = "rpc", timer = "adaptive" }"#),
    ));
    let (fc, ft, ff, fd) = rpc_totals(&fixed);
    let (ac, at, _, _) = rpc_totals(&adaptive);
    // Each completed request went out more than twice, some were given up, and responses
    // came for requests already answered.
    assert!(ft > 2 * fc, "fixed: {fc} completed, {ft} sent");
    assert!(ff > 0 && fd > 0, "fixed: {ff} failed, {fd} duplicates");
    assert!(at * 10 < ac * 15, "adaptive: {ac} completed, {at} sent");
    // The 256 kb/s gateway carries at most 30.4 responses of 1052 bytes a second.
    let capacity = 256e3 * 60.0 / (1052.0 * 8.0);
    assert!(ac as f64 > 0.97 * capacity, "{ac} of {capacity:.0}");
    assert!((fc as f64) < 0.9 * capacity, "{fc} of {capacity:.0}");
    // Server side: every transmission that arrived was a request it served.
    let f0 = &fixed.summary.flows[0];
    let r0 = dgram(f0).rpc.as_ref().unwrap();
    assert_eq!(dgram(f0).kind, "rpc");
    assert!(r0.server_requests <= r0.transmissions);
    assert!(r0.server_retransmitted_requests > 0);
}

#[test]
fn rfc5348_tfrc_stream_shares_a_gateway_with_newreno_within_a_factor_of_two() {
    let flows = r#"
[[flow]]
from = "left1"
to = "right1"
app = { kind = "datagram_stream", rate_control = "tfrc" }
[[flow]]
from = "left2"
to = "right2"
tcp = "newreno"
app = { kind = "bulk" }
"#;
    let r = run_text(&dumbbell(2, 2e6, 50, flows));
    let (s, t) = (&r.summary.flows[0], &r.summary.flows[1]);
    let ratio = s.goodput_bps / t.goodput_bps;
    assert!((0.5..=2.0).contains(&ratio), "TFRC/TCP = {ratio:.2}");
    let st = dgram(s).stream.as_ref().unwrap();
    assert_eq!(dgram(s).rate_control, "tfrc");
    assert!(st.loss_event_rate > 0.0 && st.feedbacks > 100);
    assert!(st.packets_received + st.packets_lost <= st.packets_sent);
    // Together they keep the gateway busy.
    let link = r
        .summary
        .links
        .iter()
        .find(|l| l.name == "gw_left-gw_right")
        .unwrap();
    assert!(link.utilization > 0.95, "{}", link.utilization);
}

#[test]
fn the_connectionless_example_runs_and_is_deterministic() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/connectionless.toml"
    );
    let s = Scenario::load(Path::new(path)).unwrap();
    let a = build(&s, None).unwrap().run(|_| {});
    let b = build(&s, None).unwrap().run(|_| {});
    assert_eq!(
        serde_json::to_string(&a.summary.flows).unwrap(),
        serde_json::to_string(&b.summary.flows).unwrap()
    );
    let kinds: Vec<&str> = a
        .summary
        .flows
        .iter()
        .map(|f| f.datagram.as_ref().map_or("tcp", |d| d.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            "rpc",
            "rpc",
            "rpc",
            "rpc",
            "rpc",
            "rpc",
            "rpc",
            "rpc",
            "dns",
            "datagram_stream",
            "tcp"
        ]
    );
    // Every kind of flow got somewhere.
    assert!(a.summary.flows.iter().all(|f| f.bytes_delivered > 0));
    let table = a.table();
    assert!(table.contains("rpc flow") && table.contains("stream"));
}
