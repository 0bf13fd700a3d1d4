//! ackclock's one figure engine ([`Chart`]): every figure of the reproduction report, of
//! `ackclock sim` and of `ackclock analyze` is drawn by it, so that every figure has the same
//! fonts, markers, axes and legend: markers of at least 2 px, retransmissions as larger red
//! crosses, a legend under the plot naming every drawn series (dashed lines too), axes from
//! 0 to about 1.1 times the data's maximum and to the end of the data, and log axes labelled
//! at each decade (and at 2 and 5 times it, or more, where there is room).

#![warn(missing_docs)]

mod html;
pub use html::{figure_of_page, viewer, HTML_POINTS, HTML_ZOOM, VIEWER_CSS, VIEWER_JS};

use anyhow::Result;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

pub use plotters::style::RGBColor;

/// Width of every figure, in SVG pixels.
const W: u32 = 900;
/// Height of the plot area of a one-panel figure (used to thin dots to one per pixel).
const H: u32 = 480;

const FONT: &str = "sans-serif";
const TITLE_PX: f64 = 19.0;
const DESC_PX: f64 = 15.0;
const TICK_PX: f64 = 13.0;
const LEGEND_PX: f64 = 14.0;
/// Heights (SVG pixels): the title band, a lone panel, each of several panels, the x axis's
/// labels and description under the last panel, one row of the legend.
const TITLE_H: f64 = 40.0;
const PANEL_H: f64 = 380.0;
const PANEL_H_MANY: f64 = 112.0;
const X_AREA_H: f64 = 46.0;
const LEGEND_ROW_H: f64 = 22.0;
/// Room right of the plot (the last x tick's label is centred on the axis's end).
const RIGHT_MARGIN: f64 = 34.0;
const LEFT_MARGIN: f64 = 8.0;

/// The colours of series 0, 1, ... (matplotlib's tab10).
pub fn palette(i: usize) -> RGBColor {
    const C: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    C[i % C.len()]
}

/// The red of retransmissions.
pub const REXMIT: RGBColor = RGBColor(214, 39, 40);

/// The receive window's line (tcptrace draws it yellow; olive reads on white).
pub const RWND: RGBColor = RGBColor(188, 189, 34);

/// Horizontal resolution the thinning keeps: one bucket per pixel column of the plot.
const COLUMNS: usize = W as usize;

/// Thins a line (points in time order) to what the plot can show: per column of `x`,
/// the first, lowest, highest and last point, in their original order. The drawn line keeps
/// its envelope and every step; a long run's millions of trace events stay a few thousand
/// SVG path points instead of tens of megabytes of report.
fn thin_line(v: Vec<(f64, f64)>, x0: f64, x1: f64) -> Vec<(f64, f64)> {
    thin_line_at(v, x0, x1, COLUMNS)
}

/// [`thin_line`] to `columns` columns.
fn thin_line_at(v: Vec<(f64, f64)>, x0: f64, x1: f64, columns: usize) -> Vec<(f64, f64)> {
    if v.len() <= 4 * columns || x1 <= x0 {
        return v;
    }
    let scale = columns as f64 / (x1 - x0);
    let mut out = Vec::with_capacity(4 * columns);
    let mut i = 0;
    while i < v.len() {
        let col = ((v[i].0 - x0) * scale) as i64;
        let start = i;
        let (mut lo, mut hi) = (i, i);
        while i < v.len() && ((v[i].0 - x0) * scale) as i64 == col {
            if v[i].1 < v[lo].1 {
                lo = i;
            }
            if v[i].1 > v[hi].1 {
                hi = i;
            }
            i += 1;
        }
        let mut keep = [start, lo, hi, i - 1];
        keep.sort_unstable();
        let mut prev = usize::MAX;
        for k in keep {
            if k != prev {
                out.push(v[k]);
                prev = k;
            }
        }
    }
    out
}

/// Thins scattered markers to one per pixel of the plot area (`x0..x1` by `0..ymax`): a
/// marker drawn twice on the same pixel is the same picture.
fn thin_dots(v: Vec<(f64, f64)>, x0: f64, x1: f64, ymax: f64) -> Vec<(f64, f64)> {
    thin_dots_at(v, x0, x1, ymax, (W as usize, H as usize))
}

/// [`thin_dots`] on a plot of `px` (columns, rows) pixels.
fn thin_dots_at(
    v: Vec<(f64, f64)>,
    x0: f64,
    x1: f64,
    ymax: f64,
    px: (usize, usize),
) -> Vec<(f64, f64)> {
    if x1 <= x0 || ymax <= 0.0 {
        return v;
    }
    let (sx, sy) = (px.0 as f64 / (x1 - x0), px.1 as f64 / ymax);
    let mut seen = std::collections::HashSet::with_capacity(v.len().min(1 << 20));
    v.into_iter()
        .filter(|p| seen.insert((((p.0 - x0) * sx) as i64, (p.1 * sy) as i64)))
        .collect()
}

/// What a series is drawn as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A solid line (a time series).
    Line,
    /// A thick solid line with a dot at each point (a sweep: each point is a run, or a mean
    /// of runs).
    LinePoints,
    /// A dashed line (a model's curve; ssthresh).
    Dashed,
    /// A dot at each point (segments sent).
    Dots,
    /// A hollow ring at each point (duplicate ACKs).
    Rings,
    /// A large cross at each point (retransmissions).
    Crosses,
    /// A vertical bar per pair of points, from the first to the second (a segment from its
    /// first sequence number to its last, as tcptrace draws it).
    Bars,
    /// An error bar per pair of points: a thin vertical line from the first to the second,
    /// capped at both ends (a mean's spread over seeds; see [`Series::error_bars`]).
    ErrorBars,
}

/// One named series of points.
#[derive(Clone, Debug)]
pub struct Series {
    /// The legend's text; empty: not in the legend (a second piece of a series already named).
    pub label: String,
    /// Its colour: usually [`palette`] of its place in the figure.
    pub color: RGBColor,
    /// How its points are drawn.
    pub mark: Mark,
    /// (x, y) in the axes' units; in x order for the marks drawn as lines, in pairs for
    /// [`Mark::Bars`]. Points that are not finite are left out.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series of `points` drawn as `mark` in `color`, named `label` in the legend.
    pub fn new(
        label: impl Into<String>,
        color: RGBColor,
        mark: Mark,
        points: Vec<(f64, f64)>,
    ) -> Self {
        Series {
            label: label.into(),
            color,
            mark,
            points,
        }
    }

    /// Error bars in `color`: for each `(x, low, high)` a capped vertical line from `low` to
    /// `high` at `x` (drawn over the series of the means, in its colour). The legend names
    /// it `label` (empty: not in the legend; say in the caption what the bars are).
    pub fn error_bars(label: impl Into<String>, color: RGBColor, bars: &[(f64, f64, f64)]) -> Self {
        Series::new(
            label,
            color,
            Mark::ErrorBars,
            bars.iter()
                .flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)])
                .collect(),
        )
    }
}

/// One plot of a figure; a figure of several panels stacks them on one time axis.
#[derive(Clone, Debug, Default)]
pub struct Panel {
    /// Written in the panel's top left corner when the figure has several panels.
    pub name: String,
    /// The series drawn in it, in order (a later one over an earlier one).
    pub series: Vec<Series>,
}

/// A figure: a title, one or more panels sharing the x axis (and the y axis's range), and a
/// legend under them naming every series drawn.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    /// Drawn in one line above the panels, in a smaller font when it is too wide.
    pub title: String,
    /// The x axis's description (quantity and unit), under the last panel.
    pub x_desc: String,
    /// The y axis's description (quantity and unit), beside each panel.
    pub y_desc: String,
    /// A logarithmic x axis (points at x <= 0 are left out).
    pub log_x: bool,
    /// The x axis's range; `None`: from the smallest to the largest x of the data.
    pub x_range: Option<(f64, f64)>,
    /// The top of the y axis; `None`: 1.1 times the largest y of the data.
    pub y_max: Option<f64>,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

impl Chart {
    /// A chart of one unnamed panel of `series`, the rest as [`Chart::default`] (the title
    /// and the axes' words to be filled in).
    pub fn one_panel(series: Vec<Series>) -> Chart {
        Chart {
            panels: vec![Panel {
                name: String::new(),
                series,
            }],
            ..Chart::default()
        }
    }
}

/// Puts `charts` on the same axes, for figures meant to be compared side by side: one x
/// range (from the smallest start to the largest end of theirs) and one y maximum (the
/// largest of theirs). An error, and nothing changed, when they do not describe the same
/// quantities (axis descriptions and log x must be equal), or when the axes still differ
/// (a y axis that goes below 0 differently).
pub fn same_axes(charts: &mut [Chart]) -> Result<()> {
    let Some(first) = charts.first() else {
        return Ok(());
    };
    if let Some(c) = charts
        .iter()
        .find(|c| (&c.x_desc, &c.y_desc, c.log_x) != (&first.x_desc, &first.y_desc, first.log_x))
    {
        anyhow::bail!(
            "\"{}\" and \"{}\" cannot share axes: ({}, {}) against ({}, {})",
            first.title,
            c.title,
            first.x_desc,
            first.y_desc,
            c.x_desc,
            c.y_desc
        );
    }
    let axes: Vec<_> = charts.iter().map(Chart::axes).collect();
    let x = (
        axes.iter().map(|a| a.0 .0).fold(f64::INFINITY, f64::min),
        axes.iter()
            .map(|a| a.0 .1)
            .fold(f64::NEG_INFINITY, f64::max),
    );
    let y_max = axes
        .iter()
        .map(|a| a.1 .1)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut shared = charts.to_vec();
    for c in &mut shared {
        c.x_range = Some(x);
        c.y_max = Some(y_max);
    }
    let a0 = shared[0].axes();
    if let Some(c) = shared.iter().find(|c| c.axes() != a0) {
        anyhow::bail!(
            "\"{}\" and \"{}\" cannot share axes: {:?} against {:?}",
            shared[0].title,
            c.title,
            a0,
            c.axes()
        );
    }
    charts.clone_from_slice(&shared);
    Ok(())
}

/// The PNG of a figure is drawn at this many times the SVG's size.
const PNG_SCALE: u32 = 2;

/// Registers the font every figure's text is laid out and drawn in (DejaVu Sans, embedded):
/// the PNG needs its glyphs, and the SVG its metrics (the SVG names "sans-serif", and the
/// viewer picks the face).
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font; a failure would leave text unlaid and show in
        // every figure.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Estimated width of `text` in a sans-serif font of `px` pixels (the layout is the same in
/// every backend, so the SVG and the PNG of a figure look alike).
fn text_w(text: &str, px: f64) -> f64 {
    text.chars().count() as f64 * px * 0.6
}

fn font<'a>(px: f64) -> TextStyle<'a> {
    (FONT, px).into_font().color(&RGBColor(40, 40, 40))
}

/// A tick label: `decimals` digits after the point, no "-0".
fn tick_label(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        format!("{:.decimals$}", 0.0)
    } else {
        s
    }
}

/// Digits after the point that a tick on a log axis needs (0.002 has three, 300 none).
fn log_decimals(v: f64) -> usize {
    if v >= 1.0 {
        0
    } else {
        (-v.log10() - 1e-9).ceil().max(0.0) as usize
    }
}

/// Digits after the point of ticks `step` apart (a 1, 2 or 5 times a power of ten).
fn step_decimals(step: f64) -> usize {
    (-(step.log10() + 1e-9).floor()).max(0.0) as usize
}

/// Ticks of a linear axis from `lo` to `hi` on `len` pixels: a step of 1, 2 or 5 times a
/// power of ten, the smallest whose labels are at least `gap(step)` pixels apart and that
/// gives at most 10 ticks; and the light grid lines between them. Returns (ticks, light
/// lines, decimals of the labels).
fn linear_ticks(
    lo: f64,
    hi: f64,
    len: f64,
    gap: &dyn Fn(usize) -> f64,
) -> (Vec<f64>, Vec<f64>, usize) {
    let span = (hi - lo).max(1e-12);
    let mut e = (span / 100.0).log10().floor() as i32;
    let step = 'found: loop {
        for m in [1.0, 2.0, 5.0] {
            let step = m * 10f64.powi(e);
            let dec = step_decimals(step);
            if span / step <= 10.0 && step / span * len >= gap(dec) {
                break 'found step;
            }
        }
        e += 1;
        if e > 300 {
            break span;
        }
    };
    let at = |s: f64| -> Vec<f64> {
        let first = (lo / s - 1e-9).ceil() as i64;
        let last = (hi / s + 1e-9).floor() as i64;
        (first..=last).map(|i| i as f64 * s).collect()
    };
    let light = [5.0, 2.0]
        .iter()
        .map(|d| step / d)
        .find(|s| s / span * len >= 8.0)
        .map(at)
        .unwrap_or_default();
    (at(step), light, step_decimals(step))
}

/// Ticks of a log axis from `lo` to `hi` (both > 0) on `len` pixels: at each decade, and at
/// 2 and 5 (and 3, or every digit) times it where the labels, `label_w(v)` pixels wide,
/// fit without overlapping; light grid lines at every digit of each decade (at the decades
/// only when the axis spans more than four). Returns (ticks, light lines).
fn log_ticks(lo: f64, hi: f64, len: f64, label_w: &dyn Fn(f64) -> f64) -> (Vec<f64>, Vec<f64>) {
    let (l0, l1) = (lo.log10(), hi.log10());
    let per = len / (l1 - l0).max(1e-9);
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let at = |ms: &[f64]| -> Vec<f64> {
        let mut v = Vec::new();
        for k in (l0.floor() as i32)..=(l1.ceil() as i32) {
            for &m in ms {
                // m * 10^k computed so that 0.3 is 0.3, not 0.30000000000000004.
                let x = if k >= 0 {
                    m * 10f64.powi(k)
                } else {
                    m / 10f64.powi(-k)
                };
                if inside(x) {
                    v.push(x);
                }
            }
        }
        v
    };
    let fits = |v: &[f64]| {
        v.windows(2).all(|w| {
            (w[1].log10() - w[0].log10()) * per >= (label_w(w[0]) + label_w(w[1])) / 2.0 + 10.0
        })
    };
    let digits: Vec<f64> = (1..10).map(f64::from).collect();
    let mut ticks = Vec::new();
    for ms in [&digits[..], &[1.0, 2.0, 3.0, 5.0], &[1.0, 2.0, 5.0], &[1.0]] {
        ticks = at(ms);
        if fits(&ticks) {
            break;
        }
    }
    // Many decades: every other (third, ...) decade.
    let mut every = 1;
    while ticks.len() > 2 && !fits(&ticks) {
        every += 1;
        ticks = at(&[1.0])
            .into_iter()
            .filter(|v| (v.log10().round() as i64).rem_euclid(every) == 0)
            .collect();
    }
    let light = if l1 - l0 <= 4.0 {
        at(&digits)
    } else {
        at(&[1.0])
    };
    (ticks, light)
}

/// The range of `v`, or (0, 1) when it is empty.
pub fn extent(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if lo.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    }
}

/// An axis's coordinate: linear or logarithmic, with the ticks and light grid lines we chose
/// (plotters' own log axis labels one tick per decade at best, and crowds its grid).
#[derive(Clone)]
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<f64>,
    light: Vec<f64>,
}

impl Axis {
    fn frac(&self, v: f64) -> f64 {
        if self.log {
            let (a, b) = (self.lo.log10(), self.hi.log10());
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - a) / (b - a)
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = self.frac(*v);
        limit.0 + (f64::from(limit.1 - limit.0) * f + 1e-3).floor() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A legend entry: what its sample looks like and its text.
struct Entry {
    color: RGBColor,
    mark: Mark,
    label: String,
}

impl Chart {
    /// Every named series that has points, each label once, in the order drawn.
    fn entries(&self) -> Vec<Entry> {
        let mut out: Vec<Entry> = Vec::new();
        for s in self.panels.iter().flat_map(|p| &p.series) {
            if s.label.is_empty() || s.points.is_empty() || out.iter().any(|e| e.label == s.label) {
                continue;
            }
            out.push(Entry {
                color: s.color,
                mark: s.mark,
                label: s.label.clone(),
            });
        }
        out
    }

    /// The legend's entries laid out in rows: (row, x offset) of each, in SVG pixels.
    fn legend_layout(&self) -> (Vec<(usize, f64)>, usize) {
        let mut at = Vec::new();
        let (mut row, mut x) = (0, 16.0);
        for e in self.entries() {
            let w = 34.0 + text_w(&e.label, LEGEND_PX) + 22.0;
            if x > 16.0 && x + w > f64::from(W) - 16.0 {
                row += 1;
                x = 16.0;
            }
            at.push((row, x));
            x += w;
        }
        let rows = if at.is_empty() { 0 } else { row + 1 };
        (at, rows)
    }

    fn panel_h(&self) -> f64 {
        if self.panels.len() > 1 {
            PANEL_H_MANY
        } else {
            PANEL_H
        }
    }

    /// The figure's size in SVG pixels.
    pub fn size(&self) -> (u32, u32) {
        let rows = self.legend_layout().1 as f64;
        let legend = if rows > 0.0 {
            rows * LEGEND_ROW_H + 12.0
        } else {
            0.0
        };
        let h = TITLE_H + self.panel_h() * self.panels.len().max(1) as f64 + X_AREA_H + legend;
        (W, h.round() as u32)
    }

    /// The ranges the figure is drawn with: the x axis's (from [`Chart::x_range`] or the
    /// data) and the y axis's (from 0, or below the data when it goes negative, to
    /// [`Chart::y_max`] or 1.1 times the data's maximum).
    pub fn axes(&self) -> ((f64, f64), (f64, f64)) {
        (self.x_extent(), self.y_extent())
    }

    /// The x axis's range and whether it is log.
    fn x_extent(&self) -> (f64, f64) {
        let xs = self
            .panels
            .iter()
            .flat_map(|p| &p.series)
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .filter(|x| x.is_finite() && (!self.log_x || *x > 0.0));
        let (mut lo, mut hi) = self.x_range.unwrap_or_else(|| extent(xs));
        if self.log_x {
            lo = lo.max(1e-12);
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else if hi <= lo {
            hi = lo + 1.0;
        }
        (lo, hi)
    }

    fn y_extent(&self) -> (f64, f64) {
        let (lo, hi) = extent(
            self.panels
                .iter()
                .flat_map(|p| &p.series)
                .flat_map(|s| s.points.iter().map(|p| p.1))
                .filter(|y| y.is_finite()),
        );
        let lo = if lo < 0.0 { lo * 1.1 } else { 0.0 };
        let hi = self.y_max.unwrap_or(if hi > 0.0 { hi * 1.1 } else { 1.0 });
        (lo, if hi > lo { hi } else { lo + 1.0 })
    }

    /// Writes the figure as an SVG file at `path` and, beside it, as a PNG of twice its size
    /// (the same drawing; for papers and for viewers without SVG) and as an interactive HTML
    /// page ([`Chart::write_html`], the same stem with `.html`).
    pub fn write(&self, path: &Path) -> Result<()> {
        self.write_static(path)?;
        self.write_html(&path.with_extension("html"))
    }

    /// [`Chart::write`] without the HTML page: the SVG at `path` and the PNG beside it.
    pub fn write_static(&self, path: &Path) -> Result<()> {
        register_font();
        let (w, h) = self.size();
        {
            let root = SVGBackend::new(path, (w, h)).into_drawing_area();
            self.draw(&root, 1.0)?;
            root.present()?;
        }
        let (pw, ph) = (w * PNG_SCALE, h * PNG_SCALE);
        let mut rgb = vec![0u8; pw as usize * ph as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (pw, ph)).into_drawing_area();
            self.draw(&root, f64::from(PNG_SCALE))?;
            root.present()?;
        }
        let png_path = path.with_extension("png");
        let file = std::fs::File::create(&png_path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", png_path.display()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), pw, ph);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header()?;
        writer.write_image_data(&rgb)?;
        writer.finish()?;
        Ok(())
    }

    /// Draws the figure on `root`, every length times `s` (the PNG is drawn at twice the
    /// SVG's size).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, s: f64) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let px = |v: f64| (v * s).round() as i32;
        root.fill(&WHITE)?;
        let (w, _) = self.size();
        self.draw_title(root, s)?;

        let (x0, x1) = self.x_extent();
        let (y0, y1) = self.y_extent();
        let panel_h = self.panel_h();
        let n = self.panels.len().max(1);
        // The y axis's ticks (the same on every panel) and the room their labels need.
        let plot_h = panel_h - 12.0;
        let (yt, yl, ydec) = linear_ticks(y0, y1, plot_h, &|_| TICK_PX * 2.2);
        let widest = yt
            .iter()
            .map(|v| text_w(&tick_label(*v, ydec), TICK_PX))
            .fold(0.0, f64::max);
        let y_area = widest + DESC_PX * 1.4 + 16.0;
        let plot_w = f64::from(w) - y_area - LEFT_MARGIN - RIGHT_MARGIN;
        let (xt, xl, xdec) = if self.log_x {
            let lw = |v: f64| text_w(&tick_label(v, log_decimals(v)), TICK_PX);
            let (t, l) = log_ticks(x0, x1, plot_w, &lw);
            (t, l, None)
        } else {
            let (t, l, d) = linear_ticks(x0, x1, plot_w, &|dec| {
                let wide = text_w(&tick_label(x0.abs().max(x1.abs()), dec), TICK_PX);
                wide + 14.0
            });
            (t, l, Some(d))
        };
        let xfmt = move |v: &f64| match xdec {
            Some(d) => tick_label(*v, d),
            None => tick_label(*v, log_decimals(*v)),
        };
        let yfmt = move |v: &f64| tick_label(*v, ydec);

        let top = px(TITLE_H);
        let bottom = px(TITLE_H + panel_h * n as f64 + X_AREA_H);
        // Above the first panel, each panel (the last with the x axis under it), the legend.
        let breaks: Vec<i32> = (0..n)
            .map(|i| top + px(panel_h * i as f64))
            .chain([bottom])
            .collect();
        let areas = root.split_by_breakpoints([] as [i32; 0], &breaks);
        let empty = Panel::default();
        for i in 0..n {
            let last = i + 1 == n;
            let area = &areas[i + 1];
            let panel = self.panels.get(i).unwrap_or(&empty);
            let mut cb = ChartBuilder::on(area);
            cb.margin_top(px(6.0))
                .margin_bottom(px(if last { 0.0 } else { 6.0 }))
                .margin_left(px(LEFT_MARGIN))
                .margin_right(px(RIGHT_MARGIN))
                .y_label_area_size(px(y_area))
                .x_label_area_size(px(if last { X_AREA_H } else { 0.0 }));
            let y = Axis {
                lo: y0,
                hi: y1,
                log: false,
                ticks: yt.clone(),
                light: yl.clone(),
            };
            let x = Axis {
                lo: x0,
                hi: x1,
                log: self.log_x,
                ticks: xt.clone(),
                light: xl.clone(),
            };
            let ctx = PanelCtx {
                s,
                last,
                x_desc: &self.x_desc,
                y_desc: &self.y_desc,
                xfmt: &xfmt,
                yfmt: &yfmt,
                x: (x0, x1),
                y: (y0, y1),
                log_x: self.log_x,
            };
            let chart = cb.build_cartesian_2d(x, y)?;
            draw_panel(chart, panel, &ctx)?;
            if n > 1 && !panel.name.is_empty() {
                let at = (px(LEFT_MARGIN + y_area + 8.0), px(10.0));
                let (tw, th) = (
                    px(text_w(&panel.name, LEGEND_PX) * 0.92 + 4.0),
                    px(LEGEND_PX + 6.0),
                );
                area.draw(&Rectangle::new(
                    [(at.0 - px(4.0), at.1 - px(2.0)), (at.0 + tw, at.1 + th)],
                    WHITE.mix(0.6).filled(),
                ))?;
                area.draw(&Text::new(
                    panel.name.clone(),
                    at,
                    font(LEGEND_PX * s).pos(Pos::new(HPos::Left, VPos::Top)),
                ))?;
            }
        }

        self.draw_legend(root, f64::from(bottom) / s, s)
    }

    /// The title, in one line centred above the panels: a smaller font if it is too wide
    /// at the usual size.
    fn draw_title<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, s: f64) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let px = |v: f64| (v * s).round() as i32;
        let (w, _) = self.size();
        let mut title_px = TITLE_PX;
        while title_px > 12.0
            && f64::from(root.estimate_text_size(&self.title, &font(title_px * s))?.0)
                > (f64::from(w) - 24.0) * s
        {
            title_px -= 0.5;
        }
        let title_style = font(title_px * s).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(
            self.title.clone(),
            (px(f64::from(w) / 2.0), px(TITLE_H / 2.0 + 2.0)),
            title_style,
        ))?;
        Ok(())
    }

    /// The legend, 8 px under `bottom` (the lower edge of the x axis's labels, in SVG
    /// pixels): a sample of each entry's mark and its label, in the rows of
    /// [`legend_layout`](Self::legend_layout).
    fn draw_legend<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        bottom: f64,
        s: f64,
    ) -> Result<()>
    where
        DB::ErrorType: 'static,
    {
        let px = |v: f64| (v * s).round() as i32;
        let (layout, _) = self.legend_layout();
        let y_leg = bottom + 8.0;
        for (e, (row, x)) in self.entries().into_iter().zip(layout) {
            let cy = px(y_leg + row as f64 * LEGEND_ROW_H + LEGEND_ROW_H / 2.0);
            let x = px(x);
            draw_sample(root, &e, (x, cy), s)?;
            root.draw(&Text::new(
                e.label.clone(),
                (x + px(34.0), cy),
                font(LEGEND_PX * s).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}

/// What every panel of a figure shares.
struct PanelCtx<'a> {
    s: f64,
    last: bool,
    x_desc: &'a str,
    y_desc: &'a str,
    xfmt: &'a dyn Fn(&f64) -> String,
    yfmt: &'a dyn Fn(&f64) -> String,
    x: (f64, f64),
    y: (f64, f64),
    log_x: bool,
}

/// A legend entry's sample: a short line, dashed line, dot, ring or cross at `at` (its left
/// end, vertically centred).
fn draw_sample<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    e: &Entry,
    at: (i32, i32),
    s: f64,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let px = |v: f64| (v * s).round() as i32;
    let (x, y) = at;
    let mid = (x + px(14.0), y);
    let line = vec![(x, y), (x + px(28.0), y)];
    match e.mark {
        Mark::Line => root.draw(&PathElement::new(
            line,
            e.color.stroke_width(px(2.0) as u32),
        ))?,
        Mark::LinePoints => {
            root.draw(&PathElement::new(
                line,
                e.color.stroke_width(px(2.0) as u32),
            ))?;
            root.draw(&Circle::new(mid, px(3.5), e.color.filled()))?;
        }
        Mark::Dashed => root.draw(&DashedPathElement::new(
            line,
            6.0 * s,
            4.0 * s,
            e.color.stroke_width(px(2.0) as u32),
        ))?,
        Mark::Dots => root.draw(&Circle::new(mid, px(3.0), e.color.filled()))?,
        Mark::Rings => root.draw(&Circle::new(
            mid,
            px(3.5),
            e.color.stroke_width(px(1.5) as u32),
        ))?,
        Mark::Crosses => root.draw(&Cross::new(
            mid,
            px(5.0),
            e.color.stroke_width(px(2.0) as u32),
        ))?,
        Mark::Bars => root.draw(&PathElement::new(
            vec![(mid.0, y - px(6.0)), (mid.0, y + px(6.0))],
            e.color.stroke_width(px(2.0) as u32),
        ))?,
        Mark::ErrorBars => {
            let st = e.color.stroke_width(px(1.5) as u32);
            let (t, b) = (y - px(6.0), y + px(6.0));
            root.draw(&PathElement::new(vec![(mid.0, t), (mid.0, b)], st))?;
            for yy in [t, b] {
                root.draw(&PathElement::new(
                    vec![(mid.0 - px(4.0), yy), (mid.0 + px(4.0), yy)],
                    st,
                ))?;
            }
        }
    }
    Ok(())
}

/// Draws one panel's grid, axes and series.
fn draw_panel<DB>(
    mut chart: ChartContext<DB, Cartesian2d<Axis, Axis>>,
    panel: &Panel,
    c: &PanelCtx,
) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let s = c.s;
    let px = |v: f64| (v * s).round() as i32;
    let w = |v: f64| ((v * s).round() as u32).max(1);
    {
        let mut mesh = chart.configure_mesh();
        mesh.x_label_formatter(c.xfmt)
            .y_label_formatter(c.yfmt)
            .label_style(font(TICK_PX * s))
            .axis_desc_style(font(DESC_PX * s))
            .bold_line_style(RGBColor(205, 205, 205).stroke_width(w(1.0)))
            .light_line_style(RGBColor(238, 238, 238).stroke_width(w(1.0)))
            .axis_style(RGBColor(90, 90, 90).stroke_width(w(1.0)))
            .set_all_tick_mark_size(px(4.0))
            .y_desc(c.y_desc);
        if c.last {
            mesh.x_desc(c.x_desc);
        }
        mesh.draw()?;
    }
    let (x0, x1) = c.x;
    let (_, y1) = c.y;
    for ser in &panel.series {
        if ser.mark == Mark::ErrorBars {
            draw_error_bars(&mut chart, ser, c)?;
            continue;
        }
        if ser.mark == Mark::Bars {
            // One bar per pair; at most one bar starting on each pixel.
            let mut seen = std::collections::HashSet::new();
            let (sx, sy) = (f64::from(W) / (x1 - x0), f64::from(H) / y1);
            let bars: Vec<[(f64, f64); 2]> = ser
                .points
                .chunks_exact(2)
                .filter(|b| b.iter().all(|p| p.0.is_finite() && p.1.is_finite()))
                .filter(|b| seen.insert((((b[0].0 - x0) * sx) as i64, (b[0].1 * sy) as i64)))
                .map(|b| [b[0], b[1]])
                .collect();
            let col = ser.color;
            chart.draw_series(
                bars.into_iter()
                    .map(|b| PathElement::new(b.to_vec(), col.stroke_width(w(2.0)))),
            )?;
            continue;
        }
        let pts: Vec<(f64, f64)> = ser
            .points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && (!c.log_x || p.0 > 0.0))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let col = ser.color;
        // Scattered marks keep one per pixel (a log axis is not thinned).
        let marks = |pts: Vec<(f64, f64)>| {
            if c.log_x {
                pts
            } else {
                thin_dots(pts, x0, x1, y1)
            }
        };
        match ser.mark {
            Mark::Line | Mark::LinePoints | Mark::Dashed => {
                let pts = if c.log_x { pts } else { thin_line(pts, x0, x1) };
                let lw = if ser.mark == Mark::Line { 1.2 } else { 2.0 };
                if ser.mark == Mark::Dashed {
                    chart.draw_series(DashedLineSeries::new(
                        pts.iter().copied(),
                        6.0 * s,
                        4.0 * s,
                        col.stroke_width(w(lw)),
                    ))?;
                } else if s > 1.0 {
                    // The bitmap backend joins a thick polyline's segments with unlimited
                    // miters: where a step line turns back on itself the join is a long
                    // spike. Separate segments have no joins.
                    chart
                        .draw_series(pts.windows(2).map(|p| {
                            PathElement::new(vec![p[0], p[1]], col.stroke_width(w(lw)))
                        }))?;
                } else {
                    chart.draw_series(LineSeries::new(
                        pts.iter().copied(),
                        col.stroke_width(w(lw)),
                    ))?;
                }
                if ser.mark == Mark::LinePoints && pts.len() <= 200 {
                    chart
                        .draw_series(pts.iter().map(|p| Circle::new(*p, px(3.5), col.filled())))?;
                }
            }
            Mark::Dots => {
                let pts = marks(pts);
                chart.draw_series(pts.iter().map(|p| Circle::new(*p, px(2.0), col.filled())))?;
            }
            Mark::Rings => {
                let pts = marks(pts);
                chart.draw_series(
                    pts.iter()
                        .map(|p| Circle::new(*p, px(3.5), col.stroke_width(w(1.2)))),
                )?;
            }
            Mark::Bars | Mark::ErrorBars => {}
            Mark::Crosses => {
                let pts = marks(pts);
                chart.draw_series(
                    pts.iter()
                        .map(|p| Cross::new(*p, px(5.0), col.stroke_width(w(2.0)))),
                )?;
            }
        }
    }
    Ok(())
}

/// Error bars: a capped vertical line per pair of points (none on a log axis at x <= 0).
fn draw_error_bars<DB>(
    chart: &mut ChartContext<DB, Cartesian2d<Axis, Axis>>,
    ser: &Series,
    c: &PanelCtx,
) -> Result<()>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
{
    let w = ((1.5 * c.s).round() as u32).max(1);
    let cap = (4.0 * c.s).round() as i32;
    let st = ser.color.stroke_width(w);
    for b in ser.points.chunks_exact(2) {
        if !b.iter().all(|p| p.0.is_finite() && p.1.is_finite()) || (c.log_x && b[0].0 <= 0.0) {
            continue;
        }
        chart.draw_series([PathElement::new(vec![b[0], b[1]], st)])?;
        for &(x, y) in b {
            chart.draw_series([
                EmptyElement::at((x, y)) + PathElement::new(vec![(-cap, 0), (cap, 0)], st)
            ])?;
        }
    }
    Ok(())
}

/// A step function's points (x in order; the value holds until the next point) as the path
/// that draws it: each change becomes a vertical step, and repeated values are dropped.
pub fn step_path(v: impl IntoIterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut last: Option<(f64, f64)> = None;
    for (x, y) in v {
        match last {
            None => out.push((x, y)),
            Some((_, ly)) if ly == y => {}
            Some((_, ly)) => {
                out.push((x, ly));
                out.push((x, y));
            }
        }
        last = Some((x, y));
    }
    if let (Some(l), Some(o)) = (last, out.last()) {
        if *o != l {
            out.push(l);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_line_keeps_short_series_and_the_envelope_of_long_ones() {
        let short: Vec<(f64, f64)> = (0..100).map(|i| (f64::from(i), 1.0)).collect();
        assert_eq!(thin_line(short.clone(), 0.0, 100.0), short);
        // A sawtooth of 200,000 points over 10 s: the thinned line has at most four points
        // per column and the same extremes, in time order.
        let n = 200_000;
        let v: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let t = f64::from(i) * 10.0 / f64::from(n);
                (t, f64::from(i % 977))
            })
            .collect();
        let th = thin_line(v.clone(), 0.0, 10.0);
        assert!(th.len() <= 4 * (COLUMNS + 1), "{}", th.len());
        assert!(th.windows(2).all(|w| w[0].0 <= w[1].0));
        let ext = |v: &[(f64, f64)]| {
            v.iter()
                .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)))
        };
        assert_eq!(ext(&th), ext(&v));
        assert_eq!(th.first(), v.first());
        assert_eq!(th.last(), v.last());
    }

    #[test]
    fn thin_dots_keeps_one_dot_per_pixel() {
        let v: Vec<(f64, f64)> = (0..100_000)
            .map(|i| (f64::from(i % 1000) / 1000.0, f64::from(i / 1000) / 100.0))
            .collect();
        let th = thin_dots(v, 0.0, 1.0, 1.0);
        assert!(th.len() <= (W as usize + 1) * (H as usize + 1));
        assert!(th.len() >= 50_000, "distinct pixels lost: {}", th.len());
    }

    #[test]
    fn same_axes_gives_one_x_range_and_one_y_max_or_refuses() {
        let c = |title: &str, pts: Vec<(f64, f64)>| Chart {
            title: title.into(),
            x_desc: "time (s)".into(),
            y_desc: "KB".into(),
            ..Chart::one_panel(vec![Series::new("a", palette(0), Mark::Line, pts)])
        };
        let mut v = vec![
            c("a", vec![(0.0, 1.0), (10.0, 50.0)]),
            c("b", vec![(2.0, 1.0), (30.0, 20.0)]),
        ];
        assert_ne!(v[0].axes(), v[1].axes());
        same_axes(&mut v).unwrap();
        assert_eq!(v[0].axes(), v[1].axes());
        assert_eq!(v[0].axes(), ((0.0, 30.0), (0.0, 50.0 * 1.1)));
        let mut other = vec![
            v[0].clone(),
            Chart {
                y_desc: "MB".into(),
                ..v[1].clone()
            },
        ];
        assert!(same_axes(&mut other).is_err());
        let mut below = vec![v[0].clone(), c("n", vec![(0.0, -5.0), (1.0, 2.0)])];
        assert!(same_axes(&mut below).is_err());
        assert_eq!(below[1].x_range, None, "unchanged on error");
    }

    #[test]
    fn step_path_holds_each_value_until_the_next_change() {
        let v = [
            (0.0, 1.0),
            (1.0, 1.0),
            (2.0, 3.0),
            (3.0, 3.0),
            (4.0, 2.0),
            (5.0, 2.0),
        ];
        assert_eq!(
            step_path(v),
            vec![
                (0.0, 1.0),
                (2.0, 1.0),
                (2.0, 3.0),
                (4.0, 3.0),
                (4.0, 2.0),
                (5.0, 2.0)
            ]
        );
        assert!(step_path([]).is_empty());
        assert_eq!(step_path([(1.0, 2.0)]), vec![(1.0, 2.0)]);
    }

    #[test]
    fn log_axes_label_each_decade_and_more_where_there_is_room() {
        let w = |v: f64| text_w(&tick_label(v, log_decimals(v)), TICK_PX);
        // fat_pipes: 10 to 300 packets on 800 px: 10, 20, 30, 50, ... 300, the end labelled.
        let (t, light) = log_ticks(10.0, 300.0, 800.0, &w);
        assert_eq!(t, vec![10.0, 20.0, 30.0, 50.0, 100.0, 200.0, 300.0]);
        assert!(light.contains(&90.0) && light.len() == 9 + 3);
        // satnet_trace: 0.001 to 1, three decades.
        let (t, _) = log_ticks(0.001, 1.0, 800.0, &w);
        assert!(t.contains(&0.001) && t.contains(&0.01) && t.contains(&0.1) && t.contains(&1.0));
        assert!(t.len() >= 4);
        // Labels never overlap, whatever the span.
        for (lo, hi) in [
            (1.0, 1e12),
            (0.3, 3.0),
            (2.0, 32.0),
            (128.0, 16384.0),
            (49.0, 60.0),
        ] {
            let (t, _) = log_ticks(lo, hi, 800.0, &w);
            assert!(t.len() >= 2, "{lo}..{hi}: {t:?}");
            for p in t.windows(2) {
                let gap = (p[1].log10() - p[0].log10()) * 800.0 / (hi / lo).log10();
                assert!(gap >= (w(p[0]) + w(p[1])) / 2.0, "{lo}..{hi}: {t:?}");
            }
        }
        assert_eq!(tick_label(0.3, log_decimals(0.3)), "0.3");
        assert_eq!(tick_label(300.0, log_decimals(300.0)), "300");
        assert_eq!(tick_label(0.002, log_decimals(0.002)), "0.002");
    }

    #[test]
    fn linear_axes_step_by_one_two_or_five_and_label_without_needless_digits() {
        let (t, _, d) = linear_ticks(0.0, 1.1, 380.0, &|_| 30.0);
        assert_eq!(d, 1);
        assert_eq!(t.first(), Some(&0.0));
        assert!(t.len() <= 12 && t.len() >= 5, "{t:?}");
        let (t, _, d) = linear_ticks(0.0, 154.0, 800.0, &|_| 40.0);
        assert_eq!(d, 0);
        assert_eq!(tick_label(t[1], d), "20");
    }

    /// Every series drawn is in the legend, dashed lines too, and the legend sits under the
    /// plot (the figure grows by its rows).
    #[test]
    fn the_legend_names_every_series_drawn() {
        let c = Chart {
            title: "t".into(),
            panels: vec![Panel {
                name: String::new(),
                series: vec![
                    Series::new(
                        "a cwnd",
                        palette(0),
                        Mark::Line,
                        vec![(0.0, 1.0), (1.0, 2.0)],
                    ),
                    Series::new("a ssthresh", palette(0), Mark::Dashed, vec![(0.0, 1.0)]),
                    Series::new("", palette(0), Mark::Dashed, vec![(0.5, 1.0)]),
                    Series::new("empty", palette(1), Mark::Dots, vec![]),
                ],
            }],
            ..Chart::default()
        };
        let labels: Vec<String> = c.entries().into_iter().map(|e| e.label).collect();
        assert_eq!(labels, ["a cwnd", "a ssthresh"]);
        let d = std::env::temp_dir().join(format!("ackclock-plot-{}.svg", std::process::id()));
        c.write(&d).unwrap();
        let svg = std::fs::read_to_string(&d).unwrap();
        let _ = std::fs::remove_file(&d);
        // The PNG beside it, twice the size.
        let png = std::fs::read(d.with_extension("png")).unwrap();
        let _ = std::fs::remove_file(d.with_extension("png"));
        let html = std::fs::read_to_string(d.with_extension("html")).unwrap();
        let _ = std::fs::remove_file(d.with_extension("html"));
        assert!(figure_of_page(&html).is_some_and(|f| f.contains("a ssthresh")));
        assert_eq!(&png[1..4], b"PNG");
        let dim = |i: usize| u32::from_be_bytes(png[i..i + 4].try_into().unwrap());
        assert_eq!((dim(16), dim(20)), (c.size().0 * 2, c.size().1 * 2));
        assert!(svg.contains("a ssthresh") && svg.contains("a cwnd"));
        assert!(c.size().1 > (TITLE_H + PANEL_H + X_AREA_H) as u32);
    }
}
