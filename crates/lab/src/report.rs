//! The claims table (text) and the self-contained HTML report.

use super::{Section, Verdict};
use std::fmt::Write as _;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One line per claim: experiment, claim, published, ours, tolerance, verdict.
pub fn text_table(sections: &[Section]) -> String {
    let mut rows: Vec<[String; 6]> = vec![[
        "experiment".into(),
        "claim".into(),
        "published".into(),
        "ackclock".into(),
        "tolerance".into(),
        "verdict".into(),
    ]];
    for s in sections {
        for c in &s.claims {
            rows.push([
                c.experiment.clone(),
                c.spec.claim.clone(),
                c.spec.published.clone(),
                c.ours.clone(),
                c.spec.tolerance.clone(),
                c.verdict.word().to_string(),
            ]);
        }
    }
    let limits = [16, 60, 18, 22, 24, 8];
    let clip = |s: &str, n: usize| -> String {
        if s.chars().count() <= n {
            s.to_string()
        } else {
            let t: String = s.chars().take(n - 1).collect();
            format!("{t}~")
        }
    };
    let mut widths = [0usize; 6];
    for r in &rows {
        for i in 0..6 {
            widths[i] = widths[i].max(clip(&r[i], limits[i]).chars().count());
        }
    }
    let mut t = String::new();
    for (k, r) in rows.iter().enumerate() {
        for i in 0..6 {
            let cell = clip(&r[i], limits[i]);
            let _ = write!(t, "{cell:<w$}  ", w = widths[i]);
        }
        t.push('\n');
        if k == 0 {
            let _ = writeln!(t, "{}", "-".repeat(widths.iter().sum::<usize>() + 12));
        }
    }
    t
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Info => "info",
        Verdict::Disagree => "disagree",
    }
}

/// The report: the claims table at the top, then one section per experiment with the
/// seed's words, the setup, the plots (inlined, so the file stands alone), our numbers and
/// the discussion.
pub fn html(sections: &[Section], quick: bool, took: std::time::Duration) -> String {
    let mut h = String::new();
    h.push_str(r#"<!doctype html><html><head><meta charset="utf-8"><title>ackclock repro</title>
<style>
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px}
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}
.pass{background:#e6f4e6}.fail{background:#f9dede}.info{background:#eef}.disagree{background:#fff3d6}
blockquote{border-left:4px solid #ccc;margin:1em 0;padding:.2em 1em;color:#444;white-space:pre-wrap}
.plot svg{max-width:100%;height:auto}
.note{color:#555;font-size:13px}
</style></head><body>
<h1>ackclock repro</h1>
"#);
    let n: usize = sections.iter().map(|s| s.claims.len()).sum();
    let count = |v: Verdict| {
        sections
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == v)
            .count()
    };
    let _ = writeln!(
        h,
        "<p>{n} claims from the seed messages and Jacobson &amp; Karels 1988, re-measured in the ackclock simulator running the ackclock TCP: <b>{}</b> pass, <b>{}</b> fail, <b>{}</b> disagree with an explanation, <b>{}</b> reported. {} run, {:.0} s. Every number below is recomputed on each run; nothing is hard-coded.</p>",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Disagree),
        count(Verdict::Info),
        if quick { "Quick (shortened)" } else { "Full" },
        took.as_secs_f64()
    );
    h.push_str("<table><tr><th>experiment</th><th>claim</th><th>published</th><th>ackclock</th><th>tolerance</th><th>verdict</th><th>source</th></tr>\n");
    for s in sections {
        for c in &s.claims {
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                verdict_class(c.verdict),
                esc(&s.name),
                esc(&s.name),
                esc(&c.spec.claim),
                esc(&c.spec.published),
                esc(&c.ours),
                esc(&c.spec.tolerance),
                c.verdict.word(),
                esc(&c.spec.source)
            );
        }
    }
    h.push_str("</table>\n");
    for s in sections {
        let _ = writeln!(h, "<h2 id=\"{}\">{}</h2>", esc(&s.name), esc(&s.title));
        if !s.quote.is_empty() {
            let _ = writeln!(
                h,
                "<blockquote>{}</blockquote><p class=\"note\">{}</p>",
                esc(&s.quote),
                esc(&s.quote_source)
            );
        }
        if !s.setup.is_empty() {
            let _ = writeln!(h, "<h3>Setup</h3><p>{}</p>", esc(&s.setup));
        }
        let _ = writeln!(h, "<h3>Claims</h3><table><tr><th>claim</th><th>metric</th><th>published</th><th>ackclock</th><th>tolerance</th><th>verdict</th><th>note</th></tr>");
        for c in &s.claims {
            let _ = writeln!(
                h,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                verdict_class(c.verdict),
                esc(&c.spec.claim),
                esc(&c.spec.metric),
                esc(&c.spec.published),
                esc(&c.ours),
                esc(&c.spec.tolerance),
                c.verdict.word(),
                esc(&c.note)
            );
        }
        h.push_str("</table>\n");
        for t in &s.tables {
            let _ = writeln!(h, "<table><caption>{}</caption><tr>", esc(&t.caption));
            for c in &t.header {
                let _ = write!(h, "<th>{}</th>", esc(c));
            }
            h.push_str("</tr>\n");
            for r in &t.rows {
                h.push_str("<tr>");
                for c in r {
                    let _ = write!(h, "<td>{}</td>", esc(c));
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
        for p in &s.plots {
            if let Ok(svg) = std::fs::read_to_string(p) {
                let svg = svg
                    .trim_start_matches(|c| c != '<')
                    .trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
                let _ = writeln!(h, "<div class=\"plot\">{svg}</div>");
            }
        }
        if !s.discussion.is_empty() {
            let _ = writeln!(h, "<h3>Discussion</h3><p>{}</p>", esc(&s.discussion));
        }
    }
    h.push_str("</body></html>\n");
    h
}
