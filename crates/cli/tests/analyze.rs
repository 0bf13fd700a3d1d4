//! `ackclock analyze` against tcptrace and tshark on the same simulator captures: a bulk
//! transfer with 1% loss and 2% reordering on the data path, captured at the sender
//! (`a-b.pcap`) and at the receiver (`b-a.pcap`).
//!
//! Held to tcptrace (`tcptrace -l -r -n -Z`), whose definitions ours follow, per
//! direction: total packets, data packets, unique bytes, retransmitted packets and bytes,
//! out-of-order packets, duplicate and triple duplicate ACKs, SACK and D-SACK packets,
//! zero-window advertisements, exactly; the number of RTT samples exactly (tcptrace also
//! counts the SYN's sample, which is our `handshake_rtt_ms`); the RTT p50 within 5% of
//! tcptrace's, or within the 1 ms resolution of tcptrace's raw sample dump (`-Z` writes
//! whole milliseconds) when that is larger; the RTT mean within 5% of tcptrace's "RTT avg"
//! or its 0.1 ms resolution.
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

fn analyze_json(pcap: &Path) -> serde_json::Value {
    let o = bin()
        .args(["analyze", "--json", "--no-figures"])
        .arg(pcap)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Pure JSON on stdout: the whole of it parses.
    serde_json::from_slice(&o.stdout).expect("stdout is one JSON document")
}

/// tcptrace's long output as (label, [a->b value, b->a value]) for its two-column lines.
fn tcptrace(pcap: &Path, cwd: &Path) -> HashMap<String, [f64; 2]> {
    let o = Command::new("tcptrace")
        .args(["-l", "-r", "-n", "-Z"])
        .arg(pcap)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("1 TCP connection traced"), "{text}");
    let mut m = HashMap::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split(':').collect();
        if parts.len() != 3 {
            continue;
        }
        let num = |s: &str| {
            s.split_whitespace()
                .next()
                .and_then(|v| v.parse::<f64>().ok())
        };
        if let (Some(a), Some(b)) = (num(parts[1]), num(parts[2])) {
            m.insert(parts[0].trim().to_string(), [a, b]);
        }
    }
    m
}

/// tcptrace's raw RTT samples of one direction, ms, in the order taken.
fn rtt_raw(cwd: &Path, file: &str) -> Vec<f64> {
    std::fs::read_to_string(cwd.join(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

fn p50(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = (0.5 * v.len() as f64).ceil() as usize;
    v[rank.max(1) - 1]
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

fn u(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn analyze_agrees_with_tcptrace_per_direction() {
    if !installed("tcptrace") {
        return;
    }
    let d = captures("analyze-tcptrace");
    let mut compared_p50 = false;
    for cap in ["a-b", "b-a"] {
        let pcap = d.join("sim").join(format!("{cap}.pcap"));
        let ours = analyze_json(&pcap);
        let conns = ours["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 1, "{cap}");
        let cwd = d.join(format!("tcptrace-{cap}"));
        std::fs::create_dir_all(&cwd).unwrap();
        let tt = tcptrace(&pcap, &cwd);
        for (i, raw) in [(0, "a2b_rttraw.dat"), (1, "b2a_rttraw.dat")] {
            let dir = &conns[0]["directions"][i];
            let at = |label: &str| tt.get(label).unwrap_or_else(|| panic!("no {label}"))[i];
            for (label, field) in [
                ("total packets", "packets"),
                ("actual data pkts", "data_pkts"),
                ("unique bytes sent", "unique_bytes"),
                ("rexmt data pkts", "rexmt_pkts"),
                ("rexmt data bytes", "rexmt_bytes"),
                ("outoforder pkts", "out_of_order_pkts"),
                ("duplicate acks", "dup_acks"),
                ("triple dupacks", "triple_dup_acks"),
                ("sack pkts sent", "sack_pkts"),
                ("dsack pkts sent", "dsack_pkts"),
                ("zero win adv", "zero_window_adv"),
            ] {
                assert_eq!(u(&dir[field]), at(label), "{cap} direction {i}: {label}");
            }
            let handshake = usize::from(!dir["handshake_rtt_ms"].is_null());
            let count = dir["rtt_ms"]["count"].as_f64().unwrap_or(0.0);
            assert_eq!(
                count + handshake as f64,
                at("RTT samples"),
                "{cap} {i}: RTT samples"
            );
            if count == 0.0 {
                continue;
            }
            // The SYN's sample comes first in tcptrace's dump. The dump is not always whole:
            // none for a direction without data, and at the receiver's capture, where the
            // samples are the receiver's ACK delays (mostly 0 ms), 16 lines for 872
            // samples. The p50 is compared when the dump holds every sample; the mean
            // (below) always.
            let mut theirs = rtt_raw(&cwd, raw);
            if theirs.len() as f64 == at("RTT samples") {
                let theirs = &mut theirs[handshake..];
                let (ours_p50, their_p50) = (u(&dir["rtt_ms"]["p50"]), p50(theirs));
                let tol = (0.05 * their_p50).max(1.0);
                assert!(
                    (ours_p50 - their_p50).abs() <= tol,
                    "{cap} {i}: RTT p50 {ours_p50} ms, tcptrace {their_p50} ms"
                );
                compared_p50 |= cap == "a-b" && i == 0;
            } else {
                println!(
                    "{cap} {i}: tcptrace dumped {} of its RTT samples: p50 not compared",
                    theirs.len()
                );
            }
            // tcptrace's mean includes the SYN's sample: take it out again.
            let hs = dir["handshake_rtt_ms"].as_f64().unwrap_or(0.0);
            let n = at("RTT samples");
            let their_mean = (at("RTT avg") * n - hs) / (n - handshake as f64);
            let ours_mean = u(&dir["rtt_ms"]["mean"]);
            let tol = (0.05 * their_mean).max(0.1 * n / (n - handshake as f64));
            assert!(
                (ours_mean - their_mean).abs() <= tol,
                "{cap} {i}: RTT mean {ours_mean} ms, tcptrace {their_mean} ms"
            );
        }
        // The scenario did what it is for: losses, retransmissions, reordering seen.
        let a2b = &conns[0]["directions"][0];
        assert!(
            u(&a2b["rexmt_pkts"]) > 0.0 && u(&a2b["dup_acks"]) > 0.0,
            "{cap}"
        );
        if cap == "b-a" {
            assert!(
                u(&a2b["out_of_order_pkts"]) > 0.0,
                "{cap}: no reordering seen"
            );
        }
    }
    // The sender's capture, where the RTT is the path's, had its p50 compared.
    assert!(compared_p50);
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
