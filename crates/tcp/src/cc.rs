//! Congestion control: how big the window is. What to retransmit and when is `Recovery`'s
//! business (docs/ARCHITECTURE.md keeps the two apart); the connection tells the controller about
//! ACKs, congestion signals and timeouts, and asks it for `cwnd`.
//!
//! - [`Aimd`]: slow start and congestion avoidance as in the seed of 16 Nov 1987 ("if
//!   (cwnd < ssthresh) cwnd += 1 packet else cwnd += 1/cwnd"), with the decrease factor d
//!   and increase u of the 11 Feb 1988 message as parameters, RFC 3465 byte counting
//!   (ABC) as an option, and as another the second-order loop of the 16 Nov 1987 message
//!   that adapts u toward a target loss rate ([`AdaptiveIncrease`]). What that loop shows
//!   (`crates/sim/tests/adaptive_increase.rs`): on a path whose pipe holds a few packets,
//!   halving u halves the congestion signals while goodput and the mean round trip stay
//!   within 1% and 5%, as the message says ("changing the increment affects the frequency
//!   of oscillation but not the mean window size"), and where u = 1 gives 0.9% the loop,
//!   asked for 0.3% or 0.15% congestion signals per segment, delivers 0.31% and 0.153%
//!   through a drop-tail gateway and 0.29% and 0.17% through a RED gateway's random drops.
//! - [`NoCongestionControl`]: the pre-1988 TCP: the window is the receiver's.

use crate::hystart::{SlowStartExit, SlowStartGrowth, CSS_GROWTH_DIVISOR};
use ackclock_wire::{Duration, Instant};
use core::fmt;

/// What the connection knows when new data is acknowledged.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// When the ACK arrived.
    pub now: Instant,
    /// Bytes newly acknowledged by this ACK.
    pub bytes_acked: u32,
    /// The sender's maximum segment size (SMSS).
    pub mss: u32,
    /// Bytes in flight before this ACK.
    pub flight_bytes: u32,
    /// RTT measured by this ACK, if any.
    pub rtt: Option<Duration>,
    /// The smoothed RTT after this ACK's sample (zero before the first sample).
    pub srtt: Duration,
    /// The smallest RTT sample so far, if any.
    pub min_rtt: Option<Duration>,
    /// True while a loss recovery episode is in progress (most controllers hold still).
    pub in_recovery: bool,
    /// The ACK carried ECE (ECN in use): the receiver echoes a CE mark (RFC 3168; with the
    /// per-packet echo of RFC 8257 §3.2, a mark on the data this ACK acknowledges).
    pub ece: bool,
    /// SND.UNA after this ACK.
    pub snd_una: crate::seq::SeqNum,
    /// SND.MAX: one past the highest sequence number sent (where a window that starts now
    /// ends, for controllers that count per window).
    pub snd_max: crate::seq::SeqNum,
    /// What the transmit log knows of this ACK's deliveries and of the connection's losses,
    /// for a controller that asks for it ([`CongestionControl::wants_delivery`]); `None`
    /// for the others.
    pub delivery: Option<Delivery>,
}

pub use crate::rate::RateSample;

/// Where the connection's loss recovery stands after an ACK (Linux's `ca_state`, as far as
/// a model-based controller needs it: BBR saves its window on entering a recovery, holds
/// the flight during the first round of a fast recovery, and restores the window on
/// leaving it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RecoveryPhase {
    /// No recovery in progress.
    #[default]
    Open,
    /// A fast recovery (RFC 6675, RACK, NewReno) is repairing losses.
    Fast,
    /// The retransmission timer expired and the flight it took for lost is being resent.
    Timeout,
}

/// An ACK's deliveries as the connection's transmit log sees them (draft-cheng-iccrg-
/// delivery-rate-estimation; Linux's `struct rate_sample` and the counters BBR reads from
/// `tcp_sock`). Amounts are bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// `C.delivered` after this ACK: bytes delivered over the connection, cumulatively
    /// acknowledged or SACKed, retransmissions included (draft §3.1.1). A controller counts
    /// its round trips with it.
    pub delivered: u64,
    /// Bytes this ACK newly delivered, cumulatively or by SACK (Linux's `acked_sacked`).
    pub newly_delivered: u32,
    /// `C.lost`: bytes taken for lost over the connection. A segment counts when it is
    /// resent to repair a loss (fast retransmit, recovery, RACK's marks, the resend after a
    /// timeout); a tail loss probe does not.
    pub lost: u64,
    /// Bytes taken for lost since the previous ACK's event (Linux's `rs->losses`, in
    /// bytes).
    pub newly_lost: u32,
    /// The pipe before this ACK (RFC 6675's, or RACK's with its marks): what was in flight
    /// and not known delivered or lost.
    pub prior_in_flight: u32,
    /// The pipe after this ACK.
    pub in_flight: u32,
    /// The connection is in an application-limited phase (draft §3.4): it has less than a
    /// segment to send while the window is open.
    pub app_limited: bool,
    /// The loss recovery in progress after this ACK.
    pub recovery: RecoveryPhase,
    /// This ACK's delivery-rate sample (draft §3.3), if it gave one.
    pub sample: Option<RateSample>,
}

/// A congestion signal: loss detected by duplicate ACKs, or a timeout.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    /// When the loss was detected.
    pub now: Instant,
    /// The sender's maximum segment size (SMSS) in bytes.
    pub mss: u32,
    /// Bytes outstanding when the loss was detected, SND.MAX - SND.UNA (RFC 5681's
    /// FlightSize).
    pub flight_bytes: u32,
    /// The peer's advertised window (the 1990 diff halves min(snd_wnd, cwnd)).
    pub snd_wnd: u32,
}

/// The congestion-control policy of one connection.
///
/// The connection owns one controller, made from
/// [`TcpConfig::congestion`](crate::TcpConfig::congestion). It calls `on_ack` for every ACK of new data,
/// `on_congestion` when recovery detects a loss, `on_rto` on a retransmission timeout, and
/// reads `cwnd` before sending. All windows are in bytes.
pub trait CongestionControl: fmt::Debug + Send {
    /// A short name for logs ("aimd", "cubic", "fixed", "none").
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u32;
    /// Slow-start threshold in bytes.
    fn ssthresh(&self) -> u32;
    /// Whether the window grows by slow start now (by default, cwnd < ssthresh).
    fn in_slow_start(&self) -> bool {
        self.cwnd() < self.ssthresh()
    }
    /// New data was acknowledged.
    fn on_ack(&mut self, ev: &AckEvent);
    /// Loss detected by the duplicate-ACK threshold: a fast retransmit is starting. Sets
    /// ssthresh (multiplicative decrease) and cwnd to it; Reno-style window inflation during
    /// the recovery is `Recovery`'s, on top of this cwnd.
    fn on_congestion(&mut self, ev: &CongestionEvent);
    /// The retransmission timer expired: ssthresh from the flight, cwnd to the loss window.
    /// `first` is false when the segment had already been retransmitted by a timeout, in
    /// which case RFC 5681 §3.1 keeps ssthresh.
    fn on_rto(&mut self, ev: &CongestionEvent, first: bool);
    /// A recovery episode ended (the recovery point was acknowledged).
    fn on_recovery_exit(&mut self, _now: Instant) {}
    /// Replaces cwnd, e.g. RFC 5681 §4.1's restart window after an idle period.
    fn set_cwnd(&mut self, cwnd: u32);
    /// A reduction turned out needless (a spurious retransmission: D-SACK, RFC 3708;
    /// timestamps, RFC 3522; F-RTO, RFC 5682): cwnd and ssthresh go back up to at least
    /// `cwnd` and `ssthresh` (the values before it, or RFC 4015's response). By default only
    /// cwnd is restored; a controller with a threshold of its own restores that too.
    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        let _ = ssthresh;
        if cwnd > self.cwnd() {
            self.set_cwnd(cwnd);
        }
    }
    /// An ACK echoed a CE mark (ECE), at most once per window of data and not during a loss
    /// recovery (the connection keeps RFC 3168 §6.1.2's rule). Returns whether the window
    /// was reduced (the connection then sends CWR). By default a mark is answered as a loss
    /// is (RFC 3168 §6.1.2): `on_congestion`.
    fn on_ece(&mut self, ev: &CongestionEvent) -> bool {
        self.on_congestion(ev);
        true
    }
    /// Whether the controller models the path from delivery-rate samples (BBR). The
    /// connection then keeps a stamp with every segment in flight, fills
    /// [`AckEvent::delivery`], and calls `on_ack` once for every acceptable ACK, after its
    /// loss detection, whether or not the ACK acknowledged new data (an ACK that only SACKs
    /// delivers too): Linux's `cong_control` hook. Asked once, when the controller is
    /// built.
    fn wants_delivery(&self) -> bool {
        false
    }
    /// The rate to pace data at, in bytes per second, or `None` for none of the
    /// controller's own (the connection may still pace by
    /// [`TcpConfig::pacing`](crate::TcpConfig::pacing)). Read when the handshake completes,
    /// then after every ACK for a controller that [`wants_delivery`], or with
    /// `TcpConfig::pacing` on.
    ///
    /// [`wants_delivery`]: CongestionControl::wants_delivery
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Whether the controller sets the window during a recovery itself, as Linux's BBR
    /// does through `cong_control`: the connection then runs no PRR and no retraction at
    /// the end of an episode, and a SACK recovery sends while the pipe is below `cwnd`.
    fn owns_recovery_window(&self) -> bool {
        false
    }
    /// Data is about to be sent with nothing in flight (Linux's `CA_EVENT_TX_START`);
    /// `app_limited`: the connection was application-limited, so the idle time was the
    /// application's.
    fn on_send_from_idle(&mut self, now: Instant, app_limited: bool) {
        let _ = (now, app_limited);
    }
}

/// What a controller is built from when a connection is created (and again when the
/// handshake fixes the MSS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcInit {
    /// The sender's maximum segment size (SMSS) in bytes.
    pub mss: u32,
    /// The first congestion window in bytes ([`TcpConfig::initial_window`] at `mss`).
    ///
    /// [`TcpConfig::initial_window`]: crate::TcpConfig::initial_window
    pub initial_window: u32,
    /// The first slow-start threshold in bytes ([`TcpConfig::initial_ssthresh`]).
    ///
    /// [`TcpConfig::initial_ssthresh`]: crate::TcpConfig::initial_ssthresh
    pub initial_ssthresh: u32,
}

/// Makes the congestion controller of each connection: a controller written outside this
/// crate plugs in through [`CongestionAlgorithm::Custom`], as quinn-proto's
/// `ControllerFactory` does. The factory is shared by every connection of a configuration
/// (hence `Sync`); each connection owns the controller it builds.
///
/// [`CongestionAlgorithm::Custom`]: crate::CongestionAlgorithm::Custom
pub trait CongestionControlFactory: fmt::Debug + Send + Sync {
    /// A new controller for one connection.
    fn build(&self, init: CcInit) -> Box<dyn CongestionControl>;
}

/// How the AIMD controller computes ssthresh on a congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SsthreshBase {
    /// The 1990 diff: `min(snd_wnd, cwnd) / 2`, rounded down to whole segments, at least 2.
    Window,
    /// RFC 5681 eq. 4: `max(FlightSize / 2, 2 * SMSS)`.
    #[cfg_attr(feature = "serde", serde(rename = "flight"))]
    FlightSize,
}

/// Parameters of [`Aimd`].
#[derive(Clone, Copy, Debug, PartialEq)]
// `repr(C)`, what every ACK reads first: with the controller's per-ACK state before it, the
// controller's first cache line (see `Aimd`).
#[repr(C)]
pub struct AimdConfig {
    /// RFC 3465 byte counting with limit L in segments (1 or 2); None counts ACKs.
    pub abc_limit_segments: Option<u32>,
    /// Replace additive increase by multiplicative increase: each round trip without loss
    /// multiplies the window by this factor b (1 < b <= 1/d). Seed 000 (11 Feb 1988): "The
    /// first thought is to use a symmetric, multiplicative increase ... This is a mistake.
    /// The result will oscillate wildly". Here for the experiment that shows it.
    pub multiplicative_increase: Option<f64>,
    /// Multiplicative decrease factor d: the window after a loss is d times the window
    /// before (0.5 in 4BSD; Jain's DEC-bit scheme used 7/8).
    pub decrease: f64,
    /// Additive increase u, in segments per RTT (1 in 4BSD).
    pub increase_segments: f64,
    /// How ssthresh is computed on a congestion signal.
    pub ssthresh_base: SsthreshBase,
    /// A second-order loop that adapts the additive increase between
    /// [`AdaptiveIncrease::MIN_INCREASE`] and `increase_segments` (seed 000, 16 Nov 1987);
    /// None keeps `increase_segments` fixed.
    pub adaptive_increase: Option<AdaptiveIncrease>,
}

/// The "second order control loop to adaptively determine the appropriate increment to
/// use for a path" of seed 000 (16 Nov 1987), which Jacobson and Karels left for later.
///
/// The message's reasoning sets the loop: the window converges to w either way, and
/// "changing the increment affects the frequency of oscillation but not the mean window
/// size"; with additive increase u a sawtooth from d w to w lasts (1 - d) w / u round trips
/// and delivers (1 - d^2) w^2 / (2 u) segments, so the segments N between two congestion
/// signals times the increment in force, K = N u, is a property of the path, not of u. The
/// loop keeps a moving average of K over signals (gain 1/4: a few signals of memory) and
/// sets u = K / N*, where N* = 1 / `target_loss`. The average is of K itself, not of its
/// logarithm or of a ratio: a random-drop gateway spaces signals irregularly, sometimes two
/// in a row, and only the arithmetic mean of the intervals is the loss rate. The interval
/// that ends the first signal (slow start's) is not used. u stays between `MIN_INCREASE`
/// and the configured increase, so the loop can only make 4BSD's controller gentler.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveIncrease {
    /// The loss rate aimed at, in congestion signals per segment delivered (the message's
    /// "average drop rate of <1%" is 0.01), in (0, 0.5].
    pub target_loss: f64,
}

impl AdaptiveIncrease {
    /// The smallest increase the loop sets, in segments per round trip (a 64th: a window of
    /// 64 segments then takes 32 x 64 round trips to regrow after a halving).
    pub const MIN_INCREASE: f64 = 1.0 / 64.0;
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            decrease: 0.5,
            increase_segments: 1.0,
            multiplicative_increase: None,
            ssthresh_base: SsthreshBase::FlightSize,
            abc_limit_segments: None,
            adaptive_increase: None,
        }
    }
}

/// Additive-increase/multiplicative-decrease with slow start: the Tahoe/Reno controller.
#[derive(Clone, Debug)]
// `repr(C, align(64))`: what an ACK reads and writes (the windows, the counts, the increase,
// then the configuration's ABC limit and multiplicative increase) lies in the first 56
// bytes, so in one cache line of the controller's allocation; the adaptive loop's averages
// and the rest of the configuration follow. With a million connections each line an ACK
// touches is a cache miss (BENCHMARKS.md, "Many connections"); a test keeps it so.
#[repr(C, align(64))]
pub struct Aimd {
    cwnd: u32,
    ssthresh: u32,
    /// RFC 3465 §2.1: bytes acknowledged during congestion avoidance not yet turned into
    /// window; also the fractional part of the per-ACK increase without ABC.
    bytes_acked: u64,
    /// The additive increase in use, segments per round trip: `cfg.increase_segments`, or
    /// what the adaptive loop set.
    increase: f64,
    /// Bytes acknowledged since the last congestion signal (the adaptive loop's N).
    acked_since_signal: u64,
    cfg: AimdConfig,
    /// The adaptive loop's moving average of K = N u (see [`AdaptiveIncrease`]); None
    /// before its first sample.
    k_avg: Option<f64>,
    /// Whether a congestion signal has been seen (the first interval is not used).
    signalled: bool,
    /// How slow start ends ([`TcpConfig::hystart`](crate::TcpConfig::hystart)).
    exit: SlowStartExit,
}

impl Aimd {
    /// A controller with cwnd = `initial_window_bytes` (at least 1) and ssthresh =
    /// `initial_ssthresh`, both in bytes.
    pub fn new(cfg: AimdConfig, initial_window_bytes: u32, initial_ssthresh: u32) -> Self {
        Aimd {
            cfg,
            cwnd: initial_window_bytes.max(1),
            ssthresh: initial_ssthresh,
            bytes_acked: 0,
            increase: cfg.increase_segments,
            acked_since_signal: 0,
            signalled: false,
            k_avg: None,
            exit: SlowStartExit::Standard,
        }
    }

    /// The same controller with its slow start ended by `mode`
    /// ([`TcpConfig::hystart`](crate::TcpConfig::hystart)).
    pub fn with_hystart(mut self, mode: crate::config::HyStart) -> Self {
        self.exit = SlowStartExit::new(mode);
        self
    }

    /// The additive increase in use, in segments per round trip (see [`AdaptiveIncrease`]).
    pub fn increase(&self) -> f64 {
        self.increase
    }

    /// The adaptive loop's step at a congestion signal (see [`AdaptiveIncrease`]).
    fn adapt_increase(&mut self, mss: u32) {
        let Some(a) = self.cfg.adaptive_increase else {
            return;
        };
        if self.signalled {
            let k = self.acked_since_signal as f64 / f64::from(mss.max(1)) * self.increase;
            let avg = match self.k_avg {
                Some(avg) => avg + (k - avg) / 4.0,
                None => k,
            };
            self.k_avg = Some(avg);
            let max = self.cfg.increase_segments;
            let min = AdaptiveIncrease::MIN_INCREASE.min(max);
            self.increase = (avg * a.target_loss).clamp(min, max);
        }
        self.signalled = true;
        self.acked_since_signal = 0;
    }

    fn decreased(&self, ev: &CongestionEvent) -> u32 {
        let mss = ev.mss.max(1);
        let base = match self.cfg.ssthresh_base {
            SsthreshBase::Window => ev.snd_wnd.min(self.cwnd),
            SsthreshBase::FlightSize => ev.flight_bytes,
        };
        let w = (f64::from(base) * self.cfg.decrease) as u32;
        match self.cfg.ssthresh_base {
            // `win = min(snd_wnd, cwnd) / maxseg / 2; if (win < 2) win = 2;` (d = 0.5).
            SsthreshBase::Window => (w / mss).max(2) * mss,
            SsthreshBase::FlightSize => w.max(2 * mss),
        }
    }
}

impl CongestionControl for Aimd {
    fn name(&self) -> &'static str {
        "aimd"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        self.acked_since_signal += u64::from(ev.bytes_acked);
        if ev.in_recovery || ev.bytes_acked == 0 {
            return;
        }
        let mss = ev.mss.max(1);
        if self.cwnd < self.ssthresh {
            let segments = f64::from(self.cwnd) / f64::from(mss);
            let growth = self.exit.on_slow_start_ack(ev, segments);
            if growth == SlowStartGrowth::EnterCongestionAvoidance {
                // HyStart: ssthresh = cwnd, congestion avoidance from here (RFC 9406 §4.2).
                self.ssthresh = self.cwnd;
                return;
            }
            // Slow start: one segment per ACK (seed 16 Nov 1987), or with ABC the bytes
            // acknowledged, at most L segments (RFC 3465 §2.2).
            let incr = match self.cfg.abc_limit_segments {
                Some(l) => ev.bytes_acked.min(l.max(1) * mss),
                None => mss,
            };
            let incr = if growth == SlowStartGrowth::Conservative {
                incr / CSS_GROWTH_DIVISOR
            } else {
                incr
            };
            self.cwnd = self.cwnd.saturating_add(incr);
            return;
        }
        self.exit.on_avoidance_ack(ev);
        if let Some(b) = self.cfg.multiplicative_increase {
            // W <- b W per round trip: (b - 1) bytes of window per byte acknowledged.
            self.bytes_acked += ((b - 1.0).max(0.0) * f64::from(ev.bytes_acked)) as u64;
            let incr = self.bytes_acked.min(u64::from(u32::MAX));
            self.bytes_acked -= incr;
            self.cwnd = self.cwnd.saturating_add(incr as u32);
            return;
        }
        let u = self.increase;
        match self.cfg.abc_limit_segments {
            Some(_) => {
                // RFC 3465 §2.1: when the bytes acknowledged reach cwnd, grow by u*SMSS.
                self.bytes_acked += u64::from(ev.bytes_acked);
                if self.bytes_acked >= u64::from(self.cwnd) {
                    self.bytes_acked -= u64::from(self.cwnd);
                    self.cwnd = self.cwnd.saturating_add((u * f64::from(mss)) as u32);
                }
            }
            None => {
                // "cwnd += 1/cwnd" in packets, i.e. u*SMSS*SMSS/cwnd bytes per ACK (RFC 5681
                // eq. 3). The remainder is carried to the next ACK, so the growth per window
                // is exact even where the per-ACK share is below one byte (RFC 5681 §3.1's
                // "round up to 1 byte" addresses the same truncation).
                let cwnd = u64::from(self.cwnd.max(1));
                self.bytes_acked += (u * f64::from(mss) * f64::from(mss)) as u64;
                let incr = self.bytes_acked / cwnd;
                self.bytes_acked -= incr * cwnd;
                self.cwnd = self.cwnd.saturating_add(incr.min(u64::from(mss)) as u32);
            }
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.ssthresh = self.decreased(ev);
        self.cwnd = self.ssthresh;
        self.bytes_acked = 0;
        self.adapt_increase(ev.mss);
        self.exit.on_congestion();
    }

    fn on_rto(&mut self, ev: &CongestionEvent, first: bool) {
        self.exit.on_rto();
        if first {
            self.ssthresh = self.decreased(ev);
            self.adapt_increase(ev.mss);
        }
        // RFC 5681 §3.1: the loss window is one segment.
        self.cwnd = ev.mss.max(1);
        self.bytes_acked = 0;
    }

    fn set_cwnd(&mut self, cwnd: u32) {
        self.cwnd = cwnd.max(1);
    }

    fn undo(&mut self, cwnd: u32, ssthresh: u32) {
        self.cwnd = self.cwnd.max(cwnd);
        self.ssthresh = self.ssthresh.max(ssthresh);
        self.bytes_acked = 0;
    }
}

impl Aimd {
    /// Replaces ssthresh (DCTCP's cut sets both windows).
    pub(crate) fn set_ssthresh(&mut self, ssthresh: u32) {
        self.ssthresh = ssthresh.max(1);
        self.bytes_acked = 0;
    }
}

/// No congestion control: the pre-1988 4.3BSD TCP sends whatever the receiver's window
/// allows, and after a timeout resends from SND.UNA with the same window.
#[derive(Clone, Debug, Default)]
pub struct NoCongestionControl;

impl CongestionControl for NoCongestionControl {
    fn name(&self) -> &'static str {
        "none"
    }
    fn cwnd(&self) -> u32 {
        u32::MAX
    }
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    fn in_slow_start(&self) -> bool {
        false
    }
    fn on_ack(&mut self, _ev: &AckEvent) {}
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent, _first: bool) {}
    fn set_cwnd(&mut self, _cwnd: u32) {}
}

/// A congestion window fixed at one size: no slow start, no reduction on loss or timeout.
/// Not a congestion control; a laboratory instrument for loss that is not congestion.
#[derive(Clone, Debug)]
pub struct FixedWindow {
    cwnd: u32,
}

impl FixedWindow {
    /// A window of `cwnd` bytes (at least 1), for good.
    pub fn new(cwnd: u32) -> Self {
        FixedWindow { cwnd: cwnd.max(1) }
    }
}

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.cwnd
    }
    fn in_slow_start(&self) -> bool {
        false
    }
    fn on_ack(&mut self, _ev: &AckEvent) {}
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent, _first: bool) {}
    fn set_cwnd(&mut self, _cwnd: u32) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn ack(bytes: u32) -> AckEvent {
        AckEvent {
            now: Instant::ZERO,
            bytes_acked: bytes,
            mss: MSS,
            flight_bytes: 0,
            rtt: None,
            srtt: Duration::ZERO,
            min_rtt: None,
            in_recovery: false,
            ece: false,
            snd_una: crate::seq::SeqNum::new(0),
            snd_max: crate::seq::SeqNum::new(0),
            delivery: None,
        }
    }
    fn loss(flight: u32, wnd: u32) -> CongestionEvent {
        CongestionEvent {
            now: Instant::ZERO,
            mss: MSS,
            flight_bytes: flight,
            snd_wnd: wnd,
        }
    }

    #[test]
    fn fixed_window_never_moves() {
        let mut c = FixedWindow::new(10 * MSS);
        c.on_ack(&ack(MSS));
        c.on_congestion(&loss(10 * MSS, 20 * MSS));
        c.on_rto(&loss(10 * MSS, 20 * MSS), true);
        c.set_cwnd(MSS);
        assert_eq!((c.cwnd(), c.ssthresh()), (10 * MSS, 10 * MSS));
    }

    fn adaptive(target_loss: f64) -> Aimd {
        let cfg = AimdConfig {
            adaptive_increase: Some(AdaptiveIncrease { target_loss }),
            ..AimdConfig::default()
        };
        Aimd::new(cfg, 10 * MSS, 10 * MSS)
    }

    /// Seed 000 (16 Nov 1987): the segments between congestion signals are inversely
    /// proportional to the increment, so N u is the path's, and the loop sets u from its
    /// moving average.
    #[test]
    fn seed000_16nov1987_adaptive_increase_follows_the_interval_between_signals() {
        let mut c = adaptive(0.01); // N* = 100 segments
                                    // The first signal ends slow start: its interval is not used.
        for _ in 0..7 {
            c.on_ack(&ack(MSS));
        }
        c.on_congestion(&loss(20 * MSS, 64 * MSS));
        assert_eq!(c.increase(), 1.0);
        // A signal 25 segments after it at u = 1: K = 25, so u = 25 / 100.
        for _ in 0..25 {
            c.on_ack(&ack(MSS));
        }
        c.on_congestion(&loss(20 * MSS, 64 * MSS));
        assert_eq!(c.increase(), 0.25);
        // ACKs in recovery count as delivered segments too; a timeout is a signal. K =
        // 50 x 0.25 = 12.5 moves the average a quarter of the way: 25 - 12.5 / 4.
        let mut in_recovery = ack(MSS);
        in_recovery.in_recovery = true;
        for _ in 0..50 {
            c.on_ack(&in_recovery);
        }
        c.on_rto(&loss(20 * MSS, 64 * MSS), true);
        assert_eq!(c.increase(), 0.21875);
        // A later timeout of the same episode is not a new signal.
        c.on_rto(&loss(MSS, 64 * MSS), false);
        assert_eq!(c.increase(), 0.21875);
        // Rare signals raise it, never above the configured increase (4BSD's 1).
        for _ in 0..100_000 {
            c.on_ack(&ack(MSS));
        }
        c.on_congestion(&loss(20 * MSS, 64 * MSS));
        assert_eq!(c.increase(), 1.0);
        // Back to back signals lower it, never below the floor.
        for _ in 0..40 {
            c.on_congestion(&loss(20 * MSS, 64 * MSS));
        }
        assert_eq!(c.increase(), AdaptiveIncrease::MIN_INCREASE);
    }

    /// The adapted increment is what congestion avoidance adds per window: at u = 1/2 a
    /// window of 10 segments grows by half a segment in a window of ACKs, half of what
    /// 4BSD's fixed increment adds.
    #[test]
    fn seed000_16nov1987_congestion_avoidance_grows_by_the_adapted_increase() {
        let growth_per_window = |c: &mut Aimd| {
            let before = c.cwnd();
            for _ in 0..10 {
                c.on_ack(&ack(MSS));
            }
            c.cwnd() - before
        };
        let mut c = adaptive(0.01);
        c.on_congestion(&loss(20 * MSS, 64 * MSS));
        for _ in 0..50 {
            c.on_ack(&ack(MSS));
        }
        c.on_congestion(&loss(20 * MSS, 64 * MSS));
        assert_eq!((c.increase(), c.cwnd()), (0.5, 10 * MSS));
        let adapted = growth_per_window(&mut c);
        // Without the loop the increase never moves.
        let mut fixed = Aimd::new(AimdConfig::default(), 10 * MSS, 10 * MSS);
        for _ in 0..5 {
            fixed.on_congestion(&loss(20 * MSS, 64 * MSS));
        }
        assert_eq!((fixed.increase(), fixed.cwnd()), (1.0, 10 * MSS));
        let full = growth_per_window(&mut fixed);
        // Per ACK u * MSS^2 / cwnd, with cwnd growing meanwhile: just under u * MSS.
        assert!((480..=500).contains(&adapted), "{adapted}");
        assert!((950..=1000).contains(&full), "{full}");
    }

    /// What `on_ack` reads and writes lies in the first 56 bytes of a 64-byte-aligned
    /// controller: one cache line per ACK (see `Aimd`).
    #[test]
    fn the_per_ack_fields_of_aimd_lie_in_its_first_cache_line() {
        use core::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Aimd>(), 64);
        let cfg = offset_of!(Aimd, cfg);
        let ends = [
            offset_of!(Aimd, cwnd) + size_of::<u32>(),
            offset_of!(Aimd, ssthresh) + size_of::<u32>(),
            offset_of!(Aimd, bytes_acked) + size_of::<u64>(),
            offset_of!(Aimd, increase) + size_of::<f64>(),
            offset_of!(Aimd, acked_since_signal) + size_of::<u64>(),
            cfg + offset_of!(AimdConfig, abc_limit_segments) + size_of::<Option<u32>>(),
            cfg + offset_of!(AimdConfig, multiplicative_increase) + size_of::<Option<f64>>(),
        ];
        assert!(ends.iter().all(|&e| e <= 64), "{ends:?}");
    }

    #[test]
    fn slow_start_adds_a_segment_per_ack() {
        let mut c = Aimd::new(AimdConfig::default(), MSS, u32::MAX);
        for i in 1..=10 {
            c.on_ack(&ack(MSS));
            assert_eq!(c.cwnd(), (i + 1) * MSS);
        }
        // Without ABC a delayed ACK covering two segments still adds one.
        c.on_ack(&ack(2 * MSS));
        assert_eq!(c.cwnd(), 12 * MSS);
    }

    #[test]
    fn abc_counts_bytes_up_to_l() {
        let cfg = AimdConfig {
            abc_limit_segments: Some(2),
            ..AimdConfig::default()
        };
        let mut c = Aimd::new(cfg, MSS, u32::MAX);
        c.on_ack(&ack(2 * MSS));
        assert_eq!(c.cwnd(), 3 * MSS);
        c.on_ack(&ack(5 * MSS));
        assert_eq!(c.cwnd(), 5 * MSS, "L = 2 caps the increase");
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut c = Aimd::new(AimdConfig::default(), 10 * MSS, 10 * MSS);
        // One window of ACKs, one per segment: about one segment of growth.
        for _ in 0..10 {
            c.on_ack(&ack(MSS));
        }
        assert!(
            (10 * MSS + 950..=11 * MSS).contains(&c.cwnd()),
            "{}",
            c.cwnd()
        );
        let abc = AimdConfig {
            abc_limit_segments: Some(1),
            ..AimdConfig::default()
        };
        let mut a = Aimd::new(abc, 10 * MSS, 10 * MSS);
        for _ in 0..5 {
            a.on_ack(&ack(2 * MSS)); // delayed ACKs: ABC still grows one segment per RTT
        }
        assert_eq!(a.cwnd(), 11 * MSS);
    }

    #[test]
    fn decrease_follows_the_1990_diff_or_rfc5681() {
        let mut c = Aimd::new(
            AimdConfig {
                ssthresh_base: SsthreshBase::Window,
                ..AimdConfig::default()
            },
            17 * MSS + 300,
            u32::MAX,
        );
        // min(snd_wnd, cwnd) = 17.3 segments -> 8 segments (integer segments, halved).
        c.on_congestion(&loss(5 * MSS, 64 * MSS));
        assert_eq!(c.ssthresh(), 8 * MSS);
        assert_eq!(c.cwnd(), 8 * MSS);
        // Floor of two segments.
        c.on_congestion(&loss(0, 3 * MSS));
        assert_eq!(c.ssthresh(), 2 * MSS);

        let mut r = Aimd::new(AimdConfig::default(), 20 * MSS, u32::MAX);
        r.on_rto(&loss(12 * MSS, 64 * MSS), true);
        assert_eq!((r.ssthresh(), r.cwnd()), (6 * MSS, MSS));
        r.on_rto(&loss(MSS, 64 * MSS), false);
        assert_eq!(r.ssthresh(), 6 * MSS, "a repeated timeout keeps ssthresh");
        let mut j = Aimd::new(
            AimdConfig {
                decrease: 0.875,
                ..AimdConfig::default()
            },
            16 * MSS,
            u32::MAX,
        );
        j.on_congestion(&loss(16 * MSS, 64 * MSS));
        assert_eq!(j.cwnd(), 14 * MSS, "Jain's d = 7/8");
    }

    #[test]
    fn multiplicative_increase_multiplies_per_window() {
        let cfg = AimdConfig {
            multiplicative_increase: Some(1.5),
            ..AimdConfig::default()
        };
        let mut c = Aimd::new(cfg, 10 * MSS, 10 * MSS);
        for _ in 0..10 {
            c.on_ack(&ack(MSS));
        }
        assert_eq!(c.cwnd(), 15 * MSS);
    }

    #[test]
    fn none_is_unlimited() {
        let mut n = NoCongestionControl;
        n.on_rto(&loss(10, 10), true);
        assert_eq!(n.cwnd(), u32::MAX);
    }
}
