//! The body of the segment-input fuzz target (`crates/tcp/fuzz`), kept in a library so a
//! property test (`crates/tcp/tests/fuzz_segments.rs`) runs the same checks on stable Rust
//! in CI.
//!
//! The input drives a connection [`pair`](crate::pair) to one of the RFC 9293 states, then
//! is read as a script: crafted segments (sequence and acknowledgment numbers chosen near
//! the connection's own, so most land in or near the window), time jumps, and application
//! calls. After every step each connection's invariants must hold, and output must stay
//! bounded: at most `MAX_BURST` packets from one endpoint for one event, and at most
//! `BASE_PACKETS` plus `PACKETS_PER_SECOND` per simulated second in all (a pair that
//! answers each other's ACKs without limit sent millions).

use crate::pair::{Dir, Harness, PipeConfig, A_ADDR, B_ADDR};
use ackclock_tcp::{ConnId, State, TcpConfig};
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    write_ipv4_tcp, Duration, Instant, Ipv4Header, SackBlock, TcpFlags, TcpHeader, TcpOptions,
};

struct Input<'a> {
    data: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> Option<u8> {
        let v = *self.data.get(self.at)?;
        self.at += 1;
        Some(v)
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from(self.u8()?) << 8 | u16::from(self.u8()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from(self.u16()?) << 16 | u32::from(self.u16()?))
    }
}

fn check(h: &Harness, ids: &[(bool, ConnId)]) {
    for &(on_a, id) in ids {
        let ep = if on_a { &h.a } else { &h.b };
        if let Some(c) = ep.conn(id) {
            if let Err(e) = c.check_invariants(h.now) {
                panic!("invariant broken in {:?}: {e}", c.state());
            }
        }
    }
}

/// Packets one endpoint may emit for one event: its whole 4096-byte buffer in the smallest
/// segments a peer can ask for (`MIN_MSS` less the 12 bytes of timestamps: 79 of them), an
/// ACK, a FIN, an RST, with room to spare. (It was 32, for 536-byte segments, until the
/// fuzzer showed that a crafted MSS option of 1 made thousands; a peer may lawfully ask for
/// 64, `MIN_MSS`, and the window then goes out in segments of 52 to 64 bytes.)
pub const MAX_BURST: usize = 4096 / (ackclock_tcp::MIN_MSS as usize - 12) + 16;
/// Packets a case may send in all, beyond `PACKETS_PER_SECOND` per simulated second: the
/// data of 64 steps of at most 1200 bytes each way, their ACKs and the crafted segments'
/// answers.
pub const BASE_PACKETS: u64 = 2_000;
/// Retransmissions, probes and rate-limited answers to invalid segments, per second.
pub const PACKETS_PER_SECOND: u64 = 20;

/// Runs one fuzz case. Never panics unless an invariant breaks or output is unbounded.
pub fn segments(data: &[u8]) {
    segments_counted(data);
}

/// [`segments`], returning the packets sent and the simulated seconds (for the storm
/// figures in BENCHMARKS.md).
pub fn segments_counted(data: &[u8]) -> (u64, f64) {
    let mut inp = Input { data, at: 0 };
    let Some(sel) = inp.u8() else {
        return (0, 0.0);
    };
    let mut h = Harness::new(u64::from(sel), PipeConfig::default());
    h.max_burst = MAX_BURST;
    let ids = open_in_state(&mut h, sel);
    check(&h, &ids);
    let mut buf = vec![0u8; 2048];
    for _ in 0..64 {
        let Some(op) = inp.u8() else { break };
        let next = match op % 8 {
            0..=3 => crafted_segment(&mut h, &ids, &mut inp, op, &mut buf),
            4 => {
                // Let time pass (up to ~17 minutes in coarse steps).
                let Some(t) = inp.u16() else { break };
                let lim = h.now + Duration::from_millis(u64::from(t) * 16);
                while h.step(lim) {}
                Next::Check
            }
            5 => {
                let Some(n) = inp.u16() else { break };
                send_and_read(&mut h, &ids, n);
                Next::Check
            }
            6 => {
                close_or_abort(&mut h, &ids, op);
                Next::Check
            }
            _ => {
                // Exchange packets for a moment.
                let lim = h.now + Duration::from_millis(50);
                while h.step(lim) {}
                Next::Check
            }
        };
        match next {
            Next::Check => check(&h, &ids),
            Next::Skip => {}
            Next::Stop => break,
        }
    }
    let sent = h.pipe_stats(Dir::AtoB).sent + h.pipe_stats(Dir::BtoA).sent;
    let secs = h.now.saturating_since(Instant::ZERO).as_secs_f64();
    let bound = BASE_PACKETS + (PACKETS_PER_SECOND as f64 * secs) as u64;
    assert!(
        sent <= bound,
        "{sent} packets in {secs:.1} simulated seconds (at most {bound}): output unbounded"
    );
    (sent, secs)
}

/// What the case does after one step of its script.
enum Next {
    /// Check the invariants and go on.
    Check,
    /// Nothing happened (no connection to aim at): go on.
    Skip,
    /// The input ran out in the middle of the step: the script ends.
    Stop,
}

/// The data every step sends, cut to the length the input asks for.
const PAYLOAD: [u8; 1200] = [0x5a; 1200];

/// Opens a connection from A to B with the preset `sel % 4` picks (NewReno, SACK, Reno,
/// 4.3BSD; 4096-byte buffers, MSS 536) and drives it to the RFC 9293 states `sel / 4 % 9`
/// picks: 0 SYN-SENT, 1 SYN-RECEIVED, 2 and 8 ESTABLISHED, 3 FIN-WAIT-1, 4 FIN-WAIT-2 at
/// A and CLOSE-WAIT at B, 5 LAST-ACK at B, 6 TIME-WAIT at A, 7 CLOSING. Returns the
/// connections to aim at: A's, and B's when B has one (`true` marks A's).
fn open_in_state(h: &mut Harness, sel: u8) -> Vec<(bool, ConnId)> {
    let mut cfg = match sel % 4 {
        0 => TcpConfig::newreno(),
        1 => TcpConfig::sack(),
        2 => TcpConfig::reno(),
        _ => TcpConfig::vanilla_4_3bsd(),
    };
    cfg.recv_buffer_bytes = 4096;
    cfg.send_buffer_bytes = 4096;
    cfg.mss = 536;
    let target = (sel / 4) % 9;
    let limit = |h: &Harness| h.now + Duration::from_secs(5);
    let ca = h.open(80, cfg.clone(), cfg.clone());
    let mut cb = None;
    // Drive to the target state.
    let lim = limit(h);
    match target {
        0 => {} // SYN-SENT: nothing delivered yet
        1 => {
            // SYN-RECEIVED: deliver only the SYN.
            h.step(h.now + Duration::from_millis(10));
        }
        _ => {
            h.run(lim, |h| {
                if cb.is_none() {
                    cb = h.b.accept(80);
                }
                cb.is_some() && h.a.conn(ca).is_some_and(|c| c.is_established())
            });
            let cb_id = cb;
            let _ = h.a.conn_mut(ca).map(|c| c.send(b"hello fuzz"));
            match target {
                3 => {
                    let _ = h.a.close(ca); // FIN-WAIT-1
                }
                4..=6 => {
                    let _ = h.a.close(ca);
                    let lim = limit(h);
                    h.run(lim, |h| {
                        h.a.conn(ca).is_none_or(|c| c.state() != State::FinWait1)
                    }); // FIN-WAIT-2 at A, CLOSE-WAIT at B
                    if target >= 5 {
                        if let Some(id) = cb_id {
                            let _ = h.b.close(id); // LAST-ACK at B, then TIME-WAIT at A
                        }
                    }
                    if target == 6 {
                        let lim = limit(h);
                        h.run(lim, |h| {
                            h.a.conn(ca).is_none_or(|c| c.state() == State::TimeWait)
                        });
                    }
                }
                7 => {
                    // Simultaneous close: both FINs cross (CLOSING).
                    let _ = h.a.close(ca);
                    if let Some(id) = cb_id {
                        let _ = h.b.close(id);
                    }
                }
                _ => {}
            }
        }
    }
    let mut ids = vec![(true, ca)];
    if let Some(id) = cb.or_else(|| h.b.connections().next().map(|(id, _)| id)) {
        ids.push((false, id));
    }
    ids
}

/// The fields of a crafted segment, as the input gives them.
struct Crafted {
    flags: u8,
    /// The sequence number: RCV.NXT plus (this - 0x8000) times 1 or 64.
    dseq: u16,
    /// The acknowledgment number: SND.UNA or SND.NXT plus (this - 0x8000).
    dack: u16,
    win: u16,
    /// Payload length, modulo 1201.
    len: u16,
    /// Which options: bit 0 timestamps, bit 1 a SACK block (`optsel >> 2` hundred bytes
    /// long), bit 7 MSS and window scale (the shift in bits 0 to 4).
    optsel: u8,
    /// The options' values, and the byte to corrupt.
    extra: u32,
}

impl Crafted {
    fn read(inp: &mut Input) -> Option<Crafted> {
        Some(Crafted {
            flags: inp.u8()?,
            dseq: inp.u16()?,
            dack: inp.u16()?,
            win: inp.u16()?,
            len: inp.u16()?,
            optsel: inp.u8()?,
            extra: inp.u32()?,
        })
    }
}

/// A crafted segment to A (`op` bit 4) or to B, near that connection's own numbers: bit 5
/// keeps the sequence offset fine (else 64 times coarser), bit 6 bases the ACK on SND.UNA
/// (else SND.NXT), bit 7 corrupts one byte, which the checksum must catch.
fn crafted_segment(
    h: &mut Harness,
    ids: &[(bool, ConnId)],
    inp: &mut Input,
    op: u8,
    buf: &mut [u8],
) -> Next {
    let to_a = op & 0x10 != 0;
    let (ep, local, remote) = if to_a {
        (&h.a, A_ADDR, B_ADDR)
    } else {
        (&h.b, B_ADDR, A_ADDR)
    };
    let Some(&(_, id)) = ids.iter().find(|(a, _)| *a == to_a) else {
        return Next::Skip;
    };
    let Some(c) = ep.conn(id) else {
        return Next::Skip;
    };
    let (una, nxt, _) = c.send_sequence();
    let (rcv_nxt, _) = c.recv_sequence();
    let (lp, rp) = (c.local().port(), c.remote().port());
    let Some(f) = Crafted::read(inp) else {
        return Next::Stop;
    };
    let seq = rcv_nxt
        + u32::from(f.dseq)
            .wrapping_sub(0x8000)
            .wrapping_mul(if op & 0x20 != 0 { 1 } else { 64 });
    let ackbase = if op & 0x40 != 0 { una } else { nxt };
    let ack = ackbase + u32::from(f.dack).wrapping_sub(0x8000);
    let mut options = TcpOptions::NONE;
    if f.optsel & 1 != 0 {
        options.timestamps = Some(Timestamps {
            tsval: f.extra,
            tsecr: f.extra.rotate_left(7),
        });
    }
    if f.optsel & 2 != 0 {
        let l = una + (f.extra & 0xfff);
        options.sack.push(SackBlock {
            left: l.get(),
            right: (l + u32::from(f.optsel >> 2) * 100).get(),
        });
    }
    if f.optsel & 0x80 != 0 {
        options.mss = Some(f.extra as u16);
        options.window_scale = Some(f.optsel & 0x1f);
    }
    let header = TcpHeader {
        src_port: rp,
        dst_port: lp,
        seq: seq.get(),
        ack: ack.get(),
        flags: TcpFlags::from_bits(u16::from(f.flags)),
        window: f.win,
        urgent: 0,
        options,
    };
    let plen = usize::from(f.len) % (PAYLOAD.len() + 1);
    let ip = Ipv4Header::new(remote, local, 6);
    if let Ok(n) = write_ipv4_tcp(buf, &ip, &header, &PAYLOAD[..plen]) {
        if op & 0x80 != 0 && n > 0 {
            // Corrupt one byte: the checksum must catch it.
            let i = (f.extra as usize) % n;
            buf[i] ^= (f.extra >> 24) as u8 | 1;
        }
        let now = h.now;
        if to_a {
            h.a.handle_packet(now, &buf[..n]);
        } else {
            h.b.handle_packet(now, &buf[..n]);
        }
    }
    Next::Check
}

/// Each connection's application sends `n` bytes (modulo 1200) and reads up to 512.
fn send_and_read(h: &mut Harness, ids: &[(bool, ConnId)], n: u16) {
    for &(on_a, id) in ids {
        let ep = if on_a { &mut h.a } else { &mut h.b };
        if let Some(c) = ep.conn_mut(id) {
            let _ = c.send(&PAYLOAD[..usize::from(n) % PAYLOAD.len()]);
            let mut r = [0u8; 512];
            let _ = c.recv(&mut r);
        }
    }
}

/// A's connection (`op` bit 4) or B's is closed (bit 5) or else aborted (bit 6).
fn close_or_abort(h: &mut Harness, ids: &[(bool, ConnId)], op: u8) {
    let on_a = op & 0x10 != 0;
    if let Some(&(_, id)) = ids.iter().find(|(a, _)| *a == on_a) {
        if op & 0x20 != 0 {
            let _ = if on_a { h.a.close(id) } else { h.b.close(id) };
        } else if op & 0x40 != 0 {
            if on_a {
                h.a.abort(id)
            } else {
                h.b.abort(id)
            }
        }
    }
}
