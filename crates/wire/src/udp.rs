//! UDP (RFC 768) over IPv4: a validating parse of whole packets and a one-call build, for
//! the datagram traffic of the seeds' unfinished plan ("domain server queries, RPC
//! requests", seed 000, 11 Feb 1988).

use crate::checksum;
use crate::ipv4::{self, Ipv4Header, Ipv4Packet};
use crate::WireError;
use core::net::SocketAddrV4;

/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// Length of the UDP header, in bytes.
pub const HEADER_LEN: usize = 8;
/// The largest payload an unfragmented IPv4 datagram can carry (65535 - 20 - 8).
pub const MAX_PAYLOAD: usize = 65_535 - ipv4::HEADER_LEN - HEADER_LEN;

/// An IPv4 packet carrying a UDP datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpPacket<'a> {
    /// The IPv4 packet, header validated (not a fragment, protocol 17).
    pub ip: Ipv4Packet<'a>,
    /// Source port (RFC 768: optional, zero when unused).
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Whether the sender computed a checksum (RFC 768: zero means none was computed).
    pub has_checksum: bool,
    /// The datagram's data: the UDP length less the 8-byte header (IP padding beyond the
    /// UDP length is not included).
    pub payload: &'a [u8],
}

impl UdpPacket<'_> {
    /// The source address and port.
    pub fn src(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.ip.src(), self.src_port)
    }
    /// The destination address and port.
    pub fn dst(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.ip.dst(), self.dst_port)
    }
}

/// Parses and validates an IPv4 packet holding a UDP datagram: the IP header checks,
/// fragments refused (nothing here reassembles), protocol 17, the UDP length against the IP
/// payload (RFC 768: bytes beyond the UDP length are padding and are ignored), and the
/// checksum over the pseudo-header when the sender computed one.
pub fn parse_ipv4_udp(buf: &[u8]) -> Result<UdpPacket<'_>, WireError> {
    let ip = Ipv4Packet::parse(buf)?;
    if ip.is_fragment() {
        return Err(WireError::Fragment {
            offset: ip.fragment_offset(),
            more: ip.more_fragments(),
        });
    }
    if ip.protocol() != IPPROTO_UDP {
        return Err(WireError::NotUdp(ip.protocol()));
    }
    let seg = ip.payload();
    let Some(h) = seg.get(..HEADER_LEN) else {
        return Err(WireError::Truncated {
            need: HEADER_LEN,
            have: seg.len(),
        });
    };
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    if len < HEADER_LEN || len > seg.len() {
        return Err(WireError::BadUdpLength {
            udp: len,
            ip_payload: seg.len(),
        });
    }
    let seg = &seg[..len];
    let ck = u16::from_be_bytes([h[6], h[7]]);
    if ck != 0 {
        let ph = checksum::pseudo_header_sum(ip.src(), ip.dst(), IPPROTO_UDP, len as u16);
        if checksum::add(ph, checksum::sum(seg)) != 0xffff {
            return Err(WireError::BadUdpChecksum);
        }
    }
    Ok(UdpPacket {
        ip,
        src_port: u16::from_be_bytes([h[0], h[1]]),
        dst_port: u16::from_be_bytes([h[2], h[3]]),
        has_checksum: ck != 0,
        payload: &seg[HEADER_LEN..],
    })
}

/// Writes a complete IPv4+UDP packet into `buf` and returns its length. The IP header is
/// `ip` with its protocol set to UDP; the UDP checksum is always computed (a computed zero
/// is sent as 0xffff, RFC 768).
pub fn write_ipv4_udp(
    buf: &mut [u8],
    ip: &Ipv4Header,
    src_port: u16,
    dst_port: u16,
    payload: &[u8],
) -> Result<usize, WireError> {
    let udp_len = HEADER_LEN + payload.len();
    if payload.len() > MAX_PAYLOAD {
        return Err(WireError::TooLong(ipv4::HEADER_LEN + udp_len));
    }
    let total = ipv4::HEADER_LEN + udp_len;
    if buf.len() < total {
        return Err(WireError::Truncated {
            need: total,
            have: buf.len(),
        });
    }
    let mut hdr = *ip;
    hdr.protocol = IPPROTO_UDP;
    hdr.emit(buf, udp_len)?;
    let seg = &mut buf[ipv4::HEADER_LEN..total];
    seg[0..2].copy_from_slice(&src_port.to_be_bytes());
    seg[2..4].copy_from_slice(&dst_port.to_be_bytes());
    seg[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    seg[6..8].fill(0);
    let data_sum = checksum::copy_and_sum(&mut seg[HEADER_LEN..], payload);
    let ph = checksum::pseudo_header_sum(hdr.src, hdr.dst, IPPROTO_UDP, udp_len as u16);
    let sum = checksum::concat(
        checksum::add(ph, checksum::sum(&seg[..HEADER_LEN])),
        HEADER_LEN,
        data_sum,
    );
    let mut ck = !sum;
    if ck == 0 {
        ck = 0xffff;
    }
    seg[6..8].copy_from_slice(&ck.to_be_bytes());
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;

    fn header() -> Ipv4Header {
        Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            IPPROTO_UDP,
        )
    }

    #[test]
    fn rfc768_round_trip_with_checksum() {
        let mut buf = [0u8; 100];
        let n = write_ipv4_udp(&mut buf, &header(), 5353, 53, b"query").unwrap();
        assert_eq!(n, 20 + 8 + 5);
        let p = parse_ipv4_udp(&buf[..n]).unwrap();
        assert_eq!(p.src_port, 5353);
        assert_eq!(p.dst_port, 53);
        assert!(p.has_checksum);
        assert_eq!(p.payload, b"query");
        assert_eq!(p.dst(), SocketAddrV4::new(Ipv4Addr::new(198, 18, 0, 2), 53));
    }

    #[test]
    fn rfc768_zero_checksum_means_none_computed() {
        let mut buf = [0u8; 64];
        let n = write_ipv4_udp(&mut buf, &header(), 1, 2, b"abc").unwrap();
        buf[26] = 0;
        buf[27] = 0;
        let p = parse_ipv4_udp(&buf[..n]).unwrap();
        assert!(!p.has_checksum);
        assert_eq!(p.payload, b"abc");
    }

    #[test]
    fn rfc768_corrupted_payload_fails_the_checksum() {
        let mut buf = [0u8; 64];
        let n = write_ipv4_udp(&mut buf, &header(), 1, 2, b"abcd").unwrap();
        buf[n - 1] ^= 0x40;
        assert_eq!(parse_ipv4_udp(&buf[..n]), Err(WireError::BadUdpChecksum));
    }

    #[test]
    fn rfc768_length_beyond_the_ip_payload_is_refused_and_padding_ignored() {
        let mut buf = [0u8; 64];
        let n = write_ipv4_udp(&mut buf, &header(), 1, 2, b"abcd").unwrap();
        // UDP length 13 of an IP payload of 12.
        buf[24..26].copy_from_slice(&13u16.to_be_bytes());
        assert_eq!(
            parse_ipv4_udp(&buf[..n]),
            Err(WireError::BadUdpLength {
                udp: 13,
                ip_payload: 12
            })
        );
        // UDP length 10: two bytes of the IP payload are padding (checksum then covers 10).
        let n = write_ipv4_udp(&mut buf, &header(), 1, 2, b"ab").unwrap();
        let mut padded = buf[..n].to_vec();
        padded.extend_from_slice(&[0, 0]);
        let total = padded.len() as u16;
        padded[2..4].copy_from_slice(&total.to_be_bytes());
        let ck = checksum::checksum(&{
            let mut h = padded[..20].to_vec();
            h[10] = 0;
            h[11] = 0;
            h
        });
        padded[10..12].copy_from_slice(&ck.to_be_bytes());
        let p = parse_ipv4_udp(&padded).unwrap();
        assert_eq!(p.payload, b"ab");
    }

    #[test]
    fn tcp_and_short_packets_are_not_udp() {
        let mut buf = [0u8; 64];
        let n = write_ipv4_udp(&mut buf, &header(), 1, 2, b"").unwrap();
        buf[9] = 6;
        let ck = {
            buf[10] = 0;
            buf[11] = 0;
            checksum::checksum(&buf[..20])
        };
        buf[10..12].copy_from_slice(&ck.to_be_bytes());
        assert_eq!(parse_ipv4_udp(&buf[..n]), Err(WireError::NotUdp(6)));
        assert!(parse_ipv4_udp(&buf[..10]).is_err());
    }

    #[test]
    fn a_buffer_too_small_is_an_error_not_a_panic() {
        let mut buf = [0u8; 30];
        assert!(matches!(
            write_ipv4_udp(&mut buf, &header(), 1, 2, b"abc"),
            Err(WireError::Truncated { need: 31, have: 30 })
        ));
    }
}
