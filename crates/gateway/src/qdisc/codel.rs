//! CoDel, Controlled Delay (RFC 8289; K. Nichols and V. Jacobson, "Controlling Queue Delay",
//! ACM Queue 2012). It looks at the *sojourn time* of each packet at dequeue: when the
//! minimum sojourn time has stayed above `target` for an `interval` (a "standing queue",
//! RFC 8289 §3), it drops a packet and then drops again at intervals that shrink as
//! `interval / sqrt(count)` (the control law), which for TCP's AIMD gives a linear
//! increase in drop rate per RTT until the queue drains below target.
//!
//! [`CodelVars::dequeue`] is the RFC's pseudocode (§5) line for line, over any queue
//! ([`CodelQueue`]), so [`Codel`] and [`FqCodel`](super::FqCodel) share it. ECN marking
//! follows Linux `codel_impl.h`: a packet that would be dropped is marked and sent instead,
//! and the drop schedule advances as if it had been dropped.

use super::fifo::{bookkeeping_methods, Fifo, Limits};
use super::{check_limits, DropReason, Enqueue, Qdisc};
use crate::error::{check_at_least, check_positive, ms_to_duration, ConfigError};
use crate::packet::PacketLike;
use crate::stats::QueueStats;
use ackclock_wire::{Duration, Instant};
use serde::{Deserialize, Serialize};

/// CoDel's constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC 8289: 5 ms).
    pub target: Duration,
    /// Time the delay must stay above target before acting; on the order of a worst-case
    /// RTT (RFC 8289: 100 ms).
    pub interval: Duration,
    /// MAXPACKET: a queue holding at most this many bytes is never dropped from, so a slow
    /// link whose one-packet transmission time exceeds target still stays busy (RFC 8289 §5, `dodequeue`).
    pub mtu_bytes: usize,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            mtu_bytes: 1500,
            ecn: false,
        }
    }
}

impl CodelParams {
    /// The control law (RFC 8289 §5, `control_law`): the next drop comes `interval / sqrt(count)` after `t`.
    pub fn control_law(&self, t: Instant, count: u32) -> Instant {
        let step = self.interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
        t + Duration::from_nanos(step.round() as u64)
    }
}

/// The per-queue state of the RFC 8289 §5 pseudocode (`first_above_time_`, `drop_next_`, `count_`,
/// `lastcount_`, `dropping_`). The RFC's "0 means unset" for `first_above_time_` is an
/// `Option`, because time zero is a real instant of a simulation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// `first_above_time_`: when the sojourn time, above target since a dequeue, will have
    /// been so for an interval and dropping may start; `None` while below target.
    pub first_above_time: Option<Instant>,
    /// `drop_next_`: when the next drop is due in the dropping state.
    pub drop_next: Instant,
    /// `count_`: packets dropped (or marked) in the dropping state, which spaces the drops
    /// `interval / sqrt(count)` apart.
    pub count: u32,
    /// `lastcount_`: `count` when the dropping state was last entered, to resume near the
    /// drop rate that controlled the queue then.
    pub lastcount: u32,
    /// `dropping_`: whether in the dropping state.
    pub dropping: bool,
}

/// A FIFO CoDel can pull from.
pub(crate) trait CodelQueue<P> {
    /// Removes the head packet, returning it with its enqueue time.
    fn pop(&mut self) -> Option<(P, Instant)>;
    /// The backlog in bytes that `bytes() <= MAXPACKET` of `dodequeue` tests (after the pop).
    fn backlog_bytes(&self) -> usize;
}

impl CodelVars {
    /// RFC 8289 §5 `dodequeue`: pops a packet and says whether the sojourn time has been
    /// above target for at least an interval.
    fn dodequeue<P, Q: CodelQueue<P>>(
        &mut self,
        now: Instant,
        params: &CodelParams,
        queue: &mut Q,
    ) -> (Option<(P, Instant)>, bool) {
        let Some((p, enq)) = queue.pop() else {
            // Queue is empty: we can't be above target.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn = now - enq;
        let mut ok_to_drop = false;
        if sojourn < params.target || queue.backlog_bytes() <= params.mtu_bytes {
            // Went below: stay below for at least an interval.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above from below; if still above at first_above_time, it's ok
                // to drop.
                None => self.first_above_time = Some(now + params.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        (Some((p, enq)), ok_to_drop)
    }

    /// RFC 8289 §5 `dequeue`. Dropped packets go to `drop`; marked ones (ECN) increment
    /// `marks` and are returned.
    pub(crate) fn dequeue<P: PacketLike, Q: CodelQueue<P>>(
        &mut self,
        now: Instant,
        params: &CodelParams,
        queue: &mut Q,
        drop: &mut dyn FnMut(P),
        marks: &mut u64,
    ) -> Option<(P, Instant)> {
        let (mut r, mut ok_to_drop) = self.dodequeue(now, params, queue);
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave drop state.
                self.dropping = false;
            }
            // Time for the next drop. Drop the current packet and dequeue the next; if that
            // doesn't take us out of drop state, schedule the next drop. A large backlog may
            // need several drops now, hence the loop.
            while self.dropping && now >= self.drop_next {
                let (mut p, enq) = r.take().expect("ok_to_drop implies a packet");
                self.count = self.count.saturating_add(1);
                if params.ecn && p.ecn_capable() {
                    p.set_ce();
                    *marks += 1;
                    self.drop_next = params.control_law(self.drop_next, self.count);
                    return Some((p, enq));
                }
                drop(p);
                (r, ok_to_drop) = self.dodequeue(now, params, queue);
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = params.control_law(self.drop_next, self.count);
                }
            }
        } else if ok_to_drop {
            // The sojourn time has been above target for an interval: enter drop state.
            let (mut p, enq) = r.take().expect("ok_to_drop implies a packet");
            if params.ecn && p.ecn_capable() {
                p.set_ce();
                *marks += 1;
                r = Some((p, enq));
            } else {
                drop(p);
                (r, _) = self.dodequeue(now, params, queue);
            }
            self.dropping = true;
            // If we went above target soon after last leaving drop state, resume at the drop
            // rate that controlled the queue then (drop_next is at most an interval after
            // the last drop, so now - drop_next approximates the time since it).
            let delta = self.count.saturating_sub(self.lastcount);
            let since = i128::from(now.as_nanos()) - i128::from(self.drop_next.as_nanos());
            self.count = if delta > 1 && since < 16 * i128::from(params.interval.as_nanos()) {
                delta
            } else {
                1
            };
            self.drop_next = params.control_law(now, self.count);
            self.lastcount = self.count;
        }
        r
    }

    /// [`dequeue`](Self::dequeue) with the statistics kept, for [`Codel`] and
    /// [`FqCodel`](super::FqCodel): each packet the control law drops is counted and handed to
    /// `drop`, each mark is counted, and the packet returned is counted as sent with its
    /// sojourn time. The backlog is `queue`'s to keep.
    pub(crate) fn dequeue_counted<P: PacketLike, Q: CodelQueue<P>>(
        &mut self,
        now: Instant,
        params: &CodelParams,
        queue: &mut Q,
        stats: &mut QueueStats,
        drop: &mut dyn FnMut(P, DropReason),
    ) -> Option<P> {
        let mut marks = 0;
        let r = self.dequeue(
            now,
            params,
            queue,
            &mut |p: P| {
                stats.on_drop(p.len_bytes(), DropReason::Codel);
                drop(p, DropReason::Codel);
            },
            &mut marks,
        );
        stats.marked += marks;
        let (p, enq) = r?;
        stats.on_dequeue(p.len_bytes(), now - enq);
        Some(p)
    }
}

/// `kind = "codel"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    /// Acceptable standing queue delay, in milliseconds (RFC 8289: 5).
    #[serde(default = "default_target")]
    pub target_ms: f64,
    /// How long the sojourn time must stay above target before a drop, in milliseconds;
    /// on the order of a worst-case RTT (RFC 8289: 100).
    #[serde(default = "default_interval")]
    pub interval_ms: f64,
    /// The real buffer (tail drop beyond it); Linux's default is 1000 packets.
    #[serde(default = "default_limit")]
    pub limit_pkts: Option<usize>,
    /// Optional hard limit in IP bytes (tail drop beyond it).
    #[serde(default)]
    pub limit_bytes: Option<usize>,
    /// MAXPACKET of RFC 8289 §5, in IP bytes.
    #[serde(default = "default_mtu")]
    pub mtu_bytes: usize,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 3168); the drop schedule
    /// advances as if they had been dropped.
    #[serde(default)]
    pub ecn: bool,
}

pub(crate) fn default_target() -> f64 {
    5.0
}
pub(crate) fn default_interval() -> f64 {
    100.0
}
fn default_limit() -> Option<usize> {
    Some(1000)
}
pub(crate) fn default_mtu() -> usize {
    1500
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target_ms: default_target(),
            interval_ms: default_interval(),
            limit_pkts: default_limit(),
            limit_bytes: None,
            mtu_bytes: default_mtu(),
            ecn: false,
        }
    }
}

pub(crate) fn validate_codel(
    component: &'static str,
    target_ms: f64,
    interval_ms: f64,
    mtu_bytes: usize,
) -> Result<(), ConfigError> {
    check_positive(component, "target_ms", target_ms)?;
    check_positive(component, "interval_ms", interval_ms)?;
    check_at_least(component, "mtu_bytes", mtu_bytes, 1)
}

impl CodelConfig {
    /// Checks the limits, a positive finite target and interval, and `mtu_bytes` of at
    /// least 1; [`Codel::new`] does this too.
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_limits("codel", self.limit_pkts, self.limit_bytes)?;
        validate_codel("codel", self.target_ms, self.interval_ms, self.mtu_bytes)
    }
    /// The constants, times rounded to the nanosecond.
    pub fn params(&self) -> CodelParams {
        CodelParams {
            target: ms_to_duration(self.target_ms),
            interval: ms_to_duration(self.interval_ms),
            mtu_bytes: self.mtu_bytes,
            ecn: self.ecn,
        }
    }
}

/// CoDel (`kind = "codel"`, RFC 8289): one FIFO, drops or marks at dequeue by the control
/// law; tail drop only at the hard limit.
pub struct Codel<P> {
    fifo: Fifo<P>,
    params: CodelParams,
    vars: CodelVars,
}

impl<P: PacketLike> Codel<P> {
    /// An empty queue, preallocated to its limits, not in the dropping state; fails when
    /// `cfg` does not [`validate`](CodelConfig::validate).
    pub fn new(cfg: &CodelConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Codel {
            fifo: Fifo::new(Limits::new(cfg.limit_pkts, cfg.limit_bytes)),
            params: cfg.params(),
            vars: CodelVars::default(),
        })
    }

    /// The RFC 8289 state variables, for tests and traces.
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
}

impl<P: PacketLike + Send> Qdisc<P> for Codel<P> {
    fn enqueue(&mut self, now: Instant, pkt: P) -> Enqueue<P> {
        let len = self.fifo.arrive(&pkt);
        self.fifo.admit_or_overflow(now, pkt, len)
    }

    fn dequeue(&mut self, now: Instant, drop: &mut dyn FnMut(P, DropReason)) -> Option<P> {
        let (mut head, stats) = self.fifo.codel_parts();
        self.vars
            .dequeue_counted(now, &self.params, &mut head, stats, drop)
    }

    bookkeeping_methods!(fifo);

    fn name(&self) -> &'static str {
        "codel"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;

    /// A bottleneck that serves one 1000-byte packet per ms, fed two per ms: the queue (and
    /// the sojourn time) grows without bound, so CoDel must enter drop state after target is
    /// exceeded for an interval and then drop at interval/sqrt(count) spacing.
    #[test]
    fn standing_queue_enters_dropping_and_follows_the_control_law() {
        let mut q = Codel::new(&CodelConfig {
            limit_pkts: Some(100_000),
            ..CodelConfig::default()
        })
        .unwrap();
        let mut drop_times = Vec::new();
        let mut id = 0;
        let mut first_above = None;
        for ms in 0..3000u64 {
            let now = Instant::from_nanos(ms * 1_000_000);
            for _ in 0..2 {
                let _ = q.enqueue(now, TestPacket::new(id, 0, 1000));
                id += 1;
            }
            let mut dropped_now = 0;
            let _ = q.dequeue(now, &mut |_, r| {
                assert_eq!(r, DropReason::Codel);
                dropped_now += 1;
            });
            if first_above.is_none() {
                first_above = q.vars().first_above_time;
            }
            for _ in 0..dropped_now {
                drop_times.push(ms);
            }
        }
        // The packet dequeued at t ms arrived at floor(t/2): its sojourn ceil(t/2) ms first
        // reaches the 5 ms target at t = 9, so first_above_time = 9 + 100 ms, and the first
        // drop happens at the first dequeue at or after it.
        let fa = first_above.unwrap().as_nanos();
        assert_eq!(fa, 109_000_000);
        assert_eq!(drop_times[0], 109, "first drop exactly at first_above_time");
        // Drop k+1 is scheduled at D_1 + sum_{i=1..k} 100/sqrt(i) ms after the first (the
        // schedule advances from drop_next, not from now, so errors don't accumulate); we
        // dequeue once per ms, so each drop lands in [D, D + 1 ms).
        let mut sched = drop_times[0] as f64;
        for (k, &t) in drop_times.iter().enumerate().skip(1) {
            sched += 100.0 / (k as f64).sqrt();
            assert!(
                (t as f64) >= sched - 1e-3 && (t as f64) < sched + 1.0,
                "drop {k} at {t} ms, scheduled {sched:.3} ms"
            );
        }
        assert!(drop_times.len() > 20, "{}", drop_times.len());
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count as usize, drop_times.len());
    }

    #[test]
    fn no_drops_below_target() {
        let mut q = Codel::new(&CodelConfig::default()).unwrap();
        // Bursts of 4 packets every 4 ms served at 1/ms: sojourn at most 3 ms < 5 ms.
        let mut id = 0;
        for ms in 0..10_000u64 {
            let now = Instant::from_nanos(ms * 1_000_000);
            if ms % 4 == 0 {
                for _ in 0..4 {
                    let _ = q.enqueue(now, TestPacket::new(id, 0, 1500));
                    id += 1;
                }
            }
            let _ = q.dequeue(now, &mut |_, _| panic!("dropped below target"));
        }
        assert_eq!(q.stats().dropped(), 0);
        assert!(q.vars().first_above_time.is_none());
    }

    #[test]
    fn a_single_packet_backlog_is_never_dropped() {
        // One MTU left in the queue: the "bytes() <= MAXPACKET" clause keeps the link busy
        // even with huge sojourn times (a slow link).
        let mut q = Codel::new(&CodelConfig::default()).unwrap();
        for s in 0..100u64 {
            let t = Instant::from_nanos(s * 1_000_000_000);
            let _ = q.enqueue(t, TestPacket::new(2 * s, 0, 1500));
            let _ = q.enqueue(t, TestPacket::new(2 * s + 1, 0, 1500));
            // 900 ms sojourn, far above target, but the backlog behind each departing packet
            // is at most one MTU.
            let later = t + Duration::from_millis(900);
            for _ in 0..2 {
                assert!(q.dequeue(later, &mut |_, _| panic!("dropped")).is_some());
            }
        }
        assert_eq!(q.stats().dequeued, 200);
    }

    #[test]
    fn leaving_and_reentering_drop_state_resumes_the_count() {
        let params = CodelParams::default();
        let mut v = CodelVars {
            count: 10,
            lastcount: 2,
            drop_next: Instant::from_nanos(1_000_000_000),
            first_above_time: Some(Instant::from_nanos(1_000_000_000)),
            dropping: false,
        };
        // A queue of old packets: the next dequeue enters drop state.
        struct Old(u32);
        impl CodelQueue<TestPacket> for Old {
            fn pop(&mut self) -> Option<(TestPacket, Instant)> {
                (self.0 > 0).then(|| {
                    self.0 -= 1;
                    (TestPacket::new(0, 0, 1500), Instant::ZERO)
                })
            }
            fn backlog_bytes(&self) -> usize {
                self.0 as usize * 1500
            }
        }
        let now = Instant::from_nanos(1_500_000_000);
        let mut drops = 0;
        let p = v.dequeue(now, &params, &mut Old(10), &mut |_| drops += 1, &mut 0);
        assert!(p.is_some());
        assert_eq!(drops, 1);
        assert!(v.dropping);
        // delta = 10 - 2 = 8 > 1 and now - drop_next = 0.5 s < 16 intervals: count = 8.
        assert_eq!(v.count, 8);
        assert_eq!(v.lastcount, 8);
        assert_eq!(v.drop_next, params.control_law(now, 8));
    }

    #[test]
    fn ecn_marks_instead_of_dropping() {
        let mut q = Codel::new(&CodelConfig {
            ecn: true,
            limit_pkts: Some(100_000),
            ..CodelConfig::default()
        })
        .unwrap();
        let mut id = 0;
        for ms in 0..1000u64 {
            let now = Instant::from_nanos(ms * 1_000_000);
            for _ in 0..2 {
                let _ = q.enqueue(now, TestPacket::new(id, 0, 1000).with_ect());
                id += 1;
            }
            let p = q
                .dequeue(now, &mut |_, _| panic!("ECT packet dropped"))
                .unwrap();
            let _ = p;
        }
        assert!(q.stats().marked > 5, "{}", q.stats().marked);
        assert_eq!(q.stats().dropped(), 0);
    }
}
