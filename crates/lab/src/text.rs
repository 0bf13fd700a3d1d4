//! An experiment's prose, kept in a file beside its module (`text.md`) rather than in string
//! literals: the title, the seed message's words and their source, the setup, the discussion, and
//! the notes its claims may carry.
//!
//! The file is a list of sections, each opened by a line `# key` (`title`, `quote`,
//! `quote_source`, `setup`, `discussion`, or `note <claim id or name>`). A section's lines
//! are joined with spaces, so the file wraps like ordinary prose; a blank line starts a new
//! paragraph. `{name}` is replaced by a value the experiment measured or chose (numbers are
//! formatted by the experiment, so the file decides only the words); `{{` and `}}` are
//! literal braces. A placeholder without a value, a value without a placeholder and a
//! section that does not exist are errors, so a file and its code cannot drift apart
//! silently.

use anyhow::{anyhow, bail, Result};
use std::collections::BTreeMap;

/// The sections of one `text.md`.
#[derive(Clone, Debug)]
pub struct Text {
    /// Where the text came from, for errors.
    origin: &'static str,
    sections: BTreeMap<String, String>,
}

impl Text {
    /// Parses a `text.md`. `origin` names it in errors (the experiment's directory).
    pub fn parse(origin: &'static str, src: &str) -> Result<Text> {
        let mut sections = BTreeMap::new();
        let mut key: Option<String> = None;
        let mut body: Vec<&str> = Vec::new();
        let mut flush = |key: &mut Option<String>, body: &mut Vec<&str>| -> Result<()> {
            if let Some(k) = key.take() {
                let text = join_paragraphs(body);
                if sections.insert(k.clone(), text).is_some() {
                    bail!("{origin}/text.md: section `# {k}` appears twice");
                }
            }
            body.clear();
            Ok(())
        };
        for (n, line) in src.lines().enumerate() {
            if let Some(k) = line.strip_prefix("# ") {
                flush(&mut key, &mut body)?;
                key = Some(k.trim().to_string());
            } else if key.is_some() {
                body.push(line);
            } else if !line.trim().is_empty() {
                bail!(
                    "{origin}/text.md:{}: text before the first `# section` line",
                    n + 1
                );
            }
        }
        flush(&mut key, &mut body)?;
        Ok(Text { origin, sections })
    }

    /// Section `key` with every `{name}` replaced by its value from `values`.
    pub fn fill(&self, key: &str, values: &[(&str, String)]) -> Result<String> {
        let template = self.sections.get(key).ok_or_else(|| {
            anyhow!(
                "{}/text.md has no section `# {key}` (it has: {})",
                self.origin,
                self.sections.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        fill(template, values).map_err(|e| anyhow!("{}/text.md, `# {key}`: {e}", self.origin))
    }

    /// Section `key`, which must have no placeholders.
    pub fn get(&self, key: &str) -> Result<String> {
        self.fill(key, &[])
    }

    /// Every section key, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.sections.keys().map(String::as_str)
    }
}

/// Lines joined with single spaces, paragraphs (separated by blank lines) with "\n\n".
fn join_paragraphs(lines: &[&str]) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    for l in lines {
        let t = l.trim();
        if t.is_empty() {
            if !cur.is_empty() {
                paragraphs.push(cur.join(" "));
                cur.clear();
            }
        } else {
            cur.push(t);
        }
    }
    if !cur.is_empty() {
        paragraphs.push(cur.join(" "));
    }
    paragraphs.join("\n\n")
}

/// Replaces `{name}` in `template`; every placeholder must have a value and every value a
/// placeholder.
fn fill(template: &str, values: &[(&str, String)]) -> Result<String> {
    let mut out = String::with_capacity(template.len());
    let mut used = vec![false; values.len()];
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("{{") {
            out.push('{');
            rest = t;
        } else if let Some(t) = tail.strip_prefix("}}") {
            out.push('}');
            rest = t;
        } else if tail.starts_with('}') {
            bail!("a lone `}}` (write `}}}}` for a brace)");
        } else {
            let end = tail
                .find('}')
                .ok_or_else(|| anyhow!("`{{` without its `}}`"))?;
            let name = &tail[1..end];
            let k = values
                .iter()
                .position(|(n, _)| *n == name)
                .ok_or_else(|| anyhow!("no value for {{{name}}}"))?;
            used[k] = true;
            out.push_str(&values[k].1);
            rest = &tail[end + 1..];
        }
    }
    out.push_str(rest);
    if let Some(k) = used.iter().position(|u| !u) {
        bail!(
            "the value {:?} has no {{{}}} to fill",
            values[k].0,
            values[k].0
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "# title\n7. Fast recovery\n\n# setup\nOne flow,\n  W = {w}.\n\nSecond {{paragraph}}.\n# note x\nnothing\n";

    #[test]
    fn sections_join_lines_and_keep_paragraphs() {
        let t = Text::parse("e07", SRC).unwrap();
        assert_eq!(t.get("title").unwrap(), "7. Fast recovery");
        assert_eq!(
            t.fill("setup", &[("w", "16".into())]).unwrap(),
            "One flow, W = 16.\n\nSecond {paragraph}."
        );
        assert_eq!(t.keys().collect::<Vec<_>>(), ["note x", "setup", "title"]);
    }

    #[test]
    fn every_mismatch_is_an_error() {
        let t = Text::parse("e07", SRC).unwrap();
        let e = t.get("setup").unwrap_err().to_string();
        assert!(e.contains("no value for {w}"), "{e}");
        let e = t
            .fill("title", &[("w", "1".into())])
            .unwrap_err()
            .to_string();
        assert!(e.contains("has no {w} to fill"), "{e}");
        let e = t.get("discussion").unwrap_err().to_string();
        assert!(e.contains("no section `# discussion`"), "{e}");
        assert!(Text::parse("e", "stray\n# a\n").is_err());
        assert!(Text::parse("e", "# a\n# a\n").is_err());
        assert!(fill("a } b", &[]).is_err());
        assert!(fill("a { b", &[]).is_err());
    }
}
