//! Rate-based congestion control for datagram traffic: "the rate-based equivalent of the TCP
//! window algorithm" the seed promised for "domain server queries, RPC requests" (seed 000,
//! 11 Feb 1988), in two forms:
//!
//! - [`AimdRate`]: the window algorithm restated as a rate, `X = W s / R`: slow start
//!   doubles X each round trip until the first loss event, then X grows by one packet per
//!   round trip per round trip (`dX/dt = s / R^2`) and halves on a loss event, at most once
//!   per round trip.
//! - [`TfrcRate`]: its descendant, TCP-Friendly Rate Control (RFC 5348): X from the TCP
//!   throughput equation at the measured loss event rate p ([`LossIntervals`], §5),
//!   limited to twice the rate the receiver saw, doubling per round trip before the first
//!   loss, and halving when feedback stops (§4.4).
//!
//! Both take the same [`Signal`] once per feedback (from a receiver's feedback packet for a
//! stream, from the client's own responses and timeouts for RPC) and give a rate in bytes
//! per second. Times are seconds as `f64`: these are rate computations, not the bit-exact
//! timer arithmetic of the TCP.

use ackclock_wire::{Duration, Instant};

/// RFC 5348 §4.3: the largest gap between packets, t_mbi = 64 s (the rate never falls
/// below one packet per 64 s).
pub const T_MBI: f64 = 64.0;
/// The highest rate a controller allows, bytes/s (100 Gb/s): a controller whose feedback
/// never limits it (nothing measured yet) still paces its packets apart.
pub const MAX_RATE: f64 = 12.5e9;

/// The TCP throughput equation (RFC 5348 §3.1, from Padhye et al. 1998), bytes/s: a TCP
/// sending `s`-byte segments over round-trip time `r` (s) with loss event rate `p`,
/// retransmission timeout `t_rto` (s), `b` packets acknowledged per ACK.
pub fn throughput_equation(s: f64, r: f64, p: f64, t_rto: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom = r * (2.0 * b * p / 3.0).sqrt()
        + t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// The loss event rate at which the equation gives `x` (RFC 5348 §6.3.1: how a receiver
/// seeds its first loss interval from the rate it saw before the first loss). Bisection on
/// log p: the equation falls monotonically in p.
pub fn p_for_rate(s: f64, r: f64, x: f64, t_rto: f64) -> f64 {
    let (mut lo, mut hi) = (1e-9f64, 1.0f64);
    if throughput_equation(s, r, lo, t_rto, 1.0) <= x {
        return lo;
    }
    if throughput_equation(s, r, hi, t_rto, 1.0) >= x {
        return hi;
    }
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if throughput_equation(s, r, mid, t_rto, 1.0) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// The weights of the last eight loss intervals (RFC 5348 §5.4).
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// The loss history of RFC 5348 §5: loss intervals (packets from the start of one loss
/// event to the start of the next), the current open one first; p = 1 / the weighted mean.
#[derive(Clone, Debug, Default)]
pub struct LossIntervals {
    /// `closed[0]` is the most recent closed interval.
    closed: [u64; 8],
    n_closed: usize,
    /// Packets since the start of the current loss event (I_0).
    open: u64,
    /// Send time of the packet that started the current loss event (s).
    event_start: Option<f64>,
    events: u64,
}

impl LossIntervals {
    /// An empty history: no loss event yet, p = 0.
    pub fn new() -> Self {
        Self::default()
    }
    /// A packet arrived (or an exchange completed).
    pub fn on_delivered(&mut self) {
        self.open += 1;
    }
    /// A packet sent at `sent_at` (s) was lost, with the sender's RTT `rtt` (s). It starts
    /// a new loss event when it was sent more than one RTT after the packet that started
    /// the current one (§5.2); returns whether it did. `first_interval` gives I_1 for the
    /// first event (§6.3.1), from the rate seen before it.
    pub fn on_lost(
        &mut self,
        sent_at: f64,
        rtt: f64,
        first_interval: impl FnOnce() -> u64,
    ) -> bool {
        let new_event = match self.event_start {
            None => true,
            Some(t0) => sent_at > t0 + rtt,
        };
        if !new_event {
            self.open += 1;
            return false;
        }
        let closing = if self.event_start.is_none() {
            first_interval().max(1)
        } else {
            self.open.max(1)
        };
        self.closed.copy_within(0..7, 1);
        self.closed[0] = closing;
        self.n_closed = (self.n_closed + 1).min(8);
        self.open = 1;
        self.event_start = Some(sent_at);
        self.events += 1;
        true
    }
    /// Loss events so far.
    pub fn events(&self) -> u64 {
        self.events
    }
    /// The loss event rate (§5.4); zero before the first loss event.
    pub fn p(&self) -> f64 {
        if self.n_closed == 0 {
            return 0.0;
        }
        let n = self.n_closed;
        let (mut tot0, mut tot1, mut w_tot) = (0.0, 0.0, 0.0);
        // I_0 (open) with weight w_0 and the closed ones after it, against the closed ones
        // alone: the larger mean counts, so an open interval only lowers p once it is long.
        for (i, w) in WEIGHTS.iter().enumerate().take(n) {
            let interval_i = if i == 0 {
                self.open
            } else {
                self.closed[i - 1]
            };
            tot0 += interval_i as f64 * w;
            tot1 += self.closed[i] as f64 * w;
            w_tot += w;
        }
        let mean = tot0.max(tot1) / w_tot;
        if mean <= 0.0 {
            1.0
        } else {
            (1.0 / mean).min(1.0)
        }
    }
}

/// What a rate controller learns once per feedback.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Signal {
    /// A round-trip-time sample (s).
    pub rtt_sample: f64,
    /// The rate at which the receiver got data since the last feedback (bytes/s).
    pub x_recv: f64,
    /// The loss event rate.
    pub p: f64,
    /// Whether a loss event began since the last feedback.
    pub new_loss_event: bool,
}

/// The state both controllers share: RTT estimate (RFC 5348 §4.3, q = 0.9), the allowed
/// rate and when it last doubled.
#[derive(Clone, Debug)]
struct Common {
    /// Packet size s (bytes).
    s: f64,
    x: f64,
    r: Option<f64>,
    tld: Option<Instant>,
}

impl Common {
    fn new(s: f64) -> Self {
        // RFC 5348 §4.2: before any feedback, one packet per second.
        Common {
            s,
            x: s,
            r: None,
            tld: None,
        }
    }
    fn update_rtt(&mut self, sample: f64) {
        let sample = sample.max(1e-6);
        self.r = Some(match self.r {
            None => sample,
            Some(r) => 0.9 * r + 0.1 * sample,
        });
    }
    /// RFC 5348 §4.2: the initial rate after the first RTT sample, W_init / R with
    /// W_init = min(4 s, max(2 s, 4380)) (RFC 3390).
    fn initial_rate(&self) -> f64 {
        let w_init = (4.0 * self.s).min((2.0 * self.s).max(4380.0));
        w_init / self.r.unwrap_or(1.0)
    }
    fn min_rate(&self) -> f64 {
        self.s / T_MBI
    }
}

/// TFRC's sender (RFC 5348 §4).
#[derive(Clone, Debug)]
pub struct TfrcRate {
    c: Common,
    x_recv: f64,
    p: f64,
}

impl TfrcRate {
    /// A sender of `packet_bytes`-byte packets (s: the size the equation and the rates
    /// count, IP bytes per packet), at one packet per second until the first feedback
    /// (RFC 5348 §4.2).
    pub fn new(packet_bytes: usize) -> Self {
        TfrcRate {
            c: Common::new(packet_bytes as f64),
            x_recv: f64::INFINITY,
            p: 0.0,
        }
    }

    /// §4.3: a feedback packet arrived. The first sets the RTT and the initial rate
    /// (§4.2); after it, X follows the throughput equation at `sig.p` once p > 0 (at most
    /// twice X_recv, at least s / t_mbi), and before that doubles at most once per RTT
    /// (at most twice X_recv, at least the initial rate). A receiver rate of 0 (nothing
    /// measured yet) leaves the receive limit where it was.
    pub fn on_feedback(&mut self, now: Instant, sig: &Signal) {
        let first = self.c.r.is_none();
        self.c.update_rtt(sig.rtt_sample);
        let r = self.c.r.unwrap_or(1.0);
        // A receiver that has measured nothing yet reports 0: no limit from it (RFC 5348
        // §4.2 starts X_recv_set at infinity).
        if sig.x_recv > 0.0 {
            self.x_recv = sig.x_recv;
        }
        self.p = sig.p;
        // The receive limit: twice what the receiver saw (RFC 5348 §4.3 keeps the largest
        // of a short set of X_recv values; one value is RFC 3448's simpler rule).
        let recv_limit = 2.0 * self.x_recv;
        if first {
            self.c.x = self.c.initial_rate();
            self.c.tld = Some(now);
            return;
        }
        if self.p > 0.0 {
            let x_bps = throughput_equation(self.c.s, r, self.p, self.t_rto(), 1.0);
            self.c.x = x_bps.min(recv_limit).max(self.c.min_rate());
        } else if self
            .c
            .tld
            .is_none_or(|t| now.saturating_since(t).as_secs_f64() >= r)
        {
            // Slow start: double at most once per RTT, bounded by the receive limit but
            // never below the initial rate.
            self.c.x = (2.0 * self.c.x).min(recv_limit).max(self.c.initial_rate());
            self.c.tld = Some(now);
        }
    }

    /// §4.4: the no-feedback timer expired: halve the rate (through the receive limit
    /// when there was feedback, directly when there never was).
    pub fn on_no_feedback(&mut self) {
        if self.c.r.is_none() {
            self.c.x = (self.c.x / 2.0).max(self.c.min_rate());
            return;
        }
        let r = self.c.r.unwrap_or(1.0);
        let x_bps = throughput_equation(self.c.s, r, self.p, self.t_rto(), 1.0);
        if self.x_recv.is_infinite() {
            // Feedback came but never measured a rate: halve what we send.
            self.x_recv = self.c.x / 2.0;
        }
        if self.p == 0.0 || x_bps > 2.0 * self.x_recv {
            self.x_recv = (self.x_recv / 2.0).max(self.c.s / (2.0 * T_MBI));
        } else {
            self.x_recv = x_bps / 4.0;
        }
        let limit = 2.0 * self.x_recv;
        self.c.x = if self.p > 0.0 {
            x_bps.min(limit)
        } else {
            self.c.x.min(limit)
        }
        .max(self.c.min_rate());
    }

    /// t_RTO = 4 R (RFC 5348 §4.3's recommended simplification).
    fn t_rto(&self) -> f64 {
        4.0 * self.c.r.unwrap_or(1.0)
    }
    /// The loss event rate of the last feedback (0 before a loss event).
    pub fn p(&self) -> f64 {
        self.p
    }
}

/// The rate-based AIMD: the TCP window algorithm as a rate.
#[derive(Clone, Debug)]
pub struct AimdRate {
    c: Common,
    /// After the first loss event: additive increase instead of doubling.
    avoiding: bool,
    last_decrease: Option<Instant>,
    last_update: Option<Instant>,
    /// Multiplicative decrease factor (0.5, as TCP's window).
    pub beta: f64,
}

impl AimdRate {
    /// A sender of `packet_bytes`-byte packets (IP bytes), at one packet per second until
    /// the first feedback (as TFRC, RFC 5348 §4.2), in slow start, with `beta` 0.5.
    pub fn new(packet_bytes: usize) -> Self {
        AimdRate {
            c: Common::new(packet_bytes as f64),
            avoiding: false,
            last_decrease: None,
            last_update: None,
            beta: 0.5,
        }
    }

    /// A feedback arrived. The first sets the RTT and the initial rate (as TFRC's §4.2).
    /// After it: a new loss event multiplies X by `beta`, at most once per RTT, and ends
    /// slow start; otherwise X doubles once per RTT in slow start, or grows by one packet
    /// per RTT per RTT after it. X is then held to twice the receiver's rate (or twice
    /// s / R, whichever is larger) when the receiver measured one.
    pub fn on_feedback(&mut self, now: Instant, sig: &Signal) {
        let first = self.c.r.is_none();
        self.c.update_rtt(sig.rtt_sample);
        let r = self.c.r.unwrap_or(1.0);
        let since =
            |t: Option<Instant>| t.map_or(f64::INFINITY, |t| now.saturating_since(t).as_secs_f64());
        if first {
            self.c.x = self.c.initial_rate();
            self.c.tld = Some(now);
            self.last_update = Some(now);
            return;
        }
        if sig.new_loss_event {
            // At most one decrease per round trip, as TCP reduces once per window of
            // losses (the seed's April 1990 fast recovery; RFC 5681 §3.2).
            if since(self.last_decrease) >= r {
                self.c.x = (self.c.x * self.beta).max(self.c.min_rate());
                self.last_decrease = Some(now);
            }
            self.avoiding = true;
        } else if !self.avoiding {
            if since(self.c.tld) >= r {
                self.c.x *= 2.0;
                self.c.tld = Some(now);
            }
        } else {
            // One packet per RTT per RTT: dX = s dt / R^2.
            let dt = since(self.last_update).min(r);
            self.c.x += self.c.s * dt / (r * r);
        }
        // Never more than twice what the receiver saw (as TFRC, so a sender whose
        // feedback says little arrives cannot run away).
        if sig.x_recv > 0.0 {
            self.c.x = self.c.x.min(2.0 * sig.x_recv.max(self.c.s / r));
        }
        self.last_update = Some(now);
    }

    /// No feedback for a while: multiply X by `beta` (at least one packet per t_mbi) and
    /// leave slow start, as TCP collapses its window on a timeout.
    pub fn on_no_feedback(&mut self) {
        self.c.x = (self.c.x * self.beta).max(self.c.min_rate());
        self.avoiding = true;
    }
}

/// A datagram sender's rate control.
#[derive(Clone, Debug)]
pub enum Controller {
    /// A fixed rate (bytes/s): no congestion control.
    Fixed(f64),
    /// Rate-based AIMD ([`AimdRate`]).
    Aimd(AimdRate),
    /// TCP-Friendly Rate Control, RFC 5348 ([`TfrcRate`]).
    Tfrc(TfrcRate),
}

impl Controller {
    /// The allowed sending rate (bytes/s), at most [`MAX_RATE`].
    pub fn rate(&self) -> f64 {
        match self {
            Controller::Fixed(x) => *x,
            Controller::Aimd(a) => a.c.x,
            Controller::Tfrc(t) => t.c.x,
        }
        .min(MAX_RATE)
    }
    /// Hands the controller a feedback (a fixed rate ignores it).
    pub fn on_feedback(&mut self, now: Instant, sig: &Signal) {
        match self {
            Controller::Fixed(_) => {}
            Controller::Aimd(a) => a.on_feedback(now, sig),
            Controller::Tfrc(t) => t.on_feedback(now, sig),
        }
    }
    /// The no-feedback timer ([`no_feedback_timeout`](Self::no_feedback_timeout))
    /// expired (a fixed rate ignores it).
    pub fn on_no_feedback(&mut self) {
        match self {
            Controller::Fixed(_) => {}
            Controller::Aimd(a) => a.on_no_feedback(),
            Controller::Tfrc(t) => t.on_no_feedback(),
        }
    }
    /// The smoothed RTT (s; RFC 5348 §4.3's filter, q = 0.9), once a feedback gave a
    /// sample; always `None` for a fixed rate.
    pub fn rtt(&self) -> Option<f64> {
        match self {
            Controller::Fixed(_) => None,
            Controller::Aimd(a) => a.c.r,
            Controller::Tfrc(t) => t.c.r,
        }
    }
    /// RFC 5348 §4.4: the no-feedback timer, max(4 R, 2 s / X), 2 s before any feedback.
    pub fn no_feedback_timeout(&self) -> Duration {
        match self.rtt() {
            None => Duration::from_secs(2),
            Some(r) => {
                let x = self.rate().max(1e-9);
                let (s, _) = self.packet_and_rate();
                Duration::from_secs_f64((4.0 * r).max(2.0 * s / x).min(3600.0))
            }
        }
    }
    fn packet_and_rate(&self) -> (f64, f64) {
        match self {
            Controller::Fixed(x) => (1.0, *x),
            Controller::Aimd(a) => (a.c.s, a.c.x),
            Controller::Tfrc(t) => (t.c.s, t.c.x),
        }
    }
    /// The gap between packets of `bytes` at the current rate, at most t_mbi (64 s).
    pub fn interval(&self, bytes: usize) -> Duration {
        let x = self.rate().max(1e-9);
        Duration::from_secs_f64((bytes as f64 / x).min(T_MBI))
    }
    /// The name scenario files and reports use.
    pub fn name(&self) -> &'static str {
        match self {
            Controller::Fixed(_) => "none",
            Controller::Aimd(_) => "aimd",
            Controller::Tfrc(_) => "tfrc",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Instant {
        Instant::ZERO + Duration::from_secs_f64(s)
    }

    #[test]
    fn rfc5348_3_1_equation_matches_hand_computation() {
        // s = 1460, R = 0.1 s, p = 0.01, t_RTO = 0.4 s, b = 1:
        // R sqrt(2p/3) = 0.1 * 0.0816497 = 0.00816497
        // t_RTO 3 sqrt(3p/8) p (1 + 32 p^2) = 0.4 * 3 * 0.0612372 * 0.01 * 1.0032 = 0.000737188
        let x = throughput_equation(1460.0, 0.1, 0.01, 0.4, 1.0);
        let expect = 1460.0 / (0.00816497 + 0.000737188);
        assert!((x - expect).abs() / expect < 1e-4, "{x} vs {expect}");
        // About 1.2 sqrt(3/2)/sqrt(p) packets per RTT at small p: the square-root law.
        let x_small = throughput_equation(1.0, 1.0, 1e-6, 4.0, 1.0);
        assert!((x_small - (1.5f64).sqrt() / 1e-3).abs() / x_small < 0.01);
    }

    #[test]
    fn rfc5348_6_3_1_inverse_of_the_equation() {
        for p in [1e-5, 1e-3, 0.02, 0.3] {
            let x = throughput_equation(1000.0, 0.05, p, 0.2, 1.0);
            let q = p_for_rate(1000.0, 0.05, x, 0.2);
            assert!((q - p).abs() / p < 1e-6, "{p} -> {q}");
        }
    }

    #[test]
    fn rfc5348_5_4_weighted_average_of_loss_intervals() {
        let mut h = LossIntervals::new();
        assert_eq!(h.p(), 0.0);
        // First loss at t = 0 with a synthetic first interval of 100 (§6.3.1).
        assert!(h.on_lost(0.0, 0.1, || 100));
        // A loss in the same RTT belongs to the same event (§5.2).
        assert!(!h.on_lost(0.05, 0.1, || unreachable!()));
        for _ in 0..48 {
            h.on_delivered();
        }
        // Open interval 50 (two lost + 48 delivered), closed [100]: the mean is
        // max(50, 100) / 1 -> p = 0.01.
        assert!((h.p() - 0.01).abs() < 1e-12);
        assert!(h.on_lost(1.0, 0.1, || unreachable!()));
        // Closed [50, 100], open 1: tot0 = 1 + 50 = 51, tot1 = 50 + 100 = 150, W = 2.
        assert!((h.p() - 2.0 / 150.0).abs() < 1e-12);
        // Eight more events of 10 packets each: the weights reach the oldest intervals.
        for k in 0..8 {
            for _ in 0..9 {
                h.on_delivered();
            }
            h.on_lost(2.0 + k as f64, 0.1, || unreachable!());
        }
        assert!((h.p() - 0.1).abs() < 1e-12);
        assert_eq!(h.events(), 10);
    }

    #[test]
    fn rfc5348_4_3_slow_start_doubles_once_per_rtt_up_to_twice_x_recv() {
        let mut t = TfrcRate::new(1000);
        let sig = |x_recv| Signal {
            rtt_sample: 0.1,
            x_recv,
            p: 0.0,
            new_loss_event: false,
        };
        t.on_feedback(at(0.1), &sig(0.0));
        // §4.2: W_init = min(4 s, max(2 s, 4380)) = 4000 bytes per 0.1 s.
        assert!((t.c.x - 40_000.0).abs() < 1e-6);
        t.on_feedback(at(0.15), &sig(1e9));
        assert!((t.c.x - 40_000.0).abs() < 1e-6, "not within one RTT");
        t.on_feedback(at(0.21), &sig(1e9));
        assert!((t.c.x - 80_000.0).abs() < 1e-6);
        t.on_feedback(at(0.32), &sig(30_000.0));
        // Limited to 2 X_recv = 60 000 ...
        assert!((t.c.x - 60_000.0).abs() < 1e-6);
        t.on_feedback(at(0.43), &sig(10_000.0));
        // ... but never below the initial rate.
        assert!((t.c.x - 40_000.0).abs() < 1e-6);
    }

    #[test]
    fn rfc5348_4_3_with_losses_the_rate_follows_the_equation() {
        let mut t = TfrcRate::new(1000);
        let s = Signal {
            rtt_sample: 0.1,
            x_recv: 1e9,
            p: 0.0,
            new_loss_event: false,
        };
        t.on_feedback(at(0.1), &s);
        t.on_feedback(at(0.3), &Signal { p: 0.01, ..s });
        let expect = throughput_equation(1000.0, 0.1, 0.01, 0.4, 1.0);
        assert!((t.c.x - expect).abs() / expect < 1e-9);
    }

    #[test]
    fn rfc5348_4_4_no_feedback_halves_the_receive_limit_and_so_the_rate() {
        let mut t = TfrcRate::new(1000);
        let s = Signal {
            rtt_sample: 0.1,
            x_recv: 40_000.0,
            p: 0.0,
            new_loss_event: false,
        };
        t.on_feedback(at(0.1), &s);
        let before = t.c.x;
        // Each expiry halves X_recv and X follows 2 X_recv: the first brings the limit
        // down to the rate the sender has, the second halves it.
        t.on_no_feedback();
        t.on_no_feedback();
        assert!(
            (t.c.x - before / 2.0).abs() < 1e-9,
            "{} after {}",
            t.c.x,
            before
        );
        for _ in 0..100 {
            t.on_no_feedback();
        }
        assert!(
            (t.c.x - 1000.0 / T_MBI).abs() < 1e-9,
            "floor of one packet per t_mbi"
        );
    }

    #[test]
    fn rate_aimd_halves_once_per_rtt_and_adds_one_packet_per_rtt() {
        let mut a = AimdRate::new(1000);
        let s = |p_event| Signal {
            rtt_sample: 0.1,
            x_recv: 1e9,
            p: 0.0,
            new_loss_event: p_event,
        };
        a.on_feedback(at(0.1), &s(false));
        a.on_feedback(at(0.2), &s(false));
        assert!((a.c.x - 80_000.0).abs() < 1e-6, "slow start doubled");
        a.on_feedback(at(0.3), &s(true));
        assert!((a.c.x - 40_000.0).abs() < 1e-6);
        a.on_feedback(at(0.35), &s(true));
        assert!(
            (a.c.x - 40_000.0).abs() < 1e-6,
            "second loss in the same RTT"
        );
        a.on_feedback(at(0.45), &s(false));
        // 0.1 s of additive increase at s / R^2 = 100 000 B/s^2: +10 000 B/s, one packet
        // per RTT.
        assert!((a.c.x - 50_000.0).abs() < 1e-6, "{}", a.c.x);
    }
}
