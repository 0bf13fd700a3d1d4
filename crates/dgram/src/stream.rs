//! A rate-controlled datagram stream (a media flow): the sender paces packets of `s` bytes
//! at the controller's rate, the receiver detects losses and reports once per RTT
//! (RFC 5348 §6), and the sender adjusts ([`Controller`]: TFRC, rate AIMD, or a fixed
//! rate, the uncontrolled datagram flow).

use crate::msg::{self, Feedback, Message};
use crate::rate::{p_for_rate, Controller, LossIntervals, Signal};
use crate::rpc::IP_UDP_HEADERS;
use crate::stack::DatagramSocket;
use ackclock_wire::{Duration, Instant};
use core::net::SocketAddrV4;
use std::collections::VecDeque;

/// RFC 5348 §5.1: a packet is lost once NDUPACK = 3 packets with higher sequence numbers
/// have arrived.
pub const NDUPACK: u32 = 3;
/// The longest gap of sequence numbers a receiver walks packet by packet; a jump beyond it
/// (a restarted or hostile sender) is taken as one loss event, not millions of losses.
pub const MAX_GAP: u32 = 4096;

/// What a stream sender sends, to whom, and when.
#[derive(Clone, Debug)]
pub struct StreamSenderConfig {
    /// The receiver's address and port.
    pub dst: SocketAddrV4,
    /// UDP payload bytes per packet (at least the 20-byte header). The controller counts
    /// a packet as these plus 28 bytes of IP and UDP header.
    pub packet_bytes: usize,
    /// When the first packet may go: a poll before it only asks to be woken then.
    pub start: Instant,
    /// Stop sending at this time (`None`: no time limit).
    pub stop: Option<Instant>,
    /// Stop after this many payload bytes.
    pub bytes: Option<u64>,
}

/// What a stream sender has done.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StreamSenderStats {
    /// Data packets sent (the socket accepted them).
    pub packets: u64,
    /// UDP payload bytes of those packets.
    pub bytes: u64,
    /// Feedback messages received (one whose timestamp echo lies in the future counts
    /// here and in `malformed`, and is otherwise ignored).
    pub feedbacks: u64,
    /// Expiries of the no-feedback timer (RFC 5348 §4.4), each of which cut the rate.
    pub no_feedback_timeouts: u64,
    /// Datagrams received that are not feedback, and feedback echoing a time after now.
    pub malformed: u64,
    /// The last loss event rate the receiver reported.
    pub p: f64,
    /// Loss events the receiver reported (the growth of its count of them).
    pub loss_events: u64,
}

/// The sending side of a stream.
pub struct StreamSender {
    cfg: StreamSenderConfig,
    ctl: Controller,
    seq: u32,
    next_send: Instant,
    nofeedback_at: Instant,
    last_loss_events: u32,
    stats: StreamSenderStats,
    buf: Vec<u8>,
    /// (time, allowed rate bytes/s) after each change, for plots.
    pub rate_log: Vec<(Instant, f64)>,
    first_send: Option<Instant>,
    last_send: Option<Instant>,
}

impl StreamSender {
    /// A sender with `cfg` (packets raised to the 20-byte header) paced by `ctl`. It sends
    /// nothing before its first [`poll`](Self::poll).
    pub fn new(cfg: StreamSenderConfig, ctl: Controller) -> Self {
        let cfg = StreamSenderConfig {
            packet_bytes: cfg.packet_bytes.max(msg::HEADER_LEN),
            ..cfg
        };
        StreamSender {
            seq: 0,
            next_send: cfg.start,
            nofeedback_at: cfg.start + ctl.no_feedback_timeout(),
            last_loss_events: 0,
            stats: StreamSenderStats::default(),
            buf: vec![0; cfg.packet_bytes],
            rate_log: Vec::new(),
            first_send: None,
            last_send: None,
            ctl,
            cfg,
        }
    }
    /// What it has done so far.
    pub fn stats(&self) -> &StreamSenderStats {
        &self.stats
    }
    /// Its rate controller (the allowed rate now: [`Controller::rate`]).
    pub fn controller(&self) -> &Controller {
        &self.ctl
    }
    /// The mean sending rate (IP bytes/s) from the first packet to the last.
    pub fn mean_rate(&self) -> Option<f64> {
        let (a, b) = (self.first_send?, self.last_send?);
        let dt = b.saturating_since(a).as_secs_f64();
        (dt > 0.0).then(|| (self.stats.packets.saturating_sub(1) * self.s() as u64) as f64 / dt)
    }
    fn done(&self, now: Instant) -> bool {
        self.cfg.stop.is_some_and(|s| now >= s)
            || self.cfg.bytes.is_some_and(|b| self.stats.bytes >= b)
    }
    fn s(&self) -> usize {
        self.cfg.packet_bytes + IP_UDP_HEADERS
    }

    /// Runs the sender: reads the feedback waiting on `sock` into the controller, runs
    /// the no-feedback timer, and sends the packets due at the controller's rate (at most
    /// 64 per call; a refused send is tried again one packet's time later). Returns when
    /// it next needs to run: the next packet or the no-feedback timer; `None` once done
    /// (the stop time reached or `bytes` sent).
    pub fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        if now < self.cfg.start {
            return Some(self.cfg.start);
        }
        let mut b = [0u8; msg::FEEDBACK_LEN];
        let before = self.ctl.rate();
        while let Some((n, _, _)) = sock.recv_from(&mut b) {
            let Some(Message::Feedback(f)) = Message::parse(&b[..n.min(b.len())]) else {
                self.stats.malformed += 1;
                continue;
            };
            self.on_feedback(now, &f);
        }
        if self.ctl.rate() > before {
            // A faster rate applies at once, not after the gap the slower rate left.
            let gap = self.ctl.interval(self.s());
            self.next_send = self.next_send.min(now + gap);
        }
        if now >= self.nofeedback_at {
            self.stats.no_feedback_timeouts += 1;
            self.ctl.on_no_feedback();
            self.nofeedback_at = now + self.ctl.no_feedback_timeout();
        }
        if self.ctl.rate() != before {
            self.rate_log.push((now, self.ctl.rate()));
        }
        if self.done(now) {
            return None;
        }
        // Pacing (RFC 5348 §4.6): one packet per s / X; a sender that fell behind by more
        // than one interval does not burst to catch up.
        let mut sent = 0;
        while now >= self.next_send && !self.done(now) && sent < 64 {
            let rtt_us = self
                .ctl
                .rtt()
                .map_or(0, |r| (r * 1e6).min(u32::MAX as f64) as u32);
            Message::Data {
                seq: self.seq,
                sent_ns: now.as_nanos(),
                rtt_us,
            }
            .write(&mut self.buf);
            if !sock.send_to(self.cfg.dst, &self.buf) {
                // The output queue is full: try again one packet's time later.
                self.next_send = now + self.ctl.interval(self.s());
                break;
            }
            self.seq = self.seq.wrapping_add(1);
            self.stats.packets += 1;
            self.stats.bytes += self.cfg.packet_bytes as u64;
            self.first_send.get_or_insert(now);
            self.last_send = Some(now);
            sent += 1;
            let gap = self.ctl.interval(self.s());
            let floor = Instant::from_nanos(now.as_nanos().saturating_sub(gap.as_nanos()));
            self.next_send = self.next_send.max(floor) + gap;
        }
        Some(self.next_send.max(now).min(self.nofeedback_at))
    }

    fn on_feedback(&mut self, now: Instant, f: &Feedback) {
        self.stats.feedbacks += 1;
        self.stats.p = f.p();
        let echo = Instant::from_nanos(f.echo_ns);
        if echo > now {
            self.stats.malformed += 1;
            return;
        }
        let r = now
            .saturating_since(echo)
            .saturating_sub(Duration::from_micros(u64::from(f.delay_us)));
        let new_event = f.loss_events != self.last_loss_events;
        if new_event {
            self.stats.loss_events += u64::from(f.loss_events.wrapping_sub(self.last_loss_events));
        }
        self.last_loss_events = f.loss_events;
        self.ctl.on_feedback(
            now,
            &Signal {
                rtt_sample: r.as_secs_f64(),
                x_recv: f64::from(f.x_recv),
                p: f.p(),
                new_loss_event: new_event,
            },
        );
        self.nofeedback_at = now + self.ctl.no_feedback_timeout();
    }
}

/// What a stream receiver has done.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct StreamReceiverStats {
    /// Data packets received, late and duplicate ones included.
    pub packets: u64,
    /// UDP payload bytes of those packets.
    pub bytes: u64,
    /// Packets counted lost: a hole once [`NDUPACK`] packets after it have arrived
    /// (RFC 5348 §5.1), and one for each jump of more than [`MAX_GAP`] sequence numbers.
    pub lost: u64,
    /// Loss events (RFC 5348 §5.2: losses of packets sent within one RTT of the event's
    /// first are one event).
    pub loss_events: u64,
    /// Feedback messages sent (the socket accepted them).
    pub feedbacks: u64,
    /// Datagrams received that are not data messages.
    pub malformed: u64,
    /// Packets that arrived after they were counted lost, or twice.
    pub late_or_duplicate: u64,
}

/// The receiving side: loss history (RFC 5348 §5) and feedback (§6).
pub struct StreamReceiver {
    /// Where feedback goes: the source of the data.
    peer: Option<SocketAddrV4>,
    /// Sequence number of `window[0]`.
    base: u32,
    /// Arrival state of `base..`: the sender's timestamp (ns) of each received packet.
    window: VecDeque<Option<u64>>,
    losses: LossIntervals,
    last_ts: u64,
    last_arrival: Instant,
    highest: u32,
    rtt_us: u32,
    /// Bytes (IP) since the last feedback, and when it was.
    bytes_since: u64,
    last_feedback: Option<Instant>,
    pending_event: bool,
    started: bool,
    stats: StreamReceiverStats,
    buf: [u8; msg::FEEDBACK_LEN],
}

impl Default for StreamReceiver {
    fn default() -> Self {
        Self::new()
    }
}

impl StreamReceiver {
    /// A receiver that has seen nothing: its sequence numbers start at the first packet
    /// that arrives, and its feedback goes to the source of the latest data packet.
    pub fn new() -> Self {
        StreamReceiver {
            peer: None,
            base: 0,
            window: VecDeque::new(),
            losses: LossIntervals::new(),
            last_ts: 0,
            last_arrival: Instant::ZERO,
            highest: 0,
            rtt_us: 0,
            bytes_since: 0,
            last_feedback: None,
            pending_event: false,
            started: false,
            stats: StreamReceiverStats::default(),
            buf: [0; msg::FEEDBACK_LEN],
        }
    }
    /// What it has done so far.
    pub fn stats(&self) -> &StreamReceiverStats {
        &self.stats
    }
    /// The current loss event rate (RFC 5348 §5.4).
    pub fn p(&self) -> f64 {
        self.losses.p()
    }

    fn rtt(&self) -> f64 {
        if self.rtt_us == 0 {
            // §6.3: before the sender knows its RTT, feedback goes out at least every
            // 0.5 s... we use 100 ms so the sender's first sample comes quickly.
            0.1
        } else {
            f64::from(self.rtt_us) * 1e-6
        }
    }

    /// Runs the receiver: reads the data waiting on `sock` (detecting losses) and sends
    /// a feedback when one is due: at the first packet, at once when a new loss event
    /// began, and otherwise once per RTT while data arrives (RFC 5348 §6.2; the sender's
    /// RTT from its packets, 100 ms until it reports one). Returns when the next feedback
    /// is due; `None` when no data came since the last (the next arrival wakes it).
    pub fn poll(&mut self, now: Instant, sock: &mut dyn DatagramSocket) -> Option<Instant> {
        let mut b = [0u8; msg::HEADER_LEN];
        let mut first = false;
        while let Some((n, from, _)) = sock.recv_from(&mut b) {
            let Some(Message::Data {
                seq,
                sent_ns,
                rtt_us,
            }) = Message::parse(&b[..n.min(b.len())])
            else {
                self.stats.malformed += 1;
                continue;
            };
            if self.peer.is_none() {
                first = true;
            }
            self.peer = Some(from);
            self.on_data(now, seq, sent_ns, rtt_us, n);
        }
        let due = match self.last_feedback {
            None => first,
            // The same instant the wake-up below names (comparing seconds as floats
            // could miss it by a rounding and wake again at once, forever).
            Some(t) => {
                self.pending_event
                    || (self.bytes_since > 0 && now >= t + Duration::from_secs_f64(self.rtt()))
            }
        };
        if due {
            self.send_feedback(now, sock);
        }
        // The next feedback is due one RTT after the last if data came since; with nothing
        // to report, the next arrival wakes the receiver (a wake at once would spin).
        if self.bytes_since == 0 {
            return None;
        }
        self.last_feedback
            .map(|t| t + Duration::from_secs_f64(self.rtt()))
            .map(|t| t.max(now))
    }

    fn on_data(&mut self, now: Instant, seq: u32, sent_ns: u64, rtt_us: u32, len: usize) {
        self.stats.packets += 1;
        self.stats.bytes += len as u64;
        self.bytes_since += (len + IP_UDP_HEADERS) as u64;
        if rtt_us > 0 {
            self.rtt_us = rtt_us;
        }
        if !self.started {
            self.started = true;
            self.base = seq;
            self.highest = seq;
        }
        let off = seq.wrapping_sub(self.base);
        let back = self.base.wrapping_sub(seq);
        if off >= 1 << 31 && back <= MAX_GAP {
            // Just before the window: declared lost already, or a duplicate.
            self.stats.late_or_duplicate += 1;
            return;
        }
        if off > MAX_GAP {
            // A jump either way (a restarted or hostile sender): what the window holds
            // counts as delivered (its holes were not yet declared lost), the jump is one
            // loss event, and the window starts again at this packet.
            let held = self.window.iter().filter(|x| x.is_some()).count();
            for _ in 0..held {
                self.losses.on_delivered();
            }
            self.window.clear();
            self.lost(seq, sent_ns);
            self.base = seq;
            self.highest = seq;
        }
        let off = seq.wrapping_sub(self.base) as usize;
        if self.window.len() <= off {
            self.window.resize(off + 1, None);
        }
        if self.window[off].is_some() {
            self.stats.late_or_duplicate += 1;
            return;
        }
        self.window[off] = Some(sent_ns);
        if seq.wrapping_sub(self.highest) < 1 << 31 {
            self.highest = seq;
            self.last_ts = sent_ns;
            self.last_arrival = now;
        }
        self.resolve(NDUPACK);
    }

    /// Resolves the window's head while `keep` or more packets follow it.
    fn resolve(&mut self, keep: u32) {
        while self.window.len() > keep as usize {
            match self.window.pop_front() {
                Some(Some(_)) => self.losses.on_delivered(),
                Some(None) => {
                    // Its send time, interpolated from the next packet received (§5.3 interpolates
                    // between both neighbours; the next one's timestamp is within one gap).
                    let ts = self
                        .window
                        .iter()
                        .flatten()
                        .next()
                        .copied()
                        .unwrap_or(self.last_ts);
                    let seq = self.base;
                    self.lost(seq, ts);
                }
                None => break,
            }
            self.base = self.base.wrapping_add(1);
        }
    }

    fn lost(&mut self, _seq: u32, sent_ns: u64) {
        self.stats.lost += 1;
        let r = self.rtt();
        let x = self.recent_rate();
        let s = (self.stats.bytes / self.stats.packets.max(1)) as f64 + IP_UDP_HEADERS as f64;
        if self.losses.on_lost(sent_ns as f64 * 1e-9, r, || {
            (1.0 / p_for_rate(s, r, x.max(s / r), 4.0 * r)).round() as u64
        }) {
            self.stats.loss_events += 1;
            self.pending_event = true;
        }
    }

    fn recent_rate(&self) -> f64 {
        // The rate seen since the last feedback (§6.3.1 uses the rate of the last RTT).
        match self.last_feedback {
            Some(t) => {
                let dt = self.last_arrival.saturating_since(t).as_secs_f64();
                if dt > 0.0 {
                    self.bytes_since as f64 / dt
                } else {
                    0.0
                }
            }
            None => 0.0,
        }
    }

    fn send_feedback(&mut self, now: Instant, sock: &mut dyn DatagramSocket) {
        let Some(peer) = self.peer else {
            return;
        };
        // Over at least one RTT (RFC 5348 §6.2): an expedited report after a loss would
        // otherwise divide a few packets by a few microseconds.
        let x_recv = match self.last_feedback {
            Some(t) => {
                let dt = now.saturating_since(t).as_secs_f64().max(self.rtt());
                if dt > 0.0 {
                    self.bytes_since as f64 / dt
                } else {
                    0.0
                }
            }
            None => 0.0,
        };
        let f = Feedback {
            highest_seq: self.highest,
            echo_ns: self.last_ts,
            delay_us: now
                .saturating_since(self.last_arrival)
                .as_micros()
                .min(u64::from(u32::MAX)) as u32,
            x_recv: x_recv.min(u32::MAX as f64) as u32,
            p_nano: (self.losses.p() * 1e9).round() as u32,
            loss_events: self.losses.events() as u32,
        };
        Message::Feedback(f).write(&mut self.buf);
        if sock.send_to(peer, &self.buf) {
            self.stats.feedbacks += 1;
        }
        self.bytes_since = 0;
        self.pending_event = false;
        self.last_feedback = Some(now);
    }
}
