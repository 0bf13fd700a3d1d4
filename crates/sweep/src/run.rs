//! `ackclock sweep run DIR`: runs one run, a shard or all of a plan, skipping those whose
//! result is already there, and writes each result so that a run killed half-way leaves
//! nothing that reads as finished.

use crate::collect::{metric_cells, METRIC_COLUMNS};
use crate::plan::{Entry, Plan};
use crate::run_quiet;
use ackclock_sim::cost::Budget;
use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use serde_json::json;
use std::io::Write as _;
use std::path::Path;
use std::sync::Mutex;

/// The format a run's result file declares.
pub const RESULT_FORMAT: &str = "ackclock-sweep-result/1";

/// Which runs of the plan this process runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Selection {
    /// One run, by its index in the manifest (from 0).
    Index(usize),
    /// Shard k of n (k from 0): the runs whose index is k modulo n, so each shard gets a
    /// share of every parameter value (the manifest is ordered by value, and cost follows
    /// the values).
    Shard {
        /// Which shard (from 0).
        k: usize,
        /// Of how many.
        n: usize,
    },
    /// Every run not yet done.
    All,
}

/// `--shard K/N`.
pub fn parse_shard(s: &str) -> std::result::Result<(usize, usize), String> {
    let usage =
        || format!("{s:?}: expected K/N, shard K (counting from 0) of N shards, e.g. --shard 0/4");
    let (k, n) = s.split_once('/').ok_or_else(usage)?;
    let k: usize = k.trim().parse().map_err(|_| usage())?;
    let n: usize = n.trim().parse().map_err(|_| usage())?;
    if n == 0 {
        return Err(format!("{s:?}: there must be at least 1 shard"));
    }
    if k >= n {
        return Err(format!(
            "{s:?}: shards count from 0, so the shards of {n} are 0/{n} to {}/{n}",
            n - 1
        ));
    }
    Ok((k, n))
}

/// The environment variables a scheduler sets to the index of an array task, in the order
/// they are read: Slurm job arrays, then Kubernetes Indexed Jobs.
pub const INDEX_VARIABLES: &[&str] = &["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"];

/// The selection from the flags, or else from the scheduler's environment.
pub fn select(
    index: Option<usize>,
    shard: Option<(usize, usize)>,
    all: bool,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Selection, String)> {
    if let Some(i) = index {
        return Ok((Selection::Index(i), "--index".into()));
    }
    if let Some((k, n)) = shard {
        return Ok((Selection::Shard { k, n }, "--shard".into()));
    }
    if all {
        return Ok((Selection::All, "--all".into()));
    }
    for var in INDEX_VARIABLES {
        if let Some(v) = env(var) {
            let i: usize = v.trim().parse().map_err(|_| {
                anyhow!("{var}={v:?} is not a run index (a whole number from 0); pass --index I instead")
            })?;
            return Ok((Selection::Index(i), (*var).to_string()));
        }
    }
    bail!(
        "which runs? pass --index I (one run, from 0), --shard K/N (every N-th run from K) or --all; under Slurm or a Kubernetes Indexed Job the index comes from {}",
        INDEX_VARIABLES.join(" or ")
    )
}

/// What the results directory says of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Finished: its metric cells, in [`METRIC_COLUMNS`] order.
    Done(Vec<String>),
    /// It ran and failed: the error.
    Failed(String),
    /// No complete result: why not.
    Missing(String),
}

impl Outcome {
    /// Reads run `id`'s result. A file that does not parse, or belongs to another id, is not
    /// a result (a crash can only leave temporary files, but a copy can be cut short).
    pub fn read(plan: &Plan, id: &str) -> Outcome {
        let path = plan.result_path(id);
        match std::fs::read_to_string(&path) {
            Ok(text) => match done_cells(&text, id) {
                Ok(cells) => return Outcome::Done(cells),
                Err(why) => {
                    return Outcome::Missing(format!(
                        "{} is not a complete result ({why})",
                        path.display()
                    ))
                }
            },
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Outcome::Missing(format!("cannot read {}: {e}", path.display()))
            }
            Err(_) => {}
        }
        if let Ok(text) = std::fs::read_to_string(plan.failure_path(id)) {
            let error = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|v| v["error"].as_str().map(String::from))
                .unwrap_or_else(|| "failed (unreadable failure record)".into());
            return Outcome::Failed(format!("failed: {error}"));
        }
        Outcome::Missing("not run yet".into())
    }
}

fn done_cells(text: &str, id: &str) -> std::result::Result<Vec<String>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if v["format"] != RESULT_FORMAT {
        return Err(format!("format is not {RESULT_FORMAT:?}"));
    }
    if v["id"] != id {
        return Err(format!("its id is {}", v["id"]));
    }
    METRIC_COLUMNS
        .iter()
        .map(|c| {
            v["columns"][c]
                .as_str()
                .map(String::from)
                .ok_or_else(|| format!("no column {c}"))
        })
        .collect()
}

/// Writes `body` to `path` through a temporary file in the same directory and a rename, so
/// that readers see the whole file or none (a process killed mid-write leaves only a
/// `.*.tmp` file, which nothing reads).
pub fn write_atomic(path: &Path, body: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(body)?;
        // On the disk before the rename makes it visible: a node that crashes after the
        // rename must not leave an empty "result".
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    Ok(())
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// Runs one entry and writes its result (or its failure).
fn run_one(plan: &Plan, e: &Entry, budget: &Budget) -> Result<f64> {
    let outcome = plan.scenario(e, budget).and_then(|s| run_quiet(&s));
    match outcome {
        Ok(r) => {
            let columns: serde_json::Map<String, serde_json::Value> = METRIC_COLUMNS
                .iter()
                .zip(metric_cells(&r.summary))
                .map(|(c, v)| (c.to_string(), v.into()))
                .collect();
            let body = json!({
                "format": RESULT_FORMAT,
                "id": e.id,
                "index": e.index,
                "seed": e.seed,
                "ackclock_version": env!("CARGO_PKG_VERSION"),
                "host": host(),
                "wall_s": r.wall_s,
                "columns": columns,
                "summary": r.summary,
            });
            write_atomic(
                &plan.result_path(&e.id),
                (serde_json::to_string_pretty(&body)? + "\n").as_bytes(),
            )?;
            // An earlier failure of this run is now history.
            let _ = std::fs::remove_file(plan.failure_path(&e.id));
            Ok(r.wall_s)
        }
        Err(err) => {
            let body = json!({
                "format": RESULT_FORMAT,
                "id": e.id,
                "index": e.index,
                "seed": e.seed,
                "host": host(),
                "error": format!("{err:#}"),
            });
            write_atomic(
                &plan.failure_path(&e.id),
                (serde_json::to_string_pretty(&body)? + "\n").as_bytes(),
            )?;
            Err(err)
        }
    }
}

/// `ackclock sweep run DIR ...`. Prints a line per run; fails if any run failed.
pub fn run(
    dir: &Path,
    selection: Selection,
    source: &str,
    jobs: usize,
    budget: &Budget,
) -> Result<()> {
    let plan = Plan::load(dir)?;
    let n = plan.entries.len();
    let chosen: Vec<&Entry> = match selection {
        Selection::Index(i) => {
            let Some(e) = plan.entries.get(i) else {
                bail!(
                    "run index {i} (from {source}) is past the last run of {}: it has {n} runs, indexes 0 to {}; a Slurm array for it is --array=0-{}",
                    dir.display(),
                    n - 1,
                    n - 1
                );
            };
            vec![e]
        }
        Selection::Shard { k, n: shards } => plan
            .entries
            .iter()
            .filter(|e| e.index % shards == k)
            .collect(),
        Selection::All => plan.entries.iter().collect(),
    };
    // Runs go in parallel, `jobs` at a time: each gets its share of the memory budget.
    let jobs = jobs.clamp(1, chosen.len().max(1));
    let budget = Budget {
        max_memory_bytes: budget.max_memory_bytes / jobs as u64,
        memory_source: format!("{}, shared by {jobs} parallel runs", budget.memory_source).into(),
        ..budget.clone()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start the worker threads")?;
    let counts = Mutex::new((0usize, 0usize, 0usize));
    let say = |line: String| {
        // One line per run as it ends, whole even when runs end together.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    pool.install(|| {
        chosen.par_iter().for_each(|e| {
            let label = format!("run {} of {n} (id {})", e.index, e.id);
            if let Outcome::Done(_) = Outcome::read(&plan, &e.id) {
                counts.lock().expect("not poisoned").1 += 1;
                say(format!("{label}: already done, skipped"));
                return;
            }
            match run_one(&plan, e, &budget) {
                Ok(wall) => {
                    counts.lock().expect("not poisoned").0 += 1;
                    say(format!("{label}: done in {wall:.2} s"));
                }
                Err(err) => {
                    counts.lock().expect("not poisoned").2 += 1;
                    say(format!("{label}: FAILED: {err:#}"));
                }
            }
        })
    });
    let (ran, skipped, failed) = counts.into_inner().expect("not poisoned");
    println!(
        "{ran} run, {skipped} skipped (already done), {failed} failed; {} of {n} runs of {} selected by {source}",
        chosen.len(),
        dir.display()
    );
    if failed > 0 {
        bail!(
            "{failed} run(s) failed; their errors are above and in {}/",
            dir.join(crate::plan::RESULTS_DIR).display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_comes_from_the_flags_then_slurm_then_kubernetes() {
        let none = |_: &str| None;
        let both = |v: &str| match v {
            "SLURM_ARRAY_TASK_ID" => Some("3".to_string()),
            "JOB_COMPLETION_INDEX" => Some("5".to_string()),
            _ => None,
        };
        let k8s = |v: &str| (v == "JOB_COMPLETION_INDEX").then(|| "5".to_string());
        assert_eq!(
            select(Some(1), None, false, both).unwrap().0,
            Selection::Index(1)
        );
        assert_eq!(
            select(None, None, false, both).unwrap().0,
            Selection::Index(3)
        );
        assert_eq!(
            select(None, None, false, k8s).unwrap().0,
            Selection::Index(5)
        );
        assert_eq!(select(None, None, true, both).unwrap().0, Selection::All);
        let e = select(None, None, false, none).unwrap_err().to_string();
        assert!(
            e.contains("--index I") && e.contains("SLURM_ARRAY_TASK_ID"),
            "{e}"
        );
        let bad = |_: &str| Some("x".to_string());
        assert!(select(None, None, false, bad).is_err());
    }

    #[test]
    fn shards_count_from_zero() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        assert!(parse_shard("4/4").unwrap_err().contains("0/4 to 3/4"));
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("2").is_err());
    }
}
