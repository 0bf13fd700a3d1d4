//! Property tests of the engine under random impairments (issue: 1 MB transfers byte-exact
//! under loss 0-20%, reordering, duplication and corruption, across at least 500 seeds), and
//! the header-prediction differential test (identical output with the fast path on and off).

use ackclock_tcp::{Stats, TcpConfig};
use ackclock_testkit::bytes;
use ackclock_testkit::pair::{bulk_transfer, Dir, Harness, PipeConfig};
use ackclock_wire::Duration;
use proptest::prelude::*;

fn preset() -> impl Strategy<Value = TcpConfig> {
    prop::sample::select(TcpConfig::PRESETS.to_vec()).prop_map(|n| TcpConfig::preset(n).unwrap())
}

fn impairments() -> impl Strategy<Value = PipeConfig> {
    (
        0.0..0.20f64,
        0.0..0.20f64,
        0.0..0.10f64,
        0.0..0.05f64,
        1u64..50,
        prop::sample::select(vec![0u64, 1_000_000, 10_000_000, 100_000_000]),
    )
        .prop_map(
            |(loss, reorder, duplicate, corrupt, delay_ms, rate)| PipeConfig {
                delay: Duration::from_millis(delay_ms),
                rate_bps: rate,
                queue_limit_pkts: 0,
                loss,
                reorder,
                reorder_delay: Duration::from_millis(delay_ms / 2 + 1),
                duplicate,
                corrupt,
            },
        )
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(500))]

    /// 1 MB moves byte-exact whatever the path does to the packets (both directions
    /// impaired), for every preset.
    #[test]
    fn one_megabyte_is_byte_exact_under_impairment(
        seed in any::<u64>(),
        cfg in preset(),
        ab in impairments(),
        ba in impairments(),
    ) {
        let d = bytes(1 << 20, seed);
        // Giving up after R2 = 12 unanswered retransmissions (RFC 9293 §3.8.3, tested in
        // rfc9293_states) is right at 20% loss each way: a retransmission then fails with
        // probability 0.34, twelve in a row with 3e-6, and the 100x exploration meets that
        // (seed 7423848464154680590 in the regression file: twelve retransmissions, five
        // answered, every answer lost). Here the question is integrity and progress, so R2
        // is 100: a transfer that still does not complete is stuck, not unlucky.
        let mut cfg = cfg;
        cfg.max_retransmits = 100;
        let mut h = Harness::asymmetric(seed, ab, ba);
        let r = bulk_transfer(&mut h, &d, cfg.clone(), cfg, Duration::from_secs(100_000));
        prop_assert!(r.completed, "incomplete after {:?}: sender {:?}", r.elapsed, r.sender);
        prop_assert_eq!(r.delivered.len(), d.len());
        prop_assert!(r.delivered == d, "stream corrupted");
    }
}

/// Everything except the header-prediction counters, which differ by design.
fn comparable(mut s: Stats) -> Stats {
    s.hp_ack_hits = 0;
    s.hp_data_hits = 0;
    s.hp_misses = 0;
    s
}

/// Delivered bytes, sender and receiver stats, and every packet (time, direction, bytes).
type Recorded = (Vec<u8>, Stats, Stats, Vec<(u64, u8, Vec<u8>)>);

fn run_recorded(seed: u64, pipe: PipeConfig, mut cfg: TcpConfig, hp: bool) -> Recorded {
    cfg.header_prediction = hp;
    let d = bytes(200_000, seed);
    let mut h = Harness::new(seed, pipe);
    h.capture = Some(Vec::new());
    let r = bulk_transfer(&mut h, &d, cfg.clone(), cfg, Duration::from_secs(10_000));
    let cap = h
        .capture
        .take()
        .unwrap()
        .into_iter()
        .map(|(t, dir, p)| (t.as_nanos(), (dir == Dir::AtoB) as u8, p))
        .collect();
    (r.delivered, r.sender, r.receiver, cap)
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(64))]

    /// The fast path changes nothing observable: the same packets at the same times, the
    /// same bytes delivered and the same counters, with it on and off.
    #[test]
    fn header_prediction_changes_nothing(
        seed in any::<u64>(),
        cfg in preset(),
        pipe in impairments(),
    ) {
        let on = run_recorded(seed, pipe.clone(), cfg.clone(), true);
        let off = run_recorded(seed, pipe, cfg, false);
        prop_assert!(on.0 == off.0, "delivered bytes differ");
        prop_assert_eq!(on.3.len(), off.3.len(), "packet counts differ");
        for (i, (a, b)) in on.3.iter().zip(off.3.iter()).enumerate() {
            prop_assert!(a == b, "packet {} differs: {:?} vs {:?}", i, a.0, b.0);
        }
        prop_assert_eq!(comparable(on.1.clone()), comparable(off.1.clone()));
        prop_assert_eq!(comparable(on.2.clone()), comparable(off.2.clone()));
        prop_assert_eq!(on.1.hp_ack_hits + on.1.hp_data_hits + on.1.hp_misses,
                        on.1.segs_in, "every sender input is counted as a hit or a miss");
    }
}

/// In a lossless bulk transfer nearly every segment takes the fast path of the 7 Sep 1993
/// header-prediction message (seeds 000 and 001; the threshold is ours: at least 95% of data
/// segments at the receiver and of ACKs at the sender). Measured while the
/// connection is ESTABLISHED (BSD's prediction, and ours, is for that state only), so the
/// sender's application does not close until everything is delivered.
#[test]
fn header_prediction_hit_rate_in_lossless_bulk_transfer() {
    let mut h = Harness::new(
        5,
        PipeConfig {
            rate_bps: 100_000_000,
            ..PipeConfig::default()
        },
    );
    let d = bytes(4 << 20, 5);
    let mut cfg = TcpConfig::newreno();
    cfg.window_scale = true;
    cfg.send_buffer_bytes = 1 << 20;
    cfg.recv_buffer_bytes = 1 << 20;
    let ca = h.open(9, cfg.clone(), cfg);
    let mut cb = None;
    let mut sent = 0;
    let mut got = 0usize;
    let limit = h.now + Duration::from_secs(100);
    let done = h.run(limit, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            sent += c.send(&d[sent..]).unwrap_or(0);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            got += c.recv_discard(usize::MAX);
        }
        got == d.len()
    });
    assert!(done);
    let tx = h.a.conn(ca).unwrap().stats();
    let rx = h.b.conn(cb.unwrap()).unwrap().stats();
    let data_rate = rx.hp_data_hits as f64 / rx.data_segs_in as f64;
    let ack_rate = tx.hp_ack_hits as f64 / tx.segs_in as f64;
    eprintln!("receiver data hits {data_rate:.3}, sender ACK hits {ack_rate:.3}");
    assert!(
        data_rate >= 0.95,
        "receiver fast-path rate {data_rate}: {rx:?}"
    );
    assert!(ack_rate >= 0.95, "sender fast-path rate {ack_rate}: {tx:?}");
}
