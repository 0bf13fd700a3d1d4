//! Every packetdrill script in the repo, run against the engine: the FreeBSD TCP test
//! suite's selection (`tests/packetdrill/freebsd-tcp-testsuite/`, BSD-2-Clause) and ours
//! (`tests/packetdrill/ackclock/`) under profile F, and ours for Linux's defaults
//! (`tests/packetdrill/ackclock-linux/`) under profile L. A script may fail only if it is listed in
//! `tests/packetdrill/expected-failures.txt` with the reason ackclock deliberately differs;
//! a listed script that passes fails the test too (take it off the list).
//!
//! The conformance table `tests/packetdrill/CONFORMANCE.md` is generated from the run; the
//! test fails when the committed table differs, and `ACKCLOCK_UPDATE_CONFORMANCE=1 cargo
//! test -p ackclock-packetdrill --test scripts` rewrites it.

use ackclock_packetdrill::profile::Profile;
use ackclock_packetdrill::{run_text, RunOptions};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/packetdrill")
}

/// The folder of scripts written for profile L (google/packetdrill's Linux defaults).
const LINUX_SUITE: &str = "ackclock-linux";

/// The profile a script runs under: L in [`LINUX_SUITE`], F elsewhere.
fn profile_of(rel: &str) -> Profile {
    if rel.starts_with(&format!("{LINUX_SUITE}/")) {
        Profile::Linux
    } else {
        Profile::FreeBsd
    }
}

fn scripts(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scripts(&p, out);
        } else if p.extension().is_some_and(|x| x == "pkt") {
            out.push(p);
        }
    }
}

/// `path | reason` lines; `#` comments.
fn expected_failures(root: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root.join("expected-failures.txt")).unwrap();
    let mut m = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (path, reason) = line
            .split_once('|')
            .unwrap_or_else(|| panic!("expected-failures.txt:{}: `path | reason`", i + 1));
        assert!(
            !reason.trim().is_empty(),
            "expected-failures.txt:{}: a reason is required",
            i + 1
        );
        m.insert(path.trim().to_string(), reason.trim().to_string());
    }
    m
}

#[derive(Default)]
struct Folder {
    scripts: usize,
    pass: usize,
    expected: Vec<(String, String)>,
}

#[test]
fn packetdrill_scripts_pass_or_are_expected_failures_with_a_reason() {
    let root = root();
    let mut files = Vec::new();
    scripts(&root, &mut files);
    let expected = expected_failures(&root);
    let mut problems = Vec::new();
    let mut folders: BTreeMap<String, Folder> = BTreeMap::new();
    let mut seen = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        seen.push(rel.clone());
        let folder = rel.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let text = std::fs::read_to_string(f).unwrap();
        // The upstream runner gives the reassembly scripts 25 ms.
        let opts = RunOptions {
            tolerance_usecs: rel.contains("rcv-data-segments/").then_some(25_000),
            options_as_set: false,
            profile: profile_of(&rel),
        };
        let outcome = run_text(&rel, &text, &["STANDARD"], &opts);
        let entry = folders.entry(folder).or_default();
        entry.scripts += 1;
        match (outcome, expected.get(&rel)) {
            (Ok(_), None) => entry.pass += 1,
            (Ok(_), Some(_)) => problems.push(format!(
                "{rel}: passes but is listed in expected-failures.txt: take it off the list"
            )),
            (Err(_), Some(reason)) => entry.expected.push((rel.clone(), reason.clone())),
            (Err(msg), None) => problems.push(msg),
        }
    }
    for listed in expected.keys() {
        if !seen.contains(listed) {
            problems.push(format!(
                "expected-failures.txt lists {listed}, which does not exist"
            ));
        }
    }
    let table = conformance_table(&folders);
    let path = root.join("CONFORMANCE.md");
    if std::env::var_os("ACKCLOCK_UPDATE_CONFORMANCE").is_some() {
        std::fs::write(&path, &table).unwrap();
    } else if std::fs::read_to_string(&path).ok().as_deref() != Some(table.as_str()) {
        problems.push(format!(
            "{} is not the table of this run: ACKCLOCK_UPDATE_CONFORMANCE=1 cargo test -p \
             ackclock-packetdrill --test scripts rewrites it\n{table}",
            path.display()
        ));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}

fn conformance_table(folders: &BTreeMap<String, Folder>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# packetdrill conformance\n");
    let _ = writeln!(
        s,
        "Generated by `crates/packetdrill/tests/scripts.rs` (`cargo test -p ackclock-packetdrill \
         --test scripts`);\ndo not edit. Scripts run with profile F (`crates/packetdrill/src/profile.rs`), \
         `STANDARD`\ndefined, 25 ms tolerance in `rcv-data-segments/` as the upstream runner gives; \
         those in\n`ackclock-linux/` with profile L (google/packetdrill's Linux defaults on \
         `TcpConfig::linux()`).\n"
    );
    let (mut n, mut p, mut x) = (0, 0, 0);
    for (suite, label) in [
        (
            "freebsd-tcp-testsuite",
            "FreeBSD TCP test suite (selection)",
        ),
        ("ackclock", "ackclock's own scripts"),
        (
            "ackclock-linux",
            "ackclock's own scripts for Linux's defaults (profile L)",
        ),
    ] {
        let _ = writeln!(s, "## {label}\n");
        let _ = writeln!(s, "| folder | scripts | pass | expected failures |");
        let _ = writeln!(s, "|---|---:|---:|---:|");
        let (mut sn, mut sp, mut sx) = (0, 0, 0);
        // `ackclock/` is not `ackclock-linux/`.
        let in_suite = |k: &str| k == suite || k.starts_with(&format!("{suite}/"));
        for (folder, f) in folders.iter().filter(|(k, _)| in_suite(k)) {
            let _ = writeln!(
                s,
                "| `{folder}` | {} | {} | {} |",
                f.scripts,
                f.pass,
                f.expected.len()
            );
            sn += f.scripts;
            sp += f.pass;
            sx += f.expected.len();
        }
        let _ = writeln!(s, "| **total** | {sn} | {sp} | {sx} |\n");
        n += sn;
        p += sp;
        x += sx;
    }
    let _ = writeln!(s, "All scripts: {n}, pass {p}, expected failures {x}.\n");
    let _ = writeln!(s, "## Expected failures\n");
    let all: Vec<&(String, String)> = folders.values().flat_map(|f| &f.expected).collect();
    if all.is_empty() {
        let _ = writeln!(s, "None.");
    }
    for (path, reason) in all {
        let _ = writeln!(s, "- `{path}`: {reason}");
    }
    s
}
