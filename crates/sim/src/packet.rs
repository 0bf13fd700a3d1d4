//! Packets in flight: real bytes (the IPv4 packets `ackclock-wire` builds), so every link can
//! be captured to pcap and every receiver verifies real checksums. Buffers are recycled
//! through a pool so the steady state does not allocate.

use ackclock_gateway::PacketLike;
use ackclock_wire::Instant;

/// One packet travelling through the simulated network.
#[derive(Debug)]
pub struct SimPacket {
    pub buf: Vec<u8>,
    /// Flow identity (hash of the 5-tuple), for fair queueing and per-flow accounting.
    pub flow: u64,
    /// Unique id, in creation order.
    pub uid: u64,
    /// When it left its source.
    pub born: Instant,
    /// IP ECN field allows marking (ECT(0) or ECT(1)).
    pub ecn_capable: bool,
}

impl PacketLike for SimPacket {
    fn len_bytes(&self) -> usize {
        self.buf.len()
    }
    fn flow_id(&self) -> u64 {
        self.flow
    }
    fn ecn_capable(&self) -> bool {
        self.ecn_capable
    }
    fn set_ce(&mut self) {
        // RFC 3168: CE = 0b11 in the ECN field; the IP header checksum is updated
        // incrementally (RFC 1624) so the packet stays valid.
        if self.buf.len() >= 20 {
            let old = u16::from_be_bytes([self.buf[0], self.buf[1]]);
            self.buf[1] |= 0x03;
            let new = u16::from_be_bytes([self.buf[0], self.buf[1]]);
            let ck = u16::from_be_bytes([self.buf[10], self.buf[11]]);
            let ck = ackclock_wire::checksum::update16(ck, old, new);
            self.buf[10..12].copy_from_slice(&ck.to_be_bytes());
        }
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
}

/// Flow identity of an IPv4 packet: a hash of protocol, addresses and ports (FNV-1a, so it
/// is the same on every run and machine).
pub fn flow_of(buf: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h ^= u64::from(x);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    if buf.len() >= 20 {
        eat(&buf[9..10]);
        eat(&buf[12..20]);
        let ihl = usize::from(buf[0] & 0x0f) * 4;
        if let Some(ports) = buf.get(ihl..ihl + 4) {
            eat(ports);
        }
    }
    h
}

/// Recycles packet buffers.
#[derive(Default)]
pub struct PacketPool {
    free: Vec<Vec<u8>>,
    next_uid: u64,
}

impl PacketPool {
    /// A packet holding a copy of `bytes`.
    pub fn make(&mut self, now: Instant, bytes: &[u8]) -> SimPacket {
        let mut buf = self.free.pop().unwrap_or_else(|| Vec::with_capacity(1600));
        buf.clear();
        buf.extend_from_slice(bytes);
        self.next_uid += 1;
        SimPacket {
            flow: flow_of(bytes),
            ecn_capable: bytes.len() >= 2 && bytes[1] & 0x03 != 0,
            buf,
            uid: self.next_uid,
            born: now,
        }
    }

    /// Returns a packet's buffer for reuse.
    pub fn recycle(&mut self, p: SimPacket) {
        if self.free.len() < 4096 {
            self.free.push(p.buf);
        }
    }
}
