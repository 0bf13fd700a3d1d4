//! Two hosts in virtual time for the applications' tests: each an engine endpoint and a
//! UDP stack, joined by a wire of a fixed delay, each host's application polled as a live
//! loop polls it (at its first turn, when a packet arrived for it, and at the time it
//! asked for), in 1 ms steps.

use crate::{App, Ctx};
use ackclock_dgram::{UdpConfig, UdpStack};
use ackclock_tcp::{Endpoint, EndpointConfig};
use ackclock_wire::{Duration, Instant};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// Host `a`'s address.
pub(crate) const OURS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Host `b`'s address.
pub(crate) const THEIRS: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

/// One host: its TCP, its UDP, its application's wish to be woken.
struct Side {
    ep: Endpoint,
    udp: UdpStack,
    wake: Option<Instant>,
    done: bool,
    fresh: bool,
}

impl Side {
    fn new(addr: Ipv4Addr, key: u8) -> Side {
        Side {
            ep: Endpoint::new(EndpointConfig::new(addr, [key; 16])),
            udp: UdpStack::new(UdpConfig::new(addr)),
            wake: None,
            done: false,
            fresh: true,
        }
    }
    /// Polls `app` if anything concerns it now; a wake it asks for at or before `now` is
    /// dropped, as a live host drops it.
    fn turn(&mut self, app: &mut dyn App, now: Instant) {
        if self.done || !(self.fresh || self.wake.is_some_and(|t| t <= now)) {
            return;
        }
        self.fresh = false;
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
        }
        let w = app.poll(&mut Ctx::new(now, &mut self.ep, &mut self.udp));
        self.wake = w.filter(|t| *t > now);
        self.done = app.is_done();
    }
}

/// Runs `a` on host `a` and `b` on host `b`, joined by `delay` each way, until both are
/// done or `limit` has passed. Returns whether each finished.
pub(crate) fn run_pair(
    a: &mut dyn App,
    b: &mut dyn App,
    delay: Duration,
    limit: Duration,
) -> (bool, bool) {
    let mut sa = Side::new(OURS, 1);
    let mut sb = Side::new(THEIRS, 2);
    // In flight: arrival time, whether to b, the packet.
    let mut wire: VecDeque<(Instant, bool, Vec<u8>)> = VecDeque::new();
    let mut buf = vec![0u8; 65_536];
    let mut now = Instant::ZERO;
    while now < Instant::ZERO + limit && !(sa.done && sb.done) {
        deliver(&mut wire, now, &mut sa, &mut sb);
        sa.turn(a, now);
        sb.turn(b, now);
        // Each host's output onto the wire; with no delay it arrives at once and may draw
        // answers (ACKs), until the exchange is quiet. The applications run once a step.
        for _ in 0..10_000 {
            let mut moved = false;
            for (s, to_b) in [(&mut sa, true), (&mut sb, false)] {
                while let Some(t) = s.ep.poll_transmit(now, &mut buf) {
                    wire.push_back((now + delay, to_b, buf[..t.len].to_vec()));
                    moved = true;
                }
                while let Some(n) = s.udp.poll_transmit(&mut buf) {
                    wire.push_back((now + delay, to_b, buf[..n].to_vec()));
                    moved = true;
                }
            }
            if !moved || delay > Duration::ZERO {
                break;
            }
            deliver(&mut wire, now, &mut sa, &mut sb);
        }
        for s in [&mut sa, &mut sb] {
            // The engine's timers wake a host as its packets do.
            if s.ep
                .poll_timeout()
                .is_some_and(|t| t <= now + Duration::from_millis(1))
            {
                s.fresh = true;
            }
        }
        now += Duration::from_millis(1);
    }
    (sa.done, sb.done)
}

/// Hands each host the packets that have arrived by `now`.
fn deliver(
    wire: &mut VecDeque<(Instant, bool, Vec<u8>)>,
    now: Instant,
    sa: &mut Side,
    sb: &mut Side,
) {
    while wire.front().is_some_and(|(t, _, _)| *t <= now) {
        let (_, to_b, p) = wire.pop_front().expect("due");
        let s = if to_b { &mut *sb } else { &mut *sa };
        if p.len() >= 20 && p[9] == ackclock_wire::IPPROTO_UDP {
            let _ = s.udp.handle_packet(&p);
        } else {
            s.ep.handle_packet(now, &p);
        }
        s.fresh = true;
    }
}
