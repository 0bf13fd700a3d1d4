//! Where a field is written in a scenario file: the line of `link[2].queue.limit_pkts` or
//! `topology.access.delay_ms`, for error messages. Validation works on the parsed scenario
//! and names fields by path; this maps the path back onto the text, so every check, whether
//! of an explicit entry or of one a shortcut generated, reports the line the user wrote.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Line (1-based) of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line of `path` in `text` (`a.b[3].c`: keys separated by dots, array entries by
/// index). When the field itself is not written (a default), the line of the nearest table
/// that is: the table the user would add it to. `None` when the text does not parse or the
/// path names nothing in it at all.
pub fn line_of_field(text: &str, path: &str) -> Option<usize> {
    let doc = DeTable::parse(text).ok()?;
    let mut best: Option<usize> = None;
    let mut table: &DeTable<'_> = doc.get_ref();
    let mut value: Option<&Spanned<DeValue<'_>>> = None;
    for part in path.split('.') {
        let (key, index) = split_index(part);
        let found = match value.map(|v| v.get_ref()) {
            None => table.get_key_value(key),
            Some(DeValue::Table(t)) => t.get_key_value(key),
            Some(_) => None,
        };
        let Some((k, v)) = found else { break };
        // The key's own line: for `[[link]]` arrays and `[topology.access]` headers that is
        // the header, for `delay_ms = 5` the assignment.
        best = Some(k.span().start);
        value = Some(v);
        if let Some(i) = index {
            match v.get_ref() {
                DeValue::Array(a) => match a.get(i) {
                    Some(e) => {
                        best = Some(span_start(e, k.span().start));
                        value = Some(e);
                    }
                    None => break,
                },
                _ => break,
            }
        }
        if let Some(DeValue::Table(t)) = value.map(|v| v.get_ref()) {
            table = t;
        }
    }
    best.map(|b| line_of(text, b))
}

/// An array-of-tables entry's span can be empty; fall back to its key's.
fn span_start(v: &Spanned<DeValue<'_>>, fallback: usize) -> usize {
    let s = v.span();
    if s.is_empty() {
        fallback
    } else {
        s.start
    }
}

fn split_index(part: &str) -> (&str, Option<usize>) {
    match part.strip_suffix(']').and_then(|p| p.split_once('[')) {
        Some((k, i)) => (k, i.parse().ok()),
        None => (part, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"name = "t"
duration_s = 10

[topology]
kind = "dumbbell"
pairs = 2

[topology.access]
rate_bps = 10e6
delay_ms = 1

[topology.bottleneck]
rate_bps = 1e6
queue = { kind = "red", min_th = 5 }

[[flow]]
from = "left1"
to = "right1"
app = { kind = "bulk" }

[[flow]]
from = "left2"
to = "right2"
tcp_overrides = { mss = 512 }
app = { kind = "bulk" }
"#;

    #[test]
    fn fields_of_tables_shortcuts_and_array_entries() {
        assert_eq!(line_of_field(TEXT, "duration_s"), Some(2));
        assert_eq!(line_of_field(TEXT, "topology.pairs"), Some(6));
        assert_eq!(line_of_field(TEXT, "topology.access.delay_ms"), Some(10));
        assert_eq!(
            line_of_field(TEXT, "topology.bottleneck.queue.min_th"),
            Some(14)
        );
        assert_eq!(line_of_field(TEXT, "flow[1].tcp_overrides.mss"), Some(24));
        assert_eq!(line_of_field(TEXT, "flow[1].to"), Some(23));
    }

    #[test]
    fn a_default_points_at_the_table_it_belongs_in() {
        // mtu_bytes is not written: the line of [topology.access].
        assert_eq!(line_of_field(TEXT, "topology.access.mtu_bytes"), Some(8));
        assert_eq!(line_of_field(TEXT, "flow[1].start_s"), Some(21));
        assert_eq!(line_of_field(TEXT, "flow[0].app.chunk_bytes"), Some(19));
        assert_eq!(line_of_field(TEXT, "cross[0].rate_bps"), None);
        assert_eq!(line_of_field("not toml [", "x"), None);
    }
}
