//! Packets in flight: real bytes (the IPv4 packets `ackclock-wire` builds), so every link can
//! be captured to pcap and every receiver verifies real checksums. Buffers are recycled
//! through a pool so the steady state does not allocate.

use ackclock_gateway::PacketLike;
use ackclock_wire::Instant;

/// One packet travelling through the simulated network.
#[derive(Debug)]
pub struct SimPacket {
    /// The IPv4 packet, header included: what links carry, captures record and hosts take
    /// in.
    pub buf: Vec<u8>,
    /// Flow identity (hash of the 5-tuple), for fair queueing and per-flow accounting.
    pub flow: u64,
    /// Unique id, in creation order.
    pub uid: u64,
    /// When it left its source: when the sending host's stack or the cross-traffic source
    /// made it (a duplicate made on a link keeps its original's).
    pub born: Instant,
    /// The IP ECN field was not Not-ECT when the packet was made (ECT(0), ECT(1), or CE
    /// already): a queue may mark it CE instead of dropping it (RFC 3168).
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
        // RFC 3168: CE = 0b11 in the ECN field, the checksum patched (RFC 1624).
        if let Some(mut h) = ackclock_wire::Ipv4HeaderMut::new(&mut self.buf) {
            h.set_ecn_ce();
        }
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        Some(&mut self.buf)
    }
}

/// Recycles packet buffers (up to 4096 of them) and numbers the packets it makes.
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
            flow: ackclock_wire::flow_hash(bytes),
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
