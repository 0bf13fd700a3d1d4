//! SVG plots of a run: the time-sequence diagram of Jacobson & Karels 1988 (sequence number
//! against time, retransmissions marked), cwnd and ssthresh against time, queue length
//! against time, and per-flow throughput.

use ackclock_sim::RunResult;
use ackclock_tcp::TraceKind;
use anyhow::Result;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

const W: u32 = 900;
const H: u32 = 480;

fn palette(i: usize) -> RGBColor {
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

fn secs(t: ackclock_wire::Instant) -> f64 {
    t.as_nanos() as f64 / 1e9
}

/// Horizontal resolution the thinning keeps: one bucket per pixel column of the plot.
const COLUMNS: usize = W as usize;

/// Thins a line (points in time order) to what the plot can show: per column of `x`,
/// the first, lowest, highest and last point, in their original order. The drawn line keeps
/// its envelope and every step; a long run's millions of trace events stay a few thousand
/// SVG path points instead of tens of megabytes of report.
fn thin_line(v: Vec<(f64, f64)>, x0: f64, x1: f64) -> Vec<(f64, f64)> {
    if v.len() <= 4 * COLUMNS || x1 <= x0 {
        return v;
    }
    let scale = COLUMNS as f64 / (x1 - x0);
    let mut out = Vec::with_capacity(4 * COLUMNS);
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

/// Thins scattered dots to one per pixel of the plot area (a dot of radius 1 drawn twice on
/// the same pixel is the same picture).
fn thin_dots(v: Vec<(f64, f64)>, xmax: f64, ymax: f64) -> Vec<(f64, f64)> {
    if xmax <= 0.0 || ymax <= 0.0 {
        return v;
    }
    let (sx, sy) = (f64::from(W) / xmax, f64::from(H) / ymax);
    let mut seen = std::collections::HashSet::with_capacity(v.len().min(1 << 20));
    v.into_iter()
        .filter(|p| seen.insert(((p.0 * sx) as i64, (p.1 * sy) as i64)))
        .collect()
}

/// Time-sequence diagram per flow: each data segment sent is a dot at (time, sequence
/// offset in KB); retransmissions are red crosses.
pub fn time_sequence(r: &RunResult, flow: usize, path: &Path) -> Result<()> {
    let title = format!("{}: time-sequence", r.summary.flows[flow].name);
    time_sequence_titled(r, flow, path, &title, None)
}

/// [`time_sequence`] with a title and an optional end of the time axis (seconds).
pub fn time_sequence_titled(
    r: &RunResult,
    flow: usize,
    path: &Path,
    title: &str,
    until_s: Option<f64>,
) -> Result<()> {
    let ev: Vec<ackclock_tcp::TraceEvent> = r.traces[flow]
        .iter()
        .filter(|e| until_s.is_none_or(|u| secs(e.time) <= u))
        .copied()
        .collect();
    let ev = &ev;
    let Some(base) = ev.iter().find_map(|e| match e.kind {
        TraceKind::Send { seq, .. } => Some(seq),
        _ => None,
    }) else {
        return Ok(());
    };
    let mut sends = Vec::new();
    let mut rexmits = Vec::new();
    let mut acks = Vec::new();
    for e in ev {
        match e.kind {
            TraceKind::Send {
                seq,
                len,
                retransmit,
            } if len > 0 => {
                let p = (secs(e.time), f64::from(seq.since(base)) / 1024.0);
                if retransmit {
                    rexmits.push(p)
                } else {
                    sends.push(p)
                }
            }
            TraceKind::Ack { ack } => {
                acks.push((secs(e.time), f64::from(ack.since(base)) / 1024.0))
            }
            _ => {}
        }
    }
    let xmax = until_s
        .unwrap_or_else(|| ev.last().map(|e| secs(e.time)).unwrap_or(1.0))
        .max(1e-3);
    let ymax = sends
        .iter()
        .chain(&rexmits)
        .map(|p| p.1)
        .fold(1.0f64, f64::max)
        * 1.05;
    let acks = thin_dots(acks, xmax, ymax);
    let sends = thin_dots(sends, xmax, ymax);
    let rexmits = thin_dots(rexmits, xmax, ymax);
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("sequence (KB)")
        .draw()?;
    chart
        .draw_series(acks.iter().map(|p| Circle::new(*p, 1, palette(2).filled())))?
        .label("ack")
        .legend(|(x, y)| Circle::new((x, y), 3, palette(2).filled()));
    chart
        .draw_series(
            sends
                .iter()
                .map(|p| Circle::new(*p, 1, palette(0).filled())),
        )?
        .label("send")
        .legend(|(x, y)| Circle::new((x, y), 3, palette(0).filled()));
    chart
        .draw_series(
            rexmits
                .iter()
                .map(|p| Cross::new(*p, 4, RED.stroke_width(2))),
        )?
        .label("retransmit")
        .legend(|(x, y)| Cross::new((x, y), 4, RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(())
}

/// cwnd (solid) and ssthresh (dashed) of every flow, in segments.
pub fn cwnd(r: &RunResult, path: &Path) -> Result<()> {
    let mut xmax: f64 = 1e-3;
    let mut ymax: f64 = 1.0;
    let mut series = Vec::new();
    for ev in &r.traces {
        let c: Vec<(f64, f64)> = ev
            .iter()
            .map(|e| (secs(e.time), f64::from(e.cwnd.min(1 << 30)) / 1024.0))
            .collect();
        let s: Vec<(f64, f64)> = ev
            .iter()
            .filter(|e| e.ssthresh < (1 << 30))
            .map(|e| (secs(e.time), f64::from(e.ssthresh) / 1024.0))
            .collect();
        for p in c.iter().chain(&s) {
            xmax = xmax.max(p.0);
            ymax = ymax.max(p.1);
        }
        series.push((c, s));
    }
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("congestion window", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("KB")
        .draw()?;
    for (i, (c, s)) in series.into_iter().enumerate() {
        let c = thin_line(c, 0.0, xmax);
        let s = thin_dots(s, xmax, ymax);
        let col = palette(i);
        let name = r.summary.flows[i].name.clone();
        chart
            .draw_series(LineSeries::new(c, col.stroke_width(1)))?
            .label(format!("{name} cwnd"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
        chart.draw_series(
            s.into_iter()
                .map(|p| Circle::new(p, 1, col.mix(0.4).filled())),
        )?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(())
}

/// Queue length (packets) of every port that ever held a packet.
pub fn queues(r: &RunResult, path: &Path) -> Result<bool> {
    let busy: Vec<&(String, ackclock_sim::results::QueueSeries)> = r
        .queues
        .iter()
        .filter(|(_, s)| s.iter().any(|x| x.1 > 0))
        .collect();
    if busy.is_empty() {
        return Ok(false);
    }
    let xmax = r.summary.duration_s.max(1e-3);
    let ymax = busy
        .iter()
        .flat_map(|(_, s)| s.iter().map(|x| f64::from(x.1)))
        .fold(1.0f64, f64::max);
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("queue length", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("packets")
        .draw()?;
    for (i, (name, s)) in busy.into_iter().enumerate() {
        let col = palette(i);
        chart
            .draw_series(LineSeries::new(
                thin_line(
                    s.iter().map(|x| (secs(x.0), f64::from(x.1))).collect(),
                    0.0,
                    xmax,
                ),
                col,
            ))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(true)
}

/// Throughput of each flow per time bin, from the ACKs its sender received.
pub fn throughput(r: &RunResult, path: &Path) -> Result<()> {
    let dur = r.summary.duration_s.max(1e-3);
    let bins = 100usize;
    let bin = dur / bins as f64;
    let mut all = Vec::new();
    let mut ymax: f64 = 1.0;
    for ev in &r.traces {
        let mut b = vec![0f64; bins + 1];
        let mut last: Option<ackclock_tcp::SeqNum> = None;
        for e in ev {
            if let TraceKind::Ack { ack } = e.kind {
                if let Some(l) = last {
                    let i = ((secs(e.time) / bin) as usize).min(bins);
                    b[i] += f64::from(ack.since(l)) * 8.0;
                }
                last = Some(ack);
            }
        }
        let pts: Vec<(f64, f64)> = b
            .iter()
            .enumerate()
            .map(|(i, v)| ((i as f64 + 0.5) * bin, v / bin / 1e6))
            .collect();
        for p in &pts {
            ymax = ymax.max(p.1);
        }
        all.push(pts);
    }
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("throughput per flow", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..dur, 0.0..ymax * 1.05)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("Mb/s")
        .draw()?;
    for (i, pts) in all.into_iter().enumerate() {
        let col = palette(i);
        let name = r.summary.flows[i].name.clone();
        chart
            .draw_series(LineSeries::new(pts, col))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .draw()?;
    root.present()?;
    Ok(())
}

/// Every plot of a run into `dir`; returns the files written.
pub fn all(r: &RunResult, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if r.traces.iter().any(|t| !t.is_empty()) {
        for i in 0..r.traces.len() {
            let p = dir.join(format!("tseq-{}.svg", r.summary.flows[i].name));
            time_sequence(r, i, &p)?;
            files.push(p);
        }
        let p = dir.join("cwnd.svg");
        cwnd(r, &p)?;
        files.push(p);
        let p = dir.join("throughput.svg");
        throughput(r, &p)?;
        files.push(p);
    }
    let p = dir.join("queue.svg");
    if queues(r, &p)? {
        files.push(p);
    }
    Ok(files)
}

/// A generic line plot: one line (with points) per named series.
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> Result<()> {
    let pts = series.iter().flat_map(|(_, v)| v.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        return Ok(());
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let root = SVGBackend::new(path, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut b = ChartBuilder::on(&root);
    b.caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60);
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .draw()?;
            for (i, (name, v)) in series.iter().enumerate() {
                let col = palette(i);
                let v = thin_line(v.clone(), x0, x1);
                chart
                    .draw_series(LineSeries::new(v.iter().copied(), col.stroke_width(2)))?
                    .label(name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
                // Markers only where they can be told apart (sweeps, not time series).
                if v.len() <= 200 {
                    chart.draw_series(v.iter().map(|p| Circle::new(*p, 3, col.filled())))?;
                }
            }
            chart
                .configure_series_labels()
                .border_style(BLACK)
                .background_style(WHITE.mix(0.8))
                .draw()?;
        }};
    }
    if log_x && x0 > 0.0 {
        draw!(b.build_cartesian_2d((x0..x1).log_scale(), 0.0..y1)?);
    } else {
        draw!(b.build_cartesian_2d(x0..x1, 0.0..y1)?);
    }
    root.present()?;
    Ok(())
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
        let th = thin_dots(v, 1.0, 1.0);
        assert!(th.len() <= (W as usize + 1) * (H as usize + 1));
        assert!(th.len() >= 50_000, "distinct pixels lost: {}", th.len());
    }
}
