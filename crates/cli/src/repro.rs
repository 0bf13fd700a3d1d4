//! `ackclock repro`: runs the reproduction suite (`ackclock-lab`) with a progress bar, prints
//! the claims table and the summary line.

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};

/// Runs the suite; with `check`, an error when any claim fails.
pub fn run(opts: ackclock_lab::Options, check: bool) -> Result<()> {
    let bar = ProgressBar::new(ackclock_lab::suite::planned_runs(&opts)?);
    bar.set_style(
        ProgressStyle::with_template(
            "repro [{bar:40}] {pos}/{len} runs ({elapsed}, ~{eta} left) {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let outcome = ackclock_lab::run(&opts, &|done| bar.set_position(done));
    bar.finish_and_clear();
    let outcome = outcome?;
    print!("{}", outcome.text_table());
    println!("\n{}", outcome.summary_line());
    let fails = outcome.count(ackclock_lab::Verdict::Fail);
    if check && fails > 0 {
        bail!("{fails} claim(s) failed (see the FAIL rows above and the report)");
    }
    Ok(())
}
