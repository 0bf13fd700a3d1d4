//! HyStart++ (RFC 9406, 2023): leave slow start when the round trip time grows, before the
//! first loss. Slow start doubles the window each round trip until a loss; by then the
//! window is up to twice what the path holds, and the queue that loss came from has
//! overflowed by as much again. HyStart++ watches the smallest RTT of each round: when it
//! rises by more than a threshold over the last round's (the queue is building), the
//! sender enters Conservative Slow Start (CSS), which grows four times slower for at most
//! five rounds and then hands over to congestion avoidance; if the RTT falls back below the
//! level that triggered CSS, the exit was spurious and slow start resumes.
//!
//! The controllers (`AIMD` and CUBIC) hold a [`SlowStartExit`] and ask it on each ACK how
//! to grow ([`SlowStartGrowth`]). HyStart++ runs for the first slow start only (§4.3): after
//! a loss or a timeout the standard slow start applies. [`ClassicHyStart`] is the earlier
//! HyStart as Linux's CUBIC runs it, for the `linux` preset.
//!
//! RTT samples: the RFC counts one per ACK (§4.2, `rttSampleCount`), which needs the
//! timestamps option (RFC 7323), as Linux's HyStart does; without it the engine times one
//! segment per round trip (RFC 6298), a round never gathers N_RTT_SAMPLE samples, and the
//! delay check never runs: slow start ends at the first loss, as without HyStart++.

use crate::cc::AckEvent;
use crate::seq::SeqNum;
use ackclock_wire::Duration;

/// RFC 9406 §4.3: the lower bound of the RTT increase that ends slow start.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// §4.3: the upper bound of that increase.
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// §4.3: the increase is the last round's minimum RTT over this divisor, within the bounds.
const MIN_RTT_DIVISOR: u64 = 8;
/// §4.3: RTT samples a round needs before its minimum is compared.
const N_RTT_SAMPLE: u32 = 8;
/// §4.3: CSS grows the window this many times slower than slow start.
pub(crate) const CSS_GROWTH_DIVISOR: u32 = 4;
/// §4.3: CSS lasts at most this many rounds (the round it began in counts).
const CSS_ROUNDS: u32 = 5;

/// How a controller in slow start grows the window on this ACK (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlowStartGrowth {
    /// Standard slow start (RFC 5681, with the controller's own ABC limit).
    Standard,
    /// Conservative Slow Start: the standard increase divided by [`CSS_GROWTH_DIVISOR`].
    Conservative,
    /// CSS has run its rounds: set ssthresh to cwnd and enter congestion avoidance.
    EnterCongestionAvoidance,
}

/// Where HyStart++ is (RFC 9406 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Standard slow start, watching each round's minimum RTT.
    SlowStart,
    /// Conservative Slow Start since the delay increase, with the minimum RTT that
    /// triggered it (`cssBaselineMinRtt`) and the rounds begun in it.
    Css { baseline: Duration, rounds: u32 },
    /// Done: congestion avoidance was entered, or a loss or timeout ended the first slow
    /// start (§4.3: HyStart++ is for the initial slow start only).
    Off,
}

/// RFC 9406's state for one connection.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HyStartPlusPlus {
    phase: Phase,
    /// `windowEnd`: the round ends when SND.UNA reaches it (SND.NXT at the round's start);
    /// `None` before the first ACK.
    window_end: Option<SeqNum>,
    /// `lastRoundMinRTT` (`None`: infinity).
    last_round_min: Option<Duration>,
    /// `currentRoundMinRTT` (`None`: infinity).
    current_round_min: Option<Duration>,
    /// `rttSampleCount` in this round.
    samples: u32,
}

impl HyStartPlusPlus {
    /// The state at the start of a connection: slow start, no round yet.
    pub(crate) const fn new() -> Self {
        HyStartPlusPlus {
            phase: Phase::SlowStart,
            window_end: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
        }
    }

    /// True while HyStart++ still decides (the first slow start, not yet left).
    #[cfg(test)]
    pub(crate) fn active(&self) -> bool {
        self.phase != Phase::Off
    }

    /// True in Conservative Slow Start.
    pub(crate) fn in_css(&self) -> bool {
        matches!(self.phase, Phase::Css { .. })
    }

    /// A loss, an ECN reduction or a timeout: the first slow start is over (§4.2: congestion
    /// avoidance by the standard response), and HyStart++ with it (§4.3).
    pub(crate) fn on_congestion(&mut self) {
        self.phase = Phase::Off;
    }

    /// RFC 9406 §4.2 on an ACK that acknowledged new data while cwnd is below ssthresh;
    /// answers how the controller grows on it.
    pub(crate) fn on_ack(&mut self, ev: &AckEvent) -> SlowStartGrowth {
        if self.phase == Phase::Off {
            return SlowStartGrowth::Standard;
        }
        // A round ends when the data sent at its start is acknowledged; the next begins,
        // to end at what has been sent by now (SND.NXT; SND.MAX here, the same outside a
        // go-back-N resend, which ends HyStart++ anyway).
        if self.window_end.is_none_or(|w| ev.snd_una >= w) {
            self.window_end = Some(ev.snd_max);
            self.last_round_min = self.current_round_min;
            self.current_round_min = None;
            self.samples = 0;
            if let Phase::Css { baseline, rounds } = self.phase {
                if rounds + 1 > CSS_ROUNDS {
                    // §4.2: CSS_ROUNDS complete: congestion avoidance, ssthresh = cwnd.
                    self.phase = Phase::Off;
                    return SlowStartGrowth::EnterCongestionAvoidance;
                }
                self.phase = Phase::Css {
                    baseline,
                    rounds: rounds + 1,
                };
            }
        }
        if let Some(rtt) = ev.rtt {
            self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples = self.samples.saturating_add(1);
        }
        let round_min = match (self.samples >= N_RTT_SAMPLE, self.current_round_min) {
            (true, Some(m)) => m,
            _ => return self.growth(),
        };
        match self.phase {
            Phase::SlowStart => {
                if let Some(last) = self.last_round_min {
                    // §4.2: RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT /
                    // MIN_RTT_DIVISOR, MAX_RTT_THRESH)).
                    let eighth = Duration::from_nanos(last.as_nanos() / MIN_RTT_DIVISOR);
                    let thresh = eighth.clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if round_min >= last.saturating_add(thresh) {
                        // The queue is building: CSS, this partial round its first.
                        self.phase = Phase::Css {
                            baseline: round_min,
                            rounds: 1,
                        };
                    }
                }
            }
            Phase::Css { baseline, .. } => {
                if round_min < baseline {
                    // §4.2: the RTT fell back: the exit was spurious, slow start resumes.
                    self.phase = Phase::SlowStart;
                }
            }
            Phase::Off => {}
        }
        self.growth()
    }

    fn growth(&self) -> SlowStartGrowth {
        if self.in_css() {
            SlowStartGrowth::Conservative
        } else {
            SlowStartGrowth::Standard
        }
    }
}

/// How a controller's slow start ends, as configured ([`crate::config::HyStart`]): what the
/// AIMD and CUBIC controllers hold and ask on each ACK.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SlowStartExit {
    /// At the first loss (RFC 5681).
    Standard,
    /// RFC 9406 HyStart++.
    PlusPlus(HyStartPlusPlus),
    /// Linux CUBIC's HyStart.
    Classic(ClassicHyStart),
}

impl SlowStartExit {
    /// The rule `mode` names, at the start of a connection.
    pub(crate) fn new(mode: crate::config::HyStart) -> Self {
        match mode {
            crate::config::HyStart::Off => SlowStartExit::Standard,
            crate::config::HyStart::PlusPlus => SlowStartExit::PlusPlus(HyStartPlusPlus::new()),
            crate::config::HyStart::Classic => SlowStartExit::Classic(ClassicHyStart::new()),
        }
    }

    /// On each ACK of new data in slow start, outside a recovery: how slow start grows on
    /// it, at `cwnd_segments`.
    #[inline]
    pub(crate) fn on_slow_start_ack(
        &mut self,
        ev: &AckEvent,
        cwnd_segments: f64,
    ) -> SlowStartGrowth {
        match self {
            SlowStartExit::Standard => SlowStartGrowth::Standard,
            SlowStartExit::PlusPlus(h) => h.on_ack(ev),
            SlowStartExit::Classic(h) => {
                if h.on_ack(ev, cwnd_segments, true) {
                    SlowStartGrowth::EnterCongestionAvoidance
                } else {
                    SlowStartGrowth::Standard
                }
            }
        }
    }

    /// On each ACK of new data in congestion avoidance: only the classic rule listens, to
    /// keep its minimum RTT (Linux's takes it from every ACK) for a later slow start.
    #[inline]
    pub(crate) fn on_avoidance_ack(&mut self, ev: &AckEvent) {
        if let SlowStartExit::Classic(h) = self {
            h.on_ack(ev, 0.0, false);
        }
    }

    /// A loss or an ECN reduction: HyStart++ is over for the connection (RFC 9406 §4.3);
    /// classic HyStart stays as it is (Linux's resets it on a timeout only).
    pub(crate) fn on_congestion(&mut self) {
        if let SlowStartExit::PlusPlus(h) = self {
            h.on_congestion();
        }
    }

    /// A timeout: HyStart++ is over; classic HyStart starts over for the next slow start.
    pub(crate) fn on_rto(&mut self) {
        match self {
            SlowStartExit::PlusPlus(h) => h.on_congestion(),
            SlowStartExit::Classic(h) => h.on_rto(),
            SlowStartExit::Standard => {}
        }
    }
}

/// Classic HyStart (Ha and Rhee, "Taming the elephants: New TCP slow start", Computer
/// Networks 2011), with the rules and constants of Linux's CUBIC (`hystart = 1`,
/// `hystart_detect = 3`), for the `linux` preset. Two signals end slow start at once with
/// ssthresh = cwnd, once cwnd is at least 16 segments:
/// - the ACK train: ACKs of one round arriving within 2 ms of each other for longer than
///   half of (the minimum RTT + 1 ms): the round's data has spread over about the path's
///   one-way delay, the pipe is full;
/// - the delay: the minimum of the round's first 8 RTT samples above the connection's
///   minimum RTT by more than clamp(minimum RTT / 8, 4 ms, 16 ms).
///
/// A timeout starts it over (Linux resets it on entering the loss state); a fast recovery
/// does not (after one, cwnd is at ssthresh: no slow start).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClassicHyStart {
    /// Slow start was left (Linux's `found`).
    found: bool,
    /// When this round began, and when the last ACK of its train came.
    round_start: Option<ackclock_wire::Instant>,
    last_ack: Option<ackclock_wire::Instant>,
    /// The round ends when SND.UNA passes this (SND.NXT at its start).
    end_seq: Option<SeqNum>,
    /// The smallest of this round's first samples (`None`: none yet).
    round_min: Option<Duration>,
    /// Samples taken this round, up to [`CLASSIC_MIN_SAMPLES`].
    samples: u32,
    /// The smallest RTT seen on the connection.
    delay_min: Option<Duration>,
}

/// Linux's `hystart_low_window`: no HyStart below this many segments of cwnd.
const CLASSIC_LOW_WINDOW: f64 = 16.0;
/// Linux's `hystart_ack_delta_us`: ACKs closer than this form a train.
const CLASSIC_ACK_DELTA: Duration = Duration::from_millis(2);
/// Linux's `HYSTART_MIN_SAMPLES`: the delay rule compares the minimum of this many.
const CLASSIC_MIN_SAMPLES: u32 = 8;
/// Linux's allowance for the pacing of the ACK train's data (`hystart_ack_delay`): the
/// time 4 maximal GSO super-segments take at the pacing rate, at most 1 ms; at the rates
/// this engine is run at that is 1 ms.
const CLASSIC_ACK_DELAY: Duration = Duration::from_millis(1);

impl ClassicHyStart {
    /// The state of a new connection.
    pub(crate) const fn new() -> Self {
        ClassicHyStart {
            found: false,
            round_start: None,
            last_ack: None,
            end_seq: None,
            round_min: None,
            samples: 0,
            delay_min: None,
        }
    }

    /// A timeout: the next slow start runs HyStart again (its minimum RTT is kept).
    pub(crate) fn on_rto(&mut self) {
        *self = ClassicHyStart {
            delay_min: self.delay_min,
            ..Self::new()
        };
    }

    /// On each ACK of new data: `cwnd_segments` and whether the controller is in slow
    /// start. True when slow start should end here (the controller sets ssthresh = cwnd).
    pub(crate) fn on_ack(&mut self, ev: &AckEvent, cwnd_segments: f64, slow_start: bool) -> bool {
        let Some(rtt) = ev.rtt else {
            return false;
        };
        let rtt = rtt.max(Duration::from_micros(1));
        let min = self.delay_min.map_or(rtt, |m| m.min(rtt));
        self.delay_min = Some(min);
        if self.found || !slow_start || cwnd_segments < CLASSIC_LOW_WINDOW {
            return false;
        }
        let now = ev.now;
        if self.end_seq.is_none_or(|e| ev.snd_una > e) {
            // A new round: it ends when SND.UNA passes what has been sent by now.
            self.round_start = Some(now);
            self.last_ack = Some(now);
            self.end_seq = Some(ev.snd_max);
            self.round_min = None;
            self.samples = 0;
        }
        // The ACK train.
        if let (Some(start), Some(last)) = (self.round_start, self.last_ack) {
            if now.saturating_since(last) <= CLASSIC_ACK_DELTA {
                self.last_ack = Some(now);
                let threshold = Duration::from_nanos((min + CLASSIC_ACK_DELAY).as_nanos() / 2);
                if now.saturating_since(start) > threshold {
                    self.found = true;
                }
            }
        }
        // The delay increase.
        self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
        if self.samples < CLASSIC_MIN_SAMPLES {
            self.samples += 1;
        } else if let Some(round_min) = self.round_min {
            let eighth = Duration::from_nanos(min.as_nanos() / MIN_RTT_DIVISOR);
            if round_min > min + eighth.clamp(MIN_RTT_THRESH, MAX_RTT_THRESH) {
                self.found = true;
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::Instant;

    fn ev(una: u32, max: u32, rtt_ms: Option<u64>) -> AckEvent {
        AckEvent {
            now: Instant::ZERO,
            bytes_acked: 1000,
            mss: 1000,
            flight_bytes: 10_000,
            rtt: rtt_ms.map(Duration::from_millis),
            srtt: Duration::from_millis(100),
            min_rtt: Some(Duration::from_millis(100)),
            in_recovery: false,
            ece: false,
            snd_una: SeqNum::new(una),
            snd_max: SeqNum::new(max),
            delivery: None,
        }
    }

    /// Runs one round of `acks` ACKs from SND.UNA = `start` (the last round's end), each
    /// acknowledging 1000 bytes less half a segment's worth of rounding (so that the round's
    /// last ACK stays below its end, and the next round's first ACK passes it), with an RTT
    /// sample of `rtt_ms`; SND.MAX at the round's first ACK is the round's end. Returns the
    /// last answer.
    fn round(h: &mut HyStartPlusPlus, start: u32, acks: u32, rtt_ms: u64) -> SlowStartGrowth {
        let end = start + acks * 1000;
        let mut g = SlowStartGrowth::Standard;
        for k in 1..=acks {
            g = h.on_ack(&ev(start + k * 1000 - 500, end, Some(rtt_ms)));
        }
        g
    }

    /// RFC 9406 §4.2: a round whose minimum RTT (after N_RTT_SAMPLE samples) is at least
    /// the last round's plus RttThresh (here 100/8 = 12.5 ms) ends slow start: CSS.
    #[test]
    fn rfc9406_4_2_a_delay_increase_past_rtt_thresh_enters_css() {
        let mut h = HyStartPlusPlus::new();
        assert_eq!(round(&mut h, 0, 8, 100), SlowStartGrowth::Standard);
        // 112 ms is below 100 + 12.5.
        assert_eq!(round(&mut h, 8000, 8, 112), SlowStartGrowth::Standard);
        // Round 3: 127 ms >= 112 + 14 (112/8), but only once N_RTT_SAMPLE samples are in.
        for k in 1..=7 {
            assert_eq!(
                h.on_ack(&ev(16_000 + k * 1000 - 500, 24_000, Some(127))),
                SlowStartGrowth::Standard,
                "{k} samples"
            );
        }
        assert_eq!(
            h.on_ack(&ev(23_500, 24_000, Some(127))),
            SlowStartGrowth::Conservative
        );
        assert!(h.in_css());
    }

    /// §4.3: RttThresh is bounded: 4 ms on a short path (1 ms / 8 would be 0.125 ms), 16 ms
    /// on a long one (800 ms / 8 would be 100 ms).
    #[test]
    fn rfc9406_4_3_rtt_thresh_is_between_4_and_16_ms() {
        for (base, below, at) in [(1, 4, 5), (800, 815, 816)] {
            let mut h = HyStartPlusPlus::new();
            round(&mut h, 0, 8, base);
            assert_eq!(round(&mut h, 8000, 8, below), SlowStartGrowth::Standard);
            let mut h = HyStartPlusPlus::new();
            round(&mut h, 0, 8, base);
            assert_eq!(
                round(&mut h, 8000, 8, at),
                SlowStartGrowth::Conservative,
                "base {base} ms"
            );
        }
    }

    /// §4.2: in CSS, a round whose minimum RTT falls below cssBaselineMinRtt shows the exit
    /// was spurious: standard slow start again (HyStart++ still watching).
    #[test]
    fn rfc9406_4_2_an_rtt_below_the_css_baseline_resumes_slow_start() {
        let mut h = HyStartPlusPlus::new();
        round(&mut h, 0, 8, 100);
        assert_eq!(round(&mut h, 8000, 8, 120), SlowStartGrowth::Conservative);
        // The next round's minimum is back at 110 ms, below the 120 ms baseline.
        assert_eq!(round(&mut h, 16_000, 8, 110), SlowStartGrowth::Standard);
        assert!(h.active() && !h.in_css());
    }

    /// §4.2: CSS lasts CSS_ROUNDS rounds, the one it began in counting; then congestion
    /// avoidance (the controller sets ssthresh = cwnd), and HyStart++ is done.
    #[test]
    fn rfc9406_4_2_css_ends_in_congestion_avoidance_after_css_rounds() {
        let mut h = HyStartPlusPlus::new();
        round(&mut h, 0, 8, 100);
        assert_eq!(round(&mut h, 8000, 8, 120), SlowStartGrowth::Conservative);
        let mut start = 16_000;
        // Rounds 2 to 5 of CSS (the RTT stays up).
        for r in 2..=CSS_ROUNDS {
            assert_eq!(
                round(&mut h, start, 8, 125),
                SlowStartGrowth::Conservative,
                "CSS round {r}"
            );
            start += 8000;
        }
        // The ACK that opens a sixth round ends CSS.
        assert_eq!(
            h.on_ack(&ev(start + 500, start + 8000, Some(125))),
            SlowStartGrowth::EnterCongestionAvoidance
        );
        assert!(!h.active());
        assert_eq!(
            h.on_ack(&ev(start + 1500, start + 8000, Some(125))),
            SlowStartGrowth::Standard
        );
    }

    /// §4.2 and §4.3: a loss (or ECN reduction, or timeout) ends the first slow start, and
    /// HyStart++ with it: later slow starts are standard whatever the RTT does.
    #[test]
    fn rfc9406_4_3_a_loss_ends_hystart_for_the_connection() {
        let mut h = HyStartPlusPlus::new();
        round(&mut h, 0, 8, 100);
        h.on_congestion();
        assert!(!h.active());
        assert_eq!(round(&mut h, 8000, 8, 200), SlowStartGrowth::Standard);
    }

    /// §4.2: a round needs N_RTT_SAMPLE samples: ACKs without an RTT sample (no timestamps:
    /// one timed segment per round trip) never let the check run.
    #[test]
    fn rfc9406_4_2_without_n_rtt_sample_samples_the_check_does_not_run() {
        let mut h = HyStartPlusPlus::new();
        let mut start = 0;
        for rtt in [100, 200, 400] {
            let end = start + 8000;
            for k in 1..=8u32 {
                let sample = (k == 1).then_some(rtt);
                let g = h.on_ack(&ev(start + k * 1000 - 500, end, sample));
                assert_eq!(g, SlowStartGrowth::Standard);
            }
            start = end;
        }
        assert!(h.active() && !h.in_css());
    }

    fn ev_at(ms_: u64, una: u32, max: u32, rtt_us: u64) -> AckEvent {
        AckEvent {
            now: Instant::ZERO + Duration::from_micros(ms_),
            rtt: Some(Duration::from_micros(rtt_us)),
            ..ev(una, max, None)
        }
    }

    /// Linux's ACK-train rule: ACKs of a round closer than 2 ms to each other, spanning more
    /// than (min RTT + 1 ms) / 2, end slow start; a gap over 2 ms breaks the train.
    #[test]
    fn classic_hystart_an_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
        // Min RTT 40 ms: the train must span more than 20.5 ms.
        let mut h = ClassicHyStart::new();
        let mut found_at = None;
        for k in 0..30u64 {
            // One ACK a millisecond.
            let una = (k as u32 + 1) * 1000;
            if h.on_ack(&ev_at(k * 1000, una, 1_000_000, 40_000), 20.0, true) && found_at.is_none()
            {
                found_at = Some(k);
            }
        }
        assert_eq!(found_at, Some(21), "the first ACK past 20.5 ms of train");
        // A train broken by a 3 ms gap every 10 ms never gets there.
        let mut h = ClassicHyStart::new();
        for k in 0..30u64 {
            let t = k * 1000 + (k / 10) * 3000;
            // (After a gap the train stops growing; it restarts only with a new round.)
            assert!(!h.on_ack(
                &ev_at(t, (k as u32 + 1) * 1000, 1_000_000, 40_000),
                20.0,
                true
            ));
        }
    }

    /// Linux's delay rule: after 8 samples, a round minimum above the connection's minimum
    /// by more than clamp(min/8, 4 ms, 16 ms) ends slow start; not below 16 segments of cwnd,
    /// and not outside slow start.
    #[test]
    fn classic_hystart_a_delay_rise_ends_slow_start_from_16_segments() {
        // ACKs 5 ms apart (no train). Round 1 at 40 ms, round 2 at 46 ms (> 40 + 5).
        let run = |cwnd: f64, slow_start: bool| {
            let mut h = ClassicHyStart::new();
            let mut found = false;
            for k in 0..20u64 {
                let rtt = if k < 10 { 40_000 } else { 46_000 };
                // Round 1 ends at 10,000: ACK 10 opens round 2.
                let max = if k < 10 { 10_000 } else { 1_000_000 };
                found |= h.on_ack(
                    &ev_at(k * 5000, (k as u32 + 1) * 1000, max, rtt),
                    cwnd,
                    slow_start,
                );
            }
            found
        };
        assert!(run(20.0, true));
        assert!(!run(15.0, true), "below hystart_low_window");
        assert!(!run(20.0, false), "not in slow start");
    }
}
