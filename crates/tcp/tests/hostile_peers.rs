//! What an adversarial audit found (transfers under random loss, reordering, duplication and
//! corruption; spoofed and stale segments): each test is named after the rule the engine
//! broke, failed before its fix, and says what the failure looked like.

use ackclock_tcp::{InitialWindow, State, TcpConfig};
use ackclock_testkit::peer::*;

fn payload_bytes(segs: &[Seg]) -> usize {
    segs.iter().map(|s| s.payload.len()).sum()
}

/// NewReno with Nagle off, 1000-byte segments and an initial window of 4: after a timeout
/// only one segment is resent, so SND.NXT stays behind SND.MAX for a while.
fn cfg_1000() -> TcpConfig {
    TcpConfig {
        mss: 1000,
        nagle: false,
        initial_window: InitialWindow::Segments(4),
        ..TcpConfig::newreno()
    }
}

/// 4.3BSD's tcp_output sends a segment with no data, SYN or FIN from SND.MAX, not SND.NXT:
/// after a timeout pulls SND.NXT back, a pure ACK from SND.NXT lies below what the peer has
/// received, the peer finds it unacceptable (RFC 9293 §3.10.7.4) and drops its
/// acknowledgment. Two-way transfers deadlocked that way in an ACK ping-pong until both
/// ends gave up (both sides sending 3 x 1000 bytes with everything lost from 5 ms to 4 s).
#[test]
fn bsd_tcp_output_pure_acks_carry_snd_max_after_a_timeout_pulls_snd_nxt_back() {
    let mut p = Peer::passive(cfg_1000(), syn_opts(Some(1000), None, false, false)).0;
    let out = p.app_send(&data(3000));
    assert_eq!(payload_bytes(&out), 3000, "{out:?}");
    // No ACK comes: the timer fires and go-back-N resends the first segment only.
    let t = p.ep.poll_timeout().expect("RTO armed");
    let out = p.advance_to(t);
    assert_eq!(out.len(), 1, "{out:?}");
    let (una, nxt, max) = p.engine_snd();
    assert_eq!((nxt.wrapping_sub(una), max.wrapping_sub(una)), (1000, 3000));
    // The peer sends data (its ACKs of ours were lost): the engine's pure ACK of it must
    // carry SND.MAX, the next byte the peer expects from it.
    p.send_data(b"x");
    let acks: Vec<Seg> = p
        .advance(ms(500))
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.payload.is_empty())
        .collect();
    assert!(!acks.is_empty(), "no ACK of the peer's byte");
    for a in &acks {
        assert_eq!(a.seq, max, "a pure ACK from SND.NXT {nxt}: {a:?}");
    }
}

/// RFC 5681 §3.2 retransmits "the segment that appears to have been lost": bytes that were
/// sent. With a 1000-byte peer window and 5000 bytes queued, the engine sent 1000 and, on
/// three duplicate ACKs, "retransmitted" 1460 bytes from the same offset: 460 bytes never
/// sent, past SND.MAX, whose acknowledgment the engine then rejected as an ACK of unsent
/// data.
#[test]
fn rfc5681_3_2_fast_retransmit_resends_only_bytes_already_sent() {
    let cfg = TcpConfig {
        mss: 1460,
        nagle: false,
        ..TcpConfig::newreno()
    };
    let mut p = Peer::new();
    p.window = 1000;
    p.syn_to_listener(cfg, syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(5000));
    assert_eq!(payload_bytes(&out), 1000, "the window allows 1000: {out:?}");
    let (una, _, max) = p.engine_snd();
    let mut resent = Vec::new();
    for _ in 0..3 {
        let out = p.send_ack();
        eprintln!("dup ack -> {out:?} {:?}", p.engine_snd());
        resent.extend(out);
    }
    assert!(
        !resent.is_empty(),
        "no fast retransmit on three duplicate ACKs"
    );
    for s in &resent {
        assert!(
            seq_le(s.end(), max),
            "retransmitted {}..{} past SND.MAX {max}",
            s.seq.wrapping_sub(una),
            s.end().wrapping_sub(una)
        );
    }
}

/// RFC 9293 §3.10.7.4 finds a zero-length segment acceptable when RCV.NXT <= SEG.SEQ <
/// RCV.NXT + RCV.WND. A peer that filled our window and lost that data sends its ACKs from
/// exactly the right edge; 4.3BSD (tcp_input trims only what lies beyond the edge) and
/// Linux (tcp_sequence) accept such a segment, and so do we: it carries no byte beyond the
/// window, and rejecting it throws its acknowledgment away. A deliberate departure,
/// documented in conn.rs.
#[test]
fn rfc9293_3_10_7_4_departure_an_ack_only_segment_at_the_right_edge_is_accepted() {
    let cfg = TcpConfig {
        recv_buffer_bytes: 4000,
        mss: 1000,
        ..cfg_1000()
    };
    let mut p = Peer::passive(cfg, syn_opts(Some(1000), None, false, false)).0;
    let out = p.app_send(&data(2000));
    assert_eq!(payload_bytes(&out), 2000);
    p.absorb(&out);
    // The peer sent a full window of 4000 bytes that was lost; its next segment, an ACK of
    // our 2000 bytes, starts at RCV.NXT + RCV.WND.
    p.snd_nxt = p.snd_nxt.wrapping_add(4000);
    let out = p.send_ack();
    let (una, _, max) = p.engine_snd();
    assert_eq!(una, max, "the ACK at the right edge was dropped: {out:?}");
}

/// The same rule in SYN-RECEIVED: a client whose handshake-completing ACK was lost and whose
/// first window of data was lost too sends its next ACK from the right edge. The listener
/// stayed in SYN-RECEIVED until the half-open connection expired, then reset a client that
/// believed itself established.
#[test]
fn rfc9293_3_10_7_4_departure_a_handshake_ack_at_the_right_edge_establishes() {
    let cfg = TcpConfig {
        recv_buffer_bytes: 1000,
        ..cfg_1000()
    };
    let mut p = Peer::new();
    p.syn_to_listener(cfg, syn_opts(Some(1000), None, false, false));
    p.snd_nxt = p.snd_nxt.wrapping_add(1000);
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    assert!(p.id.is_some(), "the listener did not accept the connection");
    assert_eq!(p.state(), State::Established);
}

/// Both ends send 3 x 1000 bytes; each gets all of the other's data, and then for four
/// seconds nothing else gets through: each has the other's data but no ACK for its own.
/// Both time out and resend one segment from SND.NXT pulled back to SND.UNA. Before the pure-ACK fix each answered the
/// other's retransmission with an ACK from its own pulled-back SND.NXT, which the other found
/// below its window, dropped, and answered in turn: an ACK ping-pong of 307,611 packets each
/// way until both gave up after 483 s (reproduced here exactly, 483.005 s).
#[test]
fn bsd_tcp_output_two_way_transfer_survives_a_four_second_blackout() {
    use ackclock_testkit::pair::{two_way_transfer, Dir, Harness, PipeConfig};
    use ackclock_wire::{Duration, Instant};
    // 1 ms each way: the handshake by 2 ms, A's data at 2 ms, B's at 3 ms.
    let mut h = Harness::new(
        1,
        PipeConfig {
            delay: Duration::from_millis(1),
            ..PipeConfig::default()
        },
    );
    for dir in [Dir::AtoB, Dir::BtoA] {
        h.set_filter(
            dir,
            Box::new(|p| {
                // From 2.5 ms to 4 s every ACK is lost, and every data segment but the
                // first transmissions (sent by 3 ms).
                let blackout = p.at >= Instant::from_nanos(2_500_000)
                    && p.at < Instant::from_nanos(4_000_000_000);
                blackout && (p.payload_len == 0 || p.at >= Instant::from_nanos(10_000_000))
            }),
        );
    }
    let r = two_way_transfer(
        &mut h,
        cfg_1000(),
        cfg_1000(),
        &data(3000),
        &data(3000),
        Duration::from_secs(600),
    );
    assert!(
        r.completed,
        "not done by {:?}: A got {}, B got {}; A {:?}",
        h.now,
        r.a_got.len(),
        r.b_got.len(),
        r.a
    );
    assert!(
        h.now < Instant::ZERO + Duration::from_secs(30),
        "took until {:?}",
        h.now
    );
    let pkts = h.pipe_stats(Dir::AtoB).sent + h.pipe_stats(Dir::BtoA).sent;
    assert!(pkts < 100, "{pkts} packets for 6000 bytes");
}

/// Two ends that disagree about the sequence space answer each other's ACKs: each invalid
/// segment without data drew one ACK, for ever (29,900 packets a minute each way at 1 ms).
/// At most one such ACK per `invalid_ack_interval` (500 ms, as Linux's
/// tcp_invalid_ratelimit); a segment with data is always answered, since its sender may be
/// retransmitting because our ACK was lost.
#[test]
fn rfc5961_5_acks_for_invalid_segments_without_data_are_rate_limited() {
    let mut p = Peer::established(cfg_1000());
    let out = p.app_send(&data(500));
    p.absorb(&out);
    let right = p.snd_nxt.wrapping_add(1 << 20);
    // Out-of-window pure ACKs: one answer, then silence for the interval.
    let mut answers = 0;
    for _ in 0..20 {
        let o = p.out(ACK).seq(right);
        answers += p.inject(&o).len();
        p.now += ms(10);
    }
    assert_eq!(
        answers, 1,
        "pure ACKs out of window drew {answers} ACKs in 200 ms"
    );
    assert_eq!(p.conn().stats().invalid_acks_suppressed, 19);
    // ACKs of data never sent: the same limit.
    let mut answers = 0;
    for _ in 0..20 {
        let o = p.out(ACK).ack(p.rcv_nxt.wrapping_add(100_000));
        answers += p.inject(&o).len();
        p.now += ms(10);
    }
    assert!(
        answers <= 1,
        "ACKs of unsent data drew {answers} ACKs in 200 ms"
    );
    // Old duplicate data is always answered.
    let old = p.snd_nxt.wrapping_sub(100);
    for _ in 0..5 {
        let o = p.out(ACK).seq(old).payload(b"x");
        assert_eq!(
            p.inject(&o).len(),
            1,
            "a duplicate data segment went unanswered"
        );
    }
    // After the interval, one more invalid ACK is answered.
    p.now += ms(600);
    let o = p.out(ACK).seq(right);
    assert_eq!(p.inject(&o).len(), 1);
}

/// RFC 1122 4.2.2.17 lets a peer keep its window closed for ever while it answers our
/// probes; a peer that answers nothing is gone. It was probed 364 times over six simulated
/// hours and never given up on. Unanswered probes now count against the retry limit.
#[test]
fn rfc1122_4_2_2_17_unanswered_zero_window_probes_end_the_connection() {
    let cfg = TcpConfig {
        max_retransmits: 5,
        ..cfg_unlimited()
    };
    let mut p = Peer::new();
    p.window = 2920;
    p.syn_to_listener(cfg, syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    p.app_send(&data(4000));
    p.window = 0;
    p.send_ack();
    // The peer falls silent: probes 1..=6 go out unanswered, the 7th fire gives up.
    let out = p.advance(secs(3600));
    let probes = out.iter().filter(|(_, s)| s.payload.len() == 1).count();
    assert_eq!(probes, 6, "{out:?}");
    assert!(out.last().is_some_and(|(_, s)| s.has(RST)), "{out:?}");
    assert!(p.try_conn().is_none_or(|c| c.state() == State::Closed));
}

/// RFC 5482's user timeout ends a connection whose data stays unacknowledged, even while the
/// peer answers every probe with a zero window (which RFC 1122 alone would allow for ever).
#[test]
fn rfc5482_user_timeout_ends_a_connection_stuck_behind_a_zero_window() {
    use ackclock_wire::Duration;
    let cfg = TcpConfig {
        user_timeout: Some(Duration::from_secs(120)),
        ..cfg_unlimited()
    };
    let mut p = Peer::new();
    p.window = 2920;
    p.syn_to_listener(cfg, syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(4000));
    p.absorb(&out);
    p.window = 0;
    p.send_ack();
    let start = p.now;
    let mut closed_at = None;
    for _ in 0..100 {
        let Some(t) = p.ep.poll_timeout() else { break };
        p.advance_to(t);
        if p.try_conn().is_none_or(|c| c.state() == State::Closed) {
            closed_at = Some(p.now);
            break;
        }
        // The peer answers each probe, still with no room.
        p.send_ack();
    }
    let after = closed_at.expect("the user timeout never ended the connection") - start;
    assert!(
        after >= secs(120) && after <= secs(180),
        "closed after {after:?}"
    );
}

/// A floor under the peer's MSS option (`MIN_MSS`, 64 bytes; Linux's `tcp_min_snd_mss` and
/// FreeBSD's `tcp_minmss` are the same guard): a SYN advertising an MSS of 1 had the engine
/// send its whole window in 1-byte segments, a packet per byte (the `segments` fuzz target
/// found it: more than 32 packets for one event, from a 4096-byte buffer).
#[test]
fn min_snd_mss_a_peer_mss_below_64_bytes_is_raised_to_64() {
    assert_eq!(ackclock_tcp::MIN_MSS, 64);
    let cfg = TcpConfig {
        nagle: false,
        ..TcpConfig::vanilla_4_3bsd()
    };
    let mut p = Peer::passive(cfg, syn_opts(Some(1), None, false, false)).0;
    let out = p.app_send(&data(640));
    assert_eq!(payload_bytes(&out), 640, "{out:?}");
    assert!(out.iter().all(|s| s.payload.len() == 64), "{out:?}");
}

/// The floor is on what the peer asks for, not on our own configuration: with our MSS set
/// to 48 bytes, a peer's MSS of 1 gives 48-byte segments.
#[test]
fn min_snd_mss_our_own_smaller_mss_still_wins() {
    let cfg = TcpConfig {
        nagle: false,
        mss: 48,
        ..TcpConfig::vanilla_4_3bsd()
    };
    let mut p = Peer::passive(cfg, syn_opts(Some(1), None, false, false)).0;
    let out = p.app_send(&data(480));
    assert_eq!(payload_bytes(&out), 480, "{out:?}");
    assert!(out.iter().all(|s| s.payload.len() == 48), "{out:?}");
}
