//! docs/ARCHITECTURE.md is the map of the code: its crate table names every workspace crate
//! with its directory and lists its workspace dependencies, exactly as `cargo metadata`
//! has them. A crate added, removed or rewired without the map changes fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// Workspace crate -> (its directory relative to the repository, its workspace
/// dependencies, by short name: `ackclock-tcp` is `tcp`).
fn from_cargo(repo: &Path) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(repo)
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = m["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let short = |n: &str| n.strip_prefix("ackclock-").unwrap_or(n).to_string();
    let root = repo.canonicalize().unwrap();
    packages
        .iter()
        .map(|p| {
            let manifest = Path::new(p["manifest_path"].as_str().unwrap());
            let dir = manifest
                .parent()
                .unwrap()
                .strip_prefix(&root)
                .unwrap()
                .display()
                .to_string();
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap())
                .filter(|n| names.contains(n))
                .map(short)
                .collect();
            (p["name"].as_str().unwrap().to_string(), (dir, deps))
        })
        .collect()
}

/// The crate table of docs/ARCHITECTURE.md: crate -> (directory, dependencies).
fn from_doc(doc: &str) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let start = doc.find("\n## Crates\n").expect("a Crates section");
    let body = &doc[start..];
    let body = &body[..body[4..].find("\n## ").map_or(body.len(), |e| e + 4)];
    let mut out = BTreeMap::new();
    for line in body.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `name` (`dir`) | owns | depends on |
        let first = cells[1];
        let name = first.split('`').nth(1).unwrap().to_string();
        let dir = first.split('`').nth(3).unwrap_or("").to_string();
        let deps_cell = cells[cells.len() - 2];
        let deps = if deps_cell == "nothing" {
            BTreeSet::new()
        } else {
            deps_cell.split(',').map(|d| d.trim().to_string()).collect()
        };
        assert!(
            out.insert(name.clone(), (dir, deps)).is_none(),
            "{name} twice in the table"
        );
    }
    out
}

#[test]
fn architecture_md_names_every_crate_and_its_dependencies_as_cargo_does() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(repo.join("docs/ARCHITECTURE.md")).unwrap();
    let cargo = from_cargo(&repo);
    let table = from_doc(&doc);
    assert!(cargo.len() >= 13, "{} crates", cargo.len());
    for (name, (dir, deps)) in &cargo {
        let Some((doc_dir, doc_deps)) = table.get(name) else {
            panic!("docs/ARCHITECTURE.md has no row for {name} ({dir})");
        };
        assert_eq!(doc_dir, dir, "{name}'s directory");
        assert_eq!(
            doc_deps, deps,
            "{name}'s workspace dependencies in docs/ARCHITECTURE.md"
        );
    }
    for name in table.keys() {
        assert!(
            cargo.contains_key(name),
            "docs/ARCHITECTURE.md lists {name}, which is not a workspace crate"
        );
    }
}
