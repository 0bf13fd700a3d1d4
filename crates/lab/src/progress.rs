//! The suite's progress as lines, for a reader that is not a terminal (a CI log, a file):
//! one line per experiment started and finished, and a line on the runs at least every
//! [`QUIET_LIMIT`] while nothing else is said (`ackclock repro` prints them on standard
//! error, each after the time since the start).

use crate::Progress;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest silence between two lines while runs go on.
pub const QUIET_LIMIT: Duration = Duration::from_secs(10);

/// What to say as the suite progresses; shared by the suite's worker threads.
pub struct ProgressLines {
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

impl ProgressLines {
    /// For a suite of `experiments` experiments and `total` simulator runs; `header` is
    /// the first line.
    pub fn new(total: u64, experiments: usize, header: String) -> ProgressLines {
        ProgressLines {
            header,
            total,
            experiments,
            state: Mutex::new(State {
                last_line: Instant::now(),
                finished: 0,
                runs: 0,
                said_header: false,
            }),
        }
    }

    /// The lines an event calls for (the header before the first; a run's end only after a
    /// silence of [`QUIET_LIMIT`]).
    pub fn lines(&self, p: Progress<'_>) -> Vec<String> {
        let Ok(mut st) = self.state.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if !st.said_header {
            st.said_header = true;
            out.push(self.header.clone());
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
                    return out;
                }
                format!("{} of {} runs", st.runs, self.total)
            }
        };
        st.last_line = Instant::now();
        out.push(line);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_comes_first_and_quiet_runs_say_nothing() {
        let p = ProgressLines::new(10, 2, "2 experiments".into());
        assert_eq!(
            p.lines(Progress::Started { experiment: "a" }),
            ["2 experiments", "started a"]
        );
        assert!(p.lines(Progress::RunEnded { done: 3 }).is_empty());
        assert_eq!(
            p.lines(Progress::Finished {
                experiment: "a",
                took: Duration::from_millis(1500)
            }),
            ["finished a in 1.5 s (1 of 2 experiments done, 3 of 10 runs)"]
        );
    }
}
