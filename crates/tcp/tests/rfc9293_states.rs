//! RFC 9293 conformance: the state machine (§3.3.2, §3.5, §3.6, §3.10), reset generation
//! (§3.5.2, §3.10.7), retransmission give-up (§3.8.3) and the MSS (§3.7.1).

use ackclock_tcp::{
    ConnectionError, Endpoint, EndpointConfig, RecvError, SendError, State, TcpConfig,
};
use ackclock_testkit::peer::*;
use ackclock_wire::{Instant, TcpFlags};
use core::net::SocketAddrV4;

// ---------------------------------------------------------------------------------------
// Opening (§3.5)

#[test]
fn rfc9293_3_5_active_open_closed_syn_sent_established() {
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    // CLOSED -> SYN-SENT: <SEQ=ISS><CTL=SYN>, with our MSS (§3.7.1 "MUST send" when it
    // differs from the default; we check it is there).
    assert_eq!(p.state(), State::SynSent);
    assert_eq!(syn.flags, SYN);
    assert_eq!(syn.opts.mss, Some(1460));
    assert!(syn.payload.is_empty());
    let iss = syn.seq;
    // SYN-SENT -> ESTABLISHED on <SEQ=Y><ACK=ISS+1><CTL=SYN,ACK>, answering
    // <SEQ=ISS+1><ACK=Y+1><CTL=ACK>.
    let out = p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.state(), State::Established);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_pure_ack(), "{:?}", out[0]);
    assert_eq!(out[0].seq, iss.wrapping_add(1));
    assert_eq!(out[0].ack, PEER_ISS.wrapping_add(1));
    assert_eq!(p.engine_snd(), (iss + 1, iss + 1, iss + 1));
    assert_eq!(p.engine_rcv_nxt(), PEER_ISS + 1);
}

#[test]
fn rfc9293_3_5_passive_open_listen_syn_received_established() {
    let mut p = Peer::new();
    let synack = p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    // LISTEN -> SYN-RECEIVED: <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>.
    assert_eq!(synack.flags, SYN | ACK);
    assert_eq!(synack.ack, PEER_ISS + 1);
    assert_eq!(synack.opts.mss, Some(1460));
    assert_eq!(p.state(), State::SynReceived);
    assert_eq!(
        p.ep.accept(SERVER_PORT),
        None,
        "not acceptable before the handshake ends"
    );
    // SYN-RECEIVED -> ESTABLISHED on the ACK of our SYN; nothing is sent in reply.
    let out = p.send_ack();
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.ep.accept(SERVER_PORT), p.id);
    assert_eq!(p.engine_snd().0, synack.seq.wrapping_add(1));
}

#[test]
fn rfc9293_3_5_simultaneous_open_syn_sent_syn_received_established() {
    let a_addr = SocketAddrV4::new(ENGINE_ADDR, 1111);
    let b_addr = SocketAddrV4::new(PEER_ADDR, 2222);
    let mut a = Endpoint::new(EndpointConfig::new(*a_addr.ip(), [1; 16]));
    let mut b = Endpoint::new(EndpointConfig::new(*b_addr.ip(), [2; 16]));
    let now = at_ms(10);
    let ca = a
        .connect_from_port(now, 1111, b_addr, TcpConfig::newreno())
        .unwrap();
    let cb = b
        .connect_from_port(now, 2222, a_addr, TcpConfig::newreno())
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let mut take = |ep: &mut Endpoint| -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        while let Some(t) = ep.poll_transmit(now, &mut buf) {
            v.push(buf[..t.len].to_vec());
        }
        v
    };
    let syn_a = take(&mut a);
    let syn_b = take(&mut b);
    assert_eq!(syn_a.len(), 1);
    assert_eq!(syn_b.len(), 1);
    assert_eq!(parse(&syn_a[0]).flags, SYN);
    assert_eq!(parse(&syn_b[0]).flags, SYN);
    let (iss_a, iss_b) = (parse(&syn_a[0]).seq, parse(&syn_b[0]).seq);
    // The SYNs cross: each side goes SYN-SENT -> SYN-RECEIVED and sends
    // <SEQ=ISS><ACK=peer ISS+1><CTL=SYN,ACK> (Figure 8, lines 3-5).
    b.handle_packet(now, &syn_a[0]);
    a.handle_packet(now, &syn_b[0]);
    assert_eq!(a.conn(ca).unwrap().state(), State::SynReceived);
    assert_eq!(b.conn(cb).unwrap().state(), State::SynReceived);
    let sa_a = take(&mut a);
    let sa_b = take(&mut b);
    assert_eq!(sa_a.len(), 1);
    assert_eq!(sa_b.len(), 1);
    let (x, y) = (parse(&sa_a[0]), parse(&sa_b[0]));
    assert_eq!((x.flags, x.seq, x.ack), (SYN | ACK, iss_a, iss_b + 1));
    assert_eq!((y.flags, y.seq, y.ack), (SYN | ACK, iss_b, iss_a + 1));
    // The SYN,ACKs cross; whatever they provoke is exchanged until both are quiet.
    let mut to_a = sa_b;
    let mut to_b = sa_a;
    for _ in 0..10 {
        if to_a.is_empty() && to_b.is_empty() {
            break;
        }
        for pkt in to_a.drain(..) {
            a.handle_packet(now, &pkt);
        }
        for pkt in to_b.drain(..) {
            b.handle_packet(now, &pkt);
        }
        to_b = take(&mut a);
        to_a = take(&mut b);
        for pkt in to_a.iter().chain(to_b.iter()) {
            assert!(!parse(pkt).has(RST), "reset during simultaneous open");
        }
    }
    assert_eq!(a.conn(ca).unwrap().state(), State::Established);
    assert_eq!(b.conn(cb).unwrap().state(), State::Established);
    // Both opens were active: each application hears Connected, as after a plain
    // three-way handshake.
    for (ep, id) in [(&mut a, ca), (&mut b, cb)] {
        let mut events = Vec::new();
        while let Some(e) = ep.poll_event() {
            events.push(e);
        }
        assert!(
            events.contains(&ackclock_tcp::Event::Connected(id)),
            "no Connected after a simultaneous open: {events:?}"
        );
    }
    let (una_a, _, _) = a.conn(ca).unwrap().send_sequence();
    assert_eq!(una_a.get(), iss_a + 1);
    assert_eq!(a.conn(ca).unwrap().recv_sequence().0.get(), iss_b + 1);
}

#[test]
fn rfc9293_3_10_7_4_third_ack_with_data_is_delivered() {
    // Data may ride on the ACK that completes the handshake.
    let mut p = Peer::new();
    p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    p.send_data(b"hello");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.engine_rcv_nxt(), PEER_ISS + 1 + 5);
    assert_eq!(p.app_read(), b"hello");
}

#[test]
fn rfc9293_3_10_7_2_data_on_a_syn_in_listen_is_held_until_established() {
    // "any other control or text should be queued for processing later": the SYN-ACK
    // acknowledges the SYN alone, nothing is readable in SYN-RECEIVED, and the text is
    // processed (readable, acknowledged) once the handshake completes.
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    let o = p
        .out(SYN)
        .opts(syn_opts(Some(1460), None, false, false))
        .payload(b"abc");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].flags, SYN | ACK);
    assert_eq!(
        out[0].ack,
        PEER_ISS + 1,
        "the SYN-ACK acknowledges only the SYN"
    );
    p.id = p.ep.connections().next().map(|(id, _)| id);
    p.rcv_nxt = out[0].seq.wrapping_add(1);
    assert_eq!(p.state(), State::SynReceived);
    assert_eq!(p.engine_rcv_nxt(), PEER_ISS + 1);
    assert_eq!(p.conn().recv_available(), 0);
    let mut b = [0u8; 16];
    assert_eq!(p.conn_mut().recv(&mut b), Err(RecvError::WouldBlock));
    // The ACK completing the handshake, after the three bytes.
    p.snd_nxt = PEER_ISS + 4;
    p.send_ack();
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.engine_rcv_nxt(), PEER_ISS + 4);
    assert_eq!(p.app_read(), b"abc");
    // Acknowledged under the ACK policy (a delayed ACK here).
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].1.ack, PEER_ISS + 4);

    // A peer that saw only its SYN acknowledged resends the data on the third ACK: it is
    // delivered once.
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    let o = p
        .out(SYN)
        .opts(syn_opts(Some(1460), None, false, false))
        .payload(b"abc");
    let out = p.inject(&o);
    p.id = p.ep.connections().next().map(|(id, _)| id);
    p.rcv_nxt = out[0].seq.wrapping_add(1);
    p.snd_nxt = PEER_ISS + 1;
    p.send_data(b"abcdef");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.engine_rcv_nxt(), PEER_ISS + 7);
    assert_eq!(p.app_read(), b"abcdef");
}

#[test]
fn rfc9293_3_10_7_3_data_on_a_syn_in_syn_sent_is_held_until_established() {
    // The FreeBSD suite's rcv-syn-with-data-syn-sent: our SYN, the peer's SYN with three
    // bytes crosses it. "If there are other controls or text in the segment, queue them for
    // processing after the ESTABLISHED state has been reached."
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    let o = p
        .out(SYN)
        .opts(syn_opts(Some(1460), None, false, false))
        .payload(b"xyz");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!((out[0].flags, out[0].seq), (SYN | ACK, syn.seq));
    assert_eq!(
        out[0].ack,
        PEER_ISS + 1,
        "the SYN-ACK acknowledges only the SYN"
    );
    assert_eq!(p.state(), State::SynReceived);
    let mut b = [0u8; 100];
    assert_eq!(p.conn_mut().recv(&mut b), Err(RecvError::WouldBlock));
    // `< . 4:4(0) ack 1`: ESTABLISHED, the three bytes readable.
    p.snd_nxt = PEER_ISS + 4;
    let out = p.send_ack();
    assert!(out.is_empty(), "no ACK at once: {out:?}");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.conn_mut().recv(&mut b), Ok(3));
    assert_eq!(&b[..3], b"xyz");
    // The FIN acknowledges them.
    p.conn_mut().close().unwrap();
    let out = p.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!((out[0].flags, out[0].ack), (FIN | ACK, PEER_ISS + 4));
}

#[test]
fn rfc9293_3_10_7_4_fin_on_third_ack_enters_close_wait() {
    // SYN-RECEIVED: the ACK moves to ESTABLISHED, then the FIN to CLOSE-WAIT.
    let mut p = Peer::new();
    p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    let out = p.send_fin();
    assert_eq!(p.state(), State::CloseWait);
    assert!(
        out.iter().any(|s| s.has(ACK) && s.ack == PEER_ISS + 2),
        "{out:?}"
    );
}

// ---------------------------------------------------------------------------------------
// Closing (§3.6)

#[test]
fn rfc9293_3_6_active_close_fin_wait_1_fin_wait_2_time_wait_closed() {
    let cfg = TcpConfig::newreno();
    let time_wait = cfg.time_wait;
    let mut p = Peer::established(cfg);
    let (_, nxt, _) = p.engine_snd();
    p.conn_mut().close().unwrap();
    // ESTABLISHED -> FIN-WAIT-1: <SEQ=SND.NXT><CTL=FIN,ACK>.
    assert_eq!(p.state(), State::FinWait1);
    let out = p.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].has(FIN | ACK));
    assert_eq!(out[0].seq, nxt);
    p.absorb(&out);
    // FIN-WAIT-1 -> FIN-WAIT-2 when the FIN is acknowledged.
    let out = p.send_ack();
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::FinWait2);
    // FIN-WAIT-2 -> TIME-WAIT on the peer's FIN, which is acknowledged.
    let out = p.send_fin();
    assert_eq!(p.state(), State::TimeWait);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, p.snd_nxt);
    assert_eq!(out[0].seq, nxt + 1);
    // TIME-WAIT -> CLOSED after 2 MSL, not before.
    let t0 = p.now;
    p.advance_to(t0 + time_wait - ms(1));
    assert_eq!(p.state(), State::TimeWait);
    p.advance_to(t0 + time_wait);
    assert!(
        p.try_conn().is_none_or(|c| c.state() == State::Closed),
        "TIME-WAIT did not end after 2 MSL"
    );
    p.drain();
}

#[test]
fn rfc9293_3_6_passive_close_close_wait_last_ack_closed() {
    let mut p = Peer::established(TcpConfig::newreno());
    let (_, nxt, _) = p.engine_snd();
    // ESTABLISHED -> CLOSE-WAIT on the peer's FIN, acknowledged.
    let out = p.send_fin();
    assert_eq!(p.state(), State::CloseWait);
    assert!(
        out.iter().any(|s| s.has(ACK) && s.ack == p.snd_nxt),
        "{out:?}"
    );
    // The application sees the end of the stream.
    let mut b = [0u8; 16];
    assert_eq!(p.conn_mut().recv(&mut b), Ok(0));
    assert!(p.conn().is_eof());
    // CLOSE-WAIT -> LAST-ACK on close: <SEQ=SND.NXT><CTL=FIN,ACK>.
    p.conn_mut().close().unwrap();
    assert_eq!(p.state(), State::LastAck);
    let out = p.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].has(FIN | ACK));
    assert_eq!(out[0].seq, nxt);
    p.absorb(&out);
    // LAST-ACK -> CLOSED when the FIN is acknowledged.
    let out = p.send_ack();
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), None, "an orderly close is not an error");
}

#[test]
fn rfc9293_3_6_simultaneous_close_fin_wait_1_closing_time_wait() {
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    assert!(fin[0].has(FIN));
    assert_eq!(p.state(), State::FinWait1);
    // The peer's FIN crosses ours: it does not acknowledge our FIN.
    let out = p.send_fin();
    assert_eq!(p.state(), State::Closing);
    assert!(
        out.iter().any(|s| s.has(ACK) && s.ack == p.snd_nxt),
        "{out:?}"
    );
    // CLOSING -> TIME-WAIT when our FIN is acknowledged.
    p.absorb(&fin);
    let out = p.send_ack();
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::TimeWait);
}

#[test]
fn rfc9293_3_10_7_4_fin_wait_1_fin_acking_our_fin_enters_time_wait() {
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    // FIN,ACK that acknowledges our FIN: FIN-WAIT-1 -> (FIN-WAIT-2) -> TIME-WAIT at once.
    let out = p.send_fin();
    assert_eq!(p.state(), State::TimeWait);
    assert!(
        out.iter().any(|s| s.is_pure_ack() && s.ack == p.snd_nxt),
        "{out:?}"
    );
}

#[test]
fn rfc9293_3_6_half_close_data_still_flows_to_side_that_closed_first() {
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    p.send_ack();
    assert_eq!(p.state(), State::FinWait2);
    // The peer keeps sending; the engine, half-closed, still receives and acknowledges.
    let d = data(3000);
    p.send_data(&d[..1460]);
    let out = p.send_data(&d[1460..2920]);
    assert!(
        out.iter().any(|s| s.has(ACK) && s.ack == p.snd_nxt),
        "{out:?}"
    );
    p.send_data(&d[2920..]);
    assert_eq!(p.app_read(), d);
    assert_eq!(p.state(), State::FinWait2);
    // Sending is what closed: the engine refuses new data.
    assert_eq!(p.conn_mut().send(b"x"), Err(SendError::Closed));
    p.send_fin();
    assert_eq!(p.state(), State::TimeWait);
    let mut b = [0u8; 8];
    assert_eq!(
        p.conn_mut().recv(&mut b),
        Ok(0),
        "end of stream after the FIN"
    );
}

#[test]
fn rfc9293_3_6_half_close_close_wait_side_can_still_send() {
    let mut p = Peer::established(cfg_unlimited());
    p.send_fin();
    assert_eq!(p.state(), State::CloseWait);
    let d = data(2000);
    let out = p.app_send(&d);
    let sent: Vec<u8> = out.iter().flat_map(|s| s.payload.clone()).collect();
    assert_eq!(sent, d, "CLOSE-WAIT still sends: {out:?}");
}

#[test]
fn rfc9293_3_6_time_wait_reacks_retransmitted_fin_and_restarts_2msl() {
    let cfg = TcpConfig::newreno();
    let time_wait = cfg.time_wait;
    let mut p = Peer::established(cfg);
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    p.send_ack();
    p.send_fin();
    assert_eq!(p.state(), State::TimeWait);
    // Half-way through TIME-WAIT the peer retransmits its FIN (our ACK was "lost").
    p.advance(secs(30));
    assert!(secs(30) < time_wait);
    let t_refin = p.now;
    let o = p.out(FIN | ACK).seq(p.snd_nxt - 1);
    let out = p.inject(&o);
    assert_eq!(
        out.len(),
        1,
        "the retransmitted FIN is acknowledged: {out:?}"
    );
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, p.snd_nxt);
    // The 2 MSL timer restarted: still TIME-WAIT at the original deadline...
    p.advance_to(t_refin + time_wait - ms(1));
    assert_eq!(p.state(), State::TimeWait);
    // ...and gone 2 MSL after the retransmitted FIN.
    p.advance_to(t_refin + time_wait);
    assert!(p.try_conn().is_none_or(|c| c.state() == State::Closed));
}

#[test]
fn rfc9293_3_10_4_close_in_syn_sent_deletes_tcb() {
    let (mut p, _) = Peer::connect(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    assert_eq!(p.state(), State::Closed);
    let out = p.advance(secs(10));
    assert!(out.is_empty(), "no SYN retransmission after close: {out:?}");
}

#[test]
fn rfc9293_3_10_7_4_rst_in_syn_received_returns_to_listen() {
    let mut p = Peer::new();
    let synack = p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    let o = p.out(RST).seq(PEER_ISS + 1);
    let out = p.inject(&o);
    assert!(out.iter().all(|s| !s.has(RST)), "{out:?}");
    assert!(p.try_conn().is_none(), "the half-open connection is gone");
    assert_eq!(p.ep.accept(SERVER_PORT), None);
    // The listener is still there: a new SYN is answered.
    p.me.set_port(PEER_PORT + 1);
    p.snd_nxt = PEER_ISS + 500;
    let o = p.out(SYN).opts(syn_opts(Some(1460), None, false, false));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, SYN | ACK);
    assert_ne!(out[0].dst, synack.dst);
}

#[test]
fn rfc9293_3_10_7_4_rst_in_syn_received_from_syn_sent_is_connection_refused() {
    // "If this connection was initiated with an active OPEN (i.e., came from SYN-SENT
    // state), then the connection was refused; signal the user 'connection refused'."
    // SYN-SENT, the peer's SYN crosses ours (simultaneous open): SYN-RECEIVED. An
    // acceptable RST, with or without ACK, then refuses the connection.
    for flags in [RST | ACK, RST] {
        let (mut p, syn) = Peer::connect(TcpConfig::newreno());
        let o = p.out(SYN).opts(syn_opts(Some(1460), None, false, false));
        let out = p.inject(&o);
        assert_eq!(p.state(), State::SynReceived);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].flags, out[0].ack), (SYN | ACK, PEER_ISS + 1));
        let o = p.out(flags).seq(PEER_ISS + 1).ack(syn.seq + 1);
        let out = p.inject(&o);
        assert!(out.is_empty(), "{flags:?}: {out:?}");
        assert_eq!(p.state(), State::Closed);
        assert_eq!(
            p.conn().error(),
            Some(ConnectionError::Refused),
            "{flags:?}"
        );
        let mut b = [0u8; 4];
        assert_eq!(
            p.conn_mut().recv(&mut b),
            Err(RecvError::Lost(ConnectionError::Refused))
        );
    }
    // Once ESTABLISHED, the same RST is a reset.
    let (mut p, _) = Peer::active(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    let o = p.out(RST).seq(PEER_ISS + 1);
    p.inject(&o);
    assert_eq!(p.conn().error(), Some(ConnectionError::Reset));
}

// ---------------------------------------------------------------------------------------
// Timeouts (§3.8.1, §3.8.3)

fn cfg_max_rto() -> ackclock_wire::Duration {
    TcpConfig::newreno().rtt.max_rto
}

#[test]
fn rfc9293_3_8_1_syn_retransmitted_with_backoff_then_timed_out() {
    let cfg = TcpConfig::newreno();
    let max = cfg.max_syn_retransmits;
    let (mut p, syn) = Peer::connect(cfg);
    let t0 = p.now;
    let out = p.advance(secs(1000));
    let syns: Vec<Instant> = out
        .iter()
        .filter(|(_, s)| s.has(SYN))
        .map(|(t, s)| {
            assert_eq!(s.seq, syn.seq, "a retransmitted SYN keeps the ISS");
            *t
        })
        .collect();
    assert_eq!(syns.len() as u32, max, "SYN retransmissions: {syns:?}");
    // Intervals 1 s, 2 s, 4 s, ... capped at max_rto (RFC 6298 §2.1, §2.5 and §5.5).
    let mut prev = t0;
    let mut expect = secs(1);
    for t in &syns {
        assert_eq!(*t - prev, expect, "SYN retransmission times {syns:?}");
        prev = *t;
        expect = expect.saturating_mul(2).min(cfg_max_rto());
    }
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::TimedOut));
    let mut b = [0u8; 4];
    assert_eq!(
        p.conn_mut().recv(&mut b),
        Err(RecvError::Lost(ConnectionError::TimedOut))
    );
}

#[test]
fn rfc9293_3_8_3_syn_r2_at_least_3_minutes() {
    // "The value of R2 for a SYN segment MUST be set large enough to provide retransmission
    // of the segment for at least 3 minutes."
    let (mut p, _) = Peer::connect(TcpConfig::default());
    p.advance(secs(180) - ms(1));
    assert_eq!(
        p.state(),
        State::SynSent,
        "gave up on the SYN before 3 minutes"
    );
}

#[test]
fn rfc9293_3_8_3_data_r2_at_least_100_seconds() {
    // "R2 SHOULD correspond to at least 100 seconds."
    let mut p = Peer::established(TcpConfig::default());
    p.app_send(&data(10));
    let t0 = p.now;
    let out = p.advance(secs(100));
    assert!(out.iter().all(|(_, s)| !s.has(RST)), "gave up before 100 s");
    assert_eq!(p.state(), State::Established);
    let out = p.advance(secs(3600));
    let (t_rst, _) = out
        .iter()
        .find(|(_, s)| s.has(RST))
        .expect("gives up eventually");
    assert!(*t_rst - t0 >= secs(100));
}

#[test]
fn rfc9293_3_8_1_syn_ack_retransmitted_in_syn_received() {
    let mut p = Peer::new();
    let synack = p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    let t0 = p.now;
    let out = p.advance(ms(1500));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0 - t0, secs(1));
    assert_eq!(out[0].1.flags, SYN | ACK);
    assert_eq!(out[0].1.seq, synack.seq);
    // The ACK of the retransmitted SYN,ACK still establishes the connection.
    p.send_ack();
    assert_eq!(p.state(), State::Established);
}

#[test]
fn rfc9293_3_8_1_retransmitted_syn_in_syn_received_draws_syn_ack() {
    let mut p = Peer::new();
    let synack = p.syn_to_listener(
        TcpConfig::newreno(),
        syn_opts(Some(1460), None, false, false),
    );
    let o = p
        .out(SYN)
        .seq(PEER_ISS)
        .opts(syn_opts(Some(1460), None, false, false));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].flags, SYN | ACK);
    assert_eq!((out[0].seq, out[0].ack), (synack.seq, synack.ack));
    assert_eq!(p.ep.connections().count(), 1, "no second connection");
}

#[test]
fn rfc9293_3_8_3_data_retransmission_gives_up_with_timed_out_and_rst() {
    let cfg = TcpConfig::newreno();
    let max = cfg.max_retransmits;
    let mut p = Peer::established(cfg);
    let out = p.app_send(&data(100));
    assert_eq!(out.len(), 1);
    let first = out[0].clone();
    let out = p.advance(secs(3600));
    let rexmits: Vec<&Seg> = out
        .iter()
        .map(|(_, s)| s)
        .filter(|s| !s.payload.is_empty())
        .collect();
    assert_eq!(
        rexmits.len() as u32,
        max,
        "retransmissions before giving up"
    );
    assert!(rexmits
        .iter()
        .all(|s| s.seq == first.seq && s.payload == first.payload));
    // The last thing sent is a reset at SND.NXT, which the peer would accept.
    let (_, last) = out.last().unwrap();
    assert!(last.has(RST), "{last:?}");
    assert_eq!(last.seq, first.end());
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::TimedOut));
    assert_eq!(
        p.conn_mut().send(b"x"),
        Err(SendError::Lost(ConnectionError::TimedOut))
    );
    let mut b = [0u8; 4];
    assert_eq!(
        p.conn_mut().recv(&mut b),
        Err(RecvError::Lost(ConnectionError::TimedOut))
    );
}

// ---------------------------------------------------------------------------------------
// Resets (§3.5.2, §3.10.7.1 to §3.10.7.3)

#[test]
fn rfc9293_3_10_7_1_segment_with_ack_to_closed_port_draws_rst_seq_seg_ack() {
    let mut p = Peer::new();
    let o = p.out(ACK | PSH).seq(1234).ack(0xdead_beef).payload(b"abc");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    // <SEQ=SEG.ACK><CTL=RST>
    assert_eq!(out[0].flags, RST);
    assert_eq!(out[0].seq, 0xdead_beef);
    assert_eq!(out[0].src, p.them);
    assert_eq!(out[0].dst, p.me);
    assert!(out[0].payload.is_empty());
    assert_eq!(p.ep.stats().no_connection, 1);
}

#[test]
fn rfc9293_3_10_7_1_segment_without_ack_to_closed_port_draws_rst_ack() {
    let mut p = Peer::new();
    // SYN with 5 bytes of data: SEG.LEN = 6.
    let o = p.out(SYN).seq(0xffff_fffe).payload(b"12345");
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
    assert_eq!(out[0].flags, RST | ACK);
    assert_eq!(out[0].seq, 0);
    assert_eq!(out[0].ack, 0xffff_fffeu32.wrapping_add(6));
    // A bare FIN counts one.
    let o = p.out(FIN).seq(77);
    let out = p.inject(&o);
    assert_eq!((out[0].flags, out[0].seq, out[0].ack), (RST | ACK, 0, 78));
}

#[test]
fn rfc9293_3_10_7_1_never_rst_a_rst() {
    let mut p = Peer::new();
    for flags in [RST, RST | ACK] {
        let o = p.out(flags).seq(5).ack(6);
        assert!(p.inject(&o).is_empty(), "RST answered ({flags:?})");
    }
    // Nor to a listener, nor to an established connection when it is out of window.
    let mut p = Peer::established(TcpConfig::newreno());
    let o = p.out(RST).seq(p.snd_nxt.wrapping_add(1 << 30));
    assert!(p.inject(&o).is_empty());
    let o = p
        .out(RST | ACK)
        .seq(p.snd_nxt)
        .ack(p.rcv_nxt.wrapping_add(1 << 20));
    let out = p.inject(&o);
    assert!(out.iter().all(|s| !s.has(RST)), "{out:?}");
}

#[test]
fn rfc9293_3_10_7_2_ack_to_listener_draws_rst() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    let o = p.out(ACK).seq(42).ack(4242);
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!((out[0].flags, out[0].seq), (RST, 4242));
    // A SYN,ACK too.
    let o = p.out(SYN | ACK).seq(42).ack(99);
    let out = p.inject(&o);
    assert_eq!((out[0].flags, out[0].seq), (RST, 99));
    // A RST is ignored.
    let o = p.out(RST).seq(42);
    assert!(p.inject(&o).is_empty());
    assert_eq!(p.ep.connections().count(), 0);
}

#[test]
fn rfc9293_3_10_7_2_listen_drops_segment_without_syn_ack_or_rst() {
    // §3.10.7.2, fourth: "Any other control or text-bearing segment (not containing SYN)
    // ... drop the segment and return."
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    for flags in [FIN, PSH, TcpFlags::NONE] {
        let o = p.out(flags).seq(42).payload(b"data");
        let out = p.inject(&o);
        assert!(
            out.is_empty(),
            "{flags:?} to a listener answered with {out:?}"
        );
    }
    assert_eq!(p.ep.connections().count(), 0);
}

#[test]
fn rfc9293_3_10_7_3_rst_in_syn_sent_with_acceptable_ack_is_refused() {
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    let o = p.out(RST | ACK).seq(0).ack(syn.seq + 1);
    let out = p.inject(&o);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(p.state(), State::Closed);
    assert_eq!(p.conn().error(), Some(ConnectionError::Refused));
    let mut b = [0u8; 4];
    assert_eq!(
        p.conn_mut().recv(&mut b),
        Err(RecvError::Lost(ConnectionError::Refused))
    );
    assert!(
        p.advance(secs(10)).is_empty(),
        "no SYN retransmission after refusal"
    );
}

#[test]
fn rfc9293_3_10_7_3_rst_in_syn_sent_without_acceptable_ack_is_ignored() {
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    // RST without ACK: dropped.
    let o = p.out(RST).seq(0);
    assert!(p.inject(&o).is_empty());
    assert_eq!(p.state(), State::SynSent);
    // RST with an ACK that does not acknowledge our SYN: dropped, never answered.
    let o = p.out(RST | ACK).seq(0).ack(syn.seq + 100);
    assert!(p.inject(&o).is_empty());
    assert_eq!(p.state(), State::SynSent);
    assert_eq!(p.conn().error(), None);
}

#[test]
fn rfc9293_3_10_7_3_syn_sent_unacceptable_ack_draws_rst() {
    let (mut p, syn) = Peer::connect(TcpConfig::newreno());
    for bad in [
        syn.seq,
        syn.seq.wrapping_sub(10),
        syn.seq + 2,
        syn.seq + 100_000,
    ] {
        // SYN,ACK and bare ACK alike: SEG.ACK =< ISS or SEG.ACK > SND.NXT.
        for flags in [SYN | ACK, ACK] {
            let o = p.out(flags).seq(PEER_ISS).ack(bad);
            let out = p.inject(&o);
            assert_eq!(out.len(), 1, "ack {bad} {flags:?}: {out:?}");
            // <SEQ=SEG.ACK><CTL=RST>
            assert_eq!(out[0].flags, RST, "{:?}", out[0]);
            assert_eq!(out[0].seq, bad);
            assert_eq!(p.state(), State::SynSent);
        }
    }
    // The real SYN,ACK still works afterwards.
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.state(), State::Established);
}

// ---------------------------------------------------------------------------------------
// MSS (§3.7.1)

#[test]
fn rfc9293_3_7_1_default_send_mss_536_without_mss_option() {
    let (mut p, _) = Peer::passive(cfg_unlimited(), syn_opts(None, None, false, false));
    assert_eq!(p.conn().mss(), 536);
    let out = p.app_send(&data(3000));
    assert!(!out.is_empty());
    for s in &out {
        assert!(
            s.payload.len() <= 536,
            "segment of {} bytes",
            s.payload.len()
        );
    }
    assert_eq!(
        out[0].payload.len(),
        536,
        "full-sized segments use the whole MSS"
    );
}

#[test]
fn rfc9293_3_7_1_mss_option_honoured_peer_smaller() {
    let (mut p, synack) = Peer::passive(cfg_unlimited(), syn_opts(Some(1000), None, false, false));
    assert_eq!(
        synack.opts.mss,
        Some(1460),
        "the SYN,ACK advertises our MSS"
    );
    let out = p.app_send(&data(5000));
    let total: usize = out.iter().map(|s| s.payload.len()).sum();
    assert_eq!(total, 5000);
    assert!(out.iter().all(|s| s.payload.len() <= 1000), "{out:?}");
    assert_eq!(out[0].payload.len(), 1000);
}

#[test]
fn rfc9293_3_7_1_mss_option_honoured_ours_smaller() {
    let cfg = TcpConfig {
        mss: 700,
        ..cfg_unlimited()
    };
    let (mut p, synack) = Peer::passive(cfg, syn_opts(Some(1460), None, false, false));
    assert_eq!(synack.opts.mss, Some(700));
    let out = p.app_send(&data(5000));
    assert!(out.iter().all(|s| s.payload.len() <= 700), "{out:?}");
    assert_eq!(out[0].payload.len(), 700);
}

#[test]
fn rfc9293_3_7_1_options_count_against_the_mss() {
    // With timestamps every segment carries 12 option bytes: payload + options <= MSS.
    let cfg = TcpConfig {
        timestamps: true,
        ..cfg_unlimited()
    };
    let (mut p, _) = Peer::passive(cfg, syn_opts(Some(1000), None, false, true));
    assert!(p.ts);
    let out = p.app_send(&data(5000));
    for s in &out {
        assert!(
            s.payload.len() + 12 <= 1000,
            "{} payload bytes",
            s.payload.len()
        );
    }
    assert_eq!(out[0].payload.len(), 988);
}

#[test]
fn rfc9293_3_7_1_active_open_honours_synack_mss() {
    let cfg = cfg_unlimited();
    let (mut p, syn) = Peer::active(cfg, syn_opts(Some(600), None, false, false));
    assert_eq!(syn.opts.mss, Some(1460));
    let out = p.app_send(&data(3000));
    assert!(out.iter().all(|s| s.payload.len() <= 600), "{out:?}");
    assert_eq!(out[0].payload.len(), 600);
}
