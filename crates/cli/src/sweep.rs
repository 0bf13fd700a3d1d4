//! `ackclock sweep`: the arguments of a sweep on this machine's cores and of `sweep plan`,
//! `run` and `collect`; the sweeps themselves are `ackclock-sweep`'s.

use crate::sim_cmd::{parse_count, BudgetArgs};
use ackclock_sweep::plan::Param;
use ackclock_sweep::{collect, emit, plot, run};
use anyhow::Result;
use std::path::PathBuf;

/// `ackclock sweep`: the local sweep's arguments, or a subcommand.
#[derive(clap::Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "\
Examples:
  ackclock sweep scenarios/red_vs_droptail.toml --seeds 4    # replications: one run per RNG seed
  ackclock sweep scenarios/red_vs_droptail.toml --param topology.bottleneck.queue.kind=drop_tail,red --param topology.pairs=2,4,8 --seeds 2 --out sw --plot total_goodput_bps,jain_fairness
  ackclock sweep plan scenarios/dumbbell.toml --param topology.pairs=2,8 --seeds 10 --out sw --emit slurm

Values are written as the scenario file writes them (its fields carry their units, e.g.
rate_bps=1.5e6, delay_ms=25). To run a sweep on other machines (Slurm, GNU parallel,
Kubernetes): `sweep plan` writes the runs into a directory, `sweep run` runs them there and
`sweep collect` writes the same sweep.csv; see each one's --help. (A scenario file named
plan, run or collect must be written ./plan.)"
)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub command: Option<SweepCommand>,
    /// Scenario file (TOML).
    #[arg(required = true)]
    pub scenario: Option<PathBuf>,
    /// PATH=V1,V2,... where PATH is a dotted path into the scenario (array entries by
    /// index), e.g. --param link.0.queue.limit_pkts=8,16,32. Repeat for a cross product.
    /// Without it, `--seeds N` alone replicates the scenario N times. `--param seed=V1,V2`
    /// sets the seeds: every combination runs seeds V1, V2, ... (with --seeds N: V, V+1, ...,
    /// V+N-1 for each value), and the seed column says which.
    #[arg(long = "param")]
    pub params: Vec<Param>,
    /// Runs per combination, with seeds seed, seed+1, ... (seed: the scenario's, or each
    /// value of --param seed=...)
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    pub seeds: u64,
    /// Output directory (default: `out/sweep/<scenario name>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub plot: PlotArgs,
    /// Refuse a sweep of more runs than this, counted before any is made.
    #[arg(long, value_name = "N", default_value = "1000000", value_parser = parse_count)]
    pub max_runs: u64,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(clap::Subcommand, Debug)]
pub enum SweepCommand {
    /// Write a sweep's runs into a directory that `sweep run` runs anywhere (--emit: the
    /// files that submit it to Slurm, GNU parallel or Kubernetes).
    ///
    /// The directory holds manifest.jsonl (one line per run: its index, content-hash id,
    /// overrides, seed and predicted cost), scenario.toml (the scenario file as given) and
    /// plan.json; results/ and logs/ are filled by the runs.
    #[command(after_help = "\
Examples:
  ackclock sweep plan scenarios/dumbbell.toml --param topology.pairs=2,8 --seeds 10 --out sw
  ackclock sweep plan scenarios/red_vs_droptail.toml --param topology.bottleneck.queue.kind=drop_tail,red --seeds 50 --out sw --emit slurm,parallel,k8s --max-parallel 20

The plan directory is self-contained: copy it to the cluster, run `sweep run` on each index
there (the emitted files do), copy it back or collect there. Slurm's --time and --mem per
task come from the predicted cost of its runs: the events at 1 million per second, doubled,
at least 5 minutes; 1.5 times the memory plus 64 MiB.")]
    Plan(PlanArgs),
    /// Run one run, a shard or all runs of a plan directory, skipping those already done.
    ///
    /// One run is chosen by --index, or by the index Slurm or a Kubernetes Indexed Job sets.
    /// Results are written whole or not at all (a temporary file, then a rename), so running
    /// again after a failure or a kill resumes the sweep without redoing finished runs.
    #[command(after_help = "\
Examples:
  ackclock sweep run sw --index 0                 # run 0 of the manifest (indexes from 0)
  ackclock sweep run sw --shard 1/4 --jobs 2      # runs 1, 5, 9, ... two at a time
  ackclock sweep run sw --all                     # everything not yet done, on all cores

Without --index, --shard or --all the index is read from SLURM_ARRAY_TASK_ID (Slurm job
arrays, --array=0-(N-1)), then JOB_COMPLETION_INDEX (Kubernetes Indexed Jobs, from 0).
Each run writes results/<id>.json (or results/<id>.failed.json).")]
    Run(RunArgs),
    /// Merge a plan's results into sweep.csv, the same bytes a local `ackclock sweep` writes.
    ///
    /// If any run has no result, sweep.csv is not written: each such run is named by index
    /// and id, and the exit status is 1.
    #[command(after_help = "\
Examples:
  ackclock sweep collect sw                       # writes sw/sweep.csv
  ackclock sweep collect sw --plot total_goodput_bps,queue_drops   # and sw/sweep-<column>.svg")]
    Collect(CollectArgs),
}

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// Scenario file (TOML).
    pub scenario: PathBuf,
    /// PATH=V1,V2,... as for `ackclock sweep`; repeat for a cross product. Without it,
    /// `--seeds N` alone plans N replications of the scenario; `--param seed=V1,V2` sets
    /// the seeds, as for `ackclock sweep`.
    #[arg(long = "param")]
    pub params: Vec<Param>,
    /// Runs per combination, with seeds seed, seed+1, ...
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    pub seeds: u64,
    /// The plan directory (default: `out/sweep/<scenario name>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write the files that run the plan: slurm (slurm.sbatch), parallel (parallel.sh),
    /// k8s (k8s-job.yaml); comma separated.
    #[arg(long, value_delimiter = ',', value_enum)]
    pub emit: Vec<emit::Backend>,
    /// Runs at once: Slurm's array throttle %M and Kubernetes' parallelism (default 50),
    /// GNU parallel's --jobs (default one per core).
    #[arg(long, value_name = "M", value_parser = parse_small_count)]
    pub max_parallel: Option<usize>,
    /// Runs per Slurm array task, one after another (for sweeps of more than 1000 runs,
    /// the largest array Slurm takes by default).
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = parse_small_count)]
    pub runs_per_task: usize,
    /// Container image of the Kubernetes job (built by the repository's Dockerfile).
    #[arg(long, default_value = concat!("ackclock:", env!("CARGO_PKG_VERSION")))]
    pub image: String,
    /// Refuse a sweep of more runs than this, counted before any is made.
    #[arg(long, value_name = "N", default_value = "1000000", value_parser = parse_count)]
    pub max_runs: u64,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The plan directory (written by `ackclock sweep plan`).
    pub dir: PathBuf,
    /// Run this run of the manifest (from 0).
    #[arg(long, value_name = "I", conflicts_with_all = ["shard", "all"])]
    pub index: Option<usize>,
    /// Run shard K of N (K from 0): the runs whose index is K modulo N.
    #[arg(long, value_name = "K/N", value_parser = run::parse_shard, conflicts_with = "all")]
    pub shard: Option<(usize, usize)>,
    /// Run every run not yet done.
    #[arg(long)]
    pub all: bool,
    /// Runs at once (default: the cores this process may use).
    #[arg(long, value_name = "N", value_parser = parse_small_count)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

#[derive(clap::Args, Debug)]
pub struct CollectArgs {
    /// The plan directory (written by `ackclock sweep plan`).
    pub dir: PathBuf,
    #[command(flatten)]
    pub plot: PlotArgs,
}

/// `--plot` and its axis, of a local sweep and of `sweep collect`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// After sweep.csv, draw these metric columns (comma separated), each into
    /// sweep-COLUMN.svg, .png and .html beside it: against the first swept parameter whose
    /// values are all numbers, a line per combination of the others, the mean over seeds
    /// with bars from min to max. Refused before any run if no swept parameter is numeric.
    #[arg(long, value_name = "COLUMN", value_delimiter = ',', value_parser = plot::parse_column)]
    pub plot: Vec<String>,
    /// A log x axis (default: log when every x > 0 and the largest is 100 times the smallest).
    #[arg(long, requires = "plot", conflicts_with = "plot_linear_x")]
    pub plot_log_x: bool,
    /// A linear x axis, whatever the values.
    #[arg(long, requires = "plot")]
    pub plot_linear_x: bool,
}

impl PlotArgs {
    fn options(self) -> plot::Options {
        let log_x = (self.plot_log_x || self.plot_linear_x).then_some(self.plot_log_x);
        plot::Options {
            columns: self.plot,
            log_x,
        }
    }
}

/// A count of at least 1 that fits a usize.
fn parse_small_count(s: &str) -> std::result::Result<usize, String> {
    let n = parse_count(s)?;
    usize::try_from(n).map_err(|_| format!("{s:?}: too large"))
}

pub fn run(args: SweepArgs) -> Result<()> {
    match args.command {
        None => {
            let scenario = args
                .scenario
                .expect("clap requires SCENARIO without a subcommand");
            ackclock_sweep::local(
                &scenario,
                &args.params,
                args.seeds,
                args.out,
                &args.budget.budget(),
                args.max_runs,
                &args.plot.options(),
            )
        }
        Some(SweepCommand::Plan(a)) => ackclock_sweep::plan_dir(
            &a.scenario,
            &a.params,
            a.seeds,
            a.out,
            &a.emit,
            &emit::Options {
                max_parallel: a.max_parallel,
                runs_per_task: a.runs_per_task,
                image: a.image,
            },
            &a.budget.budget(),
            a.max_runs,
        ),
        Some(SweepCommand::Run(a)) => {
            let (selection, source) =
                run::select(a.index, a.shard, a.all, |v| std::env::var(v).ok())?;
            let jobs = a
                .jobs
                .unwrap_or_else(|| rayon::current_num_threads().max(1));
            run::run(&a.dir, selection, &source, jobs, &a.budget.budget())
        }
        Some(SweepCommand::Collect(a)) => collect::collect(&a.dir, &a.plot.options()),
    }
}
