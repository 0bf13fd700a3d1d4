//! What a connection costs when there are many: memory per idle established connection,
//! and the time of one request/response round trip on one connection while N others sit
//! idle, for N = 1,000 to 1,000,000 (BENCHMARKS.md, "Many connections").
//!
//! Shape: a client endpoint and a server endpoint, joined directly (packets handed over in
//! memory, no loss, no delay). N connections are opened and established, each with default
//! buffers and no data. Then rounds: one of 1,000 busy connections spread over the N (a
//! different one each round, so caches cannot hide a scan) sends 100 bytes, the server reads
//! them and answers 100 bytes, the client reads them; every endpoint call the exchange needs
//! is made (handle_packet, poll_transmit until empty, poll_timeout, handle_timeout when due),
//! as a driver would. A first pass over the busy connections allocates their buffers (a
//! connection's first bytes cost the zeroing of its 2 x 128 KiB of rings, about 30 us);
//! then rounds are timed with wall time in batches; the median batch is reported, per round.
//!
//! Two figures per N: "fresh", measured right after the N connections were made, and
//! "idle 2 s", after two seconds with nothing to do. The endpoint's timer heap lets a
//! deadline that moved later or went away stay in the heap until its time comes (so that the
//! per-segment path never pays for removing it): right after a million handshakes, a million
//! SYN retransmission timers that were cancelled are still there, a deeper heap for the busy
//! connections to work in, until they come up a second later and are dropped.
//!
//! `cargo bench -p ackclock-tcp --bench scale` (prints a table; no criterion: the set-up of a
//! million connections dominates a criterion run). `ACKCLOCK_SCALE_MAX=100000` stops
//! earlier.

use ackclock_tcp::{ConnId, Endpoint, EndpointConfig, TcpConfig};
use ackclock_wire::{Duration, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const CLIENT: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

struct World {
    now: Instant,
    client: Endpoint,
    server: Endpoint,
    buf: Vec<u8>,
}

impl World {
    /// Delivers everything both endpoints want to send, and runs their due timers, until
    /// quiet. Returns the packets moved.
    fn settle(&mut self) -> u64 {
        let mut moved = 0;
        loop {
            let mut any = false;
            while let Some(t) = self.client.poll_transmit(self.now, &mut self.buf) {
                self.server.handle_packet(self.now, &self.buf[..t.len]);
                any = true;
                moved += 1;
            }
            while let Some(t) = self.server.poll_transmit(self.now, &mut self.buf) {
                self.client.handle_packet(self.now, &self.buf[..t.len]);
                any = true;
                moved += 1;
            }
            for ep in [&mut self.client, &mut self.server] {
                if ep.poll_timeout().is_some_and(|t| t <= self.now) {
                    ep.handle_timeout(self.now);
                    any = true;
                }
            }
            if !any {
                return moved;
            }
        }
    }
}

fn main() {
    let max: usize = std::env::var("ACKCLOCK_SCALE_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    // cargo bench passes --bench; nothing else is expected.
    println!("connections  bytes/idle conn  round trip, fresh  round trip, idle 2 s   (medians of 20 batches of 1000)");
    let cfg = TcpConfig {
        // Replies go out at once: the round trip measures the endpoint, not the delayed-ACK
        // timer.
        nagle: false,
        ..TcpConfig::newreno()
    };
    for &n in [1_000usize, 10_000, 100_000, 1_000_000]
        .iter()
        .filter(|&&n| n <= max)
    {
        let before = LIVE.load(Ordering::Relaxed);
        let mut w = World {
            now: Instant::ZERO + Duration::from_secs(1),
            client: Endpoint::new(EndpointConfig {
                ephemeral_ports: (1024, 65535),
                ..EndpointConfig::new(CLIENT, [1; 16])
            }),
            server: Endpoint::new(EndpointConfig::new(SERVER, [2; 16])),
            buf: vec![0u8; 2048],
        };
        // Enough listening ports that 64,512 ephemeral ports reach n connections.
        let ports = n.div_ceil(60_000);
        for p in 0..ports {
            w.server
                .listen(80 + p as u16, cfg.clone(), 1 << 20)
                .unwrap();
        }
        let mut ids: Vec<(ConnId, ConnId)> = Vec::with_capacity(n);
        for i in 0..n {
            let port = 80 + (i % ports) as u16;
            let c = w
                .client
                .connect(w.now, SocketAddrV4::new(SERVER, port), cfg.clone())
                .expect("a free port");
            w.settle();
            let s = w.server.accept(port).expect("established");
            ids.push((c, s));
        }
        let bytes = LIVE.load(Ordering::Relaxed) - before - ids.capacity() * 16;
        let per_conn = bytes as f64 / (2 * n) as f64;
        let fresh = round_trips(&mut w, &ids);
        // Two seconds of nothing: every cancelled handshake timer comes up and is dropped.
        w.now += Duration::from_secs(2);
        w.settle();
        let idle = round_trips(&mut w, &ids);
        println!("{n:>11}  {per_conn:>15.0}  {fresh:>14.2} us  {idle:>17.2} us");
    }
}

/// The median time of a request/response round trip, in microseconds, over 1,000 busy
/// connections spread across `ids` (a first batch warms them up: their rings are allocated).
fn round_trips(w: &mut World, ids: &[(ConnId, ConnId)]) -> f64 {
    let mut batches = Vec::new();
    let mut k = 0usize;
    let mut rbuf = [0u8; 256];
    let step = ids.len() / 1000;
    for batch in 0..21 {
        let t0 = std::time::Instant::now();
        for _ in 0..1000 {
            // The next of the busy connections, far from the last one.
            k = (k + 7) % 1000;
            let (c, s) = ids[k * step];
            w.client.conn_mut(c).unwrap().send(&[1u8; 100]).unwrap();
            w.settle();
            let got = w.server.conn_mut(s).unwrap().recv(&mut rbuf).unwrap_or(0);
            w.server.conn_mut(s).unwrap().send(&rbuf[..got]).unwrap();
            w.settle();
            let back = w.client.conn_mut(c).unwrap().recv(&mut rbuf).unwrap_or(0);
            assert_eq!(back, 100);
            w.now += Duration::from_micros(10);
        }
        if batch > 0 {
            batches.push(t0.elapsed().as_nanos() as f64 / 1000.0);
        }
    }
    batches.sort_by(|a, b| a.total_cmp(b));
    batches[batches.len() / 2] / 1000.0
}
