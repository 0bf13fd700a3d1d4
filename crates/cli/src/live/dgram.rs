//! `ackclock rpc`, `rpc-server` and `dgram-stream`: the datagram applications of
//! `ackclock-dgram` (an NFS- or DNS-like RPC client and its server; a TFRC, rate-AIMD or
//! fixed-rate stream and its receiver) in live mode, on the UDP stack of a TUN host, or
//! with `--kernel` on a Linux kernel socket (no root), so that Linux's UDP is the peer.

use super::args::DevArgs;
use super::dur;
use crate::units;
use ackclock_dgram::rate::{AimdRate, Controller, TfrcRate};
use ackclock_dgram::rpc::{rpc_rtt_config, Arrivals, RateControl, RpcClientConfig, RpcServer};
use ackclock_dgram::rpc::{Timer, IP_UDP_HEADERS};
use ackclock_dgram::stream::StreamSenderConfig;
use ackclock_dgram::{msg, UdpStats};
use ackclock_tun::dgram::{CommandApp, OnDgramInterval};
use ackclock_tun::host::DeviceCounters;
use ackclock_tun::{
    DatagramApp, DeviceConfig, DgramInterval, Host, KernelHost, KernelUdpStats, OnHost,
    RpcClientApp, RpcServerApp, RunEnd, StreamAppOptions, StreamReceiverApp, StreamSenderApp,
};
use ackclock_wire::{Duration, Instant};
use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddrV4};

/// The largest UDP payload of an unfragmented IPv4 datagram.
const MAX_UDP_PAYLOAD: usize = 65_507;

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
    fn name(self) -> &'static str {
        match self {
            RateName::None => "none",
            RateName::Aimd => "aimd",
            RateName::Tfrc => "tfrc",
        }
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
    #[arg(long, value_name = "ADDR:PORT")]
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
    #[arg(long, value_name = "ADDR:PORT")]
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
        value_name = "ADDR:PORT",
        conflicts_with = "listen",
        required_unless_present = "listen"
    )]
    pub connect: Option<SocketAddrV4>,
    /// Receive on ADDR:PORT and send feedback (RFC 5348 §6) to whoever sends there.
    #[arg(long, value_name = "ADDR:PORT")]
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

fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Where a datagram application runs.
enum Place {
    /// ackclock's UDP on a TUN device with this configuration.
    Tun(DeviceConfig),
    /// A kernel socket bound here.
    Kernel(SocketAddrV4),
}

impl Place {
    fn name(&self) -> &'static str {
        match self {
            Place::Tun(_) => "tun",
            Place::Kernel(_) => "kernel",
        }
    }
    /// Where a server or receiver bound to `port` answers, for its first line: `w` is
    /// where it runs (on a TUN device the host's address, on a kernel socket the socket's).
    fn listening_at(&self, port: u16, w: &str) -> String {
        match self {
            Place::Tun(_) => format!("port {port} of {w}"),
            Place::Kernel(_) => w.to_string(),
        }
    }
    /// The largest UDP payload that crosses without fragments (ackclock's UDP neither
    /// fragments nor reassembles).
    fn max_payload(&self) -> usize {
        match self {
            Place::Tun(d) => (d.mtu as usize).saturating_sub(IP_UDP_HEADERS),
            Place::Kernel(_) => MAX_UDP_PAYLOAD,
        }
    }
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

/// A socket's counters, the same for both places.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct UdpReport {
    datagrams_in: u64,
    bytes_in: u64,
    datagrams_out: u64,
    bytes_out: u64,
    /// Sends refused (a full queue or buffer) or failed.
    send_refused: u64,
    /// Arrivals dropped before the application saw them.
    receive_drops: u64,
}

impl UdpReport {
    fn tun(u: &UdpStats, d: &DeviceCounters) -> UdpReport {
        UdpReport {
            datagrams_in: u.datagrams_in,
            bytes_in: u.bytes_in,
            datagrams_out: u.datagrams_out,
            bytes_out: u.bytes_out,
            send_refused: u.tx_queue_full + d.dropped_out,
            receive_drops: u.rx_queue_full
                + u.no_port
                + u.malformed
                + u.bad_checksum
                + u.wrong_addr,
        }
    }
    fn kernel(k: &KernelUdpStats) -> UdpReport {
        UdpReport {
            datagrams_in: k.datagrams_in,
            bytes_in: k.bytes_in,
            datagrams_out: k.datagrams_out,
            bytes_out: k.bytes_out,
            send_refused: k.send_refused + k.send_errors,
            receive_drops: k.rx_queue_drops + k.recv_errors,
        }
    }
    fn json(&self) -> Value {
        json!({
            "datagrams_in": self.datagrams_in,
            "bytes_in": self.bytes_in,
            "datagrams_out": self.datagrams_out,
            "bytes_out": self.bytes_out,
            "send_refused": self.send_refused,
            "receive_drops": self.receive_drops,
        })
    }
}

/// What a run left: the application, how it ended, its socket's address and counters,
/// the device lines to print.
struct Ran<A> {
    app: A,
    end: RunEnd,
    local: Option<SocketAddrV4>,
    now: Instant,
    udp: UdpReport,
    device: String,
}

impl<A> Ran<A> {
    /// The end of a command's output: the device's (or socket's) lines, then the JSON
    /// document when there is one (the last line of stdout).
    fn print_tail(&self, json: Option<Value>) {
        print!("{}", self.device);
        if let Some(j) = json {
            println!("{j}");
        }
    }
}

/// Runs `app` on its place; `banner` gets where it runs ("198.18.0.2 on ack0 (kernel
/// side 198.18.0.1)") before the loop starts.
fn run_on<A: DatagramApp>(
    app: A,
    place: &Place,
    port: u16,
    banner: impl FnOnce(&str),
) -> Result<Ran<A>> {
    match place {
        Place::Tun(dev) => {
            let mut host = Host::new(dev)?;
            banner(&format!(
                "{} on {} (kernel side {})",
                dev.our_addr, host.device.name, dev.kernel_addr
            ));
            let _ = std::io::stdout().flush();
            let mut on = OnHost::new(app, port);
            let end = host.run(&mut on)?;
            host.finish()?;
            if let Some(e) = on.bind_error {
                bail!("cannot bind UDP port {port} on ackclock's UDP: {e}");
            }
            Ok(Ran {
                udp: UdpReport::tun(host.udp.stats(), &host.counters),
                device: super::stream::device_text(&host),
                now: host.clock.now(),
                local: on.local,
                app: on.app,
                end,
            })
        }
        Place::Kernel(addr) => {
            let mut host = KernelHost::bind(*addr)?;
            let local = host.sock.local();
            banner(&format!("{local} on Linux's UDP (a kernel socket)"));
            let _ = std::io::stdout().flush();
            let mut app = app;
            let end = host.run(&mut app)?;
            let k = &host.sock.stats;
            let mut device = format!(
                "socket             {local}: {} datagrams in ({} bytes), {} out ({} bytes); {} sends refused by the kernel, {} failed, {} dropped at the full receive buffer; {} loop turns, {} sleeps\n",
                k.datagrams_in, k.bytes_in, k.datagrams_out, k.bytes_out, k.send_refused, k.send_errors, k.rx_queue_drops, host.turns, host.sleeps
            );
            if let Some(e) = k.last_errno {
                device.push_str(&format!(
                    "socket error       last: {}\n",
                    std::io::Error::from_raw_os_error(e)
                ));
            }
            Ok(Ran {
                udp: UdpReport::kernel(k),
                device,
                now: host.now(),
                local: Some(local),
                app,
                end,
            })
        }
    }
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

/// The client's configuration: the preset of `--kind`, then the flags.
fn rpc_config(a: &RpcArgs, place: &Place) -> Result<RpcClientConfig> {
    let mut c = match a.kind {
        RpcKind::Nfs => RpcClientConfig::nfs(a.connect),
        RpcKind::Dns => RpcClientConfig::dns(a.connect),
    };
    let timer = a.timer.unwrap_or(match c.timer {
        Timer::Fixed(_) => TimerName::Fixed,
        Timer::Adaptive(_) => TimerName::Adaptive,
    });
    c.timer = match (timer, a.timeout_ms) {
        (TimerName::Adaptive, Some(_)) => bail!(
            "--timeout-ms sets the fixed timer; the adaptive one takes its timeout from the RTT estimator: drop --timeout-ms, or add --timer fixed"
        ),
        (TimerName::Adaptive, None) => Timer::Adaptive(rpc_rtt_config()),
        (TimerName::Fixed, t) => {
            let t = t.unwrap_or(700.0);
            // The time grammar refuses negative and not-a-number values; zero is left.
            if t <= 0.0 {
                bail!("--timeout-ms {t}: a timeout must be longer than zero");
            }
            Timer::Fixed(Duration::from_secs_f64(t / 1000.0))
        }
    };
    if let Some(n) = a.outstanding {
        if !(1..=1_000_000).contains(&n) {
            bail!("--outstanding {n}: 1 to 1000000 requests");
        }
        c.outstanding = n;
    }
    if let Some(r) = a.requests_per_sec {
        if !(r > 0.0 && r <= 1e9) {
            bail!("--requests-per-sec {r}: more than 0 and at most 1e9");
        }
        c.arrivals = Arrivals::Poisson {
            per_sec: r,
            backlog: 1000,
        };
    }
    if let Some(n) = a.max_transmissions {
        if !(1..=255).contains(&n) {
            bail!(
                "--max-transmissions {n}: 1 to 255 (the message's transmission number is a byte)"
            );
        }
        c.max_transmissions = n;
    }
    if let Some(n) = a.requests {
        if n == 0 {
            bail!("--requests 0: at least one (or --time TIME to issue requests for a while)");
        }
        c.requests = Some(n);
    }
    if let Some(b) = a.request_bytes {
        c.request_bytes = b;
    }
    if let Some(b) = a.response_bytes {
        c.response_bytes = b;
    }
    check_payload("request-bytes", c.request_bytes, place)?;
    check_payload("response-bytes", c.response_bytes, place)?;
    c.rate = match a.rate_control {
        RateName::None => RateControl::None,
        RateName::Aimd => RateControl::Aimd,
        RateName::Tfrc => RateControl::Tfrc,
    };
    c.seed = a.seed;
    Ok(c)
}

/// `ackclock rpc`.
pub fn run_rpc(a: RpcArgs) -> Result<()> {
    super::check_connect(&a.connect, a.common.dev.allow_any_address)?;
    let place = place("rpc", &a.common, None, unspecified(0))?;
    let cfg = rpc_config(&a, &place)?;
    let time = match (a.requests, a.time) {
        (Some(_), _) => None,
        (None, Some(t)) if t.is_zero() => bail!("--time 0: issue requests for longer than that"),
        (None, Some(t)) => Some(dur(t)),
        (None, None) => Some(Duration::from_secs(10)),
    };
    let kind = match a.kind {
        RpcKind::Nfs => "nfs",
        RpcKind::Dns => "dns",
    };
    let timer_text = match cfg.timer {
        Timer::Fixed(t) => format!("fixed timer {:.0} ms", ms(t)),
        Timer::Adaptive(_) => "adaptive timer".into(),
    };
    let app = RpcClientApp::new(cfg.clone(), time);
    let ran = run_on(app, &place, 0, |w| {
        println!(
            "ackclock rpc: {kind} client ({timer_text}, rate control {}), {w} -> {}",
            a.rate_control.name(),
            a.connect
        );
    })?;
    let r = RpcReport::new(&ran, &cfg, kind, a.rate_control, time, place.name());
    print!("{}", r.text());
    ran.print_tail(a.common.json.then(|| r.json(&ran.udp)));
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

/// A rate in bit/s as kbit/s below 1 Mbit/s, else Mbit/s.
fn bits_text(bps: f64) -> String {
    if bps < 1e6 {
        format!("{:.3} kbit/s", bps / 1e3)
    } else {
        format!("{:.3} Mbit/s", bps / 1e6)
    }
}

/// The figures of an RPC client's run.
struct RpcReport {
    kind: &'static str,
    timer: &'static str,
    timeout: Option<Duration>,
    rate_control: RateName,
    socket: &'static str,
    local: Option<SocketAddrV4>,
    server: SocketAddrV4,
    request_bytes: usize,
    response_bytes: usize,
    max_outstanding: usize,
    requests_per_s: Option<f64>,
    limit_requests: Option<u64>,
    limit: Option<Duration>,
    max_transmissions: u32,
    issued: u64,
    completed: u64,
    failed: u64,
    refused: u64,
    outstanding_at_end: u64,
    transmissions: u64,
    retransmissions: u64,
    timeouts: u64,
    duplicate_responses: u64,
    malformed: u64,
    loss_events: u64,
    goodput_bytes: u64,
    elapsed: Duration,
    latency_ms: [Option<f64>; 4],
    srtt: Duration,
    final_rate_bps: Option<f64>,
    interrupted: bool,
}

impl RpcReport {
    fn new(
        ran: &Ran<RpcClientApp>,
        cfg: &RpcClientConfig,
        kind: &'static str,
        rate_control: RateName,
        limit: Option<Duration>,
        socket: &'static str,
    ) -> RpcReport {
        let app = &ran.app;
        let st = app.client().map(|c| c.stats().clone()).unwrap_or_default();
        let lat = &st.latency;
        let to_ms = |v: Option<f64>| v.map(|ns| ns / 1e6);
        RpcReport {
            kind,
            timer: match cfg.timer {
                Timer::Fixed(_) => "fixed",
                Timer::Adaptive(_) => "adaptive",
            },
            timeout: match cfg.timer {
                Timer::Fixed(t) => Some(t),
                Timer::Adaptive(_) => None,
            },
            rate_control,
            socket,
            local: ran.local,
            server: cfg.server,
            request_bytes: cfg.request_bytes,
            response_bytes: cfg.response_bytes,
            max_outstanding: cfg.outstanding,
            requests_per_s: match cfg.arrivals {
                Arrivals::Poisson { per_sec, .. } => Some(per_sec),
                Arrivals::Closed => None,
            },
            limit_requests: cfg.requests,
            limit,
            max_transmissions: cfg.max_transmissions,
            issued: st.issued,
            completed: st.completed,
            failed: st.failed,
            refused: st.refused,
            outstanding_at_end: app.outstanding(),
            transmissions: st.transmissions,
            retransmissions: st.retransmissions,
            timeouts: st.timeouts,
            duplicate_responses: st.duplicate_responses,
            malformed: st.malformed,
            loss_events: st.loss_events,
            goodput_bytes: st.goodput_bytes,
            elapsed: app.elapsed(ran.now),
            latency_ms: [
                to_ms(lat.mean()),
                to_ms(lat.quantile(0.5)),
                to_ms(lat.quantile(0.99)),
                to_ms(lat.max().map(|v| v as f64)),
            ],
            srtt: app.client().map_or(Duration::ZERO, |c| c.srtt()),
            final_rate_bps: app.client().and_then(|c| c.rate()).map(|x| x * 8.0),
            interrupted: app.interrupted,
        }
    }

    fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.goodput_bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }

    fn text(&self) -> String {
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.3} ms"));
        let mut out = String::from("\n");
        out.push_str(&format!(
            "requests           {} issued, {} completed, {} failed (after {} transmissions), {} refused (backlog full), {} outstanding at the end\n",
            self.issued, self.completed, self.failed, self.max_transmissions, self.refused, self.outstanding_at_end
        ));
        out.push_str(&format!(
            "transmissions      {} ({} retransmissions after {} timeouts); {} duplicate responses, {} malformed\n",
            self.transmissions, self.retransmissions, self.timeouts, self.duplicate_responses, self.malformed
        ));
        out.push_str(&format!(
            "latency            mean {}, p50 {}, p99 {}, max {} (issue to response)\n",
            opt(self.latency_ms[0]),
            opt(self.latency_ms[1]),
            opt(self.latency_ms[2]),
            opt(self.latency_ms[3])
        ));
        out.push_str(&format!(
            "rtt                srtt {:.3} ms{}\n",
            ms(self.srtt),
            match self.timeout {
                Some(t) => format!(" (measured; the fixed timer waits {:.0} ms)", ms(t)),
                None => " (the adaptive timer's estimator)".into(),
            }
        ));
        match self.final_rate_bps {
            Some(r) => out.push_str(&format!(
                "rate control       {}: allowed {} at the end, {} loss events\n",
                self.rate_control.name(),
                bits_text(r),
                self.loss_events
            )),
            None => out.push_str("rate control       none (only the outstanding limit)\n"),
        }
        out.push_str(&format!(
            "goodput            {} ({} response bytes in {:.3} s)\n",
            bits_text(self.goodput_bps()),
            self.goodput_bytes,
            self.elapsed.as_secs_f64()
        ));
        out.push_str(&format!(
            "end                {}\n",
            if self.interrupted {
                format!(
                    "interrupted ({} requests abandoned)",
                    self.outstanding_at_end
                )
            } else {
                "completed".into()
            }
        ));
        out
    }

    fn json(&self, udp: &UdpReport) -> Value {
        json!({
            "command": "rpc",
            "kind": self.kind,
            "timer": self.timer,
            "timeout_ms": self.timeout.map(ms),
            "rate_control": self.rate_control.name(),
            "socket": self.socket,
            "local": self.local.map(|a| a.to_string()),
            "server": self.server.to_string(),
            "request_bytes": self.request_bytes,
            "response_bytes": self.response_bytes,
            "max_outstanding": self.max_outstanding,
            "requests_per_s": self.requests_per_s,
            "limit_requests": self.limit_requests,
            "limit_s": self.limit.map(|d| d.as_secs_f64()),
            "max_transmissions": self.max_transmissions,
            "issued": self.issued,
            "completed": self.completed,
            "failed": self.failed,
            "refused": self.refused,
            "outstanding_at_end": self.outstanding_at_end,
            "transmissions": self.transmissions,
            "retransmissions": self.retransmissions,
            "timeouts": self.timeouts,
            "duplicate_responses": self.duplicate_responses,
            "malformed": self.malformed,
            "loss_events": self.loss_events,
            "elapsed_s": self.elapsed.as_secs_f64(),
            "goodput_bps": self.goodput_bps(),
            "latency_mean_ms": self.latency_ms[0],
            "latency_p50_ms": self.latency_ms[1],
            "latency_p99_ms": self.latency_ms[2],
            "latency_max_ms": self.latency_ms[3],
            "srtt_ms": ms(self.srtt),
            "final_rate_bps": self.final_rate_bps,
            "interrupted": self.interrupted,
            "udp": udp.json(),
        })
    }
}

/// `ackclock rpc-server`.
pub fn run_rpc_server(a: RpcServerArgs) -> Result<()> {
    let l = a.listen;
    super::check_listen(&l, a.common.dev.allow_any_address)?;
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
        t => t.map(dur),
    };
    let service = Duration::from_secs_f64(a.service_ms / 1000.0);
    let app = RpcServerApp::new(RpcServer::new(service, a.queue, a.max_response), time);
    let ran = run_on(app, &place, l.port(), |w| {
        let at = place.listening_at(l.port(), w);
        println!("ackclock rpc-server: answering on {at}; Ctrl-C to stop");
    })?;
    let st = ran.app.server().stats();
    let elapsed = ran.app.elapsed(ran.now);
    println!();
    println!(
        "requests           {} received ({} of them retransmissions), {} dropped at the full queue, {} malformed",
        st.requests, st.retransmitted_requests, st.queue_drops, st.malformed
    );
    println!(
        "responses          {} sent ({} bytes) in {:.3} s",
        st.responses,
        st.response_bytes,
        elapsed.as_secs_f64()
    );
    ran.print_tail(
        a.common
            .json
            .then(|| server_json(&ran, place.name(), a.service_ms, a.queue, a.max_response)),
    );
    // A server stopped by a signal has done its job: that is how it ends.
    Ok(())
}

/// The JSON document of `rpc-server --json` (docs/OUTPUTS.md).
fn server_json(
    ran: &Ran<RpcServerApp>,
    socket: &str,
    service_ms: f64,
    queue: usize,
    max_response: usize,
) -> Value {
    let st = ran.app.server().stats();
    json!({
        "command": "rpc-server",
        "socket": socket,
        "listen": ran.local.map(|a| a.to_string()),
        "service_ms": service_ms,
        "queue": queue,
        "max_response": max_response,
        "requests": st.requests,
        "retransmitted_requests": st.retransmitted_requests,
        "responses": st.responses,
        "response_bytes": st.response_bytes,
        "queue_drops": st.queue_drops,
        "malformed": st.malformed,
        "elapsed_s": ran.app.elapsed(ran.now).as_secs_f64(),
        "interrupted": ran.app.interrupted,
        "udp": ran.udp.json(),
    })
}

/// One interval line: `[  1]   0.00-1.00   sec   1.19 MBytes  9.97 Mbits/sec ...`.
fn interval_line(i: &DgramInterval, send: bool) -> String {
    let mut l = format!(
        "[  1] {:6.2}-{:<6.2} sec  {:>8} pkts  {:>10.3} Mbit/s",
        i.start.as_secs_f64(),
        i.end.as_secs_f64(),
        i.packets,
        i.ip_bps() / 1e6
    );
    if send {
        l.push_str(&format!(
            "  allowed {:>10.3} Mbit/s  rtt {:>8}  p {:.5}",
            i.allowed_bps.unwrap_or(0.0) / 1e6,
            i.rtt.map_or("-".to_string(), |r| format!("{:.2}ms", ms(r))),
            i.p
        ));
    } else {
        l.push_str(&format!(
            "  lost {:>6}  loss events {:>4}  p {:.5}",
            i.lost.unwrap_or(0),
            i.loss_events,
            i.p
        ));
    }
    l.push('\n');
    l
}

/// Prints each interval report as a line, under a header before the first: a sender's
/// (`send`) with its allowed rate and RTT, a receiver's with its losses.
fn print_intervals(send: bool) -> OnDgramInterval {
    let mut header = Some(if send {
        "[ ID] Interval           Packets    Rate (IP bytes)  Allowed rate          RTT        p"
    } else {
        "[ ID] Interval           Packets    Rate (IP bytes)  Lost    Loss events  p"
    });
    Box::new(move |i: &DgramInterval| {
        if let Some(h) = header.take() {
            println!("{h}");
        }
        print!("{}", interval_line(i, send));
    })
}

fn interval_json(i: &DgramInterval) -> Value {
    json!({
        "start": i.start.as_secs_f64(),
        "end": i.end.as_secs_f64(),
        "seconds": i.seconds(),
        "packets": i.packets,
        "bytes": i.bytes,
        "bits_per_second": i.ip_bps(),
        "allowed_bps": i.allowed_bps,
        "rtt_ms": i.rtt.map(ms),
        "p": i.p,
        "loss_events": i.loss_events,
        "lost": i.lost,
    })
}

/// `ackclock dgram-stream`.
pub fn run_dgram_stream(a: DgramStreamArgs) -> Result<()> {
    let any = a.common.dev.allow_any_address;
    let interval = super::interval_flag(a.interval)?;
    let time = match a.time {
        Some(t) if t.is_zero() => bail!("--time 0: run for longer than that"),
        t => t.map(dur),
    };
    match (a.connect, a.listen) {
        (Some(c), None) => {
            super::check_connect(&c, any)?;
            if a.idle_timeout.is_some() {
                bail!("--idle-timeout is the receiver's (with --listen); a sender stops at --time or --bytes");
            }
            let place = place("dgram-stream", &a.common, None, unspecified(0))?;
            let packet_bytes = a.packet_bytes.unwrap_or(1000);
            check_payload("packet-bytes", packet_bytes, &place)?;
            let s = packet_bytes + IP_UDP_HEADERS;
            let rc = a.rate_control.unwrap_or(RateName::Tfrc);
            let ctl = match (rc, a.rate) {
                (RateName::None, Some(r)) => Controller::Fixed(r as f64 / 8.0),
                (RateName::None, None) => bail!(
                    "--rate-control none sends at a fixed rate: add --rate RATE (e.g. --rate 2mbit)"
                ),
                (_, Some(_)) => bail!(
                    "--rate is the fixed rate of --rate-control none; {} finds its own rate: drop --rate, or add --rate-control none",
                    rc.name()
                ),
                (RateName::Tfrc, None) => Controller::Tfrc(TfrcRate::new(s)),
                (RateName::Aimd, None) => Controller::Aimd(AimdRate::new(s)),
            };
            if a.bytes == Some(0) {
                bail!("--bytes 0: send at least one byte (or --time TIME)");
            }
            let time = match (a.bytes, time) {
                (Some(_), _) => None,
                (None, Some(t)) => Some(t),
                (None, None) => Some(Duration::from_secs(10)),
            };
            let opts = StreamAppOptions {
                time,
                idle_timeout: None,
                interval,
                keep_intervals: a.common.json,
            };
            let mut app = StreamSenderApp::new(
                StreamSenderConfig {
                    dst: c,
                    packet_bytes,
                    start: Instant::ZERO,
                    stop: None,
                    bytes: a.bytes,
                },
                ctl,
                &opts,
            );
            if interval.is_some() {
                app.on_interval(print_intervals(true));
            }
            let ran = run_on(app, &place, 0, |w| {
                println!(
                    "ackclock dgram-stream: {} sender, {packet_bytes}-byte packets, {w} -> {c}",
                    rc.name()
                );
            })?;
            sender_report(&ran, rc, &place, &opts, a.common.json)
        }
        (None, Some(l)) => {
            super::check_listen(&l, any)?;
            for (flag, given) in [
                ("rate-control", a.rate_control.is_some()),
                ("rate", a.rate.is_some()),
                ("bytes", a.bytes.is_some()),
                ("packet-bytes", a.packet_bytes.is_some()),
            ] {
                if given {
                    bail!("--{flag} is the sender's (with --connect); a receiver only reports what arrives");
                }
            }
            if l.port() == 0 {
                bail!(
                    "--listen {l}: give the port the sender sends to (e.g. {}:5004)",
                    l.ip()
                );
            }
            let place = place("dgram-stream", &a.common, Some(*l.ip()), l)?;
            let opts = StreamAppOptions {
                time,
                idle_timeout: a.idle_timeout.map(dur),
                interval,
                keep_intervals: a.common.json,
            };
            let mut app = StreamReceiverApp::new(&opts);
            if interval.is_some() {
                app.on_interval(print_intervals(false));
            }
            let ran = run_on(app, &place, l.port(), |w| {
                let at = place.listening_at(l.port(), w);
                println!("ackclock dgram-stream: receiver on {at}; Ctrl-C to stop");
            })?;
            receiver_report(&ran, &place, &opts, a.common.json)
        }
        _ => {
            bail!("give exactly one of --connect ADDR:PORT (send) and --listen ADDR:PORT (receive)")
        }
    }
}

/// How a stream ended, for its report's last line.
fn end_text(interrupted: bool) -> &'static str {
    if interrupted {
        "interrupted"
    } else {
        "completed"
    }
}

fn sender_report(
    ran: &Ran<StreamSenderApp>,
    rc: RateName,
    place: &Place,
    opts: &StreamAppOptions,
    json_out: bool,
) -> Result<()> {
    let app = &ran.app;
    let Some(s) = app.sender() else {
        bail!("the sender never started");
    };
    let st = s.stats();
    let ctl = s.controller();
    let elapsed = app.elapsed(ran.now);
    let mean = s.mean_rate().map(|x| x * 8.0);
    let rtt = ctl.rtt().map(|r| r * 1e3);
    println!();
    println!(
        "packets            {} sent ({} payload bytes) in {:.3} s: mean rate {} (IP bytes, first packet to last)",
        st.packets,
        st.bytes,
        elapsed.as_secs_f64(),
        mean.map_or("-".into(), |m| format!("{:.3} Mbit/s", m / 1e6))
    );
    println!(
        "rate control       {}: allowed {:.3} Mbit/s at the end, rtt {}; {} feedbacks, {} no-feedback timeouts",
        rc.name(),
        ctl.rate() * 8.0 / 1e6,
        rtt.map_or("-".into(), |r| format!("{r:.3} ms")),
        st.feedbacks,
        st.no_feedback_timeouts
    );
    println!(
        "loss               loss event rate {:.6} (the receiver's last report), {} loss events, {} malformed feedbacks",
        st.p, st.loss_events, st.malformed
    );
    println!("end                {}", end_text(app.interrupted));
    ran.print_tail(json_out.then(|| sender_json(ran, rc, place.name(), opts)));
    if ran.end == RunEnd::Interrupted {
        bail!("interrupted");
    }
    if st.feedbacks == 0 && st.packets > 0 && rc != RateName::None {
        bail!(
            "no feedback from the receiver, so {} never left its first rate: is `ackclock dgram-stream --listen {}` (or with --kernel) running there?",
            rc.name(),
            app.config().dst
        );
    }
    Ok(())
}

fn receiver_report(
    ran: &Ran<StreamReceiverApp>,
    place: &Place,
    opts: &StreamAppOptions,
    json_out: bool,
) -> Result<()> {
    let app = &ran.app;
    let st = app.receiver().stats();
    let elapsed = app.data_elapsed();
    let rate = receive_rate(app);
    println!();
    println!(
        "packets            {} received ({} payload bytes) in {:.3} s: {} (IP bytes, first packet to last){}",
        st.packets,
        st.bytes,
        elapsed.as_secs_f64(),
        rate.map_or("-".into(), |r| format!("{:.3} Mbit/s", r / 1e6)),
        app.peer().map_or(String::new(), |p| format!(", from {p}"))
    );
    println!(
        "loss               {} lost, {} loss events, loss event rate {:.6}; {} late or duplicate, {} malformed",
        st.lost,
        st.loss_events,
        app.receiver().p(),
        st.late_or_duplicate,
        st.malformed
    );
    println!("feedback           {} reports sent", st.feedbacks);
    println!("end                {}", end_text(app.interrupted));
    ran.print_tail(json_out.then(|| receiver_json(ran, place.name(), opts)));
    // A receiver stopped by a signal ends as receivers do; one that saw nothing says so.
    if st.packets == 0 && !app.interrupted {
        bail!("no data arrived: is a sender (`ackclock dgram-stream --connect ...`) sending here?");
    }
    Ok(())
}

/// The JSON document of `dgram-stream --connect --json` (docs/OUTPUTS.md).
fn sender_json(
    ran: &Ran<StreamSenderApp>,
    rc: RateName,
    socket: &str,
    opts: &StreamAppOptions,
) -> Value {
    let app = &ran.app;
    let c = app.config();
    let sender = app.sender().map(|s| {
        let st = s.stats();
        let ctl = s.controller();
        json!({
            "rate_control": rc.name(),
            "packet_bytes": c.packet_bytes,
            "limit_s": opts.time.map(|d| d.as_secs_f64()),
            "limit_bytes": c.bytes,
            "packets": st.packets,
            "bytes": st.bytes,
            "mean_rate_bps": s.mean_rate().map(|x| x * 8.0),
            "final_allowed_bps": ctl.rate() * 8.0,
            "rtt_ms": ctl.rtt().map(|r| r * 1e3),
            "feedbacks": st.feedbacks,
            "no_feedback_timeouts": st.no_feedback_timeouts,
            "loss_event_rate": st.p,
            "loss_events": st.loss_events,
            "malformed": st.malformed,
        })
    });
    let remote = json!(c.dst.to_string());
    let elapsed = app.elapsed(ran.now);
    stream_json(
        ran,
        "send",
        socket,
        remote,
        elapsed,
        opts,
        sender.into(),
        Value::Null,
    )
}

/// The JSON document of `dgram-stream --listen --json` (docs/OUTPUTS.md).
fn receiver_json(ran: &Ran<StreamReceiverApp>, socket: &str, opts: &StreamAppOptions) -> Value {
    let app = &ran.app;
    let st = app.receiver().stats();
    let receiver = json!({
        "packets": st.packets,
        "bytes": st.bytes,
        "rate_bps": receive_rate(app),
        "lost": st.lost,
        "loss_events": st.loss_events,
        "loss_event_rate": app.receiver().p(),
        "feedbacks": st.feedbacks,
        "late_or_duplicate": st.late_or_duplicate,
        "malformed": st.malformed,
    });
    let remote = json!(app.peer().map(|a| a.to_string()));
    let elapsed = app.data_elapsed();
    stream_json(
        ran,
        "recv",
        socket,
        remote,
        elapsed,
        opts,
        Value::Null,
        receiver,
    )
}

/// The JSON document of `dgram-stream --json`, either end's (docs/OUTPUTS.md): `sender`
/// or `receiver` holds its figures, the other is null.
#[allow(clippy::too_many_arguments)]
fn stream_json<P>(
    ran: &Ran<CommandApp<P>>,
    role: &str,
    socket: &str,
    remote: Value,
    elapsed: Duration,
    opts: &StreamAppOptions,
    sender: Value,
    receiver: Value,
) -> Value {
    json!({
        "role": role,
        "socket": socket,
        "local": ran.local.map(|a| a.to_string()),
        "remote": remote,
        "elapsed_s": elapsed.as_secs_f64(),
        "interrupted": ran.app.interrupted,
        "interval_s": opts.interval.map(|d| d.as_secs_f64()),
        "intervals": ran.app.intervals().iter().map(interval_json).collect::<Vec<_>>(),
        "sender": sender,
        "receiver": receiver,
        "udp": ran.udp.json(),
    })
}

/// The rate data arrived at (IP bytes, bit/s), from the first packet to the last.
fn receive_rate(app: &StreamReceiverApp) -> Option<f64> {
    let st = app.receiver().stats();
    let e = app.data_elapsed();
    (e > Duration::ZERO)
        .then(|| (st.bytes + st.packets * IP_UDP_HEADERS as u64) as f64 * 8.0 / e.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::stream::tests::{documented_section, has_type, paths};
    use ackclock_dgram::VirtualWire;
    use ackclock_dgram::{StackSocket, UdpStack};
    use clap::Parser;
    use std::collections::BTreeSet;

    const OURS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const THEIRS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    #[derive(Parser)]
    enum T {
        Rpc(RpcArgs),
        RpcServer(RpcServerArgs),
        DgramStream(DgramStreamArgs),
    }

    /// What running `args` says (they must parse; the run must fail before any socket).
    fn error_of(args: &[&str]) -> String {
        let t = T::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?} does not parse: {e}"));
        let r = match t {
            T::Rpc(a) => run_rpc(a),
            T::RpcServer(a) => run_rpc_server(a),
            T::DgramStream(a) => run_dgram_stream(a),
        };
        r.expect_err("an error").to_string()
    }

    #[test]
    fn misuse_says_what_to_type_instead() {
        // The commands below: each case adds its flags to one of these (or to none).
        const RPC: &[&str] = &["rpc", "--kernel", "--connect", "198.18.0.1:2049"];
        const SEND: &[&str] = &["dgram-stream", "--kernel", "--connect", "198.18.0.1:5004"];
        const RECV: &[&str] = &["dgram-stream", "--kernel", "--listen", "0.0.0.0:5004"];
        let cases: &[(&[&str], &[&str], &str)] = &[
            (RPC, &["--timer", "adaptive", "--timeout-ms", "500"], "--timeout-ms sets the fixed timer; the adaptive one takes its timeout from the RTT estimator: drop --timeout-ms, or add --timer fixed"),
            (RPC, &["--pcap", "x.pcap"], "--pcap sets up the TUN device, and with --kernel there is none: drop --pcap, or drop --kernel to run on ackclock's UDP (with --kernel, capture with tcpdump on the interface instead)"),
            (RPC, &["--mtu", "9000"], "--mtu sets up the TUN device, and with --kernel there is none: drop --mtu, or drop --kernel to run on ackclock's UDP"),
            (&[], &["rpc", "--kernel", "--connect", "8.8.8.8:53"], "--connect 8.8.8.8:53: 8.8.8.8 is outside 198.18.0.0/15, the benchmarking range live mode keeps to; add --allow-any-address to use it anyway"),
            (RPC, &["--max-transmissions", "0"], "--max-transmissions 0: 1 to 255 (the message's transmission number is a byte)"),
            (RPC, &["--request-bytes", "10"], "--request-bytes 10: at least 20 bytes (the message header)"),
            (RPC, &["--requests", "0"], "--requests 0: at least one (or --time TIME to issue requests for a while)"),
            (SEND, &["--rate", "1mbit"], "--rate is the fixed rate of --rate-control none; tfrc finds its own rate: drop --rate, or add --rate-control none"),
            (SEND, &["--rate-control", "none"], "--rate-control none sends at a fixed rate: add --rate RATE (e.g. --rate 2mbit)"),
            (RECV, &["--rate-control", "aimd"], "--rate-control is the sender's (with --connect); a receiver only reports what arrives"),
            (SEND, &["--idle-timeout", "1s"], "--idle-timeout is the receiver's (with --listen); a sender stops at --time or --bytes"),
            (&[], &["dgram-stream", "--kernel", "--listen", "0.0.0.0:0"], "--listen 0.0.0.0:0: give the port the sender sends to (e.g. 0.0.0.0:5004)"),
            (SEND, &["-i", "1ms"], "--interval-secs 1ms: at least 10ms (or 0 for no interval reports)"),
            (&[], &["rpc-server", "--listen", "198.18.0.2:0"], "--listen 198.18.0.2:0: give the port the clients send to (e.g. 198.18.0.2:2049)"),
            (&[], &["rpc-server", "--kernel", "--listen", "0.0.0.0:2049", "--queue", "0"], "--queue 0: 1 to 1000000 requests"),
        ];
        for (head, tail, want) in cases {
            let args = [*head, *tail].concat();
            assert_eq!(&error_of(&args), want, "{args:?}");
        }
        // Flags that cannot go together are refused by the parser, saying which.
        for args in [
            &[
                "x",
                "rpc",
                "--connect",
                "198.18.0.1:1",
                "--requests",
                "5",
                "--time",
                "1s",
            ][..],
            &["x", "dgram-stream"],
            &[
                "x",
                "dgram-stream",
                "--connect",
                "198.18.0.1:1",
                "--listen",
                "0.0.0.0:1",
            ],
            &["x", "rpc", "--connect", "198.18.0.1:1", "--time", "10"],
        ] {
            assert!(T::try_parse_from(args).is_err(), "{args:?}");
        }
    }

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

    /// Two apps on two UDP stacks joined by a 5 ms wire, polled each 1 ms of virtual time
    /// (and the receiving one whenever a datagram arrives), until both are done or `limit`.
    fn drive(
        a: &mut dyn DatagramApp,
        b: &mut dyn DatagramApp,
        b_port: u16,
        limit_ms: u64,
    ) -> (UdpStack, UdpStack) {
        let mut w = VirtualWire::new(OURS, THEIRS, Duration::from_millis(5));
        let (ia, ib) = (w.a.bind(0).unwrap(), w.b.bind(b_port).unwrap());
        for t in 0..limit_ms {
            let now = Instant::ZERO + Duration::from_millis(t);
            w.deliver(now);
            a.poll(
                now,
                &mut StackSocket {
                    stack: &mut w.a,
                    id: ia,
                },
            );
            b.poll(
                now,
                &mut StackSocket {
                    stack: &mut w.b,
                    id: ib,
                },
            );
            w.transmit(now);
            if a.done() && b.done() {
                break;
            }
        }
        (w.a, w.b)
    }

    fn ran<A>(app: A, local: SocketAddrV4, udp: &UdpStack, now_ms: u64) -> Ran<A> {
        Ran {
            app,
            end: RunEnd::Done,
            local: Some(local),
            now: Instant::ZERO + Duration::from_millis(now_ms),
            udp: UdpReport::tun(udp.stats(), &DeviceCounters::default()),
            device: String::new(),
        }
    }

    /// Every field of `docs` is in the `## {title}` table of docs/OUTPUTS.md with the type
    /// given there, and every field listed is in one of them.
    fn check_documented(title: &str, docs: &[Value]) {
        let listed = documented_section(title);
        assert!(listed.len() >= 10, "{title}: {} rows", listed.len());
        let mut seen = BTreeSet::new();
        for doc in docs {
            let mut all = Vec::new();
            paths(doc, "", &mut all);
            for (path, v) in &all {
                if path.ends_with("[]") && v.is_object() {
                    continue;
                }
                let ty = listed
                    .get(path)
                    .unwrap_or_else(|| panic!("{title}: {path} is not in docs/OUTPUTS.md"));
                assert!(has_type(v, ty), "{title}: {path} is {v}, not {ty}");
                seen.insert(path.clone());
            }
        }
        for path in listed.keys() {
            assert!(
                seen.contains(path),
                "{title}: {path} is documented but not written"
            );
        }
    }

    #[test]
    fn the_json_documents_are_as_docs_outputs_md_says() {
        let server_at = SocketAddrV4::new(THEIRS, 2049);
        let local = SocketAddrV4::new(OURS, 49152);
        // An RPC client with TFRC that completes its requests, and one with a fixed timer
        // whose requests nobody answers (latencies null, no rate).
        let cfg = RpcClientConfig {
            requests: Some(20),
            rate: RateControl::Tfrc,
            timer: Timer::Adaptive(rpc_rtt_config()),
            ..RpcClientConfig::nfs(server_at)
        };
        let mut client = RpcClientApp::new(cfg.clone(), None);
        let mut server = RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), None);
        let (ua, ub) = drive(&mut client, &mut server, 2049, 10_000);
        assert!(client.done());
        let c = ran(client, local, &ua, 10_000);
        let rpc1 = RpcReport::new(&c, &cfg, "nfs", RateName::Tfrc, None, "tun");
        assert_eq!(rpc1.completed, 20);
        let server = ran(server, server_at, &ub, 10_000);
        let cfg2 = RpcClientConfig {
            requests: Some(1),
            max_transmissions: 1,
            ..RpcClientConfig::dns(server_at)
        };
        let mut lonely = RpcClientApp::new(cfg2.clone(), Some(Duration::from_secs(1)));
        let mut deaf = RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), None);
        let (ua2, _) = drive(&mut lonely, &mut deaf, 9, 5_000);
        let c2 = ran(lonely, local, &ua2, 5_000);
        let rpc2 = RpcReport::new(
            &c2,
            &cfg2,
            "dns",
            RateName::None,
            Some(Duration::from_secs(1)),
            "kernel",
        );
        assert_eq!((rpc2.issued, rpc2.completed, rpc2.failed), (1, 0, 1));
        check_documented(
            "ackclock rpc --json",
            &[rpc1.json(&c.udp), rpc2.json(&c2.udp)],
        );
        check_documented(
            "ackclock rpc-server --json",
            &[server_json(&server, "tun", 0.0, 64, 1472)],
        );
        // A TFRC stream and its receiver, with interval reports.
        let opts = StreamAppOptions {
            time: Some(Duration::from_secs(2)),
            idle_timeout: Some(Duration::from_millis(500)),
            interval: Some(Duration::from_secs(1)),
            keep_intervals: true,
        };
        let mut tx = StreamSenderApp::new(
            StreamSenderConfig {
                dst: SocketAddrV4::new(THEIRS, 5004),
                packet_bytes: 1000,
                start: Instant::ZERO,
                stop: None,
                bytes: None,
            },
            Controller::Tfrc(TfrcRate::new(1028)),
            &opts,
        );
        let rx_opts = StreamAppOptions {
            time: None,
            ..opts.clone()
        };
        let mut rx = StreamReceiverApp::new(&rx_opts);
        let (ua, ub) = drive(&mut tx, &mut rx, 5004, 10_000);
        assert!(tx.done() && rx.done());
        let s = ran(tx, local, &ua, 10_000);
        let r = ran(rx, SocketAddrV4::new(THEIRS, 5004), &ub, 10_000);
        let sd = sender_json(&s, RateName::Tfrc, "tun", &opts);
        let rd = receiver_json(&r, "kernel", &rx_opts);
        assert!(sd["intervals"].as_array().unwrap().len() >= 2);
        assert_eq!(sd["sender"]["packets"], rd["receiver"]["packets"]);
        assert_eq!(rd["remote"], "198.18.0.2:49152");
        check_documented("ackclock dgram-stream --json", &[sd, rd]);
    }
}
