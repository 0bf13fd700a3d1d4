//! The bad-input corpus (`tests/bad-input/`): scenario files, pcaps and command lines that
//! are wrong in every way we know of, each with the exact message `ackclock` must print.
//! No case may panic, abort, use more than 1 GiB or run past 10 s.
//!
//! `tests/bad-input/cases.toml` lists the cases. A case names a `file` (a scenario runs as
//! `ackclock sim FILE --out OUT`, a pcap as `ackclock decode FILE`) or gives `args`
//! (`{file}` and `{out}` are replaced), and the `stderr` (exact), `stdout` (exact, when
//! given) and exit `code` it must produce. After changing a message on purpose,
//! `ACKCLOCK_BLESS=1 cargo test -p ackclock --test bad_input` rewrites the expectations;
//! read the diff of cases.toml before committing it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIME_LIMIT: Duration = Duration::from_secs(10);
const MEMORY_LIMIT_KIB: i64 = 1 << 20;
const MIN_CASES: usize = 60;

#[derive(serde::Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(serde::Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct Case {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    stderr: String,
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default = "one")]
    code: i32,
}

fn one() -> i32 {
    1
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    max_rss_kib: i64,
    wall: Duration,
}

/// Runs the binary in the repository root with a time limit, and measures its peak memory
/// (wait4's rusage of that one child; wait4 also reaps it, which clippy cannot see).
#[allow(clippy::zombie_processes)]
fn run(args: &[String]) -> Outcome {
    let dir = std::env::temp_dir().join(format!(
        "ackclock-bad-input-{}-{}",
        std::process::id(),
        args.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ackclock"))
        .args(args)
        .current_dir(repo())
        .env_remove("RUST_BACKTRACE")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("run ackclock");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value to be overwritten by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our own child; status and usage are valid for writes.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        assert!(r == 0, "wait4 failed for {args:?}");
        if started.elapsed() > TIME_LIMIT {
            let _ = child.kill();
            // SAFETY: as above; reap the killed child.
            unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            panic!("ackclock {args:?} ran past {TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let wall = started.elapsed();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let outcome = Outcome {
        code,
        stdout: String::from_utf8_lossy(&std::fs::read(&out_path).unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&std::fs::read(&err_path).unwrap()).into_owned(),
        max_rss_kib: usage.ru_maxrss,
        wall,
    };
    std::fs::remove_dir_all(&dir).unwrap();
    outcome
}

fn args_of(c: &Case, out: &Path) -> Vec<String> {
    let file = c.file.as_ref().map(|f| format!("tests/bad-input/{f}"));
    let args: Vec<String> = match (&c.args, file.as_deref()) {
        (Some(a), _) => a.clone(),
        (None, Some(f)) if f.ends_with(".pcap") => vec!["decode".into(), "{file}".into()],
        (None, Some(_)) => vec![
            "sim".into(),
            "{file}".into(),
            "--out".into(),
            "{out}".into(),
        ],
        (None, None) => panic!("a case needs `file` or `args`"),
    };
    args.into_iter()
        .map(|a| {
            a.replace("{file}", file.as_deref().unwrap_or(""))
                .replace("{out}", &out.to_string_lossy())
        })
        .collect()
}

#[test]
fn every_bad_input_gets_its_exact_message_within_10_s_and_1_gib() {
    let corpus = repo().join("tests/bad-input");
    let manifest = corpus.join("cases.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let cases: Cases = toml::from_str(&text).unwrap();
    assert!(
        cases.case.len() >= MIN_CASES,
        "{} cases, want at least {MIN_CASES}",
        cases.case.len()
    );
    // Every file of the corpus is used by a case.
    for sub in ["scenarios", "pcaps"] {
        for e in std::fs::read_dir(corpus.join(sub)).unwrap() {
            let name = format!("{sub}/{}", e.unwrap().file_name().to_string_lossy());
            assert!(
                cases.case.iter().any(|c| c.file.as_deref() == Some(&name)),
                "{name} is in the corpus but no case uses it"
            );
        }
    }
    let bless = std::env::var_os("ACKCLOCK_BLESS").is_some();
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    let mut largest = (0i64, String::new());
    for (i, c) in cases.case.iter().enumerate() {
        let out = std::env::temp_dir().join(format!("ackclock-bad-out-{}-{i}", std::process::id()));
        let args = args_of(c, &out);
        let o = run(&args);
        let _ = std::fs::remove_dir_all(&out);
        let shown = format!("ackclock {}", args.join(" "));
        assert!(
            !o.stderr.contains("panicked") && o.code != 101 && o.code < 128,
            "{shown}: crashed (exit {}):\n{}",
            o.code,
            o.stderr
        );
        assert!(
            o.max_rss_kib <= MEMORY_LIMIT_KIB,
            "{shown}: used {} MiB",
            o.max_rss_kib / 1024
        );
        if o.wall > slowest.0 {
            slowest = (o.wall, shown.clone());
        }
        if o.max_rss_kib > largest.0 {
            largest = (o.max_rss_kib, shown.clone());
        }
        let stderr = o.stderr.trim_end().to_string();
        let stdout_ok = c.stdout.as_ref().is_none_or(|s| *s == o.stdout.trim_end());
        if stderr != c.stderr || o.code != c.code || !stdout_ok {
            if bless {
                let t = &mut doc["case"]
                    .as_array_of_tables_mut()
                    .unwrap()
                    .get_mut(i)
                    .unwrap();
                t["stderr"] = toml_edit::value(stderr.clone());
                if c.stdout.is_some() {
                    t["stdout"] = toml_edit::value(o.stdout.trim_end());
                }
                if o.code != 1 {
                    t["code"] = toml_edit::value(i64::from(o.code));
                } else {
                    t.remove("code");
                }
            } else {
                failures.push(format!(
                    "{shown}\n  expected (exit {}): {}\n  got      (exit {}): {}{}",
                    c.code,
                    c.stderr,
                    o.code,
                    stderr,
                    if stdout_ok {
                        String::new()
                    } else {
                        format!("\n  stdout: {}", o.stdout.trim_end())
                    }
                ));
            }
        }
    }
    eprintln!(
        "{} cases; slowest {:?} ({}); largest {} MiB ({})",
        cases.case.len(),
        slowest.0,
        slowest.1,
        largest.0 / 1024,
        largest.1
    );
    if bless {
        std::fs::write(&manifest, doc.to_string()).unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ (ACKCLOCK_BLESS=1 rewrites them):\n{}",
        failures.len(),
        cases.case.len(),
        failures.join("\n")
    );
}
