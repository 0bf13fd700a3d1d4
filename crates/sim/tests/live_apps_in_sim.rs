//! The applications are one layer for both worlds: the live commands' applications run in
//! the simulator as they run on a TUN host. Here `ackclock stream`'s iperf-style test
//! (four parallel connections, interval reports) sends to `ackclock discard`'s service on a
//! simulated 10 Mbit/s path, and its interval reports add up to the bytes it was asked to
//! move.

use ackclock_apps::services::{Service, ServiceOptions, ServicesApp};
use ackclock_apps::stream::interval::Interval;
use ackclock_apps::stream::{Limit, StreamApp, StreamDirection, StreamOptions, StreamRole};
use ackclock_sim::{build, Scenario};
use ackclock_tcp::TcpConfig;
use ackclock_wire::Duration;
use std::net::SocketAddrV4;
use std::path::Path;
use std::sync::{Arc, Mutex};

const SCENARIO: &str = r#"
duration_s = 20
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate_bps = 10e6
delay_ms = 10
queue = { kind = "drop_tail", limit_pkts = 50 }
# A flow of the scenario's own (a scenario needs one); the live applications come beside it.
[[flow]]
from = "a"
to = "b"
app = { kind = "bulk", bytes = 1000 }
"#;

#[test]
fn the_live_stream_test_runs_in_the_simulator_against_the_discard_service() {
    let s = Scenario::from_str_named(SCENARIO, Path::new("live-apps.toml")).unwrap();
    let mut sim = build(&s, None).unwrap();
    let node = |name: &str| sim.net.nodes.iter().position(|n| n.name == name).unwrap();
    let (a, b) = (node("a"), node("b"));
    let b_addr = sim.net.nodes[b].addr;
    let mut discard = ServicesApp::new(
        vec![(9, Service::Discard)],
        ServiceOptions::new(TcpConfig::sack()),
    );
    discard
        .listen_now(&mut sim.net.nodes[b].host.as_mut().unwrap().ep)
        .unwrap();
    sim.net.add_app(b, Box::new(discard));
    let mut o = StreamOptions::new(
        StreamRole::Connect(SocketAddrV4::new(b_addr, 9)),
        StreamDirection::Send,
        TcpConfig::sack(),
    );
    o.parallel = 4;
    o.limit = Limit::Bytes(4_000_000);
    o.interval = Some(Duration::from_secs(1));
    let mut stream = StreamApp::new(o).unwrap();
    // (bytes of the interval, whether it is the last), as the reports come.
    let seen: Arc<Mutex<Vec<(u64, bool)>>> = Arc::default();
    let s2 = seen.clone();
    stream.on_interval = Some(Box::new(move |i: &Interval<'_>| {
        s2.lock().unwrap().push((i.bytes(), i.last));
    }));
    sim.net.add_app(a, Box::new(stream));
    sim.run(|_| {});
    let seen = seen.lock().unwrap();
    // 4 MB at 10 Mbit/s: a little over three seconds of reports, the last one last.
    assert!(seen.len() >= 4, "{seen:?}");
    assert_eq!(seen.iter().map(|(b, _)| b).sum::<u64>(), 4_000_000);
    assert_eq!(seen.iter().filter(|(_, last)| *last).count(), 1);
    assert!(seen.last().unwrap().1);
    // Full intervals near the bottleneck's rate (payload of 10 Mbit/s, less headers).
    let full = seen[1].0 as f64 * 8.0;
    assert!(
        (8.0e6..=10.0e6).contains(&full),
        "{full} bit/s in interval 2"
    );
}
