//! `ackclock sim`, and what it shares with `ackclock sweep` (running a scenario, the budget).

use ackclock_lab::plots;
use ackclock_sim::cost::Budget;
use ackclock_sim::{build, RunResult, Scenario, ScenarioError};
use ackclock_wire::Instant;
use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

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

/// The limits a run must fit in, from `--max-memory` and `--max-events`.
#[derive(clap::Args, Debug, Clone)]
pub struct BudgetArgs {
    /// Refuse a scenario whose predicted memory is above this (e.g. 2G, 512M); default half
    /// of this machine's memory.
    #[arg(long, value_name = "SIZE", value_parser = ackclock_units::size())]
    pub max_memory: Option<u64>,
    /// Refuse a scenario whose predicted event count is above this (default 1e10, about ten
    /// minutes of simulation).
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub max_events: Option<u64>,
}

impl BudgetArgs {
    pub fn budget(&self) -> Budget {
        let mut b = Budget::for_this_machine();
        if let Some(m) = self.max_memory {
            b.max_memory_bytes = m;
            b.memory_source = "--max-memory".into();
        }
        if let Some(e) = self.max_events {
            b.max_events = e;
        }
        b
    }
}

/// A count such as 20000000 or 2e7.
pub fn parse_count(s: &str) -> std::result::Result<u64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected a count such as 20000000 or 2e7"))?;
    if v.is_nan() || v < 1.0 {
        return Err(format!("{s:?}: expected a count of at least 1"));
    }
    if v > u64::MAX as f64 {
        return Err(format!("{s:?}: expected a count of at most 2^64 - 1"));
    }
    Ok(v as u64)
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

/// `ackclock sim SCENARIO [--out DIR] [--seed N] [--pcap] [--all-links]`; the switches are
/// plots, pcap and all links.
pub fn sim(
    path: &Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    [plots_on, pcap, all_links]: [bool; 3],
    budget: &Budget,
) -> Result<()> {
    let mut s = Scenario::load_within(path, budget).map_err(|e: ScenarioError| anyhow!("{e}"))?;
    if let Some(seed) = seed {
        s.seed = seed;
    }
    if pcap {
        s.output.pcap_all = true;
    }
    let stem = path
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let out = out.unwrap_or_else(|| PathBuf::from("out/sim").join(&stem));
    let r = run_scenario(&s, Some(&out), Some(&format!("simulating {stem}")))?;
    print!("{}", r.table_with(all_links));
    for w in r.warnings() {
        eprintln!("warning: {w}");
    }
    let csvs = r
        .write_files(&out)
        .with_context(|| format!("writing results to {}", out.display()))?;
    let plots = if plots_on && s.output.plots {
        // Each plot is an SVG with a PNG and an interactive HTML page beside it.
        plots::all(&r, &out)?.len()
    } else {
        0
    };
    let mut what = vec![format!("summary.json, {} CSV files", csvs.len())];
    if plots > 0 {
        what.push(format!("{plots} plots (SVG, PNG and interactive HTML)"));
    }
    if !r.captures.is_empty() {
        let names = if r.captures.len() <= 4 {
            r.captures.join(", ")
        } else {
            format!("{}, ...", r.captures[..3].join(", "))
        };
        what.push(format!(
            "{} pcap files, one per interface ({names})",
            r.captures.len()
        ));
    }
    println!(
        "\n{} events in {:.2} s wall ({:.1} M events/s); results in {}/: {}",
        r.summary.events,
        r.wall_s,
        r.summary.events as f64 / r.wall_s.max(1e-9) / 1e6,
        out.display(),
        what.join("; ")
    );
    Ok(())
}
