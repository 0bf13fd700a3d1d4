//! `ackclock sim` and `ackclock sweep`.

use ackclock_gateway::QdiscConfig;
use ackclock_lab::plots;
use ackclock_sim::cost::Budget;
use ackclock_sim::{build, RunResult, Scenario, ScenarioError};
use ackclock_wire::Instant;
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use toml_edit::{DocumentMut, Item, TableLike};

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
    #[arg(long, value_name = "SIZE", value_parser = crate::units::size())]
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
    if !(v >= 1.0 && v <= u64::MAX as f64) {
        return Err(format!("{s:?}: expected a count of at least 1"));
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

/// `ackclock sim SCENARIO [--out DIR] [--seed N] [--pcap]`.
pub fn sim(
    path: &Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    plots_on: bool,
    pcap: bool,
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
    print!("{}", r.table());
    let csvs = r
        .write_files(&out)
        .with_context(|| format!("writing results to {}", out.display()))?;
    let plots = if plots_on && s.output.plots {
        // Each plot is an SVG with a PNG beside it.
        plots::all(&r, &out)?.len()
    } else {
        0
    };
    let mut what = vec![format!("summary.json, {} CSV files", csvs.len())];
    if plots > 0 {
        what.push(format!("{plots} plots (SVG and PNG)"));
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

/// One `--param PATH=V1,V2,...`.
#[derive(Clone, Debug)]
pub struct Param {
    pub path: String,
    pub values: Vec<toml::Value>,
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
        let values = vals.split(',').map(parse_value).collect();
        Ok(Param {
            path: path.to_string(),
            values,
        })
    }
}

fn parse_value(v: &str) -> toml::Value {
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

/// `ackclock sweep SCENARIO --param P=V,... [--seeds N] [--out DIR]`: the cross product in
/// parallel, one CSV row per run.
pub fn sweep(
    path: &Path,
    params: &[Param],
    seeds: u64,
    out: Option<PathBuf>,
    budget: &Budget,
) -> Result<()> {
    if params.is_empty() {
        bail!("sweep needs at least one --param PATH=V1,V2,... (e.g. --param link.0.rate_bps=1e6,2e6)");
    }
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
    // The file itself must be a valid scenario before any value is swept.
    let base_seed = Scenario::load(path).map_err(|e| anyhow!("{e}"))?.seed;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let base: DocumentMut = text
        .parse()
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    // The cross product, and the seeds.
    let mut combos: Vec<Vec<toml::Value>> = vec![vec![]];
    for p in params {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                p.values.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(v.clone());
                    c
                })
            })
            .collect();
    }
    let mut jobs = Vec::new();
    for c in &combos {
        let mut doc = base.clone();
        for (p, v) in params.iter().zip(c) {
            set_path(&mut doc, &p.path, v)?;
        }
        // Errors name the file and the values that made it: the document was edited in
        // place, so line numbers are the file's own.
        let with = params
            .iter()
            .zip(c)
            .map(|(p, v)| format!("--param {}={}", p.path, value_text(v)))
            .collect::<Vec<_>>()
            .join(" ");
        let s = Scenario::from_str_within(&doc.to_string(), path, budget).map_err(|mut e| {
            e.message = format!("{} (with {with})", e.message);
            anyhow!("{e}")
        })?;
        for k in 0..seeds.max(1) {
            let mut s = s.clone();
            s.seed = base_seed + k;
            jobs.push((c.clone(), base_seed + k, s));
        }
    }
    let n = jobs.len() as u64;
    let done = AtomicU64::new(0);
    let bar = ProgressBar::new(n);
    bar.set_style(
        ProgressStyle::with_template("sweep [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left)")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let results: Vec<Result<(Vec<toml::Value>, u64, RunResult)>> = jobs
        .into_par_iter()
        .map(|(c, seed, s)| {
            let r = run_scenario(&s, None, None)?;
            let k = done.fetch_add(1, Ordering::Relaxed);
            bar.set_position(k + 1);
            Ok((c, seed, r))
        })
        .collect();
    bar.finish_and_clear();
    let mut csv = String::new();
    for p in params {
        let _ = write!(csv, "{},", p.path);
    }
    csv.push_str("seed,flows,total_goodput_bps,min_goodput_bps,retransmitted_segments,timeouts,fast_retransmits,queue_drops,jain_fairness,max_link_utilization,mean_queue_delay_ms\n");
    for r in results {
        let (c, seed, r) = r?;
        let s = &r.summary;
        for v in &c {
            let _ = write!(csv, "{},", value_text(v));
        }
        let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
        let min = s
            .flows
            .iter()
            .map(|f| f.goodput_bps)
            .fold(f64::INFINITY, f64::min);
        let busiest = s
            .links
            .iter()
            .max_by(|a, b| a.utilization.total_cmp(&b.utilization));
        let _ = writeln!(
            csv,
            "{seed},{},{total:.0},{:.0},{},{},{},{},{},{:.4},{}",
            s.flows.len(),
            if min.is_finite() { min } else { 0.0 },
            s.flows
                .iter()
                .map(|f| f.retransmitted_segments)
                .sum::<u64>(),
            s.flows.iter().map(|f| f.timeouts).sum::<u64>(),
            s.flows.iter().map(|f| f.fast_retransmits).sum::<u64>(),
            s.links.iter().map(|l| l.queue_drops).sum::<u64>(),
            s.jain_fairness.map_or(String::new(), |j| format!("{j:.4}")),
            busiest.map_or(0.0, |l| l.utilization),
            busiest
                .and_then(|l| l.queue_delay_mean_ms)
                .map_or(String::new(), |d| format!("{d:.3}")),
        );
    }
    let stem = path
        .file_stem()
        .map(|x| x.to_string_lossy().to_string())
        .unwrap_or_else(|| "sweep".into());
    let out = out.unwrap_or_else(|| PathBuf::from("out/sweep").join(&stem));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let file = out.join("sweep.csv");
    std::fs::write(&file, &csv).with_context(|| format!("cannot write {}", file.display()))?;
    print!("{csv}");
    println!("\n{n} runs; table in {}", file.display());
    Ok(())
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
