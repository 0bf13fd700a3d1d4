//! `docs/SCENARIOS.md` prints the range of every numeric TCP override; this keeps it equal to
//! the ranges `Overrides::apply` checks (`ackclock_tcp::config::Overrides::ranges`, the rows of
//! its table), and makes sure every override field is documented in the section. The notes
//! column of the range table is free text. After changing a range,
//! `ACKCLOCK_BLESS=1 cargo test -p ackclock-sim --test override_docs` rewrites the field and
//! range columns and keeps each field's notes.

use ackclock_tcp::config::Overrides;
use std::collections::HashMap;

const START: &str = "<!-- tcp override ranges: generated from crates/tcp/src/config.rs (Overrides::ranges); crates/sim/tests/override_docs.rs checks it -->\n";
const END: &str = "<!-- end tcp override ranges -->";
const HEADER: &str = "| field | accepts | notes |\n|---|---|---|\n";
const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SCENARIOS.md");

/// A table row: its first cell (backquotes trimmed), its second, and the rest ("" if none).
fn cells(line: &str) -> Option<(&str, &str, &str)> {
    let line = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    let mut cells = line.splitn(3, '|').map(str::trim);
    let field = cells.next()?.trim_matches('`');
    Some((field, cells.next()?, cells.next().unwrap_or_default()))
}

#[test]
fn scenario_docs_print_the_override_ranges_the_engine_checks() {
    let doc = std::fs::read_to_string(PATH).unwrap();
    let a = doc.find(START).expect("start marker") + START.len();
    let b = doc[a..].find(END).expect("end marker") + a;
    let notes: HashMap<&str, &str> = doc[a..b]
        .lines()
        .skip(2)
        .filter_map(cells)
        .map(|(field, _, notes)| (field, notes))
        .collect();
    let mut table = String::from(HEADER);
    for r in Overrides::ranges() {
        let note = notes.get(r.field).copied().unwrap_or_default();
        let line = format!("| `{}` | {r} | {note} |", r.field);
        table.push_str(&line.replace("|  |", "| |"));
        table.push('\n');
    }
    if doc[a..b] != table {
        if std::env::var_os("ACKCLOCK_BLESS").is_some() {
            std::fs::write(PATH, format!("{}{table}{}", &doc[..a], &doc[b..])).unwrap();
        } else {
            panic!(
                "docs/SCENARIOS.md's TCP override ranges are out of date (ACKCLOCK_BLESS=1 rewrites them); the table should read:\n{table}"
            );
        }
    }
}

#[test]
fn scenario_docs_name_every_override_field() {
    let doc = std::fs::read_to_string(PATH).unwrap();
    let a = doc.find("### TCP overrides").expect("the section");
    let b = doc[a..].find("\n## ").map_or(doc.len(), |b| a + b);
    // The fields the section's tables list in their first column.
    let listed: Vec<&str> = doc[a..b]
        .lines()
        .filter_map(cells)
        .flat_map(|(first, _, _)| first.split(','))
        .map(|f| f.trim().trim_matches('`'))
        .collect();
    // Every field, as serde spells it (an `Overrides` serializes all of them, unset ones too).
    let serde_json::Value::Object(fields) = serde_json::to_value(Overrides::default()).unwrap()
    else {
        panic!("Overrides is not a struct")
    };
    let missing: Vec<&String> = fields
        .keys()
        .filter(|f| !listed.contains(&f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/SCENARIOS.md's TCP overrides do not list {missing:?}"
    );
}
