//! The user interface of RFC 9293 §3.9.1 / §3.10 driven wrongly: SEND after CLOSE, RECEIVE
//! after ABORT, ABORT itself, calls in states where they make no sense.

use ackclock_tcp::{CloseError, ConnectionError, RecvError, SendError, State, TcpConfig};
use ackclock_testkit::peer::*;

#[test]
fn rfc9293_3_10_2_send_after_close_is_not_open_for_sending() {
    // ESTABLISHED -> close -> FIN-WAIT-1.
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    assert_eq!(p.conn_mut().send(b"late"), Err(SendError::Closed));
    let fin = p.drain();
    assert!(
        fin.iter().all(|s| s.payload.is_empty()),
        "no data after the FIN: {fin:?}"
    );
    // CLOSE-WAIT -> close -> LAST-ACK.
    let mut p = Peer::established(TcpConfig::newreno());
    p.send_fin();
    p.conn_mut().close().unwrap();
    assert_eq!(p.state(), State::LastAck);
    assert_eq!(p.conn_mut().send(b"late"), Err(SendError::Closed));
    // TIME-WAIT.
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    p.send_fin();
    assert_eq!(p.state(), State::TimeWait);
    assert_eq!(p.conn_mut().send(b"late"), Err(SendError::Closed));
}

#[test]
fn rfc9293_3_10_2_send_in_syn_sent_is_queued_until_established() {
    let (mut p, _) = Peer::connect(cfg_unlimited());
    assert_eq!(p.conn_mut().send(b"early"), Ok(5));
    assert!(p.drain().is_empty(), "no data before the handshake");
    let out = p.send_synack(syn_opts(Some(1460), None, false, false));
    let data: Vec<u8> = out.iter().flat_map(|s| s.payload.clone()).collect();
    assert_eq!(data, b"early");
}

#[test]
fn rfc9293_3_10_3_recv_before_data_would_block() {
    let (mut p, _) = Peer::connect(TcpConfig::newreno());
    let mut b = [0u8; 4];
    assert_eq!(p.conn_mut().recv(&mut b), Err(RecvError::WouldBlock));
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.conn_mut().recv(&mut b), Err(RecvError::WouldBlock));
}

#[test]
fn rfc9293_3_10_5_abort_sends_rst() {
    let mut p = Peer::established(cfg_unlimited());
    let out = p.app_send(&data(500));
    p.absorb(&out);
    // Queued, unsent data is discarded by ABORT.
    p.conn_mut().send(&data(100)).unwrap();
    let (_, nxt, _) = p.engine_snd();
    p.conn_mut().abort();
    let out = p.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    // <SEQ=SND.NXT><CTL=RST>
    assert!(out[0].has(RST), "{:?}", out[0]);
    assert_eq!(out[0].seq, nxt);
    assert!(out[0].payload.is_empty());
    assert_eq!(p.state(), State::Closed);
    assert!(p.advance(secs(100)).is_empty(), "nothing after the RST");
}

#[test]
fn rfc9293_3_10_5_abort_through_the_endpoint_sends_rst_and_releases() {
    let mut p = Peer::established(TcpConfig::newreno());
    let id = p.id.unwrap();
    let (_, nxt, _) = p.engine_snd();
    p.ep.abort(id);
    let out = p.drain();
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].has(RST));
    assert_eq!(out[0].seq, nxt);
    assert!(
        p.ep.conn(id).is_none(),
        "the aborted connection is released"
    );
    assert_eq!(p.ep.close(id), Err(CloseError::NoSuchConnection));
}

#[test]
fn rfc9293_3_10_5_recv_and_send_on_an_aborted_connection_error() {
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().abort();
    let mut b = [0u8; 8];
    let r = p.conn_mut().recv(&mut b);
    assert!(r.is_err(), "recv after abort: {r:?}");
    assert_ne!(r, Err(RecvError::WouldBlock), "would block forever");
    assert_eq!(r, Err(RecvError::Lost(ConnectionError::Aborted)));
    assert_eq!(
        p.conn_mut().send(b"x"),
        Err(SendError::Lost(ConnectionError::Aborted))
    );
    assert!(p.conn_mut().close().is_err());
}

#[test]
fn rfc9293_3_10_5_abort_in_syn_sent_sends_no_rst() {
    // "SYN-SENT STATE: All queued SENDs and RECEIVEs should be given 'reset' responses,
    // delete the TCB" -- the peer knows nothing of us.
    let (mut p, _) = Peer::connect(TcpConfig::newreno());
    p.conn_mut().abort();
    assert!(p.drain().is_empty());
    assert_eq!(p.state(), State::Closed);
    assert!(
        p.advance(secs(10)).is_empty(),
        "no SYN retransmission after abort"
    );
}

#[test]
fn rfc9293_3_10_4_close_of_a_closed_connection_is_an_error() {
    let mut p = Peer::established(TcpConfig::newreno());
    let o = p.out(RST);
    p.inject(&o);
    assert_eq!(p.state(), State::Closed);
    assert_eq!(
        p.conn_mut().close(),
        Err(CloseError::Lost(ConnectionError::Reset))
    );
    let mut p = Peer::established(TcpConfig::newreno());
    p.conn_mut().close().unwrap();
    let fin = p.drain();
    p.absorb(&fin);
    p.send_ack();
    // A second close while closing is accepted ("ok" is acceptable) and sends nothing.
    assert_eq!(p.conn_mut().close(), Ok(()));
    assert!(p.drain().is_empty());
}

#[test]
fn rfc9293_3_10_7_4_stale_handle_finds_nothing_after_removal() {
    let mut p = Peer::established(TcpConfig::newreno());
    let id = p.id.unwrap();
    assert!(p.ep.remove(id).is_some());
    assert!(p.ep.conn(id).is_none());
    assert!(p.ep.remove(id).is_none());
    // The 4-tuple is free again: a segment for it draws a RST as for no connection.
    let out = p.send_data(b"x");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].flags, RST);
}
