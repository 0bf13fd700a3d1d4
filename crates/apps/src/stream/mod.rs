//! A netperf-style bulk test over one connection, or iperf3-style over several at once,
//! with interval reports ([`StreamApp`]), and its reports as text and as iperf3 -J-shaped
//! JSON ([`report`]). `ackclock stream` runs it live against Linux; it runs in the
//! simulator as any other [`App`].

pub mod interval;
pub mod report;

use crate::services::PatternRing;
use crate::{App, Ctx};
use ackclock_tcp::{
    CloseError, ConnId, ConnectionError, Endpoint, State, Stats, TcpConfig, TcpError,
};
use ackclock_wire::{Duration, Instant};
use interval::{Cumulative, Interval, IntervalMeter, IntervalRecord};
use std::fs::File;
use std::io::{Read, Write};
use std::net::SocketAddrV4;

/// Which side opens the connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamRole {
    /// Connect to this address (an active open).
    Connect(SocketAddrV4),
    /// Listen on this port and take the connections that arrive.
    Listen(u16),
}

/// Which way the data flows, in netperf's terms: `Send` is TCP_STREAM (we send), `Recv` is
/// TCP_MAERTS (we receive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamDirection {
    /// We send (netperf's TCP_STREAM).
    Send,
    /// We receive (netperf's TCP_MAERTS).
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
    /// Who opens the connections.
    pub role: StreamRole,
    /// Which way the data flows.
    pub direction: StreamDirection,
    /// How long the test runs.
    pub limit: Limit,
    /// The TCP configuration of every connection.
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
    /// A test of one stream with no limit, interval reports or files.
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
    /// Our address, once connected.
    pub local: Option<SocketAddrV4>,
    /// The peer's address, once connected.
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
    /// A signal stopped the test.
    pub interrupted: bool,
    /// The connection state when we stopped.
    pub final_state: Option<State>,
}

impl StreamReport {
    /// Payload bits per second over `elapsed`.
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
            pacing_rate_bps: s.pacing_rate_bps,
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
pub type OnInterval = Box<dyn FnMut(&Interval<'_>) + Send>;

/// A netperf-style bulk transfer over one connection, or iperf3-style over several at
/// once (`parallel`), with interval reports.
pub struct StreamApp {
    sh: Shared,
    started: bool,
    /// Its port is open (a listening test).
    listening: bool,
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
            listening: false,
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
            StreamRole::Listen(_) if self.listening => {}
            StreamRole::Listen(_) => {
                if let Err(e) = self.listen_now(ep) {
                    for s in &mut self.streams {
                        s.report.error = Some(e);
                        s.phase = Phase::Finished;
                    }
                }
            }
        }
    }

    /// A listening test listens now rather than at its first poll, so that a client the
    /// caller lets in after this (once it has said "listening") never meets a port that is
    /// not open yet. Does nothing for a connecting test.
    ///
    /// # Errors
    /// The port is taken.
    pub fn listen_now(&mut self, ep: &mut Endpoint) -> Result<(), TcpError> {
        let StreamRole::Listen(port) = self.sh.opts.role else {
            return Ok(());
        };
        if self.listening {
            return Ok(());
        }
        let backlog = self.streams.len().max(8);
        ep.listen(port, self.sh.opts.tcp.clone(), backlog)?;
        self.listening = true;
        Ok(())
    }
}

impl StreamApp {
    /// The next time a stream wants a turn or an interval ends, if later than the last
    /// poll (a time already past was that poll's business; returning it would spin a loop).
    fn deadline(&self) -> Option<Instant> {
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

impl App for StreamApp {
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant> {
        let (now, ep) = (cx.now, &mut *cx.ep);
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
        self.deadline()
    }

    fn is_done(&self) -> bool {
        self.streams.iter().all(|s| s.phase == Phase::Finished)
    }

    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        let (now, ep) = (cx.now, &mut *cx.ep);
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

    fn conn(&self) -> Option<ConnId> {
        self.streams.first().and_then(|s| s.id)
    }

    fn bytes(&self) -> u64 {
        self.streams.iter().map(|s| s.report.bytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::{Service, ServiceOptions, ServicesApp};
    use crate::testing::{OURS, THEIRS};

    /// Small buffers keep the packet count of a zero-delay exchange small.
    fn tcp() -> TcpConfig {
        TcpConfig {
            send_buffer_bytes: 8 * 1024,
            recv_buffer_bytes: 8 * 1024,
            ..TcpConfig::default()
        }
    }

    fn run_pair(a: &mut dyn App, b: &mut dyn App, limit: Duration) -> (bool, bool) {
        crate::testing::run_pair(a, b, Duration::ZERO, limit)
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
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s2 = seen.clone();
        app.on_interval = Some(Box::new(move |i: &Interval<'_>| {
            assert_eq!(i.streams.len(), 4);
            s2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
        assert_eq!(
            seen.load(std::sync::atomic::Ordering::Relaxed),
            n,
            "every interval went to the callback"
        );
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
    fn a_listening_test_listens_now_and_once() {
        use ackclock_tcp::EndpointConfig;
        let mut ep = Endpoint::new(EndpointConfig::new(OURS, [1; 16]));
        let o = StreamOptions::new(StreamRole::Listen(5001), StreamDirection::Recv, tcp());
        let mut app = StreamApp::new(o).unwrap();
        app.listen_now(&mut ep).unwrap();
        // Its first poll does not listen again (which would fail: the port is taken).
        let mut udp = ackclock_dgram::UdpStack::new(ackclock_dgram::UdpConfig::new(OURS));
        app.poll(&mut Ctx::new(Instant::ZERO, &mut ep, &mut udp));
        assert!(app.reports().all(|r| r.error.is_none()));
        assert!(ep.listen(5001, tcp(), 1).is_err(), "the port is open");
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
}
