//! RFC 2883: D-SACK, the receiver's report of duplicate data (§4), with
//! `TcpConfig::dsack`. The FreeBSD packetdrill suite's `rcv-data-segments/overlapping-*`
//! scripts fix which range FreeBSD reports; their expectations are the table below.

use ackclock_tcp::{AckPolicy, OptionLayout, TcpConfig};
use ackclock_testkit::peer::*;

/// The FreeBSD profile the packetdrill interpreter uses (INTERPRETER.md §9): SACK,
/// timestamps and window scaling offered (the scripts' peer offers only SACK), 65700-byte
/// receive buffer, D-SACK, ACK every second segment of any size, 40 ms delayed ACK.
fn profile_f() -> TcpConfig {
    TcpConfig {
        mss: 1460,
        recv_buffer_bytes: 65700,
        send_buffer_bytes: 32768,
        sack: true,
        dsack: true,
        timestamps: true,
        window_scale: true,
        window_scale_shift: Some(6),
        option_layout: OptionLayout::FreeBsd,
        ack: AckPolicy {
            segments_per_ack: 2,
            delayed_ack: ms(40),
            count_small_segments: true,
            ..AckPolicy::default()
        },
        ..TcpConfig::newreno()
    }
}

/// A connection accepted from a peer offering MSS 1460 and SACK (`timestamps` too when
/// asked), with `cfg`.
fn accepted(cfg: TcpConfig, timestamps: bool) -> Peer {
    let (p, synack) = Peer::passive(cfg, syn_opts(Some(1460), None, true, timestamps));
    assert!(synack.opts.sack_permitted);
    p
}

/// The peer sends the bytes `[start, end)` of its stream, numbered as in the scripts
/// (byte 1 is the first after its SYN); returns what the engine sends at once.
fn seg(p: &mut Peer, start: u32, end: u32) -> Vec<Seg> {
    let o = p
        .out(ACK)
        .seq(PEER_ISS.wrapping_add(start))
        .payload(&data((end - start) as usize));
    p.inject(&o)
}

/// One pure ACK with this acknowledgment (script numbering), window and SACK blocks.
fn expect_ack(out: &[Seg], ack: u32, win: u16, blocks: &[(u32, u32)], what: &str) {
    assert_eq!(out.len(), 1, "{what}: {out:?}");
    let s = &out[0];
    assert!(s.is_pure_ack(), "{what}: {s:?}");
    assert_eq!(s.ack, PEER_ISS.wrapping_add(ack), "{what}: ack");
    assert_eq!(s.window, win, "{what}: window");
    let want: Vec<(u32, u32)> = blocks
        .iter()
        .map(|&(l, r)| (PEER_ISS.wrapping_add(l), PEER_ISS.wrapping_add(r)))
        .collect();
    assert_eq!(s.sack(), want, "{what}: SACK blocks");
}

/// `rcv-data-segments/overlapping-*.pkt`: after 1:100, 200:300, 400:500 and 600:700, the
/// segment `seg` arrives; then 1:800. Each row is the script's name, that segment, and the
/// ACK each draws: acknowledgment, window, SACK blocks (script numbering).
type Ack = (u32, u16, &'static [(u32, u32)]);
const OVERLAPPING: &[(&str, (u32, u32), Ack, Ack)] = &[
    (
        "overlapping-050-075.pkt",
        (50, 75),
        (100, 65535, &[(50, 75), (600, 700), (400, 500), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-050-150.pkt",
        (50, 150),
        (150, 65535, &[(50, 100), (600, 700), (400, 500), (200, 300)]),
        (800, 64901, &[(1, 150)]),
    ),
    (
        "overlapping-050-275.pkt",
        (50, 275),
        (300, 65401, &[(50, 100), (600, 700), (400, 500)]),
        (800, 64901, &[(1, 300)]),
    ),
    (
        "overlapping-050-350.pkt",
        (50, 350),
        (350, 65351, &[(50, 100), (600, 700), (400, 500)]),
        (800, 64901, &[(1, 350)]),
    ),
    (
        "overlapping-050-475.pkt",
        (50, 475),
        (500, 65201, &[(50, 100), (600, 700)]),
        (800, 64901, &[(1, 500)]),
    ),
    (
        "overlapping-050-550.pkt",
        (50, 550),
        (550, 65151, &[(50, 100), (600, 700)]),
        (800, 64901, &[(1, 550)]),
    ),
    (
        "overlapping-050-675.pkt",
        (50, 675),
        (700, 65001, &[(50, 100)]),
        (800, 64901, &[(1, 700)]),
    ),
    (
        "overlapping-100-200.pkt",
        (100, 200),
        (300, 65401, &[(600, 700), (400, 500)]),
        (800, 64901, &[(1, 300)]),
    ),
    (
        "overlapping-100-300.pkt",
        (100, 300),
        (300, 65401, &[(200, 300), (600, 700), (400, 500)]),
        (800, 64901, &[(1, 300)]),
    ),
    (
        "overlapping-100-400.pkt",
        (100, 400),
        (500, 65201, &[(200, 300), (600, 700)]),
        (800, 64901, &[(1, 500)]),
    ),
    (
        "overlapping-100-500.pkt",
        (100, 500),
        (500, 65201, &[(200, 300), (600, 700)]),
        (800, 64901, &[(1, 500)]),
    ),
    (
        "overlapping-100-600.pkt",
        (100, 600),
        (700, 65001, &[(200, 300)]),
        (800, 64901, &[(1, 700)]),
    ),
    (
        "overlapping-100-700.pkt",
        (100, 700),
        (700, 65001, &[(200, 300)]),
        (800, 64901, &[(1, 700)]),
    ),
    (
        "overlapping-150-200.pkt",
        (150, 200),
        (100, 65535, &[(150, 300), (600, 700), (400, 500)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-150-300.pkt",
        (150, 300),
        (
            100,
            65535,
            &[(200, 300), (150, 300), (600, 700), (400, 500)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-150-400.pkt",
        (150, 400),
        (100, 65535, &[(200, 300), (150, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-150-500.pkt",
        (150, 500),
        (100, 65535, &[(200, 300), (150, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-150-600.pkt",
        (150, 600),
        (100, 65535, &[(200, 300), (150, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-150-700.pkt",
        (150, 700),
        (100, 65535, &[(200, 300), (150, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-200-300.pkt",
        (200, 300),
        (
            100,
            65535,
            &[(200, 300), (200, 300), (600, 700), (400, 500)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-200-350.pkt",
        (200, 350),
        (
            100,
            65535,
            &[(200, 300), (200, 350), (600, 700), (400, 500)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-200-475.pkt",
        (200, 475),
        (100, 65535, &[(200, 300), (200, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-200-550.pkt",
        (200, 550),
        (100, 65535, &[(200, 300), (200, 550), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-200-675.pkt",
        (200, 675),
        (100, 65535, &[(200, 300), (200, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-250-275.pkt",
        (250, 275),
        (
            100,
            65535,
            &[(250, 275), (200, 300), (600, 700), (400, 500)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-250-350.pkt",
        (250, 350),
        (
            100,
            65535,
            &[(250, 300), (200, 350), (600, 700), (400, 500)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-250-475.pkt",
        (250, 475),
        (100, 65535, &[(250, 300), (200, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-250-550.pkt",
        (250, 550),
        (100, 65535, &[(250, 300), (200, 550), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-250-675.pkt",
        (250, 675),
        (100, 65535, &[(250, 300), (200, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-300-400.pkt",
        (300, 400),
        (100, 65535, &[(200, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-300-500.pkt",
        (300, 500),
        (100, 65535, &[(400, 500), (200, 500), (600, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-300-600.pkt",
        (300, 600),
        (100, 65535, &[(400, 500), (200, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-300-700.pkt",
        (300, 700),
        (100, 65535, &[(400, 500), (200, 700)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-350-400.pkt",
        (350, 400),
        (100, 65535, &[(350, 500), (600, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-350-500.pkt",
        (350, 500),
        (
            100,
            65535,
            &[(400, 500), (350, 500), (600, 700), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-350-600.pkt",
        (350, 600),
        (100, 65535, &[(400, 500), (350, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-350-700.pkt",
        (350, 700),
        (100, 65535, &[(400, 500), (350, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-400-500.pkt",
        (400, 500),
        (
            100,
            65535,
            &[(400, 500), (400, 500), (600, 700), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-400-600.pkt",
        (400, 600),
        (100, 65535, &[(400, 500), (400, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-400-700.pkt",
        (400, 700),
        (100, 65535, &[(400, 500), (400, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-450-475.pkt",
        (450, 475),
        (
            100,
            65535,
            &[(450, 475), (400, 500), (600, 700), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-450-550.pkt",
        (450, 550),
        (
            100,
            65535,
            &[(450, 500), (400, 550), (600, 700), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-450-675.pkt",
        (450, 675),
        (100, 65535, &[(450, 500), (400, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-500-600.pkt",
        (500, 600),
        (100, 65535, &[(400, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-500-700.pkt",
        (500, 700),
        (100, 65535, &[(600, 700), (400, 700), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-550-600.pkt",
        (550, 600),
        (100, 65535, &[(550, 700), (400, 500), (200, 300)]),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-550-700.pkt",
        (550, 700),
        (
            100,
            65535,
            &[(600, 700), (550, 700), (400, 500), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-600-700.pkt",
        (600, 700),
        (
            100,
            65535,
            &[(600, 700), (600, 700), (400, 500), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
    (
        "overlapping-650-675.pkt",
        (650, 675),
        (
            100,
            65535,
            &[(650, 675), (600, 700), (400, 500), (200, 300)],
        ),
        (800, 64901, &[(1, 100)]),
    ),
];

#[test]
fn rfc2883_4_freebsd_overlapping_scripts() {
    for &(name, (start, end), (ack, win, blocks), (ack2, win2, blocks2)) in OVERLAPPING {
        let mut p = accepted(profile_f(), false);
        // In order, the first of two: no ACK yet.
        assert!(seg(&mut p, 1, 100).is_empty(), "{name}");
        assert_eq!(p.conn().recv_available(), 99);
        // Three islands, each acknowledged at once with the newest block first.
        let out = seg(&mut p, 200, 300);
        expect_ack(&out, 100, 65535, &[(200, 300)], name);
        let out = seg(&mut p, 400, 500);
        expect_ack(&out, 100, 65535, &[(400, 500), (200, 300)], name);
        let out = seg(&mut p, 600, 700);
        expect_ack(
            &out,
            100,
            65535,
            &[(600, 700), (400, 500), (200, 300)],
            name,
        );
        // The overlapping segment: its first duplicate range first.
        let out = seg(&mut p, start, end);
        expect_ack(&out, ack, win, blocks, &format!("{name}: {start}:{end}"));
        // Everything again: the part below RCV.NXT is the duplicate reported.
        let out = seg(&mut p, 1, 800);
        expect_ack(&out, ack2, win2, blocks2, &format!("{name}: 1:800"));
        let mut buf = [0u8; 1024];
        assert_eq!(p.conn_mut().recv(&mut buf), Ok(799), "{name}");
        // The FIN's ACK repeats no D-SACK block.
        p.now += ms(100);
        p.snd_nxt = PEER_ISS + 800;
        let out = p.send_fin();
        expect_ack(&out, 801, 65535, &[], &format!("{name}: FIN"));
    }
}

#[test]
fn rfc2883_4_duplicate_below_rcv_nxt_is_the_first_block_and_acked_at_once() {
    let mut p = accepted(profile_f(), false);
    assert!(seg(&mut p, 1, 101).is_empty());
    // Wholly old (out of window to the left): D-SACK of the whole segment.
    let out = seg(&mut p, 1, 101);
    expect_ack(&out, 101, 65535, &[(1, 101)], "whole duplicate");
    // Partly old, partly new, nothing held out of order: the old part, and the ACK goes at
    // once although one in-order segment would otherwise wait for the delayed-ACK timer.
    assert!(seg(&mut p, 101, 201).is_empty());
    let out = seg(&mut p, 151, 251);
    expect_ack(&out, 251, 65450, &[(151, 201)], "partial duplicate");
}

#[test]
fn rfc2883_4_duplicate_of_held_data_is_followed_by_the_block_containing_it() {
    // RFC 2883 §4 (and its example 4.1.2): the D-SACK block, then the SACK block that
    // holds the duplicated data, then the other blocks most recent first.
    let mut p = accepted(profile_f(), false);
    assert!(seg(&mut p, 1, 101).is_empty());
    seg(&mut p, 201, 301);
    seg(&mut p, 401, 501);
    let out = seg(&mut p, 201, 301);
    expect_ack(
        &out,
        101,
        65535,
        &[(201, 301), (201, 301), (401, 501)],
        "identical retransmission",
    );
    let out = seg(&mut p, 451, 551);
    expect_ack(
        &out,
        101,
        65535,
        &[(451, 501), (401, 551), (201, 301)],
        "overlap at the end",
    );
}

#[test]
fn rfc2883_4_dsack_block_is_sent_once() {
    let mut p = accepted(profile_f(), false);
    assert!(seg(&mut p, 1, 101).is_empty());
    let out = seg(&mut p, 1, 101);
    expect_ack(&out, 101, 65535, &[(1, 101)], "duplicate");
    // The next ACK (two more in-order segments) carries no SACK option at all.
    assert!(seg(&mut p, 101, 201).is_empty());
    let out = seg(&mut p, 201, 301);
    expect_ack(&out, 301, 65400, &[], "next ACK");
}

#[test]
fn rfc2883_4_with_timestamps_at_most_three_blocks_in_all() {
    // RFC 2018 §3: with timestamps, room for three blocks; the D-SACK block is one of them.
    let mut p = accepted(profile_f(), true);
    p.ts = true;
    let b = p.snd_nxt;
    let send = |p: &mut Peer, off: u32, len: usize| {
        let o = p.out(ACK).seq(b.wrapping_add(off)).payload(&data(len));
        p.inject(&o)
    };
    send(&mut p, 100, 100);
    send(&mut p, 300, 100);
    send(&mut p, 500, 100);
    let out = send(&mut p, 300, 100);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].opts.timestamps.is_some());
    let at = |o: u32| b.wrapping_add(o);
    assert_eq!(
        out[0].sack(),
        vec![(at(300), at(400)), (at(300), at(400)), (at(500), at(600))]
    );
}

#[test]
fn rfc2883_4_dsack_of_a_segment_rejected_by_paws() {
    // RFC 7323 §5.3 drops a segment with an old timestamp and acknowledges it; its data
    // below RCV.NXT is a duplicate all the same.
    let mut p = accepted(profile_f(), true);
    p.ts = true;
    let b = p.snd_nxt;
    p.now += ms(10);
    p.send_data(&data(100));
    let o = p.out(ACK).seq(b).payload(&data(100)).tsval(PEER_TS_BASE);
    let out = p.inject(&o);
    assert_eq!(p.conn().stats().paws_drops, 1);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].sack(), vec![(b, b.wrapping_add(100))]);
}

#[test]
fn rfc2883_4_dsack_rides_on_data_within_the_segment_size() {
    // An ACK due while data waits rides on the data segment: the D-SACK block too, and the
    // segment's payload shrinks to leave it room (RFC 9293 §3.7.1).
    let cfg = TcpConfig {
        nagle: false,
        ..profile_f()
    };
    let mut p = accepted(cfg, false);
    assert!(seg(&mut p, 1, 101).is_empty());
    // One segment fits the initial window; the second waits for its ACK.
    let out = p.app_send(&data(2920));
    assert_eq!(out.len(), 1, "{out:?}");
    p.absorb(&out);
    // The ACK comes on a segment resending 50 old bytes with 50 new ones: acceptable, so
    // its ACK opens the window, and the D-SACK block rides on the next data segment.
    let o = p.out(ACK).seq(PEER_ISS + 51).payload(&data(100));
    let out = p.inject(&o);
    assert!(!out.is_empty());
    let first = &out[0];
    assert_eq!(first.payload.len(), 1460 - 12, "{first:?}");
    assert_eq!(first.ack, PEER_ISS + 151);
    assert_eq!(first.sack(), vec![(PEER_ISS + 51, PEER_ISS + 101)]);
    for s in &out[1..] {
        assert!(s.sack().is_empty(), "sent once: {s:?}");
    }
}

#[test]
fn rfc2883_dsack_is_off_by_default_and_needs_sack() {
    // Default: a duplicate draws a plain ACK.
    assert!(!TcpConfig::default().dsack);
    let cfg = TcpConfig {
        dsack: false,
        ..profile_f()
    };
    let mut p = accepted(cfg, false);
    assert!(seg(&mut p, 1, 101).is_empty());
    let out = seg(&mut p, 1, 101);
    expect_ack(&out, 101, 65535, &[], "no D-SACK by default");
    seg(&mut p, 201, 301);
    let out = seg(&mut p, 201, 301);
    expect_ack(&out, 101, 65535, &[(201, 301)], "the usual blocks only");
    // Configured, but the peer did not offer SACK: no SACK option at all.
    let (mut p, _) = Peer::passive(profile_f(), syn_opts(Some(1460), None, false, false));
    assert!(seg(&mut p, 1, 101).is_empty());
    let out = seg(&mut p, 1, 101);
    expect_ack(&out, 101, 65535, &[], "SACK not negotiated");
}
