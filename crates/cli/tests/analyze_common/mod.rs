//! What the analyze tests share: `ackclock analyze --json` and tcptrace on one capture,
//! compared per direction.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackclock"))
}

pub fn analyze_json(pcap: &Path) -> serde_json::Value {
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
pub fn tcptrace(pcap: &Path, cwd: &Path) -> HashMap<String, [f64; 2]> {
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
pub fn rtt_raw(cwd: &Path, file: &str) -> Vec<f64> {
    std::fs::read_to_string(cwd.join(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

pub fn p50(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let rank = (0.5 * v.len() as f64).ceil() as usize;
    v[rank.max(1) - 1]
}

pub fn u(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Holds `ackclock analyze` to tcptrace on `pcap` (one connection), per direction:
/// total packets, data packets, unique bytes, retransmitted packets and bytes, out-of-order
/// packets, duplicate and triple duplicate ACKs, SACK and D-SACK packets, zero-window
/// advertisements and probes exactly; the number of RTT samples exactly (tcptrace also counts the
/// SYN's sample, our `handshake_rtt_ms`); the RTT p50 within 5% of tcptrace's or within
/// the 1 ms resolution of tcptrace's raw dump (`-Z` writes whole milliseconds) when that is
/// larger, whenever the dump holds every sample (it does not for a direction without data,
/// nor at a receiver's capture: 16 lines for 872 samples); the RTT mean within 5% of
/// tcptrace's "RTT avg" or its 0.1 ms resolution. tcptrace runs in `cwd` (created), where
/// `-Z` writes its dumps. Returns whether a p50 was compared for a->b.
pub fn compare_with_tcptrace(pcap: &Path, cwd: &Path) -> bool {
    let ours = analyze_json(pcap);
    let conns = ours["connections"].as_array().unwrap();
    assert_eq!(conns.len(), 1, "{}", pcap.display());
    std::fs::create_dir_all(cwd).unwrap();
    let tt = tcptrace(pcap, cwd);
    let cap = pcap.display();
    let mut compared_p50 = false;
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
            ("sack pkts sent", "sack_pkts"),
            ("dsack pkts sent", "dsack_pkts"),
            ("duplicate acks", "dup_acks"),
            ("triple dupacks", "triple_dup_acks"),
            ("zero win adv", "zero_window_adv"),
            ("zwnd probe pkts", "zwnd_probe_pkts"),
            ("zwnd probe bytes", "zwnd_probe_bytes"),
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
        // The SYN's sample comes first in tcptrace's dump.
        let mut theirs = rtt_raw(cwd, raw);
        if theirs.len() as f64 == at("RTT samples") {
            let theirs = &mut theirs[handshake..];
            let (ours_p50, their_p50) = (u(&dir["rtt_ms"]["p50"]), p50(theirs));
            let tol = (0.05 * their_p50).max(1.0);
            assert!(
                (ours_p50 - their_p50).abs() <= tol,
                "{cap} {i}: RTT p50 {ours_p50} ms, tcptrace {their_p50} ms"
            );
            println!("{cap} {i}: RTT p50 {ours_p50:.2} ms, tcptrace {their_p50} ms");
            compared_p50 |= i == 0;
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
    compared_p50
}
