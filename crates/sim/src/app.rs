//! Applications on simulated hosts. Each is polled after every event on its host (an
//! application blocked in a read or write is woken at once) and says when it next wants to
//! run on its own.

use ackclock_tcp::{ConnId, Endpoint, TcpConfig, TcpError};
use ackclock_wire::{Duration, Instant};
use core::net::SocketAddrV4;

/// What an application can touch on its host.
pub struct AppCtx<'a> {
    pub now: Instant,
    pub ep: &'a mut Endpoint,
    /// The host's UDP.
    pub udp: &'a mut ackclock_dgram::UdpStack,
    /// The host's CPU charges application writes (copyin, seed 000 Jul 1988): instead of
    /// writing to the socket directly, the application asks with
    /// [`request_write`](Self::request_write) and writes in [`App::write_done`] once the CPU
    /// has spent the copy's time.
    pub charged_writes: bool,
    pub(crate) write_request: Option<usize>,
}

impl<'a> AppCtx<'a> {
    pub fn new(
        now: Instant,
        ep: &'a mut Endpoint,
        udp: &'a mut ackclock_dgram::UdpStack,
        charged_writes: bool,
    ) -> Self {
        AppCtx {
            now,
            ep,
            udp,
            charged_writes,
            write_request: None,
        }
    }
    /// Asks the host's CPU to copy `bytes` into the socket (one write call); the host calls
    /// [`App::write_done`] when the copy is done.
    pub fn request_write(&mut self, bytes: usize) {
        self.write_request = Some(bytes);
    }
}

pub trait App: Send {
    /// Runs the application; returns when it next needs to run on its own (a timer).
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant>;
    /// The connection carrying this application's main data, once it exists.
    fn conn(&self) -> Option<ConnId> {
        None
    }
    /// Bytes this application has delivered to its peer's application (senders) or read
    /// (receivers).
    fn bytes(&self) -> u64 {
        0
    }
    /// When the application finished its work, if it has.
    fn finished_at(&self) -> Option<Instant> {
        None
    }
    /// A datagram application's figures (RPC clients and servers, streams).
    fn datagram(&self) -> Option<crate::results::DatagramSummary> {
        None
    }
    /// The write of `bytes` asked for with [`AppCtx::request_write`] has been copied (its
    /// CPU time spent): hand the bytes to TCP now.
    fn write_done(&mut self, _ctx: &mut AppCtx<'_>, _bytes: usize) {}
}

/// How much a bulk sender sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amount {
    Bytes(u64),
    Until(Instant),
    Forever,
}

/// chargen: opens a connection at `start` and writes as fast as the socket takes data, in
/// chunks of `chunk` bytes per write call, then closes.
///
/// When the host charges writes ([`AppCtx::charged_writes`]), each write call is one unit of
/// work: it waits until the socket buffer has room for the whole chunk (at most the buffer),
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
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
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
        if ctx.charged_writes {
            if self.copying.is_none() && self.written < limit && !self.closed && c.send(&[]).is_ok()
            {
                let room = c.send_capacity();
                let want = (limit - self.written)
                    .min(self.chunk as u64)
                    .min((c.send_queued() + room) as u64) as usize;
                if want > 0 && room >= want {
                    self.copying = Some(want);
                    ctx.write_request = Some(want);
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
    fn write_done(&mut self, ctx: &mut AppCtx<'_>, bytes: usize) {
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
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
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

/// Request/response client: sends `request` bytes, waits for `response` bytes, thinks, and
/// repeats `count` times on one connection (a transaction workload, e.g. RPC or HTTP).
pub struct RequestClient {
    remote: SocketAddrV4,
    cfg: Option<TcpConfig>,
    start: Instant,
    request: usize,
    response: u64,
    count: u32,
    think: Duration,
    conn: Option<ConnId>,
    done: u32,
    sent_in_req: usize,
    got_in_resp: u64,
    next_at: Instant,
    total: u64,
    finished: Option<Instant>,
    /// Completion time of each transaction, for latency statistics.
    pub latencies: Vec<Duration>,
    req_started: Instant,
}

impl RequestClient {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        remote: SocketAddrV4,
        cfg: TcpConfig,
        start: Instant,
        request: usize,
        response: u64,
        count: u32,
        think: Duration,
    ) -> Self {
        RequestClient {
            remote,
            cfg: Some(cfg),
            start,
            request: request.max(1),
            response,
            count,
            think,
            conn: None,
            done: 0,
            sent_in_req: 0,
            got_in_resp: 0,
            next_at: start,
            total: 0,
            finished: None,
            latencies: Vec::new(),
            req_started: start,
        }
    }
}

impl App for RequestClient {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        if ctx.now < self.start {
            return Some(self.start);
        }
        if self.conn.is_none() {
            let cfg = self.cfg.take()?;
            self.conn = ctx.ep.connect(ctx.now, self.remote, cfg).ok();
        }
        let id = self.conn?;
        if self.done >= self.count {
            return None;
        }
        let c = ctx.ep.conn_mut(id)?;
        let buf = [b'q'; 4096];
        if self.sent_in_req == 0 && ctx.now < self.next_at {
            return Some(self.next_at);
        }
        if self.sent_in_req == 0 {
            self.req_started = ctx.now;
        }
        while self.sent_in_req < self.request {
            let n = (self.request - self.sent_in_req).min(buf.len());
            match c.send(&buf[..n]) {
                Ok(0) | Err(_) => break,
                Ok(k) => self.sent_in_req += k,
            }
        }
        let got = c.recv_discard(usize::MAX) as u64;
        self.got_in_resp += got;
        self.total += got;
        if self.sent_in_req >= self.request && self.got_in_resp >= self.response {
            self.latencies.push(ctx.now - self.req_started);
            self.done += 1;
            self.sent_in_req = 0;
            self.got_in_resp -= self.response;
            self.next_at = ctx.now + self.think;
            if self.done >= self.count {
                self.finished = Some(ctx.now);
                let _ = ctx.ep.close(id);
                return None;
            }
            return Some(self.next_at);
        }
        None
    }
    fn conn(&self) -> Option<ConnId> {
        self.conn
    }
    fn bytes(&self) -> u64 {
        self.total
    }
    fn finished_at(&self) -> Option<Instant> {
        self.finished
    }
}

/// Request/response server: for every `request` bytes read, writes `response` bytes.
pub struct RequestServer {
    port: u16,
    request: u64,
    response: u64,
    conns: Vec<(ConnId, u64, u64)>,
}

impl RequestServer {
    pub fn new(
        ep: &mut Endpoint,
        port: u16,
        cfg: TcpConfig,
        request: u64,
        response: u64,
    ) -> Result<Self, TcpError> {
        ep.listen(port, cfg, 64)?;
        Ok(RequestServer {
            port,
            request: request.max(1),
            response,
            conns: Vec::new(),
        })
    }
}

impl App for RequestServer {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        while let Some(id) = ctx.ep.accept(self.port) {
            self.conns.push((id, 0, 0));
        }
        let buf = [b'r'; 4096];
        for (id, pending_req, owed) in self.conns.iter_mut() {
            let Some(c) = ctx.ep.conn_mut(*id) else {
                continue;
            };
            *pending_req += c.recv_discard(usize::MAX) as u64;
            while *pending_req >= self.request {
                *pending_req -= self.request;
                *owed += self.response;
            }
            while *owed > 0 {
                let n = (*owed).min(buf.len() as u64) as usize;
                match c.send(&buf[..n]) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => *owed -= k as u64,
                }
            }
            if c.is_eof() && *owed == 0 {
                let _ = c.close();
            }
        }
        None
    }
}

/// echo: writes back everything it reads.
pub struct EchoServer {
    port: u16,
    conns: Vec<(ConnId, Vec<u8>)>,
}

impl EchoServer {
    pub fn new(ep: &mut Endpoint, port: u16, cfg: TcpConfig) -> Result<Self, TcpError> {
        ep.listen(port, cfg, 64)?;
        Ok(EchoServer {
            port,
            conns: Vec::new(),
        })
    }
}

impl App for EchoServer {
    fn poll(&mut self, ctx: &mut AppCtx<'_>) -> Option<Instant> {
        while let Some(id) = ctx.ep.accept(self.port) {
            self.conns.push((id, Vec::new()));
        }
        let mut buf = [0u8; 4096];
        for (id, backlog) in self.conns.iter_mut() {
            let Some(c) = ctx.ep.conn_mut(*id) else {
                continue;
            };
            loop {
                if !backlog.is_empty() {
                    match c.send(backlog) {
                        Ok(n) => {
                            backlog.drain(..n);
                        }
                        Err(_) => backlog.clear(),
                    }
                    if !backlog.is_empty() {
                        break;
                    }
                }
                match c.recv(&mut buf) {
                    Ok(0) => {
                        let _ = c.close();
                        break;
                    }
                    Ok(n) => backlog.extend_from_slice(&buf[..n]),
                    Err(_) => break,
                }
            }
        }
        None
    }
}
