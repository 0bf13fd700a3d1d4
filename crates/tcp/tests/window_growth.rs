//! Window growth: slow start opens the window in about log2(W) round trips (seed 11 Feb
//! 1988: "time proportional to log2(W)"), congestion avoidance adds one segment per round
//! trip ("cwnd += 1/cwnd", seed 16 Nov 1987), with and without delayed ACKs, with and
//! without byte counting (RFC 3465).

use ackclock_tcp::cc::AimdConfig;
use ackclock_tcp::{CongestionAlgorithm, InitialWindow, TcpConfig, TraceKind};
use ackclock_testkit::pair::{send_for, Harness, PipeConfig};
use ackclock_wire::{Duration, Instant};

const MSS: u32 = 1000;
const RTT_MS: u64 = 100;

fn cfg(iw: u32, ssthresh_segs: u32, abc: Option<u32>, ack_every: u32) -> TcpConfig {
    let mut c = TcpConfig::newreno();
    c.mss = MSS as u16;
    c.initial_window = InitialWindow::Segments(iw);
    c.initial_ssthresh = ssthresh_segs.saturating_mul(MSS);
    c.congestion = CongestionAlgorithm::Aimd(AimdConfig {
        abc_limit_segments: abc,
        ..AimdConfig::default()
    });
    c.window_scale = true;
    c.send_buffer_bytes = 4 << 20;
    c.recv_buffer_bytes = 4 << 20;
    c.ack.segments_per_ack = ack_every;
    // The delayed-ACK timer must not pace the ACK clock at these windows.
    c.ack.delayed_ack = Duration::from_millis(RTT_MS / 4);
    c
}

/// cwnd (segments) seen by the sender at each trace event, with the time.
fn cwnd_over_time(c: TcpConfig, secs: u64) -> Vec<(Instant, f64)> {
    let mut h = Harness::new(
        3,
        PipeConfig {
            delay: Duration::from_millis(RTT_MS / 2),
            ..PipeConfig::default()
        },
    );
    let ca = h.open(9, c.clone(), c);
    h.a.conn_mut(ca).unwrap().set_tracing(true);
    send_for(&mut h, ca, Instant::ZERO + Duration::from_secs(secs));
    let mut t = Vec::new();
    h.a.conn_mut(ca).unwrap().take_trace(&mut t);
    t.iter()
        .filter(|e| matches!(e.kind, TraceKind::Ack { .. }))
        .map(|e| (e.time, f64::from(e.cwnd) / f64::from(MSS)))
        .collect()
}

/// Round trips from the first ACK until cwnd first reaches `w` segments.
fn rtts_to_reach(series: &[(Instant, f64)], w: f64) -> f64 {
    let t0 = series[0].0;
    let t = series.iter().find(|(_, c)| *c >= w).expect("reached").0;
    (t - t0).as_secs_f64() / (RTT_MS as f64 / 1000.0)
}

#[test]
fn slow_start_opens_the_window_in_about_log2_w_round_trips() {
    let w = 64.0;
    // Every segment ACKed: cwnd doubles per round trip, log2(64) = 6.
    let every = rtts_to_reach(&cwnd_over_time(cfg(1, u32::MAX, None, 1), 5), w);
    assert!(
        (5.0..=6.5).contains(&every),
        "ack every segment: {every} RTTs"
    );
    // Delayed ACKs without ABC: x1.5 per round trip, log1.5(64) = 10.3.
    let delayed = rtts_to_reach(&cwnd_over_time(cfg(1, u32::MAX, None, 2), 5), w);
    assert!(
        (9.0..=11.5).contains(&delayed),
        "delayed ACKs: {delayed} RTTs"
    );
    // ABC with L = 2 restores doubling under delayed ACKs (RFC 3465 §2.2).
    let abc = rtts_to_reach(&cwnd_over_time(cfg(1, u32::MAX, Some(2), 2), 5), w);
    assert!(
        (5.0..=7.0).contains(&abc),
        "delayed ACKs with ABC: {abc} RTTs"
    );
    eprintln!("RTTs to W=64: every {every:.1}, delayed {delayed:.1}, delayed+ABC {abc:.1}");
}

fn ca_growth_per_rtt(abc: Option<u32>, ack_every: u32) -> f64 {
    let s = cwnd_over_time(cfg(20, 20, abc, ack_every), 3);
    // Growth over 20 round trips after the first two.
    let t0 = s[0].0 + Duration::from_millis(2 * RTT_MS);
    let t1 = t0 + Duration::from_millis(20 * RTT_MS);
    let at = |t: Instant| s.iter().rev().find(|(x, _)| *x <= t).unwrap().1;
    (at(t1) - at(t0)) / 20.0
}

#[test]
fn congestion_avoidance_adds_one_segment_per_round_trip() {
    let every = ca_growth_per_rtt(None, 1);
    assert!(
        (0.9..=1.1).contains(&every),
        "ack every segment: {every}/RTT"
    );
    // Delayed ACKs halve the ACK count and, counting ACKs, the growth (RFC 3465 §1).
    let delayed = ca_growth_per_rtt(None, 2);
    assert!(
        (0.4..=0.6).contains(&delayed),
        "delayed ACKs: {delayed}/RTT"
    );
    // Byte counting restores one segment per round trip.
    let abc = ca_growth_per_rtt(Some(2), 2);
    assert!(
        (0.9..=1.1).contains(&abc),
        "delayed ACKs with ABC: {abc}/RTT"
    );
    let abc1 = ca_growth_per_rtt(Some(1), 1);
    assert!((0.9..=1.1).contains(&abc1), "ABC L=1: {abc1}/RTT");
    eprintln!("CA growth per RTT: every {every:.2}, delayed {delayed:.2}, ABC {abc:.2}");
}
