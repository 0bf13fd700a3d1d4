//! The datagram applications of `ackclock-dgram` as host applications: the NFS- and
//! DNS-like RPC client ([`RpcClientApp`]) and its server ([`RpcServerApp`]), the TFRC /
//! rate-AIMD / fixed-rate stream's sender ([`StreamSenderApp`]) and receiver
//! ([`StreamReceiverApp`]). Each binds its socket on the host's UDP at its first poll and
//! runs there; the same types run in the simulator (a scenario's `rpc`, `dns` and
//! `datagram_stream` flows), on a live TUN host and on Linux's kernel sockets.
//!
//! When each starts and ends is its [`Schedule`]: a scenario starts it at the flow's start
//! and lets its configuration say when it stops issuing or sending; a live command starts
//! it at its first poll and ends it `--time` later (woken there). A live stream also
//! reports its intervals (`-i`). [`report`] holds their text and JSON reports and the
//! figures a simulation summarises.

pub mod report;

pub use report::{DatagramSummary, RpcSummary, StreamSummary};

use crate::{App, Ctx};
use ackclock_dgram::rate::Controller;
use ackclock_dgram::rpc::{RpcClient, RpcClientConfig, RpcServer, IP_UDP_HEADERS};
use ackclock_dgram::stream::{StreamReceiver, StreamSender, StreamSenderConfig};
use ackclock_dgram::{DatagramSocket, DgramError, SocketId, StackSocket, UdpSockets};
use ackclock_wire::{Duration, Instant};
use std::net::SocketAddrV4;

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// When a datagram application starts and ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Start at this time; `None`: at the first poll (a live command).
    pub start: Option<Instant>,
    /// End this long after the start: the application is woken then and is done, its
    /// client or sender having stopped issuing or sending there. `None`: its own
    /// configuration says when it stops (a scenario's `duration_s`), and it is done when
    /// its work is (a client's last request answered), or never (a server).
    pub time: Option<Duration>,
}

impl Schedule {
    /// From the first poll until `time` after it (a live command's `--time`).
    pub fn live(time: Option<Duration>) -> Schedule {
        Schedule { start: None, time }
    }
    /// From `start` on (a scenario's flow).
    pub fn at(start: Instant) -> Schedule {
        Schedule {
            start: Some(start),
            time: None,
        }
    }
}

/// The socket of a datagram application: bound on the host's UDP at its first poll.
#[derive(Clone, Copy, Debug)]
struct Socket {
    port: u16,
    id: Option<SocketId>,
    local: Option<SocketAddrV4>,
    bind_error: Option<DgramError>,
}

impl Socket {
    fn new(port: u16) -> Socket {
        Socket {
            port,
            id: None,
            local: None,
            bind_error: None,
        }
    }
    /// The socket, bound now if it is not yet (`None`: the port could not be bound).
    fn get(&mut self, udp: &mut dyn UdpSockets) -> Option<SocketId> {
        if self.id.is_none() && self.bind_error.is_none() {
            match udp.open(self.port) {
                Ok(id) => {
                    self.id = Some(id);
                    self.local = udp.local_addr(id);
                }
                Err(e) => self.bind_error = Some(e),
            }
        }
        self.id
    }
}

/// What one turn of a [`DatagramPart`] came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// When it next needs to run (arrivals wake it anyway).
    pub wake: Option<Instant>,
    /// Its work is over: its requests, its data or its time are done.
    pub finished: bool,
}

/// The application inside a [`DatagramApp`]: one of the `ackclock-dgram` clients,
/// servers, senders or receivers on one socket.
pub trait DatagramPart: Send {
    /// One turn at `now`; the first one, at `t0`, starts the application. `stop` is the
    /// end of the schedule's time (None: no time limit).
    fn turn(
        &mut self,
        t0: Instant,
        now: Instant,
        stop: Option<Instant>,
        sock: &mut dyn DatagramSocket,
    ) -> Step;
    /// Where the interval reports start, given the first turn `t0` (None: not yet, or
    /// the application has none).
    fn reports_from(&self, _t0: Instant) -> Option<Instant> {
        None
    }
    /// The cumulative counts the interval reports are taken from.
    fn counts(&self) -> Counts {
        Counts::default()
    }
    /// Payload bytes it delivered (a client: the responses; a receiver: the data).
    fn bytes(&self) -> u64 {
        0
    }
    /// When its work finished by itself, if it did.
    fn finished_at(&self) -> Option<Instant> {
        None
    }
    /// Its figures for a simulation's summary.
    fn summary(&self) -> DatagramSummary;
}

/// A datagram application on a socket of its host's UDP: the [`DatagramPart`] `P`, its
/// socket (bound at the first poll, on `port`; 0: an ephemeral one), its [`Schedule`],
/// its interval reports, and how it ended.
pub struct DatagramApp<P> {
    part: P,
    sock: Socket,
    schedule: Schedule,
    started: Option<Instant>,
    ended: Option<Instant>,
    reports: Reports,
    /// A signal stopped it (an RPC client's requests still outstanding were abandoned).
    pub interrupted: bool,
}

impl<P> DatagramApp<P> {
    fn wrap(part: P, port: u16, schedule: Schedule, reports: Reports) -> Self {
        DatagramApp {
            part,
            sock: Socket::new(port),
            schedule,
            started: None,
            ended: None,
            reports,
            interrupted: false,
        }
    }
    /// From the first turn to the end (or to `now` while running).
    pub fn elapsed(&self, now: Instant) -> Duration {
        match self.started {
            Some(t) => self.ended.unwrap_or(now).saturating_since(t),
            None => Duration::ZERO,
        }
    }
    /// The interval reports kept.
    pub fn intervals(&self) -> &[DgramInterval] {
        &self.reports.kept
    }
    /// The interval of its interval reports, if it makes any.
    pub fn interval(&self) -> Option<Duration> {
        self.reports.every
    }
    /// Called with each interval report.
    pub fn on_interval(&mut self, f: OnDgramInterval) {
        self.reports.on_interval = Some(f);
    }
    /// The socket's address once bound.
    pub fn local(&self) -> Option<SocketAddrV4> {
        self.sock.local
    }
    /// Why the socket's port could not be bound (the application is then done at once).
    pub fn bind_error(&self) -> Option<DgramError> {
        self.sock.bind_error
    }
    /// The application inside.
    pub fn part(&self) -> &P {
        &self.part
    }
    /// The port it binds (0: an ephemeral one).
    pub fn port(&self) -> u16 {
        self.sock.port
    }
    /// Binds its socket now rather than at the first poll (a live command names the
    /// socket's address before it starts, and refuses a port in use at once).
    ///
    /// # Errors
    /// The port cannot be bound.
    pub fn bind_now(&mut self, udp: &mut dyn UdpSockets) -> Result<SocketAddrV4, DgramError> {
        self.sock.get(udp);
        match (self.sock.local, self.sock.bind_error) {
            (Some(l), _) => Ok(l),
            (None, Some(e)) => Err(e),
            (None, None) => Err(DgramError::NotBound),
        }
    }
}

impl<P: DatagramPart> DatagramApp<P> {
    /// The end: the last interval report.
    fn end(&mut self, now: Instant) {
        self.ended = Some(now);
        let c = self.part.counts();
        self.reports.tick(now, c, true);
    }
}

impl<P: DatagramPart> App for DatagramApp<P> {
    fn poll(&mut self, cx: &mut Ctx<'_>) -> Option<Instant> {
        let now = cx.now;
        if self.interrupted {
            return None;
        }
        if let Some(s) = self.schedule.start {
            if now < s {
                return Some(s);
            }
        }
        let id = self.sock.get(cx.udp)?;
        let t0 = *self
            .started
            .get_or_insert(self.schedule.start.unwrap_or(now));
        let stop = self.schedule.time.map(|d| t0 + d);
        let mut sock = StackSocket { stack: cx.udp, id };
        let step = self.part.turn(t0, now, stop, &mut sock);
        if let Some(t) = self.part.reports_from(t0) {
            self.reports.start(t);
        }
        if step.finished {
            if self.ended.is_none() {
                self.end(now);
            }
        } else if self.ended.is_none() {
            let c = self.part.counts();
            self.reports.tick(now, c, false);
        }
        if self.ended.is_some() {
            // Done: only what the application itself still asks for (a simulation keeps
            // polling it; a live host has returned).
            return step.wake;
        }
        // A part notices that its time is up only when it runs (an RPC client, and so
        // that it is finished when nothing is outstanding; a sender between two packets):
        // a wake-up at the stop, which it does not ask for itself.
        let stop = stop.filter(|s| *s > now);
        earliest(earliest(step.wake, stop), self.reports.next_boundary())
    }
    fn is_done(&self) -> bool {
        self.ended.is_some() || self.sock.bind_error.is_some()
    }
    fn shutdown(&mut self, cx: &mut Ctx<'_>) {
        if self.ended.is_none() {
            self.interrupted = true;
            self.end(cx.now);
        }
    }
    fn bytes(&self) -> u64 {
        self.part.bytes()
    }
    fn finished_at(&self) -> Option<Instant> {
        self.part.finished_at()
    }
    fn datagram(&self) -> Option<DatagramSummary> {
        Some(self.part.summary())
    }
}

/// An RPC (NFS-like) or query (DNS-like) client: it starts at its schedule's start,
/// issues requests until its request count or its time is up, and is done when the last
/// outstanding request has completed or been given up.
pub type RpcClientApp = DatagramApp<RpcClientPart>;

/// The client inside an [`RpcClientApp`].
pub struct RpcClientPart {
    cfg: RpcClientConfig,
    kind: &'static str,
    client: Option<RpcClient>,
}

impl RpcClientApp {
    /// A client of `cfg.server` on an ephemeral port. `kind` names it in summaries
    /// ("rpc" or "dns"). With a live schedule, `cfg`'s `start` and `stop` are replaced by
    /// the first poll and the schedule's time after it.
    pub fn new(cfg: RpcClientConfig, kind: &'static str, schedule: Schedule) -> Self {
        let part = RpcClientPart {
            cfg,
            kind,
            client: None,
        };
        DatagramApp::wrap(part, 0, schedule, Reports::new(None, false))
    }
    /// The client, once started.
    pub fn client(&self) -> Option<&RpcClient> {
        self.part.client.as_ref()
    }
    /// Its configuration as given.
    pub fn config(&self) -> &RpcClientConfig {
        &self.part.cfg
    }
    /// Requests issued and neither completed nor given up.
    pub fn outstanding(&self) -> u64 {
        self.part.client.as_ref().map_or(0, |c| {
            let s = c.stats();
            s.issued - s.completed - s.failed
        })
    }
}

impl DatagramPart for RpcClientPart {
    fn turn(
        &mut self,
        t0: Instant,
        now: Instant,
        stop: Option<Instant>,
        sock: &mut dyn DatagramSocket,
    ) -> Step {
        let cfg = &self.cfg;
        let client = self.client.get_or_insert_with(|| {
            RpcClient::new(RpcClientConfig {
                start: t0,
                stop: stop.or(cfg.stop),
                ..cfg.clone()
            })
        });
        let wake = client.poll(now, sock);
        Step {
            wake,
            finished: client.finished_at().is_some(),
        }
    }
    fn bytes(&self) -> u64 {
        self.client.as_ref().map_or(0, |c| c.stats().goodput_bytes)
    }
    fn finished_at(&self) -> Option<Instant> {
        self.client.as_ref().and_then(RpcClient::finished_at)
    }
    fn summary(&self) -> DatagramSummary {
        report::client_summary(self.kind, &self.cfg, self.client.as_ref())
    }
}

/// The RPC server: answers until its time is up (or a signal; a scenario's serves for the
/// whole run).
pub type RpcServerApp = DatagramApp<RpcServerPart>;

/// The server inside an [`RpcServerApp`].
pub struct RpcServerPart {
    server: RpcServer,
}

impl RpcServerApp {
    /// `server` on `port`.
    pub fn new(server: RpcServer, port: u16, schedule: Schedule) -> Self {
        DatagramApp::wrap(
            RpcServerPart { server },
            port,
            schedule,
            Reports::new(None, false),
        )
    }
    /// The server.
    pub fn server(&self) -> &RpcServer {
        &self.part.server
    }
}

impl DatagramPart for RpcServerPart {
    fn turn(
        &mut self,
        _t0: Instant,
        now: Instant,
        stop: Option<Instant>,
        sock: &mut dyn DatagramSocket,
    ) -> Step {
        if stop.is_some_and(|e| now >= e) {
            return Step {
                wake: None,
                finished: true,
            };
        }
        Step {
            wake: self.server.poll(now, sock),
            finished: false,
        }
    }
    fn summary(&self) -> DatagramSummary {
        report::server_summary(self.server.stats())
    }
}

/// One interval report of a stream (`-i`): what was sent or received in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DgramInterval {
    /// Its place in the stream's reports, from 0.
    pub index: usize,
    /// Since the stream's start (the sender's first turn, the receiver's first packet).
    pub start: Duration,
    /// Since the stream's start.
    pub end: Duration,
    /// Packets sent or received in it.
    pub packets: u64,
    /// UDP payload bytes.
    pub bytes: u64,
    /// The sender's allowed rate at the interval's end, bit/s (None at a receiver).
    pub allowed_bps: Option<f64>,
    /// The sender's RTT estimate at the interval's end (None at a receiver, or before the
    /// first feedback).
    pub rtt: Option<Duration>,
    /// The loss event rate at the interval's end: the last one the receiver reported (at
    /// the sender) or the receiver's own.
    pub p: f64,
    /// Loss events that began in the interval.
    pub loss_events: u64,
    /// Packets the receiver counted lost in the interval (None at a sender).
    pub lost: Option<u64>,
    /// The last interval (it ends with the stream).
    pub last: bool,
}

impl DgramInterval {
    /// Its length, seconds.
    pub fn seconds(&self) -> f64 {
        self.end.saturating_sub(self.start).as_secs_f64()
    }
    /// The rate in IP bytes (payload and the 28 bytes of IP and UDP header of each
    /// packet), bit/s: what a link counts.
    pub fn ip_bps(&self) -> f64 {
        let s = self.seconds();
        if s > 0.0 {
            (self.bytes + self.packets * IP_UDP_HEADERS as u64) as f64 * 8.0 / s
        } else {
            0.0
        }
    }
}

/// What [`DatagramApp::on_interval`] calls with each interval report of a stream (once per
/// interval, never per packet).
pub type OnDgramInterval = Box<dyn FnMut(&DgramInterval) + Send>;

/// Interval reports on the grid `t0 + k * every`: each interval ends at the first turn at
/// or after its boundary and the next one starts there (as `ackclock stream -i` does), so
/// the intervals tile the stream and their counts add up to its totals.
struct Meter {
    every: Duration,
    t0: Instant,
    next: Instant,
    prev_end: Instant,
    index: usize,
    /// Packets, bytes, loss events and lost packets at the last interval's end.
    at: (u64, u64, u64, u64),
    closed: bool,
}

/// The cumulative counts a stream hands its meter ([`DatagramPart::counts`]).
#[derive(Clone, Copy, Default)]
pub struct Counts {
    packets: u64,
    bytes: u64,
    loss_events: u64,
    lost: u64,
    p: f64,
    allowed_bps: Option<f64>,
    rtt: Option<Duration>,
    receiver: bool,
}

impl Meter {
    fn new(t0: Instant, every: Duration) -> Meter {
        Meter {
            every,
            t0,
            next: t0 + every,
            prev_end: t0,
            index: 0,
            at: (0, 0, 0, 0),
            closed: false,
        }
    }
    /// The next boundary, while reports are still to come.
    fn next_boundary(&self) -> Option<Instant> {
        (!self.closed).then_some(self.next)
    }
    /// The report of the interval ending `now`, if one is due (or `last`).
    fn take(&mut self, now: Instant, c: Counts, last: bool) -> Option<DgramInterval> {
        if self.closed || !(last || now >= self.next) {
            return None;
        }
        let i = DgramInterval {
            index: self.index,
            start: self.prev_end.saturating_since(self.t0),
            end: now.saturating_since(self.t0),
            packets: c.packets - self.at.0,
            bytes: c.bytes - self.at.1,
            allowed_bps: c.allowed_bps,
            rtt: c.rtt,
            p: c.p,
            loss_events: c.loss_events - self.at.2,
            lost: c.receiver.then(|| c.lost - self.at.3),
            last,
        };
        self.at = (c.packets, c.bytes, c.loss_events, c.lost);
        self.index += 1;
        self.prev_end = now;
        let k = now.saturating_since(self.t0).as_nanos() / self.every.as_nanos().max(1) + 1;
        self.next = self.t0 + Duration::from_nanos(k.saturating_mul(self.every.as_nanos()));
        self.closed = last;
        Some(i)
    }
}

/// Interval reports of a stream, handed to a callback and optionally kept.
struct Reports {
    every: Option<Duration>,
    meter: Option<Meter>,
    keep: bool,
    kept: Vec<DgramInterval>,
    on_interval: Option<OnDgramInterval>,
}

impl Reports {
    fn new(every: Option<Duration>, keep: bool) -> Reports {
        Reports {
            every,
            meter: None,
            keep,
            kept: Vec::new(),
            on_interval: None,
        }
    }
    fn start(&mut self, t0: Instant) {
        if let (None, Some(e)) = (&self.meter, self.every) {
            self.meter = Some(Meter::new(t0, e));
        }
    }
    fn tick(&mut self, now: Instant, c: Counts, last: bool) {
        let Some(m) = self.meter.as_mut() else { return };
        if let Some(i) = m.take(now, c, last) {
            if let Some(f) = self.on_interval.as_mut() {
                f(&i);
            }
            if self.keep {
                self.kept.push(i);
            }
        }
    }
    fn next_boundary(&self) -> Option<Instant> {
        self.meter.as_ref().and_then(Meter::next_boundary)
    }
}

/// Settings of a stream's sender or receiver beyond its schedule: idle timeout and
/// interval reports (a live command's flags).
#[derive(Clone, Debug, Default)]
pub struct StreamAppOptions {
    /// The receiver stops once data has arrived and then none for this long.
    pub idle_timeout: Option<Duration>,
    /// Report every this long ([`DgramInterval`]).
    pub interval: Option<Duration>,
    /// Keep every interval report (for a JSON document).
    pub keep_intervals: bool,
}

/// A rate-controlled stream's sender: it starts at its schedule's start and sends until
/// its time or its bytes are done.
pub type StreamSenderApp = DatagramApp<StreamSenderPart>;

/// The sender inside a [`StreamSenderApp`].
pub struct StreamSenderPart {
    cfg: StreamSenderConfig,
    ctl: Option<Controller>,
    sender: Option<StreamSender>,
}

impl StreamSenderApp {
    /// A sender of `cfg` paced by `ctl`, on an ephemeral port. With a live schedule,
    /// `cfg`'s `start` and `stop` are replaced by the first poll and the schedule's time
    /// after it.
    pub fn new(
        cfg: StreamSenderConfig,
        ctl: Controller,
        schedule: Schedule,
        opts: &StreamAppOptions,
    ) -> Self {
        let part = StreamSenderPart {
            cfg,
            ctl: Some(ctl),
            sender: None,
        };
        let reports = Reports::new(opts.interval, opts.keep_intervals);
        DatagramApp::wrap(part, 0, schedule, reports)
    }
    /// The sender, once started.
    pub fn sender(&self) -> Option<&StreamSender> {
        self.part.sender.as_ref()
    }
    /// Its configuration as given.
    pub fn config(&self) -> &StreamSenderConfig {
        &self.part.cfg
    }
}

impl DatagramPart for StreamSenderPart {
    fn turn(
        &mut self,
        t0: Instant,
        now: Instant,
        stop: Option<Instant>,
        sock: &mut dyn DatagramSocket,
    ) -> Step {
        let (cfg, ctl) = (&self.cfg, &mut self.ctl);
        let sender = self.sender.get_or_insert_with(|| {
            StreamSender::new(
                StreamSenderConfig {
                    start: t0,
                    stop: stop.or(cfg.stop),
                    ..cfg.clone()
                },
                ctl.take().unwrap_or(Controller::Fixed(1.0)),
            )
        });
        let wake = sender.poll(now, sock);
        // No next packet: its time or its bytes are done.
        Step {
            wake,
            finished: wake.is_none(),
        }
    }
    fn reports_from(&self, t0: Instant) -> Option<Instant> {
        Some(t0)
    }
    fn counts(&self) -> Counts {
        let (st, ctl) = match &self.sender {
            Some(s) => (s.stats().clone(), Some(s.controller())),
            None => (Default::default(), None),
        };
        Counts {
            packets: st.packets,
            bytes: st.bytes,
            loss_events: st.loss_events,
            lost: 0,
            p: st.p,
            allowed_bps: ctl.map(|c| c.rate() * 8.0),
            rtt: ctl
                .and_then(Controller::rtt)
                .map(|r| Duration::from_secs_f64(r.min(1e6))),
            receiver: false,
        }
    }
    fn bytes(&self) -> u64 {
        self.sender.as_ref().map_or(0, |s| s.stats().bytes)
    }
    fn summary(&self) -> DatagramSummary {
        report::sender_summary(self.sender.as_ref(), self.ctl.as_ref())
    }
}

/// A stream's receiver: it reports to whoever sends to its port, and stops at its time,
/// when data has stopped for its idle timeout, or at a signal (a scenario's receives for
/// the whole run).
pub type StreamReceiverApp = DatagramApp<StreamReceiverPart>;

/// The receiver inside a [`StreamReceiverApp`].
pub struct StreamReceiverPart {
    receiver: StreamReceiver,
    idle_timeout: Option<Duration>,
    first_packet: Option<Instant>,
    last_packet: Option<Instant>,
    /// The sender's address (the source of the first data packet).
    peer: Option<SocketAddrV4>,
}

/// A socket that remembers the source of the datagrams read through it.
struct Tap<'a> {
    inner: &'a mut dyn DatagramSocket,
    from: Option<SocketAddrV4>,
}

impl DatagramSocket for Tap<'_> {
    fn send_to(&mut self, dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.inner.send_to(dst, payload)
    }
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        let r = self.inner.recv_from(buf);
        if let Some((_, from, _)) = r {
            self.from.get_or_insert(from);
        }
        r
    }
}

impl StreamReceiverApp {
    /// A receiver on `port`.
    pub fn new(port: u16, schedule: Schedule, opts: &StreamAppOptions) -> Self {
        let part = StreamReceiverPart {
            receiver: StreamReceiver::new(),
            idle_timeout: opts.idle_timeout,
            first_packet: None,
            last_packet: None,
            peer: None,
        };
        let reports = Reports::new(opts.interval, opts.keep_intervals);
        DatagramApp::wrap(part, port, schedule, reports)
    }
    /// The receiver.
    pub fn receiver(&self) -> &StreamReceiver {
        &self.part.receiver
    }
    /// The sender's address (the source of the first data packet).
    pub fn peer(&self) -> Option<SocketAddrV4> {
        self.part.peer
    }
    /// From the first data packet to the last.
    pub fn data_elapsed(&self) -> Duration {
        match (self.part.first_packet, self.part.last_packet) {
            (Some(a), Some(b)) => b.saturating_since(a),
            _ => Duration::ZERO,
        }
    }
}

impl DatagramPart for StreamReceiverPart {
    fn turn(
        &mut self,
        _t0: Instant,
        now: Instant,
        stop: Option<Instant>,
        sock: &mut dyn DatagramSocket,
    ) -> Step {
        let before = self.receiver.stats().packets;
        let mut tap = Tap {
            inner: sock,
            from: None,
        };
        let wake = self.receiver.poll(now, &mut tap);
        if self.peer.is_none() {
            self.peer = tap.from;
        }
        if self.receiver.stats().packets > before {
            self.first_packet.get_or_insert(now);
            self.last_packet = Some(now);
        }
        let idle_end = self
            .idle_timeout
            .and_then(|d| self.last_packet.map(|t| t + d));
        let finished = stop.is_some_and(|e| now >= e) || idle_end.is_some_and(|e| now >= e);
        // The receiver asks for its next feedback time even when no data came since the
        // last one (a time past: nothing to do; a live host does not wake for it).
        Step {
            wake: earliest(wake, idle_end.filter(|_| !finished)),
            finished,
        }
    }
    /// The reports of a receiver start at its first data packet.
    fn reports_from(&self, _t0: Instant) -> Option<Instant> {
        self.first_packet
    }
    fn counts(&self) -> Counts {
        let st = self.receiver.stats();
        Counts {
            packets: st.packets,
            bytes: st.bytes,
            loss_events: st.loss_events,
            lost: st.lost,
            p: self.receiver.p(),
            allowed_bps: None,
            rtt: None,
            receiver: true,
        }
    }
    fn bytes(&self) -> u64 {
        self.receiver.stats().bytes
    }
    fn summary(&self) -> DatagramSummary {
        report::receiver_summary(&self.receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{run_pair, OURS, THEIRS};
    use ackclock_dgram::rpc::{rpc_rtt_config, Timer};
    use ackclock_dgram::{UdpConfig, UdpStack};
    use ackclock_tcp::{Endpoint, EndpointConfig};

    #[test]
    fn an_rpc_client_app_completes_its_requests_against_the_server_app_and_ends() {
        let cfg = RpcClientConfig {
            requests: Some(50),
            timer: Timer::Adaptive(rpc_rtt_config()),
            ..RpcClientConfig::nfs(SocketAddrV4::new(THEIRS, 2049))
        };
        let mut client = RpcClientApp::new(cfg, "nfs", Schedule::live(None));
        let mut server = RpcServerApp::new(
            RpcServer::new(Duration::ZERO, 64, 1472),
            2049,
            Schedule::live(None),
        );
        let (c_done, s_done) = run_pair(
            &mut client,
            &mut server,
            Duration::from_millis(10),
            Duration::from_secs(10),
        );
        assert!(c_done && !s_done, "the client ends, the server serves on");
        let c = client.client().unwrap();
        assert_eq!(c.stats().completed, 50);
        assert_eq!(c.stats().retransmissions, 0);
        // 20 ms each, in whole 1 ms ticks (the estimator's G), give or take the 1 ms steps.
        let srtt = c.srtt().as_nanos() as f64 / 1e6;
        assert!((20.0..=22.0).contains(&srtt), "{srtt} ms");
        assert_eq!(client.local(), Some(SocketAddrV4::new(OURS, 49152)));
        assert_eq!(server.server().stats().requests, 50);
        assert_eq!(client.outstanding(), 0);
        assert!(!client.interrupted);
        // 50 requests, 4 at a time, 20 ms each: about 13 rounds.
        let e = client.elapsed(Instant::ZERO + Duration::from_secs(10));
        assert!(
            e >= Duration::from_millis(240) && e <= Duration::from_millis(300),
            "{e:?}"
        );
    }

    /// A query client given a time ends at that time when its last query was answered
    /// before it: the loop wakes it at the stop (the client itself asks for no wake-up
    /// there, and an idle client would otherwise sleep until some datagram came).
    #[test]
    fn a_timed_query_client_ends_at_its_time() {
        let cfg = RpcClientConfig {
            arrivals: ackclock_dgram::rpc::Arrivals::Poisson {
                per_sec: 20.0,
                backlog: 100,
            },
            ..RpcClientConfig::dns(SocketAddrV4::new(THEIRS, 53))
        };
        let mut client =
            RpcClientApp::new(cfg, "dns", Schedule::live(Some(Duration::from_secs(1))));
        let mut server = RpcServerApp::new(
            RpcServer::new(Duration::ZERO, 64, 1472),
            53,
            Schedule::live(None),
        );
        let (c_done, _) = run_pair(
            &mut client,
            &mut server,
            Duration::from_millis(2),
            Duration::from_secs(10),
        );
        assert!(c_done);
        let st = client.client().unwrap().stats().clone();
        assert!(st.issued > 5 && st.completed == st.issued, "{st:?}");
        let e = client.elapsed(Instant::ZERO + Duration::from_secs(10));
        assert!(
            e >= Duration::from_secs(1) && e <= Duration::from_millis(1010),
            "{e:?}"
        );
    }

    #[test]
    fn a_port_in_use_ends_the_run_with_the_bind_error() {
        let mut udp = UdpStack::new(UdpConfig::new(OURS));
        let mut ep = Endpoint::new(EndpointConfig::new(OURS, [1; 16]));
        udp.bind(2049).unwrap();
        let mut server = RpcServerApp::new(
            RpcServer::new(Duration::ZERO, 64, 1472),
            2049,
            Schedule::live(None),
        );
        assert_eq!(
            server.poll(&mut Ctx::new(Instant::ZERO, &mut ep, &mut udp)),
            None
        );
        assert!(server.is_done());
        assert_eq!(server.bind_error(), Some(DgramError::PortInUse(2049)));
    }

    /// Checks a stream's interval reports: they tile it from 0 (each starts where the last
    /// ended, the boundaries on the grid or at the end) and add up to its totals.
    fn check_intervals(iv: &[DgramInterval], packets: u64, bytes: u64, every: Duration) {
        assert!(!iv.is_empty());
        let mut t = Duration::ZERO;
        for (k, i) in iv.iter().enumerate() {
            assert_eq!(i.index, k);
            assert_eq!(i.start, t, "interval {k} starts where the last ended");
            assert!(i.end >= i.start);
            if !i.last {
                // Ends at the first 1 ms step at or after its boundary.
                let boundary = Duration::from_nanos(every.as_nanos() * (k as u64 + 1));
                assert!(i.end >= boundary && i.end < boundary + Duration::from_millis(2));
            }
            assert_eq!(i.last, k + 1 == iv.len());
            t = i.end;
        }
        assert_eq!(iv.iter().map(|i| i.packets).sum::<u64>(), packets);
        assert_eq!(iv.iter().map(|i| i.bytes).sum::<u64>(), bytes);
    }

    #[test]
    fn stream_interval_reports_tile_the_stream_and_add_up_to_its_totals() {
        let every = Duration::from_millis(500);
        let opts = StreamAppOptions {
            idle_timeout: Some(Duration::from_millis(300)),
            interval: Some(every),
            keep_intervals: true,
        };
        // 800 kbit/s of 1028-byte IP packets: about 97 a second.
        let mut tx = StreamSenderApp::new(
            StreamSenderConfig {
                dst: SocketAddrV4::new(THEIRS, 5004),
                packet_bytes: 1000,
                start: Instant::ZERO,
                stop: None,
                bytes: None,
            },
            Controller::Fixed(100_000.0),
            Schedule::live(Some(Duration::from_millis(2300))),
            &opts,
        );
        let mut rx = StreamReceiverApp::new(5004, Schedule::live(None), &opts);
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let s2 = seen.clone();
        rx.on_interval(Box::new(move |_| {
            s2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }));
        let (t_done, r_done) = run_pair(
            &mut tx,
            &mut rx,
            Duration::from_millis(5),
            Duration::from_secs(10),
        );
        assert!(
            t_done && r_done,
            "the sender at its time, the receiver when idle"
        );
        let st = tx.sender().unwrap().stats().clone();
        assert!((220..=226).contains(&st.packets), "{}", st.packets);
        check_intervals(tx.intervals(), st.packets, st.bytes, every);
        assert_eq!(
            tx.intervals().last().unwrap().end,
            Duration::from_millis(2300)
        );
        let rs = rx.receiver().stats().clone();
        assert_eq!((rs.packets, rs.lost), (st.packets, 0));
        check_intervals(rx.intervals(), rs.packets, rs.bytes, every);
        assert_eq!(
            seen.load(std::sync::atomic::Ordering::Relaxed),
            rx.intervals().len()
        );
        assert_eq!(rx.peer(), tx.local());
        // First packet to last at about 97 a second; then 300 ms idle ended it.
        let e = rx.data_elapsed().as_secs_f64();
        assert!((2.2..=2.31).contains(&e), "{e}");
        let rate = tx.intervals()[1].ip_bps();
        assert!((0.95 * 800e3..=1.05 * 800e3).contains(&rate), "{rate}");
        assert!(!tx.interrupted && !rx.interrupted);
    }

    #[test]
    fn a_signal_ends_every_app_at_once() {
        let t = Instant::ZERO + Duration::from_secs(1);
        let mut udp = UdpStack::new(UdpConfig::new(OURS));
        let mut ep = Endpoint::new(EndpointConfig::new(OURS, [1; 16]));
        let opts = StreamAppOptions {
            idle_timeout: None,
            interval: Some(Duration::from_millis(100)),
            keep_intervals: true,
        };
        let live = Schedule::live(None);
        let mut apps: Vec<Box<dyn App>> = vec![
            Box::new(RpcClientApp::new(
                RpcClientConfig::dns(SocketAddrV4::new(THEIRS, 53)),
                "dns",
                live,
            )),
            Box::new(RpcServerApp::new(
                RpcServer::new(Duration::ZERO, 64, 1472),
                0,
                live,
            )),
            Box::new(StreamSenderApp::new(
                StreamSenderConfig {
                    dst: SocketAddrV4::new(THEIRS, 5004),
                    packet_bytes: 100,
                    start: Instant::ZERO,
                    stop: None,
                    bytes: None,
                },
                Controller::Fixed(1e4),
                live,
                &opts,
            )),
            Box::new(StreamReceiverApp::new(0, live, &opts)),
        ];
        for app in &mut apps {
            app.poll(&mut Ctx::new(Instant::ZERO, &mut ep, &mut udp));
            assert!(!app.is_done());
            app.shutdown(&mut Ctx::new(t, &mut ep, &mut udp));
            assert!(app.is_done());
            assert_eq!(app.poll(&mut Ctx::new(t, &mut ep, &mut udp)), None);
        }
    }
}
