//! In-memory bulk transfer between two endpoints on one core: ackclock-tcp against smoltcp
//! in the same harness shape. See BENCHMARKS.md, "ackclock-tcp: bulk transfer and header
//! prediction".
//!
//! Shape (identical for both stacks):
//! - two hosts, A (198.18.0.1) sends, B (198.18.0.2) receives, joined by two zero-delay,
//!   lossless one-way "wires": rings of preallocated 2 KiB packet slots (no allocation in
//!   the steady state). The stacks write their packets straight into a free slot and read
//!   them straight out of it: no copy on the wire;
//! - MSS 1460 (MTU 1500), send and receive buffers of 256 KiB on both sides, window scaling
//!   on, checksums computed on output and verified on input by both stacks, everything else
//!   the stack's defaults (ours: `TcpConfig::newreno()`, delayed ACK 200 ms and an ACK every
//!   second full segment; smoltcp: its defaults, 10 ms ACK delay and an ACK when more than one
//!   MSS is unacknowledged, no congestion controller);
//! - a single thread runs rounds: A takes every packet queued for it, one at a time, each
//!   followed by whatever A then wants to send; A's application tops its send buffer up;
//!   A sends what it can. Then the same for B, whose application drains (discards without
//!   copying) everything readable after the batch. Virtual time advances only when a round
//!   moves nothing (to the next timer), which never happens in the steady state;
//! - one connection per benchmark, set up and warmed up (slow start done) before measuring;
//!   an iteration moves 64 MiB of application data and is timed with wall time.
//!
//! Benchmarks `bulk/ackclock`, `bulk/smoltcp` and `bulk/copy-floor` (no protocol: only
//! the three data passes our design makes per segment, see [`Floor`]). Besides criterion's
//! report, the bench prints `summary` lines: medians over all timed transfers of goodput
//! (Gbit/s, 1e9 bit/s) and data segments per second, by wall time and by this thread's CPU
//! time (the machine may be shared), the packet counts of a transfer, the ratio of the
//! medians, and a paired ratio from alternating transfers of the two stacks (the most
//! robust figure on a noisy machine).
//!
//! Knobs: `ACKCLOCK_BULK_MIB=N` moves N MiB per iteration (default 64).
//! `ACKCLOCK_BULK_API=copy` makes our applications use `send` (a copy from the
//! application's buffer) and `recv_discard`, the API before `send_with` and `recv_with`
//! (the default: the application writes into the send ring and is lent the receive ring).
//! `ACKCLOCK_BULK_PROFILE=ackclock|smoltcp|copy-floor` skips criterion and runs
//! `ACKCLOCK_BULK_TRANSFERS` (default 4) transfers inside `profiled_transfers`, for
//! `valgrind --tool=callgrind --toggle-collect='bulk::profiled_transfers*'`.
//! `ACKCLOCK_BULK_TCP=sack|sack-rack-tlp` runs ours with SACK recovery (`TcpConfig::sack()`),
//! with or without RFC 8985 RACK-TLP, instead of `TcpConfig::newreno()` (the RACK cost in
//! BENCHMARKS.md); `sack-bbr` with BBR v1 and RACK-TLP (the transmit log's stamps, the
//! model and pacing), `sack-paced` with Linux's pacing rule (each segment then waits for
//! its send time, and the bench advances virtual time to it: the cost includes a timer
//! event per segment, as a paced host has).

use ackclock_tcp::{
    BbrConfig, CongestionAlgorithm, ConnId, Endpoint, EndpointConfig, LossDetection, Pacing,
    TcpConfig,
};
use ackclock_wire::{checksum, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use std::cell::RefCell;
use std::time::Duration;

const A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const PORT: u16 = 9;
const BUF_BYTES: usize = 256 * 1024;
const MTU: usize = 1500;
/// Bytes moved before measuring, so slow start is over.
const WARMUP_BYTES: u64 = 32 << 20;

fn transfer_bytes() -> u64 {
    std::env::var("ACKCLOCK_BULK_MIB")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(64)
        << 20
}

// ---------------------------------------------------------------------------------------
// The wire: a ring of preallocated packet slots.

const SLOT: usize = 2048;
const SLOTS: usize = 512;

struct Ring {
    buf: Box<[u8]>,
    lens: Box<[u16]>,
    head: usize,
    len: usize,
    packets: u64,
    data_packets: u64,
}

impl Ring {
    fn new() -> Self {
        Ring {
            buf: vec![0u8; SLOT * SLOTS].into_boxed_slice(),
            lens: vec![0u16; SLOTS].into_boxed_slice(),
            head: 0,
            len: 0,
            packets: 0,
            data_packets: 0,
        }
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn is_full(&self) -> bool {
        self.len == SLOTS
    }

    /// The oldest packet.
    fn front(&self) -> Option<&[u8]> {
        if self.len == 0 {
            return None;
        }
        let at = self.head * SLOT;
        Some(&self.buf[at..at + usize::from(self.lens[self.head])])
    }

    fn pop(&mut self) {
        debug_assert!(self.len > 0);
        self.head = (self.head + 1) % SLOTS;
        self.len -= 1;
    }

    /// The free slot a packet is written into before [`push`](Self::push).
    fn slot_mut(&mut self) -> Option<&mut [u8]> {
        if self.is_full() {
            return None;
        }
        let at = ((self.head + self.len) % SLOTS) * SLOT;
        Some(&mut self.buf[at..at + SLOT])
    }

    /// Queues the `len` bytes written into the free slot.
    fn push(&mut self, len: usize) {
        debug_assert!(!self.is_full() && len <= SLOT);
        let i = (self.head + self.len) % SLOTS;
        self.lens[i] = len as u16;
        let p = &self.buf[i * SLOT..i * SLOT + len];
        // TCP payload length = IP total length - IP header - TCP header.
        let ihl = usize::from(p[0] & 0x0f) * 4;
        let doff = usize::from(p[ihl + 12] >> 4) * 4;
        if len > ihl + doff {
            self.data_packets += 1;
        }
        self.packets += 1;
        self.len += 1;
    }
}

/// Packet counts of one transfer.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    data_segments: u64,
    packets_ab: u64,
    packets_ba: u64,
}

fn counts(ab: &Ring, ba: &Ring) -> Counts {
    Counts {
        data_segments: ab.data_packets,
        packets_ab: ab.packets,
        packets_ba: ba.packets,
    }
}

/// What both benchmarked stacks offer the driver loop.
trait Pair {
    /// A's turn: its input batch, its application, its output. True if anything moved.
    fn turn_a(&mut self) -> bool;
    /// B's turn; returns whether anything moved and the bytes B's application drained.
    fn turn_b(&mut self) -> (bool, u64);
    /// Nothing moved: advance virtual time to the next timer and run it.
    fn advance(&mut self);
    fn counts(&self) -> Counts;
    fn virtual_nanos(&self) -> u64;
    /// Stack-specific counters worth printing once.
    fn describe(&self) -> String {
        String::new()
    }
}

/// Runs rounds until B's application has drained `bytes` more bytes.
fn transfer(p: &mut impl Pair, bytes: u64) {
    let mut got = 0;
    let mut idle_rounds = 0u32;
    while got < bytes {
        let a = p.turn_a();
        let (b, n) = p.turn_b();
        got += n;
        if !a && !b && n == 0 {
            idle_rounds += 1;
            assert!(idle_rounds < 100_000, "transfer stalled");
            p.advance();
        }
    }
}

fn pattern(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// ackclock-tcp

struct Ours {
    now: Instant,
    a: Endpoint,
    b: Endpoint,
    ca: ConnId,
    cb: ConnId,
    ab: Ring,
    ba: Ring,
    src: Vec<u8>,
    /// `send_with`/`recv_with` (default) or `send`/`recv_discard` (`ACKCLOCK_BULK_API=copy`).
    in_place: bool,
}

/// Sends everything `ep` wants to send now, straight into free slots of `tx`.
fn ours_egress(ep: &mut Endpoint, now: Instant, tx: &mut Ring) -> bool {
    let mut sent = false;
    while let Some(slot) = tx.slot_mut() {
        match ep.poll_transmit(now, slot) {
            Some(t) => {
                tx.push(t.len);
                sent = true;
            }
            None => break,
        }
    }
    sent
}

/// Every packet on `rx`, one at a time, each followed by the output it provokes.
fn ours_ingress(ep: &mut Endpoint, now: Instant, rx: &mut Ring, tx: &mut Ring) -> bool {
    let mut moved = false;
    while let Some(p) = rx.front() {
        ep.handle_packet(now, p);
        rx.pop();
        moved = true;
        ours_egress(ep, now, tx);
    }
    moved
}

impl Ours {
    fn new() -> Self {
        let base = match std::env::var("ACKCLOCK_BULK_TCP").as_deref() {
            Ok("sack") => TcpConfig::sack(),
            Ok("sack-rack-tlp") => TcpConfig {
                loss_detection: LossDetection::RackTlp,
                ..TcpConfig::sack()
            },
            Ok("sack-bbr") => TcpConfig {
                loss_detection: LossDetection::RackTlp,
                congestion: CongestionAlgorithm::Bbr(BbrConfig::default()),
                ..TcpConfig::sack()
            },
            Ok("sack-paced") => TcpConfig {
                pacing: Pacing::Linux,
                ..TcpConfig::sack()
            },
            Ok(other) => {
                panic!(
                    "ACKCLOCK_BULK_TCP is sack, sack-rack-tlp, sack-bbr or sack-paced, not {other}"
                )
            }
            Err(_) => TcpConfig::newreno(),
        };
        let cfg = TcpConfig {
            mss: 1460,
            send_buffer_bytes: BUF_BYTES,
            recv_buffer_bytes: BUF_BYTES,
            window_scale: true,
            ..base
        };
        let mut a = Endpoint::new(EndpointConfig::new(A_ADDR, [1; 16]));
        let mut b = Endpoint::new(EndpointConfig::new(B_ADDR, [2; 16]));
        let now = Instant::from_nanos(1_000_000_000);
        b.listen(PORT, cfg.clone(), 4).unwrap();
        let ca = a
            .connect(now, SocketAddrV4::new(B_ADDR, PORT), cfg)
            .unwrap();
        let (mut ab, mut ba) = (Ring::new(), Ring::new());
        let mut cb = None;
        for _ in 0..100 {
            ours_egress(&mut a, now, &mut ab);
            ours_ingress(&mut b, now, &mut ab, &mut ba);
            ours_ingress(&mut a, now, &mut ba, &mut ab);
            cb = cb.or_else(|| b.accept(PORT));
            if cb.is_some() && a.conn(ca).unwrap().is_established() {
                break;
            }
        }
        let cb = cb.expect("handshake");
        assert!(b.conn(cb).unwrap().is_established());
        Ours {
            now,
            a,
            b,
            ca,
            cb,
            ab,
            ba,
            src: pattern(BUF_BYTES),
            in_place: std::env::var("ACKCLOCK_BULK_API").map_or(true, |v| v != "copy"),
        }
    }
}

impl Pair for Ours {
    fn turn_a(&mut self) -> bool {
        let mut moved = ours_ingress(&mut self.a, self.now, &mut self.ba, &mut self.ab);
        let c = self.a.conn_mut(self.ca).unwrap();
        if self.in_place {
            // The application writes its bytes straight into the send ring.
            let src = &self.src;
            while c
                .send_with(|buf| {
                    let n = buf.len().min(src.len());
                    buf[..n].copy_from_slice(&src[..n]);
                    (n, n)
                })
                .unwrap()
                > 0
            {}
        } else {
            loop {
                let room = c.send_capacity().min(self.src.len());
                if room == 0 {
                    break;
                }
                c.send(&self.src[..room]).unwrap();
            }
        }
        moved |= ours_egress(&mut self.a, self.now, &mut self.ab);
        moved
    }

    fn turn_b(&mut self) -> (bool, u64) {
        let mut moved = ours_ingress(&mut self.b, self.now, &mut self.ab, &mut self.ba);
        let c = self.b.conn_mut(self.cb).unwrap();
        let n = if self.in_place {
            // The application is lent the ring in place and consumes everything.
            let mut n = 0u64;
            while let Ok(got) = c.recv_with(|d| (d.len(), d.len())) {
                if got == 0 {
                    break;
                }
                n += got as u64;
            }
            n
        } else {
            c.recv_discard(usize::MAX) as u64
        };
        moved |= ours_egress(&mut self.b, self.now, &mut self.ba);
        (moved, n)
    }

    fn advance(&mut self) {
        let t = [self.a.poll_timeout(), self.b.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
            .expect("stalled with no timer");
        self.now = self.now.max(t);
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
    }

    fn counts(&self) -> Counts {
        counts(&self.ab, &self.ba)
    }

    fn virtual_nanos(&self) -> u64 {
        self.now.as_nanos()
    }

    fn describe(&self) -> String {
        let a = self.a.conn(self.ca).unwrap().stats();
        let b = self.b.conn(self.cb).unwrap().stats();
        format!(
            "A: hp_ack_hits {} hp_misses {} retransmitted_segs {} cwnd {}; \
             B: hp_data_hits {} hp_misses {} bad_checksum {}",
            a.hp_ack_hits,
            a.hp_misses,
            a.retransmitted_segs,
            a.cwnd_bytes,
            b.hp_data_hits,
            b.hp_misses,
            b.bad_checksum
        )
    }
}

// ---------------------------------------------------------------------------------------
// smoltcp

mod smol {
    use core::net::Ipv4Addr;

    use super::{counts, pattern, Counts, Pair, Ring, A_ADDR, BUF_BYTES, B_ADDR, MTU, PORT};
    use smoltcp::iface::{
        Config, Interface, PollIngressSingleResult, PollResult, SocketHandle, SocketSet,
    };
    use smoltcp::phy::{self, Device, DeviceCapabilities, Medium};
    use smoltcp::socket::tcp;
    use smoltcp::time::Instant;
    use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr};

    /// A device of medium Ip over two rings: it receives from `rx` and sends into `tx`.
    pub struct Dev<'r> {
        rx: &'r mut Ring,
        tx: &'r mut Ring,
    }

    pub struct Rx<'a>(&'a mut Ring);
    pub struct Tx<'a>(&'a mut Ring);

    impl phy::RxToken for Rx<'_> {
        fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
            let r = f(self.0.front().expect("receive checked"));
            self.0.pop();
            r
        }
    }

    impl phy::TxToken for Tx<'_> {
        fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
            let slot = self.0.slot_mut().expect("transmit checked");
            let r = f(&mut slot[..len]);
            self.0.push(len);
            r
        }
    }

    impl Device for Dev<'_> {
        type RxToken<'a>
            = Rx<'a>
        where
            Self: 'a;
        type TxToken<'a>
            = Tx<'a>
        where
            Self: 'a;

        fn receive(&mut self, _: Instant) -> Option<(Rx<'_>, Tx<'_>)> {
            if self.rx.is_empty() || self.tx.is_full() {
                return None;
            }
            Some((Rx(&mut *self.rx), Tx(&mut *self.tx)))
        }

        fn transmit(&mut self, _: Instant) -> Option<Tx<'_>> {
            if self.tx.is_full() {
                return None;
            }
            Some(Tx(&mut *self.tx))
        }

        fn capabilities(&self) -> DeviceCapabilities {
            // Default checksum capabilities: smoltcp computes and verifies every checksum.
            let mut caps = DeviceCapabilities::default();
            caps.medium = Medium::Ip;
            caps.max_transmission_unit = MTU;
            caps
        }
    }

    struct Host {
        iface: Interface,
        sockets: SocketSet<'static>,
        handle: SocketHandle,
    }

    impl Host {
        fn new(addr: Ipv4Addr, rx: &mut Ring, tx: &mut Ring, now: Instant) -> Self {
            let mut dev = Dev { rx, tx };
            let mut config = Config::new(HardwareAddress::Ip);
            config.random_seed = u64::from(addr.octets()[3]);
            let mut iface = Interface::new(config, &mut dev, now);
            iface.update_ip_addrs(|a| {
                a.push(IpCidr::new(IpAddress::Ipv4(addr), 24)).unwrap();
            });
            let socket = tcp::Socket::new(
                tcp::SocketBuffer::new(vec![0u8; BUF_BYTES]),
                tcp::SocketBuffer::new(vec![0u8; BUF_BYTES]),
            );
            let mut sockets = SocketSet::new(Vec::new());
            let handle = sockets.add(socket);
            Host {
                iface,
                sockets,
                handle,
            }
        }

        fn socket(&mut self) -> &mut tcp::Socket<'static> {
            self.sockets.get_mut::<tcp::Socket>(self.handle)
        }

        fn egress(&mut self, now: Instant, dev: &mut Dev<'_>) -> bool {
            let mut sent = false;
            while self.iface.poll_egress(now, dev, &mut self.sockets) != PollResult::None {
                sent = true;
            }
            sent
        }

        /// Every packet on the device's rx ring, one at a time, each followed by the output
        /// it provokes.
        fn ingress(&mut self, now: Instant, dev: &mut Dev<'_>) -> bool {
            let mut moved = false;
            while self.iface.poll_ingress_single(now, dev, &mut self.sockets)
                != PollIngressSingleResult::None
            {
                moved = true;
                self.egress(now, dev);
            }
            debug_assert!(dev.rx.is_empty());
            moved
        }
    }

    pub struct Smol {
        now_us: i64,
        a: Host,
        b: Host,
        ab: Ring,
        ba: Ring,
        src: Vec<u8>,
    }

    impl Smol {
        pub fn new() -> Self {
            let (mut ab, mut ba) = (Ring::new(), Ring::new());
            let now_us = 1_000_000;
            let now = Instant::from_micros(now_us);
            let mut a = Host::new(A_ADDR, &mut ba, &mut ab, now);
            let mut b = Host::new(B_ADDR, &mut ab, &mut ba, now);
            b.socket().listen(PORT).unwrap();
            let cx = a.iface.context();
            a.sockets
                .get_mut::<tcp::Socket>(a.handle)
                .connect(cx, (B_ADDR, PORT), 49152)
                .unwrap();
            let mut s = Smol {
                now_us,
                a,
                b,
                ab,
                ba,
                src: pattern(BUF_BYTES),
            };
            for _ in 0..100 {
                s.turn_a();
                s.turn_b();
                if s.a.socket().state() == tcp::State::Established
                    && s.b.socket().state() == tcp::State::Established
                {
                    return s;
                }
            }
            panic!("smoltcp handshake did not complete");
        }

        fn now(&self) -> Instant {
            Instant::from_micros(self.now_us)
        }
    }

    impl Pair for Smol {
        fn turn_a(&mut self) -> bool {
            let now = self.now();
            let mut dev = Dev {
                rx: &mut self.ba,
                tx: &mut self.ab,
            };
            let mut moved = self.a.ingress(now, &mut dev);
            let s = self.a.socket();
            while s.can_send() {
                if s.send_slice(&self.src).unwrap() == 0 {
                    break;
                }
            }
            moved |= self.a.egress(now, &mut dev);
            moved
        }

        fn turn_b(&mut self) -> (bool, u64) {
            let now = self.now();
            let mut dev = Dev {
                rx: &mut self.ab,
                tx: &mut self.ba,
            };
            let mut moved = self.b.ingress(now, &mut dev);
            let s = self.b.socket();
            let mut n = 0u64;
            while s.can_recv() {
                // Discard without copying (the ring may wrap: then twice).
                let got = s.recv(|buf| (buf.len(), buf.len())).unwrap();
                if got == 0 {
                    break;
                }
                n += got as u64;
            }
            moved |= self.b.egress(now, &mut dev);
            (moved, n)
        }

        fn advance(&mut self) {
            let now = self.now();
            let t = [
                self.a.iface.poll_at(now, &self.a.sockets),
                self.b.iface.poll_at(now, &self.b.sockets),
            ]
            .into_iter()
            .flatten()
            .min()
            .expect("stalled with no timer");
            self.now_us = if t > now {
                t.total_micros()
            } else {
                self.now_us + 1000
            };
        }

        fn counts(&self) -> Counts {
            counts(&self.ab, &self.ba)
        }

        fn virtual_nanos(&self) -> u64 {
            self.now_us as u64 * 1000
        }

        fn describe(&self) -> String {
            let a = self.a.sockets.get::<tcp::Socket>(self.a.handle);
            let b = self.b.sockets.get::<tcp::Socket>(self.b.handle);
            format!(
                "A: {} send queue {}; B: {} recv queue {}",
                a.state(),
                a.send_queue(),
                b.state(),
                b.recv_queue()
            )
        }
    }
}

// ---------------------------------------------------------------------------------------
// The copy floor: what any stack pays in this shape with checksum-and-copy, and nothing else

/// Moves the same bytes through the same buffers with no protocol at all: the application
/// writes 256 KiB into a send ring (memcpy), each 1460-byte piece is copied and summed into
/// a wire slot behind a 40-byte header stub (the sender's checksum-and-copy), then copied
/// and summed into a receive ring (the receiver's). Three passes over the data: the least
/// our engine's design can do per segment. No ACKs.
struct Floor {
    src: Vec<u8>,
    send: Vec<u8>,
    recv: Vec<u8>,
    ab: Ring,
    ba: Ring,
    acc: u64,
}

impl Floor {
    fn new() -> Self {
        Floor {
            src: pattern(BUF_BYTES),
            send: vec![0u8; BUF_BYTES],
            recv: vec![0u8; BUF_BYTES],
            ab: Ring::new(),
            ba: Ring::new(),
            acc: 0,
        }
    }
}

impl Pair for Floor {
    fn turn_a(&mut self) -> bool {
        if !self.ab.is_empty() {
            return false;
        }
        self.send.copy_from_slice(&self.src);
        for off in (0..BUF_BYTES).step_by(1460) {
            let n = (BUF_BYTES - off).min(1460);
            let slot = self.ab.slot_mut().expect("ring holds a window");
            slot[0] = 0x45;
            slot[32] = 0x50;
            let sum = checksum::copy_and_sum(&mut slot[40..40 + n], &self.send[off..off + n]);
            self.acc = self.acc.wrapping_add(u64::from(sum));
            self.ab.push(40 + n);
        }
        true
    }

    fn turn_b(&mut self) -> (bool, u64) {
        let mut off = 0;
        while let Some(p) = self.ab.front() {
            let data = &p[40..];
            let sum = checksum::copy_and_sum(&mut self.recv[off..], data);
            self.acc = self.acc.wrapping_add(u64::from(sum));
            off += data.len();
            self.ab.pop();
        }
        (off > 0, off as u64)
    }

    fn advance(&mut self) {}

    fn counts(&self) -> Counts {
        counts(&self.ab, &self.ba)
    }

    fn virtual_nanos(&self) -> u64 {
        0
    }

    fn describe(&self) -> String {
        format!("(sum of sums {:#x})", self.acc)
    }
}

// ---------------------------------------------------------------------------------------
// Criterion

struct Record {
    name: &'static str,
    /// Wall time of each timed transfer.
    times: Vec<Duration>,
    /// Time on the CPU of each timed transfer (when the kernel tells it).
    cpu_times: Vec<Duration>,
    /// Counts and virtual time of one timed transfer.
    per_transfer: Counts,
    virtual_ns: u64,
}

thread_local! {
    static RECORDS: RefCell<Vec<Record>> = const { RefCell::new(Vec::new()) };
}

fn bench_pair<P: Pair>(c: &mut Criterion, name: &'static str, p: &mut P) {
    let bytes = transfer_bytes();
    // One untimed transfer to record the packet counts and virtual time of a transfer.
    let (c0, v0) = (p.counts(), p.virtual_nanos());
    transfer(p, bytes);
    let (c1, v1) = (p.counts(), p.virtual_nanos());
    let per_transfer = Counts {
        data_segments: c1.data_segments - c0.data_segments,
        packets_ab: c1.packets_ab - c0.packets_ab,
        packets_ba: c1.packets_ba - c0.packets_ba,
    };
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let mut group = c.benchmark_group("bulk");
    group
        .throughput(Throughput::Bytes(bytes))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(10));
    group.bench_function(name, |bencher| {
        bencher.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let c0 = thread_cpu_ns();
                let t0 = std::time::Instant::now();
                transfer(p, bytes);
                let dt = t0.elapsed();
                if let (Some(c0), Some(c1)) = (c0, thread_cpu_ns()) {
                    cpu_times.push(Duration::from_nanos(c1 - c0));
                }
                times.push(dt);
                total += dt;
            }
            total
        })
    });
    group.finish();
    println!("{name}: {}", p.describe());
    RECORDS.with(|r| {
        r.borrow_mut().push(Record {
            name,
            times,
            cpu_times,
            per_transfer,
            virtual_ns: v1 - v0,
        })
    });
}

/// This thread's time on the CPU in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`), so a transfer
/// during which another process held the core can be told apart from a slow one.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_ns() -> Option<u64> {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec of the platform's layout (64-bit Linux).
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_ns() -> Option<u64> {
    None
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2
    }
}

fn summary() {
    let bytes = transfer_bytes();
    let mut rows = Vec::new();
    RECORDS.with(|r| {
        for rec in r.borrow_mut().iter_mut() {
            if rec.times.is_empty() {
                continue;
            }
            let m = median(&mut rec.times).as_secs_f64();
            let gbps = bytes as f64 * 8.0 / m / 1e9;
            let segs = rec.per_transfer.data_segments as f64 / m;
            println!(
                "summary {:<10} wall: {} MiB in {:.2} ms (median of {} transfers): {:.2} Gbit/s, \
                 {:.3} M data segments/s",
                rec.name,
                bytes >> 20,
                m * 1e3,
                rec.times.len(),
                gbps,
                segs / 1e6,
            );
            let mut cpu_gbps = None;
            if !rec.cpu_times.is_empty() {
                let c = median(&mut rec.cpu_times).as_secs_f64();
                let g = bytes as f64 * 8.0 / c / 1e9;
                println!(
                    "summary {:<10} cpu:  {} MiB in {:.2} ms on the CPU (median): {:.2} Gbit/s, \
                     {:.3} M data segments/s",
                    rec.name,
                    bytes >> 20,
                    c * 1e3,
                    g,
                    rec.per_transfer.data_segments as f64 / c / 1e6,
                );
                cpu_gbps = Some(g);
            }
            println!(
                "summary {:<10} per transfer: {} data segments, {} packets A->B, {} packets \
                 B->A; virtual time advanced {} ns",
                rec.name,
                rec.per_transfer.data_segments,
                rec.per_transfer.packets_ab,
                rec.per_transfer.packets_ba,
                rec.virtual_ns,
            );
            rows.push((rec.name, gbps, cpu_gbps));
        }
    });
    let get = |n: &str| rows.iter().find(|r| r.0 == n).copied();
    if let (Some(o), Some(s)) = (get("ackclock"), get("smoltcp")) {
        print!(
            "summary ratio ackclock/smoltcp goodput: {:.2}x (wall)",
            o.1 / s.1
        );
        if let (Some(oc), Some(sc)) = (o.2, s.2) {
            print!(", {:.2}x (cpu)", oc / sc);
        }
        println!();
    }
}

/// Profile mode (`ACKCLOCK_BULK_PROFILE=ackclock|smoltcp|copy-floor`): no criterion; warm up, then run
/// exactly `ACKCLOCK_BULK_TRANSFERS` (default 4) transfers inside [`profiled_transfers`], the
/// function to give callgrind's `--toggle-collect`, and print the packet counts to divide by.
fn profile_mode(which: &str) {
    let n: u64 = std::env::var("ACKCLOCK_BULK_TRANSFERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    fn run<P: Pair>(make: impl FnOnce() -> P, n: u64) -> (Counts, String) {
        let mut p = warmed_up(make);
        let c = profiled_transfers(&mut p, n);
        (c, p.describe())
    }
    let (c, description) = match which {
        "ackclock" => run(Ours::new, n),
        "smoltcp" => run(smol::Smol::new, n),
        "copy-floor" => run(Floor::new, n),
        _ => panic!("ACKCLOCK_BULK_PROFILE is ackclock, smoltcp or copy-floor"),
    };
    println!(
        "profile {which}: {n} transfers of {} MiB: {} data segments, {} packets A->B, {} packets B->A",
        transfer_bytes() >> 20,
        c.data_segments,
        c.packets_ab,
        c.packets_ba
    );
    println!("profile {which}: {description}");
}

fn warmed_up<P: Pair>(make: impl FnOnce() -> P) -> P {
    let mut p = make();
    transfer(&mut p, WARMUP_BYTES);
    p
}

#[inline(never)]
fn profiled_transfers(p: &mut impl Pair, n: u64) -> Counts {
    let c0 = p.counts();
    for _ in 0..n {
        transfer(p, transfer_bytes());
    }
    let c1 = p.counts();
    Counts {
        data_segments: c1.data_segments - c0.data_segments,
        packets_ab: c1.packets_ab - c0.packets_ab,
        packets_ba: c1.packets_ba - c0.packets_ba,
    }
}

fn benches(c: &mut Criterion) {
    if let Ok(which) = std::env::var("ACKCLOCK_BULK_PROFILE") {
        profile_mode(&which);
        return;
    }
    let mut ours = warmed_up(Ours::new);
    let mut smol = warmed_up(smol::Smol::new);
    bench_pair(c, "ackclock", &mut ours);
    bench_pair(c, "smoltcp", &mut smol);
    bench_pair(c, "copy-floor", &mut warmed_up(Floor::new));
    summary();
    paired(&mut ours, &mut smol);
}

/// Alternates one transfer of each stack, so that both see the same machine (this one is
/// shared and its speed drifts), and reports the median of the per-pair ratios of wall and
/// CPU time. Only when neither stack was filtered out on the command line.
fn paired(ours: &mut Ours, smol: &mut smol::Smol) {
    let ran = |n: &str| {
        RECORDS.with(|r| {
            r.borrow()
                .iter()
                .any(|x| x.name == n && !x.times.is_empty())
        })
    };
    if !(ran("ackclock") && ran("smoltcp")) {
        return;
    }
    let bytes = transfer_bytes();
    let mut wall = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..PAIRS {
        let (wo, co) = timed(|| transfer(ours, bytes));
        let (ws, cs) = timed(|| transfer(smol, bytes));
        wall.push(ws / wo);
        if let (Some(co), Some(cs)) = (co, cs) {
            cpu.push(cs / co);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    print!(
        "summary paired ratio ackclock/smoltcp goodput over {PAIRS} alternating transfers: \
         {:.2}x (wall)",
        med(&mut wall).unwrap_or(f64::NAN)
    );
    if let Some(c) = med(&mut cpu) {
        print!(", {c:.2}x (cpu)");
    }
    println!();
}

/// Wall and CPU seconds `f` takes.
fn timed(f: impl FnOnce()) -> (f64, Option<f64>) {
    let c0 = thread_cpu_ns();
    let t0 = std::time::Instant::now();
    f();
    let w = t0.elapsed().as_secs_f64();
    let c = match (c0, thread_cpu_ns()) {
        (Some(a), Some(b)) => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    (w, c)
}

/// Alternating transfer pairs in [`paired`] (odd, so the median is one pair).
const PAIRS: usize = 31;

criterion_group!(bulk, benches);
criterion_main!(bulk);
