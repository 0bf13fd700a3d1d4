//! `ackclock stream`: a netperf-style bulk test between ackclock and the Linux host on the
//! other side of the TUN device.

use super::args::{DevArgs, TcpArgs};
use crate::units;
use ackclock_tun::{
    Host, Limit, RunEnd, StreamApp, StreamDirection, StreamOptions, StreamReport, StreamRole,
};
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
        value_name = "ADDR:PORT",
        conflicts_with = "connect",
        required_unless_present = "connect"
    )]
    pub listen: Option<SocketAddrV4>,
    /// Connect to a Linux server at ADDR:PORT (e.g. nc -l, socat, a discard server).
    #[arg(long, value_name = "ADDR:PORT")]
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
    /// Also print the result as one JSON object (last line of stdout).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tcp: TcpArgs,
    #[command(flatten)]
    pub dev: DevArgs,
}

fn dur(d: std::time::Duration) -> Duration {
    Duration::from_nanos(d.as_nanos().min(u128::from(u64::MAX)) as u64)
}

impl StreamArgs {
    /// Refuses addresses outside 198.18.0.0/15 unless --allow-any-address (0.0.0.0 in
    /// --listen stands for the default address).
    pub fn check_addresses(&self) -> Result<()> {
        let any = self.dev.allow_any_address;
        if let Some(l) = self.listen.filter(|l| !l.ip().is_unspecified()) {
            super::check_address("--listen", &l, *l.ip(), any)?;
        }
        if let Some(c) = self.connect {
            super::check_address("--connect", &c, *c.ip(), any)?;
        }
        self.dev.check_addresses()
    }
}

pub fn run(a: StreamArgs) -> Result<()> {
    a.check_addresses()?;
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
    let limit = match (a.bytes, a.time) {
        (Some(b), _) => Limit::Bytes(b),
        (None, Some(t)) => Limit::Time(dur(t)),
        (None, None) if direction == StreamDirection::Send && a.file.is_none() => {
            Limit::Time(Duration::from_secs(10))
        }
        _ => Limit::Unlimited,
    };
    let dev = a.dev.device(hint)?;
    let mut opts = StreamOptions::new(role, direction, tcp.clone());
    opts.limit = limit;
    opts.source_file = a.file.clone();
    opts.sink_file = a.out.clone();
    opts.recv_stall = a.recv_stall.map(dur).unwrap_or(Duration::ZERO);
    opts.connect_timeout = dur(a.connect_timeout);
    let mut app = StreamApp::new(opts).context("opening --file/--out")?;
    let mut host = Host::new(&dev)?;
    let test = match direction {
        StreamDirection::Send => "TCP_STREAM",
        StreamDirection::Recv => "TCP_MAERTS",
    };
    match role {
        StreamRole::Listen(p) => println!(
            "ackclock stream: {test}: listening on {}:{p} on {} (kernel side {})",
            dev.our_addr, host.device.name, dev.kernel_addr
        ),
        StreamRole::Connect(c) => println!(
            "ackclock stream: {test}: {} -> {c} on {} (kernel side {})",
            dev.our_addr, host.device.name, dev.kernel_addr
        ),
    }
    let _ = std::io::stdout().flush();
    let cpu0 = host.cpu_time();
    let end = host.run(&mut app)?;
    host.finish()?;
    let cpu = host.cpu_time().saturating_sub(cpu0);
    let r = app.report();
    print_report(test, &a.tcp.preset, r, cpu, end);
    print_device(&host);
    if a.json {
        println!("{}", json_report(test, &a.tcp.preset, r, cpu));
    }
    if let Some(e) = app.file_error() {
        bail!("{e}");
    }
    if let Some(e) = r.error {
        bail!(
            "the connection ended with an error: {e} ({})",
            hint_for(e, &dev)
        );
    }
    if end == RunEnd::Interrupted {
        bail!("interrupted");
    }
    if !r.completed {
        bail!("the transfer did not complete cleanly");
    }
    Ok(())
}

fn hint_for(e: ackclock_tcp::TcpError, dev: &ackclock_tun::DeviceConfig) -> String {
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

/// Service demand as netperf prints it: CPU time per KB (1024 bytes) moved.
fn service_demand_us_per_kb(cpu: Duration, bytes: u64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        cpu.as_nanos() as f64 / 1e3 / (bytes as f64 / 1024.0)
    }
}

fn print_report(test: &str, preset: &str, r: &StreamReport, cpu: Duration, end: RunEnd) {
    let s = r.stats.clone().unwrap_or_default();
    let secs = r.elapsed.as_secs_f64();
    println!();
    println!(
        "{:>12} {:>9} {:>10} {:>9} {:>7} {:>8} {:>8} {:>10} {:>9}",
        "bytes",
        "elapsed_s",
        "goodput",
        "retrans",
        "fast_rx",
        "timeouts",
        "srtt_ms",
        "cwnd",
        "us/KB"
    );
    println!(
        "{:>12} {:>9.3} {:>10} {:>9} {:>7} {:>8} {:>8.3} {:>10} {:>9.3}",
        r.bytes,
        secs,
        format!("{:.2}M", r.goodput_bps() / 1e6),
        s.retransmitted_segs,
        s.fast_retransmits,
        s.timeouts,
        s.srtt.as_nanos() as f64 / 1e6,
        s.cwnd_bytes,
        service_demand_us_per_kb(cpu, r.bytes),
    );
    println!();
    println!("test               {test} (preset {preset})");
    if let (Some(l), Some(p)) = (r.local, r.remote) {
        println!("connection         {l} -> {p}");
    }
    println!(
        "goodput            {:.3} Mbit/s ({} bytes in {:.3} s)",
        r.goodput_bps() / 1e6,
        r.bytes,
        secs
    );
    if let Some(c) = r.connect_time {
        println!("handshake          {:.3} ms", c.as_nanos() as f64 / 1e6);
    }
    println!(
        "retransmissions    {} segments, {} bytes; {} fast retransmits, {} timeouts, {} recoveries",
        s.retransmitted_segs, s.bytes_retransmitted, s.fast_retransmits, s.timeouts, s.recoveries
    );
    println!(
        "rtt                srtt {:.3} ms, rttvar {:.3} ms, rto {:.1} ms, min {}",
        s.srtt.as_nanos() as f64 / 1e6,
        s.rttvar.as_nanos() as f64 / 1e6,
        s.rto.as_nanos() as f64 / 1e6,
        s.min_rtt
            .map(|d| format!("{:.3} ms", d.as_nanos() as f64 / 1e6))
            .unwrap_or_else(|| "-".into())
    );
    println!(
        "window             cwnd {} bytes, ssthresh {}, peer window {} bytes, our window {} bytes",
        s.cwnd_bytes,
        if s.ssthresh_bytes == u32::MAX {
            "inf".to_string()
        } else {
            s.ssthresh_bytes.to_string()
        },
        s.snd_wnd_bytes,
        s.rcv_wnd_bytes
    );
    println!(
        "options            mss {}, wscale {}/{} (ours/peer's), sack {}, timestamps {}",
        s.snd_mss,
        s.rcv_wscale,
        s.snd_wscale,
        if s.sack_enabled { "on" } else { "off" },
        if s.timestamps_enabled { "on" } else { "off" }
    );
    println!(
        "segments           {} out ({} data, {} pure ACKs, {} delayed), {} in ({} data, {} dup ACKs, {} out of order)",
        s.segs_out, s.data_segs_out, s.pure_acks_out, s.delayed_acks_out, s.segs_in, s.data_segs_in, s.dup_acks_in, s.out_of_order_segs_in
    );
    println!(
        "window events      {} zero-window probes sent, {} window updates sent",
        s.window_probes, s.window_updates_out
    );
    println!(
        "header prediction  {} ACK hits, {} data hits, {} misses",
        s.hp_ack_hits, s.hp_data_hits, s.hp_misses
    );
    println!(
        "cpu                {:.3} s, service demand {:.3} us/KB",
        cpu.as_secs_f64(),
        service_demand_us_per_kb(cpu, r.bytes)
    );
    println!(
        "end                {} ({}{})",
        r.final_state.map(|s| s.name()).unwrap_or("-"),
        match r.error {
            Some(e) => e.to_string(),
            None if r.completed => "completed".into(),
            None => "incomplete".into(),
        },
        if end == RunEnd::Interrupted || r.interrupted {
            ", interrupted"
        } else {
            ""
        }
    );
}

fn json_report(test: &str, preset: &str, r: &StreamReport, cpu: Duration) -> String {
    let s = r.stats.clone().unwrap_or_default();
    serde_json::json!({
        "test": test,
        "preset": preset,
        "bytes": r.bytes,
        "elapsed_s": r.elapsed.as_secs_f64(),
        "goodput_bps": r.goodput_bps(),
        "retransmitted_segs": s.retransmitted_segs,
        "bytes_retransmitted": s.bytes_retransmitted,
        "fast_retransmits": s.fast_retransmits,
        "timeouts": s.timeouts,
        "recoveries": s.recoveries,
        "srtt_ms": s.srtt.as_nanos() as f64 / 1e6,
        "cwnd_bytes": s.cwnd_bytes,
        "snd_mss": s.snd_mss,
        "sack": s.sack_enabled,
        "timestamps": s.timestamps_enabled,
        "snd_wscale": s.snd_wscale,
        "rcv_wscale": s.rcv_wscale,
        "window_probes": s.window_probes,
        "window_updates_out": s.window_updates_out,
        "cpu_s": cpu.as_secs_f64(),
        "service_demand_us_per_kb": service_demand_us_per_kb(cpu, r.bytes),
        "completed": r.completed,
        "error": r.error.map(|e| e.to_string()),
        "final_state": r.final_state.map(|s| s.name()),
    })
    .to_string()
}

pub fn print_device(host: &Host) {
    let c = &host.counters;
    let e = host.ep.stats();
    println!(
        "device             {}: {} packets in ({} bytes), {} out ({} bytes), {} refused by the kernel; {} loop turns, {} sleeps",
        host.device.name, c.packets_in, c.bytes_in, c.packets_out, c.bytes_out, c.dropped_out, c.turns, c.sleeps
    );
    println!(
        "endpoint           {} malformed ({} bad TCP checksum), {} not for us, {} RSTs sent, {} matched no connection",
        e.malformed, e.bad_tcp_checksum, e.not_for_us, e.rsts_sent, e.no_connection
    );
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
