//! The classic TCP services on any set of ports, any number of connections: discard
//! (RFC 863), chargen (RFC 864) and echo (RFC 862), with a summary of every connection
//! served. Live, `ackclock discard|chargen|echo` run them; in the simulator an echo flow's
//! server is [`ServicesApp`] serving echo.

use crate::{App, Ctx};
use ackclock_tcp::{ConnId, ConnectionError, Endpoint, State, Stats, TcpConfig, TcpError};
use ackclock_wire::{Duration, Instant};
use std::net::SocketAddrV4;

/// RFC 864's character generator: 72-character lines, the first character of each line one
/// further along the 95 printable ASCII characters, CR LF after each. The pattern repeats
/// every 95 lines.
pub fn chargen_pattern() -> Vec<u8> {
    let mut v = Vec::with_capacity(95 * 74);
    for line in 0..95u8 {
        for i in 0..72u8 {
            v.push(b' ' + (line + i) % 95);
        }
        v.extend_from_slice(b"\r\n");
    }
    v
}

/// The chargen pattern repeated so that any offset inside one period starts a contiguous
/// slice of at least `min` bytes.
pub(crate) struct PatternRing {
    buf: Vec<u8>,
    period: usize,
    off: usize,
}

impl PatternRing {
    pub(crate) fn new(min: usize) -> PatternRing {
        let p = chargen_pattern();
        let period = p.len();
        let mut buf = Vec::with_capacity(min + 2 * period);
        while buf.len() < min + period {
            buf.extend_from_slice(&p);
        }
        PatternRing {
            buf,
            period,
            off: 0,
        }
    }
    /// The next bytes of the stream, at most `max`.
    fn peek(&self, max: usize) -> &[u8] {
        self.peek_at(self.off, max)
    }
    fn advance(&mut self, n: usize) {
        self.off = self.advance_from(self.off, n);
    }
    /// The stream's bytes from offset `off` (below one period), at most `max`: for users
    /// that keep their own place in the pattern.
    pub(crate) fn peek_at(&self, off: usize, max: usize) -> &[u8] {
        let end = (off + max).min(self.buf.len());
        &self.buf[off..end]
    }
    /// The offset `n` bytes after `off`.
    pub(crate) fn advance_from(&self, off: usize, n: usize) -> usize {
        (off + n) % self.period
    }
}

/// A classic TCP service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Service {
    /// RFC 863: everything read is thrown away.
    Discard,
    /// RFC 864: an endless stream of the character pattern; what arrives is discarded.
    Chargen,
    /// RFC 862: everything read is sent back.
    Echo,
}

impl Service {
    /// The service's name, as the command is called.
    pub fn name(self) -> &'static str {
        match self {
            Service::Discard => "discard",
            Service::Chargen => "chargen",
            Service::Echo => "echo",
        }
    }
    /// The well-known port.
    pub fn port(self) -> u16 {
        match self {
            Service::Discard => 9,
            Service::Chargen => 19,
            Service::Echo => 7,
        }
    }
}

/// One finished connection of a service.
#[derive(Clone, Debug)]
pub struct ConnSummary {
    /// The service it was.
    pub service: Service,
    /// The client's address.
    pub remote: SocketAddrV4,
    /// Bytes read from the client.
    pub bytes_in: u64,
    /// Bytes sent to the client.
    pub bytes_out: u64,
    /// From accept to the end.
    pub duration: Duration,
    /// How it ended abnormally, if it did.
    pub error: Option<ConnectionError>,
    /// The connection's final counters.
    pub stats: Stats,
}

impl std::fmt::Display for ConnSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {} bytes in, {} bytes out, {:.3} s, {} retransmitted segments, {}",
            self.service.name(),
            self.remote,
            self.bytes_in,
            self.bytes_out,
            self.duration.as_secs_f64(),
            self.stats.retransmitted_segs,
            match self.error {
                None => "closed".to_string(),
                Some(e) => e.to_string(),
            }
        )
    }
}

struct ServConn {
    id: ConnId,
    service: Service,
    bytes_in: u64,
    bytes_out: u64,
    start: Instant,
    closed_ours: bool,
}

/// Settings of a [`ServicesApp`].
#[derive(Clone, Debug)]
pub struct ServiceOptions {
    /// The TCP configuration of every connection served.
    pub tcp: TcpConfig,
    /// Exit after this many connections have finished.
    pub max_conns: Option<u64>,
    /// Chargen closes after this many bytes (default: until the client closes).
    pub chargen_bytes: Option<u64>,
    /// Print a line per finished connection on stdout.
    pub print: bool,
    /// The listeners' backlog.
    pub backlog: usize,
}

impl ServiceOptions {
    /// Serve for ever with `tcp`, quietly, with a backlog of 64.
    pub fn new(tcp: TcpConfig) -> Self {
        ServiceOptions {
            tcp,
            max_conns: None,
            chargen_bytes: None,
            print: false,
            backlog: 64,
        }
    }
}

/// Serves discard, chargen and echo on any set of ports, any number of connections.
pub struct ServicesApp {
    listeners: Vec<(u16, Service)>,
    opts: ServiceOptions,
    conns: Vec<ServConn>,
    started: bool,
    stopping: bool,
    ring: PatternRing,
    buf: Vec<u8>,
    /// Every connection served, as it ended.
    pub finished: Vec<ConnSummary>,
    /// Errors from `listen` (e.g. a port given twice).
    pub error: Option<TcpError>,
    /// Its work is over: enough connections served, or stopped.
    done: bool,
}

impl ServicesApp {
    /// Serves each `(port, service)` of `listeners`; it listens at its first poll (or
    /// [`listen_now`](Self::listen_now)).
    pub fn new(listeners: Vec<(u16, Service)>, opts: ServiceOptions) -> Self {
        ServicesApp {
            listeners,
            opts,
            conns: Vec::new(),
            started: false,
            stopping: false,
            ring: PatternRing::new(64 * 1024),
            buf: vec![0; 64 * 1024],
            finished: Vec::new(),
            error: None,
            done: false,
        }
    }

    /// Listens on every port now rather than at the first poll (a simulated server must
    /// listen before the first SYN can arrive).
    ///
    /// # Errors
    /// A port is taken; nothing is listening then.
    pub fn listen_now(&mut self, ep: &mut Endpoint) -> Result<(), TcpError> {
        for (k, &(port, _)) in self.listeners.iter().enumerate() {
            if let Err(e) = ep.listen(port, self.opts.tcp.clone(), self.opts.backlog) {
                for &(p, _) in &self.listeners[..k] {
                    ep.unlisten(p);
                }
                return Err(e.into());
            }
        }
        self.started = true;
        Ok(())
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.conns.len()
    }

    fn serve(&mut self, k: usize, ep: &mut Endpoint) -> bool {
        let sc = &mut self.conns[k];
        let Some(c) = ep.conn_mut(sc.id) else {
            return true;
        };
        if c.error().is_some() || c.is_closed() {
            return true;
        }
        match sc.service {
            Service::Discard => {
                sc.bytes_in += c.recv_discard(usize::MAX) as u64;
            }
            Service::Chargen => {
                sc.bytes_in += c.recv_discard(usize::MAX) as u64;
                let limit = self.opts.chargen_bytes.unwrap_or(u64::MAX);
                while !sc.closed_ours && sc.bytes_out < limit && c.send_capacity() > 0 {
                    let want = (limit - sc.bytes_out).min(c.send_capacity() as u64) as usize;
                    let n = c.send(self.ring.peek(want)).unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    self.ring.advance(n);
                    sc.bytes_out += n as u64;
                }
                if !sc.closed_ours && sc.bytes_out >= limit {
                    let _ = c.close();
                    sc.closed_ours = true;
                }
            }
            Service::Echo => loop {
                let n = c
                    .recv_available()
                    .min(c.send_capacity())
                    .min(self.buf.len());
                if n == 0 || sc.closed_ours {
                    break;
                }
                let n = c.recv(&mut self.buf[..n]).unwrap_or(0);
                if n == 0 {
                    break;
                }
                sc.bytes_in += n as u64;
                let m = c.send(&self.buf[..n]).unwrap_or(0);
                sc.bytes_out += m as u64;
            },
        }
        // The client closed and everything it sent is handled: close our side too.
        if !sc.closed_ours && c.is_eof() {
            let _ = c.close();
            sc.closed_ours = true;
        }
        matches!(c.state(), State::TimeWait | State::Closed)
    }
}

impl App for ServicesApp {
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant> {
        let (now, ep) = (cx.now, &mut *cx.ep);
        if !self.started {
            self.started = true;
            for &(port, _) in &self.listeners {
                if let Err(e) = ep.listen(port, self.opts.tcp.clone(), self.opts.backlog) {
                    self.error = Some(e.into());
                    self.done = true;
                    return None;
                }
            }
        }
        if !self.stopping {
            for &(port, service) in &self.listeners {
                while let Some(id) = ep.accept(port) {
                    self.conns.push(ServConn {
                        id,
                        service,
                        bytes_in: 0,
                        bytes_out: 0,
                        start: now,
                        closed_ours: false,
                    });
                }
            }
        }
        let mut k = 0;
        while k < self.conns.len() {
            if self.serve(k, ep) {
                let sc = self.conns.swap_remove(k);
                if let Some(c) = ep.conn(sc.id) {
                    let s = ConnSummary {
                        service: sc.service,
                        remote: c.remote(),
                        bytes_in: sc.bytes_in,
                        bytes_out: sc.bytes_out,
                        duration: now - sc.start,
                        error: c.error(),
                        stats: c.stats(),
                    };
                    if self.opts.print {
                        println!("{s}");
                    }
                    self.finished.push(s);
                }
                // Released: the endpoint removes it once TIME-WAIT is over.
                let _ = ep.close(sc.id);
            } else {
                k += 1;
            }
        }
        let enough = self
            .opts
            .max_conns
            .is_some_and(|m| self.finished.len() as u64 >= m);
        if (enough || self.stopping) && self.conns.is_empty() {
            self.done = true;
        }
        None
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        let ep = &mut *cx.ep;
        self.stopping = true;
        for &(port, _) in &self.listeners {
            ep.unlisten(port);
        }
        for sc in &mut self.conns {
            if let Some(c) = ep.conn_mut(sc.id) {
                let _ = c.close();
                sc.closed_ours = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a client's connect to `port` of the server endpoint is answered (the server's
    /// application is never polled): established, or refused.
    fn connect_unpolled(server: &mut Endpoint, port: u16) -> ackclock_tcp::State {
        use ackclock_tcp::EndpointConfig;
        let mut client = Endpoint::new(EndpointConfig::new([198, 18, 0, 1].into(), [1; 16]));
        let to = SocketAddrV4::new(server.addr(), port);
        let id = client
            .connect(Instant::ZERO, to, TcpConfig::sack())
            .unwrap();
        let mut buf = vec![0u8; 2048];
        for _ in 0..4 {
            while let Some(t) = client.poll_transmit(Instant::ZERO, &mut buf) {
                server.handle_packet(Instant::ZERO, &buf[..t.len]);
            }
            while let Some(t) = server.poll_transmit(Instant::ZERO, &mut buf) {
                client.handle_packet(Instant::ZERO, &buf[..t.len]);
            }
        }
        client
            .conn(id)
            .map_or(ackclock_tcp::State::Closed, |c| c.state())
    }

    #[test]
    fn a_service_listening_now_accepts_before_its_first_poll() {
        // The live commands say "listening" before their loop's first turn; a client let in
        // by that line met a closed port (a RST) when the service listened at its first
        // poll, on a busy machine.
        use ackclock_tcp::EndpointConfig;
        let mut ep = Endpoint::new(EndpointConfig::new([198, 18, 0, 2].into(), [2; 16]));
        let mut app = ServicesApp::new(
            vec![(19, Service::Chargen)],
            ServiceOptions::new(TcpConfig::sack()),
        );
        assert_eq!(connect_unpolled(&mut ep, 19), ackclock_tcp::State::Closed);
        app.listen_now(&mut ep).unwrap();
        assert_eq!(
            connect_unpolled(&mut ep, 19),
            ackclock_tcp::State::Established
        );
        // A port taken is an error, and nothing is left listening.
        let mut ep2 = Endpoint::new(EndpointConfig::new([198, 18, 0, 2].into(), [2; 16]));
        ep2.listen(9, TcpConfig::sack(), 1).unwrap();
        let mut two = ServicesApp::new(
            vec![(7, Service::Echo), (9, Service::Discard)],
            ServiceOptions::new(TcpConfig::sack()),
        );
        assert!(two.listen_now(&mut ep2).is_err());
        assert_eq!(connect_unpolled(&mut ep2, 7), ackclock_tcp::State::Closed);
    }

    #[test]
    fn chargen_lines_follow_rfc_864() {
        let p = chargen_pattern();
        assert_eq!(p.len(), 95 * 74);
        // Line 0 starts with a space, line 1 with '!', each line 72 characters.
        assert_eq!(p[0], b' ');
        assert_eq!(p[74], b'!');
        assert_eq!(&p[72..74], b"\r\n");
        assert!(p
            .iter()
            .all(|&b| (32..127).contains(&b) || b == b'\r' || b == b'\n'));
    }

    #[test]
    fn the_ring_repeats_the_pattern() {
        let mut r = PatternRing::new(10_000);
        let p = chargen_pattern();
        let mut out = Vec::new();
        for step in [1usize, 7000, 333, 9999, 4] {
            let s = r.peek(step).to_vec();
            assert_eq!(s.len(), step);
            out.extend_from_slice(&s);
            r.advance(step);
        }
        for (i, b) in out.iter().enumerate() {
            assert_eq!(*b, p[i % p.len()]);
        }
    }
}
