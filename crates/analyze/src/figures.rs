//! Each connection's figures, drawn with `ackclock-plot` (SVG, PNG and an interactive HTML
//! page: zoom a time range, hover for values, toggle series): per direction that
//! carried data, a time-sequence diagram as tcptrace draws it, outstanding data against the
//! receive window, RTT samples over time, and throughput.

use crate::model::{Analysis, Connection};
use crate::track::Series as Points;
use ackclock_plot::{palette, step_path, Chart, Mark, Panel, Series, REXMIT, RWND};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Throughput is reckoned over this many intervals of the connection's duration.
const THROUGHPUT_BINS: usize = 100;

/// Writes every connection's figures into `dir` (created if needed); returns the SVG files
/// written (each has a PNG and an interactive HTML page beside it). Files are named
/// `conn<N>-<a2b|b2a>-<tseq|outstanding|rtt|throughput>.svg`, as tcptrace names its
/// graphs by direction.
///
/// # Errors
/// The directory or a file cannot be written.
pub fn write_all(a: &Analysis, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    for c in &a.connections {
        for (d, tag) in [(0, "a2b"), (1, "b2a")] {
            if c.directions[d].data_pkts == 0 {
                continue;
            }
            let stem = format!("conn{}-{tag}", c.index);
            for (kind, chart) in charts(c, d) {
                let path = dir.join(format!("{stem}-{kind}.svg"));
                chart.write(&path)?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// The four charts of direction `d` of `c`, with their file-name kinds.
pub fn charts(c: &Connection, d: usize) -> Vec<(&'static str, Chart)> {
    let dir = &c.directions[d];
    let p = &c.series[d];
    let who = format!("connection {}, {} > {}", c.index, dir.from, dir.to);
    let end = c.duration_s.max(1e-3);
    vec![
        ("tseq", time_sequence(p, &who, end)),
        ("outstanding", outstanding(p, &who, end)),
        ("rtt", rtt(p, &who, end)),
        ("throughput", throughput(p, &who, end)),
    ]
}

/// Bytes as KB or MB by the largest value shown.
fn byte_unit(max: f64) -> (f64, &'static str) {
    if max > 4.0 * 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "MB")
    } else {
        (1024.0, "KB")
    }
}

fn cut(title: &str, p: &Points) -> String {
    if p.truncated {
        format!("{title} (first {} points of a series)", crate::MAX_SERIES)
    } else {
        title.to_string()
    }
}

/// tcptrace's time-sequence graph: each data segment a vertical bar from its first
/// sequence number to its last (retransmissions red), the cumulative ACK as a green step
/// line, the receive window's right edge (ACK plus advertised window) olive, each SACK
/// block a purple bar at the time of its ACK, duplicate ACKs as rings on the ACK line.
fn time_sequence(p: &Points, who: &str, end: f64) -> Chart {
    let top = p
        .segments
        .iter()
        .map(|s| s.2)
        .chain(p.acks.iter().map(|a| a.1))
        .fold(1.0, f64::max);
    let (div, unit) = byte_unit(top);
    let mut sent = Vec::new();
    let mut rexmit = Vec::new();
    // A cross on each retransmission: a bar is a pixel wide in a long connection's figure.
    let mut crosses = Vec::new();
    for &(t, s, e, r) in &p.segments {
        let v = if r { &mut rexmit } else { &mut sent };
        v.push((t, s / div));
        v.push((t, e / div));
        if r {
            crosses.push((t, (s + e) / 2.0 / div));
        }
    }
    // The window's edge can run far above the data; the y axis follows the data.
    let cap = top * 1.1 / div;
    let acks = step_path(p.acks.iter().map(|a| (a.0, a.1 / div)));
    let rwnd: Vec<(f64, f64)> = step_path(p.acks.iter().map(|a| (a.0, a.2 / div)))
        .into_iter()
        .map(|q| (q.0, q.1.min(cap)))
        .collect();
    let sacks: Vec<(f64, f64)> = p
        .sacks
        .iter()
        .flat_map(|s| [(s.0, s.1 / div), (s.0, s.2 / div)])
        .collect();
    let dups: Vec<(f64, f64)> = p.dup_acks.iter().map(|d| (d.0, d.1 / div)).collect();
    Chart {
        title: cut(&format!("{who}: time-sequence"), p),
        x_desc: "time since the connection's first packet (s)".into(),
        y_desc: format!("sequence offset ({unit})"),
        x_range: Some((0.0, end)),
        y_max: Some(cap),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new("receive window", RWND, Mark::Line, rwnd),
                Series::new("cumulative ACK", palette(2), Mark::Line, acks),
                Series::new("duplicate ACK", palette(1), Mark::Rings, dups),
                Series::new("segment sent", palette(0), Mark::Bars, sent),
                Series::new("retransmitted segment", REXMIT, Mark::Bars, rexmit),
                Series::new("", REXMIT, Mark::Crosses, crosses),
                Series::new("SACK block", palette(4), Mark::Bars, sacks),
            ],
        }],
        ..Chart::default()
    }
}

/// Outstanding data (highest sequence sent minus highest acknowledged) against the other
/// end's advertised window, both as step lines.
fn outstanding(p: &Points, who: &str, end: f64) -> Chart {
    let top = p
        .outstanding
        .iter()
        .map(|o| o.1.max(o.2))
        .fold(1.0, f64::max);
    let (div, unit) = byte_unit(top);
    let out = step_path(p.outstanding.iter().map(|o| (o.0, o.1 / div)));
    let win = step_path(p.outstanding.iter().map(|o| (o.0, o.2 / div)));
    Chart {
        title: cut(&format!("{who}: outstanding data and receive window"), p),
        x_desc: "time since the connection's first packet (s)".into(),
        y_desc: format!("bytes ({unit})"),
        x_range: Some((0.0, end)),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new("receive window", RWND, Mark::Line, win),
                Series::new("outstanding data", palette(0), Mark::Line, out),
            ],
        }],
        ..Chart::default()
    }
}

/// Each RTT sample at the time of the ACK that gave it.
fn rtt(p: &Points, who: &str, end: f64) -> Chart {
    Chart {
        title: cut(&format!("{who}: RTT samples"), p),
        x_desc: "time since the connection's first packet (s)".into(),
        y_desc: "RTT (ms)".into(),
        x_range: Some((0.0, end)),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new("from timestamps", palette(1), Mark::Rings, p.ts_rtt.clone()),
                Series::new(
                    "from data and ACKs (Karn)",
                    palette(0),
                    Mark::Dots,
                    p.rtt.clone(),
                ),
            ],
        }],
        ..Chart::default()
    }
}

/// New data sent and data acknowledged per interval (a hundredth of the connection), in
/// Mb/s, drawn at each interval's end.
fn throughput(p: &Points, who: &str, end: f64) -> Chart {
    let w = end / THROUGHPUT_BINS as f64;
    let bin = |t: f64| ((t / w) as usize).min(THROUGHPUT_BINS - 1);
    let mut sent = vec![0.0; THROUGHPUT_BINS];
    for &(t, s, e, r) in &p.segments {
        if !r {
            sent[bin(t)] += e - s;
        }
    }
    let mut acked = vec![0.0; THROUGHPUT_BINS];
    let mut last: Option<f64> = None;
    for &(t, a, _) in &p.acks {
        if let Some(l) = last {
            if a > l {
                acked[bin(t)] += a - l;
            }
        }
        last = Some(last.map_or(a, |l| l.max(a)));
    }
    let line = |v: Vec<f64>| -> Vec<(f64, f64)> {
        v.into_iter()
            .enumerate()
            .map(|(i, b)| ((i + 1) as f64 * w, b * 8.0 / w / 1e6))
            .collect()
    };
    Chart {
        title: cut(&format!("{who}: throughput per {:.3} s", w), p),
        x_desc: "time since the connection's first packet (s)".into(),
        y_desc: "Mb/s".into(),
        x_range: Some((0.0, end)),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new("new data sent", palette(0), Mark::Line, line(sent)),
                Series::new("acknowledged", palette(2), Mark::Line, line(acked)),
            ],
        }],
        ..Chart::default()
    }
}
