//! `ackclock repro`: runs the reproduction suite (`ackclock-lab`) and prints the claims table
//! and the summary line. Progress goes to standard error: a progress bar on a terminal, else
//! (a CI log, a file) one line per experiment started and finished, and a line on the runs
//! at least every [`QUIET_LIMIT`] while nothing else is said.

use ackclock_lab::Progress;
use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest silence of the line-per-event progress.
const QUIET_LIMIT: Duration = Duration::from_secs(10);

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
        let lines = Lines::new(total, experiments, header);
        ackclock_lab::run_with(&opts, &command_line, &|p| lines.progress(p))
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

/// Progress as lines on standard error, for a reader that is not a terminal.
struct Lines {
    start: Instant,
    /// Said before the first event (so an error before the suite starts comes alone).
    header: String,
    total: u64,
    experiments: usize,
    state: Mutex<State>,
}

struct State {
    last_line: Instant,
    finished: usize,
    runs: u64,
    said_header: bool,
}

impl Lines {
    fn new(total: u64, experiments: usize, header: String) -> Lines {
        let now = Instant::now();
        Lines {
            start: now,
            header,
            total,
            experiments,
            state: Mutex::new(State {
                last_line: now,
                finished: 0,
                runs: 0,
                said_header: false,
            }),
        }
    }

    /// One line, `repro [  12.3 s] ...`.
    fn say(&self, what: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "repro [{:>7.1} s] {what}",
            self.start.elapsed().as_secs_f64()
        );
        let _ = err.flush();
    }

    fn progress(&self, p: Progress) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        if !st.said_header {
            st.said_header = true;
            self.say(&self.header);
        }
        let line = match p {
            Progress::Started { experiment } => format!("started {experiment}"),
            Progress::Finished { experiment, took } => {
                st.finished += 1;
                format!(
                    "finished {experiment} in {:.1} s ({} of {} experiments done, {} of {} runs)",
                    took.as_secs_f64(),
                    st.finished,
                    self.experiments,
                    st.runs,
                    self.total
                )
            }
            Progress::RunEnded { done } => {
                st.runs = st.runs.max(done);
                if st.last_line.elapsed() < QUIET_LIMIT {
                    return;
                }
                format!("{} of {} runs", st.runs, self.total)
            }
        };
        st.last_line = Instant::now();
        self.say(&line);
    }
}
