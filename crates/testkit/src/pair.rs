//! An in-memory network of two endpoints joined by two one-way pipes with delay, rate,
//! loss, reordering, duplication, corruption and scripted drops. No simulator: it is the
//! bench on which the engine's scenario and property tests run. Deterministic for a given
//! seed.
//!
//! The pipes are built from the gateway's parts, as the simulator's and the live
//! emulator's paths are: an [`ackclock_gateway::Link`] serializes at the configured rate and
//! adds the propagation delay, and the gateway's impairment models draw the random loss,
//! reordering and duplication ([`ackclock_gateway::Impairments`]) and the corruption
//! ([`ackclock_gateway::Bernoulli`] for whether, [`ackclock_gateway::BitErrors`] for which
//! bit). [`PipeConfig`] says where the pair differs from the simulator's path.

use ackclock_gateway::{
    Bernoulli, BitErrors, Impairments, ImpairmentsConfig, Link, LinkConfig, ReorderConfig,
    TestPacket, Verdict,
};
use ackclock_tcp::{ConnId, Endpoint, EndpointConfig, TcpConfig};
use ackclock_wire::{parse_ipv4_tcp, Duration, Instant, TcpFlags};
use core::net::{Ipv4Addr, SocketAddrV4};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Address of endpoint A (198.18.0.0/15 is the benchmarking range, RFC 2544).
pub const A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// Address of endpoint B.
pub const B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

/// Which pipe a packet is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// From endpoint A to endpoint B.
    AtoB,
    /// From endpoint B to endpoint A.
    BtoA,
}

/// What a scripted filter sees of each packet it may drop.
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo {
    /// When the packet was put on the pipe.
    pub at: Instant,
    /// Index of this packet on its pipe, from 0.
    pub index: u64,
    /// Index among packets carrying data on its pipe, from 0 (None for pure ACKs).
    pub data_index: Option<u64>,
    /// The TCP sequence number (0 if the packet does not parse).
    pub seq: u32,
    /// The TCP acknowledgment number (0 if the packet does not parse).
    pub ack: u32,
    /// The TCP control bits (none if the packet does not parse).
    pub flags: TcpFlags,
    /// Bytes of TCP data (0 if the packet does not parse).
    pub payload_len: usize,
    /// Length of the whole IPv4 packet.
    pub len: usize,
}

/// A scripted drop rule: return true to drop.
pub type Filter = Box<dyn FnMut(&PacketInfo) -> bool + Send>;

/// One direction of the path. Each packet goes through, in order: the scripted filter
/// ([`Harness::set_filter`]), random loss, the drop-tail queue and the serializer, then the
/// propagation delay, with possible reordering, duplication or corruption.
///
/// Where this differs from the simulator's path (`ackclock-sim`), which uses the same
/// gateway parts:
/// - loss is decided before the queue (a lost packet takes no room in it), not on the wire;
/// - `corrupt` is a probability per packet, not a bit error rate (the gateway's `ber`,
///   whose damage grows with the packet's length);
/// - the queue is counted here, not a gateway queue discipline: a `queue_limit_pkts` of N
///   holds N packets with the one being serialized, and 0 is no limit at all (a gateway
///   `DropTail` needs a limit, preallocates to it, does not count the packet on the wire,
///   and wants the driver to dequeue it when the link frees; a FIFO behind
///   [`Link::transmit`] needs none of that).
///
/// Probabilities must lie in 0..=1 ([`Harness::new`] panics otherwise, as the gateway's
/// validation says).
#[derive(Clone, Debug)]
pub struct PipeConfig {
    /// One-way propagation delay, added after serialization (10 ms by default).
    pub delay: Duration,
    /// Serialization rate in bits per second, by an [`ackclock_gateway::Link`] without
    /// framing (a packet of `len` bytes takes `8 len / rate_bps` seconds, rounded up to the
    /// nanosecond); 0 means infinitely fast: no serializer, no queue.
    pub rate_bps: u64,
    /// Drop-tail limit of the queue in front of the serializer, in packets, the one being
    /// serialized included; 0 is unlimited. Only with a `rate_bps`.
    pub queue_limit_pkts: usize,
    /// Probability that a packet is dropped at random (0 to 1): the gateway's Bernoulli loss
    /// (`ImpairmentsConfig::loss_prob`).
    pub loss: f64,
    /// Probability that a packet is held back by `reorder_delay` extra: the gateway's
    /// reordering (`ImpairmentsConfig::reorder`).
    pub reorder: f64,
    /// The extra delay of a reordered packet (5 ms by default).
    pub reorder_delay: Duration,
    /// Probability that a packet is delivered twice, the copy right behind the original
    /// (the gateway's duplication, `ImpairmentsConfig::duplicate_prob`). Before the pair
    /// used the gateway, the copy came up to 1 ms later.
    pub duplicate: f64,
    /// Probability that one random bit of the packet is flipped. A corrupted packet is
    /// delivered once and on time, neither held back nor duplicated, as in the gateway's
    /// pipeline.
    pub corrupt: f64,
}

impl Default for PipeConfig {
    fn default() -> Self {
        PipeConfig {
            delay: Duration::from_millis(10),
            rate_bps: 0,
            queue_limit_pkts: 0,
            loss: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::from_millis(5),
            duplicate: 0.0,
            corrupt: 0.0,
        }
    }
}

/// Counters of one pipe.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PipeStats {
    /// Packets put on the pipe.
    pub sent: u64,
    /// Packets that arrived at the other end (duplicates included).
    pub delivered: u64,
    /// Packets dropped by `loss`.
    pub dropped_random: u64,
    /// Packets dropped by the scripted filter.
    pub dropped_scripted: u64,
    /// Packets dropped because the queue held `queue_limit_pkts`.
    pub dropped_queue: u64,
    /// Packets delivered a second time.
    pub duplicated: u64,
    /// Packets delivered with one bit flipped.
    pub corrupted: u64,
    /// Packets delayed by `reorder_delay`.
    pub reordered: u64,
    /// Bytes of the packets that were not dropped (duplicates counted once).
    pub bytes: u64,
}

/// RNG streams of the corruption model, apart from the gateway's own (0x10 to 0x24).
const CORRUPT_STREAM: u64 = 0x7a00;
const CORRUPT_BIT_STREAM: u64 = 0x7a01;

/// A gateway model's RNG: ChaCha8 keyed by the pipe's seed, one stream per purpose (as the
/// gateway keys its own).
fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// A duration in the gateway's configuration unit (milliseconds, a float: exact to the
/// nanosecond for any delay a test uses).
fn ms(d: Duration) -> f64 {
    d.as_nanos() as f64 / 1e6
}

/// Corruption: whether a packet is hit, and which of its bits flips.
struct Corrupt {
    hit: Bernoulli,
    /// At a bit error rate of 1, `BitErrors::draw` always names a bit, uniformly.
    bit: BitErrors,
}

struct Pipe {
    cfg: PipeConfig,
    /// (arrival time, insertion order) -> packet; the order keeps equal times FIFO.
    heap: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    packets: Vec<Option<Vec<u8>>>,
    free_slots: Vec<usize>,
    spare: Vec<Vec<u8>>,
    order: u64,
    /// The serializer and the propagation delay (`None` at an infinite rate).
    link: Option<Link>,
    /// Departure times of packets in the serializer queue, to enforce the queue limit.
    in_queue: VecDeque<Instant>,
    /// Random loss, reordering and duplication.
    impair: Impairments,
    corrupt: Option<Corrupt>,
    index: u64,
    data_index: u64,
    filter: Option<Filter>,
    stats: PipeStats,
}

impl Pipe {
    fn new(cfg: PipeConfig, seed: u64) -> Self {
        let link = (cfg.rate_bps > 0).then(|| {
            let lc = LinkConfig {
                // The pipe carries any IPv4 packet; the engine's MSS bounds them.
                mtu_bytes: usize::from(u16::MAX),
                ..LinkConfig::new(cfg.rate_bps, ms(cfg.delay))
            };
            let link = Link::new(&lc).unwrap_or_else(|e| panic!("PipeConfig {cfg:?}: {e}"));
            debug_assert_eq!(link.propagation_delay(), cfg.delay);
            link
        });
        let prob = |p: f64| (p != 0.0).then_some(p);
        let impair = ImpairmentsConfig {
            loss_prob: prob(cfg.loss),
            reorder: prob(cfg.reorder).map(|p| ReorderConfig {
                prob: p,
                delay_ms: ms(cfg.reorder_delay),
            }),
            duplicate_prob: prob(cfg.duplicate),
            ..ImpairmentsConfig::default()
        }
        .build(seed)
        .unwrap_or_else(|e| panic!("PipeConfig {cfg:?}: {e}"));
        if !(0.0..=1.0).contains(&cfg.corrupt) {
            panic!(
                "PipeConfig {cfg:?}: corrupt = {} is not in 0..=1",
                cfg.corrupt
            );
        }
        let corrupt = prob(cfg.corrupt).map(|p| Corrupt {
            hit: Bernoulli::new(p, rng(seed, CORRUPT_STREAM)),
            bit: BitErrors::new(1.0, rng(seed, CORRUPT_BIT_STREAM)),
        });
        Pipe {
            cfg,
            heap: BinaryHeap::new(),
            packets: Vec::new(),
            free_slots: Vec::new(),
            spare: Vec::new(),
            order: 0,
            link,
            in_queue: VecDeque::new(),
            impair,
            corrupt,
            index: 0,
            data_index: 0,
            filter: None,
            stats: PipeStats::default(),
        }
    }

    fn schedule(&mut self, at: Instant, bytes: &[u8]) {
        let mut v = self.spare.pop().unwrap_or_default();
        v.clear();
        v.extend_from_slice(bytes);
        self.schedule_owned(at, v);
    }

    fn schedule_owned(&mut self, at: Instant, v: Vec<u8>) {
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.packets[s] = Some(v);
                s
            }
            None => {
                self.packets.push(Some(v));
                self.packets.len() - 1
            }
        };
        self.order += 1;
        self.heap.push(Reverse((at, self.order, slot)));
    }

    fn send(&mut self, now: Instant, bytes: &[u8]) {
        self.stats.sent += 1;
        let index = self.index;
        self.index += 1;
        if let Some(f) = self.filter.as_mut() {
            let info = match parse_ipv4_tcp(bytes) {
                Ok(p) => {
                    let has_data = !p.tcp.payload().is_empty();
                    let data_index = has_data.then_some(self.data_index);
                    PacketInfo {
                        at: now,
                        index,
                        data_index,
                        seq: p.tcp.seq(),
                        ack: p.tcp.ack(),
                        flags: p.tcp.flags(),
                        payload_len: p.tcp.payload().len(),
                        len: bytes.len(),
                    }
                }
                Err(_) => PacketInfo {
                    at: now,
                    index,
                    data_index: None,
                    seq: 0,
                    ack: 0,
                    flags: TcpFlags::NONE,
                    payload_len: 0,
                    len: bytes.len(),
                },
            };
            if info.data_index.is_some() {
                self.data_index += 1;
            }
            if f(&info) {
                self.stats.dropped_scripted += 1;
                return;
            }
        }
        // The gateway's models decide the packet's fate, each drawing for every packet
        // whatever the others decide. They see its length only: corruption is ours.
        let held_before = self.impair.stats().reordered;
        let verdict = self
            .impair
            .apply(now, &mut TestPacket::new(index, 0, bytes.len()));
        let held = self.impair.stats().reordered > held_before;
        let flip = self.corrupt.as_mut().and_then(|c| {
            let hit = c.hit.trial();
            let bit = c.bit.draw(bytes.len());
            bit.filter(|_| hit)
        });
        let (extra_delay, duplicate) = match verdict {
            Verdict::Deliver {
                extra_delay,
                duplicate,
            } => (extra_delay, duplicate),
            Verdict::Drop(_) => {
                self.stats.dropped_random += 1;
                return;
            }
            Verdict::Corrupt { .. } => unreachable!("the pipe configures no bit error rate"),
        };
        // Serialization at the configured rate behind a drop-tail queue.
        let arrival = match self.link.as_mut() {
            None => now + self.cfg.delay,
            Some(link) => {
                while self.in_queue.front().is_some_and(|&t| t <= now) {
                    self.in_queue.pop_front();
                }
                let limit = self.cfg.queue_limit_pkts;
                if limit > 0 && self.in_queue.len() >= limit {
                    self.stats.dropped_queue += 1;
                    return;
                }
                // A packet handed over while the serializer is busy starts when the one
                // before it is done: the link is the queue's FIFO.
                let (done, arrival) = link.transmit(now, bytes.len());
                self.in_queue.push_back(done);
                arrival
            }
        };
        self.stats.bytes += bytes.len() as u64;
        if let Some(bit) = flip {
            // As the gateway flips a bit: counted from the most significant of byte 0.
            let mut v = self.spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(bytes);
            v[bit / 8] ^= 0x80 >> (bit % 8);
            self.stats.corrupted += 1;
            self.schedule_owned(arrival, v);
            return;
        }
        let at = arrival + extra_delay;
        self.stats.reordered += u64::from(held);
        self.schedule(at, bytes);
        if duplicate {
            self.stats.duplicated += 1;
            self.schedule(at, bytes);
        }
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        let &Reverse((t, _, slot)) = self.heap.peek()?;
        if t > now {
            return None;
        }
        self.heap.pop();
        self.free_slots.push(slot);
        self.stats.delivered += 1;
        self.packets[slot].take()
    }
}

/// Two endpoints, A ([`A_ADDR`]) and B ([`B_ADDR`]), and the path between them, driven in
/// simulated time. Each packet that arrives is handed to its endpoint, followed by the
/// application callback and a drain of both endpoints' output; the timers run at every
/// step. The transmit buffer is 64 KiB.
pub struct Harness {
    /// The simulated time: starts at zero, moves to each event as it is processed.
    pub now: Instant,
    /// Endpoint A, the side that connects in [`open`](Self::open).
    pub a: Endpoint,
    /// Endpoint B, the side that listens.
    pub b: Endpoint,
    ab: Pipe,
    ba: Pipe,
    buf: Vec<u8>,
    /// Every packet put on a pipe, when recording is on (time, direction, bytes).
    pub capture: Option<Vec<(Instant, Dir, Vec<u8>)>>,
    /// The most packets one endpoint may emit in answer to one event (a packet, a timer,
    /// an application call) before the harness calls its output unbounded and panics: an
    /// engine whose `poll_transmit` never returns `None` would otherwise hang the test.
    pub max_burst: usize,
}

impl Harness {
    /// Symmetric path with `pipe` in both directions.
    pub fn new(seed: u64, pipe: PipeConfig) -> Self {
        Self::asymmetric(seed, pipe.clone(), pipe)
    }

    /// A path with `ab` from A to B and `ba` from B to A. The endpoints' ISN keys and the
    /// pipes' random numbers derive from `seed`.
    pub fn asymmetric(seed: u64, ab: PipeConfig, ba: PipeConfig) -> Self {
        let key = |x: u64| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&seed.to_le_bytes());
            k[8..].copy_from_slice(&x.to_le_bytes());
            k
        };
        Harness {
            now: Instant::ZERO,
            a: Endpoint::new(EndpointConfig::new(A_ADDR, key(1))),
            b: Endpoint::new(EndpointConfig::new(B_ADDR, key(2))),
            ab: Pipe::new(ab, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 1),
            ba: Pipe::new(ba, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 2),
            buf: vec![0u8; 65536],
            capture: None,
            max_burst: 100_000,
        }
    }

    /// Installs a scripted drop filter on one direction.
    pub fn set_filter(&mut self, dir: Dir, f: Filter) {
        match dir {
            Dir::AtoB => self.ab.filter = Some(f),
            Dir::BtoA => self.ba.filter = Some(f),
        }
    }

    /// The counters of one direction.
    pub fn pipe_stats(&self, dir: Dir) -> &PipeStats {
        match dir {
            Dir::AtoB => &self.ab.stats,
            Dir::BtoA => &self.ba.stats,
        }
    }

    /// B listens on `port`; A connects to it. Returns A's connection.
    pub fn open(&mut self, port: u16, a_cfg: TcpConfig, b_cfg: TcpConfig) -> ConnId {
        self.b
            .listen(port, b_cfg, 16)
            .expect("port free in a new harness");
        self.a
            .connect(self.now, SocketAddrV4::new(B_ADDR, port), a_cfg)
            .expect("ephemeral port")
    }

    /// Sends everything both endpoints want to send now.
    fn flush(&mut self) {
        let mut n = 0;
        while let Some(t) = self.a.poll_transmit(self.now, &mut self.buf) {
            let pkt = &self.buf[..t.len];
            if let Some(c) = self.capture.as_mut() {
                c.push((self.now, Dir::AtoB, pkt.to_vec()));
            }
            self.ab.send(self.now, pkt);
            n += 1;
            assert!(
                n <= self.max_burst,
                "A emitted more than {} packets for one event at {:?}: output unbounded",
                self.max_burst,
                self.now
            );
        }
        let mut n = 0;
        while let Some(t) = self.b.poll_transmit(self.now, &mut self.buf) {
            let pkt = &self.buf[..t.len];
            if let Some(c) = self.capture.as_mut() {
                c.push((self.now, Dir::BtoA, pkt.to_vec()));
            }
            self.ba.send(self.now, pkt);
            n += 1;
            assert!(
                n <= self.max_burst,
                "B emitted more than {} packets for one event at {:?}: output unbounded",
                self.max_burst,
                self.now
            );
        }
    }

    /// The time of the next event, if any.
    pub fn next_event(&self) -> Option<Instant> {
        [
            self.ab.next_arrival(),
            self.ba.next_arrival(),
            self.a.poll_timeout(),
            self.b.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Sends what is ready, then advances to the next event (not past `limit`) and
    /// processes it. Returns false when nothing is left to happen before `limit`.
    pub fn step(&mut self, limit: Instant) -> bool {
        self.step_with(limit, &mut |_| false).0
    }

    /// As [`step`](Self::step), running `app` after each packet is handled and before the
    /// endpoints send what it provoked: an application blocked in a read is woken at once,
    /// so the ACK it causes already advertises the window its read opened. Returns
    /// (progressed, app returned true).
    pub fn step_with(
        &mut self,
        limit: Instant,
        app: &mut dyn FnMut(&mut Harness) -> bool,
    ) -> (bool, bool) {
        let mut done = false;
        self.flush();
        let Some(t) = self.next_event() else {
            return (false, false);
        };
        if t > limit {
            self.now = limit;
            return (false, false);
        }
        self.now = self.now.max(t);
        // One packet at a time, each followed by the output it provokes, as a host that
        // runs its input and output paths per packet would.
        loop {
            let next_ab = self.ab.next_arrival().filter(|&t| t <= self.now);
            let next_ba = self.ba.next_arrival().filter(|&t| t <= self.now);
            let to_b = match (next_ab, next_ba) {
                (Some(x), Some(y)) => x <= y,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if to_b {
                if let Some(p) = self.ab.pop_due(self.now) {
                    self.b.handle_packet(self.now, &p);
                    self.ab.spare.push(p);
                }
            } else if let Some(p) = self.ba.pop_due(self.now) {
                self.a.handle_packet(self.now, &p);
                self.ba.spare.push(p);
            }
            done |= app(self);
            self.flush();
        }
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
        done |= app(self);
        self.flush();
        (true, done)
    }

    /// Runs until `app` (the application's reads and writes, called after every packet and
    /// timer event) returns true, or `limit` passes. Returns whether `app` returned true.
    pub fn run(&mut self, limit: Instant, mut app: impl FnMut(&mut Harness) -> bool) -> bool {
        if app(self) {
            return true;
        }
        loop {
            let (progressed, done) = self.step_with(limit, &mut app);
            if done {
                return true;
            }
            if !progressed {
                return app(self);
            }
        }
    }

    /// Runs until `done` holds or `limit` passes; `app` runs after every step (the
    /// application's reads and writes). Returns whether `done` held.
    pub fn run_until(
        &mut self,
        limit: Instant,
        mut app: impl FnMut(&mut Harness),
        mut done: impl FnMut(&Harness) -> bool,
    ) -> bool {
        loop {
            app(self);
            if done(self) {
                return true;
            }
            if !self.step(limit) {
                app(self);
                return done(self);
            }
        }
    }
}

/// Outcome of [`bulk_transfer`].
#[derive(Clone, Debug)]
pub struct TransferResult {
    /// What B's application read.
    pub delivered: Vec<u8>,
    /// B read the end of the stream before the limit.
    pub completed: bool,
    /// Simulated time from the start of the transfer to the end of the run.
    pub elapsed: Duration,
    /// A's connection statistics at the end (default if it was removed).
    pub sender: ackclock_tcp::Stats,
    /// B's connection statistics at the end (default if it was never accepted or was
    /// removed).
    pub receiver: ackclock_tcp::Stats,
}

/// Outcome of [`two_way_transfer`].
#[derive(Clone, Debug)]
pub struct TwoWayResult {
    /// Each side had the other's bytes and an acknowledgment of all it sent before `limit`.
    pub completed: bool,
    /// What A read (B's bytes).
    pub a_got: Vec<u8>,
    /// What B read (A's bytes).
    pub b_got: Vec<u8>,
    /// A's connection statistics at the end, if it still exists.
    pub a: Option<ackclock_tcp::Stats>,
    /// B's connection statistics at the end, if it was accepted and still exists.
    pub b: Option<ackclock_tcp::Stats>,
}

/// A sends `ab` to B while B sends `ba` to A, both applications reading promptly; runs
/// until each side has the other's bytes and all its own are acknowledged, or `limit`
/// passes. Used by tests.
pub fn two_way_transfer(
    h: &mut Harness,
    a_cfg: TcpConfig,
    b_cfg: TcpConfig,
    ab: &[u8],
    ba: &[u8],
    limit: Duration,
) -> TwoWayResult {
    let a = h.open(7, a_cfg, b_cfg);
    let mut b: Option<ConnId> = None;
    let (mut sent_a, mut sent_b) = (0, 0);
    let (mut a_got, mut b_got) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; 65536];
    let deadline = h.now + limit;
    // One side's application: top the send buffer up, read everything readable.
    fn side(
        c: &mut ackclock_tcp::Connection,
        data: &[u8],
        sent: &mut usize,
        got: &mut Vec<u8>,
        buf: &mut [u8],
    ) {
        if *sent < data.len() {
            *sent += c.send(&data[*sent..]).unwrap_or(0);
        }
        while let Ok(n) = c.recv(buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
    }
    let completed = h.run(deadline, |h| {
        if let Some(c) = h.a.conn_mut(a) {
            side(c, ab, &mut sent_a, &mut a_got, &mut buf);
        }
        if b.is_none() {
            b = h.b.accept(7);
        }
        if let Some(c) = b.and_then(|id| h.b.conn_mut(id)) {
            side(c, ba, &mut sent_b, &mut b_got, &mut buf);
        }
        let idle = |c: Option<&ackclock_tcp::Connection>| {
            c.is_some_and(|c| c.send_queued() == 0 && c.stats().flight_bytes == 0)
        };
        a_got.len() >= ba.len()
            && b_got.len() >= ab.len()
            && idle(h.a.conn(a))
            && idle(b.and_then(|id| h.b.conn(id)))
    });
    TwoWayResult {
        completed,
        a: h.a.conn(a).map(|c| c.stats()),
        b: b.and_then(|id| h.b.conn(id)).map(|c| c.stats()),
        a_got,
        b_got,
    }
}

/// A sends without end on its connection `ca` (B's listener on port 9 accepts, and its
/// application discards what arrives) until the harness clock reaches `until`: the steady
/// bulk flow that window-growth tests watch. Returns A's statistics then (default if the
/// connection is gone).
pub fn send_for(h: &mut Harness, ca: ConnId, until: Instant) -> ackclock_tcp::Stats {
    let data = vec![0u8; 1 << 20];
    let mut cb = None;
    h.run(until, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            // The same megabyte again and again: the content does not matter here.
            let _ = c.send(&data);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            c.recv_discard(usize::MAX);
        }
        false
    });
    h.a.conn(ca).map(|c| c.stats()).unwrap_or_default()
}

/// A sends `data` to B (B's application reads promptly), then both close. Used by tests.
pub fn bulk_transfer(
    h: &mut Harness,
    data: &[u8],
    a_cfg: TcpConfig,
    b_cfg: TcpConfig,
    limit: Duration,
) -> TransferResult {
    let start = h.now;
    let ca = h.open(9, a_cfg, b_cfg);
    let mut cb: Option<ConnId> = None;
    let mut sent = 0usize;
    let mut closed_a = false;
    let mut got = Vec::with_capacity(data.len());
    let mut eof = false;
    let mut rbuf = vec![0u8; 16384];
    let deadline = start + limit;
    let completed = h.run(deadline, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            if sent < data.len() {
                if let Ok(n) = c.send(&data[sent..]) {
                    sent += n;
                }
            }
            if sent == data.len() && !closed_a && c.is_established() {
                let _ = h.a.close(ca);
                closed_a = true;
            }
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(id) = cb {
            if let Some(c) = h.b.conn_mut(id) {
                loop {
                    match c.recv(&mut rbuf) {
                        Ok(0) => {
                            if !eof {
                                eof = true;
                                let _ = h.b.close(id);
                            }
                            break;
                        }
                        Ok(n) => got.extend_from_slice(&rbuf[..n]),
                        Err(_) => break,
                    }
                }
            }
        }
        eof
    });
    let sender = h.a.conn(ca).map(|c| c.stats()).unwrap_or_default();
    let receiver = cb
        .and_then(|id| h.b.conn(id).map(|c| c.stats()))
        .unwrap_or_default();
    TransferResult {
        delivered: got,
        completed,
        elapsed: h.now - start,
        sender,
        receiver,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::{write_ipv4_tcp, Ipv4Header, TcpHeader, TcpOptions};

    /// An IPv4/TCP packet of 40 + `payload` bytes.
    fn packet(payload: usize) -> Vec<u8> {
        let ip = Ipv4Header::new(A_ADDR, B_ADDR, 6);
        let tcp = TcpHeader {
            src_port: 1000,
            dst_port: 80,
            seq: 1,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 65535,
            urgent: 0,
            options: TcpOptions::NONE,
        };
        let mut buf = vec![0u8; 40 + payload];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &vec![0x5a; payload]).unwrap();
        buf.truncate(n);
        buf
    }

    fn at_ns(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    /// Everything the pipe delivers, with its arrival time.
    fn drain(p: &mut Pipe) -> Vec<(Instant, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some(t) = p.next_arrival() {
            out.push((t, p.pop_due(t).unwrap()));
        }
        out
    }

    #[test]
    fn the_link_serializes_behind_the_drop_tail_limit() {
        // 8 Mb/s: 1 us per byte; a 1000-byte packet takes 1 ms, then the 10 ms delay.
        let cfg = PipeConfig {
            rate_bps: 8_000_000,
            queue_limit_pkts: 2,
            ..PipeConfig::default()
        };
        let mut p = Pipe::new(cfg, 1);
        let pkt = packet(960);
        for _ in 0..3 {
            p.send(at_ns(0), &pkt);
        }
        // One on the wire, one waiting: the third is refused.
        assert_eq!(p.stats.dropped_queue, 1);
        // The first is done at 1 ms: room for one more, behind the second.
        p.send(at_ns(1_000_000), &pkt);
        assert_eq!(p.stats.dropped_queue, 1);
        let times: Vec<u64> = drain(&mut p).iter().map(|(t, _)| t.as_nanos()).collect();
        assert_eq!(times, [11_000_000, 12_000_000, 13_000_000]);
        assert_eq!(p.link.as_ref().unwrap().stats().packets, 3);
        assert_eq!(p.stats.bytes, 3000);
    }

    #[test]
    fn an_infinite_rate_only_delays() {
        let cfg = PipeConfig {
            queue_limit_pkts: 1,
            ..PipeConfig::default()
        };
        let mut p = Pipe::new(cfg, 1);
        for _ in 0..5 {
            p.send(at_ns(7), &packet(1460));
        }
        assert!(p.link.is_none());
        let got = drain(&mut p);
        assert_eq!(got.len(), 5);
        assert!(got.iter().all(|(t, _)| t.as_nanos() == 10_000_007));
    }

    #[test]
    fn impairments_hit_at_their_rates_and_repeat_for_a_seed() {
        let cfg = PipeConfig {
            loss: 0.1,
            reorder: 0.1,
            duplicate: 0.05,
            corrupt: 0.05,
            ..PipeConfig::default()
        };
        let pkt = packet(100);
        let n = 20_000u64;
        // Sent 100 ns apart: all within 2 ms, less than the 5 ms a reordered packet waits.
        let run = |seed| {
            let mut p = Pipe::new(cfg.clone(), seed);
            for i in 0..n {
                p.send(at_ns(i * 100), &pkt);
            }
            let got = drain(&mut p);
            (p.stats, got)
        };
        let (st, got) = run(3);
        let near = |k: u64, of: u64, prob: f64| {
            let mean = of as f64 * prob;
            let sd = (mean * (1.0 - prob)).sqrt();
            (k as f64 - mean).abs() < 4.0 * sd
        };
        assert!(near(st.dropped_random, n, 0.1), "{st:?}");
        let kept = n - st.dropped_random;
        assert!(near(st.corrupted, kept, 0.05), "{st:?}");
        // Reordering and duplication apply to the packets that arrive intact.
        let intact = kept - st.corrupted;
        assert!(near(st.reordered, intact, 0.1), "{st:?}");
        assert!(near(st.duplicated, intact, 0.05), "{st:?}");
        assert_eq!(got.len() as u64, kept + st.duplicated);
        assert_eq!(st.delivered, got.len() as u64);
        // A corrupted packet has one bit flipped and arrives once, on time.
        let on_time = 10_000_000 + n * 100;
        let mut bad = 0;
        for (t, b) in &got {
            let flipped: u32 = b.iter().zip(&pkt).map(|(x, y)| (x ^ y).count_ones()).sum();
            if flipped > 0 {
                assert_eq!(flipped, 1);
                assert!(t.as_nanos() < on_time, "a corrupted packet was held back");
                assert!(parse_ipv4_tcp(b).is_err(), "the checksum catches it");
                bad += 1;
            }
        }
        assert_eq!(bad, st.corrupted);
        let late = got.iter().filter(|(t, _)| t.as_nanos() >= on_time).count();
        assert!(late as u64 >= st.reordered, "{late} late, {st:?}");
        assert!(run(3) == (st, got), "the same seed, the same path");
        assert!(run(4).1 != run(3).1, "another seed, another path");
    }

    #[test]
    #[should_panic(expected = "corrupt")]
    fn a_probability_above_one_is_refused() {
        Pipe::new(
            PipeConfig {
                corrupt: 1.5,
                ..PipeConfig::default()
            },
            0,
        );
    }

    #[test]
    #[should_panic(expected = "loss_prob")]
    fn a_negative_loss_is_refused() {
        Pipe::new(
            PipeConfig {
                loss: -0.1,
                ..PipeConfig::default()
            },
            0,
        );
    }
}
