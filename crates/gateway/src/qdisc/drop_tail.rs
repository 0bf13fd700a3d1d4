//! Drop-tail: a FIFO that refuses arrivals when full. The gateway of the 1988 paper and of
//! every seed experiment ("our poor Milnet gateway ... 16 packets of buffer, total").

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, DropReason, Enqueue, Qdisc};
use crate::error::ConfigError;
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use serde::{Deserialize, Serialize};

/// `kind = "drop_tail"`. At least one limit must be given; with both, a packet is refused
/// when either would be exceeded. With `mark_threshold_pkts` (K) it is also the step marker
/// of DCTCP (RFC 8257 §3.1): an ECN-capable packet arriving to K or more queued packets is
/// marked CE, the instantaneous queue being the signal; Not-ECT packets are unaffected until
/// the queue is full.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {
    /// Most packets queued at once; an arrival to a full queue is refused.
    #[serde(default)]
    pub limit_pkts: Option<usize>,
    /// Most IP bytes queued at once; an arrival that would exceed it is refused.
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// K, DCTCP's marking threshold in packets (RFC 8257 §3.1); at least 1 and below
    /// `limit_pkts`. Absent: never mark.
    #[serde(default)]
    pub mark_threshold_pkts: Option<usize>,
}

impl DropTailConfig {
    /// A queue of `limit_pkts` packets, no byte limit, no marking.
    pub fn packets(limit_pkts: usize) -> Self {
        DropTailConfig {
            mark_threshold_pkts: None,
            limit_pkts: Some(limit_pkts),
            limit_bytes: None,
        }
    }
    /// A queue of `limit_bytes` IP bytes, no packet limit, no marking.
    pub fn bytes(limit_bytes: usize) -> Self {
        DropTailConfig {
            mark_threshold_pkts: None,
            limit_pkts: None,
            limit_bytes: Some(limit_bytes),
        }
    }
    /// Checks that a limit is given and none is zero, and that the marking threshold is at
    /// least 1 and below `limit_pkts`; [`DropTail::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_limits("drop_tail", self.limit_pkts, self.limit_bytes)?;
        match (self.mark_threshold_pkts, self.limit_pkts) {
            (Some(0), _) => Err(ConfigError::new(
                "drop_tail",
                "mark_threshold_pkts",
                "is 0; it must be at least 1 (0 would mark every packet)".to_string(),
            )),
            (Some(k), Some(limit)) if k >= limit => Err(ConfigError::new(
                "drop_tail",
                "mark_threshold_pkts",
                format!("is {k}; it must be below limit_pkts ({limit}), or it would never mark"),
            )),
            _ => Ok(()),
        }
    }
}

/// Drop-tail (`kind = "drop_tail"`): one FIFO whose arrivals are refused
/// ([`DropReason::Overflow`]) when it is full, optionally DCTCP's step marker.
pub struct DropTail<P> {
    fifo: Fifo<P>,
    mark_threshold: Option<usize>,
}

impl<P: PacketLike> DropTail<P> {
    /// An empty queue, preallocated to its limits; fails when `cfg` does not
    /// [`validate`](DropTailConfig::validate).
    pub fn new(cfg: &DropTailConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(DropTail {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
            mark_threshold: cfg.mark_threshold_pkts,
        })
    }
}

impl<P: PacketLike + Send> Qdisc<P> for DropTail<P> {
    fn enqueue(&mut self, now: Instant, mut pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
        if let Some(k) = self.mark_threshold {
            // A packet that will be refused for overflow is not counted as marked.
            if self.fifo.len_pkts() >= k && pkt.ecn_capable() && self.fifo.fits(len) {
                pkt.set_ce();
                self.fifo.marked();
            }
        }
        self.fifo.admit_or_overflow(now, pkt, len)
    }

    fn dequeue(&mut self, now: Instant, _drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        self.fifo.pop(now)
    }

    bookkeeping_methods!(fifo);

    fn name(&self) -> &'static str {
        "drop_tail"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    #[test]
    fn packet_limit() {
        let mut q = DropTail::new(&DropTailConfig::packets(3)).unwrap();
        for i in 0..3 {
            assert_eq!(
                q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 1500)),
                Enqueue::Queued
            );
        }
        match q.enqueue(t_ms(0.0), TestPacket::new(3, 0, 40)) {
            Enqueue::Dropped(p, DropReason::Overflow) => assert_eq!(p.id, 3),
            other => panic!("{other:?}"),
        }
        assert_eq!(q.len_pkts(), 3);
        assert_eq!(q.len_bytes(), 4500);
        let (out, drops) = drain(&mut q, t_ms(2.0));
        assert!(drops.is_empty());
        assert_eq!(out.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        let s = q.stats();
        assert_eq!(
            (s.arrived, s.enqueued, s.dequeued, s.dropped_overflow),
            (4, 3, 3, 1)
        );
        assert_eq!(s.max_len_pkts, 3);
        assert_eq!(
            s.mean_delay(),
            Some(ackclock_wire::Duration::from_millis(2))
        );
    }

    /// RFC 8257 §3.1: ECN-capable arrivals to K or more queued packets are marked CE and
    /// queued; Not-ECT ones are queued unmarked; drops only when full.
    #[test]
    fn rfc8257_3_1_step_marker_marks_ect_arrivals_at_or_above_k() {
        let cfg = DropTailConfig {
            mark_threshold_pkts: Some(2),
            ..DropTailConfig::packets(4)
        };
        let mut q = DropTail::new(&cfg).unwrap();
        let mut enq = |id, ect| {
            let p = TestPacket::new(id, 0, 1000);
            q.enqueue(t_ms(0.0), if ect { p.with_ect() } else { p })
        };
        assert!(enq(0, true).is_queued());
        assert!(enq(1, true).is_queued());
        assert!(enq(2, false).is_queued(), "Not-ECT: queued, unmarked");
        assert!(enq(3, true).is_queued());
        // Full: refused, not marked.
        assert!(!enq(4, true).is_queued());
        let (out, _) = drain(&mut q, t_ms(10.0));
        let ce: Vec<(u64, bool)> = out.iter().map(|p| (p.id, p.ce)).collect();
        assert_eq!(ce, [(0, false), (1, false), (2, false), (3, true)]);
        assert_eq!(q.stats().marked, 1);
        assert_eq!(q.stats().dropped_overflow, 1);

        for (k, ok) in [(0, false), (4, false), (3, true)] {
            let c = DropTailConfig {
                mark_threshold_pkts: Some(k),
                ..DropTailConfig::packets(4)
            };
            assert_eq!(c.validate().is_ok(), ok, "K = {k}");
        }
    }

    #[test]
    fn byte_limit() {
        let mut q = DropTail::new(&DropTailConfig::bytes(3000)).unwrap();
        assert!(q
            .enqueue(t_ms(0.0), TestPacket::new(0, 0, 1500))
            .is_queued());
        assert!(q
            .enqueue(t_ms(0.0), TestPacket::new(1, 0, 1000))
            .is_queued());
        // 2500 + 1500 > 3000: refused; a 500-byte packet still fits exactly.
        assert!(!q
            .enqueue(t_ms(0.0), TestPacket::new(2, 0, 1500))
            .is_queued());
        assert!(q.enqueue(t_ms(0.0), TestPacket::new(3, 0, 500)).is_queued());
        assert_eq!(q.len_bytes(), 3000);
        assert!(!q.enqueue(t_ms(0.0), TestPacket::new(4, 0, 1)).is_queued());
        assert_eq!(q.stats().bytes_dropped, 1501);
    }

    #[test]
    fn both_limits_and_bad_config() {
        let cfg = DropTailConfig {
            mark_threshold_pkts: None,
            limit_pkts: Some(2),
            limit_bytes: Some(10_000),
        };
        let mut q = DropTail::new(&cfg).unwrap();
        assert!(q.enqueue(t_ms(0.0), TestPacket::new(0, 0, 40)).is_queued());
        assert!(q.enqueue(t_ms(0.0), TestPacket::new(1, 0, 40)).is_queued());
        assert!(!q.enqueue(t_ms(0.0), TestPacket::new(2, 0, 40)).is_queued());
        let err = DropTail::<TestPacket>::new(&DropTailConfig {
            mark_threshold_pkts: None,
            limit_pkts: None,
            limit_bytes: None,
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("limit_pkts"), "{err}");
    }
}
