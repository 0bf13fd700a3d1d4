//! A sans-IO UDP host (RFC 768): bound sockets with bounded receive queues, an output queue
//! the driver drains with [`UdpStack::poll_transmit`], and counters for everything dropped.
//! Like the TCP [`Endpoint`](ackclock_tcp::Endpoint) it reads no clock and does no I/O: the
//! simulator and the live TUN loop feed it packets and send what it emits.
//!
//! Buffers are recycled through a free list, so a steady exchange does not allocate.

use crate::DgramError;
use ackclock_wire::ipv4::Ipv4Header;
use ackclock_wire::udp::{self, IPPROTO_UDP};
use ackclock_wire::WireError;
use core::net::{Ipv4Addr, SocketAddrV4};
use std::collections::{HashMap, VecDeque};

/// Limits of one UDP host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UdpConfig {
    /// This host's address: datagrams to other addresses are counted and dropped.
    pub addr: Ipv4Addr,
    /// Datagrams a socket's receive queue holds before arrivals are dropped (BSD's
    /// `sbspace` check in `udp_input`: a full socket buffer drops, it does not block).
    pub rx_queue: usize,
    /// Datagrams the output queue holds before a send fails with
    /// [`DgramError::QueueFull`] (BSD's ENOBUFS from a full interface queue).
    pub tx_queue: usize,
    /// The IP ECN field of datagrams sent (RFC 3168 §5: ECT(0) only for transports that
    /// react to CE; none of ours does yet, so not-ECT by default).
    pub ecn: u8,
}

impl UdpConfig {
    /// A host at `addr` with the default limits: receive queues of 256 datagrams, an
    /// output queue of 1024, and datagrams sent not-ECT.
    pub fn new(addr: Ipv4Addr) -> Self {
        UdpConfig {
            addr,
            rx_queue: 256,
            tx_queue: 1024,
            ecn: ackclock_wire::ipv4::ECN_NOT_ECT,
        }
    }
}

/// A bound socket of a [`UdpStack`]. It carries its slot's generation, so a handle kept
/// after [`UdpStack::close`] never reaches a later socket in the same slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SocketId {
    slot: u32,
    generation: u32,
}

impl SocketId {
    /// A handle for the `index`th socket of another [`UdpSockets`] (kernel sockets, say),
    /// which has no slots to reuse.
    pub fn from_index(index: u32) -> SocketId {
        SocketId {
            slot: index,
            generation: 0,
        }
    }
    /// The slot (or index) this handle names.
    pub fn index(self) -> u32 {
        self.slot
    }
}

/// Counters of one UDP host (the `udpstat` of 4.3BSD, plus the queue limits').
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UdpStats {
    /// Datagrams queued on a socket (the ones dropped for any reason below are not
    /// counted here).
    pub datagrams_in: u64,
    /// UDP payload bytes of those datagrams (no IP or UDP header).
    pub bytes_in: u64,
    /// Datagrams [`UdpStack::poll_transmit`] wrote out as IPv4 packets.
    pub datagrams_out: u64,
    /// UDP payload bytes of those datagrams (no IP or UDP header).
    pub bytes_out: u64,
    /// Not a well-formed IPv4/UDP packet (truncated, bad lengths, fragments, another
    /// protocol).
    pub malformed: u64,
    /// A UDP checksum that does not verify (RFC 768; a zero checksum means none was
    /// computed and is accepted).
    pub bad_checksum: u64,
    /// For another address than this host's.
    pub wrong_addr: u64,
    /// For a port nobody is bound to (4.3BSD answers with ICMP port unreachable; we count).
    pub no_port: u64,
    /// Dropped because the socket's receive queue was full.
    pub rx_queue_full: u64,
    /// Sends refused because the output queue was full ([`DgramError::QueueFull`]), and
    /// also the datagrams [`UdpStack::poll_transmit`] dropped because they did not fit
    /// the driver's buffer.
    pub tx_queue_full: u64,
}

struct Socket {
    generation: u32,
    port: u16,
    rx: VecDeque<(SocketAddrV4, u8, Vec<u8>)>,
}

struct Outgoing {
    src_port: u16,
    dst: SocketAddrV4,
    data: Vec<u8>,
}

/// One host's UDP (RFC 768), sans-IO: bound sockets, each with a receive queue, and one
/// output queue of datagrams waiting to become IPv4 packets. See the module
/// documentation for what drives it.
pub struct UdpStack {
    cfg: UdpConfig,
    sockets: Vec<Option<Socket>>,
    /// Generations handed out so far, per slot.
    generations: Vec<u32>,
    by_port: HashMap<u16, usize>,
    tx: VecDeque<Outgoing>,
    free: Vec<Vec<u8>>,
    next_ephemeral: u16,
    ip_id: u16,
    stats: UdpStats,
}

/// First port of the ephemeral range (RFC 6335 §6: 49152-65535).
const EPHEMERAL_FIRST: u16 = 49152;

impl UdpStack {
    /// A stack with `cfg`'s address and limits and no socket bound yet.
    pub fn new(cfg: UdpConfig) -> Self {
        UdpStack {
            cfg,
            sockets: Vec::new(),
            generations: Vec::new(),
            by_port: HashMap::new(),
            tx: VecDeque::new(),
            free: Vec::new(),
            next_ephemeral: EPHEMERAL_FIRST,
            ip_id: 0,
            stats: UdpStats::default(),
        }
    }

    /// This host's address ([`UdpConfig::addr`]): the source of everything it sends.
    pub fn addr(&self) -> Ipv4Addr {
        self.cfg.addr
    }
    /// The counters since the stack was created.
    pub fn stats(&self) -> &UdpStats {
        &self.stats
    }
    /// The configuration it was created with.
    pub fn config(&self) -> &UdpConfig {
        &self.cfg
    }

    /// Binds a socket to `port`, or to a free ephemeral port when `port` is 0 (the next
    /// free one of 49152-65535, RFC 6335 §6, in turn).
    ///
    /// # Errors
    /// [`DgramError::PortInUse`] when another socket holds `port`,
    /// [`DgramError::NoEphemeralPort`] when port 0 finds the whole range taken.
    pub fn bind(&mut self, port: u16) -> Result<SocketId, DgramError> {
        let port = if port == 0 {
            self.ephemeral_port()?
        } else if self.by_port.contains_key(&port) {
            return Err(DgramError::PortInUse(port));
        } else {
            port
        };
        let slot = match self.sockets.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.sockets.push(None);
                self.generations.push(0);
                self.sockets.len() - 1
            }
        };
        self.generations[slot] = self.generations[slot].wrapping_add(1);
        let generation = self.generations[slot];
        self.sockets[slot] = Some(Socket {
            generation,
            port,
            rx: VecDeque::new(),
        });
        self.by_port.insert(port, slot);
        Ok(SocketId {
            slot: slot as u32,
            generation,
        })
    }

    fn socket(&self, s: SocketId) -> Option<&Socket> {
        self.sockets
            .get(s.slot as usize)?
            .as_ref()
            .filter(|k| k.generation == s.generation)
    }

    fn socket_mut(&mut self, s: SocketId) -> Option<&mut Socket> {
        self.sockets
            .get_mut(s.slot as usize)?
            .as_mut()
            .filter(|k| k.generation == s.generation)
    }

    fn ephemeral_port(&mut self) -> Result<u16, DgramError> {
        for _ in 0..=(u16::MAX - EPHEMERAL_FIRST) {
            let p = self.next_ephemeral;
            self.next_ephemeral = if p == u16::MAX {
                EPHEMERAL_FIRST
            } else {
                p + 1
            };
            if !self.by_port.contains_key(&p) {
                return Ok(p);
            }
        }
        Err(DgramError::NoEphemeralPort)
    }

    /// Closes a socket: its queued datagrams are dropped, its port is free again.
    pub fn close(&mut self, s: SocketId) {
        if self.socket(s).is_none() {
            return;
        }
        if let Some(sock) = self.sockets[s.slot as usize].take() {
            self.by_port.remove(&sock.port);
            for (_, _, buf) in sock.rx {
                self.recycle(buf);
            }
        }
    }

    /// The local address of a socket.
    pub fn local(&self, s: SocketId) -> Option<SocketAddrV4> {
        let sock = self.socket(s)?;
        Some(SocketAddrV4::new(self.cfg.addr, sock.port))
    }

    /// Queues one datagram for sending from `s`'s port to `dst`. It becomes a packet at
    /// the next [`poll_transmit`](Self::poll_transmit) (with IP identification numbers
    /// counting up and the ECN field of [`UdpConfig::ecn`]).
    ///
    /// # Errors
    /// [`DgramError::NotBound`] when the socket is not bound, [`DgramError::TooLong`]
    /// when the payload does not fit an unfragmented IPv4 datagram,
    /// [`DgramError::QueueFull`] when the output queue is full (counted in
    /// [`UdpStats::tx_queue_full`]). A payload that fits IPv4 but not the driver's MTU is
    /// accepted here and dropped by `poll_transmit`.
    pub fn send_to(
        &mut self,
        s: SocketId,
        dst: SocketAddrV4,
        payload: &[u8],
    ) -> Result<(), DgramError> {
        let port = self.socket(s).ok_or(DgramError::NotBound)?.port;
        if payload.len() > udp::MAX_PAYLOAD {
            return Err(DgramError::TooLong(payload.len()));
        }
        if self.tx.len() >= self.cfg.tx_queue {
            self.stats.tx_queue_full += 1;
            return Err(DgramError::QueueFull);
        }
        let mut data = self.free.pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(payload);
        self.tx.push_back(Outgoing {
            src_port: port,
            dst,
            data,
        });
        Ok(())
    }

    /// Takes the oldest datagram queued on `s`: copies it into `buf` (truncated to `buf`'s
    /// length, as `recvfrom` truncates) and returns its full length, its source and the
    /// ECN field it arrived with.
    pub fn recv_from(&mut self, s: SocketId, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        let sock = self.socket_mut(s)?;
        let (from, ecn, data) = sock.rx.pop_front()?;
        let n = data.len().min(buf.len());
        buf[..n].copy_from_slice(&data[..n]);
        let len = data.len();
        self.recycle(data);
        Some((len, from, ecn))
    }

    /// Datagrams waiting on a socket.
    pub fn queued(&self, s: SocketId) -> usize {
        self.socket(s).map_or(0, |k| k.rx.len())
    }

    /// Whether any socket is bound (a host without datagram applications leaves UDP
    /// arrivals to the cross-traffic counters).
    pub fn has_sockets(&self) -> bool {
        !self.by_port.is_empty()
    }

    /// Whether anything waits to be sent.
    pub fn has_output(&self) -> bool {
        !self.tx.is_empty()
    }

    /// Processes one arriving IPv4 packet. Returns `Err` (and counts it) when the packet
    /// is not a well-formed UDP datagram; packets for other addresses or unbound ports and
    /// arrivals at a full socket are counted and dropped (`Ok`).
    pub fn handle_packet(&mut self, buf: &[u8]) -> Result<(), WireError> {
        let p = match udp::parse_ipv4_udp(buf) {
            Ok(p) => p,
            Err(e) => {
                match e {
                    WireError::BadUdpChecksum => self.stats.bad_checksum += 1,
                    _ => self.stats.malformed += 1,
                }
                return Err(e);
            }
        };
        if p.ip.dst() != self.cfg.addr {
            self.stats.wrong_addr += 1;
            return Ok(());
        }
        let Some(&slot) = self.by_port.get(&p.dst_port) else {
            self.stats.no_port += 1;
            return Ok(());
        };
        let Some(sock) = self.sockets[slot].as_mut() else {
            self.stats.no_port += 1;
            return Ok(());
        };
        if sock.rx.len() >= self.cfg.rx_queue {
            self.stats.rx_queue_full += 1;
            return Ok(());
        }
        let mut data = self.free.pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(p.payload);
        self.stats.datagrams_in += 1;
        self.stats.bytes_in += p.payload.len() as u64;
        sock.rx.push_back((p.src(), p.ip.ecn(), data));
        Ok(())
    }

    /// Writes the next queued datagram as a whole IPv4 packet into `buf` and returns its
    /// length; `None` when nothing is queued. A datagram that does not fit `buf` is
    /// dropped and counted (the driver's buffer is its MTU).
    pub fn poll_transmit(&mut self, buf: &mut [u8]) -> Option<usize> {
        while let Some(out) = self.tx.pop_front() {
            let mut ip = Ipv4Header::new(self.cfg.addr, *out.dst.ip(), IPPROTO_UDP);
            ip.tos = self.cfg.ecn & 0x03;
            self.ip_id = self.ip_id.wrapping_add(1);
            ip.identification = self.ip_id;
            let r = udp::write_ipv4_udp(buf, &ip, out.src_port, out.dst.port(), &out.data);
            let len = out.data.len();
            self.recycle(out.data);
            match r {
                Ok(n) => {
                    self.stats.datagrams_out += 1;
                    self.stats.bytes_out += len as u64;
                    return Some(n);
                }
                Err(_) => self.stats.tx_queue_full += 1,
            }
        }
        None
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.free.len() < 256 {
            self.free.push(buf);
        }
    }
}

/// What a datagram application needs from a socket: send and receive. The simulator and
/// the live TUN loop give a [`UdpStack`] socket ([`StackSocket`]); live mode's peer side
/// uses the kernel's sockets through the same trait.
pub trait DatagramSocket {
    /// Sends one datagram; `false` when it was refused (queue full).
    fn send_to(&mut self, dst: SocketAddrV4, payload: &[u8]) -> bool;
    /// The next datagram received: its length (truncated to `buf`), source and ECN field.
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)>;
}

/// A host's UDP sockets, whatever carries them: the sans-IO [`UdpStack`] of a simulated or
/// TUN host, or Linux's kernel sockets (`ackclock-tun`'s `KernelUdp`). An application binds
/// its socket through it and reads and sends through [`StackSocket`], so one application
/// runs on any of them.
pub trait UdpSockets {
    /// Binds a socket to `port`, or to a free ephemeral port when `port` is 0.
    fn open(&mut self, port: u16) -> Result<SocketId, DgramError>;
    /// The socket's local address, while it is bound.
    fn local_addr(&self, s: SocketId) -> Option<SocketAddrV4>;
    /// Sends one datagram from `s`; `false` when it was refused (queue full, not bound).
    fn send(&mut self, s: SocketId, dst: SocketAddrV4, payload: &[u8]) -> bool;
    /// The next datagram received on `s`: its full length (the copy is truncated to
    /// `buf`), its source and its IP ECN field.
    fn recv(&mut self, s: SocketId, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)>;
}

impl UdpSockets for UdpStack {
    fn open(&mut self, port: u16) -> Result<SocketId, DgramError> {
        self.bind(port)
    }
    fn local_addr(&self, s: SocketId) -> Option<SocketAddrV4> {
        self.local(s)
    }
    fn send(&mut self, s: SocketId, dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.send_to(s, dst, payload).is_ok()
    }
    fn recv(&mut self, s: SocketId, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        self.recv_from(s, buf)
    }
}

/// One socket of a host's [`UdpSockets`], as a [`DatagramSocket`].
pub struct StackSocket<'a> {
    /// The host's sockets.
    pub stack: &'a mut dyn UdpSockets,
    /// This socket.
    pub id: SocketId,
}

impl DatagramSocket for StackSocket<'_> {
    fn send_to(&mut self, dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.stack.send(self.id, dst, payload)
    }
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        self.stack.recv(self.id, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

    fn pair() -> (UdpStack, UdpStack) {
        (
            UdpStack::new(UdpConfig::new(A)),
            UdpStack::new(UdpConfig::new(B)),
        )
    }

    fn deliver(from: &mut UdpStack, to: &mut UdpStack) -> usize {
        let mut buf = [0u8; 2048];
        let mut n = 0;
        while let Some(len) = from.poll_transmit(&mut buf) {
            let _ = to.handle_packet(&buf[..len]);
            n += 1;
        }
        n
    }

    #[test]
    fn rfc768_datagrams_reach_the_bound_port_with_their_source() {
        let (mut a, mut b) = pair();
        let sa = a.bind(0).unwrap();
        let sb = b.bind(53).unwrap();
        a.send_to(sa, SocketAddrV4::new(B, 53), b"who is 198.18.0.9")
            .unwrap();
        assert_eq!(deliver(&mut a, &mut b), 1);
        let mut buf = [0u8; 64];
        let (n, from, ecn) = b.recv_from(sb, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"who is 198.18.0.9");
        assert_eq!(from, a.local(sa).unwrap());
        assert_eq!(from.port(), EPHEMERAL_FIRST);
        assert_eq!(ecn, 0);
        assert!(b.recv_from(sb, &mut buf).is_none());
    }

    #[test]
    fn unbound_ports_other_addresses_and_full_queues_are_counted_not_delivered() {
        let (mut a, mut b) = pair();
        let sa = a.bind(7).unwrap();
        a.send_to(sa, SocketAddrV4::new(B, 9), b"x").unwrap();
        a.send_to(sa, SocketAddrV4::new(A, 9), b"x").unwrap();
        deliver(&mut a, &mut b);
        assert_eq!(b.stats().no_port, 1);
        assert_eq!(b.stats().wrong_addr, 1);
        let mut b = UdpStack::new(UdpConfig {
            rx_queue: 2,
            ..UdpConfig::new(B)
        });
        b.bind(9).unwrap();
        for _ in 0..5 {
            a.send_to(sa, SocketAddrV4::new(B, 9), b"x").unwrap();
        }
        deliver(&mut a, &mut b);
        assert_eq!(b.stats().datagrams_in, 2);
        assert_eq!(b.stats().rx_queue_full, 3);
    }

    #[test]
    fn a_full_output_queue_refuses_sends() {
        let mut a = UdpStack::new(UdpConfig {
            tx_queue: 3,
            ..UdpConfig::new(A)
        });
        let s = a.bind(0).unwrap();
        for _ in 0..3 {
            a.send_to(s, SocketAddrV4::new(B, 9), b"x").unwrap();
        }
        assert_eq!(
            a.send_to(s, SocketAddrV4::new(B, 9), b"x"),
            Err(DgramError::QueueFull)
        );
        assert_eq!(a.stats().tx_queue_full, 1);
    }

    #[test]
    fn ports_are_exclusive_and_freed_on_close() {
        let mut a = UdpStack::new(UdpConfig::new(A));
        let s = a.bind(2049).unwrap();
        assert_eq!(a.bind(2049), Err(DgramError::PortInUse(2049)));
        a.close(s);
        assert!(a.bind(2049).is_ok());
        assert_eq!(
            a.send_to(s, SocketAddrV4::new(B, 9), b"x"),
            Err(DgramError::NotBound)
        );
    }

    #[test]
    fn malformed_packets_are_counted_and_dropped() {
        let mut b = UdpStack::new(UdpConfig::new(B));
        b.bind(9).unwrap();
        assert!(b.handle_packet(&[0x45, 0, 0]).is_err());
        let mut a = UdpStack::new(UdpConfig::new(A));
        let s = a.bind(0).unwrap();
        a.send_to(s, SocketAddrV4::new(B, 9), b"abcdef").unwrap();
        let mut buf = [0u8; 64];
        let n = a.poll_transmit(&mut buf).unwrap();
        buf[n - 1] ^= 1;
        assert_eq!(b.handle_packet(&buf[..n]), Err(WireError::BadUdpChecksum));
        assert_eq!(b.stats().malformed, 1);
        assert_eq!(b.stats().bad_checksum, 1);
        assert_eq!(b.stats().datagrams_in, 0);
    }
}
