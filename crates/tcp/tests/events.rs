//! `Endpoint::poll_event`: an application driven only by events (no polling of state)
//! completes a transfer and sees each event its connections go through, once, in order.

use ackclock_tcp::{ConnId, ConnectionError, Endpoint, Event, TcpConfig};
use ackclock_testkit::pair::{Harness, PipeConfig, A_ADDR, B_ADDR};
use ackclock_wire::{Duration, Instant};
use core::net::SocketAddrV4;

/// Every event of `ep`, as (time, event).
fn drain(ep: &mut Endpoint, now: Instant, log: &mut Vec<(Instant, Event)>) {
    while let Some(e) = ep.poll_event() {
        log.push((now, e));
    }
}

fn kinds(log: &[(Instant, Event)], id: ConnId) -> Vec<&'static str> {
    log.iter()
        .filter_map(|(_, e)| match *e {
            Event::Connected(c) if c == id => Some("connected"),
            Event::Readable(c) if c == id => Some("readable"),
            Event::Writable(c) if c == id => Some("writable"),
            Event::PeerClosed(c) if c == id => Some("peer_closed"),
            Event::Closed { conn, .. } if conn == id => Some("closed"),
            _ => None,
        })
        .collect()
}

fn dedup(v: Vec<&'static str>) -> Vec<&'static str> {
    let mut v = v;
    v.dedup();
    v
}

/// A sends 100 KB through a 4 KB send buffer, driven by `Writable`; B echoes nothing,
/// reads on `Readable` and closes on `PeerClosed`. Both see the whole life of their
/// connection, and the writes need no polling of the buffer.
#[test]
fn an_event_driven_transfer_sees_every_stage_once() {
    let mut h = Harness::new(1, PipeConfig::default());
    let mut a_cfg = TcpConfig::newreno();
    a_cfg.send_buffer_bytes = 4096;
    h.b.listen(7, TcpConfig::newreno(), 4).unwrap();
    let ca =
        h.a.connect(h.now, SocketAddrV4::new(B_ADDR, 7), a_cfg)
            .unwrap();
    let data = ackclock_testkit::bytes(100_000, 9);
    let (mut sent, mut got) = (0usize, Vec::new());
    let mut cb: Option<ConnId> = None;
    let (mut a_log, mut b_log) = (Vec::new(), Vec::new());
    let mut buf = vec![0u8; 8192];
    let limit = Instant::ZERO + Duration::from_secs(300);
    h.run(limit, |h| {
        let now = h.now;
        let start = a_log.len();
        drain(&mut h.a, now, &mut a_log);
        for &(_, e) in &a_log[start..] {
            match e {
                Event::Connected(c) | Event::Writable(c) => {
                    let conn = h.a.conn_mut(c).unwrap();
                    sent += conn.send(&data[sent..]).unwrap();
                    if sent == data.len() {
                        h.a.close(c).unwrap();
                    }
                }
                _ => {}
            }
        }
        let start = b_log.len();
        drain(&mut h.b, now, &mut b_log);
        for &(_, e) in &b_log[start..] {
            match e {
                Event::Incoming { port } => cb = h.b.accept(port),
                Event::Readable(c) => {
                    let conn = h.b.conn_mut(c).unwrap();
                    while let Ok(n) = conn.recv(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        got.extend_from_slice(&buf[..n]);
                    }
                }
                Event::PeerClosed(c) => h.b.close(c).unwrap(),
                _ => {}
            }
        }
        // Done when both connections are gone.
        h.a.connections().count() + h.b.connections().count() == 0 && cb.is_some()
    });
    assert_eq!(got, data);
    let cb = cb.unwrap();
    let a = dedup(kinds(&a_log, ca));
    let b = dedup(kinds(&b_log, cb));
    assert_eq!(
        a,
        ["connected", "writable", "readable", "peer_closed", "closed"],
        "{a_log:?}"
    );
    assert_eq!(b, ["readable", "peer_closed", "closed"], "{b_log:?}");
    // Writable came more than once (a 4 KB buffer for 100 KB), each after a short send.
    assert!(
        kinds(&a_log, ca)
            .iter()
            .filter(|k| **k == "writable")
            .count()
            > 10
    );
    // Both closed normally; A after its TIME-WAIT.
    for log in [&a_log, &b_log] {
        let closed: Vec<_> = log
            .iter()
            .filter_map(|(t, e)| match e {
                Event::Closed { error, .. } => Some((*t, *error)),
                _ => None,
            })
            .collect();
        assert_eq!(closed.len(), 1, "{log:?}");
        assert_eq!(closed[0].1, None);
    }
    // A closed first, so it waits out TIME-WAIT (60 s) from B's FIN before it is CLOSED.
    let at = |f: &dyn Fn(&Event) -> bool| a_log.iter().find(|(_, e)| f(e)).unwrap().0;
    let fin = at(&|e| matches!(e, Event::PeerClosed(_)));
    let closed = at(&|e| matches!(e, Event::Closed { .. }));
    assert_eq!(closed.saturating_since(fin), Duration::from_secs(60));
    assert_eq!(
        b_log
            .iter()
            .filter(|(_, e)| matches!(e, Event::Incoming { .. }))
            .count(),
        1
    );
}

/// `Closed` carries the reason: refused (RFC 9293 §3.10.7.3), reset by the peer, timed out.
#[test]
fn closed_says_why() {
    let reason = |setup: &dyn Fn(&mut Harness) -> ConnId, limit_s: u64| {
        let mut h = Harness::new(2, PipeConfig::default());
        let id = setup(&mut h);
        let mut log = Vec::new();
        let limit = h.now + Duration::from_secs(limit_s);
        h.run(limit, |h| {
            let now = h.now;
            drain(&mut h.a, now, &mut log);
            log.iter().any(|(_, e)| matches!(e, Event::Closed { .. }))
        });
        log.iter()
            .find_map(|(_, e)| match *e {
                Event::Closed { conn, error } if conn == id => Some(error),
                _ => None,
            })
            .expect("a Closed event")
    };
    let connect = |h: &mut Harness, port: u16| {
        h.a.connect(h.now, SocketAddrV4::new(B_ADDR, port), TcpConfig::newreno())
            .unwrap()
    };
    // No listener: B answers the SYN with a RST.
    assert_eq!(
        reason(&|h| connect(h, 9), 10),
        Some(ConnectionError::Refused)
    );
    // B accepts, then aborts.
    let reset = reason(
        &|h| {
            h.b.listen(9, TcpConfig::newreno(), 4).unwrap();
            let id = connect(h, 9);
            let limit = h.now + Duration::from_secs(1);
            h.run(limit, |h| {
                if let Some(c) = h.b.accept(9) {
                    h.b.abort(c);
                    return true;
                }
                false
            });
            id
        },
        10,
    );
    assert_eq!(reset, Some(ConnectionError::Reset));
    // Every packet to B is lost: the SYN retransmissions give up.
    let timed_out = reason(
        &|h| {
            h.set_filter(ackclock_testkit::pair::Dir::AtoB, Box::new(|_| true));
            connect(h, 9)
        },
        600,
    );
    assert_eq!(timed_out, Some(ConnectionError::TimedOut));
    let _ = A_ADDR;
}

/// Data that arrives with the handshake, before the application accepts, is announced
/// right after the accept; nothing of a connection is announced before.
#[test]
fn a_passive_connection_has_no_events_before_accept() {
    let mut h = Harness::new(3, PipeConfig::default());
    h.b.listen(7, TcpConfig::newreno(), 4).unwrap();
    let ca =
        h.a.connect(h.now, SocketAddrV4::new(B_ADDR, 7), TcpConfig::newreno())
            .unwrap();
    h.a.conn_mut(ca).unwrap().send(b"early").unwrap();
    let limit = h.now + Duration::from_secs(2);
    h.run(limit, |_| false);
    let mut before = Vec::new();
    drain(&mut h.b, h.now, &mut before);
    assert!(
        matches!(before.as_slice(), [(_, Event::Incoming { port: 7 })]),
        "{before:?}"
    );
    let cb = h.b.accept(7).unwrap();
    assert_eq!(h.b.poll_event(), Some(Event::Readable(cb)));
    assert_eq!(h.b.poll_event(), None);
}
