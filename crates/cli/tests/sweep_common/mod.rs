//! What the sweep tests share: a small scenario, a local sweep of it, a plan of the same
//! sweep, and temporary directories that go away.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackclock"))
}

/// A directory of its own under the system's temporary directory, removed on drop.
pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Tmp {
        let d = std::env::temp_dir().join(format!("ackclock-sweep-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Tmp(d)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Two hosts on a 2 Mb/s link with 1% random loss, for `duration_s` simulated seconds (2000
/// take about a quarter of a second in the test build). The loss makes every seed give
/// other numbers, so a row written under the wrong seed shows.
pub fn scenario(duration_s: u32) -> String {
    format!(
        "name = \"t\"\nduration_s = {duration_s}\nseed = 1\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 2e6\ndelay_ms = 10\nimpair = {{ loss_prob = 0.01 }}\nqueue = {{ kind = \"drop_tail\", limit_pkts = 10 }}\n[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp = \"reno\"\napp = {{ kind = \"bulk\" }}\n"
    )
}

/// The sweep of the tests: 2 x 2 combinations, `seeds` seeds each.
pub const PARAMS: &[&str] = &[
    "--param",
    "link.0.queue.limit_pkts=5,20",
    "--param",
    "flow.0.tcp=tahoe,sack",
];

/// Panics with the command's stderr unless it succeeded.
pub fn ok(what: &str, o: Output) -> Output {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// Writes the scenario into `dir` and sweeps it locally; returns the scenario's path and
/// the bytes of sweep.csv.
pub fn local_sweep(dir: &Path, duration_s: u32, seeds: u32) -> (PathBuf, Vec<u8>) {
    let sc = dir.join("t.toml");
    std::fs::write(&sc, scenario(duration_s)).unwrap();
    let out = dir.join("local");
    ok(
        "local sweep",
        bin()
            .arg("sweep")
            .arg(&sc)
            .args(PARAMS)
            .args(["--seeds", &seeds.to_string(), "--out"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    let csv = std::fs::read(out.join("sweep.csv")).unwrap();
    (sc, csv)
}

/// Plans the same sweep into `dir/name` with `extra` arguments; returns the directory.
pub fn plan(dir: &Path, sc: &Path, seeds: u32, name: &str, extra: &[&str]) -> PathBuf {
    let p = dir.join(name);
    ok(
        "sweep plan",
        bin()
            .args(["sweep", "plan"])
            .arg(sc)
            .args(PARAMS)
            .args(["--seeds", &seeds.to_string(), "--out"])
            .arg(&p)
            .args(extra)
            .output()
            .unwrap(),
    );
    p
}

/// The plan's run ids, in index order.
pub fn ids(plan: &Path) -> Vec<String> {
    std::fs::read_to_string(plan.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
        .collect()
}

/// `ackclock sweep collect DIR`, which must succeed; returns sweep.csv's bytes.
pub fn collect(plan: &Path) -> Vec<u8> {
    ok(
        "sweep collect",
        bin().args(["sweep", "collect"]).arg(plan).output().unwrap(),
    );
    std::fs::read(plan.join("sweep.csv")).unwrap()
}

/// Where the first two byte strings differ, for a readable failure.
pub fn same_bytes(what: &str, got: &[u8], want: &[u8]) {
    assert!(
        got == want,
        "{what}: sweep.csv differs from the local sweep's\n--- local:\n{}\n--- {what}:\n{}",
        String::from_utf8_lossy(want),
        String::from_utf8_lossy(got)
    );
}
