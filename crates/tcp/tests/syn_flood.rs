//! SYN cookies (RFC 4987 §3.6): a listener whose backlog is full answers with a cookie,
//! keeps no state, and makes the connection when the ACK returns it. The flood itself is in
//! `syn_flood_memory.rs`.

use ackclock_tcp::{State, TcpConfig};
use ackclock_testkit::peer::*;
use ackclock_wire::tcp::Timestamps;

/// Fills the backlog of 1 with a SYN that never completes, from port 39999.
fn full_listener() -> Peer {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::sack(), 1).unwrap();
    let o = p
        .out(SYN)
        .src_port(39999)
        .seq(5)
        .opts(syn_opts(Some(1460), None, false, false));
    assert_eq!(
        p.inject(&o).len(),
        1,
        "the first SYN gets an ordinary SYN,ACK"
    );
    assert_eq!(p.ep.stats().syn_cookies_sent, 0);
    p
}

#[test]
fn rfc4987_3_6_a_client_connects_through_a_full_backlog_with_a_syn_cookie() {
    let mut p = full_listener();
    // The legitimate client offers MSS 1460, window scale 7, SACK and timestamps.
    let mut o = p.out(SYN).opts(syn_opts(Some(1460), Some(7), true, true));
    o.opts.timestamps = Some(Timestamps {
        tsval: p.ts_now(),
        tsecr: 0,
    });
    let out = p.inject(&o);
    p.snd_nxt = PEER_ISS.wrapping_add(1);
    assert_eq!(out.len(), 1, "{out:?}");
    let synack = out[0].clone();
    assert_eq!(synack.flags, SYN | ACK);
    assert_eq!(p.ep.stats().syn_cookies_sent, 1);
    assert_eq!(p.ep.connections().count(), 1, "a cookie keeps no state");
    // The client's ACK returns the cookie: the connection is made, established.
    p.rcv_nxt = synack.seq.wrapping_add(1);
    p.ts = true;
    p.ts_recent = synack.tsval().expect("timestamps offered back");
    let out = p.send_ack();
    // At most a window update, as after any handshake with window scaling (the SYN,ACK's
    // window field is not scaled).
    assert!(
        out.iter()
            .all(|s| s.is_pure_ack() && s.ack == p.snd_nxt && s.window > 0),
        "{out:?}"
    );
    p.id = p.ep.accept(SERVER_PORT);
    assert!(p.id.is_some(), "no connection from the cookie");
    assert_eq!(p.state(), State::Established);
    assert_eq!(p.ep.stats().syn_cookies_accepted, 1);
    let st = p.conn().stats();
    assert!(st.sack_enabled && st.timestamps_enabled, "{st:?}");
    assert_eq!(
        st.snd_wscale, 6,
        "window scale 7 rounds down to the table's 6"
    );
    assert_eq!(st.snd_mss, 1460 - 12);
    // Data both ways.
    p.send_data(&data(1000));
    p.advance(ms(500));
    assert_eq!(p.app_read(), data(1000));
    // Full-sized segments of the negotiated MSS (1460 less the 12 bytes of timestamps).
    let out = p.app_send(&data(2000));
    assert_eq!(out.first().map(|s| s.payload.len()), Some(1448), "{out:?}");
}

#[test]
fn rfc4987_3_6_an_ack_with_a_forged_cookie_makes_nothing_and_draws_a_reset() {
    let mut p = full_listener();
    let o = p.out(ACK).src_port(40001).seq(77).ack(0x1234_5678);
    let out = p.inject(&o);
    assert!(out.len() == 1 && out[0].has(RST), "{out:?}");
    assert!(p.ep.accept(SERVER_PORT).is_none());
    assert_eq!(p.ep.stats().syn_cookies_accepted, 0);
    assert_eq!(p.ep.connections().count(), 1);
}

#[test]
fn rfc4987_3_6_blind_acks_with_data_to_a_quiet_listener_forge_nothing() {
    // A listener whose backlog never overflowed sent no cookie, so no ACK is checked as one
    // (Linux's tcp_synq_no_recent_overflow): 20,000 blind ACKs carrying data, with
    // sequence and acknowledgment numbers spread over the space, make no connection and
    // are not even hashed. Before, every one was a 2^-24 guess at the MAC.
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::sack(), 8).unwrap();
    let n = 20_000u32;
    for i in 0..n {
        let o = p
            .out(ACK)
            .src_port(20_000 + (i % 40_000) as u16)
            .seq(i.wrapping_mul(2_654_435_761))
            .ack(i.wrapping_mul(40_503).wrapping_add(0x9e37_79b9))
            .payload(b"x");
        p.inject(&o);
    }
    let st = p.ep.stats();
    assert_eq!(st.syn_cookies_accepted, 0);
    assert_eq!(st.syn_cookies_not_expected, u64::from(n));
    assert!(p.ep.accept(SERVER_PORT).is_none());
    assert_eq!(p.ep.connections().count(), 0);
}
