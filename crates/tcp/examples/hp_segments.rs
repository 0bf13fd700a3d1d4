//! Feeds an established connection N in-order, full-sized data segments that take the
//! header-prediction data path, for counting instructions per segment with callgrind
//! (method and commands: BENCHMARKS.md, "ackclock-tcp: bulk transfer and header
//! prediction").
//!
//! ```text
//! hp_segments [N] [endpoint|conn]
//! ```
//!
//! Two endpoints, A (198.18.0.1) and B (198.18.0.2), complete a handshake in memory with the
//! bulk benchmark's configuration (MSS 1460, 256 KiB buffers, window scaling). Then N
//! packets from A to B are built in advance: valid IPv4 and TCP checksums, sequence numbers
//! from B's RCV.NXT on, the ACK field at B's SND.UNA and the window field B already holds,
//! 1460 bytes of data each: the input header prediction expects. They are fed to B one at
//! a time:
//!
//! - `endpoint` (default): `Endpoint::handle_packet`, the whole receive path (IPv4/TCP
//!   parse, demultiplexing, the engine, checksum-and-copy);
//! - `conn`: the packet is parsed into a `Segment` here, outside the measured function, and
//!   given to `Connection::handle_segment` directly.
//!
//! After each segment B's application discards what arrived and B's output (its ACKs) is
//! drained and dropped, outside the measured functions, so every segment sees the same
//! state. The program checks that B's `hp_data_hits` grew by exactly N and exits non-zero
//! otherwise.

use ackclock_tcp::{ConnId, Endpoint, EndpointConfig, Segment, TcpConfig};
use ackclock_wire::packet::{parse_ipv4_tcp_deferred, write_ipv4_tcp};
use ackclock_wire::{Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions, IPPROTO_TCP};
use core::net::{Ipv4Addr, SocketAddrV4};
use std::hint::black_box;
use std::process::ExitCode;

const A_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const PORT: u16 = 9;
const MSS: usize = 1460;

fn config() -> TcpConfig {
    TcpConfig {
        mss: MSS as u16,
        send_buffer_bytes: 256 * 1024,
        recv_buffer_bytes: 256 * 1024,
        window_scale: true,
        ..TcpConfig::newreno()
    }
}

/// Moves every packet `from` wants to send into `to`.
fn exchange(now: Instant, from: &mut Endpoint, to: &mut Endpoint, buf: &mut [u8]) -> bool {
    let mut moved = false;
    while let Some(t) = from.poll_transmit(now, buf) {
        to.handle_packet(now, &buf[..t.len]);
        moved = true;
    }
    moved
}

/// A and B with an established connection; returns B's connection and A's local address.
fn establish(now: Instant) -> (Endpoint, Endpoint, ConnId, SocketAddrV4) {
    let mut a = Endpoint::new(EndpointConfig::new(A_ADDR, [1; 16]));
    let mut b = Endpoint::new(EndpointConfig::new(B_ADDR, [2; 16]));
    b.listen(PORT, config(), 4).expect("listen");
    let ca = a
        .connect(now, SocketAddrV4::new(B_ADDR, PORT), config())
        .expect("connect");
    let mut buf = vec![0u8; 2048];
    for _ in 0..10 {
        let x = exchange(now, &mut a, &mut b, &mut buf);
        let y = exchange(now, &mut b, &mut a, &mut buf);
        if !x && !y {
            break;
        }
    }
    let cb = b.accept(PORT).expect("B accepted the connection");
    let a_local = a.conn(ca).expect("A's connection").local();
    assert!(a.conn(ca).unwrap().is_established());
    assert!(b.conn(cb).unwrap().is_established());
    (a, b, cb, a_local)
}

/// The N packets A would send next, as B expects them.
fn build_packets(b: &Endpoint, cb: ConnId, a_local: SocketAddrV4, n: usize) -> Vec<Vec<u8>> {
    let c = b.conn(cb).expect("B's connection");
    let (rcv_nxt, _) = c.recv_sequence();
    let (snd_una, _, _) = c.send_sequence();
    let st = c.stats();
    // The window field that, scaled, equals the window B holds (so it is "unchanged").
    let window = (st.snd_wnd_bytes >> st.snd_wscale) as u16;
    assert_eq!(u32::from(window) << st.snd_wscale, st.snd_wnd_bytes);
    let payload: Vec<u8> = (0..MSS).map(|i| (i * 7 + 3) as u8).collect();
    (0..n)
        .map(|i| {
            let mut ip = Ipv4Header::new(A_ADDR, B_ADDR, IPPROTO_TCP);
            ip.identification = i as u16;
            let tcp = TcpHeader {
                src_port: a_local.port(),
                dst_port: PORT,
                seq: (rcv_nxt + (i * MSS) as u32).get(),
                ack: snd_una.get(),
                flags: TcpFlags::ACK,
                window,
                urgent: 0,
                options: TcpOptions::NONE,
            };
            let mut p = vec![0u8; 20 + 20 + MSS];
            let len = write_ipv4_tcp(&mut p, &ip, &tcp, &payload).expect("packet fits");
            p.truncate(len);
            p
        })
        .collect()
}

/// B's application reads everything (without copying) and B's ACKs are dropped.
#[inline(never)]
fn drain(b: &mut Endpoint, cb: ConnId, now: Instant, buf: &mut [u8]) {
    b.conn_mut(cb).unwrap().recv_discard(usize::MAX);
    while b.poll_transmit(now, buf).is_some() {}
}

#[inline(never)]
fn run_endpoint(b: &mut Endpoint, cb: ConnId, now: Instant, pkts: &[Vec<u8>], buf: &mut [u8]) {
    for p in pkts {
        b.handle_packet(now, black_box(p));
        drain(b, cb, now, buf);
    }
}

#[inline(never)]
fn run_conn(b: &mut Endpoint, cb: ConnId, now: Instant, pkts: &[Vec<u8>], buf: &mut [u8]) {
    for p in pkts {
        let parsed = parse_ipv4_tcp_deferred(black_box(p)).expect("valid packet");
        let seg = Segment::from_packet(&parsed, false).expect("valid options");
        b.conn_mut(cb).unwrap().handle_segment(now, &seg);
        drain(b, cb, now, buf);
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|s| s.parse().expect("N is a number"))
        .unwrap_or(1000);
    let mode = args.next().unwrap_or_else(|| "endpoint".to_string());
    let now = Instant::from_nanos(1_000_000_000);
    let (_a, mut b, cb, a_local) = establish(now);
    let pkts = build_packets(&b, cb, a_local, n + 1);
    let mut buf = vec![0u8; 2048];
    drain(&mut b, cb, now, &mut buf);
    // The first data segment allocates the receive ring (rings are allocated at the first
    // byte, so an idle connection holds none) and takes the general path; it is not counted.
    b.handle_packet(now, &pkts[0]);
    drain(&mut b, cb, now, &mut buf);
    let pkts = &pkts[1..];
    let before = b.conn(cb).unwrap().stats();
    match mode.as_str() {
        "endpoint" => run_endpoint(&mut b, cb, now, pkts, &mut buf),
        "conn" => run_conn(&mut b, cb, now, pkts, &mut buf),
        _ => {
            eprintln!("usage: hp_segments [N] [endpoint|conn]");
            return ExitCode::FAILURE;
        }
    }
    let after = b.conn(cb).unwrap().stats();
    let hits = after.hp_data_hits - before.hp_data_hits;
    let bytes = after.bytes_received - before.bytes_received;
    println!(
        "mode {mode}: {n} segments, hp_data_hits +{hits}, hp_misses +{}, bad_checksum +{}, \
         bytes_received +{bytes}, ACKs sent +{}",
        after.hp_misses - before.hp_misses,
        after.bad_checksum - before.bad_checksum,
        after.pure_acks_out - before.pure_acks_out,
    );
    if hits != n as u64 || bytes != (n * MSS) as u64 {
        eprintln!("not every segment took the header-prediction data path");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
