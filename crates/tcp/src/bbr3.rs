//! BBR v3: BBR v1's model (bottleneck bandwidth, min_rtt, pacing at a gain times the
//! one and a cwnd of a gain times their product) with bounds that loss and ECN set, so
//! that BBR keeps loss and queues low and leaves room for loss-based flows.
//!
//! Sources: draft-ietf-ccwg-bbr (Cardwell, Swett, Vasiliev, Kang, Cheng, Hassas Yeganeh,
//! Jacobson et al.; "the draft", cited by section) and Google's `tcp_bbr.c` on the v3
//! branch of github.com/google/bbr ("Linux v3"), which this module follows where the two
//! differ (the draft describes the same algorithm with some constants rounded). The code
//! is written from those descriptions.
//!
//! What v3 adds to [v1](crate::Bbr):
//! - A two-sided model (draft §5.5.9 to §5.5.10): `bw_hi` and `inflight_hi`, long-term
//!   upper bounds that only a probe's loss or ECN marks lower; `bw_lo` and
//!   `inflight_lo`, short-term lower bounds that each round with loss (times beta 0.7,
//!   but not below what the last round delivered) or with CE marks (times 1 -
//!   alpha/3) lowers while BBR is not probing. The bandwidth used is
//!   min(`bw_hi`, `bw_lo`); cwnd is capped by the bounds and the phase.
//! - PROBE_BW in four phases (draft §5.3.3): DOWN (pacing 0.91, until the flight is
//!   below both the BDP and 85% of `inflight_hi`), CRUISE (pacing 1, with 15% headroom
//!   under `inflight_hi`), REFILL (one round at pacing 1 with the lower bounds reset) and
//!   UP (pacing 1.25, cwnd gain 2.25, `inflight_hi` growing exponentially per round
//!   while no loss or marks say too much). A new probe starts after a random 2 to 3 s,
//!   or sooner once as many rounds have passed as a Reno flow with this BDP takes
//!   between losses (at most 63).
//! - Loss and ECN thresholds: a probe whose rate sample loses more than 2% of the flight
//!   it was sent in, or (with ECN) sees more than half its bytes CE-marked, ends; and
//!   `inflight_hi` becomes max(that flight, 0.7 x the BDP).
//! - STARTUP also ends on loss (6 loss events in a recovery round and the loss threshold
//!   crossed) or on ECN (two rounds with more than half the bytes marked), and paces at
//!   2.77 (4 ln 2) with cwnd gain 2.
//! - PROBE_RTT every 5 s, at half the BDP instead of 4 packets.
//!
//! Left out, with what the engine would need for them: Linux's fast path for
//! application-limited ACKs (an optimisation, not a behaviour); the per-packet check of
//! a packet as it is marked lost (`bbr_skb_marked_lost`: the connection reports losses
//! per ACK, so the check is made on the ACK's rate sample, as `bbr_adapt_upper_bounds`
//! also does); the loss-probe (TLP) recovery signal; Protective Load Balancing.
//!
//! ECN: Linux v3 uses it only on a route marked for shallow-threshold ECN (DCTCP-style
//! marking) and at an RTT of at most 5 ms; here [`Bbr3Config::ecn`] says so. The CE
//! marks are counted from [`AckEvent::ece`]: an ACK with ECE delivered CE-marked bytes
//! (the per-packet echo of RFC 8257 §3.2 or AccECN).

use crate::bbr::{
    bdp, AckAggregation, BbrMode, PacingRate, Prng, Rounds, FULL_BW_GROWTH, FULL_BW_ROUNDS,
    MIN_CWND_PACKETS, STARTUP_GAIN,
};
use crate::cc::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, Delivery, RateSample, RecoveryPhase,
};
use ackclock_wire::{Duration, Instant};

/// "None" for the bounds that may be unset (Linux's `~0U`).
const UNSET: u64 = u64::MAX;

/// The settings of [`Bbr3`]. [`Default`] gives Linux v3's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bbr3Config {
    /// Seed of the generator that draws the wait before each bandwidth probe.
    pub seed: u64,
    /// STARTUP's pacing gain (2.77, 4 ln 2 as Linux v3 rounds it; the draft's
    /// BBRStartupPacingGain): the rate doubles each round as a slow-starting Reno flow's.
    pub startup_pacing_gain: f64,
    /// STARTUP's and DRAIN's cwnd gain (2).
    pub startup_cwnd_gain: f64,
    /// DRAIN's pacing gain (1/2.885 = 0.347, Linux v3's `bbr_drain_gain`; the draft's
    /// 0.35).
    pub drain_gain: f64,
    /// PROBE_BW's cwnd gain (2).
    pub cwnd_gain: f64,
    /// Added to the cwnd gain in PROBE_BW's UP phase (0.25, Linux v3's
    /// `bbr_bw_probe_cwnd_gain`).
    pub probe_up_cwnd_gain: f64,
    /// UP's pacing gain (1.25).
    pub probe_up_pacing_gain: f64,
    /// DOWN's pacing gain (0.91, Linux v3's; the draft's 0.9).
    pub probe_down_pacing_gain: f64,
    /// How long a min_rtt lasts without being seen again (10 s).
    pub min_rtt_window: Duration,
    /// PROBE_RTT comes when no RTT as low as the last PROBE_RTT's minimum has been seen
    /// for this long (5 s, Linux v3's `bbr_probe_rtt_win_ms`).
    pub probe_rtt_interval: Duration,
    /// PROBE_RTT's length at the low flight, at least a round besides (200 ms).
    pub probe_rtt_duration: Duration,
    /// PROBE_RTT's cwnd as a fraction of the BDP (0.5), at least 4 packets.
    pub probe_rtt_cwnd_gain: f64,
    /// The loss rate that says a probe went too far (0.02).
    pub loss_threshold: f64,
    /// The multiplier of the lower bounds on a round with loss, and of the BDP that
    /// `inflight_hi` falls to at least (0.7; Linux v3's `bbr_beta` is the 0.3 taken off).
    pub beta: f64,
    /// The fraction of `inflight_hi` left free when cruising (0.15).
    pub inflight_headroom: f64,
    /// Loss events in a recovery round that, with the loss threshold crossed, end STARTUP
    /// (6).
    pub full_loss_count: u32,
    /// Use ECN marks (Linux v3 does on routes configured for shallow-threshold ECN only).
    pub ecn: bool,
    /// ECN is used only at a min_rtt up to this (5 ms; zero: any).
    pub ecn_max_rtt: Duration,
    /// The CE fraction that says a probe went too far (0.5).
    pub ecn_threshold: f64,
    /// `inflight_lo` is cut by this times alpha on a round with marks (1/3).
    pub ecn_factor: f64,
    /// The gain of alpha's moving average of the per-round CE fraction (1/16).
    pub ecn_alpha_gain: f64,
    /// Rounds above `ecn_threshold` that end STARTUP (2).
    pub full_ecn_count: u32,
    /// After a cycle with marks and no loss, the next probe's first step is this
    /// fraction of `inflight_hi` (0.5).
    pub ecn_reprobe_gain: f64,
    /// The shortest wait between bandwidth probes (2 s).
    pub probe_wait_base: Duration,
    /// The random part of that wait, drawn uniformly below it (1 s).
    pub probe_wait_rand: Duration,
    /// The Reno-coexistence bound: a probe comes after at most this many rounds (63),
    /// or after as many rounds as the BDP has packets, if fewer.
    pub probe_max_rounds: u32,
    /// A random 0 to this less one is added to those rounds (2).
    pub probe_rand_rounds: u32,
    /// Pacing runs this fraction below the model's rate (0.01).
    pub pacing_margin: f64,
    /// Gain on the ACK aggregation estimate (1; 0 turns it off).
    pub extra_acked_gain: f64,
    /// The aggregation estimate's window in rounds, once the pipe is full (5).
    pub extra_acked_window_rounds: u32,
    /// The aggregation allowance is at most this much time at the bandwidth (100 ms).
    pub extra_acked_max: Duration,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config {
            seed: 0,
            startup_pacing_gain: 2.77,
            startup_cwnd_gain: 2.0,
            drain_gain: 1.0 / STARTUP_GAIN,
            cwnd_gain: 2.0,
            probe_up_cwnd_gain: 0.25,
            probe_up_pacing_gain: 1.25,
            probe_down_pacing_gain: 0.91,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_interval: Duration::from_secs(5),
            probe_rtt_duration: Duration::from_millis(200),
            probe_rtt_cwnd_gain: 0.5,
            loss_threshold: 0.02,
            beta: 0.7,
            inflight_headroom: 0.15,
            full_loss_count: 6,
            ecn: false,
            ecn_max_rtt: Duration::from_millis(5),
            ecn_threshold: 0.5,
            ecn_factor: 1.0 / 3.0,
            ecn_alpha_gain: 1.0 / 16.0,
            full_ecn_count: 2,
            ecn_reprobe_gain: 0.5,
            probe_wait_base: Duration::from_secs(2),
            probe_wait_rand: Duration::from_secs(1),
            probe_max_rounds: 63,
            probe_rand_rounds: 2,
            pacing_margin: 0.01,
            extra_acked_gain: 1.0,
            extra_acked_window_rounds: 5,
            extra_acked_max: Duration::from_millis(100),
        }
    }
}

/// The phases of v3's PROBE_BW (draft §5.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeBwPhase {
    /// Pacing below the bandwidth to drain the queue the last probe built.
    Down,
    /// Pacing at the bandwidth, with headroom below `inflight_hi`.
    Cruise,
    /// One round at the bandwidth with the lower bounds lifted, to fill the pipe before
    /// probing.
    Refill,
    /// Pacing above the bandwidth and raising `inflight_hi`, to find more.
    Up,
}

/// What the ACKs now arriving say about bandwidth probing (Linux v3's `bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    /// Not probing, no feedback from a probe.
    Init,
    /// Sending at the estimated bandwidth to fill the pipe.
    Refilling,
    /// The flight is rising to probe; its ACKs are not back yet.
    ProbeStarting,
    /// The ACKs are the probe's.
    ProbeFeedback,
    /// The probe stopped; its ACKs are still arriving.
    ProbeStopping,
}

/// BBR v3 for one connection (draft-ietf-ccwg-bbr; Google's v3 `tcp_bbr.c`), built by
/// [`Bbr3::new`].
///
/// Like [`Bbr`](crate::Bbr) it asks the connection for
/// [`Delivery`](crate::cc::Delivery) on every ACK, paces by its own rate and sets the
/// window during recovery itself; in addition it bounds the flight by what loss and ECN
/// marks said of recent probes (`inflight_hi`, `inflight_lo`, `bw_lo`), and cycles
/// PROBE_BW through the phases of [`ProbeBwPhase`].
#[derive(Clone, Debug)]
pub struct Bbr3 {
    cfg: Bbr3Config,
    mss: u32,
    initial_window: u32,
    cwnd: u32,
    ssthresh: u32,
    prior_cwnd: u32,
    /// The pacing rate.
    pacing: PacingRate,
    mode: BbrMode,
    phase: ProbeBwPhase,
    pacing_gain: f64,
    cwnd_gain: f64,
    rounds: Rounds,
    /// The maximum delivery rate of this probe cycle and the one before (draft §5.5.5).
    bw_hi: [u64; 2],
    /// The short-term lower bounds (draft §5.5.10), `UNSET` while not in force.
    bw_lo: u64,
    inflight_lo: u64,
    /// The long-term upper bound on the flight (draft §5.5.9), `UNSET` until a probe or
    /// STARTUP finds one.
    inflight_hi: u64,
    /// The largest rate and delivered volume of the last loss round (draft §5.5.8).
    bw_latest: u64,
    inflight_latest: u64,
    /// `C.delivered` at which the loss round (a round timed from the first loss) ends.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_in_cycle: bool,
    loss_events_in_round: u32,
    ecn_in_round: bool,
    ecn_in_cycle: bool,
    ecn: Ecn,
    full: FullBw,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Option<Instant>,
    /// The minimum RTT since the last PROBE_RTT, and when it was seen.
    probe_rtt_min: Option<Duration>,
    probe_rtt_min_stamp: Option<Instant>,
    probe_rtt_done: Option<Instant>,
    probe_rtt_round_done: bool,
    probe_rtt_app_limited: (u64, u64),
    idle_restart: bool,
    // PROBE_BW's probing state (draft §5.3.3).
    cycle_start: Instant,
    probe_wait: Duration,
    rounds_since_probe: u32,
    ack_phase: AckPhase,
    bw_probe_samples: bool,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    probe_up_rounds: u32,
    /// Bytes to ACK per packet of `inflight_hi` growth in UP (`UNSET`: not growing).
    probe_up_cnt: u64,
    probe_up_acked: u64,
    prev_recovery: RecoveryPhase,
    /// The lower and upper bounds before the last recovery, for an undo.
    undo: (u64, u64, u64),
    aggregation: AckAggregation,
    delivered_time: Instant,
    delivered: u64,
    rng: Prng,
}

/// v3's full-pipe detector (Linux v3's `bbr_check_full_bw_reached`): per rate sample,
/// also in PROBE_BW's UP phase, where a plateau ends the probe.
#[derive(Clone, Copy, Debug, Default)]
struct FullBw {
    bw: u64,
    count: u32,
    /// A plateau now (reset whenever the rate grows 25%).
    now: bool,
    /// STARTUP found the pipe full; stays set.
    reached: bool,
}

impl FullBw {
    fn reset(&mut self, bw: u64) {
        self.bw = bw;
        self.count = 0;
        self.now = false;
    }
}

/// The ECN state (Linux v3's `ecn_*` and `alpha_*`).
#[derive(Clone, Copy, Debug)]
struct Ecn {
    /// Linux v3's `ecn_eligible`: ECN is configured and min_rtt is low enough.
    eligible: bool,
    /// Moving average of the per-round CE fraction (starts at 1: a flow that starts
    /// into a congested bottleneck answers at once).
    alpha: f64,
    /// `C.delivered_ce`: bytes delivered in segments whose ACK echoed CE.
    delivered_ce: u64,
    /// `C.delivered` and `C.delivered_ce` at the last alpha update.
    last: (u64, u64),
    /// Rounds of STARTUP in a row above the threshold.
    startup_rounds: u32,
    /// `(C.delivered, C.delivered_ce)` at the last round starts, newest last: a rate
    /// sample's CE count is estimated from the CE fraction since the latest of them at
    /// or before the sample began (Linux keeps `delivered_ce` with every packet).
    history: [(u64, u64); 4],
}

impl Ecn {
    /// The CE-marked bytes of sample `s` (Linux's `rs->delivered_ce`), estimated.
    fn sample_ce(&self, s: &RateSample, delivered: u64) -> u64 {
        let (d0, c0) = self
            .history
            .iter()
            .rev()
            .find(|(d, _)| *d <= s.prior_delivered)
            .copied()
            .unwrap_or(self.history[0]);
        let span = delivered.saturating_sub(d0);
        if span == 0 {
            return 0;
        }
        let ce = self.delivered_ce.saturating_sub(c0);
        (u128::from(s.delivered) * u128::from(ce) / u128::from(span)) as u64
    }

    fn push_round(&mut self, delivered: u64) {
        self.history.rotate_left(1);
        self.history[3] = (delivered, self.delivered_ce);
    }
}

impl Bbr3 {
    /// A controller in STARTUP with cwnd `init.initial_window` and ssthresh infinite;
    /// it paces at the STARTUP gain times the window per millisecond until there is an
    /// RTT.
    pub fn new(cfg: Bbr3Config, init: CcInit) -> Self {
        let mss = init.mss.max(1);
        let window = init.initial_window.max(mss);
        let mut b = Bbr3 {
            cfg,
            mss,
            initial_window: window,
            cwnd: window,
            ssthresh: u32::MAX,
            prior_cwnd: 0,
            pacing: PacingRate::new(cfg.pacing_margin, cfg.startup_pacing_gain),
            mode: BbrMode::Startup,
            phase: ProbeBwPhase::Down,
            pacing_gain: cfg.startup_pacing_gain,
            cwnd_gain: cfg.startup_cwnd_gain,
            rounds: Rounds::default(),
            bw_hi: [0; 2],
            bw_lo: UNSET,
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_latest: 0,
            inflight_latest: 0,
            // Linux v3 starts the loss rounds after the first flight is ACKed.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            loss_in_cycle: false,
            loss_events_in_round: 0,
            ecn_in_round: false,
            ecn_in_cycle: false,
            ecn: Ecn {
                eligible: false,
                alpha: 1.0,
                delivered_ce: 0,
                last: (0, 0),
                startup_rounds: 0,
                history: [(0, 0); 4],
            },
            full: FullBw::default(),
            min_rtt: None,
            min_rtt_stamp: None,
            probe_rtt_min: None,
            probe_rtt_min_stamp: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: (0, 0),
            idle_restart: false,
            cycle_start: Instant::ZERO,
            probe_wait: Duration::ZERO,
            rounds_since_probe: 0,
            ack_phase: AckPhase::Init,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            probe_up_rounds: 0,
            probe_up_cnt: UNSET,
            probe_up_acked: 0,
            prev_recovery: RecoveryPhase::Open,
            undo: (UNSET, UNSET, UNSET),
            aggregation: AckAggregation::new(
                cfg.extra_acked_window_rounds,
                cfg.extra_acked_gain,
                cfg.extra_acked_max,
            ),
            delivered_time: Instant::ZERO,
            delivered: 0,
            rng: Prng::new(cfg.seed),
        };
        b.pacing.init(b.cwnd, Duration::ZERO);
        b
    }

    /// The state machine's state.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// PROBE_BW's phase, when in PROBE_BW.
    pub fn probe_bw_phase(&self) -> Option<ProbeBwPhase> {
        (self.mode == BbrMode::ProbeBw).then_some(self.phase)
    }

    /// The maximum delivery rate of the last one or two probe cycles (`max_bw`), bytes
    /// per second.
    pub fn max_bandwidth(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth the controller paces by: `max_bw`, or `bw_lo` if lower.
    pub fn bandwidth(&self) -> u64 {
        self.max_bandwidth().min(self.bw_lo)
    }

    /// The min_rtt estimate, if an RTT was measured.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The upper bound on the flight, bytes, if a probe or STARTUP has set one.
    pub fn inflight_hi(&self) -> Option<u64> {
        (self.inflight_hi != UNSET).then_some(self.inflight_hi)
    }

    /// The short-term lower bound on the flight, bytes, if in force.
    pub fn inflight_lo(&self) -> Option<u64> {
        (self.inflight_lo != UNSET).then_some(self.inflight_lo)
    }

    /// The short-term lower bound on the bandwidth, bytes per second, if in force.
    pub fn bw_lo(&self) -> Option<u64> {
        (self.bw_lo != UNSET).then_some(self.bw_lo)
    }

    /// The ECN moving average alpha (0 to 1).
    pub fn ecn_alpha(&self) -> f64 {
        self.ecn.alpha
    }

    /// Whether STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full.reached
    }

    /// The pacing gain now in force.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The BDP at `bw` times `gain` (see `bbr::bdp`).
    fn bdp(&self, bw: u64, gain: f64) -> u64 {
        bdp(bw, gain, self.min_rtt, self.mss, self.initial_window)
    }

    /// Linux v3's `bbr_quantization_budget`: at least 3 TSO bursts (3 packets: the engine
    /// has no TSO, as in v1's default) and 4 packets, 2 packets more in UP.
    fn quantization_budget(&self, bytes: u64) -> u64 {
        let mss = u64::from(self.mss);
        let mut b = bytes.max(3 * mss).max(u64::from(MIN_CWND_PACKETS) * mss);
        if self.mode == BbrMode::ProbeBw && self.phase == ProbeBwPhase::Up {
            b += 2 * mss;
        }
        b
    }

    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Linux v3's `bbr_target_inflight`: the BDP, or cwnd if congestion cut it lower.
    fn target_inflight(&self) -> u64 {
        self.inflight(self.bandwidth(), 1.0)
            .min(u64::from(self.cwnd))
    }

    /// `inflight_hi` less the headroom (draft §5.6.4.2), at least 4 packets.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = ((self.inflight_hi as f64 * self.cfg.inflight_headroom) as u64).max(1);
        (self.inflight_hi - headroom.min(self.inflight_hi))
            .max(u64::from(MIN_CWND_PACKETS * self.mss))
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == BbrMode::Startup
            || (self.mode == BbrMode::ProbeBw
                && matches!(self.phase, ProbeBwPhase::Refill | ProbeBwPhase::Up))
    }

    fn sample_is_app_limited(&self, s: &RateSample) -> bool {
        let (from, to) = self.probe_rtt_app_limited;
        s.is_app_limited || (to > 0 && (from..=to).contains(&s.prior_delivered))
    }

    /// Draft §5.5.10.2 / Linux v3's `bbr_is_inflight_too_high`: the sample lost more
    /// than `loss_threshold` of the flight it was sent into, or (ECN in use) more than
    /// `ecn_threshold` of its bytes were marked.
    fn is_inflight_too_high(&self, s: &RateSample) -> bool {
        if s.lost > 0 && s.tx_in_flight > 0 {
            let budget = (f64::from(s.tx_in_flight) * self.cfg.loss_threshold) as u64;
            if s.lost > budget {
                return true;
            }
        }
        if self.ecn.eligible && s.delivered > 0 {
            let ce = self.ecn.sample_ce(s, self.delivered);
            if ce > 0 && ce as f64 > s.delivered as f64 * self.cfg.ecn_threshold {
                return true;
            }
        }
        false
    }

    // ---- the congestion signals of each ACK and each round (draft §5.5.8) ----

    /// Linux v3's `bbr_update_ecn_alpha`, once per round: alpha moves a 16th of the way
    /// to the round's CE fraction; in STARTUP, rounds above the threshold end it.
    fn update_ecn_alpha(&mut self, d: &Delivery) {
        let low_rtt = self.cfg.ecn_max_rtt == Duration::ZERO
            || self.min_rtt.is_some_and(|r| r <= self.cfg.ecn_max_rtt);
        if !self.ecn.eligible && self.cfg.ecn && self.cfg.ecn_factor > 0.0 && low_rtt {
            self.ecn.eligible = true;
        }
        self.ecn.push_round(d.delivered);
        if !self.ecn.eligible {
            return;
        }
        let delivered = d.delivered.saturating_sub(self.ecn.last.0);
        if delivered == 0 {
            return;
        }
        let ce = self.ecn.delivered_ce.saturating_sub(self.ecn.last.1);
        let ratio = ce as f64 / delivered as f64;
        let g = self.cfg.ecn_alpha_gain;
        self.ecn.alpha = ((1.0 - g) * self.ecn.alpha + g * ratio).min(1.0);
        self.ecn.last = (d.delivered, self.ecn.delivered_ce);
        // Linux v3's `bbr_check_ecn_too_high_in_startup`.
        if self.full.reached || self.cfg.full_ecn_count == 0 {
            return;
        }
        if ratio >= self.cfg.ecn_threshold {
            self.ecn.startup_rounds += 1;
        } else {
            self.ecn.startup_rounds = 0;
        }
        if self.ecn.startup_rounds >= self.cfg.full_ecn_count {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// Linux v3's `bbr_handle_queue_too_high_in_startup`: STARTUP ends, and the flight
    /// that caused the loss or marks becomes the upper bound.
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full.reached = true;
        let bdp = self.inflight(self.max_bandwidth(), 1.0);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// Linux v3's `bbr_note_loss`: the first loss of a round starts a loss round.
    fn note_loss(&mut self, d: &Delivery) {
        if !self.loss_in_round {
            self.loss_round_delivered = d.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// Linux v3's `bbr_update_latest_delivery_signals`.
    fn update_latest_delivery_signals(&mut self, d: &Delivery, s: Option<&RateSample>) {
        self.loss_round_start = false;
        let Some(s) = s.filter(|_| d.newly_delivered > 0) else {
            return;
        };
        self.bw_latest = self.bw_latest.max(s.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(s.delivered);
        if s.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = d.delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux v3's `bbr_update_congestion_signals`: the bandwidth filter, and once per loss
    /// round the lower bounds.
    fn update_congestion_signals(&mut self, d: &Delivery, s: Option<&RateSample>) {
        let Some(s) = s.filter(|_| d.newly_delivered > 0) else {
            return;
        };
        let bw = s.delivery_rate;
        if !self.sample_is_app_limited(s) || bw >= self.max_bandwidth() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        self.loss_in_round |= d.newly_lost > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds();
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// Draft §5.5.10.3, Linux v3's `bbr_adapt_lower_bounds`: outside probing, a round
    /// with CE marks cuts `inflight_lo` by alpha times the ECN factor, and a round with
    /// loss cuts `bw_lo` and `inflight_lo` to beta, but not below what the round
    /// delivered.
    fn adapt_lower_bounds(&mut self) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        if self.ecn_in_round && self.cfg.ecn_factor > 0.0 {
            if self.inflight_lo == UNSET {
                self.inflight_lo = u64::from(self.cwnd);
            }
            let cut = 1.0 - self.ecn.alpha * self.cfg.ecn_factor;
            ecn_inflight_lo = (self.inflight_lo as f64 * cut) as u64;
        }
        if self.loss_in_round {
            if self.bw_lo == UNSET {
                self.bw_lo = self.max_bandwidth();
            }
            if self.inflight_lo == UNSET {
                self.inflight_lo = u64::from(self.cwnd);
            }
            let beta = self.cfg.beta;
            self.bw_lo = self.bw_latest.max((self.bw_lo as f64 * beta) as u64);
            self.inflight_lo = self
                .inflight_latest
                .max((self.inflight_lo as f64 * beta) as u64);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    // ---- STARTUP and DRAIN (draft §5.3.1, §5.3.2) ----

    /// Linux v3's `bbr_check_loss_too_high_in_startup`: at the end of a loss round of a
    /// fast recovery in STARTUP, 6 or more ACKs with losses and a loss rate above the
    /// threshold end STARTUP.
    fn check_loss_too_high_in_startup(&mut self, d: &Delivery) {
        if self.full.reached {
            return;
        }
        if d.newly_lost > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(0xf);
        }
        let too_high = d.sample.is_some_and(|s| self.is_inflight_too_high(&s));
        if self.cfg.full_loss_count > 0
            && self.loss_round_start
            && d.recovery == RecoveryPhase::Fast
            && self.loss_events_in_round >= self.cfg.full_loss_count
            && too_high
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux v3's `bbr_check_full_bw_reached` (draft §5.3.1.2): each sample that is 25%
    /// above the reference resets it; three rounds without one are a plateau.
    fn check_full_bw_reached(&mut self, s: Option<&RateSample>) {
        let Some(s) = s else { return };
        if self.full.now || self.sample_is_app_limited(s) {
            return;
        }
        if s.delivery_rate as f64 >= self.full.bw as f64 * FULL_BW_GROWTH {
            self.full.reset(s.delivery_rate);
            return;
        }
        if !self.rounds.start {
            return;
        }
        self.full.count += 1;
        self.full.now = self.full.count >= FULL_BW_ROUNDS;
        self.full.reached |= self.full.now;
    }

    fn check_drain(&mut self, now: Instant, d: &Delivery) {
        if self.mode == BbrMode::Startup && self.full.reached {
            self.mode = BbrMode::Drain;
            let bdp = self.inflight(self.max_bandwidth(), 1.0);
            self.ssthresh = bdp.min(u64::from(u32::MAX)) as u32;
            self.reset_congestion_signals();
        }
        if self.mode == BbrMode::Drain
            && u64::from(d.in_flight) <= self.inflight(self.max_bandwidth(), 1.0)
        {
            self.mode = BbrMode::ProbeBw;
            self.start_probe_down(now, d);
        }
    }

    // ---- PROBE_BW (draft §5.3.3) ----

    /// Linux v3's `bbr_pick_probe_wait`: 2 to 3 s, and a random 0 or 1 rounds added to
    /// the Reno-coexistence count.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(self.cfg.probe_rand_rounds.max(1));
        let rand = self.cfg.probe_wait_rand.as_nanos();
        let extra = if rand == 0 {
            0
        } else {
            (self.rng.next_u64() >> 11) % rand
        };
        self.probe_wait = self.cfg.probe_wait_base + Duration::from_nanos(extra);
    }

    fn start_probe_down(&mut self, now: Instant, d: &Delivery) {
        self.reset_congestion_signals();
        self.probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_start = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.rounds.next_delivered = d.delivered;
        self.phase = ProbeBwPhase::Down;
    }

    fn start_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = ProbeBwPhase::Cruise;
    }

    /// REFILL: the lower bounds go, and `up_rounds` sets the first step of UP's growth.
    fn start_probe_refill(&mut self, d: &Delivery, up_rounds: u32) {
        self.reset_lower_bounds();
        self.probe_up_rounds = up_rounds;
        self.probe_up_acked = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.rounds.next_delivered = d.delivered;
        self.phase = ProbeBwPhase::Refill;
    }

    fn start_probe_up(&mut self, now: Instant, d: &Delivery) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.rounds.next_delivered = d.delivered;
        self.cycle_start = now;
        self.full.reset(d.sample.map_or(0, |s| s.delivery_rate));
        self.phase = ProbeBwPhase::Up;
        self.raise_inflight_hi_slope();
    }

    /// Linux v3's `bbr_raise_inflight_hi_slope`: UP grows `inflight_hi` by 1, 2, 4, ...
    /// packets per cwnd of data ACKed in successive rounds.
    fn raise_inflight_hi_slope(&mut self) {
        let growth = 1u64 << self.probe_up_rounds;
        self.probe_up_rounds = (self.probe_up_rounds + 1).min(30);
        self.probe_up_cnt = (u64::from(self.cwnd) / growth).max(1);
    }

    /// Linux v3's `bbr_probe_inflight_hi_upward`: while cwnd is limited by
    /// `inflight_hi` and no loss or marks say stop, raise it.
    fn probe_inflight_hi_upward(&mut self, d: &Delivery) {
        if !self.is_cwnd_limited(d) || u64::from(self.cwnd) < self.inflight_hi {
            return;
        }
        self.probe_up_acked += u64::from(d.newly_delivered);
        if self.probe_up_acked >= self.probe_up_cnt {
            let delta = self.probe_up_acked / self.probe_up_cnt;
            self.probe_up_acked -= delta * self.probe_up_cnt;
            self.inflight_hi += delta * u64::from(self.mss);
        }
        if self.rounds.start {
            self.raise_inflight_hi_slope();
        }
    }

    /// Whether cwnd limited the flight before this ACK (Linux's `tp->is_cwnd_limited`,
    /// which the engine does not report): the flight was within a packet of cwnd.
    fn is_cwnd_limited(&self, d: &Delivery) -> bool {
        d.prior_in_flight.saturating_add(self.mss) > self.cwnd
    }

    /// Draft §5.5.10.2, Linux v3's `bbr_handle_inflight_too_high`: once per probe,
    /// `inflight_hi` falls to the flight the sample was sent into, or beta times the
    /// target if that is higher, and UP gives way to DOWN.
    fn handle_inflight_too_high(&mut self, now: Instant, d: &Delivery, s: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !self.sample_is_app_limited(s) {
            let floor = (self.target_inflight() as f64 * self.cfg.beta) as u64;
            self.inflight_hi = u64::from(s.tx_in_flight).max(floor);
        }
        if self.mode == BbrMode::ProbeBw && self.phase == ProbeBwPhase::Up {
            self.start_probe_down(now, d);
        }
    }

    /// Linux v3's `bbr_adapt_upper_bounds` (draft §5.5.10.2). Returns whether it changed
    /// the phase.
    fn adapt_upper_bounds(&mut self, now: Instant, d: &Delivery) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.rounds.start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        let app_limited = d.sample.is_some_and(|s| self.sample_is_app_limited(&s));
        if self.ack_phase == AckPhase::ProbeStopping && self.rounds.start {
            // The probe's ACKs are all in: its bandwidth is the best recent sample, the
            // time to forget the cycle before it.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == BbrMode::ProbeBw && !app_limited && self.bw_hi[1] != 0 {
                self.bw_hi = [self.bw_hi[1], 0];
            }
            // A probe that stopped at inflight_hi without loss probes again at once.
            if self.mode == BbrMode::ProbeBw
                && self.stopped_risky_probe
                && !self.prev_probe_too_high
            {
                self.start_probe_refill(d, 0);
                return true;
            }
        }
        let Some(s) = d.sample.filter(|s| s.interval > Duration::ZERO) else {
            return false;
        };
        if self.is_inflight_too_high(&s) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, d, &s);
            }
            return false;
        }
        if self.inflight_hi == UNSET {
            return false;
        }
        // A higher flight that was safe raises the bound, in any phase.
        self.inflight_hi = self.inflight_hi.max(u64::from(s.tx_in_flight));
        if self.mode == BbrMode::ProbeBw && self.phase == ProbeBwPhase::Up {
            self.probe_inflight_hi_upward(d);
        }
        false
    }

    /// Linux v3's `bbr_check_time_to_probe_bw` (draft §5.3.3.5).
    fn check_time_to_probe_bw(&mut self, now: Instant, d: &Delivery) -> bool {
        // Marks but no loss in the cycle: when the marks stop, probe at once, starting
        // at half of inflight_hi.
        if self.cfg.ecn_reprobe_gain > 0.0
            && self.ecn.eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && d.recovery == RecoveryPhase::Open
        {
            let step = self.inflight_hi as f64 * self.cfg.ecn_reprobe_gain / f64::from(self.mss);
            let n = (step.max(1.0) as u64).ilog2();
            self.start_probe_refill(d, n);
            return true;
        }
        let waited = now.saturating_since(self.cycle_start) > self.probe_wait;
        // Reno coexistence: a Reno flow with this BDP loses once per BDP rounds.
        let reno_rounds = (self.target_inflight() / u64::from(self.mss))
            .min(u64::from(self.cfg.probe_max_rounds));
        if waited || u64::from(self.rounds_since_probe) >= reno_rounds {
            self.start_probe_refill(d, 0);
            return true;
        }
        false
    }

    /// Linux v3's `bbr_update_cycle_phase`: PROBE_BW's phase transitions.
    fn update_cycle_phase(&mut self, now: Instant, d: &Delivery) {
        if !self.full.reached || self.adapt_upper_bounds(now, d) || self.mode != BbrMode::ProbeBw {
            return;
        }
        let inflight = u64::from(d.prior_in_flight);
        match self.phase {
            ProbeBwPhase::Cruise => {
                self.check_time_to_probe_bw(now, d);
            }
            ProbeBwPhase::Refill => {
                // One round of REFILL fills the pipe; its samples start to show the probe.
                if self.rounds.start {
                    self.bw_probe_samples = true;
                    self.start_probe_up(now, d);
                }
            }
            ProbeBwPhase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    // The last probe lost at this level: stop before losing again.
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.is_cwnd_limited(d) && u64::from(self.cwnd) >= self.inflight_hi {
                    // inflight_hi, not the path, limits the rate: no plateau yet.
                    self.full.reset(d.sample.map_or(0, |s| s.delivery_rate));
                } else if self.full.now {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_probe_down(now, d);
                }
            }
            ProbeBwPhase::Down => {
                if self.check_time_to_probe_bw(now, d) {
                    return;
                }
                let bw = self.max_bandwidth();
                if inflight <= self.inflight_with_headroom() && inflight <= self.inflight(bw, 1.0) {
                    self.start_probe_cruise();
                }
            }
        }
    }

    // ---- PROBE_RTT (draft §5.3.4) ----

    /// Linux v3's `bbr_update_min_rtt`: the minimum RTT since the last PROBE_RTT, which
    /// expires after `probe_rtt_interval` and then starts PROBE_RTT; and min_rtt, which
    /// takes it when it is lower or min_rtt is older than `min_rtt_window`.
    fn update_min_rtt(&mut self, ev: &AckEvent, d: &Delivery) {
        let now = ev.now;
        let stamp = *self.probe_rtt_min_stamp.get_or_insert(now);
        let probe_rtt_expired = now > stamp + self.cfg.probe_rtt_interval;
        if let Some(rtt) = ev.rtt {
            if self.probe_rtt_min.is_none_or(|m| rtt < m) || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = Some(now);
            }
        }
        let min_stamp = *self.min_rtt_stamp.get_or_insert(now);
        let min_rtt_expired = now > min_stamp + self.cfg.min_rtt_window;
        let lower = match (self.probe_rtt_min, self.min_rtt) {
            (Some(p), Some(m)) => p <= m,
            (Some(_), None) => true,
            _ => false,
        };
        if lower || min_rtt_expired {
            self.min_rtt = self.probe_rtt_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.rounds.next_delivered = d.delivered;
            self.probe_rtt_app_limited = (d.delivered, d.delivered);
        }
        if self.mode == BbrMode::ProbeRtt {
            self.probe_rtt_app_limited.1 = d.delivered + u64::from(d.in_flight).max(1);
            if self.probe_rtt_done.is_none() && u64::from(d.in_flight) <= self.probe_rtt_cwnd() {
                self.probe_rtt_done = Some(now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.rounds.next_delivered = d.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.rounds.start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now, d);
                }
            }
        }
        if d.sample.is_some_and(|s| s.delivered > 0) {
            self.idle_restart = false;
        }
    }

    /// PROBE_RTT's cwnd: half the BDP, at least 4 packets (draft §5.3.4.3).
    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp(self.bandwidth(), self.cfg.probe_rtt_cwnd_gain)
            .max(u64::from(MIN_CWND_PACKETS * self.mss))
    }

    fn check_probe_rtt_done(&mut self, now: Instant, d: &Delivery) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.probe_rtt_min_stamp = Some(now);
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        // Linux v3's `bbr_exit_probe_rtt`: back to CRUISE (the flight is low) with a new
        // wait before the next probe, or to STARTUP if the pipe was never full.
        self.reset_lower_bounds();
        if self.full.reached {
            self.mode = BbrMode::ProbeBw;
            self.start_probe_down(now, d);
            self.start_probe_cruise();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn update_gains(&mut self) {
        let c = &self.cfg;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (c.startup_pacing_gain, c.startup_cwnd_gain),
            BbrMode::Drain => (c.drain_gain, c.startup_cwnd_gain),
            BbrMode::ProbeBw => match self.phase {
                ProbeBwPhase::Up => (c.probe_up_pacing_gain, c.cwnd_gain + c.probe_up_cwnd_gain),
                ProbeBwPhase::Down => (c.probe_down_pacing_gain, c.cwnd_gain),
                ProbeBwPhase::Cruise | ProbeBwPhase::Refill => (1.0, c.cwnd_gain),
            },
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn save_cwnd(&mut self) {
        if self.prev_recovery == RecoveryPhase::Open && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// Linux v3's `bbr_set_cwnd` and `bbr_bound_cwnd_for_inflight_model` (draft §5.6.4).
    fn update_cwnd(&mut self, d: &Delivery, bw: u64) {
        let acked = u64::from(d.newly_delivered);
        let mut cwnd = u64::from(self.cwnd);
        if acked > 0 {
            let target =
                self.quantization_budget(self.bdp(bw, self.cwnd_gain) + self.aggregation.cwnd(bw));
            if self.full.reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * u64::from(self.initial_window) {
                cwnd += acked;
            }
            cwnd = cwnd.max(u64::from(MIN_CWND_PACKETS * self.mss));
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        // The bounds: inflight_hi while probing, with headroom when cruising or in
        // PROBE_RTT; inflight_lo always.
        let mut cap = UNSET;
        if self.mode == BbrMode::ProbeBw && self.phase != ProbeBwPhase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == BbrMode::ProbeRtt
            || (self.mode == BbrMode::ProbeBw && self.phase == ProbeBwPhase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap
            .min(self.inflight_lo)
            .max(u64::from(MIN_CWND_PACKETS * self.mss));
        self.cwnd = cwnd.min(cap).min(u64::from(u32::MAX)) as u32;
    }

    /// The model's part of an ACK (Linux v3's `bbr_update_model`).
    fn update_model(&mut self, ev: &AckEvent, d: &Delivery) {
        let s = d.sample.filter(|s| s.interval > Duration::ZERO);
        self.update_congestion_signals(d, s.as_ref());
        if s.is_some() {
            self.aggregation.update(
                (self.rounds.start, !self.full.reached),
                self.delivered_time,
                (self.bandwidth(), d.newly_delivered),
                (self.cwnd, self.mss),
            );
        }
        self.check_loss_too_high_in_startup(d);
        self.check_full_bw_reached(s.as_ref());
        self.check_drain(ev.now, d);
        self.update_cycle_phase(ev.now, d);
        self.update_min_rtt(ev, d);
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    fn in_slow_start(&self) -> bool {
        self.mode == BbrMode::Startup
    }

    /// Linux v3's `bbr_main`.
    fn on_ack(&mut self, ev: &AckEvent) {
        let Some(d) = ev.delivery else { return };
        if d.newly_delivered > 0 {
            self.delivered_time = ev.now;
        }
        self.delivered = d.delivered;
        if ev.ece {
            self.ecn.delivered_ce += u64::from(d.newly_delivered);
        }
        if d.newly_lost > 0 {
            self.note_loss(&d);
        }
        self.rounds.start = false;
        if let Some(s) = d.sample.filter(|s| s.interval > Duration::ZERO) {
            self.rounds.on_sample(&s, d.delivered);
        }
        if self.rounds.start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(&d);
        }
        self.ecn_in_round |= self.ecn.eligible && ev.ece;
        self.update_latest_delivery_signals(&d, d.sample.as_ref());
        self.update_model(ev, &d);
        self.update_gains();
        let bw = self.bandwidth();
        let (cwnd, full) = (self.cwnd, self.full.reached);
        self.pacing.set(bw, self.pacing_gain, ev.srtt, cwnd, full);
        self.update_cwnd(&d, bw);
        // Linux v3's `bbr_advance_latest_delivery_signals`: each loss round starts the
        // latest rate and volume afresh.
        if self.loss_round_start {
            if let Some(s) = d.sample {
                self.bw_latest = s.delivery_rate;
                self.inflight_latest = s.delivered;
            }
        }
        if self.prev_recovery == RecoveryPhase::Timeout && d.recovery != RecoveryPhase::Timeout {
            // Linux v3's `bbr_exit_loss_recovery`.
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        self.prev_recovery = d.recovery;
        self.loss_in_cycle |= d.sample.is_some_and(|s| s.lost > 0);
        self.ecn_in_cycle |= ev.ece && self.ecn.eligible;
    }

    /// Linux v3's `bbr_ssthresh`: remembers cwnd and the bounds (for an undo); v3 has no
    /// packet conservation, the bounds answer the loss.
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.save_cwnd();
        self.undo = (self.bw_lo, self.inflight_lo, self.inflight_hi);
    }

    /// A timeout: cwnd to one packet (Linux's `tcp_enter_loss`), the full-pipe detector
    /// restarts, and outside probing `inflight_lo` starts from the cwnd before the
    /// timeout, so that the next loss round cuts from there (Linux v3's `bbr_set_state`).
    fn on_rto(&mut self, ev: &CongestionEvent, first: bool) {
        if first {
            self.on_congestion(ev);
        }
        self.cwnd = self.mss;
        self.prev_recovery = RecoveryPhase::Timeout;
        self.full.reset(0);
        if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
            self.inflight_lo = u64::from(self.cwnd.max(self.prior_cwnd));
        }
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.max(1);
    }

    /// Linux v3's `bbr_undo_cwnd`: the bounds and cwnd from before the recovery.
    fn undo(&mut self, cwnd: u32, _ssthresh: u32) {
        self.full.reset(0);
        self.loss_in_round = false;
        let (bw_lo, inflight_lo, inflight_hi) = self.undo;
        self.bw_lo = self.bw_lo.max(bw_lo);
        self.inflight_lo = self.inflight_lo.max(inflight_lo);
        self.inflight_hi = self.inflight_hi.max(inflight_hi);
        self.cwnd = self.prior_cwnd.max(cwnd);
    }

    /// As v1: an RFC 3168 mark changes nothing but the connection sends CWR; v3's own
    /// ECN response is per ACK, from [`AckEvent::ece`], when [`Bbr3Config::ecn`] is on.
    fn on_ece(&mut self, _ev: &CongestionEvent) -> bool {
        true
    }

    fn wants_delivery(&self) -> bool {
        true
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing.rate)
    }
    fn owns_recovery_window(&self) -> bool {
        true
    }

    /// As v1 (Linux v3's `bbr_cwnd_event(CA_EVENT_TX_START)`).
    fn on_send_from_idle(&mut self, now: Instant, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.aggregation.restart_epoch(now);
        match self.mode {
            BbrMode::ProbeBw => {
                let (bw, cwnd, full) = (self.bandwidth(), self.cwnd, self.full.reached);
                self.pacing.set(bw, 1.0, Duration::ZERO, cwnd, full);
            }
            BbrMode::ProbeRtt => {
                let d = Delivery {
                    delivered: self.delivered,
                    ..Delivery::default()
                };
                self.check_probe_rtt_done(now, &d);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bbr::sim::Path;

    const MSS: u32 = 1000;

    fn init() -> CcInit {
        CcInit {
            mss: MSS,
            initial_window: 10 * MSS,
            initial_ssthresh: u32::MAX,
        }
    }

    fn bbr3() -> Bbr3 {
        Bbr3::new(Bbr3Config::default(), init())
    }

    /// Runs until `until` has passed, returning (time, mode, phase) at every change.
    fn run(
        c: &mut Bbr3,
        p: &mut Path,
        until: Duration,
    ) -> Vec<(Instant, BbrMode, Option<ProbeBwPhase>)> {
        let mut seen = vec![(p.now, c.mode(), c.probe_bw_phase())];
        let end = p.now + until;
        while p.now < end && p.step(c).is_some() {
            let now = (c.mode(), c.probe_bw_phase());
            let last = seen.last().unwrap();
            if (last.1, last.2) != now {
                seen.push((p.now, now.0, now.1));
            }
        }
        seen
    }

    const RATE: u64 = 1_250_000; // 10 Mbit/s
    const RTT: Duration = Duration::from_millis(40);

    /// Draft §5.5.5 and §5.5.6: on a clean path the model finds the bottleneck within
    /// 1% and min_rtt exactly, through STARTUP and DRAIN to PROBE_BW's DOWN and CRUISE.
    #[test]
    fn bbr3_model_finds_the_bottleneck_rate_within_1_percent_and_min_rtt_exactly() {
        let mut c = bbr3();
        let mut p = Path::new(RATE, RTT, MSS);
        let seen = run(&mut c, &mut p, Duration::from_secs(1));
        let modes: Vec<_> = seen.iter().map(|s| (s.1, s.2)).collect();
        assert_eq!(
            modes[..4],
            [
                (BbrMode::Startup, None),
                (BbrMode::Drain, None),
                (BbrMode::ProbeBw, Some(ProbeBwPhase::Down)),
                (BbrMode::ProbeBw, Some(ProbeBwPhase::Cruise)),
            ]
        );
        let bw = c.bandwidth();
        assert!(bw.abs_diff(RATE) * 100 <= RATE, "bw {bw}");
        assert_eq!(c.min_rtt(), Some(RTT + p.tx_time()));
        let capacity = RATE / u64::from(MSS);
        assert!(p.sent * 100 >= capacity * 90, "{} of {capacity}", p.sent);
    }

    /// A hand-made ACK at `now` that delivers `newly` bytes, with a rate sample of `bw`
    /// from a packet sent after the previous ACK (so each call starts a round) unless
    /// `same_round`.
    #[derive(Clone, Copy)]
    struct Ack {
        newly: u32,
        bw: u64,
        rtt: Duration,
        in_flight: u32,
        lost: u64,
        tx_in_flight: u32,
        ece: bool,
        same_round: bool,
    }

    impl Default for Ack {
        fn default() -> Self {
            Ack {
                newly: 10 * MSS,
                bw: 1_000_000,
                rtt: Duration::from_millis(1),
                in_flight: 10 * MSS,
                lost: 0,
                tx_in_flight: 10 * MSS,
                ece: false,
                same_round: false,
            }
        }
    }

    fn ack(c: &mut Bbr3, now: Instant, a: Ack) {
        let prior = if a.same_round { 0 } else { c.delivered };
        let delivered = c.delivered + u64::from(a.newly);
        let sample = RateSample {
            delivery_rate: a.bw,
            delivered: u64::from(a.newly),
            interval: a.rtt,
            send_elapsed: a.rtt,
            ack_elapsed: a.rtt,
            prior_delivered: prior,
            prior_time: now - a.rtt,
            is_app_limited: false,
            rtt: a.rtt,
            lost: a.lost,
            tx_in_flight: a.tx_in_flight,
        };
        let ev = AckEvent {
            now,
            bytes_acked: a.newly,
            mss: MSS,
            flight_bytes: a.in_flight + a.newly,
            rtt: Some(a.rtt),
            srtt: a.rtt,
            min_rtt: Some(a.rtt),
            in_recovery: false,
            ece: a.ece,
            snd_una: crate::seq::SeqNum::new(0),
            snd_max: crate::seq::SeqNum::new(0),
            delivery: Some(Delivery {
                delivered,
                newly_delivered: a.newly,
                lost: 0,
                newly_lost: 0,
                prior_in_flight: a.in_flight + a.newly,
                in_flight: a.in_flight,
                app_limited: false,
                recovery: RecoveryPhase::Open,
                sample: Some(sample),
            }),
        };
        c.on_ack(&ev);
    }

    /// Draft §5.3.3.5 and Linux v3's `bbr_check_time_to_probe_bw`: PROBE_BW runs DOWN,
    /// CRUISE, REFILL, UP and DOWN again; on a path whose BDP is large (625 packets at
    /// 50 Mbit/s and 100 ms, so the Reno bound is 63 rounds, 6.3 s), the next probe
    /// starts 2 to 3 s after DOWN began, at a time the seed draws.
    #[test]
    fn bbr3_probe_bw_phases_cycle_with_probes_2_to_3_s_apart() {
        let mut starts = Vec::new();
        for seed in 0..3 {
            // PROBE_RTT (after 5 s) kept out of the way.
            let probe_rtt_interval = Duration::from_secs(20);
            let cfg = Bbr3Config {
                seed,
                probe_rtt_interval,
                ..Bbr3Config::default()
            };
            let mut c = Bbr3::new(cfg, init());
            let mut p = Path::new(6_250_000, Duration::from_millis(100), MSS);
            let seen = run(&mut c, &mut p, Duration::from_secs(7));
            let phases: Vec<_> = seen
                .iter()
                .filter_map(|s| s.2.map(|ph| (s.0, ph)))
                .collect();
            use ProbeBwPhase::*;
            let order: Vec<_> = phases.iter().map(|p| p.1).collect();
            assert!(order.len() >= 5, "{seen:?}");
            assert_eq!(order[..5], [Down, Cruise, Refill, Up, Down], "{order:?}");
            let wait = phases[2].0 - phases[0].0;
            assert!(wait >= Duration::from_secs(2), "{wait:?}");
            assert!(
                wait <= Duration::from_secs(3) + Duration::from_millis(1),
                "{wait:?}"
            );
            starts.push(wait);
        }
        assert!(
            starts[0] != starts[1] && starts[1] != starts[2],
            "{starts:?}"
        );
    }

    /// Linux v3's `bbr_is_reno_coexistence_probe_time`: with a small BDP (14 packets at
    /// 10 Mbit/s and 10 ms) a Reno flow would lose every 14 rounds or so, and v3 probes
    /// as often, long before the 2 s clock.
    #[test]
    fn bbr3_small_bdp_probes_after_bdp_rounds_for_reno_coexistence() {
        let mut c = bbr3();
        let mut p = Path::new(RATE, Duration::from_millis(10), MSS);
        let seen = run(&mut c, &mut p, Duration::from_secs(1));
        let phases: Vec<_> = seen
            .iter()
            .filter_map(|s| s.2.map(|ph| (s.0, ph)))
            .collect();
        assert_eq!(phases[2].1, ProbeBwPhase::Refill, "{phases:?}");
        let wait = phases[2].0 - phases[0].0;
        // 13 to 15 rounds of about 11 ms.
        assert!(
            wait > Duration::from_millis(120) && wait < Duration::from_millis(250),
            "{wait:?}"
        );
    }

    /// A controller on a clean 10 Mbit/s, 40 ms path, run to PROBE_BW's CRUISE.
    fn cruising() -> (Bbr3, Path) {
        let mut c = bbr3();
        let mut p = Path::new(RATE, RTT, MSS);
        while c.probe_bw_phase() != Some(ProbeBwPhase::Cruise) {
            p.step(&mut c);
        }
        (c, p)
    }

    /// Draft §5.5.10.2, Linux v3's `bbr_handle_inflight_too_high`: a rate sample from a
    /// probe that lost more than 2% of the flight it was sent into sets `inflight_hi` to
    /// that flight (or 0.7 of the BDP, if higher) and ends UP; 2% or less does not.
    #[test]
    fn bbr3_loss_above_2_percent_in_a_probe_cuts_inflight_hi_and_ends_up() {
        let (mut c, p) = cruising();
        let d = Delivery {
            delivered: c.delivered,
            ..Delivery::default()
        };
        c.start_probe_up(p.now, &d);
        c.bw_probe_samples = true;
        let now = p.now + Duration::from_millis(1);
        let tx_in_flight = 100 * MSS;
        // A flight above the BDP, so that DOWN does not give way to CRUISE at once.
        let in_flight = 90 * MSS;
        let a = Ack {
            bw: RATE,
            rtt: RTT,
            same_round: true,
            tx_in_flight,
            in_flight,
            ..Ack::default()
        };
        ack(
            &mut c,
            now,
            Ack {
                lost: 2 * u64::from(MSS),
                ..a
            },
        );
        assert_eq!(
            (c.inflight_hi(), c.probe_bw_phase()),
            (None, Some(ProbeBwPhase::Up))
        );
        let target = c.target_inflight();
        ack(
            &mut c,
            now,
            Ack {
                lost: 3 * u64::from(MSS),
                ..a
            },
        );
        assert_eq!(c.probe_bw_phase(), Some(ProbeBwPhase::Down));
        let floor = (target as f64 * 0.7) as u64;
        assert_eq!(c.inflight_hi(), Some(u64::from(tx_in_flight).max(floor)));
        assert!(c.prev_probe_too_high && !c.bw_probe_samples);
        // In CRUISE the bound keeps 15% headroom.
        c.phase = ProbeBwPhase::Cruise;
        c.update_cwnd(&Delivery::default(), c.bandwidth());
        assert!(u64::from(c.cwnd()) <= c.inflight_with_headroom());
        assert_eq!(c.inflight_with_headroom(), 85 * u64::from(MSS));
    }

    /// Draft §5.5.10.3, Linux v3's `bbr_adapt_lower_bounds`: outside probing, a round with
    /// loss sets `bw_lo` and `inflight_lo` to beta (0.7) times `max_bw` and cwnd, but not
    /// below what the round delivered; the bandwidth in use is then `bw_lo`; REFILL lifts
    /// the bounds.
    #[test]
    fn bbr3_a_round_with_loss_cuts_bw_lo_and_inflight_lo_to_beta() {
        let (mut c, p) = cruising();
        let max_bw = c.max_bandwidth();
        let cwnd = u64::from(c.cwnd());
        c.loss_in_round = true;
        c.bw_latest = max_bw / 2;
        c.inflight_latest = cwnd / 2;
        c.adapt_lower_bounds();
        assert_eq!(c.bw_lo(), Some((max_bw as f64 * 0.7) as u64));
        assert_eq!(c.inflight_lo(), Some((cwnd as f64 * 0.7) as u64));
        assert_eq!(c.bandwidth(), c.bw_lo().unwrap());
        // A second lossy round cuts again, down to the round's delivery.
        c.adapt_lower_bounds();
        assert_eq!(c.bw_lo(), Some(max_bw / 2));
        assert_eq!(c.inflight_lo(), Some(cwnd / 2));
        let d = Delivery {
            delivered: c.delivered,
            ..Delivery::default()
        };
        c.start_probe_refill(&d, 0);
        assert_eq!((c.bw_lo(), c.inflight_lo()), (None, None));
        let _ = p;
    }

    /// Linux v3's ECN response (`bbr_update_ecn_alpha`, `bbr_ecn_lower_bounds`): with ECN
    /// on and min_rtt at most 5 ms, STARTUP ends after two rounds with more than half the
    /// bytes marked (before the bandwidth plateau would end it), with `inflight_hi` set;
    /// alpha moves a 16th of the way to each round's CE fraction; a marked round cuts
    /// `inflight_lo` by alpha/3.
    #[test]
    fn bbr3_ecn_marks_end_startup_and_cut_inflight_lo_by_alpha_over_3() {
        let cfg = Bbr3Config {
            ecn: true,
            ..Bbr3Config::default()
        };
        let mut c = Bbr3::new(cfg, init());
        let mut now = Instant::ZERO;
        for _ in 0..2 {
            now += Duration::from_millis(1);
            ack(
                &mut c,
                now,
                Ack {
                    ece: true,
                    ..Ack::default()
                },
            );
            assert_eq!(c.mode(), BbrMode::Startup);
        }
        now += Duration::from_millis(1);
        ack(
            &mut c,
            now,
            Ack {
                ece: true,
                ..Ack::default()
            },
        );
        assert!(c.full_bw_reached() && c.ecn.eligible && c.inflight_hi().is_some());
        assert_eq!(c.full.count, 2, "not the plateau: that takes 3 rounds");
        // Without ECN the plateau ends STARTUP one round later and sets no bound.
        let mut plain = bbr3();
        for i in 1..=4 {
            let t = Instant::ZERO + Duration::from_millis(i);
            ack(
                &mut plain,
                t,
                Ack {
                    ece: true,
                    ..Ack::default()
                },
            );
            assert_eq!(plain.full_bw_reached(), i == 4);
        }
        assert_eq!(plain.inflight_hi(), None);
        // Alpha: 1 while every byte is marked, then 15/16 per round without marks.
        assert_eq!(c.ecn_alpha(), 1.0);
        now += Duration::from_millis(1);
        ack(&mut c, now, Ack::default());
        assert_eq!(c.ecn_alpha(), 15.0 / 16.0);
        // A marked round outside probing cuts inflight_lo to (1 - alpha/3).
        c.mode = BbrMode::ProbeBw;
        c.phase = ProbeBwPhase::Cruise;
        c.inflight_lo = 30 * u64::from(MSS);
        c.ecn_in_round = true;
        c.adapt_lower_bounds();
        let cut = 1.0 - (15.0 / 16.0) / 3.0;
        assert_eq!(c.inflight_lo(), Some((30_000.0 * cut) as u64));
    }

    /// Draft §5.3.4, Linux v3's `bbr_update_min_rtt`: PROBE_RTT comes 5 s after the last
    /// RTT at the minimum (on a clean path, 5 s after the first ACK and then 5 s after
    /// each PROBE_RTT ends), holds cwnd at half the BDP (26 packets of 51 here) for 200 ms
    /// and a round, and returns to CRUISE.
    #[test]
    fn bbr3_probe_rtt_every_5_s_at_half_the_bdp() {
        let mut c = bbr3();
        let mut p = Path::new(RATE, RTT, MSS);
        let first_ack = Instant::ZERO + RTT + p.tx_time();
        let mut entries = Vec::new();
        let mut exits = Vec::new();
        let end = Instant::ZERO + Duration::from_secs(11);
        while p.now < end {
            let was = c.mode();
            p.step(&mut c);
            if c.mode() == BbrMode::ProbeRtt {
                assert!(c.cwnd() <= 26 * MSS, "{}", c.cwnd());
                if was != BbrMode::ProbeRtt {
                    entries.push(p.now);
                }
            } else if was == BbrMode::ProbeRtt {
                exits.push(p.now);
                assert_eq!(c.probe_bw_phase(), Some(ProbeBwPhase::Cruise));
            }
        }
        assert_eq!(
            (entries.len(), exits.len()),
            (2, 2),
            "{entries:?} {exits:?}"
        );
        let five = Duration::from_secs(5);
        assert!(entries[0] > first_ack + five && entries[0] - (first_ack + five) < p.tx_time());
        assert!(entries[1] > exits[0] + five && entries[1] - (exits[0] + five) < p.tx_time());
        for (i, e) in entries.iter().zip(&exits) {
            let held = *e - *i;
            assert!(held > Duration::from_millis(200), "{held:?}");
            assert!(
                held < Duration::from_millis(200) + RTT.saturating_mul(3),
                "{held:?}"
            );
        }
        let bw = c.bandwidth();
        assert!(bw.abs_diff(RATE) * 100 <= RATE, "bw {bw}");
    }

    /// Linux's `tcp_enter_loss` and v3's `bbr_exit_loss_recovery`: a timeout sets cwnd to
    /// one packet; leaving the timeout's recovery restores the cwnd from before it.
    #[test]
    fn bbr3_rto_sets_cwnd_to_1_mss_and_its_end_restores_it() {
        let (mut c, mut p) = cruising();
        let before = c.cwnd();
        let ev = CongestionEvent {
            now: p.now,
            mss: MSS,
            flight_bytes: before,
            snd_wnd: u32::MAX,
        };
        c.on_rto(&ev, true);
        assert_eq!(c.cwnd(), MSS);
        p.recovery = RecoveryPhase::Timeout;
        // The path still holds the flight: its ACKs arrive in the timeout's recovery.
        while p.step(&mut c).is_some_and(|a| a.is_none()) {}
        assert!(c.cwnd() < before);
        p.recovery = RecoveryPhase::Open;
        while p.step(&mut c).is_some_and(|a| a.is_none()) {}
        assert!(c.cwnd() >= before, "{} {before}", c.cwnd());
    }
}
