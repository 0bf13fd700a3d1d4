//! Two UDP stacks joined by a wire of a fixed delay each way, in virtual time: for tests and
//! examples that run datagram applications against each other with neither a device nor a
//! clock. Not for a hot path: each packet on the wire is a fresh `Vec`.
//!
//! The wire loses nothing, reorders nothing and has no rate limit: each packet arrives
//! exactly the delay after the [`VirtualWire::transmit`] that put it on. The crate's
//! documentation has an example.

use crate::{UdpConfig, UdpStack};
use ackclock_wire::{Duration, Instant};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// Two UDP stacks, `a` and `b`, joined by a wire of a fixed delay each way, in virtual
/// time: for tests that run datagram applications against each other with neither a
/// device nor a clock (the caller advances `now`).
pub struct VirtualWire {
    /// The stack at the first address: what it sends arrives at `b`.
    pub a: UdpStack,
    /// The stack at the second address: what it sends arrives at `a`.
    pub b: UdpStack,
    delay: Duration,
    /// The packets on the wire: arrival, whether to `b`, the IP packet; in arrival order.
    wire: VecDeque<(Instant, bool, Vec<u8>)>,
}

impl VirtualWire {
    /// Stacks at addresses `a` and `b` ([`UdpConfig::new`]'s limits, no socket bound),
    /// joined by `delay` each way, with nothing on the wire.
    pub fn new(a: Ipv4Addr, b: Ipv4Addr, delay: Duration) -> VirtualWire {
        VirtualWire {
            a: UdpStack::new(UdpConfig::new(a)),
            b: UdpStack::new(UdpConfig::new(b)),
            delay,
            wire: VecDeque::new(),
        }
    }

    /// Hands each stack the packets that have arrived by `now`; returns whether `a` and
    /// `b` got any. Panics if a stack refuses a packet of the other's: they are its own.
    pub fn deliver(&mut self, now: Instant) -> (bool, bool) {
        let mut got = (false, false);
        while self.wire.front().is_some_and(|(t, _, _)| *t <= now) {
            let (_, to_b, p) = self.wire.pop_front().expect("a packet is due");
            let (u, g) = if to_b {
                (&mut self.b, &mut got.1)
            } else {
                (&mut self.a, &mut got.0)
            };
            u.handle_packet(&p).expect("the other stack's packet");
            *g = true;
        }
        got
    }

    /// Puts on the wire what both stacks have to send at `now`, to arrive at `now` plus
    /// the delay. Packets go through a 2048-byte buffer: a datagram of more than 2020
    /// payload bytes does not fit, and its stack drops it (counted in its
    /// [`tx_queue_full`](crate::UdpStats::tx_queue_full)).
    pub fn transmit(&mut self, now: Instant) {
        let mut buf = [0u8; 2048];
        while let Some(n) = self.a.poll_transmit(&mut buf) {
            self.wire
                .push_back((now + self.delay, true, buf[..n].to_vec()));
        }
        while let Some(n) = self.b.poll_transmit(&mut buf) {
            self.wire
                .push_back((now + self.delay, false, buf[..n].to_vec()));
        }
    }
}
