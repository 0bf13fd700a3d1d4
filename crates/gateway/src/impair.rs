//! Path impairments: loss, bit errors, bursty loss, scripted drops, reordering and
//! duplication, applied to each packet that crosses a link.
//!
//! Every random model owns its own ChaCha8 stream derived from the scenario seed, and draws
//! the same number of values for every packet whatever the other models decide. So the
//! loss pattern of a seed does not change when, say, duplication is switched on, and a
//! sweep over one parameter keeps the others' randomness fixed.
//!
//! Order of the pipeline, first match wins: scripted drops (they also count every packet),
//! Bernoulli loss, Gilbert-Elliott loss, bit errors (the packet is delivered with one bit
//! flipped, and is neither duplicated nor delayed), then duplication and reordering of the
//! packets that arrive intact.

use crate::error::{check_non_negative, check_prob, ms_to_duration, ConfigError};
use crate::packet::PacketLike;
use crate::qdisc::rng_for;
use ackclock_wire::packet::parse_ipv4_tcp_deferred;
use ackclock_wire::{Duration, Instant};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Stream numbers of the impairment RNGs (see `qdisc::rng_for`).
mod streams {
    pub const LOSS: u64 = 0x20;
    pub const BER: u64 = 0x21;
    pub const GILBERT: u64 = 0x22;
    pub const REORDER: u64 = 0x23;
    pub const DUPLICATE: u64 = 0x24;
}

/// The impairments of one link direction, as written in a scenario file:
///
/// ```toml
/// loss_prob = 0.01
/// ber = 1e-7
/// gilbert = { p_good_to_bad = 0.01, r_bad_to_good = 0.3, loss_in_bad = 1.0 }
/// reorder = { prob = 0.01, delay_ms = 5.0 }
/// duplicate_prob = 0.001
/// scripted = [
///   { kind = "data_segment", flow = 0, nth = [5] },
///   { kind = "seq", seq = 14601, times = 1 },
///   { kind = "packets", nth = [10, 11] },
///   { kind = "outage", from_ms = 2000.0, to_ms = 2500.0 },
/// ]
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImpairmentsConfig {
    /// Independent (Bernoulli) loss probability per packet.
    #[serde(default)]
    pub loss_prob: Option<f64>,
    /// Bit error rate: each bit is flipped independently with this probability, so a packet
    /// of `len` bytes is damaged with probability `1 - (1 - ber)^(8 len)`.
    #[serde(default)]
    pub ber: Option<f64>,
    /// Bursty loss: the Gilbert-Elliott two-state channel.
    #[serde(default)]
    pub gilbert: Option<GilbertElliottConfig>,
    /// Deterministic drops, checked before every random model (see [`ScriptedDrop`]).
    #[serde(default)]
    pub scripted: Vec<ScriptedDrop>,
    /// Reordering: some packets held back so that later ones overtake them.
    #[serde(default)]
    pub reorder: Option<ReorderConfig>,
    /// Probability that a delivered packet is delivered twice.
    #[serde(default)]
    pub duplicate_prob: Option<f64>,
}

/// The Gilbert-Elliott two-state channel (Gilbert 1960, Elliott 1963). In the usual
/// notation (and tc-netem's `gemodel p r 1-h 1-k`): `p` = P(good -> bad), `r` = P(bad ->
/// good), `1-k` = loss probability in the good state, `1-h` = loss probability in the bad
/// state. The fields name the loss probabilities directly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottConfig {
    /// `p`: probability, per packet, of moving from the good state to the bad one.
    pub p_good_to_bad: f64,
    /// `r`: probability, per packet, of moving from the bad state back to the good one;
    /// the mean sojourn in the bad state (a loss burst, when `loss_in_bad` is 1) is `1/r`
    /// packets.
    pub r_bad_to_good: f64,
    /// `1 - k`.
    #[serde(default)]
    pub loss_in_good: f64,
    /// `1 - h`; 1 gives the simple Gilbert model (every packet in the bad state is lost).
    #[serde(default = "one")]
    pub loss_in_bad: f64,
}

fn one() -> f64 {
    1.0
}

impl GilbertElliottConfig {
    /// The stationary loss rate: with `pi_bad = p / (p + r)`,
    /// `loss = (1 - pi_bad) loss_in_good + pi_bad loss_in_bad`.
    pub fn stationary_loss(&self) -> f64 {
        let (p, r) = (self.p_good_to_bad, self.r_bad_to_good);
        if p + r == 0.0 {
            return self.loss_in_good;
        }
        let bad = p / (p + r);
        (1.0 - bad) * self.loss_in_good + bad * self.loss_in_bad
    }

    /// Checks that all four fields are probabilities, in `[0, 1]`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const C: &str = "impairments.gilbert";
        check_prob(C, "p_good_to_bad", self.p_good_to_bad)?;
        check_prob(C, "r_bad_to_good", self.r_bad_to_good)?;
        check_prob(C, "loss_in_good", self.loss_in_good)?;
        check_prob(C, "loss_in_bad", self.loss_in_bad)
    }
}

/// Reordering: with probability `prob` a packet is held back by `delay_ms`, so packets sent
/// less than `delay_ms` after it overtake it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderConfig {
    /// Probability that a packet delivered intact is held back.
    pub prob: f64,
    /// How long a held packet is delayed beyond the link's own delay, in milliseconds.
    pub delay_ms: f64,
}

/// A deterministic drop, for mechanism tests with exact expectations.
///
/// Flows: a flow is a direction-sensitive TCP 4-tuple (source address and port, destination
/// address and port). Flows are numbered 0, 1, ... in the order in which their *first data
/// segment* (TCP payload > 0) crosses this link, so on a link that also carries the ACKs of
/// the reverse direction, flow 0 is still the first flow that sends data. `src_port` and
/// `dst_port` select flows by port instead (all given selectors must match).
///
/// Counting is 1-based and includes retransmissions: `nth = [5]` drops the fifth data
/// segment of the flow to cross the link, whatever its sequence number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ScriptedDrop {
    /// Drop the `nth` data segments (payload > 0) of the selected flow(s).
    DataSegment {
        /// Only this flow, numbered from 0 in the order of first data segments.
        #[serde(default)]
        flow: Option<usize>,
        /// Only segments from this TCP source port.
        #[serde(default)]
        src_port: Option<u16>,
        /// Only segments to this TCP destination port.
        #[serde(default)]
        dst_port: Option<u16>,
        /// Which data segments to drop, counted from 1 within each selected flow,
        /// retransmissions included.
        nth: Vec<u64>,
    },
    /// Drop segments occupying sequence space (data, SYN or FIN) whose sequence number is
    /// `seq`, at most `times` times (every time when absent): `times = 1` drops the first
    /// transmission and lets the retransmission through.
    Seq {
        /// The sequence number to drop, as on the wire (not relative to the ISN).
        seq: u32,
        /// Most drops this rule makes; absent, every matching segment is dropped.
        #[serde(default)]
        times: Option<u32>,
        /// Only this flow, numbered from 0 in the order of first data segments.
        #[serde(default)]
        flow: Option<usize>,
        /// Only segments from this TCP source port.
        #[serde(default)]
        src_port: Option<u16>,
        /// Only segments to this TCP destination port.
        #[serde(default)]
        dst_port: Option<u16>,
    },
    /// Drop the `nth` packets (any protocol, 1-based) offered to this link's impairments.
    Packets {
        /// Which packets to drop, counted from 1 over every packet the link is offered.
        nth: Vec<u64>,
    },
    /// Drop everything in `[from_ms, to_ms)`: a link outage.
    Outage {
        /// Start of the outage, in milliseconds after the driver's time zero
        /// ([`Instant::ZERO`]).
        from_ms: f64,
        /// End of the outage (excluded), in milliseconds after the driver's time zero.
        to_ms: f64,
    },
}

impl ImpairmentsConfig {
    /// Checks that every probability lies in `[0, 1]`, the reorder delay and the outage
    /// times are finite and at least zero, and no `nth` list holds 0 (counting starts at
    /// 1); [`Impairments::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const C: &str = "impairments";
        if let Some(p) = self.loss_prob {
            check_prob(C, "loss_prob", p)?;
        }
        if let Some(b) = self.ber {
            check_prob(C, "ber", b)?;
        }
        if let Some(g) = &self.gilbert {
            g.validate()?;
        }
        if let Some(r) = &self.reorder {
            check_prob("impairments.reorder", "prob", r.prob)?;
            check_non_negative("impairments.reorder", "delay_ms", r.delay_ms)?;
        }
        if let Some(p) = self.duplicate_prob {
            check_prob(C, "duplicate_prob", p)?;
        }
        for s in &self.scripted {
            match s {
                ScriptedDrop::DataSegment { nth, .. } | ScriptedDrop::Packets { nth } => {
                    if nth.contains(&0) {
                        return Err(ConfigError::new(
                            "impairments.scripted",
                            "nth",
                            "contains 0; counting starts at 1 (the first packet is 1)".into(),
                        ));
                    }
                }
                ScriptedDrop::Outage { from_ms, to_ms } => {
                    check_non_negative("impairments.scripted", "from_ms", *from_ms)?;
                    check_non_negative("impairments.scripted", "to_ms", *to_ms)?;
                }
                ScriptedDrop::Seq { .. } => {}
            }
        }
        Ok(())
    }

    /// Whether nothing is configured (the driver can skip the pipeline).
    pub fn is_empty(&self) -> bool {
        self == &ImpairmentsConfig::default()
    }

    /// Builds the pipeline: [`Impairments::new`].
    pub fn build(&self, seed: u64) -> Result<Impairments, ConfigError> {
        Impairments::new(self, seed)
    }
}

/// The same as [`ImpairmentsConfig`].
pub type ImpairmentConfig = ImpairmentsConfig;

/// Why an impairment dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LossCause {
    /// A [`ScriptedDrop`] rule.
    Scripted,
    /// Independent (Bernoulli) loss, `loss_prob`.
    Random,
    /// The Gilbert-Elliott channel, `gilbert`.
    GilbertElliott,
}

/// What happens to a packet on the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The packet is lost on the link: do not deliver it.
    Drop(LossCause),
    /// Deliver after the link's own delay plus `extra_delay`; if `duplicate`, deliver a copy
    /// too (at the same time).
    Deliver {
        /// Delay beyond the link's: the reorder hold ([`ReorderConfig::delay_ms`]) or zero.
        extra_delay: Duration,
        /// Whether to deliver a second copy too.
        duplicate: bool,
    },
    /// Deliver as usual: one bit has been flipped in the packet's bytes (bit `i` is bit
    /// `7 - i % 8` of byte `i / 8`, i.e. bits counted from the most significant), so the
    /// receiver's checksum rejects it. `bit` is `None` when the packet type has no bytes;
    /// the driver should then count it as lost.
    Corrupt {
        /// Index of the flipped bit, from the most significant bit of byte 0; `None` when
        /// the packet has no bytes.
        bit: Option<usize>,
    },
}

/// Independent loss with probability `p`.
#[derive(Clone, Debug)]
pub struct Bernoulli {
    p: f64,
    rng: ChaCha8Rng,
}

impl Bernoulli {
    /// Trials that succeed with probability `p`, drawing from `rng`.
    pub fn new(p: f64, rng: ChaCha8Rng) -> Self {
        Bernoulli { p, rng }
    }
    /// One trial (always one draw).
    pub fn trial(&mut self) -> bool {
        self.rng.random::<f64>() < self.p
    }
}

/// Independent bit errors at rate `ber`.
#[derive(Clone, Debug)]
pub struct BitErrors {
    ber: f64,
    rng: ChaCha8Rng,
}

impl BitErrors {
    /// Bit errors at rate `ber` per bit, drawing from `rng`.
    pub fn new(ber: f64, rng: ChaCha8Rng) -> Self {
        BitErrors { ber, rng }
    }

    /// P(at least one of `8 len` bits is in error) = 1 - (1 - ber)^(8 len), computed as
    /// `-expm1(8 len ln(1 - ber))` so tiny rates keep their precision.
    pub fn packet_error_prob(ber: f64, len: usize) -> f64 {
        if ber >= 1.0 {
            return if len > 0 { 1.0 } else { 0.0 };
        }
        -((8 * len) as f64 * (-ber).ln_1p()).exp_m1()
    }

    /// Whether a packet of `len` bytes is damaged, and if so which bit to flip. Always two
    /// draws. A packet with several bit errors is still damaged; one flip is enough for the
    /// receiver's checksum to notice (any single-bit error changes the RFC 1071 sum).
    pub fn draw(&mut self, len: usize) -> Option<usize> {
        let u = self.rng.random::<f64>();
        let bit = self.rng.random::<u64>();
        if len == 0 || u >= Self::packet_error_prob(self.ber, len) {
            return None;
        }
        Some((bit % (8 * len as u64)) as usize)
    }
}

/// The Gilbert-Elliott channel. Starts in the good state; each packet is lost with the
/// current state's loss probability, then the state moves on (two draws per packet).
#[derive(Clone, Debug)]
pub struct GilbertElliott {
    cfg: GilbertElliottConfig,
    bad: bool,
    rng: ChaCha8Rng,
}

impl GilbertElliott {
    /// The channel in the good state, drawing from `rng`.
    pub fn new(cfg: &GilbertElliottConfig, rng: ChaCha8Rng) -> Self {
        GilbertElliott {
            cfg: cfg.clone(),
            bad: false,
            rng,
        }
    }
    /// Whether the channel is in the bad state: the state the next packet sees.
    pub fn is_bad(&self) -> bool {
        self.bad
    }
    /// One packet: whether it is lost, at the current state's loss probability; then the
    /// state moves on. Always two draws.
    pub fn trial(&mut self) -> bool {
        let u_loss = self.rng.random::<f64>();
        let u_move = self.rng.random::<f64>();
        let lost = if self.bad {
            u_loss < self.cfg.loss_in_bad
        } else {
            u_loss < self.cfg.loss_in_good
        };
        self.bad = if self.bad {
            u_move >= self.cfg.r_bad_to_good
        } else {
            u_move < self.cfg.p_good_to_bad
        };
        lost
    }
}

/// Counters of one [`Impairments`] pipeline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImpairmentStats {
    /// Packets offered to [`Impairments::apply`].
    pub packets: u64,
    /// Packets dropped by a [`ScriptedDrop`] rule.
    pub dropped_scripted: u64,
    /// Packets dropped by independent (Bernoulli) loss.
    pub dropped_random: u64,
    /// Packets dropped by the Gilbert-Elliott channel.
    pub dropped_gilbert: u64,
    /// Packets damaged by bit errors ([`Verdict::Corrupt`]), whether or not they had bytes
    /// to flip.
    pub corrupted: u64,
    /// Delivered packets that were delivered twice.
    pub duplicated: u64,
    /// Delivered packets that were held back by the reorder delay.
    pub reordered: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlowKey {
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
}

#[derive(Clone, Copy, Debug, Default)]
struct Selector {
    flow: Option<usize>,
    src_port: Option<u16>,
    dst_port: Option<u16>,
}

#[derive(Clone, Debug)]
enum Rule {
    DataSegment {
        sel: Selector,
        nth: Vec<u64>,
    },
    Seq {
        sel: Selector,
        seq: u32,
        left: Option<u32>,
    },
    Packets {
        nth: Vec<u64>,
    },
    Outage {
        from: Instant,
        to: Instant,
    },
}

/// What the scripted rules need to know about a TCP packet.
struct TcpInfo {
    key: FlowKey,
    /// Flow number (order of first data segment), if the flow has sent data.
    flow: Option<usize>,
    seq: u32,
    seq_len: u32,
    /// 1-based data-segment count of this flow, for data segments.
    data_no: Option<u64>,
}

#[derive(Clone, Debug)]
struct Scripted {
    rules: Vec<Rule>,
    needs_tcp: bool,
    /// Flows in order of their first data segment, with their data-segment counts.
    flows: Vec<(FlowKey, u64)>,
    packet_no: u64,
}

impl Scripted {
    fn new(cfg: &[ScriptedDrop]) -> Self {
        let sorted = |v: &Vec<u64>| {
            let mut v = v.clone();
            v.sort_unstable();
            v.dedup();
            v
        };
        let rules: Vec<Rule> = cfg
            .iter()
            .map(|s| match s {
                ScriptedDrop::DataSegment {
                    flow,
                    src_port,
                    dst_port,
                    nth,
                } => Rule::DataSegment {
                    sel: Selector {
                        flow: *flow,
                        src_port: *src_port,
                        dst_port: *dst_port,
                    },
                    nth: sorted(nth),
                },
                ScriptedDrop::Seq {
                    seq,
                    times,
                    flow,
                    src_port,
                    dst_port,
                } => Rule::Seq {
                    sel: Selector {
                        flow: *flow,
                        src_port: *src_port,
                        dst_port: *dst_port,
                    },
                    seq: *seq,
                    left: *times,
                },
                ScriptedDrop::Packets { nth } => Rule::Packets { nth: sorted(nth) },
                ScriptedDrop::Outage { from_ms, to_ms } => Rule::Outage {
                    from: Instant::ZERO + ms_to_duration(*from_ms),
                    to: Instant::ZERO + ms_to_duration(*to_ms),
                },
            })
            .collect();
        let needs_tcp = rules
            .iter()
            .any(|r| matches!(r, Rule::DataSegment { .. } | Rule::Seq { .. }));
        Scripted {
            rules,
            needs_tcp,
            flows: Vec::with_capacity(16),
            packet_no: 0,
        }
    }

    fn tcp_info(&mut self, bytes: &[u8]) -> Option<TcpInfo> {
        let p = parse_ipv4_tcp_deferred(bytes).ok()?;
        let key = FlowKey {
            src: u32::from(p.ip.src()),
            dst: u32::from(p.ip.dst()),
            sport: p.tcp.src_port(),
            dport: p.tcp.dst_port(),
        };
        let mut flow = self.flows.iter().position(|(k, _)| *k == key);
        let mut data_no = None;
        if !p.tcp.payload().is_empty() {
            let i = match flow {
                Some(i) => i,
                None => {
                    self.flows.push((key, 0));
                    self.flows.len() - 1
                }
            };
            self.flows[i].1 += 1;
            data_no = Some(self.flows[i].1);
            flow = Some(i);
        }
        Some(TcpInfo {
            key,
            flow,
            seq: p.tcp.seq(),
            seq_len: p.tcp.seq_len(),
            data_no,
        })
    }

    fn selects(sel: &Selector, t: &TcpInfo) -> bool {
        sel.flow.is_none_or(|f| t.flow == Some(f))
            && sel.src_port.is_none_or(|p| t.key.sport == p)
            && sel.dst_port.is_none_or(|p| t.key.dport == p)
    }

    /// Counts the packet and says whether a rule drops it. The count-based rules are all
    /// evaluated first; a `times`-limited `seq` rule spends one of its drops only on a packet
    /// nothing else drops (and only the first such rule spends), so which packets are dropped
    /// never depends on the order the rules are written in.
    fn check<P: PacketLike>(&mut self, now: Instant, pkt: &mut P) -> bool {
        self.packet_no += 1;
        let tcp = if self.needs_tcp {
            pkt.bytes_mut().and_then(|b| self.tcp_info(b))
        } else {
            None
        };
        let n = self.packet_no;
        let mut drop = false;
        for r in &self.rules {
            drop |= match r {
                Rule::Packets { nth } => nth.binary_search(&n).is_ok(),
                Rule::Outage { from, to } => now >= *from && now < *to,
                Rule::DataSegment { sel, nth } => tcp.as_ref().is_some_and(|t| {
                    t.data_no
                        .is_some_and(|k| Self::selects(sel, t) && nth.binary_search(&k).is_ok())
                }),
                Rule::Seq { .. } => false,
            };
        }
        if drop {
            return true;
        }
        let Some(t) = tcp.as_ref() else {
            return false;
        };
        for r in &mut self.rules {
            if let Rule::Seq { sel, seq, left } = r {
                if left.is_none_or(|l| l > 0)
                    && t.seq_len > 0
                    && t.seq == *seq
                    && Self::selects(sel, t)
                {
                    if let Some(l) = left {
                        *l -= 1;
                    }
                    return true;
                }
            }
        }
        false
    }
}

/// The impairment pipeline of one link direction. See the module docs for the order.
#[derive(Clone, Debug)]
pub struct Impairments {
    scripted: Option<Scripted>,
    loss: Option<Bernoulli>,
    gilbert: Option<GilbertElliott>,
    ber: Option<BitErrors>,
    duplicate: Option<Bernoulli>,
    reorder: Option<(Bernoulli, Duration)>,
    stats: ImpairmentStats,
}

impl Impairments {
    /// Builds the pipeline; `seed` keys every model's RNG stream.
    pub fn new(cfg: &ImpairmentsConfig, seed: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Impairments {
            scripted: (!cfg.scripted.is_empty()).then(|| Scripted::new(&cfg.scripted)),
            loss: cfg
                .loss_prob
                .map(|p| Bernoulli::new(p, rng_for(seed, streams::LOSS))),
            gilbert: cfg
                .gilbert
                .as_ref()
                .map(|g| GilbertElliott::new(g, rng_for(seed, streams::GILBERT))),
            ber: cfg
                .ber
                .map(|b| BitErrors::new(b, rng_for(seed, streams::BER))),
            duplicate: cfg
                .duplicate_prob
                .map(|p| Bernoulli::new(p, rng_for(seed, streams::DUPLICATE))),
            reorder: cfg.reorder.as_ref().map(|r| {
                (
                    Bernoulli::new(r.prob, rng_for(seed, streams::REORDER)),
                    ms_to_duration(r.delay_ms),
                )
            }),
            stats: ImpairmentStats::default(),
        })
    }

    /// No impairment at all.
    pub fn none() -> Self {
        Impairments {
            scripted: None,
            loss: None,
            gilbert: None,
            ber: None,
            duplicate: None,
            reorder: None,
            stats: ImpairmentStats::default(),
        }
    }

    /// Decides the fate of one packet (and flips its bit when it is corrupted).
    pub fn apply<P: PacketLike>(&mut self, now: Instant, pkt: &mut P) -> Verdict {
        self.stats.packets += 1;
        // Every model draws for every packet (see the module docs).
        let scripted = self.scripted.as_mut().is_some_and(|s| s.check(now, pkt));
        let random = self.loss.as_mut().is_some_and(Bernoulli::trial);
        let gilbert = self.gilbert.as_mut().is_some_and(GilbertElliott::trial);
        let len = pkt.len_bytes();
        let corrupt = self.ber.as_mut().and_then(|b| b.draw(len));
        let duplicate = self.duplicate.as_mut().is_some_and(Bernoulli::trial);
        let reorder = self
            .reorder
            .as_mut()
            .and_then(|(b, d)| b.trial().then_some(*d));

        if scripted {
            self.stats.dropped_scripted += 1;
            return Verdict::Drop(LossCause::Scripted);
        }
        if random {
            self.stats.dropped_random += 1;
            return Verdict::Drop(LossCause::Random);
        }
        if gilbert {
            self.stats.dropped_gilbert += 1;
            return Verdict::Drop(LossCause::GilbertElliott);
        }
        if let Some(bit) = corrupt {
            self.stats.corrupted += 1;
            let flipped = pkt.bytes_mut().filter(|b| !b.is_empty()).map(|b| {
                let bit = bit % (8 * b.len());
                b[bit / 8] ^= 0x80 >> (bit % 8);
                bit
            });
            return Verdict::Corrupt { bit: flipped };
        }
        self.stats.duplicated += u64::from(duplicate);
        self.stats.reordered += u64::from(reorder.is_some());
        Verdict::Deliver {
            extra_delay: reorder.unwrap_or(Duration::ZERO),
            duplicate,
        }
    }

    /// The counters since the pipeline was built or [`reset_stats`](Self::reset_stats).
    pub fn stats(&self) -> &ImpairmentStats {
        &self.stats
    }

    /// Zeroes the counters; the models' states and the scripted counts go on.
    pub fn reset_stats(&mut self) {
        self.stats = ImpairmentStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::testing::tcp_packet;
    use crate::packet::TestPacket;

    fn deliver() -> Verdict {
        Verdict::Deliver {
            extra_delay: Duration::ZERO,
            duplicate: false,
        }
    }

    #[test]
    fn bit_errors_flip_exactly_one_bit_at_the_right_rate() {
        let ber = 1e-5;
        let cfg = ImpairmentsConfig {
            ber: Some(ber),
            ..Default::default()
        };
        let mut imp = Impairments::new(&cfg, 1).unwrap();
        let original = tcp_packet(1000, 80, 1, 960, 0); // 1000 bytes
        assert_eq!(original.len(), 1000);
        let n = 40_000;
        let mut corrupted = 0;
        for _ in 0..n {
            let mut p = original.clone();
            match imp.apply(Instant::ZERO, &mut p) {
                Verdict::Corrupt { bit: Some(bit) } => {
                    corrupted += 1;
                    let diff: u32 = p
                        .iter()
                        .zip(&original)
                        .map(|(a, b)| (a ^ b).count_ones())
                        .sum();
                    assert_eq!(diff, 1);
                    assert_eq!(p[bit / 8] ^ original[bit / 8], 0x80 >> (bit % 8));
                    assert!(
                        ackclock_wire::parse_ipv4_tcp(&p).is_err(),
                        "checksum catches it"
                    );
                }
                v => {
                    assert_eq!(v, deliver());
                    assert_eq!(p, original);
                }
            }
        }
        let pe = 1.0 - (1.0 - ber).powi(8000);
        assert!((BitErrors::packet_error_prob(ber, 1000) - pe).abs() < 1e-12);
        let mean = n as f64 * pe;
        let sd = (n as f64 * pe * (1.0 - pe)).sqrt();
        assert!(
            ((corrupted as f64) - mean).abs() < 4.0 * sd,
            "{corrupted} vs {mean:.0} +- {sd:.0}"
        );
        assert_eq!(imp.stats().corrupted, corrupted);
    }

    #[test]
    fn gilbert_elliott_stationary_loss_and_burst_length() {
        let g = GilbertElliottConfig {
            p_good_to_bad: 0.01,
            r_bad_to_good: 0.25,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        };
        let want = g.stationary_loss();
        assert!((want - 0.01 / 0.26).abs() < 1e-12);
        let mut ge = GilbertElliott::new(&g, rng_for(9, 1));
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = ge.trial();
            lost += u64::from(l);
            bursts += u64::from(l && !prev);
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        assert!((rate - want).abs() / want < 0.05, "{rate} vs {want}");
        // Loss bursts are the bad-state sojourns: geometric with mean 1/r = 4 packets.
        let mean_burst = lost as f64 / bursts as f64;
        assert!((mean_burst - 4.0).abs() < 0.2, "{mean_burst}");

        // With partial losses in both states.
        let g2 = GilbertElliottConfig {
            p_good_to_bad: 0.05,
            r_bad_to_good: 0.2,
            loss_in_good: 0.01,
            loss_in_bad: 0.5,
        };
        let mut ge = GilbertElliott::new(&g2, rng_for(10, 1));
        let lost = (0..n).filter(|_| ge.trial()).count();
        let rate = lost as f64 / n as f64;
        let want = 0.8 * 0.01 + 0.2 * 0.5;
        assert!((g2.stationary_loss() - want).abs() < 1e-12);
        assert!((rate - want).abs() / want < 0.03, "{rate} vs {want}");
    }

    #[test]
    fn bernoulli_loss_rate_and_seed_reproducibility() {
        let cfg = ImpairmentsConfig {
            loss_prob: Some(0.01),
            ..Default::default()
        };
        let run = |seed, extra: bool| {
            let mut c = cfg.clone();
            if extra {
                c.duplicate_prob = Some(0.5);
                c.reorder = Some(ReorderConfig {
                    prob: 0.5,
                    delay_ms: 1.0,
                });
            }
            let mut imp = Impairments::new(&c, seed).unwrap();
            (0..100_000u64)
                .filter(|&i| {
                    matches!(
                        imp.apply(Instant::ZERO, &mut TestPacket::new(i, 0, 100)),
                        Verdict::Drop(LossCause::Random)
                    )
                })
                .collect::<Vec<_>>()
        };
        let a = run(5, false);
        // 100,000 trials at 1 %: mean 1000, standard deviation 31.5.
        assert!((a.len() as f64 - 1000.0).abs() < 4.0 * 31.5, "{}", a.len());
        assert_eq!(a, run(5, false), "same seed, same losses");
        assert_ne!(a, run(6, false));
        assert_eq!(a, run(5, true), "other models do not shift the loss stream");
    }

    #[test]
    fn reorder_and_duplicate() {
        let cfg = ImpairmentsConfig {
            reorder: Some(ReorderConfig {
                prob: 0.1,
                delay_ms: 3.0,
            }),
            duplicate_prob: Some(0.05),
            ..Default::default()
        };
        let mut imp = Impairments::new(&cfg, 3).unwrap();
        let (mut held, mut dup) = (0, 0);
        let n = 100_000;
        for i in 0..n {
            match imp.apply(Instant::ZERO, &mut TestPacket::new(i, 0, 100)) {
                Verdict::Deliver {
                    extra_delay,
                    duplicate,
                } => {
                    assert!(
                        extra_delay == Duration::ZERO || extra_delay == Duration::from_millis(3)
                    );
                    held += u64::from(extra_delay > Duration::ZERO);
                    dup += u64::from(duplicate);
                }
                v => panic!("{v:?}"),
            }
        }
        assert!((held as f64 / n as f64 - 0.1).abs() < 0.005);
        assert!((dup as f64 / n as f64 - 0.05).abs() < 0.004);
        assert_eq!(imp.stats().reordered, held);
        assert_eq!(imp.stats().duplicated, dup);
    }

    #[test]
    fn scripted_drops_hit_exactly_the_chosen_segments() {
        let cfg = ImpairmentsConfig {
            scripted: vec![
                // Flow 1 = the second flow to send data: its 2nd and 4th data segments.
                ScriptedDrop::DataSegment {
                    flow: Some(1),
                    src_port: None,
                    dst_port: None,
                    nth: vec![4, 2],
                },
                // Port 3000's segment with seq 3001, first transmission only.
                ScriptedDrop::Seq {
                    seq: 3001,
                    times: Some(1),
                    flow: None,
                    src_port: Some(3000),
                    dst_port: None,
                },
                ScriptedDrop::Packets { nth: vec![1] },
            ],
            ..Default::default()
        };
        let mut imp = Impairments::new(&cfg, 0).unwrap();
        let mut dropped = Vec::new();
        // Packet 1: a pure ACK of flow B (dropped by `packets`); B has sent no data yet, so
        // it is not numbered.
        let mut pkts = vec![("ackB", tcp_packet(2000, 80, 1, 0, 0))];
        // Flow A (port 3000) sends first, so it is flow 0; B (port 2000) is flow 1.
        for k in 0..5u32 {
            pkts.push(("A", tcp_packet(3000, 80, 1 + 1000 * k, 1000, 0)));
            pkts.push(("B", tcp_packet(2000, 80, 1 + 1000 * k, 1000, 0)));
        }
        // A retransmits seq 3001: not dropped again (times = 1).
        pkts.push(("A-rtx", tcp_packet(3000, 80, 3001, 1000, 0)));
        for (i, (name, mut p)) in pkts.into_iter().enumerate() {
            if let Verdict::Drop(LossCause::Scripted) = imp.apply(Instant::ZERO, &mut p) {
                let seq = ackclock_wire::parse_ipv4_tcp(&p).unwrap().tcp.seq();
                dropped.push((i + 1, name, seq));
            }
        }
        // Order on the link: 1 ackB, then A and B alternate (A at even, B at odd numbers).
        assert_eq!(
            dropped,
            vec![
                (1, "ackB", 1),
                (5, "B", 1001),
                (8, "A", 3001),
                (9, "B", 3001)
            ]
        );
        assert_eq!(imp.stats().dropped_scripted, 4);
    }

    #[test]
    fn outage_drops_a_time_window() {
        let cfg = ImpairmentsConfig {
            scripted: vec![ScriptedDrop::Outage {
                from_ms: 10.0,
                to_ms: 20.0,
            }],
            ..Default::default()
        };
        let mut imp = Impairments::new(&cfg, 0).unwrap();
        let at = |ms: u64| Instant::from_nanos(ms * 1_000_000);
        let mut p = TestPacket::new(0, 0, 10);
        assert_eq!(imp.apply(at(9), &mut p), deliver());
        assert_eq!(
            imp.apply(at(10), &mut p),
            Verdict::Drop(LossCause::Scripted)
        );
        assert_eq!(
            imp.apply(at(19), &mut p),
            Verdict::Drop(LossCause::Scripted)
        );
        assert_eq!(imp.apply(at(20), &mut p), deliver());
    }

    #[test]
    fn bad_probabilities_are_errors() {
        let cfg = ImpairmentsConfig {
            loss_prob: Some(1.5),
            ..Default::default()
        };
        let e = Impairments::new(&cfg, 0).unwrap_err();
        assert_eq!(e.field, "loss_prob");
        let cfg = ImpairmentsConfig {
            scripted: vec![ScriptedDrop::Packets { nth: vec![0] }],
            ..Default::default()
        };
        assert_eq!(Impairments::new(&cfg, 0).unwrap_err().field, "nth");
    }
}
