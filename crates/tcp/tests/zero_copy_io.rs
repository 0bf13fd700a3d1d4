//! `Connection::send_with` and `Connection::recv_with`: the application writes into the send
//! ring and reads the receive ring in place (smoltcp's closure form). A stream moved this
//! way over a lossy, reordering path arrives byte for byte; the end of the stream and the
//! states where sending is refused behave as `send` and `recv` do.

use ackclock_tcp::{ConnId, RecvError, SendError, TcpConfig};
use ackclock_testkit::pair::{Harness, PipeConfig};
use ackclock_wire::{Duration, Instant};

/// A produces its stream in place (byte i is `pattern(i)`), B checks it in place; neither
/// application has a buffer of its own.
#[test]
fn a_stream_written_and_read_in_place_arrives_byte_for_byte_through_loss_and_reordering() {
    let pipe = PipeConfig {
        loss: 0.02,
        reorder: 0.05,
        duplicate: 0.01,
        rate_bps: 20_000_000,
        ..PipeConfig::default()
    };
    let mut h = Harness::new(11, pipe);
    let mut cfg = TcpConfig::newreno();
    cfg.send_buffer_bytes = 10_000; // Not a multiple of the MSS: writes wrap mid-segment.
    cfg.recv_buffer_bytes = 7_000;
    let total = 600_000usize;
    let pattern = |i: usize| (i % 251) as u8;
    let ca = h.open(9, cfg.clone(), cfg);
    let (mut produced, mut checked) = (0usize, 0usize);
    let mut cb: Option<ConnId> = None;
    let (mut short_lends, mut eof) = (0u32, false);
    let mut closed = false;
    let limit = Instant::ZERO + Duration::from_secs(600);
    h.run(limit, |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            while produced < total {
                let (n, lent) = c
                    .send_with(|buf| {
                        let n = buf.len().min(total - produced);
                        for (k, b) in buf[..n].iter_mut().enumerate() {
                            *b = pattern(produced + k);
                        }
                        (n, (n, buf.len()))
                    })
                    .unwrap();
                if lent < c.send_capacity() + n {
                    short_lends += 1; // The free space wrapped: the rest comes next call.
                }
                produced += n;
                if n == 0 {
                    break;
                }
            }
            if produced == total && !closed && c.is_established() {
                h.a.close(ca).unwrap();
                closed = true;
            }
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            loop {
                match c.recv_with(|data| {
                    for (k, &b) in data.iter().enumerate() {
                        assert_eq!(b, pattern(checked + k), "byte {}", checked + k);
                    }
                    (data.len(), data.len())
                }) {
                    Ok(0) => {
                        eof = c.is_eof();
                        break;
                    }
                    Ok(n) => checked += n,
                    Err(RecvError::WouldBlock) => break,
                    Err(e) => panic!("recv_with: {e:?}"),
                }
            }
        }
        eof
    });
    assert_eq!(checked, total);
    assert!(eof);
    assert!(short_lends > 0, "the send ring never wrapped under a write");
    let st = h.pipe_stats(ackclock_testkit::pair::Dir::AtoB);
    assert!(st.dropped_random > 0 && st.reordered > 0, "{st:?}");
}

/// A NewReno connection from A to B's port 9, established, with the accepted handle and a
/// 10 s limit for the test's own runs.
fn established(seed: u64) -> (Harness, ConnId, ConnId, Instant) {
    let mut h = Harness::new(seed, PipeConfig::default());
    let ca = h.open(9, TcpConfig::newreno(), TcpConfig::newreno());
    let limit = Instant::ZERO + Duration::from_secs(10);
    let mut cb = None;
    h.run(limit, |h| {
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        cb.is_some() && h.a.conn(ca).is_some_and(|c| c.is_established())
    });
    (h, ca, cb.expect("handshake"), limit)
}

/// `recv_with` leaves what the closure does not consume for the next read, and the
/// closure's count is clamped to what it was lent.
#[test]
fn recv_with_keeps_what_the_closure_leaves_and_clamps_an_overclaim() {
    let (mut h, ca, cb, limit) = established(12);
    h.a.conn_mut(ca).unwrap().send(b"hello, world").unwrap();
    h.run(limit, |h| h.b.conn(cb).unwrap().recv_available() == 12);
    let c = h.b.conn_mut(cb).unwrap();
    let first = c.recv_with(|d| (5, d[..5].to_vec())).unwrap();
    assert_eq!(first, b"hello");
    assert_eq!(c.recv_available(), 7);
    let rest = c.recv_with(|d| (usize::MAX, d.to_vec())).unwrap();
    assert_eq!(rest, b", world");
    assert_eq!(c.recv_available(), 0);
    assert_eq!(c.recv_with(|_| (0, ())), Err(RecvError::WouldBlock));
}

/// RFC 9293 §3.10.2: after CLOSE no more data may be queued (`send_with` refuses without
/// calling the closure); §3.10.3: once the peer's FIN is read, receiving returns the end
/// of the stream (`recv_with` lends an empty slice, as `recv` returns 0).
#[test]
fn rfc9293_3_10_send_with_after_close_is_refused_and_recv_with_sees_the_end_of_the_stream() {
    let (mut h, ca, cb, limit) = established(13);
    h.a.close(ca).unwrap();
    let mut called = false;
    let r = h.a.conn_mut(ca).unwrap().send_with(|_| {
        called = true;
        (0, ())
    });
    assert_eq!(r, Err(SendError::Closed));
    assert!(!called);
    h.run(limit, |h| h.b.conn(cb).unwrap().is_eof());
    let lent = h.b.conn_mut(cb).unwrap().recv_with(|d| (0, d.len()));
    assert_eq!(lent, Ok(0));
}
