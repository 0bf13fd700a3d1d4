//! docs/OUTPUTS.md's table of `ackclock analyze --json` against the JSON itself: every field
//! listed is there with its type, every field there is listed.

use ackclock_analyze::Analyzer;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    write_ipv4_tcp, Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions, IPPROTO_TCP,
};
use core::net::Ipv4Addr;
use serde_json::Value;
use std::collections::BTreeMap;

/// The documented fields: full path -> type.
fn documented() -> BTreeMap<String, String> {
    let doc = include_str!("../../../docs/OUTPUTS.md");
    let start = doc
        .find("## `ackclock analyze --json`")
        .expect("the section");
    let section = &doc[start..];
    let end = section.find("`ackclock analyze --csv`").unwrap();
    let mut out = BTreeMap::new();
    let mut in_dirs = false;
    for row in section[..end].lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split(" | ").collect();
        let ty = cells[1].trim().to_string();
        for name in cells[0].trim_start_matches("| ").split(", ") {
            let name = name.trim_matches('`');
            let path = if in_dirs {
                format!("connections[].directions[].{name}")
            } else {
                name.to_string()
            };
            if name == "connections[].directions" {
                in_dirs = true;
            }
            out.insert(path, ty.clone());
        }
    }
    out
}

fn walk<'a>(
    v: &'a Value,
    path: &str,
    leaves: &BTreeMap<String, String>,
    out: &mut BTreeMap<String, Vec<&'a Value>>,
) {
    out.entry(path.to_string()).or_default().push(v);
    if leaves.get(path).is_some_and(|t| t == "object") {
        return;
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(x, &p, leaves, out);
            }
        }
        Value::Array(a) => {
            for x in a {
                walk(x, &format!("{path}[]"), leaves, out);
            }
        }
        _ => {}
    }
}

fn has_type(v: &Value, ty: &str) -> bool {
    ty.split(" or ").any(|t| match t {
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => panic!("unknown type {t}"),
    })
}

/// A connection with every optional field present: SYNs with window scale, timestamps,
/// data, its ACK.
fn sample() -> Value {
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    let mut an = Analyzer::new();
    let mut at =
        |ms: u64, from_a: bool, seq: u32, ack: u32, flags: TcpFlags, len: usize, ts: (u32, u32)| {
            let (s, d, sp, dp) = if from_a {
                (a, b, 40000, 5001)
            } else {
                (b, a, 5001, 40000)
            };
            let syn = flags.contains(TcpFlags::SYN);
            let tcp = TcpHeader {
                src_port: sp,
                dst_port: dp,
                seq,
                ack,
                flags,
                window: 1000,
                urgent: 0,
                options: TcpOptions {
                    mss: syn.then_some(1460),
                    window_scale: syn.then_some(2),
                    timestamps: Some(Timestamps {
                        tsval: ts.0,
                        tsecr: ts.1,
                    }),
                    ..TcpOptions::NONE
                },
            };
            let mut buf = [0u8; 1600];
            let n = write_ipv4_tcp(
                &mut buf,
                &Ipv4Header::new(s, d, IPPROTO_TCP),
                &tcp,
                &vec![0; len],
            )
            .unwrap();
            an.ip_packet(Instant::from_nanos(ms * 1_000_000), &buf[..n], n);
        };
    at(0, true, 100, 0, TcpFlags::SYN, 0, (1, 0));
    at(
        10,
        false,
        900,
        101,
        TcpFlags::SYN | TcpFlags::ACK,
        0,
        (5, 1),
    );
    at(20, true, 101, 901, TcpFlags::ACK, 1000, (3, 5));
    at(30, false, 901, 1101, TcpFlags::ACK, 0, (6, 3));
    serde_json::to_value(an.finish()).unwrap()
}

#[test]
fn outputs_md_lists_every_field_of_analyze_json_with_its_type() {
    let doc = documented();
    assert!(doc.len() > 50, "{doc:?}");
    let json = sample();
    let mut seen = BTreeMap::new();
    walk(&json, "", &doc, &mut seen);
    for (path, ty) in &doc {
        let vals = seen
            .get(path)
            .unwrap_or_else(|| panic!("{path} is documented but not in the JSON"));
        for v in vals {
            assert!(has_type(v, ty), "{path}: {v} is not {ty}");
        }
    }
    for (path, vals) in &seen {
        if path.is_empty() || vals.iter().all(|v| v.is_object()) {
            continue; // containers: their fields are listed
        }
        assert!(
            doc.contains_key(path),
            "{path} is in the JSON but not in docs/OUTPUTS.md"
        );
    }
}
