//! A congestion controller written outside the engine plugs in through
//! `CongestionAlgorithm::Custom` (a factory in the configuration, as quinn-proto's
//! `ControllerFactory`) and governs the window of a real transfer.

use ackclock_tcp::cc::{
    AckEvent, CcInit, CongestionControl, CongestionControlFactory, CongestionEvent,
};
use ackclock_tcp::{CongestionAlgorithm, TcpConfig};
use ackclock_testkit::pair::{bulk_transfer, Harness, PipeConfig};
use ackclock_wire::{Duration, Instant};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A window of exactly `segments` segments, whatever happens: the simplest controller whose
/// effect on a transfer can be predicted (one window per round trip).
#[derive(Debug)]
struct ConstantWindow {
    cwnd: u32,
    acks: Arc<AtomicU64>,
}

impl CongestionControl for ConstantWindow {
    fn name(&self) -> &'static str {
        "constant"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        self.cwnd
    }
    fn on_ack(&mut self, _ev: &AckEvent) {
        self.acks.fetch_add(1, Ordering::Relaxed);
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent, _first: bool) {}
    fn on_recovery_exit(&mut self, _now: Instant) {}
    fn set_cwnd(&mut self, _cwnd: u32) {}
}

#[derive(Debug)]
struct ConstantWindowFactory {
    segments: u32,
    built: AtomicU64,
    acks: Arc<AtomicU64>,
}

impl CongestionControlFactory for ConstantWindowFactory {
    fn build(&self, init: CcInit) -> Box<dyn CongestionControl> {
        self.built.fetch_add(1, Ordering::Relaxed);
        Box::new(ConstantWindow {
            cwnd: self.segments * init.mss,
            acks: self.acks.clone(),
        })
    }
}

#[test]
fn an_outside_controller_sizes_the_window_of_a_transfer() {
    let factory = Arc::new(ConstantWindowFactory {
        segments: 3,
        built: AtomicU64::new(0),
        acks: Arc::new(AtomicU64::new(0)),
    });
    let mut cfg = TcpConfig::newreno();
    cfg.congestion = CongestionAlgorithm::Custom(factory.clone());
    // A receiver that ACKs every segment, so the window is refilled as each ACK comes back.
    let mut receiver = TcpConfig::newreno();
    receiver.ack.segments_per_ack = 1;
    let data = ackclock_testkit::bytes(200_000, 3);
    // 10 ms each way: one window of 3 x 1460 bytes per 20 ms round trip, 219 KB/s.
    let mut h = Harness::new(1, PipeConfig::default());
    let r = bulk_transfer(
        &mut h,
        &data,
        cfg.clone(),
        receiver.clone(),
        Duration::from_secs(60),
    );
    assert!(r.completed && r.delivered == data);
    assert!(factory.built.load(Ordering::Relaxed) >= 1);
    assert!(factory.acks.load(Ordering::Relaxed) > 100);
    assert_eq!(r.sender.cwnd_bytes, 3 * 1460);
    // 200,000 bytes in windows of 4,380, one per 20 ms round trip: 46 round trips, 0.91 s
    // (plus the handshake and the close); the engine's own NewReno is faster once slow
    // start has opened its window.
    let secs = r.elapsed.as_secs_f64();
    assert!((0.9..1.0).contains(&secs), "{secs} s");
    let mut h = Harness::new(1, PipeConfig::default());
    let fast = bulk_transfer(
        &mut h,
        &data,
        TcpConfig::newreno(),
        receiver,
        Duration::from_secs(60),
    );
    assert!(
        fast.elapsed.as_secs_f64() < secs / 2.0,
        "{:?}",
        fast.elapsed
    );
    // Configurations with the same factory compare equal; another factory does not.
    assert_eq!(cfg.congestion, CongestionAlgorithm::Custom(factory));
    assert_ne!(cfg.congestion, TcpConfig::newreno().congestion);
}
