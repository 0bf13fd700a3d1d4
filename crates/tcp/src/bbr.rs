//! BBR v1 (Bottleneck Bandwidth and Round-trip propagation time): a congestion controller
//! that models the path instead of reacting to loss. It keeps two estimates, the
//! bottleneck bandwidth (the largest delivery rate of the last 10 round trips) and the
//! round-trip propagation time (the smallest RTT of the last 10 seconds), paces at a gain
//! times the first and keeps in flight a gain times their product, the BDP.
//!
//! Sources: Cardwell, Cheng, Gunn, Hassas Yeganeh and Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 14(5), 2016 ("the paper");
//! draft-cardwell-iccrg-bbr-congestion-control-00, July 2017 ("the draft", which describes
//! v1), and Linux's `net/ipv4/tcp_bbr.c` as in mainline ("Linux"), whose behaviour this module
//! follows where the draft is silent (recovery, the long-term policer model, ACK
//! aggregation). The code is written from those descriptions; comments cite the draft by
//! section and Linux by function name.
//!
//! The state machine (draft §4.3):
//! - STARTUP: pacing and cwnd gain 2/ln 2 (2.885), which doubles the sending rate every
//!   round trip, until the bandwidth estimate grows by less than 25% for three rounds
//!   (the pipe is full, §4.3.2.2).
//! - DRAIN: pacing gain 1/2.885, to drain the queue STARTUP built, until the data in
//!   flight is at most one BDP (§4.3.3).
//! - PROBE_BW: cycles eight phases of one min_rtt each, with pacing gains 1.25 (probe for
//!   more bandwidth), 0.75 (drain what that probe queued), then six at 1; cwnd gain 2. The
//!   cycle starts at a random phase other than 0.75 (§4.3.4.2), drawn from a small
//!   deterministic generator seeded by [`BbrConfig::seed`] so that a simulation repeats.
//! - PROBE_RTT: when min_rtt has not been refreshed for 10 s, cwnd drops to 4 packets for
//!   max(200 ms, one round trip) so that the queue drains and a fresh min_rtt is seen
//!   (§4.3.5).
//!
//! Beyond the draft, as Linux does:
//! - loss recovery (`bbr_set_cwnd_to_recover_or_restore`): the first round of a fast
//!   recovery keeps the flight at what the ACKs take out of it (packet conservation,
//!   cwnd = max(cwnd, in_flight + acked)); while losses are taken cwnd drops by the bytes
//!   lost; and when the recovery or timeout ends cwnd returns to at least what it was
//!   before (`prior_cwnd`);
//! - the long-term bandwidth model (`bbr_lt_bw_sampling`): a token-bucket policer shows as
//!   intervals of high loss at a steady delivery rate; two such intervals with rates within
//!   1/8 of each other make BBR pace at their average, with gain 1, for 48 rounds;
//! - ACK aggregation (`bbr_update_ack_aggregation`): the data acknowledged beyond what the
//!   bandwidth estimate accounts for is added to cwnd, so that a path that bunches ACKs
//!   keeps the pipe full.
//!
//! Amounts are bytes (the engine's congestion window is in bytes; Linux counts packets).
//! Windows are whole packets of the MSS where Linux's are, so that the target matches
//! Linux's packet arithmetic. Bandwidth is in bytes per second, as
//! [`RateSample::delivery_rate`](crate::cc::RateSample) is.
//!
//! What the connection provides: [`AckEvent::delivery`] on every acceptable ACK (the
//! controller asks for it with `wants_delivery`), `on_congestion` when a fast recovery
//! starts, `on_rto` on a timeout, and [`AckEvent::rtt`] for min_rtt.
//!
//! [`AckEvent::delivery`]: crate::cc::AckEvent::delivery
//! [`AckEvent::rtt`]: crate::cc::AckEvent::rtt

use crate::cc::{
    AckEvent, CcInit, CongestionControl, CongestionEvent, Delivery, RateSample, RecoveryPhase,
};
use ackclock_wire::{Duration, Instant};

/// STARTUP's pacing and cwnd gain, 2/ln 2 (draft §4.3.2.1): the smallest gain that doubles
/// the delivery rate each round trip. Linux's `bbr_high_gain` is 2885/1000 (plus 1/256).
pub(crate) const STARTUP_GAIN: f64 = 2.885;
/// PROBE_BW's pacing gain cycle (draft §4.3.4.2, Linux's `bbr_pacing_gain`).
const PACING_GAIN_CYCLE: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Phases in the gain cycle.
const CYCLE_LEN: usize = 8;
/// Linux's `bbr_cycle_rand`: the cycle starts at one of the 7 phases other than the 0.75
/// one (draft §4.3.4.2).
const CYCLE_RAND: u32 = 7;
/// The smallest cwnd, in packets (Linux's `bbr_cwnd_min_target`; draft §4.2.3.5): a
/// receiver that ACKs every other packet needs four in flight to keep ACKs flowing.
pub(crate) const MIN_CWND_PACKETS: u32 = 4;
/// STARTUP ends when the bandwidth estimate has grown by less than this factor (draft
/// §4.3.2.2, Linux's `bbr_full_bw_thresh`)...
pub(crate) const FULL_BW_GROWTH: f64 = 1.25;
/// ... for this many rounds in a row (Linux's `bbr_full_bw_cnt`).
pub(crate) const FULL_BW_ROUNDS: u32 = 3;
/// Linux's `bbr_lt_intvl_min_rtts`: a long-term sampling interval lasts at least 4 rounds
/// (and at most 4 times that).
const LT_INTERVAL_MIN_ROUNDS: u32 = 4;
/// Linux's `bbr_lt_loss_thresh`, 50/256 (19.5%): the loss rate that marks a policer.
const LT_LOSS_THRESH: f64 = 50.0 / 256.0;
/// Linux's `bbr_lt_bw_ratio`: two intervals' rates within 1/8 of each other...
const LT_BW_RATIO: f64 = 1.0 / 8.0;
/// ... or within 4 kbit/s (Linux's `bbr_lt_bw_diff`), in bytes per second.
const LT_BW_DIFF: u64 = 4000 / 8;
/// Linux's `bbr_lt_bw_max_rtts`: rounds the long-term rate is used before BBR probes again.
const LT_BW_MAX_ROUNDS: u32 = 48;
/// Linux's `bbr_ack_epoch_acked_reset_thresh` (2^20 packets): an aggregation epoch that
/// has acknowledged this many packets is restarted.
const ACK_EPOCH_RESET_PACKETS: u64 = 1 << 20;
/// Linux's `bbr_min_tso_rate` (1.2 Mbit/s) in bytes per second: below it the TSO goal is
/// one segment, above it two (used with [`BbrConfig::tso_autosize`]).
const MIN_TSO_RATE: u64 = 1_200_000 / 8;

/// The settings of [`Bbr`]. [`Default`] gives Linux's constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    /// Seed of the generator that draws the phase the PROBE_BW gain cycle starts at (Linux
    /// draws it from the kernel's random source). The same seed gives the same run.
    pub seed: u64,
    /// STARTUP's pacing and cwnd gain, and DRAIN's cwnd gain (2.885, 2/ln 2; draft
    /// §4.3.2.1). DRAIN paces at its inverse.
    pub high_gain: f64,
    /// PROBE_BW's cwnd gain (2; draft §4.3.4.2): room for delayed and stretched ACKs.
    pub cwnd_gain: f64,
    /// The bandwidth filter's window, in round trips (10, Linux's `bbr_bw_rtts`: the gain
    /// cycle plus two; draft §4.1.1.4).
    pub bw_filter_rounds: u64,
    /// How long a min_rtt lasts without being seen again before PROBE_RTT re-measures it
    /// (10 s, Linux's `bbr_min_rtt_win_sec`; draft §4.1.2.3).
    pub min_rtt_window: Duration,
    /// How long PROBE_RTT holds the flight at 4 packets, at least one round trip besides
    /// (200 ms, Linux's `bbr_probe_rtt_mode_ms`; draft §4.3.5).
    pub probe_rtt_duration: Duration,
    /// Pacing runs this fraction below the model's rate, so that the queue BBR itself
    /// builds stays small (0.01, Linux's `bbr_pacing_margin_percent`).
    pub pacing_margin: f64,
    /// Linux's long-term bandwidth model, which detects a token-bucket policer and paces
    /// at its rate (on, as in Linux).
    pub long_term_bw: bool,
    /// Gain on the ACK aggregation estimate added to cwnd once the pipe is full (1, Linux's
    /// `bbr_extra_acked_gain`; 0 turns the estimator off).
    pub extra_acked_gain: f64,
    /// The aggregation estimate's window, in round trips (5, Linux's
    /// `bbr_extra_acked_win_rtts`; the estimate is the larger of the last two windows').
    pub extra_acked_window_rounds: u32,
    /// The aggregation allowance is at most this much time at the estimated bandwidth
    /// (100 ms, Linux's `bbr_extra_acked_max_us`).
    pub extra_acked_max: Duration,
    /// Linux's headroom for TSO bursts is 3 times `bbr_tso_segs_goal`, which grows with the
    /// pacing rate (about 1 ms of data, at least 2 segments above 1.2 Mbit/s). The engine
    /// sends one segment per packet and has no TSO, so by default (false) the goal is one
    /// segment and the headroom 3 packets, Linux's value at low rates; true sizes it as
    /// Linux does.
    pub tso_autosize: bool,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            seed: 0,
            high_gain: STARTUP_GAIN,
            cwnd_gain: 2.0,
            bw_filter_rounds: 10,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_duration: Duration::from_millis(200),
            pacing_margin: 0.01,
            long_term_bw: true,
            extra_acked_gain: 1.0,
            extra_acked_window_rounds: 5,
            extra_acked_max: Duration::from_millis(100),
            tso_autosize: false,
        }
    }
}

/// The state of [`Bbr`]'s state machine (draft §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramping up: pacing gain 2.885, until the bandwidth stops growing.
    Startup,
    /// Draining the queue STARTUP built: pacing gain 1/2.885, until in-flight is one BDP.
    Drain,
    /// Steady state: cycling the pacing gain around 1 to probe for and share bandwidth.
    ProbeBw,
    /// Holding the flight at 4 packets to see the path's propagation delay again.
    ProbeRtt,
}

/// BBR v1 for one connection (Cardwell et al., ACM Queue 2016;
/// draft-cardwell-iccrg-bbr-congestion-control-00; Linux's `tcp_bbr.c`), built by
/// [`Bbr::new`].
///
/// It paces at a gain times the bottleneck bandwidth estimate (the largest delivery rate
/// of the last 10 round trips) and keeps cwnd at a gain times the BDP (that bandwidth
/// times the smallest RTT of the last 10 s), moving through the states of [`BbrMode`].
/// It asks the connection for [`Delivery`](crate::cc::Delivery) on every ACK, paces by
/// its own rate and sets the window during loss recovery itself (packet conservation in
/// the first round, then the model; the window from before the recovery comes back when
/// it ends).
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    mss: u32,
    initial_window: u32,
    cwnd: u32,
    /// Infinite, as Linux keeps it, except that leaving STARTUP records the BDP here.
    ssthresh: u32,
    /// cwnd before the last recovery, timeout or PROBE_RTT (Linux's `prior_cwnd`).
    prior_cwnd: u32,
    /// The pacing rate.
    pacing: PacingRate,
    mode: BbrMode,
    pacing_gain: f64,
    cwnd_gain: f64,
    rounds: Rounds,
    /// Max filter of delivery rates over `bw_filter_rounds` rounds (draft §4.1.1.4).
    max_bw: WindowedMax,
    /// The smallest RTT seen in the last `min_rtt_window`; `None` before the first
    /// sample (Linux's `~0U`).
    min_rtt: Option<Duration>,
    /// When `min_rtt` was last set; `None` until the first ACK (Linux sets it when the
    /// connection starts, which a controller built without a clock learns at its first
    /// ACK).
    min_rtt_stamp: Option<Instant>,
    /// When PROBE_RTT may end, once the flight is down to the minimum.
    probe_rtt_done: Option<Instant>,
    /// A round has passed since the flight came down in PROBE_RTT.
    probe_rtt_round_done: bool,
    /// Samples from packets sent while `C.delivered` lay in this range were sent in
    /// PROBE_RTT and are treated as application-limited (Linux marks the connection
    /// app-limited there; see [`Bbr::sample_is_app_limited`]).
    probe_rtt_app_limited: (u64, u64),
    /// Sending restarted from idle and no data has been acknowledged since.
    idle_restart: bool,
    full_pipe: FullPipe,
    /// The gain cycle's phase and when it began.
    cycle_index: usize,
    cycle_start: Instant,
    /// The recovery phase at the previous ACK that delivered data (Linux's
    /// `prev_ca_state`).
    prev_recovery: RecoveryPhase,
    /// In the first round of a fast recovery.
    packet_conservation: bool,
    lt: LongTermBw,
    aggregation: AckAggregation,
    /// When data was last delivered (Linux's `tp->delivered_mstamp`).
    delivered_time: Instant,
    /// `C.delivered` and `C.lost` as of the last ACK, for what a timeout does.
    delivered: u64,
    lost: u64,
    rng: Prng,
}

impl Bbr {
    /// A controller in STARTUP with cwnd `init.initial_window`, ssthresh infinite (Linux
    /// ignores the configured one) and a pacing rate of STARTUP's gain times the initial
    /// window per millisecond, until an RTT is known (Linux's
    /// `bbr_init_pacing_rate_from_rtt`).
    pub fn new(cfg: BbrConfig, init: CcInit) -> Self {
        let mss = init.mss.max(1);
        let mut bbr = Bbr {
            cfg,
            mss,
            initial_window: init.initial_window.max(mss),
            cwnd: init.initial_window.max(mss),
            ssthresh: u32::MAX,
            prior_cwnd: 0,
            pacing: PacingRate::new(cfg.pacing_margin, cfg.high_gain),
            mode: BbrMode::Startup,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            rounds: Rounds::default(),
            max_bw: WindowedMax::default(),
            min_rtt: None,
            min_rtt_stamp: None,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: (0, 0),
            idle_restart: false,
            full_pipe: FullPipe::default(),
            cycle_index: 0,
            cycle_start: Instant::ZERO,
            prev_recovery: RecoveryPhase::Open,
            packet_conservation: false,
            lt: LongTermBw::default(),
            aggregation: AckAggregation::new(
                cfg.extra_acked_window_rounds,
                cfg.extra_acked_gain,
                cfg.extra_acked_max,
            ),
            delivered_time: Instant::ZERO,
            delivered: 0,
            lost: 0,
            rng: Prng::new(cfg.seed),
        };
        bbr.pacing.init(bbr.cwnd, Duration::ZERO);
        bbr
    }

    /// The state machine's state.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The bottleneck bandwidth estimate in bytes per second: the windowed maximum of the
    /// delivery rate, or the policer's rate while the long-term model is in use.
    pub fn bandwidth(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.max_bw.get()
        }
    }

    /// The round-trip propagation time estimate (min_rtt), if an RTT was measured.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// Whether STARTUP found the pipe full (draft §4.3.2.2).
    pub fn full_bw_reached(&self) -> bool {
        self.full_pipe.reached
    }

    /// Whether a policer was detected and its rate is in use (Linux's `lt_use_bw`).
    pub fn long_term_bw_in_use(&self) -> bool {
        self.lt.use_bw
    }

    /// The pacing gain now in force.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The BDP at `bw` times `gain` (see [`bdp`]).
    fn bdp(&self, bw: u64, gain: f64) -> u64 {
        bdp(bw, gain, self.min_rtt, self.mss, self.initial_window)
    }

    /// Segments per TSO burst (Linux's `bbr_tso_segs_goal`): one, or with
    /// [`BbrConfig::tso_autosize`] about a millisecond of data at the pacing rate.
    fn tso_segs_goal(&self) -> u64 {
        if !self.cfg.tso_autosize {
            return 1;
        }
        let min = if self.pacing.rate < MIN_TSO_RATE {
            1
        } else {
            2
        };
        // `sk_pacing_rate >> sk_pacing_shift` (10) bytes, within a 64 KB GSO packet.
        let bytes = (self.pacing.rate >> 10).min(65_535 - 1 - 320);
        (bytes / u64::from(self.mss)).max(min).min(0x7f)
    }

    /// Linux's `bbr_quantization_budget`: room for three TSO bursts, rounded up to an even
    /// number of packets (a receiver that ACKs every other packet is not left waiting for
    /// a second one), and 2 packets more in the 1.25 phase so that the probe gets above
    /// the BDP even when the BDP is small.
    fn quantization_budget(&self, bytes: u64) -> u64 {
        let mss = u64::from(self.mss);
        let mut packets = bytes.div_ceil(mss) + 3 * self.tso_segs_goal();
        packets = (packets + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_index == 0 {
            packets += 2;
        }
        packets * mss
    }

    /// The data in flight the model aims at with `gain` (Linux's `bbr_inflight`).
    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// Whether a sample is application-limited: the connection says so, or the packet was
    /// sent during PROBE_RTT. Linux marks the connection app-limited in PROBE_RTT (`tp->
    /// app_limited = delivered + in_flight`) so that the low rates of a 4-packet flight do
    /// not count; a controller cannot mark the connection, so it applies the same test to
    /// the sample: sent after PROBE_RTT began and before the mark was delivered.
    fn sample_is_app_limited(&self, s: &RateSample) -> bool {
        let (from, to) = self.probe_rtt_app_limited;
        s.is_app_limited || (to > 0 && (from..=to).contains(&s.prior_delivered))
    }

    /// Linux's `bbr_update_bw`: counts round trips and feeds the max filter. A round ends
    /// when a packet sent after the previous round's end is delivered (draft §4.1.1.3).
    fn update_bw(&mut self, d: &Delivery) {
        self.rounds.start = false;
        let Some(s) = d.sample.filter(|s| s.interval > Duration::ZERO) else {
            return;
        };
        if self.rounds.on_sample(&s, d.delivered) {
            self.packet_conservation = false;
        }
        let app_limited = self.sample_is_app_limited(&s);
        if self.cfg.long_term_bw {
            self.lt_bw_sampling(d.newly_lost > 0, app_limited);
        }
        // Draft §4.1.1.5: an application-limited sample shows what the application offered,
        // not what the path carries; it may raise the estimate but never lowers it.
        let bw = s.delivery_rate;
        if !app_limited || bw >= self.max_bw.get() {
            self.max_bw
                .update(self.cfg.bw_filter_rounds, self.rounds.count, bw);
        }
    }

    /// Linux's `bbr_lt_bw_sampling`: the long-term model of a policer. An interval starts
    /// at a loss (the policer's bucket is empty then, so what follows is its steady rate),
    /// lasts 4 to 16 rounds and ends at a loss; if its loss rate is at least 50/256, its
    /// delivery rate is a candidate, and two candidates in a row that agree make it the
    /// bandwidth for [`LT_BW_MAX_ROUNDS`] rounds.
    fn lt_bw_sampling(&mut self, losses: bool, app_limited: bool) {
        if self.lt.use_bw {
            if self.mode == BbrMode::ProbeBw && self.rounds.start {
                self.lt.rounds += 1;
                if self.lt.rounds >= LT_BW_MAX_ROUNDS {
                    // Probe again: the policer may be gone.
                    self.lt
                        .reset(self.delivered_time, self.delivered, self.lost);
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        if !self.lt.sampling {
            if !losses {
                return;
            }
            self.lt
                .start_interval(self.delivered_time, self.delivered, self.lost);
            self.lt.sampling = true;
        }
        // A bubble from the application would make the policer look slower than it is.
        if app_limited {
            self.lt
                .reset(self.delivered_time, self.delivered, self.lost);
            return;
        }
        if self.rounds.start {
            self.lt.rounds += 1;
        }
        if self.lt.rounds < LT_INTERVAL_MIN_ROUNDS {
            return;
        }
        if self.lt.rounds > 4 * LT_INTERVAL_MIN_ROUNDS {
            self.lt
                .reset(self.delivered_time, self.delivered, self.lost);
            return;
        }
        // The interval ends at a loss: the bucket is empty again, so the interval holds
        // whole refills.
        if !losses {
            return;
        }
        let lost = self.lost.saturating_sub(self.lt.last_lost);
        let delivered = self.delivered.saturating_sub(self.lt.last_delivered);
        if delivered == 0 || (lost as f64) < LT_LOSS_THRESH * delivered as f64 {
            return;
        }
        let t = self.delivered_time.saturating_since(self.lt.last_stamp);
        if t < Duration::from_millis(1) {
            return;
        }
        self.lt_bw_interval_done(div_rate(delivered, t));
    }

    /// Linux's `bbr_lt_bw_interval_done`: a second interval whose rate is within 1/8 (or
    /// 4 kbit/s) of the first's means a policer; BBR then paces at their mean, gain 1.
    fn lt_bw_interval_done(&mut self, bw: u64) {
        if self.lt.bw > 0 {
            let diff = bw.abs_diff(self.lt.bw);
            if diff as f64 <= LT_BW_RATIO * self.lt.bw as f64 || diff <= LT_BW_DIFF {
                self.lt.bw = (bw + self.lt.bw) / 2;
                self.lt.use_bw = true;
                self.pacing_gain = 1.0;
                self.lt.rounds = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.lt
            .start_interval(self.delivered_time, self.delivered, self.lost);
    }

    /// Linux's `bbr_reset_probe_bw_mode`: enters PROBE_BW at a random phase other than
    /// the 0.75 one (draft §4.3.4.2: starting there would cut the rate below the
    /// bandwidth before ever probing).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        self.cycle_index = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    /// Linux's `bbr_reset_mode`: after PROBE_RTT, back to STARTUP if the pipe was never
    /// found full, else to PROBE_BW.
    fn reset_mode(&mut self) {
        if self.full_pipe.reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_index = (self.cycle_index + 1) % CYCLE_LEN;
        self.cycle_start = self.delivered_time;
    }

    /// Linux's `bbr_is_next_cycle_phase` (draft §4.3.4.3): a phase lasts one min_rtt,
    /// except that the 1.25 phase also waits until the flight reaches 1.25 BDP (or a loss
    /// shows the probe went too far), and the 0.75 phase ends early once the flight is
    /// down to one BDP (the queue the probe built is gone).
    fn is_next_cycle_phase(&self, now: Instant, d: &Delivery) -> bool {
        let full_length = self
            .min_rtt
            .is_some_and(|rtt| now.saturating_since(self.cycle_start) > rtt);
        let gain = self.pacing_gain;
        if gain == 1.0 {
            return full_length;
        }
        let inflight = u64::from(d.prior_in_flight);
        let bw = self.max_bw.get();
        if gain > 1.0 {
            return full_length && (d.newly_lost > 0 || inflight >= self.inflight(bw, gain));
        }
        full_length || inflight <= self.inflight(bw, 1.0)
    }

    /// Linux's `bbr_check_full_bw_reached` (draft §4.3.2.2): once per round, not on an
    /// application-limited sample, counts the rounds in which the bandwidth estimate grew
    /// by less than 25%.
    fn check_full_bw_reached(&mut self, d: &Delivery) {
        let app_limited = d.sample.is_some_and(|s| self.sample_is_app_limited(&s));
        if self.full_pipe.reached || !self.rounds.start || app_limited {
            return;
        }
        self.full_pipe.on_round(self.max_bw.get());
    }

    /// Linux's `bbr_check_drain` (draft §4.3.3): STARTUP gives way to DRAIN when the pipe
    /// is full, and DRAIN to PROBE_BW when the flight is down to one BDP.
    fn check_drain(&mut self, d: &Delivery) {
        if self.mode == BbrMode::Startup && self.full_pipe.reached {
            self.mode = BbrMode::Drain;
            // Linux reports the BDP as ssthresh from here on.
            let bdp = self.inflight(self.max_bw.get(), 1.0);
            self.ssthresh = bdp.min(u64::from(u32::MAX)) as u32;
        }
        if self.mode == BbrMode::Drain
            && u64::from(d.in_flight) <= self.inflight(self.max_bw.get(), 1.0)
        {
            self.reset_probe_bw_mode();
        }
    }

    /// Linux's `bbr_update_min_rtt` (draft §4.1.2.3, §4.3.5): keeps min_rtt, enters
    /// PROBE_RTT when it is older than the window, and leaves PROBE_RTT after the flight
    /// has been at the minimum for `probe_rtt_duration` and a round trip.
    fn update_min_rtt(&mut self, ev: &AckEvent, d: &Delivery) {
        let now = ev.now;
        let stamp = *self.min_rtt_stamp.get_or_insert(now);
        let expired = now > stamp + self.cfg.min_rtt_window;
        if let Some(rtt) = ev.rtt {
            // Linux also declines a delayed ACK's sample on expiry; the engine does not
            // say which ACKs were delayed.
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = Some(now);
            }
        }
        if expired && !self.idle_restart && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
            self.probe_rtt_app_limited = (d.delivered, d.delivered);
        }
        if self.mode == BbrMode::ProbeRtt {
            // What is sent until the flight now in the pipe is delivered is sent at 4
            // packets, and its rate samples are application-limited.
            self.probe_rtt_app_limited.1 = d.delivered + u64::from(d.in_flight).max(1);
            let min_cwnd = u64::from(MIN_CWND_PACKETS * self.mss);
            if self.probe_rtt_done.is_none() && u64::from(d.in_flight) <= min_cwnd {
                self.probe_rtt_done = Some(now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                // A round starts now: the round-trip part of the wait.
                self.rounds.next_delivered = d.delivered;
            } else if self.probe_rtt_done.is_some() {
                if self.rounds.start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
        if d.sample.is_some_and(|s| s.delivered > 0) {
            self.idle_restart = false;
        }
    }

    /// Linux's `bbr_check_probe_rtt_done`: PROBE_RTT ends once its time is up; min_rtt
    /// counts as fresh (the flight was at its minimum), and cwnd returns to what it was.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = Some(now);
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    /// Linux's `bbr_update_gains` (draft §4.3).
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            BbrMode::Drain => (1.0 / self.cfg.high_gain, self.cfg.high_gain),
            BbrMode::ProbeBw if self.lt.use_bw => (1.0, self.cfg.cwnd_gain),
            BbrMode::ProbeBw => (PACING_GAIN_CYCLE[self.cycle_index], self.cfg.cwnd_gain),
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// Linux's `bbr_save_cwnd`: remembers cwnd before a recovery, a timeout or PROBE_RTT;
    /// inside one of them (where cwnd is already reduced) only a larger value replaces it.
    fn save_cwnd(&mut self) {
        if self.prev_recovery == RecoveryPhase::Open && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// Linux's `bbr_set_cwnd_to_recover_or_restore`. Returns the cwnd to start from and
    /// whether packet conservation holds it (then the model's target does not apply).
    fn recover_or_restore(&mut self, d: &Delivery) -> (u32, bool) {
        let prev = self.prev_recovery;
        let state = d.recovery;
        let mut cwnd = self.cwnd;
        // Losses leave the pipe for good: take them out of the window too.
        if d.newly_lost > 0 {
            cwnd = cwnd.saturating_sub(d.newly_lost).max(self.mss);
        }
        let flight_and_acked = d.in_flight.saturating_add(d.newly_delivered);
        if state == RecoveryPhase::Fast && prev != RecoveryPhase::Fast {
            // The first round of a fast recovery sends one packet per packet delivered
            // (packet conservation); the round starts now.
            self.packet_conservation = true;
            self.rounds.next_delivered = d.delivered;
            cwnd = flight_and_acked;
        } else if prev != RecoveryPhase::Open && state == RecoveryPhase::Open {
            // The recovery or timeout is over: back to at least the window before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_recovery = state;
        if self.packet_conservation {
            return (cwnd.max(flight_and_acked), true);
        }
        (cwnd, false)
    }

    /// Linux's `bbr_set_cwnd` (draft §4.2.3): cwnd grows by what is delivered toward
    /// `gain` times the BDP (plus the aggregation allowance and the TSO budget); before the
    /// pipe is full it grows without that cap while below it.
    fn update_cwnd(&mut self, d: &Delivery, bw: u64, gain: f64) {
        let acked = d.newly_delivered;
        if acked > 0 {
            let (mut cwnd, conserving) = self.recover_or_restore(d);
            if !conserving {
                let aggregation = if self.full_pipe.reached {
                    self.aggregation.cwnd(bw)
                } else {
                    0
                };
                let target = self.quantization_budget(self.bdp(bw, gain) + aggregation);
                let grown = u64::from(cwnd) + u64::from(acked);
                let cwnd64 = if self.full_pipe.reached {
                    grown.min(target)
                } else if u64::from(cwnd) < target || d.delivered < u64::from(self.initial_window) {
                    grown
                } else {
                    u64::from(cwnd)
                };
                cwnd = cwnd64.min(u64::from(u32::MAX)) as u32;
                cwnd = cwnd.max(MIN_CWND_PACKETS * self.mss);
            }
            self.cwnd = cwnd;
        }
        if self.mode == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_CWND_PACKETS * self.mss);
        }
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
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

    /// Linux's `bbr_main`: update the model, then the pacing rate and cwnd from it.
    fn on_ack(&mut self, ev: &AckEvent) {
        let Some(d) = ev.delivery else {
            // Without the transmit log's deliveries there is no model to update.
            return;
        };
        if d.newly_delivered > 0 {
            self.delivered_time = ev.now;
        }
        self.delivered = d.delivered;
        self.lost = d.lost;
        self.update_bw(&d);
        if d.sample.is_some_and(|s| s.interval > Duration::ZERO) {
            self.aggregation.update(
                (self.rounds.start, false),
                self.delivered_time,
                (self.bandwidth(), d.newly_delivered),
                (self.cwnd, self.mss),
            );
        }
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(ev.now, &d) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(&d);
        self.check_drain(&d);
        self.update_min_rtt(ev, &d);
        self.update_gains();
        let bw = self.bandwidth();
        let (cwnd, full) = (self.cwnd, self.full_pipe.reached);
        self.pacing.set(bw, self.pacing_gain, ev.srtt, cwnd, full);
        self.update_cwnd(&d, bw, self.cwnd_gain);
    }

    /// Linux's `bbr_ssthresh`, called as a fast recovery starts: only remembers cwnd.
    /// The window is set on the ACKs that follow (packet conservation, then the model).
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.save_cwnd();
    }

    /// A timeout: Linux's `tcp_enter_loss` (cwnd to one packet, after `bbr_ssthresh` saved
    /// it on the first timeout of an episode) and `bbr_set_state(TCP_CA_Loss)`, which
    /// treats the timeout as the end of a round with a loss, for the long-term model, and
    /// restarts the count of rounds without bandwidth growth.
    fn on_rto(&mut self, _ev: &CongestionEvent, first: bool) {
        if first {
            self.save_cwnd();
        }
        self.cwnd = self.mss;
        self.prev_recovery = RecoveryPhase::Timeout;
        self.full_pipe.bw = 0;
        self.rounds.start = true;
        if self.cfg.long_term_bw {
            self.lt_bw_sampling(true, false);
        }
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.max(1);
    }

    /// Linux's `bbr_undo_cwnd`: the losses were not losses, so the full-pipe count and
    /// the long-term model start over; the window comes back to at least `cwnd`.
    fn undo(&mut self, cwnd: u32, _ssthresh: u32) {
        self.full_pipe.bw = 0;
        self.full_pipe.count = 0;
        self.lt
            .reset(self.delivered_time, self.delivered, self.lost);
        self.cwnd = self.cwnd.max(cwnd);
    }

    /// BBR v1 does not answer ECN marks (Linux's v1 has no ECN input); the connection
    /// still sends CWR, as Linux's CWR state does, so the receiver stops echoing.
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

    /// Linux's `bbr_cwnd_event(CA_EVENT_TX_START)`: restarting after the application left
    /// the connection idle, PROBE_BW paces at the estimated bandwidth (gain 1: nothing to
    /// gain from a faster start, and a burst only queues), and PROBE_RTT may be over
    /// already (the idle time drained the queue).
    fn on_send_from_idle(&mut self, now: Instant, app_limited: bool) {
        if !app_limited {
            return;
        }
        self.idle_restart = true;
        self.aggregation.restart_epoch(now);
        match self.mode {
            BbrMode::ProbeBw => {
                let (bw, cwnd, full) = (self.bandwidth(), self.cwnd, self.full_pipe.reached);
                self.pacing.set(bw, 1.0, Duration::ZERO, cwnd, full);
            }
            BbrMode::ProbeRtt => self.check_probe_rtt_done(now),
            _ => {}
        }
    }
}

/// Round-trip counting by delivered data (draft §4.1.1.3, Linux's `rtt_cnt` and
/// `next_rtt_delivered`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rounds {
    /// Rounds counted so far.
    pub(crate) count: u64,
    /// `C.delivered` at the start of the current round: a round ends when a packet sent
    /// after it (`P.delivered >= next_delivered`) is delivered.
    pub(crate) next_delivered: u64,
    /// This ACK started a round.
    pub(crate) start: bool,
}

impl Rounds {
    /// Counts a round if `s` comes from a packet sent after the current round began;
    /// `delivered` is `C.delivered` now. Returns whether a round started.
    pub(crate) fn on_sample(&mut self, s: &RateSample, delivered: u64) -> bool {
        if s.prior_delivered >= self.next_delivered {
            self.next_delivered = delivered;
            self.count += 1;
            self.start = true;
        }
        self.start
    }
}

/// The full-pipe test of STARTUP (draft §4.3.2.2).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FullPipe {
    /// The bandwidth the next rounds must beat by 25%.
    pub(crate) bw: u64,
    /// Rounds in a row without that growth.
    pub(crate) count: u32,
    /// STARTUP found the pipe full; stays set.
    pub(crate) reached: bool,
}

impl FullPipe {
    /// One round's bandwidth estimate `max_bw`: growth of 25% restarts the count; three
    /// rounds without it fill the pipe.
    pub(crate) fn on_round(&mut self, max_bw: u64) {
        if max_bw as f64 >= self.bw as f64 * FULL_BW_GROWTH {
            self.bw = max_bw;
            self.count = 0;
            return;
        }
        self.count += 1;
        self.reached = self.count >= FULL_BW_ROUNDS;
    }
}

/// Linux's long-term bandwidth state (`lt_*`).
#[derive(Clone, Copy, Debug, Default)]
struct LongTermBw {
    /// An interval is being sampled.
    sampling: bool,
    /// The policer's rate is in use.
    use_bw: bool,
    /// Rounds in the interval, or since the rate came into use.
    rounds: u32,
    /// The last interval's rate (bytes per second), or the policer's.
    bw: u64,
    /// `C.delivered`, `C.lost` and the delivery time when the interval began.
    last_delivered: u64,
    last_lost: u64,
    last_stamp: Instant,
}

impl LongTermBw {
    /// Linux's `bbr_reset_lt_bw_sampling_interval`.
    fn start_interval(&mut self, now: Instant, delivered: u64, lost: u64) {
        self.last_stamp = now;
        self.last_delivered = delivered;
        self.last_lost = lost;
        self.rounds = 0;
    }
    /// Linux's `bbr_reset_lt_bw_sampling`: forget the model.
    fn reset(&mut self, now: Instant, delivered: u64, lost: u64) {
        self.bw = 0;
        self.use_bw = false;
        self.sampling = false;
        self.start_interval(now, delivered, lost);
    }
}

/// Linux's ACK aggregation estimate (`bbr_update_ack_aggregation`, shared by v1 and v3):
/// the data ACKed in an epoch beyond what the bandwidth estimate predicts for its length,
/// maximised over two windows of a few rounds each. Bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AckAggregation {
    /// Rounds per window.
    window_rounds: u32,
    /// Gain on the estimate when it is added to cwnd.
    gain: f64,
    /// The allowance is at most this much time at the estimated bandwidth.
    max_time: Duration,
    /// When the epoch began.
    epoch_start: Instant,
    /// Bytes delivered in the epoch.
    epoch_acked: u64,
    /// The largest excess of each of the two windows.
    extra: [u64; 2],
    /// The window being filled.
    index: usize,
    /// Rounds since that window began.
    rounds: u32,
}

impl AckAggregation {
    /// An estimator over two windows of `window_rounds` rounds, whose allowance is `gain`
    /// times the estimate and at most `max_time` at the estimated bandwidth.
    pub(crate) fn new(window_rounds: u32, gain: f64, max_time: Duration) -> Self {
        AckAggregation {
            window_rounds,
            gain,
            max_time,
            epoch_start: Instant::ZERO,
            epoch_acked: 0,
            extra: [0; 2],
            index: 0,
            rounds: 0,
        }
    }

    /// An ACK that gave a rate sample (Linux skips the others) and delivered `acked`
    /// bytes at `now`, with the bandwidth estimate `bw`, cwnd `cwnd` and MSS `mss`.
    /// `short_window`: the windows last one round instead of the configured number (v3
    /// does this until the pipe is full, so that STARTUP's fast growth is not remembered).
    pub(crate) fn update(
        &mut self,
        (round_start, short_window): (bool, bool),
        now: Instant,
        (bw, acked): (u64, u32),
        (cwnd, mss): (u32, u32),
    ) {
        if acked == 0 || self.gain <= 0.0 {
            return;
        }
        if round_start {
            self.rounds = (self.rounds + 1).min(0x1f);
            let window = if short_window { 1 } else { self.window_rounds };
            if self.rounds >= window {
                self.rounds = 0;
                self.index ^= 1;
                self.extra[self.index] = 0;
            }
        }
        let elapsed = now.saturating_since(self.epoch_start);
        let mut expected = mul_rate(bw, elapsed);
        let acked = u64::from(acked);
        // An epoch whose ACKs came no faster than the estimate is no aggregation: a new one
        // starts here; so does a very long one.
        let reset = ACK_EPOCH_RESET_PACKETS * u64::from(mss);
        if self.epoch_acked <= expected || self.epoch_acked + acked >= reset {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + acked).min(reset);
        let extra = (self.epoch_acked - expected.min(self.epoch_acked)).min(u64::from(cwnd));
        if extra > self.extra[self.index] {
            self.extra[self.index] = extra;
        }
    }

    /// Linux's `bbr_ack_aggregation_cwnd`: the estimate times its gain, at most
    /// `max_time` at `bw`. The caller adds it only once the pipe is full.
    pub(crate) fn cwnd(&self, bw: u64) -> u64 {
        let extra = self.extra[0].max(self.extra[1]);
        ((self.gain * extra as f64) as u64).min(mul_rate(bw, self.max_time))
    }

    /// Sending restarts from idle (Linux's `CA_EVENT_TX_START`): a new epoch.
    pub(crate) fn restart_epoch(&mut self, now: Instant) {
        self.epoch_start = now;
        self.epoch_acked = 0;
    }
}

/// Bytes sent in `t` at `rate` bytes per second.
pub(crate) fn mul_rate(rate: u64, t: Duration) -> u64 {
    (u128::from(rate) * u128::from(t.as_nanos()) / 1_000_000_000).min(u128::from(u64::MAX)) as u64
}

/// Bytes per second from `bytes` over `t` (zero for no time).
pub(crate) fn div_rate(bytes: u64, t: Duration) -> u64 {
    if t == Duration::ZERO {
        return 0;
    }
    (u128::from(bytes) * 1_000_000_000 / u128::from(t.as_nanos())).min(u128::from(u64::MAX)) as u64
}

/// BBR's pacing rate, v1's and v3's alike: Linux's `sk_pacing_rate` as `tcp_bbr.c` sets it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PacingRate {
    /// Bytes per second.
    pub(crate) rate: u64,
    /// An RTT sample has set the initial rate (`bbr->has_seen_rtt`).
    has_seen_rtt: bool,
    /// Pace this share below bandwidth x gain (Linux's `bbr_pacing_margin_percent`, 1%).
    margin: f64,
    /// STARTUP's pacing gain, for the initial rate.
    startup_gain: f64,
}

impl PacingRate {
    /// No rate yet; [`init`](Self::init) sets the first.
    pub(crate) fn new(margin: f64, startup_gain: f64) -> Self {
        PacingRate {
            rate: 0,
            has_seen_rtt: false,
            margin,
            startup_gain,
        }
    }

    /// `bw * gain` in bytes per second, less the margin (Linux's `bbr_bw_to_pacing_rate`).
    pub(crate) fn of(&self, bw: u64, gain: f64) -> u64 {
        (bw as f64 * gain * (1.0 - self.margin)) as u64
    }

    /// Linux's `bbr_init_pacing_rate_from_rtt`: STARTUP's gain times `cwnd` per smoothed RTT
    /// (1 ms without one), before any bandwidth is measured.
    pub(crate) fn init(&mut self, cwnd: u32, srtt: Duration) {
        let rtt = if srtt > Duration::ZERO {
            self.has_seen_rtt = true;
            srtt
        } else {
            Duration::from_millis(1)
        };
        self.rate = self.of(div_rate(u64::from(cwnd), rtt), self.startup_gain);
    }

    /// Linux's `bbr_set_pacing_rate`: the first RTT sample resets the initial rate, and
    /// until the pipe is full (`full`) the rate only grows, so that a low early sample does
    /// not slow STARTUP.
    pub(crate) fn set(&mut self, bw: u64, gain: f64, srtt: Duration, cwnd: u32, full: bool) {
        let rate = self.of(bw, gain);
        if !self.has_seen_rtt && srtt > Duration::ZERO {
            self.init(cwnd, srtt);
        }
        if full || rate > self.rate {
            self.rate = rate;
        }
    }
}

/// The BDP at `bw` times `gain`, in bytes, rounded up to whole packets of `mss` (draft
/// §4.2.3.2, Linux's `bbr_bdp`); `initial_window` while no RTT is known.
pub(crate) fn bdp(
    bw: u64,
    gain: f64,
    min_rtt: Option<Duration>,
    mss: u32,
    initial_window: u32,
) -> u64 {
    let Some(rtt) = min_rtt else {
        return u64::from(initial_window);
    };
    let packets = (bw as f64 * rtt.as_secs_f64() * gain / f64::from(mss)).ceil();
    packets as u64 * u64::from(mss)
}

/// A windowed maximum over a sliding window of round counts, by Kathleen Nichols'
/// algorithm (the draft's §4.1.1.4 filter; Linux's `lib/win_minmax.c`): the best, second
/// best and third best samples of the window, each from a later part of it, so the
/// maximum of the window is known in constant space and time, and when the best ages out
/// the next one takes over. Approximate only in that a runner-up is kept from each
/// quarter and half of the window, not from every moment of it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WindowedMax {
    /// (round, value), best first.
    s: [(u64, u64); 3],
}

impl WindowedMax {
    /// The maximum in the window.
    pub(crate) fn get(&self) -> u64 {
        self.s[0].1
    }

    /// Forgets everything but `(t, v)`.
    pub(crate) fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    /// Adds the sample `v` of round `t` to a window of `win` rounds; returns the maximum.
    pub(crate) fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        // A new best, or the whole window has passed since the third choice: start over.
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > win {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].1 {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        let dt = t.saturating_sub(self.s[0].0);
        if dt > win {
            // The best has aged out: the runners-up move up (twice if the second has too).
            self.s = [self.s[1], self.s[2], val];
            if t.saturating_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window without a runner-up: take one from the second quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window without a third choice: take one from the second half.
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// A small deterministic generator (SplitMix64, Steele, Lea and Flood 2014) for the
/// random choices BBR makes, so that a simulation with a given seed repeats exactly.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prng(u64);

impl Prng {
    /// A generator seeded by `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Prng(seed)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (Linux's `prandom_u32_max`: the high bits scaled, no division).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * u64::from(n)) >> 32) as u32
    }
}

#[cfg(test)]
pub(crate) mod sim;

#[cfg(test)]
mod tests {
    use super::sim::{Path, Policer};
    use super::*;

    const MSS: u32 = 1000;

    fn init() -> CcInit {
        CcInit {
            mss: MSS,
            initial_window: 10 * MSS,
            initial_ssthresh: u32::MAX,
        }
    }

    fn bbr() -> Bbr {
        Bbr::new(BbrConfig::default(), init())
    }

    fn ms(t: u64) -> Duration {
        Duration::from_millis(t)
    }

    /// Hand-made ACKs: each call is one ACK that delivers `newly` bytes `dt` after the
    /// previous one and, unless `same_round`, starts a round (its sample comes from a
    /// packet sent after the previous ACK, so after the round began).
    struct Feed {
        now: Instant,
        delivered: u64,
        lost: u64,
    }

    /// What one hand-made ACK says.
    #[derive(Clone, Copy)]
    struct Ack {
        dt: Duration,
        newly: u32,
        bw: u64,
        rtt: Duration,
        in_flight: u32,
        lost: u32,
        app_limited: bool,
        same_round: bool,
        recovery: RecoveryPhase,
    }

    impl Default for Ack {
        fn default() -> Self {
            Ack {
                dt: ms(100),
                newly: 10 * MSS,
                bw: 100_000,
                rtt: ms(100),
                in_flight: 10 * MSS,
                lost: 0,
                app_limited: false,
                same_round: false,
                recovery: RecoveryPhase::Open,
            }
        }
    }

    impl Feed {
        fn new() -> Self {
            Feed {
                now: Instant::ZERO,
                delivered: 0,
                lost: 0,
            }
        }

        fn ack(&mut self, c: &mut dyn CongestionControl, a: Ack) -> AckEvent {
            self.now += a.dt;
            // A packet sent before any delivery is from the round in progress.
            let prior_delivered = if a.same_round { 0 } else { self.delivered };
            self.delivered += u64::from(a.newly);
            self.lost += u64::from(a.lost);
            let sample = RateSample {
                delivery_rate: a.bw,
                delivered: u64::from(a.newly),
                interval: a.rtt,
                send_elapsed: a.rtt,
                ack_elapsed: a.rtt,
                prior_delivered,
                prior_time: self.now - a.rtt,
                is_app_limited: a.app_limited,
                rtt: a.rtt,
                lost: u64::from(a.lost),
                tx_in_flight: a.in_flight,
            };
            let ev = AckEvent {
                now: self.now,
                bytes_acked: a.newly,
                mss: MSS,
                flight_bytes: a.in_flight + a.newly,
                rtt: Some(a.rtt),
                srtt: a.rtt,
                min_rtt: Some(a.rtt),
                in_recovery: a.recovery != RecoveryPhase::Open,
                ece: false,
                snd_una: crate::seq::SeqNum::new(0),
                snd_max: crate::seq::SeqNum::new(0),
                delivery: Some(Delivery {
                    delivered: self.delivered,
                    newly_delivered: a.newly,
                    lost: self.lost,
                    newly_lost: a.lost,
                    prior_in_flight: a.in_flight + a.newly + a.lost,
                    in_flight: a.in_flight,
                    app_limited: a.app_limited,
                    recovery: a.recovery,
                    sample: Some(sample),
                }),
            };
            c.on_ack(&ev);
            ev
        }

        /// `n` round-starting ACKs at bandwidth `bw`.
        fn rounds(&mut self, c: &mut dyn CongestionControl, n: u32, bw: u64) {
            for _ in 0..n {
                let in_flight = 30 * MSS;
                self.ack(
                    c,
                    Ack {
                        bw,
                        in_flight,
                        ..Ack::default()
                    },
                );
            }
        }
    }

    /// A controller in PROBE_BW at 100 kB/s and 100 ms (a BDP of 10 packets), in the
    /// gain phase `phase`, fed by `f`.
    fn in_probe_bw(f: &mut Feed, phase: usize) -> Bbr {
        let mut c = bbr();
        // Growth stops at once: the first round sets full_bw, three more fill the pipe.
        f.rounds(&mut c, 4, 100_000);
        assert_eq!(c.mode(), BbrMode::Drain);
        f.ack(
            &mut c,
            Ack {
                in_flight: 5 * MSS,
                ..Ack::default()
            },
        );
        assert_eq!(c.mode(), BbrMode::ProbeBw);
        c.cycle_index = phase;
        c.cycle_start = f.now;
        c.update_gains();
        c
    }

    const RATE: u64 = 1_250_000; // 10 Mbit/s
    const RTT: Duration = Duration::from_millis(40);

    /// Runs a fresh controller on a path until `secs`, returning the states it went
    /// through in order.
    fn run(c: &mut Bbr, p: &mut Path, until: Duration) -> Vec<BbrMode> {
        let mut modes = vec![c.mode()];
        let end = p.now + until;
        while p.now < end && p.step(c).is_some() {
            if *modes.last().unwrap() != c.mode() {
                modes.push(c.mode());
            }
        }
        modes
    }

    /// Paper, "Characterizing the bottleneck": BtlBw is the largest delivery rate and
    /// RTprop the smallest RTT. On a clean path of 10 Mbit/s and 40 ms the model finds
    /// the bottleneck within 1% and min_rtt exactly (the propagation delay plus one
    /// packet's time on the link), passing through STARTUP and DRAIN to PROBE_BW.
    #[test]
    fn bbr_v1_model_finds_the_bottleneck_rate_within_1_percent_and_min_rtt_exactly() {
        let mut c = bbr();
        let mut p = Path::new(RATE, RTT, MSS);
        let modes = run(&mut c, &mut p, Duration::from_secs(3));
        assert_eq!(modes, [BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw]);
        let bw = c.bandwidth();
        assert!(bw.abs_diff(RATE) * 100 <= RATE, "bw {bw}");
        assert_eq!(c.min_rtt(), Some(RTT + p.tx_time()));
        // PROBE_BW keeps about a BDP in flight and the link busy: the sender sent at
        // least 95% of what the link could carry in the 3 s.
        let capacity = 3 * RATE / u64::from(MSS);
        assert!(p.sent * 100 >= capacity * 95, "{} of {capacity}", p.sent);
        // The same seed gives the same run.
        let mut c2 = bbr();
        let mut p2 = Path::new(RATE, RTT, MSS);
        run(&mut c2, &mut p2, Duration::from_secs(3));
        assert_eq!((p.sent, c.cwnd()), (p2.sent, c2.cwnd()));
    }

    fn congestion() -> CongestionEvent {
        CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: 20 * MSS,
            snd_wnd: u32::MAX,
        }
    }

    /// Draft §4.3.2.2, Linux's `bbr_check_full_bw_reached`: STARTUP ends after three
    /// rounds in a row in which the bandwidth estimate grew by less than 25%; a round of
    /// application-limited samples and ACKs within a round do not count.
    #[test]
    fn bbr_v1_startup_exits_when_bandwidth_grows_less_than_25_percent_for_3_rounds() {
        let mut c = bbr();
        let mut f = Feed::new();
        let in_flight = 50 * MSS;
        for bw in [10_000, 20_000, 40_000, 80_000] {
            f.ack(
                &mut c,
                Ack {
                    bw,
                    in_flight,
                    ..Ack::default()
                },
            );
        }
        assert_eq!((c.mode(), c.full_pipe.bw), (BbrMode::Startup, 80_000));
        // 99 kB/s is 24% more than 80: no growth, twice.
        for _ in 0..2 {
            f.ack(
                &mut c,
                Ack {
                    bw: 99_000,
                    in_flight,
                    ..Ack::default()
                },
            );
        }
        assert_eq!((c.mode(), c.full_pipe.count), (BbrMode::Startup, 2));
        f.ack(
            &mut c,
            Ack {
                bw: 50_000,
                in_flight,
                app_limited: true,
                ..Ack::default()
            },
        );
        let same_round = true;
        f.ack(
            &mut c,
            Ack {
                bw: 99_000,
                in_flight,
                same_round,
                ..Ack::default()
            },
        );
        assert_eq!((c.mode(), c.full_pipe.count), (BbrMode::Startup, 2));
        assert!(c.in_slow_start());
        assert_eq!(
            c.ssthresh(),
            u32::MAX,
            "Linux keeps ssthresh infinite in STARTUP"
        );
        f.ack(
            &mut c,
            Ack {
                bw: 99_000,
                in_flight,
                ..Ack::default()
            },
        );
        assert_eq!(c.mode(), BbrMode::Drain);
        assert!(c.full_bw_reached() && !c.in_slow_start());
        // Linux reports the BDP (with its quantization budget) as ssthresh from here:
        // 99 kB/s x 100 ms = 10 packets, + 3, rounded up to even.
        assert_eq!(c.ssthresh(), 14 * MSS);
        assert_eq!(
            (c.pacing_gain, c.cwnd_gain),
            (1.0 / STARTUP_GAIN, STARTUP_GAIN)
        );
    }

    /// Draft §4.3.3, Linux's `bbr_check_drain`: DRAIN lasts until the data in flight is
    /// at most one BDP (with the quantization budget), then PROBE_BW begins.
    #[test]
    fn bbr_v1_drain_ends_in_probe_bw_when_inflight_is_at_most_the_bdp() {
        let mut c = bbr();
        let mut f = Feed::new();
        f.rounds(&mut c, 4, 100_000);
        assert_eq!(c.mode(), BbrMode::Drain);
        // BDP 10 packets + 3, rounded up to even: 14.
        f.ack(
            &mut c,
            Ack {
                in_flight: 15 * MSS,
                ..Ack::default()
            },
        );
        assert_eq!(c.mode(), BbrMode::Drain);
        f.ack(
            &mut c,
            Ack {
                in_flight: 14 * MSS,
                ..Ack::default()
            },
        );
        assert_eq!(c.mode(), BbrMode::ProbeBw);
        assert_ne!(c.pacing_gain(), 0.75);
        assert_eq!(c.cwnd_gain, 2.0);
    }

    /// Draft §4.3.4.2, Linux's `bbr_reset_probe_bw_mode`: PROBE_BW starts at a random
    /// phase of the cycle, never the 0.75 one; the draw is the seed's, so a run repeats.
    #[test]
    fn bbr_v1_probe_bw_starts_at_a_random_phase_other_than_0_75() {
        let mut seen = [0u32; CYCLE_LEN];
        for seed in 0..400 {
            let start = |seed| {
                let mut c = Bbr::new(
                    BbrConfig {
                        seed,
                        ..BbrConfig::default()
                    },
                    init(),
                );
                c.reset_probe_bw_mode();
                c.cycle_index
            };
            let i = start(seed);
            assert_eq!(i, start(seed));
            seen[i] += 1;
        }
        assert_eq!(seen[1], 0, "{seen:?}");
        assert!(
            seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 20),
            "{seen:?}"
        );
    }

    /// Draft §4.3.4.3, Linux's `bbr_is_next_cycle_phase`: a phase at gain 1 lasts one
    /// min_rtt (the phase ends on the first ACK more than min_rtt after it began).
    #[test]
    fn bbr_v1_the_gain_cycle_advances_once_per_min_rtt() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 2);
        let a = Ack {
            dt: ms(50),
            ..Ack::default()
        };
        f.ack(&mut c, a);
        f.ack(&mut c, a);
        assert_eq!(c.cycle_index, 2, "exactly min_rtt is not more than min_rtt");
        f.ack(&mut c, Ack { dt: ms(1), ..a });
        assert_eq!(c.cycle_index, 3);
        for phase in [4, 5, 6, 7, 0] {
            f.ack(&mut c, Ack { dt: ms(101), ..a });
            assert_eq!(c.cycle_index, phase);
        }
        assert_eq!(c.pacing_gain(), 1.25);
    }

    /// Draft §4.3.4.3: the 1.25 phase lasts until the flight reaches 1.25 BDP (or a loss
    /// says the probe went far enough), however long that takes.
    #[test]
    fn bbr_v1_the_1_25_phase_lasts_until_inflight_reaches_1_25_bdp_or_a_loss() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 0);
        // 1.25 BDP: 13 packets + 3 = 16, even, + 2 in this phase = 18. prior_in_flight
        // here is in_flight + 10 packets delivered.
        let a = Ack {
            dt: ms(150),
            ..Ack::default()
        };
        f.ack(
            &mut c,
            Ack {
                in_flight: 7 * MSS,
                ..a
            },
        );
        assert_eq!(c.cycle_index, 0);
        f.ack(
            &mut c,
            Ack {
                in_flight: 8 * MSS,
                ..a
            },
        );
        assert_eq!((c.cycle_index, c.pacing_gain()), (1, 0.75));
        let mut c = in_probe_bw(&mut f, 0);
        f.ack(
            &mut c,
            Ack {
                in_flight: 2 * MSS,
                lost: MSS,
                ..a
            },
        );
        assert_eq!(c.cycle_index, 1);
    }

    /// Draft §4.3.4.3: the 0.75 phase ends early, before a min_rtt has passed, once the
    /// flight is down to one BDP: the queue the probe built is gone.
    #[test]
    fn bbr_v1_the_0_75_phase_ends_early_when_inflight_is_at_most_the_bdp() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 1);
        let a = Ack {
            dt: ms(10),
            newly: MSS,
            ..Ack::default()
        };
        // One BDP is 14 packets with the budget; prior_in_flight = in_flight + 1.
        f.ack(
            &mut c,
            Ack {
                in_flight: 14 * MSS,
                ..a
            },
        );
        assert_eq!(c.cycle_index, 1);
        f.ack(
            &mut c,
            Ack {
                in_flight: 13 * MSS,
                ..a
            },
        );
        assert_eq!((c.cycle_index, c.pacing_gain()), (2, 1.0));
    }

    /// Draft §4.2.3.2 and Linux's `bbr_set_cwnd`: in PROBE_BW cwnd settles at twice the
    /// BDP, plus the ACK aggregation estimate (here each ACK delivers 10 packets at once:
    /// 10 packets of aggregation), plus 3 packets of TSO budget, rounded up to even.
    #[test]
    fn bbr_v1_cwnd_is_two_bdp_plus_aggregation_plus_3_packets() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 2);
        let a = Ack {
            dt: ms(100),
            ..Ack::default()
        };
        for _ in 0..20 {
            f.ack(&mut c, a);
        }
        assert_eq!(c.cwnd(), 34 * MSS); // 20 + 10 + 3 -> 34
        let cfg = BbrConfig {
            extra_acked_gain: 0.0,
            ..BbrConfig::default()
        };
        let mut c = Bbr::new(cfg, init());
        let mut f = Feed::new();
        f.rounds(&mut c, 4, 100_000);
        for _ in 0..20 {
            f.ack(
                &mut c,
                Ack {
                    in_flight: 5 * MSS,
                    ..a
                },
            );
        }
        assert_eq!(c.mode(), BbrMode::ProbeBw);
        // 20 + 3 -> 24, and 2 more in the 1.25 phase.
        let extra = if c.cycle_index == 0 { 2 } else { 0 };
        assert_eq!(c.cwnd(), (24 + extra) * MSS);
    }

    /// Draft §4.1.1.4 (Linux's `bbr_bw_rtts`): the bandwidth filter holds a sample for 10
    /// round trips; in the 11th round after it, a lower rate takes over.
    #[test]
    fn bbr_v1_the_bandwidth_filter_forgets_a_sample_after_10_rounds() {
        let mut c = bbr();
        let mut f = Feed::new();
        f.rounds(&mut c, 1, 200_000);
        for _ in 0..10 {
            f.rounds(&mut c, 1, 100_000);
            assert_eq!(c.bandwidth(), 200_000);
        }
        // Samples within a round do not age the filter.
        f.ack(
            &mut c,
            Ack {
                bw: 100_000,
                same_round: true,
                ..Ack::default()
            },
        );
        assert_eq!(c.bandwidth(), 200_000);
        f.rounds(&mut c, 1, 100_000);
        assert_eq!(c.bandwidth(), 100_000);
    }

    /// Draft §4.1.1.5: an application-limited sample may raise the bandwidth estimate
    /// but never lowers it, however long the application stays below the path's rate.
    #[test]
    fn bbr_v1_app_limited_samples_do_not_lower_the_bandwidth_estimate() {
        let mut c = bbr();
        let mut f = Feed::new();
        f.rounds(&mut c, 1, 200_000);
        let app_limited = true;
        for _ in 0..30 {
            f.ack(
                &mut c,
                Ack {
                    bw: 50_000,
                    app_limited,
                    ..Ack::default()
                },
            );
        }
        assert_eq!(c.bandwidth(), 200_000);
        f.ack(
            &mut c,
            Ack {
                bw: 300_000,
                app_limited,
                ..Ack::default()
            },
        );
        assert_eq!(c.bandwidth(), 300_000);
        f.rounds(&mut c, 11, 100_000);
        assert_eq!(c.bandwidth(), 100_000);
    }

    /// The same on a path: a bulk flow finds 10 Mbit/s, then the application writes at 3
    /// Mbit/s for 2 s (50 rounds): the estimate stays at the path's rate.
    #[test]
    fn bbr_v1_an_application_limited_flow_keeps_the_path_rate() {
        let mut c = bbr();
        let mut p = Path::new(RATE, RTT, MSS);
        run(&mut c, &mut p, Duration::from_secs(2));
        p.set_app_rate(Some(RATE * 3 / 10));
        let before = p.sent;
        run(&mut c, &mut p, Duration::from_secs(2));
        let sent = (p.sent - before) * u64::from(MSS);
        assert!(
            sent.abs_diff(2 * RATE * 3 / 10) <= 2 * u64::from(MSS),
            "{sent}"
        );
        let bw = c.bandwidth();
        assert!(bw.abs_diff(RATE) * 100 <= RATE, "bw {bw}");
    }

    /// Draft §4.3.5, Linux's `bbr_update_min_rtt`: when min_rtt has not been seen again
    /// for 10 s, PROBE_RTT holds cwnd at 4 packets; it ends 200 ms after the flight came
    /// down to that, and at least one round later, back in PROBE_BW with the cwnd from
    /// before and a min_rtt that counts as fresh. On a clean path every RTT sample equals
    /// the first (none is lower), so the first PROBE_RTT comes 10 s after the first ACK.
    #[test]
    fn bbr_v1_probe_rtt_after_10_s_without_a_new_min_rtt_lasts_200_ms_and_a_round() {
        let mut c = bbr();
        let mut p = Path::new(RATE, RTT, MSS);
        run(&mut c, &mut p, Duration::from_secs(9));
        let stamp = c.min_rtt_stamp.unwrap();
        let window = Duration::from_secs(10);
        assert_eq!(stamp, Instant::ZERO + RTT + p.tx_time(), "the first ACK");
        assert_eq!(c.mode(), BbrMode::ProbeBw);
        let cwnd_before = c.cwnd();
        // Into PROBE_RTT on the first ACK after the window.
        while c.mode() != BbrMode::ProbeRtt {
            p.step(&mut c);
        }
        let entered = p.now;
        assert!(entered > stamp + window && entered <= stamp + window + p.tx_time());
        assert!(c.prior_cwnd >= cwnd_before);
        let mut done_at = None;
        while c.mode() == BbrMode::ProbeRtt {
            p.step(&mut c);
            assert!(c.mode() != BbrMode::ProbeRtt || c.cwnd() <= 4 * MSS);
            done_at = done_at.or(c.probe_rtt_done);
        }
        let exited = p.now;
        // The flight drains to 4 packets within about a round trip...
        let low_at = done_at.unwrap() - Duration::from_millis(200);
        assert!(
            low_at - entered <= RTT.saturating_mul(2),
            "{:?}",
            low_at - entered
        );
        // ... and PROBE_RTT ends after 200 ms more, and at least one round, at most two.
        assert!(exited > done_at.unwrap(), "{exited:?}");
        assert!(exited - low_at <= Duration::from_millis(200) + RTT.saturating_mul(2));
        assert_eq!(c.mode(), BbrMode::ProbeBw);
        assert_eq!(c.min_rtt_stamp, Some(exited));
        assert!(c.cwnd() >= cwnd_before);
        // The 4-packet flight's low rate samples were application-limited: the estimate
        // did not fall.
        run(&mut c, &mut p, Duration::from_millis(500));
        let bw = c.bandwidth();
        assert!(bw.abs_diff(RATE) * 100 <= RATE, "bw {bw}");
    }

    /// Linux's `bbr_set_cwnd_to_recover_or_restore`: the first round of a fast recovery
    /// is packet conservation, cwnd = max(cwnd, in_flight + acked) from in_flight +
    /// acked; losses come out of cwnd; the next round the model grows cwnd again; the end
    /// of the recovery brings back at least the cwnd from before it.
    #[test]
    fn bbr_v1_packet_conservation_in_the_first_round_of_recovery_then_restore() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 2);
        for _ in 0..5 {
            f.ack(&mut c, Ack::default());
        }
        let before = c.cwnd();
        assert!(before >= 20 * MSS, "{before}");
        c.on_congestion(&congestion());
        assert_eq!(
            c.cwnd(),
            before,
            "the window is set by the ACKs that follow"
        );
        let a = Ack {
            dt: ms(1),
            newly: MSS,
            recovery: RecoveryPhase::Fast,
            same_round: true,
            ..Ack::default()
        };
        f.ack(
            &mut c,
            Ack {
                in_flight: 5 * MSS,
                ..a
            },
        );
        assert_eq!(c.cwnd(), 6 * MSS, "in_flight + acked");
        f.ack(
            &mut c,
            Ack {
                in_flight: 7 * MSS,
                ..a
            },
        );
        assert_eq!(c.cwnd(), 8 * MSS, "never below in_flight + acked");
        f.ack(
            &mut c,
            Ack {
                in_flight: 2 * MSS,
                lost: 2 * MSS,
                ..a
            },
        );
        assert_eq!(c.cwnd(), 6 * MSS, "cwnd less the bytes lost");
        // A new round: conservation is over, cwnd grows by what is acked.
        f.ack(
            &mut c,
            Ack {
                in_flight: 2 * MSS,
                same_round: false,
                ..a
            },
        );
        assert_eq!(c.cwnd(), 7 * MSS);
        f.ack(
            &mut c,
            Ack {
                in_flight: 2 * MSS,
                recovery: RecoveryPhase::Open,
                ..a
            },
        );
        assert_eq!(c.cwnd(), before);
    }

    /// Linux's `tcp_enter_loss` and `bbr_set_state(TCP_CA_Loss)`: a timeout sets cwnd to
    /// one packet, after saving it (a second timeout keeps the larger saved value); ACKs
    /// in the timeout's recovery grow it from the minimum of 4 packets; its end restores
    /// the cwnd from before the timeout.
    #[test]
    fn bbr_v1_rto_sets_cwnd_to_1_mss_and_the_end_of_the_recovery_restores_it() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 2);
        for _ in 0..5 {
            f.ack(&mut c, Ack::default());
        }
        let before = c.cwnd();
        c.on_rto(&congestion(), true);
        assert_eq!(c.cwnd(), MSS);
        c.on_rto(&congestion(), false);
        assert_eq!((c.cwnd(), c.prior_cwnd), (MSS, before));
        let a = Ack {
            dt: ms(1),
            newly: MSS,
            in_flight: 0,
            recovery: RecoveryPhase::Timeout,
            ..Ack::default()
        };
        f.ack(&mut c, a);
        assert_eq!(c.cwnd(), 4 * MSS, "the minimum cwnd");
        f.ack(&mut c, a);
        assert_eq!(c.cwnd(), 5 * MSS);
        f.ack(
            &mut c,
            Ack {
                recovery: RecoveryPhase::Open,
                ..a
            },
        );
        assert_eq!(c.cwnd(), before);
        // A spurious timeout's undo brings the window back at once.
        c.on_rto(&congestion(), true);
        c.undo(before, u32::MAX);
        assert_eq!(c.cwnd(), before);
    }

    /// Linux's `bbr_lt_bw_sampling`: behind a token-bucket policer of 2.5 Mbit/s on a 10
    /// Mbit/s path, intervals of 4 or more rounds lose more than 20% at a steady delivery
    /// rate; two that agree within 1/8 make BBR use their rate, with pacing gain 1.
    #[test]
    fn bbr_v1_long_term_model_detects_a_policer_and_paces_at_its_rate() {
        let mut c = bbr();
        let mut p = Path::new(RATE, RTT, MSS);
        let policed = RATE / 4;
        p.policer = Some(Policer {
            rate: policed,
            bucket: 20 * u64::from(MSS),
        });
        let mut detected = None;
        let end = Instant::ZERO + Duration::from_secs(3);
        while p.now < end && detected.is_none() {
            p.step(&mut c);
            if c.long_term_bw_in_use() {
                detected = Some(p.now);
            }
        }
        assert!(detected.is_some(), "bw {}", c.bandwidth());
        let bw = c.bandwidth();
        assert!(
            bw.abs_diff(policed) * 20 <= policed,
            "lt_bw {bw} for {policed}"
        );
        assert_eq!(c.pacing_gain(), 1.0);
        // In use, the policed rate paces the flow and the losses nearly stop.
        let (sent, drops) = (p.sent, p.drops);
        run(&mut c, &mut p, Duration::from_secs(1));
        let lost = (p.drops - drops) as f64 / (p.sent - sent) as f64;
        assert!(c.long_term_bw_in_use() && lost < 0.05, "loss {lost}");
        // Without the model, BBR keeps losing to the policer in the same second.
        let cfg = BbrConfig {
            long_term_bw: false,
            ..BbrConfig::default()
        };
        let mut c = Bbr::new(cfg, init());
        let mut p2 = Path::new(RATE, RTT, MSS);
        p2.policer = p.policer;
        run(&mut c, &mut p2, detected.unwrap() - Instant::ZERO);
        let (sent, drops) = (p2.sent, p2.drops);
        run(&mut c, &mut p2, Duration::from_secs(1));
        let lost_without = (p2.drops - drops) as f64 / (p2.sent - sent) as f64;
        assert!(lost_without > 2.0 * lost, "{lost_without} vs {lost}");
    }

    /// Linux's `bbr_lt_bw_max_rtts`: the policer's rate is used for 48 rounds of
    /// PROBE_BW; then BBR forgets it and probes again from a fresh gain cycle.
    #[test]
    fn bbr_v1_long_term_rate_is_dropped_after_48_rounds() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 2);
        c.lt.use_bw = true;
        c.lt.bw = 60_000;
        c.update_gains();
        assert_eq!((c.bandwidth(), c.pacing_gain()), (60_000, 1.0));
        f.rounds(&mut c, 47, 100_000);
        assert!(c.long_term_bw_in_use());
        f.rounds(&mut c, 1, 100_000);
        assert!(!c.long_term_bw_in_use());
        assert_eq!((c.bandwidth(), c.mode()), (100_000, BbrMode::ProbeBw));
    }

    /// Linux's `bbr_cwnd_event(CA_EVENT_TX_START)`: sending again after the application
    /// left the connection idle, PROBE_BW paces at the estimated bandwidth, not above it.
    #[test]
    fn bbr_v1_restart_from_idle_paces_at_the_estimated_bandwidth() {
        let mut f = Feed::new();
        let mut c = in_probe_bw(&mut f, 0);
        f.ack(
            &mut c,
            Ack {
                dt: ms(1),
                ..Ack::default()
            },
        );
        assert_eq!(c.pacing_rate(), Some(123_750)); // 1.25 x 100 kB/s less 1%
        c.on_send_from_idle(f.now, false);
        assert_eq!(
            c.pacing_rate(),
            Some(123_750),
            "not idle for the application"
        );
        c.on_send_from_idle(f.now, true);
        assert_eq!(c.pacing_rate(), Some(99_000));
        assert!(c.idle_restart);
    }

    /// Linux's `bbr_init_pacing_rate_from_rtt`: before any bandwidth sample, STARTUP paces
    /// at 2.885 times the initial window per millisecond, then per smoothed RTT once there
    /// is one; until the pipe is full the rate only grows.
    #[test]
    fn bbr_v1_startup_paces_the_initial_window_at_high_gain() {
        let mut c = bbr();
        let per_ms = 10_000.0 * 1000.0 * STARTUP_GAIN * 0.99;
        assert_eq!(c.pacing_rate(), Some(per_ms as u64));
        let mut f = Feed::new();
        // A first ACK with a 100 ms RTT and a low rate sample.
        f.ack(
            &mut c,
            Ack {
                bw: 1_000,
                newly: MSS,
                ..Ack::default()
            },
        );
        let per_rtt = 10_000.0 * 10.0 * STARTUP_GAIN * 0.99;
        assert_eq!(c.pacing_rate(), Some(per_rtt as u64));
        f.ack(
            &mut c,
            Ack {
                bw: 200_000,
                ..Ack::default()
            },
        );
        assert_eq!(
            c.pacing_rate(),
            Some((200_000.0 * STARTUP_GAIN * 0.99) as u64)
        );
    }
}
