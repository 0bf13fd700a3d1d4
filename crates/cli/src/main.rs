//! The `ackclock` command.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod decode;
mod live;
mod packetdrill_cmd;
mod repro;
mod sim_cmd;
mod units;

/// ackclock: the 4BSD TCP of Jacobson and Karels, and a laboratory to measure it.
#[derive(Parser, Debug)]
#[command(name = "ackclock", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the TCP/IPv4 packets of a pcap file, one line each, with ackclock's own parser;
    /// malformed packets are counted by reason, never fatal.
    Decode {
        /// A classic pcap file (raw IP, IPv4, Ethernet or Linux cooked link type).
        file: PathBuf,
        /// Print at most this many packets (the summary still counts all).
        #[arg(long)]
        limit: Option<u64>,
    },
    /// Re-run the seeds' experiments in the simulator: print claim, published number, our
    /// number, tolerance and verdict, and write an HTML report with the plots.
    Repro {
        /// Output directory for the report (index.html) and each experiment's files.
        #[arg(long, default_value = "out/repro")]
        out: PathBuf,
        /// Run only these experiments (comma separated names; see --list).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Shortened variant of each experiment (for CI).
        #[arg(long)]
        quick: bool,
        /// Exit non-zero if any claim fails.
        #[arg(long)]
        check: bool,
        /// Seeds per stochastic configuration (default: 10, quick: 3).
        #[arg(long, value_parser = sim_cmd::parse_count)]
        seeds: Option<u64>,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
    },
    /// Run a scenario file in the simulator: print a summary table and write summary.json,
    /// CSV time series, pcap files and SVG plots into the output directory.
    Sim {
        /// Scenario file (TOML); see scenarios/ for examples.
        scenario: PathBuf,
        /// Output directory (default: out/sim/<scenario name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Skip the SVG plots.
        #[arg(long)]
        no_plots: bool,
        /// Capture every link, both directions, to pcap files in the output directory
        /// (<from>-<to>.pcap; `ackclock decode`, tcpdump and Wireshark read them).
        #[arg(long)]
        pcap: bool,
        #[command(flatten)]
        budget: sim_cmd::BudgetArgs,
    },
    /// Run a scenario over the cross product of parameter values, in parallel on all cores,
    /// one CSV row per run.
    Sweep {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// PATH=V1,V2,... where PATH is a dotted path into the scenario (array entries by
        /// index), e.g. --param link.0.queue.limit_pkts=8,16,32. Repeat for a cross product.
        #[arg(long = "param", required = true)]
        params: Vec<sim_cmd::Param>,
        /// Runs per combination, with seeds seed, seed+1, ...
        #[arg(long, default_value_t = 1, value_parser = sim_cmd::parse_count)]
        seeds: u64,
        /// Output directory (default: out/sweep/<scenario name>).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        budget: sim_cmd::BudgetArgs,
    },
    /// Live (root): a netperf-style bulk test between ackclock on a TUN device and the
    /// Linux kernel's TCP (--mode send: TCP_STREAM, recv: TCP_MAERTS); prints goodput,
    /// retransmissions, srtt, cwnd and CPU service demand.
    Stream(live::stream::StreamArgs),
    /// Live (root): the RFC 863 discard service on a TUN device (for nc, socat, browsers).
    Discard(live::services::ServiceArgs),
    /// Live (root): the RFC 864 character generator on a TUN device.
    Chargen(live::services::ServiceArgs),
    /// Live (root): the RFC 862 echo service on a TUN device.
    Echo(live::services::ServiceArgs),
    /// Live (root): a real-time path emulator: two network namespaces joined through the
    /// gateway models (rate, delay, loss, queue discipline), one set per direction.
    Emulate(live::emulate::EmulateArgs),
    /// Live (root): a namespace of its own, ackclock serving echo/discard/chargen in it, and
    /// Linux's nc talking to it.
    LiveDemo(live::demo::DemoArgs),
    /// Run packetdrill scripts against the engine in virtual time (profile F: the FreeBSD
    /// defaults of the FreeBSD TCP test suite); pass/fail per script, and on failure the
    /// line, what it expected and the packet the engine sent.
    Packetdrill(packetdrill_cmd::PacketdrillArgs),
}

/// Errors are printed as one line, `error: ` and the chain of causes, whatever
/// RUST_BACKTRACE says: a user error is not a crash (panics still print theirs).
fn main() -> std::process::ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<std::process::ExitCode> {
    // Behave like other Unix tools when the reader of our output goes away (`| head`):
    // die quietly on SIGPIPE instead of panicking on a failed print.
    // SAFETY: setting a signal disposition to SIG_DFL before any threads exist is sound.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let command = match cli.command {
        // The one command whose exit status says more than success or failure.
        Command::Packetdrill(a) => return packetdrill_cmd::run(a),
        other => other,
    };
    match command {
        Command::Packetdrill(_) => unreachable!("handled above"),
        Command::Decode { file, limit } => {
            let f = std::fs::File::open(&file).map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot read: {}",
                    file.display(),
                    ackclock_sim::scenario::io_reason(&e)
                )
            })?;
            if f.metadata().is_ok_and(|m| m.is_dir()) {
                anyhow::bail!("{}: cannot read: Is a directory", file.display());
            }
            let stdout = std::io::stdout();
            decode::run(std::io::BufReader::new(f), &mut stdout.lock(), limit)
                .with_context(|| file.display().to_string())
        }
        Command::Repro {
            out,
            only,
            quick,
            check,
            seeds,
            list,
        } => {
            if list {
                for e in ackclock_lab::experiments::experiments() {
                    println!("{:<20} {}", e.name(), e.title()?);
                }
                return Ok(std::process::ExitCode::SUCCESS);
            }
            repro::run(
                ackclock_lab::Options {
                    out,
                    only,
                    quick,
                    seeds: seeds.unwrap_or(if quick { 3 } else { 10 }),
                    render: true,
                },
                check,
            )
        }
        Command::Sim {
            scenario,
            out,
            seed,
            no_plots,
            pcap,
            budget,
        } => sim_cmd::sim(&scenario, out, seed, !no_plots, pcap, &budget.budget()),
        Command::Sweep {
            scenario,
            params,
            seeds,
            out,
            budget,
        } => sim_cmd::sweep(&scenario, &params, seeds, out, &budget.budget()),
        Command::Stream(a) => live::stream::run(a),
        Command::Discard(a) => live::services::run(ackclock_tun::Service::Discard, a),
        Command::Chargen(a) => live::services::run(ackclock_tun::Service::Chargen, a),
        Command::Echo(a) => live::services::run(ackclock_tun::Service::Echo, a),
        Command::Emulate(a) => live::emulate::run(a),
        Command::LiveDemo(a) => live::demo::run(a),
    }
    .map(|()| std::process::ExitCode::SUCCESS)
}
