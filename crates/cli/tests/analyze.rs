//! `ackclock analyze` against tcptrace and tshark on the same simulator captures: a bulk
//! transfer with 1% loss and 2% reordering on the data path, captured at the sender
//! (`a-b.pcap`) and at the receiver (`b-a.pcap`).
//!
//! Held to tcptrace (`tcptrace -l -r -n -Z`), whose definitions ours follow: every count
//! tcptrace also prints exactly, the RTT p50 within 5% (`analyze_common::compare_with_tcptrace`
//! states each rule).
//!
//! Held to tshark where its definitions are comparable: packets per direction and SACK
//! packets exactly; duplicate ACKs exactly (tshark's are narrower, pure ACKs with an
//! unchanged window, but every ACK of this one-way transfer is pure and its window
//! constant); retransmissions, at the sender's capture only, between tshark's
//! `tcp.analysis.retransmission` and that plus `tcp.analysis.out_of_order` (tshark calls a
//! resent segment "out of order" when it comes soon after the highest one, a heuristic
//! tcptrace and we do not apply). At the receiver's capture tshark's retransmission count
//! is not comparable (it also flags segments that arrived late through reordering).
//!
//! tcptrace's elapsed time is not compared: it takes a packet at time 0.000000 as "no
//! time yet", and a simulator capture starts at 0.
//!
//! Skips (prints SKIP) when tcptrace or tshark is not installed; CI installs both.

mod analyze_common;

use analyze_common::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

const SCENARIO: &str = "name = \"analyze\"\nseed = 5\nduration_s = 20\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 10e6\ndelay_ms = 20\nqueue = { kind = \"drop_tail\", limit_pkts = 50 }\nimpair_ab = { loss_prob = 0.01, reorder = { prob = 0.02, delay_ms = 3 } }\npcap = true\n[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp = \"sack\"\napp = { kind = \"bulk\", bytes = 3e6 }\n";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackclock"))
}

fn installed(tool: &str) -> bool {
    let ok = Command::new(tool).arg("-v").output().is_ok();
    if !ok {
        println!("SKIP: {tool} is not installed");
    }
    ok
}

/// Runs the scenario; returns the directory with `a-b.pcap` and `b-a.pcap`.
fn captures(name: &str) -> ackclock_testkit::TempDir {
    let d = ackclock_testkit::TempDir::new(name);
    let sc = d.join("s.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let o = bin()
        .arg("sim")
        .arg(&sc)
        .arg("--no-plots")
        .arg("--out")
        .arg(d.join("sim"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    d
}

/// Frames per source `ip:port` that match a tshark display filter.
fn tshark_count(pcap: &Path, filter: &str) -> HashMap<String, u64> {
    let o = Command::new("tshark")
        .arg("-r")
        .arg(pcap)
        .args([
            "-Y",
            filter,
            "-T",
            "fields",
            "-e",
            "ip.src",
            "-e",
            "tcp.srcport",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut m = HashMap::new();
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() == 2 {
            *m.entry(format!("{}:{}", f[0], f[1])).or_default() += 1;
        }
    }
    m
}

#[test]
fn analyze_agrees_with_tcptrace_per_direction() {
    if !installed("tcptrace") {
        return;
    }
    let d = captures("analyze-tcptrace");
    // At the sender's capture the RTT is the path's; at the receiver's, its ACK delay.
    let sender = d.join("sim").join("a-b.pcap");
    assert!(compare_with_tcptrace(&sender, &d.join("tt-a-b")));
    let receiver = d.join("sim").join("b-a.pcap");
    compare_with_tcptrace(&receiver, &d.join("tt-b-a"));
    // The scenario did what it is for: losses, retransmissions, reordering seen.
    let a2b = &analyze_json(&receiver)["connections"][0]["directions"][0];
    assert!(u(&a2b["rexmt_pkts"]) > 0.0 && u(&a2b["dup_acks"]) > 0.0);
    assert!(u(&a2b["out_of_order_pkts"]) > 0.0, "no reordering seen");
}

/// scenarios/satnet.toml (4.3BSD over a 2 s satellite path): its client's SYN and the
/// server's SYN-ACK are retransmitted, which tcptrace counts among "rexmt data pkts", and
/// the retransmitted SYN-ACKs are duplicate ACKs of the client's SYN at the client's
/// capture (172, where a rule without the SYN counts 170).
#[test]
fn analyze_agrees_with_tcptrace_on_the_satnet_scenario() {
    if !installed("tcptrace") {
        return;
    }
    let d = ackclock_testkit::TempDir::new("analyze-satnet");
    let sc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/satnet.toml");
    let o = bin()
        .arg("sim")
        .arg(&sc)
        .arg("--no-plots")
        .arg("--out")
        .arg(d.join("sim"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for cap in ["ucl-bbn", "bbn-ucl"] {
        let pcap = d.join("sim").join(format!("{cap}.pcap"));
        let compared_p50 = compare_with_tcptrace(&pcap, &d.join(format!("tt-{cap}")));
        // At the sender's capture the RTT is the path's (about 2 s).
        assert!(compared_p50 || cap == "bbn-ucl", "{cap}: p50 not compared");
        let a = analyze_json(&pcap);
        let syn_ack = &a["connections"][0]["directions"][1];
        assert!(
            u(&syn_ack["syns"]) > 1.0,
            "{cap}: the SYN-ACK was not retransmitted"
        );
    }
}

#[test]
fn analyze_agrees_with_tshark_where_definitions_meet() {
    if !installed("tshark") {
        return;
    }
    let d = captures("analyze-tshark");
    for cap in ["a-b", "b-a"] {
        let pcap = d.join("sim").join(format!("{cap}.pcap"));
        let ours = analyze_json(&pcap);
        let dirs = &ours["connections"][0]["directions"];
        let packets = tshark_count(&pcap, "tcp");
        let sacks = tshark_count(&pcap, "tcp.options.sack");
        let dups = tshark_count(&pcap, "tcp.analysis.duplicate_ack");
        let rexmt = tshark_count(&pcap, "tcp.analysis.retransmission");
        let ooo = tshark_count(&pcap, "tcp.analysis.out_of_order");
        for i in 0..2 {
            let me = dirs[i]["from"].as_str().unwrap();
            let peer = dirs[i]["to"].as_str().unwrap();
            let n = |m: &HashMap<String, u64>, k: &str| m.get(k).copied().unwrap_or(0) as f64;
            assert_eq!(
                u(&dirs[i]["packets"]),
                n(&packets, me),
                "{cap} {me}: packets"
            );
            assert_eq!(
                u(&dirs[i]["sack_pkts"]),
                n(&sacks, me),
                "{cap} {me}: SACK packets"
            );
            // Our duplicate ACKs are the ACKs of this direction's data: sent by the peer.
            assert_eq!(
                u(&dirs[i]["dup_acks"]),
                n(&dups, peer),
                "{cap} {me}: dup ACKs"
            );
            if cap == "a-b" {
                let ours = u(&dirs[i]["rexmt_pkts"]);
                let lo = n(&rexmt, me);
                assert!(
                    lo <= ours && ours <= lo + n(&ooo, me),
                    "{cap} {me}: {ours} retransmissions, tshark {lo} + {} out of order",
                    n(&ooo, me)
                );
            }
        }
    }
}

#[test]
fn analyze_writes_text_csv_and_figures() {
    let d = captures("analyze-outputs");
    let pcap = d.join("sim").join("a-b.pcap");
    let figs = d.join("figs");
    let o = bin()
        .arg("analyze")
        .arg(&pcap)
        .arg("--out")
        .arg(&figs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("connection 1: 198.18.0.1:"), "{text}");
    assert!(
        text.contains("goodput") && text.contains("RTT ") && text.contains("retransmitted"),
        "{text}"
    );
    for kind in ["tseq", "outstanding", "rtt", "throughput"] {
        for ext in ["svg", "png", "html"] {
            let f = figs.join(format!("conn1-a2b-{kind}.{ext}"));
            assert!(f.exists(), "{} missing", f.display());
        }
    }
    // No data from b: no figures of b2a.
    assert!(!figs.join("conn1-b2a-tseq.svg").exists());
    let o = bin()
        .args(["analyze", "--csv", "--no-figures"])
        .arg(&pcap)
        .output()
        .unwrap();
    assert!(o.status.success());
    let csv = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    let cols = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols), "{csv}");
}

#[test]
fn analyze_of_a_non_capture_is_a_clear_error() {
    let d = ackclock_testkit::TempDir::new("analyze-bad");
    let f = d.join("x.pcap");
    std::fs::write(&f, b"this is not a capture file, only some text").unwrap();
    let o = bin()
        .args(["analyze", "--no-figures"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("x.pcap") && err.contains("not a pcap file"),
        "{err}"
    );
}

/// Every capture of the bad-input corpus is analysed as far as it goes (pure JSON, what
/// was malformed counted) or refused with a one-line error naming the file; none panics.
#[test]
fn analyze_reads_the_bad_input_pcaps_or_says_why_not() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/bad-input/pcaps");
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        let o = bin()
            .args(["analyze", "--json", "--no-figures"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{}: {err}", f.display());
        if o.status.success() {
            let j: serde_json::Value = serde_json::from_slice(&o.stdout)
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(j["packets"]["total"].is_u64(), "{}", f.display());
        } else {
            assert_eq!(o.status.code(), Some(1), "{}: {err}", f.display());
            assert!(
                err.starts_with(&format!("error: {}: ", f.display())) && err.lines().count() == 1,
                "{}: {err}",
                f.display()
            );
        }
        n += 1;
    }
    assert!(n >= 10, "{n} pcaps in {}", dir.display());
}
