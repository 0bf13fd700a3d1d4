//! Checks of the JSON documents against docs/OUTPUTS.md, for the reports' tests.

use serde_json::Value;
use std::collections::BTreeMap;

/// The rows (field and type) of the table of the section `## {title}` of
/// docs/OUTPUTS.md.
pub(crate) fn documented_section(title: &str) -> BTreeMap<String, String> {
    const DOC: &str = include_str!("../../../docs/OUTPUTS.md");
    let start = DOC.find(&format!("\n## {title}\n")).expect("the section");
    let body = &DOC[start + 1..];
    let body = &body[..body[3..].find("\n## ").map_or(body.len(), |e| e + 3)];
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() >= 4 && cells[1].starts_with('`') {
            let path = cells[1].trim_matches('`').to_string();
            assert!(
                out.insert(path.clone(), cells[2].to_string()).is_none(),
                "{path} twice"
            );
        }
    }
    out
}

pub(crate) fn has_type(v: &Value, ty: &str) -> bool {
    if let Some(t) = ty.strip_suffix(" or null") {
        return v.is_null() || has_type(v, t);
    }
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_u64(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        other => panic!("unknown type {other:?}"),
    }
}

/// Every path in `v` (`a.b[].c`) with its value.
pub(crate) fn paths(v: &Value, path: &str, out: &mut Vec<(String, Value)>) {
    if !path.is_empty() {
        out.push((path.to_string(), v.clone()));
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                paths(x, &p, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                paths(x, &format!("{path}[]"), out);
            }
        }
        _ => {}
    }
}
