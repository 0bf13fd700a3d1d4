//! RFC 3168: ECN negotiation (§6.1.1), the sender's ECT marking and reduction (§6.1.2,
//! §6.1.4-6) and the receiver's echo (§6.1.3), against a scripted peer.

use ackclock_tcp::{State, TcpConfig, WindowReduction};
use ackclock_testkit::peer::*;
use ackclock_wire::ipv4::{ECN_CE, ECN_ECT0, ECN_NOT_ECT};
use ackclock_wire::TcpFlags;

fn ecn_cfg() -> TcpConfig {
    TcpConfig {
        ecn: true,
        ..cfg_unlimited()
    }
}

/// A congestion-controlled ECN configuration: NewReno with its slow start, so the
/// window has something to reduce.
fn ecn_cc_cfg() -> TcpConfig {
    TcpConfig {
        ecn: true,
        nagle: false,
        ..TcpConfig::newreno()
    }
}

/// Passive open where the peer's SYN asks for ECN; returns the peer and the SYN,ACK.
fn ecn_passive(cfg: TcpConfig) -> (Peer, Seg) {
    let mut p = Peer::new();
    let synack = p.syn_to_listener_with(cfg, syn_opts(Some(1460), None, false, false), ECE | CWR);
    p.send_ack();
    p.ep.accept(SERVER_PORT)
        .expect("accept after the handshake");
    assert_eq!(p.state(), State::Established);
    (p, synack)
}

#[test]
fn rfc3168_6_1_1_a_listener_agrees_with_ece_alone_when_the_syn_asks() {
    let (p, synack) = ecn_passive(ecn_cfg());
    assert_eq!(synack.flags, SYN | ACK | ECE, "{synack:?}");
    // §6.1.1: the SYN,ACK itself is not ECN-capable.
    assert_eq!(synack.ecn, ECN_NOT_ECT);
    assert!(p.conn().stats().ecn_enabled);

    // Configured off, the same SYN is answered without ECE and ECN stays off.
    let (p, synack) = ecn_passive(cfg_unlimited());
    assert_eq!(synack.flags, SYN | ACK, "{synack:?}");
    assert!(!p.conn().stats().ecn_enabled);

    // A SYN that does not ask is not answered with ECE.
    let mut p = Peer::new();
    let synack = p.syn_to_listener(ecn_cfg(), syn_opts(Some(1460), None, false, false));
    assert_eq!(synack.flags, SYN | ACK);
    assert!(!p.conn().stats().ecn_enabled);
}

#[test]
fn rfc3168_6_1_1_an_active_open_asks_with_ece_and_cwr_and_needs_ece_alone_back() {
    let (mut p, syn) = Peer::connect(ecn_cfg());
    assert_eq!(syn.flags, SYN | ECE | CWR, "an ECN-setup SYN: {syn:?}");
    assert_eq!(syn.ecn, ECN_NOT_ECT);
    let o = p
        .out(SYN | ACK | ECE)
        .opts(syn_opts(Some(1460), None, false, false));
    p.inject(&o);
    p.snd_nxt = PEER_ISS.wrapping_add(1);
    assert_eq!(p.state(), State::Established);
    assert!(p.conn().stats().ecn_enabled);

    // ECE and CWR together on a SYN,ACK is no agreement (a peer reflecting the bits).
    let (mut p, _) = Peer::connect(ecn_cfg());
    let o = p
        .out(SYN | ACK | ECE | CWR)
        .opts(syn_opts(Some(1460), None, false, false));
    p.inject(&o);
    assert_eq!(p.state(), State::Established);
    assert!(!p.conn().stats().ecn_enabled);

    // Without ECN configured the SYN asks for nothing.
    let (_, syn) = Peer::connect(cfg_unlimited());
    assert_eq!(syn.flags, SYN);
}

#[test]
fn rfc3168_6_1_5_new_data_goes_out_ect0_and_retransmissions_and_pure_acks_do_not() {
    let (mut p, _) = ecn_passive(ecn_cfg());
    let sent = p.app_send(&data(3000));
    assert!(sent.len() >= 2, "{sent:?}");
    for s in &sent {
        assert_eq!(s.ecn, ECN_ECT0, "new data is ECT(0): {s:?}");
    }
    // §6.1.4: a pure ACK (of the peer's data) is Not-ECT.
    let o = p.out(ACK | PSH).payload(b"hello");
    let acks = p.inject(&o);
    p.snd_nxt = p.snd_nxt.wrapping_add(5);
    let ack = acks
        .iter()
        .chain(p.advance(ms(500)).iter().map(|(_, s)| s))
        .find(|s| s.is_pure_ack())
        .cloned()
        .expect("an ACK of the peer's data");
    assert_eq!(ack.ecn, ECN_NOT_ECT, "{ack:?}");
    // §6.1.5: the retransmission by timeout is Not-ECT.
    let rexmit = p
        .advance(secs(3))
        .into_iter()
        .map(|(_, s)| s)
        .find(|s| s.seq == sent[0].seq && !s.payload.is_empty())
        .expect("a retransmission by timeout");
    assert_eq!(rexmit.ecn, ECN_NOT_ECT, "{rexmit:?}");
    let st = p.conn().stats();
    assert_eq!(st.ect_segs_out, sent.len() as u64);
}

#[test]
fn rfc3168_6_1_3_a_ce_mark_is_echoed_with_ece_until_the_senders_cwr() {
    for header_prediction in [true, false] {
        let cfg = TcpConfig {
            header_prediction,
            ack: ackclock_tcp::AckPolicy {
                quickack: true,
                ..Default::default()
            },
            ..ecn_cfg()
        };
        let (mut p, _) = ecn_passive(cfg);
        let send = |p: &mut Peer, extra: TcpFlags, ecn: u8| -> Seg {
            let o = p.out(ACK | extra).payload(&data(100)).ecn(ecn);
            p.snd_nxt = p.snd_nxt.wrapping_add(100);
            let out = p.inject(&o);
            assert_eq!(out.len(), 1, "{out:?}");
            out[0].clone()
        };
        // In-order data as header prediction would take it: ECT(0), then CE.
        let a = send(&mut p, TcpFlags::NONE, ECN_ECT0);
        assert!(!a.has(ECE), "nothing to echo yet: {a:?}");
        let a = send(&mut p, TcpFlags::NONE, ECN_CE);
        assert!(
            a.has(ECE),
            "CE echoed (prediction {header_prediction}): {a:?}"
        );
        // Unmarked data after it: still echoed, the sender has not answered.
        let a = send(&mut p, TcpFlags::NONE, ECN_ECT0);
        assert!(a.has(ECE), "{a:?}");
        // The sender's CWR ends the echo.
        let a = send(&mut p, CWR, ECN_ECT0);
        assert!(!a.has(ECE), "{a:?}");
        // A CWR segment that is itself marked starts a new echo.
        let a = send(&mut p, CWR, ECN_CE);
        assert!(a.has(ECE), "{a:?}");
        assert_eq!(p.conn().stats().ce_segs_in, 2);
    }
}

/// Opens a NewReno ECN connection and grows its window over a few round trips; returns the
/// peer with everything sent acknowledged except the last flight, which is returned.
fn grown(rounds: usize) -> (Peer, Vec<Seg>) {
    grown_with(ecn_cc_cfg(), rounds)
}

/// [`grown`] with a configuration of the caller's.
fn grown_with(cfg: TcpConfig, rounds: usize) -> (Peer, Vec<Seg>) {
    let (mut p, _) = ecn_passive(cfg);
    let mut flight = p.app_send(&data(100_000));
    for _ in 0..rounds {
        // Each segment acknowledged on its own: slow start adds one segment per ACK.
        let mut next = Vec::new();
        for s in &flight {
            p.rcv_nxt = s.end();
            next.extend(p.send_ack());
        }
        flight = next;
        p.now += ms(50);
    }
    (p, flight)
}

#[test]
fn rfc3168_6_1_2_ece_halves_the_window_once_per_window_and_the_next_new_data_carries_cwr() {
    let (mut p, flight) = grown(4);
    let before = p.conn().stats();
    assert!(
        before.cwnd_bytes >= 8 * 1460,
        "slow start grew it: {before:?}"
    );
    let flight_bytes = before.flight_bytes;
    // The peer acknowledges the first segment of the flight with ECE.
    p.rcv_nxt = flight[0].end();
    let out = p.inject(&p.out(ACK | ECE));
    let after = p.conn().stats();
    assert_eq!(after.ecn_reductions, 1);
    assert_eq!(after.ece_in, 1);
    // RFC 5681 eq. 4 (NewReno's decrease): half the flight left after this ACK, and cwnd
    // to it; no retransmission.
    let left = flight_bytes - flight[0].payload.len() as u32;
    assert_eq!(after.ssthresh_bytes, (left / 2).max(2 * 1460));
    assert_eq!(after.cwnd_bytes, after.ssthresh_bytes);
    assert_eq!(after.retransmitted_segs, 0);
    assert_eq!(after.fast_retransmits, 0);
    // The window is full after the cut: nothing new yet; the first new data carries CWR.
    let mut later: Vec<Seg> = out;
    for s in flight.iter().skip(1) {
        p.rcv_nxt = s.end();
        let o = p.out(ACK | ECE);
        later.extend(p.inject(&o));
    }
    let news: Vec<&Seg> = later.iter().filter(|s| !s.payload.is_empty()).collect();
    assert!(
        !news.is_empty(),
        "new data after the flight was acknowledged"
    );
    assert!(
        news[0].has(CWR),
        "the first new data segment carries CWR: {:?}",
        news[0]
    );
    assert!(news[1..].iter().all(|s| !s.has(CWR)), "CWR once: {news:?}");
    // The rest of that window's ECEs were the same congestion: still one reduction.
    assert_eq!(p.conn().stats().ecn_reductions, 1);
    assert_eq!(p.conn().stats().cwr_out, 1);
    // Once the data sent after the cut is acknowledged, ECE reduces again.
    let end = later.iter().map(|s| s.end()).max().unwrap();
    p.rcv_nxt = end;
    let o = p.out(ACK | ECE);
    p.inject(&o);
    assert_eq!(p.conn().stats().ecn_reductions, 2);
}

#[test]
fn rfc3168_ece_without_negotiated_ecn_changes_nothing() {
    let (mut p, _) = ecn_passive(TcpConfig {
        ecn: false,
        ..ecn_cc_cfg()
    });
    let flight = p.app_send(&data(20_000));
    let before = p.conn().stats().cwnd_bytes;
    p.rcv_nxt = flight[0].end();
    let o = p.out(ACK | ECE);
    p.inject(&o);
    let st = p.conn().stats();
    assert_eq!((st.ecn_reductions, st.ece_in), (0, 0));
    assert!(st.cwnd_bytes >= before, "{} < {before}", st.cwnd_bytes);
    assert!(flight.iter().all(|s| s.ecn == ECN_NOT_ECT));
}

/// RFC 8257 §3.2: with the per-packet echo an ACK's ECE says whether the data it
/// acknowledges was marked; when a segment's mark differs from the last, the data before
/// it is acknowledged at once with the old state, and CWR means nothing to the receiver.
#[test]
fn rfc8257_3_2_per_packet_echo_acknowledges_each_run_of_marks_separately() {
    for header_prediction in [true, false] {
        let cfg = TcpConfig {
            ecn_echo: ackclock_tcp::config::EcnEcho::PerPacket,
            header_prediction,
            ..ecn_cfg()
        };
        let (mut p, _) = ecn_passive(cfg);
        let send = |p: &mut Peer, ecn: u8, extra: TcpFlags| -> Vec<Seg> {
            let o = p.out(ACK | extra).payload(&data(L as usize)).ecn(ecn);
            p.snd_nxt = p.snd_nxt.wrapping_add(L);
            p.inject(&o)
        };
        // Full-sized segments: the ACK policy counts them (every second one).
        const L: u32 = 1460;
        let base = p.snd_nxt;
        // 1: unmarked, the first of two: held (ACK every second segment).
        assert!(send(&mut p, ECN_ECT0, TcpFlags::NONE).is_empty());
        // 2: marked: segment 1 is acknowledged at once without ECE; 2 waits for its pair.
        let out = send(&mut p, ECN_CE, TcpFlags::NONE);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].ack, out[0].has(ECE)), (base + L, false), "{out:?}");
        // 3: marked too: 2 and 3 acknowledged together, with ECE.
        let out = send(&mut p, ECN_CE, TcpFlags::NONE);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].ack, out[0].has(ECE)),
            (base + 3 * L, true),
            "{out:?}"
        );
        // 4 (with CWR, which this echo ignores): unmarked, nothing held before it: no
        // early ACK; 5: unmarked, 4 and 5 acknowledged without ECE.
        assert!(
            send(&mut p, ECN_ECT0, CWR).is_empty(),
            "prediction {header_prediction}"
        );
        let out = send(&mut p, ECN_ECT0, TcpFlags::NONE);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].ack, out[0].has(ECE)),
            (base + 5 * L, false),
            "{out:?}"
        );
        // 6: marked, held; the delayed-ACK timer acknowledges it alone, with ECE.
        assert!(send(&mut p, ECN_CE, TcpFlags::NONE).is_empty());
        let later: Vec<Seg> = p.advance(ms(500)).into_iter().map(|(_, s)| s).collect();
        assert_eq!(later.len(), 1, "{later:?}");
        assert_eq!((later[0].ack, later[0].has(ECE)), (base + 6 * L, true));
        assert_eq!(p.conn().stats().ce_segs_in, 3);
    }
}

/// RFC 9937 §1 (PRR for any reduction, ECN's included): after an ECE the flight is brought
/// down to the new ssthresh as the flight is acknowledged, in proportion, rather than by
/// halving cwnd at once, which sends nothing until the flight has fallen below it. Each ACK
/// of the old flight releases at most two segments, about one per two ACKs; once the old
/// flight is acknowledged, the reduction ends with cwnd = ssthresh.
#[test]
fn rfc9937_an_ecn_reduction_with_prr_sends_in_proportion_not_after_a_pause() {
    let mut sent_in_first_half = Vec::new();
    for prr in [false, true] {
        let cfg = TcpConfig {
            window_reduction: if prr {
                WindowReduction::Prr
            } else {
                WindowReduction::Halve
            },
            ..ecn_cc_cfg()
        };
        let (mut p, flight) = grown_with(cfg, 4);
        assert!(flight.len() >= 16, "a window to reduce: {}", flight.len());
        p.rcv_nxt = flight[0].end();
        let o = p.out(ACK | ECE);
        let mut per_ack = vec![p
            .inject(&o)
            .iter()
            .filter(|s| !s.payload.is_empty())
            .count()];
        let ssthresh = p.conn().stats().ssthresh_bytes;
        for s in flight.iter().skip(1) {
            p.rcv_nxt = s.end();
            let o = p.out(ACK);
            per_ack.push(
                p.inject(&o)
                    .iter()
                    .filter(|s| !s.payload.is_empty())
                    .count(),
            );
        }
        let half = flight.len() / 2 - 1;
        sent_in_first_half.push(per_ack[..half].iter().sum::<usize>());
        if prr {
            assert!(per_ack.iter().all(|&n| n <= 2), "PRR per ACK: {per_ack:?}");
            assert!(
                sent_in_first_half[1] >= half / 2 - 1,
                "PRR sends about one segment per two ACKs from the start: {per_ack:?}"
            );
            // The old flight acknowledged: the reduction is over, cwnd = ssthresh.
            let st = p.conn().stats();
            assert_eq!(st.cwnd_bytes, ssthresh, "{st:?}");
        }
    }
    assert_eq!(
        sent_in_first_half[0], 0,
        "halving pauses for half a round trip"
    );
}
