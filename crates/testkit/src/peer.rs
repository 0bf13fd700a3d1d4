//! Packetdrill-style helpers for the conformance tests: one `Endpoint` under test, driven
//! by hand-built segments from a scripted peer that tracks its own sequence space. A test
//! file takes them all with `use ackclock_testkit::peer::*;`.
//!
//! The engine under test lives at `ENGINE_ADDR`; the scripted peer at `PEER_ADDR`. Every
//! packet the engine emits is parsed (and its checksums verified) into a [`Seg`].

use ackclock_tcp::{ConnId, Connection, Endpoint, EndpointConfig, State, TcpConfig};
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    parse_ipv4_tcp, write_ipv4_tcp, Duration, Instant, Ipv4Header, TcpFlags, TcpHeader, TcpOptions,
};
use core::net::{Ipv4Addr, SocketAddrV4};

/// The address of the endpoint under test.
pub const ENGINE_ADDR: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The scripted peer's address.
pub const PEER_ADDR: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);
/// Port the engine listens on (passive opens).
pub const SERVER_PORT: u16 = 8080;
/// Port the scripted peer uses.
pub const PEER_PORT: u16 = 40000;
/// Local port of the engine's active opens.
pub const CLIENT_PORT: u16 = 50000;
/// The peer's initial sequence number.
pub const PEER_ISS: u32 = 1_000_000;
/// Base of the peer's timestamp clock (TSval = base + milliseconds of `now`).
pub const PEER_TS_BASE: u32 = 5_000;

// The control bits under short names, so a test writes `p.out(SYN | ACK)`.

/// SYN: synchronize sequence numbers (opens a connection).
pub const SYN: TcpFlags = TcpFlags::SYN;
/// ACK: the acknowledgment number is significant.
pub const ACK: TcpFlags = TcpFlags::ACK;
/// FIN: the sender has no more data.
pub const FIN: TcpFlags = TcpFlags::FIN;
/// RST: reset the connection.
pub const RST: TcpFlags = TcpFlags::RST;
/// PSH: push, deliver the data to the application at once.
pub const PSH: TcpFlags = TcpFlags::PSH;
/// ECE: ECN-Echo (RFC 3168 §6.1): the receiver saw a CE mark; with CWR on a SYN, a
/// request for ECN.
pub const ECE: TcpFlags = TcpFlags::ECE;
/// CWR: Congestion Window Reduced (RFC 3168 §6.1): the sender answered an ECE.
pub const CWR: TcpFlags = TcpFlags::CWR;

/// `v` milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
/// `v` seconds.
pub fn secs(v: u64) -> Duration {
    Duration::from_secs(v)
}
/// An instant `v` milliseconds after the epoch.
pub fn at_ms(v: u64) -> Instant {
    Instant::from_nanos(v * 1_000_000)
}

/// Deterministic payload bytes.
pub fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 + i / 253) as u8).collect()
}

/// `a <= b` in 32-bit sequence space.
pub fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}
/// `a < b` in 32-bit sequence space.
pub fn seq_lt(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) > 0
}

/// A config where neither congestion control nor Nagle limits what the sender sends, so
/// tests see flow control and the ACK policy alone.
pub fn cfg_unlimited() -> TcpConfig {
    TcpConfig {
        congestion: ackclock_tcp::CongestionAlgorithm::None,
        nagle: false,
        ..TcpConfig::newreno()
    }
}

/// Options of a SYN: MSS and, optionally, window scale, SACK-permitted and timestamps
/// (the TSval is filled in when the SYN is sent).
pub fn syn_opts(mss: Option<u16>, ws: Option<u8>, sack: bool, ts: bool) -> TcpOptions {
    TcpOptions {
        mss,
        window_scale: ws,
        sack_permitted: sack,
        timestamps: ts.then_some(Timestamps { tsval: 0, tsecr: 0 }),
        ..TcpOptions::NONE
    }
}

/// One segment the engine emitted, parsed.
#[derive(Clone, PartialEq, Eq)]
pub struct Seg {
    /// The engine's address and port.
    pub src: SocketAddrV4,
    /// Where the engine sent it.
    pub dst: SocketAddrV4,
    /// The sequence number, raw (the engine's sequence space).
    pub seq: u32,
    /// The acknowledgment number as on the wire (meaningful when ACK is set).
    pub ack: u32,
    /// The control bits.
    pub flags: TcpFlags,
    /// The window field as sent, not scaled.
    pub window: u16,
    /// The TCP options.
    pub opts: TcpOptions,
    /// The data.
    pub payload: Vec<u8>,
    /// The IP header's ECN field (RFC 3168 §5).
    pub ecn: u8,
}

impl core::fmt::Debug for Seg {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}>{} {} seq={} ack={} win={} len={}",
            self.src.port(),
            self.dst.port(),
            self.flags,
            self.seq,
            self.ack,
            self.window,
            self.payload.len()
        )?;
        let o = &self.opts;
        if let Some(m) = o.mss {
            write!(f, " mss={m}")?;
        }
        if let Some(w) = o.window_scale {
            write!(f, " ws={w}")?;
        }
        if o.sack_permitted {
            write!(f, " sackOK")?;
        }
        if let Some(t) = o.timestamps {
            write!(f, " ts={}/{}", t.tsval, t.tsecr)?;
        }
        if !o.sack.is_empty() {
            write!(f, " sack={:?}", self.sack())?;
        }
        if self.ecn != 0 {
            write!(f, " ecn={:02b}", self.ecn)?;
        }
        Ok(())
    }
}

impl Seg {
    /// Whether every control bit of `f` is set.
    pub fn has(&self, f: TcpFlags) -> bool {
        self.flags.contains(f)
    }
    /// Only ACK (PSH allowed), no data, no SYN/FIN/RST.
    pub fn is_pure_ack(&self) -> bool {
        self.flags.without(PSH) == ACK && self.payload.is_empty()
    }
    /// The sequence space it occupies: its data, and one each for SYN and FIN.
    pub fn seq_len(&self) -> u32 {
        self.payload.len() as u32 + u32::from(self.has(SYN)) + u32::from(self.has(FIN))
    }
    /// First sequence number after the segment.
    pub fn end(&self) -> u32 {
        self.seq.wrapping_add(self.seq_len())
    }
    /// The TSval of its timestamps option, if it has one.
    pub fn tsval(&self) -> Option<u32> {
        self.opts.timestamps.map(|t| t.tsval)
    }
    /// The TSecr of its timestamps option, if it has one.
    pub fn tsecr(&self) -> Option<u32> {
        self.opts.timestamps.map(|t| t.tsecr)
    }
    /// SACK blocks as (left, right) pairs in the order sent.
    pub fn sack(&self) -> Vec<(u32, u32)> {
        self.opts.sack.iter().map(|b| (b.left, b.right)).collect()
    }
}

/// Parses a packet the engine sent; panics if it is not a valid IPv4/TCP packet (the
/// engine must never emit one).
pub fn parse(bytes: &[u8]) -> Seg {
    let p = parse_ipv4_tcp(bytes).expect("engine emitted an invalid packet");
    let t = &p.tcp;
    Seg {
        src: SocketAddrV4::new(p.ip.src(), t.src_port()),
        dst: SocketAddrV4::new(p.ip.dst(), t.dst_port()),
        seq: t.seq(),
        ack: t.ack(),
        flags: t.flags(),
        window: t.window(),
        opts: t.options().expect("engine emitted malformed options"),
        payload: t.payload().to_vec(),
        ecn: p.ip.ecn(),
    }
}

/// A segment to inject, with every field visible.
#[derive(Clone, Debug)]
pub struct Out {
    /// The sender's address and port (the peer's, from [`Peer::out`]).
    pub src: SocketAddrV4,
    /// The engine's address and port.
    pub dst: SocketAddrV4,
    /// The sequence number.
    pub seq: u32,
    /// The acknowledgment number; sent only with ACK set (the field is 0 otherwise).
    pub ack: u32,
    /// The control bits.
    pub flags: TcpFlags,
    /// The window field, not scaled.
    pub window: u16,
    /// The TCP options.
    pub opts: TcpOptions,
    /// The data.
    pub payload: Vec<u8>,
    /// The IP ECN field to send with (0: Not-ECT).
    pub ecn: u8,
}

impl Out {
    /// The segment as a complete IPv4 packet with valid checksums (see [`build`]), with
    /// its ECN field.
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = build(
            self.src,
            self.dst,
            &TcpHeader {
                src_port: self.src.port(),
                dst_port: self.dst.port(),
                seq: self.seq,
                ack: if self.flags.contains(ACK) {
                    self.ack
                } else {
                    0
                },
                flags: self.flags,
                window: self.window,
                urgent: 0,
                options: self.opts,
            },
            &self.payload,
        );
        if self.ecn != 0 {
            if let Some(mut h) = ackclock_wire::Ipv4HeaderMut::new(&mut b) {
                h.set_ecn(self.ecn);
            }
        }
        b
    }
    /// The IP ECN field (e.g. `ackclock_wire::ipv4::ECN_CE` for a packet a gateway marked).
    pub fn ecn(mut self, v: u8) -> Self {
        self.ecn = v;
        self
    }
    /// Adds control bits (ECE, CWR, ...).
    pub fn with(mut self, f: TcpFlags) -> Self {
        self.flags |= f;
        self
    }
    /// Another sequence number (the peer's SND.NXT is not changed).
    pub fn seq(mut self, s: u32) -> Self {
        self.seq = s;
        self
    }
    /// Another acknowledgment number.
    pub fn ack(mut self, a: u32) -> Self {
        self.ack = a;
        self
    }
    /// Another window field (not scaled).
    pub fn window(mut self, w: u16) -> Self {
        self.window = w;
        self
    }
    /// `p` as the data (the peer's SND.NXT is not advanced: see [`Peer::send_data`]).
    pub fn payload(mut self, p: &[u8]) -> Self {
        self.payload = p.to_vec();
        self
    }
    /// Other options, in place of all of them.
    pub fn opts(mut self, o: TcpOptions) -> Self {
        self.opts = o;
        self
    }
    /// Without the timestamps option.
    pub fn no_ts(mut self) -> Self {
        self.opts.timestamps = None;
        self
    }
    /// TSval `v`, keeping the TSecr (0 when the segment had no timestamps).
    pub fn tsval(mut self, v: u32) -> Self {
        let ecr = self.opts.timestamps.map(|t| t.tsecr).unwrap_or(0);
        self.opts.timestamps = Some(Timestamps {
            tsval: v,
            tsecr: ecr,
        });
        self
    }
    /// Another source port (a segment from another connection's peer).
    pub fn src_port(mut self, p: u16) -> Self {
        self.src.set_port(p);
        self
    }
    /// Another destination port.
    pub fn dst_port(mut self, p: u16) -> Self {
        self.dst.set_port(p);
        self
    }
}

/// A complete IPv4 packet with valid checksums.
pub fn build(src: SocketAddrV4, dst: SocketAddrV4, h: &TcpHeader, payload: &[u8]) -> Vec<u8> {
    let mut buf = vec![0u8; 65536];
    let ip = Ipv4Header::new(*src.ip(), *dst.ip(), ackclock_wire::IPPROTO_TCP);
    let n = write_ipv4_tcp(&mut buf, &ip, h, payload).expect("test packet fits");
    buf.truncate(n);
    buf
}

/// The scripted peer and the endpoint under test.
pub struct Peer {
    /// The endpoint under test.
    pub ep: Endpoint,
    /// The simulated time: 1 s at the start, moved on by [`advance`](Self::advance) and
    /// [`advance_to`](Self::advance_to) (and by a test directly).
    pub now: Instant,
    /// The engine's connection, once there is one.
    pub id: Option<ConnId>,
    /// The peer's address (the engine's remote).
    pub me: SocketAddrV4,
    /// The engine's address.
    pub them: SocketAddrV4,
    /// The peer's next sequence number to send.
    pub snd_nxt: u32,
    /// What the peer acknowledges: the next byte it expects from the engine.
    pub rcv_nxt: u32,
    /// Window field the peer advertises.
    pub window: u16,
    /// The peer sends timestamps on every segment (set when both SYNs carried them).
    pub ts: bool,
    /// The latest TSval seen from the engine (the peer's echo).
    pub ts_recent: u32,
    /// Everything the engine emitted, with the time.
    pub log: Vec<(Instant, Seg)>,
    buf: Vec<u8>,
}

impl Peer {
    /// An endpoint under test with no connection yet, the peer at `PEER_PORT`.
    pub fn new() -> Self {
        Self::with_endpoint(Endpoint::new(EndpointConfig::new(ENGINE_ADDR, [7u8; 16])))
    }

    /// [`Peer::new`] with an endpoint the test configured.
    pub fn with_endpoint(ep: Endpoint) -> Self {
        Peer {
            ep,
            now: at_ms(1_000),
            id: None,
            me: SocketAddrV4::new(PEER_ADDR, PEER_PORT),
            them: SocketAddrV4::new(ENGINE_ADDR, SERVER_PORT),
            snd_nxt: PEER_ISS,
            rcv_nxt: 0,
            window: 65535,
            ts: false,
            ts_recent: 0,
            log: Vec::new(),
            buf: vec![0u8; 65536],
        }
    }

    /// The peer's timestamp clock.
    pub fn ts_now(&self) -> u32 {
        PEER_TS_BASE.wrapping_add((self.now.as_nanos() / 1_000_000) as u32)
    }

    /// A segment from the peer with the tracked sequence, acknowledgment and window, and a
    /// timestamp when the peer uses them.
    pub fn out(&self, flags: TcpFlags) -> Out {
        let mut opts = TcpOptions::NONE;
        if self.ts {
            opts.timestamps = Some(Timestamps {
                tsval: self.ts_now(),
                tsecr: self.ts_recent,
            });
        }
        Out {
            src: self.me,
            dst: self.them,
            seq: self.snd_nxt,
            ack: self.rcv_nxt,
            flags,
            window: self.window,
            opts,
            payload: Vec::new(),
            ecn: 0,
        }
    }

    /// Feeds raw bytes to the endpoint and returns what it sends in response.
    pub fn inject_raw(&mut self, bytes: &[u8]) -> Vec<Seg> {
        self.ep.handle_packet(self.now, bytes);
        self.drain()
    }

    /// Feeds a segment to the endpoint and returns what it sends in response.
    pub fn inject(&mut self, o: &Out) -> Vec<Seg> {
        let b = o.bytes();
        self.inject_raw(&b)
    }

    /// Everything the endpoint wants to send now.
    pub fn drain(&mut self) -> Vec<Seg> {
        let mut v = Vec::new();
        for _ in 0..10_000 {
            let Some(t) = self.ep.poll_transmit(self.now, &mut self.buf) else {
                return v;
            };
            let s = parse(&self.buf[..t.len]);
            if let Some(ts) = s.opts.timestamps {
                self.ts_recent = ts.tsval;
            }
            self.log.push((self.now, s.clone()));
            v.push(s);
        }
        panic!("endpoint never stops sending");
    }

    /// Runs every timer that falls due up to `now + d`, in order, collecting what the
    /// endpoint sends and when. Ends with `now` advanced by `d`.
    pub fn advance(&mut self, d: Duration) -> Vec<(Instant, Seg)> {
        let end = self.now + d;
        self.advance_to(end)
    }

    /// [`advance`](Self::advance) up to the instant `end` (`now` stays where it is if it
    /// is already later).
    pub fn advance_to(&mut self, end: Instant) -> Vec<(Instant, Seg)> {
        let mut out = Vec::new();
        let mut spins = 0;
        while let Some(t) = self.ep.poll_timeout() {
            if t > end {
                break;
            }
            spins += 1;
            assert!(spins < 100_000, "timer livelock at {t:?}");
            self.now = self.now.max(t);
            self.ep.handle_timeout(self.now);
            for s in self.drain() {
                out.push((self.now, s));
            }
        }
        self.now = self.now.max(end);
        out
    }

    /// The engine's connection; panics when there is none or the endpoint removed it.
    pub fn conn(&self) -> &Connection {
        self.ep
            .conn(self.id.expect("no connection"))
            .expect("connection was removed")
    }
    /// [`conn`](Self::conn), mutable.
    pub fn conn_mut(&mut self) -> &mut Connection {
        self.ep
            .conn_mut(self.id.expect("no connection"))
            .expect("connection was removed")
    }
    /// The engine's connection, if it still exists.
    pub fn try_conn(&self) -> Option<&Connection> {
        self.id.and_then(|id| self.ep.conn(id))
    }
    /// The engine's connection's state (panics as [`conn`](Self::conn)).
    pub fn state(&self) -> State {
        self.conn().state()
    }
    /// Engine's (snd_una, snd_nxt, snd_max) as raw numbers.
    pub fn engine_snd(&self) -> (u32, u32, u32) {
        let (a, b, c) = self.conn().send_sequence();
        (a.get(), b.get(), c.get())
    }
    /// Engine's RCV.NXT.
    pub fn engine_rcv_nxt(&self) -> u32 {
        self.conn().recv_sequence().0.get()
    }

    /// The application writes; returns what goes out at once.
    pub fn app_send(&mut self, d: &[u8]) -> Vec<Seg> {
        let n = self.conn_mut().send(d).expect("send");
        assert_eq!(n, d.len(), "send buffer full");
        self.drain()
    }

    /// The application reads everything available.
    pub fn app_read(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut b = vec![0u8; 65536];
        loop {
            match self.conn_mut().recv(&mut b) {
                Ok(0) => break,
                Ok(n) => out.extend_from_slice(&b[..n]),
                Err(_) => break,
            }
        }
        out
    }

    /// The peer's in-order receiver: RCV.NXT advances over segments that start at (or
    /// before) it.
    pub fn absorb(&mut self, segs: &[Seg]) {
        let mut v: Vec<&Seg> = segs.iter().filter(|s| !s.has(RST)).collect();
        v.sort_by_key(|s| s.seq.wrapping_sub(self.rcv_nxt));
        for s in v {
            if seq_le(s.seq, self.rcv_nxt) && seq_lt(self.rcv_nxt, s.end()) {
                self.rcv_nxt = s.end();
            }
        }
    }

    /// The peer sends `d` at its SND.NXT (with ACK) and advances SND.NXT.
    pub fn send_data(&mut self, d: &[u8]) -> Vec<Seg> {
        let o = self.out(ACK | PSH).payload(d);
        self.snd_nxt = self.snd_nxt.wrapping_add(d.len() as u32);
        self.inject(&o)
    }

    /// A pure ACK of everything the peer has received.
    pub fn send_ack(&mut self) -> Vec<Seg> {
        let o = self.out(ACK);
        self.inject(&o)
    }

    /// The peer's FIN (with ACK).
    pub fn send_fin(&mut self) -> Vec<Seg> {
        let o = self.out(FIN | ACK);
        self.snd_nxt = self.snd_nxt.wrapping_add(1);
        self.inject(&o)
    }

    // ---------------------------------------------------------------------------------
    // Handshakes

    /// The engine listens on `SERVER_PORT` with `cfg`; the peer's SYN carries `opts`.
    /// Returns the engine's SYN,ACK. The connection is in SYN-RECEIVED afterwards and
    /// `id` points at it.
    pub fn syn_to_listener(&mut self, cfg: TcpConfig, opts: TcpOptions) -> Seg {
        let synack = self.syn_to_listener_with(cfg, opts, TcpFlags::NONE);
        assert_eq!(synack.flags, SYN | ACK, "{synack:?}");
        synack
    }

    /// [`Peer::syn_to_listener`] with `extra` control bits on the SYN (an ECN-setup SYN has
    /// ECE and CWR); the SYN,ACK may carry more than SYN and ACK.
    pub fn syn_to_listener_with(
        &mut self,
        cfg: TcpConfig,
        opts: TcpOptions,
        extra: TcpFlags,
    ) -> Seg {
        self.ep
            .listen(SERVER_PORT, cfg, 16)
            .expect("listen on a fresh endpoint");
        let mut o = self.out(SYN | extra).opts(opts);
        if let Some(ts) = o.opts.timestamps.as_mut() {
            ts.tsval = self.ts_now();
            ts.tsecr = 0;
        }
        let out = self.inject(&o);
        self.snd_nxt = PEER_ISS.wrapping_add(1);
        assert_eq!(out.len(), 1, "one SYN,ACK expected, got {out:?}");
        let synack = out[0].clone();
        assert!(synack.has(SYN | ACK), "{synack:?}");
        self.rcv_nxt = synack.seq.wrapping_add(1);
        self.ts = opts.timestamps.is_some() && synack.opts.timestamps.is_some();
        self.id = self
            .ep
            .connections()
            .find(|(_, c)| c.remote() == self.me)
            .map(|(id, _)| id);
        synack
    }

    /// Passive open: LISTEN, the peer's SYN (with `opts`), the engine's SYN,ACK, the peer's
    /// ACK, then the application accepts. Returns the peer and the SYN,ACK.
    pub fn passive(cfg: TcpConfig, opts: TcpOptions) -> (Peer, Seg) {
        let mut p = Peer::new();
        let synack = p.syn_to_listener(cfg, opts);
        let out = p.send_ack();
        // At most a window update (the SYN,ACK could not advertise a scaled window).
        assert!(
            out.iter().all(|s| s.is_pure_ack() && s.ack == p.snd_nxt),
            "only a window update may follow the third ACK: {out:?}"
        );
        let id =
            p.ep.accept(SERVER_PORT)
                .expect("accept after the handshake");
        assert_eq!(Some(id), p.id);
        assert_eq!(p.state(), State::Established);
        (p, synack)
    }

    /// Passive open with a plain peer (MSS 1460, no other options).
    pub fn established(cfg: TcpConfig) -> Peer {
        Self::passive(cfg, syn_opts(Some(1460), None, false, false)).0
    }

    /// Active open from the engine: returns the peer (in SYN-SENT at the engine) and the
    /// engine's SYN.
    pub fn connect(cfg: TcpConfig) -> (Peer, Seg) {
        let mut p = Peer::new();
        p.them = SocketAddrV4::new(ENGINE_ADDR, CLIENT_PORT);
        let id =
            p.ep.connect_from_port(p.now, CLIENT_PORT, p.me, cfg)
                .expect("connect");
        p.id = Some(id);
        assert_eq!(p.state(), State::SynSent);
        let out = p.drain();
        assert_eq!(out.len(), 1, "one SYN expected: {out:?}");
        let syn = out[0].clone();
        // A SYN, which may ask for ECN (ECE and CWR, RFC 3168 §6.1.1).
        assert!(
            syn.has(SYN) && !syn.flags.intersects(ACK | FIN | RST | PSH),
            "{syn:?}"
        );
        p.rcv_nxt = syn.seq.wrapping_add(1);
        (p, syn)
    }

    /// The peer answers the engine's SYN with a SYN,ACK carrying `opts`; returns the
    /// engine's answer.
    pub fn send_synack(&mut self, opts: TcpOptions) -> Vec<Seg> {
        let mut o = self.out(SYN | ACK).opts(opts);
        if let Some(ts) = o.opts.timestamps.as_mut() {
            ts.tsval = self.ts_now();
            ts.tsecr = self.ts_recent;
        }
        let syn_ts = o.opts.timestamps.is_some();
        let out = self.inject(&o);
        self.snd_nxt = PEER_ISS.wrapping_add(1);
        self.ts = syn_ts && self.conn().stats().timestamps_enabled;
        out
    }

    /// Active open completed: the engine's SYN, the peer's SYN,ACK (with `opts`), the
    /// engine's ACK.
    pub fn active(cfg: TcpConfig, opts: TcpOptions) -> (Peer, Seg) {
        let (mut p, syn) = Self::connect(cfg);
        let out = p.send_synack(opts);
        assert_eq!(p.state(), State::Established);
        assert_eq!(out.len(), 1, "one ACK expected: {out:?}");
        assert!(out[0].is_pure_ack(), "{:?}", out[0]);
        (p, syn)
    }
}

impl Default for Peer {
    fn default() -> Self {
        Self::new()
    }
}
