//! Scenario files: every example parses and runs; mistakes are reported with the file, the
//! line and the field; pcap files written by a run open in tshark.

use ackclock_sim::{build, Scenario};
use std::path::Path;

fn err(text: &str) -> String {
    Scenario::from_str_named(text, Path::new("bad.toml"))
        .expect_err("should be rejected")
        .to_string()
}

#[test]
fn every_example_scenario_parses() {
    let mut n = 0;
    for p in ackclock_testkit::repo_scenarios() {
        let s = Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
        build(&s, None).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        n += 1;
    }
    assert!(n >= 20, "only {n} scenarios found");
}

#[test]
fn unknown_field_names_line() {
    let e = err("seed = 1\nduration_s = 5\n[[node]]\nname = \"a\"\ncolour = \"red\"\n");
    assert!(e.starts_with("bad.toml:5"), "{e}");
    assert!(e.contains("colour"), "{e}");
}

#[test]
fn unknown_node_reference_names_line_and_field() {
    let e = err(
        "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"c\"\nrate_bps = 1e6\n",
    );
    assert!(e.starts_with("bad.toml:7"), "{e}");
    assert!(e.contains("link[0].b"), "{e}");
    assert!(
        e.contains("no node named \"c\"") && e.contains("a, b"),
        "{e}"
    );
}

#[test]
fn bad_values_say_what_was_expected() {
    let base = "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 1e6\n";
    let e = err(&format!(
        "{base}[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp = \"bbr\"\napp = {{ kind = \"bulk\" }}\n"
    ));
    assert!(
        e.contains("bad.toml:12") && e.contains("flow[0].tcp"),
        "{e}"
    );
    assert!(e.contains("expected one of vanilla_4_3bsd"), "{e}");
    let e = err(&format!(
        "{base}[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp_overrides = {{ recovery = \"fast\" }}\napp = {{ kind = \"bulk\" }}\n"
    ));
    assert!(
        e.contains("flow[0].tcp_overrides") && e.contains("expected one of timeout_only"),
        "{e}"
    );
    let e = err(&base.replace(
        "rate_bps = 1e6",
        "rate_bps = 1e6\nqueue = { kind = \"fifo\" }",
    ));
    assert!(e.starts_with("bad.toml:9"), "{e}");
    assert!(e.contains("fifo"), "{e}");
    let e = err("duration_s = -3\n");
    assert!(e.contains("duration_s"), "{e}");
    let e = err("duration_s = \"long\"\n");
    assert!(e.starts_with("bad.toml:1"), "{e}");
}

#[test]
fn sizes_out_of_reason_are_errors_not_allocation_failures() {
    // Both aborted the process before: "memory allocation of 3221225472 bytes failed" for
    // the pairs, of 100000000000000 bytes for the buffer.
    let e = err("duration_s = 5\n[topology]\nkind = \"dumbbell\"\npairs = 4294967296\naccess = { rate_bps = 1e7 }\nbottleneck = { rate_bps = 1e6 }\n");
    assert!(
        e.contains("topology.pairs")
            && e.contains("4294967296 is out of range: expected [1, 10000]"),
        "{e}"
    );
    let base = "[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 1e6\n";
    let e = err(&format!(
        "{base}[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp_overrides = {{ send_buffer_bytes = 100000000000000 }}\napp = {{ kind = \"bulk\" }}\n"
    ));
    assert!(e.starts_with("bad.toml:12"), "{e}");
    assert!(
        e.contains("flow[0].tcp_overrides.send_buffer_bytes")
            && e.contains("expected 1 to 1073741824 bytes"),
        "{e}"
    );
}

#[test]
fn pcap_of_a_run_opens_in_tshark() {
    let found = std::process::Command::new("sh")
        .args(["-c", "command -v tshark"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        eprintln!("SKIP: tshark is not installed (CI installs it)");
        return;
    }
    let text = "duration_s = 5\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 1e6\ndelay_ms = 10\nimpair = { loss_prob = 0.02 }\npcap = true\n[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp = \"sack\"\napp = { kind = \"bulk\", bytes = 200e3 }\n";
    let s = Scenario::from_str_named(text, Path::new("t.toml")).unwrap();
    let dir = ackclock_testkit::TempDir::new("pcap-sim");
    build(&s, Some(&dir)).unwrap().run(|_| {});
    let pcap = dir.join("a-b.pcap");
    let out = std::process::Command::new("tshark")
        .args(["-n", "-o", "tcp.check_checksum:TRUE", "-r"])
        .arg(&pcap)
        .args(["-T", "fields", "-e", "_ws.expert.message"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() > 100, "too few packets");
    assert!(
        !text.contains("Malformed") && !text.contains("Bad checksum"),
        "{text}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let complaints: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("Running as user"))
        .collect();
    assert!(complaints.is_empty(), "tshark complained: {complaints:?}");
}
