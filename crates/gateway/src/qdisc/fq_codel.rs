//! FQ-CoDel (RFC 8290): flows hashed into buckets (§4.1.1), served by a deficit round robin
//! with two lists - *new* flows (that just became active) are served before *old* ones
//! (§4.2), so sparse flows (DNS, ACKs, interactive traffic) bypass the bulk flows' queues -
//! and a CoDel instance per bucket (§4.2, §5.2) keeping each bulk flow's standing queue
//! short.
//!
//! - Enqueue (§4.1): timestamp, append to the bucket; a bucket in neither list joins the
//!   tail of the new list with one quantum of credit. When the total exceeds the limit, a
//!   packet is dropped from the *head* of the bucket with the most bytes (§4.1: "the queue
//!   with the largest current byte count"). RFC 8290 and Linux may drop a batch; here one
//!   packet per arrival is enough because the limit is reached one packet at a time.
//! - Dequeue (§4.2): take the first bucket of the new list, else of the old list. A bucket
//!   whose credit is spent gets another quantum and moves to the tail of the old list. A
//!   bucket that has no packet to give (CoDel may drop its last ones) leaves: from the new
//!   list to the tail of the old list if the old list is not empty (so a flow cannot stay
//!   "new" by emptying its queue every round and starve the old flows, §4.2), otherwise out
//!   of the lists.
//! - CoDel's "backlog <= MAXPACKET" test uses the qdisc's total backlog, as Linux does.

use super::codel::{
    default_interval, default_mtu, default_target, validate_codel, CodelParams, CodelVars,
};
use super::fifo::{bookkeeping_methods, FlowQueues};
use super::slab::FlowList;
use super::{flow_bucket, rng_for, streams, DropReason, Enqueue, Qdisc};
use crate::error::{check_at_least, ms_to_duration, ConfigError};
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// `kind = "fq_codel"`. Defaults are RFC 8290 §5 / Linux's: 1024 buckets, quantum 1514,
/// limit 10240 packets, target 5 ms, interval 100 ms, ECN on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    /// Number of flow buckets flows are hashed into (RFC 8290 §4.1.1; default 1024).
    #[serde(default = "default_buckets")]
    pub buckets: usize,
    /// Bytes of credit a bucket gets per round (default 1514, an Ethernet frame).
    #[serde(default = "default_quantum")]
    pub quantum_bytes: usize,
    /// Total packets held, all buckets together (default 10240).
    #[serde(default = "default_limit")]
    pub limit_pkts: usize,
    /// Optional total byte limit (Linux's `memory_limit`, counted in IP bytes).
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// CoDel's target per bucket, in milliseconds (default 5).
    #[serde(default = "default_target")]
    pub target_ms: f64,
    /// CoDel's interval per bucket, in milliseconds (default 100).
    #[serde(default = "default_interval")]
    pub interval_ms: f64,
    /// CoDel's MAXPACKET, in IP bytes, compared with the whole queue's backlog.
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Mark ECN-capable packets CE instead of dropping them (default on, as Linux).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
}

fn default_buckets() -> usize {
    1024
}
fn default_quantum() -> usize {
    1514
}
fn default_limit() -> usize {
    10240
}
fn default_ecn() -> bool {
    true
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            buckets: default_buckets(),
            quantum_bytes: default_quantum(),
            limit_pkts: default_limit(),
            limit_bytes: None,
            target_ms: default_target(),
            interval_ms: default_interval(),
            mtu_bytes: default_mtu(),
            ecn: default_ecn(),
        }
    }
}

impl FqCodelConfig {
    /// Checks that the buckets (at most 2^20), the quantum and the limits are at least 1,
    /// and the CoDel fields as [`CodelConfig::validate`](super::CodelConfig::validate)
    /// does; [`FqCodel::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const C: &str = "fq_codel";
        check_at_least(C, "buckets", self.buckets, 1)?;
        if self.buckets > 1 << 20 {
            return Err(ConfigError::new(
                C,
                "buckets",
                format!("is {}; at most 1048576", self.buckets),
            ));
        }
        check_at_least(C, "quantum_bytes", self.quantum_bytes, 1)?;
        check_at_least(C, "limit_pkts", self.limit_pkts, 1)?;
        check_at_least(C, "limit_bytes", self.limit_bytes.unwrap_or(1), 1)?;
        validate_codel(C, self.target_ms, self.interval_ms, self.mtu_bytes)
    }
    /// The CoDel constants every bucket shares, times rounded to the nanosecond.
    pub fn params(&self) -> CodelParams {
        CodelParams {
            target: ms_to_duration(self.target_ms),
            interval: ms_to_duration(self.interval_ms),
            mtu_bytes: self.mtu_bytes,
            ecn: self.ecn,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum InList {
    #[default]
    None,
    New,
    Old,
}

#[derive(Clone, Copy, Default)]
struct Flow {
    list: FlowList,
    deficit: i64,
    codel: CodelVars,
    in_list: InList,
}

/// FQ-CoDel (`kind = "fq_codel"`, RFC 8290): deficit round robin over hashed flow buckets,
/// new flows served before old ones, and a CoDel instance per bucket.
pub struct FqCodel<P> {
    queues: FlowQueues<P>,
    flows: Vec<Flow>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    quantum: i64,
    params: CodelParams,
    perturb: u64,
    new_flow_count: u64,
}

impl<P: PacketLike> FqCodel<P> {
    /// An empty FQ-CoDel, preallocated to its limits; `seed` keys the flow hash
    /// (RFC 8290 §4.1.1: a perturbation, so collisions differ between seeds). Fails when
    /// `cfg` does not [`validate`](FqCodelConfig::validate).
    pub fn new(cfg: &FqCodelConfig, seed: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(FqCodel {
            queues: FlowQueues::new(cfg.limit_pkts, cfg.limit_bytes),
            flows: vec![Flow::default(); cfg.buckets],
            new_flows: VecDeque::with_capacity(cfg.buckets),
            old_flows: VecDeque::with_capacity(cfg.buckets),
            quantum: cfg.quantum_bytes as i64,
            params: cfg.params(),
            perturb: rng_for(seed, streams::FLOW_HASH).random(),
            new_flow_count: 0,
        })
    }

    /// The bucket a flow id maps to (RFC 8290 §4.1.1: a keyed hash, so collisions differ
    /// between seeds).
    pub fn bucket_of(&self, flow_id: u64) -> usize {
        flow_bucket(flow_id, self.perturb, self.flows.len())
    }

    /// How many times a bucket joined the new-flows list.
    pub fn new_flow_count(&self) -> u64 {
        self.new_flow_count
    }

    fn push(&mut self, b: usize, now: Instant, pkt: P, len: usize) {
        let f = &mut self.flows[b];
        self.queues.admit(&mut f.list, now, pkt, len);
        if f.in_list == InList::None {
            f.in_list = InList::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(b as u32);
            self.new_flow_count += 1;
        }
    }
}

impl<P: PacketLike + Send> Qdisc<P> for FqCodel<P> {
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P> {
        let len = self.queues.arrive(&pkt);
        let b = self.bucket_of(pkt.flow_id());
        if self.queues.fits(len) {
            self.push(b, now, pkt, len);
            return Enqueue::Queued;
        }
        // Over the limit: drop from the head of the fattest bucket, counting the arrival in
        // its own bucket (§4.1).
        let fattest = (0..self.flows.len())
            .max_by_key(|&i| {
                let extra = if i == b { len } else { 0 };
                (self.flows[i].list.bytes + extra, usize::MAX - i)
            })
            .unwrap_or(b);
        let Some(vlen) = self.queues.front_len(&self.flows[fattest].list) else {
            // The fattest bucket is the arrival's own, and empty: the arrival is the head.
            return self.queues.refuse(pkt, len, DropReason::Overflow);
        };
        if !self.queues.fits_instead_of(vlen, len) {
            // One victim would not make room (byte limit, larger arrival): refuse it, so an
            // enqueue never drops more than one packet.
            return self.queues.refuse(pkt, len, DropReason::Overflow);
        }
        let victim = self
            .queues
            .evict_front(&mut self.flows[fattest].list, DropReason::Overflow)
            .expect("fattest bucket is not empty");
        self.push(b, now, pkt, len);
        Enqueue::Displaced(victim, DropReason::Overflow)
    }

    fn dequeue(&mut self, now: Instant, drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        loop {
            let (from_new, b) = match self.new_flows.front() {
                Some(&b) => (true, b as usize),
                None => (false, *self.old_flows.front()? as usize),
            };
            let FqCodel {
                queues,
                flows,
                new_flows,
                old_flows,
                quantum,
                params,
                ..
            } = self;
            let flow = &mut flows[b];
            if flow.deficit <= 0 {
                // Credit spent: another quantum, and to the back of the old list.
                flow.deficit += *quantum;
                if from_new {
                    new_flows.pop_front();
                } else {
                    old_flows.pop_front();
                }
                flow.in_list = InList::Old;
                old_flows.push_back(b as u32);
                continue;
            }
            let (mut head, stats) = queues.codel_parts(&mut flow.list);
            match flow
                .codel
                .dequeue_counted(now, params, &mut head, stats, drop)
            {
                Some(p) => {
                    flow.deficit -= p.len_bytes() as i64;
                    return Some(p);
                }
                None => {
                    if from_new {
                        new_flows.pop_front();
                        if old_flows.is_empty() {
                            flow.in_list = InList::None;
                        } else {
                            // §4.2: an emptied new flow goes to the old list rather than
                            // out, so it cannot re-enter as "new" every round.
                            flow.in_list = InList::Old;
                            old_flows.push_back(b as u32);
                        }
                    } else {
                        old_flows.pop_front();
                        flow.in_list = InList::None;
                    }
                }
            }
        }
    }

    bookkeeping_methods!(queues);

    fn name(&self) -> &'static str {
        "fq_codel"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    fn two_flows<P: PacketLike>(q: &FqCodel<P>) -> (u64, u64) {
        let a = 1;
        let b = (2..).find(|&f| q.bucket_of(f) != q.bucket_of(a)).unwrap();
        (a, b)
    }

    #[test]
    fn sparse_flow_bypasses_the_bulk_queue() {
        let mut q = FqCodel::new(&FqCodelConfig::default(), 5).unwrap();
        let (bulk, sparse) = two_flows(&q);
        for i in 0..100 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, bulk, 1500));
        }
        // The bulk flow spends its first quantum and becomes an old flow.
        assert_eq!(q.dequeue(t_ms(1.0), &mut |_, _| {}).unwrap().flow, bulk);
        assert_eq!(q.dequeue(t_ms(2.0), &mut |_, _| {}).unwrap().flow, bulk);
        // A sparse packet arrives behind 98 bulk packets and leaves next.
        let _ = q.enqueue(t_ms(2.5), TestPacket::new(1000, sparse, 100));
        let p = q.dequeue(t_ms(3.0), &mut |_, _| {}).unwrap();
        assert_eq!(p.id, 1000);
        assert_eq!(q.new_flow_count(), 2);
        // Found empty while new, with an old flow waiting, the sparse flow moves to the old
        // list (§4.2) instead of leaving: its next packet does not make it "new" again.
        assert_eq!(q.dequeue(t_ms(3.0), &mut |_, _| {}).unwrap().id, 2);
        let _ = q.enqueue(t_ms(3.5), TestPacket::new(1001, sparse, 100));
        let order: Vec<u64> = (0..2)
            .map(|_| q.dequeue(t_ms(4.0), &mut |_, _| {}).unwrap().id)
            .collect();
        assert_eq!(order, vec![1001, 3]);
        assert_eq!(q.new_flow_count(), 2);
    }

    #[test]
    fn a_flow_that_goes_idle_is_new_again() {
        let mut q = FqCodel::new(&FqCodelConfig::default(), 5).unwrap();
        let (a, _) = two_flows(&q);
        let _ = q.enqueue(t_ms(0.0), TestPacket::new(0, a, 100));
        assert!(q.dequeue(t_ms(0.0), &mut |_, _| {}).is_some());
        assert!(q.dequeue(t_ms(0.0), &mut |_, _| {}).is_none()); // leaves the lists
        let _ = q.enqueue(t_ms(1.0), TestPacket::new(1, a, 100));
        assert_eq!(q.new_flow_count(), 2);
    }

    #[test]
    fn overflow_drops_the_head_of_the_fattest_flow() {
        let cfg = FqCodelConfig {
            limit_pkts: 8,
            ..FqCodelConfig::default()
        };
        let mut q = FqCodel::new(&cfg, 3).unwrap();
        let (fat, thin) = two_flows(&q);
        for i in 0..6 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, fat, 1000));
        }
        for i in 10..12 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, thin, 100));
        }
        match q.enqueue(t_ms(0.0), TestPacket::new(12, thin, 100)) {
            Enqueue::Displaced(p, DropReason::Overflow) => assert_eq!(p.id, 0, "head of fat flow"),
            other => panic!("{other:?}"),
        }
        match q.enqueue(t_ms(0.0), TestPacket::new(6, fat, 1000)) {
            Enqueue::Displaced(p, DropReason::Overflow) => assert_eq!(p.id, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(q.len_pkts(), 8);
    }

    #[test]
    fn per_flow_codel_controls_a_bulk_flow_but_not_a_sparse_one() {
        let mut q = FqCodel::new(
            &FqCodelConfig {
                ecn: false,
                ..FqCodelConfig::default()
            },
            8,
        )
        .unwrap();
        let (bulk, sparse) = two_flows(&q);
        let mut id = 0;
        let mut sparse_drops = 0;
        let mut sparse_sent_at = std::collections::HashMap::new();
        let mut worst_sparse = 0u64;
        for ms in 0..2000u64 {
            let now = Instant::from_nanos(ms * 1_000_000);
            for _ in 0..2 {
                let _ = q.enqueue(now, TestPacket::new(id, bulk, 1000));
                id += 1;
            }
            if ms % 50 == 25 {
                let _ = q.enqueue(now, TestPacket::new(id, sparse, 100));
                sparse_sent_at.insert(id, ms);
                id += 1;
            }
            if let Some(p) = q.dequeue(now, &mut |p, _| sparse_drops += u32::from(p.flow == sparse))
            {
                if p.flow == sparse {
                    worst_sparse = worst_sparse.max(ms - sparse_sent_at[&p.id]);
                }
            }
        }
        // The bulk flow's standing queue is CoDel's business; the sparse flow never queues.
        assert!(q.stats().dropped_codel > 10, "{}", q.stats().dropped_codel);
        assert_eq!(sparse_drops, 0);
        assert_eq!(
            worst_sparse, 0,
            "sparse packets leave at their arrival's dequeue"
        );
    }
}
