//! What a run of the suite was: the ackclock version and commit, the command line, the mode,
//! the RNG seeds, the machine, the date and the wall time. The report's first section shows
//! it and `run.json` stores it (see `docs/OUTPUTS.md`). Everything here but the mode and the
//! RNG seeds changes from run to run, so the snapshot test leaves it out.

use serde::Serialize;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The ackclock version (the workspace's `version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit the suite was built from (`build.rs`): a short hash, with `-dirty` when
/// tracked files differed from it, or `unknown` (built outside a git checkout).
pub const COMMIT: &str = env!("ACKCLOCK_COMMIT");

/// The version of `run.json`'s layout; raised when a field changes meaning or goes away.
pub const RUN_SCHEMA_VERSION: u32 = 1;

/// The facts of one run (`run.json`).
#[derive(Clone, Debug, Serialize)]
pub struct RunInfo {
    /// The version of this layout (`RUN_SCHEMA_VERSION`).
    pub schema_version: u32,
    /// `ackclock` version, e.g. `0.1.0`.
    pub version: String,
    /// Git commit, e.g. `cf7241b`, `cf7241b-dirty` or `unknown`.
    pub commit: String,
    /// The command line, program name first; empty when the suite was run from a library
    /// call (the tests).
    pub command_line: Vec<String>,
    /// `quick` or `full`.
    pub mode: String,
    /// The RNG seeds of the simulator runs: per configuration, in all and per experiment.
    pub rng_seeds: RngSeeds,
    /// The experiments run, in report order.
    pub experiments: Vec<String>,
    /// The machine the run was made on.
    pub machine: Machine,
    /// When the run started, UTC, RFC 3339 (`2025-01-31T12:00:00Z`).
    pub started_utc: String,
    /// Wall-clock time of the whole run, in seconds.
    pub wall_time_s: f64,
}

/// The random-number-generator seeds of the simulator runs.
#[derive(Clone, Debug, Serialize)]
pub struct RngSeeds {
    /// Runs per stochastic configuration (`--seeds`); each gets its own RNG seed.
    pub per_configuration: u64,
    /// Every RNG seed used, sorted.
    pub all: Vec<u64>,
    /// The RNG seeds each experiment used, sorted.
    pub by_experiment: BTreeMap<String, Vec<u64>>,
}

/// The machine the run was made on. Fields the system does not tell are `null`.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// Operating system and architecture, e.g. `linux x86_64`.
    pub os: String,
    /// Kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: Option<String>,
    /// The distribution's name (`PRETTY_NAME` of `/etc/os-release`).
    pub distribution: Option<String>,
    /// `model name` of `/proc/cpuinfo`.
    pub cpu_model: Option<String>,
    /// Logical cores available to the process.
    pub cores: usize,
    /// `MemTotal` of `/proc/meminfo`, in bytes.
    pub memory_bytes: Option<u64>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let cpu_model = read("/proc/cpuinfo").and_then(|s| {
            s.lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| matches!(k.trim(), "model name" | "Model" | "cpu model"))
                .map(|(_, v)| v.trim().to_string())
        });
        let memory_bytes = read("/proc/meminfo").and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        });
        let distribution = read("/etc/os-release").and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim().trim_matches('"').to_string())
        });
        Machine {
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            kernel: read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
            distribution,
            cpu_model,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes,
        }
    }

    /// One line: `linux x86_64 (Debian GNU/Linux 12, kernel 6.1.0), Intel Xeon ..., 2 cores,
    /// 23.5 GiB`.
    pub fn describe(&self) -> String {
        let mut os = self.os.clone();
        let extra: Vec<String> = [
            self.distribution.clone(),
            self.kernel.as_ref().map(|k| format!("kernel {k}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !extra.is_empty() {
            os = format!("{os} ({})", extra.join(", "));
        }
        let mut parts = vec![os];
        parts.push(
            self.cpu_model
                .clone()
                .unwrap_or_else(|| "CPU model unknown".into()),
        );
        parts.push(format!(
            "{} core{}",
            self.cores,
            if self.cores == 1 { "" } else { "s" }
        ));
        parts.push(self.memory_bytes.map_or("memory unknown".into(), |b| {
            format!("{:.1} GiB of memory", b as f64 / (1u64 << 30) as f64)
        }));
        parts.join(", ")
    }
}

/// Seeds as ranges: `1-10`, `1-3, 7`.
pub fn ranges(seeds: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seeds.len() {
        let mut j = i;
        while j + 1 < seeds.len() && seeds[j + 1] == seeds[j] + 1 {
            j += 1;
        }
        out.push(if j == i {
            seeds[i].to_string()
        } else {
            format!("{}-{}", seeds[i], seeds[j])
        });
        i = j + 1;
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(", ")
    }
}

/// A time as RFC 3339 UTC, to the second.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_ranges() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3_723); // 2000-02-29
        assert_eq!(rfc3339(t), "2000-02-29T01:02:03Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_735_689_599);
        assert_eq!(rfc3339(t), "2024-12-31T23:59:59Z");
        assert_eq!(ranges(&[1, 2, 3, 7, 9, 10]), "1-3, 7, 9-10");
        assert_eq!(ranges(&[]), "none");
        assert_eq!(ranges(&[5]), "5");
    }

    #[test]
    fn the_commit_is_embedded() {
        assert!(!COMMIT.is_empty());
        assert!(!VERSION.is_empty());
    }
}
