//! Property tests for the wire formats: what we build parses back to what we built, and no
//! input whatever makes a parser panic (the same bodies the fuzz targets run).

use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    fuzzing, parse_ipv4_tcp, write_ipv4_tcp, Ipv4Header, SackBlock, SackBlocks, TcpFlags,
    TcpHeader, TcpOptions,
};
use core::net::Ipv4Addr;
use proptest::prelude::*;

fn addr() -> impl Strategy<Value = Ipv4Addr> {
    any::<u32>().prop_map(Ipv4Addr::from)
}

fn ipv4_header() -> impl Strategy<Value = Ipv4Header> {
    (
        addr(),
        addr(),
        any::<u8>(),
        any::<u8>(),
        any::<u16>(),
        any::<bool>(),
        any::<bool>(),
        0u16..8192,
    )
        .prop_map(|(src, dst, ttl, tos, id, df, mf, frag)| Ipv4Header {
            src,
            dst,
            protocol: ackclock_wire::IPPROTO_TCP,
            ttl,
            tos,
            identification: id,
            dont_fragment: df,
            more_fragments: mf,
            fragment_offset: frag << 3,
        })
}

/// Options that fit in 40 bytes: the SACK block count is limited by what else is present.
fn tcp_options() -> impl Strategy<Value = TcpOptions> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(any::<u8>()),
        any::<bool>(),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4),
    )
        .prop_map(|(mss, ws, sp, ts, blocks)| {
            let mut o = TcpOptions {
                mss,
                window_scale: ws,
                sack_permitted: sp,
                timestamps: ts.map(|(tsval, tsecr)| Timestamps { tsval, tsecr }),
                sack: SackBlocks::new(),
            };
            for (left, right) in blocks {
                o.sack.push(SackBlock { left, right });
                if o.encoded_len() > 40 {
                    let n = o.sack.len() - 1;
                    o.sack.truncate(n);
                    break;
                }
            }
            o
        })
}

fn tcp_header() -> impl Strategy<Value = TcpHeader> {
    (
        any::<u16>(),
        any::<u16>(),
        any::<u32>(),
        any::<u32>(),
        0u16..0x200,
        any::<u16>(),
        any::<u16>(),
        tcp_options(),
    )
        .prop_map(
            |(sp, dp, seq, ack, flags, window, urgent, options)| TcpHeader {
                src_port: sp,
                dst_port: dp,
                seq,
                ack,
                flags: TcpFlags::from_bits(flags),
                window,
                urgent,
                options,
            },
        )
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(2000))]

    #[test]
    fn parse_of_build_is_identity(
        mut ip in ipv4_header(),
        tcp in tcp_header(),
        payload in proptest::collection::vec(any::<u8>(), 0..1600),
    ) {
        // parse_ipv4_tcp refuses fragments by design; fragments are checked by the IPv4 view.
        ip.more_fragments = false;
        ip.fragment_offset = 0;
        let mut buf = vec![0u8; 20 + 60 + payload.len()];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &payload).unwrap();
        let p = parse_ipv4_tcp(&buf[..n]).unwrap();
        prop_assert_eq!(Ipv4Header::from_packet(&p.ip), ip);
        prop_assert_eq!(TcpHeader::from_segment(&p.tcp).unwrap(), tcp);
        prop_assert_eq!(p.tcp.payload(), &payload[..]);
    }

    #[test]
    fn ipv4_header_round_trips_with_fragment_fields(ip in ipv4_header(), len in 0usize..2000) {
        let mut buf = vec![0u8; 20 + len];
        ip.emit(&mut buf, len).unwrap();
        let p = ackclock_wire::Ipv4Packet::parse(&buf).unwrap();
        prop_assert_eq!(Ipv4Header::from_packet(&p), ip);
        prop_assert_eq!(p.is_fragment(), ip.more_fragments || ip.fragment_offset != 0);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        fuzzing::ipv4(&data);
        fuzzing::tcp(&data);
        fuzzing::tcp_options(&data);
        fuzzing::packet(&data);
        fuzzing::pcap(&data);
        fuzzing::udp(&data);
    }

    /// Valid UDP datagrams, mutated and truncated: reaches the length and checksum paths.
    #[test]
    fn mutated_udp_datagrams_never_panic(
        ip in ipv4_header(),
        ports in (any::<u16>(), any::<u16>()),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
        cut in any::<usize>(),
    ) {
        let ip = Ipv4Header { more_fragments: false, fragment_offset: 0, ..ip };
        let mut buf = vec![0u8; 28 + payload.len()];
        let n = ackclock_wire::write_ipv4_udp(&mut buf, &ip, ports.0, ports.1, &payload).unwrap();
        if edits.is_empty() {
            let p = ackclock_wire::parse_ipv4_udp(&buf[..n]).unwrap();
            prop_assert_eq!(p.payload, &payload[..]);
        }
        for (at, v) in edits {
            buf[at % n] = v;
        }
        fuzzing::udp(&buf[..n - cut % (n / 4 + 1)]);
    }

    /// Random bytes rarely get past the first check, so also mutate valid packets: flip,
    /// overwrite and truncate, which reaches the option and checksum paths.
    #[test]
    fn mutated_packets_never_panic(
        ip in ipv4_header(),
        tcp in tcp_header(),
        payload in proptest::collection::vec(any::<u8>(), 0..64),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let ip = Ipv4Header { more_fragments: false, fragment_offset: 0, ..ip };
        let mut buf = vec![0u8; 20 + 60 + payload.len()];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &payload).unwrap();
        buf.truncate(n);
        for (at, v) in edits {
            let i = at % n;
            buf[i] = v;
        }
        let cut = n - cut % (n / 4 + 1);
        fuzzing::packet(&buf[..cut]);
        fuzzing::ipv4(&buf[..cut]);
        fuzzing::tcp(&buf[20.min(cut)..cut]);
        fuzzing::tcp_options(&buf[40.min(cut)..cut]);
    }

    #[test]
    fn mutated_pcap_files_never_panic(
        packets in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..100), 0..5),
        edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..6),
    ) {
        let mut w = ackclock_wire::pcap::PcapWriter::new(Vec::new()).unwrap();
        for (i, p) in packets.iter().enumerate() {
            w.write_packet(ackclock_wire::Instant::from_nanos(i as u64 * 1000), p).unwrap();
        }
        let mut f = w.into_inner();
        let n = f.len();
        for (at, v) in edits {
            f[at % n] = v;
        }
        fuzzing::pcap(&f);
    }
}
