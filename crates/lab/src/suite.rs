//! The suite: the experiment trait, what an experiment may use while it runs ([`Ctx`]), what
//! it returns ([`Section`], [`ClaimResult`]), and [`run`], which runs the chosen experiments
//! in parallel and writes the report.

use crate::claims::{ClaimSpec, Judge};
use crate::experiments::experiments;
use crate::report;
use crate::text::Text;
use ackclock_sim::{build, RunResult, Scenario};
use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Where an experiment runs: its output directory and the progress bar's counter.
pub struct Ctx<'a> {
    /// This experiment's output directory.
    pub out: PathBuf,
    /// Counts one finished simulator run.
    tick: &'a (dyn Fn() + Sync),
}

impl Ctx<'_> {
    /// Runs scenarios in parallel (rayon) and reduces each result with `f` (given the
    /// scenario's index) as soon as its run ends: only what `f` keeps stays in memory, not
    /// every run's traces at once. Each run counts on the progress bar; queue-length samples
    /// are recorded only with `queues`. Results come in the order of the input.
    pub(crate) fn run_inner<T: Send>(
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
                (self.tick)();
                Ok(f(i, r))
            })
            .collect()
    }
}

/// The fixed inputs of a run of the suite that an experiment sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// The shortened variant (for CI and the snapshot test).
    pub quick: bool,
    /// Seeds per stochastic configuration.
    pub seeds: u64,
}

/// An experiment's files, embedded in the binary (`include_str!` of the files in its
/// directory), so `ackclock repro` needs no file at run time.
#[derive(Clone, Copy, Debug)]
pub struct Files {
    /// The experiment's directory under `crates/lab/src/experiments/` (for messages).
    pub dir: &'static str,
    /// The base scenario, also written next to the experiment's plots so `ackclock sim`
    /// can rerun it.
    pub scenario: &'static str,
    /// The `[[claim]]` tables: what the seed or paper says (see [`crate::claims`]).
    pub claims: &'static str,
    /// The prose (see [`crate::text`]).
    pub text: &'static str,
}

/// What the render phase adds to the section (the title, the quote and its source come
/// from `text.md` as they are).
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub setup: String,
    pub tables: Vec<Table>,
    /// SVG files written into the experiment's output directory.
    pub plots: Vec<PathBuf>,
    pub discussion: String,
}

/// An experiment in four phases, as ns-3 splits a study into configuring, running and
/// analysing, so each phase can be read and tested alone:
///
/// 1. [`plan`](Self::plan): the scenarios to run, all of them, from the base scenario;
/// 2. measure: the suite runs them in parallel and hands each result to
///    [`reduce`](Self::reduce) as it ends (so only what the experiment keeps stays in memory),
///    then [`measure`](Self::measure) combines the reduced runs into the measurements;
/// 3. [`judge`](Self::judge): each claim of `claims.toml` against the measurements;
/// 4. [`render`](Self::render): the setup, tables, plots and discussion of the report.
///
/// The quick snapshot test runs phases 1 to 3 only.
pub trait Experiment: Sync {
    /// What one run is reduced to.
    type Run: Send;
    /// Everything the experiment measured.
    type Measured: Sync;

    /// The name `--only` takes and the report's anchor.
    fn name(&self) -> &'static str;
    fn files(&self) -> Files;
    /// Whether the runs record queue-length samples (only plots of queues need them).
    fn records_queues(&self) -> bool {
        false
    }
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>>;
    fn reduce(&self, p: Params, index: usize, run: RunResult) -> Result<Self::Run>;
    fn measure(&self, p: Params, runs: Vec<Self::Run>) -> Result<Self::Measured>;
    fn judge(&self, p: Params, m: &Self::Measured, text: &Text, j: &mut Judge) -> Result<()>;
    fn render(&self, p: Params, m: &Self::Measured, text: &Text, out: &Path) -> Result<Rendered>;
}

/// What the suite runner needs of any experiment (object safe; implemented for every
/// [`Experiment`]).
pub trait Runnable: Sync {
    fn name(&self) -> &'static str;
    fn title(&self) -> Result<String>;
    /// The base scenario's text.
    fn scenario_text(&self) -> &'static str;
    /// How many simulator runs it will make.
    fn planned_runs(&self, p: Params) -> Result<u64>;
    /// Runs the experiment; without `render`, the section has the claims only.
    fn run(&self, p: Params, ctx: &Ctx, render: bool) -> Result<Section>;
}

impl<E: Experiment> Runnable for E {
    fn name(&self) -> &'static str {
        Experiment::name(self)
    }
    fn title(&self) -> Result<String> {
        text_of(&self.files())?.get("title")
    }
    fn scenario_text(&self) -> &'static str {
        self.files().scenario
    }
    fn planned_runs(&self, p: Params) -> Result<u64> {
        Ok(self.plan(p, &base_scenario(&self.files())?)?.len() as u64)
    }
    fn run(&self, p: Params, ctx: &Ctx, render: bool) -> Result<Section> {
        let files = self.files();
        let text = text_of(&files)?;
        let specs = crate::claims::parse(files.dir, files.claims)?;
        let plan = self.plan(p, &base_scenario(&files)?)?;
        let reduced = ctx.run_inner(plan, self.records_queues(), |i, r| self.reduce(p, i, r))?;
        let runs = reduced.into_iter().collect::<Result<Vec<_>>>()?;
        let m = self.measure(p, runs)?;
        let mut judge = Judge::new(Experiment::name(self), &specs);
        self.judge(p, &m, &text, &mut judge)?;
        let claims = judge.finish()?;
        let mut section = Section {
            name: Experiment::name(self).to_string(),
            title: text.get("title")?,
            claims,
            ..Section::default()
        };
        if render {
            let r = self.render(p, &m, &text, &ctx.out)?;
            section.quote = text.get("quote")?;
            section.quote_source = text.get("quote_source")?;
            section.setup = r.setup;
            section.tables = r.tables;
            section.plots = r.plots;
            section.discussion = r.discussion;
        }
        Ok(section)
    }
}

fn text_of(files: &Files) -> Result<Text> {
    Text::parse(files.dir, files.text)
}

fn base_scenario(files: &Files) -> Result<Scenario> {
    Scenario::from_str_named(
        files.scenario,
        Path::new(&format!("{}/scenario.toml", files.dir)),
    )
    .map_err(|e| anyhow!("{e}"))
}

/// What to run.
pub struct Options {
    /// Output directory: `index.html`, `claims.json` and one directory per experiment.
    pub out: PathBuf,
    /// Only these experiments (by [`Experiment::name`]); `None`: all.
    pub only: Option<Vec<String>>,
    /// The shortened variant of each experiment.
    pub quick: bool,
    /// Seeds per stochastic configuration.
    pub seeds: u64,
    /// Render each section (tables, plots, prose); without, only the claims are judged.
    pub render: bool,
}

impl Options {
    fn params(&self) -> Params {
        Params {
            quick: self.quick,
            seeds: self.seeds,
        }
    }
}

/// What a run of the suite produced (the files are written already).
pub struct Outcome {
    pub sections: Vec<Section>,
    /// The self-contained HTML report.
    pub index: PathBuf,
    /// Every claim, machine-readable.
    pub claims_json: PathBuf,
    pub took: std::time::Duration,
}

impl Outcome {
    /// Every judged claim, in report order.
    pub fn claims(&self) -> impl Iterator<Item = &ClaimResult> {
        self.sections.iter().flat_map(|s| &s.claims)
    }

    /// How many claims got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.claims().filter(|c| c.verdict == verdict).count()
    }

    /// The claims table as aligned text.
    pub fn text_table(&self) -> String {
        report::text_table(&self.sections)
    }

    /// One line: how many claims, per verdict, the time and where the report is.
    pub fn summary_line(&self) -> String {
        format!(
            "{} claims: {} pass, {} fail, {} disagree (explained), {} reported; {:.0} s; report: {}",
            self.claims().count(),
            self.count(Verdict::Pass),
            self.count(Verdict::Fail),
            self.count(Verdict::Disagree),
            self.count(Verdict::Info),
            self.took.as_secs_f64(),
            self.index.display()
        )
    }
}

/// The experiments `only` names (all when `None`), in report order; an unknown name is an
/// error that lists the known ones.
pub fn select(only: Option<&[String]>) -> Result<Vec<Box<dyn Runnable>>> {
    let all = experiments();
    let Some(names) = only else {
        return Ok(all);
    };
    for n in names {
        if !all.iter().any(|e| e.name() == n) {
            bail!(
                "no experiment named {n:?}; the experiments are: {}",
                all.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|e| names.iter().any(|n| n == e.name()))
        .collect())
}

/// How many simulator runs [`run`] will make with these options (for a progress bar).
pub fn planned_runs(opts: &Options) -> Result<u64> {
    let p = opts.params();
    select(opts.only.as_deref())?
        .iter()
        .map(|e| e.planned_runs(p))
        .sum()
}

/// Runs the chosen experiments in parallel, writes the report (`index.html`), `claims.json`
/// and each experiment's files under `opts.out`. `progress(done)` is called from the worker
/// threads each time a simulator run ends, with the number of runs ended so far.
pub fn run(opts: &Options, progress: &(dyn Fn(u64) + Sync)) -> Result<Outcome> {
    let chosen = select(opts.only.as_deref())?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let done = AtomicU64::new(0);
    let tick = move || progress(done.fetch_add(1, Ordering::Relaxed) + 1);
    let started = std::time::Instant::now();
    let sections: Vec<Result<Section>> = chosen
        .par_iter()
        .map(|e| {
            let out = opts.out.join(e.name());
            std::fs::create_dir_all(&out)?;
            let ctx = Ctx { out, tick: &tick };
            // The scenario as embedded, so a reader can rerun or vary it with `ackclock sim`.
            std::fs::write(ctx.out.join("scenario.toml"), e.scenario_text())?;
            e.run(opts.params(), &ctx, opts.render)
                .with_context(|| format!("experiment {}", e.name()))
        })
        .collect();
    let sections: Vec<Section> = sections.into_iter().collect::<Result<_>>()?;
    let took = started.elapsed();
    let index = opts.out.join("index.html");
    std::fs::write(&index, report::html(&sections, opts.quick, took))
        .with_context(|| format!("cannot write {}", index.display()))?;
    // The claims table, whole and machine-readable (the printed table truncates columns).
    let claims_json = opts.out.join("claims.json");
    std::fs::write(&claims_json, claims_json_text(&sections)?)
        .with_context(|| format!("cannot write {}", claims_json.display()))?;
    Ok(Outcome {
        sections,
        index,
        claims_json,
        took,
    })
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
