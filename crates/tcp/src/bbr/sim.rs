//! A path for the BBR tests: a sender paced and windowed by the controller, a bottleneck
//! of fixed rate with a FIFO queue (optionally drop-tail, a token-bucket policer in
//! front, or CE marking above a queueing delay), a fixed propagation delay, and a
//! receiver that ACKs every packet. The sender keeps the connection's transmit log with
//! the engine's own [`RateSampler`], so the controller sees the rate samples the
//! connection would give it. A lost packet is taken for lost when the packets after it
//! are ACKed (as SACK or RACK would) and is not resent: the model, not reliability, is
//! under test. Everything is deterministic.

use crate::cc::{AckEvent, CongestionControl, Delivery, RecoveryPhase};
use crate::rate::{AppLimitedInputs, RateSampler, TxStamp};
use crate::seq::SeqNum;
use ackclock_wire::{Duration, Instant};
use std::collections::VecDeque;

/// A token bucket that drops what exceeds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policer {
    /// Token rate, bytes per second.
    pub(crate) rate: u64,
    /// Bucket depth, bytes.
    pub(crate) bucket: u64,
}

#[derive(Clone, Copy, Debug)]
struct Pkt {
    stamp: TxStamp,
    /// When its ACK arrives (or, dropped, when the ACKs after it show the loss).
    at: Instant,
    dropped: bool,
    ce: bool,
}

/// One path and one sender on it.
#[derive(Debug)]
pub(crate) struct Path {
    /// The time of the last event.
    pub(crate) now: Instant,
    /// Bottleneck rate, bytes per second.
    pub(crate) rate: u64,
    /// Propagation round trip.
    pub(crate) base_rtt: Duration,
    /// Packet size.
    pub(crate) mss: u32,
    /// `Some(r)`: the application writes r bytes per second; `None`: always has data.
    pub(crate) app_rate: Option<u64>,
    /// A policer in front of the bottleneck.
    pub(crate) policer: Option<Policer>,
    /// Drop-tail limit of the bottleneck queue, bytes.
    pub(crate) queue_limit: Option<u64>,
    /// CE-mark packets that find more than this queueing delay.
    pub(crate) ce_above: Option<Duration>,
    /// The recovery phase reported with every ACK.
    pub(crate) recovery: RecoveryPhase,
    /// Data packets sent.
    pub(crate) sent: u64,
    /// Packets dropped (policer or queue).
    pub(crate) drops: u64,
    link_free: Instant,
    flight: VecDeque<Pkt>,
    sampler: RateSampler,
    in_flight: u32,
    next_send: Instant,
    /// Bytes the application has handed over, as of `app_at`.
    app_written: u64,
    app_at: Instant,
    tokens: u64,
    tokens_at: Instant,
    pending_lost: u32,
    min_rtt: Option<Duration>,
    srtt: Duration,
}

impl Path {
    /// A path of `rate` bytes per second and `base_rtt`, packets of `mss` bytes, a bulk
    /// sender, no loss.
    pub(crate) fn new(rate: u64, base_rtt: Duration, mss: u32) -> Self {
        Path {
            now: Instant::ZERO,
            rate,
            base_rtt,
            mss,
            app_rate: None,
            policer: None,
            queue_limit: None,
            ce_above: None,
            recovery: RecoveryPhase::Open,
            sent: 0,
            drops: 0,
            link_free: Instant::ZERO,
            flight: VecDeque::new(),
            sampler: RateSampler::new(),
            in_flight: 0,
            next_send: Instant::ZERO,
            app_written: 0,
            app_at: Instant::ZERO,
            tokens: 0,
            tokens_at: Instant::ZERO,
            pending_lost: 0,
            min_rtt: None,
            srtt: Duration::ZERO,
        }
    }

    /// The packet's time on the bottleneck link.
    pub(crate) fn tx_time(&self) -> Duration {
        Duration::from_nanos(u64::from(self.mss) * 1_000_000_000 / self.rate)
    }

    /// Bytes written and not yet sent.
    fn unsent(&self, now: Instant) -> u64 {
        match self.app_rate {
            None => u64::MAX,
            Some(r) => {
                let written = self.app_written + super::mul_rate(r, now - self.app_at);
                written.saturating_sub(self.sent * u64::from(self.mss))
            }
        }
    }

    /// Changes the application's rate from now on.
    pub(crate) fn set_app_rate(&mut self, rate: Option<u64>) {
        let now = self.now;
        if let Some(r) = self.app_rate {
            self.app_written += super::mul_rate(r, now - self.app_at);
        } else {
            self.app_written = self.sent * u64::from(self.mss);
        }
        self.app_at = now;
        self.app_rate = rate;
    }

    /// When the sender may send next, if it may at all before more ACKs come.
    fn next_send_time(&self, cc: &dyn CongestionControl) -> Option<Instant> {
        if self.in_flight + self.mss > cc.cwnd() {
            return None;
        }
        let mut t = self.now.max(self.next_send);
        if let Some(r) = self.app_rate {
            let need = (self.sent + 1) * u64::from(self.mss);
            let written = self.app_written + super::mul_rate(r, t - self.app_at);
            if written < need {
                if r == 0 {
                    return None;
                }
                // The first instant at which the application has written `need` bytes.
                let more = u128::from(need - self.app_written) * 1_000_000_000;
                let dt = more.div_ceil(u128::from(r)) as u64;
                t = t.max(self.app_at + Duration::from_nanos(dt));
            }
        }
        Some(t)
    }

    /// §3.4 of the delivery-rate draft, as the connection runs it.
    fn check_app_limited(&mut self, cc: &dyn CongestionControl, now: Instant) {
        let inputs = AppLimitedInputs {
            unsent: self.unsent(now),
            mss: self.mss,
            pending_transmissions: false,
            in_flight: u64::from(self.in_flight),
            cwnd: u64::from(cc.cwnd()),
            lost_awaiting_retransmit: false,
        };
        self.sampler.check_app_limited(&inputs);
    }

    /// Runs the next event (a send or an ACK); returns the ACK event handed to the
    /// controller, if it was one. `None` from an idle path with nothing to do.
    pub(crate) fn step(&mut self, cc: &mut dyn CongestionControl) -> Option<Option<AckEvent>> {
        let t_ack = self.flight.front().map(|p| p.at);
        let t_send = self.next_send_time(cc);
        match (t_ack, t_send) {
            (None, None) => None,
            (Some(a), s) if s.is_none_or(|s| a <= s) => Some(self.ack(cc)),
            (_, Some(s)) => {
                self.send(cc, s);
                Some(None)
            }
            _ => unreachable!(),
        }
    }

    fn send(&mut self, cc: &mut dyn CongestionControl, at: Instant) {
        self.now = at;
        self.check_app_limited(cc, at);
        let was_empty = self.in_flight == 0;
        if was_empty && self.sent > 0 {
            cc.on_send_from_idle(at, self.sampler.is_app_limited());
        }
        let stamp = self
            .sampler
            .on_send(at, was_empty, self.in_flight + self.mss);
        let size = u64::from(self.mss);
        let mut dropped = false;
        if let Some(p) = self.policer {
            let refill = super::mul_rate(p.rate, at - self.tokens_at);
            self.tokens = (self.tokens + refill).min(p.bucket);
            self.tokens_at = at;
            if self.tokens >= size {
                self.tokens -= size;
            } else {
                dropped = true;
            }
        }
        let queue_delay = self.link_free.saturating_since(at);
        let queued = super::mul_rate(self.rate, queue_delay);
        if self.queue_limit.is_some_and(|l| queued + size > l) {
            dropped = true;
        }
        let start = at.max(self.link_free);
        let pkt = if dropped {
            self.drops += 1;
            Pkt {
                stamp,
                at: start + self.base_rtt,
                dropped,
                ce: false,
            }
        } else {
            self.link_free = start + self.tx_time();
            let ce = self.ce_above.is_some_and(|t| queue_delay > t);
            Pkt {
                stamp,
                at: self.link_free + self.base_rtt,
                dropped,
                ce,
            }
        };
        self.flight.push_back(pkt);
        self.in_flight += self.mss;
        self.sent += 1;
        if let Some(rate) = cc.pacing_rate().filter(|&r| r > 0) {
            self.next_send = at + Duration::from_nanos(size * 1_000_000_000 / rate);
        }
    }

    fn ack(&mut self, cc: &mut dyn CongestionControl) -> Option<AckEvent> {
        let p = self.flight.pop_front().unwrap();
        self.now = p.at;
        if p.dropped {
            self.in_flight -= self.mss;
            self.pending_lost += self.mss;
            self.sampler.note_lost(self.mss);
            return None;
        }
        self.check_app_limited(cc, p.at);
        let prior_in_flight = self.in_flight + self.pending_lost;
        self.sampler.on_delivered(p.at, &p.stamp, self.mss);
        self.in_flight -= self.mss;
        let rtt = p.at - p.stamp.sent_time();
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.srtt = if self.srtt == Duration::ZERO {
            rtt
        } else {
            Duration::from_nanos((self.srtt.as_nanos() * 7 + rtt.as_nanos()) / 8)
        };
        let sample = self.sampler.generate_sample(self.min_rtt);
        let d = Delivery {
            delivered: self.sampler.delivered(),
            newly_delivered: self.mss,
            lost: self.sampler.lost(),
            newly_lost: core::mem::take(&mut self.pending_lost),
            prior_in_flight,
            in_flight: self.in_flight,
            app_limited: self.sampler.is_app_limited(),
            recovery: self.recovery,
            sample,
        };
        let ev = AckEvent {
            now: p.at,
            bytes_acked: self.mss,
            mss: self.mss,
            flight_bytes: prior_in_flight,
            rtt: Some(rtt),
            srtt: self.srtt,
            min_rtt: self.min_rtt,
            in_recovery: self.recovery != RecoveryPhase::Open,
            ece: p.ce,
            snd_una: SeqNum::new(0),
            snd_max: SeqNum::new(0),
            delivery: Some(d),
        };
        cc.on_ack(&ev);
        Some(ev)
    }
}
