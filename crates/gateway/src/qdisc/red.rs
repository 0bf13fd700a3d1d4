//! Random Early Detection (S. Floyd and V. Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), the descendant of the "random" gateway
//! algorithms of seed 003. Section numbers below are the paper's.
//!
//! - The average queue is an EWMA with weight `w_q`, updated at each arrival (the paper's Fig. 2), so a
//!   burst passes while a persistent queue is signalled.
//! - When the queue has been empty, the average decays as if `m` zero-length samples had
//!   been taken, where `m` is the number of typical packets the link could have sent during
//!   the idle time (Fig. 2: `avg = (1 - w_q)^m avg`, with `m` a linear function of the idle
//!   time).
//! - Between `min_th` and `max_th` the base probability rises linearly to `max_p`; the
//!   actual probability `p_a = p_b / (1 - count p_b)` spaces marks so that the number of
//!   arrivals between marks is uniform on {1, ..., 1/p_b} rather than geometric (the paper's derivation of the marking probability), which
//!   avoids clustered drops that would hit one flow's window repeatedly.
//! - Above `max_th` every arrival is marked (a "forced" drop) - or, with the "gentle"
//!   variant (Floyd, "Recommendation on using the gentle_ variant of RED", 2000), the
//!   probability rises linearly from `max_p` at `max_th` to 1 at `2 max_th`.
//! - Byte mode (the paper's `p_b <- p_b PacketSize/MaximumPacketSize`; ns-2's `bytes_`): the queue is measured in bytes, expressed in units of
//!   `mean_pkt_bytes`, and `p_b` is scaled by `len / max_pkt_bytes` so large packets are more
//!   likely to be marked.
//! - ECN (RFC 3168 §5, §7): an early "mark" sets CE on an ECN-capable packet instead of
//!   dropping it. Forced marks (average beyond max_th, or 2 max_th when gentle) stay drops,
//!   like Linux RED's `harddrop` option: an average that high means CE is not being heeded,
//!   and a flow that ignores CE must not be able to hold the buffer full.
//! - A hard `limit` bounds the real buffer.

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, rng_for, streams, DropReason, Enqueue, Qdisc};
use crate::error::{check_non_negative, check_positive, check_prob, ConfigError};
use crate::packet::PacketLike;
use ackclock_wire::Instant;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// `kind = "red"`. Thresholds are in packets (in byte mode: in units of `mean_pkt_bytes`).
/// Defaults are the paper's simulations: `w_q` 0.002, `min_th` 5, `max_th` 15, `max_p` 1/50.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Hard limit of the real buffer (at least one of the two limits is required).
    #[serde(default)]
    pub limit_pkts: Option<usize>,
    /// Hard limit of the real buffer, in IP bytes.
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// `min_th`: below this average queue nothing is marked (default 5).
    #[serde(default = "default_min_th")]
    pub min_th_pkts: f64,
    /// `max_th`: from this average queue on, every arrival is dropped, or with `gentle`
    /// the probability rises on to 1 at twice this (default 15).
    #[serde(default = "default_max_th")]
    pub max_th_pkts: f64,
    /// `max_p`: the base marking probability `p_b` at `max_th` (default 1/50).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// `w_q`: the weight of each new sample in the EWMA of the queue length (default
    /// 0.002).
    #[serde(default = "default_w_q")]
    pub w_q: f64,
    /// Floyd's gentle variant: between `max_th` and `2 max_th`, `p_b` rises linearly from
    /// `max_p` to 1 instead of jumping to forced drops.
    #[serde(default)]
    pub gentle: bool,
    /// Measure the queue in bytes (in units of `mean_pkt_bytes`) and scale `p_b` by
    /// `len / max_pkt_bytes`, so large packets are marked more often.
    #[serde(default)]
    pub byte_mode: bool,
    /// The "typical" packet: the unit of the queue in byte mode, and the packet whose
    /// transmission time counts the idle period.
    #[serde(default = "default_mean_pkt")]
    pub mean_pkt_bytes: usize,
    /// The largest packet, for byte mode's `p_b * len / max_pkt_bytes`.
    #[serde(default = "default_max_pkt")]
    pub max_pkt_bytes: usize,
    /// Mark ECN-capable packets (CE) instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
    /// Rate of the link this queue feeds, for the idle-time decay. Absent: the simulator fills
    /// it in from the link ([`QdiscConfig::set_link_rate_if_unset`](super::QdiscConfig::set_link_rate_if_unset));
    /// still absent, an arrival at an empty queue counts as one zero sample.
    #[serde(default)]
    pub link_rate_bps: Option<u64>,
}

fn default_min_th() -> f64 {
    5.0
}
fn default_max_th() -> f64 {
    15.0
}
fn default_max_p() -> f64 {
    0.02
}
fn default_w_q() -> f64 {
    0.002
}
fn default_mean_pkt() -> usize {
    500
}
fn default_max_pkt() -> usize {
    1500
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit_pkts: Some(60),
            limit_bytes: None,
            min_th_pkts: default_min_th(),
            max_th_pkts: default_max_th(),
            max_p: default_max_p(),
            w_q: default_w_q(),
            gentle: false,
            byte_mode: false,
            mean_pkt_bytes: default_mean_pkt(),
            max_pkt_bytes: default_max_pkt(),
            ecn: false,
            link_rate_bps: None,
        }
    }
}

/// What RED decides for one arrival, given the average queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RedRegion {
    /// avg < min_th: never mark.
    Below,
    /// Mark with base probability `p_b` (before count spacing and byte scaling).
    Probabilistic(f64),
    /// Mark every arrival.
    Forced,
}

impl RedConfig {
    /// Checks the limits, `0 <= min_th < max_th`, `max_p` and `w_q` probabilities (`w_q`
    /// not zero), packet sizes of at least one byte and a non-zero link rate;
    /// [`Red::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        const C: &str = "red";
        check_limits(C, self.limit_pkts, self.limit_bytes)?;
        check_non_negative(C, "min_th_pkts", self.min_th_pkts)?;
        check_positive(C, "max_th_pkts", self.max_th_pkts)?;
        if self.max_th_pkts <= self.min_th_pkts {
            return Err(ConfigError::new(
                C,
                "max_th_pkts",
                format!(
                    "is {} but must exceed min_th_pkts ({}); Floyd suggests max_th = 3 min_th",
                    self.max_th_pkts, self.min_th_pkts
                ),
            ));
        }
        check_prob(C, "max_p", self.max_p)?;
        check_prob(C, "w_q", self.w_q)?;
        if self.w_q == 0.0 {
            return Err(ConfigError::new(
                C,
                "w_q",
                "is 0; the average would never move (0.002 is usual)".into(),
            ));
        }
        if self.mean_pkt_bytes == 0 || self.max_pkt_bytes == 0 {
            return Err(ConfigError::new(
                C,
                "mean_pkt_bytes",
                "and max_pkt_bytes must be at least 1".into(),
            ));
        }
        if self.link_rate_bps == Some(0) {
            return Err(ConfigError::new(
                C,
                "link_rate_bps",
                "is 0; give the link's rate or leave it out".into(),
            ));
        }
        Ok(())
    }

    /// The paper's base marking probability `p_b` for an average queue `avg` (in packets):
    /// linear from 0 at min_th to max_p at max_th (Fig. 2), then either forced, or in gentle mode
    /// linear from max_p at max_th to 1 at 2 max_th.
    pub fn region(&self, avg: f64) -> RedRegion {
        let (min, max) = (self.min_th_pkts, self.max_th_pkts);
        if avg < min {
            RedRegion::Below
        } else if avg < max {
            RedRegion::Probabilistic(self.max_p * (avg - min) / (max - min))
        } else if self.gentle && avg < 2.0 * max {
            RedRegion::Probabilistic(self.max_p + (1.0 - self.max_p) * (avg - max) / max)
        } else {
            RedRegion::Forced
        }
    }
}

/// Random Early Detection (`kind = "red"`, Floyd & Jacobson 1993): early drops, or ECN
/// marks, with a probability driven by an EWMA of the queue length, so that a persistent
/// queue is signalled while a burst passes.
pub struct Red<P> {
    fifo: Fifo<P>,
    cfg: RedConfig,
    /// The average queue, in packets (byte mode: bytes / mean_pkt_bytes).
    avg: f64,
    /// Unmarked arrivals since the last mark while avg >= min_th (the paper's `count`).
    count: u64,
    /// When the queue last became empty (`q_time`), if it is empty.
    idle_since: Option<Instant>,
    /// Transmission time of a typical packet in ns (the paper's `s`), if the link rate is known.
    s_ns: Option<f64>,
    rng: ChaCha8Rng,
}

impl<P: PacketLike> Red<P> {
    /// An empty queue, idle since time zero, with an average of zero; `seed` keys the RNG
    /// stream of the marking draws. Fails when `cfg` does not
    /// [`validate`](RedConfig::validate).
    pub fn new(cfg: &RedConfig, seed: u64) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Red {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
            cfg: cfg.clone(),
            avg: 0.0,
            count: 0,
            idle_since: Some(Instant::ZERO),
            s_ns: cfg
                .link_rate_bps
                .map(|r| cfg.mean_pkt_bytes as f64 * 8.0 * 1e9 / r as f64),
            rng: rng_for(seed, streams::RED),
        })
    }

    /// The current average queue (packets, or mean-size packets in byte mode).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The paper's `count`.
    pub fn count(&self) -> u64 {
        self.count
    }

    fn instantaneous(&self) -> f64 {
        if self.cfg.byte_mode {
            self.fifo.len_bytes() as f64 / self.cfg.mean_pkt_bytes as f64
        } else {
            self.fifo.len_pkts() as f64
        }
    }

    /// Fig. 2, "calculate the new average queue size avg".
    fn update_avg(&mut self, now: Instant) {
        let w = self.cfg.w_q;
        match (self.idle_since, self.s_ns) {
            (Some(since), Some(s)) if self.fifo.is_empty() => {
                let m = (now - since).as_nanos() as f64 / s;
                self.avg *= (1.0 - w).powf(m);
            }
            _ => {
                self.avg = (1.0 - w) * self.avg + w * self.instantaneous();
            }
        }
    }
}

impl<P: PacketLike + Send> Qdisc<P> for Red<P> {
    fn enqueue(&mut self, now: Instant, mut pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
        self.update_avg(now);
        let verdict = match self.cfg.region(self.avg) {
            RedRegion::Below => {
                self.count = 0;
                None
            }
            RedRegion::Probabilistic(mut pb) => {
                if self.cfg.byte_mode {
                    pb = (pb * len as f64 / self.cfg.max_pkt_bytes as f64).min(1.0);
                }
                // p_a = p_b / (1 - count p_b), with count the unmarked arrivals since the
                // last mark, gives inter-mark gaps uniform on {1, ..., 1/p_b}.
                let c = self.count as f64 * pb;
                let pa = if c >= 1.0 { 1.0 } else { pb / (1.0 - c) };
                if self.rng.random::<f64>() < pa {
                    self.count = 0;
                    Some(DropReason::Early)
                } else {
                    self.count += 1;
                    None
                }
            }
            RedRegion::Forced => {
                self.count = 0;
                Some(DropReason::Forced)
            }
        };
        match verdict {
            Some(DropReason::Early) if self.cfg.ecn && pkt.ecn_capable() => {
                pkt.set_ce();
                self.fifo.marked();
            }
            Some(why) => return self.fifo.refuse(pkt, len, why),
            None => {}
        }
        if !self.fifo.fits(len) {
            return self.fifo.refuse(pkt, len, DropReason::Overflow);
        }
        self.fifo.admit(now, pkt, len);
        self.idle_since = None;
        Enqueue::Queued
    }

    fn dequeue(&mut self, now: Instant, _drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        let p = self.fifo.pop(now);
        if p.is_some() && self.fifo.is_empty() {
            // Fig. 2: "when queue becomes empty, q_time <- time".
            self.idle_since = Some(now);
        }
        p
    }

    bookkeeping_methods!(fifo);

    fn name(&self) -> &'static str {
        "red"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn drop_probability_curve() {
        let cfg = RedConfig {
            min_th_pkts: 5.0,
            max_th_pkts: 15.0,
            max_p: 0.1,
            ..RedConfig::default()
        };
        assert_eq!(cfg.region(4.99), RedRegion::Below);
        for avg in [5.0, 7.5, 10.0, 14.9] {
            let RedRegion::Probabilistic(pb) = cfg.region(avg) else {
                panic!()
            };
            assert!(close(pb, 0.1 * (avg - 5.0) / 10.0, 1e-12), "{avg}: {pb}");
        }
        assert_eq!(cfg.region(15.0), RedRegion::Forced);
        assert_eq!(cfg.region(100.0), RedRegion::Forced);
        let gentle = RedConfig {
            gentle: true,
            ..cfg
        };
        for avg in [15.0, 20.0, 29.9] {
            let RedRegion::Probabilistic(pb) = gentle.region(avg) else {
                panic!()
            };
            assert!(
                close(pb, 0.1 + 0.9 * (avg - 15.0) / 15.0, 1e-12),
                "{avg}: {pb}"
            );
        }
        assert_eq!(gentle.region(30.0), RedRegion::Forced);
    }

    /// Holds the instantaneous queue at `k` packets (w_q = 1 makes avg = q) and returns the
    /// arrival indices of the drops.
    fn drops_at_constant_queue(cfg: &RedConfig, k: u64, arrivals: u64, seed: u64) -> Vec<u64> {
        let mut q = Red::new(cfg, seed).unwrap();
        // Early drops may refuse some of the filling packets: fill until the queue is k.
        while (q.len_pkts() as u64) < k {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(0, 0, 1000));
        }
        assert_eq!(q.len_pkts() as u64, k);
        let mut drops = Vec::new();
        for i in 0..arrivals {
            match q.enqueue(t_ms(1.0), TestPacket::new(i, 0, 1000)) {
                Enqueue::Queued => {
                    q.dequeue(t_ms(1.0), &mut |_, _| {}).unwrap();
                }
                Enqueue::Dropped(_, DropReason::Early) => drops.push(i),
                other => panic!("{other:?}"),
            }
        }
        drops
    }

    #[test]
    fn count_spacing_makes_gaps_uniform() {
        // avg = 10 with min 5, max 15, max_p 0.1: p_b = 0.05, so gaps are uniform on 1..=20
        // and the long-run mark rate is 1/E[gap] = 2/21.
        let cfg = RedConfig {
            w_q: 1.0,
            max_p: 0.1,
            limit_pkts: Some(100),
            ..RedConfig::default()
        };
        let drops = drops_at_constant_queue(&cfg, 10, 200_000, 3);
        let gaps: Vec<u64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|&g| (1..=20).contains(&g)),
            "gap outside 1..=20"
        );
        let mut hist = [0f64; 21];
        for &g in &gaps {
            hist[g as usize] += 1.0;
        }
        let expect = gaps.len() as f64 / 20.0;
        let chi2: f64 = hist[1..]
            .iter()
            .map(|h| (h - expect).powi(2) / expect)
            .sum();
        // 19 degrees of freedom: 0.1 % critical value 43.8.
        assert!(chi2 < 43.8, "chi2 {chi2} hist {hist:?}");
        let rate = drops.len() as f64 / 200_000.0;
        assert!(close(rate, 2.0 / 21.0, 0.003), "{rate}");
    }

    #[test]
    fn forced_region_drops_everything_and_gentle_does_not() {
        let base = RedConfig {
            w_q: 1.0,
            max_p: 0.1,
            limit_pkts: Some(100),
            ..RedConfig::default()
        };
        let mut q = Red::new(&base, 1).unwrap();
        while q.len_pkts() < 15 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(0, 0, 1000));
        }
        // avg = 15 = max_th: every arrival is a forced drop.
        for i in 0..100 {
            assert_eq!(
                q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 1000))
                    .into_dropped()
                    .unwrap()
                    .1,
                DropReason::Forced
            );
        }
        // Gentle at avg = 22 (between max_th and 2 max_th): probabilistic, not forced.
        let gentle = RedConfig {
            gentle: true,
            ..base
        };
        let drops = drops_at_constant_queue(&gentle, 22, 100_000, 5);
        // p_b = 0.1 + 0.9 * 7/15 = 0.52: p_a is 0.52 for the first arrival after a mark and 1
        // for the second, so gaps are 1 or 2 and the mark rate 1/(2 - 0.52) = 0.676.
        let pb = 0.1 + 0.9 * 7.0 / 15.0;
        let rate = drops.len() as f64 / 100_000.0;
        assert!(close(rate, 1.0 / (2.0 - pb), 0.005), "{rate} vs pb {pb}");
    }

    #[test]
    fn ewma_of_a_constant_queue() {
        let cfg = RedConfig {
            limit_pkts: Some(1000),
            min_th_pkts: 500.0,
            max_th_pkts: 900.0,
            ..RedConfig::default()
        };
        let mut q = Red::new(&cfg, 0).unwrap();
        // Arrivals at t=0 see queues of 0 (idle: no rate known, so a zero sample), 1, ..., 9.
        let mut expect = 0.0f64;
        for i in 0..10u64 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 100));
            expect = 0.998 * expect + 0.002 * i as f64;
        }
        assert!(close(q.avg(), expect, 1e-12));
        // Then n arrivals, each followed by a departure, all seeing q = 10:
        // avg_n = 10 + (avg_0 - 10) * 0.998^n.
        let a0 = q.avg();
        for n in 1..=2000u64 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(n, 0, 100));
            q.dequeue(t_ms(0.0), &mut |_, _| {}).unwrap();
            if n % 500 == 0 {
                let want = 10.0 + (a0 - 10.0) * 0.998f64.powi(n as i32);
                assert!(close(q.avg(), want, 1e-9), "n={n}: {} vs {want}", q.avg());
            }
        }
        // After 2000 samples the average is within 2 % of the queue (0.998^2000 = 1.8 %).
        assert!(close(q.avg(), 10.0, 0.2));
    }

    #[test]
    fn idle_time_decays_the_average() {
        // 10 Mb/s link, 500-byte typical packet: s = 400 us.
        let cfg = RedConfig {
            limit_pkts: Some(1000),
            min_th_pkts: 500.0,
            max_th_pkts: 900.0,
            w_q: 0.01,
            link_rate_bps: Some(10_000_000),
            ..RedConfig::default()
        };
        let mut q = Red::new(&cfg, 0).unwrap();
        for i in 0..100 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 500));
        }
        let (_, _) = drain(&mut q, t_ms(10.0)); // the queue empties at t = 10 ms
        let a = q.avg();
        assert!(a > 30.0);
        // 40 ms idle = 100 typical transmission times: avg *= 0.99^100.
        let _ = q.enqueue(t_ms(50.0), TestPacket::new(1000, 0, 500));
        assert!(
            close(q.avg(), a * 0.99f64.powi(100), 1e-9),
            "{} vs {}",
            q.avg(),
            a * 0.99f64.powi(100)
        );
    }

    #[test]
    fn ecn_marks_instead_of_dropping_early_but_not_when_forced() {
        let cfg = RedConfig {
            w_q: 1.0,
            max_p: 1.0,
            ecn: true,
            limit_pkts: Some(100),
            ..RedConfig::default()
        };
        let mut q = Red::new(&cfg, 9).unwrap();
        for i in 0..14 {
            assert!(q
                .enqueue(t_ms(0.0), TestPacket::new(i, 0, 1000).with_ect())
                .is_queued());
        }
        // avg = 14: p_b = 0.9; some arrivals get marked, none dropped.
        for i in 0..20 {
            let r = q.enqueue(t_ms(0.0), TestPacket::new(100 + i, 0, 1000).with_ect());
            assert!(r.is_queued());
            q.dequeue(t_ms(0.0), &mut |_, _| {}).unwrap();
        }
        assert!(q.stats().marked > 0);
        assert_eq!(q.stats().dropped(), 0);
        // Not-ECT packets are dropped.
        let r = (0..20).map(|i| q.enqueue(t_ms(0.0), TestPacket::new(200 + i, 0, 1000)));
        assert!(r.map(|r| r.is_queued() as u32).sum::<u32>() < 20);
        let (out, _) = drain(&mut q, t_ms(0.0));
        assert!(out.iter().any(|p| p.ce));
    }

    #[test]
    fn hard_limit_and_byte_mode() {
        let cfg = RedConfig {
            limit_pkts: Some(3),
            min_th_pkts: 50.0,
            max_th_pkts: 100.0,
            ..RedConfig::default()
        };
        let mut q = Red::new(&cfg, 0).unwrap();
        for i in 0..3 {
            assert!(q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 100)).is_queued());
        }
        assert_eq!(
            q.enqueue(t_ms(0.0), TestPacket::new(3, 0, 100))
                .into_dropped()
                .unwrap()
                .1,
            DropReason::Overflow
        );
        // Byte mode: 6 x 1000 bytes with mean_pkt 500 is 12 "packets" of queue.
        let cfg = RedConfig {
            byte_mode: true,
            w_q: 1.0,
            limit_pkts: Some(100),
            ..RedConfig::default()
        };
        let mut q = Red::new(&cfg, 0).unwrap();
        for i in 0..6 {
            let _ = q.enqueue(t_ms(0.0), TestPacket::new(i, 0, 1000));
        }
        let _ = q.enqueue(t_ms(0.0), TestPacket::new(6, 0, 40));
        assert!(close(q.avg(), 12.0, 1e-12), "{}", q.avg());
    }

    #[test]
    fn config_errors_name_the_field() {
        let bad = RedConfig {
            min_th_pkts: 10.0,
            max_th_pkts: 5.0,
            ..RedConfig::default()
        };
        let e = bad.validate().unwrap_err();
        assert_eq!(e.field, "max_th_pkts");
        assert!(e.to_string().contains("must exceed"));
    }
}
