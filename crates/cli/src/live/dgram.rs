//! `ackclock rpc`, `rpc-server` and `dgram-stream`: the datagram applications of
//! `ackclock-dgram` (an NFS- or DNS-like RPC client and its server; a TFRC, rate-AIMD or
//! fixed-rate stream and its receiver) in live mode, on the UDP stack of a TUN host, or
//! with `--kernel` on a Linux kernel socket (no root), so that Linux's UDP is the peer.

use super::say;
use ackclock_apps::dgram::report::{self, RpcReport, ServerSettings};
use ackclock_apps::dgram::{
    RpcClientApp, RpcServerApp, Schedule, StreamAppOptions, StreamReceiverApp, StreamSenderApp,
};
use ackclock_apps::spec::{RateControlName, RpcSpec, StreamSpec};
use ackclock_dgram::msg;
use ackclock_dgram::rpc::{RpcServer, Timer};
use ackclock_tun::flags::DevArgs;
use ackclock_tun::place::run_datagram;
use ackclock_tun::{Place, RunEnd};
use ackclock_units as units;
use ackclock_wire::{Duration, Instant};
use anyhow::{bail, Result};
use std::net::{Ipv4Addr, SocketAddrV4};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RpcKind {
    /// NFS-like: 128-byte requests, 1024-byte responses, 4 outstanding (4 biods), closed
    /// loop, a fixed 700 ms timer (SunOS's), 5 transmissions.
    Nfs,
    /// DNS-like: 40-byte queries, 200-byte answers, one outstanding, Poisson arrivals at
    /// 10 a second, the adaptive timer, 4 transmissions.
    Dns,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerName {
    /// The same timeout for every transmission (--timeout-ms).
    Fixed,
    /// The TCP's estimator (Jacobson's mean and deviation, RFC 6298, 200 ms floor) with
    /// exponential backoff.
    Adaptive,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateName {
    /// No rate control (an RPC client: only its outstanding limit; a stream: --rate).
    None,
    /// The TCP window algorithm as a rate: slow start, one packet per RTT per RTT, halve
    /// on a loss event.
    Aimd,
    /// TCP-Friendly Rate Control (RFC 5348): the TCP throughput equation at the measured
    /// loss event rate.
    Tfrc,
}

impl RateName {
    fn spec(self) -> RateControlName {
        match self {
            RateName::None => RateControlName::None,
            RateName::Aimd => RateControlName::Aimd,
            RateName::Tfrc => RateControlName::Tfrc,
        }
    }
    fn name(self) -> &'static str {
        self.spec().name()
    }
}

/// The flags the three datagram commands share, last on each: the output, and where the
/// application runs.
#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Also print the result as one JSON object (last line of stdout; docs/OUTPUTS.md).
    #[arg(long)]
    pub json: bool,
    /// Run on a Linux kernel UDP socket instead of ackclock's UDP on a TUN device (no
    /// root; the TUN device flags do not apply).
    #[arg(long)]
    pub kernel: bool,
    #[command(flatten)]
    pub dev: DevArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RpcArgs {
    /// The server's address and port (an `ackclock rpc-server`, on TUN or --kernel).
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub connect: SocketAddrV4,
    /// The client: nfs (RPC, several outstanding, closed loop) or dns (queries, Poisson
    /// arrivals). The flags below override its defaults.
    #[arg(long, value_enum, default_value = "nfs")]
    pub kind: RpcKind,
    /// Retransmission timer (default: nfs fixed, dns adaptive).
    #[arg(long, value_enum)]
    pub timer: Option<TimerName>,
    /// The fixed timer's timeout (ms, or a time with its unit: 700, 1.1s; default 700).
    #[arg(long, value_name = "MS", value_parser = units::millis())]
    pub timeout_ms: Option<f64>,
    /// Requests outstanding at most (default: nfs 4, dns 1).
    #[arg(long, value_name = "N")]
    pub outstanding: Option<usize>,
    /// Issue this many requests, then wait for the outstanding ones.
    #[arg(long, value_name = "N", conflicts_with = "time")]
    pub requests: Option<u64>,
    /// Issue requests for this long (e.g. 10s, 1min), then wait for the outstanding ones.
    /// Default without --requests: 10s.
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub time: Option<std::time::Duration>,
    /// Open loop: requests arrive as a Poisson process at this many a second and wait at
    /// the client for a free slot (dns default 10; nfs default: closed loop, the next
    /// request as soon as one completes).
    #[arg(long, value_name = "PER_SEC")]
    pub requests_per_sec: Option<f64>,
    /// Transmissions of a request before it is given up, 1 to 255 (default: nfs 5, dns 4).
    #[arg(long, value_name = "N")]
    pub max_transmissions: Option<u32>,
    /// Rate control of the transmissions: none, aimd or tfrc (RFC 5348, the loss event
    /// rate measured from the client's own timeouts).
    #[arg(long, value_enum, default_value = "none")]
    pub rate_control: RateName,
    /// UDP payload of a request (a size; at least 20, the message header; default: nfs
    /// 128, dns 40).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize())]
    pub request_bytes: Option<usize>,
    /// UDP payload of a response the server is asked for (default: nfs 1024, dns 200).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize())]
    pub response_bytes: Option<usize>,
    /// Seed of the Poisson arrivals.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RpcServerArgs {
    /// Answer on ADDR:PORT: ackclock's address on the TUN device, or with --kernel the
    /// address the kernel socket binds (0.0.0.0 for all).
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub listen: SocketAddrV4,
    /// Time to serve one request (ms; 0: at once). Requests wait in a queue meanwhile.
    #[arg(long, value_name = "MS", default_value = "0", value_parser = units::millis())]
    pub service_ms: f64,
    /// Requests waiting for service at most; more are dropped and counted.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub queue: usize,
    /// The largest response sent (a size; a request asking for more gets this much).
    /// Default 1472: what fits a 1500-byte MTU unfragmented.
    #[arg(long, value_name = "SIZE", default_value = "1472", value_parser = units::size_usize())]
    pub max_response: usize,
    /// Stop after this long (default: at SIGINT/SIGTERM).
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub time: Option<std::time::Duration>,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct DgramStreamArgs {
    /// Send to a receiver at ADDR:PORT (an `ackclock dgram-stream --listen`).
    #[arg(
        long,
        value_name = "ADDR:PORT", value_parser = units::parse_socket_addr,
        conflicts_with = "listen",
        required_unless_present = "listen"
    )]
    pub connect: Option<SocketAddrV4>,
    /// Receive on ADDR:PORT and send feedback (RFC 5348 §6) to whoever sends there.
    #[arg(long, value_name = "ADDR:PORT", value_parser = units::parse_socket_addr)]
    pub listen: Option<SocketAddrV4>,
    /// Sender: tfrc (RFC 5348), aimd (the window algorithm as a rate) or none (a fixed
    /// --rate, no congestion control). Default tfrc.
    #[arg(long, value_enum)]
    pub rate_control: Option<RateName>,
    /// Sender with --rate-control none: the fixed rate in IP bytes (e.g. 2mbit).
    #[arg(long, value_name = "RATE", value_parser = units::rate())]
    pub rate: Option<u64>,
    /// Sender: send for this long (default 10s without --bytes). Receiver: stop this long
    /// after starting (default: at SIGINT/SIGTERM or --idle-timeout).
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub time: Option<std::time::Duration>,
    /// Sender: stop after this many payload bytes (a size: 10M, 1GB).
    #[arg(long, value_name = "SIZE", value_parser = units::size(), conflicts_with = "time")]
    pub bytes: Option<u64>,
    /// Sender: UDP payload per packet (a size; at least 20; default 1000).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize())]
    pub packet_bytes: Option<usize>,
    /// Receiver: stop once data has arrived and then none for this long (e.g. 2s).
    #[arg(long, value_name = "TIME", value_parser = units::time_hint_s())]
    pub idle_timeout: Option<std::time::Duration>,
    /// Print a report every SECONDS (a bare number is seconds, as iperf3 -i; any time unit
    /// works: 500ms). At least 10ms; 0: none.
    #[arg(short = 'i', long = "interval-secs", value_name = "SECONDS", value_parser = units::secs())]
    pub interval: Option<std::time::Duration>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// `--kernel` takes none of the TUN device's flags; without it, the device needs root.
fn place(
    cmd: &str,
    common: &CommonArgs,
    our_hint: Option<Ipv4Addr>,
    bind: SocketAddrV4,
) -> Result<Place> {
    let dev = &common.dev;
    dev.check_addresses()?;
    if common.kernel {
        let defaults = DevArgs {
            tun: "ack%d".into(),
            mtu: 1500,
            addr: None,
            tun_addr: None,
            routes: Vec::new(),
            netns: None,
            no_configure: false,
            pcap: None,
            allow_any_address: dev.allow_any_address,
        };
        let given = [
            ("tun", dev.tun != defaults.tun),
            ("mtu", dev.mtu != defaults.mtu),
            ("addr", dev.addr.is_some()),
            ("tun-addr", dev.tun_addr.is_some()),
            ("route", !dev.routes.is_empty()),
            ("netns", dev.netns.is_some()),
            ("no-configure", dev.no_configure),
            ("pcap", dev.pcap.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, g)| *g) {
            bail!(
                "--{flag} sets up the TUN device, and with --kernel there is none: drop --{flag}, or drop --kernel to run on ackclock's UDP{}",
                if *flag == "pcap" {
                    " (with --kernel, capture with tcpdump on the interface instead)"
                } else {
                    ""
                }
            );
        }
        return Ok(Place::Kernel(bind));
    }
    if !ackclock_tun::is_root() {
        bail!(
            "ackclock {cmd} creates a TUN device: run it as root (sudo) or with CAP_NET_ADMIN, or add --kernel to run on Linux's UDP instead"
        );
    }
    Ok(Place::Tun(dev.device(our_hint)?))
}

/// Whether `at` may lie outside the live range: with --allow-any-address, or on a kernel
/// socket at a loopback address (nothing is routed through a TUN device then, so the
/// range's reason, never to send into a real network, does not apply).
fn allow_any(common: &CommonArgs, at: &SocketAddrV4) -> bool {
    common.dev.allow_any_address || (common.kernel && at.ip().is_loopback())
}

fn unspecified(port: u16) -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port)
}

/// Refuses a payload size outside [20, the place's largest unfragmented payload].
fn check_payload(flag: &str, v: usize, place: &Place) -> Result<()> {
    let max = place.max_payload();
    if v < msg::HEADER_LEN {
        bail!(
            "--{flag} {v}: at least {} bytes (the message header)",
            msg::HEADER_LEN
        );
    }
    if v > max {
        match place {
            Place::Tun(d) => bail!(
                "--{flag} {v}: at most {max} bytes: ackclock's UDP does not fragment, and a {}-byte MTU carries {max} bytes of UDP payload (raise --mtu, or send less)",
                d.mtu
            ),
            Place::Kernel(_) => bail!("--{flag} {v}: at most {max} bytes (an IPv4 datagram)"),
        }
    }
    Ok(())
}

/// The client's description from the flags: `--kind`'s defaults where a flag is not
/// given (the spec fills them in), refusing what the flags cannot mean.
fn rpc_spec(a: &RpcArgs) -> Result<RpcSpec> {
    let dns = a.kind == RpcKind::Dns;
    let timer = a.timer.unwrap_or(if dns {
        TimerName::Adaptive
    } else {
        TimerName::Fixed
    });
    match (timer, a.timeout_ms) {
        (TimerName::Adaptive, Some(_)) => bail!(
            "--timeout-ms sets the fixed timer; the adaptive one takes its timeout from the RTT estimator: drop --timeout-ms, or add --timer fixed"
        ),
        // The time grammar refuses negative and not-a-number values; zero is left.
        (TimerName::Fixed, Some(t)) if t <= 0.0 => {
            bail!("--timeout-ms {t}: a timeout must be longer than zero")
        }
        _ => {}
    }
    if let Some(n) = a.outstanding {
        if !(1..=1_000_000).contains(&n) {
            bail!("--outstanding {n}: 1 to 1000000 requests");
        }
    }
    if let Some(r) = a.requests_per_sec {
        if !(r > 0.0 && r <= 1e9) {
            bail!("--requests-per-sec {r}: more than 0 and at most 1e9");
        }
    }
    if let Some(n) = a.max_transmissions {
        if !(1..=255).contains(&n) {
            bail!(
                "--max-transmissions {n}: 1 to 255 (the message's transmission number is a byte)"
            );
        }
    }
    if a.requests == Some(0) {
        bail!("--requests 0: at least one (or --time TIME to issue requests for a while)");
    }
    Ok(RpcSpec {
        request_bytes: a.request_bytes.map(|b| b as f64),
        response_bytes: a.response_bytes.map(|b| b as f64),
        outstanding: a.outstanding.map(|n| n as f64),
        requests_per_s: a.requests_per_sec,
        requests: a.requests.map(|n| n as f64),
        duration_s: None,
        timer: Some(match timer {
            TimerName::Fixed => ackclock_apps::spec::TimerName::Fixed,
            TimerName::Adaptive => ackclock_apps::spec::TimerName::Adaptive,
        }),
        timeout_ms: a.timeout_ms,
        max_transmissions: a.max_transmissions.map(f64::from),
        rate_control: Some(a.rate_control.spec()),
        service_ms: None,
        server_queue: None,
    })
}

/// `ackclock rpc`.
pub fn run_rpc(a: RpcArgs) -> Result<()> {
    super::check_connect(&a.connect, allow_any(&a.common, &a.connect))?;
    let place = place("rpc", &a.common, None, unspecified(0))?;
    let dns = a.kind == RpcKind::Dns;
    let cfg = rpc_spec(&a)?.client_config(dns, a.connect, Instant::ZERO, a.seed);
    check_payload("request-bytes", cfg.request_bytes, &place)?;
    check_payload("response-bytes", cfg.response_bytes, &place)?;
    let time = match (a.requests, a.time) {
        (Some(_), _) => None,
        (None, Some(t)) if t.is_zero() => bail!("--time 0: issue requests for longer than that"),
        (None, Some(t)) => Some(Duration::from(t)),
        (None, None) => Some(Duration::from_secs(10)),
    };
    let kind = if dns { "dns" } else { "nfs" };
    let timer_text = match cfg.timer {
        Timer::Fixed(t) => format!("fixed timer {:.0} ms", t.as_nanos() as f64 / 1e6),
        Timer::Adaptive(_) => "adaptive timer".into(),
    };
    let app = RpcClientApp::new(cfg, kind, Schedule::live(time));
    let ran = run_datagram(app, &place, |w| {
        say!(
            a.common.json,
            "ackclock rpc: {kind} client ({timer_text}, rate control {}), {w} -> {}\n",
            a.rate_control.name(),
            a.connect
        );
    })?;
    let r = RpcReport::new(&ran.app, &ran.facts, kind, time);
    say!(a.common.json, "{}", r.text());
    ran.print_tail(a.common.json.then(|| r.json(&ran.facts.udp)));
    if ran.end == RunEnd::Interrupted {
        bail!("interrupted");
    }
    if r.completed == 0 && r.issued > 0 {
        bail!(
            "no request was answered: is a server listening at {} (e.g. `ackclock rpc-server --kernel --listen {}` on the Linux side){}?",
            a.connect,
            a.connect,
            match &place {
                Place::Tun(d) => format!(", and is it routed via the TUN device (kernel side {})", d.kernel_addr),
                Place::Kernel(_) => String::new(),
            }
        );
    }
    Ok(())
}

/// `ackclock rpc-server`.
pub fn run_rpc_server(a: RpcServerArgs) -> Result<()> {
    let l = a.listen;
    super::check_listen(&l, allow_any(&a.common, &l))?;
    if l.port() == 0 && !a.common.kernel {
        bail!(
            "--listen {l}: give the port the clients send to (e.g. {}:2049)",
            l.ip()
        );
    }
    let place = place("rpc-server", &a.common, Some(*l.ip()), l)?;
    check_payload("max-response", a.max_response, &place)?;
    if !(1..=1_000_000).contains(&a.queue) {
        bail!("--queue {}: 1 to 1000000 requests", a.queue);
    }
    let time = match a.time {
        Some(t) if t.is_zero() => {
            bail!("--time 0: serve for longer than that (or leave --time out: until Ctrl-C)")
        }
        t => t.map(Duration::from),
    };
    let service = Duration::from_secs_f64(a.service_ms / 1000.0);
    let server = RpcServer::new(service, a.queue, a.max_response);
    let app = RpcServerApp::new(server, l.port(), Schedule::live(time));
    let ran = run_datagram(app, &place, |w| {
        let at = place.listening_at(l.port(), w);
        say!(
            a.common.json,
            "ackclock rpc-server: answering on {at}; Ctrl-C to stop\n"
        );
    })?;
    say!(
        a.common.json,
        "{}",
        report::server_text(&ran.app, &ran.facts)
    );
    let set = ServerSettings {
        service_ms: a.service_ms,
        queue: a.queue,
        max_response: a.max_response,
    };
    ran.print_tail(
        a.common
            .json
            .then(|| report::server_json(&ran.app, &ran.facts, &set)),
    );
    // A server stopped by a signal has done its job: that is how it ends.
    Ok(())
}

/// `ackclock dgram-stream`.
pub fn run_dgram_stream(a: DgramStreamArgs) -> Result<()> {
    let interval = super::interval_flag(a.interval)?;
    let time = match a.time {
        Some(t) if t.is_zero() => bail!("--time 0: run for longer than that"),
        t => t.map(Duration::from),
    };
    let opts = StreamAppOptions {
        idle_timeout: a.idle_timeout.map(Duration::from),
        interval,
        keep_intervals: a.common.json,
    };
    match (a.connect, a.listen) {
        (Some(c), None) => stream_sender(&a, c, time, &opts),
        (None, Some(l)) => stream_receiver(&a, l, time, &opts),
        _ => {
            bail!("give exactly one of --connect ADDR:PORT (send) and --listen ADDR:PORT (receive)")
        }
    }
}

/// `ackclock dgram-stream --connect`.
fn stream_sender(
    a: &DgramStreamArgs,
    c: SocketAddrV4,
    time: Option<Duration>,
    opts: &StreamAppOptions,
) -> Result<()> {
    super::check_connect(&c, allow_any(&a.common, &c))?;
    if a.idle_timeout.is_some() {
        bail!(
            "--idle-timeout is the receiver's (with --listen); a sender stops at --time or --bytes"
        );
    }
    let place = place("dgram-stream", &a.common, None, unspecified(0))?;
    let packet_bytes = a.packet_bytes.unwrap_or(1000);
    check_payload("packet-bytes", packet_bytes, &place)?;
    let rc = a.rate_control.unwrap_or(RateName::Tfrc);
    match (rc, a.rate) {
        (RateName::None, None) => bail!(
            "--rate-control none sends at a fixed rate: add --rate RATE (e.g. --rate 2mbit)"
        ),
        (RateName::Aimd | RateName::Tfrc, Some(_)) => bail!(
            "--rate is the fixed rate of --rate-control none; {} finds its own rate: drop --rate, or add --rate-control none",
            rc.name()
        ),
        _ => {}
    }
    if a.bytes == Some(0) {
        bail!("--bytes 0: send at least one byte (or --time TIME)");
    }
    let time = match (a.bytes, time) {
        (Some(_), _) => None,
        (None, Some(t)) => Some(t),
        (None, None) => Some(Duration::from_secs(10)),
    };
    let spec = StreamSpec {
        packet_bytes: Some(packet_bytes as f64),
        rate_control: Some(rc.spec()),
        rate_bps: a.rate.map(|r| r as f64),
        bytes: a.bytes.map(|b| b as f64),
        duration_s: None,
    };
    let mut app = StreamSenderApp::new(
        spec.sender_config(c, Instant::ZERO),
        spec.controller(),
        Schedule::live(time),
        opts,
    );
    if opts.interval.is_some() {
        app.on_interval(report::print_intervals(true, a.common.json));
    }
    let ran = run_datagram(app, &place, |w| {
        say!(
            a.common.json,
            "ackclock dgram-stream: {} sender, {packet_bytes}-byte packets, {w} -> {c}\n",
            rc.name()
        );
    })?;
    say!(
        a.common.json,
        "{}",
        report::sender_text(&ran.app, &ran.facts, rc.name())
    );
    ran.print_tail(
        a.common
            .json
            .then(|| report::sender_json(&ran.app, &ran.facts, rc.name(), time)),
    );
    if ran.end == RunEnd::Interrupted {
        bail!("interrupted");
    }
    let st = ran
        .app
        .sender()
        .map(|s| s.stats().clone())
        .unwrap_or_default();
    if st.feedbacks == 0 && st.packets > 0 && rc != RateName::None {
        bail!(
            "no feedback from the receiver, so {} never left its first rate: is `ackclock dgram-stream --listen {}` (or with --kernel) running there?",
            rc.name(),
            c
        );
    }
    Ok(())
}

/// `ackclock dgram-stream --listen`.
fn stream_receiver(
    a: &DgramStreamArgs,
    l: SocketAddrV4,
    time: Option<Duration>,
    opts: &StreamAppOptions,
) -> Result<()> {
    super::check_listen(&l, allow_any(&a.common, &l))?;
    for (flag, given) in [
        ("rate-control", a.rate_control.is_some()),
        ("rate", a.rate.is_some()),
        ("bytes", a.bytes.is_some()),
        ("packet-bytes", a.packet_bytes.is_some()),
    ] {
        if given {
            bail!(
                "--{flag} is the sender's (with --connect); a receiver only reports what arrives"
            );
        }
    }
    if l.port() == 0 {
        bail!(
            "--listen {l}: give the port the sender sends to (e.g. {}:5004)",
            l.ip()
        );
    }
    let place = place("dgram-stream", &a.common, Some(*l.ip()), l)?;
    let mut app = StreamReceiverApp::new(l.port(), Schedule::live(time), opts);
    if opts.interval.is_some() {
        app.on_interval(report::print_intervals(false, a.common.json));
    }
    let ran = run_datagram(app, &place, |w| {
        let at = place.listening_at(l.port(), w);
        say!(
            a.common.json,
            "ackclock dgram-stream: receiver on {at}; Ctrl-C to stop\n"
        );
    })?;
    say!(a.common.json, "{}", report::receiver_text(&ran.app));
    ran.print_tail(
        a.common
            .json
            .then(|| report::receiver_json(&ran.app, &ran.facts)),
    );
    // A receiver stopped by a signal ends as receivers do; one that saw nothing says so.
    if ran.app.receiver().stats().packets == 0 && !ran.app.interrupted {
        bail!("no data arrived: is a sender (`ackclock dgram-stream --connect ...`) sending here?");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_tun::DeviceConfig;

    #[test]
    fn payloads_fit_the_mtu_unfragmented() {
        let tun = Place::Tun(DeviceConfig::default());
        assert!(check_payload("packet-bytes", 1472, &tun).is_ok());
        let e = check_payload("packet-bytes", 1473, &tun)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "--packet-bytes 1473: at most 1472 bytes: ackclock's UDP does not fragment, and a 1500-byte MTU carries 1472 bytes of UDP payload (raise --mtu, or send less)"
        );
        let k = Place::Kernel(unspecified(0));
        assert!(check_payload("response-bytes", 65_507, &k).is_ok());
        assert!(check_payload("response-bytes", 65_508, &k).is_err());
    }
}
