//! `TcpConfig::option_layout`: the order and padding of the options on every segment the
//! engine writes (RFC 9293 §3.1 allows any; FreeBSD's `tcp_addoptions()` and Linux's
//! `tcp_options_write` differ, and packetdrill compares them byte for byte).

use ackclock_tcp::{OptionLayout, TcpConfig};
use ackclock_testkit::peer::*;
use ackclock_wire::parse_ipv4_tcp;

fn freebsd(cfg: TcpConfig) -> TcpConfig {
    TcpConfig {
        option_layout: OptionLayout::FreeBsd,
        ..cfg
    }
}

/// What the endpoint sends now, as raw packets.
fn raw_out(p: &mut Peer) -> Vec<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    let mut v = Vec::new();
    while let Some(t) = p.ep.poll_transmit(p.now, &mut buf) {
        v.push(buf[..t.len].to_vec());
    }
    v
}

/// The options area of a packet, as sent.
fn options(pkt: &[u8]) -> Vec<u8> {
    parse_ipv4_tcp(pkt)
        .expect("valid packet")
        .tcp
        .options_bytes()
        .to_vec()
}

/// The engine connects with `cfg`; returns the raw SYN.
fn syn_of(cfg: TcpConfig) -> Vec<u8> {
    let mut p = Peer::new();
    p.ep.connect_from_port(p.now, CLIENT_PORT, p.me, cfg)
        .expect("connect");
    let out = raw_out(&mut p);
    assert_eq!(out.len(), 1);
    out[0].clone()
}

/// The engine listens with `cfg`; the peer's SYN offers MSS 1460 and SACK; returns the raw
/// SYN-ACK.
fn synack_of(cfg: TcpConfig) -> Vec<u8> {
    let mut p = Peer::new();
    p.ep.listen(SERVER_PORT, cfg, 4).unwrap();
    let syn = p
        .out(SYN)
        .opts(syn_opts(Some(1460), None, true, false))
        .bytes();
    p.ep.handle_packet(p.now, &syn);
    let out = raw_out(&mut p);
    assert_eq!(out.len(), 1);
    out[0].clone()
}

#[test]
fn freebsd_layout_syn_is_mss_nop_wscale_sackok_ts() {
    let cfg = freebsd(TcpConfig::sack());
    let o = options(&syn_of(cfg));
    // 128 KiB buffer: shift 2. TSval is whatever the clock says.
    assert_eq!(o.len(), 20, "{o:?}");
    assert_eq!(&o[..12], &[2, 4, 0x05, 0xb4, 1, 3, 3, 2, 4, 2, 8, 10]);
    assert_eq!(&o[16..], &[0, 0, 0, 0], "TSecr of a SYN is 0");
}

#[test]
fn linux_layout_is_the_default_syn_mss_sackok_ts_nop_wscale() {
    assert_eq!(TcpConfig::default().option_layout, OptionLayout::Linux);
    let o = options(&syn_of(TcpConfig::sack()));
    assert_eq!(o.len(), 20, "{o:?}");
    assert_eq!(&o[..6], &[2, 4, 0x05, 0xb4, 4, 2]);
    assert_eq!(&o[6..8], &[8, 10]);
    assert_eq!(&o[16..], &[1, 3, 3, 2]);
}

#[test]
fn freebsd_layout_synack_answering_mss_and_sackok_is_mss_sackok_eol_eol() {
    // RFC 2018 §2 / RFC 7323 §1.3: the SYN-ACK answers only what the SYN offered (here MSS
    // and SACK-permitted), in FreeBSD's order, padded with EOL.
    let o = options(&synack_of(freebsd(TcpConfig::sack())));
    assert_eq!(o, [2, 4, 0x05, 0xb4, 4, 2, 0, 0]);
    // Linux pads the same set with NOPs before SACK-permitted.
    let o = options(&synack_of(TcpConfig::sack()));
    assert_eq!(o, [2, 4, 0x05, 0xb4, 1, 1, 4, 2]);
}

#[test]
fn freebsd_layout_sack_blocks_on_acks_and_data_are_nop_nop_sack() {
    let cfg = TcpConfig {
        nagle: false,
        ..freebsd(TcpConfig::sack())
    };
    let (mut p, _) = Peer::passive(cfg, syn_opts(Some(1460), None, true, false));
    // A hole: the immediate ACK carries one SACK block (RFC 2018 §4).
    let base = p.snd_nxt;
    let o = p
        .out(ACK)
        .seq(base.wrapping_add(100))
        .payload(&data(100))
        .bytes();
    p.ep.handle_packet(p.now, &o);
    let out = raw_out(&mut p);
    assert_eq!(out.len(), 1);
    let left = base.wrapping_add(100).to_be_bytes();
    let right = base.wrapping_add(200).to_be_bytes();
    let mut want = vec![1, 1, 5, 10];
    want.extend_from_slice(&left);
    want.extend_from_slice(&right);
    assert_eq!(options(&out[0]), want);
    // Data sent while the hole is open carries the same option.
    p.conn_mut().send(b"hello").unwrap();
    let out = raw_out(&mut p);
    assert_eq!(out.len(), 1);
    let s = parse(&out[0]);
    assert_eq!(s.payload, b"hello");
    assert_eq!(options(&out[0]), want);
}

#[test]
fn freebsd_layout_segments_without_options_or_with_timestamps_only_are_unchanged() {
    // The template path: `nop, nop, TS` in every layout, no options without timestamps.
    let (mut p, _) = Peer::passive(
        freebsd(TcpConfig::sack()),
        syn_opts(Some(1460), None, true, true),
    );
    p.conn_mut().send(b"x").unwrap();
    let out = raw_out(&mut p);
    assert_eq!(out.len(), 1);
    assert_eq!(&options(&out[0])[..4], &[1, 1, 8, 10]);
    assert_eq!(options(&out[0]).len(), 12);
    let (mut p, _) = Peer::passive(
        freebsd(TcpConfig::newreno()),
        syn_opts(Some(1460), None, false, false),
    );
    p.conn_mut().send(b"x").unwrap();
    let out = raw_out(&mut p);
    assert!(options(&out[0]).is_empty());
}
