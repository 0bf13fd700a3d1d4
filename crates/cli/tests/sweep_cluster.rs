//! A sweep planned into a directory, run there in pieces (by index in any order, in shards,
//! under GNU parallel, after a kill) and collected gives the sweep.csv of the same sweep run
//! locally, byte for byte; collect names what is missing; the emitted scheduler files say
//! what the plan needs.

mod sweep_common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};
use sweep_common::*;

/// A fixed shuffle of 0..n (Fisher-Yates driven by a 64-bit LCG with a constant seed).
fn shuffled(n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    let mut x: u64 = 0x5eed;
    for i in (1..n).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (x >> 33) as usize % (i + 1);
        v.swap(i, j);
    }
    v
}

fn run_index(plan: &Path, i: usize) {
    ok(
        &format!("sweep run --index {i}"),
        bin()
            .args(["sweep", "run"])
            .arg(plan)
            .args(["--index", &i.to_string()])
            .output()
            .unwrap(),
    );
}

#[test]
fn plan_run_in_any_order_or_in_shards_then_collect_equals_the_local_sweep_byte_for_byte() {
    let t = Tmp::new("equal");
    let (sc, local) = local_sweep(t.path(), 10, 3);
    assert_eq!(String::from_utf8_lossy(&local).lines().count(), 1 + 12);

    // One process per run, in an order unlike the manifest's.
    let by_index = plan(t.path(), &sc, 3, "by-index", &[]);
    let order = shuffled(12);
    assert_ne!(order, (0..12).collect::<Vec<_>>());
    for &i in &order {
        run_index(&by_index, i);
    }
    same_bytes("runs by index, shuffled", &collect(&by_index), &local);

    // Three shards, the last first; and the index from each scheduler's variable.
    let shards = plan(t.path(), &sc, 3, "shards", &[]);
    for k in [2, 0, 1] {
        ok(
            "sweep run --shard",
            bin()
                .args(["sweep", "run"])
                .arg(&shards)
                .args(["--shard", &format!("{k}/3"), "--jobs", "2"])
                .output()
                .unwrap(),
        );
    }
    same_bytes("runs in shards", &collect(&shards), &local);

    let from_env = plan(t.path(), &sc, 3, "env", &[]);
    for i in 0..12 {
        let var = if i % 2 == 0 {
            "SLURM_ARRAY_TASK_ID"
        } else {
            "JOB_COMPLETION_INDEX"
        };
        let o = ok(
            var,
            bin()
                .args(["sweep", "run"])
                .arg(&from_env)
                .env_remove("SLURM_ARRAY_TASK_ID")
                .env_remove("JOB_COMPLETION_INDEX")
                .env(var, i.to_string())
                .output()
                .unwrap(),
        );
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(&format!("run {i} of 12")) && out.contains(var),
            "{out}"
        );
    }
    same_bytes(
        "runs indexed by SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX",
        &collect(&from_env),
        &local,
    );
}

#[test]
fn planning_again_with_the_same_arguments_keeps_the_plan_and_another_sweep_is_refused() {
    let t = Tmp::new("replan");
    let sc = t.path().join("t.toml");
    std::fs::write(&sc, scenario(5)).unwrap();
    let p = plan(t.path(), &sc, 2, "p", &[]);
    let manifest = std::fs::read(p.join("manifest.jsonl")).unwrap();
    plan(t.path(), &sc, 2, "p", &["--emit", "slurm"]);
    assert_eq!(std::fs::read(p.join("manifest.jsonl")).unwrap(), manifest);
    assert!(p.join("slurm.sbatch").exists());
    let o = bin()
        .args(["sweep", "plan"])
        .arg(&sc)
        .args(PARAMS)
        .args(["--seeds", "3", "--out"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("already holds another sweep plan"), "{e}");
    assert_eq!(std::fs::read(p.join("manifest.jsonl")).unwrap(), manifest);
}

/// Result files of a plan: id -> (inode, mtime in ns), for the ones that exist.
fn stamps(plan: &Path, ids: &[String]) -> Vec<(String, u64, i128)> {
    ids.iter()
        .filter_map(|id| {
            let m = std::fs::metadata(plan.join("results").join(format!("{id}.json"))).ok()?;
            Some((
                id.clone(),
                m.ino(),
                i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ))
        })
        .collect()
}

#[test]
fn a_sweep_killed_mid_way_resumes_without_redoing_finished_runs_and_equals_the_local_sweep() {
    let t = Tmp::new("resume");
    // Long enough runs that the kill lands while runs remain (checked below).
    let (sc, local) = local_sweep(t.path(), 2000, 2);
    let p = plan(t.path(), &sc, 2, "p", &[]);
    let ids = ids(&p);
    assert_eq!(ids.len(), 8);

    let mut child = bin()
        .args(["sweep", "run"])
        .arg(&p)
        .args(["--all", "--jobs", "1"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while stamps(&p, &ids).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no two results within 120 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "sweep run ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let finished = stamps(&p, &ids);
    assert!(
        finished.len() < ids.len(),
        "every run had finished before the kill: make the runs longer"
    );
    // What a kill during a write leaves (a temporary file), and a result cut short by a
    // copy: neither may count as finished.
    let cut = ids
        .iter()
        .find(|id| !finished.iter().any(|f| &f.0 == *id))
        .unwrap();
    std::fs::write(
        p.join("results").join(format!(".{cut}.json.999.1.tmp")),
        "{\"format\": \"ackclock-sweep-result/1\", \"id\": ",
    )
    .unwrap();
    std::fs::write(
        p.join("results").join(format!("{cut}.json")),
        "{\"format\": \"ackclock-sweep-result/1\", \"id\": ",
    )
    .unwrap();
    let o = bin().args(["sweep", "collect"]).arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(cut.as_str()) && e.contains("not a complete result"),
        "{e}"
    );
    assert!(!p.join("sweep.csv").exists());

    let o = ok(
        "sweep run --all after the kill",
        bin()
            .args(["sweep", "run"])
            .arg(&p)
            .args(["--all", "--jobs", "2"])
            .output()
            .unwrap(),
    );
    let out = String::from_utf8_lossy(&o.stdout);
    for (id, _, _) in &finished {
        assert!(
            out.contains(&format!("(id {id}): already done, skipped")),
            "{id}: {out}"
        );
    }
    let redone = ids.len() - finished.len();
    assert!(
        out.contains(&format!("{redone} run, {} skipped", finished.len())),
        "{out}"
    );
    // Not rewritten: the same file (inode) with the same modification time.
    let after = stamps(&p, &ids);
    for f in &finished {
        assert!(after.contains(f), "{} was rewritten", f.0);
    }
    same_bytes("resumed after a kill", &collect(&p), &local);
}

#[test]
fn collect_names_each_missing_and_failed_run_by_id_and_exits_non_zero() {
    let t = Tmp::new("missing");
    let sc = t.path().join("t.toml");
    std::fs::write(&sc, scenario(5)).unwrap();
    let p = plan(t.path(), &sc, 2, "p", &[]);
    let ids = ids(&p);
    for i in [0, 3, 4, 7] {
        run_index(&p, i);
    }
    // A run refused by its budget on the machine that runs it fails, and says so.
    let o = bin()
        .args(["sweep", "run"])
        .arg(&p)
        .args(["--index", "5", "--max-events", "10"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("FAILED"));
    let o = bin().args(["sweep", "collect"]).arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("4 of 8 runs have no result (1 failed, 3 missing)"),
        "{e}"
    );
    for i in [1, 2, 6] {
        assert!(e.contains(&format!("run {i} id {}", ids[i])), "{i}: {e}");
    }
    assert!(
        e.contains(&format!("run 5 id {}", ids[5])) && e.contains("--max-events"),
        "{e}"
    );
    for i in [0, 3, 4, 7] {
        assert!(!e.contains(&ids[i]), "finished run {i} named: {e}");
    }
    assert!(e.contains("--index 5"), "{e}");
    assert!(!p.join("sweep.csv").exists());
}

#[test]
fn sweep_run_says_what_to_type_when_the_index_or_the_plan_is_wrong() {
    let t = Tmp::new("errors");
    let sc = t.path().join("t.toml");
    std::fs::write(&sc, scenario(5)).unwrap();
    let p = plan(t.path(), &sc, 1, "p", &[]);
    let err = |args: &[&str], env: Option<(&str, &str)>| -> String {
        let mut c = bin();
        c.args(["sweep", "run"])
            .arg(&p)
            .args(args)
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX");
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert!(!o.status.success(), "{args:?} {env:?} succeeded");
        // A run that cannot be rebuilt is a failed run: its line is on stdout.
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let e = err(&["--index", "4"], None);
    assert!(
        e.contains("indexes 0 to 3") && e.contains("--array=0-3"),
        "{e}"
    );
    let e = err(&[], Some(("SLURM_ARRAY_TASK_ID", "4")));
    assert!(
        e.contains("from SLURM_ARRAY_TASK_ID") && e.contains("--array=0-3"),
        "{e}"
    );
    let e = err(&[], None);
    assert!(
        e.contains("pass --index I") && e.contains("JOB_COMPLETION_INDEX"),
        "{e}"
    );
    // The scenario edited after planning: its runs are no longer the planned ones.
    let text = std::fs::read_to_string(p.join("scenario.toml")).unwrap();
    std::fs::write(
        p.join("scenario.toml"),
        text.replace("delay_ms = 10", "delay_ms = 11"),
    )
    .unwrap();
    let e = err(&["--index", "0"], None);
    assert!(e.contains("was changed after planning"), "{e}");
    std::fs::remove_file(p.join("manifest.jsonl")).unwrap();
    let e = err(&["--all"], None);
    assert!(
        e.contains("manifest.jsonl: cannot read") && e.contains("sweep plan"),
        "{e}"
    );
}

fn sbatch_value<'a>(script: &'a str, option: &str) -> &'a str {
    let prefix = format!("#SBATCH --{option}=");
    script
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .unwrap_or_else(|| panic!("no {prefix} in\n{script}"))
}

#[test]
fn the_slurm_script_asks_for_the_predicted_time_and_memory_of_each_task() {
    let t = Tmp::new("slurm-script");
    let sc = t.path().join("t.toml");
    // A long run (planned, never run), so the time is above the 5-minute floor and follows
    // the prediction; without traces and queue samples, whose memory grows with time.
    std::fs::write(
        &sc,
        scenario(100_000) + "[output]\ntrace = false\nqueues = false\n",
    )
    .unwrap();
    let manifest = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p.join("manifest.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mib = |m: f64| ((m * 1.5 + 64.0 * 1048576.0) / 1048576.0).ceil() as u64;
    let minutes = |events: f64| ((events / 1e6 * 2.0).max(300.0).ceil() as u64).div_ceil(60);

    let one = plan(
        t.path(),
        &sc,
        2,
        "one",
        &["--emit", "slurm", "--max-parallel", "3"],
    );
    let s = std::fs::read_to_string(one.join("slurm.sbatch")).unwrap();
    let m = manifest(&one);
    assert_eq!(sbatch_value(&s, "array"), "0-7%3");
    let events = m
        .iter()
        .map(|e| e["predicted_events"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let memory = m
        .iter()
        .map(|e| e["predicted_memory_bytes"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!(
        minutes(events) > 5,
        "predicted {events} events: below the floor"
    );
    assert_eq!(sbatch_value(&s, "time"), minutes(events).to_string());
    assert_eq!(sbatch_value(&s, "mem"), format!("{}M", mib(memory)));
    assert!(s.contains("sweep run . --jobs 1\n"), "{s}");

    // Three runs per task: shard k of 3 holds runs k, k+3, k+6; its time is their sum.
    let three = plan(
        t.path(),
        &sc,
        2,
        "three",
        &["--emit", "slurm", "--runs-per-task", "3"],
    );
    let s = std::fs::read_to_string(three.join("slurm.sbatch")).unwrap();
    assert_eq!(sbatch_value(&s, "array"), "0-2%50");
    assert!(s.contains("--shard \"$SLURM_ARRAY_TASK_ID/3\""), "{s}");
    let m = manifest(&three);
    let worst = (0..3)
        .map(|k| {
            m.iter()
                .filter(|e| e["index"].as_u64().unwrap() % 3 == k)
                .map(|e| e["predicted_events"].as_f64().unwrap())
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    assert_eq!(sbatch_value(&s, "time"), minutes(worst).to_string());

    // More array tasks than Slurm takes by default: refused, saying what to add.
    let o = bin()
        .args(["sweep", "plan"])
        .arg(&sc)
        .args([
            "--param",
            "link.0.queue.limit_pkts=5,20",
            "--seeds",
            "501",
            "--emit",
            "slurm",
            "--out",
        ])
        .arg(t.path().join("big"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("1002 Slurm array tasks") && e.contains("--runs-per-task 2"),
        "{e}"
    );
}

/// The allowed keys of each mapping of an Indexed Job, by path: a schema check for the
/// fields we write (kubectl validates only against a live cluster's API server).
const JOB_KEYS: &[(&str, &[&str])] = &[
    ("", &["apiVersion", "kind", "metadata", "spec"]),
    ("metadata", &["name", "labels", "annotations"]),
    (
        "spec",
        &[
            "completionMode",
            "completions",
            "parallelism",
            "backoffLimitPerIndex",
            "backoffLimit",
            "template",
            "ttlSecondsAfterFinished",
        ],
    ),
    ("spec.template", &["metadata", "spec"]),
    (
        "spec.template.spec",
        &[
            "restartPolicy",
            "activeDeadlineSeconds",
            "containers",
            "volumes",
        ],
    ),
    (
        "spec.template.spec.containers[]",
        &[
            "name",
            "image",
            "workingDir",
            "command",
            "args",
            "env",
            "resources",
            "volumeMounts",
        ],
    ),
    (
        "spec.template.spec.containers[].resources",
        &["requests", "limits"],
    ),
    (
        "spec.template.spec.containers[].resources.requests",
        &["cpu", "memory"],
    ),
    (
        "spec.template.spec.containers[].resources.limits",
        &["cpu", "memory"],
    ),
    (
        "spec.template.spec.containers[].volumeMounts[]",
        &["name", "mountPath", "readOnly"],
    ),
    (
        "spec.template.spec.volumes[]",
        &["name", "persistentVolumeClaim"],
    ),
    (
        "spec.template.spec.volumes[].persistentVolumeClaim",
        &["claimName", "readOnly"],
    ),
];

fn check_keys(y: &yaml_rust2::Yaml, path: &str) {
    use yaml_rust2::Yaml;
    match y {
        Yaml::Hash(h) => {
            let allowed = JOB_KEYS
                .iter()
                .find(|(p, _)| *p == path)
                .unwrap_or_else(|| panic!("a mapping at {path:?}, where the schema has none"))
                .1;
            for (k, v) in h {
                let k = k
                    .as_str()
                    .unwrap_or_else(|| panic!("a non-string key at {path:?}"));
                assert!(allowed.contains(&k), "unknown field {k:?} at {path:?}");
                let sub = if path.is_empty() {
                    k.to_string()
                } else {
                    format!("{path}.{k}")
                };
                check_keys(v, &sub);
            }
        }
        Yaml::Array(a) => {
            for v in a {
                check_keys(v, &format!("{path}[]"));
            }
        }
        _ => {}
    }
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

#[test]
fn the_kubernetes_job_is_an_indexed_job_over_every_run_with_the_image_and_the_plan_volume() {
    let t = Tmp::new("k8s");
    let sc = t.path().join("t.toml");
    std::fs::write(&sc, scenario(5)).unwrap();
    let p = plan(
        t.path(),
        &sc,
        3,
        "My_Sweep",
        &[
            "--emit",
            "k8s",
            "--max-parallel",
            "4",
            "--image",
            "registry.example/ackclock:1",
        ],
    );
    let text = std::fs::read_to_string(p.join("k8s-job.yaml")).unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    assert_eq!(docs.len(), 1, "{text}");
    let j = &docs[0];
    check_keys(j, "");
    assert_eq!(j["apiVersion"].as_str(), Some("batch/v1"));
    assert_eq!(j["kind"].as_str(), Some("Job"));
    let name = j["metadata"]["name"].as_str().unwrap();
    assert!(is_dns_label(name), "{name}");
    let spec = &j["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    assert_eq!(spec["completions"].as_i64(), Some(12));
    assert_eq!(spec["parallelism"].as_i64(), Some(4));
    assert!(spec["backoffLimitPerIndex"].as_i64().unwrap() >= 0);
    let pod = &spec["template"]["spec"];
    // Required by backoffLimitPerIndex, and a failed run must not restart in place.
    assert_eq!(pod["restartPolicy"].as_str(), Some("Never"));
    assert!(pod["activeDeadlineSeconds"].as_i64().unwrap() >= 300);
    let containers = pod["containers"].as_vec().unwrap();
    assert_eq!(containers.len(), 1);
    let c = &containers[0];
    assert!(is_dns_label(c["name"].as_str().unwrap()));
    assert_eq!(c["image"].as_str(), Some("registry.example/ackclock:1"));
    let command: Vec<&str> = c["command"]
        .as_vec()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    // No index on the command line: `sweep run` reads JOB_COMPLETION_INDEX.
    assert_eq!(command, ["ackclock", "sweep", "run", ".", "--jobs", "1"]);
    assert_eq!(c["workingDir"].as_str(), Some("/sweep/My_Sweep"));
    for side in ["requests", "limits"] {
        let m = c["resources"][side]["memory"].as_str().unwrap();
        let n: u64 = m
            .strip_suffix("Mi")
            .unwrap_or_else(|| panic!("{m}"))
            .parse()
            .unwrap();
        assert!(n >= 64, "{m}");
    }
    let mount = &c["volumeMounts"][0];
    assert_eq!(mount["mountPath"].as_str(), Some("/sweep"));
    // The repository's Dockerfile puts that `ackclock` on the image's PATH.
    let dockerfile =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Dockerfile"))
            .unwrap();
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(
        last_stage
            .lines()
            .any(|l| l.starts_with("COPY --from=build ") && l.ends_with(" /usr/local/bin/ackclock")),
        "{dockerfile}"
    );
    let volume = &pod["volumes"][0];
    assert_eq!(volume["name"].as_str(), mount["name"].as_str());
    assert!(!volume["persistentVolumeClaim"]["claimName"]
        .as_str()
        .unwrap()
        .is_empty());
}

/// GNU parallel, not moreutils' `parallel` of the same name.
fn gnu_parallel() -> Result<(), String> {
    match std::process::Command::new("parallel")
        .arg("--version")
        .output()
    {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("GNU parallel") => Ok(()),
        Ok(_) => Err("`parallel` here is not GNU parallel (moreutils?)".into()),
        Err(e) => Err(format!(
            "GNU parallel is not installed ({e}); apt-get install parallel"
        )),
    }
}

#[test]
fn the_emitted_gnu_parallel_script_runs_the_sweep_and_collects_the_local_sweep_byte_for_byte() {
    if let Err(why) = gnu_parallel() {
        eprintln!("SKIP the_emitted_gnu_parallel_script...: {why}");
        return;
    }
    let t = Tmp::new("parallel");
    let (sc, local) = local_sweep(t.path(), 10, 3);
    let p = plan(
        t.path(),
        &sc,
        3,
        "p",
        &["--emit", "parallel", "--max-parallel", "2"],
    );
    // Run from elsewhere: the script finds its directory itself.
    ok(
        "sh parallel.sh",
        std::process::Command::new("sh")
            .arg(p.join("parallel.sh"))
            .current_dir(t.path())
            .env("ACKCLOCK", env!("CARGO_BIN_EXE_ackclock"))
            .output()
            .unwrap(),
    );
    same_bytes(
        "GNU parallel",
        &std::fs::read(p.join("sweep.csv")).unwrap(),
        &local,
    );
    // The joblog: a header and one line per index, each exit 0.
    let log = std::fs::read_to_string(p.join("parallel.joblog")).unwrap();
    let lines: Vec<&str> = log.lines().skip(1).collect();
    assert_eq!(lines.len(), 12, "{log}");
    assert!(
        lines.iter().all(|l| l.split('\t').nth(6) == Some("0")),
        "{log}"
    );
}

#[test]
fn seeds_alone_are_a_replication_sweep_locally_and_planned() {
    // `--seeds N` without `--param`: one row per seed, the same bytes either way.
    let t = Tmp::new("replicate");
    let sc = t.path().join("t.toml");
    std::fs::write(&sc, scenario(10)).unwrap();
    let out = t.path().join("local");
    let o = ok(
        "sweep --seeds 4",
        bin()
            .arg("sweep")
            .arg(&sc)
            .args(["--seeds", "4", "--out"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        !stdout.contains("same figures for every seed"),
        "random loss differs by seed: {stdout}"
    );
    let local = std::fs::read(out.join("sweep.csv")).unwrap();
    let text = String::from_utf8_lossy(&local);
    let seeds: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(seeds, ["1", "2", "3", "4"], "{text}");
    assert!(text.starts_with("seed,"), "{text}");
    let p = t.path().join("plan");
    ok(
        "sweep plan --seeds 4",
        bin()
            .args(["sweep", "plan"])
            .arg(&sc)
            .args(["--seeds", "4", "--out"])
            .arg(&p)
            .output()
            .unwrap(),
    );
    for i in 0..4 {
        run_index(&p, i);
    }
    same_bytes("a planned replication sweep", &collect(&p), &local);
}
