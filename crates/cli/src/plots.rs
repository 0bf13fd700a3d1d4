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
                s.iter().map(|x| (secs(x.0), f64::from(x.1))),
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
                chart
                    .draw_series(LineSeries::new(v.iter().copied(), col.stroke_width(2)))?
                    .label(name.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 15, y)], col));
                chart.draw_series(v.iter().map(|p| Circle::new(*p, 3, col.filled())))?;
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
