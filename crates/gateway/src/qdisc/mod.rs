//! Queue disciplines: what a gateway does with packets that arrive faster than its output
//! link can send them.
//!
//! All of them sit behind one object-safe trait, [`Qdisc`], and are built from one
//! serializable [`QdiscConfig`]. Time is passed in; nothing here reads a clock, does I/O or
//! allocates per packet (every queue is preallocated at build time to its limit).
//!
//! | kind | reference | what happens on congestion |
//! |---|---|---|
//! | [`DropTail`] | - | the arriving packet is refused when the queue is full |
//! | [`RandomDrop`] | Mankin 1990; the "random" gateways of seed 003 (Nov 1987); Hashem 1989 | a uniformly random queued packet (or the arriving one) is dropped; optional Early Random Drop |
//! | [`Red`] | Floyd & Jacobson 1993 | probabilistic early drop/mark driven by an EWMA of the queue length |
//! | [`Drr`] | Shreedhar & Varghese 1995 | per-flow FIFOs served by deficit round robin; the longest flow loses on overflow |
//! | [`Codel`] | RFC 8289 | drop/mark at dequeue when the sojourn time stays above target for an interval |
//! | [`FqCodel`] | RFC 8290 | DRR over flows with new-flow priority, CoDel per flow |
//! | [`DecBitGateway`] | Ramakrishnan & Jain 1988 | sets the congestion bit (CE) when the regeneration-cycle average queue is at least one packet; drops only when full |

mod codel;
mod dec_bit;
mod drop_tail;
mod drr;
mod fifo;
mod fq_codel;
mod random_drop;
mod red;
mod slab;

pub use codel::{Codel, CodelConfig, CodelParams, CodelVars};
pub use dec_bit::{DecBitGateway, DecBitGatewayConfig};
pub use drop_tail::{DropTail, DropTailConfig};
pub use drr::{Drr, DrrConfig};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use random_drop::{RandomDrop, RandomDropConfig};
pub use red::{Red, RedConfig};

use crate::error::ConfigError;
use crate::packet::PacketLike;
use crate::stats::QueueStats;
use ackclock_wire::Instant;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Why a queue discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// A packet or byte limit was reached (drop-tail; the hard limit of an AQM; the
    /// longest-queue drop of DRR and FQ-CoDel).
    Overflow,
    /// The random-drop gateway's victim, chosen uniformly among the queued packets and the
    /// arriving one.
    RandomDrop,
    /// A probabilistic early drop: RED between its thresholds, or Early Random Drop.
    Early,
    /// RED's forced drop: the average queue is beyond max_th (2*max_th when gentle).
    Forced,
    /// The CoDel control law (RFC 8289), in CoDel or FQ-CoDel.
    Codel,
}

impl DropReason {
    /// The reason as reports and scenario files spell it (its serde name): `"overflow"`,
    /// `"random_drop"`, `"early"`, `"forced"`, `"codel"`.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::RandomDrop => "random_drop",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::Codel => "codel",
        }
    }
}

/// The outcome of [`Qdisc::enqueue`]. At most one packet is dropped per enqueue.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a dropped packet must be accounted for (and its buffer recycled)"]
pub enum Enqueue<P> {
    /// The arriving packet was queued (possibly ECN-marked).
    Queued,
    /// The arriving packet was refused.
    Dropped(P, DropReason),
    /// The arriving packet was queued and this packet, queued earlier, was pushed out to make
    /// room (random drop, DRR and FQ-CoDel overflow).
    Displaced(P, DropReason),
}

impl<P> Enqueue<P> {
    /// Whether the arriving packet is now in the queue.
    pub fn is_queued(&self) -> bool {
        !matches!(self, Enqueue::Dropped(..))
    }
    /// The dropped packet, whichever it was.
    pub fn into_dropped(self) -> Option<(P, DropReason)> {
        match self {
            Enqueue::Queued => None,
            Enqueue::Dropped(p, r) | Enqueue::Displaced(p, r) => Some((p, r)),
        }
    }
}

/// A queue discipline. Object-safe: the simulator and the emulator hold `Box<dyn Qdisc<P>>`.
///
/// The driver calls [`enqueue`](Self::enqueue) when a packet arrives at the gateway and
/// [`dequeue`](Self::dequeue) when the output link is free. Drops decided at dequeue time
/// (CoDel) are handed to the `drop` callback before the packet that is returned.
pub trait Qdisc<P: PacketLike>: Send {
    /// Offers a packet arriving at `now`: queued (perhaps ECN-marked), refused, or queued
    /// in place of an earlier packet pushed out. At most one packet is dropped.
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P>;
    /// The next packet for the link at `now`, or `None` when none is left to send. Packets
    /// the discipline drops on the way (CoDel's control law) go to `drop` first, with their
    /// reason; the queueing delay of the one returned is recorded in the statistics.
    fn dequeue(&mut self, now: Instant, drop: &mut dyn FnMut(P, DropReason)) -> Option<P>;
    /// Packets queued now.
    fn len_pkts(&self) -> usize;
    /// IP bytes queued now.
    fn len_bytes(&self) -> usize;
    /// Whether no packet is queued.
    fn is_empty(&self) -> bool {
        self.len_pkts() == 0
    }
    /// The counters since the discipline was built or [`reset_stats`](Self::reset_stats).
    fn stats(&self) -> &QueueStats;
    /// Forgets the statistics (not the queue), e.g. after a warm-up period.
    fn reset_stats(&mut self);
    /// The discipline's `kind`, as in [`QdiscConfig`]: `"drop_tail"`, `"red"`, ...
    fn name(&self) -> &'static str;
}

/// Any queue discipline, as written in a scenario file:
///
/// ```toml
/// [queue]
/// kind = "red"
/// limit_pkts = 60
/// min_th_pkts = 5.0
/// max_th_pkts = 15.0
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum QdiscConfig {
    /// `kind = "drop_tail"`: [`DropTail`].
    DropTail(DropTailConfig),
    /// `kind = "random_drop"`: [`RandomDrop`] (Mankin 1990; Hashem 1989).
    RandomDrop(RandomDropConfig),
    /// `kind = "red"`: [`Red`] (Floyd & Jacobson 1993).
    Red(RedConfig),
    /// `kind = "drr"`: [`Drr`] (Shreedhar & Varghese 1995).
    Drr(DrrConfig),
    /// `kind = "codel"`: [`Codel`] (RFC 8289).
    Codel(CodelConfig),
    /// `kind = "fq_codel"`: [`FqCodel`] (RFC 8290).
    FqCodel(FqCodelConfig),
    /// `kind = "dec_bit"`: [`DecBitGateway`] (Ramakrishnan & Jain 1988).
    DecBit(DecBitGatewayConfig),
}

/// The queue a link gets when the scenario names none: drop-tail, 100 packets.
pub const DEFAULT_DROP_TAIL: QdiscConfig = QdiscConfig::DropTail(DropTailConfig {
    mark_threshold_pkts: None,
    limit_pkts: Some(100),
    limit_bytes: None,
});

impl Default for QdiscConfig {
    /// [`DEFAULT_DROP_TAIL`].
    fn default() -> Self {
        DEFAULT_DROP_TAIL
    }
}

impl QdiscConfig {
    /// Checks every field; [`build`](Self::build) does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            QdiscConfig::DropTail(c) => c.validate(),
            QdiscConfig::RandomDrop(c) => c.validate(),
            QdiscConfig::Red(c) => c.validate(),
            QdiscConfig::Drr(c) => c.validate(),
            QdiscConfig::Codel(c) => c.validate(),
            QdiscConfig::FqCodel(c) => c.validate(),
            QdiscConfig::DecBit(c) => c.validate(),
        }
    }

    /// Builds the discipline. `seed` feeds its random choices (random drop, RED) and its flow
    /// hash perturbation (DRR, FQ-CoDel): same seed, same behaviour.
    pub fn build<P: PacketLike + Send + 'static>(
        &self,
        seed: u64,
    ) -> Result<Box<dyn Qdisc<P>>, ConfigError> {
        Ok(match self {
            QdiscConfig::DropTail(c) => Box::new(DropTail::new(c)?),
            QdiscConfig::RandomDrop(c) => Box::new(RandomDrop::new(c, seed)?),
            QdiscConfig::Red(c) => Box::new(Red::new(c, seed)?),
            QdiscConfig::Drr(c) => Box::new(Drr::new(c, seed)?),
            QdiscConfig::Codel(c) => Box::new(Codel::new(c)?),
            QdiscConfig::FqCodel(c) => Box::new(FqCodel::new(c, seed)?),
            QdiscConfig::DecBit(c) => Box::new(DecBitGateway::new(c)?),
        })
    }

    /// Every `kind` a scenario may name.
    pub const KINDS: &'static [&'static str] = &[
        "drop_tail",
        "random_drop",
        "red",
        "drr",
        "codel",
        "fq_codel",
        "dec_bit",
    ];

    /// The fields a `kind` accepts besides `kind` itself (`None`: no such kind). Used to
    /// switch a queue's kind, keeping the fields both kinds share (its limits) and dropping
    /// the ones the new kind does not know; a test keeps the lists equal to serde's.
    pub fn fields(kind: &str) -> Option<&'static [&'static str]> {
        Some(match kind {
            "drop_tail" => &["limit_pkts", "limit_bytes", "mark_threshold_pkts"],
            "random_drop" => &[
                "limit_pkts",
                "limit_bytes",
                "early_drop_threshold_pkts",
                "early_drop_prob",
            ],
            "red" => &[
                "limit_pkts",
                "limit_bytes",
                "min_th_pkts",
                "max_th_pkts",
                "max_p",
                "w_q",
                "gentle",
                "byte_mode",
                "mean_pkt_bytes",
                "max_pkt_bytes",
                "ecn",
                "link_rate_bps",
            ],
            "drr" => &["quantum_bytes", "buckets", "limit_pkts", "limit_bytes"],
            "codel" => &[
                "target_ms",
                "interval_ms",
                "limit_pkts",
                "limit_bytes",
                "mtu_bytes",
                "ecn",
            ],
            "fq_codel" => &[
                "buckets",
                "quantum_bytes",
                "limit_pkts",
                "limit_bytes",
                "target_ms",
                "interval_ms",
                "mtu_bytes",
                "ecn",
            ],
            "dec_bit" => &["limit_pkts", "limit_bytes", "threshold_pkts"],
            _ => return None,
        })
    }

    /// The packet and byte limits (`None`: that limit is not set).
    pub fn limits(&self) -> (Option<usize>, Option<usize>) {
        match self {
            QdiscConfig::DropTail(c) => (c.limit_pkts, c.limit_bytes),
            QdiscConfig::RandomDrop(c) => (c.limit_pkts, c.limit_bytes),
            QdiscConfig::Red(c) => (c.limit_pkts, c.limit_bytes),
            QdiscConfig::Drr(c) => (Some(c.limit_pkts), c.limit_bytes),
            QdiscConfig::Codel(c) => (c.limit_pkts, c.limit_bytes),
            QdiscConfig::FqCodel(c) => (Some(c.limit_pkts), c.limit_bytes),
            QdiscConfig::DecBit(c) => (c.limit_pkts, c.limit_bytes),
        }
    }

    /// The `kind` string.
    pub fn kind(&self) -> &'static str {
        match self {
            QdiscConfig::DropTail(_) => "drop_tail",
            QdiscConfig::RandomDrop(_) => "random_drop",
            QdiscConfig::Red(_) => "red",
            QdiscConfig::Drr(_) => "drr",
            QdiscConfig::Codel(_) => "codel",
            QdiscConfig::FqCodel(_) => "fq_codel",
            QdiscConfig::DecBit(_) => "dec_bit",
        }
    }

    /// Tells a discipline the rate of the link it feeds, when it needs it and the scenario did
    /// not say: RED's idle-time decay counts the packets the link could have sent while the
    /// queue was empty (Floyd & Jacobson 1993, Fig. 2).
    pub fn set_link_rate_if_unset(&mut self, rate_bps: u64) {
        if let QdiscConfig::Red(c) = self {
            if c.link_rate_bps.is_none() {
                c.link_rate_bps = Some(rate_bps);
            }
        }
    }
}

/// The RNG of one component: ChaCha8 keyed by the scenario seed, with a separate stream per
/// purpose, so adding one random component never shifts another's draws.
pub(crate) fn rng_for(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

/// Stream numbers (see [`rng_for`]).
pub(crate) mod streams {
    pub const RANDOM_DROP: u64 = 0x10;
    pub const RED: u64 = 0x11;
    pub const FLOW_HASH: u64 = 0x12;
}

/// A 64-bit mixer (the SplitMix64 finalizer): spreads flow ids over the buckets of the fair
/// queues, keyed by a per-instance perturbation as SFQ does (McKenney 1990).
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Which of `n` buckets a flow id falls in: [`mix64`] of the id keyed by `perturb`, scaled
/// to `0..n` by a multiply and a shift (the fair queues' hash; no division per packet).
#[inline]
pub(crate) fn flow_bucket(flow_id: u64, perturb: u64, n: usize) -> usize {
    ((u128::from(mix64(flow_id ^ perturb)) * n as u128) >> 64) as usize
}

pub(crate) fn check_limits(
    component: &'static str,
    pkts: Option<usize>,
    bytes: Option<usize>,
) -> Result<(), ConfigError> {
    if pkts.is_none() && bytes.is_none() {
        return Err(ConfigError::new(
            component,
            "limit_pkts",
            "is missing; set `limit_pkts`, `limit_bytes`, or both".into(),
        ));
    }
    if pkts == Some(0) {
        return Err(ConfigError::new(
            component,
            "limit_pkts",
            "is 0; it must be at least 1".into(),
        ));
    }
    if bytes == Some(0) {
        return Err(ConfigError::new(
            component,
            "limit_bytes",
            "is 0; it must be at least 1".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;
    use crate::packet::TestPacket;

    pub fn t_ms(ms: f64) -> Instant {
        Instant::from_nanos((ms * 1e6).round() as u64)
    }

    /// Dequeues everything at `now`, collecting drops.
    pub fn drain<Q: Qdisc<TestPacket> + ?Sized>(
        q: &mut Q,
        now: Instant,
    ) -> (Vec<TestPacket>, Vec<(TestPacket, DropReason)>) {
        let mut out = Vec::new();
        let mut drops = Vec::new();
        while let Some(p) = q.dequeue(now, &mut |p, r| drops.push((p, r))) {
            out.push(p);
        }
        (out, drops)
    }
}
