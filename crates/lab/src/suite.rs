//! The suite: the experiment trait, what an experiment may use while it runs ([`Ctx`]), what
//! it returns ([`Section`], [`ClaimResult`]), and [`run`], which runs the chosen experiments
//! in parallel and writes the report.

use crate::claims::{ClaimSpec, Judge};
use crate::experiments::experiments;
use crate::plots::Chart;
use crate::report;
use crate::runinfo::{self, Machine, RngSeeds, RunInfo};
use crate::text::Text;
use ackclock_sim::{build, RunResult, Scenario};
use anyhow::{anyhow, bail, Context, Result};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// The outcome of checking one claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Our number is within the claim's tolerance (inside its band, where it has one).
    Pass,
    /// Our number is outside the tolerance: a failure of ackclock, its reason in the note.
    /// `ackclock repro --check` fails when any claim has it.
    Fail,
    /// Reported without a pass/fail judgement (a measurement the seed message gives no number for).
    Info,
    /// We measure something else than published, and the report explains why the claim
    /// cannot hold as stated (or what model detail is missing). Not a failure of ackclock.
    Disagree,
    /// Not judged in this run: the runs it needs are made in the full run only.
    Skip,
}

impl Verdict {
    /// The verdict in the tables and the summary: `pass`, `FAIL`, `disagree`, `report` or
    /// `skip`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Info => "report",
            Verdict::Disagree => "disagree",
            Verdict::Skip => "skip",
        }
    }
    /// What the verdict means, in a sentence (the report defines each verdict with it, as
    /// the README's "Run" section does).
    pub fn meaning(self) -> &'static str {
        match self {
            Verdict::Pass => "ours is within the stated tolerance of the published number or range",
            Verdict::Fail => "ours is outside the tolerance, and nothing explains it: a bug, in ackclock or in the claim's measurement",
            Verdict::Disagree => "we measured something else, and the claim's note and the experiment's discussion say why (a model detail we lack, or a claim that cannot hold as stated); not a failure",
            Verdict::Info => "a number with no published target to hold it to, reported without a judgement",
            Verdict::Skip => "not judged in this run (its runs are made in a full run only)",
        }
    }
    /// Every verdict, in the order the summary counts them.
    pub const ALL: [Verdict; 5] = [
        Verdict::Pass,
        Verdict::Fail,
        Verdict::Disagree,
        Verdict::Info,
        Verdict::Skip,
    ];
    /// The verdict in `claims.json`: `pass`, `fail`, `disagree` or `report`.
    pub fn key(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Info => "report",
            Verdict::Disagree => "disagree",
            Verdict::Skip => "skip",
        }
    }
    /// Pass when `ok`, else fail.
    pub fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
    /// Pass, or where it does not hold, a disagreement (which the report explains).
    pub fn pass_or_disagree(ok: bool) -> Verdict {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Disagree
        }
    }
}

/// One row of the claims table.
#[derive(Clone, Debug)]
pub struct ClaimResult {
    /// The experiment's name ([`Experiment::name`]).
    pub experiment: String,
    /// The claim as its `claims.toml` states it.
    pub spec: ClaimSpec,
    /// Our number, formatted (with whatever context the experiment adds).
    pub ours: String,
    /// Our number as a number, in the claim's unit, when the claim has one number.
    pub value: Option<f64>,
    /// How our number stands against the claim.
    pub verdict: Verdict,
    /// Why it failed, or what to read into it.
    pub note: String,
}

/// A table in an experiment's section.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// Shown above the table: what its rows are and how they were measured.
    pub caption: String,
    /// The column headings.
    pub header: Vec<String>,
    /// The rows, each a list of cells in the header's order.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A header row of these words.
    pub fn header(words: &[&str]) -> Vec<String> {
        words.iter().map(|s| s.to_string()).collect()
    }
}

/// A figure of an experiment's section: its SVG file (in the experiment's output
/// directory), the title drawn in it, and the caption the report shows under it, saying
/// what to look at.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    /// The SVG file; the PNG is beside it with the same stem.
    pub file: PathBuf,
    /// The title drawn at the top of the figure.
    pub title: String,
    /// Shown under the figure in the report: what to look at (from `text.md`).
    pub caption: String,
    /// The x and y ranges it was drawn with ([`Chart::axes`]), when drawn by
    /// [`Figure::draw`]: what lets a caption say "same axes" (see [`check_captions`]).
    pub axes: Option<((f64, f64), (f64, f64))>,
    /// Whether it draws error bars ([`crate::plots::Mark::ErrorBars`]), when drawn by
    /// [`Figure::draw`]: its caption must then name the statistic (see [`check_captions`]).
    pub error_bars: bool,
}

impl Figure {
    /// The figure `<stem>.svg` in `out` with `title`; its caption is the section
    /// `figure <stem>` of the experiment's `text.md`, filled with `values`.
    pub fn from_text(
        out: &Path,
        stem: &str,
        title: impl Into<String>,
        text: &Text,
        values: &[(&str, String)],
    ) -> Result<Figure> {
        Ok(Figure {
            file: out.join(format!("{stem}.svg")),
            title: title.into(),
            caption: text.fill(&format!("figure {stem}"), values)?,
            axes: None,
            error_bars: false,
        })
    }

    /// Draws `chart`, titled with the figure's title, into the figure's file (and the PNG
    /// beside it), and returns the figure.
    pub fn draw(self, chart: Chart) -> Result<Figure> {
        let chart = Chart {
            title: self.title.clone(),
            ..chart
        };
        chart.write(&self.file)?;
        Ok(Figure {
            axes: Some(chart.axes()),
            error_bars: chart
                .panels
                .iter()
                .flat_map(|p| &p.series)
                .any(|s| s.mark == crate::plots::Mark::ErrorBars && !s.points.is_empty()),
            ..self
        })
    }
}

/// `text`'s words, each one space apart (a caption's line breaks are not where a phrase
/// breaks).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The statistics a caption may name for its error bars (one of them must be there).
pub const ERROR_BAR_STATISTICS: [&str; 2] = ["standard deviation", "95% confidence interval"];

/// Holds captions to the figures: a caption that says "same axes" must be under a figure
/// drawn on exactly the axes of the figure before it (both drawn by [`Figure::draw`], say
/// from [`crate::plots::time_sequences_same_axes`] or [`crate::plots::same_axes`]), and the
/// caption of a figure with error bars must name their statistic (one of
/// [`ERROR_BAR_STATISTICS`]). An error names the figure otherwise.
pub fn check_captions(figures: &[Figure]) -> Result<()> {
    for f in figures.iter().filter(|f| f.error_bars) {
        let caption = words(&f.caption);
        if !ERROR_BAR_STATISTICS.iter().any(|s| caption.contains(s)) {
            bail!(
                "{} has error bars, but its caption names none of {ERROR_BAR_STATISTICS:?}",
                f.file.display()
            );
        }
    }
    for (i, f) in figures.iter().enumerate() {
        if !words(&f.caption).to_lowercase().contains("same axes") {
            continue;
        }
        let prev = i.checked_sub(1).map(|k| &figures[k]);
        match (prev.and_then(|p| p.axes), f.axes) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => anyhow::bail!(
                "the caption of {} says \"same axes\", but its axes {b:?} are not those of the figure before it ({a:?})",
                f.file.display()
            ),
        }
    }
    Ok(())
}

/// What an experiment contributes to the report.
#[derive(Clone, Debug, Default)]
pub struct Section {
    /// The experiment's name ([`Experiment::name`]): the report's anchor and the name of
    /// its output directory.
    pub name: String,
    /// The heading (`title` in `text.md`), starting with the experiment's number.
    pub title: String,
    /// What the seed message says, quoted briefly.
    pub quote: String,
    /// Where the quote is from (the seed message's author, subject and date, or the paper and figure).
    pub quote_source: String,
    /// The setup, in a paragraph.
    pub setup: String,
    /// The experiment's claims as judged, in the order of its `claims.toml`.
    pub claims: Vec<ClaimResult>,
    /// The RNG seeds of the experiment's simulator runs, sorted, each once.
    pub rng_seeds: Vec<u64>,
    /// The tables of results (none when the run judges the claims only).
    pub tables: Vec<Table>,
    /// The figures, in order.
    pub plots: Vec<Figure>,
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
    /// Runs per stochastic configuration, each with its own RNG seed.
    pub seeds: u64,
}

/// An experiment's runs laid out as configurations times RNG seeds: configuration after
/// configuration, `seeds` runs each, with the RNG seeds `base.seed`, `base.seed + 1`, ...
/// (the same seeds for every configuration, so they are compared on the same draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerSeed {
    /// How many configurations.
    pub configs: usize,
    /// Runs per configuration, each with its own RNG seed.
    pub seeds: u64,
}

impl PerSeed {
    /// The plan: `variant(c, seed)` for each configuration `c` and each RNG seed, in order.
    pub fn plan(
        self,
        base: &Scenario,
        variant: impl Fn(usize, u64) -> Result<Scenario>,
    ) -> Result<Vec<Scenario>> {
        let mut runs = Vec::new();
        for c in 0..self.configs {
            for k in 0..self.seeds {
                runs.push(variant(c, base.seed + k)?);
            }
        }
        Ok(runs)
    }

    /// The configuration of the plan's run `index`, and whether the run is its first seed.
    pub fn config_of(self, index: usize) -> (usize, bool) {
        let n = self.seeds as usize;
        (index / n, index % n == 0)
    }

    /// The reduced runs, in the plan's order, grouped by configuration.
    pub fn groups<T>(self, runs: Vec<T>) -> Vec<Vec<T>> {
        let mut runs = runs.into_iter();
        (0..self.configs)
            .map(|_| runs.by_ref().take(self.seeds as usize).collect())
            .collect()
    }
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
    /// The `[[claim]]` tables: what the seed message or paper says (see [`crate::claims`]).
    pub claims: &'static str,
    /// The prose (see [`crate::text`]).
    pub text: &'static str,
}

/// An experiment's [`Files`]: the name of its directory, and the `scenario.toml`,
/// `claims.toml` and `text.md` in it, beside the `mod.rs` that calls this (`include_str!`
/// finds them from the file of the call).
macro_rules! files {
    ($dir:literal) => {
        $crate::suite::Files {
            dir: $dir,
            scenario: include_str!("scenario.toml"),
            claims: include_str!("claims.toml"),
            text: include_str!("text.md"),
        }
    };
}
pub(crate) use files;

/// What the render phase adds to the section (the title, the quote and its source come
/// from `text.md` as they are).
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The setup paragraph, `setup` of `text.md` filled with the run's parameters.
    pub setup: String,
    /// The tables of results.
    pub tables: Vec<Table>,
    /// The figures, their SVG files written into the experiment's output directory.
    pub plots: Vec<Figure>,
    /// The discussion, `discussion` of `text.md` filled with the run's numbers.
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
    /// Its embedded files (`files!("eNN_name")`: scenario, claims and prose).
    fn files(&self) -> Files;
    /// Whether the runs record queue-length samples (only plots of queues need them).
    fn records_queues(&self) -> bool {
        false
    }
    /// Phase 1: every scenario to run, varied from `base` (the experiment's
    /// `scenario.toml`), in an order that [`reduce`](Self::reduce) reads back from the
    /// index (often a [`PerSeed`] plan).
    fn plan(&self, p: Params, base: &Scenario) -> Result<Vec<Scenario>>;
    /// Phase 2, for each run as it ends (on a worker thread): what the experiment keeps of
    /// the plan's run `index`.
    fn reduce(&self, p: Params, index: usize, run: RunResult) -> Result<Self::Run>;
    /// Phase 2, at the end: the reduced runs, in the plan's order, combined into the
    /// measurements.
    fn measure(&self, p: Params, runs: Vec<Self::Run>) -> Result<Self::Measured>;
    /// Phase 3: each claim of `claims.toml` judged once on `j` (or skipped), its notes from
    /// `text`.
    fn judge(&self, p: Params, m: &Self::Measured, text: &Text, j: &mut Judge) -> Result<()>;
    /// Phase 4: the section's setup, tables, figures (their files written under `out`) and
    /// discussion.
    fn render(&self, p: Params, m: &Self::Measured, text: &Text, out: &Path) -> Result<Rendered>;
}

/// What the suite runner needs of any experiment (object safe; implemented for every
/// [`Experiment`]).
pub trait Runnable: Sync {
    /// The name `--only` takes ([`Experiment::name`]).
    fn name(&self) -> &'static str;
    /// The title of its section (`title` in its `text.md`), starting with its number.
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
        let mut rng_seeds: Vec<u64> = plan.iter().map(|s| s.seed).collect();
        rng_seeds.sort_unstable();
        rng_seeds.dedup();
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
            rng_seeds,
            ..Section::default()
        };
        if render {
            let r = self.render(p, &m, &text, &ctx.out)?;
            check_captions(&r.plots)?;
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
    /// Runs per stochastic configuration, each with its own RNG seed.
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
    /// One section per experiment run, in report order.
    pub sections: Vec<Section>,
    /// The self-contained HTML report.
    pub index: PathBuf,
    /// Every claim, machine-readable.
    pub claims_json: PathBuf,
    /// What the run was (version, commit, command line, RNG seeds, machine, date).
    pub run_json: PathBuf,
    /// The facts of the run, as `run.json` has them.
    pub run: RunInfo,
    /// Wall-clock time of the experiments (the report's files are written after).
    pub took: Duration,
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

    /// The claims table as text `width` columns wide, each claim that did not pass with
    /// its reason in a numbered note under the table.
    pub fn text_table(&self, width: u16) -> String {
        report::text_table(&self.sections, width)
    }

    /// One line: how many claims, per verdict, the time and where the report is.
    pub fn summary_line(&self) -> String {
        let skipped = match self.count(Verdict::Skip) {
            0 => String::new(),
            k => format!(", {k} skipped (full run only)"),
        };
        format!(
            "{} claims: {} pass, {} fail, {} disagree (explained), {} reported{skipped}; {:.0} s; report: {}",
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

/// What [`run_with`] tells while it runs (from the worker threads).
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// A simulator run ended.
    RunEnded {
        /// Runs ended so far, this one included.
        done: u64,
    },
    /// An experiment started.
    Started {
        /// Its name.
        experiment: &'a str,
    },
    /// An experiment ended (its runs, judging and rendering).
    Finished {
        /// Its name.
        experiment: &'a str,
        /// How long it took, wall-clock.
        took: Duration,
    },
}

/// Runs the chosen experiments in parallel, writes the report (`index.html`), `claims.json`,
/// `run.json` and each experiment's files under `opts.out`. `progress(done)` is called from
/// the worker threads each time a simulator run ends, with the number of runs ended so far.
pub fn run(opts: &Options, progress: &(dyn Fn(u64) + Sync)) -> Result<Outcome> {
    run_with(opts, &[], &|p| {
        if let Progress::RunEnded { done } = p {
            progress(done)
        }
    })
}

/// [`run`], recording `command_line` (program name first) in the report and `run.json`, and
/// telling each experiment's start and end to `progress` as well as each run's.
pub fn run_with(
    opts: &Options,
    command_line: &[String],
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Outcome> {
    let chosen = select(opts.only.as_deref())?;
    std::fs::create_dir_all(&opts.out)
        .with_context(|| format!("cannot create {}", opts.out.display()))?;
    let done = AtomicU64::new(0);
    let tick = move || {
        progress(Progress::RunEnded {
            done: done.fetch_add(1, Ordering::Relaxed) + 1,
        })
    };
    let started_at = SystemTime::now();
    let started = Instant::now();
    let sections: Vec<Result<Section>> = chosen
        .par_iter()
        .map(|e| {
            let began = Instant::now();
            progress(Progress::Started {
                experiment: e.name(),
            });
            let out = opts.out.join(e.name());
            std::fs::create_dir_all(&out)?;
            let ctx = Ctx { out, tick: &tick };
            // The scenario as embedded, so a reader can rerun or vary it with `ackclock sim`.
            std::fs::write(ctx.out.join("scenario.toml"), e.scenario_text())?;
            let section = e
                .run(opts.params(), &ctx, opts.render)
                .with_context(|| format!("experiment {}", e.name()));
            progress(Progress::Finished {
                experiment: e.name(),
                took: began.elapsed(),
            });
            section
        })
        .collect();
    let sections: Vec<Section> = sections.into_iter().collect::<Result<_>>()?;
    let took = started.elapsed();
    let run = run_info(opts, command_line, &sections, started_at, took);
    let run_json = opts.out.join("run.json");
    std::fs::write(&run_json, serde_json::to_string_pretty(&run)? + "\n")
        .with_context(|| format!("cannot write {}", run_json.display()))?;
    let index = opts.out.join("index.html");
    std::fs::write(&index, report::html(&sections, &run))
        .with_context(|| format!("cannot write {}", index.display()))?;
    // The claims table, whole and machine-readable.
    let claims_json = opts.out.join("claims.json");
    std::fs::write(&claims_json, claims_json_text(&sections)? + "\n")
        .with_context(|| format!("cannot write {}", claims_json.display()))?;
    Ok(Outcome {
        sections,
        index,
        claims_json,
        run_json,
        run,
        took,
    })
}

/// The facts of this run (`run.json`).
fn run_info(
    opts: &Options,
    command_line: &[String],
    sections: &[Section],
    started_at: SystemTime,
    took: Duration,
) -> RunInfo {
    let by_experiment: std::collections::BTreeMap<String, Vec<u64>> = sections
        .iter()
        .map(|s| (s.name.clone(), s.rng_seeds.clone()))
        .collect();
    let mut all: Vec<u64> = sections.iter().flat_map(|s| s.rng_seeds.clone()).collect();
    all.sort_unstable();
    all.dedup();
    RunInfo {
        schema_version: runinfo::RUN_SCHEMA_VERSION,
        version: runinfo::VERSION.to_string(),
        commit: runinfo::COMMIT.to_string(),
        command_line: command_line.to_vec(),
        mode: if opts.quick { "quick" } else { "full" }.to_string(),
        rng_seeds: RngSeeds {
            per_configuration: opts.seeds,
            all,
            by_experiment,
        },
        experiments: sections.iter().map(|s| s.name.clone()).collect(),
        machine: Machine::this(),
        started_utc: runinfo::rfc3339(started_at),
        wall_time_s: took.as_secs_f64(),
    }
}

/// `claims.json` (the schema is in `docs/OUTPUTS.md`; fields in the order written).
#[derive(serde::Serialize)]
struct ClaimsJson<'a> {
    schema_version: u32,
    summary: Summary,
    claims: Vec<ClaimJson<'a>>,
}

/// How many claims got each verdict.
#[derive(serde::Serialize)]
struct Summary {
    claims: usize,
    pass: usize,
    fail: usize,
    disagree: usize,
    report: usize,
    skip: usize,
}

#[derive(serde::Serialize)]
struct ClaimJson<'a> {
    experiment: &'a str,
    id: &'a str,
    claim: &'a str,
    metric: &'a str,
    unit: Option<&'a str>,
    published: Number<'a>,
    ackclock: Number<'a>,
    tolerance: Tolerance<'a>,
    verdict: &'static str,
    source: &'a str,
    note: &'a str,
}

/// A number as the report shows it, and as a number when the claim has one.
#[derive(serde::Serialize)]
struct Number<'a> {
    text: &'a str,
    value: Option<f64>,
}

#[derive(serde::Serialize)]
struct Tolerance<'a> {
    text: &'a str,
    min: Option<f64>,
    max: Option<f64>,
    min_inclusive: bool,
    max_inclusive: bool,
}

/// Every claim of every section as JSON: typed numbers where the claim has one, each with
/// its text as the report shows it. Nothing in it changes from run to run unless a number
/// does (the run's facts are in `run.json`).
pub fn claims_json_text(sections: &[Section]) -> Result<String> {
    let all = || sections.iter().flat_map(|s| &s.claims);
    let count = |v: Verdict| all().filter(|c| c.verdict == v).count();
    let file = ClaimsJson {
        schema_version: CLAIMS_SCHEMA_VERSION,
        summary: Summary {
            claims: all().count(),
            pass: count(Verdict::Pass),
            fail: count(Verdict::Fail),
            disagree: count(Verdict::Disagree),
            report: count(Verdict::Info),
            skip: count(Verdict::Skip),
        },
        claims: all()
            .map(|c| {
                let t = &c.spec;
                ClaimJson {
                    experiment: &c.experiment,
                    id: &t.id,
                    claim: &t.claim,
                    metric: &t.metric,
                    unit: t.unit.as_deref(),
                    published: Number {
                        text: &t.published,
                        value: t.published_value,
                    },
                    ackclock: Number {
                        text: &c.ours,
                        value: c.value,
                    },
                    tolerance: Tolerance {
                        text: &t.tolerance,
                        min: t.min,
                        max: t.max,
                        min_inclusive: !t.min_exclusive,
                        max_inclusive: !t.max_exclusive,
                    },
                    verdict: c.verdict.key(),
                    source: &t.source,
                    note: &c.note,
                }
            })
            .collect(),
    };
    Ok(serde_json::to_string_pretty(&file)?)
}

/// The version of `claims.json`'s layout; raised when a field changes meaning or goes away.
pub const CLAIMS_SCHEMA_VERSION: u32 = 2;

#[cfg(test)]
mod tests {
    use super::*;

    /// Configuration after configuration, the RNG seeds counting up from the base's; and
    /// `config_of` and `groups` read the runs back in that order.
    #[test]
    fn per_seed_plans_configuration_after_configuration() {
        let base = Scenario::from_str_named(
            include_str!("experiments/e15_bit_vs_drop/scenario.toml"),
            Path::new("scenario.toml"),
        )
        .unwrap();
        let g = PerSeed {
            configs: 3,
            seeds: 2,
        };
        let runs = g
            .plan(&base, |c, seed| {
                let mut s = base.clone();
                s.seed = seed;
                s.duration_s = c as f64 + 1.0;
                Ok(s)
            })
            .unwrap();
        let got: Vec<(f64, u64)> = runs.iter().map(|s| (s.duration_s, s.seed)).collect();
        let b = base.seed;
        assert_eq!(
            got,
            [
                (1.0, b),
                (1.0, b + 1),
                (2.0, b),
                (2.0, b + 1),
                (3.0, b),
                (3.0, b + 1)
            ]
        );
        let of: Vec<(usize, bool)> = (0..6).map(|i| g.config_of(i)).collect();
        assert_eq!(
            of,
            [
                (0, true),
                (0, false),
                (1, true),
                (1, false),
                (2, true),
                (2, false)
            ]
        );
        assert_eq!(
            g.groups((0..6).collect()),
            [vec![0, 1], vec![2, 3], vec![4, 5]]
        );
        assert!(g.plan(&base, |_, _| Err(anyhow!("no"))).is_err());
    }

    /// A caption cannot say "same axes" over axes that differ, nor draw error bars without
    /// naming their statistic.
    #[test]
    fn captions_are_held_to_the_figures() {
        let fig = |caption: &str, axes: Option<((f64, f64), (f64, f64))>, bars: bool| Figure {
            file: PathBuf::from(format!("{caption}.svg")),
            caption: caption.into(),
            axes,
            error_bars: bars,
            ..Figure::default()
        };
        let a = Some(((0.0, 10.0), (0.0, 5.0)));
        let b = Some(((0.0, 10.0), (0.0, 6.0)));
        assert!(
            check_captions(&[fig("x", a, false), fig("The same\naxes for y", a, false)]).is_ok()
        );
        assert!(check_captions(&[fig("x", a, false), fig("same axes", b, false)]).is_err());
        assert!(check_captions(&[fig("x", None, false), fig("same axes", None, false)]).is_err());
        assert!(check_captions(&[fig("same axes", a, false)]).is_err());
        assert!(check_captions(&[fig("bars: one standard\ndeviation", a, true)]).is_ok());
        assert!(check_captions(&[fig("mean over the seeds", a, true)]).is_err());
        assert!(check_captions(&[fig("mean over the seeds", a, false)]).is_ok());
    }
}
