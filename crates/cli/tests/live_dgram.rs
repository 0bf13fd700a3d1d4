//! The datagram applications in live mode (root only; SKIP otherwise): ackclock's RPC
//! client and TFRC stream on a TUN device's UDP against Linux's UDP (`--kernel`: our server
//! and receiver on kernel sockets), through `ackclock emulate` (rate, delay, loss, a
//! drop-tail queue), and a TFRC stream beside a Linux TCP flow (iperf3).
//!
//! Bounds on rates and times are generous (a 2-core VM, other work on it); the accounting
//! of requests and packets is exact. Every namespace is named with the test's PID and
//! deleted on drop, even when an assertion fails; every process is ended by its PID.

mod live_common;

use live_common::*;
use serde_json::Value;
use std::time::Duration;

/// The tests of this file measure rates and times: one at a time, so they do not share
/// the machine's two cores with each other (the test harness runs tests in parallel).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Whether `test` can run (it prints why not otherwise: SKIP); when it can, the guard
/// that it runs alone in this file.
fn start(test: &str, tools: &[&str]) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !can_run(test, tools) {
        return None;
    }
    Some(ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} is not an integer in {v}"))
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} is not a number in {v}"))
}

/// Our server on Linux's UDP in the right namespace, port 2049.
fn kernel_rpc_server(right: &str) -> Proc {
    let mut p = spawn_in(
        right,
        bin(),
        &[
            "rpc-server",
            "--kernel",
            "--listen",
            "0.0.0.0:2049",
            "--json",
        ],
    );
    p.ready("answering");
    p
}

/// The RPC tests: ackclock's RPC client on a TUN device in the left namespace (200
/// requests, the adaptive timer) against our server on Linux's UDP in the right one,
/// through `ackclock emulate` at 10 Mbit/s, 20 ms each way, a drop-tail queue of 100
/// packets and `more`. Returns the JSON documents of the client (which must finish within
/// `within`), the server and the emulator.
fn rpc_through_emulator(more: &[&str], within: Duration) -> (Value, Value, Value) {
    let mut args = vec![
        "--rate",
        "10mbit",
        "--delay",
        "20ms",
        "--queue",
        "droptail:100",
    ];
    args.extend_from_slice(more);
    let (emu, _names, left, right) = emulate("ackD", &args);
    let srv = kernel_rpc_server(&right);
    let cli = spawn_in(
        &left,
        bin(),
        &[
            "rpc",
            "--connect",
            "198.18.2.1:2049",
            "--timer",
            "adaptive",
            "--requests",
            "200",
            "--json",
        ],
    );
    let c = finish_json(cli, "rpc", within);
    // Transmissions still in flight when the client finished reach the server first.
    wait_settled("requests in flight", Duration::from_secs(10), || {
        udp_in_datagrams(&right)
    });
    let s = stop_json(srv, "rpc-server");
    let e = stop_json(emu, "emulate");
    (c, s, e)
}

/// ackclock's RPC client on a TUN device (left) against our server on Linux's UDP (right),
/// through 10 Mbit/s and 20 ms each way: every request completes, and the adaptive timer's
/// smoothed RTT is the emulated one (40 ms plus serialization; the estimator counts whole
/// 1 ms ticks, RFC 6298's G). Nothing is lost, so every transmission reached the server.
#[test]
fn rpc_on_tun_against_linux_udp_measures_the_emulated_rtt() {
    let Some(_one) = start(
        "rpc_on_tun_against_linux_udp_measures_the_emulated_rtt",
        &[],
    ) else {
        return;
    };
    let (c, s, e) = rpc_through_emulator(&[], Duration::from_secs(60));
    assert_eq!(c["socket"], "tun");
    assert_eq!(u(&c, "issued"), 200);
    assert_eq!(u(&c, "completed"), 200, "{c}");
    assert_eq!(u(&c, "failed"), 0);
    assert_eq!(u(&c, "outstanding_at_end"), 0);
    assert_eq!(
        u(&c, "transmissions"),
        u(&c, "issued") + u(&c, "retransmissions")
    );
    let srtt = f(&c, "srtt_ms");
    let p50 = f(&c, "latency_p50_ms");
    println!("srtt {srtt} ms, latency p50 {p50} ms (emulated RTT 40 ms + serialization)");
    assert!((40.0..=60.0).contains(&srtt), "srtt {srtt} ms");
    assert!((40.0..=80.0).contains(&p50), "p50 {p50} ms");
    // A lossless path with a 200 ms floor under the timer: a spurious timeout needs a
    // stall of 160 ms; allow a few on a busy machine, not a habit.
    assert!(u(&c, "retransmissions") <= 10, "{c}");
    // Linux's side saw every transmission, and answered each.
    assert_eq!(u(&s, "requests"), u(&c, "transmissions"), "{s}");
    assert_eq!(u(&s, "responses"), u(&s, "requests"));
    assert_eq!(u(&s["udp"], "receive_drops"), 0);
    assert_eq!(e["left_to_right"]["loss_drops"], 0);
}

/// The same through 5% random loss each way: requests time out and are sent again, and
/// every one is accounted for exactly (completed or failed, none left outstanding). What
/// the server received and what the emulator dropped add up to what the client sent.
#[test]
fn rpc_retransmits_through_loss_and_accounts_for_every_request() {
    let Some(_one) = start(
        "rpc_retransmits_through_loss_and_accounts_for_every_request",
        &[],
    ) else {
        return;
    };
    let (c, s, e) =
        rpc_through_emulator(&["--loss", "5%", "--seed", "7"], Duration::from_secs(120));
    let (issued, completed, failed) = (u(&c, "issued"), u(&c, "completed"), u(&c, "failed"));
    println!(
        "issued {issued}, completed {completed}, failed {failed}, retransmissions {}, timeouts {}, duplicates {}, srtt {} ms, p99 {} ms",
        c["retransmissions"], c["timeouts"], c["duplicate_responses"], c["srtt_ms"], c["latency_p99_ms"]
    );
    assert_eq!(issued, 200);
    assert_eq!(completed + failed, issued, "{c}");
    assert_eq!(u(&c, "outstanding_at_end"), 0);
    assert!(
        u(&c, "retransmissions") > 0,
        "5% loss and no retransmission: {c}"
    );
    assert_eq!(u(&c, "transmissions"), issued + u(&c, "retransmissions"));
    // A request fails only when all 5 of its transmissions or their answers are lost:
    // (1 - 0.95^2)^5, about 1e-5 each.
    assert!(failed <= 2, "{c}");
    // Requests: sent = received by the server + dropped on the way (the emulator's
    // counts also take any other packet of that direction, hence at most).
    let l2r = &e["left_to_right"];
    let dropped = u(l2r, "loss_drops") + u(l2r, "queue_drops");
    let (sent, got) = (u(&c, "transmissions"), u(&s, "requests"));
    assert!(
        got <= sent && sent - got <= dropped,
        "sent {sent}, received {got}, dropped {dropped}"
    );
    assert!(u(l2r, "loss_drops") > 0);
    // Responses: the server answered each request it received; those that did not come
    // back were dropped on the way back.
    assert_eq!(u(&s, "responses"), got);
    let r2l = &e["right_to_left"];
    let back = completed + u(&c, "duplicate_responses");
    assert!(
        back <= got && got - back <= u(r2l, "loss_drops") + u(r2l, "queue_drops"),
        "responses {got}, came back {back}: {r2l}"
    );
}

/// Linux's UDP as the client (`rpc --kernel`) against ackclock's server on a TUN device, in
/// one namespace: every request is answered.
#[test]
fn linux_udp_client_against_our_server_on_tun() {
    let Some(_one) = start("linux_udp_client_against_our_server_on_tun", &[]) else {
        return;
    };
    let ns = Ns::new("ackD");
    let mut srv = ns.spawn_ackclock(&["rpc-server", "--listen", "198.18.0.2:2049", "--json"]);
    srv.ready("answering");
    let mut c = ns.cmd(bin());
    c.args([
        "rpc",
        "--kernel",
        "--connect",
        "198.18.0.2:2049",
        "--kind",
        "dns",
        "--requests",
        "100",
        "--requests-per-sec",
        "200",
        "--json",
    ]);
    let cli = Proc::spawn(c);
    let c = finish_json(cli, "rpc --kernel", Duration::from_secs(60));
    // The server has read every request: the kernel sends nothing more into its device.
    wait_settled("requests in flight", Duration::from_secs(10), || {
        tx_packets(&ns.name)
    });
    let s = stop_json(srv, "rpc-server on TUN");
    assert_eq!(c["socket"], "kernel");
    assert_eq!(u(&c, "completed"), 100, "{c}");
    assert_eq!(u(&c, "failed"), 0);
    assert_eq!(s["socket"], "tun");
    assert_eq!(u(&s, "requests"), u(&c, "transmissions"));
    assert_eq!(u(&s, "responses"), u(&s, "requests"));
    assert_eq!(u(&s["udp"], "receive_drops"), 0, "{s}");
    // Answers of 200 bytes: 100 of them came back to the kernel socket.
    assert!(u(&c["udp"], "bytes_in") >= 100 * 200);
}

/// The mean rate (IP bytes) of the intervals that start at or after `from` s and end by
/// `to` s.
fn rate_between(intervals: &Value, from: f64, to: f64) -> f64 {
    let (mut bits, mut secs) = (0.0, 0.0);
    for i in intervals.as_array().unwrap() {
        let (s, e) = (f(i, "start"), f(i, "end"));
        if s >= from - 1e-9 && e <= to + 0.05 {
            bits += f(i, "bits_per_second") * f(i, "seconds");
            secs += f(i, "seconds");
        }
    }
    assert!(
        secs > 0.0,
        "no interval between {from} and {to} s: {intervals}"
    );
    bits / secs
}

/// The TFRC tests' emulated path: 10 Mbit/s, 10 ms each way, a drop-tail queue of 25
/// packets (one bandwidth-delay product).
const TFRC_PATH: &[&str] = &[
    "--rate",
    "10mbit",
    "--delay",
    "10ms",
    "--queue",
    "droptail:25",
];

/// Our stream receiver on Linux's UDP in the right namespace, port 5004, reporting every
/// `interval` seconds; it stops 1 s after the data stops.
fn kernel_stream_receiver(right: &str, interval: &str) -> Proc {
    let mut p = spawn_in(
        right,
        bin(),
        &[
            "dgram-stream",
            "--kernel",
            "--listen",
            "0.0.0.0:5004",
            "--idle-timeout",
            "1s",
            "-i",
            interval,
            "--json",
        ],
    );
    p.ready("receiver on");
    p
}

/// ackclock's stream sender on a TUN device in the left namespace, to the receiver on the
/// right, with the flags `flags` and --json.
fn tun_stream_sender(left: &str, flags: &[&str]) -> Proc {
    let mut args = vec!["dgram-stream", "--connect", "198.18.2.1:5004"];
    args.extend_from_slice(flags);
    args.push("--json");
    spawn_in(left, bin(), &args)
}

/// A TFRC stream (RFC 5348) from ackclock's UDP to a receiver on Linux's UDP, alone through
/// a 10 Mbit/s bottleneck (10 ms each way, a drop-tail queue of 25 packets, one
/// bandwidth-delay product): after its start it sends at about the bottleneck's rate, the
/// queue overflows, and the receiver measures a loss event rate above zero.
#[test]
fn tfrc_stream_converges_to_the_emulated_bottleneck() {
    let Some(_one) = start("tfrc_stream_converges_to_the_emulated_bottleneck", &[]) else {
        return;
    };
    let (emu, _names, left, right) = emulate("ackD", TFRC_PATH);
    let rcv = kernel_stream_receiver(&right, "0.5");
    let snd = tun_stream_sender(
        &left,
        &["--rate-control", "tfrc", "--time", "6s", "-i", "0.5"],
    );
    let s = finish_json(snd, "sender", Duration::from_secs(60));
    let r = finish_json(rcv, "receiver", Duration::from_secs(20));
    let e = stop_json(emu, "emulate");
    let bottleneck = 10e6;
    let sent = rate_between(&s["intervals"], 3.0, 6.0);
    let got = rate_between(&r["intervals"], 3.0, 6.0);
    let (rs, rr) = (&s["sender"], &r["receiver"]);
    println!(
        "seconds 3-6: sending {:.3} Mbit/s, receiving {:.3} Mbit/s of a 10 Mbit/s bottleneck; loss event rate {:.5} ({} loss events, {} lost); rtt {} ms",
        sent / 1e6,
        got / 1e6,
        f(rr, "loss_event_rate"),
        rr["loss_events"],
        rr["lost"],
        rs["rtt_ms"]
    );
    assert!(
        (0.6 * bottleneck..=1.3 * bottleneck).contains(&sent),
        "sending {sent} b/s"
    );
    assert!(
        (0.6 * bottleneck..=1.05 * bottleneck).contains(&got),
        "receiving {got} b/s"
    );
    // The queue overflowed, the receiver saw it as loss events, the sender heard of them.
    assert!(u(&e["left_to_right"], "queue_drops") > 0, "{e}");
    assert!(
        u(rr, "loss_events") > 0 && f(rr, "loss_event_rate") > 0.0,
        "{r}"
    );
    assert!(
        u(rs, "loss_events") > 0 && f(rs, "loss_event_rate") > 0.0,
        "{s}"
    );
    // Every packet is accounted for: received, or counted lost by the receiver, or still
    // unresolved at the end (fewer than NDUPACK = 3 packets followed it), or dropped
    // where the receiver could not tell (the last ones).
    let (n_sent, n_got, n_lost) = (u(rs, "packets"), u(rr, "packets"), u(rr, "lost"));
    assert!(n_got + n_lost <= n_sent, "{n_got} + {n_lost} > {n_sent}");
    assert!(
        n_sent - n_got - n_lost <= 30,
        "{n_sent} sent, {n_got} received, {n_lost} lost"
    );
    assert!(u(rs, "feedbacks") > 50, "{s}");
}

/// TFRC beside a Linux TCP flow (iperf3, Reno, the TCP whose throughput TFRC's equation
/// models) through one 10 Mbit/s drop-tail bottleneck: each gets a share within a factor
/// of 3 of the other's. Floyd, Handley, Padhye and Widmer (SIGCOMM 2000) find TFRC within
/// about a factor of 2 of TCP at the same loss event rate; the bound here is looser for a
/// short run on a busy machine, and the ratio measured is printed.
#[test]
fn tfrc_beside_linux_tcp_gets_a_tcp_friendly_share() {
    let Some(_one) = start(
        "tfrc_beside_linux_tcp_gets_a_tcp_friendly_share",
        &["iperf3"],
    ) else {
        return;
    };
    let (emu, _names, left, right) = emulate("ackD", TFRC_PATH);
    let srv = spawn_in(&right, "iperf3", &["-s", "-1", "-p", "5201"]);
    let rcv = kernel_stream_receiver(&right, "1");
    wait_tcp_listening(&right, 5201);
    let mut snd = tun_stream_sender(&left, &["--time", "9s", "-i", "1"]);
    // TCP starts once the stream's first second is reported (it has left its slow start)
    // and runs 7 s.
    snd.ready("0.00-1.00");
    let tcp = spawn_in(
        &left,
        "iperf3",
        &[
            "-c",
            "198.18.2.1",
            "-p",
            "5201",
            "-C",
            "reno",
            "-t",
            "7",
            "-i",
            "1",
            "-J",
        ],
    );
    let (code, out, err) = tcp.finish(Duration::from_secs(60));
    assert_eq!(code, Some(0), "iperf3: {out}\n{err}");
    let t: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let _s = finish_json(snd, "sender", Duration::from_secs(60));
    let r = finish_json(rcv, "receiver", Duration::from_secs(20));
    let _ = srv.finish(Duration::from_secs(5));
    let e = stop_json(emu, "emulate");
    // TCP's seconds 2-7 are the stream's seconds 3-8 (a second apart, give or take the
    // start of a process).
    let tcp_iv: Vec<f64> = t["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| f(&i["sum"], "bits_per_second"))
        .collect();
    assert!(tcp_iv.len() >= 7, "{t}");
    let tcp_rate = tcp_iv[2..7].iter().sum::<f64>() / 5.0;
    let tfrc_rate = rate_between(&r["intervals"], 3.0, 8.0);
    let ratio = tfrc_rate / tcp_rate;
    println!(
        "TFRC {:.3} Mbit/s, TCP Reno {:.3} Mbit/s (iperf3's goodput); TFRC / TCP = {ratio:.3}; TFRC's loss event rate {:.5}; queue drops {}",
        tfrc_rate / 1e6,
        tcp_rate / 1e6,
        f(&r["receiver"], "loss_event_rate"),
        e["left_to_right"]["queue_drops"]
    );
    assert!(
        (1.0 / 3.0..=3.0).contains(&ratio),
        "TFRC / TCP = {ratio:.3} (TFRC {tfrc_rate}, TCP {tcp_rate} b/s)"
    );
    // Together they fill most of the bottleneck (TCP's figure is goodput, TFRC's IP bytes).
    assert!(tfrc_rate + tcp_rate > 0.7e7, "{tfrc_rate} + {tcp_rate}");
}

/// SIGTERM ends our datagram servers promptly while a flood of requests keeps their sockets
/// busy and their answers (1024 bytes each) keep their output full: on a TUN device (the
/// host's loop looks at the signals between batches of input and of output, UDP's as
/// TCP's) and on a kernel socket (at most RECV_BUDGET reads a turn).
#[test]
fn sigterm_stops_datagram_servers_under_a_udp_flood() {
    let Some(_one) = start(
        "sigterm_stops_datagram_servers_under_a_udp_flood",
        &["python3"],
    ) else {
        return;
    };
    let ns = Ns::new("ackDf");
    let mut tun = ns.spawn_ackclock(&["rpc-server", "--listen", "198.18.0.2:2049", "--json"]);
    tun.ready("answering");
    let mut kernel = ns.spawn_ackclock(&[
        "rpc-server",
        "--kernel",
        "--listen",
        "0.0.0.0:2050",
        "--json",
    ]);
    kernel.ready("answering");
    // Requests (kind 1, transmission 1, id 7, asking for 1024 bytes) as fast as Python
    // sends them, to both, for 4 s (bounded in time, and by the namespace's lifetime).
    let flood = ns.spawn_sh(
        "python3 -c \"
import socket, struct, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
req = struct.pack('!BBHIQI', 1, 1, 0, 7, 0, 1024)
end = time.time() + 30
while time.time() < end:
    for dst in (('198.18.0.2', 2049), ('198.18.0.1', 2050)):
        try:
            s.sendto(req, dst)
        except OSError:
            pass
\"",
    );
    // Both servers are under the flood once each has been sent thousands of requests: the
    // TUN one through its device, the kernel one through Linux's UDP. (A fixed wait here
    // once saw no request at all on a busy machine: Python had not started yet.)
    let (tx0, udp0) = (tx_packets(&ns.name), udp_in_datagrams(&ns.name));
    wait_until(
        "the flood reaches both servers",
        Duration::from_secs(30),
        || tx_packets(&ns.name) > tx0 + 5000 && udp_in_datagrams(&ns.name) > udp0 + 5000,
    );
    let t0 = std::time::Instant::now();
    tun.signal(libc::SIGTERM);
    kernel.signal(libc::SIGTERM);
    let (c1, o1, e1) = tun.finish(Duration::from_secs(10));
    let (c2, o2, e2) = kernel.finish(Duration::from_secs(10));
    let took = t0.elapsed();
    // The flood ends with the test (SIGTERM, then SIGKILL, by PID).
    drop(flood);
    assert_eq!(c1, Some(0), "{o1}\n{e1}");
    assert_eq!(c2, Some(0), "{o2}\n{e2}");
    println!("both servers ended {took:?} after SIGTERM under the flood");
    assert!(took < Duration::from_secs(3), "{took:?}");
    for (o, what) in [(&o1, "tun"), (&o2, "kernel")] {
        let j = stdout_json(o);
        println!(
            "{what}: {} requests, {} responses, {} dropped before the server read them, {} sends refused",
            j["requests"], j["responses"], j["udp"]["receive_drops"], j["udp"]["send_refused"]
        );
        assert_eq!(j["interrupted"], true);
        assert!(u(&j, "requests") > 1000, "{what}: {j}");
        // No service time: each turn's requests are answered in that turn, none waits in
        // the queue (what is dropped is dropped before: the socket's queue is full).
        assert_eq!(u(&j, "queue_drops"), 0, "{what}: {j}");
        assert!(u(&j, "responses") > 0, "{what}: {j}");
    }
}
