//! The simulator's bulk transfer: a chargen-like sender that writes as fast as the socket
//! takes data (optionally with each write call charged to the host's CPU, as the seeds'
//! measurements of 1988 needed) and a discard-like sink that counts what it reads. These
//! carry the seeds' experiments; the live bulk test with interval reports is
//! [`stream`](crate::stream).

use crate::{App, Ctx};
use ackclock_tcp::{ConnId, Endpoint, TcpConfig, TcpError};
use ackclock_wire::Instant;
use core::net::SocketAddrV4;

/// How much a bulk sender sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    /// This many bytes, then close.
    Bytes(u64),
    /// Until this time, then close.
    Until(Instant),
    /// For as long as the run lasts.
    Forever,
}

/// chargen: opens a connection at `start` and writes as fast as the socket takes data, in
/// chunks of `chunk` bytes per write call, then closes.
///
/// When the host charges writes ([`Ctx::cpu`]), each write call is one unit of work: it waits until the socket buffer has room for the whole chunk (at most the buffer),
/// then the CPU copies it in one piece and TCP sees it only when the copy is done, as the
/// pre-1988 sosend did ("copy from user space to socket, call the protocol send routine";
/// seed 000, Jul 1988).
pub struct BulkSender {
    remote: SocketAddrV4,
    cfg: Option<TcpConfig>,
    start: Instant,
    amount: Amount,
    chunk: usize,
    conn: Option<ConnId>,
    written: u64,
    closed: bool,
    pattern: std::sync::Arc<[u8]>,
    finished: Option<Instant>,
    /// Bytes of a charged write the CPU is copying.
    copying: Option<usize>,
}

impl BulkSender {
    /// A sender that connects to `remote` at `start` and writes `amount` in `chunk`-byte
    /// write calls.
    pub fn new(
        remote: SocketAddrV4,
        cfg: TcpConfig,
        start: Instant,
        amount: Amount,
        chunk: usize,
    ) -> Self {
        let chunk = chunk.max(1);
        let pattern = chargen_pattern(chunk + 95);
        BulkSender {
            remote,
            cfg: Some(cfg),
            start,
            amount,
            chunk,
            conn: None,
            written: 0,
            closed: false,
            pattern,
            finished: None,
            copying: None,
        }
    }
}

/// chargen's rotating printable pattern (captures are recognisable), at least `len` bytes,
/// shared by every sender of the process: a thousand flows do not need a thousand copies.
fn chargen_pattern(len: usize) -> std::sync::Arc<[u8]> {
    use std::sync::{Arc, Mutex};
    static SHARED: Mutex<Option<Arc<[u8]>>> = Mutex::new(None);
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    match &*shared {
        Some(p) if p.len() >= len => p.clone(),
        _ => {
            let p: Arc<[u8]> = (0..len).map(|i| b' ' + (i % 95) as u8).collect();
            *shared = Some(p.clone());
            p
        }
    }
}

impl App for BulkSender {
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> Option<Instant> {
        if ctx.now < self.start {
            return Some(self.start);
        }
        if self.conn.is_none() {
            let cfg = self.cfg.take()?;
            self.conn = ctx.ep.connect(ctx.now, self.remote, cfg).ok();
        }
        let id = self.conn?;
        let c = ctx.ep.conn_mut(id)?;
        let limit = match self.amount {
            Amount::Bytes(b) => b,
            Amount::Until(t) if ctx.now >= t => self.written,
            _ => u64::MAX,
        };
        if let Some(cpu) = ctx.cpu.as_mut() {
            if self.copying.is_none() && self.written < limit && !self.closed && c.send(&[]).is_ok()
            {
                let room = c.send_capacity();
                let want = (limit - self.written)
                    .min(self.chunk as u64)
                    .min((c.send_queued() + room) as u64) as usize;
                if want > 0 && room >= want {
                    self.copying = Some(want);
                    cpu.request(want);
                }
            }
        } else {
            while self.written < limit && !self.closed {
                let want = (limit - self.written).min(self.chunk as u64) as usize;
                let off = (self.written % 95) as usize;
                match c.send(&self.pattern[off..off + want]) {
                    Ok(0) => break,
                    Ok(n) => self.written += n as u64,
                    Err(_) => break,
                }
            }
        }
        if self.written >= limit && !self.closed && c.is_established() {
            self.closed = true;
            let _ = ctx.ep.close(id);
        }
        if self.finished.is_none() && self.closed {
            if let Some(c) = ctx.ep.conn(id) {
                if c.send_queued() == 0 {
                    self.finished = Some(ctx.now);
                }
            }
        }
        match self.amount {
            // Wake at the stop time to close. Once it has passed, a connection still opening
            // closes when its handshake completes (an event on this host polls the app):
            // asking to be woken at a time already past would wake it again at once, for ever.
            Amount::Until(t) if !self.closed && t > ctx.now => Some(t),
            _ => None,
        }
    }
    fn conn(&self) -> Option<ConnId> {
        self.conn
    }
    fn bytes(&self) -> u64 {
        self.written
    }
    fn finished_at(&self) -> Option<Instant> {
        self.finished
    }
    fn write_done(&mut self, ctx: &mut Ctx<'_>, bytes: usize) {
        self.copying = None;
        let Some(c) = self.conn.and_then(|id| ctx.ep.conn_mut(id)) else {
            return;
        };
        let off = (self.written % 95) as usize;
        // The room was there when the write started and only ACKs touched the buffer since.
        if let Ok(n) = c.send(&self.pattern[off..off + bytes]) {
            self.written += n as u64;
        }
    }
}

/// discard: accepts connections on a port and reads (and drops) everything.
pub struct Sink {
    port: u16,
    conns: Vec<ConnId>,
    read: u64,
    eof_at: Option<Instant>,
    /// Bytes read per call, like a read(2) buffer; `usize::MAX` reads all that is there.
    read_size: usize,
}

impl Sink {
    /// Listens on `port` (backlog 64) with `cfg` for every connection it accepts.
    ///
    /// # Errors
    /// The port is taken.
    pub fn new(ep: &mut Endpoint, port: u16, cfg: TcpConfig) -> Result<Self, TcpError> {
        ep.listen(port, cfg, 64)?;
        Ok(Sink {
            port,
            conns: Vec::new(),
            read: 0,
            eof_at: None,
            read_size: usize::MAX,
        })
    }
}

impl App for Sink {
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> Option<Instant> {
        while let Some(id) = ctx.ep.accept(self.port) {
            self.conns.push(id);
        }
        let mut closing = Vec::new();
        for &id in &self.conns {
            if let Some(c) = ctx.ep.conn_mut(id) {
                self.read += c.recv_discard(self.read_size) as u64;
                if c.is_eof() {
                    closing.push(id);
                }
            }
        }
        for id in closing {
            let _ = ctx.ep.close(id);
            self.conns.retain(|x| *x != id);
            self.eof_at.get_or_insert(ctx.now);
        }
        None
    }
    fn conn(&self) -> Option<ConnId> {
        self.conns.first().copied()
    }
    fn bytes(&self) -> u64 {
        self.read
    }
    fn finished_at(&self) -> Option<Instant> {
        self.eof_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bulk sender with `duration_s` whose stop time passes while its connection is still
    /// opening (here: no answer to the SYN) must not ask to be woken at a time already past:
    /// the host would wake it again at once, and the simulator spun for ever at that instant (a
    /// flow shut out by a flood at twice the line's rate, in the self-protection experiment).
    #[test]
    fn bulk_sender_past_its_stop_time_does_not_ask_for_a_past_wakeup() {
        use ackclock_tcp::EndpointConfig;
        use ackclock_wire::Duration;
        use core::net::Ipv4Addr;

        let addr = Ipv4Addr::new(198, 18, 0, 1);
        let mut ep = Endpoint::new(EndpointConfig::new(addr, [7; 16]));
        let mut udp = ackclock_dgram::UdpStack::new(ackclock_dgram::UdpConfig::new(addr));
        let stop = Instant::ZERO + Duration::from_millis(100);
        let mut app = BulkSender::new(
            SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 2), 5001),
            TcpConfig::newreno(),
            Instant::ZERO,
            Amount::Until(stop),
            65536,
        );
        // Opens the connection; the stop time is ahead, so it asks to be woken then.
        let next = app.poll(&mut Ctx::new(Instant::ZERO, &mut ep, &mut udp));
        assert_eq!(next, Some(stop));
        let id = app.conn().expect("connecting");
        assert!(!ep.conn(id).expect("open").is_established());
        // Past the stop time, the handshake still unanswered: no wakeup at or before now.
        for ms in [100, 200, 5000] {
            let now = Instant::ZERO + Duration::from_millis(ms);
            let next = app.poll(&mut Ctx::new(now, &mut ep, &mut udp));
            assert!(
                next.is_none_or(|t| t > now),
                "at {ms} ms: woken at {next:?}"
            );
        }
    }
}
