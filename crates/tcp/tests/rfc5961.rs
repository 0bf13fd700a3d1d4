//! RFC 5961: blind reset (§3), blind SYN (§4) and blind data injection (§5) defences, and
//! the challenge-ACK rate limit (§7).

use ackclock_tcp::{ConnectionError, RecvError, SendError, State, TcpConfig};
use ackclock_testkit::peer::*;

/// Established, with some data each way so SND.UNA, SND.NXT and RCV.NXT are not the
/// handshake's values.
fn busy() -> Peer {
    let mut p = Peer::established(cfg_unlimited());
    let out = p.app_send(&data(300));
    p.absorb(&out);
    p.send_data(&data(200));
    p.advance(ms(500));
    assert_eq!(p.app_read().len(), 200);
    p
}

/// The challenge ACK of RFC 5961: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>.
fn assert_challenge_ack(p: &Peer, out: &[Seg]) {
    let (_, nxt, _) = p.engine_snd();
    assert_eq!(out.len(), 1, "one challenge ACK expected: {out:?}");
    assert!(out[0].is_pure_ack(), "{:?}", out[0]);
    assert_eq!(out[0].seq, nxt, "challenge ACK carries SND.NXT");
    assert_eq!(
        out[0].ack,
        p.engine_rcv_nxt(),
        "challenge ACK carries RCV.NXT"
    );
}

#[test]
fn rfc5961_3_2_rst_with_seq_equal_rcv_nxt_resets() {
    let mut p = busy();
    let o = p.out(RST).seq(p.snd_nxt);
    let out = p.inject(&o);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::Reset));
    let mut b = [0u8; 4];
    assert_eq!(
        p.conn_mut().recv(&mut b),
        Err(RecvError::Lost(ConnectionError::Reset))
    );
    assert_eq!(
        p.conn_mut().send(b"x"),
        Err(SendError::Lost(ConnectionError::Reset))
    );
}

#[test]
fn rfc5961_3_2_rst_ack_with_seq_equal_rcv_nxt_resets() {
    let mut p = busy();
    let o = p.out(RST | ACK).seq(p.snd_nxt);
    p.inject(&o);
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::Reset));
}

#[test]
fn rfc5961_3_2_rst_in_window_with_other_seq_draws_challenge_ack() {
    for off in [1u32, 100, 60_000] {
        let mut p = busy();
        let o = p.out(RST).seq(p.snd_nxt.wrapping_add(off));
        let out = p.inject(&o);
        assert_challenge_ack(&p, &out);
        assert_eq!(p.state(), State::Established, "offset {off}");
        assert_eq!(p.conn().error(), None);
        assert_eq!(p.conn().stats().challenge_acks, 1);
    }
}

#[test]
fn rfc5961_3_2_rst_out_of_window_is_silently_dropped() {
    let mut p = busy();
    // Beyond the right edge, and below RCV.NXT.
    for seq in [
        p.snd_nxt.wrapping_add(131_072 + 10),
        p.snd_nxt.wrapping_sub(1),
        p.snd_nxt.wrapping_sub(100_000),
    ] {
        let o = p.out(RST).seq(seq);
        let out = p.inject(&o);
        assert!(out.is_empty(), "seq {seq}: {out:?}");
        assert_eq!(p.state(), State::Established);
    }
    assert_eq!(p.conn().stats().challenge_acks, 0);
}

#[test]
fn rfc5961_3_2_rst_beyond_advertised_window_is_silently_dropped() {
    // Without window scaling the engine advertises 65535 although its buffer holds 128 KiB;
    // RCV.NXT + RCV.WND is the right edge it advertised.
    let mut p = busy();
    p.send_data(b"x");
    p.advance(secs(1));
    let last = p.log.last().unwrap().1.clone();
    assert_eq!(last.window, 65535);
    let right = last.ack.wrapping_add(u32::from(last.window));
    let o = p.out(RST).seq(right.wrapping_add(10));
    let out = p.inject(&o);
    assert!(
        out.is_empty(),
        "RST beyond the advertised window answered: {out:?}"
    );
    assert_eq!(p.conn().stats().challenge_acks, 0);
}

#[test]
fn rfc5961_3_2_rst_exactly_at_the_right_edge_is_outside_the_window() {
    // RCV.NXT <= SEG.SEQ < RCV.NXT + RCV.WND (RFC 5961 §3.2): the right edge itself is
    // outside, although a pure ACK there is accepted (the engine's departure from RFC 9293
    // for ACKs only). The FreeBSD suite's rcv-rst-ack-syn-rcvd-*-outside-right scripts.
    let mut p = busy();
    p.send_data(b"x");
    p.advance(secs(1));
    let last = p.log.last().unwrap().1.clone();
    let right = last.ack.wrapping_add(u32::from(last.window));
    let o = p.out(RST).seq(right);
    let out = p.inject(&o);
    assert!(out.is_empty(), "RST at the right edge answered: {out:?}");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.conn().stats().challenge_acks, 0);
    // One byte inside is in the window: a challenge ACK.
    let o = p.out(RST).seq(right.wrapping_sub(1));
    let out = p.inject(&o);
    assert_challenge_ack(&p, &out);
}

#[test]
fn rfc5961_3_2_rst_in_window_challenge_ack_in_close_wait_and_fin_wait_2() {
    // The rule holds in every synchronized state.
    let mut p = busy();
    p.send_fin();
    assert_eq!(p.state(), State::CloseWait);
    let o = p.out(RST).seq(p.snd_nxt + 10);
    let out = p.inject(&o);
    assert_challenge_ack(&p, &out);
    assert_eq!(p.state(), State::CloseWait);

    let mut p = busy();
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    p.send_ack();
    assert_eq!(p.state(), State::FinWait2);
    let o = p.out(RST).seq(p.snd_nxt + 10);
    let out = p.inject(&o);
    assert_challenge_ack(&p, &out);
    assert_eq!(p.state(), State::FinWait2);
}

#[test]
fn rfc5961_4_2_syn_in_established_draws_challenge_ack_not_reset() {
    let mut p = busy();
    // In window, at RCV.NXT, and out of window: "irrespective of the sequence number".
    for seq in [
        p.snd_nxt,
        p.snd_nxt.wrapping_add(1000),
        p.snd_nxt.wrapping_sub(5000),
        p.snd_nxt.wrapping_add(1 << 30),
    ] {
        let o = p
            .out(SYN)
            .seq(seq)
            .opts(syn_opts(Some(1460), None, false, false));
        let out = p.inject(&o);
        assert_challenge_ack(&p, &out);
        assert!(out.iter().all(|s| !s.has(RST)));
        assert_eq!(p.state(), State::Established, "SYN at {seq}");
    }
    // A SYN,ACK likewise.
    let o = p.out(SYN | ACK).seq(p.snd_nxt + 7);
    let out = p.inject(&o);
    assert_challenge_ack(&p, &out);
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.conn().error(), None);
}

#[test]
fn rfc5961_5_2_ack_beyond_snd_max_is_acked_and_dropped() {
    let mut p = busy();
    let (_, _, max) = p.engine_snd();
    let before = p.engine_rcv_nxt();
    let o = p
        .out(ACK | PSH)
        .ack(max.wrapping_add(1000))
        .payload(b"injected");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, before, "the data was not accepted");
    assert_eq!(p.engine_rcv_nxt(), before);
    assert!(p.app_read().is_empty(), "the injected data is not readable");
    assert_eq!(p.state(), State::Established);
}

#[test]
fn rfc5961_5_2_ack_older_than_snd_una_minus_max_snd_wnd_is_dropped() {
    // The peer offers a small window so MAX.SND.WND is known: 4000.
    let mut p = Peer::new();
    p.window = 4000;
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(3000));
    p.absorb(&out);
    p.send_ack();
    let (una, _, _) = p.engine_snd();
    let before = p.engine_rcv_nxt();
    // SEG.ACK < SND.UNA - MAX.SND.WND: drop the segment (and ACK).
    let o = p
        .out(ACK | PSH)
        .ack(una.wrapping_sub(4000 + 10))
        .payload(b"blind");
    let out = p.inject(&o);
    assert_eq!(
        p.engine_rcv_nxt(),
        before,
        "data with a too-old ACK was accepted"
    );
    assert!(p.app_read().is_empty());
    assert!(
        out.iter().all(|s| s.is_pure_ack() && s.ack == before),
        "{out:?}"
    );
    assert!(!out.is_empty(), "an ACK is sent back");
    assert_eq!(p.state(), State::Established);
}

#[test]
fn rfc5961_5_2_old_ack_within_max_snd_wnd_is_accepted() {
    let mut p = Peer::new();
    p.window = 4000;
    p.syn_to_listener(cfg_unlimited(), syn_opts(Some(1460), None, false, false));
    p.send_ack();
    p.id = p.ep.accept(SERVER_PORT);
    let out = p.app_send(&data(3000));
    p.absorb(&out);
    p.send_ack();
    let (una, _, _) = p.engine_snd();
    let before = p.engine_rcv_nxt();
    // SND.UNA - MAX.SND.WND <= SEG.ACK <= SND.UNA: an old duplicate ACK, data accepted.
    let o = p
        .out(ACK | PSH)
        .ack(una.wrapping_sub(2000))
        .payload(b"fine");
    p.snd_nxt += 4;
    p.inject(&o);
    assert_eq!(p.engine_rcv_nxt(), before + 4);
    assert_eq!(p.app_read(), b"fine");
}

#[test]
fn rfc5961_7_challenge_acks_are_rate_limited() {
    let cfg = TcpConfig {
        challenge_ack_limit_per_sec: 3,
        ..cfg_unlimited()
    };
    let mut p = Peer::established(cfg);
    p.advance(secs(2));
    let mut acks = 0;
    for i in 0..10 {
        let o = p.out(RST).seq(p.snd_nxt + 100 + i);
        acks += p.inject(&o).len();
        p.now += ms(10);
    }
    assert_eq!(acks, 3, "at most 3 challenge ACKs per second");
    // SYNs draw challenge ACKs from the same budget.
    let o = p.out(SYN).seq(p.snd_nxt + 5);
    assert!(p.inject(&o).is_empty());
    assert_eq!(p.conn().stats().challenge_acks, 3);
    // A second later the budget is back.
    p.advance(secs(1));
    let mut acks = 0;
    for i in 0..10 {
        let o = p.out(RST).seq(p.snd_nxt + 100 + i);
        acks += p.inject(&o).len();
    }
    assert_eq!(acks, 3);
    assert_eq!(p.state(), State::Established);
}

/// A blind segment inside the receive window but far ahead of anything the peer has sent,
/// advertising a 1-byte window, froze the engine's send window: RFC 9293 §3.10.7.4 takes a
/// window only from a segment with SEG.SEQ at or past SND.WL1, and the peer's real segments
/// never reach the injected SEQ (the fuzz case `burst-ad0aa70d` in `fuzz-regressions`: a
/// closing pair then traded 1-byte segments, one per round trip, for two minutes). An ACK
/// that acknowledges new data now updates the window whatever its SEQ, as Linux's
/// `tcp_may_update_window` does: it is the freshest word from the peer on its window.
#[test]
fn rfc5961_blind_segment_far_ahead_cannot_freeze_the_send_window() {
    let mut p = busy();
    let spoof = p.out(ACK).seq(p.snd_nxt.wrapping_add(3000)).window(1);
    p.inject(&spoof);
    assert_eq!(
        p.conn().stats().snd_wnd_bytes,
        1,
        "the spoof is in window: taken"
    );
    let mut out = p.app_send(&data(4000));
    if out.is_empty() {
        // Silly-window avoidance holds the byte back until the persist timer sends it.
        out = p.advance(secs(2)).into_iter().map(|(_, s)| s).collect();
    }
    assert!(
        !out.is_empty() && out.iter().all(|s| s.payload.len() == 1),
        "one byte at a time: {out:?}"
    );
    // The real peer acknowledges the byte with its real window.
    p.absorb(&out);
    let out = p.send_ack();
    assert!(
        p.conn().stats().snd_wnd_bytes > 1000,
        "the ACK of new data reopened the window: {}",
        p.conn().stats().snd_wnd_bytes
    );
    assert!(
        out.iter().map(|s| s.payload.len()).sum::<usize>() > 1,
        "full segments again: {out:?}"
    );
}
