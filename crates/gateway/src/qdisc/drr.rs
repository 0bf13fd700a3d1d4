//! Deficit Round Robin (M. Shreedhar and G. Varghese, "Efficient Fair Queueing using Deficit
//! Round Robin", SIGCOMM 1995): the O(1) descendant of the fair queueing seed 003 weighs
//! against its "random" gateways. Flows are hashed into a fixed number of buckets (as in
//! McKenney's stochastic fair queueing); the active buckets are served round robin, each
//! turn adding `quantum` bytes to the bucket's deficit and sending head packets while they
//! fit in it, so backlogged flows get equal *byte* shares whatever their packet sizes.
//!
//! Per-packet form (as Linux `sch_drr`): a bucket that becomes active starts with one
//! quantum; when its head packet does not fit, it gets another quantum and goes to the back
//! of the round. A bucket that empties leaves the round and its deficit is reset to zero (as in
//! the paper), so an idle flow cannot save up credit.
//!
//! On overflow the longest bucket (in bytes, counting the arriving packet) loses its *tail*
//! packet (longest-queue drop, as Linux `sch_sfq` does by default): when the arriving packet's
//! own flow is the longest, the arriving packet is the one refused.

use super::fifo::{bookkeeping_methods, FlowQueues};
use super::slab::FlowList;
use super::{flow_bucket, rng_for, streams, DropReason, Enqueue, Qdisc};
use crate::error::{check_at_least, ConfigError};
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `kind = "drr"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrrConfig {
    /// Bytes added to a bucket's deficit per round; at least the largest packet keeps every
    /// dequeue O(1) (the paper's condition for constant work per packet).
    #[serde(default = "default_quantum")]
    pub quantum_bytes: usize,
    /// Number of flow buckets (flows are hashed into them).
    #[serde(default = "default_buckets")]
    pub buckets: usize,
    /// Total packets held, all flows together.
    #[serde(default = "default_limit")]
    pub limit_pkts: usize,
    /// Optional total byte limit.
    #[serde(default)]
    pub limit_bytes: Option<usize>,
}

fn default_quantum() -> usize {
    1500
}
fn default_buckets() -> usize {
    1024
}
fn default_limit() -> usize {
    1000
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            quantum_bytes: default_quantum(),
            buckets: default_buckets(),
            limit_pkts: default_limit(),
            limit_bytes: None,
        }
    }
}

impl DrrConfig {
    /// Checks that the quantum, the limits and the number of buckets are at least 1, and
    /// that there are at most 2^20 buckets; [`Drr::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_at_least("drr", "quantum_bytes", self.quantum_bytes, 1)?;
        check_at_least("drr", "buckets", self.buckets, 1)?;
        check_at_least("drr", "limit_pkts", self.limit_pkts, 1)?;
        if self.buckets > 1 << 20 {
            return Err(ConfigError::new(
                "drr",
                "buckets",
                format!("is {}; at most 1048576", self.buckets),
            ));
        }
        check_at_least("drr", "limit_bytes", self.limit_bytes.unwrap_or(1), 1)
    }
}

#[derive(Default, Clone, Copy)]
struct Bucket {
    list: FlowList,
    deficit: usize,
    /// In the active round (possibly empty after an overflow drop; removed lazily).
    active: bool,
}

/// Deficit Round Robin (`kind = "drr"`, Shreedhar & Varghese 1995): flows hashed into
/// buckets, the active buckets served round robin a quantum of bytes at a time; on overflow
/// the longest bucket loses its tail packet.
pub struct Drr<P> {
    queues: FlowQueues<P>,
    flows: Vec<Bucket>,
    active: VecDeque<u32>,
    quantum: usize,
    perturb: u64,
}

impl<P: PacketLike> Drr<P> {
    /// An empty DRR, preallocated to its limits; `seed` keys the flow hash, so which flows
    /// share a bucket depends on it. Fails when `cfg` does not
    /// [`validate`](DrrConfig::validate).
    pub fn new(cfg: &DrrConfig, seed: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Drr {
            queues: FlowQueues::new(cfg.limit_pkts, cfg.limit_bytes),
            flows: vec![Bucket::default(); cfg.buckets],
            active: VecDeque::with_capacity(cfg.buckets),
            quantum: cfg.quantum_bytes,
            perturb: rng_for(seed, streams::FLOW_HASH).random(),
        })
    }

    /// The bucket a flow id maps to.
    pub fn bucket_of(&self, flow_id: u64) -> usize {
        flow_bucket(flow_id, self.perturb, self.flows.len())
    }

    fn push(&mut self, b: usize, now: Instant, pkt: P, len: usize) {
        let f = &mut self.flows[b];
        self.queues.admit(&mut f.list, now, pkt, len);
        if !f.active {
            f.active = true;
            f.deficit = self.quantum;
            self.active.push_back(b as u32);
        }
    }
}

impl<P: PacketLike + Send> Qdisc<P> for Drr<P> {
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P> {
        let len = self.queues.arrive(&pkt);
        let b = self.bucket_of(pkt.flow_id());
        if self.queues.fits(len) {
            self.push(b, now, pkt, len);
            return Enqueue::Queued;
        }
        // The longest bucket, counting the arrival in its own bucket.
        let own = self.flows[b].list.bytes + len;
        let (longest, longest_bytes) = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| (i, f.list.bytes))
            .max_by_key(|&(i, bytes)| (bytes, usize::MAX - i))
            .unwrap_or((b, 0));
        if longest == b || own >= longest_bytes {
            return self.queues.refuse(pkt, len, DropReason::Overflow);
        }
        let vlen = self.queues.back_len(&self.flows[longest].list).unwrap_or(0);
        if !self.queues.fits_instead_of(vlen, len) {
            // One victim would not make room for this (larger) packet: refuse it instead of
            // dropping several, so an enqueue never drops more than one packet.
            return self.queues.refuse(pkt, len, DropReason::Overflow);
        }
        let victim = self
            .queues
            .evict_back(&mut self.flows[longest].list, DropReason::Overflow)
            .expect("longest bucket is not empty");
        self.push(b, now, pkt, len);
        Enqueue::Displaced(victim, DropReason::Overflow)
    }

    fn dequeue(&mut self, now: Instant, _drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        loop {
            let b = *self.active.front()? as usize;
            let f = &mut self.flows[b];
            match self.queues.front_len(&f.list) {
                None => {
                    // Emptied by an overflow drop; leaves the round.
                    f.active = false;
                    f.deficit = 0;
                    self.active.pop_front();
                }
                Some(len) if len <= f.deficit => {
                    let pkt = self.queues.pop(&mut f.list, now);
                    f.deficit -= len;
                    if f.list.is_empty() {
                        f.active = false;
                        f.deficit = 0;
                        self.active.pop_front();
                    }
                    return pkt;
                }
                Some(_) => {
                    f.deficit += self.quantum;
                    self.active.rotate_left(1);
                }
            }
        }
    }

    bookkeeping_methods!(queues);

    fn name(&self) -> &'static str {
        "drr"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    /// Two flow ids that land in different buckets.
    pub(crate) fn two_flows<P: PacketLike>(q: &Drr<P>) -> (u64, u64) {
        let a = 1;
        let b = (2..).find(|&f| q.bucket_of(f) != q.bucket_of(a)).unwrap();
        (a, b)
    }

    #[test]
    fn equal_byte_shares_with_unequal_packet_sizes() {
        let mut q = Drr::new(&DrrConfig::default(), 11).unwrap();
        let (fa, fb) = two_flows(&q);
        let mut id = 0;
        // Keep both flows backlogged: 1500-byte packets on A, 500-byte packets on B.
        for _ in 0..200 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(id, fa, 1500));
            id += 1;
        }
        for _ in 0..600 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(id, fb, 500));
            id += 1;
        }
        let (mut a, mut b) = (0i64, 0i64);
        for _ in 0..400 {
            let p = q.dequeue(t_ms(1.0), &mut |_, _| {}).unwrap();
            if p.flow == fa {
                a += p.len as i64;
            } else {
                b += p.len as i64;
            }
            // DRR's bound: service of two backlogged flows differs by less than a quantum
            // plus a maximum-size packet at any time.
            assert!((a - b).abs() <= 3000, "a={a} b={b}");
        }
        assert!(a > 0 && b > 0);
        assert!((a - b).abs() <= 1500, "after whole rounds: a={a} b={b}");
    }

    #[test]
    fn overflow_drops_from_the_longest_flow() {
        let cfg = DrrConfig {
            limit_pkts: 10,
            ..DrrConfig::default()
        };
        let mut q = Drr::new(&cfg, 1).unwrap();
        let (hog, mouse) = two_flows(&q);
        for i in 0..10 {
            assert!(q
                .enqueue(t_ms(0.0), TestPacket::new(i, hog, 1000))
                .is_queued());
        }
        // The mouse's packet gets in; the hog's last packet is pushed out.
        match q.enqueue(t_ms(0.0), TestPacket::new(100, mouse, 100)) {
            Enqueue::Displaced(p, DropReason::Overflow) => assert_eq!(p.id, 9),
            other => panic!("{other:?}"),
        }
        // A hog arrival is itself the tail of the longest queue.
        match q.enqueue(t_ms(0.0), TestPacket::new(10, hog, 1000)) {
            Enqueue::Dropped(p, DropReason::Overflow) => assert_eq!(p.id, 10),
            other => panic!("{other:?}"),
        }
        assert_eq!(q.len_pkts(), 10);
        let (out, _) = drain(&mut q, t_ms(1.0));
        assert_eq!(out.len(), 10);
        assert!(out.iter().any(|p| p.id == 100));
        let hog_ids: Vec<u64> = out.iter().filter(|p| p.flow == hog).map(|p| p.id).collect();
        assert_eq!(hog_ids, (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn an_idle_flow_does_not_save_credit() {
        let mut q = Drr::new(&DrrConfig::default(), 2).unwrap();
        let (fa, fb) = two_flows(&q);
        let _ = q.enqueue(t_ms(0.0), TestPacket::new(0, fa, 100));
        assert_eq!(q.dequeue(t_ms(0.0), &mut |_, _| {}).unwrap().id, 0);
        // A used 100 of its 1500 but emptied: its deficit is gone. Now both backlogged.
        for i in 1..=3 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, fa, 1500));
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(10 + i, fb, 1500));
        }
        let order: Vec<u64> = drain(&mut q, t_ms(0.0)).0.iter().map(|p| p.id).collect();
        assert_eq!(order, vec![1, 11, 2, 12, 3, 13]);
    }
}
