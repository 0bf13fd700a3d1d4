//! Every experiment in quick mode, its claims compared with a reviewed snapshot
//! (`tests/snapshots/quick_claims__quick_claims.snap`): a change to any number, verdict or
//! note shows up in the diff. After a deliberate change, review the new table with
//! `cargo insta review` (or rerun with `INSTA_UPDATE=always` and read `git diff`).

use ackclock_lab::{Options, Verdict};

#[test]
fn quick_claims_match_the_reviewed_snapshot() {
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("quick_claims");
    let outcome = ackclock_lab::run(
        &Options {
            out: out.clone(),
            only: None,
            quick: true,
            seeds: 3,
            render: false,
        },
        &|_| {},
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let mut table = String::new();
    for c in outcome.claims() {
        table.push_str(&format!(
            "{}/{}: {} [{}]{}\n",
            c.experiment,
            c.spec.id,
            c.ours,
            c.verdict.word(),
            if c.note.is_empty() {
                String::new()
            } else {
                format!("\n    {}", c.note)
            }
        ));
    }
    let _ = std::fs::remove_dir_all(&out);
    insta::assert_snapshot!("quick_claims", table);
    assert_eq!(outcome.count(Verdict::Fail), 0, "{table}");
}
