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
