//! `ackclock repro`: runs the reproduction suite (`ackclock-lab`) and prints the claims table
//! and the summary line. Progress goes to standard error: a progress bar on a terminal, else
//! (a CI log, a file) the lines of [`ProgressLines`].

use ackclock_lab::progress::ProgressLines;
use ackclock_lab::Progress;
use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Runs the suite; with `check`, an error when any claim fails.
pub fn run(opts: ackclock_lab::Options, check: bool) -> Result<()> {
    let total = ackclock_lab::suite::planned_runs(&opts)?;
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
