//! `ackclock repro`: re-runs the seeds' experiments in the simulator and prints, for every
//! claim, the published number, ours, the tolerance and a verdict; writes an HTML report
//! with the plots.
//!
//! Each experiment is a scenario file under `scenarios/repro/` (embedded in the binary, so
//! the command needs no files, root or network) with `[[claim]]` tables, plus a module here
//! that varies the scenario, runs it and judges the claims. A disagreement is reported with
//! its reason, never tuned away.

use ackclock_sim::scenario::ClaimSpec;
use ackclock_sim::{build, RunResult, Scenario};
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

mod e01_startup;
mod e02_rto_timer;
mod e03_overload;
mod e04_four_conversations;
mod e05_satnet;
mod e06_satnet_trace;
mod e07_fast_recovery;
mod e08_fat_pipes;
mod e09_ethernet;
mod e10_ack_avoidance;
mod e11_aimd_fairness;
mod e12_gateways;
mod e13_buffer_sizing;
mod e14_units_of_work;
mod report;

/// The outcome of checking one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    /// Reported without a pass/fail judgement (a measurement the seed gives no number for).
    Info,
    /// We measure something else than published, and the report explains why the claim
    /// cannot hold as stated (or what model detail is missing). Not a failure of ackclock.
    Disagree,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Info => "report",
            Verdict::Disagree => "disagree",
        }
    }
    pub fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// One row of the claims table.
#[derive(Clone, Debug)]
pub struct ClaimResult {
    pub experiment: String,
    pub spec: ClaimSpec,
    /// Our number, formatted.
    pub ours: String,
    pub verdict: Verdict,
    /// Why it failed, or what to read into it.
    pub note: String,
}

/// A table in an experiment's section.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What an experiment contributes to the report.
#[derive(Clone, Debug, Default)]
pub struct Section {
    pub name: String,
    pub title: String,
    /// What the seed says, quoted briefly.
    pub quote: String,
    /// Where the quote is from (seed file and date, or paper and figure).
    pub quote_source: String,
    /// The setup, in a paragraph.
    pub setup: String,
    pub claims: Vec<ClaimResult>,
    pub tables: Vec<Table>,
    /// SVG files (in the experiment's output directory).
    pub plots: Vec<PathBuf>,
    /// Where we disagree and why; what model detail is missing.
    pub discussion: String,
}

/// What an experiment can use while it runs.
pub struct Ctx {
    pub quick: bool,
    /// Seeds per stochastic configuration.
    pub seeds: u64,
    /// This experiment's output directory.
    pub out: PathBuf,
    progress: Progress,
}

#[derive(Clone)]
struct Progress {
    bar: ProgressBar,
    done: std::sync::Arc<AtomicU64>,
}

impl Ctx {
    /// Runs scenarios in parallel (rayon), in order of the input; each run counts on the
    /// progress bar.
    pub fn run_all(&self, scenarios: Vec<Scenario>) -> Result<Vec<RunResult>> {
        self.run_map(scenarios, |_, r| r)
    }

    /// As [`run_all`](Self::run_all), keeping every link's queue-length samples (only the
    /// gateways experiment plots queues; the others do not pay for them).
    pub fn run_all_with_queues(&self, scenarios: Vec<Scenario>) -> Result<Vec<RunResult>> {
        self.run_inner(scenarios, true, |_, r| r)
    }

    /// Runs scenarios in parallel and reduces each result with `f` (given the scenario's
    /// index) as soon as its run ends: only what `f` keeps stays in memory, not every run's
    /// traces at once. Queue-length samples are not recorded.
    pub fn run_map<T: Send>(
        &self,
        scenarios: Vec<Scenario>,
        f: impl Fn(usize, RunResult) -> T + Sync + Send,
    ) -> Result<Vec<T>> {
        self.run_inner(scenarios, false, f)
    }

    fn run_inner<T: Send>(
        &self,
        scenarios: Vec<Scenario>,
        queues: bool,
        f: impl Fn(usize, RunResult) -> T + Sync + Send,
    ) -> Result<Vec<T>> {
        scenarios
            .into_par_iter()
            .enumerate()
            .map(|(i, mut s)| {
                s.output.queues = queues;
                let sim = build(&s, None).map_err(|e| anyhow!("{e}"))?;
                let r = sim.run(|_| {});
                let d = self.progress.done.fetch_add(1, Ordering::Relaxed) + 1;
                self.progress.bar.set_position(d);
                Ok(f(i, r))
            })
            .collect()
    }

    /// Runs one scenario, writing its pcap (if any) and CSV files into `self.out/name`.
    pub fn run_one(&self, s: &Scenario) -> Result<RunResult> {
        Ok(self.run_all(vec![s.clone()])?.remove(0))
    }
}

/// An experiment of the repro suite.
pub trait Experiment: Sync {
    fn name(&self) -> &'static str;
    fn title(&self) -> &'static str;
    /// The scenario file text (embedded).
    fn scenario(&self) -> &'static str;
    /// How many simulator runs it will make (for the progress bar).
    fn runs(&self, quick: bool, seeds: u64) -> u64;
    fn run(&self, ctx: &Ctx) -> Result<Section>;
}

/// Every experiment, in report order.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    let mut v: Vec<Box<dyn Experiment>> = vec![
        Box::new(e01_startup::Startup),
        Box::new(e07_fast_recovery::FastRecovery),
    ];
    v.push(Box::new(e02_rto_timer::RtoTimer));
    v.push(Box::new(e03_overload::Overload));
    v.push(Box::new(e04_four_conversations::FourConversations));
    v.push(Box::new(e11_aimd_fairness::AimdFairness));
    v.push(Box::new(e05_satnet::Satnet));
    v.push(Box::new(e06_satnet_trace::SatnetTrace));
    v.push(Box::new(e08_fat_pipes::FatPipes));
    v.push(Box::new(e13_buffer_sizing::BufferSizing));
    v.push(Box::new(e09_ethernet::Ethernet));
    v.push(Box::new(e10_ack_avoidance::AckAvoidance));
    v.push(Box::new(e12_gateways::Gateways));
    v.push(Box::new(e14_units_of_work::UnitsOfWork));
    v.sort_by_key(|e| {
        e.title()
            .split('.')
            .next()
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(99)
    });
    v
}

/// Parses an embedded scenario.
pub fn scenario(name: &str, text: &str) -> Result<Scenario> {
    Scenario::from_str_named(text, Path::new(&format!("scenarios/repro/{name}.toml")))
        .map_err(|e| anyhow!("{e}"))
}

/// The claim `id` of a scenario.
pub fn claim(s: &Scenario, id: &str) -> Result<ClaimSpec> {
    s.claim
        .iter()
        .find(|c| c.id == id)
        .cloned()
        .ok_or_else(|| anyhow!("scenario {:?} has no claim {id:?}", s.name))
}

/// A judged claim.
pub fn judged(
    s: &Scenario,
    experiment: &str,
    id: &str,
    ours: String,
    verdict: Verdict,
    note: impl Into<String>,
) -> Result<ClaimResult> {
    Ok(ClaimResult {
        experiment: experiment.to_string(),
        spec: claim(s, id)?,
        ours,
        verdict,
        note: note.into(),
    })
}

pub struct Options {
    pub out: PathBuf,
    pub only: Option<Vec<String>>,
    pub quick: bool,
    pub check: bool,
    pub seeds: u64,
}

/// `ackclock repro`.
pub fn run(opts: Options) -> Result<()> {
    let all = experiments();
    let chosen: Vec<&Box<dyn Experiment>> = match &opts.only {
        None => all.iter().collect(),
        Some(names) => {
            for n in names {
                if !all.iter().any(|e| e.name() == n) {
                    bail!(
                        "no experiment named {n:?}; the experiments are: {}",
                        all.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
                    );
                }
            }
            all.iter()
                .filter(|e| names.iter().any(|n| n == e.name()))
                .collect()
        }
    };
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let total: u64 = chosen.iter().map(|e| e.runs(opts.quick, opts.seeds)).sum();
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "repro [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let progress = Progress {
        bar: bar.clone(),
        done: Default::default(),
    };
    let started = std::time::Instant::now();
    let sections: Vec<Result<Section>> = chosen
        .par_iter()
        .map(|e| {
            let out = opts.out.join(e.name());
            std::fs::create_dir_all(&out)?;
            let ctx = Ctx {
                quick: opts.quick,
                seeds: opts.seeds,
                out,
                progress: progress.clone(),
            };
            // The scenario as embedded, so a reader can rerun or vary it with `ackclock sim`.
            std::fs::write(ctx.out.join("scenario.toml"), e.scenario())?;
            let mut s = e
                .run(&ctx)
                .with_context(|| format!("experiment {}", e.name()))?;
            s.name = e.name().to_string();
            if s.title.is_empty() {
                s.title = e.title().to_string();
            }
            Ok(s)
        })
        .collect();
    bar.finish_and_clear();
    let sections: Vec<Section> = sections.into_iter().collect::<Result<_>>()?;
    let table = report::text_table(&sections);
    print!("{table}");
    let index = opts.out.join("index.html");
    std::fs::write(
        &index,
        report::html(&sections, opts.quick, started.elapsed()),
    )
    .with_context(|| format!("cannot write {}", index.display()))?;
    // The claims table, whole and machine-readable (the printed table truncates columns).
    let claims_json = opts.out.join("claims.json");
    std::fs::write(&claims_json, claims_json_text(&sections)?)
        .with_context(|| format!("cannot write {}", claims_json.display()))?;
    let fails = sections
        .iter()
        .flat_map(|s| &s.claims)
        .filter(|c| c.verdict == Verdict::Fail)
        .count();
    let n = sections.iter().map(|s| s.claims.len()).sum::<usize>();
    println!(
        "\n{n} claims: {} pass, {fails} fail, {} disagree (explained), {} reported; {:.0} s; report: {}",
        sections
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == Verdict::Pass)
            .count(),
        sections
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == Verdict::Disagree)
            .count(),
        sections
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == Verdict::Info)
            .count(),
        started.elapsed().as_secs_f64(),
        index.display()
    );
    if opts.check && fails > 0 {
        bail!("{fails} claim(s) failed (see the FAIL rows above and the report)");
    }
    Ok(())
}

/// Every claim of every section as a JSON array: experiment, the claim's fields from its
/// scenario file, our number, the verdict word and the note.
fn claims_json_text(sections: &[Section]) -> Result<String> {
    let rows: Vec<serde_json::Value> = sections
        .iter()
        .flat_map(|s| &s.claims)
        .map(|c| {
            serde_json::json!({
                "experiment": c.experiment,
                "id": c.spec.id,
                "claim": c.spec.claim,
                "metric": c.spec.metric,
                "published": c.spec.published,
                "ackclock": c.ours,
                "tolerance": c.spec.tolerance,
                "verdict": c.verdict.word(),
                "source": c.spec.source,
                "note": c.note,
            })
        })
        .collect();
    Ok(serde_json::to_string_pretty(&rows)?)
}
