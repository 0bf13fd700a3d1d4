//! Flow control (RFC 9293 §3.7.4, §3.8.6), the persist timer (§3.8.6.1), silly window
//! syndrome avoidance (§3.8.6.2) and the retransmission timer (RFC 6298, Karn).

use ackclock_tcp::rtt::RttConfig;
use ackclock_tcp::{State, TcpConfig};
use ackclock_testkit::peer::*;
use ackclock_wire::{Duration, Instant};

/// Bytes of payload in `segs`.
fn payload_bytes(segs: &[Seg]) -> usize {
    segs.iter().map(|s| s.payload.len()).sum()
}

/// A tiny deterministic generator for scripted "random" scenarios.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as u32) % n.max(1)
    }
}

// ---------------------------------------------------------------------------------------
// Sender flow control

#[test]
fn rfc9293_3_8_6_sender_never_exceeds_the_peer_window() {
    let mut p = Peer::new();
    p.window = 3000;
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let total = 40_000usize;
    let mut out = p.app_send(&data(total));
    let mut got = 0usize;
    // The peer varies its window; it never goes below half the largest it offered (so
    // sender SWS avoidance does not hold data back) and the peer acknowledges everything.
    let windows = [3000u16, 4000, 2920, 6000, 3000, 8000, 5000];
    for round in 0..200 {
        let right = p.rcv_nxt.wrapping_add(u32::from(p.window));
        for s in &out {
            assert!(
                seq_le(s.end(), right),
                "round {round}: {s:?} beyond the right edge {right}"
            );
        }
        got += payload_bytes(&out);
        p.absorb(&out);
        if got == total {
            break;
        }
        p.window = windows[round % windows.len()];
        out = p.send_ack();
        out.extend(p.advance(ms(10)).into_iter().map(|(_, s)| s));
    }
    assert_eq!(got, total, "all data delivered through the window");
}

#[test]
fn rfc9293_3_8_6_2_1_sender_sws_avoidance_holds_a_small_segment() {
    // Window 3000 from the SYN: two full segments fit; the 80-byte rest would be a silly
    // segment (less than half the largest window and not the end of the data).
    let mut p = Peer::new();
    p.window = 3000;
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(20_000));
    assert_eq!(
        out.iter().map(|s| s.payload.len()).collect::<Vec<_>>(),
        vec![1460, 1460]
    );
}

#[test]
fn rfc9293_3_8_6_2_1_sender_sws_override_timeout_sends_into_small_window() {
    // The peer offered 8000 once; now it can take only 500 bytes and stays there. Pushed
    // data must still go out when the override timeout (0.1 to 1 s) expires.
    let mut p = Peer::new();
    p.window = 8000;
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.window = 500;
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let t0 = p.now;
    assert_eq!(
        payload_bytes(&p.app_send(&data(2000))),
        0,
        "held by SWS avoidance"
    );
    let out = p.advance(secs(5));
    let (t, first) = out
        .iter()
        .find(|(_, s)| !s.payload.is_empty())
        .expect("nothing sent into a 500-byte window in 5 s");
    assert!(*t - t0 <= secs(1), "override after {:?}", *t - t0);
    assert_eq!(first.payload.len(), 500, "exactly what the window allows");
    // Later segments (retransmissions of the unacknowledged 500) stay inside the window.
    for (_, s) in &out {
        assert!(
            s.seq
                .wrapping_add(s.payload.len() as u32)
                .wrapping_sub(first.seq)
                <= 500
        );
    }
}

#[test]
fn rfc9293_3_7_4_nagle_holds_a_small_segment_while_data_is_unacknowledged() {
    let cfg = TcpConfig {
        nagle: true,
        ..cfg_unlimited()
    };
    let mut p = Peer::established(cfg);
    let out = p.app_send(b"first");
    assert_eq!(out.len(), 1, "nothing outstanding: sent at once");
    let first = out;
    let out = p.app_send(b"second");
    assert!(
        out.is_empty(),
        "held while 'first' is unacknowledged: {out:?}"
    );
    let out = p.app_send(b"third");
    assert!(out.is_empty());
    // The ACK releases the held data as one segment.
    p.absorb(&first);
    let out = p.send_ack();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].payload, b"secondthird");
}

#[test]
fn rfc9293_3_7_4_nagle_sends_full_segments_regardless() {
    let cfg = TcpConfig {
        nagle: true,
        ..cfg_unlimited()
    };
    let mut p = Peer::established(cfg);
    p.app_send(b"small");
    let out = p.app_send(&data(3000));
    // Two full segments go although data is outstanding; the 40-byte tail waits.
    assert_eq!(
        out.iter().map(|s| s.payload.len()).collect::<Vec<_>>(),
        vec![1460, 1460]
    );
}

#[test]
fn rfc9293_3_7_4_without_nagle_small_segments_go_at_once() {
    let mut p = Peer::established(cfg_unlimited());
    assert_eq!(p.app_send(b"first").len(), 1);
    let out = p.app_send(b"second");
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].payload, b"second");
}

// ---------------------------------------------------------------------------------------
// Zero window and the persist timer (§3.8.6.1)

/// Established; the peer's window closes while the engine still has data queued.
fn zero_window_peer(cfg: TcpConfig) -> (Peer, u32) {
    let mut p = Peer::new();
    p.window = 2920;
    p.syn_to_listener(cfg, syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(4000));
    assert_eq!(payload_bytes(&out), 2920);
    p.absorb(&out);
    p.window = 0;
    let out = p.send_ack();
    assert!(out.is_empty(), "{out:?}");
    let una = p.engine_snd().0;
    (p, una)
}

#[test]
fn rfc9293_3_8_6_1_zero_window_probes_back_off_within_persist_bounds() {
    let cfg = cfg_unlimited();
    let (pmin, pmax) = (cfg.persist_min, cfg.persist_max);
    let (mut p, una) = zero_window_peer(cfg);
    let mut times: Vec<Instant> = vec![p.now];
    for _ in 0..12 {
        let t = p.ep.poll_timeout().expect("the persist timer runs");
        let out = p.advance_to(t);
        assert_eq!(out.len(), 1, "one probe: {out:?}");
        let probe = &out[0].1;
        // A one-byte probe at SND.UNA.
        assert_eq!(probe.payload.len(), 1, "{probe:?}");
        assert_eq!(probe.seq, una);
        times.push(t);
        // The peer still has no room: it acknowledges nothing new, window 0.
        let out = p.send_ack();
        assert!(out.is_empty(), "{out:?}");
    }
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps[0] >= pmin, "first probe after {:?}", gaps[0]);
    for w in gaps.windows(2) {
        assert!(w[1] >= w[0], "probe intervals shrink: {gaps:?}");
    }
    assert!(gaps.iter().all(|g| *g >= pmin && *g <= pmax), "{gaps:?}");
    assert!(gaps.last().unwrap() > &gaps[0], "no backoff: {gaps:?}");
    assert_eq!(*gaps.last().unwrap(), pmax, "{gaps:?}");
    // The connection is kept while the peer answers the probes.
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.conn().stats().window_probes, 12);
    // The window opens: the rest of the data (the probed byte included) flows.
    p.window = 65535;
    let out = p.send_ack();
    assert_eq!(out.first().map(|s| s.seq), Some(una));
    assert_eq!(payload_bytes(&out), 4000 - 2920);
}

#[test]
fn rfc9293_3_8_6_1_probe_when_the_application_writes_into_a_zero_window() {
    let mut p = Peer::new();
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.window = 0;
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    assert_eq!(p.conn().stats().snd_wnd_bytes, 0);
    assert!(p.app_send(b"data").is_empty());
    let out = p.advance(secs(70));
    assert!(
        out.iter().any(|(_, s)| s.payload.len() == 1),
        "no zero-window probe in 70 s: {out:?}"
    );
}

#[test]
fn rfc9293_3_8_6_1_unanswered_probe_is_repeated() {
    let (mut p, _) = zero_window_peer(cfg_unlimited());
    let out = p.advance(secs(6));
    assert_eq!(out.len(), 1, "first probe: {out:?}");
    // The probe (or its answer) is lost: the sender must keep probing.
    let out = p.advance(secs(120));
    assert!(
        !out.is_empty(),
        "the sender stopped probing a zero window after one lost probe"
    );
}

// ---------------------------------------------------------------------------------------
// Receiver windows (§3.8.6.2.2)

/// Established with a small receive buffer and a 1000-byte MSS.
fn small_receiver(buf: usize) -> Peer {
    let cfg = TcpConfig {
        recv_buffer_bytes: buf,
        mss: 1000,
        ..cfg_unlimited()
    };
    Peer::passive(cfg, syn_opts(Some(1000), None, false, false)).0
}

/// Provokes an ACK from the engine with an old duplicate byte; returns it.
fn provoke_ack(p: &mut Peer) -> Seg {
    let o = p.out(ACK).seq(p.snd_nxt.wrapping_sub(1)).payload(b"z");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    out[0].clone()
}

fn fill(p: &mut Peer, n: usize) {
    let mut left = n;
    while left > 0 {
        let k = left.min(1000);
        p.send_data(&data(k));
        left -= k;
    }
    p.advance(secs(1));
}

#[test]
fn rfc9293_3_8_6_window_update_after_the_application_reads() {
    let mut p = small_receiver(8000);
    fill(&mut p, 8000);
    let last = p.log.last().unwrap().1.clone();
    assert_eq!(last.ack, p.snd_nxt);
    assert_eq!(last.window, 0, "the buffer is full: {last:?}");
    // The application drains the buffer: a window update goes out without further input.
    assert_eq!(p.app_read().len(), 8000);
    let out = p.drain();
    assert_eq!(out.len(), 1, "one window update: {out:?}");
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, p.snd_nxt);
    assert_eq!(out[0].window, 8000);
    assert_eq!(p.conn().stats().window_updates_out, 1);
}

#[test]
fn rfc9293_3_8_6_2_2_receiver_sws_avoidance_no_tiny_window() {
    let mut p = small_receiver(8000);
    fill(&mut p, 8000);
    // Reading 500 bytes frees less than min(BUFF/2, MSS) = 1000: the window stays 0 and
    // no update is sent.
    let mut b = [0u8; 500];
    assert_eq!(p.conn_mut().recv(&mut b), Ok(500));
    assert!(p.drain().is_empty(), "no window update for 500 bytes");
    assert_eq!(
        provoke_ack(&mut p).window,
        0,
        "a tiny window was advertised"
    );
    // Once a full segment fits, the window is offered.
    let mut b = [0u8; 600];
    assert_eq!(p.conn_mut().recv(&mut b), Ok(600));
    p.drain();
    assert_eq!(provoke_ack(&mut p).window, 1100);
}

/// Runs a scripted exchange of in-order and out-of-order data and partial reads; returns
/// every advertised right edge in order.
fn right_edges(cfg: TcpConfig, ws: Option<u8>, seed: u64) -> Vec<u32> {
    let shift = cfg
        .window_scale
        .then(|| {
            let mut s = 0;
            while s < 14 && (cfg.recv_buffer_bytes >> s) > 65535 {
                s += 1;
            }
            s
        })
        .filter(|_| ws.is_some())
        .unwrap_or(0);
    let (mut p, synack) = Peer::passive(cfg, syn_opts(Some(1460), ws, false, false));
    let mut rng = Lcg(seed);
    let mut edges = vec![synack.ack.wrapping_add(u32::from(synack.window))];
    let mut seen = 0;
    for _ in 0..400 {
        // Right edge the peer may send up to (from the latest advertisement).
        let limit = *edges.last().unwrap();
        let room = limit.wrapping_sub(p.snd_nxt) as i32;
        match rng.next(6) {
            0..=2 if room > 0 => {
                let n = (1 + rng.next(1460)).min(room as u32) as usize;
                p.send_data(&data(n));
            }
            3 if room > 200 => {
                let off = 1 + rng.next(room as u32 / 2);
                let n = (1 + rng.next(300)).min(room as u32 - off) as usize;
                if n > 0 {
                    let o = p.out(ACK).seq(p.snd_nxt + off).payload(&data(n));
                    p.inject(&o);
                }
            }
            4 => {
                let mut b = vec![0u8; 1 + rng.next(5000) as usize];
                let _ = p.conn_mut().recv(&mut b);
                p.drain();
            }
            _ => {
                p.advance(ms(50 + u64::from(rng.next(300))));
            }
        }
        for (_, s) in p.log[seen..].iter().filter(|(_, s)| !s.has(SYN)) {
            edges.push(s.ack.wrapping_add(u32::from(s.window) << shift));
        }
        seen = p.log.len();
    }
    assert!(edges.len() > 50, "too few ACKs to judge: {}", edges.len());
    edges
}

#[test]
fn rfc9293_3_8_6_2_2_receiver_never_shrinks_the_right_edge() {
    for seed in 1..=4 {
        let cfg = TcpConfig {
            recv_buffer_bytes: 20_000,
            ..cfg_unlimited()
        };
        let edges = right_edges(cfg, None, seed);
        for w in edges.windows(2) {
            assert!(
                seq_le(w[0], w[1]),
                "seed {seed}: right edge moved left {} -> {}",
                w[0],
                w[1]
            );
        }
    }
}

#[test]
fn rfc7323_2_4_scaled_receiver_never_shrinks_the_right_edge() {
    for seed in 1..=4 {
        let cfg = TcpConfig {
            recv_buffer_bytes: 200_000,
            window_scale: true,
            ..cfg_unlimited()
        };
        let edges = right_edges(cfg, Some(0), seed);
        for w in edges.windows(2) {
            assert!(
                seq_le(w[0], w[1]),
                "seed {seed}: right edge moved left {} -> {}",
                w[0],
                w[1]
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Retransmission timer (RFC 6298, Karn)

#[test]
fn rfc6298_2_1_initial_rto_is_one_second() {
    assert_eq!(RttConfig::rfc6298().initial_rto, secs(1));
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    assert!(!p.conn().rtt_estimator().has_sample());
    assert_eq!(p.conn().stats().rto, secs(1));
    let t0 = p.now;
    assert_eq!(p.ep.poll_timeout(), Some(t0 + secs(1)));
    let out = p.advance(ms(1500));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0 - t0, secs(1));
    assert_eq!(out[0].1.seq, syn.seq);
}

#[test]
fn rfc6298_5_5_rto_doubles_on_each_expiry_up_to_max_rto() {
    let cfg = TcpConfig {
        rtt: RttConfig {
            max_rto: secs(20),
            ..RttConfig::rfc6298()
        },
        max_retransmits: 8,
        ..cfg_unlimited()
    };
    let mut p = Peer::established(cfg);
    let rto0 = p.conn().stats().rto;
    assert_eq!(
        rto0,
        secs(1),
        "handshake sample of 0 ms is clamped to min_rto"
    );
    let t0 = p.now;
    let first = p.app_send(&data(500));
    let out = p.advance(secs(600));
    let times: Vec<Instant> = out
        .iter()
        .filter(|(_, s)| !s.payload.is_empty())
        .map(|(t, s)| {
            // RFC 6298 (5.4): retransmit the earliest segment not acknowledged.
            assert_eq!(s.seq, first[0].seq);
            *t
        })
        .collect();
    let mut prev = t0;
    let gaps: Vec<u64> = times
        .iter()
        .map(|t| {
            let g = (*t - prev).as_millis() / 1000;
            prev = *t;
            g
        })
        .collect();
    assert_eq!(gaps, vec![1, 2, 4, 8, 16, 20, 20, 20]);
}

#[test]
fn rfc6298_5_2_5_3_timer_stopped_when_all_acked_restarted_on_new_ack() {
    let mut p = Peer::established(cfg_unlimited());
    let out = p.app_send(&data(2920));
    assert_eq!(out.len(), 2);
    let t0 = p.now;
    assert_eq!(p.ep.poll_timeout(), Some(t0 + secs(1)));
    // (5.3) An ACK of new data with data outstanding restarts the timer.
    p.now += ms(500);
    let o = p.out(ACK).ack(out[0].end());
    p.inject(&o);
    assert_eq!(p.ep.poll_timeout(), Some(t0 + ms(500) + secs(1)));
    // (5.2) Everything acknowledged: the timer stops.
    p.absorb(&out);
    p.send_ack();
    assert_eq!(p.ep.poll_timeout(), None);
}

#[test]
fn rfc6298_3_karn_no_rtt_sample_from_a_retransmitted_segment() {
    // Handshake RTT 100 ms gives SRTT 100 ms.
    let (mut p, _) = Peer::connect(cfg_unlimited());
    p.now += ms(100);
    p.send_synack(syn_opts(Some(1460), None, false, false));
    let rtt = p.conn().rtt_estimator().clone();
    assert!(rtt.has_sample());
    assert_eq!(rtt.srtt(), ms(100));
    // A segment is lost, retransmitted after the RTO, and the retransmission acknowledged
    // 10 ms later: the sample would be ambiguous (1010 ms or 10 ms), so none is taken.
    let out = p.app_send(&data(500));
    let out2 = p.advance(ms(1010));
    assert_eq!(out2.len(), 1, "one retransmission: {out2:?}");
    assert_eq!(out2[0].1.seq, out[0].seq);
    p.absorb(&out);
    p.send_ack();
    let after = p.conn().rtt_estimator();
    assert_eq!(after.srtt(), ms(100), "SRTT changed by an ambiguous sample");
    assert_eq!(after.latest(), ms(100));
    // A fresh segment, acknowledged after 300 ms, is sampled.
    let out = p.app_send(&data(10));
    p.now += ms(300);
    p.absorb(&out);
    p.send_ack();
    assert_eq!(p.conn().rtt_estimator().latest(), ms(300));
}

#[test]
fn karn_off_times_through_the_retransmission_and_ends_the_backoff_on_a_new_ack() {
    // 4.3BSD as released in 1986 (before Karn): the same loss as above, but the segment
    // stays timed through its retransmission, so the ACK of the resend yields a sample from
    // the first transmission (1010 ms); and an ACK of new data that carries no sample still
    // ends the backoff.
    let mut c = cfg_unlimited();
    c.rtt.karn = false;
    let (mut p, _) = Peer::connect(c);
    p.now += ms(100);
    p.send_synack(syn_opts(Some(1460), None, false, false));
    let out = p.app_send(&data(500));
    let out2 = p.advance(ms(1010));
    assert_eq!(out2.len(), 1, "one retransmission: {out2:?}");
    assert_eq!(p.conn().rtt_estimator().backoff_shift(), 1);
    p.absorb(&out);
    p.send_ack();
    let after = p.conn().rtt_estimator();
    assert_eq!(after.latest(), ms(1010), "the ambiguous sample is taken");
    assert_eq!(after.backoff_shift(), 0);

    // The no-sample path: a second segment sent while the first is timed is not timed
    // itself; when it times out twice, its ACK carries no sample but ends the backoff.
    let a = p.app_send(&data(100));
    p.now += ms(10);
    let b = p.app_send(&data(100));
    assert_eq!((a.len(), b.len()), (1, 1));
    // The first is acknowledged (a sample), the second is lost: two timeouts back off.
    p.absorb(&a);
    p.send_ack();
    let rto = p.conn().stats().rto;
    let re = p.advance(rto + rto + rto + ms(1));
    assert_eq!(re.len(), 2, "two retransmissions of the second: {re:?}");
    assert_eq!(p.conn().rtt_estimator().backoff_shift(), 2);
    // Its ACK carries no sample (the segment was never timed) but ends the backoff.
    let latest = p.conn().rtt_estimator().latest();
    p.absorb(&b);
    p.send_ack();
    assert_eq!(p.conn().rtt_estimator().latest(), latest, "no sample");
    assert_eq!(p.conn().rtt_estimator().backoff_shift(), 0, "backoff kept");
}

#[test]
fn rfc6298_3_karn_no_sample_from_a_retransmitted_syn_ack() {
    let mut p = Peer::new();
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    let out = p.advance(ms(1200));
    assert_eq!(out.len(), 1, "SYN,ACK retransmitted: {out:?}");
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    assert_eq!(p.state(), State::Established);
    assert!(
        !p.conn().rtt_estimator().has_sample(),
        "sampled the ACK of a retransmitted SYN,ACK"
    );
}

#[test]
fn rfc6298_5_7_rto_at_least_3s_when_data_starts_after_a_syn_timeout() {
    let (mut p, _) = Peer::connect(cfg_unlimited());
    // The SYN times out once and is retransmitted.
    let out = p.advance(ms(1050));
    assert_eq!(out.len(), 1);
    assert!(out[0].1.has(SYN));
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.state(), State::Established);
    assert!(!p.conn().rtt_estimator().has_sample());
    assert!(
        p.conn().stats().rto >= secs(3),
        "rto {:?}",
        p.conn().stats().rto
    );
    let t0 = p.now;
    let first = p.app_send(&data(100));
    assert_eq!(first.len(), 1);
    let out = p.advance(secs(10));
    let (t, s) = &out[0];
    assert_eq!(s.seq, first[0].seq);
    assert_eq!(*t - t0, secs(3), "first data retransmission after 3 s");
}

/// RFC 9293 §3.8.6.2.2 sends a window update when the window can grow by min(BUFF/2, MSS).
/// A one-byte buffer makes that threshold 0, which must still mean "when the right edge
/// can move", not "always": the engine used to send window updates for ever (found with a
/// `--rcvbuf 1` live test that wrote 1.7 million packets in 5 s).
#[test]
fn rfc9293_3_8_6_2_2_a_one_byte_receive_buffer_sends_one_window_update_not_a_storm() {
    let mut p = small_receiver(1);
    p.send_data(b"a");
    let acks = p.advance(secs(1));
    assert_eq!(acks.last().map(|(_, s)| s.window), Some(0), "{acks:?}");
    assert_eq!(p.app_read(), b"a");
    // `drain` panics if the endpoint never stops sending.
    let out = p.drain();
    assert_eq!(out.len(), 1, "one window update: {out:?}");
    assert_eq!(out[0].window, 1);
    assert!(p.drain().is_empty());
}

/// The same rule with window scaling (RFC 7323 §2.3): growth smaller than the scale unit
/// cannot be advertised, so it is not an update that is due, whatever the threshold. A
/// buffer of 16 MiB + 511 bytes (shift 9, 512-byte units) with MSS 85 and timestamps
/// (threshold 2 x 73 bytes) leaves 511 bytes of window that can never be announced: the
/// engine sent window updates for ever from the end of the handshake.
#[test]
fn rfc7323_2_3_growth_below_the_scale_unit_is_not_a_window_update() {
    let cfg = TcpConfig {
        recv_buffer_bytes: (16 << 20) + 511,
        mss: 85,
        timestamps: true,
        window_scale: true,
        ..cfg_unlimited()
    };
    let mut p = Peer::passive(cfg, syn_opts(Some(85), Some(7), false, true)).0;
    for _ in 0..10 {
        p.send_data(&data(73));
        p.advance(secs(1));
        assert_eq!(p.app_read().len(), 73);
        // `drain` panics if the endpoint never stops sending.
        let out = p.drain();
        assert!(out.len() <= 1, "{out:?}");
    }
}
