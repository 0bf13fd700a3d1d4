//! `docs/SCENARIOS.md` prints the range of every numeric field; this keeps it equal to the
//! table the simulator checks (`ackclock_sim::limits::TABLE`). After changing a range,
//! `ACKCLOCK_BLESS=1 cargo test -p ackclock-sim --test docs` rewrites the doc's table.

use ackclock_sim::limits::TABLE;

const START: &str = "<!-- ranges: generated from crates/sim/src/limits.rs; crates/sim/tests/docs.rs checks it -->\n";
const END: &str = "<!-- end ranges -->";

#[test]
fn scenario_docs_print_the_ranges_the_simulator_checks() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SCENARIOS.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let mut table = String::from("| field | range |\n|---|---|\n");
    for (field, range) in TABLE {
        table.push_str(&format!("| {field} | {range} |\n"));
    }
    let a = doc.find(START).expect("start marker") + START.len();
    let b = doc[a..].find(END).expect("end marker") + a;
    if doc[a..b] != table {
        if std::env::var_os("ACKCLOCK_BLESS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..a], &doc[b..])).unwrap();
        } else {
            panic!(
                "docs/SCENARIOS.md's range table is out of date (ACKCLOCK_BLESS=1 rewrites it); it should read:\n{table}"
            );
        }
    }
}
