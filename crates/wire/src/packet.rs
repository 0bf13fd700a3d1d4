//! Whole IPv4+TCP packets: the one-call parse every receiver uses, and the one-call build
//! every sender uses, which copies the data with checksum-and-copy (seed 000, Jul 1988).

use crate::checksum;
use crate::ipv4::{self, Ipv4Header, Ipv4Packet};
use crate::tcp::{self, OptionLayout, TcpFlags, TcpHeader, TcpSegment};
use crate::{WireError, IPPROTO_TCP};

/// An IPv4 packet carrying a TCP segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedPacket<'a> {
    /// The IPv4 packet, header validated (not a fragment, protocol 6).
    pub ip: Ipv4Packet<'a>,
    /// The TCP segment, its IP payload, with a validated data offset; options unparsed.
    pub tcp: TcpSegment<'a>,
}

impl ParsedPacket<'_> {
    /// One's complement sum of the pseudo-header and the TCP header (options included),
    /// so that a receiver can finish the checksum while copying the data out:
    /// `checksum::concat(header_sum, 0, copy_and_sum(dst, payload)) == 0xffff` when valid
    /// (TCP header lengths are whole words, so the data starts on an even byte).
    #[inline]
    pub fn header_sum(&self) -> u16 {
        let seg = self.tcp.as_bytes();
        let ph = checksum::pseudo_header_sum(
            self.ip.src(),
            self.ip.dst(),
            IPPROTO_TCP,
            seg.len() as u16,
        );
        let hl = self.tcp.header_len();
        // A header without options is the fixed 20 bytes: a sum of known length, which the
        // compiler unrolls.
        let h = if hl == tcp::HEADER_LEN {
            checksum::sum(self.tcp.fixed_header())
        } else {
            checksum::sum(&seg[..hl])
        };
        checksum::add(ph, h)
    }
}

/// Parses and fully validates an IPv4 packet holding a TCP segment: IP header checks,
/// fragments refused (we never reassemble), protocol 6, TCP data offset, TCP checksum.
/// Options are not parsed (see [`TcpSegment::options`]).
pub fn parse_ipv4_tcp(buf: &[u8]) -> Result<ParsedPacket<'_>, WireError> {
    let p = parse_ipv4_tcp_deferred(buf)?;
    if checksum::add(p.header_sum(), checksum::sum(p.tcp.payload())) != 0xffff {
        return Err(WireError::BadTcpChecksum);
    }
    Ok(p)
}

/// As [`parse_ipv4_tcp`] but leaves the TCP checksum to the caller, who verifies it with
/// [`ParsedPacket::header_sum`] while copying the data (checksum-and-copy on receive).
#[inline]
pub fn parse_ipv4_tcp_deferred(buf: &[u8]) -> Result<ParsedPacket<'_>, WireError> {
    let ip = Ipv4Packet::parse(buf)?;
    if ip.is_fragment() {
        return Err(WireError::Fragment {
            offset: ip.fragment_offset(),
            more: ip.more_fragments(),
        });
    }
    if ip.protocol() != IPPROTO_TCP {
        return Err(WireError::NotTcp(ip.protocol()));
    }
    let tcp = TcpSegment::parse(ip.payload())?;
    Ok(ParsedPacket { ip, tcp })
}

/// Writes a complete IPv4+TCP packet into `buf` and returns its length: IP header (the
/// protocol field is set to TCP), TCP header with options, then `payload` copied with
/// checksum-and-copy so the data is read once.
pub fn write_ipv4_tcp(
    buf: &mut [u8],
    ip: &Ipv4Header,
    tcp: &TcpHeader,
    payload: &[u8],
) -> Result<usize, WireError> {
    write_ipv4_tcp_vectored(buf, ip, tcp, &[payload])
}

/// As [`write_ipv4_tcp`] with the data in several pieces (e.g. the two halves of a ring
/// buffer), copied in order; pieces may have odd lengths.
pub fn write_ipv4_tcp_vectored(
    buf: &mut [u8],
    ip: &Ipv4Header,
    tcp: &TcpHeader,
    payload: &[&[u8]],
) -> Result<usize, WireError> {
    write_ipv4_tcp_vectored_with(buf, ip, tcp, OptionLayout::Linux, payload)
}

/// As [`write_ipv4_tcp_vectored`], with the TCP options in `layout`
/// ([`TcpOptions::emit_with`](crate::tcp::TcpOptions::emit_with)).
pub fn write_ipv4_tcp_vectored_with(
    buf: &mut [u8],
    ip: &Ipv4Header,
    tcp: &TcpHeader,
    layout: OptionLayout,
    payload: &[&[u8]],
) -> Result<usize, WireError> {
    let data_len: usize = payload.iter().map(|p| p.len()).sum();
    let tcp_hl = tcp.header_len_with(layout);
    let seg_len = tcp_hl + data_len;
    let total = ipv4::HEADER_LEN + seg_len;
    if total > usize::from(u16::MAX) {
        return Err(WireError::TooLong(total));
    }
    if buf.len() < total {
        return Err(WireError::Truncated {
            need: total,
            have: buf.len(),
        });
    }
    let ip = Ipv4Header {
        protocol: IPPROTO_TCP,
        ..*ip
    };
    ip.emit(buf, seg_len)?;
    let seg = &mut buf[ipv4::HEADER_LEN..total];
    tcp.emit_with(layout, seg)?;
    let (hdr, data) = seg.split_at_mut(tcp_hl);
    let mut data_sum = 0u16;
    let mut at = 0usize;
    for part in payload {
        let s = checksum::copy_and_sum(&mut data[at..], part);
        data_sum = checksum::concat(data_sum, at, s);
        at += part.len();
    }
    let ph = checksum::pseudo_header_sum(ip.src, ip.dst, IPPROTO_TCP, seg_len as u16);
    let sum = checksum::add(checksum::add(ph, checksum::sum(hdr)), data_sum);
    hdr[16..18].copy_from_slice(&(!sum).to_be_bytes());
    Ok(total)
}

/// A connection's IPv4+TCP header prebuilt once (4.3BSD's `tcp_template`): the IPv4 header
/// with everything but the total length, identification and checksum, the two ports, and
/// the one's complement sums of those constant words (for the TCP checksum, with the
/// pseudo-header's addresses and protocol). Writing a segment then copies 40 bytes, patches
/// the per-segment fields, adds them to the precomputed sums, and copies the data with
/// checksum-and-copy: the same bytes [`write_ipv4_tcp_vectored`] writes for a header whose
/// only option is timestamps (or none), without building and summing the headers anew.
/// Those bytes are the same in every [`OptionLayout`] (`nop, nop, TS`), so the template
/// serves them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4TcpTemplate {
    hdr: [u8; ipv4::HEADER_LEN + tcp::HEADER_LEN],
    /// Sum of the IPv4 header's 16-bit words, total length, identification and checksum
    /// taken as zero (not folded; fewer than 2^20).
    ip_sum: u32,
    /// Sum of the pseudo-header's addresses and protocol and of the two ports (not folded).
    tcp_sum: u32,
}

/// Sum of the big-endian 16-bit words of `b` (even length), not folded.
const fn word_sum(b: &[u8]) -> u32 {
    let mut acc = 0u32;
    let mut i = 0;
    while i + 1 < b.len() {
        acc += ((b[i] as u32) << 8) | b[i + 1] as u32;
        i += 2;
    }
    acc
}

/// Folds a 32-bit accumulator of 16-bit words to 16 bits with end-around carries. The
/// result is zero only for a zero accumulator (RFC 1071 §2: no negative zero from non-zero
/// addends), so it equals every other correct way of summing the same words.
#[inline(always)]
const fn fold32(acc: u32) -> u16 {
    let s = (acc & 0xffff) + (acc >> 16);
    ((s & 0xffff) + (s >> 16)) as u16
}

impl Ipv4TcpTemplate {
    /// The template for segments from `src_port` to `dst_port` in datagrams like `ip` (its
    /// protocol is set to TCP; its identification is supplied per segment).
    pub fn new(ip: &Ipv4Header, src_port: u16, dst_port: u16) -> Self {
        let ip = Ipv4Header {
            protocol: IPPROTO_TCP,
            identification: 0,
            ..*ip
        };
        let mut hdr = [0u8; ipv4::HEADER_LEN + tcp::HEADER_LEN];
        // Total length 0 for now: emit only fails on lengths, and 0 is in range.
        ip.emit(&mut hdr, 0)
            .expect("a 20-byte header fits and length 0 is valid");
        hdr[2..4].fill(0);
        hdr[10..12].fill(0);
        hdr[20..22].copy_from_slice(&src_port.to_be_bytes());
        hdr[22..24].copy_from_slice(&dst_port.to_be_bytes());
        let ip_sum = word_sum(&hdr[..ipv4::HEADER_LEN]);
        let tcp_sum = word_sum(&hdr[12..20]) + u32::from(IPPROTO_TCP) + word_sum(&hdr[20..24]);
        Ipv4TcpTemplate {
            hdr,
            ip_sum,
            tcp_sum,
        }
    }

    /// Writes a complete packet into `buf` and returns its length: the header with `seq`,
    /// `ack`, `flags`, `window`, a zero urgent pointer, the NOP, NOP, timestamps option when
    /// `timestamps` is `Some((tsval, tsecr))` (no options otherwise), IP identification
    /// `id`, then the data `a` followed by `b`. Byte for byte what
    /// [`write_ipv4_tcp_vectored`] writes for the same header; the same errors when the
    /// packet is longer than 65535 bytes or `buf` too short.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &self,
        buf: &mut [u8],
        seq: u32,
        ack: u32,
        flags: TcpFlags,
        window: u16,
        timestamps: Option<(u32, u32)>,
        id: u16,
        data: (&[u8], &[u8]),
    ) -> Result<usize, WireError> {
        let (a, b) = data;
        let opt_len = if timestamps.is_some() { 12 } else { 0 };
        let tcp_hl = tcp::HEADER_LEN + opt_len;
        let seg_len = tcp_hl + a.len() + b.len();
        let total = ipv4::HEADER_LEN + seg_len;
        if total > usize::from(u16::MAX) {
            return Err(WireError::TooLong(total));
        }
        if buf.len() < total {
            return Err(WireError::Truncated {
                need: total,
                have: buf.len(),
            });
        }
        let (head, rest) = buf.split_at_mut(ipv4::HEADER_LEN + tcp::HEADER_LEN);
        let head: &mut [u8; ipv4::HEADER_LEN + tcp::HEADER_LEN] =
            head.try_into().expect("split at the header length");
        *head = self.hdr;
        // IPv4: total length, identification, checksum (RFC 791).
        let ip_ck = !fold32(self.ip_sum + total as u32 + u32::from(id));
        head[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        head[4..6].copy_from_slice(&id.to_be_bytes());
        head[10..12].copy_from_slice(&ip_ck.to_be_bytes());
        // TCP: sequence, acknowledgment, data offset and flags, window (RFC 9293 §3.1).
        let off_flags = ((tcp_hl as u16 / 4) << 12) | flags.bits();
        head[24..28].copy_from_slice(&seq.to_be_bytes());
        head[28..32].copy_from_slice(&ack.to_be_bytes());
        head[32..34].copy_from_slice(&off_flags.to_be_bytes());
        head[34..36].copy_from_slice(&window.to_be_bytes());
        let mut acc = self.tcp_sum
            + seg_len as u32
            + (seq >> 16)
            + (seq & 0xffff)
            + (ack >> 16)
            + (ack & 0xffff)
            + u32::from(off_flags)
            + u32::from(window);
        let data = if let Some((tsval, tsecr)) = timestamps {
            // RFC 7323 Appendix A's layout: NOP, NOP, kind 8, length 10, TSval, TSecr.
            let (opt, data) = rest.split_at_mut(12);
            opt[..4].copy_from_slice(&[tcp::kind::NOP, tcp::kind::NOP, tcp::kind::TIMESTAMPS, 10]);
            opt[4..8].copy_from_slice(&tsval.to_be_bytes());
            opt[8..12].copy_from_slice(&tsecr.to_be_bytes());
            acc += 0x0101
                + 0x080a
                + (tsval >> 16)
                + (tsval & 0xffff)
                + (tsecr >> 16)
                + (tsecr & 0xffff);
            data
        } else {
            rest
        };
        // Checksum-and-copy of the data; an empty piece costs nothing.
        if !a.is_empty() {
            let sa = checksum::copy_and_sum(data, a);
            acc += u32::from(if b.is_empty() {
                sa
            } else {
                let sb = checksum::copy_and_sum(&mut data[a.len()..], b);
                checksum::concat(sa, a.len(), sb)
            });
        } else if !b.is_empty() {
            acc += u32::from(checksum::copy_and_sum(data, b));
        }
        let ck = !fold32(acc);
        head[36..38].copy_from_slice(&ck.to_be_bytes());
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::{TcpFlags, TcpOptions};
    use core::net::Ipv4Addr;

    fn headers() -> (Ipv4Header, TcpHeader) {
        let ip = Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            0,
        );
        let tcp = TcpHeader {
            src_port: 1234,
            dst_port: 80,
            seq: 1,
            ack: 2,
            flags: TcpFlags::ACK,
            window: 1000,
            urgent: 0,
            options: TcpOptions {
                mss: Some(1460),
                ..TcpOptions::NONE
            },
        };
        (ip, tcp)
    }

    #[test]
    fn build_then_parse() {
        let (ip, tcp) = headers();
        let mut buf = [0u8; 1600];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, b"odd-length payload!").unwrap();
        assert_eq!(n, 20 + 24 + 19);
        let p = parse_ipv4_tcp(&buf[..n]).unwrap();
        assert_eq!(p.tcp.payload(), b"odd-length payload!");
        assert_eq!(TcpHeader::from_segment(&p.tcp).unwrap(), tcp);
        assert_eq!(p.ip.protocol(), IPPROTO_TCP);
        // Deferred verification gives the same verdict via checksum-and-copy.
        let d = parse_ipv4_tcp_deferred(&buf[..n]).unwrap();
        let mut out = [0u8; 19];
        let s = checksum::copy_and_sum(&mut out, d.tcp.payload());
        assert_eq!(checksum::add(d.header_sum(), s), 0xffff);
    }

    #[test]
    fn vectored_equals_contiguous() {
        let (ip, tcp) = headers();
        let data: Vec<u8> = (0..200u8).collect();
        let mut a = [0u8; 400];
        let mut b = [0u8; 400];
        let n = write_ipv4_tcp(&mut a, &ip, &tcp, &data).unwrap();
        for cut1 in [0, 1, 3, 100, 199] {
            for cut2 in [cut1, cut1 + 1, 200] {
                let cut2 = cut2.min(200);
                let m = write_ipv4_tcp_vectored(
                    &mut b,
                    &ip,
                    &tcp,
                    &[&data[..cut1], &data[cut1..cut2], &data[cut2..]],
                )
                .unwrap();
                assert_eq!(&a[..n], &b[..m], "cuts {cut1} {cut2}");
            }
        }
    }

    #[test]
    fn template_writes_what_the_general_builder_writes() {
        let (mut ip, mut tcp) = headers();
        ip.ttl = 37;
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let r = next();
            tcp.seq = r as u32;
            tcp.ack = (r >> 32) as u32;
            tcp.window = (r >> 7) as u16;
            tcp.flags = TcpFlags::from_bits((r >> 20) as u16);
            tcp.options = TcpOptions::NONE;
            let ts = (r & 1 != 0).then_some(((r >> 3) as u32, (r >> 29) as u32));
            if let Some((tsval, tsecr)) = ts {
                tcp.options.timestamps = Some(crate::tcp::Timestamps { tsval, tsecr });
            }
            ip.identification = (r >> 40) as u16;
            let len = (r >> 48) as usize % 301;
            let cut = (r >> 12) as usize % (len + 1);
            let (a, b) = data[..len].split_at(cut);
            let t = Ipv4TcpTemplate::new(&ip, tcp.src_port, tcp.dst_port);
            let mut want = [0u8; 400];
            let mut got = [0xa5u8; 400];
            let n = write_ipv4_tcp_vectored(&mut want, &ip, &tcp, &[a, b]).unwrap();
            let m = t
                .write(
                    &mut got,
                    tcp.seq,
                    tcp.ack,
                    tcp.flags,
                    tcp.window,
                    ts,
                    ip.identification,
                    (a, b),
                )
                .unwrap();
            assert_eq!(&want[..n], &got[..m]);
            assert!(parse_ipv4_tcp(&got[..m]).is_ok());
        }
        // All-zero data and fields still give the same checksums.
        tcp.seq = 0;
        tcp.ack = 0;
        tcp.window = 0;
        tcp.flags = TcpFlags::NONE;
        tcp.options = TcpOptions::NONE;
        let zeros = [0u8; 64];
        let t = Ipv4TcpTemplate::new(&ip, tcp.src_port, tcp.dst_port);
        let mut want = [0u8; 200];
        let mut got = [0u8; 200];
        let n = write_ipv4_tcp_vectored(&mut want, &ip, &tcp, &[&zeros]).unwrap();
        let m = t
            .write(
                &mut got,
                0,
                0,
                TcpFlags::NONE,
                0,
                None,
                ip.identification,
                (&zeros, &[]),
            )
            .unwrap();
        assert_eq!(&want[..n], &got[..m]);
        // Too short a buffer is the same error.
        assert_eq!(
            t.write(
                &mut got[..50],
                0,
                0,
                TcpFlags::ACK,
                0,
                None,
                0,
                (&zeros, &[])
            ),
            Err(WireError::Truncated {
                need: 104,
                have: 50
            })
        );
    }

    #[test]
    fn freebsd_layout_packet_parses_with_valid_checksum() {
        let (ip, mut tcp) = headers();
        tcp.options.sack_permitted = true;
        let mut buf = [0u8; 200];
        let n = write_ipv4_tcp_vectored_with(&mut buf, &ip, &tcp, OptionLayout::FreeBsd, &[b"abc"])
            .unwrap();
        assert_eq!(n, 20 + 28 + 3);
        let p = parse_ipv4_tcp(&buf[..n]).unwrap();
        assert_eq!(p.tcp.options_bytes(), &[2, 4, 0x05, 0xb4, 4, 2, 0, 0]);
        assert_eq!(TcpHeader::from_segment(&p.tcp).unwrap(), tcp);
        assert_eq!(p.tcp.payload(), b"abc");
    }

    #[test]
    fn corrupted_bits_are_detected() {
        let (ip, tcp) = headers();
        let mut buf = [0u8; 200];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &[7u8; 100]).unwrap();
        for bit in 0..n * 8 {
            let mut b = buf;
            b[bit / 8] ^= 1 << (bit % 8);
            assert!(
                parse_ipv4_tcp(&b[..n]).is_err(),
                "flip of bit {bit} not detected"
            );
        }
    }

    #[test]
    fn refuses_fragments_and_other_protocols() {
        let (mut ip, tcp) = headers();
        let mut buf = [0u8; 200];
        ip.more_fragments = true;
        ip.dont_fragment = false;
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, b"x").unwrap();
        assert_eq!(
            parse_ipv4_tcp(&buf[..n]),
            Err(WireError::Fragment {
                offset: 0,
                more: true
            })
        );
        let mut udp = [0u8; 28];
        Ipv4Header::new(ip.src, ip.dst, 17)
            .emit(&mut udp, 8)
            .unwrap();
        assert_eq!(parse_ipv4_tcp(&udp), Err(WireError::NotTcp(17)));
    }

    #[test]
    fn too_small_buffer_is_an_error() {
        let (ip, tcp) = headers();
        let mut buf = [0u8; 50];
        assert!(matches!(
            write_ipv4_tcp(&mut buf, &ip, &tcp, &[0; 10]),
            Err(WireError::Truncated { need: 54, have: 50 })
        ));
    }
}
