//! Real IPv4/TCP bytes (`Vec<u8>`) through the gateway: ECN marks keep the packet valid,
//! flows are told apart by their 5-tuple, and bit errors are caught by the checksum.

use ackclock_gateway::{
    CodelConfig, FqCodelConfig, Impairments, ImpairmentsConfig, PacketLike, Qdisc, QdiscConfig,
    Verdict,
};
use ackclock_wire::{
    parse_ipv4_tcp, write_ipv4_tcp, Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions,
};
use core::net::Ipv4Addr;

fn packet(sport: u16, seq: u32, len: usize, ect: bool) -> Vec<u8> {
    let mut ip = Ipv4Header::new(
        Ipv4Addr::new(198, 18, 0, 1),
        Ipv4Addr::new(198, 19, 0, 1),
        6,
    );
    ip.tos = if ect { 0x02 } else { 0 };
    let tcp = TcpHeader {
        src_port: sport,
        dst_port: 5001,
        seq,
        ack: 0,
        flags: TcpFlags::ACK,
        window: 65535,
        urgent: 0,
        options: TcpOptions::NONE,
    };
    let mut buf = vec![0u8; 40 + len];
    let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &vec![7u8; len]).unwrap();
    buf.truncate(n);
    buf
}

#[test]
fn codel_marks_real_packets_and_they_stay_valid() {
    let cfg = QdiscConfig::Codel(CodelConfig {
        ecn: true,
        limit_pkts: Some(10_000),
        ..CodelConfig::default()
    });
    let mut q: Box<dyn Qdisc<Vec<u8>>> = cfg.build(1).unwrap();
    let mut marked = 0;
    let mut seq = 1u32;
    for ms in 0..1000u64 {
        let now = Instant::from_nanos(ms * 1_000_000);
        for _ in 0..2 {
            let _ = q.enqueue(now, packet(40000, seq, 1000, true));
            seq = seq.wrapping_add(1000);
        }
        let p = q
            .dequeue(now, &mut |_, _| panic!("ECT packet dropped"))
            .unwrap();
        let parsed = parse_ipv4_tcp(&p).expect("still a valid packet");
        if parsed.ip.ecn() == 3 {
            marked += 1;
        }
    }
    assert!(marked > 5);
    assert_eq!(q.stats().marked, marked);
}

#[test]
fn fq_codel_separates_real_flows() {
    let cfg = QdiscConfig::FqCodel(FqCodelConfig::default());
    let mut q: Box<dyn Qdisc<Vec<u8>>> = cfg.build(2).unwrap();
    let bulk: Vec<Vec<u8>> = (0..50)
        .map(|i| packet(40000, 1 + i * 1000, 1000, false))
        .collect();
    assert_ne!(bulk[0].flow_id(), packet(40001, 1, 10, false).flow_id());
    for p in bulk {
        let _ = q.enqueue(Instant::ZERO, p);
    }
    let _ = q.dequeue(Instant::ZERO, &mut |_, _| {});
    let _ = q.dequeue(Instant::ZERO, &mut |_, _| {});
    let _ = q.enqueue(Instant::ZERO, packet(40001, 1, 10, false));
    let p = q.dequeue(Instant::ZERO, &mut |_, _| {}).unwrap();
    assert_eq!(parse_ipv4_tcp(&p).unwrap().tcp.src_port(), 40001);
}

#[test]
fn corrupted_real_packets_fail_the_checksum() {
    let cfg = ImpairmentsConfig {
        ber: Some(1e-3),
        ..Default::default()
    };
    let mut imp = Impairments::new(&cfg, 4).unwrap();
    let mut corrupted = 0;
    for i in 0..2000u32 {
        let mut p = packet(40000, i, 500, false);
        match imp.apply(Instant::ZERO, &mut p) {
            Verdict::Corrupt { bit: Some(_) } => {
                corrupted += 1;
                assert!(parse_ipv4_tcp(&p).is_err());
            }
            Verdict::Deliver { .. } => assert!(parse_ipv4_tcp(&p).is_ok()),
            v => panic!("{v:?}"),
        }
    }
    // 540 bytes at 1e-3: P(damage) = 1 - 0.999^4320 = 98.7 %.
    assert!(corrupted > 1900, "{corrupted}");
}
