//! Plots of a run (the time-sequence diagram of Jacobson & Karels 1988, cwnd and ssthresh
//! against time, queue length against time, per-flow throughput) and of the experiments'
//! sweeps, drawn by ackclock's one figure engine (`ackclock-plot`, re-exported here).

pub use ackclock_plot::*;

use crate::stats::secs;
use ackclock_sim::RunResult;
use ackclock_tcp::TraceKind;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A time-sequence diagram's data of one flow up to `until_s`: segments sent, their
/// retransmissions and the cumulative ACK (sequence offsets in bytes from the first byte
/// sent), and the time of the last event.
struct Tseq {
    sends: Vec<(f64, f64)>,
    rexmits: Vec<(f64, f64)>,
    acks: Vec<(f64, f64)>,
    dupacks: Vec<(f64, f64)>,
    end: f64,
}

fn tseq_data(r: &RunResult, flow: usize, until_s: Option<f64>) -> Option<Tseq> {
    let ev: Vec<&ackclock_tcp::TraceEvent> = r.traces[flow]
        .iter()
        .filter(|e| until_s.is_none_or(|u| secs(e.time) <= u))
        .collect();
    let base = ev.iter().find_map(|e| match e.kind {
        TraceKind::Send { seq, .. } => Some(seq),
        _ => None,
    })?;
    let mut t = Tseq {
        sends: Vec::new(),
        rexmits: Vec::new(),
        acks: Vec::new(),
        dupacks: Vec::new(),
        end: ev.last().map_or(0.0, |e| secs(e.time)),
    };
    for e in ev {
        let at = secs(e.time);
        match e.kind {
            TraceKind::Send {
                seq,
                len,
                retransmit,
            } if len > 0 => {
                let p = (at, f64::from(seq.since(base)));
                if retransmit {
                    t.rexmits.push(p)
                } else {
                    t.sends.push(p)
                }
            }
            TraceKind::Ack { ack, .. } => t.acks.push((at, f64::from(ack.since(base)))),
            TraceKind::DupAck { .. } => t.dupacks.push((at, f64::from(e.snd_una.since(base)))),
            _ => {}
        }
    }
    Some(t)
}

/// Bytes as KB, or as MB when the largest is above 4 MB: the divisor and the unit.
fn byte_unit(max_bytes: f64) -> (f64, &'static str) {
    if max_bytes > 4.0 * 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "MB")
    } else {
        (1024.0, "KB")
    }
}

/// A tcptrace-style time-sequence diagram of one flow (what `ackclock sim` writes): each
/// data segment sent is a vertical bar from its first byte to its last (retransmissions in
/// red, with a cross), the green step line is the cumulative ACK, the grey one the ACK plus
/// the congestion window (the most the sender may have sent), the olive one the receive
/// window's right edge (the ACK plus the window it advertised), each SACK block a purple bar
/// at the time its ACK arrived, and each duplicate ACK a ring on the ACK line, as tcptrace
/// draws them.
pub fn time_sequence(r: &RunResult, flow: usize, path: &Path) -> Result<()> {
    let name = &r.summary.flows[flow].name;
    let ev = &r.traces[flow];
    let Some(base) = ev.iter().find_map(|e| match e.kind {
        TraceKind::Send { seq, .. } => Some(seq),
        _ => None,
    }) else {
        return Ok(());
    };
    let mut sends = Vec::new();
    let mut rexmit_bars = Vec::new();
    let mut rexmits = Vec::new();
    let mut acks = Vec::new();
    let mut limit = Vec::new();
    let mut dupacks = Vec::new();
    let mut rwnd = Vec::new();
    let mut sacks = Vec::new();
    let mut top: f64 = 1.0;
    for e in ev {
        let at = secs(e.time);
        let una = f64::from(e.snd_una.since(base));
        match e.kind {
            TraceKind::Send {
                seq,
                len,
                retransmit,
            } if len > 0 => {
                let y0 = f64::from(seq.since(base));
                let y1 = y0 + f64::from(len);
                top = top.max(y1);
                let bar = if retransmit {
                    rexmits.push((at, y0));
                    &mut rexmit_bars
                } else {
                    &mut sends
                };
                bar.push((at, y0));
                bar.push((at, y1));
            }
            TraceKind::Ack { ack, window } => {
                let a = f64::from(ack.since(base));
                acks.push((at, a));
                rwnd.push((at, a + f64::from(window)));
            }
            TraceKind::Sack { left, right } => {
                sacks.push((at, f64::from(left.since(base))));
                sacks.push((at, f64::from(right.since(base))));
            }
            TraceKind::DupAck { .. } => dupacks.push((at, una)),
            _ => {}
        }
        if e.snd_una.since(base) < (1 << 31) {
            limit.push((at, una + f64::from(e.cwnd.min(1 << 30))));
        }
    }
    let end = ev.last().map_or(1e-3, |e| secs(e.time)).max(1e-3);
    let (div, unit) = byte_unit(top);
    let scale = |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        v.into_iter().map(|p| (p.0, p.1 / div)).collect()
    };
    // The window line can run far above the data (cwnd grows while the application is
    // idle); the y axis follows the data, and the line is cut at its top.
    let cap = top * 1.1 / div;
    let capped = |v: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        step_path(scale(v))
            .into_iter()
            .map(|p| (p.0, p.1.min(cap)))
            .collect()
    };
    let limit = capped(limit);
    let rwnd = capped(rwnd);
    Chart {
        title: format!("{name}: time-sequence"),
        x_desc: "time (s)".into(),
        y_desc: format!("sequence offset ({unit})"),
        x_range: Some((0.0, end)),
        y_max: Some(cap),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new("ACK + cwnd", palette(7), Mark::Line, limit),
                Series::new("receive window", RWND, Mark::Line, rwnd),
                Series::new(
                    "cumulative ACK",
                    palette(2),
                    Mark::Line,
                    step_path(scale(acks)),
                ),
                Series::new("duplicate ACK", palette(1), Mark::Rings, scale(dupacks)),
                Series::new("segment sent", palette(0), Mark::Bars, scale(sends)),
                Series::new(
                    "retransmitted segment",
                    REXMIT,
                    Mark::Bars,
                    scale(rexmit_bars),
                ),
                Series::new("", REXMIT, Mark::Crosses, scale(rexmits)),
                Series::new("SACK block", palette(4), Mark::Bars, scale(sacks)),
            ],
        }],
        ..Chart::default()
    }
    .write(path)
}

/// [`time_sequence`] with a title and an optional end of the time axis (seconds).
pub fn time_sequence_titled(
    r: &RunResult,
    flow: usize,
    path: &Path,
    title: &str,
    until_s: Option<f64>,
) -> Result<()> {
    match tseq_chart(r, flow, title, until_s, None) {
        Some(c) => c.write(path),
        None => Ok(()),
    }
}

/// The chart of [`time_sequence_titled`], in the unit that suits `top` bytes (`None`: the
/// flow's own highest sequence offset); `None` when the flow sent nothing.
fn tseq_chart(
    r: &RunResult,
    flow: usize,
    title: &str,
    until_s: Option<f64>,
    top: Option<f64>,
) -> Option<Chart> {
    let t = tseq_data(r, flow, until_s)?;
    let top = top.unwrap_or_else(|| tseq_top(&t));
    let (div, unit) = byte_unit(top);
    let scale =
        |v: &[(f64, f64)]| -> Vec<(f64, f64)> { v.iter().map(|p| (p.0, p.1 / div)).collect() };
    Some(Chart {
        title: title.to_string(),
        x_desc: "time (s)".into(),
        y_desc: format!("sequence offset ({unit})"),
        x_range: Some((0.0, until_s.unwrap_or(t.end).max(1e-3))),
        panels: vec![Panel {
            name: String::new(),
            series: vec![
                Series::new(
                    "cumulative ACK",
                    palette(2),
                    Mark::Line,
                    step_path(scale(&t.acks)),
                ),
                Series::new("segment sent", palette(0), Mark::Dots, scale(&t.sends)),
                Series::new("retransmission", REXMIT, Mark::Crosses, scale(&t.rexmits)),
            ],
        }],
        ..Chart::default()
    })
}

/// The highest sequence offset of a time-sequence diagram's data, in bytes.
fn tseq_top(t: &Tseq) -> f64 {
    extent(t.sends.iter().chain(&t.rexmits).chain(&t.acks).map(|p| p.1)).1
}

/// Time-sequence diagrams (as [`time_sequence_titled`]) of flows of several runs, each
/// `(run, flow, title)`, on the same axes: one unit, one time range, one top (see
/// [`same_axes`]), so that a caption may say "the same axes". An error if a flow sent
/// nothing.
pub fn time_sequences_same_axes(
    runs: &[(&RunResult, usize, &str)],
    until_s: Option<f64>,
) -> Result<Vec<Chart>> {
    let top = runs
        .iter()
        .filter_map(|&(r, flow, _)| tseq_data(r, flow, until_s).map(|t| tseq_top(&t)))
        .fold(0.0, f64::max);
    let mut charts = runs
        .iter()
        .map(|&(r, flow, title)| {
            tseq_chart(r, flow, title, until_s, Some(top))
                .ok_or_else(|| anyhow::anyhow!("{title}: the flow sent nothing"))
        })
        .collect::<Result<Vec<_>>>()?;
    same_axes(&mut charts)?;
    Ok(charts)
}

/// cwnd (solid) and ssthresh (dashed, same colour) of every flow, in KB; one panel per
/// flow when there are more than [`SMALL_MULTIPLES`] flows.
pub fn cwnd(r: &RunResult, path: &Path) -> Result<()> {
    cwnd_titled(r, path, "congestion window (solid) and ssthresh (dashed)")
}

/// Above this many flows, [`cwnd`] draws small multiples (a panel per flow, all on the same
/// axes) instead of every flow's two lines on one plot.
pub const SMALL_MULTIPLES: usize = 4;

/// One flow's cwnd (a solid step line labelled `labels.0`) and ssthresh (dashed, in pieces
/// where it is set, the first labelled `labels.1`), in KB, in `col`.
fn window_series(
    ev: &[ackclock_tcp::TraceEvent],
    col: RGBColor,
    labels: (String, String),
) -> Vec<Series> {
    let c = step_path(
        ev.iter()
            .map(|e| (secs(e.time), f64::from(e.cwnd.min(1 << 30)) / 1024.0)),
    );
    let mut series = vec![Series::new(labels.0, col, Mark::Line, c)];
    // ssthresh, in pieces where it is set (it starts "infinite").
    let mut piece: Vec<(f64, f64)> = Vec::new();
    let mut label = Some(labels.1);
    let mut flush = |piece: &mut Vec<(f64, f64)>, series: &mut Vec<Series>| {
        if !piece.is_empty() {
            series.push(Series::new(
                label.take().unwrap_or_default(),
                col,
                Mark::Dashed,
                step_path(piece.drain(..)),
            ));
        }
    };
    for e in ev {
        if e.ssthresh < (1 << 30) {
            piece.push((secs(e.time), f64::from(e.ssthresh) / 1024.0));
        } else {
            flush(&mut piece, &mut series);
        }
    }
    flush(&mut piece, &mut series);
    series
}

/// [`cwnd`] with a title.
pub fn cwnd_titled(r: &RunResult, path: &Path, title: &str) -> Result<()> {
    let end = r
        .traces
        .iter()
        .filter_map(|ev| ev.last().map(|e| secs(e.time)))
        .fold(1e-3, f64::max);
    let many = r.traces.len() > SMALL_MULTIPLES;
    let panels = if many {
        r.traces
            .iter()
            .enumerate()
            .map(|(i, ev)| Panel {
                name: r.summary.flows[i].name.clone(),
                series: window_series(ev, palette(0), ("cwnd".into(), "ssthresh".into())),
            })
            .collect()
    } else {
        vec![Panel {
            name: String::new(),
            series: r
                .traces
                .iter()
                .enumerate()
                .flat_map(|(i, ev)| {
                    let name = &r.summary.flows[i].name;
                    window_series(
                        ev,
                        palette(i),
                        (format!("{name} cwnd"), format!("{name} ssthresh")),
                    )
                })
                .collect(),
        }]
    };
    Chart {
        title: if many {
            format!("{title}, one panel per flow")
        } else {
            title.to_string()
        },
        x_desc: "time (s)".into(),
        y_desc: "window (KB)".into(),
        x_range: Some((0.0, end)),
        panels,
        ..Chart::default()
    }
    .write(path)
}

/// Queue length (packets) of every port that ever held a packet, one panel each.
pub fn queues(r: &RunResult, path: &Path) -> Result<bool> {
    queues_titled(r, path, "queue length")
}

/// [`queues`] with a title.
pub fn queues_titled(r: &RunResult, path: &Path, title: &str) -> Result<bool> {
    let busy: Vec<&(String, ackclock_sim::results::QueueSeries)> = r
        .queues
        .iter()
        .filter(|(_, s)| s.iter().any(|x| x.queue_pkts > 0))
        .collect();
    if busy.is_empty() {
        return Ok(false);
    }
    let end = busy
        .iter()
        .flat_map(|(_, s)| s.last().map(|x| secs(x.at)))
        .fold(r.summary.duration_s.min(1e-3), f64::max);
    let panels = busy
        .into_iter()
        .enumerate()
        .map(|(i, (name, s))| Panel {
            name: name.clone(),
            series: vec![Series::new(
                String::new(),
                palette(i),
                Mark::Line,
                step_path(s.iter().map(|x| (secs(x.at), f64::from(x.queue_pkts)))),
            )],
        })
        .collect();
    Chart {
        title: title.to_string(),
        x_desc: "time (s)".into(),
        y_desc: "packets".into(),
        x_range: Some((0.0, end)),
        panels,
        ..Chart::default()
    }
    .write(path)?;
    Ok(true)
}

/// Throughput of each flow per time bin (100 bins to the last ACK of any flow), from the
/// ACKs its sender received.
pub fn throughput(r: &RunResult, path: &Path) -> Result<()> {
    let labels: Vec<String> = r.summary.flows.iter().map(|f| f.name.clone()).collect();
    throughput_titled(r, path, "throughput per flow", &labels)
}

/// [`throughput`] with a title and each flow's name in the legend.
pub fn throughput_titled(r: &RunResult, path: &Path, title: &str, labels: &[String]) -> Result<()> {
    let end = r
        .traces
        .iter()
        .flat_map(|ev| {
            ev.iter()
                .rev()
                .find(|e| matches!(e.kind, TraceKind::Ack { .. }))
                .map(|e| secs(e.time))
        })
        .fold(1e-3, f64::max);
    let bins = 100usize;
    let bin = end / bins as f64;
    let mut all = Vec::new();
    for ev in &r.traces {
        let mut b = vec![0f64; bins];
        let mut last: Option<ackclock_tcp::SeqNum> = None;
        for e in ev {
            if let TraceKind::Ack { ack, .. } = e.kind {
                if let Some(l) = last {
                    let i = ((secs(e.time) / bin) as usize).min(bins - 1);
                    b[i] += f64::from(ack.since(l)) * 8.0;
                }
                last = Some(ack);
            }
        }
        all.push(b);
    }
    let top = all.iter().flatten().fold(0.0f64, |a, v| a.max(v / bin));
    let (div, unit) = if top >= 1e6 {
        (1e6, "Mb/s")
    } else {
        (1e3, "kb/s")
    };
    let series = all
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let pts = b
                .iter()
                .enumerate()
                .map(|(k, v)| ((k as f64 + 0.5) * bin, v / bin / div))
                .collect();
            let label = labels
                .get(i)
                .cloned()
                .unwrap_or_else(|| r.summary.flows[i].name.clone());
            Series::new(label, palette(i), Mark::Line, pts)
        })
        .collect();
    Chart {
        title: title.to_string(),
        x_desc: format!("time (s); bins of {}", fmt_secs(bin)),
        y_desc: format!("throughput ({unit})"),
        x_range: Some((0.0, end)),
        panels: vec![Panel {
            name: String::new(),
            series,
        }],
        ..Chart::default()
    }
    .write(path)
}

/// A duration for an axis description: "2.2 s", "40 ms".
fn fmt_secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        format!("{:.0} ms", s * 1e3)
    }
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

/// One line of means over RNG seeds: its name and its points `(x, mean, sd)`.
pub type MeanLine = (String, Vec<(f64, f64, f64)>);

/// A chart of means over RNG seeds: each series `(name, points)` a line with a dot at each
/// point `(x, mean, sd)`, and an error bar from `mean - sd` to `mean + sd` in its colour
/// (none where `sd` is not finite: a configuration run once); `models` as dashed lines
/// after them. The figure's caption must say that the bars are one standard deviation over
/// the seeds (the suite checks that it names the statistic). To be drawn with
/// [`crate::suite::Figure::draw`].
pub fn means_chart(
    x_desc: &str,
    y_desc: &str,
    measured: &[MeanLine],
    models: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> Chart {
    let mut series: Vec<Series> = measured
        .iter()
        .enumerate()
        .map(|(i, (name, v))| {
            Series::new(
                name.clone(),
                palette(i),
                Mark::LinePoints,
                v.iter().map(|p| (p.0, p.1)).collect(),
            )
        })
        .collect();
    series.extend(models.iter().enumerate().map(|(i, (name, v))| {
        Series::new(
            name.clone(),
            palette(measured.len() + i),
            Mark::Dashed,
            v.clone(),
        )
    }));
    for (i, (_, v)) in measured.iter().enumerate() {
        let bars: Vec<(f64, f64, f64)> = v
            .iter()
            .filter(|p| p.2.is_finite())
            .map(|p| (p.0, p.1 - p.2, p.1 + p.2))
            .collect();
        series.push(Series::error_bars("", palette(i), &bars));
    }
    Chart {
        x_desc: x_desc.to_string(),
        y_desc: y_desc.to_string(),
        log_x,
        ..Chart::one_panel(series)
    }
}

/// A generic line plot: one line (with a dot at each point) per named series.
pub fn lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> Result<()> {
    lines_with_models(path, title, x_desc, y_desc, series, &[], log_x)
}

/// [`lines`] with the curves of models: each measured series a solid line with a dot at
/// each point, each model a dashed line (its colours following the measured ones').
pub fn lines_with_models(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    measured: &[(String, Vec<(f64, f64)>)],
    models: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> Result<()> {
    if measured.iter().chain(models).all(|(_, v)| v.is_empty()) {
        return Ok(());
    }
    let series = measured
        .iter()
        .map(|s| (s, Mark::LinePoints))
        .chain(models.iter().map(|s| (s, Mark::Dashed)))
        .enumerate()
        .map(|(i, ((name, v), mark))| Series::new(name.clone(), palette(i), mark, v.clone()))
        .collect();
    Chart {
        title: title.to_string(),
        x_desc: x_desc.to_string(),
        y_desc: y_desc.to_string(),
        log_x,
        ..Chart::one_panel(series)
    }
    .write(path)
}
