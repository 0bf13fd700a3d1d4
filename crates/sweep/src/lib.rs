//! `ackclock-sweep`: a scenario over the cross product of parameter values and seeds, on
//! this machine's cores ([`local`]), or planned into a directory whose runs any machine can
//! run ([`plan_dir`], [`run::run`], [`collect::collect`], with files for Slurm, GNU parallel
//! and Kubernetes from [`emit`]). Both ways give the same sweep.csv, byte for byte: the
//! simulator is deterministic and both format rows with the same code. `ackclock sweep`
//! parses its arguments and calls these.
//!
//! [`plan`] makes the runs and the plan directory, [`run`] runs them, [`collect`] writes
//! the table, [`emit`] writes the schedulers' files.
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
pub mod run;

use ackclock_sim::cost::Budget;
use ackclock_sim::{build, RunResult, Scenario};
use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use plan::Param;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
/// A bad scenario or value, a run over `budget`, a directory that holds another plan.
#[allow(clippy::too_many_arguments)]
pub fn plan_dir(
    path: &Path,
    params: &[Param],
    seeds: u64,
    out: Option<PathBuf>,
    backends: &[emit::Backend],
    options: &emit::Options,
    budget: &Budget,
) -> Result<()> {
    let (text, runs) = plan::expand(path, params, seeds, budget)?;
    let dir = out.unwrap_or_else(|| default_out(path));
    let p = plan::Plan::write(&dir, path, &text, params, seeds, &runs)?;
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

/// `ackclock sweep SCENARIO --param P=V,... [--seeds N] [--out DIR]`: the cross product in
/// parallel on this machine, one CSV row per run.
pub fn local(
    path: &Path,
    params: &[Param],
    seeds: u64,
    out: Option<PathBuf>,
    budget: &Budget,
) -> Result<()> {
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
    let (_, runs) = plan::expand(path, params, seeds, budget)?;
    let n = runs.len() as u64;
    let done = AtomicU64::new(0);
    let bar = ProgressBar::new(n);
    bar.set_style(
        ProgressStyle::with_template("sweep [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let rows: Vec<Result<Row>> = runs
        .into_par_iter()
        .map(|r| {
            let result = run_quiet(&r.scenario)?;
            let k = done.fetch_add(1, Ordering::Relaxed);
            bar.set_position(k + 1);
            let values: Vec<String> = r.overrides.iter().map(|o| o.value.clone()).collect();
            Ok((values, r.seed, collect::metric_cells(&result.summary)))
        })
        .collect();
    bar.finish_and_clear();
    let rows = rows.into_iter().collect::<Result<Vec<_>>>()?;
    let paths: Vec<String> = params.iter().map(|p| p.path.clone()).collect();
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
    if seeds > 1 {
        if let Some(note) = same_for_every_seed(&rows) {
            println!("{note}");
        }
    }
    Ok(())
}
