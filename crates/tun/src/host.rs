//! A live host: one ackclock [`Endpoint`] and one [`UdpStack`] behind a TUN device, driven by
//! a single-threaded poll loop with the wall clock.
//!
//! Each turn of the loop: read the packets the kernel routed into the device (at most
//! [`RX_BATCH`] per turn), TCP segments into the endpoint (draining `poll_transmit` after
//! each one) and UDP datagrams into the UDP stack's socket queues, run due timers, let the
//! application ([`ackclock_apps::App`], the one the simulator's hosts run too) move data,
//! drain both `poll_transmit`s into the device again (at most [`TX_BATCH`] packets between
//! two looks at the signals), and sleep in `epoll_wait` until the device is
//! readable, a signal arrives, or the earliest of the endpoint's and the application's
//! deadlines (a timerfd, so deadlines are kept to the nanosecond rather than rounded to
//! milliseconds). The engine's clock is read once per turn: every packet of a turn is
//! handled at that turn's `now` (the turn takes microseconds, far below any timer or RTT
//! the engine measures, and one reading per turn keeps the uncaptured loop free of clock
//! calls per packet). A capture, when one is open, reads the clock again for each packet
//! it writes, so a pcap carries the time each packet really crossed the device.

use crate::clock::Clock;
use crate::netcfg::{self, IfConfig};
use crate::signals::Signals;
use crate::sys::{self, Epoll, Timer, Tun};
use crate::Error;
use ackclock_apps::{App, Ctx};
use ackclock_dgram::{UdpConfig, UdpStack};
use ackclock_tcp::{Endpoint, EndpointConfig};
use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::{Duration, Instant};
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::PathBuf;

/// Packets read per turn before the endpoint's output is drained: enough to take a whole
/// window of ACKs in one go, few enough to keep the latency of our own output bounded.
pub const RX_BATCH: usize = 64;
/// Packets sent per flush at most, before the loop looks at its input and signals again.
pub const TX_BATCH: usize = 1024;

const TOKEN_TUN: u64 = 1;
const TOKEN_TIMER: u64 = 2;
const TOKEN_SIGNAL: u64 = 3;

/// How the device of a live host is created and configured. The default: `ack%d`,
/// MTU 1500, configured by us, the kernel at 198.18.0.1 and ackclock at 198.18.0.2 (in
/// [`netcfg::LIVE_RANGE`]), no namespace, no extra route, no capture.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// Interface name; `%d` lets the kernel number it.
    pub name: String,
    /// The interface's MTU, bytes (`ip link set dev NAME mtu MTU`): the largest packet
    /// the kernel sends into the device. The host's buffers are sized from it.
    pub mtu: u32,
    /// Move the interface into this existing network namespace before configuring it.
    pub netns: Option<String>,
    /// Configure addresses and routes (false: the user does it; we only open the device).
    pub configure: bool,
    /// The kernel's address on the interface.
    pub kernel_addr: Ipv4Addr,
    /// Our (ackclock's) address: the kernel routes it into the device.
    pub our_addr: Ipv4Addr,
    /// More prefixes the kernel routes into the device.
    pub routes: Vec<(Ipv4Addr, u8)>,
    /// Write every packet that crosses the device here.
    pub pcap: Option<PathBuf>,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            name: "ack%d".into(),
            mtu: 1500,
            netns: None,
            configure: true,
            kernel_addr: Ipv4Addr::new(198, 18, 0, 1),
            our_addr: Ipv4Addr::new(198, 18, 0, 2),
            routes: Vec::new(),
            pcap: None,
        }
    }
}

/// Counters of the device side of a host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// IP packets read from the device (TCP, UDP and anything else the kernel routed in).
    pub packets_in: u64,
    /// Bytes of those packets (whole IP packets).
    pub bytes_in: u64,
    /// IP packets written into the device (the kernel took them).
    pub packets_out: u64,
    /// Bytes of those packets (whole IP packets).
    pub bytes_out: u64,
    /// Packets the kernel refused (no buffers, or a packet it rejects): lost, as on a
    /// real interface.
    pub dropped_out: u64,
    /// Turns of the loop.
    pub turns: u64,
    /// Turns that went to sleep in `epoll_wait` (the others found more work waiting).
    pub sleeps: u64,
    /// Sleeps that ended when the timer fired (a deadline of the engine or the
    /// application), and how late the next turn began after that deadline: what a paced
    /// sender loses on each wake-up, and so the burst allowance it needs
    /// ([`TcpConfig::pacing_burst`](ackclock_tcp::TcpConfig::pacing_burst)).
    pub timer_wakes: u64,
    /// Wake-ups by the timer, by how late the turn began: bucket k holds lateness of at
    /// least 2^(k-1) and under 2^k microseconds (bucket 0: under a microsecond; the last
    /// holds everything from 2^14 us on).
    pub timer_late_us_log2: [u64; 16],
    /// The latest wake-up after a deadline, in nanoseconds.
    pub timer_late_max_ns: u64,
}

impl DeviceCounters {
    /// The lateness, in nanoseconds, that `q` (0 to 1) of the timer's wake-ups stayed
    /// under: the upper edge (2^k us) of the histogram's bucket that holds that quantile
    /// (0 with no wake-ups; the largest lateness seen for the last bucket).
    pub fn timer_late_quantile_ns(&self, q: f64) -> u64 {
        let total = self.timer_wakes;
        if total == 0 {
            return 0;
        }
        let want = ((total as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (k, &n) in self.timer_late_us_log2.iter().enumerate() {
            seen += n;
            if seen >= want && k < 15 {
                return (1u64 << k) * 1000;
            }
        }
        self.timer_late_max_ns
    }

    /// Notes a wake-up by the timer `late` after its deadline.
    fn note_timer_late(&mut self, late: Duration) {
        self.timer_wakes += 1;
        let us = late.as_nanos() / 1000;
        let k = (u64::BITS - us.leading_zeros()) as usize;
        self.timer_late_us_log2[k.min(15)] += 1;
        self.timer_late_max_ns = self.timer_late_max_ns.max(late.as_nanos());
    }
}

/// Why [`Host::run`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// The application finished.
    Done,
    /// A signal asked us to stop and the application wound down (or the grace period ran
    /// out, or a second signal came).
    Interrupted,
}

/// Whether `pkt` is an IPv4 packet carrying UDP (anything else goes to the endpoint, which
/// counts what is not TCP).
#[inline]
fn is_udp(pkt: &[u8]) -> bool {
    pkt.len() >= 20 && pkt[0] >> 4 == 4 && pkt[9] == ackclock_wire::IPPROTO_UDP
}

/// A TUN device whose kernel side is configured: the Linux host we talk to.
pub struct Device {
    /// The device's descriptor: one IP packet per `read` or `write`.
    pub tun: Tun,
    /// The interface name (after any rename).
    pub name: String,
    /// The network namespace the interface was moved into (`None`: this process's).
    pub netns: Option<String>,
}

impl Device {
    /// Creates the device ([`Tun::open`]). With `cfg.configure`, moves it into
    /// `cfg.netns`, sets MTU (and a txqueuelen of 1000), addresses and routes
    /// ([`netcfg::configure`]), and waits until the kernel will really hand it packets
    /// ([`netcfg::wait_up`], at most 3 s); without, only moves it into `cfg.netns`
    /// (`ip link set dev NAME netns NETNS`).
    ///
    /// # Errors
    /// Opening `/dev/net/tun` or `TUNSETIFF` failed (no root or CAP_NET_ADMIN, no tun
    /// module, a name taken), an `ip` command failed, or the interface did not come up.
    pub fn open(cfg: &DeviceConfig) -> Result<Device, Error> {
        let tun =
            Tun::open(&cfg.name).map_err(|e| Error::Io("opening the TUN device".into(), e))?;
        let mut name = tun.name().to_string();
        if cfg.configure {
            name = netcfg::configure(
                &name,
                &IfConfig {
                    netns: cfg.netns.clone(),
                    rename: None,
                    mtu: cfg.mtu,
                    local: cfg.kernel_addr,
                    peer: cfg.our_addr,
                    routes: cfg.routes.clone(),
                    txqueuelen: Some(1000),
                },
            )?;
            netcfg::wait_up(
                cfg.netns.as_deref(),
                &name,
                std::time::Duration::from_secs(3),
            )?;
        } else if let Some(ns) = cfg.netns.as_deref() {
            netcfg::ip(None, &["link", "set", "dev", &name, "netns", ns])?;
        }
        Ok(Device {
            tun,
            name,
            netns: cfg.netns.clone(),
        })
    }
}

/// A pcap file being written, timestamps in Unix time. Each packet is stamped with the
/// clock read as it is written: the moment it was read from or is about to be written to
/// the device, not the start of the loop turn that handled it.
pub struct Capture {
    w: PcapWriter<BufWriter<File>>,
    clock: Clock,
    path: PathBuf,
    failed: bool,
}

impl Capture {
    /// Creates (or truncates) the pcap file at `path`, its timestamps the Unix time of
    /// `clock`'s readings ([`Clock::epoch_unix_ns`] plus the reading), written through a
    /// 1 MiB buffer.
    ///
    /// # Errors
    /// The file cannot be created, or its header cannot be written.
    pub fn create(path: &std::path::Path, clock: &Clock) -> Result<Capture, Error> {
        let f = File::create(path)
            .map_err(|e| Error::Io(format!("cannot create pcap file {}", path.display()), e))?;
        let mut w = PcapWriter::new(BufWriter::with_capacity(1 << 20, f))
            .map_err(|e| Error::Io(format!("writing {}", path.display()), e))?;
        w.set_epoch_offset_ns(clock.epoch_unix_ns());
        Ok(Capture {
            w,
            clock: *clock,
            path: path.to_path_buf(),
            failed: false,
        })
    }

    /// Writes `pkt`, stamped now (one vDSO clock read, paid only while capturing). The
    /// first failed write prints a warning on stderr and stops the capture.
    #[inline]
    pub fn write(&mut self, pkt: &[u8]) {
        if self.failed {
            return;
        }
        let now = self.clock.now();
        if self.w.write_packet(now, pkt).is_err() {
            eprintln!(
                "warning: writing {} failed; capture stopped",
                self.path.display()
            );
            self.failed = true;
        }
    }

    /// Writes out what the buffer holds (also done on drop); a failure is ignored.
    pub fn flush(&mut self) {
        let _ = self.w.flush();
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.flush();
    }
}

/// A live host: the device, the endpoint, the UDP stack, the clock and the loop.
pub struct Host {
    /// The TUN device and its interface.
    pub device: Device,
    /// ackclock's TCP: every packet from the device that is not IPv4 UDP goes to it
    /// (which counts what is not TCP for it).
    pub ep: Endpoint,
    /// UDP beside the TCP: datagrams from the device go to its sockets; what it sends goes
    /// to the device with the endpoint's segments.
    pub udp: UdpStack,
    /// The wall clock: the loop reads it once per turn and hands that `now` to the
    /// engine and the application.
    pub clock: Clock,
    /// The device side's counters.
    pub counters: DeviceCounters,
    capture: Option<Capture>,
    epoll: Epoll,
    timer: Timer,
    signals: Signals,
    rx: Vec<u8>,
    tx: Vec<u8>,
    /// Time allowed after a signal for connections to close before we give up on them.
    pub grace: Duration,
    cpu_start_ns: u64,
}

impl Host {
    /// Opens and configures the device and creates an endpoint with our address and a
    /// random ISN key.
    pub fn new(cfg: &DeviceConfig) -> Result<Host, Error> {
        let clock = Clock::new();
        let device = Device::open(cfg)?;
        Self::with_device(device, cfg.our_addr, cfg.mtu, cfg.pcap.as_deref(), clock)
    }

    /// A host on a device already open: an endpoint and a UDP stack at `our_addr`, with
    /// a random ISN key (RFC 6528, from `getrandom`), buffers for packets of `mtu` bytes
    /// (at least 1500), a capture to `pcap` if given, and `clock`. Creates the epoll set
    /// (`epoll_create1`), the timerfd, and the SIGINT/SIGTERM handlers, which stay
    /// installed while the host lives. [`Host::new`] opens the device first.
    ///
    /// # Errors
    /// One of those system calls failed, or the pcap file cannot be created.
    pub fn with_device(
        device: Device,
        our_addr: Ipv4Addr,
        mtu: u32,
        pcap: Option<&std::path::Path>,
        clock: Clock,
    ) -> Result<Host, Error> {
        let mut key = [0u8; 16];
        sys::random_bytes(&mut key).map_err(|e| Error::Io("getrandom".into(), e))?;
        let ep = Endpoint::new(EndpointConfig::new(our_addr, key));
        let udp = UdpStack::new(UdpConfig::new(our_addr));
        let epoll = Epoll::new().map_err(|e| Error::Io("epoll_create".into(), e))?;
        let timer = Timer::new().map_err(|e| Error::Io("timerfd_create".into(), e))?;
        let signals =
            Signals::new().map_err(|e| Error::Io("installing signal handlers".into(), e))?;
        epoll
            .add(std::os::fd::AsRawFd::as_raw_fd(&device.tun), TOKEN_TUN)
            .and_then(|_| epoll.add(std::os::fd::AsRawFd::as_raw_fd(&timer), TOKEN_TIMER))
            .and_then(|_| epoll.add(signals.fd(), TOKEN_SIGNAL))
            .map_err(|e| Error::Io("epoll_ctl".into(), e))?;
        let capture = match pcap {
            Some(p) => Some(Capture::create(p, &clock)?),
            None => None,
        };
        // Room for the largest packet the device can carry (MTU up to 64 KiB).
        let buf_len = (mtu as usize).max(1500) + 64;
        Ok(Host {
            device,
            ep,
            udp,
            clock,
            counters: DeviceCounters::default(),
            capture,
            epoll,
            timer,
            signals,
            rx: vec![0; buf_len.max(65_536)],
            tx: vec![0; buf_len],
            grace: Duration::from_secs(3),
            cpu_start_ns: sys::process_cpu_ns(),
        })
    }

    /// CPU time (user + system) the process used since the host was created.
    pub fn cpu_time(&self) -> Duration {
        Duration::from_nanos(sys::process_cpu_ns().saturating_sub(self.cpu_start_ns))
    }

    /// Sends what the endpoint and then the UDP stack have to send, at most [`TX_BATCH`]
    /// packets in all: the loop gets back to its signal check and its input however much
    /// the engine or the datagram applications want to send. Returns whether it stopped at
    /// the bound (more may be waiting).
    fn flush(&mut self, now: Instant) -> Result<bool, Error> {
        for _ in 0..TX_BATCH {
            let len = match self.ep.poll_transmit(now, &mut self.tx) {
                Some(t) => t.len,
                None => match self.udp.poll_transmit(&mut self.tx) {
                    Some(n) => n,
                    None => return Ok(false),
                },
            };
            let pkt = &self.tx[..len];
            if let Some(c) = self.capture.as_mut() {
                c.write(pkt);
            }
            let ok = self
                .device
                .tun
                .send(pkt)
                .map_err(|e| Error::Io(format!("writing to {}", self.device.name), e))?;
            if ok {
                self.counters.packets_out += 1;
                self.counters.bytes_out += len as u64;
            } else {
                self.counters.dropped_out += 1;
            }
        }
        Ok(true)
    }

    /// Runs the loop until the application is done ([`RunEnd::Done`]) or a signal stops
    /// it ([`RunEnd::Interrupted`]). The first SIGINT or SIGTERM calls the application's
    /// `shutdown` (it closes its connections) and leaves [`grace`](Self::grace) for them
    /// to finish; a second, or the end of the grace period, returns at once. Then
    /// [`finish`](Self::finish) sends what is left and flushes the capture.
    ///
    /// # Errors
    /// Reading or writing the device, or the timerfd or epoll, failed.
    pub fn run(&mut self, app: &mut dyn App) -> Result<RunEnd, Error> {
        let mut stopping_until: Option<Instant> = None;
        // The deadline the last sleep was woken by, if the timer woke it.
        let mut woken_for: Option<Instant> = None;
        loop {
            self.counters.turns += 1;
            let now = self.clock.now();
            if let Some(d) = woken_for.take() {
                self.counters.note_timer_late(now.saturating_since(d));
            }
            let mut n = 0;
            let mut busy = false;
            while n < RX_BATCH {
                match self.device.tun.recv(&mut self.rx) {
                    Ok(Some(len)) => {
                        let pkt = &self.rx[..len];
                        if let Some(c) = self.capture.as_mut() {
                            c.write(pkt);
                        }
                        self.counters.packets_in += 1;
                        self.counters.bytes_in += len as u64;
                        n += 1;
                        if is_udp(pkt) {
                            // Into its socket's queue (or counted and dropped); the
                            // application reads it in this turn's poll.
                            let _ = self.udp.handle_packet(pkt);
                            continue;
                        }
                        self.ep.handle_packet(now, pkt);
                        // Answer each packet before reading the next, as a BSD tcp_input
                        // does: ACK-every-N and the sender's ACK clock then see the
                        // segments one by one, not in batches of whatever the device held.
                        busy |= self.flush(now)?;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        return Err(Error::Io(format!("reading from {}", self.device.name), e))
                    }
                }
            }
            if self.ep.poll_timeout().is_some_and(|t| t <= now) {
                self.ep.handle_timeout(now);
            }
            let wake = app.poll(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
            // A time not after `now` was this poll's business already.
            let app_wake = wake.filter(|t| *t > now);
            busy |= self.flush(now)?;
            if app.is_done() {
                return Ok(if stopping_until.is_some() {
                    RunEnd::Interrupted
                } else {
                    RunEnd::Done
                });
            }
            if let Some(t) = stopping_until {
                if now >= t {
                    return Ok(RunEnd::Interrupted);
                }
            }
            if n == RX_BATCH || busy {
                // More input or output is probably waiting: no sleep, but a look at the
                // signals, or a flood (or an engine that never stops sending) would keep a
                // SIGTERM waiting for ever.
                if self.signals.take() > 0 {
                    if stopping_until.is_some() {
                        return Ok(RunEnd::Interrupted);
                    }
                    stopping_until = Some(self.begin_stop(app)?);
                }
                continue;
            }
            let deadline = [self.ep.poll_timeout(), app_wake, stopping_until]
                .into_iter()
                .flatten()
                .min();
            self.timer
                .set(deadline.map(|t| self.clock.to_monotonic_ns(t)))
                .map_err(|e| Error::Io("timerfd_settime".into(), e))?;
            self.counters.sleeps += 1;
            let mut signalled = false;
            let mut timer_fired = false;
            self.epoll
                .wait(-1, |tok| match tok {
                    TOKEN_SIGNAL => signalled = true,
                    TOKEN_TIMER => timer_fired = true,
                    _ => {}
                })
                .map_err(|e| Error::Io("epoll_wait".into(), e))?;
            if timer_fired {
                self.timer.clear();
                woken_for = deadline;
            }
            if signalled && self.signals.take() > 0 {
                if stopping_until.is_some() {
                    // A second signal: stop now.
                    return Ok(RunEnd::Interrupted);
                }
                stopping_until = Some(self.begin_stop(app)?);
            }
        }
    }

    /// The first SIGINT or SIGTERM: the application closes its connections, which get the
    /// grace period to finish. Returns when the grace period ends.
    fn begin_stop(&mut self, app: &mut dyn App) -> Result<Instant, Error> {
        let now = self.clock.now();
        eprintln!("signal received: closing connections (again to stop at once)");
        app.shutdown(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
        self.flush(now)?;
        Ok(now + self.grace)
    }

    /// Sends what is left to send (e.g. RSTs after aborts) and flushes the capture.
    pub fn finish(&mut self) -> Result<(), Error> {
        let now = self.clock.now();
        self.flush(now)?;
        if let Some(c) = self.capture.as_mut() {
            c.flush();
        }
        Ok(())
    }
}

impl Host {
    /// The device's and the endpoint's counters (and the UDP stack's, when it saw
    /// anything), as the live commands print them after a run.
    pub fn counters_text(&self) -> String {
        let c = &self.counters;
        let e = self.ep.stats();
        let mut out = format!(
            "device             {}: {} packets in ({} bytes), {} out ({} bytes), {} refused by the kernel; {} loop turns, {} sleeps\n",
            self.device.name, c.packets_in, c.bytes_in, c.packets_out, c.bytes_out, c.dropped_out, c.turns, c.sleeps
        );
        if c.timer_wakes > 0 {
            out.push_str(&format!(
                "timer              {} wake-ups after a deadline, late by under {} us (p50), {} us (p99); {} us at most\n",
                c.timer_wakes,
                c.timer_late_quantile_ns(0.5) / 1000,
                c.timer_late_quantile_ns(0.99) / 1000,
                c.timer_late_max_ns / 1000
            ));
        }
        out.push_str(&format!(
            "endpoint           {} malformed ({} bad TCP checksum), {} not for us, {} RSTs sent, {} matched no connection\n",
            e.malformed, e.bad_tcp_checksum, e.not_for_us, e.rsts_sent, e.no_connection
        ));
        let u = self.udp.stats();
        if *u != ackclock_dgram::UdpStats::default() {
            out.push_str(&format!(
                "udp                {} datagrams in ({} bytes), {} out ({} bytes); dropped: {} for no bound port, {} at a full socket queue, {} malformed, {} bad checksum, {} for another address; {} sends refused (queue full)\n",
                u.datagrams_in, u.bytes_in, u.datagrams_out, u.bytes_out, u.no_port, u.rx_queue_full, u.malformed, u.bad_checksum, u.wrong_addr, u.tx_queue_full
            ));
        }
        out
    }

    /// The UDP stack's counters as a datagram application's report gives them (sends the
    /// device refused count as refused).
    pub fn udp_report(&self) -> ackclock_apps::dgram::report::UdpReport {
        let (u, d) = (self.udp.stats(), &self.counters);
        ackclock_apps::dgram::report::UdpReport {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_lateness_histogram_gives_bucket_edges_as_quantiles() {
        let mut c = DeviceCounters::default();
        assert_eq!(c.timer_late_quantile_ns(0.5), 0, "no wake-ups");
        // 90 wake-ups 40 us late (bucket 6: 32 to 63 us), 10 at 700 us (bucket 10).
        for _ in 0..90 {
            c.note_timer_late(Duration::from_micros(40));
        }
        for _ in 0..10 {
            c.note_timer_late(Duration::from_micros(700));
        }
        assert_eq!(c.timer_wakes, 100);
        assert_eq!(c.timer_late_us_log2[6], 90);
        assert_eq!(c.timer_late_us_log2[10], 10);
        assert_eq!(c.timer_late_quantile_ns(0.5), 64_000);
        assert_eq!(c.timer_late_quantile_ns(0.9), 64_000);
        assert_eq!(c.timer_late_quantile_ns(0.99), 1_024_000);
        assert_eq!(c.timer_late_max_ns, 700_000);
        // Under a microsecond is bucket 0; an hour late is the last.
        c.note_timer_late(Duration::from_nanos(300));
        c.note_timer_late(Duration::from_secs(3600));
        assert_eq!((c.timer_late_us_log2[0], c.timer_late_us_log2[15]), (1, 1));
    }
}
