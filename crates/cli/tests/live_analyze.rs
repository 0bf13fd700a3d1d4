//! `ackclock analyze` on live captures (root only; SKIP otherwise): a Linux-to-Linux
//! transfer (socat) through `ackclock emulate` with 1% loss and 3% reordering (8 ms) each
//! way (Linux then answers some spurious retransmissions with D-SACKs), captured by tcpdump
//! at the sender's interface and by the emulator itself (ackclock's pcap writer), each
//! held to tcptrace on the same file (`analyze_common::compare_with_tcptrace`:
//! retransmissions, duplicate ACKs and the other counts exactly, RTT p50 within 5%).
//!
//! The namespaces are named with the test's PID and deleted on drop even when an assertion
//! fails; every process is ended by its PID; every wait is a condition with a deadline.

mod analyze_common;
mod live_common;

use analyze_common::*;
use live_common::*;
use std::time::Duration;

#[test]
fn analyze_agrees_with_tcptrace_on_linux_through_a_lossy_emulator() {
    let test = "analyze_agrees_with_tcptrace_on_linux_through_a_lossy_emulator";
    if !can_run(test, &["socat", "ss", "tcpdump", "tcptrace"]) {
        return;
    }
    let d = TmpDir::new("live-analyze");
    let (data, got) = (d.path("data"), d.path("got"));
    write_random_file(&data, 4 << 20, 21);
    let emu_pcap = d.path("emu.pcap");
    let (emu, _names, left, right) = emulate(
        "aza",
        &[
            "--pcap",
            emu_pcap.to_str().unwrap(),
            "--rate",
            "20mbit",
            "--delay",
            "25ms",
            "--loss",
            "1%",
            "--reorder",
            "3%:8ms",
            "--queue",
            "droptail:64",
            "--seed",
            "3",
        ],
    );
    let sink = spawn_in(
        &right,
        "socat",
        &[
            "-u",
            "TCP-LISTEN:5001,reuseaddr",
            &format!("CREATE:{}", got.display()),
        ],
    );
    wait_tcp_listening(&right, 5001);
    let tcpdump_pcap = d.path("tcpdump.pcap");
    let mut tcpdump = spawn_in(
        &left,
        "tcpdump",
        &[
            "-i",
            "emu0",
            "-n",
            "-s",
            "128",
            "-U",
            "-w",
            tcpdump_pcap.to_str().unwrap(),
            "tcp port 5001",
        ],
    );
    assert!(
        tcpdump
            .wait_line("listening on", Duration::from_secs(10))
            .is_some(),
        "tcpdump did not start: {:?}",
        tcpdump.err
    );
    let mut send = std::process::Command::new("ip");
    send.args(["netns", "exec", &left, "socat", "-u"])
        .arg(format!("OPEN:{}", data.display()))
        .arg("TCP:198.18.2.1:5001");
    let o = output_within(send, Duration::from_secs(60));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (code, _, err) = sink.finish(Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    same_file(&data, &got).unwrap();
    // tcpdump (-U: a packet written as processed) drops what it has not processed at
    // SIGINT: stop it once its file holds the connection's end (both FINs).
    wait_until(
        "tcpdump's file holds both FINs",
        Duration::from_secs(20),
        || analyze_json(&tcpdump_pcap)["connections"][0]["complete"] == true,
    );
    tcpdump.signal(libc::SIGINT);
    let (code, _, tcpdump_err) = tcpdump.finish(Duration::from_secs(10));
    assert_eq!(code, Some(0), "{tcpdump_err}");
    // The emulator writes its pcap and its JSON at SIGTERM.
    let j = stop_json(emu, "emulate");
    let losses = j["left_to_right"]["loss_drops"].as_u64().unwrap()
        + j["right_to_left"]["loss_drops"].as_u64().unwrap();
    assert!(losses > 0, "{j}");
    for (pcap, tag) in [(&tcpdump_pcap, "tcpdump"), (&emu_pcap, "emulator")] {
        assert!(
            compare_with_tcptrace(pcap, &d.path(&format!("tt-{tag}"))),
            "{tag}: p50 not compared"
        );
        let a = analyze_json(pcap);
        let data_dir = &a["connections"][0]["directions"][0];
        assert_eq!(
            u(&data_dir["unique_bytes"]),
            (4 << 20) as f64,
            "{tag}: {tcpdump_err}"
        );
        assert!(u(&data_dir["rexmt_pkts"]) > 0.0, "{tag}: no retransmission");
    }
}

/// ackclock's own live capture: `ackclock stream` (SACK preset) sends to Linux through the
/// same lossy emulator, writing its pcap as it goes; held to tcptrace on that file.
#[test]
fn analyze_agrees_with_tcptrace_on_an_ackclock_stream_capture() {
    let test = "analyze_agrees_with_tcptrace_on_an_ackclock_stream_capture";
    if !can_run(test, &["socat", "ss", "tcptrace"]) {
        return;
    }
    let d = TmpDir::new("live-analyze-stream");
    let (data, got) = (d.path("data"), d.path("got"));
    let size = 1 << 20;
    write_random_file(&data, size, 22);
    let (emu, _names, left, right) = emulate(
        "azs",
        &[
            "--rate",
            "20mbit",
            "--delay",
            "25ms",
            "--loss",
            "1%",
            "--queue",
            "droptail:64",
            "--seed",
            "4",
        ],
    );
    let sink = spawn_in(
        &right,
        "socat",
        &[
            "-u",
            "TCP-LISTEN:5001,reuseaddr",
            &format!("CREATE:{}", got.display()),
        ],
    );
    wait_tcp_listening(&right, 5001);
    let pcap = d.path("stream.pcap");
    let sender = spawn_in(
        &left,
        bin(),
        &[
            "stream",
            "--connect",
            "198.18.2.1:5001",
            "--file",
            data.to_str().unwrap(),
            "--preset",
            "sack",
            "--pcap",
            pcap.to_str().unwrap(),
        ],
    );
    let (code, out, err) = sender.finish(Duration::from_secs(120));
    assert_eq!(code, Some(0), "{out}\n{err}");
    let (code, _, err) = sink.finish(Duration::from_secs(30));
    assert_eq!(code, Some(0), "{err}");
    same_file(&data, &got).unwrap();
    drop(emu);
    assert!(compare_with_tcptrace(&pcap, &d.path("tt")));
    let a = analyze_json(&pcap);
    let sent = &a["connections"][0]["directions"][0];
    assert_eq!(u(&sent["unique_bytes"]), size as f64);
}
