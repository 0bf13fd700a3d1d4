//! Applications for a live host: a netperf-style bulk test ([`StreamApp`]) and the classic
//! services ([`ServicesApp`]: discard, RFC 863; chargen, RFC 864; echo, RFC 862).

use crate::host::{App, Control};
use ackclock_tcp::{
    CloseError, ConnId, ConnectionError, Endpoint, State, Stats, TcpConfig, TcpError,
};
use ackclock_wire::{Duration, Instant};
use std::fs::File;
use std::io::{Read, Write};
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
struct PatternRing {
    buf: Vec<u8>,
    period: usize,
    off: usize,
}

impl PatternRing {
    fn new(min: usize) -> PatternRing {
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
        let end = (self.off + max).min(self.buf.len());
        &self.buf[self.off..end]
    }
    fn advance(&mut self, n: usize) {
        self.off = (self.off + n) % self.period;
    }
}

/// Which side opens the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRole {
    Connect(SocketAddrV4),
    Listen(u16),
}

/// Which way the data flows, in netperf's terms: `Send` is TCP_STREAM (we send), `Recv` is
/// TCP_MAERTS (we receive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamDirection {
    Send,
    Recv,
}

/// How long the test runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// This many payload bytes (the sender then closes; the receiver stops counting).
    Bytes(u64),
    /// This long after the connection is established.
    Time(Duration),
    /// Until the sender's data ends (its file, or an interruption) or the peer closes.
    Unlimited,
}

/// Settings of a [`StreamApp`].
#[derive(Clone, Debug)]
pub struct StreamOptions {
    pub role: StreamRole,
    pub direction: StreamDirection,
    pub limit: Limit,
    pub tcp: TcpConfig,
    /// Send this file's bytes instead of the chargen pattern.
    pub source_file: Option<std::path::PathBuf>,
    /// Write the received bytes here instead of discarding them.
    pub sink_file: Option<std::path::PathBuf>,
    /// The receiver reads nothing for this long after the connection is established (to
    /// close the window and watch the zero-window probes and window updates).
    pub recv_stall: Duration,
    /// An active open gives up after this long without a connection.
    pub connect_timeout: Duration,
    /// After our part is done, how long to wait for the peer to finish the close.
    pub linger: Duration,
}

impl StreamOptions {
    pub fn new(role: StreamRole, direction: StreamDirection, tcp: TcpConfig) -> Self {
        StreamOptions {
            role,
            direction,
            limit: Limit::Unlimited,
            tcp,
            source_file: None,
            sink_file: None,
            recv_stall: Duration::ZERO,
            connect_timeout: Duration::from_secs(10),
            linger: Duration::from_secs(2),
        }
    }
}

/// What a stream test measured.
#[derive(Clone, Debug, Default)]
pub struct StreamReport {
    pub local: Option<SocketAddrV4>,
    pub remote: Option<SocketAddrV4>,
    /// Payload bytes delivered: acknowledged by the peer (send) or received (recv).
    pub bytes: u64,
    /// From the connection's establishment to the last byte acknowledged (send) or read
    /// (recv).
    pub elapsed: Duration,
    /// Handshake time (active open: SYN to established).
    pub connect_time: Option<Duration>,
    /// The connection's final counters and state.
    pub stats: Option<Stats>,
    /// How it ended abnormally, if it did.
    pub error: Option<TcpError>,
    /// The whole test completed (all bytes, a clean close).
    pub completed: bool,
    pub interrupted: bool,
    /// The connection state when we stopped.
    pub final_state: Option<State>,
}

impl StreamReport {
    pub fn goodput_bps(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Opening,
    Transfer,
    /// Our part is done (at `done_at`); waiting for the close to finish.
    Closing,
    Finished,
}

/// A netperf-style bulk transfer over one connection.
pub struct StreamApp {
    opts: StreamOptions,
    phase: Phase,
    id: Option<ConnId>,
    started_at: Instant,
    established_at: Instant,
    done_at: Instant,
    ring: PatternRing,
    file: Option<File>,
    file_buf: Vec<u8>,
    file_pos: usize,
    file_len: usize,
    source_eof: bool,
    sink: Option<std::io::BufWriter<File>>,
    rbuf: Vec<u8>,
    queued: u64,
    received: u64,
    closed_ours: bool,
    last_now: Instant,
    pub report: StreamReport,
    /// I/O errors of the source or sink file.
    pub file_error: Option<String>,
}

impl StreamApp {
    pub fn new(opts: StreamOptions) -> std::io::Result<StreamApp> {
        let file = match &opts.source_file {
            Some(p) => Some(File::open(p)?),
            None => None,
        };
        let sink = match &opts.sink_file {
            Some(p) => Some(std::io::BufWriter::with_capacity(1 << 20, File::create(p)?)),
            None => None,
        };
        Ok(StreamApp {
            opts,
            phase: Phase::Start,
            id: None,
            started_at: Instant::ZERO,
            established_at: Instant::ZERO,
            done_at: Instant::ZERO,
            ring: PatternRing::new(256 * 1024),
            file,
            file_buf: vec![0; 256 * 1024],
            file_pos: 0,
            file_len: 0,
            source_eof: false,
            sink,
            rbuf: vec![0; 256 * 1024],
            queued: 0,
            received: 0,
            closed_ours: false,
            last_now: Instant::ZERO,
            report: StreamReport::default(),
            file_error: None,
        })
    }

    fn limit_bytes(&self) -> u64 {
        match self.opts.limit {
            Limit::Bytes(n) => n,
            _ => u64::MAX,
        }
    }

    fn time_up(&self, now: Instant) -> bool {
        matches!(self.opts.limit, Limit::Time(d) if now >= self.established_at + d)
    }

    /// Queues as much data as the send buffer takes.
    fn fill(&mut self, now: Instant, ep: &mut Endpoint) {
        let id = self.id.expect("connection");
        let limit = self.limit_bytes();
        loop {
            if self.queued >= limit || self.time_up(now) {
                return;
            }
            let Some(c) = ep.conn_mut(id) else { return };
            if c.send_capacity() == 0 {
                return;
            }
            let want = (limit - self.queued).min(c.send_capacity() as u64) as usize;
            let n = if let Some(file) = self.file.as_mut() {
                if self.file_pos == self.file_len {
                    if self.source_eof {
                        return;
                    }
                    match file.read(&mut self.file_buf) {
                        Ok(0) => {
                            self.source_eof = true;
                            return;
                        }
                        Ok(k) => {
                            self.file_pos = 0;
                            self.file_len = k;
                        }
                        Err(e) => {
                            self.file_error = Some(format!("reading the source file: {e}"));
                            self.source_eof = true;
                            return;
                        }
                    }
                }
                let end = self.file_len.min(self.file_pos + want);
                let n = c.send(&self.file_buf[self.file_pos..end]).unwrap_or(0);
                self.file_pos += n;
                n
            } else {
                let n = c.send(self.ring.peek(want)).unwrap_or(0);
                self.ring.advance(n);
                n
            };
            if n == 0 {
                return;
            }
            self.queued += n as u64;
        }
    }

    fn sender_finished_queueing(&self, now: Instant) -> bool {
        self.queued >= self.limit_bytes() || self.time_up(now) || self.source_eof
    }

    /// Reads (or discards) what has arrived.
    fn drain(&mut self, ep: &mut Endpoint) {
        let id = self.id.expect("connection");
        let Some(c) = ep.conn_mut(id) else { return };
        if let Some(sink) = self.sink.as_mut() {
            loop {
                match c.recv(&mut self.rbuf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        self.received += n as u64;
                        if let Err(e) = sink.write_all(&self.rbuf[..n]) {
                            if self.file_error.is_none() {
                                self.file_error = Some(format!("writing the output file: {e}"));
                            }
                        }
                    }
                }
            }
        } else {
            self.received += c.recv_discard(usize::MAX) as u64;
        }
    }

    fn finish(&mut self, ep: &mut Endpoint) -> Control {
        if let Some(id) = self.id {
            if let Some(c) = ep.conn(id) {
                let s = c.stats();
                self.report.final_state = Some(c.state());
                if self.report.error.is_none() {
                    self.report.error = c.error().map(Into::into);
                }
                self.report.local = Some(c.local());
                self.report.remote = Some(c.remote());
                self.report.bytes = match self.opts.direction {
                    StreamDirection::Send => s.bytes_acked.min(self.queued),
                    StreamDirection::Recv => self.received,
                };
                self.report.stats = Some(s);
            }
        }
        if let Some(s) = self.sink.as_mut() {
            if let Err(e) = s.flush() {
                self.file_error = Some(format!("writing the output file: {e}"));
            }
        }
        self.phase = Phase::Finished;
        Control::Done
    }

    fn mark_done(&mut self, now: Instant) {
        self.done_at = now;
        self.report.elapsed = now - self.established_at;
        self.phase = Phase::Closing;
    }
}

impl App for StreamApp {
    fn poll(&mut self, now: Instant, ep: &mut Endpoint) -> Control {
        self.last_now = now;
        match self.phase {
            Phase::Finished => return Control::Done,
            Phase::Start => {
                self.started_at = now;
                match self.opts.role {
                    StreamRole::Connect(to) => match ep.connect(now, to, self.opts.tcp.clone()) {
                        Ok(id) => self.id = Some(id),
                        Err(e) => {
                            self.report.error = Some(e.into());
                            return self.finish(ep);
                        }
                    },
                    StreamRole::Listen(port) => {
                        if let Err(e) = ep.listen(port, self.opts.tcp.clone(), 8) {
                            self.report.error = Some(e.into());
                            return self.finish(ep);
                        }
                    }
                }
                self.phase = Phase::Opening;
            }
            _ => {}
        }
        if let StreamRole::Listen(port) = self.opts.role {
            // One test per run: later connections are refused with a RST.
            while let Some(id) = ep.accept(port) {
                if self.id.is_none() {
                    self.id = Some(id);
                } else {
                    ep.abort(id);
                }
            }
        }
        let Some(id) = self.id else {
            return Control::Continue;
        };
        let Some(c) = ep.conn(id) else {
            self.report.error = Some(CloseError::NoSuchConnection.into());
            return self.finish(ep);
        };
        let state = c.state();
        if let Some(e) = c.error() {
            self.report.error = Some(e.into());
            if self.phase == Phase::Transfer {
                self.report.elapsed = now - self.established_at;
            }
            return self.finish(ep);
        }
        if self.phase == Phase::Opening {
            if state.is_synchronized() && state != State::SynReceived {
                self.phase = Phase::Transfer;
                self.established_at = now;
                if matches!(self.opts.role, StreamRole::Connect(_)) {
                    self.report.connect_time = Some(now - self.started_at);
                }
            } else if matches!(self.opts.role, StreamRole::Connect(_))
                && now >= self.started_at + self.opts.connect_timeout
            {
                ep.abort(id);
                self.report.error = Some(ConnectionError::TimedOut.into());
                return self.finish(ep);
            } else if state == State::Closed {
                return self.finish(ep);
            } else {
                return Control::Continue;
            }
        }
        match self.opts.direction {
            StreamDirection::Send => {
                self.drain(ep);
                if self.phase == Phase::Transfer {
                    self.fill(now, ep);
                    if !self.closed_ours && self.sender_finished_queueing(now) {
                        if let Some(c) = ep.conn_mut(id) {
                            let _ = c.close();
                        }
                        self.closed_ours = true;
                    }
                    let state = ep.conn(id).map(|c| c.state());
                    if self.closed_ours
                        && matches!(
                            state,
                            Some(State::FinWait2 | State::TimeWait | State::Closed)
                        )
                    {
                        // Our FIN is acknowledged, so is every byte before it.
                        self.mark_done(now);
                    } else if state == Some(State::Closed) {
                        self.report.elapsed = now - self.established_at;
                        return self.finish(ep);
                    }
                }
            }
            StreamDirection::Recv => {
                if self.phase == Phase::Closing || now >= self.established_at + self.opts.recv_stall
                {
                    self.drain(ep);
                }
                if self.phase == Phase::Transfer {
                    let eof = ep.conn(id).is_some_and(|c| c.is_eof());
                    if eof {
                        self.mark_done(now);
                        if let Some(c) = ep.conn_mut(id) {
                            let _ = c.close();
                        }
                        self.closed_ours = true;
                    } else if self.received >= self.limit_bytes() || self.time_up(now) {
                        // Our count is complete but a bulk source keeps sending: end the
                        // test with a reset (netperf's MAERTS stops its sender through its
                        // control connection; a plain TCP peer has only this).
                        self.mark_done(now);
                        self.report.completed = true;
                        let r = self.finish(ep);
                        ep.abort(id);
                        return r;
                    }
                }
            }
        }
        if self.phase == Phase::Closing {
            let state = ep.conn(id).map(|c| c.state());
            let clean = matches!(state, Some(State::TimeWait | State::Closed));
            if clean {
                self.report.completed = true;
                return self.finish(ep);
            }
            if now >= self.done_at + self.opts.linger {
                // The peer did not finish its side in time (a receiver whose sender keeps
                // going, or a peer that never closes): reset.
                let bytes_done = match self.opts.direction {
                    StreamDirection::Send => true,
                    StreamDirection::Recv => {
                        self.received >= self.limit_bytes() || self.time_up(now)
                    }
                };
                self.report.completed = bytes_done && state == Some(State::FinWait2);
                let r = self.finish(ep);
                // A sender whose FIN was acknowledged leaves the peer to close in its own
                // time; anything else (above all a receiver whose peer keeps sending) is
                // reset, so the Linux side is not left sending into a device that is gone.
                let peer_done = ep.conn(id).is_some_and(|c| c.is_eof());
                if !(state == Some(State::FinWait2)
                    && (self.opts.direction == StreamDirection::Send || peer_done))
                {
                    ep.abort(id);
                }
                return r;
            }
        }
        Control::Continue
    }

    fn shutdown(&mut self, now: Instant, ep: &mut Endpoint) {
        self.report.interrupted = true;
        if self.phase == Phase::Transfer {
            self.report.elapsed = now - self.established_at;
        }
        if let Some(id) = self.id {
            if self.phase != Phase::Finished {
                self.finish(ep);
            }
            ep.abort(id);
        }
        self.phase = Phase::Finished;
    }

    fn deadline(&self) -> Option<Instant> {
        // A time already past was handled by the poll that ran at `last_now`; returning it
        // would spin the loop.
        let t = match self.phase {
            Phase::Opening if matches!(self.opts.role, StreamRole::Connect(_)) => {
                Some(self.started_at + self.opts.connect_timeout)
            }
            Phase::Transfer => match self.opts.limit {
                Limit::Time(d) => Some(self.established_at + d),
                _ if self.opts.recv_stall > Duration::ZERO => {
                    Some(self.established_at + self.opts.recv_stall)
                }
                _ => None,
            },
            Phase::Closing => Some(self.done_at + self.opts.linger),
            _ => None,
        };
        t.filter(|t| *t > self.last_now)
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
    pub service: Service,
    pub remote: SocketAddrV4,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub duration: Duration,
    pub error: Option<ConnectionError>,
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
    pub tcp: TcpConfig,
    /// Exit after this many connections have finished.
    pub max_conns: Option<u64>,
    /// Chargen closes after this many bytes (default: until the client closes).
    pub chargen_bytes: Option<u64>,
    /// Print a line per finished connection on stdout.
    pub print: bool,
    pub backlog: usize,
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
    pub finished: Vec<ConnSummary>,
    /// Errors from `listen` (e.g. a port given twice).
    pub error: Option<TcpError>,
}

impl ServicesApp {
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
        }
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
    fn poll(&mut self, now: Instant, ep: &mut Endpoint) -> Control {
        if !self.started {
            self.started = true;
            for &(port, _) in &self.listeners {
                if let Err(e) = ep.listen(port, self.opts.tcp.clone(), self.opts.backlog) {
                    self.error = Some(e.into());
                    return Control::Done;
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
            return Control::Done;
        }
        Control::Continue
    }

    fn shutdown(&mut self, _now: Instant, ep: &mut Endpoint) {
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
