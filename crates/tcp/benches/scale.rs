//! What a connection costs when there are many: memory per idle established connection
//! (the bytes asked of the allocator, "B/conn", and the growth of the process's resident
//! memory while the connections were made, "resident"),
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
//! connection's first bytes cost the zeroing of its 2 x 128 KiB of rings, about 30 us).
//!
//! This VM's speed drifts by 2x and more over seconds (neighbours share its caches and
//! memory bus), and a million connections live in the memory system, so the sizes are
//! measured in turns: all the worlds are built first, then in each of 101 epochs every size
//! runs one unmeasured batch of 1,000 round trips (its busy connections come back into the
//! caches) and one measured batch of 2,000. A size's ratio is the median over epochs of its
//! time divided by the smallest size's time in the same epoch; the best (least disturbed)
//! epoch of each size is printed too.
//!
//! Two figures per N: "fresh", measured right after the N connections were made, and
//! "idle 2 s", after two seconds with nothing to do. The endpoint's timer heap lets a
//! deadline that moved later or went away stay in the heap until its time comes (so that the
//! per-segment path never pays for removing it): right after a million handshakes, a million
//! SYN retransmission timers that were cancelled are still there, a deeper heap for the busy
//! connections to work in, until they come up a second later and are dropped.
//!
//! `cargo bench -p ackclock-tcp --bench scale` (prints a table; no criterion: the set-up of a
//! million connections dominates a criterion run). `ACKCLOCK_SCALE_SIZES=1000,100000`
//! chooses the sizes (multiples of 1,000), `ACKCLOCK_SCALE_EPOCHS=N` the epochs,
//! `ACKCLOCK_SCALE_HUGE_PAGES=0` turns `EndpointConfig::huge_pages` off (to compare the
//! endpoint's tables in huge pages and in 4 KiB pages with one binary).

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
    let sizes: Vec<usize> = match std::env::var("ACKCLOCK_SCALE_SIZES") {
        Ok(v) => v
            .split(',')
            .map(|n| {
                n.trim()
                    .replace('_', "")
                    .parse()
                    .ok()
                    .filter(|&n: &usize| n >= 1000 && n % 1000 == 0)
                    .unwrap_or_else(|| {
                        panic!("ACKCLOCK_SCALE_SIZES: {n:?} is not a multiple of 1000")
                    })
            })
            .collect(),
        Err(_) => vec![1_000, 10_000, 100_000, 1_000_000],
    };
    let epochs: usize = std::env::var("ACKCLOCK_SCALE_EPOCHS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(101)
        .max(1);
    let huge_pages = std::env::var("ACKCLOCK_SCALE_HUGE_PAGES").map_or(true, |v| v != "0");
    // cargo bench passes --bench; nothing else is expected.
    let cfg = TcpConfig {
        // Replies go out at once: the round trip measures the endpoint, not the delayed-ACK
        // timer.
        nagle: false,
        ..TcpConfig::newreno()
    };
    let mut worlds = Vec::new();
    let mut bytes_per_conn = Vec::new();
    for &n in &sizes {
        let before = LIVE.load(Ordering::Relaxed);
        let rss_before = resident_bytes();
        let w = build(n, &cfg, huge_pages);
        let ids = w.ids.capacity() * 16;
        let bytes = LIVE.load(Ordering::Relaxed) - before - ids;
        let resident = resident_bytes().zip(rss_before).map(|(after, before)| {
            (after.saturating_sub(before + ids as u64)) as f64 / (2 * n) as f64
        });
        bytes_per_conn.push((bytes as f64 / (2 * n) as f64, resident));
        worlds.push(w);
    }
    for w in &mut worlds {
        // The busy connections' first bytes allocate their rings: not part of a round trip.
        round_trips(w, 1);
    }
    let fresh = epochs_of(&mut worlds, epochs);
    // Two seconds of nothing: every cancelled handshake timer comes up and is dropped.
    for w in &mut worlds {
        w.world.now += Duration::from_secs(2);
        w.world.settle();
    }
    let idle = epochs_of(&mut worlds, epochs);
    println!(
        "round trip in us: median and best of {epochs} epochs (2,000 round trips each); \
         ratio: median over epochs of (N / the first N in the same epoch), and best / best; \
         tables in huge pages: {}",
        if huge_pages { "yes" } else { "no" }
    );
    println!(
        "{:>11}  {:>9}  {:>9}  {:>21}  {:>21}  {:>21}  {:>21}",
        "connections",
        "B/conn",
        "resident",
        "fresh: median  ratio",
        "best  ratio",
        "idle 2 s: median  ratio",
        "best  ratio"
    );
    for (i, &n) in sizes.iter().enumerate() {
        let cells = |m: &[Vec<f64>]| {
            let ratio = median(m[i].iter().zip(&m[0]).map(|(a, b)| a / b).collect());
            let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
            let (b, b0) = (best(&m[i]), best(&m[0]));
            (
                format!("{:.2} us  {ratio:.2}x", median(m[i].clone())),
                format!("{b:.2} us  {:.2}x", b / b0),
            )
        };
        let (fm, fb) = cells(&fresh);
        let (im, ib) = cells(&idle);
        let (requested, resident) = bytes_per_conn[i];
        let resident = resident.map_or("-".to_string(), |r| format!("{r:.0}"));
        println!(
            "{n:>11}  {requested:>9.0}  {resident:>9}  {fm:>21}  {fb:>21}  {im:>21}  {ib:>21}"
        );
    }
}

/// The process's resident memory (Linux: `VmRSS` of /proc/self/status), `None` elsewhere.
/// Beside the bytes the allocator was asked for, it counts what the allocator adds (its
/// headers, alignment slack) and what the kernel backs (huge pages whole).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One endpoint pair with `n` established, idle connections, and the pairs of ids.
struct Sized {
    world: World,
    ids: Vec<(ConnId, ConnId)>,
    k: usize,
}

fn build(n: usize, cfg: &TcpConfig, huge_pages: bool) -> Sized {
    let mut w = World {
        now: Instant::ZERO + Duration::from_secs(1),
        client: Endpoint::new(EndpointConfig {
            ephemeral_ports: (1024, 65535),
            huge_pages,
            ..EndpointConfig::new(CLIENT, [1; 16])
        }),
        server: Endpoint::new(EndpointConfig {
            huge_pages,
            ..EndpointConfig::new(SERVER, [2; 16])
        }),
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
    Sized {
        world: w,
        ids,
        k: 0,
    }
}

/// Per world, one time per epoch (us per round trip). The machine's noise comes and goes
/// over seconds (it is a VM beside others), so the sizes take turns: every epoch measures
/// each size once, and each size's figure is compared with the 1,000-connection figure of
/// the same epoch. Within its turn a size first runs one batch unmeasured, so that its own
/// busy connections are back in the caches as they would be on a machine serving only it.
fn epochs_of(worlds: &mut [Sized], epochs: usize) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); worlds.len()];
    for _ in 0..epochs {
        for (i, w) in worlds.iter_mut().enumerate() {
            round_trips(w, 1);
            out[i].push(round_trips(w, 2));
        }
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// The time of a request/response round trip in microseconds, averaged over `batches`
/// batches of 1,000, each visiting every one of 1,000 busy connections spread across the
/// world's connections once, far from the last one visited.
fn round_trips(s: &mut Sized, batches: usize) -> f64 {
    let Sized { world: w, ids, k } = s;
    let mut rbuf = [0u8; 256];
    let step = ids.len() / 1000;
    let t0 = std::time::Instant::now();
    for _ in 0..batches * 1000 {
        *k = (*k + 7) % 1000;
        let (c, srv) = ids[*k * step];
        w.client.conn_mut(c).unwrap().send(&[1u8; 100]).unwrap();
        w.settle();
        let got = w.server.conn_mut(srv).unwrap().recv(&mut rbuf).unwrap_or(0);
        w.server.conn_mut(srv).unwrap().send(&rbuf[..got]).unwrap();
        w.settle();
        let back = w.client.conn_mut(c).unwrap().recv(&mut rbuf).unwrap_or(0);
        assert_eq!(back, 100);
        w.now += Duration::from_micros(10);
    }
    t0.elapsed().as_nanos() as f64 / (batches * 1000) as f64 / 1000.0
}
