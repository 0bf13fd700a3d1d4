//! A real-time path emulator in the manner of Mahimahi's link shells: two network
//! namespaces, a TUN device in each, joined through this process, which forwards every
//! packet through the same `ackclock-gateway` models the simulator uses (impairments on the
//! wire, a queue discipline, a link serializer with a propagation delay), one independent
//! set per direction, with the wall clock passed in as time.
//!
//! Timing. Events (a link's serializer freeing up, a packet due at the far end) are kept in
//! virtual time: when the loop wakes late, a serializer that freed at `T` starts its next
//! packet at `T`, not at the late wake-up, so the achieved rate is the configured one
//! whatever the scheduling jitter; lateness only delays the write of a packet to the far
//! device, and is measured. Deadlines are kept with a timerfd at 1 ns timer slack.

pub mod flags;
pub mod report;

use crate::clock::Clock;
use crate::host::Capture;
use crate::netcfg::{self, IfConfig, NetNs};
use crate::signals::Signals;
use crate::sys::{self, Epoll, Timer, Tun};
use crate::Error;
use ackclock_gateway::{
    DelayHistogram, DropReason, Enqueue, Impairments, ImpairmentsConfig, Link, LinkConfig,
    PacketLike, Qdisc, QdiscConfig, QueueStats, Verdict,
};
use ackclock_wire::{Duration, Instant};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// One direction of the emulated path, as written in an emulator config file:
///
/// ```toml
/// [left_to_right]
/// link = { rate_bps = 10_000_000, delay_ms = 25.0 }
/// queue = { kind = "drop_tail", limit_pkts = 64 }
/// impairments = { loss_prob = 0.01 }
/// ```
///
/// Without `link`, packets are neither serialized nor delayed: they cross as soon as the
/// impairments let them. With nothing at all, the direction is a plain forwarder (one
/// read, one write).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathConfig {
    /// The link: rate in bits/s, one-way propagation delay, MTU and framing overhead
    /// (the gateway's [`LinkConfig`]). Packets larger than its MTU are dropped
    /// ([`DirectionStats::too_big`]).
    #[serde(default)]
    pub link: Option<LinkConfig>,
    /// The queue discipline in front of the link (the gateway's [`QdiscConfig`]); a link
    /// without one gets the gateway's default, drop-tail of 100 packets. A queue needs a
    /// link to drain it.
    #[serde(default)]
    pub queue: Option<QdiscConfig>,
    /// Loss, bit errors, duplication and reordering on the wire, applied as each packet
    /// starts across (the gateway's [`ImpairmentsConfig`]; none by default).
    #[serde(default)]
    pub impairments: ImpairmentsConfig,
}

/// Both directions, and the seed of every random model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulatorConfig {
    /// Packets from the left namespace to the right one.
    #[serde(default)]
    pub left_to_right: PathConfig,
    /// Packets from the right namespace to the left one.
    #[serde(default)]
    pub right_to_left: PathConfig,
    /// Seed of the random models (queues and impairments): left to right uses it as
    /// is, right to left `seed + 0x9e37_79b9` (wrapping), so the directions differ.
    #[serde(default)]
    pub seed: u64,
}

impl EmulatorConfig {
    /// Reads a configuration file: `[left_to_right]` and `[right_to_left]` sections (link,
    /// queue, impairments, as in scenario files) and `seed`.
    ///
    /// # Errors
    /// The file cannot be read, or is not such a configuration (the message names it).
    pub fn load(path: &std::path::Path) -> Result<EmulatorConfig, Error> {
        let t = std::fs::read_to_string(path)
            .map_err(|e| Error::Io(format!("cannot read {}", path.display()), e))?;
        toml::from_str::<EmulatorConfig>(&t)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))
    }
}

/// Where the emulator puts its two ends.
#[derive(Clone, Debug)]
pub struct Topology {
    /// The left network namespace: created by the emulator (it must not exist yet) and
    /// deleted when the emulator is dropped.
    pub left_ns: String,
    /// The right network namespace, likewise.
    pub right_ns: String,
    /// The left kernel's address on its emulator interface.
    pub left_addr: Ipv4Addr,
    /// The right kernel's address on its emulator interface.
    pub right_addr: Ipv4Addr,
    /// Prefixes the left side routes through the emulator (the right side's hosts).
    pub left_routes: Vec<(Ipv4Addr, u8)>,
    /// Prefixes the right side routes through the emulator (the left side's hosts).
    pub right_routes: Vec<(Ipv4Addr, u8)>,
    /// Name of the interface in each namespace.
    pub ifname: String,
    /// Both interfaces' MTU, bytes.
    pub mtu: u32,
    /// Capture the left side's device (both directions) to this pcap file, every packet
    /// stamped with the time it was read from or written to that device.
    pub pcap_left: Option<PathBuf>,
    /// Capture the right side's device, likewise.
    pub pcap_right: Option<PathBuf>,
}

impl Default for Topology {
    /// Left site 198.18.0.0/23 (the emulator's end 198.18.1.1; ackclock's default live
    /// addresses 198.18.0.1-2 behind it), right site 198.18.2.0/23 (198.18.2.1).
    fn default() -> Self {
        Topology {
            left_ns: "ackclock-left".into(),
            right_ns: "ackclock-right".into(),
            left_addr: Ipv4Addr::new(198, 18, 1, 1),
            right_addr: Ipv4Addr::new(198, 18, 2, 1),
            left_routes: vec![(Ipv4Addr::new(198, 18, 2, 0), 23)],
            right_routes: vec![(Ipv4Addr::new(198, 18, 0, 0), 23)],
            ifname: "emu0".into(),
            mtu: 1500,
            pcap_left: None,
            pcap_right: None,
        }
    }
}

/// A packet inside the emulator: its bytes and when it entered.
#[derive(Debug)]
struct EmuPacket {
    buf: Vec<u8>,
    born: Instant,
}

impl PacketLike for EmuPacket {
    fn len_bytes(&self) -> usize {
        self.buf.len()
    }
    fn flow_id(&self) -> u64 {
        self.buf.flow_id()
    }
    fn ecn_capable(&self) -> bool {
        self.buf.ecn_capable()
    }
    fn set_ce(&mut self) {
        self.buf.set_ce();
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
}

struct Due {
    at: Instant,
    seq: u64,
    pkt: EmuPacket,
}
impl PartialEq for Due {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Due {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// Counters and measurements of one direction. A plain forwarder (no link, no
/// impairment) counts packets, bytes and write failures only: its delays and delivery
/// times are not measured.
#[derive(Clone, Debug, Default)]
pub struct DirectionStats {
    /// Packets read from the near device.
    pub packets_in: u64,
    /// Bytes of those packets (whole IP packets).
    pub bytes_in: u64,
    /// Packets written to the far device (the kernel took them), duplicates included.
    pub delivered_pkts: u64,
    /// Bytes of those packets (whole IP packets).
    pub delivered_bytes: u64,
    /// Larger than the link's MTU.
    pub too_big: u64,
    /// The far kernel refused the write.
    pub write_failures: u64,
    /// The queue's counters (drops by reason, ECN marks, sojourn times), as the run left
    /// them.
    pub queue: QueueStats,
    /// The impairments' counters (losses by model, corruptions, duplicates, reorders),
    /// as the run left them.
    pub impair: ackclock_gateway::ImpairmentStats,
    /// Time the serializer was busy.
    pub busy_ns: u64,
    /// One-way delay through the emulator: written to the far device minus read.
    pub delay: DelayHistogram,
    /// Sum of the delays in `delay`, ns (for an exact mean).
    pub delay_sum_ns: u128,
    /// How late the far-end writes were against their scheduled times.
    pub lateness: DelayHistogram,
    /// Sum of the latenesses in `lateness`, ns (for an exact mean).
    pub lateness_sum_ns: u128,
    /// Delivery time of the first packet (for the achieved rate).
    pub first_delivery: Option<Instant>,
    /// Delivery time of the last packet.
    pub last_delivery: Option<Instant>,
    /// Bytes delivered while the link was continuously busy with a non-empty queue
    /// (the achieved rate of a saturated link): bytes and span.
    pub saturated_bytes: u64,
    /// The span of those stretches, ns.
    pub saturated_ns: u64,
}

impl DirectionStats {
    /// The mean one-way delay through the emulator; `None` before a delivery.
    pub fn mean_delay(&self) -> Option<Duration> {
        let n = self.delay.count();
        (n > 0).then(|| Duration::from_nanos((self.delay_sum_ns / n as u128) as u64))
    }
    /// The mean lateness of the far-end writes; `None` before a delivery.
    pub fn mean_lateness(&self) -> Option<Duration> {
        let n = self.lateness.count();
        (n > 0).then(|| Duration::from_nanos((self.lateness_sum_ns / n as u128) as u64))
    }
    /// Delivered IP bits per second while the link was saturated (None if it never was).
    pub fn saturated_rate_bps(&self) -> Option<f64> {
        (self.saturated_ns > 0)
            .then(|| self.saturated_bytes as f64 * 8e9 / self.saturated_ns as f64)
    }
}

/// One direction: impairments, queue, link, and the packets in flight to the far end.
struct Direction {
    name: &'static str,
    impair: Impairments,
    has_impair: bool,
    qdisc: Option<Box<dyn Qdisc<EmuPacket>>>,
    link: Option<Link>,
    /// Propagation delay when there is no serializer.
    delay: Duration,
    busy_until: Option<Instant>,
    in_flight: BinaryHeap<Reverse<Due>>,
    seq: u64,
    stats: DirectionStats,
    /// Start of the current saturated stretch (serializer busy back to back).
    sat_start: Option<Instant>,
    sat_bytes: u64,
}

impl Direction {
    fn new(name: &'static str, cfg: &PathConfig, seed: u64) -> Result<Direction, Error> {
        let link = cfg
            .link
            .as_ref()
            .map(Link::new)
            .transpose()
            .map_err(|e| Error::Config(format!("{name}: {e}")))?;
        let qdisc = match (&cfg.queue, &cfg.link) {
            (Some(q), Some(l)) => {
                let mut q = q.clone();
                q.set_link_rate_if_unset(l.rate_bps);
                Some(
                    q.build::<EmuPacket>(seed)
                        .map_err(|e| Error::Config(format!("{name}: {e}")))?,
                )
            }
            (None, Some(_)) => Some(
                ackclock_gateway::DEFAULT_DROP_TAIL
                    .build::<EmuPacket>(seed)
                    .map_err(|e| Error::Config(format!("{name}: {e}")))?,
            ),
            (Some(_), None) => {
                return Err(Error::Config(format!(
                    "{name}: a queue needs a link rate to drain it (give --rate)"
                )))
            }
            (None, None) => None,
        };
        let impair = Impairments::new(&cfg.impairments, seed)
            .map_err(|e| Error::Config(format!("{name}: {e}")))?;
        Ok(Direction {
            name,
            impair,
            has_impair: !cfg.impairments.is_empty(),
            delay: cfg
                .link
                .as_ref()
                .map_or(Duration::ZERO, |l| l.propagation_delay()),
            qdisc,
            link,
            busy_until: None,
            in_flight: BinaryHeap::new(),
            seq: 0,
            stats: DirectionStats::default(),
            sat_start: None,
            sat_bytes: 0,
        })
    }

    /// A plain forwarder: no serializer, no delay, no impairment.
    fn is_passthrough(&self) -> bool {
        self.link.is_none() && !self.has_impair && self.delay == Duration::ZERO
    }

    fn next_event(&self) -> Option<Instant> {
        let d = self.in_flight.peek().map(|r| r.0.at);
        match (self.busy_until, d) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The wire: impairments decide the packet's fate as it starts across (as in the
    /// simulator), then it arrives `arrive` (+ any reordering delay).
    fn put_on_wire(&mut self, t: Instant, mut pkt: EmuPacket, arrive: Instant, pool: &mut Pool) {
        let (extra, dup) = if self.has_impair {
            match self.impair.apply(t, &mut pkt) {
                Verdict::Drop(_) | Verdict::Corrupt { bit: None } => {
                    pool.put(pkt.buf);
                    return;
                }
                Verdict::Corrupt { bit: Some(_) } => (Duration::ZERO, false),
                Verdict::Deliver {
                    extra_delay,
                    duplicate,
                } => (extra_delay, duplicate),
            }
        } else {
            (Duration::ZERO, false)
        };
        let at = arrive + extra;
        if dup {
            let mut b = pool.get();
            b.extend_from_slice(&pkt.buf);
            self.seq += 1;
            self.in_flight.push(Reverse(Due {
                at,
                seq: self.seq,
                pkt: EmuPacket {
                    buf: b,
                    born: pkt.born,
                },
            }));
        }
        self.seq += 1;
        self.in_flight.push(Reverse(Due {
            at,
            seq: self.seq,
            pkt,
        }));
    }

    /// Starts the serializer on the next queued packet at time `t` if it is free.
    fn try_start(&mut self, t: Instant, pool: &mut Pool) {
        if self.busy_until.is_some() {
            return;
        }
        let (Some(q), Some(_)) = (self.qdisc.as_mut(), self.link.as_ref()) else {
            return;
        };
        let next = q.dequeue(t, &mut |p, _r: DropReason| pool.put(p.buf));
        let Some(pkt) = next else {
            // The queue ran dry: a saturated stretch ends.
            if let Some(s) = self.sat_start.take() {
                self.stats.saturated_ns += (t - s).as_nanos();
                self.stats.saturated_bytes += self.sat_bytes;
                self.sat_bytes = 0;
            }
            return;
        };
        let link = self.link.as_mut().unwrap();
        let len = pkt.buf.len();
        let (done, arrive) = link.transmit(t, len);
        self.busy_until = Some(done);
        // Saturation: the queue still holds packets behind this one.
        if self.qdisc.as_ref().is_some_and(|q| !q.is_empty()) || self.sat_start.is_some() {
            if self.sat_start.is_none() {
                self.sat_start = Some(t);
                self.sat_bytes = 0;
            }
            self.sat_bytes += len as u64;
        }
        self.put_on_wire(t, pkt, arrive, pool);
    }

    /// A packet read from the near device at `now`.
    fn arrive(&mut self, now: Instant, buf: Vec<u8>, pool: &mut Pool) {
        self.stats.packets_in += 1;
        self.stats.bytes_in += buf.len() as u64;
        let pkt = EmuPacket { buf, born: now };
        if let Some(l) = self.link.as_ref() {
            if !l.fits_mtu(pkt.buf.len()) {
                self.stats.too_big += 1;
                pool.put(pkt.buf);
                return;
            }
        }
        match self.qdisc.as_mut() {
            Some(q) => {
                match q.enqueue(now, pkt) {
                    Enqueue::Queued => {}
                    Enqueue::Dropped(p, _) | Enqueue::Displaced(p, _) => pool.put(p.buf),
                }
                self.try_start(now, pool);
            }
            None => {
                let at = now + self.delay;
                self.put_on_wire(now, pkt, at, pool);
            }
        }
    }

    fn finish_stats(&mut self, now: Instant) {
        if let Some(q) = self.qdisc.as_ref() {
            self.stats.queue = q.stats().clone();
        }
        self.stats.impair = self.impair.stats().clone();
        if let Some(l) = self.link.as_ref() {
            self.stats.busy_ns = l.stats().busy_ns;
        }
        if let Some(s) = self.sat_start.take() {
            let end = self.busy_until.unwrap_or(now).min(now).max(s);
            self.stats.saturated_ns += (end - s).as_nanos();
            self.stats.saturated_bytes += self.sat_bytes;
            self.sat_bytes = 0;
        }
    }
}

/// Recycled packet buffers: the steady state allocates nothing.
struct Pool {
    free: Vec<Vec<u8>>,
    cap: usize,
}
impl Pool {
    fn get(&mut self) -> Vec<u8> {
        let mut b = self
            .free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.cap));
        b.clear();
        b
    }
    fn put(&mut self, b: Vec<u8>) {
        if self.free.len() < 4096 {
            self.free.push(b);
        }
    }
}

/// The result of a run: both directions' statistics and how long it ran.
#[derive(Clone, Debug)]
pub struct EmulatorReport {
    /// Packets from the left namespace to the right one.
    pub left_to_right: DirectionStats,
    /// Packets from the right namespace to the left one.
    pub right_to_left: DirectionStats,
    /// Wall time from the start of [`Emulator::run`] to its end.
    pub elapsed: Duration,
    /// CPU time (user + system) the process used since the emulator was created
    /// (`CLOCK_PROCESS_CPUTIME_ID`).
    pub cpu: Duration,
}

/// The emulator: namespaces, devices and the two directions.
pub struct Emulator {
    // Field order matters for drop: devices close before the namespaces go.
    left: Tun,
    right: Tun,
    dirs: [Direction; 2],
    cap: [Option<Capture>; 2],
    clock: Clock,
    pool: Pool,
    scratch: Vec<u8>,
    epoll: Epoll,
    timer: Timer,
    signals: Signals,
    /// Where its two ends are, as created.
    pub topology: Topology,
    cpu_start: u64,
    _left_ns: Option<NetNs>,
    _right_ns: Option<NetNs>,
}

const TOK_LEFT: u64 = 1;
const TOK_RIGHT: u64 = 2;
const TOK_TIMER: u64 = 3;
const TOK_SIGNAL: u64 = 4;
/// Events due this close to now are handled in the same wake-up.
const SLOP: Duration = Duration::from_micros(20);
/// Packets read per device per turn.
const RX_BATCH: usize = 64;

impl Emulator {
    /// Creates both namespaces, both devices, configures them and builds the models.
    /// Everything created is removed again when the emulator is dropped.
    ///
    /// In each namespace (`ip netns add`): `sysctl -w net.ipv4.ip_forward=1` and
    /// `net.ipv4.conf.all.rp_filter=0`, a TUN device (`ackL%d`, `ackR%d`) moved in and
    /// renamed [`Topology::ifname`], with the side's address, the other side's as its
    /// peer, and its routes ([`netcfg::configure`]). It then waits for both interfaces to
    /// come up and sets this process's timer slack to 1 ns (`PR_SET_TIMERSLACK`).
    ///
    /// # Errors
    /// A direction's models do not build (a queue without a link, say), a namespace
    /// exists already, or a system call or `ip` command failed.
    pub fn new(cfg: &EmulatorConfig, topo: Topology) -> Result<Emulator, Error> {
        let dirs = [
            Direction::new("left_to_right", &cfg.left_to_right, cfg.seed)?,
            Direction::new(
                "right_to_left",
                &cfg.right_to_left,
                cfg.seed.wrapping_add(0x9e37_79b9),
            )?,
        ];
        let left_ns = NetNs::create(&topo.left_ns)?;
        let right_ns = NetNs::create(&topo.right_ns)?;
        let left = Tun::open("ackL%d").map_err(|e| Error::Io("opening a TUN device".into(), e))?;
        let right = Tun::open("ackR%d").map_err(|e| Error::Io("opening a TUN device".into(), e))?;
        for (tun, ns, local, peer, routes) in [
            (
                &left,
                &left_ns,
                topo.left_addr,
                topo.right_addr,
                &topo.left_routes,
            ),
            (
                &right,
                &right_ns,
                topo.right_addr,
                topo.left_addr,
                &topo.right_routes,
            ),
        ] {
            ns.sysctl("net.ipv4.ip_forward", "1")?;
            ns.sysctl("net.ipv4.conf.all.rp_filter", "0")?;
            netcfg::configure(
                tun.name(),
                &IfConfig {
                    netns: Some(ns.name().to_string()),
                    rename: Some(topo.ifname.clone()),
                    mtu: topo.mtu,
                    local,
                    peer,
                    routes: routes.clone(),
                    txqueuelen: Some(1000),
                },
            )?;
        }
        netcfg::wait_up(
            Some(left_ns.name()),
            &topo.ifname,
            std::time::Duration::from_secs(3),
        )?;
        netcfg::wait_up(
            Some(right_ns.name()),
            &topo.ifname,
            std::time::Duration::from_secs(3),
        )?;
        let clock = Clock::new();
        let cap = [
            topo.pcap_left
                .as_deref()
                .map(|p| Capture::create(p, &clock))
                .transpose()?,
            topo.pcap_right
                .as_deref()
                .map(|p| Capture::create(p, &clock))
                .transpose()?,
        ];
        let epoll = Epoll::new().map_err(|e| Error::Io("epoll_create".into(), e))?;
        let timer = Timer::new().map_err(|e| Error::Io("timerfd_create".into(), e))?;
        let signals =
            Signals::new().map_err(|e| Error::Io("installing signal handlers".into(), e))?;
        epoll
            .add(left.as_raw_fd(), TOK_LEFT)
            .and_then(|_| epoll.add(right.as_raw_fd(), TOK_RIGHT))
            .and_then(|_| epoll.add(timer.as_raw_fd(), TOK_TIMER))
            .and_then(|_| epoll.add(signals.fd(), TOK_SIGNAL))
            .map_err(|e| Error::Io("epoll_ctl".into(), e))?;
        sys::set_timer_slack_ns(1);
        Ok(Emulator {
            left,
            right,
            dirs,
            cap,
            clock,
            pool: Pool {
                free: Vec::new(),
                cap: topo.mtu as usize + 64,
            },
            scratch: vec![0; 65_600],
            epoll,
            timer,
            signals,
            topology: topo,
            cpu_start: sys::process_cpu_ns(),
            _left_ns: Some(left_ns),
            _right_ns: Some(right_ns),
        })
    }

    /// Writes packets due by `now + SLOP` to their far devices and restarts serializers,
    /// in time order.
    fn run_due(&mut self, now: Instant) {
        let horizon = now + SLOP;
        loop {
            let mut best: Option<(Instant, usize)> = None;
            for (i, d) in self.dirs.iter().enumerate() {
                if let Some(t) = d.next_event() {
                    if t <= horizon && best.is_none_or(|(b, _)| t < b) {
                        best = Some((t, i));
                    }
                }
            }
            let Some((t, i)) = best else { return };
            let d = &mut self.dirs[i];
            if d.busy_until == Some(t) {
                d.busy_until = None;
                d.try_start(t, &mut self.pool);
                continue;
            }
            let Reverse(due) = d.in_flight.pop().expect("due packet");
            let out = if i == 0 { &self.right } else { &self.left };
            let ok = out.send(&due.pkt.buf).unwrap_or(false);
            let write_time = now.max(due.at);
            if let Some(c) = self.cap[1 - i].as_mut() {
                c.write(&due.pkt.buf);
            }
            let s = &mut d.stats;
            if ok {
                s.delivered_pkts += 1;
                s.delivered_bytes += due.pkt.buf.len() as u64;
                let delay = (write_time - due.pkt.born).as_nanos();
                s.delay.record(delay);
                s.delay_sum_ns += u128::from(delay);
                let late = (now - due.at).as_nanos();
                s.lateness.record(late);
                s.lateness_sum_ns += u128::from(late);
                if s.first_delivery.is_none() {
                    s.first_delivery = Some(write_time);
                }
                s.last_delivery = Some(write_time);
            } else {
                s.write_failures += 1;
            }
            self.pool.put(due.pkt.buf);
        }
    }

    /// Reads what the device of side `i` (0 left, 1 right) has; returns how many packets.
    fn read_side(&mut self, i: usize, now: Instant) -> Result<usize, Error> {
        let mut n = 0;
        while n < RX_BATCH {
            let tun = if i == 0 { &self.left } else { &self.right };
            let len = match tun.recv(&mut self.scratch) {
                Ok(Some(len)) => len,
                Ok(None) => break,
                Err(e) => return Err(Error::Io("reading from an emulator device".into(), e)),
            };
            n += 1;
            let pkt = &self.scratch[..len];
            if let Some(c) = self.cap[i].as_mut() {
                c.write(pkt);
            }
            let d = &mut self.dirs[i];
            if d.is_passthrough() {
                // The bare forwarder: one read, one write, nothing else.
                d.stats.packets_in += 1;
                d.stats.bytes_in += len as u64;
                let out = if i == 0 { &self.right } else { &self.left };
                if out.send(pkt).unwrap_or(false) {
                    d.stats.delivered_pkts += 1;
                    d.stats.delivered_bytes += len as u64;
                    if let Some(c) = self.cap[1 - i].as_mut() {
                        c.write(pkt);
                    }
                } else {
                    d.stats.write_failures += 1;
                }
            } else {
                let mut b = self.pool.get();
                b.extend_from_slice(pkt);
                d.arrive(now, b, &mut self.pool);
            }
        }
        Ok(n)
    }

    /// Forwards packets until SIGINT/SIGTERM or `duration`, then returns both
    /// directions' statistics (packets still in flight are not counted delivered).
    ///
    /// # Errors
    /// Reading a device, the timerfd or epoll failed.
    pub fn run(&mut self, duration: Option<std::time::Duration>) -> Result<EmulatorReport, Error> {
        let start = self.clock.now();
        let end = duration.map(|d| start + Duration::from_nanos(d.as_nanos() as u64));
        let mut buf_in = [0usize; 2];
        loop {
            let now = self.clock.now();
            self.run_due(now);
            buf_in[0] = self.read_side(0, now)?;
            buf_in[1] = self.read_side(1, now)?;
            if end.is_some_and(|e| now >= e) {
                break;
            }
            if buf_in[0] == RX_BATCH || buf_in[1] == RX_BATCH {
                continue;
            }
            let next = self
                .dirs
                .iter()
                .filter_map(|d| d.next_event())
                .chain(end)
                .min();
            self.timer
                .set(next.map(|t| self.clock.to_monotonic_ns(t)))
                .map_err(|e| Error::Io("timerfd_settime".into(), e))?;
            let mut sig = false;
            let mut fired = false;
            self.epoll
                .wait(-1, |t| match t {
                    TOK_SIGNAL => sig = true,
                    TOK_TIMER => fired = true,
                    _ => {}
                })
                .map_err(|e| Error::Io("epoll_wait".into(), e))?;
            if fired {
                self.timer.clear();
            }
            if sig && self.signals.take() > 0 {
                break;
            }
        }
        let now = self.clock.now();
        for d in &mut self.dirs {
            d.finish_stats(now);
        }
        for c in self.cap.iter_mut().flatten() {
            c.flush();
        }
        Ok(EmulatorReport {
            left_to_right: self.dirs[0].stats.clone(),
            right_to_left: self.dirs[1].stats.clone(),
            elapsed: now - start,
            cpu: Duration::from_nanos(sys::process_cpu_ns().saturating_sub(self.cpu_start)),
        })
    }

    /// Direction names, for printing.
    pub fn direction_names(&self) -> [&'static str; 2] {
        [self.dirs[0].name, self.dirs[1].name]
    }
}
