//! `ackclock sim` and `ackclock sweep`.

use crate::plots;
use ackclock_sim::{build, RunResult, Scenario, ScenarioError};
use ackclock_wire::Instant;
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A progress bar that appears only once a run has lasted more than a second.
pub struct LazyBar {
    started: std::time::Instant,
    total: u64,
    bar: Option<ProgressBar>,
    label: String,
}

impl LazyBar {
    pub fn new(total: u64, label: &str) -> Self {
        LazyBar {
            started: std::time::Instant::now(),
            total,
            bar: None,
            label: label.to_string(),
        }
    }
    pub fn set(&mut self, pos: u64) {
        if self.bar.is_none() && self.started.elapsed().as_secs_f64() > 1.0 {
            let b = ProgressBar::new(self.total);
            b.set_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:40}] {percent}% ({elapsed} elapsed, ~{eta} left)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b.set_message(self.label.clone());
            self.bar = Some(b);
        }
        if let Some(b) = &self.bar {
            b.set_position(pos.min(self.total));
        }
    }
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

fn load(path: &Path) -> Result<Scenario> {
    Scenario::load(path).map_err(|e: ScenarioError| anyhow!("{e}"))
}

/// Runs one scenario quietly (no files) and returns its result.
pub fn run_scenario(
    s: &Scenario,
    out: Option<&Path>,
    bar_label: Option<&str>,
) -> Result<RunResult> {
    if let Some(o) = out {
        std::fs::create_dir_all(o).with_context(|| format!("cannot create {}", o.display()))?;
    }
    let sim = build(s, out).map_err(|e| anyhow!("{e}"))?;
    let total_ms = (s.duration_s * 1000.0) as u64;
    let mut bar = bar_label.map(|l| LazyBar::new(total_ms, l));
    let r = sim.run(|t: Instant| {
        if let Some(b) = bar.as_mut() {
            b.set(t.as_nanos() / 1_000_000);
        }
    });
    if let Some(b) = bar {
        b.finish();
    }
    Ok(r)
}

/// `ackclock sim SCENARIO [--out DIR] [--seed N]`.
pub fn sim(path: &Path, out: Option<PathBuf>, seed: Option<u64>, plots_on: bool) -> Result<()> {
    let mut s = load(path)?;
    if let Some(seed) = seed {
        s.seed = seed;
    }
    let stem = path
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let out = out.unwrap_or_else(|| PathBuf::from("out/sim").join(&stem));
    let r = run_scenario(&s, Some(&out), Some(&format!("simulating {stem}")))?;
    print!("{}", r.table());
    r.write_files(&out)
        .with_context(|| format!("writing results to {}", out.display()))?;
    let mut files = vec!["summary.json".to_string()];
    if plots_on && s.output.plots {
        for f in plots::all(&r, &out)? {
            files.push(f.file_name().unwrap_or_default().to_string_lossy().into());
        }
    }
    println!(
        "\n{} events in {:.2} s wall ({:.1} M events/s); results in {}/ ({} plots and CSV files, summary.json)",
        r.summary.events,
        r.wall_s,
        r.summary.events as f64 / r.wall_s.max(1e-9) / 1e6,
        out.display(),
        files.len() - 1
    );
    Ok(())
}

/// One `--param PATH=V1,V2,...`.
#[derive(Clone, Debug)]
pub struct Param {
    pub path: String,
    pub values: Vec<toml::Value>,
}

impl std::str::FromStr for Param {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let (path, vals) = s.split_once('=').ok_or_else(|| {
            format!("--param {s:?}: expected PATH=V1,V2,... e.g. --param link.0.queue.limit_pkts=8,16,32")
        })?;
        if path.is_empty() || vals.is_empty() {
            return Err(format!(
                "--param {s:?}: both the path and at least one value are needed"
            ));
        }
        let values = vals.split(',').map(parse_value).collect();
        Ok(Param {
            path: path.to_string(),
            values,
        })
    }
}

fn parse_value(v: &str) -> toml::Value {
    let v = v.trim();
    if let Ok(i) = v.parse::<i64>() {
        toml::Value::Integer(i)
    } else if let Ok(f) = v.parse::<f64>() {
        toml::Value::Float(f)
    } else if let Ok(b) = v.parse::<bool>() {
        toml::Value::Boolean(b)
    } else {
        toml::Value::String(v.to_string())
    }
}

/// Sets `path` (dot separated; numbers index arrays) in a TOML document.
pub fn set_path(doc: &mut toml::Value, path: &str, value: toml::Value) -> Result<()> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut cur = doc;
    for (i, part) in parts.iter().enumerate() {
        let last = i == parts.len() - 1;
        cur = match cur {
            toml::Value::Table(t) => {
                if last {
                    t.insert(part.to_string(), value);
                    return Ok(());
                }
                t.entry(part.to_string())
                    .or_insert_with(|| toml::Value::Table(Default::default()))
            }
            toml::Value::Array(a) => {
                let idx: usize = part.parse().map_err(|_| {
                    anyhow!("--param {path}: `{part}` indexes an array and must be a number")
                })?;
                let len = a.len();
                let slot = a
                    .get_mut(idx)
                    .ok_or_else(|| anyhow!("--param {path}: index {idx} past the {len} entries"))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
            _ => bail!("--param {path}: `{part}` is inside a value that is not a table or array"),
        };
    }
    Ok(())
}

/// `ackclock sweep SCENARIO --param P=V,... [--seeds N] [--out DIR]`: the cross product in
/// parallel, one CSV row per run.
pub fn sweep(path: &Path, params: &[Param], seeds: u64, out: Option<PathBuf>) -> Result<()> {
    if params.is_empty() {
        bail!("sweep needs at least one --param PATH=V1,V2,... (e.g. --param link.0.rate_bps=1e6,2e6)");
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let base: toml::Value =
        toml::from_str(&text).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let base_seed = load(path)?.seed;
    // The cross product, and the seeds.
    let mut combos: Vec<Vec<toml::Value>> = vec![vec![]];
    for p in params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(v.clone());
                    c
                })
            })
            .collect();
    }
    let mut jobs = Vec::new();
    for c in &combos {
        for k in 0..seeds.max(1) {
            let mut doc = base.clone();
            for (p, v) in params.iter().zip(c) {
                set_path(&mut doc, &p.path, v.clone())?;
            }
            set_path(
                &mut doc,
                "seed",
                toml::Value::Integer((base_seed + k) as i64),
            )?;
            let t = toml::to_string(&doc).map_err(|e| anyhow!("{e}"))?;
            let label = PathBuf::from(format!(
                "{} with {}",
                path.display(),
                params
                    .iter()
                    .zip(c)
                    .map(|(p, v)| format!("{}={v}", p.path))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
            let s = Scenario::from_str_named(&t, &label).map_err(|e| anyhow!("{e}"))?;
            jobs.push((c.clone(), base_seed + k, s));
        }
    }
    let n = jobs.len() as u64;
    let done = AtomicU64::new(0);
    let bar = ProgressBar::new(n);
    bar.set_style(
        ProgressStyle::with_template("sweep [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let results: Vec<Result<(Vec<toml::Value>, u64, RunResult)>> = jobs
        .into_par_iter()
        .map(|(c, seed, s)| {
            let r = run_scenario(&s, None, None)?;
            let k = done.fetch_add(1, Ordering::Relaxed);
            bar.set_position(k + 1);
            Ok((c, seed, r))
        })
        .collect();
    bar.finish_and_clear();
    let mut csv = String::new();
    for p in params {
        let _ = write!(csv, "{},", p.path);
    }
    csv.push_str("seed,flows,total_goodput_bps,min_goodput_bps,retransmitted_segments,timeouts,fast_retransmits,queue_drops,jain_fairness,max_link_utilization,mean_queue_delay_ms\n");
    for r in results {
        let (c, seed, r) = r?;
        let s = &r.summary;
        for v in &c {
            let _ = write!(csv, "{},", value_text(v));
        }
        let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
        let min = s
            .flows
            .iter()
            .map(|f| f.goodput_bps)
            .fold(f64::INFINITY, f64::min);
        let busiest = s
            .links
            .iter()
            .max_by(|a, b| a.utilization.total_cmp(&b.utilization));
        let _ = writeln!(
            csv,
            "{seed},{},{total:.0},{:.0},{},{},{},{},{},{:.4},{}",
            s.flows.len(),
            if min.is_finite() { min } else { 0.0 },
            s.flows
                .iter()
                .map(|f| f.retransmitted_segments)
                .sum::<u64>(),
            s.flows.iter().map(|f| f.timeouts).sum::<u64>(),
            s.flows.iter().map(|f| f.fast_retransmits).sum::<u64>(),
            s.links.iter().map(|l| l.queue_drops).sum::<u64>(),
            s.jain_fairness.map_or(String::new(), |j| format!("{j:.4}")),
            busiest.map_or(0.0, |l| l.utilization),
            busiest
                .and_then(|l| l.queue_delay_mean_ms)
                .map_or(String::new(), |d| format!("{d:.3}")),
        );
    }
    let stem = path
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| "sweep".into());
    let out = out.unwrap_or_else(|| PathBuf::from("out/sweep").join(&stem));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let file = out.join("sweep.csv");
    std::fs::write(&file, &csv).with_context(|| format!("cannot write {}", file.display()))?;
    print!("{csv}");
    println!("\n{n} runs; table in {}", file.display());
    Ok(())
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
