//! Two endpoints in one process: A sends 1 MiB to B through an in-memory path, and B checks
//! it byte for byte.
//!
//! ```text
//! cargo run -p ackclock-tcp --example loopback [PRESET]
//! ```
//!
//! A (198.18.0.1) connects to B (198.18.0.2) on port 9 with the `TcpConfig` preset named
//! PRESET (`newreno` by default; `TcpConfig::PRESETS` lists the names). The path holds
//! each packet for a fixed one-way delay of 5 ms and loses nothing. Time is simulated: the
//! driver jumps from one event (a packet arriving, a timer) to the next, so a run costs
//! milliseconds of CPU whatever the simulated time, and repeats exactly.
//!
//! The driver follows the calling protocol of `Endpoint`: each arriving packet goes to
//! `handle_packet`, followed by the applications and a drain of `poll_transmit` until it
//! returns `None`; when `poll_timeout` passes, `handle_timeout`, then the same. Once A has
//! written everything it closes; once B reads the end of the stream it closes too. The run
//! ends when both endpoints have removed their connections (after A's TIME-WAIT), and
//! their final statistics come from `take_reaped`.
//!
//! With the default preset the first data segment is the whole initial window (one
//! segment), so B holds its ACK for the delayed-ACK time (200 ms): most of the transfer
//! time. Presets with a larger initial window (`modern`, `cubic`) do not wait.
//!
//! The program prints the simulated and wall-clock times and the segment counts. It exits
//! with status 1 if the data differs, a connection fails, or the run does not finish
//! within 600 s of simulated time.

use ackclock_tcp::{ConnId, Endpoint, EndpointConfig, RecvError, Stats, TcpConfig, TcpError};
use ackclock_wire::{Duration, Instant};
use core::net::{Ipv4Addr, SocketAddrV4};
use std::collections::VecDeque;
use std::process::ExitCode;

const A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const PORT: u16 = 9;
const SIZE: usize = 1 << 20;
const DELAY: Duration = Duration::from_millis(5);
const LIMIT: Duration = Duration::from_secs(600);

/// One direction of the path. The delay is constant, so packets arrive in the order sent.
#[derive(Default)]
struct Pipe {
    queue: VecDeque<(Instant, Vec<u8>)>,
    packets: u64,
    bytes: u64,
}

impl Pipe {
    fn next_arrival(&self) -> Option<Instant> {
        self.queue.front().map(|(t, _)| *t)
    }

    fn pop_due(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.next_arrival()? > now {
            return None;
        }
        self.queue.pop_front().map(|(_, p)| p)
    }
}

/// Both hosts, the path, and the two applications' progress.
struct World {
    now: Instant,
    a: Endpoint,
    b: Endpoint,
    ab: Pipe,
    ba: Pipe,
    /// The transmit buffer: the largest packet is the MSS plus 80 bytes.
    buf: Vec<u8>,
    data: Vec<u8>,
    ca: ConnId,
    cb: Option<ConnId>,
    sent: usize,
    a_closed: bool,
    got: Vec<u8>,
    eof_at: Option<Instant>,
    rbuf: Vec<u8>,
}

impl World {
    /// The applications: A writes what fits and closes after the last byte; B accepts,
    /// reads everything readable, and closes at the end of the stream.
    fn apps(&mut self) -> Result<(), TcpError> {
        // A connection that ended abnormally (reset, timed out) keeps its error.
        for (ep, id) in [(&self.a, Some(self.ca)), (&self.b, self.cb)] {
            if let Some(e) = id.and_then(|id| ep.conn(id)).and_then(|c| c.error()) {
                return Err(e.into());
            }
        }
        if !self.a_closed {
            // `conn` to look, `conn_mut` only to act: `conn_mut` marks the connection for
            // the next drain.
            let room = self.a.conn(self.ca).map_or(0, |c| c.send_capacity());
            if self.sent < SIZE && room > 0 {
                if let Some(c) = self.a.conn_mut(self.ca) {
                    self.sent += c.send(&self.data[self.sent..])?;
                }
            }
            if self.sent == SIZE {
                self.a.close(self.ca)?;
                self.a_closed = true;
            }
        }
        if self.cb.is_none() {
            self.cb = self.b.accept(PORT);
        }
        if let (Some(id), None) = (self.cb, self.eof_at) {
            let readable = self
                .b
                .conn(id)
                .is_some_and(|c| c.recv_available() > 0 || c.is_eof());
            if readable {
                let c = self
                    .b
                    .conn_mut(id)
                    .expect("B's connection is not released yet");
                loop {
                    match c.recv(&mut self.rbuf) {
                        Ok(0) => {
                            self.eof_at = Some(self.now);
                            self.b.close(id)?;
                            break;
                        }
                        Ok(n) => self.got.extend_from_slice(&self.rbuf[..n]),
                        // Nothing more now: the next turn reads again.
                        Err(RecvError::WouldBlock) => break,
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
        Ok(())
    }

    /// Sends what both endpoints have to send: `poll_transmit` until `None`.
    fn drain(&mut self) {
        for (ep, pipe) in [(&mut self.a, &mut self.ab), (&mut self.b, &mut self.ba)] {
            while let Some(t) = ep.poll_transmit(self.now, &mut self.buf) {
                pipe.queue
                    .push_back((self.now + DELAY, self.buf[..t.len].to_vec()));
                pipe.packets += 1;
                pipe.bytes += t.len as u64;
            }
        }
    }

    /// The time of the next event: a packet arriving or a timer.
    fn next_event(&self) -> Option<Instant> {
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

    /// Runs until both endpoints are empty or `LIMIT` passes. Returns whether they are.
    fn run(&mut self) -> Result<bool, TcpError> {
        self.apps()?;
        self.drain();
        while self.a.connections().count() + self.b.connections().count() > 0 {
            let Some(t) = self.next_event() else {
                return Ok(false);
            };
            if t > Instant::ZERO + LIMIT {
                return Ok(false);
            }
            self.now = self.now.max(t);
            // Each packet, then what it lets the applications do, then the output.
            loop {
                if let Some(p) = self.ab.pop_due(self.now) {
                    self.b.handle_packet(self.now, &p);
                } else if let Some(p) = self.ba.pop_due(self.now) {
                    self.a.handle_packet(self.now, &p);
                } else {
                    break;
                }
                self.apps()?;
                self.drain();
            }
            for ep in [&mut self.a, &mut self.b] {
                if ep.poll_timeout().is_some_and(|t| t <= self.now) {
                    ep.handle_timeout(self.now);
                }
            }
            self.apps()?;
            self.drain();
        }
        Ok(true)
    }
}

fn final_stats(ep: &mut Endpoint) -> Stats {
    ep.take_reaped()
        .into_iter()
        .map(|(_, s)| s)
        .next()
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let preset = std::env::args().nth(1).unwrap_or_else(|| "newreno".into());
    let Some(cfg) = TcpConfig::preset(&preset) else {
        eprintln!("unknown preset {preset:?}; one of {:?}", TcpConfig::PRESETS);
        return ExitCode::from(2);
    };
    // Not periodic in 256 bytes, so a misplaced segment shows.
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 7 + i / 251) as u8).collect();
    let wall = std::time::Instant::now();
    let mut a = Endpoint::new(EndpointConfig::new(A_ADDR, [1; 16]));
    let mut b = Endpoint::new(EndpointConfig::new(B_ADDR, [2; 16]));
    b.listen(PORT, cfg.clone(), 1)
        .expect("a new endpoint has no listener");
    let buf = vec![0u8; usize::from(cfg.mss) + 80];
    let ca = a
        .connect(Instant::ZERO, SocketAddrV4::new(B_ADDR, PORT), cfg)
        .expect("a new endpoint has free ports");
    let mut w = World {
        now: Instant::ZERO,
        a,
        b,
        ab: Pipe::default(),
        ba: Pipe::default(),
        buf,
        data,
        ca,
        cb: None,
        sent: 0,
        a_closed: false,
        got: Vec::with_capacity(SIZE),
        eof_at: None,
        rbuf: vec![0u8; 64 * 1024],
    };
    let finished = match w.run() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("connection failed at {:?}: {e}", w.now);
            return ExitCode::FAILURE;
        }
    };
    let wall = wall.elapsed();
    let (sa, sb) = (final_stats(&mut w.a), final_stats(&mut w.b));

    println!("{preset}: {SIZE} bytes from {A_ADDR} to {B_ADDR}, one-way delay {DELAY:?}, no loss");
    if let Some(t) = w.eof_at {
        let secs = (t - Instant::ZERO).as_secs_f64();
        println!(
            "transfer: {secs:.3} s simulated ({:.1} Mbit/s), both closed at {:.3} s (TIME-WAIT included)",
            SIZE as f64 * 8.0 / secs / 1e6,
            (w.now - Instant::ZERO).as_secs_f64(),
        );
    }
    println!("wall clock: {:.1} ms", wall.as_secs_f64() * 1e3);
    println!(
        "A: {} segments out ({} with data, {} retransmitted), {} in; timeouts {}",
        sa.segs_out, sa.data_segs_out, sa.retransmitted_segs, sa.segs_in, sa.timeouts
    );
    println!(
        "B: {} segments out ({} pure ACKs, {} of them delayed), {} in ({} by header prediction)",
        sb.segs_out, sb.pure_acks_out, sb.delayed_acks_out, sb.segs_in, sb.hp_data_hits
    );
    println!(
        "path: A->B {} packets, {} bytes; B->A {} packets, {} bytes",
        w.ab.packets, w.ab.bytes, w.ba.packets, w.ba.bytes
    );

    if w.eof_at.is_none() || !finished {
        eprintln!("FAIL: the run did not finish within {LIMIT:?} of simulated time");
        return ExitCode::FAILURE;
    }
    if w.got != w.data {
        let at = w.got.iter().zip(&w.data).position(|(x, y)| x != y);
        eprintln!(
            "FAIL: received {} bytes of {SIZE}; first difference at {:?}",
            w.got.len(),
            at
        );
        return ExitCode::FAILURE;
    }
    println!("data: {SIZE} bytes received, byte-exact");
    ExitCode::SUCCESS
}
