//! CUBIC (RFC 9438): the modern descendant of the seeds' AIMD, for comparison. The window
//! grows as a cubic function of the time since the last reduction,
//! `W_cubic(t) = C (t - K)^3 + W_max`, with a Reno-friendly floor `W_est` so it never does
//! worse than AIMD where AIMD is good (small windows, short RTTs).
//!
//! Window arithmetic is in segments (f64) as the RFC writes it; cwnd is reported in bytes.

use crate::cc::{AckEvent, CongestionControl, CongestionEvent};
use crate::hystart::{SlowStartExit, SlowStartGrowth, CSS_GROWTH_DIVISOR};
use ackclock_wire::Instant;

/// RFC 9438 parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    /// C (§4.2: 0.4).
    pub c: f64,
    /// beta_cubic (§4.6: 0.7).
    pub beta: f64,
    /// §4.7 fast convergence.
    pub fast_convergence: bool,
    /// §4.3 Reno-friendly region.
    pub reno_friendly: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
        }
    }
}

/// The CUBIC controller of one connection. The window is kept in segments of the MSS given
/// to [`Cubic::new`] (the connection makes a new controller once the MSS is negotiated).
#[derive(Clone, Debug)]
pub(crate) struct Cubic {
    cfg: CubicConfig,
    mss: f64,
    /// Congestion window in segments.
    cwnd: f64,
    ssthresh: f64,
    /// W_max: the window just before the last reduction, in segments.
    w_max: f64,
    /// cwnd before the last reduction (cwnd_prior of §4.3).
    cwnd_prior: f64,
    /// Start of the current congestion-avoidance epoch, if one has started.
    epoch_start: Option<Instant>,
    k: f64,
    /// W_est of the Reno-friendly region.
    w_est: f64,
    /// How slow start ends: at the first loss, by RFC 9406 HyStart++ (RFC 9438 §4.10 allows
    /// it) or by Linux's HyStart.
    exit: SlowStartExit,
}

impl Cubic {
    /// A controller for segments of `mss` bytes, with cwnd = `initial_window_bytes` (at
    /// least 1) and ssthresh = `initial_ssthresh`, both in bytes.
    pub(crate) fn new(
        cfg: CubicConfig,
        mss: u32,
        initial_window_bytes: u32,
        initial_ssthresh: u32,
    ) -> Self {
        let m = f64::from(mss.max(1));
        Cubic {
            cfg,
            mss: m,
            cwnd: f64::from(initial_window_bytes.max(1)) / m,
            ssthresh: f64::from(initial_ssthresh) / m,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch_start: None,
            k: 0.0,
            w_est: 0.0,
            exit: SlowStartExit::Standard,
        }
    }

    /// The same controller with its slow start ended by `mode`.
    pub(crate) fn with_hystart(mut self, mode: crate::config::HyStart) -> Self {
        self.exit = SlowStartExit::new(mode);
        self
    }

    /// W_cubic(t) of §4.2, in segments, `t` in seconds since the epoch start.
    pub(crate) fn w_cubic(&self, t: f64) -> f64 {
        self.cfg.c * (t - self.k).powi(3) + self.w_max
    }
    /// K of §4.2 eq. 2, in seconds: the time from the epoch start until W_cubic reaches
    /// W_max again. Set when an epoch starts.
    #[cfg(test)]
    pub(crate) fn k(&self) -> f64 {
        self.k
    }
    /// W_max, in segments: the window just before the last reduction.
    #[cfg(test)]
    pub(crate) fn w_max_segments(&self) -> f64 {
        self.w_max
    }
    /// The congestion window, in segments (fractional).
    #[cfg(test)]
    pub(crate) fn cwnd_segments(&self) -> f64 {
        self.cwnd
    }
    /// Start of the current congestion-avoidance epoch: the time of the first ACK in
    /// congestion avoidance since the connection began or since the last reduction or
    /// timeout. `None` until that ACK.
    #[cfg(test)]
    pub(crate) fn epoch_start(&self) -> Option<Instant> {
        self.epoch_start
    }

    fn start_epoch(&mut self, now: Instant) {
        self.epoch_start = Some(now);
        if self.w_max <= self.cwnd {
            // After a timeout (or when cwnd already passed W_max): §4.8, K = 0 and W_max is
            // the window at the start of this congestion-avoidance stage.
            self.k = 0.0;
            self.w_max = self.cwnd;
        } else {
            // §4.2 eq. 2: K = cbrt((W_max - cwnd_epoch) / C).
            self.k = ((self.w_max - self.cwnd) / self.cfg.c).cbrt();
        }
        self.w_est = self.cwnd;
    }

    fn reduce(&mut self, flight_segments: f64) {
        // A loss, an ECN mark or a timeout ends the first slow start (RFC 9406 §4.3).
        self.exit.on_congestion();
        // §4.7 fast convergence: a flow whose W_max shrinks releases bandwidth faster.
        self.cwnd_prior = self.cwnd;
        if self.cfg.fast_convergence && self.cwnd < self.w_max {
            self.w_max = self.cwnd * (1.0 + self.cfg.beta) / 2.0;
        } else {
            self.w_max = self.cwnd;
        }
        // §4.6: ssthresh = flight_size * beta_cubic, at least 2 segments.
        let base = if flight_segments > 0.0 {
            flight_segments
        } else {
            self.cwnd
        };
        self.ssthresh = (base * self.cfg.beta).max(2.0);
        self.epoch_start = None;
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u32 {
        // At least a byte: a window set to part of a segment (`set_cwnd`) rounds down to 0
        // otherwise, and a zero window never sends again.
        ((self.cwnd * self.mss).min(f64::from(u32::MAX)) as u32).max(1)
    }
    fn ssthresh(&self) -> u32 {
        (self.ssthresh * self.mss).min(f64::from(u32::MAX)) as u32
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.in_recovery || ev.bytes_acked == 0 {
            return;
        }
        let acked = f64::from(ev.bytes_acked) / self.mss;
        if self.cwnd < self.ssthresh {
            let growth = self.exit.on_slow_start_ack(ev, self.cwnd);
            if growth == SlowStartGrowth::EnterCongestionAvoidance {
                // HyStart: ssthresh = cwnd; the next ACK starts an epoch from this window
                // (W_max = cwnd, K = 0, as after a timeout: no reduction came first).
                self.ssthresh = self.cwnd;
                return;
            }
            // Slow start by byte counting with RFC 3465's limit L = 2 segments per ACK (RFC
            // 9438 leaves slow start to RFC 5681, or HyStart++ below). Without the limit, the
            // one cumulative ACK that follows a go-back-N retransmission after a timeout
            // (acknowledging everything the receiver held) would open cwnd from 1 to the
            // whole window in one step and send it as a burst.
            if growth == SlowStartGrowth::Conservative {
                self.cwnd += acked.min(2.0) / f64::from(CSS_GROWTH_DIVISOR);
            } else {
                self.cwnd += acked.min(2.0);
            }
            return;
        }
        self.exit.on_avoidance_ack(ev);
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.start_epoch(ev.now);
                ev.now
            }
        };
        let rtt = ev.srtt.as_secs_f64();
        let t = ev.now.saturating_since(epoch).as_secs_f64();
        // §4.2: target = W_cubic(t + RTT), clamped to [cwnd, 1.5 cwnd].
        let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
        // §4.3: the Reno-friendly estimate; alpha becomes 1 once W_est reaches cwnd_prior.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - self.cfg.beta) / (1.0 + self.cfg.beta)
        };
        self.w_est += alpha * acked / self.cwnd;
        if self.cfg.reno_friendly && self.w_cubic(t) < self.w_est {
            self.cwnd = self.w_est;
        } else {
            // §4.4/4.5: concave and convex regions.
            self.cwnd += (target - self.cwnd) / self.cwnd * acked;
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.reduce(f64::from(ev.flight_bytes) / self.mss);
        self.cwnd = self.ssthresh.max(2.0);
    }

    fn on_rto(&mut self, ev: &CongestionEvent, first: bool) {
        self.exit.on_rto();
        if first {
            self.reduce(f64::from(ev.flight_bytes) / self.mss);
            // §4.8: the first congestion avoidance after a timeout starts from K = 0 and
            // W_max = cwnd at that time, which `start_epoch` does when W_max <= cwnd.
            self.w_max = 0.0;
        }
        self.epoch_start = None;
        self.cwnd = 1.0;
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = (f64::from(cwnd) / self.mss).max(1.0 / self.mss);
    }

    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        // W_max keeps the reduction's value, the window before it: growth after the undo
        // starts from the plateau there (as Linux's CUBIC undo, which restores cwnd only).
        self.cwnd = self.cwnd.max(f64::from(cwnd) / self.mss);
        self.ssthresh = self.ssthresh.max(f64::from(ssthresh) / self.mss);
        self.epoch_start = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::Duration;

    const MSS: u32 = 1000;

    fn ack(now: Instant, bytes: u32, srtt: Duration) -> AckEvent {
        AckEvent {
            now,
            bytes_acked: bytes,
            mss: MSS,
            flight_bytes: 0,
            rtt: Some(srtt),
            srtt,
            min_rtt: Some(srtt),
            in_recovery: false,
            ece: false,
            snd_una: crate::seq::SeqNum::new(0),
            snd_max: crate::seq::SeqNum::new(0),
            delivery: None,
        }
    }

    #[test]
    fn k_matches_the_rfc_examples() {
        // RFC 9438 §4.2: W_max = 100, cwnd_epoch = 70 -> K = 4.217 s; 1000/700 -> 9.086 s.
        for (wmax, epoch, k) in [(100.0, 70.0, 4.217), (1000.0, 700.0, 9.086)] {
            let mut c = Cubic::new(CubicConfig::default(), MSS, MSS, 0);
            c.w_max = wmax;
            c.cwnd = epoch;
            c.start_epoch(Instant::ZERO);
            assert!((c.k() - k).abs() < 0.001, "{}", c.k());
        }
    }

    #[test]
    fn reduction_and_fast_convergence() {
        let mut c = Cubic::new(CubicConfig::default(), MSS, 100 * MSS, 0);
        c.on_congestion(&CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 100 * MSS,
            snd_wnd: u32::MAX,
        });
        assert_eq!(c.cwnd(), 70 * MSS);
        assert_eq!(c.w_max_segments(), 100.0);
        // A second loss below W_max: W_max = 0.85 cwnd.
        c.on_congestion(&CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 70 * MSS,
            snd_wnd: u32::MAX,
        });
        assert!((c.w_max_segments() - 70.0 * 0.85).abs() < 1e-9);
        assert_eq!(c.cwnd(), 49 * MSS);
    }

    /// Over an epoch without loss the window follows W(t) = C (t - K)^3 + W_max within one
    /// segment (the Reno-friendly region off, so the cubic alone is visible).
    #[test]
    fn window_follows_the_cubic_within_one_segment() {
        let cfg = CubicConfig {
            reno_friendly: false,
            ..CubicConfig::default()
        };
        let rtt = Duration::from_millis(100);
        let mut c = Cubic::new(cfg, MSS, 100 * MSS, 0);
        c.on_congestion(&CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 100 * MSS,
            snd_wnd: u32::MAX,
        });
        let mut now = Instant::ZERO;
        let mut worst: f64 = 0.0;
        // Ten seconds of ACK clocking: a window's worth of ACKs per RTT.
        for _ in 0..100 {
            let w = c.cwnd_segments();
            let n = w.floor() as u32;
            for i in 0..n {
                let t = now + Duration::from_nanos(rtt.as_nanos() * u64::from(i) / u64::from(n));
                c.on_ack(&ack(t, MSS, rtt));
            }
            now += rtt;
            let t = now.saturating_since(c.epoch_start().unwrap()).as_secs_f64();
            let ideal = c.w_cubic(t).min(1e9);
            worst = worst.max((c.cwnd_segments() - ideal).abs());
        }
        assert!(worst <= 1.0 + 1e-9, "worst deviation {worst} segments");
        // And it passed W_max after K seconds (the convex region was reached).
        assert!(c.cwnd_segments() > 100.0);
    }

    #[test]
    fn reno_friendly_region_takes_over_for_small_windows() {
        let rtt = Duration::from_millis(10);
        let mut c = Cubic::new(CubicConfig::default(), MSS, 10 * MSS, 0);
        c.on_congestion(&CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 10 * MSS,
            snd_wnd: u32::MAX,
        });
        let mut now = Instant::ZERO;
        for _ in 0..50 {
            let n = c.cwnd_segments().floor() as u32;
            for _ in 0..n {
                c.on_ack(&ack(now, MSS, rtt));
            }
            now += rtt;
        }
        // With a 10 ms RTT the cubic grows slowly; W_est (AIMD-like growth) dominates.
        let t = now.saturating_since(c.epoch_start().unwrap()).as_secs_f64();
        assert!(c.w_cubic(t) < c.cwnd_segments());
    }

    #[test]
    fn slow_start_grows_at_most_two_segments_per_ack() {
        let mut c = Cubic::new(CubicConfig::default(), MSS, MSS, u32::MAX);
        // A cumulative ACK of 90 segments (after a timeout's go-back-N).
        c.on_ack(&ack(Instant::ZERO, 90 * MSS, Duration::from_millis(50)));
        assert_eq!(c.cwnd(), 3 * MSS);
        c.on_ack(&ack(Instant::ZERO, MSS, Duration::from_millis(50)));
        assert_eq!(c.cwnd(), 4 * MSS);
    }

    #[test]
    fn timeout_restarts_from_one_segment_with_k_zero() {
        let mut c = Cubic::new(CubicConfig::default(), MSS, 50 * MSS, 0);
        c.on_rto(
            &CongestionEvent {
                now: Instant::ZERO,
                mss: MSS,
                flight_bytes: 50 * MSS,
                snd_wnd: u32::MAX,
            },
            true,
        );
        assert_eq!(c.cwnd(), MSS);
        assert_eq!(c.ssthresh(), 35 * MSS);
        c.set_cwnd(35 * MSS);
        c.on_ack(&ack(Instant::ZERO, MSS, Duration::from_millis(50)));
        assert_eq!(c.k(), 0.0);
    }
}
