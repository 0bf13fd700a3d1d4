//! A transaction workload over TCP: a client that sends a request, waits for the
//! response, thinks and repeats on one connection (RPC or HTTP/1.1 with keep-alive), and
//! its server. The same client against an echo server ([`crate::services`]) is the
//! simulator's echo flow.

use crate::{App, Ctx};
use ackclock_tcp::{ConnId, Endpoint, TcpConfig, TcpError};
use ackclock_wire::{Duration, Instant};
use core::net::SocketAddrV4;

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
    /// A client of `remote` that opens its connection at `start` and makes `count`
    /// transactions of `request` bytes out and `response` bytes back, `think` apart.
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
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> Option<Instant> {
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
    /// Listens on `port` (backlog 64) and answers every `request` bytes read with
    /// `response` bytes.
    ///
    /// # Errors
    /// The port is taken.
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
    fn poll(&mut self, ctx: &mut Ctx<'_>) -> Option<Instant> {
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
