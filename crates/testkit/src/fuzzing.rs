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
use core::net::SocketAddrV4;

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
    let mut h = Harness::new(u64::from(sel), PipeConfig::default());
    h.max_burst = MAX_BURST;
    let limit = |h: &Harness| h.now + Duration::from_secs(5);
    let ca = h.open(80, cfg.clone(), cfg.clone());
    let mut cb = None;
    // Drive to the target state.
    let lim = limit(&h);
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
                    let lim = limit(&h);
                    h.run(lim, |h| {
                        h.a.conn(ca).is_none_or(|c| c.state() != State::FinWait1)
                    }); // FIN-WAIT-2 at A, CLOSE-WAIT at B
                    if target >= 5 {
                        if let Some(id) = cb_id {
                            let _ = h.b.close(id); // LAST-ACK at B, then TIME-WAIT at A
                        }
                    }
                    if target == 6 {
                        let lim = limit(&h);
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
    check(&h, &ids);
    let mut buf = vec![0u8; 2048];
    let payload = [0x5au8; 1200];
    for _ in 0..64 {
        let Some(op) = inp.u8() else { break };
        match op % 8 {
            0..=3 => {
                // A crafted segment to A or to B, near that connection's own numbers.
                let to_a = op & 0x10 != 0;
                let (ep, local, remote) = if to_a {
                    (&h.a, A_ADDR, B_ADDR)
                } else {
                    (&h.b, B_ADDR, A_ADDR)
                };
                let Some(&(_, id)) = ids.iter().find(|(a, _)| *a == to_a) else {
                    continue;
                };
                let Some(c) = ep.conn(id) else { continue };
                let (una, nxt, _) = c.send_sequence();
                let (rcv_nxt, _) = c.recv_sequence();
                let (lp, rp) = (c.local().port(), c.remote().port());
                let Some(flags) = inp.u8() else { break };
                let Some(dseq) = inp.u16() else { break };
                let Some(dack) = inp.u16() else { break };
                let Some(win) = inp.u16() else { break };
                let Some(len) = inp.u16() else { break };
                let Some(optsel) = inp.u8() else { break };
                let Some(extra) = inp.u32() else { break };
                let seq = rcv_nxt
                    + u32::from(dseq)
                        .wrapping_sub(0x8000)
                        .wrapping_mul(if op & 0x20 != 0 { 1 } else { 64 });
                let ackbase = if op & 0x40 != 0 { una } else { nxt };
                let ack = ackbase + u32::from(dack).wrapping_sub(0x8000);
                let mut options = TcpOptions::NONE;
                if optsel & 1 != 0 {
                    options.timestamps = Some(Timestamps {
                        tsval: extra,
                        tsecr: extra.rotate_left(7),
                    });
                }
                if optsel & 2 != 0 {
                    let l = una + (extra & 0xfff);
                    options.sack.push(SackBlock {
                        left: l.get(),
                        right: (l + u32::from(optsel >> 2) * 100).get(),
                    });
                }
                if optsel & 0x80 != 0 {
                    options.mss = Some(extra as u16);
                    options.window_scale = Some(optsel & 0x1f);
                }
                let header = TcpHeader {
                    src_port: rp,
                    dst_port: lp,
                    seq: seq.get(),
                    ack: ack.get(),
                    flags: TcpFlags::from_bits(u16::from(flags)),
                    window: win,
                    urgent: 0,
                    options,
                };
                let plen = usize::from(len) % (payload.len() + 1);
                let ip = Ipv4Header::new(remote, local, 6);
                if let Ok(n) = write_ipv4_tcp(&mut buf, &ip, &header, &payload[..plen]) {
                    if op & 0x80 != 0 && n > 0 {
                        // Corrupt one byte: the checksum must catch it.
                        let i = (extra as usize) % n;
                        buf[i] ^= (extra >> 24) as u8 | 1;
                    }
                    let now = h.now;
                    if to_a {
                        h.a.handle_packet(now, &buf[..n]);
                    } else {
                        h.b.handle_packet(now, &buf[..n]);
                    }
                }
                let _ = SocketAddrV4::new(local, lp);
            }
            4 => {
                // Let time pass (up to ~17 minutes in coarse steps).
                let Some(t) = inp.u16() else { break };
                let lim = h.now + Duration::from_millis(u64::from(t) * 16);
                while h.step(lim) {}
            }
            5 => {
                let Some(n) = inp.u16() else { break };
                for &(on_a, id) in &ids {
                    let ep = if on_a { &mut h.a } else { &mut h.b };
                    if let Some(c) = ep.conn_mut(id) {
                        let _ = c.send(&payload[..usize::from(n) % payload.len()]);
                        let mut r = [0u8; 512];
                        let _ = c.recv(&mut r);
                    }
                }
            }
            6 => {
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
            _ => {
                // Exchange packets for a moment.
                let lim = h.now + Duration::from_millis(50);
                while h.step(lim) {}
            }
        }
        check(&h, &ids);
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
