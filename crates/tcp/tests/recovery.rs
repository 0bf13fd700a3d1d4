//! Loss recovery with scripted drops (no simulator): the algebra of the 30 Apr 1990 message,
//! and the 1-4 drops-per-window table for Tahoe, Reno, NewReno and SACK.

use ackclock_tcp::cc::AimdConfig;
use ackclock_tcp::{
    CongestionAlgorithm, InitialWindow, RecoveryAlgorithm, SeqNum, TcpConfig, TraceEvent, TraceKind,
};
use ackclock_testkit::pair::{Dir, Harness, PipeConfig};
use ackclock_testkit::trace::Trace;
use ackclock_wire::{Duration, Instant};

const MSS: u32 = 1000;

/// A sender held at a window of exactly `w` segments (no additive increase, so W is the W
/// of the message), a receiver window of 2W or more, and a path whose ACK clock spaces the
/// segments.
fn config(alg: RecoveryAlgorithm, w: u32, base: TcpConfig) -> TcpConfig {
    let mut cfg = base;
    cfg.mss = MSS as u16;
    cfg.recovery = alg;
    cfg.initial_window = InitialWindow::Segments(w);
    cfg.initial_ssthresh = w * MSS;
    let aimd = match cfg.congestion {
        CongestionAlgorithm::Aimd(a) => a,
        _ => AimdConfig::default(),
    };
    cfg.congestion = CongestionAlgorithm::Aimd(AimdConfig {
        increase_segments: 0.0,
        ..aimd
    });
    cfg.window_scale = true;
    cfg.send_buffer_bytes = (8 * w * MSS) as usize;
    cfg.recv_buffer_bytes = (4 * w * MSS) as usize;
    cfg
}

struct Run {
    trace: Vec<TraceEvent>,
    timeouts: u64,
    retransmitted: u64,
    fast_retransmits: u64,
    rtt: Duration,
}

/// Sends `total` segments from A to B, dropping the data segments (first transmissions)
/// whose index is in `drops`.
fn run(cfg: TcpConfig, total: u32, drops: Vec<u64>) -> Run {
    let one_way = Duration::from_millis(20);
    let pipe = PipeConfig {
        delay: one_way,
        rate_bps: 8_000_000,
        ..PipeConfig::default()
    };
    let mut h = Harness::new(1, pipe);
    let mut seen = std::collections::HashSet::new();
    h.set_filter(
        Dir::AtoB,
        Box::new(move |p| {
            // Drop the first transmission of the chosen data segments only.
            match p.data_index {
                Some(i) if drops.contains(&i) => seen.insert(p.seq),
                _ => false,
            }
        }),
    );
    let ca = h.open(9, cfg.clone(), cfg);
    h.a.conn_mut(ca).unwrap().set_tracing(true);
    let data = vec![0x42u8; (total * MSS) as usize];
    let mut sent = 0;
    let mut cb = None;
    let mut got = 0;
    let limit = Instant::ZERO + Duration::from_secs(600);
    let ok = h.run(limit, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            sent += c.send(&data[sent..]).unwrap_or(0);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            got += c.recv_discard(usize::MAX);
        }
        got == data.len()
    });
    assert!(ok, "transfer did not complete");
    let c = h.a.conn_mut(ca).unwrap();
    let mut trace = Vec::new();
    c.take_trace(&mut trace);
    let s = c.stats();
    Run {
        trace,
        timeouts: s.timeouts,
        retransmitted: s.retransmitted_segs,
        fast_retransmits: s.fast_retransmits,
        rtt: one_way + one_way,
    }
}

/// The seed's algebra (30 Apr 1990): "the amount actually sent between the loss detection
/// and the recovery ack is ... W/2-1", "we do nothing for the first W/2 dup acks", and "there
/// is no sudden burst of packets as the `hole' is filled".
#[test]
fn reno_sends_exactly_half_a_window_minus_one_during_recovery() {
    for w in [8u32, 16, 32, 64] {
        // The message counts "W-1 dup acks ... (one for each packet in transit)": a
        // receiver that acknowledges every segment. (With delayed ACKs the ACK for U-1 may
        // be the first "out-of-order" ACK, leaving W-2 duplicates; the law below, new =
        // dupacks - W/2, still holds and is checked too.)
        let mut cfg = config(RecoveryAlgorithm::Reno, w, TcpConfig::reno());
        cfg.ack.segments_per_ack = 1;
        // Drop one segment well after the window is full: index 4W.
        let r = run(cfg, 10 * w, vec![u64::from(4 * w)]);
        assert_eq!(r.timeouts, 0, "W={w}");
        assert_eq!(r.fast_retransmits, 1, "W={w}");
        assert_eq!(r.retransmitted, 1, "W={w}: only the lost segment is resent");
        let fr = Trace(&r.trace)
            .position(TraceKind::FastRetransmit)
            .expect("fast retransmit");
        let exit = Trace(&r.trace)
            .position(TraceKind::RecoveryExit)
            .expect("recovery exit");
        let during = &r.trace[fr..exit];
        let new_sends = Trace(during).new_data_sends() as u32;
        let dupacks = during
            .iter()
            .filter(|e| matches!(e.kind, TraceKind::DupAck { .. }))
            .count() as u32;
        assert_eq!(
            dupacks + 3,
            w - 1,
            "W={w}: W-1 duplicate ACKs, 3 of them before the FR"
        );
        assert_eq!(new_sends, w / 2 - 1, "W={w}: new segments during recovery");
        // Nothing new before the (W/2)th duplicate ACK has been processed.
        let half = during
            .iter()
            .position(|e| e.kind == TraceKind::DupAck { count: w / 2 })
            .expect("W/2 dup acks");
        let early = during[..=half]
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    TraceKind::Send {
                        retransmit: false,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(early, 0, "W={w}: sent during the first W/2 dup acks");
        // No burst when the hole fills: at most one segment before the next ACK.
        let after = &r.trace[exit..];
        let next_ack = after[1..]
            .iter()
            .position(|e| matches!(e.kind, TraceKind::Ack { .. }))
            .map(|i| i + 1)
            .unwrap_or(after.len());
        let burst = after[..next_ack]
            .iter()
            .filter(|e| matches!(e.kind, TraceKind::Send { .. }))
            .count();
        assert!(
            burst <= 1,
            "W={w}: {burst} segments sent as the hole filled"
        );
        // The window after recovery is W/2 (cwnd = ssthresh).
        assert_eq!(r.trace[exit].cwnd, w / 2 * MSS, "W={w}");
    }
}

/// With delayed ACKs at the receiver, each duplicate ACK past the first W/2 still releases
/// exactly one new segment: new = dupacks - W/2 + ... counted from the trace.
#[test]
fn reno_with_delayed_acks_sends_one_segment_per_dupack_past_half_the_window() {
    for (w, drop) in [(16u32, 64u64), (16, 65), (32, 128), (32, 129)] {
        let cfg = config(RecoveryAlgorithm::Reno, w, TcpConfig::reno());
        let r = run(cfg, 10 * w, vec![drop]);
        assert_eq!(r.timeouts, 0);
        let fr = Trace(&r.trace).position(TraceKind::FastRetransmit).unwrap();
        let exit = Trace(&r.trace).position(TraceKind::RecoveryExit).unwrap();
        let during = &r.trace[fr..exit];
        // The three duplicates before the fast retransmit are not in `during`.
        let dupacks = 3 + during
            .iter()
            .filter(|e| matches!(e.kind, TraceKind::DupAck { count } if count > 3))
            .count() as u32;
        let new_sends = Trace(during).new_data_sends() as u32;
        assert!(
            dupacks == w - 1 || dupacks == w - 2,
            "W={w}: {dupacks} dupacks"
        );
        assert_eq!(new_sends, dupacks - w / 2, "W={w} drop {drop}");
    }
}

/// Tahoe beside it: the same drop, then slow start from one segment.
#[test]
fn tahoe_fast_retransmit_then_slow_start() {
    let w = 16;
    let cfg = config(RecoveryAlgorithm::Tahoe, w, TcpConfig::tahoe());
    let r = run(cfg, 10 * w, vec![u64::from(4 * w)]);
    assert_eq!(r.timeouts, 0);
    assert_eq!(r.retransmitted, 1);
    let fr = Trace(&r.trace).position(TraceKind::FastRetransmit).unwrap();
    assert_eq!(r.trace[fr].cwnd, MSS, "cwnd collapses to one segment");
    assert_eq!(r.trace[fr].ssthresh, w / 2 * MSS);
    // Nothing new is sent until the retransmission is acknowledged.
    let recovered = r.trace[fr..]
        .iter()
        .position(|e| matches!(e.kind, TraceKind::Ack { .. }))
        .unwrap()
        + fr;
    let new_before = r.trace[fr..recovered]
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                TraceKind::Send {
                    retransmit: false,
                    ..
                }
            )
        })
        .count();
    assert_eq!(new_before, 0);
}

#[derive(Debug, PartialEq)]
struct Outcome {
    timeouts: u64,
    /// Round trips from the fast retransmit until everything outstanding then is acked.
    recovery_rtts: u32,
    needless: u64,
}

fn outcome(alg: RecoveryAlgorithm, base: TcpConfig, drops: usize) -> Outcome {
    let w = 16;
    let cfg = config(alg, w, base);
    let first = u64::from(4 * w);
    let d: Vec<u64> = (0..drops as u64).map(|k| first + 2 * k).collect();
    let r = run(cfg, 12 * w, d);
    let fr = Trace(&r.trace)
        .position(TraceKind::FastRetransmit)
        .expect("fast retransmit");
    let point: SeqNum = r.trace[fr].snd_max;
    let t0 = r.trace[fr].time;
    let done = r.trace[fr..]
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Ack { ack, .. } if ack >= point))
        .expect("recovered")
        .time;
    let rtts = ((done - t0).as_nanos() as f64 / r.rtt.as_nanos() as f64).round() as u32;
    Outcome {
        timeouts: r.timeouts,
        recovery_rtts: rtts,
        needless: r.retransmitted.saturating_sub(drops as u64),
    }
}

/// 1-4 drops in one window of 16 segments. Expected outcomes, written before running, from
/// the seeds and the RFCs:
/// - Tahoe (BSD code: snd_nxt restored after the fast retransmit): one drop recovers in
///   about one RTT; with two or more, the partial ACK leaves cwnd = 2 segments against a
///   full flight, the sender stalls and the timer fires; go-back-N then resends segments the
///   receiver already holds.
/// - Reno (the 1990 diff): one drop recovers in about one RTT with nothing needless. With
///   more, the first partial ACK ends recovery; the W/2-1 segments sent during recovery can
///   draw another three duplicate ACKs for the next hole (a second halving), but beyond two
///   drops the window is too small for that and a timeout follows: "the TCP selective ack
///   option has to be implemented otherwise the pipe will go empty waiting to fill the
///   second hole".
/// - NewReno (RFC 6582): no timeout for any of these; one hole per round trip, so about k
///   RTTs for k drops; nothing needless.
/// - SACK (RFC 6675): no timeout; all holes resent in the first round trip; nothing
///   needless.
#[test]
fn one_to_four_drops_in_a_window() {
    let mut table = String::new();
    for (name, alg, base) in [
        ("tahoe", RecoveryAlgorithm::Tahoe, TcpConfig::tahoe()),
        ("reno", RecoveryAlgorithm::Reno, TcpConfig::reno()),
        ("newreno", RecoveryAlgorithm::NewReno, TcpConfig::newreno()),
        ("sack", RecoveryAlgorithm::Sack, TcpConfig::sack()),
    ] {
        for drops in 1..=4 {
            let o = outcome(alg, base.clone(), drops);
            table.push_str(&format!(
                "| {name} | {drops} | {} | {} | {} |\n",
                o.timeouts, o.recovery_rtts, o.needless
            ));
            match (alg, drops) {
                (RecoveryAlgorithm::Tahoe, 1) | (RecoveryAlgorithm::Reno, 1) => {
                    assert_eq!(o.timeouts, 0, "{name} {drops}");
                    assert_eq!(o.needless, 0, "{name} {drops}");
                    assert!(o.recovery_rtts <= 2, "{name} {drops}: {o:?}");
                }
                (RecoveryAlgorithm::Tahoe, _) => {
                    assert!(o.timeouts >= 1, "{name} {drops}: {o:?}");
                }
                (RecoveryAlgorithm::Reno, 2) => {
                    // Either a second fast retransmit or a timeout; never needless resends
                    // without a timeout.
                    assert!(o.timeouts >= 1 || o.needless == 0, "{name} {drops}: {o:?}");
                }
                (RecoveryAlgorithm::Reno, _) => {
                    assert!(o.timeouts >= 1, "{name} {drops}: {o:?}");
                }
                (RecoveryAlgorithm::NewReno, k) => {
                    assert_eq!(o.timeouts, 0, "{name} {drops}");
                    assert_eq!(o.needless, 0, "{name} {drops}");
                    let k = k as u32;
                    assert!(
                        (k..=k + 1).contains(&o.recovery_rtts),
                        "{name} {drops}: {o:?}"
                    );
                }
                (RecoveryAlgorithm::Sack, _) => {
                    assert_eq!(o.timeouts, 0, "{name} {drops}");
                    assert_eq!(o.needless, 0, "{name} {drops}");
                    assert!(o.recovery_rtts <= 2, "{name} {drops}: {o:?}");
                }
                _ => unreachable!(),
            }
        }
    }
    eprintln!("| recovery | drops | timeouts | RTTs | needless |\n|---|---|---|---|---|\n{table}");
}

/// A timeout during a recovery episode keeps the ssthresh the episode set (one response per
/// congestion event). Before, the timeout halved a FlightSize that had grown while SACKs
/// clocked out new data past the lost retransmission, leaving ssthresh far above the window.
#[test]
fn timeout_during_sack_recovery_keeps_the_episode_ssthresh() {
    let w = 16;
    let mut cfg = config(RecoveryAlgorithm::Sack, w, TcpConfig::sack());
    cfg.congestion = CongestionAlgorithm::Aimd(AimdConfig::default());
    // Drop one segment and its first retransmission: SACK recovery cannot repair it, the
    // sender keeps sending new data on SACKs, and the timer fires.
    let mut h = Harness::new(
        1,
        PipeConfig {
            delay: Duration::from_millis(20),
            rate_bps: 8_000_000,
            ..PipeConfig::default()
        },
    );
    let mut target = None;
    let mut hits = 0;
    h.set_filter(
        Dir::AtoB,
        Box::new(move |p| {
            if p.data_index == Some(u64::from(4 * w)) && target.is_none() {
                target = Some(p.seq);
            }
            if p.payload_len > 0 && Some(p.seq) == target && hits < 2 {
                hits += 1;
                return true;
            }
            false
        }),
    );
    let ca = h.open(9, cfg.clone(), cfg);
    h.a.conn_mut(ca).unwrap().set_tracing(true);
    let data = vec![7u8; (20 * w * MSS) as usize];
    let (mut sent, mut got, mut cb) = (0, 0, None);
    assert!(h.run(Instant::ZERO + Duration::from_secs(120), |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            sent += c.send(&data[sent..]).unwrap_or(0);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            got += c.recv_discard(usize::MAX);
        }
        got == data.len()
    }));
    let mut t = Vec::new();
    h.a.conn_mut(ca).unwrap().take_trace(&mut t);
    let fr = t
        .iter()
        .find(|e| e.kind == TraceKind::FastRetransmit)
        .expect("fast retransmit");
    let to = t
        .iter()
        .find(|e| e.kind == TraceKind::Timeout)
        .expect("a timeout");
    assert!(to.time > fr.time);
    assert_eq!(to.ssthresh, fr.ssthresh, "ssthresh after the timeout");
    // One segment: the MSS less the 12 bytes of the timestamps option.
    assert_eq!(to.cwnd, MSS - 12);
}

/// RFC 5681 §3.2 step 2: "When [RFC3042] is in use, additional data sent in limited transmit
/// MUST NOT be included in this calculation" (ssthresh = max(FlightSize / 2, 2*SMSS)). A
/// window of 16 segments with one drop: the two segments limited transmit sends on the
/// first two duplicate ACKs leave ssthresh at 8 segments, not 9.
#[test]
fn rfc5681_3_2_limited_transmit_segments_are_not_in_the_flightsize_for_ssthresh() {
    let w = 16;
    for (name, base) in [
        ("newreno", TcpConfig::newreno()),
        ("sack", TcpConfig::sack()),
    ] {
        let mut cfg = config(
            if name == "sack" {
                RecoveryAlgorithm::Sack
            } else {
                RecoveryAlgorithm::NewReno
            },
            w,
            base,
        );
        cfg.limited_transmit = true;
        cfg.timestamps = false;
        let r = run(cfg, 8 * w, vec![u64::from(4 * w)]);
        let fr = r
            .trace
            .iter()
            .find(|e| e.kind == TraceKind::FastRetransmit)
            .expect("fast retransmit");
        // Limited transmit did send: the flight at the third duplicate ACK is W + 2.
        assert_eq!(
            fr.flight,
            (w + 2) * MSS,
            "{name}: limited transmit did not send"
        );
        assert_eq!(
            fr.ssthresh,
            w / 2 * MSS,
            "{name}: ssthresh counts limited transmit"
        );
        assert_eq!(r.timeouts, 0, "{name}");
    }
}

/// cc = "fixed": cwnd stays at the initial window through every recovery episode (two holes
/// in one window, one in another), so SACK keeps new data flowing inside the larger receiver
/// window while it repairs.
#[test]
fn fixed_window_holds_cwnd_through_recovery_and_timeout() {
    let w = 16;
    let mut cfg = config(RecoveryAlgorithm::Sack, w, TcpConfig::sack());
    cfg.congestion = CongestionAlgorithm::Fixed;
    cfg.timestamps = false;
    let r = run(
        cfg,
        12 * w,
        vec![u64::from(3 * w), u64::from(3 * w + 5), u64::from(6 * w)],
    );
    assert!(r.fast_retransmits >= 2, "{}", r.fast_retransmits);
    let after_syn: Vec<&TraceEvent> = r
        .trace
        .iter()
        .filter(|e| matches!(e.kind, TraceKind::Send { .. }))
        .collect();
    assert!(after_syn.iter().all(|e| e.cwnd == w * MSS));
    // The flight may pass cwnd only by what SACK'd data takes out of the pipe: with a
    // receiver window of 4W it stays within 2W here.
    assert!(after_syn.iter().all(|e| e.flight <= 2 * w * MSS));
}

/// RFC 6675 §5 step (4.2): on entering loss recovery "ssthresh = cwnd = (FlightSize / 2)".
#[test]
fn rfc6675_5_step_4_2_entry_sets_cwnd_and_ssthresh_to_half_the_flightsize() {
    let w = 16;
    let mut cfg = config(RecoveryAlgorithm::Sack, w, TcpConfig::sack());
    cfg.timestamps = false;
    cfg.limited_transmit = false;
    let r = run(cfg, 8 * w, vec![u64::from(4 * w)]);
    let fr = r
        .trace
        .iter()
        .find(|e| e.kind == TraceKind::FastRetransmit)
        .expect("fast retransmit");
    assert_eq!(fr.ssthresh, w / 2 * MSS);
    assert_eq!(fr.cwnd, w / 2 * MSS);
    assert_eq!(r.timeouts, 0);
}

/// RFC 6582 §3.2 step 3 (full acknowledgment): "Set cwnd to either (1) min (ssthresh,
/// max(FlightSize, SMSS) + SMSS) or (2) ssthresh": never above ssthresh, no burst.
#[test]
fn rfc6582_3_2_full_ack_exit_leaves_cwnd_at_most_ssthresh() {
    let w = 16;
    let cfg = config(RecoveryAlgorithm::NewReno, w, TcpConfig::newreno());
    let r = run(cfg, 8 * w, vec![u64::from(4 * w), u64::from(4 * w + 3)]);
    let exit = r
        .trace
        .iter()
        .find(|e| e.kind == TraceKind::RecoveryExit)
        .expect("recovery exit");
    assert_eq!(exit.ssthresh, w / 2 * MSS);
    assert!(
        exit.cwnd <= exit.ssthresh,
        "cwnd {} > ssthresh {}",
        exit.cwnd,
        exit.ssthresh
    );
    assert!(exit.cwnd >= MSS);
    assert_eq!(r.timeouts, 0);
}

/// RFC 5681 §3.1, equation (4) and "cwnd MUST be set to no more than the loss window, LW,
/// which equals 1 full-sized segment" when the retransmission timer expires.
#[test]
fn rfc5681_3_1_timeout_sets_ssthresh_to_half_the_flightsize_and_cwnd_to_one_segment() {
    let w = 16;
    let mut cfg = config(RecoveryAlgorithm::TimeoutOnly, w, TcpConfig::newreno());
    cfg.timestamps = false;
    let r = run(cfg, 4 * w, vec![u64::from(2 * w)]);
    let to = r
        .trace
        .iter()
        .find(|e| e.kind == TraceKind::Timeout)
        .expect("a timeout");
    // FlightSize when the timer fired was the window of 16 segments (the trace event is
    // recorded after SND.NXT went back to SND.UNA, so its own `flight` reads 0).
    assert_eq!(to.ssthresh, w / 2 * MSS);
    assert_eq!(to.cwnd, MSS);
    assert_eq!(r.fast_retransmits, 0);
}
