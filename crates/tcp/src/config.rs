//! Every knob of a connection lives in one `TcpConfig`, with presets for the TCPs the seeds
//! compare: the pre-1988 "vanilla" 4.3BSD TCP, 4.3BSD-Tahoe (1988), 4.3BSD-Reno (the April
//! 1990 diff), and the modern RFC descendants.

use crate::cc::{AdaptiveIncrease, AimdConfig, CongestionControlFactory, SsthreshBase};
use crate::cubic::CubicConfig;
use crate::rtt::{RttAlgorithm, RttConfig};
use ackclock_wire::{Duration, OptionLayout};
use std::sync::Arc;

/// How the first congestion window is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// A fixed number of segments (1 in 1988's slow start).
    Segments(u32),
    /// RFC 3390: min(4*MSS, max(2*MSS, 4380 bytes)).
    Rfc3390,
    /// RFC 6928: min(10*MSS, max(2*MSS, 14600 bytes)).
    Rfc6928,
}

impl InitialWindow {
    /// The window in bytes for a send MSS of `mss` bytes. `Segments(0)` counts as one
    /// segment.
    pub fn bytes(self, mss: u32) -> u32 {
        match self {
            InitialWindow::Segments(n) => n.max(1) * mss,
            InitialWindow::Rfc3390 => (4 * mss).min((2 * mss).max(4380)),
            InitialWindow::Rfc6928 => (10 * mss).min((2 * mss).max(14600)),
        }
    }
}

/// What the sender does when it detects a loss by duplicate ACKs (and on partial ACKs).
/// Scenario files and flags name it `timeout_only`, `tahoe`, `reno`, `newreno` or `sack`
/// ([`NAMES`](Self::NAMES)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum RecoveryAlgorithm {
    /// No fast retransmit: losses are repaired by the retransmission timer only (4.3BSD
    /// before Tahoe).
    TimeoutOnly,
    /// Fast retransmit, then slow start from one segment (4.3BSD-Tahoe).
    Tahoe,
    /// Fast retransmit and fast recovery with window inflation, exactly as the 30 Apr 1990
    /// diff and its correction.
    Reno,
    /// RFC 6582: Reno with a recovery point; partial ACKs retransmit the next hole.
    #[cfg_attr(feature = "serde", serde(rename = "newreno"))]
    NewReno,
    /// RFC 6675: SACK-based loss recovery.
    Sack,
}

/// Which congestion controller sizes cwnd.
#[derive(Clone, Debug)]
pub enum CongestionAlgorithm {
    /// Window = the receiver's window (pre-1988).
    None,
    /// cwnd fixed at the initial window through every loss and timeout: loss taken as
    /// non-congestive, the window pinned at the bandwidth-delay product (our reading of the
    /// 30 Apr 1990 SACK claim, seeds 000 and 001), inside a receiver window that may be larger.
    Fixed,
    /// Slow start and AIMD congestion avoidance (1988 onward).
    Aimd(AimdConfig),
    /// RFC 9438 CUBIC.
    Cubic(CubicConfig),
    /// RFC 8257 DCTCP: cut by the smoothed fraction of marked bytes (needs `ecn` and the
    /// per-packet echo at both ends).
    Dctcp(crate::ecn_cc::DctcpConfig),
    /// Jain and Ramakrishnan's DEC-bit window (1988): 7/8 when half the last window's bits
    /// were set, one packet more otherwise (needs `ecn`, the per-packet echo and a gateway
    /// that sets the bit).
    DecBit(crate::ecn_cc::DecBitConfig),
    /// BBR v1 (Cardwell et al. 2016; Linux `tcp_bbr.c`): a model of the bottleneck's rate
    /// and the path's minimum RTT from delivery-rate samples, paced at gain x bandwidth.
    /// Each connection mixes its initial sequence number into the seed of the gain cycle's
    /// random start.
    Bbr(crate::bbr::BbrConfig),
    /// BBR v3 (google/bbr v3, draft-ietf-ccwg-bbr): v1's model bounded by loss (2% per
    /// round) and ECN, with PROBE_BW's DOWN/CRUISE/REFILL/UP phases.
    Bbr3(crate::bbr3::Bbr3Config),
    /// A controller from outside the engine, built per connection by the factory.
    Custom(Arc<dyn CongestionControlFactory>),
}

impl PartialEq for CongestionAlgorithm {
    /// Configurations compare by value; custom factories by identity (the same `Arc`).
    fn eq(&self, other: &Self) -> bool {
        use CongestionAlgorithm as C;
        match (self, other) {
            (C::None, C::None) | (C::Fixed, C::Fixed) => true,
            (C::Aimd(a), C::Aimd(b)) => a == b,
            (C::Cubic(a), C::Cubic(b)) => a == b,
            (C::Dctcp(a), C::Dctcp(b)) => a == b,
            (C::DecBit(a), C::DecBit(b)) => a == b,
            (C::Bbr(a), C::Bbr(b)) => a == b,
            (C::Bbr3(a), C::Bbr3(b)) => a == b,
            (C::Custom(a), C::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The RTT estimator [`Overrides::rtt_estimator`] selects: the kind of
/// [`RttAlgorithm`], without its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum RttEstimatorName {
    /// `"jacobson"`: [`RttAlgorithm::Jacobson`], k = 4
    /// unless `rto_k` says otherwise.
    Jacobson,
    /// `"rfc793"`: [`RttAlgorithm::Rfc793`], alpha 0.9 and
    /// beta 2 unless `rfc793_alpha` and `rfc793_beta` say otherwise.
    Rfc793,
}

/// The congestion controller [`Overrides::cc`] selects: the kind of [`CongestionAlgorithm`],
/// without its parameters (a custom controller cannot be named).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum CongestionName {
    /// `"none"`: [`CongestionAlgorithm::None`], the window is the receiver's.
    None,
    /// `"fixed"`: [`CongestionAlgorithm::Fixed`], cwnd = the initial window, always.
    Fixed,
    /// `"aimd"` (alias `"reno"`): [`CongestionAlgorithm::Aimd`].
    #[cfg_attr(feature = "serde", serde(alias = "reno"))]
    Aimd,
    /// `"cubic"`: [`CongestionAlgorithm::Cubic`].
    Cubic,
    /// `"dctcp"`: [`CongestionAlgorithm::Dctcp`] (turns on `ecn` with the per-packet echo).
    Dctcp,
    /// `"dec_bit"`: [`CongestionAlgorithm::DecBit`] (turns on `ecn` with the per-packet
    /// echo).
    DecBit,
    /// `"bbr"`: [`CongestionAlgorithm::Bbr`], BBR v1.
    Bbr,
    /// `"bbr3"`: [`CongestionAlgorithm::Bbr3`], BBR v3.
    Bbr3,
}

/// The names of a field-less enum as scenario files and command-line flags spell them:
/// `NAMES`, `ALIASES`, `name()`, `Display` and `FromStr` (whose error is the
/// [`OverrideError`] of `field`). The serde attributes of the enum must spell the same names;
/// a test of `ackclock-sim` checks that they do.
macro_rules! names {
    (
        $ty:ident, $field:literal,
        [$($variant:ident = $name:literal),+ $(,)?],
        aliases [$($alias:literal = $target:literal),* $(,)?] $(,)?
    ) => {
        impl $ty {
            /// Every name the value is written as, one per variant, in the variants' order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            /// Other spellings that are accepted too: `(alias, name)`.
            pub const ALIASES: &'static [(&'static str, &'static str)] = &[$(($alias, $target)),*];

            /// The name of the value, one of [`NAMES`](Self::NAMES).
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl core::fmt::Display for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl core::str::FromStr for $ty {
            type Err = OverrideError;

            /// A name of [`NAMES`](Self::NAMES) or [`ALIASES`](Self::ALIASES), exactly
            /// (case matters); the error names the field and the accepted names.
            fn from_str(s: &str) -> Result<Self, OverrideError> {
                let name = Self::ALIASES
                    .iter()
                    .find(|(alias, _)| *alias == s)
                    .map_or(s, |(_, name)| *name);
                match name {
                    $($name => Ok($ty::$variant),)+
                    _ => Err(bad(
                        $field,
                        format!("{} = {s:?}: expected one of {}", $field, Self::NAMES.join(", ")),
                    )),
                }
            }
        }
    };
}

names! {
    RecoveryAlgorithm,
    "recovery",
    [
        TimeoutOnly = "timeout_only",
        Tahoe = "tahoe",
        Reno = "reno",
        NewReno = "newreno",
        Sack = "sack",
    ],
    aliases [],
}
names! {
    RttEstimatorName,
    "rtt_estimator",
    [Jacobson = "jacobson", Rfc793 = "rfc793"],
    aliases [],
}
names! {
    CongestionName,
    "cc",
    [
        None = "none",
        Fixed = "fixed",
        Aimd = "aimd",
        Cubic = "cubic",
        Dctcp = "dctcp",
        DecBit = "dec_bit",
        Bbr = "bbr",
        Bbr3 = "bbr3",
    ],
    aliases ["reno" = "aimd"],
}
names! {
    SsthreshBase,
    "ssthresh_base",
    [Window = "window", FlightSize = "flight"],
    aliases [],
}

/// How a receiver echoes the CE marks of the data it receives (with [`TcpConfig::ecn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EcnEcho {
    /// `"latched"`: RFC 3168 §6.1.3, ECE on every ACK from a CE mark until the sender's CWR.
    #[default]
    Latched,
    /// `"per_packet"`: RFC 8257 §3.2 (DCTCP), ECE says whether the data the ACK
    /// acknowledges was marked; a change of state first acknowledges the data before it with
    /// the old state. What DCTCP and the DEC-bit sender count.
    PerPacket,
}

names! {
    EcnEcho,
    "ecn_echo",
    [Latched = "latched", PerPacket = "per_packet"],
    aliases [],
}

/// How the sender brings its flight down to the new ssthresh during a fast recovery.
/// Scenario files and flags name it `halve` or `prr` ([`NAMES`](Self::NAMES)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WindowReduction {
    /// `"halve"`: the recovery algorithm's own rule, as before PRR: cwnd drops to ssthresh
    /// at once and RFC 6675 sends while pipe < cwnd (nothing for about half a round trip,
    /// then one segment per ACK); Reno and NewReno inflate and deflate the window. The
    /// default of every preset.
    #[default]
    Halve,
    /// `"prr"`: RFC 9937 Proportional Rate Reduction. During a fast recovery (SACK, Reno or
    /// NewReno) each ACK may send what PRR's SndCnt allows: in proportion to the data
    /// delivered while pipe is above ssthresh, then up to ssthresh by the conservative bound
    /// (PRR-CRB), or the slow-start bound (PRR-SSRB) on an ACK that advanced SND.UNA and
    /// indicated no further loss; the episode ends with cwnd = ssthresh.
    Prr,
}

names! {
    WindowReduction,
    "window_reduction",
    [Halve = "halve", Prr = "prr"],
    aliases [],
}

/// How the first slow start ends ([`TcpConfig::hystart`]), for the AIMD and CUBIC
/// controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum HyStart {
    /// `"off"`: slow start runs until the first loss (RFC 5681). The default of every
    /// preset.
    #[default]
    Off,
    /// `"plus_plus"`: RFC 9406 HyStart++: a rise of the round's minimum RTT by more than
    /// max(4 ms, min(last round's / 8, 16 ms)) ends slow start into Conservative Slow
    /// Start (a quarter of the growth, at most 5 rounds, then congestion avoidance with
    /// ssthresh = cwnd; back to slow start if the RTT falls again). For the first slow start
    /// only; it needs an RTT sample on most ACKs (timestamps, RFC 7323).
    PlusPlus,
    /// `"classic"`: HyStart as Linux's CUBIC runs it (`hystart = 1`, `hystart_detect = 3`;
    /// Ha and Rhee 2011), the `linux` preset's: from 16 segments of cwnd, an ACK train longer
    /// than half the minimum RTT, or the round's minimum RTT (of 8 samples) above the
    /// connection's by clamp(min RTT / 8, 4 ms, 16 ms), ends slow start at once with
    /// ssthresh = cwnd; a timeout starts it over. Linux has it in CUBIC only; here AIMD runs
    /// it too when asked.
    Classic,
}

/// How the sender decides that a segment was lost, short of the retransmission timer.
/// Scenario files and flags name it `dupack`, `rack` or `rack-tlp` ([`NAMES`](Self::NAMES)).
///
/// RACK needs SACK: with a peer that does not offer it, a duplicate ACK says nothing about
/// which segment arrived, and the connection uses the duplicate-ACK threshold (RFC 6582
/// NewReno) whatever is configured here, as Linux does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum LossDetection {
    /// `"dupack"`: the seeds' rule, [`TcpConfig::dupack_threshold`] duplicate ACKs (RFC
    /// 5681 §3.2, RFC 6675's IsLost with SACK). The default of every preset but `linux`.
    #[default]
    #[cfg_attr(feature = "serde", serde(rename = "dupack"))]
    DupAck,
    /// `"rack"`: RFC 8985 RACK: a segment is lost when one sent after it was delivered and
    /// it has waited RACK.rtt plus the reordering window (zero until reordering is seen and
    /// [`TcpConfig::dupack_threshold`] segments are SACKed, then min_RTT/4, grown by
    /// D-SACK). Lost retransmissions are found the same way.
    Rack,
    /// `"rack-tlp"`: RACK and RFC 8985 §7's tail loss probe: about two round trips after the
    /// last ACK, with data outstanding, one segment is sent (new data, or the last segment
    /// again) so that a loss at the tail of a flight is found by RACK rather than by the RTO.
    RackTlp,
}

names! {
    LossDetection,
    "loss_detection",
    [DupAck = "dupack", Rack = "rack", RackTlp = "rack-tlp"],
    aliases [],
}
names! {
    HyStart,
    "hystart",
    [Off = "off", PlusPlus = "plus_plus", Classic = "classic"],
    aliases [],
}

/// Whether a window-based controller's data is paced ([`TcpConfig::pacing`]). A controller
/// with a pacing rate of its own (BBR) is always paced at it. Scenario files and flags name
/// it `off` or `linux` ([`NAMES`](Self::NAMES)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Pacing {
    /// `"off"`: segments go as soon as the windows allow, in bursts as ACKs open them (the
    /// seeds' ack clock). The default of every preset.
    #[default]
    Off,
    /// `"linux"`: Linux's rule for a paced window-based controller (`tcp_update_pacing_rate`
    /// with `tcp_pacing_ss_ratio` 200 and `tcp_pacing_ca_ratio` 120): max(cwnd, flight) /
    /// SRTT, doubled while cwnd is below half ssthresh (slow start), times 1.2 after; no
    /// pacing before the first RTT sample.
    Linux,
}

names! {
    Pacing,
    "pacing",
    [Off = "off", Linux = "linux"],
    aliases [],
}

/// When the receiver sends ACKs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPolicy {
    /// ACK at least every N full-sized segments (RFC 5681 §4.2: 2; seed 000 Oct 1988: "TCP
    /// delivers one ack for every two data packets"; HP-UX's tcp_deferred_ack_max up to 32,
    /// seed 002). 1 acknowledges every segment.
    pub segments_per_ack: u32,
    /// Longest an ACK may be delayed (200 ms in BSD; RFC 9293 requires < 500 ms). Zero
    /// disables delayed ACKs.
    pub delayed_ack: Duration,
    /// Acknowledge every segment immediately (Linux's quick-ACK mode, always on).
    pub quickack: bool,
    /// The delayed ACK goes out at the next tick of a clock that ticks every `delayed_ack`
    /// (4.3BSD's tcp_fasttimo, every 200 ms: "TF_DELACK" turns into "TF_ACKNOW" at the tick),
    /// so it waits 0 to `delayed_ack`, not `delayed_ack` from the first unacknowledged
    /// segment. The clock's phase is per connection.
    pub delayed_ack_clock: bool,
    /// Count every in-order data segment toward `segments_per_ack`, whatever its size.
    /// Default `false`: only full-sized segments count (RFC 5681 §4.2 "an ACK SHOULD be
    /// generated for at least every second full-sized segment", which permits but does not
    /// require acknowledging small ones; 4.3BSD), besides the byte count of
    /// `segments_per_ack` full segments. `true` is FreeBSD's rule (its `DELAY_ACK` counts
    /// segments, not their size): two small in-order segments draw an ACK at once.
    pub count_small_segments: bool,
}

impl Default for AckPolicy {
    fn default() -> Self {
        AckPolicy {
            segments_per_ack: 2,
            delayed_ack: Duration::from_millis(200),
            quickack: false,
            delayed_ack_clock: false,
            count_small_segments: false,
        }
    }
}

/// The smallest MSS the engine takes from a scenario or a peer, in bytes: the least
/// [`Overrides::mss`] accepts, and the floor under a peer's MSS option, as Linux's
/// `tcp_min_snd_mss` (48 bytes) and FreeBSD's `tcp_minmss` (216) are. A peer that
/// advertised an MSS of 1 had the engine send its whole window a byte per packet (the
/// `segments` fuzz case `burst-a72f7dc5`; CVE-2019-11479 is the same attack on Linux). At
/// 64 the floor is never above an MSS this engine would advertise, so two of its endpoints
/// keep to each other's MSS whatever they are configured with.
pub const MIN_MSS: u16 = 64;

/// The configuration of one connection.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// The MSS we advertise on our SYN, in bytes, and the cap on the payload we send: the
    /// send MSS is the smaller of this and the peer's MSS (536 when it sends none, RFC 9293
    /// §3.7.1; at least [`MIN_MSS`]), less 12 bytes when timestamps are in use. Usually the
    /// MTU minus 40 (1460). Packets can be up to `mss + 80` bytes long (see the
    /// [`Endpoint`](crate::Endpoint) documentation).
    pub mss: u16,
    /// Send socket buffer in bytes.
    pub send_buffer_bytes: usize,
    /// Receive socket buffer in bytes (bounds the advertised window and reassembly memory).
    pub recv_buffer_bytes: usize,
    /// The first congestion window, sized from the negotiated send MSS; also the restart
    /// window after an idle period (`idle_restart`), and the window of
    /// [`CongestionAlgorithm::Fixed`].
    pub initial_window: InitialWindow,
    /// Initial ssthresh in bytes (RFC 5681: "arbitrarily high").
    pub initial_ssthresh: u32,
    /// The RTT estimator and the bounds of the retransmission timeout.
    pub rtt: RttConfig,
    /// When the receiver sends ACKs.
    pub ack: AckPolicy,
    /// Nagle's algorithm (RFC 9293 §3.8.6.2.1): a segment shorter than the MSS is held
    /// while data is unacknowledged, unless it carries the FIN or is at least half the
    /// largest window the peer has offered.
    pub nagle: bool,
    /// Offer/accept RFC 2018 SACK.
    pub sack: bool,
    /// Report duplicate data with D-SACK (RFC 2883) when SACK is in use. Default `false`:
    /// duplicates draw a plain ACK (with the usual SACK blocks), as before. When `true`, a
    /// segment whose data lies wholly or partly below RCV.NXT, or inside out-of-order data
    /// already held, makes the ACK it draws (sent at once) carry the duplicate range as its
    /// first SACK block, followed by the usual blocks within the RFC 2018 limit (4, 3 with
    /// timestamps). When a segment duplicates several ranges, the first (lowest) one is
    /// reported, as FreeBSD does (RFC 2883 §4 leaves the choice open); a D-SACK block is
    /// sent on one ACK only. Linux and FreeBSD send D-SACK by default.
    pub dsack: bool,
    /// Explicit Congestion Notification (RFC 3168): ask for it on an active open (a SYN with
    /// ECE and CWR) and agree when a peer's SYN asks (a SYN,ACK with ECE). Once both ends
    /// agree, new data goes out ECT(0); a receiver echoes a CE mark with ECE on its ACKs
    /// until the sender's CWR, and a sender answers ECE as it answers a loss (the controller's
    /// decrease, cwnd to the new ssthresh) at most once per window of data, without
    /// retransmitting. Default `false`. A handshake answered with a SYN cookie does not
    /// negotiate ECN (the cookie has no room for it; the SYN,ACK says no).
    pub ecn: bool,
    /// How CE marks are echoed (RFC 3168's latch, or RFC 8257's per packet).
    pub ecn_echo: EcnEcho,
    /// Offer/accept RFC 7323 timestamps.
    pub timestamps: bool,
    /// Offer/accept RFC 7323 window scaling.
    pub window_scale: bool,
    /// The shift count our SYN or SYN-ACK offers when window scaling is on (RFC 7323 §2.2),
    /// applied to every window we advertise once it is negotiated. `None` (the default):
    /// the smallest shift that lets `recv_buffer_bytes` be advertised in 16 bits. `Some(s)`:
    /// `s`, taken as 14 when above it (RFC 7323 §2.3), whatever the buffer. BSDs derive the
    /// shift from the largest buffer a socket may grow to (FreeBSD: the smallest shift with
    /// 65535 << s >= `kern.ipc.maxsockbuf`, 6 for 2 MiB) rather than from the current
    /// buffer; Linux from its `tcp_rmem` maximum.
    pub window_scale_shift: Option<u8>,
    /// How losses detected by duplicate ACKs or SACK blocks are repaired.
    pub recovery: RecoveryAlgorithm,
    /// How the flight is brought down to ssthresh during a fast recovery: the recovery's
    /// own rule ([`WindowReduction::Halve`], every preset) or RFC 9937 PRR.
    pub window_reduction: WindowReduction,
    /// How losses are detected short of the RTO: the duplicate-ACK threshold
    /// ([`LossDetection::DupAck`], every preset) or RFC 8985 RACK, with or without TLP.
    pub loss_detection: LossDetection,
    /// Undo a window reduction that turns out needless: a fast recovery whose every
    /// retransmission a D-SACK shows arrived twice (RFC 3708 §3), or in which an ACK of new
    /// data echoes a timestamp older than the fast retransmit with no resend left
    /// unacknowledged (Eifel detection, RFC 3522), ends and restores cwnd and ssthresh to
    /// what they were before it; a timeout whose first ACK echoes a timestamp older than
    /// the retransmission gets RFC 4015's response (ssthresh from before, cwnd the flight
    /// plus at most an initial window, and sending resumes with new data). Default `false`
    /// (every preset but `linux`).
    pub undo: bool,
    /// F-RTO (RFC 5682 §2.1): after a first timeout, the sender resends one segment, sends
    /// two new ones when the next ACK advances, and takes the timeout for spurious when the
    /// ACK after that acknowledges data it did not resend: then the reduction is undone as
    /// with `undo` (RFC 4015's response) and no further segment is resent. Default `false`.
    pub frto: bool,
    /// Restart the retransmission timer when a recovery resends the oldest unacknowledged
    /// segment, as Linux's `tcp_xmit_retransmit_queue` does (it re-arms `icsk_rto` when it
    /// resends the head of the retransmission queue). RFC 6298 §5 restarts the timer only
    /// on an ACK of new data, so a timer started by the first transmission of a segment
    /// that is resent late in a long recovery can fire before the resend could be
    /// acknowledged. Default `false`; on in `linux`.
    pub rto_restart_on_head_resend: bool,
    /// How slow start of the AIMD and CUBIC controllers ends: at the first loss
    /// ([`HyStart::Off`], every preset but `linux`), by RFC 9406 HyStart++ on RTT growth, or
    /// by Linux CUBIC's HyStart ([`HyStart::Classic`], the `linux` preset). Other
    /// controllers ignore it.
    pub hystart: HyStart,
    /// Pacing for window-based controllers ([`Pacing::Off`] by default, every preset).
    pub pacing: Pacing,
    /// How far a paced sender may run ahead of its schedule: after a late wake-up it may
    /// send this much time's worth of data at once to catch up, so that a host whose timer
    /// fires late does not fall below the rate (a token bucket of `rate x pacing_burst`
    /// bytes). Zero (the default) spaces every segment exactly, as the simulator can; a live
    /// host sets it to its timer's lateness.
    pub pacing_burst: Duration,
    /// The congestion controller that sizes cwnd.
    pub congestion: CongestionAlgorithm,
    /// Duplicate ACKs that trigger fast retransmit ("tcprexmtthresh", 3).
    pub dupack_threshold: u32,
    /// RFC 3042 limited transmit: a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Retransmission timeouts of one segment before the connection is aborted (4.3BSD's
    /// TCP_MAXRXTSHIFT is 12; RFC 9293 R2 >= 100 s); also the limit of zero-window probes
    /// in a row that draw no answer at all (RFC 1122 4.2.2.17 keeps a connection whose peer
    /// answers its probes, not one whose peer is gone).
    pub max_retransmits: u32,
    /// Timeouts of a SYN before giving up (RFC 9293: at least 3 minutes in total).
    pub max_syn_retransmits: u32,
    /// TIME-WAIT duration, 2*MSL (RFC 9293: MSL = 2 minutes; Linux uses 60 s in total).
    pub time_wait: Duration,
    /// Shortest interval of the persist timer for zero-window probes (4.3BSD: 5 s). The
    /// interval is the RTO doubled per probe, kept between `persist_min` and
    /// `persist_max`.
    pub persist_min: Duration,
    /// Longest interval of the persist timer (4.3BSD: 60 s).
    pub persist_max: Duration,
    /// The in-sequence fast path of the seeds (Sep 1993; 4.3BSD tcp_input).
    pub header_prediction: bool,
    /// Verify the checksum while copying data into the receive buffer on the fast path
    /// (seed Jul 1988).
    pub checksum_and_copy: bool,
    /// RFC 5681 §4.1: after an idle period longer than RTO, restart from the initial window.
    pub idle_restart: bool,
    /// RFC 5961 §7: at most this many challenge ACKs per second per connection.
    pub challenge_ack_limit_per_sec: u32,
    /// At most one ACK per this interval in answer to segments without data that are out
    /// of window, fail PAWS or acknowledge unsent data (Linux's tcp_invalid_ratelimit, 500
    /// ms): two ends that disagree about the sequence space otherwise answer each other's
    /// ACKs for ever. Segments with data are always answered. Zero turns the limit off.
    pub invalid_ack_interval: Duration,
    /// RFC 5482's user timeout: abort when sent data has stayed unacknowledged this long
    /// (checked when a retransmission or persist timer fires), also while a peer keeps
    /// answering zero-window probes without opening its window. `None`: no user timeout
    /// (the retry limit alone ends a connection).
    pub user_timeout: Option<Duration>,
    /// IPv4 time-to-live of the packets the connection sends (64).
    pub ttl: u8,
    /// How the options of the segments we send are ordered and padded. Any layout is
    /// valid TCP (RFC 9293 §3.1) and every stack parses them all; the choice matters only
    /// to a test that compares packets byte for byte with another stack's. Default
    /// [`OptionLayout::Linux`] (`mss, sackOK, TS, nop, wscale` on a SYN, NOP padding);
    /// [`OptionLayout::FreeBsd`] writes them as FreeBSD's `tcp_addoptions()` does (`mss,
    /// nop, wscale, sackOK, TS`; `mss, sackOK, eol, eol`), for the FreeBSD packetdrill
    /// suite.
    pub option_layout: OptionLayout,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::newreno()
    }
}

fn aimd(base: SsthreshBase) -> CongestionAlgorithm {
    CongestionAlgorithm::Aimd(AimdConfig {
        ssthresh_base: base,
        ..AimdConfig::default()
    })
}

impl TcpConfig {
    /// The common ground of every preset: MSS 1460, 128 KiB buffers, delayed ACKs every
    /// second segment, Nagle, RFC 6298 timer.
    fn base() -> Self {
        TcpConfig {
            mss: 1460,
            send_buffer_bytes: 128 * 1024,
            recv_buffer_bytes: 128 * 1024,
            initial_window: InitialWindow::Segments(1),
            initial_ssthresh: u32::MAX,
            rtt: RttConfig::rfc6298(),
            ack: AckPolicy::default(),
            nagle: true,
            sack: false,
            dsack: false,
            ecn: false,
            ecn_echo: EcnEcho::Latched,
            timestamps: false,
            window_scale: false,
            window_scale_shift: None,
            recovery: RecoveryAlgorithm::NewReno,
            window_reduction: WindowReduction::Halve,
            loss_detection: LossDetection::DupAck,
            undo: false,
            frto: false,
            rto_restart_on_head_resend: false,
            hystart: HyStart::Off,
            pacing: Pacing::Off,
            pacing_burst: Duration::ZERO,
            congestion: aimd(SsthreshBase::FlightSize),
            dupack_threshold: 3,
            limited_transmit: false,
            max_retransmits: 12,
            // 1+2+4+8+16+32+60+60 s: RFC 9293 §3.8.3 wants a SYN tried for >= 3 minutes.
            max_syn_retransmits: 7,
            time_wait: Duration::from_secs(60),
            persist_min: Duration::from_secs(5),
            persist_max: Duration::from_secs(60),
            header_prediction: true,
            checksum_and_copy: true,
            idle_restart: false,
            challenge_ack_limit_per_sec: 10,
            invalid_ack_interval: Duration::from_millis(500),
            user_timeout: None,
            ttl: 64,
            option_layout: OptionLayout::Linux,
        }
    }

    /// 4.3BSD before 1988: no congestion control (window = receiver's window), the RFC 793
    /// timer (alpha 0.9, beta 2), no fast retransmit: the "vanilla" TCP of the seeds.
    pub fn vanilla_4_3bsd() -> Self {
        TcpConfig {
            rtt: RttConfig::rfc793(),
            recovery: RecoveryAlgorithm::TimeoutOnly,
            congestion: CongestionAlgorithm::None,
            ..Self::base()
        }
    }

    /// 4.3BSD-Tahoe (1988): slow start, congestion avoidance, Jacobson's timer, fast
    /// retransmit followed by slow start.
    pub fn tahoe() -> Self {
        TcpConfig {
            rtt: RttConfig::jacobson_1987(),
            recovery: RecoveryAlgorithm::Tahoe,
            congestion: aimd(SsthreshBase::Window),
            ..Self::base()
        }
    }

    /// 4.3BSD-Reno: Tahoe plus fast recovery per the 30 Apr 1990 diff and its correction.
    pub fn reno() -> Self {
        TcpConfig {
            recovery: RecoveryAlgorithm::Reno,
            ..Self::tahoe()
        }
    }

    /// RFC 5681 + RFC 6582 NewReno with the RFC 6298 timer.
    pub fn newreno() -> Self {
        Self::base()
    }

    /// RFC 6675 SACK recovery with timestamps and window scaling, limited transmit.
    pub fn sack() -> Self {
        TcpConfig {
            sack: true,
            timestamps: true,
            window_scale: true,
            recovery: RecoveryAlgorithm::Sack,
            limited_transmit: true,
            ..Self::base()
        }
    }

    /// CUBIC (RFC 9438) with SACK recovery, timestamps and window scaling, IW10: the
    /// modern descendant the seeds' AIMD is compared against.
    pub fn cubic() -> Self {
        TcpConfig {
            initial_window: InitialWindow::Rfc6928,
            congestion: CongestionAlgorithm::Cubic(CubicConfig::default()),
            ..Self::sack()
        }
    }

    /// What a current stack does: SACK recovery, timestamps, window scaling, IW10, ABC.
    pub fn modern() -> Self {
        TcpConfig {
            initial_window: InitialWindow::Rfc6928,
            congestion: CongestionAlgorithm::Aimd(AimdConfig {
                abc_limit_segments: Some(2),
                ..AimdConfig::default()
            }),
            ..Self::sack()
        }
    }

    /// Linux 6.x's defaults, as far as the engine models them, for putting ackclock beside a
    /// Linux peer on the same path. Each value names the sysctl or constant it follows;
    /// docs/LINUX.md lists what Linux does that this preset does not.
    pub fn linux() -> Self {
        TcpConfig {
            // tcp_rmem[2] = 6 MiB and tcp_wmem[2] = 4 MiB: the sizes Linux's buffer
            // autotuning grows to (not modelled; the buffers are fixed at those maxima).
            send_buffer_bytes: 4 << 20,
            recv_buffer_bytes: 6 << 20,
            // TCP_INIT_CWND = 10 (RFC 6928).
            initial_window: InitialWindow::Rfc6928,
            rtt: RttConfig {
                // TCP_TIMEOUT_INIT 1 s, TCP_RTO_MIN 200 ms, TCP_RTO_MAX 120 s.
                initial_rto: Duration::from_secs(1),
                min_rto: Duration::from_millis(200),
                max_rto: Duration::from_secs(120),
                // Linux's tcp_rtt_estimator floors the variance term at TCP_RTO_MIN:
                // RTO = SRTT + max(4 x mdev, 200 ms), never RFC 6298's 200 ms alone.
                min_rto_on_variance: true,
                ..RttConfig::rfc6298()
            },
            ack: AckPolicy {
                // TCP_DELACK_MIN / TCP_ATO_MIN = 40 ms; an ACK for every second full
                // segment (__tcp_ack_snd_check).
                delayed_ack: Duration::from_millis(40),
                segments_per_ack: 2,
                ..AckPolicy::default()
            },
            // tcp_sack = 1, tcp_dsack = 1, tcp_timestamps = 1, tcp_window_scaling = 1.
            sack: true,
            dsack: true,
            timestamps: true,
            window_scale: true,
            // tcp_ecn = 2: Linux answers an ECN-setup SYN but does not send one; the
            // engine's `ecn` does both, so it stays off.
            ecn: false,
            recovery: RecoveryAlgorithm::Sack,
            // tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP).
            loss_detection: LossDetection::RackTlp,
            // tcp_cwnd_reduction: PRR for every reduction.
            window_reduction: WindowReduction::Prr,
            // The undo of tcp_try_undo_* (D-SACK, timestamps), and tcp_frto = 2.
            undo: true,
            frto: true,
            // tcp_xmit_retransmit_queue re-arms the RTO when it resends the queue's head.
            rto_restart_on_head_resend: true,
            // tcp_cubic's hystart = 1, hystart_detect = 3 (ACK train and delay),
            // hystart_low_window = 16, hystart_ack_delta_us = 2000.
            hystart: HyStart::Classic,
            // tcp_congestion_control = cubic (beta 0.7, fast convergence).
            congestion: CongestionAlgorithm::Cubic(CubicConfig::default()),
            // tcp_reordering = 3.
            dupack_threshold: 3,
            limited_transmit: true,
            // tcp_retries2 = 15, tcp_syn_retries = 6.
            max_retransmits: 15,
            max_syn_retransmits: 6,
            // TCP_TIMEWAIT_LEN = 60 s.
            time_wait: Duration::from_secs(60),
            // tcp_slow_start_after_idle = 1.
            idle_restart: true,
            option_layout: OptionLayout::Linux,
            ..Self::base()
        }
    }

    /// [`linux`](Self::linux) with BBR v1 as its controller, as a Linux host with
    /// `net.ipv4.tcp_congestion_control = bbr` runs (BBR paces itself: Linux's internal
    /// pacing, `SK_PACING_NEEDED`; PRR does not apply, BBR sets the window in a recovery
    /// through `cong_control`). The peer that `bench/live/bbr_vs_linux.py` compares with.
    pub fn linux_bbr() -> Self {
        TcpConfig {
            congestion: CongestionAlgorithm::Bbr(crate::bbr::BbrConfig::default()),
            ..Self::linux()
        }
    }

    /// A preset by name, as the command line and scenario files spell it.
    pub fn preset(name: &str) -> Option<Self> {
        Some(match name {
            "vanilla" | "vanilla_4_3bsd" => Self::vanilla_4_3bsd(),
            "tahoe" => Self::tahoe(),
            "reno" => Self::reno(),
            "newreno" => Self::newreno(),
            "sack" => Self::sack(),
            "cubic" => Self::cubic(),
            "modern" => Self::modern(),
            "linux" => Self::linux(),
            "linux_bbr" => Self::linux_bbr(),
            _ => return None,
        })
    }

    /// The names [`preset`](Self::preset) accepts.
    pub const PRESETS: &'static [&'static str] = &[
        "vanilla_4_3bsd",
        "tahoe",
        "reno",
        "newreno",
        "sack",
        "cubic",
        "modern",
        "linux",
        "linux_bbr",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initial_windows_match_the_rfcs() {
        // RFC 3390 §1 and RFC 6928 §2.
        assert_eq!(InitialWindow::Rfc3390.bytes(1460), 4380);
        assert_eq!(InitialWindow::Rfc3390.bytes(536), 2144);
        assert_eq!(InitialWindow::Rfc6928.bytes(1460), 14600);
        assert_eq!(InitialWindow::Rfc6928.bytes(536), 5360);
        assert_eq!(InitialWindow::Rfc6928.bytes(9000), 18000);
        assert_eq!(InitialWindow::Segments(1).bytes(512), 512);
    }

    #[test]
    fn presets_by_name() {
        for name in TcpConfig::PRESETS {
            assert!(TcpConfig::preset(name).is_some(), "{name}");
        }
        assert!(TcpConfig::preset("bbr").is_none());
        assert_eq!(
            TcpConfig::vanilla_4_3bsd().congestion,
            CongestionAlgorithm::None
        );
    }

    #[test]
    fn overrides_fixed_window_decrease_and_karn() {
        let mut c = TcpConfig::sack();
        let o = Overrides {
            cc: Some(CongestionName::Fixed),
            karn: Some(false),
            ..Overrides::default()
        };
        o.apply(&mut c).unwrap();
        assert_eq!(c.congestion, CongestionAlgorithm::Fixed);
        assert!(!c.rtt.karn);
        // d = 1 (no reduction) is accepted; above 1 or 0 is not, and the error says why.
        let mut c = TcpConfig::newreno();
        let d = |v: f64| Overrides {
            decrease: Some(v),
            ..Overrides::default()
        };
        d(1.0).apply(&mut c).unwrap();
        assert!(matches!(c.congestion, CongestionAlgorithm::Aimd(a) if a.decrease == 1.0));
        for bad in [0.0, 1.5, f64::NAN] {
            let e = d(bad).apply(&mut c).unwrap_err();
            assert_eq!(e.field, "decrease");
            assert!(e.message.contains("must be in (0, 1]"), "{e}");
        }
    }
    #[test]
    fn adaptive_increase_takes_a_loss_rate_and_applies_to_aimd_only() {
        let a = |v: f64| Overrides {
            adaptive_increase: Some(v),
            ..Overrides::default()
        };
        let mut c = TcpConfig::newreno();
        a(0.01).apply(&mut c).unwrap();
        assert!(matches!(
            c.congestion,
            CongestionAlgorithm::Aimd(x) if x.adaptive_increase
                == Some(crate::cc::AdaptiveIncrease { target_loss: 0.01 })
        ));
        for bad in [0.0, 0.6, -0.1, f64::NAN] {
            let e = a(bad).apply(&mut c).unwrap_err();
            assert_eq!(e.field, "adaptive_increase");
            assert!(e.message.contains("must be in (0, 0.5]"), "{e}");
        }
        let e = Overrides {
            cc: Some(CongestionName::Cubic),
            ..a(0.01)
        }
        .apply(&mut TcpConfig::newreno())
        .unwrap_err();
        assert_eq!(e.field, "adaptive_increase");
    }
    /// The `linux` preset: Linux 6.x's defaults where the engine models them (each line of
    /// `TcpConfig::linux` names its sysctl or constant).
    #[test]
    fn the_linux_preset_has_linux_6_defaults() {
        let c = TcpConfig::preset("linux").unwrap();
        assert!(matches!(c.congestion, CongestionAlgorithm::Cubic(_)));
        assert_eq!(c.loss_detection, LossDetection::RackTlp);
        assert_eq!(c.window_reduction, WindowReduction::Prr);
        assert_eq!(c.hystart, HyStart::Classic);
        assert!(c.undo && c.frto && c.sack && c.dsack && c.timestamps && c.window_scale);
        assert_eq!(c.recovery, RecoveryAlgorithm::Sack);
        assert_eq!(c.initial_window, InitialWindow::Rfc6928);
        assert_eq!(c.rtt.min_rto, Duration::from_millis(200));
        assert_eq!(c.rtt.initial_rto, Duration::from_secs(1));
        assert_eq!(c.rtt.max_rto, Duration::from_secs(120));
        assert_eq!(c.ack.delayed_ack, Duration::from_millis(40));
        assert_eq!((c.max_retransmits, c.max_syn_retransmits), (15, 6));
        assert!(c.idle_restart && c.limited_transmit && !c.ecn);
        // `linux_bbr` is the same with BBR v1.
        let b = TcpConfig::preset("linux_bbr").unwrap();
        assert!(matches!(b.congestion, CongestionAlgorithm::Bbr(_)));
        assert_eq!(
            TcpConfig {
                congestion: c.congestion.clone(),
                ..b
            },
            c
        );
    }

    #[test]
    fn every_preset_but_linux_halves_and_the_override_selects_prr() {
        for name in TcpConfig::PRESETS
            .iter()
            .filter(|n| !n.starts_with("linux"))
        {
            let c = TcpConfig::preset(name).unwrap();
            assert_eq!(c.window_reduction, WindowReduction::Halve, "{name}");
            assert_eq!(c.loss_detection, LossDetection::DupAck, "{name}");
            assert!(!c.undo && !c.frto, "{name}");
        }
        let mut c = TcpConfig::sack();
        Overrides {
            window_reduction: Some(WindowReduction::Prr),
            ..Overrides::default()
        }
        .apply(&mut c)
        .unwrap();
        assert_eq!(c.window_reduction, WindowReduction::Prr);
        // Not given: kept.
        Overrides::default().apply(&mut c).unwrap();
        assert_eq!(c.window_reduction, WindowReduction::Prr);
    }
    #[test]
    fn names_parse_back_and_unknown_ones_say_what_is_accepted() {
        fn round_trip<T>(all: &[T])
        where
            T: Copy + PartialEq + core::fmt::Debug + core::fmt::Display,
            T: core::str::FromStr<Err = OverrideError>,
        {
            for v in all {
                assert_eq!(v.to_string().parse::<T>(), Ok(*v));
            }
        }
        use RecoveryAlgorithm as R;
        round_trip(&[R::TimeoutOnly, R::Tahoe, R::Reno, R::NewReno, R::Sack]);
        round_trip(&[RttEstimatorName::Jacobson, RttEstimatorName::Rfc793]);
        use CongestionName as C;
        round_trip(&[C::None, C::Fixed, C::Aimd, C::Cubic, C::Dctcp, C::DecBit]);
        round_trip(&[SsthreshBase::Window, SsthreshBase::FlightSize]);
        round_trip(&[EcnEcho::Latched, EcnEcho::PerPacket]);
        round_trip(&[WindowReduction::Halve, WindowReduction::Prr]);
        assert_eq!(WindowReduction::NAMES, ["halve", "prr"]);
        round_trip(&[
            LossDetection::DupAck,
            LossDetection::Rack,
            LossDetection::RackTlp,
        ]);
        assert_eq!(LossDetection::NAMES, ["dupack", "rack", "rack-tlp"]);
        let e = "rate_halving".parse::<WindowReduction>().unwrap_err();
        assert_eq!(
            e.message,
            "window_reduction = \"rate_halving\": expected one of halve, prr"
        );
        assert_eq!(R::NAMES.len(), 5);
        assert_eq!(
            C::NAMES,
            ["none", "fixed", "aimd", "cubic", "dctcp", "dec_bit", "bbr", "bbr3"]
        );
        assert_eq!("reno".parse::<C>(), Ok(C::Aimd));
        assert_eq!(
            "flight".parse::<SsthreshBase>(),
            Ok(SsthreshBase::FlightSize)
        );
        let e = "fast".parse::<R>().unwrap_err();
        assert_eq!(e.field, "recovery");
        assert_eq!(
            e.message,
            "recovery = \"fast\": expected one of timeout_only, tahoe, reno, newreno, sack"
        );
        let e = "Cubic".parse::<C>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "cc = \"Cubic\": expected one of none, fixed, aimd, cubic, dctcp, dec_bit, bbr, bbr3"
        );
    }

    #[test]
    fn typed_overrides_apply_as_the_names_did() {
        let o = Overrides {
            rtt_estimator: Some(RttEstimatorName::Rfc793),
            recovery: Some(RecoveryAlgorithm::Sack),
            cc: Some(CongestionName::Aimd),
            ssthresh_base: Some(SsthreshBase::Window),
            ..Overrides::default()
        };
        let mut c = TcpConfig::vanilla_4_3bsd();
        o.apply(&mut c).unwrap();
        assert!(matches!(
            c.rtt.algorithm,
            crate::rtt::RttAlgorithm::Rfc793 { alpha, beta } if alpha == 0.9 && beta == 2.0
        ));
        assert_eq!((c.recovery, c.sack), (RecoveryAlgorithm::Sack, true));
        let CongestionAlgorithm::Aimd(a) = c.congestion else {
            panic!("{:?}", c.congestion)
        };
        assert_eq!(a.ssthresh_base, SsthreshBase::Window);
        // Naming the current estimator or AIMD keeps their parameters.
        let mut c = TcpConfig::tahoe();
        Overrides {
            rto_k: Some(3),
            decrease: Some(0.875),
            ..Overrides::default()
        }
        .apply(&mut c)
        .unwrap();
        Overrides {
            rtt_estimator: Some(RttEstimatorName::Jacobson),
            cc: Some(CongestionName::Aimd),
            ..Overrides::default()
        }
        .apply(&mut c)
        .unwrap();
        assert_eq!(c.rtt.algorithm, crate::rtt::RttAlgorithm::Jacobson { k: 3 });
        assert!(matches!(c.congestion, CongestionAlgorithm::Aimd(a) if a.decrease == 0.875));
    }

    #[test]
    fn overrides_out_of_range_are_errors_naming_the_field_never_clamped() {
        let cases: Vec<(Overrides, &str, &str)> = vec![
            (
                Overrides { recv_buffer_bytes: Some(0), ..Overrides::default() },
                "recv_buffer_bytes",
                "recv_buffer_bytes = 0: expected 1 to 1073741824 bytes",
            ),
            (
                Overrides { send_buffer_bytes: Some(0), ..Overrides::default() },
                "send_buffer_bytes",
                "send_buffer_bytes = 0: expected 1 to 1073741824 bytes",
            ),
            (
                Overrides { rto_min_ms: Some(f64::NAN), ..Overrides::default() },
                "rto_min_ms",
                "rto_min_ms = NaN: expected 0.001 to 10000000 ms",
            ),
            (
                Overrides { rto_min_ms: Some(0.0), ..Overrides::default() },
                "rto_min_ms",
                "rto_min_ms = 0: expected 0.001 to 10000000 ms",
            ),
            (
                Overrides { delayed_ack_ms: Some(-200.0), ..Overrides::default() },
                "delayed_ack_ms",
                "delayed_ack_ms = -200: expected 0 to 10000000 ms",
            ),
            (
                Overrides { rto_max_ms: Some(100.0), rto_min_ms: Some(200.0), ..Overrides::default() },
                "rto_max_ms",
                "rto_max_ms: the maximum RTO (100 ms) is below the minimum (200 ms)",
            ),
            (
                Overrides { dupack_threshold: Some(0), ..Overrides::default() },
                "dupack_threshold",
                "dupack_threshold = 0: expected 1 to 65535 duplicate ACKs",
            ),
            (
                Overrides { initial_window_segments: Some(0), ..Overrides::default() },
                "initial_window_segments",
                "initial_window_segments = 0: expected 1 to 65535 segments",
            ),
            (
                Overrides { cc: Some(CongestionName::Cubic), abc: Some(2), ..Overrides::default() },
                "abc",
                "abc: applies to cc = \"aimd\" only (decrease, increase, adaptive_increase, abc, ssthresh_base, multiplicative_increase)",
            ),
        ];
        for (o, field, message) in cases {
            let e = o.apply(&mut TcpConfig::newreno()).unwrap_err();
            assert_eq!((e.field, e.message.as_str()), (field, message));
        }
    }

    #[test]
    fn every_listed_range_is_the_one_checked_and_its_error_states_it() {
        let o = Overrides::default;
        // One value just outside each numeric field's range, in the order of `ranges()`.
        #[rustfmt::skip]
        let cases: Vec<(Overrides, &str)> = vec![
            (Overrides { mss: Some(MIN_MSS - 1), ..o() }, "63"),
            (Overrides { send_buffer_bytes: Some(0), ..o() }, "0"),
            (Overrides { recv_buffer_bytes: Some((1 << 30) + 1), ..o() }, "1073741825"),
            (Overrides { initial_window_segments: Some(65536), ..o() }, "65536"),
            (Overrides { initial_ssthresh_bytes: Some(0), ..o() }, "0"),
            (Overrides { rto_k: Some(65), ..o() }, "65"),
            (Overrides { rfc793_alpha: Some(1.0), ..o() }, "1"),
            (Overrides { rfc793_beta: Some(0.5), ..o() }, "0.5"),
            (Overrides { rto_min_ms: Some(0.0009), ..o() }, "0.0009"),
            (Overrides { rto_max_ms: Some(1e8), ..o() }, "100000000"),
            (Overrides { rto_initial_ms: Some(-1.0), ..o() }, "-1"),
            (Overrides { clock_granularity_ms: Some(1e5), ..o() }, "100000"),
            (Overrides { ack_every: Some(0), ..o() }, "0"),
            (Overrides { delayed_ack_ms: Some(f64::NAN), ..o() }, "NaN"),
            (Overrides { pacing_burst_ms: Some(1001.0), ..o() }, "1001"),
            (Overrides { decrease: Some(0.0), ..o() }, "0"),
            (Overrides { increase: Some(-1.0), ..o() }, "-1"),
            (Overrides { adaptive_increase: Some(0.6), ..o() }, "0.6"),
            (Overrides { multiplicative_increase: Some(1.0), ..o() }, "1"),
            (Overrides { abc: Some(65536), ..o() }, "65536"),
            (Overrides { dupack_threshold: Some(0), ..o() }, "0"),
            (Overrides { max_retransmits: Some(1_000_001), ..o() }, "1000001"),
            (Overrides { time_wait_ms: Some(-0.5), ..o() }, "-0.5"),
            (Overrides { invalid_ack_interval_ms: Some(2e7), ..o() }, "20000000"),
            (Overrides { user_timeout_ms: Some(f64::INFINITY), ..o() }, "inf"),
        ];
        let ranges: Vec<_> = Overrides::ranges().collect();
        assert_eq!(ranges.len(), cases.len());
        for (r, (o, v)) in ranges.into_iter().zip(cases) {
            let verb = match r.bounds {
                Bounds::Closed => "expected",
                Bounds::LeftOpen | Bounds::RightOpen => "must be in",
                Bounds::AboveAtMost => "must be",
            };
            let e = o.apply(&mut TcpConfig::newreno()).unwrap_err();
            assert_eq!(e.field, r.field);
            assert_eq!(e.message, format!("{} = {v}: {verb} {r}", r.field));
        }
        let shown: Vec<String> = Overrides::ranges()
            .map(|r| format!("{}: {r}", r.field))
            .collect();
        assert_eq!(shown[0], "mss: 64 to 65495 bytes");
        assert_eq!(shown[6], "rfc793_alpha: [0, 1)");
        assert_eq!(shown[17], "adaptive_increase: (0, 0.5] (a loss rate)");
        assert_eq!(shown[18], "multiplicative_increase: above 1, at most 1000");
    }
}

/// Field overrides on top of a preset, as scenario files and command-line flags spell them.
/// Every field is optional; `apply` changes only those given. The algorithms are chosen by
/// typed names ([`RttEstimatorName`], [`RecoveryAlgorithm`], [`CongestionName`],
/// [`SsthreshBase`]), which parse with `FromStr` and, with the `serde` feature, deserialize
/// from the same spellings.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Deserialize, serde::Serialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Overrides {
    /// [`TcpConfig::mss`]: 64 to 65495 bytes.
    pub mss: Option<u16>,
    /// [`TcpConfig::send_buffer_bytes`]: 1 to 2^30 bytes.
    pub send_buffer_bytes: Option<usize>,
    /// [`TcpConfig::recv_buffer_bytes`]: 1 to 2^30 bytes.
    pub recv_buffer_bytes: Option<usize>,
    /// Initial window in segments, 1 to 65535, or "rfc3390" / "rfc6928" via
    /// `initial_window_rfc`.
    pub initial_window_segments: Option<u32>,
    /// 3390 or 6928: the initial window of that RFC. Applied after
    /// `initial_window_segments`, so it wins when both are given.
    pub initial_window_rfc: Option<u32>,
    /// [`TcpConfig::initial_ssthresh`]: 1 to 2^32 - 1 bytes.
    pub initial_ssthresh_bytes: Option<u32>,
    /// "jacobson" or "rfc793". Switching estimator sets the new one's defaults (k = 4;
    /// alpha 0.9, beta 2); naming the current one changes nothing.
    pub rtt_estimator: Option<RttEstimatorName>,
    /// k of `rto = srtt + k * rttvar` (Jacobson), 1 to 64; selects Jacobson's estimator.
    pub rto_k: Option<u32>,
    /// RFC 793 smoothing factor alpha, in [0, 1); selects the RFC 793 estimator.
    pub rfc793_alpha: Option<f64>,
    /// RFC 793 delay variance factor beta, 1 to 1000; selects the RFC 793 estimator.
    pub rfc793_beta: Option<f64>,
    /// Lower bound of the RTO, 0.001 to 10^7 ms.
    pub rto_min_ms: Option<f64>,
    /// Upper bound of the RTO, 0.001 to 10^7 ms, and not below the lower bound.
    pub rto_max_ms: Option<f64>,
    /// RTO before the first sample, 0.001 to 10^7 ms.
    pub rto_initial_ms: Option<f64>,
    /// Clock granularity G of Jacobson's estimator, 0 to 10^4 ms.
    pub clock_granularity_ms: Option<f64>,
    /// Karn's algorithm on (true) or off (4.3BSD as released in 1986).
    pub karn: Option<bool>,
    /// ACK every N full-sized segments, 1 to 64.
    pub ack_every: Option<u32>,
    /// Longest delay of an ACK, 0 to 10^7 ms; 0 disables delayed ACKs.
    pub delayed_ack_ms: Option<f64>,
    /// [`AckPolicy::quickack`]: acknowledge every segment at once.
    pub quickack: Option<bool>,
    /// Delayed ACKs at the ticks of a `delayed_ack_ms` clock (4.3BSD's tcp_fasttimo).
    pub delayed_ack_clock: Option<bool>,
    /// [`TcpConfig::nagle`].
    pub nagle: Option<bool>,
    /// [`TcpConfig::sack`].
    pub sack: Option<bool>,
    /// [`TcpConfig::ecn`].
    pub ecn: Option<bool>,
    /// [`TcpConfig::ecn_echo`]: "latched" or "per_packet".
    pub ecn_echo: Option<EcnEcho>,
    /// [`TcpConfig::timestamps`].
    pub timestamps: Option<bool>,
    /// [`TcpConfig::window_scale`].
    pub window_scale: Option<bool>,
    /// "timeout_only", "tahoe", "reno", "newreno", "sack" ("sack" also turns SACK on).
    pub recovery: Option<RecoveryAlgorithm>,
    /// [`TcpConfig::window_reduction`]: "halve" or "prr" (RFC 9937).
    pub window_reduction: Option<WindowReduction>,
    /// [`TcpConfig::loss_detection`]: "dupack", "rack" or "rack-tlp" (RFC 8985).
    pub loss_detection: Option<LossDetection>,
    /// [`TcpConfig::dsack`]: report duplicates with D-SACK blocks (RFC 2883).
    pub dsack: Option<bool>,
    /// [`TcpConfig::undo`].
    pub undo: Option<bool>,
    /// [`TcpConfig::frto`].
    pub frto: Option<bool>,
    /// [`TcpConfig::rto_restart_on_head_resend`].
    pub rto_restart_on_head_resend: Option<bool>,
    /// [`TcpConfig::hystart`]: "off", "plus_plus" (RFC 9406) or "classic".
    pub hystart: Option<HyStart>,
    /// [`TcpConfig::pacing`]: "off" or "linux".
    pub pacing: Option<Pacing>,
    /// [`TcpConfig::pacing_burst`], in milliseconds, 0 to 1000.
    pub pacing_burst_ms: Option<f64>,
    /// "none", "fixed" (cwnd = the initial window, always), "aimd" (alias "reno"), "cubic".
    /// "aimd" keeps the current AIMD parameters when AIMD is already selected; otherwise,
    /// and always for "cubic", the controller starts from its defaults.
    pub cc: Option<CongestionName>,
    /// AIMD multiplicative decrease d, in (0, 1] (0.5; Jain's 0.875; 1 = no reduction on
    /// loss). This and the next four fields apply to cc = "aimd" only; with another
    /// controller they are an error.
    pub decrease: Option<f64>,
    /// AIMD additive increase u in segments per RTT, 0 to 10^6.
    pub increase: Option<f64>,
    /// Adapt the additive increase (at most `increase`) toward this loss rate, in
    /// congestion signals per segment, in (0, 0.5]: the second-order loop of seed 000
    /// (16 Nov 1987), [`AdaptiveIncrease`].
    pub adaptive_increase: Option<f64>,
    /// Multiplicative increase factor per RTT instead of additive (the "mistake" of seed
    /// 000, 11 Feb 1988); must be above 1, at most 1000.
    pub multiplicative_increase: Option<f64>,
    /// RFC 3465 byte counting limit L in segments, 0 to 65535 (0 turns ABC off).
    pub abc: Option<u32>,
    /// "window" (the 1990 diff: min(snd_wnd, cwnd)/2) or "flight" (RFC 5681).
    pub ssthresh_base: Option<SsthreshBase>,
    /// [`TcpConfig::dupack_threshold`]: 1 to 65535 duplicate ACKs.
    pub dupack_threshold: Option<u32>,
    /// [`TcpConfig::limited_transmit`].
    pub limited_transmit: Option<bool>,
    /// [`TcpConfig::max_retransmits`]: 0 to 10^6.
    pub max_retransmits: Option<u32>,
    /// [`TcpConfig::time_wait`]: 0 to 10^7 ms.
    pub time_wait_ms: Option<f64>,
    /// [`TcpConfig::header_prediction`].
    pub header_prediction: Option<bool>,
    /// [`TcpConfig::idle_restart`].
    pub idle_restart: Option<bool>,
    /// Least time between ACKs for invalid segments without data, 0 to 10^7 ms (0: no
    /// limit).
    pub invalid_ack_interval_ms: Option<f64>,
    /// RFC 5482 user timeout, 0 to 10^7 ms (0: none).
    pub user_timeout_ms: Option<f64>,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1000.0)
}

/// An override that cannot be applied: the field, as spelled in scenario files (the
/// command-line flag is the same name in kebab case), and a message that starts with
/// `field = value` and says what is accepted.
#[derive(Clone, Debug, PartialEq)]
pub struct OverrideError {
    /// The field, as scenario files spell it (e.g. `"rto_min_ms"`).
    pub field: &'static str,
    /// The whole message, starting with `field = value` (or `field:`).
    pub message: String,
}

impl core::fmt::Display for OverrideError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OverrideError {}

fn bad(field: &'static str, message: String) -> OverrideError {
    OverrideError { field, message }
}

/// How a numeric override's range is bounded, and so how its error and `docs/SCENARIOS.md`
/// state it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bounds {
    /// `lo <= v <= hi`, stated "64 to 65495 bytes" (the error: "expected 64 to 65495 bytes").
    Closed,
    /// `lo <= v < hi`, stated "[0, 1)" (the error: "must be in [0, 1)").
    RightOpen,
    /// `lo < v <= hi`, stated "(0, 1]" (the error: "must be in (0, 1]").
    LeftOpen,
    /// `lo < v <= hi` as [`LeftOpen`](Self::LeftOpen), stated in words: "above 1, at most
    /// 1000" (the error: "must be above 1, at most 1000").
    AboveAtMost,
}

/// The range of one numeric [`Overrides`] field: what [`Overrides::apply`] accepts and what
/// its error says when a value is outside. [`Overrides::ranges`] lists them all; the
/// `Display` form is the one `docs/SCENARIOS.md` prints, e.g. `64 to 65495 bytes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OverrideRange {
    /// The field, as scenario files spell it (e.g. `"mss"`).
    pub field: &'static str,
    /// The lower bound (every bound is exact as an `f64`, whatever the field's type).
    pub lo: f64,
    /// The upper bound.
    pub hi: f64,
    /// Which bounds are accepted, and the words for them.
    pub bounds: Bounds,
    /// The unit (`"ms"`, `"bytes"`), or `""` for a plain number.
    pub unit: &'static str,
}

impl core::fmt::Display for OverrideRange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let (lo, hi) = (self.lo, self.hi);
        match self.bounds {
            Bounds::Closed => write!(f, "{lo} to {hi}")?,
            Bounds::RightOpen => write!(f, "[{lo}, {hi})")?,
            Bounds::LeftOpen => write!(f, "({lo}, {hi}]")?,
            Bounds::AboveAtMost => write!(f, "above {lo}, at most {hi}")?,
        }
        match (self.unit, self.bounds) {
            ("", _) => Ok(()),
            (unit, Bounds::Closed) => write!(f, " {unit}"),
            (unit, _) => write!(f, " ({unit})"),
        }
    }
}

/// `Ok(v)` when `r` accepts `v` (NaN never is), else the error stating `r`. `lo` and `hi` are
/// `r`'s bounds in the field's own type.
fn check<T>(r: &OverrideRange, v: T, lo: T, hi: T) -> Result<T, OverrideError>
where
    T: PartialOrd + Copy + core::fmt::Display,
{
    let ok = match r.bounds {
        Bounds::Closed => v >= lo && v <= hi,
        Bounds::RightOpen => v >= lo && v < hi,
        Bounds::LeftOpen | Bounds::AboveAtMost => v > lo && v <= hi,
    };
    if ok {
        return Ok(v);
    }
    // The message prints `r`'s f64 bounds: the same digits as the field's type prints.
    debug_assert_eq!(
        (lo.to_string(), hi.to_string()),
        (r.lo.to_string(), r.hi.to_string())
    );
    let verb = match r.bounds {
        Bounds::Closed => "expected",
        Bounds::RightOpen | Bounds::LeftOpen => "must be in",
        Bounds::AboveAtMost => "must be",
    };
    Err(bad(r.field, format!("{} = {v}: {verb} {r}", r.field)))
}

/// The longest time any timer field may be set to (about 2.8 hours): longer is a typo, and
/// nothing past it can be told apart in a run anyway.
const MAX_TIMER_MS: f64 = 1e7;

/// Buffers are allocated when a connection opens: bound them so a typo in a scenario is an
/// error, not an allocation failure. 1 GiB is the largest window RFC 7323 §2.3 can advertise
/// (shift 14).
const MAX_BUFFER: usize = 1 << 30;

/// One step of [`Overrides::apply`]: a field's check and setter, with the field's range when
/// it is numeric.
struct Row {
    range: Option<OverrideRange>,
    apply: fn(&Overrides, &mut TcpConfig) -> Result<(), OverrideError>,
}

/// A numeric field: `field: type, Bounds(lo, hi), "unit", |c, v| setter`. The setter runs
/// with the value once it is in range.
macro_rules! range {
    ($field:ident: $t:ty, $bounds:ident($lo:expr, $hi:expr), $unit:literal,
     |$c:ident, $v:ident| $set:expr) => {{
        const R: OverrideRange = OverrideRange {
            field: stringify!($field),
            lo: $lo as f64,
            hi: $hi as f64,
            bounds: Bounds::$bounds,
            unit: $unit,
        };
        Row {
            range: Some(R),
            apply: |o, $c| {
                if let Some(v) = o.$field {
                    let $v: $t = check(&R, v, $lo, $hi)?;
                    $set;
                }
                Ok(())
            },
        }
    }};
}

/// A field any value of which is accepted: `field, |c, v| setter`.
macro_rules! set {
    ($field:ident, |$c:ident, $v:ident| $set:expr) => {
        Row {
            range: None,
            apply: |o, $c| {
                if let Some($v) = o.$field {
                    $set;
                }
                Ok(())
            },
        }
    };
}

/// Explicit code: a field that is not a range, or a check across fields.
const fn step(apply: fn(&Overrides, &mut TcpConfig) -> Result<(), OverrideError>) -> Row {
    Row { range: None, apply }
}

/// Every field of [`Overrides`], in the order `apply` takes them (which is the order of its
/// checks, so the first bad field is the one an error names). The order matters where one
/// setter changes what another set: `initial_window_rfc` wins over `initial_window_segments`;
/// `rto_k` and `rfc793_*` come after `rtt_estimator`, `recovery = "sack"` after `sack` and
/// `cc` after `ecn` and `ecn_echo` (DCTCP's defaults give way to theirs); the AIMD fields
/// come after `cc`, which makes the `AimdConfig` they change.
const ROWS: &[Row] = &[
    // An MSS must leave room for the 40 bytes of IPv4 and TCP headers in 65,535.
    range!(mss: u16, Closed(MIN_MSS, 65495), "bytes", |c, v| c.mss = v),
    range!(send_buffer_bytes: usize, Closed(1, MAX_BUFFER), "bytes",
        |c, v| c.send_buffer_bytes = v),
    range!(recv_buffer_bytes: usize, Closed(1, MAX_BUFFER), "bytes",
        |c, v| c.recv_buffer_bytes = v),
    range!(initial_window_segments: u32, Closed(1, 65535), "segments",
        |c, v| c.initial_window = InitialWindow::Segments(v)),
    step(Overrides::apply_initial_window_rfc),
    range!(initial_ssthresh_bytes: u32, Closed(1, u32::MAX), "bytes",
        |c, v| c.initial_ssthresh = v),
    step(Overrides::apply_rtt_estimator),
    range!(rto_k: u32, Closed(1, 64), "", |c, v| c.rtt.algorithm = RttAlgorithm::Jacobson { k: v }),
    range!(rfc793_alpha: f64, RightOpen(0.0, 1.0), "", |c, v| set_rfc793(c, Some(v), None)),
    range!(rfc793_beta: f64, Closed(1.0, 1000.0), "", |c, v| set_rfc793(c, None, Some(v))),
    // A zero RTO would fire again at the instant it is armed: at least a microsecond.
    range!(rto_min_ms: f64, Closed(0.001, MAX_TIMER_MS), "ms", |c, v| c.rtt.min_rto = ms(v)),
    range!(rto_max_ms: f64, Closed(0.001, MAX_TIMER_MS), "ms", |c, v| c.rtt.max_rto = ms(v)),
    step(Overrides::check_rto_order),
    range!(rto_initial_ms: f64, Closed(0.001, MAX_TIMER_MS), "ms",
        |c, v| c.rtt.initial_rto = ms(v)),
    range!(clock_granularity_ms: f64, Closed(0.0, 1e4), "ms", |c, v| c.rtt.granularity = ms(v)),
    set!(karn, |c, v| c.rtt.karn = v),
    range!(ack_every: u32, Closed(1, 64), "segments", |c, v| c.ack.segments_per_ack = v),
    range!(delayed_ack_ms: f64, Closed(0.0, MAX_TIMER_MS), "ms",
        |c, v| c.ack.delayed_ack = ms(v)),
    set!(delayed_ack_clock, |c, v| c.ack.delayed_ack_clock = v),
    set!(quickack, |c, v| c.ack.quickack = v),
    set!(nagle, |c, v| c.nagle = v),
    set!(sack, |c, v| c.sack = v),
    set!(ecn, |c, v| c.ecn = v),
    set!(ecn_echo, |c, v| c.ecn_echo = v),
    set!(timestamps, |c, v| c.timestamps = v),
    set!(window_scale, |c, v| c.window_scale = v),
    set!(recovery, |c, v| {
        c.recovery = v;
        c.sack |= v == RecoveryAlgorithm::Sack;
    }),
    set!(window_reduction, |c, v| c.window_reduction = v),
    set!(loss_detection, |c, v| c.loss_detection = v),
    set!(dsack, |c, v| c.dsack = v),
    set!(undo, |c, v| c.undo = v),
    set!(frto, |c, v| c.frto = v),
    set!(rto_restart_on_head_resend, |c, v| c
        .rto_restart_on_head_resend =
        v),
    set!(hystart, |c, v| c.hystart = v),
    set!(pacing, |c, v| c.pacing = v),
    range!(pacing_burst_ms: f64, Closed(0.0, 1000.0), "ms", |c, v| c.pacing_burst = ms(v)),
    step(Overrides::apply_cc),
    step(Overrides::check_aimd_only),
    // d = 1 keeps the window through a loss: loss taken as non-congestive (the reading of
    // the 30 Apr 1990 SACK claim, seeds 000 and 001).
    range!(decrease: f64, LeftOpen(0.0, 1.0), "", |c, v| with_aimd(c, |a| a.decrease = v)),
    range!(increase: f64, Closed(0.0, 1e6), "segments per RTT",
        |c, v| with_aimd(c, |a| a.increase_segments = v)),
    range!(adaptive_increase: f64, LeftOpen(0.0, 0.5), "a loss rate",
        |c, v| with_aimd(c, |a| a.adaptive_increase = Some(AdaptiveIncrease { target_loss: v }))),
    range!(multiplicative_increase: f64, AboveAtMost(1.0, 1000.0), "",
        |c, v| with_aimd(c, |a| a.multiplicative_increase = Some(v))),
    range!(abc: u32, Closed(0, 65535), "segments",
        |c, v| with_aimd(c, |a| a.abc_limit_segments = (v > 0).then_some(v))),
    set!(ssthresh_base, |c, v| with_aimd(c, |a| a.ssthresh_base = v)),
    range!(dupack_threshold: u32, Closed(1, 65535), "duplicate ACKs",
        |c, v| c.dupack_threshold = v),
    set!(limited_transmit, |c, v| c.limited_transmit = v),
    range!(max_retransmits: u32, Closed(0, 1_000_000), "", |c, v| c.max_retransmits = v),
    range!(time_wait_ms: f64, Closed(0.0, MAX_TIMER_MS), "ms", |c, v| c.time_wait = ms(v)),
    set!(header_prediction, |c, v| c.header_prediction = v),
    set!(idle_restart, |c, v| c.idle_restart = v),
    range!(invalid_ack_interval_ms: f64, Closed(0.0, MAX_TIMER_MS), "ms",
        |c, v| c.invalid_ack_interval = ms(v)),
    range!(user_timeout_ms: f64, Closed(0.0, MAX_TIMER_MS), "ms",
        |c, v| c.user_timeout = (v > 0.0).then(|| ms(v))),
];

/// Sets RFC 793's estimator with the given parameters, the others kept from the current one
/// (or its defaults, alpha 0.9 and beta 2, when another estimator is selected).
fn set_rfc793(c: &mut TcpConfig, alpha: Option<f64>, beta: Option<f64>) {
    let (a, b) = match c.rtt.algorithm {
        RttAlgorithm::Rfc793 { alpha, beta } => (alpha, beta),
        _ => (0.9, 2.0),
    };
    c.rtt.algorithm = RttAlgorithm::Rfc793 {
        alpha: alpha.unwrap_or(a),
        beta: beta.unwrap_or(b),
    };
}

/// Changes the AIMD parameters. `check_aimd_only` has made sure AIMD is the controller when
/// an AIMD field is given.
fn with_aimd(c: &mut TcpConfig, f: impl FnOnce(&mut AimdConfig)) {
    if let CongestionAlgorithm::Aimd(a) = &mut c.congestion {
        f(a);
    }
}

impl Overrides {
    /// Applies the given fields; errors name the field and the values it accepts. Every
    /// numeric field has a range (in its doc, in [`ranges`](Self::ranges) and in
    /// `docs/SCENARIOS.md`); a value outside it is an error, never clamped in silence.
    pub fn apply(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        ROWS.iter().try_for_each(|row| (row.apply)(self, c))
    }

    /// The range of every numeric field, in the order `apply` checks them.
    pub fn ranges() -> impl Iterator<Item = &'static OverrideRange> {
        ROWS.iter().filter_map(|row| row.range.as_ref())
    }

    fn apply_initial_window_rfc(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        match self.initial_window_rfc {
            None => {}
            Some(3390) => c.initial_window = InitialWindow::Rfc3390,
            Some(6928) => c.initial_window = InitialWindow::Rfc6928,
            Some(v) => {
                return Err(bad(
                    "initial_window_rfc",
                    format!("initial_window_rfc = {v}: expected 3390 or 6928"),
                ))
            }
        }
        Ok(())
    }

    fn apply_rtt_estimator(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        match (self.rtt_estimator, c.rtt.algorithm) {
            (None, _)
            | (Some(RttEstimatorName::Jacobson), RttAlgorithm::Jacobson { .. })
            | (Some(RttEstimatorName::Rfc793), RttAlgorithm::Rfc793 { .. }) => {}
            (Some(RttEstimatorName::Jacobson), _) => {
                c.rtt.algorithm = RttAlgorithm::Jacobson { k: 4 };
            }
            (Some(RttEstimatorName::Rfc793), _) => {
                c.rtt.algorithm = RttAlgorithm::Rfc793 {
                    alpha: 0.9,
                    beta: 2.0,
                };
            }
        }
        Ok(())
    }

    fn check_rto_order(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        if c.rtt.max_rto < c.rtt.min_rto {
            let field = if self.rto_max_ms.is_some() {
                "rto_max_ms"
            } else {
                "rto_min_ms"
            };
            return Err(bad(
                field,
                format!(
                    "{field}: the maximum RTO ({} ms) is below the minimum ({} ms)",
                    c.rtt.max_rto.as_secs_f64() * 1e3,
                    c.rtt.min_rto.as_secs_f64() * 1e3
                ),
            ));
        }
        Ok(())
    }

    fn apply_cc(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        match self.cc {
            None => {}
            Some(CongestionName::None) => c.congestion = CongestionAlgorithm::None,
            Some(CongestionName::Fixed) => c.congestion = CongestionAlgorithm::Fixed,
            // Naming AIMD again keeps its parameters.
            Some(CongestionName::Aimd) if matches!(c.congestion, CongestionAlgorithm::Aimd(_)) => {}
            Some(CongestionName::Aimd) => {
                c.congestion = CongestionAlgorithm::Aimd(AimdConfig::default());
            }
            Some(CongestionName::Cubic) => {
                c.congestion = CongestionAlgorithm::Cubic(CubicConfig::default())
            }
            // RFC 8257 §3: DCTCP needs ECN and the per-packet echo at both ends; so does
            // the DEC-bit sender. An explicit `ecn` or `ecn_echo` in the same overrides
            // still wins (applied before, and kept here).
            Some(n @ (CongestionName::Dctcp | CongestionName::DecBit)) => {
                c.congestion = if n == CongestionName::Dctcp {
                    CongestionAlgorithm::Dctcp(Default::default())
                } else {
                    CongestionAlgorithm::DecBit(Default::default())
                };
                c.ecn = self.ecn.unwrap_or(true);
                c.ecn_echo = self.ecn_echo.unwrap_or(EcnEcho::PerPacket);
            }
            Some(CongestionName::Bbr) => {
                c.congestion = CongestionAlgorithm::Bbr(Default::default())
            }
            Some(CongestionName::Bbr3) => {
                c.congestion = CongestionAlgorithm::Bbr3(Default::default())
            }
        }
        Ok(())
    }

    /// The AIMD fields apply to cc = "aimd" only: the first one given names the error.
    fn check_aimd_only(&self, c: &mut TcpConfig) -> Result<(), OverrideError> {
        let aimd_field = [
            (self.decrease.is_some(), "decrease"),
            (self.increase.is_some(), "increase"),
            (self.adaptive_increase.is_some(), "adaptive_increase"),
            (
                self.multiplicative_increase.is_some(),
                "multiplicative_increase",
            ),
            (self.abc.is_some(), "abc"),
            (self.ssthresh_base.is_some(), "ssthresh_base"),
        ]
        .into_iter()
        .find_map(|(set, name)| set.then_some(name));
        match aimd_field {
            Some(field) if !matches!(c.congestion, CongestionAlgorithm::Aimd(_)) => Err(bad(
                field,
                format!("{field}: applies to cc = \"aimd\" only (decrease, increase, adaptive_increase, abc, ssthresh_base, multiplicative_increase)"),
            )),
            _ => Ok(()),
        }
    }
}
