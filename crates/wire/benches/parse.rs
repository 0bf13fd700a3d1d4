//! Nanoseconds per packet to parse and to build IPv4+TCP packets.
//!
//! - `parse/*`: `parse_ipv4_tcp`, which validates the IP header (and its checksum) and
//!   verifies the TCP checksum over pseudo-header, header and data;
//! - `parse_deferred_options/*`: `parse_ipv4_tcp_deferred` (TCP checksum left to the
//!   caller) followed by `tcp.options()`;
//! - `recv_copy_verify/1500B`: the receive path of checksum-and-copy: deferred parse,
//!   options, then the payload copied out with `copy_and_sum` and the checksum finished
//!   from `header_sum`;
//! - `build/1500B`: `write_ipv4_tcp` with a 1460-byte payload (20 + 20 + 1460 bytes).
//!
//! Packets: a pure ACK of 40 bytes (no options), a pure ACK with the RFC 7323 timestamps
//! option (52 bytes: the option adds 12), and a 1500-byte data packet with timestamps
//! (20 + 32 + 1448 bytes of data).

use ackclock_wire::checksum;
use ackclock_wire::packet::parse_ipv4_tcp_deferred;
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{parse_ipv4_tcp, write_ipv4_tcp, Ipv4Header, TcpFlags, TcpHeader, TcpOptions};
use core::net::Ipv4Addr;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::Duration;

fn ip() -> Ipv4Header {
    Ipv4Header::new(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 18, 0, 2),
        ackclock_wire::IPPROTO_TCP,
    )
}

fn tcp(flags: TcpFlags, timestamps: bool) -> TcpHeader {
    TcpHeader {
        src_port: 40000,
        dst_port: 5001,
        seq: 0x1234_5678,
        ack: 0x9abc_def0,
        flags,
        window: 65535,
        urgent: 0,
        options: TcpOptions {
            timestamps: timestamps.then_some(Timestamps {
                tsval: 0x0102_0304,
                tsecr: 0x0506_0708,
            }),
            ..TcpOptions::NONE
        },
    }
}

/// A packet built with `write_ipv4_tcp`, checked to parse.
fn packet(flags: TcpFlags, timestamps: bool, payload_len: usize, want_len: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..payload_len).map(|i| (i * 31 + 7) as u8).collect();
    let mut buf = vec![0u8; 2048];
    let n = write_ipv4_tcp(&mut buf, &ip(), &tcp(flags, timestamps), &payload).unwrap();
    assert_eq!(n, want_len);
    buf.truncate(n);
    assert!(parse_ipv4_tcp(&buf).is_ok());
    buf
}

fn bench_parse(c: &mut Criterion) {
    let packets = [
        ("ack_40B", packet(TcpFlags::ACK, false, 0, 40)),
        ("ack_ts_52B", packet(TcpFlags::ACK, true, 0, 52)),
        (
            "data_1500B",
            packet(TcpFlags::ACK | TcpFlags::PSH, true, 1448, 1500),
        ),
    ];

    let mut g = c.benchmark_group("parse");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1500));
    for (name, p) in &packets {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let p = parse_ipv4_tcp(black_box(p)).unwrap();
                black_box(p.tcp.seq())
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("parse_deferred_options");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1500));
    for (name, p) in &packets {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let p = parse_ipv4_tcp_deferred(black_box(p)).unwrap();
                black_box(p.tcp.options().unwrap())
            })
        });
    }
    g.finish();

    let data = &packets[2].1;
    let mut out = vec![0u8; 1500];
    let mut g = c.benchmark_group("recv_copy_verify");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1500));
    g.bench_function("data_1500B", |b| {
        b.iter(|| {
            let p = parse_ipv4_tcp_deferred(black_box(data)).unwrap();
            let opts = p.tcp.options().unwrap();
            let s = checksum::copy_and_sum(&mut out, p.tcp.payload());
            assert_eq!(checksum::add(p.header_sum(), s), 0xffff);
            black_box(opts)
        })
    });
    g.finish();
}

fn bench_build(c: &mut Criterion) {
    let payload: Vec<u8> = (0..1460).map(|i| (i * 17 + 3) as u8).collect();
    let (ip, tcp) = (ip(), tcp(TcpFlags::ACK, false));
    let mut buf = vec![0u8; 2048];
    let mut g = c.benchmark_group("build");
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_millis(1500));
    g.bench_function("data_1500B", |b| {
        b.iter(|| {
            write_ipv4_tcp(
                black_box(&mut buf),
                black_box(&ip),
                black_box(&tcp),
                black_box(&payload),
            )
            .unwrap()
        })
    });
    g.finish();
    assert!(parse_ipv4_tcp(&buf[..1500]).is_ok());
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = bench_parse, bench_build
}
criterion_main!(benches);
