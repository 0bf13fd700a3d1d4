//! A two-host path for the datagram applications: each direction a rate-limited FIFO of
//! bounded length, then a fixed delay, with random loss; virtual time driven by the apps'
//! own wake-ups. Small enough to read, so the tests can state exact expectations.

use ackclock_dgram::DatagramSocket;
use ackclock_wire::{Duration, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;

pub const CLIENT: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 1), 40000);
pub const SERVER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 2), 2049);

/// One direction of the path.
pub struct Direction {
    pub rate_bps: f64,
    pub delay: Duration,
    pub limit: usize,
    pub loss: f64,
    /// Packets waiting or being serialized: (bytes, from, payload).
    queue: VecDeque<(SocketAddrV4, Vec<u8>)>,
    /// When the head of the queue finishes serializing.
    busy_until: Option<Instant>,
    /// In flight after the queue: (arrival, from, payload).
    flight: VecDeque<(Instant, SocketAddrV4, Vec<u8>)>,
    pub dropped: u64,
    pub lost: u64,
    pub delivered: u64,
    pub bytes: u64,
}

impl Direction {
    pub fn new(rate_bps: f64, delay: Duration, limit: usize, loss: f64) -> Self {
        Direction {
            rate_bps,
            delay,
            limit,
            loss,
            queue: VecDeque::new(),
            busy_until: None,
            flight: VecDeque::new(),
            dropped: 0,
            lost: 0,
            delivered: 0,
            bytes: 0,
        }
    }
    fn tx_time(&self, len: usize) -> Duration {
        Duration::from_secs_f64((len + 28) as f64 * 8.0 / self.rate_bps)
    }
    fn push(&mut self, now: Instant, from: SocketAddrV4, data: &[u8]) {
        if self.queue.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        if self.queue.is_empty() {
            self.busy_until = Some(now + self.tx_time(data.len()));
        }
        self.queue.push_back((from, data.to_vec()));
    }
    /// Moves what finished serializing by `now` into flight (losing some).
    fn advance(&mut self, now: Instant, rng: &mut ChaCha8Rng) {
        while let Some(t) = self.busy_until {
            if t > now {
                break;
            }
            let (from, data) = self.queue.pop_front().expect("busy means queued");
            if rng.random::<f64>() < self.loss {
                self.lost += 1;
            } else {
                self.flight.push_back((t + self.delay, from, data));
            }
            self.busy_until = self.queue.front().map(|(_, d)| t + self.tx_time(d.len()));
        }
    }
    fn next_event(&self) -> Option<Instant> {
        [self.busy_until, self.flight.front().map(|f| f.0)]
            .into_iter()
            .flatten()
            .min()
    }
}

/// A socket on one end: what it sends goes into `out`, what arrived waits in `inbox`.
pub struct End {
    inbox: VecDeque<(SocketAddrV4, Vec<u8>)>,
    out: Vec<(SocketAddrV4, Vec<u8>)>,
}

impl End {
    fn new() -> Self {
        End {
            inbox: VecDeque::new(),
            out: Vec::new(),
        }
    }
}

impl DatagramSocket for End {
    fn send_to(&mut self, dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.out.push((dst, payload.to_vec()));
        true
    }
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        let (from, data) = self.inbox.pop_front()?;
        let n = data.len().min(buf.len());
        buf[..n].copy_from_slice(&data[..n]);
        Some((data.len(), from, 0))
    }
}

/// Something that runs on one end.
pub trait Party {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant>;
}

impl Party for ackclock_dgram::rpc::RpcClient {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        ackclock_dgram::rpc::RpcClient::poll(self, now, sock)
    }
}
impl Party for ackclock_dgram::rpc::RpcServer {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        ackclock_dgram::rpc::RpcServer::poll(self, now, sock)
    }
}
impl Party for ackclock_dgram::stream::StreamSender {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        ackclock_dgram::stream::StreamSender::poll(self, now, sock)
    }
}
impl Party for ackclock_dgram::stream::StreamReceiver {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        ackclock_dgram::stream::StreamReceiver::poll(self, now, sock)
    }
}

/// The whole path with a client (`a`) and a server (`b`).
pub struct Path {
    pub forward: Direction,
    pub reverse: Direction,
    pub a: End,
    pub b: End,
    rng: ChaCha8Rng,
    /// Polls of either party, and the most polls at one instant.
    pub polls: u64,
    pub max_polls_at_one_instant: u64,
}

impl Path {
    pub fn new(forward: Direction, reverse: Direction, seed: u64) -> Self {
        Path {
            forward,
            reverse,
            a: End::new(),
            b: End::new(),
            rng: ChaCha8Rng::seed_from_u64(seed),
            polls: 0,
            max_polls_at_one_instant: 0,
        }
    }

    /// Runs both parties until `until`. Each party is polled when its wake-up comes or
    /// something arrives for it.
    pub fn run(&mut self, a: &mut dyn Party, b: &mut dyn Party, until: Instant) {
        let mut now = Instant::ZERO;
        let (mut wa, mut wb) = (Some(now), Some(now));
        let mut same_instant = 0u64;
        let mut last = None;
        while now <= until {
            if last == Some(now) {
                same_instant += 1;
                self.max_polls_at_one_instant = self.max_polls_at_one_instant.max(same_instant);
                assert!(
                    same_instant < 10_000,
                    "10,000 turns at {now:?} without time advancing (client wakes at {wa:?}, server at {wb:?}, path events at {:?} and {:?})",
                    self.forward.next_event(),
                    self.reverse.next_event()
                );
            } else {
                same_instant = 0;
            }
            last = Some(now);
            self.forward.advance(now, &mut self.rng);
            self.reverse.advance(now, &mut self.rng);
            let mut a_due = wa.is_some_and(|t| t <= now);
            let mut b_due = wb.is_some_and(|t| t <= now);
            while self.forward.flight.front().is_some_and(|f| f.0 <= now) {
                let (_, from, d) = self.forward.flight.pop_front().unwrap();
                self.forward.delivered += 1;
                self.forward.bytes += d.len() as u64;
                self.b.inbox.push_back((from, d));
                b_due = true;
            }
            while self.reverse.flight.front().is_some_and(|f| f.0 <= now) {
                let (_, from, d) = self.reverse.flight.pop_front().unwrap();
                self.reverse.delivered += 1;
                self.reverse.bytes += d.len() as u64;
                self.a.inbox.push_back((from, d));
                a_due = true;
            }
            if a_due {
                self.polls += 1;
                wa = a.poll(now, &mut self.a);
                for (_, d) in std::mem::take(&mut self.a.out) {
                    self.forward.push(now, CLIENT, &d);
                }
            }
            if b_due {
                self.polls += 1;
                wb = b.poll(now, &mut self.b);
                for (_, d) in std::mem::take(&mut self.b.out) {
                    self.reverse.push(now, SERVER, &d);
                }
            }
            let next = [wa, wb, self.forward.next_event(), self.reverse.next_event()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) => now = t.max(now),
                None => break,
            }
        }
    }
}
