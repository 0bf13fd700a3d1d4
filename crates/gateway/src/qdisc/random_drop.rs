//! The random-drop gateway. Seed 003 (Van Jacobson, 2 Nov 1987) mentions "some 'random'
//! gateway algorithms that I think would do as good a job for congestion control as
//! fair-queuing but require no state and have negligible per-packet cost". The idea, as
//! studied by Mankin ("Random Drop Congestion Control", SIGCOMM 1990): when a packet arrives
//! at a full queue, the packet to drop is chosen uniformly at random among the queued
//! packets and the arriving one. A flow holding a fraction f of the buffer then loses with
//! probability f, so the heavy users are the ones that get the congestion signal, with no
//! per-flow state.
//!
//! Optionally, Early Random Drop (Hashem, MIT LCS TR-465, 1989): once the queue holds at
//! least `early_drop_threshold_pkts`, each arriving packet is dropped with a fixed
//! probability `early_drop_prob`, before the buffer is full.

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, rng_for, streams, DropReason, Enqueue, Qdisc};
use crate::error::{check_prob, ConfigError};
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `kind = "random_drop"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomDropConfig {
    /// Most packets queued at once; an arrival to a full queue drops a random victim.
    #[serde(default)]
    pub limit_pkts: Option<usize>,
    /// Most IP bytes queued at once. When one victim would not make room for the arrival,
    /// the arrival is refused instead (at most one drop per arrival).
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// Early Random Drop: queue length (packets) at which arrivals start being dropped with
    /// `early_drop_prob`. Absent: only drop on overflow.
    #[serde(default)]
    pub early_drop_threshold_pkts: Option<usize>,
    /// Early Random Drop's probability, in `[0, 1]`, of dropping an arrival that finds at
    /// least `early_drop_threshold_pkts` queued.
    #[serde(default)]
    pub early_drop_prob: f64,
}

impl RandomDropConfig {
    /// A queue of `limit_pkts` packets, no byte limit, no Early Random Drop.
    pub fn packets(limit_pkts: usize) -> Self {
        RandomDropConfig {
            limit_pkts: Some(limit_pkts),
            limit_bytes: None,
            early_drop_threshold_pkts: None,
            early_drop_prob: 0.0,
        }
    }
    /// Checks that a limit is given and none is zero, and that `early_drop_prob` is a
    /// probability; [`RandomDrop::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_limits("random_drop", self.limit_pkts, self.limit_bytes)?;
        check_prob("random_drop", "early_drop_prob", self.early_drop_prob)
    }
}

/// The random-drop gateway (`kind = "random_drop"`, Mankin 1990): a FIFO whose overflow
/// victim is drawn uniformly from the queued packets and the arriving one, with optional
/// Early Random Drop (Hashem 1989).
pub struct RandomDrop<P> {
    fifo: Fifo<P>,
    early: Option<(usize, f64)>,
    rng: ChaCha8Rng,
}

impl<P: PacketLike> RandomDrop<P> {
    /// An empty queue, preallocated to its limits; `seed` keys the RNG stream of the
    /// victim draws. Fails when `cfg` does not [`validate`](RandomDropConfig::validate).
    pub fn new(cfg: &RandomDropConfig, seed: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(RandomDrop {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
            early: cfg
                .early_drop_threshold_pkts
                .map(|t| (t, cfg.early_drop_prob)),
            rng: rng_for(seed, streams::RANDOM_DROP),
        })
    }
}

impl<P: PacketLike + Send> Qdisc<P> for RandomDrop<P> {
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
        let n = self.fifo.len_pkts();
        if let Some((threshold, p)) = self.early {
            if n >= threshold && self.rng.random::<f64>() < p {
                return self.fifo.refuse(pkt, len, DropReason::Early);
            }
        }
        if self.fifo.fits(len) {
            self.fifo.admit(now, pkt, len);
            return Enqueue::Queued;
        }
        // Full: every one of the n queued packets and the arriving one is equally likely to
        // be the victim (index n stands for the arriving packet).
        let victim = self.rng.random_range(0..=n);
        if victim == n {
            return self.fifo.refuse(pkt, len, DropReason::RandomDrop);
        }
        if !self.fifo.fits_instead_of(self.fifo.len_at(victim), len) {
            // Byte limit with unequal sizes: one victim would not make room, and dropping
            // more than one packet per arrival is not the algorithm; refuse the arrival.
            return self.fifo.refuse(pkt, len, DropReason::Overflow);
        }
        let v = self.fifo.evict(victim, DropReason::RandomDrop);
        self.fifo.admit(now, pkt, len);
        Enqueue::Displaced(v, DropReason::RandomDrop)
    }

    fn dequeue(&mut self, now: Instant, _drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        self.fifo.pop(now)
    }

    bookkeeping_methods!(fifo);

    fn name(&self) -> &'static str {
        "random_drop"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    /// Fill a 10-packet queue, offer an 11th packet, record which of the 11 positions was
    /// dropped; over 22,000 trials every position should get ~2,000. Pearson's chi-square with
    /// 10 degrees of freedom has a 0.1 % critical value of 29.6.
    #[test]
    fn victims_are_uniform_over_queue_and_arrival() {
        let mut q = RandomDrop::new(&RandomDropConfig::packets(10), 42).unwrap();
        let mut hits = [0u64; 11];
        let trials = 22_000;
        for _ in 0..trials {
            for i in 0..10 {
                assert!(q.enqueue(t_ms(0.0), TestPacket::new(i, i, 100)).is_queued());
            }
            let victim = match q.enqueue(t_ms(0.0), TestPacket::new(10, 10, 100)) {
                Enqueue::Dropped(p, DropReason::RandomDrop) => p.id,
                Enqueue::Displaced(p, DropReason::RandomDrop) => p.id,
                other => panic!("{other:?}"),
            };
            hits[victim as usize] += 1;
            let (out, _) = drain(&mut q, t_ms(1.0));
            // FIFO order of the survivors is kept.
            assert!(out.windows(2).all(|w| w[0].id < w[1].id));
            assert_eq!(out.len(), 10);
        }
        let expect = trials as f64 / 11.0;
        let chi2: f64 = hits
            .iter()
            .map(|&h| (h as f64 - expect).powi(2) / expect)
            .sum();
        assert!(chi2 < 29.6, "chi2 = {chi2}, hits = {hits:?}");
        let s = q.stats();
        assert_eq!(s.dropped_random, trials);
        assert_eq!(s.arrived, s.dequeued + s.dropped());
    }

    #[test]
    fn same_seed_same_victims() {
        let run = |seed| {
            let mut q = RandomDrop::new(&RandomDropConfig::packets(5), seed).unwrap();
            (0..100u64)
                .filter_map(|i| {
                    q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 100))
                        .into_dropped()
                })
                .map(|(p, _)| p.id)
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }

    #[test]
    fn early_random_drop_only_above_threshold() {
        let cfg = RandomDropConfig {
            early_drop_threshold_pkts: Some(5),
            early_drop_prob: 0.25,
            ..RandomDropConfig::packets(1000)
        };
        let mut q = RandomDrop::new(&cfg, 1).unwrap();
        for i in 0..5 {
            assert!(q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 100)).is_queued());
        }
        let mut early = 0;
        let n = 20_000;
        for i in 0..n {
            match q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 100)) {
                Enqueue::Queued => {
                    let _ = q.dequeue(t_ms(0.0), &mut |_, _| {});
                }
                Enqueue::Dropped(_, DropReason::Early) => early += 1,
                other => panic!("{other:?}"),
            }
        }
        let rate = early as f64 / n as f64;
        assert!((rate - 0.25).abs() < 0.01, "{rate}");
    }
}
