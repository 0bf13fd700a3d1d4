//! `--plot COLUMN,...`: one figure of sweep.csv per metric column, written beside it as
//! `sweep-<column>.svg` (with the PNG and the interactive HTML page of
//! [`ackclock_plot::Chart::write`]).
//!
//! The x axis is the first swept parameter whose values are all numbers (one that takes at
//! least two values before one that takes one); every combination of the other parameters
//! is a line, named `path=value, ...` in the legend. Several seeds per point are drawn as
//! their mean with a bar from their minimum to their maximum, and the title says so. The
//! figures are drawn from the table as written, so a local sweep and `sweep collect` draw
//! the same figures from the same bytes.
//!
//! A sweep whose parameters are all words (queue kinds, TCP presets) has no x axis: `--plot`
//! refuses it before any run, naming the parameters, rather than drawing categories at
//! made-up x positions whose ticks (1.5, 2.5) would mean nothing.

use crate::collect::METRIC_COLUMNS;
use ackclock_plot::{palette, Chart, Mark, Series};
use anyhow::{anyhow, bail, Result};
use std::path::{Path, PathBuf};

/// What `--plot` asks for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The metric columns to draw, one figure each; empty: no figures.
    pub columns: Vec<String>,
    /// The x axis: `Some(true)` log, `Some(false)` linear (`--plot-log-x`,
    /// `--plot-linear-x`); `None`: decided from the data by [`auto_log_x`].
    pub log_x: Option<bool>,
}

/// `--plot`'s value parser: one of [`METRIC_COLUMNS`], so that a misspelt name is refused
/// with the list before any run, not after an hour of them.
///
/// # Errors
/// Not a metric column of sweep.csv.
pub fn parse_column(s: &str) -> std::result::Result<String, String> {
    let s = s.trim();
    if METRIC_COLUMNS.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?} is not a metric column of sweep.csv; the columns are {}",
            METRIC_COLUMNS.join(", ")
        ))
    }
}

/// A cell that is a number the x axis can place (not `inf` or `NaN`).
fn number(cell: &str) -> Option<f64> {
    cell.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The parameter on the x axis, by its place in `params` (each a path and its values, as
/// typed or as sweep.csv writes them): the first whose values are all numbers and that takes
/// at least two different values, else the first whose values are all numbers.
///
/// # Errors
/// No parameter (a sweep of `--seeds` alone), or none whose values are all numbers.
pub fn x_param(params: &[(String, Vec<String>)]) -> Result<usize> {
    if params.is_empty() {
        bail!("--plot needs a swept parameter for the x axis, and the sweep has none (--seeds and --param seed=... replicate one configuration); add one, e.g. --param topology.pairs=2,4,8");
    }
    let numbers = |v: &[String]| -> Option<Vec<f64>> { v.iter().map(|c| number(c)).collect() };
    let varies = |v: &[f64]| v.iter().any(|x| *x != v[0]);
    let numeric: Vec<(usize, Vec<f64>)> = params
        .iter()
        .enumerate()
        .filter_map(|(i, (_, v))| numbers(v).map(|n| (i, n)))
        .collect();
    if let Some((i, _)) = numeric.iter().find(|(_, n)| varies(n)).or(numeric.first()) {
        return Ok(*i);
    }
    let named: Vec<String> = params
        .iter()
        .map(|(p, v)| {
            let mut distinct: Vec<&str> = Vec::new();
            for c in v {
                if !distinct.contains(&c.as_str()) {
                    distinct.push(c);
                }
            }
            format!("{p} ({})", distinct.join(", "))
        })
        .collect();
    bail!(
        "--plot needs a swept parameter whose values are all numbers for the x axis, and none is: {}; sweep a number as well (e.g. --param topology.pairs=2,4,8), or leave out --plot and plot sweep.csv yourself",
        named.join("; ")
    )
}

/// Checks `opts` against the swept parameters (path and values each) before any run: the
/// columns are metric columns and a parameter can be the x axis ([`x_param`]).
///
/// # Errors
/// As [`parse_column`] and [`x_param`]; nothing when no column is asked for.
pub fn check(opts: &Options, params: &[(String, Vec<String>)]) -> Result<()> {
    if opts.columns.is_empty() {
        return Ok(());
    }
    for c in &opts.columns {
        parse_column(c).map_err(|e| anyhow!("--plot {e}"))?;
    }
    x_param(params).map(|_| ())
}

/// Whether the x axis is drawn logarithmic when neither `--plot-log-x` nor
/// `--plot-linear-x` says: when every x is above 0 and they span a factor of 100 or more
/// (rates of 1e5 to 1e8 b/s, buffers of 4 to 1024 packets), where a linear axis would crowd
/// all but the last points against the y axis.
pub fn auto_log_x(xs: &[f64]) -> bool {
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(*x), b.max(*x))
        });
    lo > 0.0 && lo.is_finite() && hi / lo >= 100.0
}

/// One point of a [`Line`]: an x, and the column's values over the runs (seeds) there.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The x parameter's value.
    pub x: f64,
    /// The mean of the runs' values.
    pub mean: f64,
    /// The smallest of them.
    pub min: f64,
    /// The largest of them.
    pub max: f64,
    /// How many runs had a value (an empty cell, e.g. `jain_fairness` without flows, is
    /// left out).
    pub runs: usize,
}

/// One line of a [`Figure`]: a combination of the parameters not on the x axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// `path=value, ...` of those parameters (each path shortened to its last part when no
    /// other swept parameter ends the same way); empty when the x parameter is the only one.
    pub label: String,
    /// In increasing x.
    pub points: Vec<Point>,
}

/// The data of one figure: a metric column against the x parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The metric column (the y axis).
    pub column: String,
    /// The x parameter's dotted path.
    pub x_path: String,
    /// One per combination of the other parameters, in the order of sweep.csv's rows (so a
    /// combination has the same colour in every figure of a sweep).
    pub lines: Vec<Line>,
}

impl Figure {
    /// The most runs behind any point (1: no error bars).
    pub fn max_runs(&self) -> usize {
        self.points().map(|p| p.runs).max().unwrap_or(0)
    }

    fn points(&self) -> impl Iterator<Item = &Point> {
        self.lines.iter().flat_map(|l| &l.points)
    }
}

/// A dotted path as the legend names it: its last part, unless another of `paths` ends the
/// same way (`flow.0.tcp` and `flow.1.tcp` keep their whole paths).
fn short_name<'a>(path: &'a str, paths: &[&str]) -> &'a str {
    let last = |p: &'a str| p.rsplit('.').next().unwrap_or(p);
    let tail = last(path);
    let clashes = paths
        .iter()
        .filter(|p| p.rsplit('.').next() == Some(tail))
        .count();
    if clashes > 1 {
        path
    } else {
        tail
    }
}

/// A line while it is gathered: its key (the other parameters' cells) and each x with the
/// column's values there, in row order.
type Group<'a> = (Vec<&'a str>, Vec<(f64, Vec<f64>)>);

/// The figure of `column` from the text of a sweep.csv: its parameters are the columns before
/// `seed`, the x axis chosen by [`x_param`], a [`Line`] per combination of the others with the
/// mean, minimum and maximum over the runs at each x.
///
/// # Errors
/// Not a sweep.csv (no `seed` column, rows of another width), no such column, no
/// parameter that can be the x axis.
pub fn figure(csv: &str, column: &str) -> Result<Figure> {
    let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .ok_or_else(|| anyhow!("sweep.csv is empty"))?
        .split(',')
        .collect();
    let n_params = header
        .iter()
        .position(|h| *h == "seed")
        .ok_or_else(|| anyhow!("not a sweep.csv: no `seed` column in its header"))?;
    let col = header
        .iter()
        .position(|h| *h == column)
        .filter(|&i| i > n_params)
        .ok_or_else(|| anyhow!("sweep.csv has no metric column {column:?}"))?;
    let mut rows: Vec<Vec<&str>> = Vec::new();
    for (n, l) in lines.enumerate() {
        let cells: Vec<&str> = l.split(',').collect();
        if cells.len() != header.len() {
            bail!(
                "sweep.csv row {}: {} cells, the header has {}",
                n + 1,
                cells.len(),
                header.len()
            );
        }
        rows.push(cells);
    }
    let params: Vec<(String, Vec<String>)> = (0..n_params)
        .map(|j| {
            let values = rows.iter().map(|r| r[j].to_string()).collect();
            (header[j].to_string(), values)
        })
        .collect();
    let xi = x_param(&params)?;
    let others: Vec<usize> = (0..n_params).filter(|&j| j != xi).collect();
    let names: Vec<&str> = header[..n_params].to_vec();
    let mut groups: Vec<Group> = Vec::new();
    for r in &rows {
        let key: Vec<&str> = others.iter().map(|&j| r[j]).collect();
        let x = number(r[xi]).expect("x_param chose a column of numbers");
        let g = match groups.iter().position(|(k, _)| *k == key) {
            Some(g) => g,
            None => {
                groups.push((key, Vec::new()));
                groups.len() - 1
            }
        };
        let at = &mut groups[g].1;
        let p = match at.iter().position(|(px, _)| *px == x) {
            Some(p) => p,
            None => {
                at.push((x, Vec::new()));
                at.len() - 1
            }
        };
        // An empty cell (no flows, no packet through the link) has no value to average.
        if let Some(y) = number(r[col]) {
            at[p].1.push(y);
        }
    }
    let lines = groups
        .into_iter()
        .map(|(key, at)| {
            let label = others
                .iter()
                .zip(&key)
                .map(|(&j, v)| format!("{}={v}", short_name(names[j], &names)))
                .collect::<Vec<_>>()
                .join(", ");
            let mut points: Vec<Point> = at
                .into_iter()
                .filter(|(_, ys)| !ys.is_empty())
                .map(|(x, ys)| Point {
                    x,
                    mean: ys.iter().sum::<f64>() / ys.len() as f64,
                    min: ys.iter().copied().fold(f64::INFINITY, f64::min),
                    max: ys.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    runs: ys.len(),
                })
                .collect();
            points.sort_by(|a, b| a.x.total_cmp(&b.x));
            Line { label, points }
        })
        .collect();
    Ok(Figure {
        column: column.to_string(),
        x_path: header[xi].to_string(),
        lines,
    })
}

/// Colours of [`palette`] before it starts again.
const PALETTE: usize = 8;

/// An axis's description and the factor its values are divided by: a column or path in b/s
/// (`total_goodput_bps`, `rate_bps`) is drawn in Mb/s, whose ticks read 10 where b/s
/// would read 10000000; every other quantity as it is in sweep.csv.
pub fn axis(name: &str) -> (String, f64) {
    if name.ends_with("_bps") {
        (format!("{name} in Mb/s"), 1e6)
    } else {
        (name.to_string(), 1.0)
    }
}

/// The chart of `fig`, titled after `scenario`: each line's means joined, with a bar from the
/// minimum to the maximum where a point has several runs; `log_x` as [`Options::log_x`]; the
/// axes described and scaled by [`axis`].
pub fn chart(fig: &Figure, scenario: &str, log_x: Option<bool>) -> Chart {
    let xs: Vec<f64> = fig.points().map(|p| p.x).collect();
    let log_x = log_x.unwrap_or_else(|| auto_log_x(&xs));
    let ((x_desc, xd), (y_desc, yd)) = (axis(&fig.x_path), axis(&fig.column));
    let mut series: Vec<Series> = fig
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let pts: Vec<_> = l.points.iter().map(|p| (p.x / xd, p.mean / yd)).collect();
            // The palette has 8 colours: the next 8 lines are dashed, so that no two of 16
            // look alike (a line of one point cannot be dashed, and keeps its dot).
            let dashed = (i / PALETTE) % 2 == 1 && pts.len() > 1;
            let mark = if dashed {
                Mark::Dashed
            } else {
                Mark::LinePoints
            };
            Series::new(l.label.clone(), palette(i), mark, pts)
        })
        .collect();
    for (i, l) in fig.lines.iter().enumerate() {
        let bars: Vec<(f64, f64, f64)> = l
            .points
            .iter()
            .filter(|p| p.runs > 1 && p.max > p.min)
            .map(|p| (p.x / xd, p.min / yd, p.max / yd))
            .collect();
        series.push(Series::error_bars("", palette(i), &bars));
    }
    let most = fig.max_runs();
    let least = fig.points().map(|p| p.runs).min().unwrap_or(0);
    let spread = match (least, most) {
        (_, 0 | 1) => String::new(),
        (l, m) if l == m => format!(" (mean of {m} seeds, bars from min to max)"),
        (l, m) => format!(" (mean of {l} to {m} seeds, bars from min to max)"),
    };
    Chart {
        title: format!("{scenario}: {} by {}{spread}", fig.column, fig.x_path),
        x_desc,
        y_desc,
        log_x,
        ..Chart::one_panel(series)
    }
}

/// The figures `opts` asks for, drawn from `csv` (the text of sweep.csv) into `dir` as
/// `sweep-<column>.svg`, `.png` and `.html`; returns the files written. A column with no
/// value in any row (`jain_fairness` of a sweep without flows) is not drawn, and a note on
/// stderr says so: an empty figure would pass for a broken one.
///
/// # Errors
/// As [`figure`]; a file that cannot be written.
pub fn write(dir: &Path, csv: &str, scenario: &str, opts: &Options) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for column in &opts.columns {
        let fig = figure(csv, column)?;
        if fig.points().next().is_none() {
            eprintln!("note: sweep-{column}.svg not drawn: no run has a value of {column}");
            continue;
        }
        let svg = dir.join(format!("sweep-{column}.svg"));
        chart(&fig, scenario, opts.log_x)
            .write(&svg)
            .map_err(|e| anyhow!("cannot write {}: {e}", svg.display()))?;
        files.extend(["svg", "png", "html"].map(|e| svg.with_extension(e)));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two queue kinds by three buffer sizes, two seeds each; the last row's fairness empty.
    const CSV: &str = "\
topology.bottleneck.queue.kind,topology.bottleneck.queue.limit_pkts,seed,flows,total_goodput_bps,jain_fairness
drop_tail,8,1,2,100,0.5
drop_tail,8,2,2,300,0.7
drop_tail,800,1,2,500,0.9
drop_tail,800,2,2,500,0.9
red,8,1,2,200,1.0
red,8,2,2,400,
";

    fn params(p: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        p.iter()
            .map(|(n, v)| (n.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    #[test]
    fn a_line_per_combination_of_the_other_parameters_with_mean_min_and_max() {
        let f = figure(CSV, "total_goodput_bps").unwrap();
        assert_eq!(f.x_path, "topology.bottleneck.queue.limit_pkts");
        assert_eq!(f.lines.len(), 2);
        assert_eq!(f.lines[0].label, "kind=drop_tail");
        assert_eq!(f.lines[1].label, "kind=red");
        let p = &f.lines[0].points;
        assert_eq!(
            p[0],
            Point {
                x: 8.0,
                mean: 200.0,
                min: 100.0,
                max: 300.0,
                runs: 2
            }
        );
        assert_eq!((p[1].x, p[1].mean, p[1].runs), (800.0, 500.0, 2));
        assert_eq!(f.max_runs(), 2);
        // An empty cell is no value: red's one point at 8 has one run, not a mean with 0.
        let j = figure(CSV, "jain_fairness").unwrap();
        assert_eq!(j.lines[1].points[0].runs, 1);
        assert_eq!(j.lines[1].points[0].mean, 1.0);
    }

    #[test]
    fn the_chart_says_what_the_bars_are_and_draws_one_where_seeds_differ() {
        let f = figure(CSV, "total_goodput_bps").unwrap();
        let c = chart(&f, "red_vs_droptail", None);
        assert!(c.title.contains("mean of 2 seeds"), "{}", c.title);
        assert!(c.title.contains("min to max"), "{}", c.title);
        assert_eq!(c.x_desc, "topology.bottleneck.queue.limit_pkts");
        assert_eq!(c.y_desc, "total_goodput_bps in Mb/s");
        let s = &c.panels[0].series;
        // Two lines, then their bars: drop_tail at 8 (100..300) only; at 800 both seeds agree.
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].points, vec![(8.0, 200e-6), (800.0, 500e-6)]);
        assert_eq!(s[2].mark, Mark::ErrorBars);
        assert_eq!(s[2].points, vec![(8.0, 100e-6), (8.0, 300e-6)]);
        // 8 to 800 packets: a factor of 100, so the x axis is log unless told otherwise.
        assert!(c.log_x);
        assert!(!chart(&f, "x", Some(false)).log_x);
        assert_eq!(s[0].mark, Mark::LinePoints);
    }

    #[test]
    fn lines_past_the_palette_are_dashed_so_that_no_two_look_alike() {
        let mut csv = String::from("tcp,topology.pairs,seed,timeouts\n");
        for i in 0..10 {
            csv.push_str(&format!("p{i},2,1,{i}\np{i},4,1,{i}\n"));
        }
        let f = figure(&csv, "timeouts").unwrap();
        let c = chart(&f, "t", None);
        let marks: Vec<Mark> = c.panels[0].series[..10].iter().map(|s| s.mark).collect();
        assert!(marks[..8].iter().all(|m| *m == Mark::LinePoints));
        assert_eq!(marks[8..], [Mark::Dashed, Mark::Dashed]);
        assert_eq!(c.panels[0].series[8].color, palette(0));
    }

    #[test]
    fn log_x_when_every_x_is_positive_and_they_span_a_factor_of_100() {
        assert!(auto_log_x(&[1e5, 1e6, 1e7]));
        assert!(auto_log_x(&[1.0, 100.0]));
        assert!(!auto_log_x(&[2.0, 4.0, 8.0, 16.0]));
        assert!(!auto_log_x(&[0.0, 10.0, 1000.0]));
        assert!(!auto_log_x(&[-1.0, 1000.0]));
        assert!(!auto_log_x(&[]));
    }

    #[test]
    fn an_unknown_column_is_refused_with_the_list() {
        let e = parse_column("goodput").unwrap_err();
        assert!(e.contains("\"goodput\" is not a metric column"), "{e}");
        assert!(e.contains("total_goodput_bps, min_goodput_bps"), "{e}");
        assert_eq!(parse_column("jain_fairness").unwrap(), "jain_fairness");
        let opts = Options {
            columns: vec!["seed".into()],
            log_x: None,
        };
        let e = check(&opts, &params(&[("topology.pairs", &["2", "4"])])).unwrap_err();
        assert!(e.to_string().contains("the columns are flows,"), "{e}");
    }

    #[test]
    fn the_first_parameter_of_numbers_that_varies_is_the_x_axis() {
        let p = params(&[
            ("topology.flows.tcp", &["reno", "cubic"]),
            ("topology.pairs", &["4"]),
            ("topology.bottleneck.rate_bps", &["1e6", "1000000.0", "2e6"]),
        ]);
        assert_eq!(x_param(&p).unwrap(), 2);
        // A number that does not vary is still a better x axis than words.
        assert_eq!(x_param(&p[..2]).unwrap(), 1);
    }

    #[test]
    fn parameters_of_words_alone_are_refused_by_name_before_any_run() {
        let p = params(&[
            ("topology.flows.tcp", &["reno", "cubic", "reno"]),
            ("topology.bottleneck.queue.kind", &["drop_tail", "red"]),
        ]);
        let opts = Options {
            columns: vec!["total_goodput_bps".into()],
            log_x: None,
        };
        let e = check(&opts, &p).unwrap_err().to_string();
        assert!(
            e.contains(
                "topology.flows.tcp (reno, cubic); topology.bottleneck.queue.kind (drop_tail, red)"
            ),
            "{e}"
        );
        assert!(e.contains("--param topology.pairs=2,4,8"), "{e}");
        // No --plot: nothing to check.
        assert!(check(&Options::default(), &p).is_ok());
        // A sweep of seeds alone has no x axis either.
        let e = check(&opts, &[]).unwrap_err().to_string();
        assert!(e.contains("the sweep has none"), "{e}");
        // Nor does a table of words (sweep collect checks the plan's values the same way).
        let csv = "topology.flows.tcp,seed,total_goodput_bps\nreno,1,5\ncubic,1,6\n";
        assert!(figure(csv, "total_goodput_bps").is_err());
    }

    #[test]
    fn the_legend_keeps_a_whole_path_when_its_last_part_is_shared() {
        let paths = ["flow.0.tcp", "flow.1.tcp", "link.0.rate_bps"];
        assert_eq!(short_name("flow.0.tcp", &paths), "flow.0.tcp");
        assert_eq!(short_name("link.0.rate_bps", &paths), "rate_bps");
        let csv = "flow.0.tcp,flow.1.tcp,link.0.rate_bps,seed,timeouts\n\
                   reno,cubic,1e6,1,3\nreno,cubic,2e6,1,4\n";
        let f = figure(csv, "timeouts").unwrap();
        assert_eq!(f.lines[0].label, "flow.0.tcp=reno, flow.1.tcp=cubic");
        assert_eq!(f.lines[0].points.len(), 2);
    }

    #[test]
    fn figures_are_written_beside_the_table_and_an_empty_column_is_skipped() {
        let dir = std::env::temp_dir().join(format!("ackclock-sweep-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let csv = "topology.pairs,seed,total_goodput_bps,jain_fairness\n2,1,5,\n4,1,6,\n";
        let opts = Options {
            columns: vec!["total_goodput_bps".into(), "jain_fairness".into()],
            log_x: None,
        };
        let files = write(&dir, csv, "t", &opts).unwrap();
        let names: Vec<String> = files
            .iter()
            .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "sweep-total_goodput_bps.svg",
                "sweep-total_goodput_bps.png",
                "sweep-total_goodput_bps.html"
            ]
        );
        assert!(files.iter().all(|f| f.exists()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
