//! `ackclock repro`: runs the reproduction suite (`ackclock-lab`) and prints the claims table
//! and the summary line. Progress goes to standard error: a progress bar on a terminal, else
//! (a CI log, a file) the lines of [`ProgressLines`].

use ackclock_lab::progress::ProgressLines;
use ackclock_lab::Progress;
use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// The simulator runs `opts` plans, counted without building the plan (whose scenarios
/// for `--seeds 1000000` took 4.5 GB before anything ran): every stochastic configuration
/// gets `seeds` runs and every other one a single run, so the count is a + b*seeds; a and b
/// come from the plans of 1 and 2 seeds, and the plan of 3 checks the line.
fn planned_runs(opts: &ackclock_lab::Options) -> Result<u64> {
    if opts.seeds <= 3 {
        return ackclock_lab::suite::planned_runs(opts);
    }
    let with = |seeds| {
        let o = ackclock_lab::Options {
            seeds,
            out: opts.out.clone(),
            only: opts.only.clone(),
            ..*opts
        };
        ackclock_lab::suite::planned_runs(&o)
    };
    let (one, two, three) = (with(1)?, with(2)?, with(3)?);
    let per_seed = two - one;
    if three != one + 2 * per_seed {
        // Not linear in the seeds: count the real plan.
        return ackclock_lab::suite::planned_runs(opts);
    }
    Ok((one - per_seed).saturating_add(per_seed.saturating_mul(opts.seeds)))
}

/// Runs the suite; with `check`, an error when any claim fails; refuses a suite of more
/// than `max_runs` simulator runs before planning it.
pub fn run(opts: ackclock_lab::Options, check: bool, max_runs: u64) -> Result<()> {
    let total = planned_runs(&opts)?;
    if total > max_runs {
        bail!(
            "--seeds {} plans {total} simulator runs, more than the limit of {max_runs} (the default suite, 10 seeds, is {}); use fewer seeds or --only, or raise the limit with --max-runs",
            opts.seeds,
            planned_runs(&ackclock_lab::Options {
                seeds: 10,
                quick: false,
                only: None,
                out: opts.out.clone(),
                ..opts
            })?
        );
    }
    let experiments = ackclock_lab::suite::select(opts.only.as_deref())?.len();
    // The command line as typed, for the report and run.json.
    let command_line: Vec<String> = std::env::args().collect();
    let outcome = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "repro [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left) {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        let outcome = ackclock_lab::run_with(&opts, &command_line, &|p| {
            if let Progress::RunEnded { done } = p {
                bar.set_position(done)
            }
        });
        bar.finish_and_clear();
        outcome
    } else {
        let header = format!(
            "{} experiment(s), {total} simulator runs, {} mode, {} RNG seed(s) per stochastic configuration",
            experiments,
            if opts.quick { "quick" } else { "full" },
            opts.seeds
        );
        let lines = ProgressLines::new(total, experiments, header);
        let start = Instant::now();
        ackclock_lab::run_with(&opts, &command_line, &|p| {
            for line in lines.lines(p) {
                let mut err = std::io::stderr().lock();
                let t = start.elapsed().as_secs_f64();
                let _ = writeln!(err, "repro [{t:>7.1} s] {line}");
                let _ = err.flush();
            }
        })
    };
    let outcome = outcome?;
    let width = ackclock_lab::report::terminal_width();
    print!("{}", outcome.text_table(width));
    print!(
        "\n{}",
        ackclock_lab::report::wrap(&outcome.summary_line(), "", usize::from(width))
    );
    let fails = outcome.count(ackclock_lab::Verdict::Fail);
    if check && fails > 0 {
        bail!("{fails} claim(s) failed (see the FAIL rows above and the report)");
    }
    Ok(())
}
