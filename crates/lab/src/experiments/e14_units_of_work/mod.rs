//! Experiment 14: units of work (seed 000, 20 Jul 1988, on sosend): throughput against the
//! bytes handed to TCP per write call, with the write's copy charged on the sender's CPU.
//! The knee of the curve, where it moves with the fixed cost of a call, and the loss of
//! parallelism when a write fills the whole socket buffer.

use super::e09_ethernet::zoom;
use crate::claims::{Judge, Ours};
use crate::plots;
use crate::suite::{files, Experiment, Figure, Files, Params, Rendered, Table, Verdict};
use crate::text::Text;
use ackclock_sim::scenario::AppSpec;
use ackclock_sim::{RunResult, Scenario};
use anyhow::{anyhow, Result};
use std::path::Path;

pub struct UnitsOfWork;

/// The socket buffer of the scenario (12 packets), the largest unit a write can copy.
const BUFFER: usize = 17520;
/// Bytes per write call. 16384 leaves an odd last segment that only the receiver's delayed
/// ACK frees (see the discussion); the others are powers of two, one and two segments, and
/// the whole buffer.
const CHUNKS: [usize; 13] = [
    128, 256, 512, 1024, 1460, 2048, 2920, 4096, 5840, 8192, 11680, 16384, BUFFER,
];
/// The index in [`CHUNKS`] of whole-buffer writes.
const WHOLE: usize = CHUNKS.len() - 1;
/// Fixed cost per write call (us): none, the seed's crossing cost, four times that. Quick
/// mode runs them all too.
const FIXED: [f64; 3] = [0.0, 150.0, 600.0];
/// The index in [`FIXED`] of the seed's cost, at which the claims are judged.
const MAIN: usize = 1;

fn variant(base: &Scenario, chunk: usize, fixed_us: f64) -> Scenario {
    let mut s = base.clone();
    if let Some(c) = s.node[0].cpu.as_mut() {
        c.write_call_us = fixed_us;
    }
    s.flow[0].app = AppSpec::Bulk {
        bytes: Some(8.0 * 1024.0 * 1024.0),
        duration_s: None,
        chunk_bytes: Some(chunk),
    };
    s
}

fn kib_s(r: &RunResult) -> f64 {
    r.summary.flows[0].goodput_bps / 8.0 / 1024.0
}

/// Sender CPU and data-direction wire utilization over the transfer.
fn utilization(r: &RunResult) -> (f64, f64) {
    let f = &r.summary.flows[0];
    let t = f.completed_s.unwrap_or(r.summary.duration_s) - f.start_s;
    let cpu = r.summary.hosts.first().map_or(0.0, |h| h.cpu_busy_s / t);
    let wire = r.summary.links.first().map_or(0.0, |l| l.utilization) * r.summary.duration_s / t;
    (cpu.min(1.0), wire.min(1.0))
}

fn size(b: usize) -> String {
    if b >= 1024 && b % 1024 == 0 {
        format!("{} KB", b / 1024)
    } else {
        format!("{b} B")
    }
}

/// The smallest chunk whose goodput reaches 90% of the best.
fn knee(tp: &[f64]) -> usize {
    let best = tp.iter().copied().fold(0.0, f64::max);
    CHUNKS[tp.iter().position(|&v| v >= 0.9 * best).unwrap_or(0)]
}

/// The index in [`CHUNKS`] of `chunk`-byte writes.
fn chunk_index(chunk: usize) -> usize {
    CHUNKS.iter().position(|&x| x == chunk).expect("chunk")
}

/// One run (fixed cost `index / CHUNKS.len()`, chunk `index % CHUNKS.len()`): goodput and
/// utilizations; at the seed's fixed cost also the 100 ms plotted from 1 s on.
pub struct Run {
    kib_s: f64,
    cpu: f64,
    wire: f64,
    window: Option<RunResult>,
}

pub struct Measured {
    /// Goodput (KiB/s) per fixed cost of [`FIXED`], per chunk of [`CHUNKS`].
    tp: Vec<Vec<f64>>,
    /// Sender CPU and wire utilization per chunk, at the seed's fixed cost.
    util: Vec<(f64, f64)>,
    /// The index in [`CHUNKS`] of the best goodput at the seed's fixed cost.
    best_i: usize,
    /// 100 ms of the transfer per chunk at the seed's fixed cost (the best and whole-buffer
    /// writes are plotted).
    windows: Vec<RunResult>,
}

impl Measured {
    /// Goodput at the seed's fixed cost with `chunk`-byte writes.
    fn at(&self, chunk: usize) -> f64 {
        self.tp[MAIN][chunk_index(chunk)]
    }

    fn best(&self) -> f64 {
        self.tp[MAIN][self.best_i]
    }

    /// What 1 KB writes gain over whole-buffer writes at fixed cost `f` (index in [`FIXED`]).
    fn gain(&self, f: usize) -> f64 {
        self.tp[f][chunk_index(1024)] / self.tp[f][WHOLE] - 1.0
    }
}

impl Experiment for UnitsOfWork {
    type Run = Run;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "units_of_work"
    }

    fn files(&self) -> Files {
        files!("e14_units_of_work")
    }

    /// Every chunk at every fixed cost, fixed cost first.
    fn plan(&self, _p: Params, base: &Scenario) -> Result<Vec<Scenario>> {
        Ok(FIXED
            .iter()
            .flat_map(|&f| CHUNKS.iter().map(move |&c| (c, f)))
            .map(|(c, f)| variant(base, c, f))
            .collect())
    }

    fn reduce(&self, _p: Params, index: usize, r: RunResult) -> Result<Run> {
        let (cpu, wire) = utilization(&r);
        Ok(Run {
            kib_s: kib_s(&r),
            cpu,
            wire,
            window: (index / CHUNKS.len() == MAIN).then(|| zoom(&r, 0, 1.0, 0.1)),
        })
    }

    fn measure(&self, _p: Params, runs: Vec<Run>) -> Result<Measured> {
        let tp: Vec<Vec<f64>> = runs
            .chunks(CHUNKS.len())
            .map(|rs| rs.iter().map(|r| r.kib_s).collect())
            .collect();
        let main = &tp[MAIN];
        // The last of equal maxima.
        let best_i = (0..main.len())
            .max_by(|&a, &b| main[a].total_cmp(&main[b]))
            .ok_or_else(|| anyhow!("no runs"))?;
        let (util, windows): (Vec<_>, Vec<_>) = runs
            .into_iter()
            .skip(MAIN * CHUNKS.len())
            .take(CHUNKS.len())
            .map(|r| ((r.cpu, r.wire), r.window))
            .unzip();
        let windows = windows
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| anyhow!("a plotted run is missing"))?;
        Ok(Measured {
            tp,
            util,
            best_i,
            windows,
        })
    }

    fn judge(&self, _p: Params, m: &Measured, text: &Text, j: &mut Judge) -> Result<()> {
        let gain = m.gain(MAIN);
        let free = &m.tp[0];
        j.claim(
            "sosend",
            Ours::num(
                gain,
                format!(
                    "{:+.0}% ({:.0} -> {:.0} KiB/s)",
                    gain * 100.0,
                    m.at(BUFFER),
                    m.at(1024)
                ),
            ),
            Verdict::pass_or_disagree((0.05..=0.50).contains(&gain)),
            // The same comparison when a 1 KB unit costs nothing beyond its copy: the seed's
            // 1K units were turns of sosend's loop inside one write call.
            text.fill(
                "note sosend",
                &[
                    ("gain_free", format!("{:+.0}", m.gain(0) * 100.0)),
                    ("free_whole", format!("{:.0}", free[WHOLE])),
                    ("free_1k", format!("{:.0}", free[chunk_index(1024)])),
                ],
            )?,
        )?;
        let k = knee(&m.tp[MAIN]);
        j.claim(
            "knee",
            Ours::num(k as f64, size(k)),
            Verdict::of((512..=4096).contains(&k)),
            format!("best {:.0} KiB/s at {}", m.best(), size(CHUNKS[m.best_i])),
        )?;
        let whole = m.at(BUFFER) / m.best();
        let pct = |x: f64| format!("{:.0}", x * 100.0);
        let ((cpu_best, wire_best), (cpu_whole, wire_whole)) = (m.util[m.best_i], m.util[WHOLE]);
        j.claim(
            "bigger_lowers",
            Ours::num(
                whole,
                format!("{whole:.2} ({:.0} of {:.0} KiB/s)", m.at(BUFFER), m.best()),
            ),
            Verdict::of(whole <= 0.95),
            text.fill(
                "note bigger_lowers",
                &[
                    ("cpu_best", pct(cpu_best)),
                    ("wire_best", pct(wire_best)),
                    ("cpu_whole", pct(cpu_whole)),
                    ("wire_whole", pct(wire_whole)),
                ],
            )?,
        )?;
        let knees: Vec<usize> = m.tp.iter().map(|v| knee(v)).collect();
        let grows = knees.windows(2).all(|w| w[0] <= w[1]) && knees[0] < knees[2];
        j.claim(
            "fixed_cost",
            FIXED
                .iter()
                .zip(&knees)
                .map(|(f, k)| format!("{f:.0} us: {}", size(*k)))
                .collect::<Vec<_>>()
                .join(", "),
            Verdict::of(grows),
            // The only claim that can fail without a note of its own.
            if grows {
                String::new()
            } else {
                text.get("note missed")?
            },
        )
    }

    fn render(&self, _p: Params, m: &Measured, text: &Text, out: &Path) -> Result<Rendered> {
        let f1 = Figure::from_text(
            out,
            "throughput-vs-write-size",
            "Throughput against bytes per write call (Sun 3/60 model; the 16 KB stall is in the table)",
            text,
            &[],
        )?;
        plot_throughput(m, &f1.file, &f1.title)?;
        let f2 = Figure::from_text(
            out,
            "tseq-whole-buffer-writes",
            "100 ms of whole-buffer (17,520-byte) writes: burst, dead time, burst",
            text,
            &[],
        )?;
        plots::time_sequence_titled(&m.windows[WHOLE], 0, &f2.file, &f2.title, None)?;
        let f3 = Figure::from_text(
            out,
            "tseq-best-writes",
            format!(
                "100 ms of {} writes, the fastest size at 150 us per call",
                size(CHUNKS[m.best_i])
            ),
            text,
            &[],
        )?;
        plots::time_sequence_titled(&m.windows[m.best_i], 0, &f3.file, &f3.title, None)?;
        Ok(Rendered {
            setup: text.get("setup")?,
            tables: vec![table(m)],
            plots: vec![f1, f2, f3],
            discussion: text.fill(
                "discussion",
                &[
                    ("stall", format!("{:.0}", m.at(16384))),
                    ("gain", format!("{:+.0}", m.gain(MAIN) * 100.0)),
                    ("gain_free", format!("{:+.0}", m.gain(0) * 100.0)),
                ],
            )?,
        })
    }
}

/// Goodput per write size at each fixed cost, and the sender's and the wire's utilization
/// at the seed's.
fn table(m: &Measured) -> Table {
    let mut header = vec!["bytes per write".to_string()];
    for f in FIXED {
        header.push(format!("{f:.0} us/call (KiB/s)"));
    }
    header.push(format!("sender CPU ({:.0} us)", FIXED[MAIN]));
    header.push(format!("wire, data direction ({:.0} us)", FIXED[MAIN]));
    let rows = CHUNKS
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let mut row = vec![size(c)];
            for v in &m.tp {
                row.push(format!("{:.0}", v[i]));
            }
            let (cpu, wire) = m.util[i];
            row.push(format!("{:.0}%", cpu * 100.0));
            row.push(format!("{:.0}%", wire * 100.0));
            row
        })
        .collect();
    Table {
        caption: "Goodput against bytes per write call".into(),
        header,
        rows,
    }
}

/// Goodput against the write size, one line per fixed cost; the 16 KB stall stays in the
/// table only, so the lines show the knee.
fn plot_throughput(m: &Measured, path: &Path, title: &str) -> Result<()> {
    let series: Vec<(String, Vec<(f64, f64)>)> = FIXED
        .iter()
        .zip(&m.tp)
        .map(|(f, v)| {
            (
                format!("{f:.0} us per write call"),
                CHUNKS
                    .iter()
                    .zip(v.iter().copied())
                    .filter(|(&c, _)| c != 16384)
                    .map(|(&c, y)| (c as f64, y))
                    .collect(),
            )
        })
        .collect();
    plots::lines(
        path,
        title,
        "bytes per write call (log scale)",
        "throughput (KiB/s)",
        &series,
        true,
    )
}
