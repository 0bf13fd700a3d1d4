//! Round-trip-time estimation and the retransmission timeout.
//!
//! Two estimators:
//! - Jacobson's mean/deviation estimator, in the scaled integer arithmetic of his message of
//!   15 Jun 1987 (seed 000): `Avg` is kept scaled by 8 (gain 1/8), `Mdev` scaled by 4
//!   (gain 1/4), and `rto = A + k*D` with k = 2 as in the message or k = 4 as RFC 6298 §2
//!   (and the revised 1988 paper) settled on. Units are ticks of the clock granularity G.
//! - The RFC 793 §3.7 estimator, the pre-1988 baseline: `SRTT = alpha*SRTT + (1-alpha)*R`,
//!   `RTO = min(UBOUND, max(LBOUND, beta*SRTT))`.
//!
//! Exponential backoff (seed 11 Feb 1988; RFC 6298 §5.5) doubles the timeout on each
//! expiry up to the maximum; the backoff stays until a new valid sample arrives (Karn's
//! algorithm: samples of retransmitted segments are not taken, see the connection).

use ackclock_wire::Duration;

/// Which estimator computes the RTO.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RttAlgorithm {
    /// Jacobson 1987/1988: `rto = srtt + max(G, k * mdev)`.
    Jacobson {
        /// Weight of the mean deviation: 2 in the 15 Jun 1987 message, 4 in RFC 6298.
        k: u32,
    },
    /// RFC 793: `rto = beta * srtt`, `srtt` smoothed with `alpha`.
    Rfc793 {
        /// Smoothing factor: `srtt = alpha * srtt + (1 - alpha) * sample` (RFC 793
        /// suggests 0.8 to 0.9).
        alpha: f64,
        /// Delay variance factor (RFC 793 suggests 1.3 to 2.0).
        beta: f64,
    },
}

/// Configuration of the estimator and the timer bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttConfig {
    /// The estimator.
    pub algorithm: RttAlgorithm,
    /// Clock granularity G: samples are counted in whole ticks of G (at least one).
    pub granularity: Duration,
    /// RTO before any sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// Lower bound (RFC 6298 §2.4: 1 s; Linux uses 200 ms).
    pub min_rto: Duration,
    /// Upper bound, also the cap of backoff (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// Karn's algorithm (Karn and Partridge, SIGCOMM 1987; RFC 6298 §3 and §5.5): no sample
    /// from a segment that was retransmitted, and the backed-off RTO is kept until a valid
    /// sample arrives. `false` is 4.3BSD as released in 1986, before Karn: a timeout does not
    /// stop the timing of the segment in flight (the sample then runs from its first
    /// transmission to the ACK of whichever copy arrived), and any ACK of new data ends the
    /// backoff (`t_rxtshift = 0` in tcp_input), so the timer is back at beta x SRTT while
    /// the go-back-N resend is still queued.
    pub karn: bool,
    /// Linux's floor (`tcp_rtt_estimator`, `mdev_max_us` at least `tcp_rto_min`): the
    /// minimum bounds the variance term rather than the whole RTO, so RTO = SRTT +
    /// max(k x RTTVAR, `min_rto`), never less than a minimum above the smoothed RTT. False
    /// is RFC 6298 §2.4's max(`min_rto`, SRTT + k x RTTVAR). Jacobson's estimator only.
    pub min_rto_on_variance: bool,
}

impl RttConfig {
    /// RFC 6298: Jacobson with k = 4, G = 1 ms, initial 1 s, bounds 1 s and 60 s.
    pub const fn rfc6298() -> Self {
        RttConfig {
            algorithm: RttAlgorithm::Jacobson { k: 4 },
            granularity: Duration::from_millis(1),
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            karn: true,
            min_rto_on_variance: false,
        }
    }
    /// The 15 Jun 1987 message: k = 2.
    pub const fn jacobson_1987() -> Self {
        RttConfig {
            algorithm: RttAlgorithm::Jacobson { k: 2 },
            ..Self::rfc6298()
        }
    }
    /// The RFC 793 baseline with its suggested alpha = 0.9 and beta = 2 (LBOUND 1 s,
    /// UBOUND 60 s).
    pub const fn rfc793() -> Self {
        RttConfig {
            algorithm: RttAlgorithm::Rfc793 {
                alpha: 0.9,
                beta: 2.0,
            },
            ..Self::rfc6298()
        }
    }
}

impl Default for RttConfig {
    fn default() -> Self {
        Self::rfc6298()
    }
}

/// Estimator state of one connection. The RTO it reports is already clamped to the
/// bounds of its [`RttConfig`]; SRTT and RTTVAR are not.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RttConfig,
    g_ns: u64,
    /// Jacobson: `Avg` scaled by 8, in ticks (the seed's variable). RFC 793: unused.
    avg_scaled: i64,
    /// Jacobson: `Mdev` scaled by 4, in ticks.
    mdev_scaled: i64,
    /// RFC 793: SRTT in seconds.
    srtt_793: f64,
    has_sample: bool,
    /// RTO before backoff, clamped.
    base_rto: Duration,
    /// Number of doublings applied since the last valid sample.
    backoff_shift: u32,
    latest: Duration,
    min_seen: Duration,
}

impl RttEstimator {
    /// An estimator with no sample: the RTO is `cfg.initial_rto` (clamped to the bounds).
    pub fn new(cfg: RttConfig) -> Self {
        let g_ns = cfg.granularity.as_nanos().max(1);
        RttEstimator {
            cfg,
            g_ns,
            avg_scaled: 0,
            mdev_scaled: 0,
            srtt_793: 0.0,
            has_sample: false,
            base_rto: clamp(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            backoff_shift: 0,
            latest: Duration::ZERO,
            min_seen: Duration::MAX,
        }
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &RttConfig {
        &self.cfg
    }

    /// Feeds one RTT measurement. Clears the backoff (a new sample means the path answers
    /// again; RFC 6298 §5.7 and Karn).
    pub fn on_sample(&mut self, rtt: Duration) {
        self.latest = rtt;
        self.min_seen = self.min_seen.min(rtt);
        self.backoff_shift = 0;
        let rto = match self.cfg.algorithm {
            RttAlgorithm::Jacobson { k } => {
                // Samples in whole ticks of G, at least one tick (a zero would make the
                // timer fire before the packet could possibly be acknowledged).
                let m = (rtt.as_nanos() / self.g_ns).max(1) as i64;
                if !self.has_sample {
                    // RFC 6298 §2.2 (and 4.3BSD-Reno): SRTT = R, RTTVAR = R/2.
                    self.avg_scaled = m << 3;
                    self.mdev_scaled = m << 1;
                } else {
                    // The seed's code, verbatim in meaning:
                    //   Meas -= (Avg >> 3); Avg += Meas; if (Meas < 0) Meas = -Meas;
                    //   Meas -= (Mdev >> 2); Mdev += Meas;
                    let mut meas = m;
                    meas -= self.avg_scaled >> 3;
                    self.avg_scaled += meas;
                    if meas < 0 {
                        meas = -meas;
                    }
                    meas -= self.mdev_scaled >> 2;
                    self.mdev_scaled += meas;
                }
                // rto = (Avg >> 3) + k*(Mdev >> 2); for k = 2 this is the seed's
                // `(Avg >> 3) + (Mdev >> 1)`. RFC 6298 §2.3 floors the variance term at G.
                let mut var_term = ((i64::from(k) * self.mdev_scaled) >> 2).max(1);
                if self.cfg.min_rto_on_variance {
                    let floor = (self.cfg.min_rto.as_nanos() / self.g_ns) as i64;
                    var_term = var_term.max(floor);
                }
                let ticks = (self.avg_scaled >> 3) + var_term;
                Duration::from_nanos((ticks.max(1) as u64).saturating_mul(self.g_ns))
            }
            RttAlgorithm::Rfc793 { alpha, beta } => {
                let r = rtt.as_secs_f64();
                self.srtt_793 = if self.has_sample {
                    alpha * self.srtt_793 + (1.0 - alpha) * r
                } else {
                    r
                };
                Duration::from_secs_f64(beta * self.srtt_793)
            }
        };
        self.has_sample = true;
        self.base_rto = clamp(rto, self.cfg.min_rto, self.cfg.max_rto);
    }

    /// The timer expired: double the timeout (capped at the maximum).
    pub fn on_timeout(&mut self) {
        if self.rto() < self.cfg.max_rto {
            self.backoff_shift += 1;
        }
    }

    /// Forget the backoff without a sample. The connection does this when the handshake
    /// completes, and on any ACK of new data when Karn's algorithm is off (4.3BSD of 1986).
    pub fn reset_backoff(&mut self) {
        self.backoff_shift = 0;
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        let shifted = if self.backoff_shift >= 32 {
            Duration::MAX
        } else {
            self.base_rto.saturating_mul(1u64 << self.backoff_shift)
        };
        shifted.min(self.cfg.max_rto)
    }

    /// RFC 6298 §5.7: after a SYN timed out, RTO is at least 3 s when data transfer begins
    /// (if no sample has been taken since).
    pub fn on_syn_timeout_recovered(&mut self) {
        if !self.has_sample {
            self.base_rto = clamp(
                self.base_rto.max(Duration::from_secs(3)),
                self.cfg.min_rto,
                self.cfg.max_rto,
            );
        }
    }

    /// Doublings of the RTO applied since the last valid sample (BSD's `t_rxtshift`).
    pub fn backoff_shift(&self) -> u32 {
        self.backoff_shift
    }
    /// Whether any RTT sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
    /// Smoothed RTT (zero before the first sample).
    pub fn srtt(&self) -> Duration {
        if !self.has_sample {
            return Duration::ZERO;
        }
        match self.cfg.algorithm {
            RttAlgorithm::Jacobson { .. } => {
                Duration::from_nanos((self.avg_scaled.max(0) as u64 >> 3) * self.g_ns)
            }
            RttAlgorithm::Rfc793 { .. } => Duration::from_secs_f64(self.srtt_793),
        }
    }
    /// Mean deviation (RTTVAR); zero for RFC 793, which does not estimate it.
    pub fn rttvar(&self) -> Duration {
        match self.cfg.algorithm {
            RttAlgorithm::Jacobson { .. } if self.has_sample => {
                Duration::from_nanos((self.mdev_scaled.max(0) as u64 >> 2) * self.g_ns)
            }
            _ => Duration::ZERO,
        }
    }
    /// The seed's scaled state `(Avg, Mdev)` in ticks, for tests that follow its arithmetic.
    pub fn scaled_state(&self) -> (i64, i64) {
        (self.avg_scaled, self.mdev_scaled)
    }
    /// The most recent sample (zero before the first).
    pub fn latest(&self) -> Duration {
        self.latest
    }
    /// The smallest sample so far; `None` before the first.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.has_sample.then_some(self.min_seen)
    }
}

fn clamp(d: Duration, lo: Duration, hi: Duration) -> Duration {
    d.max(lo).min(hi.max(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A configuration without the 1 s floor so the arithmetic is visible.
    fn unclamped(k: u32) -> RttConfig {
        RttConfig {
            algorithm: RttAlgorithm::Jacobson { k },
            granularity: ms(1),
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_nanos(1),
            max_rto: Duration::from_secs(60),
            karn: true,
            min_rto_on_variance: false,
        }
    }

    /// Linux's floor on the variance term: with a steady 40 ms RTT (RTTVAR decays toward
    /// 0), RFC 6298's RTO settles at its 200 ms minimum, Linux's at SRTT + 200 ms.
    #[test]
    fn linux_tcp_rtt_estimator_floors_the_variance_term_not_the_rto() {
        let cfg = RttConfig {
            min_rto: ms(200),
            ..RttConfig::rfc6298()
        };
        let mut rfc = RttEstimator::new(cfg);
        let mut linux = RttEstimator::new(RttConfig {
            min_rto_on_variance: true,
            ..cfg
        });
        for _ in 0..50 {
            rfc.on_sample(ms(40));
            linux.on_sample(ms(40));
        }
        assert_eq!(rfc.rto(), ms(200));
        assert_eq!(linux.rto(), ms(240));
    }

    /// The seed's C code as written, run beside the estimator on a recorded sequence.
    #[test]
    fn reproduces_the_seed_integer_arithmetic_step_by_step() {
        let samples = [100i64, 120, 90, 300, 110, 100, 95, 500, 105, 100, 100, 99];
        let mut est = RttEstimator::new(unclamped(2));
        let (mut avg, mut mdev) = (0i64, 0i64);
        for (i, &s) in samples.iter().enumerate() {
            if i == 0 {
                avg = s << 3;
                mdev = s << 1;
            } else {
                let mut meas = s;
                meas -= avg >> 3;
                avg += meas;
                if meas < 0 {
                    meas = -meas;
                }
                meas -= mdev >> 2;
                mdev += meas;
            }
            let rto = (avg >> 3) + (mdev >> 1);
            est.on_sample(ms(s as u64));
            assert_eq!(est.scaled_state(), (avg, mdev), "step {i}");
            assert_eq!(est.rto(), ms(rto as u64), "step {i}");
        }
        // A hand-checked step: after 100 then 120, Avg = 800 + (120 - 100) = 820,
        // |err| = 20, Mdev = 200 + (20 - 50) = 170, rto = 102 + 85 = 187.
        let mut e = RttEstimator::new(unclamped(2));
        e.on_sample(ms(100));
        e.on_sample(ms(120));
        assert_eq!(e.scaled_state(), (820, 170));
        assert_eq!(e.rto(), ms(187));
    }

    #[test]
    fn rfc6298_test_vector() {
        // RFC 6298 (2.2): R = 100 ms -> SRTT 100, RTTVAR 50, RTO 300 ms -> 1 s after (2.4).
        let mut e = RttEstimator::new(RttConfig::rfc6298());
        assert_eq!(e.rto(), Duration::from_secs(1));
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), ms(100));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), Duration::from_secs(1));
        let mut u = RttEstimator::new(unclamped(4));
        u.on_sample(ms(100));
        assert_eq!(u.rto(), ms(300));
        // R' = 200 ms: RTTVAR = 3/4*50 + 1/4*100 = 62.5, SRTT = 112.5, RTO = 362.5 ms; the
        // integer version in 1 ms ticks truncates to 62 and 112: 112 + 250 = 362 ms.
        u.on_sample(ms(200));
        assert_eq!(u.rto(), ms(362));
    }

    #[test]
    fn constant_rtt_keeps_the_integer_residue_and_the_granularity_floor() {
        // With a constant RTT the scaled Mdev decays by Mdev>>2 per sample and sticks at 3
        // (3>>2 == 0): the seed's integer arithmetic never quite reaches zero variance, so
        // RTO settles at SRTT + 3 ticks with k = 4, and never below SRTT + G for any k.
        for k in [2, 4] {
            let mut e = RttEstimator::new(unclamped(k));
            for _ in 0..200 {
                e.on_sample(ms(50));
            }
            assert_eq!(e.scaled_state(), (400, 3), "k {k}");
            assert_eq!(e.rttvar(), Duration::ZERO);
            assert!(e.rto() >= ms(51), "k {k}: {:?}", e.rto());
        }
        let mut e = RttEstimator::new(unclamped(4));
        for _ in 0..200 {
            e.on_sample(ms(50));
        }
        assert_eq!(e.rto(), ms(53));
        // A sample below one tick counts as one tick.
        let mut f = RttEstimator::new(unclamped(4));
        f.on_sample(Duration::from_micros(10));
        assert_eq!(f.srtt(), ms(1));
    }

    #[test]
    fn backoff_doubles_to_the_cap_and_stays_until_a_sample() {
        let mut e = RttEstimator::new(RttConfig::rfc6298());
        e.on_sample(ms(100));
        let mut expect = Duration::from_secs(1);
        for _ in 0..8 {
            e.on_timeout();
            expect = (expect + expect).min(Duration::from_secs(60));
            assert_eq!(e.rto(), expect);
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        assert_eq!(e.backoff_shift(), 6, "no further shifts once capped");
        e.on_sample(ms(100));
        assert_eq!(e.rto(), Duration::from_secs(1));
    }

    #[test]
    fn rfc793_estimator() {
        let mut e = RttEstimator::new(RttConfig {
            min_rto: Duration::from_nanos(1),
            ..RttConfig::rfc793()
        });
        e.on_sample(ms(1000));
        assert_eq!(e.rto(), ms(2000));
        e.on_sample(ms(2000));
        // SRTT = 0.9 * 1.0 + 0.1 * 2.0 = 1.1 s; RTO = 2.2 s.
        let srtt = e.srtt().as_secs_f64();
        assert!((srtt - 1.1).abs() < 1e-9, "{srtt}");
        assert!((e.rto().as_secs_f64() - 2.2).abs() < 1e-6);
        assert_eq!(e.rttvar(), Duration::ZERO);
    }

    #[test]
    fn syn_timeout_raises_initial_rto_to_three_seconds() {
        let mut e = RttEstimator::new(RttConfig::rfc6298());
        e.on_timeout();
        e.on_syn_timeout_recovered();
        e.reset_backoff();
        assert_eq!(e.rto(), Duration::from_secs(3));
    }
}
