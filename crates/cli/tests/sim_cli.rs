//! `ackclock sim`, `sweep` and `repro` from the command line: outputs written, mistakes
//! explained.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ackclock"))
}

fn tmp(name: &str) -> ackclock_testkit::TempDir {
    ackclock_testkit::TempDir::new(&format!("cli-{name}"))
}

const SCENARIO: &str = "name = \"t\"\nduration_s = 5\n[[node]]\nname = \"a\"\n[[node]]\nname = \"b\"\n[[link]]\na = \"a\"\nb = \"b\"\nrate_bps = 2e6\ndelay_ms = 10\nqueue = { kind = \"drop_tail\", limit_pkts = 10 }\npcap = true\n[[flow]]\nfrom = \"a\"\nto = \"b\"\ntcp = \"reno\"\napp = { kind = \"bulk\" }\n";

#[test]
fn sim_writes_summary_csv_pcap_and_plots() {
    let d = tmp("sim");
    let sc = d.join("t.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let out = d.join("out");
    let o = bin()
        .arg("sim")
        .arg(&sc)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("goodput") && text.contains("flow0"), "{text}");
    for f in [
        "summary.json",
        "flow-flow0.csv",
        "a-b.pcap",
        "b-a.pcap",
        "cwnd.svg",
        "cwnd.png",
        "cwnd.html",
        "tseq-flow0.svg",
        "tseq-flow0.png",
        "tseq-flow0.html",
        "queue-a-b.csv",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let g = j["flows"][0]["goodput_bps"].as_f64().unwrap();
    // A plausible goodput: below the 2 Mb/s link, above half of it (5 s include slow start's
    // overshoot into the 10-packet queue, Reno's multiple losses and one 1 s timeout).
    assert!(g > 1e6 && g < 2e6, "goodput {g}");
}

#[test]
fn sweep_writes_one_row_per_run() {
    let d = tmp("sweep");
    let sc = d.join("t.toml");
    std::fs::write(&sc, SCENARIO.replace("pcap = true\n", "")).unwrap();
    let out = d.join("out");
    let o = bin()
        .arg("sweep")
        .arg(&sc)
        .args([
            "--param",
            "link.0.queue.limit_pkts=5,20",
            "--param",
            "flow.0.tcp=tahoe,sack",
            "--seeds",
            "2",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * 2 * 2, "{csv}");
    assert!(
        lines[0].starts_with("link.0.queue.limit_pkts,flow.0.tcp,seed,"),
        "{csv}"
    );
    assert!(lines.iter().any(|l| l.starts_with("5,tahoe,")), "{csv}");
}

/// `--param seed=...` sets the runs' seeds (it was an override every run's own seed
/// overwrote: each row said seed 1); `--plot` draws a figure per column beside sweep.csv.
#[test]
fn sweep_takes_its_seeds_from_a_seed_param_and_plots_columns() {
    let d = tmp("sweep-seed-plot");
    let sc = d.join("t.toml");
    std::fs::write(&sc, SCENARIO.replace("pcap = true\n", "")).unwrap();
    let out = d.join("out");
    let o = bin()
        .arg("sweep")
        .arg(&sc)
        .args([
            "--param",
            "link.0.queue.limit_pkts=5,20",
            "--param",
            "seed=3,7",
        ])
        .args(["--plot", "total_goodput_bps,queue_drops", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("link.0.queue.limit_pkts,seed,flows,"),
        "{csv}"
    );
    let seeds: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(seeds, ["3", "7", "3", "7"], "{csv}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for col in ["total_goodput_bps", "queue_drops"] {
        for ext in ["svg", "png", "html"] {
            let f = out.join(format!("sweep-{col}.{ext}"));
            assert!(f.exists(), "{} missing", f.display());
            assert!(
                stdout.contains(&format!("wrote {}", f.display())),
                "{stdout}"
            );
        }
    }
    let svg = std::fs::read_to_string(out.join("sweep-queue_drops.svg")).unwrap();
    assert!(
        svg.contains("link.0.queue.limit_pkts"),
        "the x axis names the parameter"
    );
}

#[test]
fn misuse_says_what_to_type() {
    let d = tmp("misuse");
    let sc = d.join("t.toml");
    std::fs::write(&sc, SCENARIO).unwrap();
    let o = bin()
        .arg("sweep")
        .arg(&sc)
        .args(["--param", "link.0.rate_bps"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("expected PATH=V1,V2"), "{e}");
    let o = bin()
        .arg("sweep")
        .arg(&sc)
        .args(["--param", "link.9.rate_bps=1"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("index 9"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let bad = d.join("bad.toml");
    std::fs::write(
        &bad,
        "duration_s = 5\n[[link]]\na = \"x\"\nb = \"y\"\nrate_bps = 1\n",
    )
    .unwrap();
    let o = bin().arg("sim").arg(&bad).output().unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("bad.toml:3") && e.contains("link[0].a"), "{e}");
    let o = bin().args(["repro", "--only", "nosuch"]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the experiments are"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn repro_runs_one_experiment_and_writes_the_report() {
    let d = tmp("repro");
    let o = bin()
        .args([
            "repro",
            "--quick",
            "--check",
            "--only",
            "fast_recovery",
            "--out",
        ])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("fast_recovery") && text.contains("pass"),
        "{text}"
    );
    let html = std::fs::read_to_string(d.join("index.html")).unwrap();
    // The plots are interactive figures (their data and the viewer inlined; the browser
    // test draws them), each linked to its SVG.
    assert!(
        html.contains("<div class=\"ackfig\"><script type=\"application/json\">")
            && html.contains("window.ackclockPlot")
            && html.contains(".svg\">SVG</a>")
            && html.contains("W/2-1"),
        "report lacks plots or claims"
    );
    // The whole claims table, machine-readable (docs/OUTPUTS.md; crates/lab's outputs_doc
    // test checks every field).
    let claims: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("claims.json")).unwrap()).unwrap();
    let rows = claims["claims"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(r["experiment"], "fast_recovery");
        for k in ["id", "claim", "verdict", "source"] {
            assert!(r[k].as_str().is_some_and(|v| !v.is_empty()), "{k} in {r}");
        }
        for k in ["published", "ackclock", "tolerance"] {
            assert!(
                r[k]["text"].as_str().is_some_and(|v| !v.is_empty()),
                "{k} in {r}"
            );
        }
    }
    // The run's facts, with the command line as given.
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("run.json")).unwrap()).unwrap();
    let args: Vec<&str> = run["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args[1..6],
        ["repro", "--quick", "--check", "--only", "fast_recovery"]
    );
    assert_eq!(run["mode"], "quick");
}

/// The link rows of a `sim` summary: the lines after the `link` header up to a blank line.
fn link_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("link "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// On the 8-flow dumbbell the summary listed 34 link rows; it now shows the bottleneck (and
/// any link that dropped) and counts the rest, which `--all-links` lists.
#[test]
fn sim_prints_the_bottleneck_and_counts_the_other_links() {
    let d = tmp("sim-links");
    let run = |all: bool| {
        let mut c = bin();
        c.args([
            "sim",
            "../../scenarios/dumbbell.toml",
            "--no-plots",
            "--out",
        ])
        .arg(d.join(if all { "all" } else { "some" }));
        if all {
            c.arg("--all-links");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let some = link_rows(&run(false));
    assert_eq!(some.len(), 2, "{some:#?}");
    assert!(
        some[0].starts_with("gw_left-gw_right ") && some[0].ends_with("  bottleneck"),
        "{some:#?}"
    );
    assert!(
        some[1].starts_with("(33 more links, none dropping, the busiest ")
            && some[1].ends_with("; --all-links lists them)"),
        "{some:#?}"
    );
    let all = link_rows(&run(true));
    assert_eq!(all.len(), 34, "{all:#?}");
    assert_eq!(
        all.iter().filter(|l| l.ends_with("  bottleneck")).count(),
        1
    );
}
