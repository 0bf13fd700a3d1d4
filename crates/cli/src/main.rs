//! The `ackclock` command.

use ackclock_apps::services::Service;
use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod analyze_cmd;
mod live;
mod packetdrill_cmd;
mod repro;
mod sim_cmd;
mod sweep;

/// ackclock: the 4BSD TCP of Jacobson and Karels, and a laboratory to measure it.
#[derive(Parser, Debug)]
#[command(
    name = "ackclock",
    version,
    about,
    long_about = None,
    after_help = "\
Examples:
  ackclock repro --quick                        # the seed messages' experiments, shortened
  ackclock sim scenarios/dumbbell.toml          # one scenario: table, CSV, plots
  sudo ackclock live-demo                       # ackclock and Linux's nc in a namespace

Each command's --help has its own examples."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the TCP/IPv4 packets of a pcap file, one line each, with ackclock's own parser;
    /// malformed packets are counted by reason, never fatal.
    #[command(after_help = "\
Examples:
  ackclock sim scenarios/satnet.toml            # writes out/sim/satnet/ucl-bbn.pcap
  ackclock decode out/sim/satnet/ucl-bbn.pcap
  ackclock decode --limit 20 out/sim/satnet/ucl-bbn.pcap")]
    Decode {
        /// A classic pcap file (raw IP, IPv4, Ethernet or Linux cooked link type).
        file: PathBuf,
        /// Print at most this many packets (the summary still counts all).
        #[arg(long)]
        limit: Option<u64>,
        /// Print sequence and ACK numbers as on the wire (tcpdump's -S); by default they
        /// are relative to each side's initial sequence number, as tcpdump prints them.
        #[arg(short = 'S', long)]
        absolute: bool,
    },
    /// Analyze each TCP connection of a pcap file, as tcptrace does: bytes, goodput, RTT
    /// percentiles, retransmissions (spurious), reordering, duplicate ACKs, window limits;
    /// text, JSON or CSV, and time-sequence, outstanding-data, RTT and throughput figures.
    Analyze(analyze_cmd::AnalyzeArgs),
    /// Re-run the experiments of the seed messages in the simulator: print claim, published
    /// number, our number, tolerance and verdict, and write an HTML report with the plots.
    #[command(after_help = "\
Examples:
  ackclock repro                                # all experiments; report in out/repro/
  ackclock repro --quick --only startup,fast_recovery
  ackclock repro --list")]
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
        /// Runs per stochastic configuration, each with its own RNG seed (default: 10, quick: 3).
        #[arg(long, value_parser = sim_cmd::parse_count)]
        seeds: Option<u64>,
        /// List the experiments and exit.
        #[arg(long)]
        list: bool,
        /// Refuse to start a suite of more simulator runs than this (counted before any is
        /// planned, so an absurd --seeds is refused at once; the message gives the default
        /// suite's count).
        #[arg(long, value_name = "N", default_value = "100000", value_parser = sim_cmd::parse_count)]
        max_runs: u64,
    },
    /// Run a scenario file in the simulator: print a summary table and write summary.json,
    /// CSV time series, pcap files and SVG plots into the output directory.
    #[command(after_help = "\
Examples:
  ackclock sim scenarios/dumbbell.toml
  ackclock sim scenarios/satnet.toml --seed 7 --pcap --out out/satnet-7
  ackclock sim scenarios/startup.toml --no-plots --max-memory 2GiB --max-events 1e9

Sizes are bytes: 512M = 512MiB, 2G = 2GiB (binary); 2GB = 2*10^9 (decimal).")]
    Sim {
        /// Scenario file (TOML); see scenarios/ for examples.
        scenario: PathBuf,
        /// Output directory (default: `out/sim/<scenario name>`).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Skip the SVG plots.
        #[arg(long)]
        no_plots: bool,
        /// Capture every host interface, both directions, one pcap file each in the output
        /// directory (`<host>-<neighbour>.pcap`; `ackclock decode`, tcpdump, Wireshark and
        /// tcptrace read them). Routers' interfaces: `pcap = true` on the node or link.
        #[arg(long)]
        pcap: bool,
        /// List every link in the summary (by default: the bottleneck, the links that
        /// dropped packets, and a count of the others).
        #[arg(long)]
        all_links: bool,
        #[command(flatten)]
        budget: sim_cmd::BudgetArgs,
    },
    /// Run a scenario over the cross product of parameter values, in parallel on all cores,
    /// one CSV row per run; or plan, run and collect such a sweep on other machines.
    Sweep(sweep::SweepArgs),
    /// Live (root): a netperf-style bulk test between ackclock on a TUN device and the
    /// Linux kernel's TCP (--mode send: TCP_STREAM, recv: TCP_MAERTS), over one connection
    /// or -P N at once, with iperf3-style -i interval reports; prints goodput,
    /// retransmissions, srtt, cwnd and CPU service demand.
    #[command(after_help = concat!("\
Examples (ackclock is 198.18.0.2, the Linux side of its TUN device 198.18.0.1):
  socat -u TCP-LISTEN:5001,fork,reuseaddr OPEN:/dev/null &   # a Linux sink, then:
  sudo ackclock stream --connect 198.18.0.1:5001 --time 10s -i 1 -P 4 --preset cubic
  sudo ackclock stream --connect 198.18.0.1:5001 --bytes 100MiB --rto-min-ms 200 --sndbuf 1M
  sudo ackclock stream --listen 198.18.0.2:5001 --mode recv --out received.bin

", ackclock_units::units_help!()))]
    Stream(live::stream::StreamArgs),
    /// Live (root): the RFC 863 discard service on a TUN device (for nc, socat, browsers).
    #[command(after_help = concat!("\
Examples:
  sudo ackclock discard                         # on 198.18.0.2:9; then, in another terminal:
  head -c 1000000 /dev/zero | nc -N 198.18.0.2 9
  sudo ackclock discard --listen 198.18.0.2:5001 --count 1 --rcvbuf 16K

", ackclock_units::units_help!()))]
    Discard(live::services::ServiceArgs),
    /// Live (root): the RFC 864 character generator on a TUN device.
    #[command(after_help = concat!("\
Examples:
  sudo ackclock chargen --bytes 64KiB           # on 198.18.0.2:19; then, in another terminal:
  nc -d 198.18.0.2 19 | head -n 3

", ackclock_units::units_help!()))]
    Chargen(live::services::ChargenArgs),
    /// Live (root): the RFC 862 echo service on a TUN device.
    #[command(after_help = concat!("\
Examples:
  sudo ackclock echo                            # on 198.18.0.2:7; then, in another terminal:
  echo hello | nc -N 198.18.0.2 7
  sudo ackclock echo --count 1 --preset vanilla_4_3bsd --pcap echo.pcap

", ackclock_units::units_help!()))]
    Echo(live::services::ServiceArgs),
    /// Live (root): a real-time path emulator: two network namespaces joined through the
    /// gateway models (rate, delay, loss, queue discipline), one set per direction.
    #[command(after_help = concat!("\
Examples:
  sudo ackclock emulate --rate 10mbit --delay 25ms --loss 1% --queue droptail:64
  sudo ip netns exec ackclock-left iperf3 -c 198.18.2.1    # with iperf3 -s in ackclock-right
  sudo ackclock emulate --rate 100mbit --delay 50ms --reverse-rate 10mbit --duration 2min --json

", ackclock_units::units_help!()))]
    Emulate(live::emulate::EmulateArgs),
    /// Live: an RPC client, NFS-like (several requests outstanding) or DNS-like (Poisson
    /// queries), with a fixed or adaptive (the TCP's estimator) retransmission timer and
    /// optional rate control (AIMD, TFRC), on ackclock's UDP on a TUN device (root) or on
    /// Linux's (--kernel); prints requests issued, completed, failed, retransmissions,
    /// duplicates, latency p50/p99 and srtt.
    #[command(after_help = concat!("\
Examples (ackclock is 198.18.0.2, the Linux side of its TUN device 198.18.0.1):
  ackclock rpc-server --kernel --listen 0.0.0.0:2049     # the server, on Linux's UDP; then:
  sudo ackclock rpc --connect 198.18.0.1:2049 --timer adaptive --requests 500
  sudo ackclock rpc --connect 198.18.0.1:2049 --kind dns --requests-per-sec 50 --time 20s --json

", ackclock_units::units_help!()))]
    Rpc(live::dgram::RpcArgs),
    /// Live: the server of `ackclock rpc`: answers each request (retransmissions too, as an
    /// NFS server without a duplicate cache) with the response size asked for, on
    /// ackclock's UDP on a TUN device (root) or on Linux's (--kernel, no root).
    #[command(after_help = concat!("\
Examples:
  ackclock rpc-server --kernel --listen 0.0.0.0:2049     # Linux's UDP serves ackclock's client
  sudo ackclock rpc-server --listen 198.18.0.2:2049 --service-ms 5 --queue 16
  ackclock rpc --kernel --connect 198.18.0.2:2049 --requests 100   # Linux's UDP asks ours

", ackclock_units::units_help!()))]
    RpcServer(live::dgram::RpcServerArgs),
    /// Live: a rate-controlled datagram stream (--connect: TFRC, RFC 5348; rate AIMD; or a
    /// fixed rate) or its receiver (--listen: loss history and feedback once per RTT), on
    /// ackclock's UDP on a TUN device (root) or on Linux's (--kernel); prints rates, loss
    /// event rate and RTT, with -i interval reports.
    #[command(after_help = concat!("\
Examples (ackclock is 198.18.0.2, the Linux side of its TUN device 198.18.0.1):
  ackclock dgram-stream --kernel --listen 0.0.0.0:5004 -i 1   # the receiver, on Linux's UDP
  sudo ackclock dgram-stream --connect 198.18.0.1:5004 --rate-control tfrc --time 20s -i 1
  sudo ackclock dgram-stream --connect 198.18.0.1:5004 --rate-control none --rate 5mbit

", ackclock_units::units_help!()))]
    DgramStream(live::dgram::DgramStreamArgs),
    /// Live (root): a namespace of its own, ackclock serving echo/discard/chargen in it, and
    /// Linux's nc talking to it.
    #[command(after_help = concat!("\
Examples:
  sudo ackclock live-demo
  sudo ackclock live-demo --keep --pcap demo.pcap --preset cubic --delack-ms 40

", ackclock_units::units_help!()))]
    LiveDemo(live::demo::DemoArgs),
    /// Run packetdrill scripts against the engine in virtual time (profile F: the FreeBSD
    /// defaults of the FreeBSD TCP test suite; --profile linux: Linux's); pass/fail per
    /// script, and on failure the line, what it expected and the packet the engine sent.
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
        Command::Decode {
            file,
            limit,
            absolute,
        } => {
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
            let seq = if absolute {
                ackclock_wire::listing::SeqNumbers::Absolute
            } else {
                ackclock_wire::listing::SeqNumbers::Relative
            };
            ackclock_wire::listing::list(std::io::BufReader::new(f), &mut stdout.lock(), limit, seq)
                .with_context(|| file.display().to_string())
        }
        Command::Repro {
            out,
            only,
            quick,
            check,
            seeds,
            list,
            max_runs,
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
                max_runs,
            )
        }
        Command::Sim {
            scenario,
            out,
            seed,
            no_plots,
            pcap,
            all_links,
            budget,
        } => sim_cmd::sim(
            &scenario,
            out,
            seed,
            [!no_plots, pcap, all_links],
            &budget.budget(),
        ),
        Command::Sweep(a) => sweep::run(a),
        Command::Analyze(a) => analyze_cmd::run(a),
        Command::Stream(a) => live::stream::run(a),
        Command::Discard(a) => live::services::run(Service::Discard, a, None),
        Command::Chargen(a) => live::services::run(Service::Chargen, a.service, a.bytes),
        Command::Echo(a) => live::services::run(Service::Echo, a, None),
        Command::Emulate(a) => live::emulate::run(a),
        Command::LiveDemo(a) => live::demo::run(a),
        Command::Rpc(a) => live::dgram::run_rpc(a),
        Command::RpcServer(a) => live::dgram::run_rpc_server(a),
        Command::DgramStream(a) => live::dgram::run_dgram_stream(a),
    }
    .map(|()| std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The command lines of a command's "Examples:" section: each line indented under the
    /// heading (a trailing `\` continues it), without `# comments`, split at `|`, `&&`
    /// and `;`; those that run ackclock (after `sudo` and `ip netns exec NAME`), as words.
    fn examples(after_help: &str) -> Vec<Vec<String>> {
        let mut lines = Vec::new();
        let mut in_examples = false;
        let mut pending = String::new();
        for line in after_help.lines() {
            if line.starts_with("Examples") {
                in_examples = true;
                continue;
            }
            if !in_examples {
                continue;
            }
            if !line.starts_with("  ") {
                in_examples = false;
                continue;
            }
            pending.push_str(line.trim());
            if let Some(p) = pending.strip_suffix('\\') {
                pending = format!("{p} ");
                continue;
            }
            lines.push(std::mem::take(&mut pending));
        }
        let mut commands = Vec::new();
        for line in lines {
            let line = line.split(" #").next().unwrap_or("");
            for part in line.split(['|', ';']).flat_map(|p| p.split("&&")) {
                let mut words: Vec<&str> = part.split_whitespace().collect();
                if words.first() == Some(&"sudo") {
                    words.remove(0);
                }
                if words.starts_with(&["ip", "netns", "exec"]) && words.len() > 3 {
                    words.drain(..4);
                }
                if words.first() == Some(&"ackclock") {
                    commands.push(words.iter().map(|w| w.to_string()).collect());
                }
            }
        }
        commands
    }

    /// Every command and subcommand, with its path from the top.
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        out.push((path.clone(), cmd.clone()));
        for sub in cmd.get_subcommands() {
            walk(sub, format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_command_has_examples_that_parse_and_every_argument_has_help() {
        Cli::command().debug_assert();
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut all = Vec::new();
        walk(&Cli::command(), "ackclock".into(), &mut all);
        assert!(all.len() >= 12, "{} commands", all.len());
        for (path, cmd) in &all {
            for a in cmd.get_arguments() {
                let help = a
                    .get_help()
                    .or(a.get_long_help())
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                assert!(
                    !help.trim().is_empty(),
                    "{path}: argument {} has no help",
                    a.get_id()
                );
            }
            let after = cmd
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let ex = examples(&after);
            assert!(
                (1..=3).contains(&ex.len()),
                "{path}: {} example command lines of ackclock in its after_help, want 1 to 3:\n{after}",
                ex.len()
            );
            // The top level's examples are other commands'; a command's own must run it.
            let own: Vec<String> = path.split(' ').skip(1).map(String::from).collect();
            assert!(
                own.is_empty() || ex.iter().any(|w| w[1..].starts_with(&own)),
                "{path}: no example of the command itself"
            );
            for words in ex {
                if let Err(e) = Cli::try_parse_from(&words) {
                    panic!("{path}: example `{}` does not parse:\n{e}", words.join(" "));
                }
                for w in &words {
                    let is_input = (w.ends_with(".toml") || w.ends_with(".pkt"))
                        && !w.contains('*')
                        && !w.starts_with("out/");
                    assert!(
                        !is_input || repo.join(w).exists(),
                        "{path}: example names {w}, which is not in the repository"
                    );
                }
            }
        }
    }
}
