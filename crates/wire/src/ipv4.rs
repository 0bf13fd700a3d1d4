//! IPv4 (RFC 791): a zero-copy validating view and a header builder. Options are skipped,
//! never interpreted; fragments are recognised and reported, never reassembled.

use crate::checksum;
use crate::WireError;
use core::net::Ipv4Addr;

/// Length of an IPv4 header without options, in bytes (IHL 5).
pub const HEADER_LEN: usize = 20;

/// The IP ECN field's code points (RFC 3168 §5): Not-ECT, ECT(1), ECT(0), CE. Not-ECT: the
/// transport is not ECN-capable, so a gateway must drop rather than mark.
pub const ECN_NOT_ECT: u8 = 0b00;
/// ECT(1): ECN-capable transport, equivalent to ECT(0) in RFC 3168; L4S (RFC 9331) gives
/// it a meaning of its own.
pub const ECN_ECT1: u8 = 0b01;
/// ECT(0): what an ECN-capable sender sets.
pub const ECN_ECT0: u8 = 0b10;
/// Congestion Experienced: what a gateway sets instead of dropping.
pub const ECN_CE: u8 = 0b11;

/// Flag bits in the 16-bit flags/fragment-offset word.
const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const FRAG_OFFSET_MASK: u16 = 0x1fff;

/// A validated view over an IPv4 packet. The slice it holds is exactly `total_len` bytes:
/// trailing bytes of the buffer (link-layer padding) are outside the view.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Packet<'a> {
    buf: &'a [u8],
    /// The fixed header, `buf[..20]`, as an array: the field accessors then need no bounds
    /// checks (they run on every packet).
    hdr: &'a [u8; HEADER_LEN],
}

impl core::fmt::Debug for Ipv4Packet<'_> {
    // As derived before `hdr` existed: `hdr` repeats the start of `buf`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ipv4Packet")
            .field("buf", &self.buf)
            .finish()
    }
}

impl<'a> Ipv4Packet<'a> {
    /// Validates version, IHL >= 5, total length within the buffer and covering the header,
    /// and the header checksum.
    #[inline]
    pub fn parse(buf: &'a [u8]) -> Result<Self, WireError> {
        let p = Self::parse_unverified(buf)?;
        // Without options (nearly always) the header is the fixed 20 bytes: a sum of known
        // length, which the compiler unrolls.
        let sum = if p.hdr[0] == 0x45 {
            checksum::sum(p.hdr)
        } else {
            checksum::sum(p.header())
        };
        if sum != 0xffff {
            return Err(WireError::BadIpChecksum);
        }
        Ok(p)
    }

    /// As [`parse`](Self::parse) but without verifying the header checksum (for drivers
    /// whose device has verified it already).
    #[inline]
    pub fn parse_unverified(buf: &'a [u8]) -> Result<Self, WireError> {
        let Some(hdr) = buf.first_chunk::<HEADER_LEN>() else {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        };
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(WireError::BadVersion(version));
        }
        let ihl = buf[0] & 0x0f;
        if ihl < 5 {
            return Err(WireError::BadHeaderLength(ihl));
        }
        let header_len = usize::from(ihl) * 4;
        if buf.len() < header_len {
            return Err(WireError::Truncated {
                need: header_len,
                have: buf.len(),
            });
        }
        let total = u16::from_be_bytes([buf[2], buf[3]]);
        if usize::from(total) < header_len || usize::from(total) > buf.len() {
            return Err(WireError::BadTotalLength {
                total,
                header: header_len,
                buffer: buf.len(),
            });
        }
        Ok(Ipv4Packet {
            buf: &buf[..usize::from(total)],
            hdr,
        })
    }

    /// A packet captured short of its length on the wire (a pcap record whose snap length
    /// cut it, as `tcpdump -s 96` writes): the header must be whole and its checksum right,
    /// and its total length more than was captured but no more than `wire_len`, the
    /// record's original length (a link may pad). The view's [`payload`](Self::payload) is
    /// then only what was captured; [`total_len`](Self::total_len) is the length on the
    /// wire. For packets that were captured whole, use [`parse`](Self::parse).
    pub fn parse_captured(buf: &'a [u8], wire_len: usize) -> Result<Self, WireError> {
        let total = match buf.get(2..4) {
            Some(t) => usize::from(u16::from_be_bytes([t[0], t[1]])),
            None => {
                return Err(WireError::Truncated {
                    need: HEADER_LEN,
                    have: buf.len(),
                })
            }
        };
        if total <= buf.len() || total > wire_len {
            // Captured whole (or claiming more than was on the wire): the ordinary checks.
            return Self::parse(buf);
        }
        let Some(hdr) = buf.first_chunk::<HEADER_LEN>() else {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        };
        let version = buf[0] >> 4;
        if version != 4 {
            return Err(WireError::BadVersion(version));
        }
        let ihl = buf[0] & 0x0f;
        if ihl < 5 {
            return Err(WireError::BadHeaderLength(ihl));
        }
        let header_len = usize::from(ihl) * 4;
        if buf.len() < header_len {
            return Err(WireError::Truncated {
                need: header_len,
                have: buf.len(),
            });
        }
        if total < header_len {
            return Err(WireError::BadTotalLength {
                total: total as u16,
                header: header_len,
                buffer: buf.len(),
            });
        }
        if checksum::sum(&buf[..header_len]) != 0xffff {
            return Err(WireError::BadIpChecksum);
        }
        Ok(Ipv4Packet { buf, hdr })
    }

    /// The whole packet: header, options and payload.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// Header length in bytes, options included (IHL * 4).
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.hdr[0] & 0x0f) * 4
    }
    /// The header including options.
    #[inline]
    pub fn header(&self) -> &'a [u8] {
        &self.buf[..self.header_len()]
    }
    /// The options bytes (empty when IHL is 5). Not interpreted.
    #[inline]
    pub fn options(&self) -> &'a [u8] {
        &self.buf[HEADER_LEN..self.header_len()]
    }
    /// The bytes after the header, up to the total length (for a view from
    /// [`parse_captured`](Self::parse_captured), up to what was captured).
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buf[self.header_len()..]
    }
    /// Type of service byte: DSCP in the top six bits, ECN in the bottom two (RFC 3168).
    #[inline]
    pub fn tos(&self) -> u8 {
        self.hdr[1]
    }
    /// The ECN field, the low two bits of the TOS byte (RFC 3168 §5): [`ECN_NOT_ECT`],
    /// [`ECN_ECT1`], [`ECN_ECT0`] or [`ECN_CE`].
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.hdr[1] & 0x03
    }
    /// The total length field: header and data, in bytes.
    #[inline]
    pub fn total_len(&self) -> u16 {
        u16::from_be_bytes([self.hdr[2], self.hdr[3]])
    }
    /// The identification field, which groups the fragments of one datagram (RFC 791).
    #[inline]
    pub fn identification(&self) -> u16 {
        u16::from_be_bytes([self.hdr[4], self.hdr[5]])
    }
    #[inline]
    fn flags_frag(&self) -> u16 {
        u16::from_be_bytes([self.hdr[6], self.hdr[7]])
    }
    /// The Don't Fragment flag (DF).
    #[inline]
    pub fn dont_fragment(&self) -> bool {
        self.flags_frag() & FLAG_DF != 0
    }
    /// The More Fragments flag (MF): another fragment of this datagram follows.
    #[inline]
    pub fn more_fragments(&self) -> bool {
        self.flags_frag() & FLAG_MF != 0
    }
    /// Fragment offset in bytes (the field counts 8-byte units).
    #[inline]
    pub fn fragment_offset(&self) -> u16 {
        (self.flags_frag() & FRAG_OFFSET_MASK) << 3
    }
    /// Whether this packet is a fragment of a larger datagram (MF set or a non-zero offset).
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (FLAG_MF | FRAG_OFFSET_MASK) != 0
    }
    /// Time to live: the hops left before a router must drop the packet.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.hdr[8]
    }
    /// The protocol of the payload: [`IPPROTO_TCP`](crate::IPPROTO_TCP) (6),
    /// [`IPPROTO_UDP`](crate::IPPROTO_UDP) (17), ...
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.hdr[9]
    }
    /// The header checksum field as received (RFC 1071 over the header).
    #[inline]
    pub fn header_checksum(&self) -> u16 {
        u16::from_be_bytes([self.hdr[10], self.hdr[11]])
    }
    /// The source address.
    #[inline]
    pub fn src(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.hdr[12], self.hdr[13], self.hdr[14], self.hdr[15])
    }
    /// The destination address.
    #[inline]
    pub fn dst(&self) -> Ipv4Addr {
        Ipv4Addr::new(self.hdr[16], self.hdr[17], self.hdr[18], self.hdr[19])
    }
}

/// The fields of an IPv4 header we build (no options; IHL is always 5). The total length
/// and checksum are computed by [`emit`](Self::emit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Header {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Protocol of the payload (6 for TCP, 17 for UDP); the packet builders of this crate
    /// set it themselves.
    pub protocol: u8,
    /// Time to live, in hops.
    pub ttl: u8,
    /// Type of service byte: DSCP in the top six bits, the ECN field in the bottom two
    /// (RFC 3168 §5).
    pub tos: u8,
    /// Identification, which groups the fragments of one datagram.
    pub identification: u16,
    /// Don't Fragment (DF): routers must drop rather than fragment the datagram.
    pub dont_fragment: bool,
    /// More Fragments (MF): another fragment of this datagram follows.
    pub more_fragments: bool,
    /// In bytes; must be a multiple of 8 (the low three bits are dropped on the wire).
    pub fragment_offset: u16,
}

impl Ipv4Header {
    /// A header for an unfragmented datagram with DF set, TTL 64 and TOS 0.
    pub fn new(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8) -> Self {
        Ipv4Header {
            src,
            dst,
            protocol,
            ttl: 64,
            tos: 0,
            identification: 0,
            dont_fragment: true,
            more_fragments: false,
            fragment_offset: 0,
        }
    }

    /// The header fields of a parsed packet (options are not carried over).
    pub fn from_packet(p: &Ipv4Packet<'_>) -> Self {
        Ipv4Header {
            src: p.src(),
            dst: p.dst(),
            protocol: p.protocol(),
            ttl: p.ttl(),
            tos: p.tos(),
            identification: p.identification(),
            dont_fragment: p.dont_fragment(),
            more_fragments: p.more_fragments(),
            fragment_offset: p.fragment_offset(),
        }
    }

    /// Writes the 20-byte header into `buf[..20]` for a datagram carrying `payload_len`
    /// bytes, with a correct header checksum.
    pub fn emit(&self, buf: &mut [u8], payload_len: usize) -> Result<(), WireError> {
        let total = HEADER_LEN + payload_len;
        if total > usize::from(u16::MAX) {
            return Err(WireError::TooLong(total));
        }
        let Some(h) = buf.get_mut(..HEADER_LEN) else {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have: buf.len(),
            });
        };
        let mut ff = (self.fragment_offset >> 3) & FRAG_OFFSET_MASK;
        if self.dont_fragment {
            ff |= FLAG_DF;
        }
        if self.more_fragments {
            ff |= FLAG_MF;
        }
        h[0] = 0x45;
        h[1] = self.tos;
        h[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        h[4..6].copy_from_slice(&self.identification.to_be_bytes());
        h[6..8].copy_from_slice(&ff.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.protocol;
        h[10..12].fill(0);
        h[12..16].copy_from_slice(&self.src.octets());
        h[16..20].copy_from_slice(&self.dst.octets());
        let ck = checksum::checksum(h);
        h[10..12].copy_from_slice(&ck.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        // A real header (Wikipedia's example): checksum 0xb861.
        let mut v = vec![
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        v.resize(0x73, 0xab);
        v
    }

    #[test]
    fn parses_known_header() {
        let buf = sample();
        let p = Ipv4Packet::parse(&buf).unwrap();
        assert_eq!(p.total_len(), 0x73);
        assert_eq!(p.protocol(), 17);
        assert_eq!(p.src(), Ipv4Addr::new(192, 168, 0, 1));
        assert_eq!(p.dst(), Ipv4Addr::new(192, 168, 0, 199));
        assert!(p.dont_fragment());
        assert!(!p.is_fragment());
        assert_eq!(p.header_checksum(), 0xb861);
        assert_eq!(p.payload().len(), 0x73 - 20);
    }

    #[test]
    fn trailing_padding_is_outside_the_view() {
        let mut buf = sample();
        buf.extend_from_slice(&[0; 10]);
        let p = Ipv4Packet::parse(&buf).unwrap();
        assert_eq!(p.as_bytes().len(), 0x73);
    }

    #[test]
    fn rejects_malformations() {
        let buf = sample();
        assert!(matches!(
            Ipv4Packet::parse(&buf[..19]),
            Err(WireError::Truncated { need: 20, have: 19 })
        ));
        let mut b = buf.clone();
        b[0] = 0x65;
        assert_eq!(Ipv4Packet::parse(&b), Err(WireError::BadVersion(6)));
        let mut b = buf.clone();
        b[0] = 0x44;
        assert_eq!(Ipv4Packet::parse(&b), Err(WireError::BadHeaderLength(4)));
        let mut b = buf.clone();
        b[0] = 0x4f; // 60-byte header in a 0x73 packet: fine length-wise, checksum fails
        assert_eq!(Ipv4Packet::parse(&b), Err(WireError::BadIpChecksum));
        assert!(matches!(
            Ipv4Packet::parse(&buf[..0x72]),
            Err(WireError::BadTotalLength { total: 0x73, .. })
        ));
        let mut b = buf.clone();
        b[12] ^= 1;
        assert_eq!(Ipv4Packet::parse(&b), Err(WireError::BadIpChecksum));
        assert!(Ipv4Packet::parse_unverified(&b).is_ok());
    }

    #[test]
    fn total_length_shorter_than_header_is_rejected() {
        let mut h = [0u8; 24];
        Ipv4Header::new(Ipv4Addr::LOCALHOST, Ipv4Addr::LOCALHOST, 6)
            .emit(&mut h, 4)
            .unwrap();
        h[2..4].copy_from_slice(&12u16.to_be_bytes());
        assert!(matches!(
            Ipv4Packet::parse_unverified(&h),
            Err(WireError::BadTotalLength { total: 12, .. })
        ));
    }

    #[test]
    fn options_are_skipped() {
        // IHL 6: one word of options (NOP NOP NOP EOL).
        let mut b = vec![0u8; 28];
        b[0] = 0x46;
        b[2..4].copy_from_slice(&28u16.to_be_bytes());
        b[8] = 64;
        b[9] = 6;
        b[20..24].copy_from_slice(&[1, 1, 1, 0]);
        b[24..28].copy_from_slice(b"data");
        let ck = checksum::checksum(&b[..24]);
        b[10..12].copy_from_slice(&ck.to_be_bytes());
        let p = Ipv4Packet::parse(&b).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload(), b"data");
    }

    #[test]
    fn fragments_are_recognised() {
        let mut h = Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            6,
        );
        let mut b = [0u8; 40];
        for (mf, off, frag) in [(false, 0, false), (true, 0, true), (false, 1480, true)] {
            h.more_fragments = mf;
            h.fragment_offset = off;
            h.dont_fragment = !frag;
            h.emit(&mut b, 20).unwrap();
            let p = Ipv4Packet::parse(&b).unwrap();
            assert_eq!(p.is_fragment(), frag);
            assert_eq!(p.fragment_offset(), off);
            assert_eq!(p.more_fragments(), mf);
        }
    }

    #[test]
    fn emit_round_trips_and_checks_sizes() {
        let mut h = Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 19, 0, 2),
            6,
        );
        h.identification = 0xbeef;
        h.tos = 0x02;
        let mut b = [0u8; 60];
        h.emit(&mut b, 40).unwrap();
        let p = Ipv4Packet::parse(&b).unwrap();
        assert_eq!(Ipv4Header::from_packet(&p), h);
        assert_eq!(p.ecn(), 2);
        assert!(matches!(
            h.emit(&mut b[..10], 0),
            Err(WireError::Truncated { need: 20, have: 10 })
        ));
        assert_eq!(h.emit(&mut b, 65516), Err(WireError::TooLong(65536)));
    }
}

/// A mutable view of an IPv4 header for the edits a router or a gateway makes in flight
/// (TTL, the ECN field), each patching the header checksum incrementally (RFC 1624 eqn. 3)
/// so the packet stays valid without a full recomputation. It checks only what the edits
/// need (a version-4 header of 20 bytes or more); the packet was validated when it was made.
#[derive(Debug)]
pub struct Ipv4HeaderMut<'a> {
    hdr: &'a mut [u8; HEADER_LEN],
}

impl<'a> Ipv4HeaderMut<'a> {
    /// The header at the start of `buf`, if it is one.
    #[inline]
    pub fn new(buf: &'a mut [u8]) -> Option<Self> {
        let hdr: &mut [u8; HEADER_LEN] = buf.get_mut(..HEADER_LEN)?.try_into().ok()?;
        (hdr[0] >> 4 == 4).then_some(Ipv4HeaderMut { hdr })
    }

    /// Time to live, in hops.
    pub fn ttl(&self) -> u8 {
        self.hdr[8]
    }

    /// Replaces the 16-bit word at `at` and patches the checksum (RFC 1624).
    #[inline]
    fn set_word(&mut self, at: usize, new: u16) {
        let old = u16::from_be_bytes([self.hdr[at], self.hdr[at + 1]]);
        self.hdr[at..at + 2].copy_from_slice(&new.to_be_bytes());
        let ck = u16::from_be_bytes([self.hdr[10], self.hdr[11]]);
        let ck = checksum::update16(ck, old, new);
        self.hdr[10..12].copy_from_slice(&ck.to_be_bytes());
    }

    /// A router's forwarding step (RFC 791, RFC 1812 §5.3.1): TTL minus one. Returns false,
    /// changing nothing, when the TTL is 1 or 0: the packet must be dropped, not forwarded.
    #[inline]
    pub fn decrement_ttl(&mut self) -> bool {
        let ttl = self.hdr[8];
        if ttl <= 1 {
            return false;
        }
        self.set_word(8, u16::from_be_bytes([ttl - 1, self.hdr[9]]));
        true
    }

    /// Sets the ECN field (the low two bits of the TOS byte, RFC 3168 §5) to `ecn`: a
    /// sender marking its packet ECT(0) ([`ECN_ECT0`]).
    #[inline]
    pub fn set_ecn(&mut self, ecn: u8) {
        let tos = (self.hdr[1] & !0x03) | (ecn & 0x03);
        self.set_word(0, u16::from_be_bytes([self.hdr[0], tos]));
    }

    /// RFC 3168 §5: the ECN field says ECT(0), ECT(1) or CE (not Not-ECT).
    pub fn ecn_capable(&self) -> bool {
        self.hdr[1] & 0x03 != 0
    }

    /// Marks an ECN-capable packet Congestion Experienced (RFC 3168 §5). Returns whether it
    /// did: a Not-ECT packet must never be marked.
    #[inline]
    pub fn set_ecn_ce(&mut self) -> bool {
        if !self.ecn_capable() {
            return false;
        }
        self.set_word(0, u16::from_be_bytes([self.hdr[0], self.hdr[1] | 0x03]));
        true
    }
}

/// Flow identity of an IPv4 packet: FNV-1a over the protocol byte, the source and
/// destination addresses and the first four bytes of the transport header (the ports of TCP
/// and UDP). The same on every run and machine, so the simulator and the gateway models
/// agree; bytes that are not IPv4 all hash to the FNV offset basis, never a panic.
pub fn flow_hash(buf: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    if buf.len() >= HEADER_LEN {
        eat(&buf[9..10]);
        eat(&buf[12..20]);
        let ihl = usize::from(buf[0] & 0x0f) * 4;
        if let Some(ports) = buf.get(ihl..ihl + 4) {
            eat(ports);
        }
    }
    h
}

#[cfg(test)]
mod mut_tests {
    use super::*;

    fn packet(ttl: u8, tos: u8) -> Vec<u8> {
        let mut h = Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            6,
        );
        h.ttl = ttl;
        h.tos = tos;
        let mut b = vec![0u8; 40];
        h.emit(&mut b, 20).unwrap();
        b
    }

    #[test]
    fn rfc1812_5_3_1_ttl_decrement_keeps_the_checksum_valid_and_stops_at_one() {
        let mut b = packet(64, 0);
        assert!(Ipv4HeaderMut::new(&mut b).unwrap().decrement_ttl());
        let p = Ipv4Packet::parse(&b).expect("checksum still valid");
        assert_eq!(p.ttl(), 63);
        let mut b = packet(1, 0);
        let before = b.clone();
        assert!(!Ipv4HeaderMut::new(&mut b).unwrap().decrement_ttl());
        assert_eq!(b, before, "an expiring packet is left as it was");
    }

    #[test]
    fn rfc3168_5_ce_marks_only_ect_packets_and_keeps_the_checksum_valid() {
        let mut b = packet(64, 0b10);
        assert!(Ipv4HeaderMut::new(&mut b).unwrap().set_ecn_ce());
        assert_eq!(Ipv4Packet::parse(&b).expect("valid").ecn(), 0b11);
        let mut b = packet(64, 0);
        assert!(!Ipv4HeaderMut::new(&mut b).unwrap().set_ecn_ce());
        assert_eq!(Ipv4Packet::parse(&b).unwrap().ecn(), 0);
        assert!(Ipv4HeaderMut::new(&mut [0x45; 19]).is_none());
        assert!(
            Ipv4HeaderMut::new(&mut [0x65; 20]).is_none(),
            "IPv6 is not IPv4"
        );
    }
}
