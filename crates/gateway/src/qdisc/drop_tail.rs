//! Drop-tail: a FIFO that refuses arrivals when full. The gateway of the 1988 paper and of
//! every seed experiment ("our poor Milnet gateway ... 16 packets of buffer, total").

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, DropReason, Enqueue, Qdisc};
use crate::error::ConfigError;
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use serde::{Deserialize, Serialize};

/// `kind = "drop_tail"`. At least one limit must be given; with both, a packet is refused
/// when either would be exceeded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailConfig {
    #[serde(default)]
    pub limit_pkts: Option<usize>,
    #[serde(default)]
    pub limit_bytes: Option<usize>,
}

impl DropTailConfig {
    pub fn packets(limit_pkts: usize) -> Self {
        DropTailConfig {
            limit_pkts: Some(limit_pkts),
            limit_bytes: None,
        }
    }
    pub fn bytes(limit_bytes: usize) -> Self {
        DropTailConfig {
            limit_pkts: None,
            limit_bytes: Some(limit_bytes),
        }
    }
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_limits("drop_tail", self.limit_pkts, self.limit_bytes)
    }
}

pub struct DropTail<P> {
    fifo: Fifo<P>,
}

impl<P: PacketLike> DropTail<P> {
    pub fn new(cfg: &DropTailConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(DropTail {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
        })
    }
}

impl<P: PacketLike + Send> Qdisc<P> for DropTail<P> {
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
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
            limit_pkts: Some(2),
            limit_bytes: Some(10_000),
        };
        let mut q = DropTail::new(&cfg).unwrap();
        assert!(q.enqueue(t_ms(0.0), TestPacket::new(0, 0, 40)).is_queued());
        assert!(q.enqueue(t_ms(0.0), TestPacket::new(1, 0, 40)).is_queued());
        assert!(!q.enqueue(t_ms(0.0), TestPacket::new(2, 0, 40)).is_queued());
        let err = DropTail::<TestPacket>::new(&DropTailConfig {
            limit_pkts: None,
            limit_bytes: None,
        })
        .err()
        .unwrap();
        assert!(err.to_string().contains("limit_pkts"), "{err}");
    }
}
