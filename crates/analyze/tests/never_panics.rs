//! No input panics the analyzer: random files, random pcaps of random segments.

use ackclock_analyze::{analyze, figures, report, Analyzer};
use ackclock_wire::pcap::PcapWriter;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    write_ipv4_tcp, Instant, Ipv4Header, SackBlock, SackBlocks, TcpFlags, TcpHeader, TcpOptions,
    IPPROTO_TCP,
};
use core::net::Ipv4Addr;
use proptest::prelude::*;

/// A segment from a small space (two hosts, two ports each) so that connections, wraps,
/// duplicates and SACK blocks collide often.
#[derive(Debug, Clone)]
struct Seg {
    dt_us: u32,
    from_a: bool,
    port: u16,
    seq: u32,
    ack: u32,
    flags: u16,
    window: u16,
    len: u16,
    ws: Option<u8>,
    ts: Option<(u32, u32)>,
    sack: Vec<(u32, u32)>,
}

fn seg() -> impl Strategy<Value = Seg> {
    (
        (0u32..200_000, any::<bool>(), 1u16..3),
        (
            prop_oneof![0u32..5000, any::<u32>()],
            prop_oneof![0u32..5000, any::<u32>()],
        ),
        (
            any::<u16>(),
            prop_oneof![Just(0u16), any::<u16>()],
            0u16..1400,
        ),
        (
            proptest::option::of(0u8..20),
            proptest::option::of((0u32..50, 0u32..50)),
            proptest::collection::vec((0u32..6000, 0u32..6000), 0..4),
        ),
    )
        .prop_map(
            |((dt_us, from_a, port), (seq, ack), (flags, window, len), (ws, ts, sack))| Seg {
                dt_us,
                from_a,
                port,
                seq,
                ack,
                flags: flags & 0x1ff,
                window,
                len,
                ws,
                ts,
                sack,
            },
        )
}

fn packet(s: &Seg) -> Vec<u8> {
    let (a, b) = (Ipv4Addr::new(198, 18, 0, 1), Ipv4Addr::new(198, 18, 0, 2));
    let (src, dst, sp, dp) = if s.from_a {
        (a, b, 40000 + s.port, 5001)
    } else {
        (b, a, 5001, 40000 + s.port)
    };
    let mut sack = SackBlocks::new();
    for &(l, r) in s.sack.iter().take(if s.ts.is_some() { 3 } else { 4 }) {
        sack.push(SackBlock { left: l, right: r });
    }
    let flags = TcpFlags::from_bits(s.flags);
    let syn = flags.contains(TcpFlags::SYN);
    let tcp = TcpHeader {
        src_port: sp,
        dst_port: dp,
        seq: s.seq,
        ack: s.ack,
        flags,
        window: s.window,
        urgent: 0,
        options: TcpOptions {
            window_scale: if syn { s.ws } else { None },
            timestamps: s.ts.map(|(v, e)| Timestamps { tsval: v, tsecr: e }),
            sack: if syn { SackBlocks::new() } else { sack },
            ..TcpOptions::NONE
        },
    };
    let mut buf = vec![0u8; 1600];
    let payload = vec![0u8; usize::from(s.len)];
    let n = write_ipv4_tcp(
        &mut buf,
        &Ipv4Header::new(src, dst, IPPROTO_TCP),
        &tcp,
        &payload,
    )
    .unwrap_or(0);
    buf.truncate(n);
    buf
}

fn exercise(a: &ackclock_analyze::Analysis) {
    let _ = report::text(a);
    let _ = report::csv(a);
    serde_json::to_string(a).unwrap();
    for c in &a.connections {
        for d in 0..2 {
            let _ = figures::charts(c, d);
        }
    }
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(64))]

    #[test]
    fn random_bytes_never_panic(mut v in proptest::collection::vec(any::<u8>(), 0..2000), hdr in any::<bool>()) {
        if hdr && v.len() >= 24 {
            // A valid header, so that the records behind it are read.
            v[..4].copy_from_slice(&0xa1b2_3c4du32.to_ne_bytes());
            v[20..24].copy_from_slice(&101u32.to_ne_bytes());
        }
        // The fuzz target's check (crates/analyze/fuzz).
        ackclock_analyze::fuzzing::capture(&v);
    }

    #[test]
    fn random_segments_never_panic(segs in proptest::collection::vec(seg(), 0..300), cut in 0usize..60) {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let mut t = 0u64;
        for (i, s) in segs.iter().enumerate() {
            // Now and then back in time: records of a capture need not be in order.
            if i % 29 == 7 {
                t = t.saturating_sub(u64::from(s.dt_us) * 3000);
            } else {
                t += u64::from(s.dt_us) * 1000;
            }
            let mut p = packet(s);
            // Now and then a packet cut short, or a bit flipped in its headers.
            if i % 17 == 3 { p.truncate(cut); }
            if i % 23 == 5 && !p.is_empty() { let k = cut % p.len(); p[k] ^= 0x40; }
            w.write_packet(Instant::from_nanos(t), &p).unwrap();
        }
        let file = w.into_inner();
        let a = analyze(&file[..]).unwrap();
        prop_assert!(a.packets.total == segs.len() as u64);
        exercise(&a);
    }
}

#[test]
fn an_analyzer_without_packets_finds_nothing() {
    let a = Analyzer::new().finish();
    assert!(a.connections.is_empty());
    exercise(&a);
}
