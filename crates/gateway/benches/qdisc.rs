//! Enqueue + dequeue cost per packet for each queue discipline, in steady state: the queue
//! holds a standing backlog of 64 packets over 16 flows, and each iteration offers one
//! packet and takes one out (time advances 100 us per packet, so the AQMs see real sojourn
//! times).

use ackclock_gateway::{
    CodelConfig, DrrConfig, FqCodelConfig, Impairments, ImpairmentsConfig, QdiscConfig,
    RandomDropConfig, RedConfig, ReorderConfig, TestPacket,
};
use ackclock_gateway::{DropTailConfig, GilbertElliottConfig, Qdisc};
use ackclock_wire::Instant;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn configs() -> Vec<QdiscConfig> {
    vec![
        QdiscConfig::DropTail(DropTailConfig::packets(1000)),
        QdiscConfig::RandomDrop(RandomDropConfig::packets(1000)),
        QdiscConfig::Red(RedConfig {
            limit_pkts: Some(1000),
            min_th_pkts: 30.0,
            max_th_pkts: 90.0,
            link_rate_bps: Some(100_000_000),
            ..RedConfig::default()
        }),
        QdiscConfig::Drr(DrrConfig::default()),
        QdiscConfig::Codel(CodelConfig::default()),
        QdiscConfig::FqCodel(FqCodelConfig::default()),
    ]
}

fn bench_qdiscs(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue_dequeue");
    g.throughput(Throughput::Elements(1));
    for cfg in configs() {
        let mut q: Box<dyn Qdisc<TestPacket>> = cfg.build(1).unwrap();
        let mut now = 0u64;
        let mut id = 0u64;
        for _ in 0..64 {
            let _ = q.enqueue(Instant::from_nanos(now), TestPacket::new(id, id % 16, 1500));
            id += 1;
        }
        g.bench_function(cfg.kind(), |b| {
            b.iter(|| {
                now += 100_000;
                let t = Instant::from_nanos(now);
                let r = q.enqueue(t, TestPacket::new(id, id % 16, 1500));
                id += 1;
                black_box(r.into_dropped());
                let p = q.dequeue(t, &mut |p, _| {
                    black_box(p);
                });
                black_box(p)
            })
        });
    }
    g.finish();
}

fn bench_impairments(c: &mut Criterion) {
    let cfg = ImpairmentsConfig {
        loss_prob: Some(0.01),
        gilbert: Some(GilbertElliottConfig {
            p_good_to_bad: 0.01,
            r_bad_to_good: 0.3,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        }),
        ber: Some(1e-7),
        reorder: Some(ReorderConfig {
            prob: 0.01,
            delay_ms: 1.0,
        }),
        duplicate_prob: Some(0.001),
        ..Default::default()
    };
    let mut imp = Impairments::new(&cfg, 1).unwrap();
    let mut p = TestPacket::new(0, 0, 1500);
    c.bench_function("impairments_apply", |b| {
        b.iter(|| black_box(imp.apply(Instant::ZERO, black_box(&mut p))))
    });
}

criterion_group!(benches, bench_qdiscs, bench_impairments);
criterion_main!(benches);
