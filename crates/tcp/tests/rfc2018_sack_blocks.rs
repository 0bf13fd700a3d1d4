//! RFC 2018: SACK-permitted negotiation (§2) and the receiver's SACK blocks (§3, §4).

use ackclock_tcp::TcpConfig;
use ackclock_testkit::peer::*;

fn sack_cfg(ts: bool) -> TcpConfig {
    TcpConfig {
        sack: true,
        timestamps: ts,
        ..cfg_unlimited()
    }
}

/// Established with SACK (and optionally timestamps) negotiated.
fn sack_peer(ts: bool) -> Peer {
    let (p, synack) = Peer::passive(sack_cfg(ts), syn_opts(Some(1460), None, true, ts));
    assert!(synack.opts.sack_permitted);
    assert!(p.conn().stats().sack_enabled);
    p
}

/// The peer sends `len` bytes at `off` bytes past its SND.NXT (leaving holes); returns the
/// engine's immediate answer. Does not move SND.NXT.
fn send_at(p: &mut Peer, off: u32, len: usize) -> Vec<Seg> {
    let o = p
        .out(ACK)
        .seq(p.snd_nxt.wrapping_add(off))
        .payload(&data(len));
    p.inject(&o)
}

fn base(p: &Peer) -> u32 {
    p.snd_nxt
}

#[test]
fn rfc2018_2_sack_permitted_negotiation() {
    // Offered and configured: the SYN,ACK carries SACK-permitted.
    let (p, synack) = Peer::passive(sack_cfg(false), syn_opts(Some(1460), None, true, false));
    assert!(synack.opts.sack_permitted);
    assert!(p.conn().stats().sack_enabled);
    // Not offered: "MUST NOT be sent" on a SYN,ACK when the SYN did not carry it.
    let (p, synack) = Peer::passive(sack_cfg(false), syn_opts(Some(1460), None, false, false));
    assert!(!synack.opts.sack_permitted);
    assert!(!p.conn().stats().sack_enabled);
    // Offered but not configured.
    let (p, synack) = Peer::passive(cfg_unlimited(), syn_opts(Some(1460), None, true, false));
    assert!(!synack.opts.sack_permitted);
    assert!(!p.conn().stats().sack_enabled);
    // Active: our SYN offers it; enabled only if the SYN,ACK carries it too.
    let (mut p, syn) = Peer::connect(sack_cfg(false));
    assert!(syn.opts.sack_permitted);
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert!(!p.conn().stats().sack_enabled);
    let (mut p, _) = Peer::connect(sack_cfg(false));
    p.send_synack(syn_opts(Some(1460), None, true, false));
    assert!(p.conn().stats().sack_enabled);
}

#[test]
fn rfc2018_2_no_sack_blocks_unless_negotiated() {
    let (mut p, _) = Peer::passive(sack_cfg(false), syn_opts(Some(1460), None, false, false));
    let out = send_at(&mut p, 1000, 100);
    assert_eq!(out.len(), 1);
    assert!(out[0].opts.sack.is_empty(), "{:?}", out[0]);
}

#[test]
fn rfc2018_4_receiver_sends_sack_block_for_out_of_order_data() {
    let mut p = sack_peer(false);
    let b = base(&p);
    let out = send_at(&mut p, 1000, 500);
    assert_eq!(out.len(), 1, "immediate ACK for out-of-order data: {out:?}");
    assert_eq!(out[0].ack, b, "cumulative ACK stays at the hole");
    assert_eq!(out[0].sack(), vec![(b + 1000, b + 1500)]);
}

#[test]
fn rfc2018_4_first_block_covers_the_most_recently_received_segment() {
    let mut p = sack_peer(false);
    let b = base(&p);
    let o1 = send_at(&mut p, 1000, 100);
    assert_eq!(o1[0].sack(), vec![(b + 1000, b + 1100)]);
    let o2 = send_at(&mut p, 3000, 100);
    assert_eq!(
        o2[0].sack(),
        vec![(b + 3000, b + 3100), (b + 1000, b + 1100)]
    );
    let o3 = send_at(&mut p, 2000, 100);
    assert_eq!(
        o3[0].sack(),
        vec![
            (b + 2000, b + 2100),
            (b + 3000, b + 3100),
            (b + 1000, b + 1100)
        ],
        "most recent first, then the most recently reported"
    );
    // A segment extending an old block: that (merged) block comes first.
    let o4 = send_at(&mut p, 1100, 100);
    assert_eq!(
        o4[0].sack(),
        vec![
            (b + 1000, b + 1200),
            (b + 2000, b + 2100),
            (b + 3000, b + 3100)
        ]
    );
    // A segment joining two blocks: the joined block comes first.
    let o5 = send_at(&mut p, 2100, 900);
    assert_eq!(
        o5[0].sack(),
        vec![(b + 2000, b + 3100), (b + 1000, b + 1200)]
    );
}

#[test]
fn rfc2018_3_at_most_3_blocks_with_timestamps() {
    let mut p = sack_peer(true);
    assert!(p.ts);
    let b = base(&p);
    let mut last = Vec::new();
    for i in 1..=5u32 {
        last = send_at(&mut p, i * 1000, 100);
    }
    assert_eq!(last.len(), 1);
    let blocks = last[0].sack();
    assert_eq!(blocks.len(), 3, "{:?}", last[0]);
    assert!(last[0].opts.timestamps.is_some());
    assert_eq!(blocks[0], (b + 5000, b + 5100));
    assert_eq!(blocks[1], (b + 4000, b + 4100));
    assert_eq!(blocks[2], (b + 3000, b + 3100));
}

#[test]
fn rfc2018_3_at_most_4_blocks_without_timestamps() {
    let mut p = sack_peer(false);
    let b = base(&p);
    let mut last = Vec::new();
    for i in 1..=6u32 {
        last = send_at(&mut p, i * 1000, 100);
    }
    let blocks = last[0].sack();
    assert_eq!(blocks.len(), 4, "{:?}", last[0]);
    assert_eq!(blocks[0], (b + 6000, b + 6100));
    assert_eq!(blocks[1], (b + 5000, b + 5100));
    assert_eq!(blocks[2], (b + 4000, b + 4100));
    assert_eq!(blocks[3], (b + 3000, b + 3100));
}

#[test]
fn rfc2018_4_blocks_disappear_once_the_hole_fills() {
    let mut p = sack_peer(false);
    let b = base(&p);
    send_at(&mut p, 1000, 1000);
    send_at(&mut p, 3000, 1000);
    // Fill the first hole: the cumulative ACK jumps over the first block, which is no
    // longer reported; the other remains.
    let out = send_at(&mut p, 0, 1000);
    assert_eq!(out.len(), 1, "immediate ACK when a gap fills: {out:?}");
    assert_eq!(out[0].ack, b + 2000);
    assert_eq!(out[0].sack(), vec![(b + 3000, b + 4000)]);
    // Fill the second hole: no blocks left.
    let out = send_at(&mut p, 2000, 1000);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ack, b + 4000);
    assert!(out[0].opts.sack.is_empty(), "{:?}", out[0]);
    // Later ACKs carry none either.
    p.snd_nxt = b + 4000;
    p.send_data(&data(10));
    let out = p.advance(secs(1));
    assert!(out.iter().all(|(_, s)| s.opts.sack.is_empty()), "{out:?}");
}

#[test]
fn rfc2018_4_blocks_never_cover_data_below_the_cumulative_ack() {
    let mut p = sack_peer(true);
    let b = base(&p);
    send_at(&mut p, 500, 500);
    send_at(&mut p, 2000, 500);
    let out = send_at(&mut p, 0, 700);
    let ack = out[0].ack;
    assert_eq!(ack, b + 1000);
    for (l, r) in out[0].sack() {
        assert!(
            seq_lt(ack, l) && seq_lt(l, r),
            "block {l}..{r} with ack {ack}"
        );
    }
}

/// RFC 9293 §3.7.1: the data of a segment is limited so that data and TCP options together
/// fit Eff.snd.MSS + 20; SACK blocks riding on a data segment (a two-way transfer with loss
/// both ways) take room from the data, or the packet would exceed the path's MTU.
#[test]
fn rfc9293_3_7_1_sack_blocks_on_data_segments_shrink_the_data_not_grow_the_packet() {
    use ackclock_testkit::pair::{two_way_transfer, Dir, Harness, PipeConfig};
    use ackclock_wire::Duration;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    for ts in [false, true] {
        let cfg = TcpConfig {
            mss: 1460,
            send_buffer_bytes: 64 * 1024,
            recv_buffer_bytes: 64 * 1024,
            ..sack_cfg(ts)
        };
        let pipe = PipeConfig {
            loss: 0.03,
            ..PipeConfig::default()
        };
        let mut h = Harness::new(7, pipe);
        let largest = Arc::new(AtomicUsize::new(0));
        let with_data_and_sack = Arc::new(AtomicUsize::new(0));
        for dir in [Dir::AtoB, Dir::BtoA] {
            let (l, n) = (largest.clone(), with_data_and_sack.clone());
            h.set_filter(
                dir,
                Box::new(move |p| {
                    l.fetch_max(p.len, Ordering::Relaxed);
                    // 20 IP + 20 TCP + 12 timestamps at most without SACK blocks.
                    if p.payload_len > 0 && p.len - p.payload_len > 52 {
                        n.fetch_add(1, Ordering::Relaxed);
                    }
                    false
                }),
            );
        }
        let ab = ackclock_testkit::bytes(400_000, 1);
        let ba = ackclock_testkit::bytes(400_000, 2);
        let r = two_way_transfer(&mut h, cfg.clone(), cfg, &ab, &ba, Duration::from_secs(600));
        assert!(r.completed && r.a_got == ba && r.b_got == ab, "ts={ts}");
        assert!(
            with_data_and_sack.load(Ordering::Relaxed) > 0,
            "ts={ts}: no data segment carried SACK blocks; the test checks nothing"
        );
        assert!(
            largest.load(Ordering::Relaxed) <= 1500,
            "ts={ts}: a {}-byte packet with MSS 1460",
            largest.load(Ordering::Relaxed)
        );
    }
}

#[test]
fn rfc6675_needs_sack_so_a_peer_without_it_gets_rfc6582_recovery() {
    use ackclock_tcp::RecoveryAlgorithm;
    let cfg = TcpConfig {
        recovery: RecoveryAlgorithm::Sack,
        ..sack_cfg(false)
    };
    // RFC 6675 §1: its loss recovery is driven by the receiver's SACK blocks; a peer that
    // did not offer SACK-permitted gets NewReno (RFC 6582), passive or active.
    let (p, _) = Peer::passive(cfg.clone(), syn_opts(Some(1460), None, false, false));
    assert_eq!(p.conn().recovery_algorithm(), RecoveryAlgorithm::NewReno);
    let (mut p, _) = Peer::connect(cfg.clone());
    p.send_synack(syn_opts(Some(1460), None, false, false));
    assert_eq!(p.conn().recovery_algorithm(), RecoveryAlgorithm::NewReno);
    // Offered: RFC 6675 as configured.
    let (p, _) = Peer::passive(cfg, syn_opts(Some(1460), None, true, false));
    assert_eq!(p.conn().recovery_algorithm(), RecoveryAlgorithm::Sack);
}
