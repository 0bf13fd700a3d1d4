//! Delivery-rate estimation through the connection (draft-cheng-iccrg-delivery-rate-
//! estimation) and pacing in the engine, seen by a controller written outside the engine
//! that asks for delivery samples and sets a pacing rate: what BBR is built on.

use ackclock_tcp::cc::{
    AckEvent, CcInit, CongestionControl, CongestionControlFactory, CongestionEvent, Delivery,
};
use ackclock_tcp::{CongestionAlgorithm, LossDetection, Pacing, RecoveryAlgorithm, TcpConfig};
use ackclock_testkit::pair::{bulk_transfer, Dir, Harness, PipeConfig};
use ackclock_testkit::peer::parse;
use ackclock_wire::{Duration, Instant};
use std::sync::{Arc, Mutex};

/// A fixed window, an optional fixed pacing rate, and a record of every ACK's delivery.
#[derive(Debug)]
struct Recorder {
    cwnd: u32,
    pace: Option<u64>,
    seen: Arc<Mutex<Vec<Delivery>>>,
}

impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    fn on_ack(&mut self, ev: &AckEvent) {
        let d = ev
            .delivery
            .expect("a model-based controller hears every ACK's delivery");
        self.seen.lock().unwrap().push(d);
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {}
    fn on_rto(&mut self, _ev: &CongestionEvent, _first: bool) {}
    fn set_cwnd(&mut self, _cwnd: u32) {}
    fn wants_delivery(&self) -> bool {
        true
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.pace
    }
    fn owns_recovery_window(&self) -> bool {
        true
    }
}

#[derive(Debug)]
struct RecorderFactory {
    segments: u32,
    pace: Option<u64>,
    seen: Arc<Mutex<Vec<Delivery>>>,
}

impl CongestionControlFactory for RecorderFactory {
    fn build(&self, init: CcInit) -> Box<dyn CongestionControl> {
        Box::new(Recorder {
            cwnd: self.segments * init.mss,
            pace: self.pace,
            seen: self.seen.clone(),
        })
    }
}

/// A configuration whose controller is a [`Recorder`]; returns it with the record.
fn recorder(
    segments: u32,
    pace: Option<u64>,
    loss: LossDetection,
) -> (TcpConfig, Arc<Mutex<Vec<Delivery>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let cfg = TcpConfig {
        recovery: RecoveryAlgorithm::Sack,
        sack: true,
        loss_detection: loss,
        send_buffer_bytes: 1 << 22,
        recv_buffer_bytes: 1 << 22,
        congestion: CongestionAlgorithm::Custom(Arc::new(RecorderFactory {
            segments,
            pace,
            seen: seen.clone(),
        })),
        ..TcpConfig::default()
    };
    (cfg, seen)
}

fn receiver() -> TcpConfig {
    TcpConfig {
        sack: true,
        recv_buffer_bytes: 1 << 22,
        ..TcpConfig::default()
    }
}

/// Payload bytes per second through a bottleneck of `bps` bits per second when each
/// segment of `mss` bytes travels in a packet of `mss + 40` (IPv4 and TCP headers; the
/// default configuration sends no timestamps).
fn payload_rate(bps: u64, mss: u64) -> f64 {
    bps as f64 / 8.0 * mss as f64 / (mss + 40) as f64
}

/// Runs the harness until nothing is left to happen: `bulk_transfer` returns when the
/// receiver has read the end of the stream, with the last ACKs still on their way.
fn drain(h: &mut Harness) {
    let until = h.now + Duration::from_secs(5);
    h.run(until, |_| false);
}

/// Runs `app` every `tick` until `until`, and the harness's events in between (its run
/// calls the application only after an event, and an idle connection has none).
fn run_ticking(h: &mut Harness, until: Instant, tick: Duration, mut app: impl FnMut(&mut Harness)) {
    while h.now < until {
        let next = h.now + tick;
        app(h);
        h.run(next, |h| {
            app(h);
            false
        });
        h.now = next;
    }
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// draft-cheng §2 and §3.3: with the pipe kept full (the window above the path's BDP),
/// every sample that is not application-limited measures the bottleneck's rate: the median
/// within 1%, none more than 2% above it (the larger of the send and ACK intervals keeps ACK
/// compression from reporting more than the path carried). Checked with RACK keeping the
/// transmit log and with the duplicate-ACK rule (the log kept for the controller alone).
#[test]
fn draft_cheng_3_3_samples_measure_the_bottleneck_rate() {
    for loss in [LossDetection::RackTlp, LossDetection::DupAck] {
        let (cfg, seen) = recorder(60, None, loss);
        let pipe = PipeConfig {
            rate_bps: 10_000_000,
            delay: Duration::from_millis(20),
            ..PipeConfig::default()
        };
        let mut h = Harness::new(7, pipe);
        let data = ackclock_testkit::bytes(3_000_000, 1);
        let r = bulk_transfer(&mut h, &data, cfg, receiver(), Duration::from_secs(60));
        assert!(
            r.completed && r.delivered == data,
            "{loss:?}: transfer incomplete"
        );
        drain(&mut h);
        let seen = seen.lock().unwrap();
        let rates: Vec<u64> = seen
            .iter()
            .filter_map(|d| d.sample)
            .filter(|s| !s.is_app_limited)
            .map(|s| s.delivery_rate)
            .collect();
        assert!(rates.len() > 500, "{loss:?}: {} samples", rates.len());
        let truth = payload_rate(10_000_000, 1460);
        let med = median(rates.clone()) as f64;
        assert!(
            (med / truth - 1.0).abs() < 0.01,
            "{loss:?}: median {med} vs {truth}"
        );
        let max = *rates.iter().max().unwrap() as f64;
        assert!(
            max <= truth * 1.02,
            "{loss:?}: a sample of {max} above {truth}"
        );
        // C.delivered counts every byte once, and the FIN's sequence number.
        let last = seen.last().unwrap();
        assert_eq!(last.delivered, data.len() as u64 + 1, "{loss:?}");
        let sum: u64 = seen.iter().map(|d| u64::from(d.newly_delivered)).sum();
        assert_eq!(sum, last.delivered, "{loss:?}: newly_delivered adds up");
        assert_eq!(last.lost, 0, "{loss:?}: nothing was lost");
    }
}

/// draft-cheng §3.4: a sender that writes less than the path carries is
/// application-limited, and its samples say so.
#[test]
fn draft_cheng_3_4_an_application_that_writes_slowly_gives_app_limited_samples() {
    let (cfg, seen) = recorder(60, None, LossDetection::RackTlp);
    let pipe = PipeConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        ..PipeConfig::default()
    };
    let mut h = Harness::new(3, pipe);
    let ca = h.open(9, cfg, receiver());
    let chunk = vec![0u8; 1460];
    let mut cb = None;
    let mut next = Instant::ZERO + Duration::from_millis(200);
    // One segment every 10 ms: 146 kB/s on a path of 1.2 MB/s.
    let tick = Duration::from_millis(1);
    run_ticking(&mut h, Instant::ZERO + Duration::from_secs(3), tick, |h| {
        if h.now >= next {
            if let Some(c) = h.a.conn_mut(ca) {
                let _ = c.send(&chunk);
            }
            next += Duration::from_millis(10);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            c.recv_discard(usize::MAX);
        }
    });
    let seen = seen.lock().unwrap();
    let samples: Vec<_> = seen.iter().filter_map(|d| d.sample).collect();
    assert!(samples.len() > 100, "{} samples", samples.len());
    let limited = samples.iter().filter(|s| s.is_app_limited).count();
    assert!(
        limited * 10 >= samples.len() * 9,
        "{limited} of {} samples marked application-limited",
        samples.len()
    );
}

/// Bytes resent to repair a loss count in `C.lost` (Linux's `tp->lost`), and a sample
/// reports the losses of its interval.
#[test]
fn losses_repaired_by_retransmission_are_counted_as_lost() {
    let (cfg, seen) = recorder(40, None, LossDetection::RackTlp);
    let pipe = PipeConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        loss: 0.01,
        ..PipeConfig::default()
    };
    let mut h = Harness::asymmetric(
        11,
        pipe,
        PipeConfig {
            delay: Duration::from_millis(20),
            ..PipeConfig::default()
        },
    );
    let data = ackclock_testkit::bytes(2_000_000, 2);
    let r = bulk_transfer(&mut h, &data, cfg, receiver(), Duration::from_secs(120));
    assert!(r.completed && r.delivered == data, "transfer incomplete");
    drain(&mut h);
    let seen = seen.lock().unwrap();
    let last = seen.last().unwrap();
    assert!(last.lost > 0, "1% loss and nothing counted lost");
    let newly: u64 = seen.iter().map(|d| u64::from(d.newly_lost)).sum();
    assert!(
        newly <= last.lost && last.lost - newly < 3 * 1460,
        "{newly} vs {}",
        last.lost
    );
    assert!(seen.iter().filter_map(|d| d.sample).any(|s| s.lost > 0));
}

/// A timeout takes the whole flight for lost at once (Linux's `tcp_timeout_mark_lost`
/// counts it in `C.lost` then, outside any ACK): the ACKs that follow, while go-back-N
/// resends that flight, report no bytes newly lost unless something is lost again. They
/// reported each resend as a new loss, and BBR, which takes newly lost bytes out of its
/// window, stayed at four packets for seconds after a timeout.
#[test]
fn draft_cheng_3_3_after_a_timeout_the_acks_of_the_resent_flight_report_no_new_loss() {
    use ackclock_tcp::cc::RecoveryPhase;
    let (cfg, seen) = recorder(40, None, LossDetection::RackTlp);
    let pipe = PipeConfig {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        ..PipeConfig::default()
    };
    let mut h = Harness::new(3, pipe);
    // A whole window's first transmissions and the tail loss probe after it: only the
    // retransmission timer can find them.
    let mut dropped = std::collections::HashSet::new();
    h.set_filter(
        Dir::AtoB,
        Box::new(move |p| match p.data_index {
            Some(100..=150) => dropped.insert(p.seq),
            _ => false,
        }),
    );
    let data = ackclock_testkit::bytes(1_000_000, 3);
    let r = bulk_transfer(&mut h, &data, cfg, receiver(), Duration::from_secs(60));
    assert!(r.completed && r.delivered == data, "transfer incomplete");
    assert!(r.sender.timeouts >= 1, "the burst should need a timeout");
    drain(&mut h);
    let seen = seen.lock().unwrap();
    let after: Vec<&Delivery> = seen
        .iter()
        .filter(|d| d.recovery == RecoveryPhase::Timeout)
        .collect();
    assert!(!after.is_empty(), "no ACK during the timeout's recovery");
    let newly: u32 = after.iter().map(|d| d.newly_lost).sum();
    assert_eq!(newly, 0, "go-back-N's resends reported as new losses");
    let last = seen.last().unwrap();
    assert!(
        last.lost >= 40 * 1460,
        "the timeout's flight is counted lost: {}",
        last.lost
    );
}

/// Data packets A put on the pipe, with their times.
fn data_times(h: &Harness) -> Vec<Instant> {
    h.capture
        .as_ref()
        .unwrap()
        .iter()
        .filter(|(_, dir, p)| *dir == Dir::AtoB && !parse(p).payload.is_empty())
        .map(|(t, _, _)| *t)
        .collect()
}

/// A controller's pacing rate spaces data segments by their length at that rate, exactly
/// in simulated time, whatever the window allows (here: everything at once).
#[test]
fn pacing_spaces_segments_at_the_controllers_rate() {
    let rate = 500_000; // bytes per second: 1460 bytes every 2.92 ms
    let (cfg, _) = recorder(1000, Some(rate), LossDetection::RackTlp);
    let mut h = Harness::new(5, PipeConfig::default());
    h.capture = Some(Vec::new());
    let data = ackclock_testkit::bytes(200 * 1460, 3);
    let r = bulk_transfer(&mut h, &data, cfg, receiver(), Duration::from_secs(60));
    assert!(r.completed && r.delivered == data);
    assert_eq!(
        r.sender.pacing_rate_bps,
        rate * 8,
        "stats() reports the controller's rate, in bits per second (Linux's ss pacing_rate)"
    );
    let times = data_times(&h);
    assert_eq!(times.len(), 200);
    let gap = Duration::from_nanos(1460 * 1_000_000_000 / rate);
    for w in times.windows(2) {
        assert_eq!(w[1] - w[0], gap, "segments {:?} and {:?}", w[0], w[1]);
    }
}

/// `pacing_burst`: a sender that was held back (here by an application that wrote
/// nothing for a while) may catch up with at most the burst's worth of data at once, then
/// keeps the rate.
#[test]
fn pacing_burst_bounds_what_goes_out_at_one_instant() {
    let rate = 1_000_000;
    let (mut cfg, _) = recorder(1000, Some(rate), LossDetection::RackTlp);
    cfg.pacing_burst = Duration::from_millis(10); // 10 kB: 6.8 segments
    let mut h = Harness::new(5, PipeConfig::default());
    h.capture = Some(Vec::new());
    let ca = h.open(9, cfg, receiver());
    let data = vec![0u8; 100 * 1460];
    let mut cb = None;
    let mut written = false;
    let start = Instant::ZERO + Duration::from_millis(500);
    let tick = Duration::from_millis(1);
    run_ticking(&mut h, Instant::ZERO + Duration::from_secs(2), tick, |h| {
        if h.now >= start && !written {
            written = h.a.conn_mut(ca).is_some_and(|c| c.send(&data).is_ok());
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            c.recv_discard(usize::MAX);
        }
    });
    let times = data_times(&h);
    assert_eq!(times.len(), 100);
    let first = times.iter().filter(|&&t| t == times[0]).count();
    // 10 ms at 1 MB/s is 10,000 bytes: six segments of 1460 leave credit for a seventh.
    assert_eq!(first, 7, "{first} segments at the first instant");
    let gap = Duration::from_nanos(1460 * 1_000_000_000 / rate);
    for w in times[first..].windows(2) {
        assert_eq!(w[1] - w[0], gap);
    }
}

/// Linux's rule for a window-based controller (`tcp_pacing_ss_ratio`/`ca_ratio`): the
/// bursts that each ACK opens are spread out; what the window allows still goes.
#[test]
fn linux_pacing_spreads_a_window_based_senders_bursts() {
    let run = |pacing: Pacing| {
        let mut cfg = TcpConfig::linux();
        cfg.pacing = pacing;
        cfg.send_buffer_bytes = 1 << 22;
        let pipe = PipeConfig {
            rate_bps: 20_000_000,
            delay: Duration::from_millis(20),
            queue_limit_pkts: 200,
            ..PipeConfig::default()
        };
        let mut h = Harness::new(9, pipe);
        h.capture = Some(Vec::new());
        let data = ackclock_testkit::bytes(3_000_000, 4);
        let r = bulk_transfer(&mut h, &data, cfg, receiver(), Duration::from_secs(60));
        assert!(r.completed && r.delivered == data);
        let times = data_times(&h);
        let same = times.windows(2).filter(|w| w[0] == w[1]).count();
        (same, r.elapsed)
    };
    let (bursty, t_off) = run(Pacing::Off);
    let (paced, t_on) = run(Pacing::Linux);
    assert!(bursty > 500, "unpaced: {bursty} back-to-back segments");
    // Before the first RTT sample nothing is paced (the initial window goes at once).
    assert!(paced < 10, "paced: {paced} back-to-back segments");
    let ratio = t_on.as_nanos() as f64 / t_off.as_nanos() as f64;
    assert!(
        ratio < 1.1,
        "pacing slowed the transfer: {t_on:?} vs {t_off:?}"
    );
}
