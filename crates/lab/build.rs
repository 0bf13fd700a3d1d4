//! Embeds the git commit the suite was built from (`ACKCLOCK_COMMIT`), for the report's
//! first section and `run.json`: `git rev-parse --short HEAD`, with `-dirty` when tracked
//! files differ from it (`git status --porcelain --untracked-files=no`). Without git or
//! outside a repository (a source tarball) it is `unknown`, or whatever the environment
//! variable `ACKCLOCK_COMMIT` says at build time (for packagers). Never fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    // `--no-optional-locks`: `git status` otherwise refreshes and rewrites `.git/index`, a
    // file this script watches, so every second build ran it again and recompiled the lab
    // and the CLI (about three minutes).
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=ACKCLOCK_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // The workspace's sources: an edit anywhere in them can make the tree dirty.
    if let Some(root) = manifest.parent().and_then(Path::parent) {
        for p in ["crates", "Cargo.toml", "Cargo.lock"] {
            println!("cargo:rerun-if-changed={}", root.join(p).display());
        }
    }
    let commit = match std::env::var("ACKCLOCK_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => from_git(&manifest).unwrap_or_else(|| "unknown".to_string()),
    };
    println!("cargo:rustc-env=ACKCLOCK_COMMIT={commit}");
}

/// The short commit with `-dirty`, watching the files that change with HEAD and the index.
fn from_git(dir: &Path) -> Option<String> {
    // Only this workspace's own repository: a source tarball unpacked inside another
    // checkout must not take that checkout's commit.
    let root = dir.parent().and_then(Path::parent)?;
    let top = git(dir, &["rev-parse", "--show-toplevel"])?;
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(Path::new(&top), root) {
        return None;
    }
    let head = git(dir, &["rev-parse", "--short", "HEAD"]).filter(|h| !h.is_empty())?;
    for (flag, files) in [
        ("--git-dir", &["HEAD", "index"][..]),
        ("--git-common-dir", &["packed-refs", "refs/heads"][..]),
    ] {
        if let Some(d) = git(dir, &["rev-parse", flag]) {
            let d = dir.join(d);
            // A path that does not exist would rerun this script on every build.
            for f in files.iter().map(|f| d.join(f)).filter(|f| f.exists()) {
                println!("cargo:rerun-if-changed={}", f.display());
            }
        }
    }
    let dirty =
        git(dir, &["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty { format!("{head}-dirty") } else { head })
}
