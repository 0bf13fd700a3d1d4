//! `ackclock stream`: a netperf-style bulk test between ackclock and the Linux host on the
//! other side of the TUN device, over one connection or several at once (`-P`), with
//! iperf3-style interval reports (`-i`) and a JSON document in iperf3 -J's shape (`--json`).

use super::say;
use ackclock_apps::stream::interval::Interval;
use ackclock_apps::stream::report::{self, StreamTest};
use ackclock_apps::stream::{
    Limit, StreamApp, StreamDirection, StreamOptions, StreamReport, StreamRole, MAX_PARALLEL,
};
use ackclock_tun::flags::{DevArgs, TcpArgs};
use ackclock_tun::{DeviceConfig, Host, RunEnd};
use ackclock_units as units;
use ackclock_wire::Duration;
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::net::SocketAddrV4;
use std::path::PathBuf;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// We send (netperf TCP_STREAM).
    #[value(alias = "stream")]
    Send,
    /// We receive (netperf TCP_MAERTS).
    #[value(alias = "maerts")]
    Recv,
}

#[derive(clap::Args, Debug, Clone)]
pub struct StreamArgs {
    /// Wait for the Linux side to connect to ADDR:PORT (ADDR is ackclock's address).
    #[arg(
        long,
        value_name = "ADDR:PORT", value_parser = units::parse_socket_addr,
        conflicts_with = "connect",
        required_unless_present = "connect"
    )]
    pub listen: Option<SocketAddrV4>,
    /// Connect to a Linux server at ADDR:PORT (e.g. nc -l, socat, a discard server).
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub connect: Option<SocketAddrV4>,
    /// send (TCP_STREAM) or recv (TCP_MAERTS). Default: send when connecting, recv when
    /// listening.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Transfer this many bytes (a size: 1000000, 100M = 100MiB, 1GB = 10^9).
    #[arg(long, value_name = "SIZE", value_parser = units::size(), conflicts_with = "time")]
    pub bytes: Option<u64>,
    /// Run this long after the connection is established (e.g. 10s, 500ms, 2min). Default
    /// for a sender without --bytes or --file: 10s.
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub time: Option<std::time::Duration>,
    /// Send this file's contents (default: the RFC 864 chargen pattern).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Write the received bytes to this file (default: discard them).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Receiver: read nothing for this long after the connection opens (closes the
    /// window: zero-window probes and window updates).
    #[arg(long, value_parser = units::time_hint_s(), value_name = "TIME")]
    pub recv_stall: Option<std::time::Duration>,
    /// Give up an active open after this long.
    #[arg(long, value_parser = units::time_hint_s(), default_value = "10s", value_name = "TIME")]
    pub connect_timeout: std::time::Duration,
    /// Print a report every SECONDS, per stream (with a `[SUM]` line when -P > 1), as
    /// iperf3 -i does. The flag's name carries its unit, so a bare number is seconds (-i 1,
    /// as iperf3 users type it); any time unit works too (-i 500ms). At least 10ms; 0:
    /// none.
    #[arg(short = 'i', long = "interval-secs", value_name = "SECONDS", value_parser = units::secs())]
    pub interval: Option<std::time::Duration>,
    /// Run N connections at once, 1 to 128 (iperf3 -P): connecting, from N local ports to
    /// the one server; listening, the first N connections that arrive. --bytes is then
    /// the total of all streams, --time the same for each.
    #[arg(short = 'P', long, value_name = "N", default_value_t = 1, value_parser = parse_parallel)]
    pub parallel: usize,
    /// Also print the result as one JSON document (last line of stdout): the test, every
    /// interval report and the final result per stream and in sum (docs/OUTPUTS.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tcp: TcpArgs,
    #[command(flatten)]
    pub dev: DevArgs,
}

impl StreamArgs {
    /// Refuses addresses outside 198.18.0.0/15 unless --allow-any-address (0.0.0.0 in
    /// --listen stands for the default address).
    pub fn check_addresses(&self) -> Result<()> {
        let any = self.dev.allow_any_address;
        if let Some(l) = &self.listen {
            super::check_listen(l, any)?;
        }
        if let Some(c) = &self.connect {
            super::check_connect(c, any)?;
        }
        self.dev.check_addresses()
    }
}

/// `-P`: 1 to [`MAX_PARALLEL`] streams.
fn parse_parallel(s: &str) -> std::result::Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_PARALLEL).contains(&n) => Ok(n),
        _ => Err(format!(
            "expected 1 to {MAX_PARALLEL} parallel streams (iperf3's limit too)"
        )),
    }
}

/// The test the flags describe, and the address ackclock serves on if it listens.
fn options(a: &StreamArgs) -> Result<(StreamOptions, Option<std::net::Ipv4Addr>)> {
    let tcp = a.tcp.config()?;
    let (role, hint) = match (a.listen, a.connect) {
        (Some(l), None) => (StreamRole::Listen(l.port()), Some(*l.ip())),
        (None, Some(c)) => (StreamRole::Connect(c), None),
        _ => bail!("give exactly one of --listen ADDR:PORT and --connect ADDR:PORT"),
    };
    let mode = a.mode.unwrap_or(match role {
        StreamRole::Connect(_) => Mode::Send,
        StreamRole::Listen(_) => Mode::Recv,
    });
    let direction = match mode {
        Mode::Send => StreamDirection::Send,
        Mode::Recv => StreamDirection::Recv,
    };
    if a.file.is_some() && direction == StreamDirection::Recv {
        bail!("--file is what a sender sends; with --mode recv use --out to keep what arrives");
    }
    if a.parallel > 1 && (a.file.is_some() || a.out.is_some()) {
        bail!(
            "--file and --out are for one stream; with -P {} each stream sends the chargen pattern or discards what arrives",
            a.parallel
        );
    }
    let interval = super::interval_flag(a.interval)?;
    let limit = match (a.bytes, a.time) {
        (Some(b), _) => Limit::Bytes(b),
        (None, Some(t)) => Limit::Time(Duration::from(t)),
        (None, None) if direction == StreamDirection::Send && a.file.is_none() => {
            Limit::Time(Duration::from_secs(10))
        }
        _ => Limit::Unlimited,
    };
    let mut opts = StreamOptions::new(role, direction, tcp);
    opts.limit = limit;
    opts.source_file = a.file.clone();
    opts.sink_file = a.out.clone();
    opts.recv_stall = a.recv_stall.map(Duration::from).unwrap_or(Duration::ZERO);
    opts.connect_timeout = Duration::from(a.connect_timeout);
    opts.parallel = a.parallel;
    opts.interval = interval;
    opts.keep_intervals = a.json;
    Ok((opts, hint))
}

/// `ackclock stream`.
pub fn run(a: StreamArgs) -> Result<()> {
    a.check_addresses()?;
    let (opts, hint) = options(&a)?;
    let dev = a.dev.device(hint)?;
    let (role, interval) = (opts.role, opts.interval);
    let test = StreamTest::of(&opts, &a.tcp.preset);
    let mut app = StreamApp::new(opts).context("opening --file/--out")?;
    if interval.is_some() {
        let (parallel, send) = (a.parallel, test.direction == StreamDirection::Send);
        let json = a.json;
        app.on_interval = Some(Box::new(move |i: &Interval<'_>| {
            say!(json, "{}", report::interval_text(i, parallel, send));
        }));
    }
    let mut host = Host::new(&dev)?;
    // Open before saying so: a client let in by the banner must not find the port closed.
    if let (StreamRole::Listen(p), Err(e)) = (role, app.listen_now(&mut host.ep)) {
        bail!("cannot listen on port {p}: {e}");
    }
    let streams = if a.parallel > 1 {
        format!(", {} parallel streams", a.parallel)
    } else {
        String::new()
    };
    match role {
        StreamRole::Listen(p) => say!(
            a.json,
            "ackclock stream: {}: listening on {}:{p} on {} (kernel side {}){streams}\n",
            test.name,
            dev.our_addr,
            host.device.name,
            dev.kernel_addr
        ),
        StreamRole::Connect(c) => say!(
            a.json,
            "ackclock stream: {}: {} -> {c} on {} (kernel side {}){streams}\n",
            test.name,
            dev.our_addr,
            host.device.name,
            dev.kernel_addr
        ),
    }
    let _ = std::io::stdout().flush();
    let cpu0 = host.cpu_time();
    let end = host.run(&mut app)?;
    host.finish()?;
    let cpu = host.cpu_time().saturating_sub(cpu0);
    let reports: Vec<&StreamReport> = app.reports().collect();
    let interrupted = end == RunEnd::Interrupted;
    if interval.is_some() || a.parallel > 1 {
        say!(
            a.json,
            "{}",
            report::summary_text(&test, &reports, app.total())
        );
    }
    if a.parallel == 1 {
        say!(
            a.json,
            "{}",
            report::single_report(&test, reports[0], cpu, interrupted)
        );
    } else {
        let total = app.total();
        say!(
            a.json,
            "{}",
            report::parallel_report(&test, &reports, total, cpu, interrupted)
        );
    }
    say!(a.json, "{}", host.counters_text());
    if a.json {
        let doc = report::json_document(&test, &reports, app.total(), &app.intervals, cpu);
        println!("{doc}");
    }
    if let Some(e) = app.file_error() {
        bail!("{e}");
    }
    outcome(&reports, interrupted, &dev)
}

/// The exit of a test: its first stream's error, an interruption, or streams that did
/// not complete cleanly.
fn outcome(reports: &[&StreamReport], interrupted: bool, dev: &DeviceConfig) -> Result<()> {
    let n = reports.len();
    for (k, r) in reports.iter().enumerate() {
        if let Some(e) = r.error {
            if n == 1 {
                bail!(
                    "the connection ended with an error: {e} ({})",
                    hint_for(e, dev)
                );
            }
            bail!(
                "stream {} of {n} ended with an error: {e} ({})",
                k + 1,
                hint_for(e, dev)
            );
        }
    }
    if interrupted {
        bail!("interrupted");
    }
    let incomplete: Vec<String> = (1..=n)
        .filter(|k| !reports[k - 1].completed)
        .map(|k| k.to_string())
        .collect();
    if n == 1 && !incomplete.is_empty() {
        bail!("the transfer did not complete cleanly");
    }
    if !incomplete.is_empty() {
        bail!(
            "stream{} {} of {n} did not complete cleanly",
            if incomplete.len() > 1 { "s" } else { "" },
            incomplete.join(", ")
        );
    }
    Ok(())
}

fn hint_for(e: ackclock_tcp::TcpError, dev: &DeviceConfig) -> String {
    use ackclock_tcp::ConnectionError::*;
    match e.connection() {
        Some(Refused | Reset) => "nothing listening there, or the peer aborted".into(),
        Some(TimedOut) => format!(
            "no answer: is a server listening at that address, and is it routed via {} (kernel side {})?",
            dev.name, dev.kernel_addr
        ),
        _ => "see the counters above".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        s: StreamArgs,
    }

    fn check(args: &[&str]) -> Result<()> {
        T::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap()
            .s
            .check_addresses()
    }

    #[test]
    fn addresses_keep_to_198_18_0_0_15() {
        assert!(check(&["--connect", "198.18.0.1:5001"]).is_ok());
        assert!(check(&["--listen", "0.0.0.0:5001"]).is_ok());
        assert!(check(&["--listen", "198.19.0.2:5001", "--route", "198.18.4.0/24"]).is_ok());
        let e = check(&["--connect", "192.168.1.1:5001"])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--connect 192.168.1.1:5001: 192.168.1.1 is outside 198.18.0.0/15")
                && e.ends_with("add --allow-any-address to use it anyway"),
            "{e}"
        );
        for bad in [
            &["--listen", "10.0.0.2:5001"][..],
            &["--connect", "198.18.0.1:1", "--addr", "10.0.0.2"],
            &["--connect", "198.18.0.1:1", "--tun-addr", "10.0.0.1"],
            &["--connect", "198.18.0.1:1", "--route", "0.0.0.0/0"],
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
            let mut allowed = bad.to_vec();
            allowed.push("--allow-any-address");
            assert!(check(&allowed).is_ok(), "{allowed:?}");
        }
    }

    #[test]
    fn interval_and_parallel_flags() {
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1", "-i", "1", "-P", "4"]);
        assert_eq!(t.s.interval, Some(std::time::Duration::from_secs(1)));
        assert_eq!(t.s.parallel, 4);
        // The flag's name carries the unit: a bare number is seconds, any unit works.
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1", "--interval-secs", "0.5"]);
        assert_eq!(t.s.interval, Some(std::time::Duration::from_millis(500)));
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1", "-i", "250ms"]);
        assert_eq!(t.s.interval, Some(std::time::Duration::from_millis(250)));
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1"]);
        assert_eq!((t.s.interval, t.s.parallel), (None, 1));
        assert_eq!(
            T::parse_from(["x", "--connect", "1.1.1.1:1", "-P", "128"])
                .s
                .parallel,
            128
        );
        for bad in ["0", "129", "-1", "4x", ""] {
            let e = T::try_parse_from(["x", "--connect", "198.18.0.1:1", "-P", bad])
                .err()
                .unwrap_or_else(|| panic!("-P {bad} accepted"))
                .to_string();
            assert!(
                bad == "-1" || e.contains("expected 1 to 128 parallel streams"),
                "-P {bad}: {e}"
            );
        }
    }

    #[test]
    fn times_need_their_unit() {
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1", "--time", "10s"]);
        assert_eq!(t.s.time, Some(std::time::Duration::from_secs(10)));
        let t = T::parse_from(["x", "--connect", "198.18.0.1:1", "--time", "1.5min"]);
        assert_eq!(t.s.time, Some(std::time::Duration::from_secs(90)));
        assert_eq!(t.s.connect_timeout, std::time::Duration::from_secs(10));
        let e = T::try_parse_from(["x", "--connect", "198.18.0.1:1", "--time", "10"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with("error: --time 10: a time needs a unit, e.g. 10s or 10000ms"),
            "{e}"
        );
    }
}
