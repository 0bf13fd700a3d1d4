//! `ackclock analyze`: parse, call `ackclock-analyze`, print.

use anyhow::{anyhow, Result};
use std::path::PathBuf;

/// Per TCP connection of a pcap: bytes, goodput, RTT percentiles, retransmissions (spurious),
/// reordering, duplicate ACKs, zero windows, what limited the sender; and its figures.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  ackclock sim scenarios/satnet.toml            # writes out/sim/satnet/ucl-bbn.pcap
  ackclock analyze out/sim/satnet/ucl-bbn.pcap  # text; figures in out/analyze/ucl-bbn/
  ackclock analyze --json capture.pcap | jq '.connections[0].directions[0].rtt_ms'

--csv writes one row per connection and direction instead (with --no-figures, nothing else).")]
pub struct AnalyzeArgs {
    /// A classic pcap file (raw IP, IPv4, Ethernet or Linux cooked link type).
    capture: PathBuf,
    /// Print the analysis as JSON (only JSON on stdout).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print one CSV row per connection and direction.
    #[arg(long)]
    csv: bool,
    /// Directory of the figures (default: `out/analyze/<capture's file stem>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write no figures.
    #[arg(long)]
    no_figures: bool,
}

pub fn run(a: AnalyzeArgs) -> Result<()> {
    let f = std::fs::File::open(&a.capture).map_err(|e| {
        anyhow!(
            "{}: cannot read: {}",
            a.capture.display(),
            ackclock_sim::scenario::io_reason(&e)
        )
    })?;
    let an = ackclock_analyze::analyze(std::io::BufReader::new(f))
        .map_err(|e| anyhow!("{}: {e}", a.capture.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&an)?);
    } else if a.csv {
        print!("{}", ackclock_analyze::report::csv(&an));
    } else {
        print!("{}", ackclock_analyze::report::text(&an));
    }
    if !a.no_figures {
        let stem = a.capture.file_stem().unwrap_or_default();
        let dir = a
            .out
            .unwrap_or_else(|| PathBuf::from("out/analyze").join(stem));
        let n = ackclock_analyze::figures::write_all(&an, &dir)?.len();
        eprintln!(
            "{n} figures (SVG, PNG, interactive HTML) in {}",
            dir.display()
        );
    }
    Ok(())
}
