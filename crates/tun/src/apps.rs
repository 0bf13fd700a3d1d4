//! Applications for a live host: a netperf-style bulk test over one connection or
//! iperf3-style over several, with interval reports ([`StreamApp`]), and the classic
//! services ([`ServicesApp`]: discard, RFC 863; chargen, RFC 864; echo, RFC 862).

use crate::host::{App, Control};
use crate::interval::{Cumulative, Interval, IntervalMeter, IntervalRecord};
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
        self.peek_at(self.off, max)
    }
    fn advance(&mut self, n: usize) {
        self.off = self.advance_from(self.off, n);
    }
    /// The stream's bytes from offset `off` (below one period), at most `max`: for users
    /// that keep their own place in the pattern.
    fn peek_at(&self, off: usize, max: usize) -> &[u8] {
        let end = (off + max).min(self.buf.len());
        &self.buf[off..end]
    }
    /// The offset `n` bytes after `off`.
    fn advance_from(&self, off: usize, n: usize) -> usize {
        (off + n) % self.period
    }
}

/// Which side opens the connections.
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
    /// This many payload bytes in all, shared evenly among the streams (the first ones
    /// take the remainder; as iperf3's `-n`, a total). Each sender then closes; each
    /// receiver stops counting.
    Bytes(u64),
    /// This long after the test starts (the first connection established), for every
    /// stream.
    Time(Duration),
    /// Until the sender's data ends (its file, or an interruption) or the peer closes.
    Unlimited,
}

/// The most parallel streams a [`StreamApp`] runs (iperf3's limit too).
pub const MAX_PARALLEL: usize = 128;

/// Settings of a [`StreamApp`].
#[derive(Clone, Debug)]
pub struct StreamOptions {
    pub role: StreamRole,
    pub direction: StreamDirection,
    pub limit: Limit,
    pub tcp: TcpConfig,
    /// Send this file's bytes instead of the chargen pattern (one stream only).
    pub source_file: Option<std::path::PathBuf>,
    /// Write the received bytes here instead of discarding them (one stream only).
    pub sink_file: Option<std::path::PathBuf>,
    /// The receiver reads nothing for this long after the connection is established (to
    /// close the window and watch the zero-window probes and window updates).
    pub recv_stall: Duration,
    /// An active open gives up after this long without a connection.
    pub connect_timeout: Duration,
    /// After our part is done, how long to wait for the peer to finish the close.
    pub linger: Duration,
    /// Connections at once (iperf3's `-P`), 1 to [`MAX_PARALLEL`]. Connecting opens them
    /// all in the first turn, each from its own local port; listening takes the first
    /// `parallel` connections and resets any later one.
    pub parallel: usize,
    /// Report every this long (iperf3's `-i`) through [`StreamApp::on_interval`]; `None`:
    /// no interval reports.
    pub interval: Option<Duration>,
    /// Keep every interval report in [`StreamApp::intervals`] (for a JSON document).
    pub keep_intervals: bool,
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
            parallel: 1,
            interval: None,
            keep_intervals: false,
        }
    }
}

/// What one stream (connection) of a test measured.
#[derive(Clone, Debug, Default)]
pub struct StreamReport {
    pub local: Option<SocketAddrV4>,
    pub remote: Option<SocketAddrV4>,
    /// Payload bytes delivered: acknowledged by the peer (send) or received (recv).
    pub bytes: u64,
    /// When the connection was established, since the test started (the first
    /// connection established); `None` if it never was.
    pub start: Option<Duration>,
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
    /// When the data ended, since the test started.
    pub fn end(&self) -> Option<Duration> {
        self.start.map(|s| s + self.elapsed)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Opening,
    Transfer,
    /// Our part is done (at `done_at`); waiting for the close to finish.
    Closing,
    Finished,
}

/// What the streams of a test share: the data source and sink, scratch space, and the
/// test's clock.
struct Shared {
    opts: StreamOptions,
    started_at: Instant,
    /// When the first connection was established: the test's zero.
    test_start: Option<Instant>,
    ring: PatternRing,
    file: Option<File>,
    file_buf: Vec<u8>,
    file_pos: usize,
    file_len: usize,
    source_eof: bool,
    sink: Option<std::io::BufWriter<File>>,
    rbuf: Vec<u8>,
    file_error: Option<String>,
}

impl Shared {
    fn time_up(&self, now: Instant) -> bool {
        matches!(self.opts.limit, Limit::Time(d) if self.test_start.is_some_and(|t| now >= t + d))
    }
}

/// One connection of a test.
struct Stream {
    id: Option<ConnId>,
    phase: Phase,
    established_at: Instant,
    done_at: Instant,
    /// Where this stream is in the chargen pattern.
    ring_off: usize,
    /// This stream's share of a byte limit (`u64::MAX`: none).
    limit_bytes: u64,
    queued: u64,
    received: u64,
    closed_ours: bool,
    report: StreamReport,
}

impl Stream {
    fn new(limit_bytes: u64) -> Stream {
        Stream {
            id: None,
            phase: Phase::Opening,
            established_at: Instant::ZERO,
            done_at: Instant::ZERO,
            ring_off: 0,
            limit_bytes,
            queued: 0,
            received: 0,
            closed_ours: false,
            report: StreamReport::default(),
        }
    }

    /// Payload bytes delivered so far, as the report counts them.
    fn delivered(&self, direction: StreamDirection, s: &Stats) -> u64 {
        match direction {
            StreamDirection::Send => s.bytes_acked.min(self.queued),
            StreamDirection::Recv => self.received,
        }
    }

    /// The counts an interval report starts from: live while the connection runs, the
    /// final report's once it is finished.
    fn cumulative(&self, direction: StreamDirection, ep: &Endpoint) -> Cumulative {
        let (bytes, stats) = if self.phase == Phase::Finished {
            (self.report.bytes, self.report.stats.clone())
        } else {
            match self.id.and_then(|id| ep.conn(id)) {
                Some(c) => {
                    let s = c.stats();
                    (self.delivered(direction, &s), Some(s))
                }
                None => (self.report.bytes, None),
            }
        };
        let s = stats.unwrap_or_default();
        Cumulative {
            bytes,
            retransmits: s.retransmitted_segs,
            cwnd_bytes: s.cwnd_bytes,
            srtt: s.srtt,
        }
    }

    /// Whether this stream's data is over (it may still be closing).
    fn data_done(&self) -> bool {
        matches!(self.phase, Phase::Closing | Phase::Finished)
    }

    /// Queues as much data as the send buffer takes.
    fn fill(&mut self, sh: &mut Shared, now: Instant, ep: &mut Endpoint) {
        let id = self.id.expect("connection");
        let limit = self.limit_bytes;
        loop {
            if self.queued >= limit || sh.time_up(now) {
                return;
            }
            let Some(c) = ep.conn_mut(id) else { return };
            if c.send_capacity() == 0 {
                return;
            }
            let want = (limit - self.queued).min(c.send_capacity() as u64) as usize;
            let n = if let Some(file) = sh.file.as_mut() {
                if sh.file_pos == sh.file_len {
                    if sh.source_eof {
                        return;
                    }
                    match file.read(&mut sh.file_buf) {
                        Ok(0) => {
                            sh.source_eof = true;
                            return;
                        }
                        Ok(k) => {
                            sh.file_pos = 0;
                            sh.file_len = k;
                        }
                        Err(e) => {
                            sh.file_error = Some(format!("reading the source file: {e}"));
                            sh.source_eof = true;
                            return;
                        }
                    }
                }
                let end = sh.file_len.min(sh.file_pos + want);
                let n = c.send(&sh.file_buf[sh.file_pos..end]).unwrap_or(0);
                sh.file_pos += n;
                n
            } else {
                let n = c.send(sh.ring.peek_at(self.ring_off, want)).unwrap_or(0);
                self.ring_off = sh.ring.advance_from(self.ring_off, n);
                n
            };
            if n == 0 {
                return;
            }
            self.queued += n as u64;
        }
    }

    fn sender_finished_queueing(&self, sh: &Shared, now: Instant) -> bool {
        self.queued >= self.limit_bytes || sh.time_up(now) || sh.source_eof
    }

    /// Reads (or discards) what has arrived.
    fn drain(&mut self, sh: &mut Shared, ep: &mut Endpoint) {
        let id = self.id.expect("connection");
        let Some(c) = ep.conn_mut(id) else { return };
        if let Some(sink) = sh.sink.as_mut() {
            loop {
                match c.recv(&mut sh.rbuf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        self.received += n as u64;
                        if let Err(e) = sink.write_all(&sh.rbuf[..n]) {
                            if sh.file_error.is_none() {
                                sh.file_error = Some(format!("writing the output file: {e}"));
                            }
                        }
                    }
                }
            }
        } else {
            self.received += c.recv_discard(usize::MAX) as u64;
        }
    }

    fn finish(&mut self, sh: &mut Shared, ep: &mut Endpoint) {
        if let Some(id) = self.id {
            if let Some(c) = ep.conn(id) {
                let s = c.stats();
                self.report.final_state = Some(c.state());
                if self.report.error.is_none() {
                    self.report.error = c.error().map(Into::into);
                }
                self.report.local = Some(c.local());
                self.report.remote = Some(c.remote());
                self.report.bytes = self.delivered(sh.opts.direction, &s);
                self.report.stats = Some(s);
            }
        }
        if let Some(s) = sh.sink.as_mut() {
            if let Err(e) = s.flush() {
                sh.file_error = Some(format!("writing the output file: {e}"));
            }
        }
        self.phase = Phase::Finished;
    }

    /// The data is over at `now`: the elapsed time stops.
    fn mark_done(&mut self, now: Instant) {
        self.done_at = now;
        self.report.elapsed = now - self.established_at;
        self.phase = Phase::Closing;
    }

    /// One turn of this stream (the former single-stream `poll`).
    fn poll(&mut self, sh: &mut Shared, now: Instant, ep: &mut Endpoint) {
        if self.phase == Phase::Finished {
            return;
        }
        let connecting = matches!(sh.opts.role, StreamRole::Connect(_));
        let Some(id) = self.id else {
            // Listening, and no connection for this stream yet.
            return;
        };
        let Some(c) = ep.conn(id) else {
            self.report.error = Some(CloseError::NoSuchConnection.into());
            return self.finish(sh, ep);
        };
        let state = c.state();
        if let Some(e) = c.error() {
            self.report.error = Some(e.into());
            if self.phase == Phase::Transfer {
                self.report.elapsed = now - self.established_at;
            }
            return self.finish(sh, ep);
        }
        if self.phase == Phase::Opening {
            if state.is_synchronized() && state != State::SynReceived {
                self.phase = Phase::Transfer;
                self.established_at = now;
                let t0 = *sh.test_start.get_or_insert(now);
                self.report.start = Some(now - t0);
                if connecting {
                    self.report.connect_time = Some(now - sh.started_at);
                }
            } else if connecting && now >= sh.started_at + sh.opts.connect_timeout {
                ep.abort(id);
                self.report.error = Some(ConnectionError::TimedOut.into());
                return self.finish(sh, ep);
            } else if state == State::Closed {
                return self.finish(sh, ep);
            } else {
                return;
            }
        }
        match sh.opts.direction {
            StreamDirection::Send => {
                self.drain(sh, ep);
                if self.phase == Phase::Transfer {
                    self.fill(sh, now, ep);
                    if !self.closed_ours && self.sender_finished_queueing(sh, now) {
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
                        return self.finish(sh, ep);
                    }
                }
            }
            StreamDirection::Recv => {
                if self.phase == Phase::Closing || now >= self.established_at + sh.opts.recv_stall {
                    self.drain(sh, ep);
                }
                if self.phase == Phase::Transfer {
                    let eof = ep.conn(id).is_some_and(|c| c.is_eof());
                    if eof {
                        self.mark_done(now);
                        if let Some(c) = ep.conn_mut(id) {
                            let _ = c.close();
                        }
                        self.closed_ours = true;
                    } else if self.received >= self.limit_bytes || sh.time_up(now) {
                        // Our count is complete but a bulk source keeps sending: end the
                        // test with a reset (netperf's MAERTS stops its sender through its
                        // control connection; a plain TCP peer has only this).
                        self.mark_done(now);
                        self.report.completed = true;
                        self.finish(sh, ep);
                        ep.abort(id);
                        return;
                    }
                }
            }
        }
        if self.phase == Phase::Closing {
            let state = ep.conn(id).map(|c| c.state());
            let clean = matches!(state, Some(State::TimeWait | State::Closed));
            if clean {
                self.report.completed = true;
                return self.finish(sh, ep);
            }
            if now >= self.done_at + sh.opts.linger {
                // The peer did not finish its side in time (a receiver whose sender keeps
                // going, or a peer that never closes): reset.
                let bytes_done = match sh.opts.direction {
                    StreamDirection::Send => true,
                    StreamDirection::Recv => self.received >= self.limit_bytes || sh.time_up(now),
                };
                self.report.completed = bytes_done && state == Some(State::FinWait2);
                self.finish(sh, ep);
                // A sender whose FIN was acknowledged leaves the peer to close in its own
                // time; anything else (above all a receiver whose peer keeps sending) is
                // reset, so the Linux side is not left sending into a device that is gone.
                let peer_done = ep.conn(id).is_some_and(|c| c.is_eof());
                if !(state == Some(State::FinWait2)
                    && (sh.opts.direction == StreamDirection::Send || peer_done))
                {
                    ep.abort(id);
                }
            }
        }
    }

    /// The next time this stream wants a turn, if later than `after`.
    fn deadline(&self, sh: &Shared, after: Instant) -> Option<Instant> {
        let connecting = matches!(sh.opts.role, StreamRole::Connect(_));
        let later = |t: Instant| (t > after).then_some(t);
        match self.phase {
            Phase::Opening if connecting => later(sh.started_at + sh.opts.connect_timeout),
            Phase::Transfer => {
                let end = match (sh.opts.limit, sh.test_start) {
                    (Limit::Time(d), Some(t0)) => later(t0 + d),
                    _ => None,
                };
                let stall = (sh.opts.recv_stall > Duration::ZERO)
                    .then(|| self.established_at + sh.opts.recv_stall)
                    .and_then(later);
                end.into_iter().chain(stall).min()
            }
            Phase::Closing => later(self.done_at + sh.opts.linger),
            _ => None,
        }
    }
}

/// What [`StreamApp::on_interval`] calls with each interval report.
pub type OnInterval = Box<dyn FnMut(&Interval<'_>)>;

/// A netperf-style bulk transfer over one connection, or iperf3-style over several at
/// once (`parallel`), with interval reports.
pub struct StreamApp {
    sh: Shared,
    started: bool,
    streams: Vec<Stream>,
    meter: Option<IntervalMeter>,
    /// Scratch for the interval reports (one per stream): no allocation per interval here.
    totals: Vec<Cumulative>,
    last_now: Instant,
    /// Called with each interval report as it ends (printing is the caller's: the app
    /// formats nothing). Once per interval, never per packet.
    pub on_interval: Option<OnInterval>,
    /// Every interval report, when [`StreamOptions::keep_intervals`] is set.
    pub intervals: Vec<IntervalRecord>,
}

impl StreamApp {
    /// # Errors
    /// The source or sink file cannot be opened; `parallel` is outside 1 to
    /// [`MAX_PARALLEL`] or a file is given with more than one stream (`InvalidInput`).
    pub fn new(opts: StreamOptions) -> std::io::Result<StreamApp> {
        let invalid = |m: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, m);
        if !(1..=MAX_PARALLEL).contains(&opts.parallel) {
            return Err(invalid(format!(
                "{} parallel streams: expected 1 to {MAX_PARALLEL}",
                opts.parallel
            )));
        }
        if opts.parallel > 1 && (opts.source_file.is_some() || opts.sink_file.is_some()) {
            return Err(invalid(
                "a source or sink file is for one stream, not parallel ones".into(),
            ));
        }
        if opts.interval == Some(Duration::ZERO) {
            return Err(invalid("an interval must be longer than zero".into()));
        }
        let file = match &opts.source_file {
            Some(p) => Some(File::open(p)?),
            None => None,
        };
        let sink = match &opts.sink_file {
            Some(p) => Some(std::io::BufWriter::with_capacity(1 << 20, File::create(p)?)),
            None => None,
        };
        let n = opts.parallel as u64;
        let streams = (0..n)
            .map(|k| {
                Stream::new(match opts.limit {
                    Limit::Bytes(b) => b / n + u64::from(k < b % n),
                    _ => u64::MAX,
                })
            })
            .collect();
        let one = opts.parallel == 1;
        Ok(StreamApp {
            totals: vec![Cumulative::default(); opts.parallel],
            sh: Shared {
                opts,
                started_at: Instant::ZERO,
                test_start: None,
                ring: PatternRing::new(256 * 1024),
                file,
                file_buf: vec![0; 256 * 1024],
                file_pos: 0,
                file_len: 0,
                source_eof: false,
                sink,
                // Only a sink file reads into it (one stream); discarding needs no buffer.
                rbuf: vec![0; if one { 256 * 1024 } else { 0 }],
                file_error: None,
            },
            started: false,
            streams,
            meter: None,
            last_now: Instant::ZERO,
            on_interval: None,
            intervals: Vec::new(),
        })
    }

    /// Each stream's report, stream 1 first.
    pub fn reports(&self) -> impl ExactSizeIterator<Item = &StreamReport> + '_ {
        self.streams.iter().map(|s| &s.report)
    }

    /// The first stream's report (the only one without `parallel`).
    pub fn report(&self) -> &StreamReport {
        &self.streams[0].report
    }

    /// I/O errors of the source or sink file.
    pub fn file_error(&self) -> Option<&str> {
        self.sh.file_error.as_deref()
    }

    /// The whole test: payload bytes of all streams, and the time from the first
    /// connection established to the last stream's data end.
    pub fn total(&self) -> (u64, Duration) {
        let bytes = self.streams.iter().map(|s| s.report.bytes).sum();
        let end = self
            .streams
            .iter()
            .filter_map(|s| s.report.end())
            .max()
            .unwrap_or(Duration::ZERO);
        (bytes, end)
    }

    /// Hands out the interval ending `now` (the last one if `last`), if one is due.
    fn report_interval(&mut self, now: Instant, ep: &Endpoint, last: bool) {
        let Some(m) = self.meter.as_mut() else { return };
        if !(last || m.due(now)) || m.is_closed() {
            return;
        }
        let direction = self.sh.opts.direction;
        for (t, s) in self.totals.iter_mut().zip(&self.streams) {
            *t = s.cumulative(direction, ep);
        }
        if let Some(i) = m.take(now, &self.totals, last) {
            if let Some(f) = self.on_interval.as_mut() {
                f(&i);
            }
            if self.sh.opts.keep_intervals {
                self.intervals.push(i.to_record());
            }
        }
    }

    fn start(&mut self, now: Instant, ep: &mut Endpoint) {
        self.started = true;
        self.sh.started_at = now;
        let cfg = &self.sh.opts.tcp;
        match self.sh.opts.role {
            StreamRole::Connect(to) => {
                for s in &mut self.streams {
                    match ep.connect(now, to, cfg.clone()) {
                        Ok(id) => s.id = Some(id),
                        Err(e) => {
                            s.report.error = Some(e.into());
                            s.phase = Phase::Finished;
                        }
                    }
                }
            }
            StreamRole::Listen(port) => {
                let backlog = self.streams.len().max(8);
                if let Err(e) = ep.listen(port, cfg.clone(), backlog) {
                    for s in &mut self.streams {
                        s.report.error = Some(e.into());
                        s.phase = Phase::Finished;
                    }
                }
            }
        }
    }
}

impl App for StreamApp {
    fn poll(&mut self, now: Instant, ep: &mut Endpoint) -> Control {
        self.last_now = now;
        if !self.started {
            self.start(now, ep);
        }
        if let StreamRole::Listen(port) = self.sh.opts.role {
            // One test per run: connections past `parallel` are refused with a RST.
            while let Some(id) = ep.accept(port) {
                match self
                    .streams
                    .iter_mut()
                    .find(|s| s.id.is_none() && s.phase == Phase::Opening)
                {
                    Some(s) => s.id = Some(id),
                    None => ep.abort(id),
                }
            }
        }
        let started = self.sh.test_start.is_some();
        for s in &mut self.streams {
            s.poll(&mut self.sh, now, ep);
        }
        if let (false, Some(t0), Some(every)) = (started, self.sh.test_start, self.sh.opts.interval)
        {
            self.meter = Some(IntervalMeter::new(t0, every, self.streams.len()));
        }
        let all_done = self.streams.iter().all(Stream::data_done);
        self.report_interval(now, ep, all_done);
        if self.streams.iter().all(|s| s.phase == Phase::Finished) {
            return Control::Done;
        }
        Control::Continue
    }

    fn shutdown(&mut self, now: Instant, ep: &mut Endpoint) {
        for s in &mut self.streams {
            s.report.interrupted = true;
            if s.phase == Phase::Transfer {
                s.report.elapsed = now - s.established_at;
            }
            if let Some(id) = s.id {
                if s.phase != Phase::Finished {
                    s.finish(&mut self.sh, ep);
                }
                ep.abort(id);
            }
            s.phase = Phase::Finished;
        }
        self.report_interval(now, ep, true);
    }

    fn deadline(&self) -> Option<Instant> {
        // A time already past was handled by the poll that ran at `last_now`; returning it
        // would spin the loop.
        let after = self.last_now;
        self.streams
            .iter()
            .filter_map(|s| s.deadline(&self.sh, after))
            .chain(
                self.meter
                    .as_ref()
                    .and_then(IntervalMeter::next_boundary)
                    .filter(|t| *t > after),
            )
            .min()
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
    use ackclock_tcp::EndpointConfig;
    use std::net::Ipv4Addr;

    const OURS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const THEIRS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    /// Small buffers keep the packet count of a zero-delay exchange small.
    fn tcp() -> TcpConfig {
        TcpConfig {
            send_buffer_bytes: 8 * 1024,
            recv_buffer_bytes: 8 * 1024,
            ..TcpConfig::default()
        }
    }

    /// Two endpoints joined by a lossless zero-delay wire, each driven by an app as a host
    /// loop drives it, in 1 ms steps of virtual time, for at most `limit`. Returns whether
    /// each app finished.
    fn run_pair(a: &mut dyn App, b: &mut dyn App, limit: Duration) -> (bool, bool) {
        let mut ea = Endpoint::new(EndpointConfig::new(OURS, [1; 16]));
        let mut eb = Endpoint::new(EndpointConfig::new(THEIRS, [2; 16]));
        let mut buf = vec![0u8; 65_536];
        let (mut a_done, mut b_done) = (false, false);
        let mut now = Instant::ZERO;
        while now < Instant::ZERO + limit && !(a_done && b_done) {
            for ep in [&mut ea, &mut eb] {
                if ep.poll_timeout().is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
            if !a_done {
                a_done = a.poll(now, &mut ea) == Control::Done;
            }
            if !b_done {
                b_done = b.poll(now, &mut eb) == Control::Done;
            }
            for _ in 0..10_000 {
                let mut moved = false;
                while let Some(t) = ea.poll_transmit(now, &mut buf) {
                    eb.handle_packet(now, &buf[..t.len]);
                    moved = true;
                }
                while let Some(t) = eb.poll_transmit(now, &mut buf) {
                    ea.handle_packet(now, &buf[..t.len]);
                    moved = true;
                }
                if !moved {
                    break;
                }
            }
            now += Duration::from_millis(1);
        }
        (a_done, b_done)
    }

    /// Checks a test's interval reports against its final reports: the intervals tile the
    /// test from 0 to its end; each stream's interval bytes add up to its final bytes.
    /// Returns the number of intervals.
    fn check_intervals(app: &StreamApp) -> usize {
        let reports: Vec<&StreamReport> = app.reports().collect();
        let mut sums = vec![0u64; reports.len()];
        let mut t = Duration::ZERO;
        for (k, i) in app.intervals.iter().enumerate() {
            assert_eq!(i.index, k);
            assert_eq!(i.start, t, "interval {k} starts where the last ended");
            assert!(i.end >= i.start);
            t = i.end;
            assert_eq!(i.streams.len(), reports.len());
            for (s, b) in i.streams.iter().zip(&mut sums) {
                *b += s.bytes;
            }
            assert_eq!(i.last, k + 1 == app.intervals.len());
        }
        for (k, (r, b)) in reports.iter().zip(&sums).enumerate() {
            assert_eq!(
                *b,
                r.bytes,
                "stream {}: interval bytes vs final bytes",
                k + 1
            );
        }
        let (bytes, end) = app.total();
        assert_eq!(bytes, sums.iter().sum::<u64>());
        assert_eq!(t, end, "the last interval ends with the data");
        app.intervals.len()
    }

    #[test]
    fn four_parallel_senders_report_intervals_that_add_up() {
        let mut o = StreamOptions::new(
            StreamRole::Connect(SocketAddrV4::new(THEIRS, 5001)),
            StreamDirection::Send,
            tcp(),
        );
        o.parallel = 4;
        o.limit = Limit::Time(Duration::from_millis(3000));
        o.interval = Some(Duration::from_secs(1));
        o.keep_intervals = true;
        let mut app = StreamApp::new(o).unwrap();
        let seen = std::rc::Rc::new(std::cell::Cell::new(0));
        let s2 = seen.clone();
        app.on_interval = Some(Box::new(move |i: &Interval<'_>| {
            assert_eq!(i.streams.len(), 4);
            s2.set(s2.get() + 1);
        }));
        let mut sink = ServicesApp::new(
            vec![(5001, Service::Discard)],
            ServiceOptions {
                tcp: tcp(),
                max_conns: Some(4),
                chargen_bytes: None,
                print: false,
                backlog: 8,
            },
        );
        let (a, b) = run_pair(&mut app, &mut sink, Duration::from_secs(20));
        assert!(a && b, "both sides finish");
        let ports: std::collections::HashSet<u16> =
            app.reports().map(|r| r.local.unwrap().port()).collect();
        assert_eq!(ports.len(), 4, "four connections from four local ports");
        for r in app.reports() {
            assert!(r.completed && r.error.is_none(), "{r:?}");
            assert!(r.bytes > 100_000, "{}", r.bytes);
            assert_eq!(r.remote, Some(SocketAddrV4::new(THEIRS, 5001)));
        }
        let n = check_intervals(&app);
        assert_eq!(seen.get(), n, "every interval went to the callback");
        // Three whole seconds on the 1 s grid (every stream connects in the first turn, so
        // the test starts on a step), then the data acknowledged after the time was up.
        assert!(n >= 3, "{n} intervals");
        for (k, i) in app.intervals.iter().take(3).enumerate() {
            assert_eq!(i.end, Duration::from_secs(k as u64 + 1));
            assert!(i.streams.iter().all(|s| s.bytes > 0), "{i:?}");
        }
        // What the discard server counted is what our reports say was delivered.
        let served: u64 = sink.finished.iter().map(|c| c.bytes_in).sum();
        assert_eq!(served, app.total().0);
    }

    #[test]
    fn a_parallel_listener_takes_n_connections_and_refuses_more() {
        // Ours listens and receives; the other side runs four senders of 300 KB each, one
        // more than we take.
        let mut o = StreamOptions::new(StreamRole::Listen(5001), StreamDirection::Recv, tcp());
        o.parallel = 3;
        o.interval = Some(Duration::from_millis(50));
        o.keep_intervals = true;
        let mut app = StreamApp::new(o).unwrap();
        let mut o = StreamOptions::new(
            StreamRole::Connect(SocketAddrV4::new(OURS, 5001)),
            StreamDirection::Send,
            tcp(),
        );
        o.parallel = 4;
        o.limit = Limit::Bytes(4 * 300_000 + 3);
        let mut senders = StreamApp::new(o).unwrap();
        let (a, b) = run_pair(&mut app, &mut senders, Duration::from_secs(20));
        assert!(a && b, "both sides finish");
        for r in app.reports() {
            assert!(r.completed, "{r:?}");
            // The byte limit is a total, shared out: the first three take one more byte.
            assert_eq!(r.bytes, 300_001);
        }
        let refused = senders.reports().filter(|r| r.error.is_some()).count();
        assert_eq!(refused, 1, "the fourth connection is reset");
        assert!(check_intervals(&app) >= 3);
    }

    #[test]
    fn parallel_streams_are_bounded_and_files_are_for_one_stream() {
        let mut o = StreamOptions::new(StreamRole::Listen(1), StreamDirection::Recv, tcp());
        for bad in [0, MAX_PARALLEL + 1] {
            o.parallel = bad;
            let e = StreamApp::new(o.clone()).err().unwrap();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{bad}");
        }
        o.parallel = MAX_PARALLEL;
        assert!(StreamApp::new(o.clone()).is_ok());
        o.parallel = 2;
        o.sink_file = Some("/dev/null".into());
        assert!(StreamApp::new(o).is_err());
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
