//! The `ackclock` command.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

mod decode;

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
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Decode { file, limit } => {
            let f = std::fs::File::open(&file)
                .with_context(|| format!("cannot open {}", file.display()))?;
            let stdout = std::io::stdout();
            decode::run(std::io::BufReader::new(f), &mut stdout.lock(), limit)
                .with_context(|| format!("while decoding {}", file.display()))
        }
    }
}
