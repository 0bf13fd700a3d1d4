//! The endpoint: listen backlogs and accept queues, demultiplexing by 4-tuple, bounded
//! reset generation, and malformed input (counted, never answered).

use ackclock_tcp::{AddrError, Endpoint, EndpointConfig, State, TcpConfig};
use ackclock_testkit::pair::{Harness, PipeConfig, B_ADDR};
use ackclock_testkit::peer::*;
use ackclock_wire::{TcpFlags, TcpHeader, TcpOptions};
use core::net::{Ipv4Addr, SocketAddrV4};

/// A SYN from `port` to the listener.
fn syn_from(p: &Peer, port: u16, iss: u32) -> Out {
    p.out(SYN)
        .src_port(port)
        .seq(iss)
        .opts(syn_opts(Some(1460), None, false, false))
}

#[test]
fn endpoint_listen_backlog_without_syn_cookies_drops_syns_beyond_the_backlog() {
    let mut p = Peer::with_endpoint(Endpoint::new(EndpointConfig {
        syn_cookies: false,
        ..EndpointConfig::new(ENGINE_ADDR, [7u8; 16])
    }));
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 2).unwrap();
    let mut synacks = Vec::new();
    for i in 0..3u16 {
        let o = syn_from(&p, 40000 + i, 1000 * u32::from(i));
        synacks.push(p.inject(&o));
    }
    assert_eq!(synacks[0].len(), 1);
    assert_eq!(synacks[1].len(), 1);
    assert!(
        synacks[2].is_empty(),
        "SYN beyond the backlog answered: {:?}",
        synacks[2]
    );
    let st = p.ep.stats();
    assert_eq!(st.syns_received, 3);
    assert_eq!(st.syns_dropped_backlog, 1);
    assert_eq!(p.ep.connections().count(), 2);
    // Completed but unaccepted connections still count against the backlog.
    let sa = synacks[0][0].clone();
    let o = p.out(ACK).src_port(40000).seq(1).ack(sa.seq + 1);
    p.inject(&o);
    let o = syn_from(&p, 40003, 7);
    assert!(p.inject(&o).is_empty());
    assert_eq!(p.ep.stats().syns_dropped_backlog, 2);
    // Accepting frees a place.
    let id = p.ep.accept(SERVER_PORT).expect("one completed connection");
    assert_eq!(p.ep.conn(id).unwrap().remote().port(), 40000);
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].flags, SYN | ACK);
}

#[test]
fn endpoint_accept_queue_returns_completed_handshakes_in_order() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 8).unwrap();
    let mut isss = Vec::new();
    for i in 0..3u16 {
        let o = syn_from(&p, 40000 + i, 100);
        let out = p.inject(&o);
        isss.push(out[0].seq);
    }
    assert_eq!(p.ep.accept(SERVER_PORT), None, "no handshake complete yet");
    for i in [2usize, 0, 1] {
        let o = p
            .out(ACK)
            .src_port(40000 + i as u16)
            .seq(101)
            .ack(isss[i] + 1);
        assert!(p.inject(&o).is_empty());
    }
    let order: Vec<u16> = (0..3)
        .map(|_| {
            let id = p.ep.accept(SERVER_PORT).expect("accept");
            let c = p.ep.conn(id).unwrap();
            assert_eq!(c.state(), State::Established);
            c.remote().port()
        })
        .collect();
    assert_eq!(order, vec![40002, 40000, 40001]);
    assert_eq!(p.ep.accept(SERVER_PORT), None);
    assert_eq!(p.ep.stats().connections_accepted, 3);
}

#[test]
fn endpoint_demultiplexes_connections_by_four_tuple() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 8).unwrap();
    // Same remote port from two addresses, and two ports from one address.
    let peers = [
        SocketAddrV4::new(PEER_ADDR, 40000),
        SocketAddrV4::new(PEER_ADDR, 40001),
        SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 3), 40000),
    ];
    let mut ids = Vec::new();
    for (i, from) in peers.iter().enumerate() {
        p.me = *from;
        p.snd_nxt = 5000 * (i as u32 + 1);
        let o = p.out(SYN).opts(syn_opts(Some(1460), None, false, false));
        let sa = p.inject(&o);
        assert_eq!(sa.len(), 1);
        assert_eq!(sa[0].dst, *from);
        p.snd_nxt += 1;
        p.rcv_nxt = sa[0].seq + 1;
        let msg = format!("hello from {from}");
        p.send_data(msg.as_bytes());
        ids.push(p.ep.accept(SERVER_PORT).unwrap());
    }
    assert_eq!(p.ep.connections().count(), 3);
    let mut b = [0u8; 64];
    for (id, from) in ids.iter().zip(peers.iter()) {
        let c = p.ep.conn_mut(*id).unwrap();
        assert_eq!(c.remote(), *from);
        let n = c.recv(&mut b).unwrap();
        assert_eq!(&b[..n], format!("hello from {from}").as_bytes());
    }
    // A reset on one 4-tuple leaves the others alone.
    p.me = peers[1];
    p.snd_nxt = 10_001 + "hello from 192.0.2.2:40001".len() as u32;
    let o = p.out(RST);
    p.inject(&o);
    assert_eq!(p.ep.conn(ids[1]).unwrap().state(), State::Closed);
    assert_eq!(p.ep.conn(ids[0]).unwrap().state(), State::Established);
    assert_eq!(p.ep.conn(ids[2]).unwrap().state(), State::Established);
}

#[test]
fn endpoint_two_clients_to_one_listener_over_the_harness() {
    let mut h = Harness::new(11, PipeConfig::default());
    h.b.listen(9, TcpConfig::newreno(), 4).unwrap();
    let remote = SocketAddrV4::new(B_ADDR, 9);
    let c1 = h.a.connect(h.now, remote, TcpConfig::newreno()).unwrap();
    let c2 = h.a.connect(h.now, remote, TcpConfig::newreno()).unwrap();
    let (p1, p2) = (
        h.a.conn(c1).unwrap().local().port(),
        h.a.conn(c2).unwrap().local().port(),
    );
    assert_ne!(p1, p2);
    let limit = h.now + secs(5);
    let mut accepted = Vec::new();
    let mut sent = false;
    h.run_until(
        limit,
        |h| {
            while let Some(id) = h.b.accept(9) {
                accepted.push(id);
            }
            if !sent
                && h.a.conn(c1).is_some_and(|c| c.is_established())
                && h.a.conn(c2).is_some_and(|c| c.is_established())
            {
                h.a.conn_mut(c1).unwrap().send(b"one").unwrap();
                h.a.conn_mut(c2).unwrap().send(b"two").unwrap();
                sent = true;
            }
        },
        |h| {
            h.b.connections()
                .map(|(_, c)| c.recv_available())
                .sum::<usize>()
                == 6
        },
    );
    assert_eq!(accepted.len(), 2);
    for id in accepted {
        let c = h.b.conn_mut(id).unwrap();
        let mut b = [0u8; 8];
        let n = c.recv(&mut b).unwrap();
        let want: &[u8] = if c.remote().port() == p1 {
            b"one"
        } else {
            b"two"
        };
        assert_eq!(&b[..n], want);
    }
}

#[test]
fn endpoint_listen_and_connect_refuse_ports_in_use() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 1).unwrap();
    assert_eq!(
        p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 1),
        Err(AddrError::AddrInUse)
    );
    let remote = SocketAddrV4::new(PEER_ADDR, 80);
    p.ep.connect_from_port(p.now, 5555, remote, TcpConfig::newreno())
        .unwrap();
    assert_eq!(
        p.ep.connect_from_port(p.now, 5555, remote, TcpConfig::newreno())
            .err(),
        Some(AddrError::AddrInUse)
    );
}

#[test]
fn endpoint_pending_resets_are_bounded() {
    let mut cfg = EndpointConfig::new(ENGINE_ADDR, [3; 16]);
    cfg.max_pending_rsts = 4;
    let mut p = Peer::with_endpoint(Endpoint::new(cfg));
    for i in 0..10 {
        let o = p.out(ACK).seq(i).ack(i);
        p.ep.handle_packet(p.now, &o.bytes());
    }
    let out = p.drain();
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|s| s.flags == RST));
    assert_eq!(p.ep.stats().rsts_dropped, 6);
    assert_eq!(p.ep.stats().rsts_sent, 4);
}

// ---------------------------------------------------------------------------------------
// Malformed input

/// A valid packet to the closed port 9 with data.
fn stray(p: &Peer) -> Vec<u8> {
    p.out(ACK | PSH)
        .dst_port(9)
        .seq(1)
        .ack(1)
        .payload(b"payload!")
        .bytes()
}

#[test]
fn endpoint_bad_tcp_checksum_is_counted_and_never_answered() {
    let mut p = Peer::new();
    let mut b = stray(&p);
    let last = b.len() - 1;
    b[last] ^= 0x01;
    assert!(p.inject_raw(&b).is_empty(), "corrupted packet answered");
    let st = p.ep.stats();
    assert_eq!(st.bad_tcp_checksum, 1);
    assert_eq!(st.malformed, 1);
    assert_eq!(st.no_connection, 0);
    assert_eq!(st.rsts_sent, 0);
}

#[test]
fn endpoint_bad_ip_checksum_is_counted_and_never_answered() {
    let mut p = Peer::new();
    let mut b = stray(&p);
    b[8] ^= 0x10; // TTL: the header checksum no longer verifies
    assert!(p.inject_raw(&b).is_empty());
    assert_eq!(p.ep.stats().bad_ip_checksum, 1);
    assert_eq!(p.ep.stats().malformed, 1);
}

#[test]
fn endpoint_truncated_packets_are_counted_and_never_answered() {
    let mut p = Peer::new();
    let b = stray(&p);
    // Cut inside the data (IP total length now exceeds the buffer), inside the TCP header,
    // and inside the IP header.
    for cut in [b.len() - 3, 30, 10, 0] {
        assert!(p.inject_raw(&b[..cut]).is_empty(), "cut at {cut} answered");
    }
    let st = p.ep.stats();
    assert_eq!(st.truncated, 4);
    assert_eq!(st.malformed, 4);
    assert_eq!(st.rsts_sent, 0);
    // A TCP header whose data offset is below 5 words.
    let mut b = stray(&p);
    b[32] = (4 << 4) | (b[32] & 0x0f);
    ackclock_wire::tcp::fill_checksum(&mut b[20..], PEER_ADDR, ENGINE_ADDR).unwrap();
    assert!(p.inject_raw(&b).is_empty());
    assert_eq!(p.ep.stats().malformed, 5);
}

/// A SYN to the listener whose MSS option has length 3 (checksums valid).
fn syn_with_bad_option(p: &Peer) -> Vec<u8> {
    let h = TcpHeader {
        src_port: PEER_PORT,
        dst_port: SERVER_PORT,
        seq: PEER_ISS,
        ack: 0,
        flags: TcpFlags::SYN,
        window: 65535,
        urgent: 0,
        options: TcpOptions {
            mss: Some(1460),
            ..TcpOptions::NONE
        },
    };
    let mut b = build(p.me, p.them, &h, &[]);
    assert_eq!(b[40], 2, "MSS option kind");
    b[41] = 3;
    ackclock_wire::tcp::fill_checksum(&mut b[20..], PEER_ADDR, ENGINE_ADDR).unwrap();
    b
}

#[test]
fn endpoint_bad_options_are_counted_and_never_answered() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    let b = syn_with_bad_option(&p);
    assert!(p.inject_raw(&b).is_empty(), "bad options answered");
    let st = p.ep.stats();
    assert_eq!(st.bad_options, 1);
    assert_eq!(st.malformed, 1);
    assert_eq!(p.ep.connections().count(), 0);
    // To a closed port as well.
    p.ep.unlisten(SERVER_PORT);
    assert!(p.inject_raw(&b).is_empty());
    assert_eq!(p.ep.stats().bad_options, 2);
}

#[test]
fn endpoint_packets_for_another_address_are_counted_and_never_answered() {
    let mut p = Peer::new();
    p.them = SocketAddrV4::new(Ipv4Addr::new(192, 0, 2, 99), 9);
    let b = p.out(ACK).seq(1).ack(1).bytes();
    assert!(p.inject_raw(&b).is_empty());
    assert_eq!(p.ep.stats().not_for_us, 1);
}

#[test]
fn endpoint_bad_checksum_on_a_connection_is_dropped_silently() {
    let mut p = Peer::established(TcpConfig::newreno());
    let rcv = p.engine_rcv_nxt();
    // In-order data (header prediction's path) and out-of-order data (general path).
    for off in [0u32, 500] {
        let mut b = p
            .out(ACK | PSH)
            .seq(p.snd_nxt + off)
            .payload(b"corrupt me")
            .bytes();
        let last = b.len() - 1;
        b[last] ^= 0x40;
        assert!(p.inject_raw(&b).is_empty(), "offset {off}");
    }
    assert_eq!(p.engine_rcv_nxt(), rcv);
    assert!(p.app_read().is_empty());
    assert_eq!(p.conn().stats().bad_checksum, 2);
    // A corrupted RST does not reset.
    let mut b = p.out(RST).bytes();
    b[24] ^= 0x01;
    p.inject_raw(&b);
    assert_eq!(p.state(), State::Established);
}

#[test]
fn endpoint_bad_checksum_syn_to_a_listener_is_counted_and_never_answered() {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, TcpConfig::newreno(), 4).unwrap();
    let mut b = p
        .out(SYN)
        .opts(syn_opts(Some(1460), None, false, false))
        .bytes();
    b[24] ^= 0x01; // sequence number
    assert!(p.inject_raw(&b).is_empty(), "corrupted SYN answered");
    assert_eq!(p.ep.connections().count(), 0);
    let st = p.ep.stats();
    assert_eq!(st.bad_tcp_checksum, 1, "{st:?}");
    assert_eq!(st.malformed, 1);
}
