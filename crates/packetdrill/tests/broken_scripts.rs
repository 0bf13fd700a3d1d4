//! The interpreter must fail a script that is wrong about the engine, and say where and
//! how: deliberately broken copies of good scripts, each failing at the line we broke.

use ackclock_packetdrill::{run, RunOptions, Script};

const GOOD: &str = "\
--tolerance_usecs=10000
 0.00 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0.00 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0.00 bind(3, ..., ...) = 0
+0.00 listen(3, 1) = 0
+0.00 < S 0:0(0) win 65535 <mss 1460,sackOK,eol,eol>
+0.00 > S. 0:0(0) ack 1 win 65535 <mss 1460,sackOK,eol,eol>
+0.10 < . 1:1(0) ack 1 win 65535
+0.00 accept(3, ..., ...) = 4
+0.00 < . 1:1001(1000) ack 1 win 65535
+0.04 > . 1:1(0) ack 1001 win 64700
+0.00 recv(4, ..., 2000, 0) = 1000
+0.00 close(4) = 0
+0.00 > F. 1:1(0) ack 1001 win 65535
";

/// The script with line `n` (1-based) replaced.
fn broken(n: usize, line: &str) -> String {
    GOOD.lines()
        .enumerate()
        .map(|(i, l)| if i + 1 == n { line } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

fn failure(text: &str) -> ackclock_packetdrill::Failure {
    let s = Script::parse("broken.pkt", text, &[]).expect("parses");
    run(&s, &RunOptions::default()).expect_err("a broken script must fail")
}

#[test]
fn the_good_script_passes() {
    let s = Script::parse("good.pkt", GOOD, &[]).unwrap();
    run(&s, &RunOptions::default()).unwrap();
}

#[test]
fn a_wrong_window_fails_at_its_line_with_the_packet_the_engine_sent() {
    let f = failure(&broken(11, "+0.04 > . 1:1(0) ack 1001 win 65535"));
    assert_eq!(f.line, 11);
    assert!(
        f.message
            .contains("tcp_window: expected: 65535 vs actual: 64700"),
        "{f}"
    );
    assert_eq!(
        f.actual.as_deref(),
        Some("0.140000 > . 1:1(0) ack 1001 win 64700")
    );
}

#[test]
fn an_ack_at_another_time_is_a_timing_error() {
    // The delayed ACK comes 40 ms after the data, not at once (10 ms tolerance)...
    let f = failure(&broken(11, "+0.00 > . 1:1(0) ack 1001 win 64700"));
    assert_eq!(f.line, 11);
    assert!(
        f.message.contains("the engine sent nothing by 0.110000 s"),
        "{f}"
    );
    // ... and not 100 ms after it.
    let f = failure(&broken(11, "+0.10 > . 1:1(0) ack 1001 win 64700"));
    assert!(
        f.message
            .contains("expected outbound packet at 0.200000 s but it was sent at 0.140000 s"),
        "{f}"
    );
}

#[test]
fn a_packet_that_never_comes_fails_after_the_tolerance() {
    let text = format!("{GOOD}+0.10 > . 1:1(0) ack 1001 win 65535\n");
    let f = failure(&text);
    assert_eq!(f.line, 15);
    assert!(f.message.contains("the engine sent nothing"), "{f}");
}

#[test]
fn wrong_options_and_flags_and_sequence_numbers_are_named() {
    let f = failure(&broken(
        7,
        "+0.00 > S. 0:0(0) ack 1 win 65535 <mss 1460,nop,nop,sackOK>",
    ));
    assert!(f.message.contains("tcp_options"), "{f}");
    let f = failure(&broken(
        7,
        "+0.00 > S 0:0(0) ack 1 win 65535 <mss 1460,sackOK,eol,eol>",
    ));
    assert!(
        f.message.contains("tcp_flags: expected: S vs actual: S."),
        "{f}"
    );
    let f = failure(&broken(14, "+0.00 > F. 2:2(0) ack 1001 win 65535"));
    assert!(
        f.message.contains("tcp_seq: expected: 2 vs actual: 1"),
        "{f}"
    );
}

#[test]
fn a_system_call_with_another_result_fails() {
    let f = failure(&broken(12, "+0.00 recv(4, ..., 2000, 0) = 999"));
    assert_eq!(f.line, 12);
    assert!(
        f.message
            .contains("recv(): expected 999 but the engine's answer is 1000"),
        "{f}"
    );
}

#[test]
fn a_sysctl_value_outside_the_profile_is_refused_with_its_line() {
    let text = GOOD.replacen(
        " 0.00 socket",
        " 0.00 `sysctl -w net.inet.tcp.sack.enable=0`\n+0.00 socket",
        1,
    );
    let f = failure(&text);
    assert_eq!(f.line, 2);
    assert!(f.message.contains("not profile F's value (1)"), "{f}");
    let text = GOOD.replacen(" 0.00 socket", " 0.00 `rm -rf /`\n+0.00 socket", 1);
    assert!(failure(&text).message.contains("unsupported shell command"));
}

#[test]
fn unsupported_calls_and_blocking_calls_are_errors_not_hangs() {
    let f = failure(&broken(12, "+0.00 poll(4, ..., 1) = 1"));
    assert!(f.message.contains("not supported"), "{f}");
    // A blocking recv with nothing to read would block forever in packetdrill.
    let text = broken(
        12,
        "+0.00 recv(4, ..., 2000, 0) = 1000\n+0.00 recv(4, ..., 2000, 0) = 0",
    );
    let f = failure(&text);
    assert!(f.message.contains("would block"), "{f}");
}

/// A good script under profile L: google/packetdrill's defaults line, Linux's SYN,ACK and a
/// TCP_INFO block.
const GOOD_LINUX: &str = "\
`../common/defaults.sh`
 0.00 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0.00 bind(3, ..., ...) = 0
+0.00 listen(3, 1) = 0
+0.10 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
+0.00 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
+0.10 < . 1:1(0) ack 1 win 320
+0.00 accept(3, ..., ...) = 4
+0.00 %{
assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd
assert tcpi_ca_state == TCP_CA_Open
}%
";

fn linux() -> RunOptions {
    RunOptions {
        profile: ackclock_packetdrill::profile::Profile::Linux,
        ..RunOptions::default()
    }
}

#[test]
fn profile_l_passes_linux_script_and_names_the_tcpi_field_that_differs() {
    let s = Script::parse("good.pkt", GOOD_LINUX, &[]).unwrap();
    run(&s, &linux()).unwrap();
    let wrong = GOOD_LINUX.replace("tcpi_snd_cwnd == 10", "tcpi_snd_cwnd == 4");
    let s = Script::parse("broken.pkt", &wrong, &[]).unwrap();
    let f = run(&s, &linux()).unwrap_err();
    assert_eq!(f.line, 9);
    assert!(
        f.message.contains("the engine's tcpi_snd_cwnd is 10"),
        "{f}"
    );
}

#[test]
fn profile_l_refuses_a_sysctl_it_does_not_have() {
    let text = GOOD_LINUX.replace(
        "`../common/defaults.sh`",
        "0 `sysctl -q net.ipv4.tcp_frto=0`",
    );
    let s = Script::parse("broken.pkt", &text, &[]).unwrap();
    let f = run(&s, &linux()).unwrap_err();
    assert_eq!(f.line, 1);
    assert!(
        f.message
            .contains("net.ipv4.tcp_frto=0 is not profile L's value (2)"),
        "{f}"
    );
    // Profile F does not know the defaults line.
    let s = Script::parse("good.pkt", GOOD_LINUX, &[]).unwrap();
    assert_eq!(run(&s, &RunOptions::default()).unwrap_err().line, 1);
}
