//! Property tests: every queue discipline conserves packets and bytes, never exceeds its
//! limits, keeps FIFO order within a flow, and reports exactly the packets it drops; links
//! never exceed their rate; impairments are reproducible from the seed.

use ackclock_gateway::{
    CodelConfig, DecBitGatewayConfig, DropTailConfig, DrrConfig, Enqueue, FqCodelConfig,
    Impairments, ImpairmentsConfig, Link, LinkConfig, QdiscConfig, RandomDropConfig, RedConfig,
    ReorderConfig, TestPacket, Verdict,
};
use ackclock_wire::Instant;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

#[derive(Clone, Debug)]
enum Op {
    Enqueue {
        flow: u64,
        len: usize,
        ect: bool,
        dt_us: u64,
    },
    Dequeue {
        dt_us: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u64..6, 40usize..=1500, any::<bool>(), 0u64..3000)
            .prop_map(|(flow, len, ect, dt_us)| Op::Enqueue { flow, len, ect, dt_us }),
        2 => (0u64..5000).prop_map(|dt_us| Op::Dequeue { dt_us }),
    ]
}

/// Configurations with small limits and aggressive AQM settings, so that every drop path
/// is exercised within a few hundred operations.
fn configs() -> Vec<(QdiscConfig, Option<usize>, Option<usize>)> {
    vec![
        (
            QdiscConfig::DropTail(DropTailConfig::packets(8)),
            Some(8),
            None,
        ),
        (
            QdiscConfig::DropTail(DropTailConfig::bytes(6000)),
            None,
            Some(6000),
        ),
        (
            QdiscConfig::DropTail(DropTailConfig {
                mark_threshold_pkts: None,
                limit_pkts: Some(10),
                limit_bytes: Some(9000),
            }),
            Some(10),
            Some(9000),
        ),
        (
            QdiscConfig::DropTail(DropTailConfig {
                mark_threshold_pkts: Some(3),
                ..DropTailConfig::packets(8)
            }),
            Some(8),
            None,
        ),
        (
            QdiscConfig::DecBit(DecBitGatewayConfig {
                limit_pkts: Some(8),
                limit_bytes: None,
                threshold_pkts: 1.0,
            }),
            Some(8),
            None,
        ),
        (
            QdiscConfig::RandomDrop(RandomDropConfig::packets(8)),
            Some(8),
            None,
        ),
        (
            QdiscConfig::RandomDrop(RandomDropConfig {
                limit_pkts: None,
                limit_bytes: Some(5000),
                early_drop_threshold_pkts: Some(3),
                early_drop_prob: 0.2,
            }),
            None,
            Some(5000),
        ),
        (
            QdiscConfig::Red(RedConfig {
                limit_pkts: Some(12),
                min_th_pkts: 2.0,
                max_th_pkts: 6.0,
                max_p: 0.3,
                w_q: 0.2,
                link_rate_bps: Some(10_000_000),
                ecn: true,
                ..RedConfig::default()
            }),
            Some(12),
            None,
        ),
        (
            QdiscConfig::Red(RedConfig {
                limit_pkts: None,
                limit_bytes: Some(8000),
                min_th_pkts: 1.0,
                max_th_pkts: 4.0,
                w_q: 0.5,
                gentle: true,
                byte_mode: true,
                ..RedConfig::default()
            }),
            None,
            Some(8000),
        ),
        (
            QdiscConfig::Drr(DrrConfig {
                limit_pkts: 9,
                quantum_bytes: 700,
                buckets: 4,
                limit_bytes: None,
            }),
            Some(9),
            None,
        ),
        (
            QdiscConfig::Drr(DrrConfig {
                limit_pkts: 100,
                limit_bytes: Some(7000),
                ..DrrConfig::default()
            }),
            Some(100),
            Some(7000),
        ),
        (
            QdiscConfig::Codel(CodelConfig {
                target_ms: 0.5,
                interval_ms: 3.0,
                limit_pkts: Some(15),
                ecn: true,
                ..CodelConfig::default()
            }),
            Some(15),
            None,
        ),
        (
            QdiscConfig::FqCodel(FqCodelConfig {
                buckets: 8,
                limit_pkts: 10,
                quantum_bytes: 300,
                target_ms: 0.5,
                interval_ms: 3.0,
                ecn: false,
                ..FqCodelConfig::default()
            }),
            Some(10),
            None,
        ),
        (
            QdiscConfig::FqCodel(FqCodelConfig {
                limit_bytes: Some(6000),
                target_ms: 1.0,
                interval_ms: 5.0,
                ..FqCodelConfig::default()
            }),
            Some(10240),
            Some(6000),
        ),
    ]
}

fn check(
    cfg: &QdiscConfig,
    lim_p: Option<usize>,
    lim_b: Option<usize>,
    ops: &[Op],
    seed: u64,
) -> Result<(), TestCaseError> {
    let mut q = cfg.build::<TestPacket>(seed).unwrap();
    // The model: what should be in the queue, by id.
    let mut inside: HashMap<u64, (u64, usize)> = HashMap::new();
    let mut last_out: BTreeMap<u64, u64> = BTreeMap::new();
    let mut now = 0u64;
    let mut next_id = 0u64;
    let mut arrival_drops = 0u64;
    for op in ops {
        match *op {
            Op::Enqueue {
                flow,
                len,
                ect,
                dt_us,
            } => {
                now += dt_us * 1000;
                let id = next_id;
                next_id += 1;
                let mut p = TestPacket::new(id, flow, len);
                p.ect = ect;
                match q.enqueue(Instant::from_nanos(now), p) {
                    Enqueue::Queued => {
                        inside.insert(id, (flow, len));
                    }
                    Enqueue::Dropped(p, _) => {
                        prop_assert_eq!(p.id, id, "Dropped must return the arriving packet");
                        arrival_drops += 1;
                    }
                    Enqueue::Displaced(v, _) => {
                        prop_assert!(v.id != id);
                        prop_assert!(
                            inside.remove(&v.id).is_some(),
                            "victim {} was not queued",
                            v.id
                        );
                        inside.insert(id, (flow, len));
                    }
                }
            }
            Op::Dequeue { dt_us } => {
                now += dt_us * 1000;
                let mut dropped = Vec::new();
                let out = q.dequeue(Instant::from_nanos(now), &mut |p, _| dropped.push(p));
                for d in &dropped {
                    prop_assert!(
                        inside.remove(&d.id).is_some(),
                        "dequeue-dropped {} was not queued",
                        d.id
                    );
                    prop_assert!(!d.ce);
                }
                if let Some(p) = out {
                    prop_assert!(
                        inside.remove(&p.id).is_some(),
                        "dequeued {} was not queued",
                        p.id
                    );
                    prop_assert!(!p.ce || p.ect, "only ECT packets are marked");
                    if let Some(&prev) = last_out.get(&p.flow) {
                        prop_assert!(
                            p.id > prev,
                            "flow {} reordered: {} after {}",
                            p.flow,
                            p.id,
                            prev
                        );
                    }
                    last_out.insert(p.flow, p.id);
                } else {
                    prop_assert_eq!(
                        q.len_pkts(),
                        0,
                        "dequeue returned nothing from a non-empty queue"
                    );
                }
            }
        }
        let s = q.stats();
        let bytes: usize = inside.values().map(|&(_, l)| l).sum();
        prop_assert_eq!(q.len_pkts(), inside.len());
        prop_assert_eq!(q.len_bytes(), bytes);
        prop_assert_eq!(s.arrived, s.dequeued + s.dropped() + q.len_pkts() as u64);
        prop_assert_eq!(s.enqueued, s.arrived - arrival_drops);
        prop_assert_eq!(
            s.bytes_in,
            s.bytes_out + s.bytes_dropped + q.len_bytes() as u64
        );
        if let Some(l) = lim_p {
            prop_assert!(q.len_pkts() <= l, "{} > limit {}", q.len_pkts(), l);
        }
        if let Some(l) = lim_b {
            prop_assert!(q.len_bytes() <= l, "{} > byte limit {}", q.len_bytes(), l);
        }
        prop_assert!(s.max_len_pkts >= q.len_pkts());
    }
    // Drain: everything comes out or is dropped, and the books balance.
    now += 10_000_000_000;
    while q
        .dequeue(Instant::from_nanos(now), &mut |_, _| {})
        .is_some()
    {}
    let s = q.stats();
    prop_assert_eq!(q.len_pkts(), 0);
    prop_assert_eq!(q.len_bytes(), 0);
    prop_assert_eq!(s.arrived, s.dequeued + s.dropped());
    prop_assert_eq!(s.delay_hist.count(), s.dequeued);
    Ok(())
}

/// The properties above are only as good as the paths they reach: check that the same
/// configurations, driven hard, really do drop (and mark) by every mechanism.
#[test]
fn the_configurations_exercise_every_drop_path() {
    // 3 arrivals (6 flows, mixed sizes, half ECT) per dequeue, 300 us apart.
    let mut ops = Vec::new();
    for i in 0..3000u64 {
        ops.push(Op::Enqueue {
            flow: i % 6,
            len: 40 + (i as usize * 397) % 1461,
            ect: i % 2 == 0,
            dt_us: 100,
        });
        if i % 3 == 2 {
            ops.push(Op::Dequeue { dt_us: 0 });
        }
    }
    for (cfg, lp, lb) in configs() {
        check(&cfg, lp, lb, &ops, 1).unwrap();
        let mut q = cfg.build::<TestPacket>(1).unwrap();
        let mut now = 0;
        for op in &ops {
            match *op {
                Op::Enqueue {
                    flow,
                    len,
                    ect,
                    dt_us,
                } => {
                    now += dt_us * 1000;
                    let mut p = TestPacket::new(0, flow, len);
                    p.ect = ect;
                    let _ = q.enqueue(Instant::from_nanos(now), p);
                }
                Op::Dequeue { .. } => {
                    let _ = q.dequeue(Instant::from_nanos(now), &mut |_, _| {});
                }
            }
        }
        let s = q.stats();
        assert!(s.dropped() > 0, "{}: no drops", cfg.kind());
        match &cfg {
            QdiscConfig::RandomDrop(c) => {
                assert!(s.dropped_random > 0);
                if c.early_drop_threshold_pkts.is_some() {
                    assert!(s.dropped_early > 0);
                }
            }
            QdiscConfig::Red(c) => {
                assert!(s.dropped_early + s.dropped_forced > 0);
                if c.ecn {
                    assert!(s.marked > 0, "red: no marks");
                }
            }
            QdiscConfig::Codel(_) => assert!(s.dropped_codel > 0 && s.marked > 0, "{s:?}"),
            QdiscConfig::FqCodel(_) => assert!(s.dropped_codel + s.marked > 0, "{s:?}"),
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(256))]

    #[test]
    fn every_qdisc_conserves_packets(ops in prop::collection::vec(op(), 1..400), seed in any::<u64>()) {
        for (cfg, lp, lb) in configs() {
            check(&cfg, lp, lb, &ops, seed).map_err(|e| TestCaseError::fail(format!("{}: {e}", cfg.kind())))?;
        }
    }

    #[test]
    fn link_never_exceeds_its_rate(sizes in prop::collection::vec((40usize..=1500, 0u64..2_000_000), 1..200),
                                   rate in 1_000u64..10_000_000_000) {
        let cfg = LinkConfig { framing_overhead_bytes: 38, min_wire_bytes: 84, ..LinkConfig::new(rate, 3.0) };
        let mut link = Link::new(&cfg).unwrap();
        let mut now = 0u64;
        let mut prev_done = Instant::ZERO;
        for (len, dt) in sizes {
            now += dt;
            let t = Instant::from_nanos(now);
            let (done, arrive) = link.transmit(t, len);
            let ser = cfg.serialization_time(len);
            prop_assert!(done >= prev_done + ser, "overlapping transmissions");
            prop_assert!(done >= t + ser);
            prop_assert_eq!(arrive, done + cfg.propagation_delay());
            // Exact: ser * rate >= bits > (ser - 1 ns) * rate.
            let bits = cfg.wire_bytes(len) as u128 * 8 * 1_000_000_000;
            prop_assert!(u128::from(ser.as_nanos()) * u128::from(rate) >= bits);
            prop_assert!(u128::from(ser.as_nanos() - 1) * u128::from(rate) < bits);
            prev_done = done;
        }
    }

    #[test]
    fn impairments_replay_from_the_seed(seed in any::<u64>(), n in 1usize..500) {
        let cfg = ImpairmentsConfig {
            loss_prob: Some(0.1),
            ber: Some(1e-4),
            reorder: Some(ReorderConfig { prob: 0.1, delay_ms: 2.0 }),
            duplicate_prob: Some(0.1),
            ..Default::default()
        };
        let run = || {
            let mut imp = Impairments::new(&cfg, seed).unwrap();
            let v: Vec<Verdict> = (0..n as u64)
                .map(|i| imp.apply(Instant::from_nanos(i), &mut TestPacket::new(i, 0, 600)))
                .collect();
            (v, imp.stats().clone())
        };
        let (a, sa) = run();
        let (b, sb) = run();
        prop_assert_eq!(&a, &b);
        prop_assert_eq!(&sa, &sb);
        let drops = a.iter().filter(|v| matches!(v, Verdict::Drop(_))).count() as u64;
        prop_assert_eq!(drops, sa.dropped_random + sa.dropped_gilbert + sa.dropped_scripted);
        prop_assert_eq!(sa.packets, n as u64);
    }
}
