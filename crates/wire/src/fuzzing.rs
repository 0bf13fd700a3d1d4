//! Bodies of the fuzz targets (`crates/wire/fuzz`), kept in the library so the property
//! tests run exactly the same checks on stable Rust in CI. Each function must not panic on
//! any input; the assertions inside are the invariants a well-formed parse guarantees.

use crate::ipv4::{Ipv4Header, Ipv4Packet};
use crate::packet::{parse_ipv4_tcp, parse_ipv4_tcp_deferred};
use crate::pcap::PcapReader;
use crate::tcp::{TcpHeader, TcpOptions, TcpSegment};
use crate::{checksum, WireError};

/// IPv4 view: accessors stay in bounds, and re-emitting the parsed header reproduces it.
pub fn ipv4(data: &[u8]) {
    let verified = Ipv4Packet::parse(data);
    let Ok(p) = Ipv4Packet::parse_unverified(data) else {
        assert!(verified.is_err());
        return;
    };
    assert_eq!(
        p.header_len() + p.payload().len(),
        usize::from(p.total_len())
    );
    assert_eq!(p.options().len(), p.header_len() - 20);
    if verified.is_ok() {
        assert_eq!(checksum::sum(p.header()), 0xffff);
    }
    let _ = (
        p.is_fragment(),
        p.fragment_offset(),
        p.ecn(),
        p.src(),
        p.dst(),
        p.ttl(),
    );
    let h = Ipv4Header::from_packet(&p);
    let mut out = [0u8; 20];
    h.emit(&mut out, 0).expect("20 bytes always fit");
    let q = Ipv4Packet::parse(&out).expect("what we emit parses");
    assert_eq!(Ipv4Header::from_packet(&q), h);
}

/// TCP view and options: the iterator and the gathered parse agree, and a header whose
/// options parse re-emits to an equal header (or a clean "too long" error, since our layout
/// pads differently than the input may have).
pub fn tcp(data: &[u8]) {
    let Ok(s) = TcpSegment::parse(data) else {
        return;
    };
    assert_eq!(s.header_len() + s.payload().len(), data.len());
    let iter_ok = s.options_iter().all(|o| o.is_ok());
    let parsed = s.options();
    assert_eq!(iter_ok, parsed.is_ok());
    let _ = (s.flags(), s.seq_len(), s.reserved(), s.urgent());
    let Ok(h) = TcpHeader::from_segment(&s) else {
        return;
    };
    let mut out = [0u8; 60];
    match h.emit(&mut out) {
        Ok(n) => {
            let t = TcpSegment::parse(&out[..n]).expect("what we emit parses");
            assert_eq!(TcpHeader::from_segment(&t), Ok(h));
        }
        Err(WireError::OptionsTooLong { need }) => assert!(need > 40),
        Err(e) => panic!("emit of a parsed header failed: {e}"),
    }
}

/// Raw TCP options bytes.
pub fn tcp_options(data: &[u8]) {
    let _ = TcpOptions::parse(data);
}

/// Whole packets: the full parse and the deferred parse with checksum-and-copy agree.
pub fn packet(data: &[u8]) {
    let full = parse_ipv4_tcp(data);
    match parse_ipv4_tcp_deferred(data) {
        Ok(p) => {
            let payload = p.tcp.payload();
            let mut copy = [0u8; 65536];
            let s = checksum::copy_and_sum(&mut copy, payload);
            assert_eq!(&copy[..payload.len()], payload);
            let ok = checksum::add(p.header_sum(), s) == 0xffff;
            assert_eq!(ok, full.is_ok());
            if !ok {
                assert_eq!(full, Err(WireError::BadTcpChecksum));
            }
            if let Ok(f) = full {
                tcp(f.tcp.as_bytes());
            }
        }
        Err(e) => assert_eq!(full, Err(e)),
    }
}

/// A pcap file: read at most a bounded number of records and parse each as a packet.
pub fn pcap(data: &[u8]) {
    let Ok(mut r) = PcapReader::new(data) else {
        return;
    };
    let link = r.link_type();
    for _ in 0..1000 {
        match r.next_record() {
            Some(Ok(rec)) => {
                assert!(rec.data.len() as u64 <= u64::from(rec.orig_len));
                if let Some(ip) = link.ip_packet(rec.data) {
                    packet(ip);
                    let link_len = rec.data.len() - ip.len();
                    captured(ip, (rec.orig_len as usize).saturating_sub(link_len));
                }
            }
            Some(Err(_)) | None => break,
        }
    }
}

/// A packet captured short of its wire length: a view that parses never claims more
/// captured bytes than there are, and one captured whole parses as [`ipv4`] does.
pub fn captured(data: &[u8], wire_len: usize) {
    let whole = Ipv4Packet::parse(data);
    match Ipv4Packet::parse_captured(data, wire_len) {
        Ok(p) => {
            assert!(p.header_len() + p.payload().len() <= data.len());
            assert!(usize::from(p.total_len()) >= p.header_len());
            if usize::from(p.total_len()) <= data.len() {
                assert_eq!(whole, Ok(p));
            } else {
                assert!(usize::from(p.total_len()) <= wire_len);
                let _ = TcpSegment::parse(p.payload());
            }
        }
        Err(e) => {
            if usize::from(u16::from_be_bytes([
                data.get(2).copied().unwrap_or(0),
                data.get(3).copied().unwrap_or(0),
            ])) <= data.len()
            {
                assert_eq!(whole, Err(e));
            }
        }
    }
}

/// UDP over IPv4: a datagram that parses has a length the IP payload holds and a payload
/// within it; re-emitting it (with a fresh checksum) parses to the same ports and payload.
pub fn udp(data: &[u8]) {
    let Ok(p) = crate::udp::parse_ipv4_udp(data) else {
        return;
    };
    assert!(p.payload.len() + crate::udp::HEADER_LEN <= p.ip.payload().len());
    let ip = Ipv4Header::from_packet(&p.ip);
    let mut out = vec![0u8; 28 + p.payload.len()];
    let n = crate::udp::write_ipv4_udp(&mut out, &ip, p.src_port, p.dst_port, p.payload)
        .expect("a parsed datagram fits its own length");
    let q = crate::udp::parse_ipv4_udp(&out[..n]).expect("what we emit parses");
    assert_eq!((q.src(), q.dst(), q.payload), (p.src(), p.dst(), p.payload));
    assert!(q.has_checksum);
}
