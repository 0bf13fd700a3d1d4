//! Ready-to-submit files for a plan: a Slurm array script, a GNU parallel script and a
//! Kubernetes Indexed Job. Each task's time and memory come from the predicted cost of its
//! runs (`ackclock_sim::cost`), with the margins below.

use crate::plan::{Entry, Plan, LOGS_DIR};
use anyhow::{bail, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Events per second of one core assumed for `--time`: ackclock does 2 to 6 million on
/// one core of a 2020s machine (BENCHMARKS.md); a cluster's cores may be older or shared.
pub const EVENTS_PER_SECOND: f64 = 1e6;
/// The time asked for is this many times the predicted time (the event prediction is
/// already on the high side), and at least [`MIN_TIME_S`].
pub const TIME_MARGIN: f64 = 2.0;
/// The least time asked for a task, seconds (a short run still waits in queues and starts a process).
pub const MIN_TIME_S: f64 = 300.0;
/// The memory asked for is this many times the predicted memory, plus [`BASE_MEMORY`] for
/// the process itself (code, allocator, threads: a small run peaks at 10 to 20 MiB).
pub const MEMORY_MARGIN: f64 = 1.5;
/// Memory asked for the process itself on top of the predicted, bytes.
pub const BASE_MEMORY: f64 = 64.0 * 1024.0 * 1024.0;
/// Array tasks or pods at once when `--max-parallel` is not given: a share of a cluster
/// that leaves room for others (Slurm and Kubernetes themselves set no limit).
pub const DEFAULT_MAX_PARALLEL: usize = 50;
/// Slurm's default MaxArraySize is 1001, so an array of more tasks is refused there.
pub const SLURM_MAX_ARRAY: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
/// A scheduler a plan's runs can be submitted to.
pub enum Backend {
    /// an sbatch job-array script: slurm.sbatch
    Slurm,
    /// a GNU parallel script: parallel.sh
    Parallel,
    /// a Kubernetes Indexed Job: k8s-job.yaml
    K8s,
}

impl Backend {
    /// The file it is written to in the plan directory.
    pub fn file(self) -> &'static str {
        match self {
            Backend::Slurm => "slurm.sbatch",
            Backend::Parallel => "parallel.sh",
            Backend::K8s => "k8s-job.yaml",
        }
    }
}

/// How the emitted files ask for resources.
pub struct Options {
    /// Tasks at once (Slurm's array throttle, Kubernetes' parallelism, GNU parallel's jobs); default [`DEFAULT_MAX_PARALLEL`], or one per core for GNU parallel.
    pub max_parallel: Option<usize>,
    /// Runs per Slurm array task (1: one task per run).
    pub runs_per_task: usize,
    /// The container image of the Kubernetes job.
    pub image: String,
}

/// The time and memory one task needs, from the predicted cost of its runs (run one after
/// another): seconds and MiB.
pub fn task_limits(runs: &[&Entry]) -> (u64, u64) {
    let events: f64 = runs.iter().map(|e| e.predicted_events as f64).sum();
    let memory = runs
        .iter()
        .map(|e| e.predicted_memory_bytes as f64)
        .fold(0.0, f64::max);
    let secs = (events / EVENTS_PER_SECOND * TIME_MARGIN).max(MIN_TIME_S);
    let mib = (memory * MEMORY_MARGIN + BASE_MEMORY) / (1024.0 * 1024.0);
    (secs.ceil() as u64, mib.ceil() as u64)
}

/// The name of the sweep for jobs: its directory's name, as a DNS label (Kubernetes
/// names are lowercase letters, digits and '-').
fn job_name(plan: &Plan) -> String {
    let dir = std::fs::canonicalize(&plan.dir).unwrap_or_else(|_| plan.dir.clone());
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_else(|| "sweep".into());
    let mut name: String = format!("ackclock-sweep-{base}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name.truncate(63);
    name.trim_end_matches('-').to_string()
}

fn dir_name(plan: &Plan) -> String {
    std::fs::canonicalize(&plan.dir)
        .unwrap_or_else(|_| plan.dir.clone())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into())
}

/// Writes the files of `backends` into the plan directory; returns their paths.
pub fn emit(plan: &Plan, backends: &[Backend], opts: &Options) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for &b in backends {
        let text = match b {
            Backend::Slurm => slurm(plan, opts)?,
            Backend::Parallel => parallel(plan, opts),
            Backend::K8s => k8s(plan, opts),
        };
        let path = plan.dir.join(b.file());
        std::fs::write(&path, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        if b == Backend::Parallel {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
        written.push(path);
    }
    Ok(written)
}

fn minutes(secs: u64) -> u64 {
    secs.div_ceil(60)
}

/// The sbatch job-array script: one array task per `runs_per_task` runs, each asking for its runs' predicted time and memory.
pub fn slurm(plan: &Plan, opts: &Options) -> Result<String> {
    let n = plan.entries.len();
    let per = opts.runs_per_task.max(1);
    let tasks = n.div_ceil(per);
    if tasks > SLURM_MAX_ARRAY {
        bail!(
            "{n} runs make {tasks} Slurm array tasks, more than the {SLURM_MAX_ARRAY} of Slurm's default MaxArraySize; add --runs-per-task {} (or more)",
            n.div_ceil(SLURM_MAX_ARRAY)
        );
    }
    // Task k runs shard k/tasks (every tasks-th run from k), one run after another.
    let (mut secs, mut mib) = (0, 0);
    for k in 0..tasks {
        let runs: Vec<&Entry> = plan
            .entries
            .iter()
            .filter(|e| e.index % tasks == k)
            .collect();
        let (s, m) = task_limits(&runs);
        secs = secs.max(s);
        mib = mib.max(m);
    }
    let throttle = opts.max_parallel.unwrap_or(DEFAULT_MAX_PARALLEL);
    let run = if per == 1 {
        // The index comes from SLURM_ARRAY_TASK_ID, which `sweep run` reads itself.
        "exec \"${ACKCLOCK:-ackclock}\" sweep run . --jobs 1".to_string()
    } else {
        format!("exec \"${{ACKCLOCK:-ackclock}}\" sweep run . --jobs 1 --shard \"$SLURM_ARRAY_TASK_ID/{tasks}\"")
    };
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# ackclock sweep of {} ({n} runs): a Slurm job array, {} at a time.",
        plan.header.source, throttle
    );
    let _ = writeln!(s, "# Submit from this directory:  sbatch slurm.sbatch");
    let _ = writeln!(s, "# When it is done:             ackclock sweep collect .");
    let _ = writeln!(
        s,
        "# Array indexes count from 0; task k runs {}.",
        if per == 1 {
            format!("run k of manifest.jsonl (runs 0 to {})", n - 1)
        } else {
            format!(
                "shard k/{tasks}: the runs whose index is k modulo {tasks}, up to {per} of them"
            )
        }
    );
    let _ = writeln!(
        s,
        "# --time is the predicted events of a task at {:.0e} events/s, times {TIME_MARGIN}, at least {} min;",
        EVENTS_PER_SECOND,
        MIN_TIME_S as u64 / 60
    );
    let _ = writeln!(
        s,
        "# --mem is {MEMORY_MARGIN} times its heaviest run's predicted memory plus {} MiB.",
        BASE_MEMORY as u64 >> 20
    );
    let _ = writeln!(
        s,
        "# Options on the sbatch command line override these (e.g. sbatch -p PARTITION -A ACCOUNT)."
    );
    let _ = writeln!(s, "#SBATCH --job-name={}", job_name(plan));
    let _ = writeln!(s, "#SBATCH --array=0-{}%{throttle}", tasks - 1);
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
    let _ = writeln!(s, "#SBATCH --time={}", minutes(secs));
    let _ = writeln!(s, "#SBATCH --mem={mib}M");
    let _ = writeln!(s, "#SBATCH --output={LOGS_DIR}/%A_%a.out");
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(
        s,
        "[ -f manifest.jsonl ] || {{ echo \"run sbatch from the sweep's directory (it has manifest.jsonl)\" >&2; exit 2; }}"
    );
    let _ = writeln!(s, "{run}");
    Ok(s)
}

/// The GNU parallel script: every run not yet done, `max_parallel` at once.
pub fn parallel(plan: &Plan, opts: &Options) -> String {
    let n = plan.entries.len();
    let jobs = opts
        .max_parallel
        .map_or("100%".to_string(), |m| m.to_string());
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/sh");
    let _ = writeln!(
        s,
        "# ackclock sweep of {} ({n} runs) with GNU parallel: sh parallel.sh (from any directory).",
        plan.header.source
    );
    let _ = writeln!(
        s,
        "# {{}} is the run index, 0 to {} (indexes count from 0 everywhere; parallel's {{#}} counts",
        n - 1
    );
    let _ = writeln!(
        s,
        "# from 1 and is not used). The joblog lets a second call retry only the failed and unstarted"
    );
    let _ = writeln!(
        s,
        "# indexes; ackclock also skips runs whose result is there. Add --sshloginfile FILE to use"
    );
    let _ = writeln!(
        s,
        "# other machines that see this directory at the same path and have the same ackclock."
    );
    let _ = writeln!(s, "set -u");
    let _ = writeln!(s, "cd \"$(dirname \"$0\")\" || exit 2");
    let _ = writeln!(s, "status=0");
    let _ = writeln!(
        s,
        "seq 0 {} | parallel --jobs {jobs} --joblog parallel.joblog --resume-failed \\",
        n - 1
    );
    let _ = writeln!(
        s,
        "    \"${{ACKCLOCK:-ackclock}}\" sweep run . --index {{}} || status=$?"
    );
    let _ = writeln!(
        s,
        "\"${{ACKCLOCK:-ackclock}}\" sweep collect . || status=$?"
    );
    let _ = writeln!(s, "exit $status");
    s
}

/// A YAML double-quoted string (JSON's string syntax is a subset of it).
fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The Kubernetes Indexed Job: one completion index per run, the plan directory as a volume.
pub fn k8s(plan: &Plan, opts: &Options) -> String {
    let n = plan.entries.len();
    let all: Vec<&Entry> = plan.entries.iter().collect();
    // One run per pod: every pod gets the heaviest run's limits.
    let (mut secs, mut mib) = (0, 0);
    for e in &all {
        let (s, m) = task_limits(&[e]);
        secs = secs.max(s);
        mib = mib.max(m);
    }
    let parallelism = opts.max_parallel.unwrap_or(DEFAULT_MAX_PARALLEL).min(n);
    let workdir = format!("/sweep/{}", dir_name(plan));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# ackclock sweep of {} ({n} runs): a Kubernetes Indexed Job, one run per pod.",
        plan.header.source
    );
    let _ = writeln!(
        s,
        "# Put this directory on the volume claimed below, at {workdir}; build the image with the"
    );
    let _ = writeln!(
        s,
        "# repository's Dockerfile (docker build -t {} .) and push it where the cluster pulls from.",
        opts.image
    );
    let _ = writeln!(
        s,
        "# Submit: kubectl apply -f k8s-job.yaml. When it completes: ackclock sweep collect DIR."
    );
    let _ = writeln!(
        s,
        "# Pods read their run index from JOB_COMPLETION_INDEX (0 to {}); backoffLimitPerIndex",
        n - 1
    );
    let _ = writeln!(
        s,
        "# needs Kubernetes 1.29 or later. Limits: the heaviest run's predicted cost, as in slurm.sbatch."
    );
    let _ = writeln!(s, "apiVersion: batch/v1");
    let _ = writeln!(s, "kind: Job");
    let _ = writeln!(s, "metadata:");
    let _ = writeln!(s, "  name: {}", job_name(plan));
    let _ = writeln!(s, "spec:");
    let _ = writeln!(s, "  completionMode: Indexed");
    let _ = writeln!(s, "  completions: {n}");
    let _ = writeln!(s, "  parallelism: {parallelism}");
    let _ = writeln!(s, "  backoffLimitPerIndex: 2");
    let _ = writeln!(s, "  template:");
    let _ = writeln!(s, "    spec:");
    let _ = writeln!(s, "      restartPolicy: Never");
    let _ = writeln!(s, "      activeDeadlineSeconds: {secs}");
    let _ = writeln!(s, "      containers:");
    let _ = writeln!(s, "        - name: ackclock");
    let _ = writeln!(s, "          image: {}", q(&opts.image));
    let _ = writeln!(s, "          workingDir: {}", q(&workdir));
    let _ = writeln!(
        s,
        "          command: [\"ackclock\", \"sweep\", \"run\", \".\", \"--jobs\", \"1\"]"
    );
    let _ = writeln!(s, "          resources:");
    let _ = writeln!(s, "            requests:");
    let _ = writeln!(s, "              cpu: \"1\"");
    let _ = writeln!(s, "              memory: {mib}Mi");
    let _ = writeln!(s, "            limits:");
    let _ = writeln!(s, "              memory: {mib}Mi");
    let _ = writeln!(s, "          volumeMounts:");
    let _ = writeln!(s, "            - name: sweep");
    let _ = writeln!(s, "              mountPath: /sweep");
    let _ = writeln!(s, "      volumes:");
    let _ = writeln!(s, "        - name: sweep");
    let _ = writeln!(s, "          persistentVolumeClaim:");
    let _ = writeln!(s, "            claimName: ackclock-sweep");
    s
}
