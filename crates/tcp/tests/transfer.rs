//! End-to-end transfers over the in-memory harness.

use ackclock_tcp::{State, TcpConfig};
use ackclock_testkit::pair::{bulk_transfer, Harness, PipeConfig};
use ackclock_wire::Duration;

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn lossless_transfer_is_byte_exact_and_closes() {
    let mut h = Harness::new(1, PipeConfig::default());
    let d = data(300_000);
    let r = bulk_transfer(
        &mut h,
        &d,
        TcpConfig::newreno(),
        TcpConfig::newreno(),
        Duration::from_secs(60),
    );
    assert!(r.completed, "did not complete: {:?}", r.sender);
    assert_eq!(r.delivered.len(), d.len());
    assert!(r.delivered == d);
    assert_eq!(r.sender.retransmitted_segs, 0);
    assert_eq!(r.sender.timeouts, 0);
    eprintln!("elapsed {:?} sender {:?}", r.elapsed, r.sender);
}

#[test]
fn every_preset_transfers_under_loss() {
    for name in TcpConfig::PRESETS {
        let cfg = TcpConfig::preset(name).unwrap();
        let mut h = Harness::new(
            7,
            PipeConfig {
                loss: 0.02,
                rate_bps: 10_000_000,
                ..PipeConfig::default()
            },
        );
        let d = data(200_000);
        let r = bulk_transfer(&mut h, &d, cfg.clone(), cfg, Duration::from_secs(600));
        assert!(r.completed, "{name}: did not complete {:?}", r.sender);
        assert!(r.delivered == d, "{name}: corrupted stream");
        eprintln!(
            "{name}: {:?} rexmt {} fr {} to {}",
            r.elapsed, r.sender.retransmitted_segs, r.sender.fast_retransmits, r.sender.timeouts
        );
    }
}

#[test]
fn connection_states_after_close() {
    let mut h = Harness::new(3, PipeConfig::default());
    let d = data(1000);
    let r = bulk_transfer(
        &mut h,
        &d,
        TcpConfig::newreno(),
        TcpConfig::newreno(),
        Duration::from_secs(10),
    );
    assert!(r.completed);
    // Let the FIN exchange finish: A (active closer) ends in TIME-WAIT.
    let limit = h.now + Duration::from_secs(5);
    while h.step(limit) {}
    let states: Vec<State> = h.a.connections().map(|(_, c)| c.state()).collect();
    assert_eq!(states, vec![State::TimeWait]);
    let limit = h.now + Duration::from_secs(120);
    while h.step(limit) {}
    assert_eq!(
        h.a.connections().count(),
        0,
        "TIME-WAIT expired and was reaped"
    );
    assert_eq!(h.b.connections().count(), 0);
}
