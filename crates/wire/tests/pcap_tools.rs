//! The pcap files we write must open in the standard tools. Each test runs the tool when it
//! is installed (CI installs tcpdump, tshark and tcptrace) and says clearly when it skips.

use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    write_ipv4_tcp, Instant, Ipv4Header, SackBlock, TcpFlags, TcpHeader, TcpOptions,
};
use core::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::Command;

const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

fn tool(name: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: {name} is not installed (CI installs it with apt-get)");
    }
    found
}

/// A short conversation: handshake with options, two data segments, an ACK carrying SACK,
/// FIN exchange. Timestamps 1 ms apart with sub-microsecond parts. Each test writes its own
/// file (`name`): the tests run in parallel, and one rewriting a file another's tool was
/// reading made tcptrace see 0 packets now and then.
fn write_conversation(name: &str) -> (ackclock_testkit::TempDir, PathBuf) {
    let dir = ackclock_testkit::TempDir::new(&format!("pcap-{name}"));
    let path = dir.join(format!("{name}.pcap"));
    let mut w = PcapWriter::new(std::io::BufWriter::new(
        std::fs::File::create(&path).unwrap(),
    ))
    .unwrap();
    let c = Ipv4Header::new(CLIENT, SERVER, 6);
    let s = Ipv4Header::new(SERVER, CLIENT, 6);
    let base = TcpHeader {
        src_port: 40000,
        dst_port: 9,
        window: 65535,
        ..TcpHeader::default()
    };
    let rev = TcpHeader {
        src_port: 9,
        dst_port: 40000,
        ..base
    };
    let syn_opts = TcpOptions {
        mss: Some(1460),
        window_scale: Some(7),
        sack_permitted: true,
        timestamps: Some(Timestamps {
            tsval: 100,
            tsecr: 0,
        }),
        ..TcpOptions::NONE
    };
    let mut sack = TcpOptions::NONE;
    sack.sack.push(SackBlock {
        left: 1001 + 1000,
        right: 1001 + 2000,
    });
    let data = vec![b'x'; 1000];
    let pkts: Vec<(Ipv4Header, TcpHeader, &[u8])> = vec![
        (
            c,
            TcpHeader {
                seq: 1000,
                flags: TcpFlags::SYN,
                options: syn_opts,
                ..base
            },
            &[],
        ),
        (
            s,
            TcpHeader {
                seq: 5000,
                ack: 1001,
                flags: TcpFlags::SYN | TcpFlags::ACK,
                options: syn_opts,
                ..rev
            },
            &[],
        ),
        (
            c,
            TcpHeader {
                seq: 1001,
                ack: 5001,
                flags: TcpFlags::ACK,
                ..base
            },
            &[],
        ),
        (
            c,
            TcpHeader {
                seq: 1001,
                ack: 5001,
                flags: TcpFlags::ACK,
                ..base
            },
            &data,
        ),
        (
            c,
            TcpHeader {
                seq: 2001,
                ack: 5001,
                flags: TcpFlags::ACK | TcpFlags::PSH,
                ..base
            },
            &data,
        ),
        (
            s,
            TcpHeader {
                seq: 5001,
                ack: 1001,
                flags: TcpFlags::ACK,
                options: sack,
                ..rev
            },
            &[],
        ),
        (
            s,
            TcpHeader {
                seq: 5001,
                ack: 3001,
                flags: TcpFlags::ACK,
                ..rev
            },
            &[],
        ),
        (
            c,
            TcpHeader {
                seq: 3001,
                ack: 5001,
                flags: TcpFlags::FIN | TcpFlags::ACK,
                ..base
            },
            &[],
        ),
        (
            s,
            TcpHeader {
                seq: 5001,
                ack: 3002,
                flags: TcpFlags::FIN | TcpFlags::ACK,
                ..rev
            },
            &[],
        ),
        (
            c,
            TcpHeader {
                seq: 3002,
                ack: 5002,
                flags: TcpFlags::ACK,
                ..base
            },
            &[],
        ),
    ];
    let mut buf = [0u8; 2000];
    for (i, (ip, tcp, payload)) in pkts.iter().enumerate() {
        let n = write_ipv4_tcp(&mut buf, ip, tcp, payload).unwrap();
        w.write_packet(Instant::from_nanos(1_000_000 * i as u64 + 123), &buf[..n])
            .unwrap();
    }
    w.flush().unwrap();
    (dir, path)
}

#[test]
fn tcpdump_reads_our_pcap() {
    if !tool("tcpdump") {
        return;
    }
    let (_dir, path) = write_conversation("tcpdump");
    let out = Command::new("tcpdump")
        .args(["-nn", "-S", "-tt", "-v", "--nano", "-r"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tcpdump failed: {err}");
    assert!(
        err.contains("RAW") || err.contains("Raw IP"),
        "link type: {err}"
    );
    // Every packet is decoded with a good checksum, options and nanosecond timestamps.
    assert_eq!(text.matches("198.18.0.").count(), 20, "{text}");
    assert!(text.contains("0.000000123"), "{text}");
    assert!(text.contains("Flags [S]"), "{text}");
    assert!(text.contains("Flags [S.]"), "{text}");
    assert!(
        text.contains("mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7"),
        "{text}"
    );
    assert!(text.contains("sack 1 {2001:3001}"), "{text}");
    assert!(
        !text.contains("incorrect"),
        "a checksum was reported bad: {text}"
    );
    assert!(
        text.contains("cksum") && text.contains("(correct)"),
        "{text}"
    );
}

#[test]
fn tshark_reads_our_pcap_without_errors() {
    if !tool("tshark") {
        return;
    }
    let (_dir, path) = write_conversation("tshark");
    let out = Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-r"])
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "tcp.flags.str",
            "-e",
            "_ws.expert.message",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.lines().count(), 10, "{text}");
    for bad in ["Malformed", "checksum", "Bad"] {
        assert!(!text.contains(bad), "tshark reports {bad}: {text}");
    }
}

#[test]
fn tcptrace_reads_our_pcap() {
    if !tool("tcptrace") {
        return;
    }
    let (_dir, path) = write_conversation("tcptrace");
    let out = Command::new("tcptrace")
        .arg("-l")
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tcptrace failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 TCP connection traced"), "{text}");
    assert!(text.contains("total packets:"), "{text}");
    assert!(
        text.contains("unique bytes sent:") && text.contains("2000"),
        "{text}"
    );
}
