//! The rows of `sweep.csv`, and `ackclock sweep collect DIR`: the results of a plan's runs
//! merged into the same file, byte for byte, that a local `ackclock sweep` writes.

use crate::plan::{parse_value, value_text, Plan};
use crate::run::Outcome;
use ackclock_sim::RunSummary;
use anyhow::{bail, Context, Result};
use std::path::Path;

/// The columns after the `--param` columns and `seed`, in order.
pub const METRIC_COLUMNS: &[&str] = &[
    "flows",
    "total_goodput_bps",
    "min_goodput_bps",
    "retransmitted_segments",
    "timeouts",
    "fast_retransmits",
    "queue_drops",
    "jain_fairness",
    "max_link_utilization",
    "mean_queue_delay_ms",
];

/// The header line of sweep.csv.
pub fn header(params: &[String]) -> String {
    let mut h = String::new();
    for p in params {
        h.push_str(p);
        h.push(',');
    }
    h.push_str("seed,");
    h.push_str(&METRIC_COLUMNS.join(","));
    h.push('\n');
    h
}

/// A run's metric cells, as sweep.csv writes them (one per [`METRIC_COLUMNS`]).
pub fn metric_cells(s: &RunSummary) -> Vec<String> {
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
    vec![
        s.flows.len().to_string(),
        format!("{total:.0}"),
        format!("{:.0}", if min.is_finite() { min } else { 0.0 }),
        s.flows
            .iter()
            .map(|f| f.retransmitted_segments)
            .sum::<u64>()
            .to_string(),
        s.flows.iter().map(|f| f.timeouts).sum::<u64>().to_string(),
        s.flows
            .iter()
            .map(|f| f.fast_retransmits)
            .sum::<u64>()
            .to_string(),
        s.links
            .iter()
            .map(|l| l.queue_drops)
            .sum::<u64>()
            .to_string(),
        s.jain_fairness.map_or(String::new(), |j| format!("{j:.4}")),
        format!("{:.4}", busiest.map_or(0.0, |l| l.utilization)),
        busiest
            .and_then(|l| l.queue_delay_mean_ms)
            .map_or(String::new(), |d| format!("{d:.3}")),
    ]
}

/// One row of sweep.csv: the `--param` values as typed, the seed, the metric cells.
pub fn row(values: &[String], seed: u64, metrics: &[String]) -> String {
    let mut r = String::new();
    for v in values {
        r.push_str(&value_text(&parse_value(v)));
        r.push(',');
    }
    r.push_str(&seed.to_string());
    for m in metrics {
        r.push(',');
        r.push_str(m);
    }
    r.push('\n');
    r
}

/// `ackclock sweep collect DIR`: writes DIR/sweep.csv when every run has its result, else
/// names the missing and failed runs and fails (a partial table would pass for a whole one);
/// then draws the figures `plot` asks for beside it.
///
/// # Errors
/// Not a plan, a run without a result, a `plot` the plan's parameters cannot draw (refused
/// before sweep.csv is written), a file that cannot be written.
pub fn collect(dir: &Path, plot: &crate::plot::Options) -> Result<()> {
    let plan = Plan::load(dir)?;
    crate::plot::check(plot, &plan_values(&plan))?;
    let mut csv = header(&plan.header.params);
    let mut missing = Vec::new();
    let mut failed = Vec::new();
    for e in &plan.entries {
        match Outcome::read(&plan, &e.id) {
            Outcome::Done(cells) => {
                let values: Vec<String> = e.overrides.iter().map(|o| o.value.clone()).collect();
                csv.push_str(&row(&values, e.seed, &cells));
            }
            Outcome::Failed(why) => failed.push((e, why)),
            Outcome::Missing(why) => missing.push((e, why)),
        }
    }
    if !missing.is_empty() || !failed.is_empty() {
        let n = plan.entries.len();
        let mut msg = String::new();
        // The first ones by name; a sweep of thousands that never ran needs no list of all.
        const LISTED: usize = 20;
        for (e, why) in failed.iter().chain(&missing).take(LISTED) {
            msg.push_str(&format!(
                "\n  run {} id {} ({} seed {}): {why}",
                e.index,
                e.id,
                crate::plan::describe(&e.overrides),
                e.seed
            ));
        }
        let unlisted = (failed.len() + missing.len()).saturating_sub(LISTED);
        if unlisted > 0 {
            msg.push_str(&format!("\n  ... and {unlisted} more"));
        }
        let first = failed
            .first()
            .or(missing.first())
            .map_or(0, |(e, _)| e.index);
        bail!(
            "{} of {n} runs have no result ({} failed, {} missing); sweep.csv not written:{msg}\nrun them with `ackclock sweep run {} --all` (finished runs are skipped), or one with `--index {first}`, then collect again",
            missing.len() + failed.len(),
            failed.len(),
            missing.len(),
            dir.display()
        );
    }
    let file = dir.join("sweep.csv");
    std::fs::write(&file, &csv).with_context(|| format!("cannot write {}", file.display()))?;
    println!(
        "{} runs collected; table in {}",
        plan.entries.len(),
        file.display()
    );
    let scenario = crate::scenario_name(Path::new(&plan.header.source));
    for f in crate::plot::write(dir, &csv, &scenario, plot)? {
        println!("wrote {}", f.display());
    }
    Ok(())
}

/// Each swept path of a plan with the values its runs take, as sweep.csv writes them.
fn plan_values(plan: &Plan) -> Vec<(String, Vec<String>)> {
    plan.header
        .params
        .iter()
        .map(|p| {
            let cells = plan.entries.iter().flat_map(|e| {
                let set = e.overrides.iter().filter(|o| &o.path == p);
                set.map(|o| value_text(&parse_value(&o.value)))
            });
            (p.clone(), cells.collect())
        })
        .collect()
}
