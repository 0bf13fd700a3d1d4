//! `ackclock packetdrill`: run packetdrill scripts against the engine in virtual time.

use anyhow::Result;
use std::path::PathBuf;

/// Arguments of `ackclock packetdrill`.
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  ackclock packetdrill --define STANDARD tests/packetdrill/freebsd-tcp-testsuite/snippets/*.pkt
  ackclock packetdrill --define STANDARD --tolerance-usecs 25000 \\
      tests/packetdrill/freebsd-tcp-testsuite/rcv-data-segments/reordering-12345.pkt
  ackclock packetdrill --profile linux tests/packetdrill/ackclock-linux/*/*.pkt

Each script gets a fresh endpoint at 192.168.0.1 with profile F (the FreeBSD defaults the
FreeBSD TCP test suite assumes), or with --profile linux profile L (the defaults of
google/packetdrill's Linux runner: IW10, window scale 8, Linux's option order, CUBIC,
RACK-TLP, PRR, undo and F-RTO); the scripted peer is 192.0.2.1, the port 8080. Exit status:
0 when every script passes, 1 when one fails (its line, what it expected and the packet
the engine sent are printed), 2 for a script that cannot be read or parsed.")]
pub struct PacketdrillArgs {
    /// Scripts to run (.pkt files).
    #[arg(required = true, value_name = "SCRIPT")]
    scripts: Vec<PathBuf>,
    /// Define a preprocessor symbol for `#ifdef NAME` (repeatable). The FreeBSD suite wants
    /// STANDARD.
    #[arg(long = "define", short = 'D', value_name = "NAME")]
    defines: Vec<String>,
    /// Replace every script's --tolerance_usecs (packetdrill's -T; the upstream runner uses
    /// 25000 for rcv-data-segments/): microseconds, or a time with its unit (25ms).
    #[arg(long, value_name = "MICROSECONDS", value_parser = ackclock_units::micros())]
    tolerance_usecs: Option<u64>,
    /// Compare outbound TCP options as a set, ignoring NOP/EOL padding and order (for
    /// scripts written for a stack with another option layout).
    #[arg(long)]
    options_as_set: bool,
    /// The stack the scripts were written for: `freebsd` (profile F, the FreeBSD TCP test
    /// suite's defaults) or `linux` (profile L, google/packetdrill's Linux defaults, on the
    /// engine's linux preset).
    #[arg(long, value_name = "PROFILE", default_value = "freebsd", value_parser = parse_profile)]
    profile: ackclock_packetdrill::profile::Profile,
    /// Print packets the engine sent after the last event (packetdrill ignores them).
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// `--profile`'s parser: the error says which names are accepted.
fn parse_profile(s: &str) -> Result<ackclock_packetdrill::profile::Profile, String> {
    s.parse()
}

/// Runs the scripts; the process exit code is 0, 1 (a script failed) or 2 (unreadable).
pub fn run(a: PacketdrillArgs) -> Result<std::process::ExitCode> {
    let defines: Vec<&str> = a.defines.iter().map(String::as_str).collect();
    let opts = ackclock_packetdrill::RunOptions {
        tolerance_usecs: a.tolerance_usecs,
        options_as_set: a.options_as_set,
        profile: a.profile,
    };
    let (mut pass, mut fail, mut broken) = (0usize, 0usize, 0usize);
    for path in &a.scripts {
        let name = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                println!(
                    "ERROR {name}: cannot read: {}",
                    ackclock_sim::scenario::io_reason(&e)
                );
                broken += 1;
                continue;
            }
        };
        let script = match ackclock_packetdrill::Script::parse(&name, &text, &defines) {
            Ok(s) => s,
            Err(e) => {
                println!("ERROR {e}");
                broken += 1;
                continue;
            }
        };
        match ackclock_packetdrill::run(&script, &opts) {
            Ok(p) => {
                pass += 1;
                println!("pass  {name}");
                if a.verbose {
                    for w in p.warnings {
                        println!("      warning: {w}");
                    }
                }
            }
            Err(f) => {
                fail += 1;
                println!("FAIL  {f}");
            }
        }
    }
    println!(
        "{} script(s): {pass} passed, {fail} failed{}",
        a.scripts.len(),
        if broken > 0 {
            format!(", {broken} could not be read or parsed")
        } else {
            String::new()
        }
    );
    Ok(std::process::ExitCode::from(if broken > 0 {
        2
    } else if fail > 0 {
        1
    } else {
        0
    }))
}
