//! `docs/OUTPUTS.md` against the files of a quick run: every field its tables list for
//! `claims.json` and `run.json` is there with the type given, every field there is listed,
//! and every file its index names for an experiment is written (and nothing else is).

use ackclock_lab::Options;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const DOC: &str = include_str!("../../../docs/OUTPUTS.md");

/// The rows `| `path` | type | meaning |` of the section `## title` of the document.
fn fields(title: &str) -> BTreeMap<String, String> {
    let start = DOC
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("docs/OUTPUTS.md has no section `## {title}`"));
    let body = &DOC[start + 1..];
    let body = &body[..body[3..].find("\n## ").map_or(body.len(), |e| e + 3)];
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let path = cells[1].trim_matches('`').to_string();
        assert!(
            out.insert(path.clone(), cells[2].to_string()).is_none(),
            "{title}: {path} is listed twice"
        );
    }
    assert!(!out.is_empty(), "{title}: no field rows found");
    out
}

/// Whether `v` is of the documented type (`string`, `number`, `integer`, `boolean`,
/// `object`, `array`, each optionally `... or null`).
fn has_type(v: &Value, ty: &str) -> bool {
    if let Some(t) = ty.strip_suffix(" or null") {
        return v.is_null() || has_type(v, t);
    }
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_u64() || v.is_i64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        other => panic!("docs/OUTPUTS.md: unknown type {other:?}"),
    }
}

/// Walks `v` at `path` (the document's notation), checking every field against `doc`.
fn walk(v: &Value, path: &str, doc: &BTreeMap<String, String>, file: &str, seen: &mut Vec<String>) {
    if !path.is_empty() {
        if let Some(ty) = doc.get(path) {
            assert!(has_type(v, ty), "{file}: {path} is {v}, not {ty}");
            seen.push(path.to_string());
        } else {
            // Only arrays' and maps' elements that are objects may go unlisted (their fields
            // are listed).
            assert!(
                v.is_object() && (path.ends_with("[]") || path.ends_with("{}")),
                "{file}: {path} is not in docs/OUTPUTS.md"
            );
        }
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match v {
        Value::Object(m) if doc.contains_key(&format!("{path}{{}}")) => {
            for x in m.values() {
                walk(x, &format!("{path}{{}}"), doc, file, seen);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                walk(x, &join(k), doc, file, seen);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, &format!("{path}[]"), doc, file, seen);
            }
        }
        _ => {}
    }
}

/// Checks a file against its section: every field typed as documented, none unlisted, and
/// every listed field present somewhere.
fn check(file: &Path, title: &str) -> Value {
    let doc = fields(title);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut seen = Vec::new();
    walk(&v, "", &doc, title, &mut seen);
    for path in doc.keys() {
        assert!(
            seen.contains(path),
            "{title}: {path} is documented but never appears"
        );
    }
    v
}

#[test]
fn the_outputs_are_as_docs_outputs_md_says() {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outputs_doc");
    let _ = std::fs::remove_dir_all(&out);
    let command: Vec<String> = ["ackclock", "repro", "--quick"].map(String::from).into();
    let outcome = ackclock_lab::run_with(
        &Options {
            out: out.clone(),
            only: None,
            quick: true,
            seeds: 3,
            render: true,
        },
        &command,
        &|_| {},
    )
    .unwrap_or_else(|e| panic!("{e:#}"));

    // Every figure is written, has a title of its own and a caption, and the report shows
    // the caption under it.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    let mut titles = std::collections::BTreeSet::new();
    for s in &outcome.sections {
        assert!(!s.plots.is_empty(), "{}: no figure", s.name);
        for f in &s.plots {
            let what = format!("{}: {}", s.name, f.file.display());
            assert!(f.file.exists(), "{what}: not written");
            assert!(!f.caption.trim().is_empty(), "{what}: no caption");
            assert!(
                titles.insert(f.title.clone()),
                "{what}: title {:?} used twice",
                f.title
            );
            let first_words: String = f
                .caption
                .split_whitespace()
                .take(6)
                .collect::<Vec<_>>()
                .join(" ");
            assert!(
                html.contains(&first_words.replace('&', "&amp;").replace('"', "&quot;")),
                "{what}: caption not in index.html"
            );
        }
    }

    let claims = check(&out.join("claims.json"), "claims.json");
    let list = claims["claims"].as_array().unwrap();
    assert_eq!(list.len(), outcome.claims().count());
    assert_eq!(claims["summary"]["claims"], list.len());
    let verdicts = ["pass", "fail", "disagree", "report", "skip"];
    for c in list {
        let v = c["verdict"].as_str().unwrap();
        assert!(verdicts.contains(&v), "verdict {v:?}");
        // A claim with a number has a unit; a band is on a number.
        let numbers = !c["published"]["value"].is_null()
            || !c["tolerance"]["min"].is_null()
            || !c["tolerance"]["max"].is_null();
        assert!(!numbers || c["unit"].is_string(), "{c}");
    }
    // Some claims are typed numbers, and every number is finite (JSON has no infinity).
    assert!(
        list.iter()
            .filter(|c| c["ackclock"]["value"].is_f64())
            .count()
            >= 30
    );

    let run = check(&out.join("run.json"), "run.json");
    assert_eq!(run["mode"], "quick");
    assert_eq!(run["command_line"], serde_json::json!(command));
    assert_eq!(run["rng_seeds"]["per_configuration"], 3);
    assert_eq!(run["experiments"].as_array().unwrap().len(), 21);

    // The index of each experiment's files.
    let index = &DOC[DOC
        .find("## Each experiment's directory")
        .expect("the index section")..];
    let mut listed = 0;
    for line in index.lines().filter(|l| l.starts_with("- `")) {
        let dir = line[3..].split('`').next().unwrap().trim_end_matches('/');
        let named: Vec<&str> = line
            .split('`')
            .skip(3)
            .step_by(2)
            .filter(|n| n.ends_with(".svg"))
            .collect();
        let mut written: Vec<String> = std::fs::read_dir(out.join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "scenario.toml")
            .collect();
        // Each SVG has its PNG and its interactive HTML page beside it.
        for svg in written.iter().filter(|n| n.ends_with(".svg")) {
            for ext in [".png", ".html"] {
                let other = svg.replace(".svg", ext);
                assert!(
                    written.contains(&other),
                    "{dir}: {other} missing beside {svg}"
                );
            }
        }
        written.retain(|n| !n.ends_with(".png") && !n.ends_with(".html"));
        written.sort();
        let mut named_sorted: Vec<String> = named.iter().map(|s| s.to_string()).collect();
        named_sorted.sort();
        assert_eq!(
            written, named_sorted,
            "{dir}: the files written against docs/OUTPUTS.md"
        );
        listed += 1;
    }
    assert_eq!(listed, 21, "every experiment in the index");
    let _ = std::fs::remove_dir_all(&out);
}
