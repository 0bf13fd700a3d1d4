//! The DEC-bit gateway (Ramakrishnan and Jain, "A Binary Feedback Scheme for Congestion
//! Avoidance in Computer Networks", 1988/1990): a FIFO that sets the congestion bit in
//! packets arriving while its average queue length is at least one packet. The average is
//! taken over a regeneration cycle: from the start of the previous busy period (busy, then
//! idle) to now, so it reflects the last cycle and the one under way, not a moving average
//! of arbitrary memory. The bit here is the IP ECN field's CE (an ECN-capable sender's
//! packets only); drops happen only when the FIFO is full. The seeds weigh this bit against
//! a dropped packet (seed 000, 16 Nov 1987).
//!
//! The queue length is the packets waiting in this queue; the one the link is sending is not
//! counted (the link holds it), so a threshold of one packet here is one waiting packet.

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, DropReason, Enqueue, Qdisc};
use crate::error::ConfigError;
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use serde::{Deserialize, Serialize};

/// `kind = "dec_bit"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecBitGatewayConfig {
    /// Most packets queued at once; an arrival to a full queue is refused.
    #[serde(default)]
    pub limit_pkts: Option<usize>,
    /// Most IP bytes queued at once; an arrival that would exceed it is refused.
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// The average queue length, in packets, at which arriving packets get the bit
    /// (Ramakrishnan and Jain's optimum: 1).
    #[serde(default = "one")]
    pub threshold_pkts: f64,
}

fn one() -> f64 {
    1.0
}

impl DecBitGatewayConfig {
    /// Checks that a limit is given and none is zero, and that the threshold is a positive
    /// finite number; [`DecBitGateway::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_limits("dec_bit", self.limit_pkts, self.limit_bytes)?;
        if !(self.threshold_pkts.is_finite() && self.threshold_pkts > 0.0) {
            return Err(ConfigError::new(
                "dec_bit",
                "threshold_pkts",
                format!(
                    "is {}; it must be a positive number of packets",
                    self.threshold_pkts
                ),
            ));
        }
        Ok(())
    }
}

/// The regeneration-cycle average of a queue length: the time integral of the length since
/// the start of the previous busy period, over the time since then.
#[derive(Clone, Copy, Debug)]
struct CycleAverage {
    /// Start of the previous cycle (its busy period) and the integral over it (busy and
    /// idle), in packet-nanoseconds.
    prev_start: Instant,
    prev_area: f64,
    /// Start of the current busy period and the integral since.
    cur_start: Instant,
    cur_area: f64,
    /// The length since `changed`.
    len: usize,
    changed: Instant,
}

impl CycleAverage {
    fn new() -> Self {
        CycleAverage {
            prev_start: Instant::ZERO,
            prev_area: 0.0,
            cur_start: Instant::ZERO,
            cur_area: 0.0,
            len: 0,
            changed: Instant::ZERO,
        }
    }

    /// The length becomes `len` at `now`.
    fn set(&mut self, now: Instant, len: usize) {
        self.cur_area += self.len as f64 * now.saturating_since(self.changed).as_nanos() as f64;
        if self.len == 0 && len > 0 {
            // A busy period begins: the cycle that ends here (busy, then idle) becomes the
            // previous one.
            self.prev_start = self.cur_start;
            self.prev_area = self.cur_area;
            self.cur_start = now;
            self.cur_area = 0.0;
        }
        self.len = len;
        self.changed = now;
    }

    /// The average length from the start of the previous cycle to `now` (the current length
    /// when no time has passed).
    fn average(&self, now: Instant) -> f64 {
        let span = now.saturating_since(self.prev_start).as_nanos() as f64;
        if span <= 0.0 {
            return self.len as f64;
        }
        let open = self.len as f64 * now.saturating_since(self.changed).as_nanos() as f64;
        (self.prev_area + self.cur_area + open) / span
    }
}

/// The DEC-bit gateway (`kind = "dec_bit"`, Ramakrishnan & Jain 1988): a FIFO that sets
/// CE on ECN-capable arrivals while its regeneration-cycle average queue is at least
/// `threshold_pkts`, and drops only when full.
pub struct DecBitGateway<P> {
    fifo: Fifo<P>,
    threshold: f64,
    avg: CycleAverage,
}

impl<P: PacketLike> DecBitGateway<P> {
    /// An empty gateway whose first cycle starts at time zero; fails when `cfg` does not
    /// [`validate`](DecBitGatewayConfig::validate).
    pub fn new(cfg: &DecBitGatewayConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(DecBitGateway {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
            threshold: cfg.threshold_pkts,
            avg: CycleAverage::new(),
        })
    }

    /// The regeneration-cycle average queue length at `now`, in packets.
    pub fn average(&self, now: Instant) -> f64 {
        self.avg.average(now)
    }
}

impl<P: PacketLike + Send> Qdisc<P> for DecBitGateway<P> {
    fn enqueue(&mut self, now: Instant, mut pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
        if !self.fifo.fits(len) {
            return self.fifo.refuse(pkt, len, DropReason::Overflow);
        }
        if self.avg.average(now) >= self.threshold && pkt.ecn_capable() {
            pkt.set_ce();
            self.fifo.marked();
        }
        let r = self.fifo.admit_or_overflow(now, pkt, len);
        self.avg.set(now, self.fifo.len_pkts());
        r
    }

    fn dequeue(&mut self, now: Instant, _drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        let p = self.fifo.pop(now);
        self.avg.set(now, self.fifo.len_pkts());
        p
    }

    bookkeeping_methods!(fifo);

    fn name(&self) -> &'static str {
        "dec_bit"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    fn gw(limit: usize) -> DecBitGateway<TestPacket> {
        DecBitGateway::new(&DecBitGatewayConfig {
            limit_pkts: Some(limit),
            limit_bytes: None,
            threshold_pkts: 1.0,
        })
        .unwrap()
    }

    #[test]
    fn the_average_spans_the_previous_cycle_and_the_current_busy_period() {
        let mut q = gw(10);
        let mut drop = |_p: TestPacket, _r: DropReason| {};
        // Cycle 1: 2 packets for 10 ms, then 1 for 10 ms, then idle for 20 ms.
        assert!(q
            .enqueue(t_ms(0.0), TestPacket::new(0, 0, 1000))
            .is_queued());
        assert!(q
            .enqueue(t_ms(0.0), TestPacket::new(1, 0, 1000))
            .is_queued());
        q.dequeue(t_ms(10.0), &mut drop);
        q.dequeue(t_ms(20.0), &mut drop);
        // 30 packet-ms over 40 ms at the start of the next busy period.
        assert!((q.average(t_ms(40.0)) - 0.75).abs() < 1e-9);
        // Cycle 2 begins at 40 ms with 3 packets; 10 ms later: (30 + 30) / 50.
        for i in 2..5 {
            assert!(q
                .enqueue(t_ms(40.0), TestPacket::new(i, 0, 1000))
                .is_queued());
        }
        assert!((q.average(t_ms(50.0)) - 1.2).abs() < 1e-9);
        // Cycle 3 begins after the queue empties and fills again: cycle 1 is forgotten.
        for _ in 0..3 {
            q.dequeue(t_ms(50.0), &mut drop);
        }
        assert!(q
            .enqueue(t_ms(100.0), TestPacket::new(9, 0, 1000))
            .is_queued());
        // Cycle 2 held 30 packet-ms over 60 ms; at 100 ms it is all that counts.
        assert!((q.average(t_ms(100.0)) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn packets_arriving_at_an_average_of_one_or_more_get_the_bit_if_ect() {
        let mut q = gw(10);
        let mut drop = |_p: TestPacket, _r: DropReason| {};
        let ect = |id| TestPacket::new(id, 0, 1000).with_ect();
        // One packet waits 1 ms, then 9 ms idle: averages 0.1, no bits.
        assert!(q.enqueue(t_ms(0.0), ect(0)).is_queued());
        let first = q.dequeue(t_ms(1.0), &mut drop).unwrap();
        assert!(q.enqueue(t_ms(10.0), ect(1)).is_queued());
        assert!(q.enqueue(t_ms(10.0), ect(2)).is_queued());
        // Two packets waiting for 20 ms: (1 + 40) / 30 packet-ms per ms, above one.
        assert!((q.average(t_ms(30.0)) - 41.0 / 30.0).abs() < 1e-9);
        assert!(q.enqueue(t_ms(30.0), ect(3)).is_queued());
        assert!(q
            .enqueue(t_ms(30.0), TestPacket::new(4, 0, 1000))
            .is_queued());
        let (out, _) = drain(&mut q, t_ms(40.0));
        let ce: Vec<(u64, bool)> = std::iter::once(&first)
            .chain(&out)
            .map(|p| (p.id, p.ce))
            .collect();
        assert_eq!(
            ce,
            [(0, false), (1, false), (2, false), (3, true), (4, false)],
            "the bit from an average of one, and never on Not-ECT packets"
        );
        assert_eq!(q.stats().marked, 1);
    }

    #[test]
    fn bad_threshold_is_refused() {
        for t in [0.0, -1.0, f64::NAN] {
            let c = DecBitGatewayConfig {
                limit_pkts: Some(10),
                limit_bytes: None,
                threshold_pkts: t,
            };
            assert!(c.validate().is_err(), "{t}");
        }
    }
}
