//! Interactive figures: a [`Chart`]'s data as JSON ([`Chart::to_json`]), drawn in the browser
//! by our own viewer (`viewer.js`, about 450 lines, no dependencies) with pan, zoom to an x
//! range (every panel follows), hover for values and series toggled from the legend.
//!
//! A page of figures includes [`viewer`] once (its style sheet and script) and one
//! [`Chart::html_figure`] per figure; [`Chart::write_html`] writes such a page of one figure,
//! self-contained and offline. Why our own few hundred lines rather than a vendored library
//! (uPlot was the candidate): our series each have their own x values (uPlot's main mode
//! wants one x array per chart), half our marks are not a charting library's (tcptrace's
//! vertical segment bars, error bars, rings, crosses), and every figure must look like its
//! static SVG; the code that draws them would have been ours anyway.
//!
//! The data are bounded: lines are thinned as in the SVG but to [`HTML_ZOOM`] times the
//! columns (so a figure zoomed that far in is still exact to the pixel), markers to one per
//! pixel at that zoom; a figure whose thinned data would pass [`HTML_POINTS`] points is
//! thinned at half the zoom, and so on down to the SVG's resolution.

use crate::{thin_dots_at, thin_line_at, Chart, Mark, H, W};
use anyhow::Result;
use std::fmt::Write as _;
use std::path::Path;

/// How far in (times the SVG's resolution) an interactive figure keeps every pixel's detail,
/// when its data fit [`HTML_POINTS`].
pub const HTML_ZOOM: usize = 16;

/// The most points an interactive figure carries (beyond it, it is thinned coarser).
pub const HTML_POINTS: usize = 40_000;

/// The viewer's script (drawing, zoom, hover, legend), included once per page by [`viewer`].
pub const VIEWER_JS: &str = include_str!("viewer.js");

/// The viewer's style sheet, included once per page by [`viewer`].
pub const VIEWER_CSS: &str = include_str!("viewer.css");

/// The start and end markers of the figure in a page written by [`Chart::write_html`]
/// (what [`figure_of_page`] finds).
const BEGIN: &str = "<!-- ackclock figure -->";
const END: &str = "<!-- /ackclock figure -->";

/// The viewer's style sheet and script, to put once in a page (in its head or before its
/// first figure): every [`Chart::html_figure`] of the page is drawn when the page has loaded.
pub fn viewer() -> String {
    format!("<style>\n{VIEWER_CSS}</style>\n<script>\n{VIEWER_JS}</script>\n")
}

/// The figure in a page written by [`Chart::write_html`]: its [`Chart::html_figure`]
/// fragment, to embed in another page that includes the [`viewer`]; `None` if the page has
/// none.
pub fn figure_of_page(page: &str) -> Option<&str> {
    let start = page.find(BEGIN)? + BEGIN.len();
    let len = page[start..].find(END)?;
    Some(page[start..start + len].trim())
}

/// `s` as a JSON string; `<`, `>` and `&` escaped too, so that it can sit in a `<script>`.
fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 || matches!(c, '<' | '>' | '&') => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A number for JSON: `dec` digits after the point with trailing zeros dropped, or (`None`)
/// six significant digits (a log axis).
fn num(o: &mut String, v: f64, dec: Option<usize>) {
    let s = match dec {
        Some(d) => format!("{v:.d$}"),
        None => format!("{v:.5e}"),
    };
    let s = if dec.is_some_and(|d| d > 0) {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    o.push_str(if s == "-0" { "0" } else { &s });
}

/// Digits after the point that resolve half a pixel of `span` over `px` pixels.
fn decimals(span: f64, px: f64) -> usize {
    let r = span / px / 2.0;
    if r.is_finite() && r > 0.0 {
        (-r.log10()).ceil().clamp(0.0, 12.0) as usize
    } else {
        6
    }
}

fn mark_name(m: Mark) -> &'static str {
    match m {
        Mark::Line => "line",
        Mark::LinePoints => "linepoints",
        Mark::Dashed => "dashed",
        Mark::Dots => "dots",
        Mark::Rings => "rings",
        Mark::Crosses => "crosses",
        Mark::Bars => "bars",
        Mark::ErrorBars => "errorbars",
    }
}

impl Chart {
    /// The points of each panel's series as the interactive figure carries them, thinned at
    /// `zoom` times the SVG's resolution.
    fn html_points(&self, zoom: usize) -> Vec<Vec<Vec<(f64, f64)>>> {
        let (x0, x1) = self.x_extent();
        let (_, y1) = self.y_extent();
        let (cols, rows) = (W as usize * zoom, H as usize * zoom);
        self.panels
            .iter()
            .map(|p| {
                p.series
                    .iter()
                    .map(|s| {
                        let ok = |q: &(f64, f64)| {
                            q.0.is_finite() && q.1.is_finite() && (!self.log_x || q.0 > 0.0)
                        };
                        match s.mark {
                            Mark::Bars | Mark::ErrorBars => {
                                let mut seen = std::collections::HashSet::new();
                                let (sx, sy) = (cols as f64 / (x1 - x0), rows as f64 / y1);
                                s.points
                                    .chunks_exact(2)
                                    .filter(|b| b.iter().all(ok))
                                    .filter(|b| {
                                        s.mark == Mark::ErrorBars
                                            || self.log_x
                                            || seen.insert((
                                                ((b[0].0 - x0) * sx) as i64,
                                                (b[0].1 * sy) as i64,
                                                (b[1].1 * sy) as i64,
                                            ))
                                    })
                                    .flatten()
                                    .copied()
                                    .collect()
                            }
                            _ => {
                                let v: Vec<(f64, f64)> =
                                    s.points.iter().copied().filter(ok).collect();
                                match s.mark {
                                    _ if self.log_x => v,
                                    Mark::Line | Mark::LinePoints | Mark::Dashed => {
                                        thin_line_at(v, x0, x1, cols)
                                    }
                                    _ => thin_dots_at(v, x0, x1, y1, (cols, rows)),
                                }
                            }
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The figure's data as JSON, what the viewer draws: `title`, `xDesc`, `yDesc`, `logX`,
    /// `x` and `y` (the axes' ranges, as the SVG draws them) and `panels`, each with its
    /// `name` and its `series` (`label`, `color` as `#rrggbb`, `mark`: `line`, `linepoints`,
    /// `dashed`, `dots`, `rings`, `crosses`, `bars` or `errorbars`, and the points as arrays
    /// `x` and `y`, pairs of points for the two kinds of bars). The points are thinned as the
    /// module's documentation says.
    pub fn to_json(&self) -> String {
        let (x0, x1) = self.x_extent();
        let (y0, y1) = self.y_extent();
        let mut zoom = HTML_ZOOM;
        let mut pts = self.html_points(zoom);
        while zoom > 1 && pts.iter().flatten().map(Vec::len).sum::<usize>() > HTML_POINTS {
            zoom /= 2;
            pts = self.html_points(zoom);
        }
        let px = (W as usize * zoom) as f64;
        let xdec = (!self.log_x).then(|| decimals(x1 - x0, px));
        let ydec = Some(decimals(y1 - y0, (H as usize * zoom) as f64));
        let mut o = String::new();
        let _ = write!(
            o,
            "{{\"title\":{},\"xDesc\":{},\"yDesc\":{},\"logX\":{},\"x\":[",
            json_str(&self.title),
            json_str(&self.x_desc),
            json_str(&self.y_desc),
            self.log_x
        );
        num(&mut o, x0, if self.log_x { None } else { Some(12) });
        o.push(',');
        num(&mut o, x1, if self.log_x { None } else { Some(12) });
        o.push_str("],\"y\":[");
        num(&mut o, y0, Some(12));
        o.push(',');
        num(&mut o, y1, Some(12));
        o.push_str("],\"panels\":[");
        for (pi, (p, ps)) in self.panels.iter().zip(&pts).enumerate() {
            if pi > 0 {
                o.push(',');
            }
            let _ = write!(o, "{{\"name\":{},\"series\":[", json_str(&p.name));
            for (si, (s, v)) in p.series.iter().zip(ps).enumerate() {
                if si > 0 {
                    o.push(',');
                }
                let c = s.color;
                let _ = write!(
                    o,
                    "{{\"label\":{},\"color\":\"#{:02x}{:02x}{:02x}\",\"mark\":\"{}\",\"x\":[",
                    json_str(&s.label),
                    c.0,
                    c.1,
                    c.2,
                    mark_name(s.mark)
                );
                for (i, q) in v.iter().enumerate() {
                    if i > 0 {
                        o.push(',');
                    }
                    num(&mut o, q.0, xdec);
                }
                o.push_str("],\"y\":[");
                for (i, q) in v.iter().enumerate() {
                    if i > 0 {
                        o.push(',');
                    }
                    num(&mut o, q.1, ydec);
                }
                o.push_str("]}");
            }
            o.push_str("]}");
        }
        o.push_str("]}");
        o
    }

    /// The figure as a fragment of HTML (a `div` of class `ackfig`, with the element id `id`
    /// when it is not empty, holding [`Chart::to_json`]); it is drawn by the [`viewer`], which
    /// the page must include once.
    pub fn html_figure(&self, id: &str) -> String {
        let id = if id.is_empty() {
            String::new()
        } else {
            format!(" id=\"{}\"", id.replace(['"', '<', '>', '&'], "_"))
        };
        format!(
            "<div class=\"ackfig\"{id}><script type=\"application/json\">{}</script></div>",
            self.to_json()
        )
    }

    /// Writes the figure as a self-contained HTML page at `path` (the [`viewer`] and the
    /// figure, nothing fetched): open it in a browser to pan, zoom, read values and hide
    /// series. [`Chart::write`] writes one beside every SVG.
    pub fn write_html(&self, path: &Path) -> Result<()> {
        let title = self.title.replace('&', "&amp;").replace('<', "&lt;");
        let page = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title>\n{}</head><body style=\"margin:1em\">\n{BEGIN}\n{}\n{END}\n</body></html>\n",
            viewer(),
            self.html_figure(""),
        );
        std::fs::write(path, page)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{palette, Panel, Series};

    fn chart(n: usize) -> Chart {
        let line: Vec<(f64, f64)> = (0..n).map(|i| (i as f64 * 1e-3, (i % 97) as f64)).collect();
        let bars: Vec<(f64, f64)> = (0..n)
            .flat_map(|i| {
                [
                    (i as f64 * 1e-3, i as f64),
                    (i as f64 * 1e-3, i as f64 + 1.0),
                ]
            })
            .collect();
        Chart {
            title: "a <b> & \"c\"".into(),
            x_desc: "time (s)".into(),
            y_desc: "y".into(),
            panels: vec![Panel {
                name: "p".into(),
                series: vec![
                    Series::new("line", palette(0), Mark::Line, line),
                    Series::new("bars", palette(1), Mark::Bars, bars),
                    Series::new(
                        "sd",
                        palette(2),
                        Mark::ErrorBars,
                        vec![(1.0, 2.0), (1.0, 4.0)],
                    ),
                ],
            }],
            ..Chart::default()
        }
    }

    #[test]
    fn the_json_names_every_mark_escapes_text_and_bounds_the_points() {
        let small = chart(100).to_json();
        assert!(small.starts_with("{\"title\":\"a \\u003cb\\u003e \\u0026 \\\"c\\\"\""));
        assert!(!small.contains('<'));
        for m in ["\"line\"", "\"bars\"", "\"errorbars\""] {
            assert!(small.contains(&format!("\"mark\":{m}")), "{m}");
        }
        // Small series are kept whole: 100 line points, 200 bar ends, 2 error-bar ends.
        let count = |j: &str| j.matches(',').count();
        assert!(count(&small) > 400, "{small}");
        // A million-point figure stays within the bound (a few commas more per series).
        let big = chart(1_000_000);
        let j = big.to_json();
        let pts = j
            .split("\"x\":[")
            .skip(2)
            .map(|s| s.split(']').next().unwrap().split(',').count());
        assert!(pts.sum::<usize>() <= HTML_POINTS, "{}", j.len());
    }

    #[test]
    fn a_written_page_holds_the_viewer_and_gives_back_its_figure() {
        let c = chart(10);
        let p = std::env::temp_dir().join(format!("ackclock-plot-{}.html", std::process::id()));
        c.write_html(&p).unwrap();
        let page = std::fs::read_to_string(&p).unwrap();
        let _ = std::fs::remove_file(&p);
        assert!(page.contains("window.ackclockPlot"));
        let fig = figure_of_page(&page).unwrap();
        assert!(fig.starts_with("<div class=\"ackfig\"><script"), "{fig}");
        assert!(fig.contains(&c.to_json()));
        assert_eq!(figure_of_page("<html></html>"), None);
    }

    /// The viewer sits in a script element: nothing in it may end that element early or
    /// change how the HTML parser reads it.
    #[test]
    fn the_viewer_can_sit_in_a_script_element() {
        let js = VIEWER_JS.to_ascii_lowercase();
        for bad in ["</script", "<!--", "<script"] {
            assert!(!js.contains(bad), "{bad}");
        }
    }

    #[test]
    fn numbers_are_as_short_as_their_resolution() {
        let mut o = String::new();
        num(&mut o, 12.5000, Some(3));
        o.push(' ');
        num(&mut o, 3.0, Some(2));
        o.push(' ');
        num(&mut o, -0.0001, Some(2));
        o.push(' ');
        num(&mut o, 0.00123, None);
        assert_eq!(o, "12.5 3 0 1.23000e-3");
        assert_eq!(decimals(10.0, 1000.0), 3);
        assert_eq!(decimals(10.0, 100.0), 2);
    }
}
