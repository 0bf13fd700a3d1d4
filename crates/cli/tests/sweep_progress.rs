//! A local sweep is never silent: it predicts its cost on stderr before the first run and,
//! into a log (not a terminal), writes a progress line at every tenth of its runs with the
//! time left.

use std::process::Command;

/// A short, cheap scenario with random loss, so that the seeds differ.
const TINY: &str = r#"
name = "tiny"
seed = 1
duration_s = 0.5
[[node]]
name = "a"
[[node]]
name = "b"
[[link]]
a = "a"
b = "b"
rate_bps = 1e6
delay_ms = 10
impair = { loss_prob = 0.01 }
[[flow]]
from = "a"
to = "b"
app = { kind = "bulk" }
"#;

#[test]
fn a_sweep_predicts_its_cost_and_reports_progress_into_a_log() {
    let dir = ackclock_testkit::TempDir::new("sweep-progress");
    let scenario = dir.join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .arg("sweep")
        .arg(&scenario)
        .args(["--seeds", "20", "--out"])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].starts_with("sweep: 20 runs (1 configuration(s) x 20 seed(s)); predicted up to ")
            && lines[0].contains(" events in all: about "),
        "{err}"
    );
    // Stderr is a pipe here: a line at every tenth (2, 4, ..., 18 of 20), none at the end.
    let progress: Vec<&&str> = lines.iter().filter(|l| l.contains(" runs in ")).collect();
    assert_eq!(progress.len(), 9, "{err}");
    assert!(progress[0].starts_with("sweep: 2/20 runs in "), "{err}");
    assert!(progress.iter().all(|l| l.ends_with(" left")), "{err}");
}
