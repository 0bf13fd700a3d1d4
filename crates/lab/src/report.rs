//! The claims table (text) and the self-contained HTML report.

use crate::runinfo::{self, RunInfo};
use crate::suite::{ClaimResult, Figure, Section, Table, Verdict};
use std::fmt::Write as _;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The width of the terminal table: `COLUMNS` when set, else the terminal's width when
/// standard output is a terminal, else 100 (a log file, a pipe).
pub fn terminal_width() -> u16 {
    if let Some(w) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<u16>().ok())
        .filter(|&w| w >= 20)
    {
        return w;
    }
    comfy_table::Table::new().width().unwrap_or(100)
}

/// Why a claim has the verdict it has, for the notes under the terminal table: its note, or
/// a sentence when the experiment gave none.
fn reason(c: &ClaimResult) -> String {
    if !c.note.is_empty() {
        return c.note.clone();
    }
    match c.verdict {
        Verdict::Fail => format!("ours is outside the tolerance ({})", c.spec.tolerance),
        Verdict::Info => {
            "reported without a pass/fail judgement: the source gives no number to hold ours to"
                .into()
        }
        Verdict::Disagree => "see the experiment's discussion in the report".into(),
        Verdict::Skip => "not judged in this run".into(),
        Verdict::Pass => String::new(),
    }
}

/// The claims table, `width` columns wide: one row per claim (experiment and claim,
/// published, ackclock, tolerance, verdict), cells wrapped, never cut. Each claim that did
/// not pass has a numbered note under the table with its reason.
pub fn text_table(sections: &[Section], width: u16) -> String {
    use comfy_table::{presets, Cell, ColumnConstraint, ContentArrangement, Table, Width};
    let width = width.max(40);
    let mut t = Table::new();
    t.load_preset(presets::ASCII_FULL)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(["claim", "published", "ackclock", "tolerance", "verdict"]);
    let mut notes: Vec<String> = Vec::new();
    for c in sections.iter().flat_map(|s| &s.claims) {
        let verdict = if c.verdict == Verdict::Pass {
            c.verdict.word().to_string()
        } else {
            notes.push(format!(
                "{} / {} ({}): {}",
                c.experiment,
                c.spec.id,
                c.verdict.word(),
                reason(c)
            ));
            format!("{} [{}]", c.verdict.word(), notes.len())
        };
        t.add_row([
            Cell::new(format!("{}: {}", c.experiment, c.spec.claim)),
            Cell::new(&c.spec.published),
            Cell::new(&c.ours),
            Cell::new(&c.spec.tolerance),
            Cell::new(verdict),
        ]);
    }
    // The verdict and its note number stay on one line; the claim gets twice the room of
    // each number column before any of them wraps.
    let verdict_width = format!("disagree [{}]", notes.len()).len();
    let natural = |i: usize| {
        t.column_cells_iter(i)
            .flatten()
            .chain(t.header().and_then(|h| h.cell_iter().nth(i)))
            .flat_map(|c| c.content().lines().map(|l| l.chars().count()).max())
            .max()
            .unwrap_or(0)
    };
    let room = (width as usize).saturating_sub(6 + 5 * 2 + verdict_width);
    let widths = share(
        room,
        &[
            (natural(0), 2),
            (natural(1), 1),
            (natural(2), 1),
            (natural(3), 1),
        ],
    );
    for (i, w) in widths.into_iter().chain([verdict_width]).enumerate() {
        if let Some(col) = t.column_mut(i) {
            let w = u16::try_from(w + 2).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
        }
    }
    let mut out = t.to_string();
    out.push('\n');
    if !notes.is_empty() {
        out.push('\n');
        out.push_str(&wrap(
            "Why each claim marked [n] above did not pass (the report has each experiment's discussion):",
            "",
            width as usize,
        ));
        for (i, n) in notes.iter().enumerate() {
            let label = format!("[{}] ", i + 1);
            out.push_str(&wrap(n, &label, width as usize));
        }
    }
    out
}

/// Column widths for `room` characters: each column its natural width (`.0`) if all fit,
/// else the widest ones cut to a common level scaled by their weight (`.1`), none below 8.
fn share(room: usize, cols: &[(usize, usize)]) -> Vec<usize> {
    let at = |level: usize| -> Vec<usize> {
        cols.iter()
            .map(|&(natural, weight)| natural.min((level * weight).max(8)))
            .collect()
    };
    if cols.iter().map(|c| c.0).sum::<usize>() <= room {
        return cols.iter().map(|c| c.0).collect();
    }
    // The highest level whose widths fit (the widths grow with the level).
    let (mut lo, mut hi) = (0, room);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if at(mid).iter().sum::<usize>() <= room {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    at(lo)
}

/// `text` wrapped at word boundaries to `width` columns, the first line after `label`, the
/// others indented as far; a word longer than the line stays whole.
pub fn wrap(text: &str, label: &str, width: usize) -> String {
    let indent = label.chars().count();
    let room = width.saturating_sub(indent).max(20);
    let mut out = String::new();
    let mut line = String::new();
    let mut first = true;
    let flush = |line: &mut String, out: &mut String, first: &mut bool| {
        if *first {
            out.push_str(label);
            *first = false;
        } else {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(line.trim_end());
        out.push('\n');
        line.clear();
    };
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            flush(&mut line, &mut out, &mut first);
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || first {
        flush(&mut line, &mut out, &mut first);
    }
    out
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Info => "info",
        Verdict::Disagree => "disagree",
        Verdict::Skip => "skip",
    }
}

/// A command line as a shell would take it back: arguments quoted where they need it.
fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The report's first section: what was run, how, from which source, where and when.
fn run_section(run: &RunInfo) -> String {
    let mut h = String::from("<h2 id=\"run\">This run</h2>\n<table class=\"run\">\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<tr><th>{k}</th><td>{v}</td></tr>");
    };
    row(
        "ackclock",
        format!(
            "version {}, commit <code>{}</code>",
            esc(&run.version),
            esc(&run.commit)
        ),
    );
    row(
        "command",
        if run.command_line.is_empty() {
            "(run from the library, not the command line)".into()
        } else {
            format!("<code>{}</code>", esc(&shell_line(&run.command_line)))
        },
    );
    row(
        "mode",
        if run.mode == "quick" {
            "quick: each experiment shortened (fewer, shorter runs); numbers differ from a full run"
                .into()
        } else {
            "full".into()
        },
    );
    let seeds = &run.rng_seeds;
    let per_exp: Vec<String> = seeds
        .by_experiment
        .iter()
        .map(|(e, s)| format!("{} {}", esc(e), runinfo::ranges(s)))
        .collect();
    row(
        "RNG seeds",
        format!(
            "{} per stochastic configuration (<code>--seeds</code>); RNG seeds used: {}<br><span class=\"note\">by experiment: {}</span>",
            seeds.per_configuration,
            runinfo::ranges(&seeds.all),
            per_exp.join("; ")
        ),
    );
    row(
        "experiments",
        format!(
            "{} ({})",
            run.experiments.len(),
            esc(&run.experiments.join(", "))
        ),
    );
    row("machine", esc(&run.machine.describe()));
    row(
        "started",
        format!(
            "{} (UTC); wall time {:.0} s",
            esc(&run.started_utc),
            run.wall_time_s
        ),
    );
    h.push_str("</table>\n<p class=\"note\">The same facts are in <code>run.json</code>; every claim, with typed numbers, is in <code>claims.json</code> (both described in ackclock's <code>docs/OUTPUTS.md</code>).</p>\n");
    h
}

/// The report's head: the page's title and style sheet, and its heading.
const HEAD: &str = r#"<!doctype html><html><head><meta charset="utf-8"><title>ackclock repro</title>
<style>
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:14px}
td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f3f3f3}
.pass{background:#e6f4e6}.fail{background:#f9dede}.info{background:#eef}.disagree{background:#fff3d6}
blockquote{border-left:4px solid #ccc;margin:1em 0;padding:.2em 1em;color:#444;white-space:pre-wrap}
.plot svg{max-width:100%;height:auto}
figure.plot{margin:1.5em 0}
figcaption{font-size:14px;color:#333;max-width:900px;margin-top:.3em}
figcaption .files{margin-left:.6em;font-size:13px}
.note{color:#555;font-size:13px}
table.run th{background:none;white-space:nowrap}
code{font-size:13px}
dl.verdicts{font-size:14px;display:grid;grid-template-columns:max-content 1fr;gap:2px 10px}
dl.verdicts dt{font-weight:bold;padding:0 6px}dl.verdicts dd{margin:0}
</style>
"#;

/// The report: the claims table at the top, then one section per experiment with the
/// seed's words, the setup, the plots (inlined, so the file stands alone), our numbers and
/// the discussion.
pub fn html(sections: &[Section], run: &RunInfo) -> String {
    let mut h = String::new();
    h.push_str(HEAD);
    // The figures' viewer, once for the page (each figure holds only its data).
    h.push_str(&ackclock_plot::viewer());
    h.push_str("</head><body>\n<h1>ackclock repro</h1>\n");
    verdicts_defined(&mut h);
    h.push_str(&run_section(run));
    claims_overview(&mut h, sections);
    let mut figures = 0;
    for s in sections {
        experiment_section(&mut h, s, &mut figures);
    }
    h.push_str("</body></html>\n");
    h
}

/// What each verdict means, before anything counts them.
fn verdicts_defined(h: &mut String) {
    h.push_str("<p>Each claim gets one verdict:</p><dl class=\"verdicts\">");
    for v in Verdict::ALL {
        let _ = write!(
            h,
            "<dt class=\"{}\">{}</dt><dd>{}</dd>",
            verdict_class(v),
            v.word(),
            esc(v.meaning())
        );
    }
    h.push_str("</dl>\n<p class=\"note\">Figures: drag across a plot to zoom to that range of x (every panel of the figure follows, y fits what is in view), shift-drag to pan, double-click to see it all again; hover for values; click a legend entry to hide or show its series. Each figure is also a static SVG and PNG (links under it), for papers.</p>\n");
}

/// The section "Claims": how many claims got each verdict, and every claim in one table,
/// each row linking to its experiment's section.
fn claims_overview(h: &mut String, sections: &[Section]) {
    let n: usize = sections.iter().map(|s| s.claims.len()).sum();
    let count = |v: Verdict| {
        sections
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == v)
            .count()
    };
    let skipped = match count(Verdict::Skip) {
        0 => String::new(),
        k => format!(", <b>{k}</b> skipped (their runs are made in a full run only)"),
    };
    let _ = writeln!(
        h,
        "<h2 id=\"claims\">Claims</h2>\n<p>{n} claims from the seed messages (mailing-list messages of 1987-1990 on the TCP of 4BSD, and one of 2003), from Jacobson &amp; Karels, &ldquo;Congestion Avoidance and Control&rdquo; (SIGCOMM 1988), and from the papers and RFCs each claim names, re-measured in the ackclock simulator running the ackclock TCP: <b>{}</b> pass, <b>{}</b> fail, <b>{}</b> disagree with an explanation, <b>{}</b> reported{skipped}. Every number below is recomputed on each run; nothing is hard-coded.</p>",
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Disagree),
        count(Verdict::Info),
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
}

/// One experiment's section: the seed's words and their source, the setup, its claims with
/// their notes, its tables, its figures (numbered on from `figures`, the count so far) and
/// the discussion.
fn experiment_section(h: &mut String, s: &Section, figures: &mut usize) {
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
        table_html(h, t);
    }
    for f in &s.plots {
        figure_html(h, &s.name, f, figures);
    }
    if !s.discussion.is_empty() {
        let _ = writeln!(h, "<h3>Discussion</h3><p>{}</p>", esc(&s.discussion));
    }
}

/// A table of results with its caption.
fn table_html(h: &mut String, t: &Table) {
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

/// A figure of experiment `exp`, numbered after the `figures` before it, with its caption
/// and links to its SVG, PNG and HTML files: interactive (its data, from the HTML page
/// beside the SVG, drawn by the page's viewer) with the SVG as the fallback without
/// scripts; the SVG inlined when there is no HTML page. A figure whose SVG cannot be read
/// is left out (and not counted).
fn figure_html(h: &mut String, exp: &str, f: &Figure, figures: &mut usize) {
    let Ok(svg) = std::fs::read_to_string(&f.file) else {
        return;
    };
    *figures += 1;
    let page = std::fs::read_to_string(f.file.with_extension("html")).ok();
    let svg = svg
        .trim_start_matches(|c| c != '<')
        .trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let name = f
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.trim_end_matches(".svg");
    let (exp, stem, name) = (esc(exp), esc(stem), esc(&name));
    let (body, html_link) = match page.as_deref().and_then(ackclock_plot::figure_of_page) {
        Some(fig) => (
            format!(
                "{fig}<noscript><img src=\"{exp}/{name}\" alt=\"{}\"></noscript>",
                esc(&f.title)
            ),
            format!(" &middot; <a href=\"{exp}/{stem}.html\">HTML</a>"),
        ),
        None => (svg.to_string(), String::new()),
    };
    let _ = writeln!(
        h,
        "<figure class=\"plot\" id=\"{exp}-{stem}\">{body}<figcaption><b>Figure {figures}.</b> {}{}<span class=\"files\"><a href=\"{exp}/{name}\">SVG</a> &middot; <a href=\"{exp}/{stem}.png\">PNG</a>{html_link}</span></figcaption></figure>",
        esc(&f.caption),
        if f.caption.is_empty() { "" } else { " " },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::ClaimSpec;

    fn claim(id: &str, verdict: Verdict, note: &str) -> ClaimResult {
        ClaimResult {
            experiment: "startup".into(),
            spec: ClaimSpec {
                id: id.into(),
                claim: "Without slow start most of the bandwidth is wasted: only 35% of the available rate is used".into(),
                metric: "m".into(),
                published: "1,104 KB/s (1,098.8 KiB/s with standard 1538/84 byte-time framing, derived)".into(),
                tolerance: "within 0.5% of 1,098.8 and of 1,104".into(),
                source: "s".into(),
                unit: None,
                published_value: None,
                min: None,
                max: None,
                min_exclusive: false,
                max_exclusive: false,
            },
            ours: "RFC 793 (beta = 2): 63 timeouts, Eifel 63; A + 2D: 482 timeouts".into(),
            value: None,
            verdict,
            note: note.into(),
        }
    }

    #[test]
    fn the_table_fits_the_width_cuts_nothing_and_explains_every_verdict_but_pass() {
        let s = Section {
            claims: vec![
                claim("a", Verdict::Pass, ""),
                claim("b", Verdict::Disagree, "because of the clock"),
                claim("c", Verdict::Fail, ""),
                claim("d", Verdict::Info, ""),
                claim("e", Verdict::Skip, "full run only"),
            ],
            ..Section::default()
        };
        for width in [60u16, 80, 100, 200] {
            let t = text_table(std::slice::from_ref(&s), width);
            for line in t.lines() {
                assert!(line.chars().count() <= width as usize, "{width}: {line:?}");
            }
            assert!(!t.contains('~'), "{t}");
            // Every word of every cell is there, whatever the wrapping.
            let words: Vec<&str> = t.split(|c: char| c.is_whitespace() || c == '|').collect();
            // (Below 80 columns a column can be narrower than a word, which then breaks.)
            for w in ["available", "byte-time", "Eifel", "1,104"] {
                assert!(width < 80 || words.contains(&w), "{w}: {t}");
            }
            for (n, why) in [
                (1, "because of the clock"),
                (2, "outside the tolerance"),
                (3, "without a pass/fail judgement"),
                (4, "full run only"),
            ] {
                assert!(t.contains(&format!("[{n}]")), "{t}");
                let notes = &t[t.find("did not pass").unwrap()..];
                assert!(
                    notes
                        .replace('\n', " ")
                        .contains(why.split(' ').next().unwrap()),
                    "{why}: {t}"
                );
            }
        }
    }

    #[test]
    fn wrap_keeps_every_word_and_the_hanging_indent() {
        let w = wrap("aaa bbb ccc ddd eee fff ggg hhh iii jjj kkk", "[1] ", 24);
        assert_eq!(
            w,
            "[1] aaa bbb ccc ddd eee\n    fff ggg hhh iii jjj\n    kkk\n"
        );
    }
}
