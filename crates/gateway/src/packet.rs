//! What the gateway needs to know about a packet. The simulator's packet type, the live
//! emulator's buffers and the tests' [`TestPacket`] all implement [`PacketLike`], so every
//! queue discipline and loss model is written once.

/// A packet as seen by a gateway: a length, a flow identity, and optionally its bytes.
pub trait PacketLike {
    /// Length of the IP packet in bytes (link framing is the [`Link`](crate::Link)'s business).
    fn len_bytes(&self) -> usize;
    /// A flow identity: packets of one transport flow must share it, so the fair-queueing
    /// disciplines keep them in one FIFO. Any stable hash of the 5-tuple will do.
    fn flow_id(&self) -> u64;
    /// Whether the packet may be marked instead of dropped (RFC 3168 §5: the IP ECN field is
    /// ECT(0), ECT(1), or already CE).
    fn ecn_capable(&self) -> bool {
        false
    }
    /// Sets the ECN field to CE (RFC 3168 §5). Called only when `ecn_capable()` is true.
    fn set_ce(&mut self) {}
    /// The packet's bytes, when it has real ones: the bit-error model flips a bit in them so
    /// the receiver's checksum catches the damage, and scripted drops parse the TCP header.
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        None
    }
}

/// A packet for tests and benchmarks: no bytes, just the fields a queue looks at, plus an
/// `id` so tests can check order and identity.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TestPacket {
    /// An identity for the test to follow the packet by (order, drops).
    pub id: u64,
    /// The flow identity [`PacketLike::flow_id`] returns.
    pub flow: u64,
    /// The length [`PacketLike::len_bytes`] returns, in IP bytes.
    pub len: usize,
    /// ECT: the sender negotiated ECN (RFC 3168).
    pub ect: bool,
    /// CE: a gateway marked it.
    pub ce: bool,
    /// Optional real bytes (e.g. an IPv4/TCP packet built with `ackclock_wire`).
    pub data: Option<Vec<u8>>,
}

impl TestPacket {
    /// A packet of `len` bytes of flow `flow`, without bytes and not ECN-capable.
    pub fn new(id: u64, flow: u64, len: usize) -> Self {
        TestPacket {
            id,
            flow,
            len,
            ..TestPacket::default()
        }
    }
    /// The same packet, ECN-capable.
    pub fn with_ect(mut self) -> Self {
        self.ect = true;
        self
    }
    /// A packet carrying real bytes; its length is theirs.
    pub fn with_data(id: u64, flow: u64, data: Vec<u8>) -> Self {
        TestPacket {
            id,
            flow,
            len: data.len(),
            data: Some(data),
            ..TestPacket::default()
        }
    }
}

impl PacketLike for TestPacket {
    fn len_bytes(&self) -> usize {
        self.len
    }
    fn flow_id(&self) -> u64 {
        self.flow
    }
    fn ecn_capable(&self) -> bool {
        self.ect
    }
    fn set_ce(&mut self) {
        self.ce = true;
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        self.data.as_deref_mut()
    }
}

/// A raw IPv4 packet: the flow identity is [`flow_id_of_ipv4`], ECN is read from and written
/// to the IP header.
impl PacketLike for Vec<u8> {
    fn len_bytes(&self) -> usize {
        self.len()
    }
    fn flow_id(&self) -> u64 {
        flow_id_of_ipv4(self)
    }
    fn ecn_capable(&self) -> bool {
        ipv4_ecn_capable(self)
    }
    fn set_ce(&mut self) {
        ipv4_set_ce(self);
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(self.as_mut_slice())
    }
}

/// Flow identity of an IPv4 packet: [`ackclock_wire::flow_hash`] (one function for the
/// gateway models, the simulator and the live emulator).
pub fn flow_id_of_ipv4(buf: &[u8]) -> u64 {
    ackclock_wire::flow_hash(buf)
}

/// RFC 3168 §5: the ECN field (the low two bits of the TOS byte) is ECT(0) = 10, ECT(1) = 01
/// or CE = 11 when the transport is ECN-capable; 00 is Not-ECT.
pub fn ipv4_ecn_capable(buf: &[u8]) -> bool {
    buf.len() >= 20 && buf[0] >> 4 == 4 && buf[1] & 0x03 != 0
}

/// Marks an ECN-capable IPv4 packet CE, patching the header checksum
/// ([`ackclock_wire::Ipv4HeaderMut::set_ecn_ce`]). Returns whether the packet was marked
/// (Not-ECT packets must never be marked, RFC 3168 §5).
pub fn ipv4_set_ce(buf: &mut [u8]) -> bool {
    ackclock_wire::Ipv4HeaderMut::new(buf).is_some_and(|mut h| h.set_ecn_ce())
}

#[cfg(test)]
pub(crate) mod testing {
    use ackclock_wire::{write_ipv4_tcp, Ipv4Header, TcpFlags, TcpHeader, TcpOptions};
    use core::net::Ipv4Addr;

    /// A valid IPv4/TCP packet with `payload` bytes of data.
    pub(crate) fn tcp_packet(sport: u16, dport: u16, seq: u32, payload: usize, tos: u8) -> Vec<u8> {
        let mut ip = Ipv4Header::new(
            Ipv4Addr::new(198, 18, 0, 1),
            Ipv4Addr::new(198, 18, 0, 2),
            6,
        );
        ip.tos = tos;
        let tcp = TcpHeader {
            src_port: sport,
            dst_port: dport,
            seq,
            ack: 1,
            flags: TcpFlags::ACK,
            window: 65535,
            urgent: 0,
            options: TcpOptions::NONE,
        };
        let mut buf = vec![0u8; 40 + payload];
        let data = vec![0x5a; payload];
        let n = write_ipv4_tcp(&mut buf, &ip, &tcp, &data).unwrap();
        buf.truncate(n);
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::testing::tcp_packet;
    use super::*;
    use ackclock_wire::Ipv4Packet;

    #[test]
    fn vec_flow_id_follows_the_five_tuple() {
        let a = tcp_packet(1000, 80, 1, 10, 0);
        let b = tcp_packet(1000, 80, 5000, 100, 0);
        let c = tcp_packet(1001, 80, 1, 10, 0);
        assert_eq!(a.flow_id(), b.flow_id(), "same 5-tuple, same flow");
        assert_ne!(a.flow_id(), c.flow_id());
        assert_eq!(a.len_bytes(), 50);
        // Garbage never panics.
        assert_eq!(vec![1u8, 2, 3].flow_id(), 0xcbf2_9ce4_8422_2325);
    }

    #[test]
    fn set_ce_keeps_the_ip_checksum_valid() {
        let mut p = tcp_packet(1, 2, 3, 20, 0x02); // ECT(0)
        assert!(p.ecn_capable());
        p.set_ce();
        let ip = Ipv4Packet::parse(&p).expect("checksum still valid");
        assert_eq!(ip.ecn(), 3);
        assert!(ackclock_wire::parse_ipv4_tcp(&p).is_ok());
        let mut q = tcp_packet(1, 2, 3, 20, 0x00); // Not-ECT
        assert!(!q.ecn_capable());
        assert!(!ipv4_set_ce(&mut q));
        assert_eq!(Ipv4Packet::parse(&q).unwrap().ecn(), 0);
    }
}
