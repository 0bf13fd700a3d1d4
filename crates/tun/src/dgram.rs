//! Datagram applications in live mode: the `ackclock-dgram` RPC client and server and the
//! rate-controlled stream's sender and receiver, each wrapped with what a command needs
//! around it (a start at the first turn, a time limit, an end, interval reports), and run
//! on one socket through the [`DatagramSocket`] trait:
//!
//! - on the UDP stack of a TUN [`Host`](crate::Host), through [`OnHost`] (the host's
//!   [`App`]);
//! - on a Linux kernel socket, through [`KernelHost`](crate::kernel_udp::KernelHost), so the
//!   other end of a live test is Linux's UDP running the same application.
//!
//! Nothing here reads a clock: `now` comes from the loop that drives the application.

use crate::host::{App, Control};
use ackclock_dgram::rate::Controller;
use ackclock_dgram::rpc::{RpcClient, RpcClientConfig, RpcServer, IP_UDP_HEADERS};
use ackclock_dgram::stream::{StreamReceiver, StreamSender, StreamSenderConfig};
use ackclock_dgram::{DatagramSocket, DgramError, SocketId, StackSocket, UdpStack};
use ackclock_tcp::Endpoint;
use ackclock_wire::{Duration, Instant};
use std::net::SocketAddrV4;

/// A datagram application on one socket, sans-IO: the loop that drives it reads the clock
/// and owns the socket.
pub trait DatagramApp {
    /// Reads what arrived and sends what is due. Returns when it next needs to run
    /// (arrivals wake it anyway); a time not after `now` asks for nothing.
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant>;
    /// Whether it has finished: the loop then returns.
    fn done(&self) -> bool;
    /// SIGINT or SIGTERM: stop now. `done` is true from here on (none of these
    /// applications has anything to close: a datagram socket has no connection).
    fn shutdown(&mut self, now: Instant);
}

/// A [`DatagramApp`] on the UDP stack of a live TUN host: it binds `port` (0: an ephemeral
/// one) at the first turn and runs the application on that socket every turn.
pub struct OnHost<A> {
    pub app: A,
    port: u16,
    sock: Option<SocketId>,
    /// The socket's address once bound.
    pub local: Option<SocketAddrV4>,
    /// Why the port could not be bound (the run then ends at once).
    pub bind_error: Option<DgramError>,
    wake: Option<Instant>,
    last_now: Instant,
}

impl<A: DatagramApp> OnHost<A> {
    pub fn new(app: A, port: u16) -> Self {
        OnHost {
            app,
            port,
            sock: None,
            local: None,
            bind_error: None,
            wake: None,
            last_now: Instant::ZERO,
        }
    }
}

impl<A: DatagramApp> App for OnHost<A> {
    fn poll_udp(&mut self, now: Instant, udp: &mut UdpStack) {
        self.last_now = now;
        if self.sock.is_none() && self.bind_error.is_none() {
            match udp.bind(self.port) {
                Ok(id) => {
                    self.sock = Some(id);
                    self.local = udp.local(id);
                }
                Err(e) => self.bind_error = Some(e),
            }
        }
        let Some(id) = self.sock else { return };
        self.wake = self.app.poll(now, &mut StackSocket { stack: udp, id });
    }

    fn poll(&mut self, _now: Instant, _ep: &mut Endpoint) -> Control {
        if self.app.done() || self.bind_error.is_some() {
            Control::Done
        } else {
            Control::Continue
        }
    }

    fn shutdown(&mut self, now: Instant, _ep: &mut Endpoint) {
        self.app.shutdown(now);
    }

    fn deadline(&self) -> Option<Instant> {
        // A time already past was handled by the poll at `last_now`; handing it to the
        // loop again would spin it.
        self.wake.filter(|t| *t > self.last_now)
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// A [`DatagramApp`] as a command runs it: the application (`P`) starts at the first turn,
/// stops at its time limit (`--time` after the first turn) or when it has finished, and a
/// signal ends it at once; a stream also reports its intervals (`-i`). The four commands'
/// applications are this wrapper around their [`CommandPart`]: [`RpcClientApp`],
/// [`RpcServerApp`], [`StreamSenderApp`] and [`StreamReceiverApp`].
pub struct CommandApp<P> {
    part: P,
    time: Option<Duration>,
    started: Option<Instant>,
    ended: Option<Instant>,
    reports: Reports,
    /// A signal stopped it (an RPC client's requests still outstanding were abandoned).
    pub interrupted: bool,
}

/// What one turn of a [`CommandPart`] came to.
pub enum Step {
    /// Going on: run again at this time (arrivals wake it anyway).
    Wake(Option<Instant>),
    /// Finished: its requests, its data or its time are done.
    Finished,
}

/// The application inside a [`CommandApp`].
pub trait CommandPart {
    /// One turn at `now`; the first one starts the application. `stop` is the end of the
    /// command's time (None: no time limit); the wrapper wakes the part there.
    fn turn(&mut self, now: Instant, stop: Option<Instant>, sock: &mut dyn DatagramSocket) -> Step;
    /// Where the interval reports start, given the first turn `t0` (None: not yet, or
    /// the application has none).
    fn reports_from(&self, _t0: Instant) -> Option<Instant> {
        None
    }
    /// The cumulative counts the interval reports are taken from.
    fn counts(&self) -> Counts {
        Counts::default()
    }
}

impl<P> CommandApp<P> {
    fn wrap(part: P, time: Option<Duration>, reports: Reports) -> Self {
        CommandApp {
            part,
            time,
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
    /// Called with each interval report.
    pub fn on_interval(&mut self, f: OnDgramInterval) {
        self.reports.on_interval = Some(f);
    }
}

impl<P: CommandPart> CommandApp<P> {
    /// The end: the last interval report.
    fn end(&mut self, now: Instant) {
        self.ended = Some(now);
        let c = self.part.counts();
        self.reports.tick(now, c, true);
    }
}

impl<P: CommandPart> DatagramApp for CommandApp<P> {
    fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        if self.done() {
            return None;
        }
        let t0 = *self.started.get_or_insert(now);
        let stop = self.time.map(|d| t0 + d);
        let step = self.part.turn(now, stop, sock);
        if let Some(t) = self.part.reports_from(t0) {
            self.reports.start(t);
        }
        match step {
            Step::Finished => {
                self.end(now);
                None
            }
            Step::Wake(wake) => {
                let c = self.part.counts();
                self.reports.tick(now, c, false);
                // A part notices that its time is up only when it runs (an RPC client, and
                // so that it is finished when nothing is outstanding; a sender between two
                // packets): a wake-up at the stop, which it does not ask for itself.
                let stop = stop.filter(|s| *s > now);
                earliest(earliest(wake, stop), self.reports.next_boundary())
            }
        }
    }
    fn done(&self) -> bool {
        self.ended.is_some()
    }
    fn shutdown(&mut self, now: Instant) {
        if self.ended.is_none() {
            self.interrupted = true;
            self.end(now);
        }
    }
}

/// An RPC (NFS-like) or query (DNS-like) client for a command: it starts at its first
/// turn, issues requests until its request count or its time is up, and is done when the
/// last outstanding request has completed or been given up.
pub type RpcClientApp = CommandApp<RpcClientPart>;

/// The client inside an [`RpcClientApp`].
pub struct RpcClientPart {
    cfg: RpcClientConfig,
    client: Option<RpcClient>,
}

impl RpcClientApp {
    /// `cfg`'s `start` and `stop` are replaced: the client starts at its first turn and
    /// stops issuing `time` later (None: after `cfg.requests`).
    pub fn new(cfg: RpcClientConfig, time: Option<Duration>) -> Self {
        let part = RpcClientPart { cfg, client: None };
        CommandApp::wrap(part, time, Reports::new(None, false))
    }
    /// The client, once started.
    pub fn client(&self) -> Option<&RpcClient> {
        self.part.client.as_ref()
    }
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

impl CommandPart for RpcClientPart {
    fn turn(&mut self, now: Instant, stop: Option<Instant>, sock: &mut dyn DatagramSocket) -> Step {
        let cfg = &self.cfg;
        let client = self.client.get_or_insert_with(|| {
            RpcClient::new(RpcClientConfig {
                start: now,
                stop,
                ..cfg.clone()
            })
        });
        let wake = client.poll(now, sock);
        if client.finished_at().is_some() {
            return Step::Finished;
        }
        Step::Wake(wake)
    }
}

/// The RPC server for a command: answers until its time is up or a signal.
pub type RpcServerApp = CommandApp<RpcServerPart>;

/// The server inside an [`RpcServerApp`].
pub struct RpcServerPart {
    server: RpcServer,
}

impl RpcServerApp {
    pub fn new(server: RpcServer, time: Option<Duration>) -> Self {
        CommandApp::wrap(RpcServerPart { server }, time, Reports::new(None, false))
    }
    pub fn server(&self) -> &RpcServer {
        &self.part.server
    }
}

impl CommandPart for RpcServerPart {
    fn turn(&mut self, now: Instant, stop: Option<Instant>, sock: &mut dyn DatagramSocket) -> Step {
        if stop.is_some_and(|e| now >= e) {
            return Step::Finished;
        }
        Step::Wake(self.server.poll(now, sock))
    }
}

/// One interval report of a stream (`-i`): what was sent or received in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DgramInterval {
    pub index: usize,
    /// Since the stream's start (the sender's first turn, the receiver's first packet).
    pub start: Duration,
    pub end: Duration,
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

/// What [`CommandApp::on_interval`] calls with each interval report of a stream (once per
/// interval, never per packet).
pub type OnDgramInterval = Box<dyn FnMut(&DgramInterval)>;

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

/// The cumulative counts a stream hands its meter ([`CommandPart::counts`]).
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

/// Settings of a stream's sender or receiver for a command.
#[derive(Clone, Debug)]
pub struct StreamAppOptions {
    /// Stop this long after the start (the sender: its first turn; the receiver: its
    /// first turn too, so a receiver given a time waits that long at most).
    pub time: Option<Duration>,
    /// The receiver stops once data has arrived and then none for this long.
    pub idle_timeout: Option<Duration>,
    /// Report every this long ([`DgramInterval`]).
    pub interval: Option<Duration>,
    /// Keep every interval report (for a JSON document).
    pub keep_intervals: bool,
}

/// A rate-controlled stream's sender for a command: it starts at its first turn and sends
/// until its time or its bytes are done.
pub type StreamSenderApp = CommandApp<StreamSenderPart>;

/// The sender inside a [`StreamSenderApp`].
pub struct StreamSenderPart {
    cfg: StreamSenderConfig,
    ctl: Option<Controller>,
    sender: Option<StreamSender>,
}

impl StreamSenderApp {
    /// `cfg`'s `start` and `stop` are replaced by the first turn and `opts.time` after it.
    pub fn new(cfg: StreamSenderConfig, ctl: Controller, opts: &StreamAppOptions) -> Self {
        let part = StreamSenderPart {
            cfg,
            ctl: Some(ctl),
            sender: None,
        };
        let reports = Reports::new(opts.interval, opts.keep_intervals);
        CommandApp::wrap(part, opts.time, reports)
    }
    pub fn sender(&self) -> Option<&StreamSender> {
        self.part.sender.as_ref()
    }
    pub fn config(&self) -> &StreamSenderConfig {
        &self.part.cfg
    }
}

impl CommandPart for StreamSenderPart {
    fn turn(&mut self, now: Instant, stop: Option<Instant>, sock: &mut dyn DatagramSocket) -> Step {
        let (cfg, ctl) = (&self.cfg, &mut self.ctl);
        let sender = self.sender.get_or_insert_with(|| {
            StreamSender::new(
                StreamSenderConfig {
                    start: now,
                    stop,
                    ..cfg.clone()
                },
                ctl.take().unwrap_or(Controller::Fixed(1.0)),
            )
        });
        match sender.poll(now, sock) {
            // Its time or its bytes are done.
            None => Step::Finished,
            // The time of its next packet.
            wake => Step::Wake(wake),
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
}

/// A stream's receiver for a command: it reports to whoever sends to its port, and stops
/// at its time, when data has stopped for its idle timeout, or at a signal.
pub type StreamReceiverApp = CommandApp<StreamReceiverPart>;

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
    pub fn new(opts: &StreamAppOptions) -> Self {
        let part = StreamReceiverPart {
            receiver: StreamReceiver::new(),
            idle_timeout: opts.idle_timeout,
            first_packet: None,
            last_packet: None,
            peer: None,
        };
        let reports = Reports::new(opts.interval, opts.keep_intervals);
        CommandApp::wrap(part, opts.time, reports)
    }
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

impl CommandPart for StreamReceiverPart {
    fn turn(&mut self, now: Instant, stop: Option<Instant>, sock: &mut dyn DatagramSocket) -> Step {
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
        if stop.is_some_and(|e| now >= e) || idle_end.is_some_and(|e| now >= e) {
            return Step::Finished;
        }
        // The receiver asks for its next feedback time even when no data came since the
        // last one (a time past: nothing to do); only a future one is a wake.
        let wake = wake.filter(|t| *t > now);
        Step::Wake(earliest(wake, idle_end))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_dgram::rpc::{rpc_rtt_config, Timer};
    use ackclock_dgram::{UdpConfig, VirtualWire};
    use ackclock_tcp::EndpointConfig;
    use std::net::Ipv4Addr;

    const OURS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const THEIRS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

    /// Two live hosts' UDP stacks joined by a wire of `delay` each way, each with an app
    /// driven as [`Host::run`](crate::Host::run) drives it (`poll_udp`, then `poll`) at its
    /// first turn, when a datagram arrived for it and at the deadline it asked for, in 1 ms
    /// steps of virtual time, for at most `limit`. Returns whether each app finished; the
    /// deadlines it asked for must be in the future.
    fn run_pair(
        a: &mut dyn App,
        b: &mut dyn App,
        delay: Duration,
        limit: Duration,
    ) -> (bool, bool) {
        let mut w = VirtualWire::new(OURS, THEIRS, delay);
        let mut ea = Endpoint::new(EndpointConfig::new(OURS, [1; 16]));
        let mut eb = Endpoint::new(EndpointConfig::new(THEIRS, [2; 16]));
        let (mut a_done, mut b_done) = (false, false);
        let mut now = Instant::ZERO;
        // Each app's first turn.
        let (mut a_in, mut b_in) = (true, true);
        while now < Instant::ZERO + limit && !(a_done && b_done) {
            let (got_a, got_b) = w.deliver(now);
            (a_in, b_in) = (a_in || got_a, b_in || got_b);
            if !a_done && (a_in || a.deadline().is_some_and(|t| t <= now)) {
                a.poll_udp(now, &mut w.a);
                a_done = a.poll(now, &mut ea) == Control::Done;
                assert!(a.deadline().is_none_or(|t| t > now));
            }
            if !b_done && (b_in || b.deadline().is_some_and(|t| t <= now)) {
                b.poll_udp(now, &mut w.b);
                b_done = b.poll(now, &mut eb) == Control::Done;
                assert!(b.deadline().is_none_or(|t| t > now));
            }
            (a_in, b_in) = (false, false);
            w.transmit(now);
            now += Duration::from_millis(1);
        }
        (a_done, b_done)
    }

    #[test]
    fn an_rpc_client_app_completes_its_requests_against_the_server_app_and_ends() {
        let cfg = RpcClientConfig {
            requests: Some(50),
            timer: Timer::Adaptive(rpc_rtt_config()),
            ..RpcClientConfig::nfs(SocketAddrV4::new(THEIRS, 2049))
        };
        let mut client = OnHost::new(RpcClientApp::new(cfg, None), 0);
        let mut server = OnHost::new(
            RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), None),
            2049,
        );
        let (c_done, s_done) = run_pair(
            &mut client,
            &mut server,
            Duration::from_millis(10),
            Duration::from_secs(10),
        );
        assert!(c_done && !s_done, "the client ends, the server serves on");
        let c = client.app.client().unwrap();
        assert_eq!(c.stats().completed, 50);
        assert_eq!(c.stats().retransmissions, 0);
        // 20 ms each, in whole 1 ms ticks (the estimator's G), give or take the 1 ms steps.
        let srtt = c.srtt().as_nanos() as f64 / 1e6;
        assert!((20.0..=22.0).contains(&srtt), "{srtt} ms");
        assert_eq!(client.local, Some(SocketAddrV4::new(OURS, 49152)));
        assert_eq!(server.app.server().stats().requests, 50);
        assert_eq!(client.app.outstanding(), 0);
        assert!(!client.app.interrupted);
        // 50 requests, 4 at a time, 20 ms each: about 13 rounds.
        let e = client.app.elapsed(Instant::ZERO + Duration::from_secs(10));
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
        let mut client = OnHost::new(RpcClientApp::new(cfg, Some(Duration::from_secs(1))), 0);
        let mut server = OnHost::new(
            RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), None),
            53,
        );
        let (c_done, _) = run_pair(
            &mut client,
            &mut server,
            Duration::from_millis(2),
            Duration::from_secs(10),
        );
        assert!(c_done);
        let st = client.app.client().unwrap().stats().clone();
        assert!(st.issued > 5 && st.completed == st.issued, "{st:?}");
        let e = client.app.elapsed(Instant::ZERO + Duration::from_secs(10));
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
        let mut server = OnHost::new(
            RpcServerApp::new(RpcServer::new(Duration::ZERO, 64, 1472), None),
            2049,
        );
        server.poll_udp(Instant::ZERO, &mut udp);
        assert_eq!(server.poll(Instant::ZERO, &mut ep), Control::Done);
        assert_eq!(server.bind_error, Some(DgramError::PortInUse(2049)));
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
            time: Some(Duration::from_millis(2300)),
            idle_timeout: Some(Duration::from_millis(300)),
            interval: Some(every),
            keep_intervals: true,
        };
        // 800 kbit/s of 1028-byte IP packets: about 97 a second.
        let mut tx = OnHost::new(
            StreamSenderApp::new(
                StreamSenderConfig {
                    dst: SocketAddrV4::new(THEIRS, 5004),
                    packet_bytes: 1000,
                    start: Instant::ZERO,
                    stop: None,
                    bytes: None,
                },
                Controller::Fixed(100_000.0),
                &opts,
            ),
            0,
        );
        let rx_opts = StreamAppOptions {
            time: None,
            ..opts.clone()
        };
        let mut rx = OnHost::new(StreamReceiverApp::new(&rx_opts), 5004);
        let seen = std::rc::Rc::new(std::cell::Cell::new(0));
        let s2 = seen.clone();
        rx.app.on_interval(Box::new(move |_| s2.set(s2.get() + 1)));
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
        let st = tx.app.sender().unwrap().stats().clone();
        assert!((220..=226).contains(&st.packets), "{}", st.packets);
        check_intervals(tx.app.intervals(), st.packets, st.bytes, every);
        assert_eq!(
            tx.app.intervals().last().unwrap().end,
            Duration::from_millis(2300)
        );
        let rs = rx.app.receiver().stats().clone();
        assert_eq!((rs.packets, rs.lost), (st.packets, 0));
        check_intervals(rx.app.intervals(), rs.packets, rs.bytes, every);
        assert_eq!(seen.get(), rx.app.intervals().len());
        assert_eq!(rx.app.peer(), tx.local);
        // First packet to last at about 97 a second; then 300 ms idle ended it.
        let e = rx.app.data_elapsed().as_secs_f64();
        assert!((2.2..=2.31).contains(&e), "{e}");
        let rate = tx.app.intervals()[1].ip_bps();
        assert!((0.95 * 800e3..=1.05 * 800e3).contains(&rate), "{rate}");
        assert!(!tx.app.interrupted && !rx.app.interrupted);
    }

    #[test]
    fn a_signal_ends_every_app_at_once() {
        let t = Instant::ZERO + Duration::from_secs(1);
        let mut udp = UdpStack::new(UdpConfig::new(OURS));
        let id = udp.bind(0).unwrap();
        let opts = StreamAppOptions {
            time: None,
            idle_timeout: None,
            interval: Some(Duration::from_millis(100)),
            keep_intervals: true,
        };
        let mut apps: Vec<Box<dyn DatagramApp>> = vec![
            Box::new(RpcClientApp::new(
                RpcClientConfig::dns(SocketAddrV4::new(THEIRS, 53)),
                None,
            )),
            Box::new(RpcServerApp::new(
                RpcServer::new(Duration::ZERO, 64, 1472),
                None,
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
                &opts,
            )),
            Box::new(StreamReceiverApp::new(&opts)),
        ];
        for app in &mut apps {
            let mut s = StackSocket {
                stack: &mut udp,
                id,
            };
            app.poll(Instant::ZERO, &mut s);
            assert!(!app.done());
            app.shutdown(t);
            assert!(app.done());
            let mut s = StackSocket {
                stack: &mut udp,
                id,
            };
            assert_eq!(app.poll(t, &mut s), None);
        }
    }
}
