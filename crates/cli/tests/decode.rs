//! `ackclock decode` lists what we write and counts what is malformed.

use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::{write_ipv4_tcp, Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions};
use core::net::Ipv4Addr;
use std::process::Command;

#[test]
fn decode_lists_packets_and_counts_malformed() {
    let dir = ackclock_testkit::TempDir::new("decode");
    let path = dir.join("t.pcap");
    let mut w = PcapWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    let ip = Ipv4Header::new(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        6,
    );
    let tcp = TcpHeader {
        src_port: 1,
        dst_port: 2,
        seq: 100,
        flags: TcpFlags::SYN,
        window: 512,
        options: TcpOptions {
            mss: Some(536),
            ..TcpOptions::NONE
        },
        ..TcpHeader::default()
    };
    let mut buf = [0u8; 200];
    let n = write_ipv4_tcp(&mut buf, &ip, &tcp, b"").unwrap();
    w.write_packet(Instant::from_nanos(5), &buf[..n]).unwrap();
    let mut corrupt = buf;
    corrupt[n - 1] ^= 0x10; // flips a bit of the MSS option: TCP checksum fails
    w.write_packet(Instant::from_nanos(6), &corrupt[..n])
        .unwrap();
    w.write_packet(Instant::from_nanos(7), &buf[..10]).unwrap();
    drop(w);

    let out = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .arg("decode")
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("0.000000005 198.18.0.1:1 > 198.18.0.2:2 Flags [S], seq 100, win 512, options [mss 536], length 0"),
        "{text}"
    );
    assert!(
        text.contains("3 packets: 1 TCP/IPv4, 2 malformed or not TCP, 0 not IPv4"),
        "{text}"
    );
    assert!(text.contains("1  bad TCP checksum"), "{text}");
    assert!(text.contains("1  truncated"), "{text}");
}

#[test]
fn decode_of_a_missing_file_says_which() {
    let out = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .args(["decode", "no/such/file.pcap"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no/such/file.pcap: cannot read: No such file"),
        "{err}"
    );
}

#[test]
fn decode_of_a_non_pcap_file_is_a_clear_error() {
    let dir = ackclock_testkit::TempDir::new("decode-bad");
    let path = dir.join("x.pcap");
    std::fs::write(&path, b"this is not a capture file at all").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .arg("decode")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not a pcap file"), "{err}");
}

/// A two-way SACK transfer over a lossy link, captured at both ends by the simulator.
const SACK_LOSS: &str = r#"
name = "sack_loss"
seed = 3
duration_s = 3
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate_bps = 10e6
delay_ms = 20
impair = { loss_prob = 0.03 }
queue = { kind = "drop_tail", limit_pkts = 100 }
pcap = true
[[flow]]
from = "a"
to = "b"
tcp = "sack"
app = { kind = "bulk" }
[[flow]]
from = "b"
to = "a"
tcp = "sack"
app = { kind = "bulk", bytes = 200000 }
"#;

/// `ackclock decode [-S] FILE`'s packet lines, written as tcpdump writes them (its
/// `a.b.c.d.port` addresses and `IP`, without the time, whose format differs).
fn decode_as_tcpdump(file: &std::path::Path, absolute: bool) -> Vec<String> {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ackclock"));
    c.arg("decode");
    if absolute {
        c.arg("-S");
    }
    let out = c.arg(file).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The last line is the summary.
    lines[..lines.len() - 1]
        .iter()
        .map(|l| {
            let rest = l.split_once(' ').unwrap().1;
            let (from, rest) = rest.split_once(" > ").unwrap();
            let (to, rest) = rest.split_once(' ').unwrap();
            let dots = |a: &str| a.replacen(':', ".", 1);
            format!("{} > {}: {rest}", dots(from), dots(to))
        })
        .collect()
}

/// tcpdump's relative numbers (its default) and absolute ones (`-S`): the same lines, SACK
/// blocks and pure ACKs included, on a capture with losses, retransmissions and SACK.
#[test]
fn decode_numbers_sequences_as_tcpdump_does() {
    let dir = ackclock_testkit::TempDir::new("decode-rel");
    let scenario = dir.join("sack_loss.toml");
    std::fs::write(&scenario, SACK_LOSS).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .arg("sim")
        .arg(&scenario)
        .arg("--no-plots")
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pcap = dir.join("o").join("a-b.pcap");
    let ours = decode_as_tcpdump(&pcap, false);
    // Relative: the handshake's last ACK acknowledges 1, the first data starts at 1.
    assert!(
        ours.iter().any(|l| l.contains("seq 1:1449, ack 1,")),
        "{ours:#?}"
    );
    assert!(ours.iter().any(|l| l.contains("sack 1 {")), "no SACK block");
    let Ok(v) = Command::new("tcpdump").arg("--version").output() else {
        println!("SKIP: the comparison with tcpdump (not installed)");
        return;
    };
    assert!(v.status.success());
    for absolute in [false, true] {
        let mut c = Command::new("tcpdump");
        c.args(["-nn", "-r"]).arg(&pcap);
        if absolute {
            c.arg("-S");
        }
        let t = c.output().unwrap();
        let theirs: Vec<String> = String::from_utf8(t.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split_once(" IP ").unwrap().1.to_string())
            .collect();
        let ours = decode_as_tcpdump(&pcap, absolute);
        assert_eq!(ours.len(), theirs.len());
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(o, t, "absolute: {absolute}");
        }
    }
}
