//! The runs of a sweep: the cross product of `--param` values and seeds, each run's scenario
//! text (the file edited in place), its content-hash id and predicted cost; and the plan
//! directory (`plan.json`, `manifest.jsonl`, `scenario.toml`) that carries them to other
//! machines.

use ackclock_gateway::QdiscConfig;
use ackclock_sim::cost::Budget;
use ackclock_sim::Scenario;
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use toml_edit::{DocumentMut, Item, TableLike};

/// One `--param PATH=V1,V2,...`.
#[derive(Clone, Debug)]
pub struct Param {
    /// The dotted path into the scenario (array entries by index).
    pub path: String,
    /// The values as typed (trimmed): the manifest keeps these, so a run is rebuilt from
    /// the same words the user wrote.
    pub texts: Vec<String>,
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
        Ok(Param {
            path: path.to_string(),
            texts: vals.split(',').map(|v| v.trim().to_string()).collect(),
        })
    }
}

/// A value as typed on the command line: a number, a boolean, else a string.
pub fn parse_value(v: &str) -> toml::Value {
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

/// A value as a CSV cell and in messages (strings without their quotes).
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A `--param` value as the TOML value it stands for (a number, a boolean, else a string).
fn edit_value(v: &toml::Value) -> toml_edit::Value {
    match v {
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => (*f).into(),
        toml::Value::Boolean(b) => (*b).into(),
        other => value_text(other).into(),
    }
}

/// Sets `path` (dot separated; numbers index arrays) in a TOML document, editing it in place
/// so that every other line keeps its number (errors then point at the user's own file).
/// Setting a queue's `kind` to another kind starts that queue from the new kind's defaults:
/// fields both kinds share (its limits) are kept, the others dropped.
pub fn set_path(doc: &mut DocumentMut, path: &str, value: &toml::Value) -> Result<()> {
    let parts: Vec<&str> = path.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        bail!("--param {path}: empty name between dots");
    }
    set_in(doc.as_table_mut(), path, &parts, value)
}

fn set_in(t: &mut dyn TableLike, path: &str, parts: &[&str], value: &toml::Value) -> Result<()> {
    let (key, rest) = (parts[0], &parts[1..]);
    if rest.is_empty() {
        let kind_switch = key == "kind"
            && t.get("kind").and_then(|k| k.as_str()).is_some_and(|old| {
                QdiscConfig::KINDS.contains(&old) && Some(old) != value.as_str()
            });
        t.insert(key, Item::Value(edit_value(value)));
        if kind_switch {
            let keep = value.as_str().and_then(QdiscConfig::fields).unwrap_or(&[]);
            let drop: Vec<String> = t
                .iter()
                .map(|(k, _)| k.to_string())
                .filter(|k| k != "kind" && !keep.contains(&k.as_str()))
                .collect();
            for k in drop {
                t.remove(&k);
            }
        }
        return Ok(());
    }
    if t.get(key).is_none() {
        if rest[0].parse::<usize>().is_ok() {
            bail!("--param {path}: the scenario has no `{key}` entries to index");
        }
        // A table the file leaves to its defaults (a link's `queue`): start it.
        t.insert(key, Item::Value(toml_edit::InlineTable::new().into()));
    }
    let item = t.get_mut(key).expect("present");
    set_item(item, path, key, rest, value)
}

fn set_item(
    item: &mut Item,
    path: &str,
    key: &str,
    rest: &[&str],
    value: &toml::Value,
) -> Result<()> {
    if let Some(t) = item.as_table_like_mut() {
        return set_in(t, path, rest, value);
    }
    let index = |part: &str, len: usize| -> Result<usize> {
        let i: usize = part.parse().map_err(|_| {
            anyhow!(
                "--param {path}: `{key}` is an array: `{part}` must be an index (0 to {})",
                len.saturating_sub(1)
            )
        })?;
        if i >= len {
            bail!("--param {path}: index {i} past the {len} entries of `{key}`");
        }
        Ok(i)
    };
    match item {
        Item::ArrayOfTables(a) => {
            let i = index(rest[0], a.len())?;
            let t = a.get_mut(i).expect("in range");
            if rest.len() == 1 {
                bail!("--param {path}: `{key}.{i}` is a whole table; name a field inside it");
            }
            set_in(t, path, &rest[1..], value)
        }
        Item::Value(toml_edit::Value::Array(a)) => {
            let i = index(rest[0], a.len())?;
            let v = a.get_mut(i).expect("in range");
            if rest.len() == 1 {
                *v = edit_value(value);
                return Ok(());
            }
            match v {
                toml_edit::Value::InlineTable(t) => set_in(t, path, &rest[1..], value),
                _ => bail!("--param {path}: `{key}.{i}` is not a table"),
            }
        }
        _ => bail!("--param {path}: `{key}` is a value, not a table or array"),
    }
}

/// One `--param` setting of a run: the path and the value as typed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Override {
    /// The dotted path into the scenario.
    pub path: String,
    /// The value, as typed.
    pub value: String,
}

/// The scenario text of one combination: the base document with the overrides applied.
pub fn apply(base: &DocumentMut, overrides: &[Override]) -> Result<String> {
    let mut doc = base.clone();
    for o in overrides {
        set_path(&mut doc, &o.path, &parse_value(&o.value))?;
    }
    Ok(doc.to_string())
}

/// A run's id: the first 64 bits of the SHA-256 of its scenario text and seed, in hex. Runs
/// that would compute the same thing share an id (and a result file); a run whose scenario
/// changed gets another.
pub fn run_id(text: &str, seed: u64) -> String {
    let mut h = Sha256::new();
    h.update(b"ackclock sweep run\nseed = ");
    h.update(seed.to_string().as_bytes());
    h.update(b"\n");
    h.update(text.as_bytes());
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One run of a sweep, ready to run here or to be written to a manifest.
#[derive(Clone, Debug)]
pub struct PlannedRun {
    /// The content-hash id ([`run_id`]): its result file's name.
    pub id: String,
    /// The settings that make this run's scenario.
    pub overrides: Vec<Override>,
    /// The RNG seed.
    pub seed: u64,
    /// The scenario to run.
    pub scenario: Scenario,
    /// Predicted events ([`ackclock_sim::cost`]).
    pub predicted_events: u64,
    /// Predicted peak memory, bytes.
    pub predicted_memory_bytes: u64,
}

/// One configuration of a sweep: a combination of the swept values, checked, with its
/// predicted cost; its runs differ only in their RNG seed.
#[derive(Clone, Debug)]
pub struct Config {
    /// The settings that make this configuration's scenario.
    pub overrides: Vec<Override>,
    /// The scenario file with the settings applied (a run's id hashes it with the seed).
    pub resolved: String,
    /// The scenario, with the file's seed.
    pub scenario: Scenario,
    /// Predicted events of one run ([`ackclock_sim::cost`]).
    pub predicted_events: u64,
    /// Predicted peak memory of one run, bytes.
    pub predicted_memory_bytes: u64,
}

impl Config {
    /// The run of this configuration with RNG seed `seed`.
    pub fn run(&self, seed: u64) -> PlannedRun {
        let mut scenario = self.scenario.clone();
        scenario.seed = seed;
        PlannedRun {
            id: run_id(&self.resolved, seed),
            overrides: self.overrides.clone(),
            seed,
            scenario,
            predicted_events: self.predicted_events,
            predicted_memory_bytes: self.predicted_memory_bytes,
        }
    }
}

/// The RNG seeds every configuration of a sweep runs with, in row order: each first seed,
/// then the next `per_first - 1` (`--seeds N`). Held as ranges, not listed: a sweep of a
/// million seeds needs no list of a million.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds {
    /// The first seed of each range: the scenario file's seed, or the values of
    /// `--param seed=...` in the order given.
    pub firsts: Vec<u64>,
    /// Seeds per range (`--seeds`, at least 1).
    pub per_first: u64,
}

impl Seeds {
    /// How many seeds each configuration runs.
    pub fn len(&self) -> u64 {
        self.firsts.len() as u64 * self.per_first
    }

    /// Whether there are none (never, for seeds [`seeds`] made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k`-th seed (0-based, in row order).
    pub fn get(&self, k: u64) -> u64 {
        self.firsts[(k / self.per_first) as usize] + k % self.per_first
    }
}

/// The `--param` path of the scenario's RNG seed. Swept, it does not make configurations of
/// its own (every run's seed is set by the sweep, so as an override it would be overwritten
/// and every row would show the file's seed): its values are the first seeds of each
/// configuration's runs instead, `--seeds N` running each value v as v, v+1, ..., v+N-1.
pub const SEED_PATH: &str = "seed";

/// The `--param`s that make configurations: all but [`SEED_PATH`]'s. Their paths are the
/// first columns of sweep.csv (the seed has its own column).
pub fn swept(params: &[Param]) -> Vec<Param> {
    params
        .iter()
        .filter(|p| p.path != SEED_PATH)
        .cloned()
        .collect()
}

/// The seeds each configuration runs with: `--param seed=V1,V2,...` (each value checked,
/// before any run) or else the scenario file's `file_seed`, each followed by `seeds - 1` more.
///
/// # Errors
/// `seed` swept twice, a value that is not a whole number from 0, past 2^64 - 1 with its
/// `seeds - 1` successors, or two values whose ranges overlap (the same run twice, which
/// would pass for two replications).
pub fn seeds(params: &[Param], seeds: u64, file_seed: u64) -> Result<Seeds> {
    let per_first = seeds.max(1);
    let mut given = params.iter().filter(|p| p.path == SEED_PATH);
    let Some(p) = given.next() else {
        return Ok(Seeds {
            firsts: vec![file_seed],
            per_first,
        });
    };
    if given.next().is_some() {
        bail!("--param {SEED_PATH}=... is given twice; give every seed in one --param {SEED_PATH}=V1,V2,...");
    }
    let mut firsts: Vec<u64> = Vec::with_capacity(p.texts.len());
    for t in &p.texts {
        let v: u64 = t.parse().map_err(|_| {
            anyhow!(
                "--param {SEED_PATH}={t}: a seed is a whole number from 0 to {}",
                u64::MAX
            )
        })?;
        if v.checked_add(per_first - 1).is_none() {
            bail!(
                "--param {SEED_PATH}={t}: with --seeds {per_first} the seeds would pass {}",
                u64::MAX
            );
        }
        if let Some(w) = firsts.iter().find(|&&w| w.max(v) - w.min(v) < per_first) {
            bail!(
                "--param {SEED_PATH}: {w} and {v} would run the same seed twice (with --seeds {per_first}, a value v runs seeds v to v+{}); give values at least {per_first} apart",
                per_first - 1
            );
        }
        firsts.push(v);
    }
    Ok(Seeds { firsts, per_first })
}

/// The configurations of a sweep and the seeds each runs: run `i` is configuration
/// `i / seeds.len()` with seed `seeds.get(i % seeds.len())` (the first `--param` varies
/// slowest, the seed fastest), made when it is needed, so that a sweep of many seeds holds
/// one scenario per configuration, not one per run.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The scenario file as written.
    pub text: String,
    /// The configurations, in row order.
    pub configs: Vec<Config>,
    /// The seeds every configuration runs with.
    pub seeds: Seeds,
}

impl Sweep {
    /// How many runs.
    pub fn len(&self) -> u64 {
        self.configs.len() as u64 * self.seeds.len()
    }

    /// Whether there are no runs (never, for a sweep [`configurations`] made).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Run `i` (0-based, in row order).
    pub fn run(&self, i: u64) -> PlannedRun {
        let per = self.seeds.len();
        self.configs[(i / per) as usize].run(self.seeds.get(i % per))
    }
}

/// How many runs a sweep of `params` with `seeds` seeds has, counted without making them
/// (saturating: a count past u64 is as refused as any other over the limit).
pub fn count_runs(params: &[Param], seeds: u64) -> u64 {
    params
        .iter()
        .fold(seeds.max(1), |n, p| n.saturating_mul(p.texts.len() as u64))
}

/// Refuses a sweep of more than `max_runs` runs before any is made.
///
/// # Errors
/// The sweep has more runs than `max_runs`.
pub fn check_runs(params: &[Param], seeds: u64, max_runs: u64) -> Result<()> {
    let n = count_runs(params, seeds);
    if n > max_runs {
        // `--param seed=...` multiplies the seeds, not the configurations.
        let configs = count_runs(&swept(params), 1);
        bail!(
            "the sweep has {n} runs ({configs} configuration(s) x {} seed(s)), more than the limit of {max_runs}; sweep fewer values or seeds, or raise the limit with --max-runs",
            n / configs.max(1),
        );
    }
    Ok(())
}

/// The scenario at `path` over the cross product of `params` (but `seed`: see [`SEED_PATH`]),
/// `seeds` seeds each: every combination checked (and its cost held to `budget`) before any
/// runs.
///
/// # Errors
/// No parameter and fewer than two seeds; a bad scenario or value (of `seed`: see
/// [`seeds()`]); a run over `budget`.
pub fn configurations(path: &Path, params: &[Param], seeds: u64, budget: &Budget) -> Result<Sweep> {
    if params.is_empty() && seeds < 2 {
        // Seeds alone are a replication sweep; one run of one configuration is `sim`.
        bail!("sweep needs --param PATH=V1,V2,... (e.g. --param link.0.rate_bps=1e6,2e6), or --seeds N with N >= 2 to replicate the scenario");
    }
    // The file itself must be a valid scenario before any value is swept.
    let file_seed = Scenario::load(path).map_err(|e| anyhow!("{e}"))?.seed;
    let seed_list = self::seeds(params, seeds, file_seed)?;
    let params = &swept(params);
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let base: DocumentMut = text
        .parse()
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut combos: Vec<Vec<Override>> = vec![vec![]];
    for p in params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.texts.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(Override {
                        path: p.path.clone(),
                        value: v.clone(),
                    });
                    c
                })
            })
            .collect();
    }
    let mut configs = Vec::with_capacity(combos.len());
    for c in combos {
        let resolved = apply(&base, &c)?;
        // Errors name the file and the values that made it: the document was edited in
        // place, so line numbers are the file's own.
        let s = Scenario::from_str_within(&resolved, path, budget).map_err(|mut e| {
            e.message = format!("{} (with {})", e.message, describe(&c));
            anyhow!("{e}")
        })?;
        let cost = s
            .resolve()
            .map(|r| s.predict_cost(&r))
            .map_err(|e| anyhow!("{}: {}", path.display(), e.message))?;
        configs.push(Config {
            overrides: c,
            resolved,
            scenario: s,
            predicted_events: cost.event_count().ceil() as u64,
            predicted_memory_bytes: cost.memory_bytes().ceil() as u64,
        });
    }
    Ok(Sweep {
        text,
        configs,
        seeds: seed_list,
    })
}

/// Every run of [`configurations`], made: the scenario file's text and the runs in row
/// order (a plan directory's manifest lists them all).
///
/// # Errors
/// As [`configurations`].
pub fn expand(
    path: &Path,
    params: &[Param],
    seeds: u64,
    budget: &Budget,
) -> Result<(String, Vec<PlannedRun>)> {
    let sweep = configurations(path, params, seeds, budget)?;
    let runs = (0..sweep.len()).map(|i| sweep.run(i)).collect();
    Ok((sweep.text, runs))
}

/// `--param a=1 --param b=x`, for messages.
pub fn describe(overrides: &[Override]) -> String {
    overrides
        .iter()
        .map(|o| format!("--param {}={}", o.path, value_text(&parse_value(&o.value))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What `plan.json` says of a whole sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// `ackclock-sweep-plan/1`.
    pub format: String,
    /// The ackclock that planned it; `sweep run` refuses to run another version's plan,
    /// whose results could differ.
    pub ackclock_version: String,
    /// The scenario file as given to `plan` (for people; runs read `scenario.toml`).
    pub source: String,
    /// The `--param` paths, in order: the first columns of sweep.csv.
    pub params: Vec<String>,
    /// Runs per combination: `--seeds N` times the values of `--param seed=...` (if any).
    pub seeds: u64,
    /// Runs in the plan.
    pub runs: usize,
}

/// One line of `manifest.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Its place in the manifest, from 0.
    pub index: usize,
    /// The content-hash id ([`run_id`]).
    pub id: String,
    /// The RNG seed.
    pub seed: u64,
    /// The settings that make its scenario.
    pub overrides: Vec<Override>,
    /// The cost prediction (`ackclock_sim::cost`), for the schedulers' time and memory.
    pub predicted_events: u64,
    /// Predicted peak memory, bytes.
    pub predicted_memory_bytes: u64,
}

/// The format `plan.json` declares.
pub const PLAN_FORMAT: &str = "ackclock-sweep-plan/1";
/// The plan's header file.
pub const PLAN_FILE: &str = "plan.json";
/// One line per run.
pub const MANIFEST_FILE: &str = "manifest.jsonl";
/// The scenario file as given, copied.
pub const SCENARIO_FILE: &str = "scenario.toml";
/// The runs' result files.
pub const RESULTS_DIR: &str = "results";
/// The runs' log files (the schedulers' output).
pub const LOGS_DIR: &str = "logs";

/// A plan directory, read back.
pub struct Plan {
    /// The plan directory.
    pub dir: PathBuf,
    /// `plan.json`.
    pub header: Header,
    /// `manifest.jsonl`, in index order.
    pub entries: Vec<Entry>,
    /// `scenario.toml`, parsed for editing.
    pub base: DocumentMut,
}

impl Plan {
    /// Writes the plan of `runs` into `dir` (`seeds`: runs per combination; a `--param`
    /// of [`SEED_PATH`] in `params` is no column of its own). A directory that already holds
    /// a different plan is refused: its runs may be going on elsewhere.
    pub fn write(
        dir: &Path,
        source: &Path,
        text: &str,
        params: &[Param],
        seeds: u64,
        runs: &[PlannedRun],
    ) -> Result<Plan> {
        let header = Header {
            format: PLAN_FORMAT.into(),
            ackclock_version: env!("CARGO_PKG_VERSION").into(),
            source: source.display().to_string(),
            params: swept(params).into_iter().map(|p| p.path).collect(),
            seeds,
            runs: runs.len(),
        };
        let entries: Vec<Entry> = runs
            .iter()
            .enumerate()
            .map(|(index, r)| Entry {
                index,
                id: r.id.clone(),
                seed: r.seed,
                overrides: r.overrides.clone(),
                predicted_events: r.predicted_events,
                predicted_memory_bytes: r.predicted_memory_bytes,
            })
            .collect();
        let mut manifest = String::new();
        for e in &entries {
            manifest.push_str(&serde_json::to_string(e)?);
            manifest.push('\n');
        }
        let plan_json = serde_json::to_string_pretty(&header)? + "\n";
        if dir.join(MANIFEST_FILE).exists() {
            let same = std::fs::read_to_string(dir.join(MANIFEST_FILE)).ok()
                == Some(manifest.clone())
                && std::fs::read_to_string(dir.join(SCENARIO_FILE))
                    .ok()
                    .as_deref()
                    == Some(text);
            if !same {
                bail!(
                    "{} already holds another sweep plan (its runs may be going on elsewhere); choose another --out, or delete that directory first",
                    dir.display()
                );
            }
        }
        for d in [dir.to_path_buf(), dir.join(RESULTS_DIR), dir.join(LOGS_DIR)] {
            std::fs::create_dir_all(&d)
                .with_context(|| format!("cannot create {}", d.display()))?;
        }
        for (name, body) in [
            (SCENARIO_FILE, text),
            (PLAN_FILE, plan_json.as_str()),
            (MANIFEST_FILE, manifest.as_str()),
        ] {
            let f = dir.join(name);
            std::fs::write(&f, body).with_context(|| format!("cannot write {}", f.display()))?;
        }
        let base = text
            .parse()
            .map_err(|e| anyhow!("{}: {e}", source.display()))?;
        Ok(Plan {
            dir: dir.to_path_buf(),
            header,
            entries,
            base,
        })
    }

    /// Reads the plan in `dir`, with errors that say what to type when it is not one.
    pub fn load(dir: &Path) -> Result<Plan> {
        if !dir.is_dir() {
            bail!(
                "{}: no such directory; make a sweep plan with `ackclock sweep plan SCENARIO --param PATH=V1,V2 --out {}`",
                dir.display(),
                dir.display()
            );
        }
        let read = |name: &str| -> Result<String> {
            let f = dir.join(name);
            std::fs::read_to_string(&f).map_err(|e| {
                anyhow!(
                    "{}: cannot read: {}; is {} a sweep plan (made by `ackclock sweep plan ... --out {}`)?",
                    f.display(),
                    ackclock_sim::scenario::io_reason(&e),
                    dir.display(),
                    dir.display()
                )
            })
        };
        let header_text = read(PLAN_FILE)?;
        let header: Header = serde_json::from_str(&header_text)
            .map_err(|e| anyhow!("{}: not a sweep plan: {e}", dir.join(PLAN_FILE).display()))?;
        if header.format != PLAN_FORMAT {
            bail!(
                "{}: format {:?}, this ackclock reads {PLAN_FORMAT:?}",
                dir.join(PLAN_FILE).display(),
                header.format
            );
        }
        let version = env!("CARGO_PKG_VERSION");
        if header.ackclock_version != version {
            bail!(
                "{}: planned by ackclock {}, this is ackclock {version}; results of another version may differ, so run this plan with that version or plan the sweep again",
                dir.display(),
                header.ackclock_version
            );
        }
        let manifest = read(MANIFEST_FILE)?;
        let mut entries = Vec::new();
        for (n, line) in manifest.lines().enumerate() {
            let e: Entry = serde_json::from_str(line)
                .map_err(|e| anyhow!("{}:{}: {e}", dir.join(MANIFEST_FILE).display(), n + 1))?;
            if e.index != n {
                bail!(
                    "{}:{}: index {} on line {} (lines must be in index order from 0)",
                    dir.join(MANIFEST_FILE).display(),
                    n + 1,
                    e.index,
                    n + 1
                );
            }
            entries.push(e);
        }
        if entries.len() != header.runs {
            bail!(
                "{}: {} runs, but {} says {}; the plan is incomplete: plan the sweep again",
                dir.join(MANIFEST_FILE).display(),
                entries.len(),
                PLAN_FILE,
                header.runs
            );
        }
        let base = read(SCENARIO_FILE)?
            .parse()
            .map_err(|e| anyhow!("{}: {e}", dir.join(SCENARIO_FILE).display()))?;
        Ok(Plan {
            dir: dir.to_path_buf(),
            header,
            entries,
            base,
        })
    }

    /// The scenario of run `e`, rebuilt from `scenario.toml` and its overrides, checked
    /// against its id (so an edited plan cannot pass results off as another's).
    pub fn scenario(&self, e: &Entry, budget: &Budget) -> Result<Scenario> {
        let text = apply(&self.base, &e.overrides)?;
        let id = run_id(&text, e.seed);
        if id != e.id {
            bail!(
                "run {} (id {}): its scenario now hashes to {id}: {} or {} was changed after planning; plan the sweep again",
                e.index,
                e.id,
                SCENARIO_FILE,
                MANIFEST_FILE
            );
        }
        let file = self.dir.join(SCENARIO_FILE);
        let mut s = Scenario::from_str_within(&text, &file, budget).map_err(|mut err| {
            err.message = format!("{} (with {})", err.message, describe(&e.overrides));
            anyhow!("{err}")
        })?;
        s.seed = e.seed;
        Ok(s)
    }

    /// A run's result file, and the file that says it failed.
    pub fn result_path(&self, id: &str) -> PathBuf {
        self.dir.join(RESULTS_DIR).join(format!("{id}.json"))
    }
    /// The file that says a run failed (its error).
    pub fn failure_path(&self, id: &str) -> PathBuf {
        self.dir.join(RESULTS_DIR).join(format!("{id}.failed.json"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_changes_with_the_seed_and_the_text_and_only_with_them() {
        let a = run_id("x = 1\n", 1);
        assert_eq!(a, run_id("x = 1\n", 1));
        assert_eq!(a.len(), 16);
        assert_ne!(a, run_id("x = 1\n", 2));
        assert_ne!(a, run_id("x = 2\n", 1));
    }

    fn dumbbell_with(params: &[&str], seeds: u64) -> Result<Sweep> {
        let path = ackclock_testkit::repo_root().join("scenarios/dumbbell.toml");
        let params: Vec<Param> = params.iter().map(|p| p.parse().unwrap()).collect();
        configurations(&path, &params, seeds, &Budget::for_this_machine())
    }

    fn run_seeds(s: &Sweep) -> Vec<u64> {
        (0..s.len()).map(|i| s.run(i).seed).collect()
    }

    /// `--param seed=...` was an override that every run's own seed then overwrote: each
    /// row said seed 1 and the runs were copies.
    #[test]
    fn a_swept_seed_sets_the_runs_seeds_instead_of_making_copies() {
        let s = dumbbell_with(&["seed=1,2,3"], 1).unwrap();
        assert_eq!(s.configs.len(), 1);
        assert_eq!(run_seeds(&s), [1, 2, 3]);
        assert_eq!(s.run(0).scenario.seed, 1);
        assert_eq!(s.run(2).scenario.seed, 3);
        assert_ne!(s.run(0).id, s.run(2).id);
        // With --seeds N each value starts N seeds; the seed varies fastest, under the
        // other parameters' configurations, and is no override of its own.
        let s = dumbbell_with(&["topology.pairs=2,4", "seed=10,20"], 2).unwrap();
        assert_eq!(s.configs.len(), 2);
        assert_eq!(run_seeds(&s), [10, 11, 20, 21, 10, 11, 20, 21]);
        assert!(s.configs.iter().all(|c| c.overrides.len() == 1));
        let paths: Vec<String> = swept(&[
            "topology.pairs=2".parse().unwrap(),
            "seed=3".parse().unwrap(),
        ])
        .into_iter()
        .map(|p| p.path)
        .collect();
        assert_eq!(paths, ["topology.pairs"]);
        // Without it, the scenario's seed and the next ones, as before.
        assert_eq!(run_seeds(&dumbbell_with(&[], 3).unwrap()), [1, 2, 3]);
    }

    #[test]
    fn swept_seeds_that_are_not_whole_numbers_or_repeat_a_run_are_refused() {
        let e = |p: &[&str], n| dumbbell_with(p, n).unwrap_err().to_string();
        assert!(e(&["seed=1,x"], 1).contains("--param seed=x: a seed is a whole number"));
        assert!(e(&["seed=-1"], 1).contains("a seed is a whole number"));
        assert!(e(&["seed=1,2"], 2).contains("1 and 2 would run the same seed twice"));
        assert!(e(&["seed=1", "seed=2"], 1).contains("given twice"));
        assert!(e(&["seed=18446744073709551615"], 2).contains("would pass"));
        assert!(dumbbell_with(&["seed=1,3"], 2).is_ok());
    }

    #[test]
    fn the_run_limit_counts_swept_seeds_as_seeds() {
        let p: Vec<Param> = ["topology.pairs=2,4", "seed=1,5,9"]
            .iter()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(count_runs(&p, 2), 12);
        let e = check_runs(&p, 2, 10).unwrap_err().to_string();
        assert!(
            e.contains("12 runs (2 configuration(s) x 6 seed(s))"),
            "{e}"
        );
    }

    #[test]
    fn values_typed_on_the_command_line_come_back_as_the_same_cell() {
        for v in ["8", "1e6", "1.5", "drop_tail", "true", "-3", "inf"] {
            let once = value_text(&parse_value(v));
            assert_eq!(value_text(&parse_value(&once)), once, "{v}");
        }
        assert_eq!(value_text(&parse_value("1e6")), "1000000.0");
    }
}
