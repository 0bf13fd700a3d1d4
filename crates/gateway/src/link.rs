//! A point-to-point link: one serializer at `rate_bps` followed by a propagation delay.
//!
//! Framing: a packet occupies `ip_bytes + framing_overhead_bytes` byte-times on the wire,
//! but never fewer than `min_wire_bytes`. For 10 Mb/s Ethernet (IEEE 802.3) the overhead is
//! 38 = 14 (header) + 4 (FCS) + 8 (preamble) + 12 (the 9.6 us inter-frame gap), so a 1500-byte
//! IP packet costs the 1538 byte-times of the seeds' 24 Oct 1988 message, and the minimum is
//! 84 = a 64-byte minimum frame + 8 + 12, so a 40-byte ACK costs 84, not 78.

use crate::error::{check_at_least, check_non_negative, ms_to_duration, ConfigError};
use ackclock_wire::{Duration, Instant};
use serde::{Deserialize, Serialize};

/// Ethernet's per-packet overhead in byte-times: header 14 + FCS 4 + preamble 8 + gap 12.
pub const ETHERNET_FRAMING_BYTES: usize = 38;
/// Ethernet's minimum byte-times per packet: a 64-byte frame + preamble 8 + gap 12.
pub const ETHERNET_MIN_WIRE_BYTES: usize = 84;

/// A link, as written in a scenario file:
///
/// ```toml
/// rate_bps = 10_000_000
/// delay_ms = 0.05
/// mtu_bytes = 1500
/// framing_overhead_bytes = 38
/// min_wire_bytes = 84
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Serialization rate in bits per second.
    pub rate_bps: u64,
    /// One-way propagation delay, in milliseconds (rounded to the nanosecond when built).
    #[serde(default)]
    pub delay_ms: f64,
    /// Largest IP packet the link carries (the caller drops or refuses larger ones; see
    /// [`Link::fits_mtu`]).
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Byte-times added to each IP packet on the wire (link header, trailer, preamble, gap).
    #[serde(default)]
    pub framing_overhead_bytes: usize,
    /// Least byte-times a packet occupies, framing included (minimum frame padding).
    #[serde(default)]
    pub min_wire_bytes: usize,
}

fn default_mtu() -> usize {
    1500
}

impl LinkConfig {
    /// A bare link: no framing.
    pub fn new(rate_bps: u64, delay_ms: f64) -> Self {
        LinkConfig {
            rate_bps,
            delay_ms,
            mtu_bytes: default_mtu(),
            framing_overhead_bytes: 0,
            min_wire_bytes: 0,
        }
    }

    /// 10 Mb/s Ethernet with full framing (1538 byte-times per 1500-byte packet).
    pub fn ethernet_10mbps(delay_ms: f64) -> Self {
        LinkConfig {
            rate_bps: 10_000_000,
            delay_ms,
            mtu_bytes: 1500,
            framing_overhead_bytes: ETHERNET_FRAMING_BYTES,
            min_wire_bytes: ETHERNET_MIN_WIRE_BYTES,
        }
    }

    /// Checks a non-zero rate, a finite delay of at least zero and an MTU of at least one
    /// byte; [`Link::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rate_bps == 0 {
            return Err(ConfigError::new(
                "link",
                "rate_bps",
                "is 0; give the serialization rate in bits per second (e.g. 10_000_000)".into(),
            ));
        }
        check_non_negative("link", "delay_ms", self.delay_ms)?;
        check_at_least("link", "mtu_bytes", self.mtu_bytes, 1)
    }

    /// Byte-times an IP packet of `ip_bytes` occupies on the wire.
    #[inline]
    pub fn wire_bytes(&self, ip_bytes: usize) -> usize {
        (ip_bytes + self.framing_overhead_bytes).max(self.min_wire_bytes)
    }

    /// Time to clock `ip_bytes` (plus framing) onto the wire, in whole nanoseconds rounded up,
    /// so back-to-back packets never exceed the rate.
    pub fn serialization_time(&self, ip_bytes: usize) -> Duration {
        self.time_on_wire(self.wire_bytes(ip_bytes))
    }

    /// Time to clock `wire_bytes` byte-times (framing already added), rounded up.
    #[inline]
    fn time_on_wire(&self, wire_bytes: usize) -> Duration {
        let bits = wire_bytes as u128 * 8 * 1_000_000_000;
        let rate = u128::from(self.rate_bps.max(1));
        Duration::from_nanos(bits.div_ceil(rate).min(u128::from(u64::MAX)) as u64)
    }

    /// The propagation delay, rounded to the nearest nanosecond.
    pub fn propagation_delay(&self) -> Duration {
        ms_to_duration(self.delay_ms)
    }
}

/// Counters of one [`Link`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStats {
    /// Packets transmitted.
    pub packets: u64,
    /// IP bytes transmitted.
    pub ip_bytes: u64,
    /// Byte-times the packets occupied on the wire: framing and minimum-frame padding
    /// included ([`LinkConfig::wire_bytes`]).
    pub wire_bytes: u64,
    /// Total time the serializer was busy, in nanoseconds.
    pub busy_ns: u64,
}

/// One serializer and a propagation delay. The driver hands it a packet when it is free (or
/// earlier: a packet given while busy starts when the previous one is done) and schedules
/// the packet's arrival at the far end.
#[derive(Clone, Debug)]
pub struct Link {
    cfg: LinkConfig,
    delay: Duration,
    busy_until: Instant,
    stats: LinkStats,
}

impl Link {
    /// A link whose serializer is idle from time zero; fails when `cfg` does not
    /// [`validate`](LinkConfig::validate).
    pub fn new(cfg: &LinkConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Link {
            cfg: cfg.clone(),
            delay: cfg.propagation_delay(),
            busy_until: Instant::ZERO,
            stats: LinkStats::default(),
        })
    }

    /// The configuration the link was built from.
    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Time to clock an IP packet of `ip_bytes` (plus framing) onto the wire, rounded up to
    /// the nanosecond ([`LinkConfig::serialization_time`]).
    pub fn serialization_time(&self, ip_bytes: usize) -> Duration {
        self.cfg.serialization_time(ip_bytes)
    }

    /// The one-way propagation delay, rounded to the nearest nanosecond.
    pub fn propagation_delay(&self) -> Duration {
        self.delay
    }

    /// Whether an IP packet of `ip_bytes` is within the MTU. Nothing here fragments: the
    /// driver drops or refuses a larger packet.
    pub fn fits_mtu(&self, ip_bytes: usize) -> bool {
        ip_bytes <= self.cfg.mtu_bytes
    }

    /// When the serializer finishes its current packet (in the past when idle).
    pub fn busy_until(&self) -> Instant {
        self.busy_until
    }

    /// Whether the serializer is free at `now`.
    pub fn is_idle(&self, now: Instant) -> bool {
        now >= self.busy_until
    }

    /// Serializes a packet of `ip_bytes`, starting at `now` or when the serializer frees up,
    /// whichever is later. Returns `(departure_done, arrival)`: the serializer is busy until
    /// `departure_done` (ask the queue for the next packet then), and the last bit reaches
    /// the far end at `arrival = departure_done + delay` (store-and-forward).
    #[inline]
    pub fn transmit(&mut self, now: Instant, ip_bytes: usize) -> (Instant, Instant) {
        let start = now.max(self.busy_until);
        let wire = self.cfg.wire_bytes(ip_bytes);
        let ser = self.cfg.time_on_wire(wire);
        let done = start + ser;
        self.busy_until = done;
        self.stats.packets += 1;
        self.stats.ip_bytes += ip_bytes as u64;
        self.stats.wire_bytes += wire as u64;
        self.stats.busy_ns += ser.as_nanos();
        (done, done + self.delay)
    }

    /// The counters since the link was built or [`reset_stats`](Self::reset_stats).
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Fraction of `over` the serializer was busy.
    pub fn utilization(&self, over: Duration) -> f64 {
        if over == Duration::ZERO {
            0.0
        } else {
            self.stats.busy_ns as f64 / over.as_nanos() as f64
        }
    }

    /// Zeroes the counters (not the serializer's state), e.g. after a warm-up period.
    pub fn reset_stats(&mut self) {
        self.stats = LinkStats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ethernet_serialization_times() {
        let e = LinkConfig::ethernet_10mbps(0.0);
        // 1500 + 38 = 1538 byte-times = 12304 bits at 10 Mb/s = 1230.4 us exactly.
        assert_eq!(e.wire_bytes(1500), 1538);
        assert_eq!(e.serialization_time(1500), Duration::from_nanos(1_230_400));
        // A 40-byte ACK pads to the 84-byte minimum: 67.2 us.
        assert_eq!(e.wire_bytes(40), 84);
        assert_eq!(e.serialization_time(40), Duration::from_nanos(67_200));
        // One segment plus one ACK per segment: 1622 byte-times (seeds 000 and 001, 24 Oct 1988).
        assert_eq!(e.wire_bytes(1500) + e.wire_bytes(40), 1622);
    }

    #[test]
    fn rounding_is_up_to_the_next_nanosecond() {
        let l = LinkConfig::new(3, 0.0);
        // 8 bits at 3 b/s = 2.666...67 s.
        assert_eq!(l.serialization_time(1), Duration::from_nanos(2_666_666_667));
        let l = LinkConfig::new(230_400, 0.0); // the 1988 paper's csam-cartan link
                                               // 512 * 8 / 230400 s = 17.777... ms.
        assert_eq!(l.serialization_time(512), Duration::from_nanos(17_777_778));
        let l = LinkConfig::new(1_000_000_000, 0.0);
        assert_eq!(l.serialization_time(1500), Duration::from_nanos(12_000));
    }

    #[test]
    fn back_to_back_packets_queue_behind_the_serializer() {
        let mut l = Link::new(&LinkConfig::new(8_000_000, 10.0)).unwrap(); // 1 us per byte
        let t0 = Instant::from_nanos(1_000);
        let (d1, a1) = l.transmit(t0, 1000);
        assert_eq!(d1, Instant::from_nanos(1_000 + 1_000_000));
        assert_eq!(a1, d1 + Duration::from_millis(10));
        assert!(!l.is_idle(t0));
        // Handed over while busy: starts when the first is done.
        let (d2, _) = l.transmit(t0, 500);
        assert_eq!(d2, d1 + Duration::from_micros(500));
        // After an idle gap: starts immediately.
        let t3 = Instant::from_nanos(10_000_000);
        let (d3, a3) = l.transmit(t3, 100);
        assert_eq!(d3, t3 + Duration::from_micros(100));
        assert_eq!(a3, d3 + Duration::from_millis(10));
        assert_eq!(l.stats().packets, 3);
        assert_eq!(l.stats().busy_ns, 1_600_000);
        assert!((l.utilization(Duration::from_millis(16)) - 0.1).abs() < 1e-12);
    }

    #[test]
    fn bad_config_is_an_error() {
        let e = Link::new(&LinkConfig::new(0, 1.0)).unwrap_err();
        assert_eq!(e.field, "rate_bps");
        let e = Link::new(&LinkConfig::new(1, -1.0)).unwrap_err();
        assert_eq!(e.field, "delay_ms");
        assert_eq!(
            LinkConfig::new(1, 0.0005).propagation_delay(),
            Duration::from_nanos(500)
        );
    }
}
