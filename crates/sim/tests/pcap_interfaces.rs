//! Captures like ns-3's per-device pcaps: one file per interface, both directions, what the
//! node sends stamped when its serializer starts and what it receives when the last bit
//! arrives. Captured at the sender's interface, tcptrace's round-trip time is the path's.

use ackclock_sim::{build, Scenario};
use ackclock_wire::pcap::PcapReader;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// a -- r -- b: 100 Mbit/s links of 10 ms and 40 ms one way, so the propagation round trip
/// is 100 ms. The receiver ACKs every segment: a delayed ACK adds the receiver's hold time to
/// a sample (tcptrace counts it), which is not the path's round-trip time. The sender's
/// window stays below the path's 1.25 MB bandwidth-delay product and both links run at the
/// same rate, so no queue builds and every sample sees the bare path.
const SCENARIO: &str = r#"
name = "rtt"
seed = 1
duration_s = 5
[[node]]
name = "a"
[[node]]
name = "r"
kind = "router"
[[node]]
name = "b"
pcap = true
[[link]]
a = "a"
b = "r"
rate_bps = 100e6
delay_ms = 10
pcap = true
[[link]]
a = "r"
b = "b"
rate_bps = 100e6
delay_ms = 40
[[flow]]
from = "a"
to = "b"
tcp = "newreno"
receiver_overrides = { ack_every = 1 }
app = { kind = "bulk", bytes = 1e6 }
"#;

/// The round trip of a full segment and its ACK: propagation both ways plus each packet's
/// serialization on both hops (store and forward at the router).
fn path_rtt_ms() -> f64 {
    let ser_ms = |bytes: f64| bytes * 8.0 / 100e6 * 1e3;
    2.0 * (10.0 + 40.0) + 2.0 * ser_ms(1500.0) + 2.0 * ser_ms(40.0)
}

fn run(tag: &str) -> (PathBuf, ackclock_sim::RunResult) {
    let dir = std::env::temp_dir().join(format!("ackclock-ifpcap-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = Scenario::from_str_named(SCENARIO, Path::new("rtt.toml")).unwrap();
    let r = build(&s, Some(&dir)).unwrap().run(|_| {});
    (dir, r)
}

/// (time ns, source address, IP length) of every packet in a capture.
fn packets(path: &Path) -> Vec<(u64, Ipv4Addr, usize)> {
    let mut rd = PcapReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = rd.next_record() {
        let rec = rec.unwrap();
        let src = Ipv4Addr::new(rec.data[12], rec.data[13], rec.data[14], rec.data[15]);
        out.push((rec.ts.as_nanos(), src, rec.data.len()));
    }
    out
}

#[test]
fn one_capture_per_interface_with_both_directions_in_time_order() {
    let (dir, r) = run("files");
    let files: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".pcap"))
        .collect();
    // The link a-r asked for both its ends (a's and the router's interface), node b for
    // all of its interfaces (one).
    assert_eq!(
        files,
        ["a-r.pcap", "b-r.pcap", "r-a.pcap"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let link = |name: &str| {
        r.summary
            .links
            .iter()
            .find(|l| l.name == name)
            .unwrap()
            .packets
    };
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 3));
    for (file, me, sent_on, received_on) in [
        ("a-r.pcap", a, "a-r", "r-a"),
        ("r-a.pcap", b, "r-a", "a-r"),
        ("b-r.pcap", b, "b-r", "r-b"),
    ] {
        let p = packets(&dir.join(file));
        assert!(
            p.windows(2).all(|w| w[0].0 <= w[1].0),
            "{file}: time goes backwards"
        );
        // The router forwards b's packets, so in its file b is the source of what it sends.
        let sent = p.iter().filter(|x| x.1 == me).count() as u64;
        let received = p.len() as u64 - sent;
        assert_eq!(sent, link(sent_on), "{file}: packets sent");
        assert_eq!(received, link(received_on), "{file}: packets received");
        assert!(
            sent > 300 && received > 300,
            "{file}: {sent} sent, {received} received"
        );
    }
    // A packet's transmission starts at a and its last bit reaches r one serialization and
    // the propagation delay later: the first SYN in both files.
    let (at_a, at_r) = (
        packets(&dir.join("a-r.pcap"))[0],
        packets(&dir.join("r-a.pcap"))[0],
    );
    assert_eq!(at_a.2, at_r.2);
    let syn_ns = (10e-3 + at_a.2 as f64 * 8.0 / 100e6) * 1e9;
    assert!(
        ((at_r.0 - at_a.0) as f64 - syn_ns).abs() < 1.0,
        "{at_a:?} -> {at_r:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// "tcptrace on a simulator capture gives the true RTT within 1%" (issue 14): min, mean and
/// the handshake's RTT of the data direction, on the sender's interface capture.
#[test]
fn tcptrace_rtt_on_the_senders_capture_is_the_path_rtt_within_1_percent() {
    let found = Command::new("sh")
        .args(["-c", "command -v tcptrace"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: tcptrace is not installed (CI installs it with apt-get)");
        return;
    }
    let (dir, _) = run("tcptrace");
    let out = Command::new("tcptrace")
        .arg("-lr")
        .arg(dir.join("a-r.pcap"))
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // "     RTT min:   100.0 ms   RTT min:   0.0 ms": the first column is a -> b.
    let first = |label: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} in tcptrace's output:\n{text}"));
        line[line.find(':').unwrap() + 1..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let samples = first("RTT samples:");
    assert!(samples > 600.0, "{samples} RTT samples");
    let truth = path_rtt_ms();
    for label in ["RTT min:", "RTT avg:", "RTT max:", "RTT from 3WHS:"] {
        let v = first(label);
        assert!(
            (v - truth).abs() / truth < 0.01,
            "tcptrace {label} {v} ms, the path's RTT {truth:.3} ms"
        );
    }
}
