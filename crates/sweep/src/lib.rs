//! `ackclock-sweep`: a scenario over the cross product of parameter values and seeds, on
//! this machine's cores ([`local`]), or planned into a directory whose runs any machine can
//! run ([`plan_dir`], [`run::run`], [`collect::collect`], with files for Slurm, GNU parallel
//! and Kubernetes from [`emit`]). Both ways give the same sweep.csv, byte for byte: the
//! simulator is deterministic and both format rows with the same code. `ackclock sweep`
//! parses its arguments and calls these.
//!
//! [`plan`] makes the runs and the plan directory, [`run`] runs them, [`collect`] writes
//! the table, [`emit`] writes the schedulers' files, [`plot`] draws the table's figures.
//!
//! # Example
//!
//! The runs of a sweep, planned but not run: two queue limits, two seeds each.
//!
//! ```
//! use ackclock_sim::cost::Budget;
//! use ackclock_sweep::plan::{expand, Param};
//!
//! let scenario = ackclock_testkit::repo_root().join("scenarios/dumbbell.toml");
//! let limits: Param = "topology.bottleneck.queue.limit_pkts=8,16".parse().unwrap();
//! let (_, runs) = expand(&scenario, &[limits], 2, &Budget::for_this_machine()).unwrap();
//! assert_eq!(runs.len(), 4);
//! ```

#![warn(missing_docs)]

pub mod collect;
pub mod emit;
pub mod plan;
pub mod plot;
pub mod run;

use ackclock_sim::cost::Budget;
use ackclock_sim::{build, RunResult, Scenario};
use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use plan::Param;
use rayon::prelude::*;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Runs one scenario quietly: no files, no progress bar.
///
/// # Errors
/// The scenario does not build.
pub fn run_quiet(s: &Scenario) -> Result<RunResult> {
    let sim = build(s, None).map_err(|e| anyhow!("{e}"))?;
    Ok(sim.run(|_| {}))
}

/// Where a sweep of `path` writes by default: `out/sweep/<scenario name>`.
pub fn default_out(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| "sweep".into());
    PathBuf::from("out/sweep").join(stem)
}

/// `ackclock sweep plan`: the runs of `path` over `params` and `seeds` written into a plan
/// directory (default: `out/sweep/<scenario name>`), with the schedulers' files of `emit`.
///
/// # Errors
/// More than `max_runs` runs (refused before any is made), a bad scenario or value, a run
/// over `budget`, a directory that holds another plan.
#[allow(clippy::too_many_arguments)]
pub fn plan_dir(
    path: &Path,
    params: &[Param],
    seeds: u64,
    out: Option<PathBuf>,
    backends: &[emit::Backend],
    options: &emit::Options,
    budget: &Budget,
    max_runs: u64,
) -> Result<()> {
    plan::check_runs(params, seeds, max_runs)?;
    let sweep = plan::configurations(path, params, seeds, budget)?;
    let runs: Vec<_> = (0..sweep.len()).map(|i| sweep.run(i)).collect();
    let dir = out.unwrap_or_else(|| default_out(path));
    let p = plan::Plan::write(&dir, path, &sweep.text, params, sweep.seeds.len(), &runs)?;
    let files = emit::emit(&p, backends, options)?;
    let n = runs.len();
    println!(
        "{n} runs planned in {} (indexes 0 to {}; manifest.jsonl, scenario.toml, plan.json)",
        dir.display(),
        n - 1
    );
    for f in files {
        println!("wrote {}", f.display());
    }
    println!(
        "next: ackclock sweep run {} --index I (or --all), then ackclock sweep collect {}",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// One run's row of sweep.csv: the swept values, the seed, the metrics.
type Row = (Vec<String>, u64, Vec<String>);

/// A note when some configuration gave the same figures for every RNG seed: replications
/// of a scenario in which nothing draws on the seed (drop-tail queues, no random loss, no
/// cross traffic) are copies, which a reader of the table should not take for agreement.
fn same_for_every_seed(rows: &[Row]) -> Option<String> {
    let mut by_config: Vec<(&Vec<String>, &Vec<String>, bool)> = Vec::new();
    for (values, _, cells) in rows {
        match by_config.iter_mut().find(|(v, _, _)| *v == values) {
            Some((_, first, same)) => *same &= *first == cells,
            None => by_config.push((values, cells, true)),
        }
    }
    let same = by_config.iter().filter(|(_, _, s)| *s).count();
    (same > 0).then(|| {
        format!(
            "note: {same} of {} configuration{} gave the same figures for every seed: nothing \
             in {} draws on the RNG seed (random loss, RED and random drop, jitter and cross \
             traffic do)",
            by_config.len(),
            if by_config.len() == 1 { "" } else { "s" },
            if same == 1 { "it" } else { "them" }
        )
    })
}

/// `ackclock sweep`: every run of `path` over `params` and `seeds`, in parallel on this
/// machine's cores; prints the table (and writes it to `<out>/sweep.csv`), then draws the
/// figures `plot` asks for beside it. Before the first run it says on stderr how many runs
/// there are and what they are predicted to cost; then a progress bar on a terminal, or a
/// line at every tenth of the runs elsewhere.
///
/// # Errors
/// More than `max_runs` runs, or a `plot` that cannot be drawn (both refused before any run
/// is made), a bad scenario or value, a run over `budget`, or a run that fails.
pub fn local(
    path: &Path,
    params: &[Param],
    seeds: u64,
    out: Option<PathBuf>,
    budget: &Budget,
    max_runs: u64,
    plot: &plot::Options,
) -> Result<()> {
    plan::check_runs(params, seeds, max_runs)?;
    let swept = plan::swept(params);
    plot::check(plot, &typed_values(&swept))?;
    // Runs go in parallel, one per core: each gets its share of the memory budget.
    let threads = rayon::current_num_threads().max(1);
    let budget = &Budget {
        max_memory_bytes: budget.max_memory_bytes / threads as u64,
        memory_source: format!(
            "{}, shared by {threads} parallel runs",
            budget.memory_source
        )
        .into(),
        ..budget.clone()
    };
    let sweep = plan::configurations(path, params, seeds, budget)?;
    let n = sweep.len();
    eprintln!("{}", prediction(&sweep, threads));
    let progress = Progress::new(n);
    let rows: Vec<Result<Row>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let r = sweep.run(i);
            let result = run_quiet(&r.scenario)?;
            progress.one_done();
            let values: Vec<String> = r.overrides.iter().map(|o| o.value.clone()).collect();
            Ok((values, r.seed, collect::metric_cells(&result.summary)))
        })
        .collect();
    progress.finish();
    let rows = rows.into_iter().collect::<Result<Vec<_>>>()?;
    let paths: Vec<String> = swept.iter().map(|p| p.path.clone()).collect();
    let mut csv = collect::header(&paths);
    for (values, seed, cells) in &rows {
        csv.push_str(&collect::row(values, *seed, cells));
    }
    let out = out.unwrap_or_else(|| default_out(path));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let file = out.join("sweep.csv");
    std::fs::write(&file, &csv).with_context(|| format!("cannot write {}", file.display()))?;
    print!("{csv}");
    println!("\n{n} runs; table in {}", file.display());
    if sweep.seeds.len() > 1 {
        if let Some(note) = same_for_every_seed(&rows) {
            println!("{note}");
        }
    }
    for f in plot::write(&out, &csv, &scenario_name(path), plot)? {
        println!("wrote {}", f.display());
    }
    Ok(())
}

/// Each `--param`'s path and values as sweep.csv will write them, for [`plot::check`].
fn typed_values(params: &[Param]) -> Vec<(String, Vec<String>)> {
    params
        .iter()
        .map(|p| {
            let v = p.texts.iter();
            let cells = v.map(|t| plan::value_text(&plan::parse_value(t)));
            (p.path.clone(), cells.collect())
        })
        .collect()
}

/// A scenario's name for figure titles: its file's stem (`red_vs_droptail`).
pub fn scenario_name(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The events per second per core a prediction of time assumes: the rate the Slurm files'
/// `--time` also assumes (`sweep plan --help`); a dumbbell runs at several times it here.
const EVENTS_PER_SECOND: f64 = 1e6;

/// What a sweep is about to do: its runs, the predicted events and peak memory of one run
/// (the largest configuration's), and the time all of them would take at
/// [`EVENTS_PER_SECOND`] on `threads` cores.
fn prediction(sweep: &plan::Sweep, threads: usize) -> String {
    let runs = sweep.len();
    let events: f64 = sweep
        .configs
        .iter()
        .map(|c| c.predicted_events as f64 * sweep.seeds.len() as f64)
        .sum();
    let max_events = sweep
        .configs
        .iter()
        .map(|c| c.predicted_events)
        .max()
        .unwrap_or(0);
    let max_mem = sweep
        .configs
        .iter()
        .map(|c| c.predicted_memory_bytes)
        .max()
        .unwrap_or(0);
    let secs = events / EVENTS_PER_SECOND / threads as f64;
    format!(
        "sweep: {runs} runs ({} configuration(s) x {} seed(s)); predicted up to {max_events:.1e} events and {:.0} MiB per run, {events:.1e} events in all: about {} on {threads} core(s) at 1e6 events/s each",
        sweep.configs.len(),
        sweep.seeds.len(),
        max_mem as f64 / (1u64 << 20) as f64,
        human_time(secs)
    )
}

/// A duration for people: seconds, minutes or hours.
fn human_time(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0} s")
    } else if secs < 5400.0 {
        format!("{:.0} min", secs / 60.0)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

/// A local sweep's progress: a bar with the time left on a terminal; elsewhere (a log, a
/// file) a line at every tenth of the runs with the time taken and left, so a long sweep
/// is not silent.
struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: AtomicU64,
    start: Instant,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "sweep [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            total,
            done: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    fn one_done(&self) {
        let k = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.set_position(k);
            return;
        }
        // The runs that cross a tenth of the total: nine lines at most, whatever the size
        // (none for a sweep of fewer than ten runs, which the prediction line covers).
        let tenth = |x: u64| x * 10 / self.total.max(1);
        if self.total >= 10 && tenth(k) != tenth(k - 1) && k < self.total {
            let t = self.start.elapsed().as_secs_f64();
            let left = t / k as f64 * (self.total - k) as f64;
            eprintln!(
                "sweep: {k}/{} runs in {}, about {} left",
                self.total,
                human_time(t),
                human_time(left)
            );
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
