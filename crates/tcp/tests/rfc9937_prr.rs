//! RFC 9937 Proportional Rate Reduction in the engine (`TcpConfig::window_reduction =
//! WindowReduction::Prr`), against the recovery's own rule (`Halve`) on the same scripted
//! losses: two endpoints on an in-memory path, a window held at W segments, one ACK per
//! segment.

use ackclock_tcp::cc::AimdConfig;
use ackclock_tcp::{
    CongestionAlgorithm, InitialWindow, RecoveryAlgorithm, TcpConfig, TraceEvent, TraceKind,
    WindowReduction,
};
use ackclock_testkit::pair::{Dir, Harness, PipeConfig};
use ackclock_testkit::trace::Trace;
use ackclock_wire::{Duration, Instant};

const MSS: u32 = 1000;
const W: u32 = 20;

fn config(alg: RecoveryAlgorithm, wr: WindowReduction) -> TcpConfig {
    let mut cfg = if alg == RecoveryAlgorithm::Sack {
        TcpConfig::sack()
    } else {
        TcpConfig::newreno()
    };
    cfg.mss = MSS as u16;
    cfg.recovery = alg;
    cfg.window_reduction = wr;
    cfg.limited_transmit = true;
    cfg.timestamps = false;
    cfg.initial_window = InitialWindow::Segments(W);
    cfg.initial_ssthresh = W * MSS;
    // No additive increase: the window before the loss is exactly W, ssthresh W/2 after.
    cfg.congestion = CongestionAlgorithm::Aimd(AimdConfig {
        increase_segments: 0.0,
        ..AimdConfig::default()
    });
    cfg.window_scale = true;
    cfg.send_buffer_bytes = (8 * W * MSS) as usize;
    cfg.recv_buffer_bytes = (4 * W * MSS) as usize;
    cfg.ack.segments_per_ack = 1;
    cfg
}

struct Run {
    trace: Vec<TraceEvent>,
    timeouts: u64,
}

/// Sends `total` segments of a known pattern from A to B, dropping the first transmission
/// of the data segments whose index is in `drops`, and checks that B received every byte,
/// in order.
fn run(cfg: TcpConfig, total: u32, drops: &[u64]) -> Run {
    let pipe = PipeConfig {
        delay: Duration::from_millis(20),
        rate_bps: 8_000_000,
        ..PipeConfig::default()
    };
    let mut h = Harness::new(1, pipe);
    let mut seen = std::collections::HashSet::new();
    let drops = drops.to_vec();
    h.set_filter(
        Dir::AtoB,
        Box::new(move |p| match p.data_index {
            Some(i) if drops.contains(&i) => seen.insert(p.seq),
            _ => false,
        }),
    );
    let ca = h.open(9, cfg.clone(), cfg);
    h.a.conn_mut(ca).unwrap().set_tracing(true);
    let data: Vec<u8> = (0..total * MSS).map(|i| (i % 251) as u8).collect();
    let mut got = Vec::with_capacity(data.len());
    let mut buf = vec![0u8; 64 * 1024];
    let mut sent = 0;
    let mut cb = None;
    let limit = Instant::ZERO + Duration::from_secs(600);
    let ok = h.run(limit, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            sent += c.send(&data[sent..]).unwrap_or(0);
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            while let Ok(n) = c.recv(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
        }
        got.len() == data.len()
    });
    assert!(ok, "transfer did not complete");
    assert!(got == data, "the bytes received differ from those sent");
    let c = h.a.conn_mut(ca).unwrap();
    let mut trace = Vec::new();
    c.take_trace(&mut trace);
    Run {
        trace,
        timeouts: c.stats().timeouts,
    }
}

/// The recovery episode: from the fast retransmit to the exit.
fn episode(r: &Run) -> (usize, usize) {
    let t = Trace(&r.trace);
    let fr = t
        .position(TraceKind::FastRetransmit)
        .expect("fast retransmit");
    let exit = t.position(TraceKind::RecoveryExit).expect("recovery exit");
    (fr, exit)
}

/// Segments sent in answer to each ACK of the episode (what follows an ACK's event up to the
/// next ACK's), the first entry being the ACK that started recovery.
fn sends_per_ack(r: &Run) -> Vec<usize> {
    let (fr, exit) = episode(r);
    let mut out = vec![0];
    for e in &r.trace[fr..exit] {
        match e.kind {
            TraceKind::DupAck { .. } | TraceKind::Ack { .. } => out.push(0),
            TraceKind::Send { len, .. } if len > 0 => *out.last_mut().unwrap() += 1,
            _ => {}
        }
    }
    out
}

/// RFC 9937 §5 and §6: with one loss, PRR spreads the new data over the recovery's round
/// trip (a segment every other ACK, ssthresh/RecoverFS = 1/2) where the recovery's own
/// rule sends nothing for the first half; no ACK releases more than two segments; the
/// flight at the exit is ssthresh; cwnd = ssthresh; every byte arrives.
#[test]
fn rfc9937_single_loss_sack_prr_sends_in_proportion_through_recovery() {
    let drops = [u64::from(4 * W)];
    let prr = run(
        config(RecoveryAlgorithm::Sack, WindowReduction::Prr),
        10 * W,
        &drops,
    );
    let halve = run(
        config(RecoveryAlgorithm::Sack, WindowReduction::Halve),
        10 * W,
        &drops,
    );
    assert_eq!((prr.timeouts, halve.timeouts), (0, 0));
    let p = sends_per_ack(&prr);
    let h = sends_per_ack(&halve);
    assert!(p.iter().all(|&n| n <= 2), "PRR sends per ACK: {p:?}");
    // The first half of the episode's ACKs: RFC 6675 waits for pipe to fall below cwnd
    // (only the fast retransmit goes), PRR sends about one segment per two ACKs.
    let half = (W / 2) as usize - 1;
    let early_prr: usize = p[1..half].iter().sum();
    let early_halve: usize = h[1..half].iter().sum();
    assert_eq!(early_halve, 0, "Halve, first half: {h:?}");
    assert!(
        early_prr >= half / 2 - 1,
        "PRR, first half: {early_prr} segments in {p:?}"
    );
    let (_, exit) = episode(&prr);
    let e = &prr.trace[exit];
    assert!(
        e.flight.abs_diff(e.ssthresh) <= MSS,
        "flight {} at the exit, ssthresh {}",
        e.flight,
        e.ssthresh
    );
    assert_eq!(e.ssthresh, W / 2 * MSS);
    // The ACK that ends recovery sets cwnd = ssthresh (RFC 9937 §6).
    let after = prr.trace[exit..]
        .iter()
        .find(|e| matches!(e.kind, TraceKind::Ack { .. }))
        .unwrap();
    assert_eq!(after.cwnd, W / 2 * MSS);
}

/// A burst of losses (12 consecutive segments of a window of 20): at the third duplicate ACK
/// pipe is already below ssthresh, and RFC 6675's pipe < cwnd sends the difference at
/// once; PRR's reduction bound (PRR-CRB, §6.2) sends no more than was delivered, then
/// PRR-SSRB one more per safe ACK, never more than two segments per ACK.
#[test]
fn rfc9937_burst_loss_sack_prr_sends_no_burst_at_recovery_start() {
    let first = u64::from(4 * W);
    let drops: Vec<u64> = (first..first + 12).collect();
    let prr = run(
        config(RecoveryAlgorithm::Sack, WindowReduction::Prr),
        10 * W,
        &drops,
    );
    let halve = run(
        config(RecoveryAlgorithm::Sack, WindowReduction::Halve),
        10 * W,
        &drops,
    );
    assert_eq!(prr.timeouts, 0);
    let p = sends_per_ack(&prr);
    let h = sends_per_ack(&halve);
    assert!(p.iter().all(|&n| n <= 2), "PRR sends per ACK: {p:?}");
    assert!(
        h.iter().any(|&n| n > 2),
        "Halve bursts at the start of recovery: {h:?}"
    );
    let (_, exit) = episode(&prr);
    let e = &prr.trace[exit];
    assert!(
        e.flight.abs_diff(e.ssthresh) <= 2 * MSS,
        "flight {} at the exit, ssthresh {}",
        e.flight,
        e.ssthresh
    );
}

/// NewReno (RFC 6582) with PRR: duplicate ACKs count one SMSS delivered each (RFC 9937
/// §6.2), the window is not inflated; no burst, flight at ssthresh at the exit, every byte
/// arrives. Two losses in a window make a partial ACK.
#[test]
fn rfc9937_newreno_prr_replaces_inflation() {
    for drops in [
        vec![u64::from(4 * W)],
        vec![u64::from(4 * W), u64::from(4 * W + 5)],
    ] {
        let prr = run(
            config(RecoveryAlgorithm::NewReno, WindowReduction::Prr),
            10 * W,
            &drops,
        );
        assert_eq!(prr.timeouts, 0, "{drops:?}");
        let p = sends_per_ack(&prr);
        assert!(
            p.iter().all(|&n| n <= 2),
            "{drops:?}: PRR sends per ACK: {p:?}"
        );
        // New data goes out in the first half of the episode, as the proportion allows.
        let half = (W / 2) as usize - 1;
        assert!(p[1..half].iter().sum::<usize>() >= 3, "{drops:?}: {p:?}");
        let (_, exit) = episode(&prr);
        let e = &prr.trace[exit];
        assert!(
            e.flight.abs_diff(e.ssthresh) <= 2 * MSS,
            "{drops:?}: flight {} at the exit, ssthresh {}",
            e.flight,
            e.ssthresh
        );
    }
}

mod adversarial {
    //! PRR under the adversarial suite's impairments: loss, reordering, duplication and
    //! corruption in both directions, every preset with loss recovery, PRR at one end or
    //! both. Every transfer completes byte-exact, with output per event bounded (the
    //! harness checks).
    use super::*;
    use ackclock_testkit::bytes;
    use ackclock_testkit::pair::two_way_transfer;
    use proptest::prelude::*;

    fn config() -> impl Strategy<Value = TcpConfig> {
        (
            prop::sample::select(vec!["reno", "newreno", "sack", "cubic", "modern"]),
            prop_oneof![Just(1460u16), Just(536), 64u16..1460],
            any::<[bool; 4]>(),
            1u32..=10,
        )
            .prop_map(|(preset, mss, flags, iw)| {
                let mut c = TcpConfig::preset(preset).unwrap();
                c.mss = mss;
                c.window_scale = flags[0];
                c.timestamps = flags[1];
                c.limited_transmit = flags[2];
                c.window_reduction = if flags[3] {
                    WindowReduction::Prr
                } else {
                    WindowReduction::Halve
                };
                c.initial_window = InitialWindow::Segments(iw);
                c.max_retransmits = 100;
                c
            })
    }

    fn path() -> impl Strategy<Value = PipeConfig> {
        (
            0.0..0.15f64,
            0.0..0.15f64,
            0.0..0.05f64,
            0.0..0.02f64,
            1u64..40,
            prop::sample::select(vec![0u64, 1_000_000, 10_000_000]),
        )
            .prop_map(
                |(loss, reorder, duplicate, corrupt, delay_ms, rate)| PipeConfig {
                    delay: Duration::from_millis(delay_ms),
                    rate_bps: rate,
                    queue_limit_pkts: if rate == 0 { 0 } else { 16 },
                    loss,
                    reorder,
                    reorder_delay: Duration::from_millis(delay_ms / 2 + 1),
                    duplicate,
                    corrupt,
                },
            )
    }

    proptest! {
        #![proptest_config(ackclock_testkit::proptest_config(400))]

        #[test]
        fn prr_transfers_complete_byte_exact_under_any_impairment(
            seed in any::<u64>(),
            a_cfg in config(),
            b_cfg in config(),
            ab_path in path(),
            ba_path in path(),
            ab_len in 0usize..60_000,
            ba_len in 0usize..20_000,
        ) {
            let mut a_cfg = a_cfg;
            // PRR at least at the sender of the longer stream.
            a_cfg.window_reduction = WindowReduction::Prr;
            let ab = bytes(ab_len, seed);
            let ba = bytes(ba_len, seed ^ 0x5555);
            let mut h = Harness::asymmetric(seed, ab_path, ba_path);
            let r = two_way_transfer(&mut h, a_cfg, b_cfg, &ab, &ba, Duration::from_secs(200_000));
            prop_assert!(r.b_got == ab, "A->B stream corrupted or short ({} of {})", r.b_got.len(), ab.len());
            prop_assert!(r.a_got == ba, "B->A stream corrupted or short ({} of {})", r.a_got.len(), ba.len());
            prop_assert!(r.completed, "data delivered but not all acknowledged by {:?}", h.now);
        }
    }
}

/// RFC 9937 §6.2's DeliveredData counts data bytes: a Linux receiver's SACK block covers the
/// FIN's sequence number too, and counting it made the conservative bound one byte more
/// than a segment, which let a second segment go (the live tail-loss run against Linux:
/// with the last 3 of 30 segments lost, both holes were resent on the ACK of the probe,
/// where Linux and the RFC resend one).
#[test]
fn rfc9937_6_2_delivered_data_does_not_count_the_fin() {
    use ackclock_testkit::peer::*;
    use ackclock_wire::{SackBlock, SackBlocks, TcpOptions};
    let mss = 1448usize;
    let mut cfg = TcpConfig::linux();
    cfg.nagle = false;
    cfg.mss = (mss + 12) as u16;
    let (mut p, _) = Peer::passive(cfg, syn_opts(Some((mss + 12) as u16), Some(7), true, true));
    // Written and closed at once: the FIN rides the last segment.
    assert_eq!(p.conn_mut().send(&data(3 * mss)).unwrap(), 3 * mss);
    p.conn_mut().close().unwrap();
    let f = p.drain();
    let fin = f.iter().find(|s| s.has(FIN)).expect("a FIN").clone();
    let last_data_end = fin.end();
    let data_segs: Vec<Seg> = f
        .iter()
        .filter(|s| !s.payload.is_empty())
        .cloned()
        .collect();
    assert_eq!(data_segs.len(), 3, "{f:?}");
    // Nothing is acknowledged: the tail loss probe resends the last segment.
    let mut probe = None;
    for _ in 0..300 {
        probe = p
            .advance(ms(5))
            .into_iter()
            .map(|(_, s)| s)
            .find(|s| !s.payload.is_empty());
        if probe.is_some() {
            break;
        }
    }
    let probe = probe.expect("a probe");
    assert_eq!(probe.seq, data_segs[2].seq, "{probe:?}");
    assert_eq!(p.conn().stats().tlp_probes, 1);
    // A round trip later the receiver SACKs the probe, FIN included (as Linux's does): the
    // first two are lost.
    p.advance(ms(30));
    p.rcv_nxt = data_segs[0].seq;
    p.ts_recent = probe.tsval().unwrap();
    let mut b = SackBlocks::default();
    b.push(SackBlock {
        left: data_segs[2].seq,
        right: last_data_end,
    });
    let o = p.out(ACK);
    let ts = o.opts.timestamps;
    let o = o.opts(TcpOptions {
        sack: b,
        timestamps: ts,
        ..TcpOptions::NONE
    });
    let out = p.inject(&o);
    let resent: Vec<&Seg> = out.iter().filter(|s| !s.payload.is_empty()).collect();
    assert!(p.conn().stats().in_recovery);
    assert_eq!(
        resent.len(),
        1,
        "DeliveredData is one segment, PRR's conservative bound one: {resent:?}"
    );
}
