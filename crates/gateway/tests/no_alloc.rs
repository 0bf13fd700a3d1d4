//! The gateway never allocates per packet on the fast path (docs/ARCHITECTURE.md). A counting global
//! allocator checks that, after construction, enqueue/dequeue of every discipline and the
//! impairment pipeline allocate nothing.

use ackclock_gateway::{
    CodelConfig, DropTailConfig, DrrConfig, FqCodelConfig, GilbertElliottConfig, Impairments,
    ImpairmentsConfig, Link, LinkConfig, QdiscConfig, RandomDropConfig, RedConfig, ReorderConfig,
    TestPacket,
};
use ackclock_wire::Instant;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.with(Cell::get) {
            COUNT.with(|c| c.set(c.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn counting<R>(f: impl FnOnce() -> R) -> (R, u64) {
    COUNT.with(|c| c.set(0));
    ON.with(|o| o.set(true));
    let r = f();
    ON.with(|o| o.set(false));
    (r, COUNT.with(Cell::get))
}

#[test]
fn no_allocation_per_packet() {
    // The counter works.
    let (v, n) = counting(|| Vec::<u8>::with_capacity(10));
    assert!(n >= 1);
    drop(v);

    let configs = [
        QdiscConfig::DropTail(DropTailConfig::packets(50)),
        QdiscConfig::DropTail(DropTailConfig::bytes(60_000)),
        QdiscConfig::RandomDrop(RandomDropConfig::packets(50)),
        QdiscConfig::Red(RedConfig {
            limit_pkts: Some(50),
            link_rate_bps: Some(10_000_000),
            ecn: true,
            ..RedConfig::default()
        }),
        QdiscConfig::Drr(DrrConfig {
            limit_pkts: 50,
            ..DrrConfig::default()
        }),
        QdiscConfig::Codel(CodelConfig {
            limit_pkts: Some(50),
            ecn: true,
            ..CodelConfig::default()
        }),
        QdiscConfig::FqCodel(FqCodelConfig {
            limit_pkts: 50,
            ..FqCodelConfig::default()
        }),
    ];
    for cfg in configs {
        let mut q = cfg.build::<TestPacket>(7).unwrap();
        let mut link = Link::new(&LinkConfig::ethernet_10mbps(1.0)).unwrap();
        let ((), n) = counting(|| {
            // Overload: 3 arrivals per departure, 20 flows, so every drop path runs.
            let mut now = 0u64;
            let mut drops = 0u64;
            for i in 0..30_000u64 {
                now += 400_000;
                let t = Instant::from_nanos(now);
                let p = TestPacket {
                    id: i,
                    flow: i % 20,
                    len: 40 + (i as usize * 211) % 1461,
                    ect: i % 2 == 0,
                    ..TestPacket::default()
                };
                if q.enqueue(t, p).into_dropped().is_some() {
                    drops += 1;
                }
                if i % 3 == 0 {
                    if let Some(p) = q.dequeue(t, &mut |_, _| drops += 1) {
                        let _ = link.transmit(t, p.len);
                    }
                }
            }
            assert!(drops > 0);
        });
        assert_eq!(n, 0, "{}: {n} allocations in the fast path", cfg.kind());
    }

    let imp_cfg = ImpairmentsConfig {
        loss_prob: Some(0.01),
        ber: Some(1e-6),
        gilbert: Some(GilbertElliottConfig {
            p_good_to_bad: 0.01,
            r_bad_to_good: 0.3,
            loss_in_good: 0.0,
            loss_in_bad: 1.0,
        }),
        reorder: Some(ReorderConfig {
            prob: 0.01,
            delay_ms: 1.0,
        }),
        duplicate_prob: Some(0.01),
        ..Default::default()
    };
    let mut imp = Impairments::new(&imp_cfg, 1).unwrap();
    let mut p = TestPacket::new(0, 0, 1500);
    let ((), n) = counting(|| {
        for _ in 0..100_000 {
            let _ = imp.apply(Instant::ZERO, &mut p);
        }
    });
    assert_eq!(n, 0, "impairments allocated {n} times");
}
