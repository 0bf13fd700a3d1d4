//! Request/response over UDP: an NFS-like RPC client (several requests outstanding, as the
//! biod daemons of a 1987 NFS client) or a DNS-like query client (one outstanding, Poisson
//! arrivals), and the server that answers both.
//!
//! The client retransmits a request whose response does not come in time, with one of two
//! timers:
//! - **fixed**: the same timeout every time, the RPC of 1987 whose "congestion problems"
//!   the seed names (seed 000, 11 Feb 1988): when queueing delay grows past the timeout,
//!   every request goes out several times and the copies add to the queue;
//! - **adaptive**: the TCP's own estimator ([`RttEstimator`], Jacobson's mean and
//!   deviation, RFC 6298) with exponential backoff. A response echoes the transmission it
//!   answers and its timestamp, so every sample is unambiguous (the reason Karn's rule
//!   exists, an ACK that cannot say which copy it answers, does not arise).
//!
//! And optionally a rate limit on transmissions ([`Controller`]): rate AIMD or TFRC with
//! the loss event rate measured by the client itself from its timeouts (RFC 5348 allows
//! the loss history to live at the sender, §1 and §6). Without it, the only limit is the
//! number of requests outstanding.

use crate::msg::{self, Message};
use crate::rate::{Controller, LossIntervals, Signal};
use crate::stack::DatagramSocket;
use ackclock_tcp::rtt::{RttConfig, RttEstimator};
use ackclock_wire::{Duration, Instant};
use core::net::SocketAddrV4;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, VecDeque};

fn secs(t: Instant) -> f64 {
    t.as_nanos() as f64 * 1e-9
}

/// Bytes of IP and UDP header per datagram, for rates in IP bytes as links count them.
pub const IP_UDP_HEADERS: usize = 28;

/// How requests are generated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// Closed loop: each of the `outstanding` slots issues its next request as soon as
    /// the previous one completes (NFS's biods reading a file).
    Closed,
    /// Open loop: requests arrive as a Poisson process at `per_sec`, and wait at the client
    /// (up to `backlog` of them, beyond which they are refused) for a free slot.
    Poisson {
        /// Mean arrivals per second (exponential gaps drawn from the client's seeded RNG).
        per_sec: f64,
        /// Requests that may wait for a slot; an arrival beyond them is refused (counted
        /// in [`RpcClientStats::refused`]).
        backlog: usize,
    },
}

/// The retransmission timer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timer {
    /// The same timeout for every transmission.
    Fixed(Duration),
    /// The TCP's estimator ([`RttEstimator`]) with this configuration (its algorithm and
    /// its RTO bounds), with exponential backoff on each timeout. [`rpc_rtt_config`],
    /// RFC 6298's with a 200 ms floor, is the one the DNS-like preset uses.
    Adaptive(RttConfig),
}

impl Timer {
    /// The name scenario files and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Timer::Fixed(_) => "fixed",
            Timer::Adaptive(_) => "adaptive",
        }
    }
}

/// Rate control of the client's transmissions (first ones and retransmissions alike),
/// each transmission counted as max(request, response) bytes plus 28 bytes of headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateControl {
    /// No rate limit: only the number of requests outstanding bounds transmissions.
    None,
    /// Rate-based AIMD ([`AimdRate`](crate::rate::AimdRate)).
    Aimd,
    /// TFRC, RFC 5348 ([`TfrcRate`](crate::rate::TfrcRate)), with the loss event rate
    /// measured by the client itself (see [`RpcClientStats::loss_events`]).
    Tfrc,
}

impl RateControl {
    /// The name scenario files and reports use, as [`Controller::name`] gives it for a
    /// stream's controller (`"none"` for no rate control).
    pub fn name(self) -> &'static str {
        match self {
            RateControl::None => "none",
            RateControl::Aimd => "aimd",
            RateControl::Tfrc => "tfrc",
        }
    }
}

/// What an RPC client sends, to whom, when, and how it retransmits.
/// [`nfs`](Self::nfs) and [`dns`](Self::dns) are the two presets;
/// [`RpcClient::new`] raises sizes and counts below their minimums.
#[derive(Clone, Debug)]
pub struct RpcClientConfig {
    /// The server's address and port.
    pub server: SocketAddrV4,
    /// UDP payload bytes of a request (at least the 20-byte message header).
    pub request_bytes: usize,
    /// UDP payload bytes of a response.
    pub response_bytes: usize,
    /// Requests outstanding at most (at least 1).
    pub outstanding: usize,
    /// How new requests are generated: closed or open (Poisson) loop.
    pub arrivals: Arrivals,
    /// Stop issuing new requests after this many (None: until `stop`).
    pub requests: Option<u64>,
    /// When the client starts: a poll before it only asks to be woken then.
    pub start: Instant,
    /// Stop issuing new requests at this time (outstanding ones still complete).
    pub stop: Option<Instant>,
    /// The retransmission timer.
    pub timer: Timer,
    /// Transmissions of one request before it is given up (NFS's soft mount "retrans";
    /// 1 to 255).
    pub max_transmissions: u32,
    /// Rate control of the transmissions.
    pub rate: RateControl,
    /// Seed of the RNG (ChaCha8) that draws the Poisson arrivals.
    pub seed: u64,
}

impl RpcClientConfig {
    /// An NFS-like client: 8 KiB reads do not fit an unfragmented Ethernet datagram and the
    /// simulator does not fragment, so a read returns 1024 bytes; 4 requests outstanding
    /// (4 biods), closed loop, SunOS's 0.7 s fixed timeout, 5 transmissions.
    pub fn nfs(server: SocketAddrV4) -> Self {
        RpcClientConfig {
            server,
            request_bytes: 128,
            response_bytes: 1024,
            outstanding: 4,
            arrivals: Arrivals::Closed,
            requests: None,
            start: Instant::ZERO,
            stop: None,
            timer: Timer::Fixed(Duration::from_millis(700)),
            max_transmissions: 5,
            rate: RateControl::None,
            seed: 1,
        }
    }
    /// A DNS-like client: 40-byte queries, 200-byte answers, one outstanding, 10 queries a
    /// second, the adaptive timer.
    pub fn dns(server: SocketAddrV4) -> Self {
        RpcClientConfig {
            server,
            request_bytes: 40,
            response_bytes: 200,
            outstanding: 1,
            arrivals: Arrivals::Poisson {
                per_sec: 10.0,
                backlog: 1000,
            },
            requests: None,
            start: Instant::ZERO,
            stop: None,
            timer: Timer::Adaptive(rpc_rtt_config()),
            max_transmissions: 4,
            rate: RateControl::None,
            seed: 1,
        }
    }
}

/// The estimator's configuration for RPC: RFC 6298's, with a 200 ms floor (Linux's
/// TCP_RTO_MIN; RFC 6298's 1 s floor would hide a LAN's RTT entirely).
pub fn rpc_rtt_config() -> RttConfig {
    RttConfig {
        min_rto: Duration::from_millis(200),
        ..RttConfig::rfc6298()
    }
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    id: u32,
    created: Instant,
    last_sent: Instant,
    xmit: u8,
    deadline: Instant,
    /// Already counted lost for the rate controller (by [`NDUPACK`] later responses).
    signalled: bool,
}

/// The requests outstanding, kept so that each event costs O(log n) in their number, not
/// O(n): a client with 10^6 outstanding scanned them all on every response, timeout and
/// send (a scenario predicted at 2.6e6 events still ran after 7 minutes).
///
/// The order of `list` is the one a `Vec` with `swap_remove` gives, and everything that
/// depends on order (retransmissions sent, losses recorded) follows it, so the client
/// does exactly what the client that scanned the list did (`tests/rpc_equivalence.rs`).
#[derive(Default)]
struct Requests {
    list: Vec<Outstanding>,
    /// Request id -> position in `list`.
    at: HashMap<u32, usize>,
    /// Positions of the requests that timed out and wait to be sent again (for the rate
    /// limit), in `list` order.
    due: BTreeSet<usize>,
    /// The timer of every request not due, earliest first. An entry whose request ended or
    /// was sent again (a different deadline) is stale and skipped when it comes up.
    deadlines: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Rate control only: the requests that later responses can still signal lost (not
    /// due, not signalled), by their last transmission time.
    counting: BTreeSet<(Instant, u32)>,
    /// Rate control only: the last transmission times of the requests completed since the
    /// oldest in `counting` was sent (a multiset: time -> how many). A request in
    /// `counting` has seen exactly the completions here sent after it: each was sent after
    /// it (so completed after it was sent), and each completion of a request sent after it
    /// is here. These counts fall along `counting`, so the requests that reach
    /// [`NDUPACK`] are always its first ones.
    later: BTreeMap<Instant, u32>,
    later_len: usize,
}

impl Requests {
    fn len(&self) -> usize {
        self.list.len()
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    fn push(&mut self, o: Outstanding, counting: bool) {
        self.at.insert(o.id, self.list.len());
        self.deadlines.push(Reverse((o.deadline, o.id)));
        if counting {
            self.counting.insert((o.last_sent, o.id));
        }
        self.list.push(o);
    }

    /// Removes the request at `i` as `Vec::swap_remove` does (the last takes its place).
    fn swap_remove(&mut self, i: usize) -> Outstanding {
        let last = self.list.len() - 1;
        let o = self.list.swap_remove(i);
        self.at.remove(&o.id);
        self.due.remove(&i);
        self.counting.remove(&(o.last_sent, o.id));
        if i != last {
            self.at.insert(self.list[i].id, i);
            if self.due.remove(&last) {
                self.due.insert(i);
            }
        }
        o
    }

    /// The earliest timer of a request not due, with stale entries dropped.
    fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(&Reverse((t, id))) = self.deadlines.peek() {
            let live = self
                .at
                .get(&id)
                .is_some_and(|&i| !self.due.contains(&i) && self.list[i].deadline == t);
            if live {
                return Some(t);
            }
            self.deadlines.pop();
        }
        None
    }

    /// A completion of a request last sent at `sent`: returns the requests it makes
    /// reach [`NDUPACK`] later responses (now signalled), in `list` order.
    fn on_completion(&mut self, sent: Instant) -> Vec<usize> {
        let mut reached = Vec::new();
        if self.counting.is_empty() {
            return reached;
        }
        *self.later.entry(sent).or_insert(0) += 1;
        self.later_len += 1;
        while let Some(&(first, id)) = self.counting.first() {
            // Completions sent no later than the oldest counting request count for none.
            let keep = self.later.split_off(&(first + Duration::from_nanos(1)));
            let pruned: u32 = self.later.values().sum();
            self.later = keep;
            self.later_len -= pruned as usize;
            if self.later_len < usize::from(NDUPACK) {
                break;
            }
            self.counting.pop_first();
            let i = self.at[&id];
            self.list[i].signalled = true;
            reached.push(i);
        }
        if self.counting.is_empty() {
            self.later.clear();
            self.later_len = 0;
        }
        reached.sort_unstable();
        reached
    }
}

/// Responses to later transmissions after which an outstanding one is taken as lost for rate
/// control, as a TCP takes three duplicate ACKs (RFC 5681 §3.2) and a TFRC receiver three
/// later packets (RFC 5348 §5.1, NDUPACK): a signal one round trip after the loss instead of
/// a retransmission timeout later. The request itself still waits for its timer.
const NDUPACK: u8 = 3;

/// What a client has done.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RpcClientStats {
    /// Requests issued (each once, however often transmitted).
    pub issued: u64,
    /// Requests answered: the first response to any of their transmissions.
    pub completed: u64,
    /// Given up after `max_transmissions`.
    pub failed: u64,
    /// Refused because the open-loop backlog was full.
    pub refused: u64,
    /// Requests sent, first transmissions and retransmissions.
    pub transmissions: u64,
    /// Transmissions after a request's first.
    pub retransmissions: u64,
    /// Expiries of a request's retransmission timer (each is followed by a retransmission
    /// or, at `max_transmissions`, by giving the request up).
    pub timeouts: u64,
    /// Responses to a request already completed or given up (wasted work).
    pub duplicate_responses: u64,
    /// Datagrams received that are not a response message.
    pub malformed: u64,
    /// Response payload bytes of completed requests.
    pub goodput_bytes: u64,
    /// Completion times, from issue to response, in ns (an open-loop request's issue is
    /// its arrival, so its wait for a slot counts).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub latency: crate::hist::Histogram,
    /// Loss events in the client's own loss history (RFC 5348 §5.2: losses of
    /// transmissions sent within one RTT of the event's first are one event). A loss is
    /// a timeout or, under rate control, three responses to requests sent after it
    /// (RFC 5348 §5.1's NDUPACK).
    pub loss_events: u64,
}

/// An RPC client on one socket.
pub struct RpcClient {
    cfg: RpcClientConfig,
    rng: ChaCha8Rng,
    next_id: u32,
    /// Requests waiting for a slot (open loop): their issue times.
    backlog: VecDeque<Instant>,
    next_arrival: Option<Instant>,
    /// The requests outstanding.
    outstanding: Requests,
    est: RttEstimator,
    ctl: Option<Controller>,
    next_send: Instant,
    losses: LossIntervals,
    /// Rate feedback: responses and bytes since the last controller update.
    round_start: Instant,
    round_bytes: u64,
    round_loss_event: bool,
    last_feedback: Instant,
    stats: RpcClientStats,
    buf: Vec<u8>,
    finished: Option<Instant>,
    /// Requests that arrived (Poisson: accepted into the backlog; closed loop: issued),
    /// against the `requests` limit.
    arrived: u64,
}

impl RpcClient {
    /// A client with `cfg`, request and response sizes raised to the 20-byte header, at
    /// least one request outstanding and 1 to 255 transmissions. It sends nothing before
    /// its first [`poll`](Self::poll).
    pub fn new(cfg: RpcClientConfig) -> Self {
        let cfg = RpcClientConfig {
            request_bytes: cfg.request_bytes.max(msg::HEADER_LEN),
            response_bytes: cfg.response_bytes.max(msg::HEADER_LEN),
            outstanding: cfg.outstanding.max(1),
            max_transmissions: cfg.max_transmissions.clamp(1, 255),
            ..cfg
        };
        let s = cfg.request_bytes.max(cfg.response_bytes) + IP_UDP_HEADERS;
        let ctl = match cfg.rate {
            RateControl::None => None,
            RateControl::Aimd => Some(Controller::Aimd(crate::rate::AimdRate::new(s))),
            RateControl::Tfrc => Some(Controller::Tfrc(crate::rate::TfrcRate::new(s))),
        };
        let est = RttEstimator::new(match cfg.timer {
            Timer::Adaptive(c) => c,
            Timer::Fixed(_) => rpc_rtt_config(),
        });
        let next_arrival = match cfg.arrivals {
            Arrivals::Closed => None,
            Arrivals::Poisson { .. } => Some(cfg.start),
        };
        RpcClient {
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            next_id: 1,
            backlog: VecDeque::new(),
            next_arrival,
            outstanding: Requests::default(),
            est,
            ctl,
            next_send: cfg.start,
            losses: LossIntervals::new(),
            round_start: cfg.start,
            round_bytes: 0,
            round_loss_event: false,
            last_feedback: cfg.start,
            stats: RpcClientStats::default(),
            buf: vec![0; cfg.request_bytes.max(msg::HEADER_LEN)],
            finished: None,
            arrived: 0,
            cfg,
        }
    }

    /// What it has done so far.
    pub fn stats(&self) -> &RpcClientStats {
        &self.stats
    }
    /// Its configuration, as [`new`](Self::new) adjusted it.
    pub fn config(&self) -> &RpcClientConfig {
        &self.cfg
    }
    /// The smoothed RTT of the estimator (zero before a sample). The estimator takes
    /// samples with either timer; only the adaptive one sets timeouts from it.
    pub fn srtt(&self) -> Duration {
        self.est.srtt()
    }
    /// The allowed rate (IP bytes/s) when rate-controlled; `None` without rate control.
    pub fn rate(&self) -> Option<f64> {
        self.ctl.as_ref().map(Controller::rate)
    }
    /// When it issued its last request and everything outstanding ended.
    pub fn finished_at(&self) -> Option<Instant> {
        self.finished
    }

    fn issuing(&self, now: Instant) -> bool {
        self.cfg.requests.is_none_or(|n| self.arrived < n) && self.cfg.stop.is_none_or(|s| now < s)
    }

    fn timeout(&self) -> Duration {
        match self.cfg.timer {
            Timer::Fixed(t) => t,
            Timer::Adaptive(_) => self.est.rto(),
        }
    }

    /// Runs the client: takes the responses waiting on `sock`, retransmits what timed
    /// out, issues new requests within the limits. Returns when it next needs to run
    /// (`None`: it has nothing scheduled).
    pub fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        if now < self.cfg.start {
            return Some(self.cfg.start);
        }
        self.receive(now, sock);
        self.arrivals(now);
        self.expire(now);
        let before = self.rate();
        self.rate_feedback(now);
        self.faster_at_once(now, before);
        self.transmit(now, sock);
        if self.finished.is_none()
            && !self.issuing(now)
            && self.outstanding.is_empty()
            && self.backlog.is_empty()
        {
            self.finished = Some(now);
        }
        self.next_wake(now)
    }

    fn receive(&mut self, now: Instant, sock: &mut dyn DatagramSocket) {
        let mut buf = [0u8; msg::HEADER_LEN];
        while let Some((n, _from, _ecn)) = sock.recv_from(&mut buf) {
            let Some(Message::Response { id, xmit, echo_ns }) =
                Message::parse(&buf[..n.min(buf.len())])
            else {
                self.stats.malformed += 1;
                continue;
            };
            let Some(&i) = self.outstanding.at.get(&id) else {
                self.stats.duplicate_responses += 1;
                continue;
            };
            let o = self.outstanding.swap_remove(i);
            // The echoed timestamp times the transmission this response answers.
            let sent = Instant::from_nanos(echo_ns);
            if xmit >= 1 && xmit <= o.xmit && sent <= now && sent >= o.created {
                self.est.on_sample(now - sent);
            }
            self.stats.completed += 1;
            self.stats.goodput_bytes += self.cfg.response_bytes as u64;
            self.stats.latency.record((now - o.created).as_nanos());
            self.losses.on_delivered();
            self.round_bytes += (self.cfg.response_bytes + IP_UDP_HEADERS) as u64;
            if self.ctl.is_some() {
                // Every request sent before this one's last transmission has seen one more
                // later response; those that reach NDUPACK are taken as lost.
                for k in self.outstanding.on_completion(o.last_sent) {
                    let at = self.outstanding.list[k].last_sent;
                    self.record_loss(now, at);
                }
            }
        }
    }

    /// A transmission sent at `sent` is taken as lost: the loss history and, when it starts a
    /// loss event (RFC 5348 §5.2), the rate controller's next update.
    fn record_loss(&mut self, now: Instant, sent: Instant) {
        let r = self
            .ctl
            .as_ref()
            .and_then(Controller::rtt)
            .unwrap_or(self.est.srtt().as_secs_f64().max(1e-3));
        let x = self.round_rate(now);
        let s = (self.cfg.request_bytes.max(self.cfg.response_bytes) + IP_UDP_HEADERS) as f64;
        if self.losses.on_lost(secs(sent), r, || {
            let p = crate::rate::p_for_rate(s, r, x.max(s / r), 4.0 * r);
            (1.0 / p).round() as u64
        }) {
            self.round_loss_event = true;
            self.stats.loss_events += 1;
        }
    }

    fn arrivals(&mut self, now: Instant) {
        let Arrivals::Poisson { per_sec, backlog } = self.cfg.arrivals else {
            return;
        };
        while let Some(t) = self.next_arrival {
            if t > now || !self.issuing(t) {
                break;
            }
            if self.backlog.len() >= backlog {
                self.stats.refused += 1;
            } else {
                self.backlog.push_back(t);
                self.arrived += 1;
            }
            let u: f64 = self.rng.random::<f64>().max(1e-12);
            let gap = -u.ln() / per_sec.max(1e-9);
            self.next_arrival = Some(t + Duration::from_secs_f64(gap.min(1e6)));
        }
    }

    /// Takes the requests whose timer expired, in `list` order (as a scan of the list
    /// that removes the ones given up would meet them: the last request, moved into a
    /// removed one's place, comes next).
    fn expire(&mut self, now: Instant) {
        let mut expired = BTreeSet::new();
        while let Some(t) = self.outstanding.next_deadline() {
            if t > now {
                break;
            }
            let Some(Reverse((_, id))) = self.outstanding.deadlines.pop() else {
                break;
            };
            expired.insert(self.outstanding.at[&id]);
        }
        while let Some(i) = expired.pop_first() {
            let o = self.outstanding.list[i];
            self.stats.timeouts += 1;
            if !o.signalled {
                self.record_loss(now, o.last_sent);
            }
            if matches!(self.cfg.timer, Timer::Adaptive(_)) {
                self.est.on_timeout();
            }
            if u32::from(o.xmit) >= self.cfg.max_transmissions {
                self.stats.failed += 1;
                let last = self.outstanding.len() - 1;
                self.outstanding.swap_remove(i);
                if expired.remove(&last) {
                    expired.insert(i);
                }
                continue;
            }
            // Due again: `transmit` sends it when the rate allows.
            self.outstanding.counting.remove(&(o.last_sent, o.id));
            self.outstanding.due.insert(i);
        }
    }

    fn round_rate(&self, now: Instant) -> f64 {
        let dt = now.saturating_since(self.round_start).as_secs_f64();
        if dt > 0.0 {
            self.round_bytes as f64 / dt
        } else {
            0.0
        }
    }

    /// A faster rate applies at once, not after the gap the slower rate left (RFC 5348
    /// §4.6, as the stream's sender does): above all the second request, which the first,
    /// sent at one a second before any response (§4.2), put a second later, long after the
    /// first response raised the rate (and long enough for the no-feedback timer to take
    /// the idle client's rate down to nothing).
    fn faster_at_once(&mut self, now: Instant, before: Option<f64>) {
        let (Some(ctl), Some(before)) = (&self.ctl, before) else {
            return;
        };
        if ctl.rate() > before {
            let s = self.cfg.request_bytes.max(self.cfg.response_bytes) + IP_UDP_HEADERS;
            self.next_send = self.next_send.min(now + ctl.interval(s));
        }
    }

    /// Feeds the rate controller once per RTT (the feedback interval of RFC 5348 §6.2).
    fn rate_feedback(&mut self, now: Instant) {
        let Some(ctl) = self.ctl.as_mut() else {
            return;
        };
        let srtt = self.est.srtt();
        if srtt == Duration::ZERO {
            // No sample yet: the no-feedback timer (§4.4) still halves a silent path.
            if now.saturating_since(self.last_feedback) >= ctl.no_feedback_timeout() {
                ctl.on_no_feedback();
                self.last_feedback = now;
            }
            return;
        }
        let r = srtt.as_secs_f64();
        let since = now.saturating_since(self.round_start).as_secs_f64();
        if since < r {
            return;
        }
        if self.round_bytes == 0 && !self.round_loss_event {
            if now.saturating_since(self.last_feedback) >= ctl.no_feedback_timeout() {
                ctl.on_no_feedback();
                self.last_feedback = now;
            }
            return;
        }
        let x_recv = self.round_bytes as f64 / since;
        let sig = Signal {
            rtt_sample: r,
            x_recv,
            p: self.losses.p(),
            new_loss_event: self.round_loss_event,
        };
        ctl.on_feedback(now, &sig);
        self.round_start = now;
        self.round_bytes = 0;
        self.round_loss_event = false;
        self.last_feedback = now;
    }

    fn may_send(&self, now: Instant) -> bool {
        self.ctl.is_none() || now >= self.next_send
    }

    fn sent_one(&mut self, now: Instant) {
        if let Some(ctl) = &self.ctl {
            let s = self.cfg.request_bytes.max(self.cfg.response_bytes) + IP_UDP_HEADERS;
            self.next_send = self.next_send.max(now) + ctl.interval(s);
        }
    }

    fn send(&mut self, now: Instant, sock: &mut dyn DatagramSocket, id: u32, xmit: u8) -> bool {
        let m = Message::Request {
            id,
            xmit,
            sent_ns: now.as_nanos(),
            response_bytes: self.cfg.response_bytes as u32,
        };
        m.write(&mut self.buf);
        if !sock.send_to(self.cfg.server, &self.buf) {
            return false;
        }
        self.stats.transmissions += 1;
        if xmit > 1 {
            self.stats.retransmissions += 1;
        }
        true
    }

    fn transmit(&mut self, now: Instant, sock: &mut dyn DatagramSocket) {
        // Retransmissions first: their requests are the oldest.
        let mut from = 0;
        while let Some(&i) = self.outstanding.due.range(from..).next() {
            if !self.may_send(now) {
                break;
            }
            from = i + 1;
            let o = self.outstanding.list[i];
            let xmit = o.xmit.saturating_add(1);
            if !self.send(now, sock, o.id, xmit) {
                return;
            }
            self.sent_one(now);
            let t = self.timeout();
            let r = &mut self.outstanding;
            let o = &mut r.list[i];
            o.xmit = xmit;
            o.last_sent = now;
            o.deadline = now + t;
            o.signalled = false;
            r.due.remove(&i);
            r.deadlines.push(Reverse((o.deadline, o.id)));
            if self.ctl.is_some() {
                r.counting.insert((now, o.id));
            }
        }
        while self.outstanding.len() < self.cfg.outstanding && self.may_send(now) {
            let created = match self.cfg.arrivals {
                Arrivals::Closed => {
                    if !self.issuing(now) {
                        break;
                    }
                    now
                }
                Arrivals::Poisson { .. } => match self.backlog.front() {
                    Some(&t) => t,
                    None => break,
                },
            };
            let id = self.next_id;
            if !self.send(now, sock, id, 1) {
                return;
            }
            if matches!(self.cfg.arrivals, Arrivals::Poisson { .. }) {
                self.backlog.pop_front();
            }
            self.next_id = self.next_id.wrapping_add(1);
            self.stats.issued += 1;
            if matches!(self.cfg.arrivals, Arrivals::Closed) {
                self.arrived += 1;
            }
            self.sent_one(now);
            let t = self.timeout();
            self.outstanding.push(
                Outstanding {
                    id,
                    created,
                    last_sent: now,
                    xmit: 1,
                    deadline: now + t,
                    signalled: false,
                },
                self.ctl.is_some(),
            );
        }
    }

    fn next_wake(&mut self, now: Instant) -> Option<Instant> {
        let mut t: Option<Instant> = None;
        let mut at = |x: Instant| t = Some(t.map_or(x, |y: Instant| y.min(x)));
        let due = !self.outstanding.due.is_empty();
        if let Some(d) = self.outstanding.next_deadline() {
            at(d);
        }
        let wants_new = match self.cfg.arrivals {
            Arrivals::Closed => self.issuing(now) && self.outstanding.len() < self.cfg.outstanding,
            Arrivals::Poisson { .. } => {
                !self.backlog.is_empty() && self.outstanding.len() < self.cfg.outstanding
            }
        };
        if (due || wants_new) && self.ctl.is_some() {
            at(self.next_send.max(now));
        }
        if let Some(a) = self.next_arrival {
            if self.issuing(a) {
                at(a);
            }
        }
        if let Some(ctl) = &self.ctl {
            if !self.outstanding.is_empty() || wants_new {
                // The next controller update: the end of this round, or, once a round has
                // passed with nothing to report, the no-feedback timer (a wake at a round's
                // end that reports nothing would come back at once, forever).
                let r = self.est.srtt();
                let round_end = self.round_start + r;
                if r == Duration::ZERO || round_end <= now {
                    at(self.last_feedback + ctl.no_feedback_timeout());
                } else {
                    at(round_end);
                }
            }
        }
        t.map(|x| x.max(now))
    }
}

/// What a server has done.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RpcServerStats {
    /// Requests received, retransmitted ones and those dropped at a full queue included.
    pub requests: u64,
    /// Requests that were retransmissions (transmission number above 1): served again, as
    /// an NFS server without a duplicate request cache does.
    pub retransmitted_requests: u64,
    /// Responses sent (the socket accepted them).
    pub responses: u64,
    /// UDP payload bytes of those responses.
    pub response_bytes: u64,
    /// Dropped because the service queue was full.
    pub queue_drops: u64,
    /// Datagrams received that are not a request message.
    pub malformed: u64,
}

/// Answers requests, one at a time, each taking `service` (zero: at once).
pub struct RpcServer {
    service: Duration,
    queue_limit: usize,
    /// Largest response it sends (a request asking for more gets this much).
    max_response: usize,
    queue: VecDeque<(SocketAddrV4, u32, u8, u64, usize)>,
    busy_until: Option<Instant>,
    stats: RpcServerStats,
    buf: Vec<u8>,
}

impl RpcServer {
    /// A server taking `service` per request (zero: it answers every request at the poll
    /// that reads it), holding at most `queue_limit` requests (at least 1, the one in
    /// service included), and sending responses of at most `max_response` UDP payload
    /// bytes (at least the 20-byte header).
    pub fn new(service: Duration, queue_limit: usize, max_response: usize) -> Self {
        RpcServer {
            service,
            queue_limit: queue_limit.max(1),
            max_response: max_response.max(msg::HEADER_LEN),
            queue: VecDeque::new(),
            busy_until: None,
            stats: RpcServerStats::default(),
            buf: Vec::new(),
        }
    }
    /// What it has done so far.
    pub fn stats(&self) -> &RpcServerStats {
        &self.stats
    }

    /// Reads the requests waiting on `sock` into the queue (or drops them when it is
    /// full), and answers, in arrival order, each request whose service time has ended;
    /// the next request's service starts at the poll that ended the previous one.
    /// Returns when the request in service is done (`None`: none is, so only an
    /// arriving request can give it work).
    pub fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        let mut b = [0u8; msg::HEADER_LEN];
        while let Some((n, from, _)) = sock.recv_from(&mut b) {
            let Some(Message::Request {
                id,
                xmit,
                sent_ns,
                response_bytes,
            }) = Message::parse(&b[..n.min(b.len())])
            else {
                self.stats.malformed += 1;
                continue;
            };
            self.stats.requests += 1;
            if xmit > 1 {
                self.stats.retransmitted_requests += 1;
            }
            if self.queue.len() >= self.queue_limit {
                self.stats.queue_drops += 1;
                continue;
            }
            let len = (response_bytes as usize).clamp(msg::HEADER_LEN, self.max_response);
            self.queue.push_back((from, id, xmit, sent_ns, len));
        }
        loop {
            if let Some(t) = self.busy_until {
                if t > now {
                    return Some(t);
                }
                self.busy_until = None;
                if let Some((from, id, xmit, echo_ns, len)) = self.queue.pop_front() {
                    self.respond(sock, from, id, xmit, echo_ns, len);
                }
            }
            if self.queue.is_empty() {
                return None;
            }
            if self.service == Duration::ZERO {
                while let Some((from, id, xmit, echo_ns, len)) = self.queue.pop_front() {
                    self.respond(sock, from, id, xmit, echo_ns, len);
                }
                return None;
            }
            self.busy_until = Some(now + self.service);
        }
    }

    fn respond(
        &mut self,
        sock: &mut dyn DatagramSocket,
        to: SocketAddrV4,
        id: u32,
        xmit: u8,
        echo_ns: u64,
        len: usize,
    ) {
        self.buf.resize(len, 0);
        Message::Response { id, xmit, echo_ns }.write(&mut self.buf);
        if sock.send_to(to, &self.buf) {
            self.stats.responses += 1;
            self.stats.response_bytes += len as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client's rate control is named as the controller it builds is, so an RPC flow and a
    /// stream with the same control report the same name; without one, as a fixed rate.
    #[test]
    fn rate_control_names_are_the_controllers_names() {
        let server = SocketAddrV4::new(std::net::Ipv4Addr::new(10, 0, 0, 2), 2049);
        for rate in [RateControl::None, RateControl::Aimd, RateControl::Tfrc] {
            let c = RpcClient::new(RpcClientConfig {
                rate,
                ..RpcClientConfig::nfs(server)
            });
            let want = c
                .ctl
                .as_ref()
                .map_or(Controller::Fixed(0.0).name(), |k| k.name());
            assert_eq!(rate.name(), want);
        }
    }
}
