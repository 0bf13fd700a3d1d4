//! Every file a run writes stays under its output directory, whatever the scenario names
//! its nodes and flows: names go into file names (`<node>-<neighbour>.pcap`,
//! `flow-<flow>.csv`), so a name that could leave the directory is refused with its field.
//! A node named `../../x` with `pcap = true` once wrote a capture outside `--out`.

use ackclock_sim::{build, Scenario};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn scenario(node: &str, flow: &str) -> String {
    format!(
        r#"
duration_s = 0.2
[[node]]
name = {node:?}
pcap = true
[[node]]
name = "b"
pcap = true
[[link]]
a = {node:?}
b = "b"
rate_bps = 1e6
delay_ms = 5
[[flow]]
name = {flow:?}
from = {node:?}
to = "b"
tcp = "newreno"
app = {{ kind = "bulk", bytes = 3000 }}
"#
    )
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs the scenario with its outputs in `root/a/b/out`; returns whether it was accepted
/// and checks that nothing but `root/a/b/out` received a file.
fn run_in(root: &Path, node: &str, flow: &str) -> bool {
    let out = root.join("a/b/out");
    std::fs::create_dir_all(&out).unwrap();
    let text = scenario(node, flow);
    let accepted = match Scenario::from_str_named(&text, Path::new("names.toml")) {
        Ok(s) => match build(&s, Some(&out)) {
            Ok(sim) => {
                sim.run(|_| {}).write_files(&out).unwrap();
                true
            }
            Err(e) => panic!("resolved but did not build: {e}"),
        },
        Err(_) => false,
    };
    for f in files(root) {
        assert!(
            f.starts_with(&out),
            "{f:?} written outside {out:?} (node {node:?}, flow {flow:?})"
        );
    }
    accepted
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ackclock-names-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn names_that_would_leave_the_output_directory_are_refused() {
    let root = scratch("fixed");
    for (node, flow) in [
        ("../../x", "f"),
        ("/tmp/x", "f"),
        ("..", "f"),
        (".x", "f"),
        ("a/b", "f"),
        ("a\\b", "f"),
        ("", "f"),
        ("h", "../../escaped"),
        ("h", "/abs"),
        ("h", "sub/dir"),
    ] {
        assert!(!run_in(&root, node, flow), "{node:?} / {flow:?} accepted");
    }
    assert!(
        run_in(&root, "h1.left_side-0", "flow.0_a-b"),
        "a safe name refused"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(64))]
    #[test]
    fn no_name_writes_outside_the_output_directory(
        node in "[a-zA-Z0-9./\\\\_-]{0,12}",
        flow in "[a-zA-Z0-9./\\\\_-]{0,12}",
    ) {
        prop_assume!(node != "b");
        let root = scratch("prop");
        run_in(&root, &node, &flow);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
