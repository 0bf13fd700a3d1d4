//! Same scenario + seed => byte-identical outputs; a different seed changes them; adding a
//! flow does not change another component's random draws.

use ackclock_sim::{build, Scenario};
use std::path::{Path, PathBuf};

const SCENARIO: &str = r#"
name = "det"
seed = 7
duration_s = 20
[topology]
kind = "dumbbell"
pairs = 3
access = { rate_bps = 100e6, delay_ms = 1 }
bottleneck = { rate_bps = 2e6, delay_ms = 20, queue = { kind = "red", limit_pkts = 40, min_th_pkts = 5, max_th_pkts = 15, max_p = 0.1 }, impair = { loss_prob = 0.01, reorder = { prob = 0.01, delay_ms = 3 } }, pcap = true }
[topology.flows]
tcp = "sack"
app = { kind = "bulk" }
stagger_s = 1
[[cross]]
from = "left1"
to = "right2"
kind = "poisson"
rate_bps = 300e3
"#;

fn run(text: &str, dir: &Path) {
    let s = Scenario::from_str_named(text, Path::new("det.toml")).unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let r = build(&s, Some(dir)).unwrap().run(|_| {});
    r.write_files(dir).unwrap();
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let b = std::fs::read(&p).unwrap();
            (p.file_name().unwrap().into(), b)
        })
        .collect();
    v.sort();
    v
}

/// A fresh directory, removed at the end (the run creates what it writes in it).
fn tmp(name: &str) -> ackclock_testkit::TempDir {
    ackclock_testkit::TempDir::new(&format!("det-{name}"))
}

#[test]
fn same_seed_gives_byte_identical_outputs() {
    let (a, b) = (tmp("a"), tmp("b"));
    run(SCENARIO, &a);
    run(SCENARIO, &b);
    let (fa, fb) = (files(&a), files(&b));
    assert!(
        fa.len() > 5,
        "{:?}",
        fa.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert!(fa
        .iter()
        .any(|(n, _)| n.to_string_lossy().ends_with(".pcap")));
    assert_eq!(fa.len(), fb.len());
    for ((na, ba), (nb, bb)) in fa.iter().zip(&fb) {
        assert_eq!(na, nb);
        assert!(ba == bb, "{} differs between two runs", na.display());
    }
    let c = tmp("c");
    run(&SCENARIO.replace("seed = 7", "seed = 8"), &c);
    let fc = files(&c);
    let summary = |f: &[(PathBuf, Vec<u8>)]| {
        f.iter()
            .find(|(n, _)| n.to_string_lossy() == "summary.json")
            .unwrap()
            .1
            .clone()
    };
    assert!(
        summary(&fa) != summary(&fc),
        "a new seed must change the run"
    );
}
