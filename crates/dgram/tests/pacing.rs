//! Pacing after a rate change and the receiver's feedback timer, through the public API:
//! two UDP hosts joined by a wire with a fixed one-way delay, driven in 1 ms steps as the
//! simulator and the live loop drive them (an application polled at the times it asks
//! for, and whenever a datagram arrives).

use ackclock_dgram::msg::{Feedback, Message};
use ackclock_dgram::rate::{Controller, TfrcRate};
use ackclock_dgram::rpc::{RateControl, RpcClient, RpcClientConfig, RpcServer, IP_UDP_HEADERS};
use ackclock_dgram::stream::{StreamReceiver, StreamSender, StreamSenderConfig};
use ackclock_dgram::{DatagramSocket, StackSocket, VirtualWire};
use ackclock_wire::{Duration, Instant};
use std::collections::VecDeque;
use std::net::{Ipv4Addr, SocketAddrV4};

const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);

fn ms(n: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(n)
}

/// Two hosts and a wire of `delay` each way; `step` puts what both hosts sent on the wire
/// and delivers what is due at `now`.
struct Net(VirtualWire);

impl Net {
    fn new(delay: Duration) -> Net {
        Net(VirtualWire::new(A, B, delay))
    }
    fn step(&mut self, now: Instant) {
        self.0.transmit(now);
        self.0.deliver(now);
    }
}

impl core::ops::Deref for Net {
    type Target = VirtualWire;
    fn deref(&self) -> &VirtualWire {
        &self.0
    }
}

impl core::ops::DerefMut for Net {
    fn deref_mut(&mut self) -> &mut VirtualWire {
        &mut self.0
    }
}

/// RFC 5348 §4.2 starts a sender at one packet a second; the first feedback raises the
/// rate to W_init / R (§4.2, §4.3). §4.6 spaces packets by s / X at the current X, so the
/// packet after the first goes at the new rate, not a second after the first (where the
/// no-feedback timer, §4.4, would meanwhile have taken an idle sender's rate to nothing).
#[test]
fn rfc5348_4_6_the_first_feedback_paces_the_next_packets_at_the_new_rate() {
    let mut net = Net::new(Duration::from_millis(20));
    let sa = net.a.bind(0).unwrap();
    let sb = net.b.bind(5004).unwrap();
    let s = 1000 + IP_UDP_HEADERS;
    let mut tx = StreamSender::new(
        StreamSenderConfig {
            dst: SocketAddrV4::new(B, 5004),
            packet_bytes: 1000,
            start: Instant::ZERO,
            stop: Some(ms(1000)),
            bytes: None,
        },
        Controller::Tfrc(TfrcRate::new(s)),
    );
    let mut rx = StreamReceiver::new();
    let mut sent_by_500ms = 0;
    for t in 0..1000 {
        let now = ms(t);
        net.step(now);
        tx.poll(
            now,
            &mut StackSocket {
                stack: &mut net.a,
                id: sa,
            },
        );
        rx.poll(
            now,
            &mut StackSocket {
                stack: &mut net.b,
                id: sb,
            },
        );
        net.step(now);
        if t == 500 {
            sent_by_500ms = tx.stats().packets;
        }
    }
    // At W_init / R = 4 * 1028 bytes per 40 ms, and doubling each RTT after, hundreds of
    // packets go in the first half second; a sender that kept the first packet's
    // schedule sent its second at 1 s.
    assert!(sent_by_500ms > 100, "{sent_by_500ms} packets by 500 ms");
    assert_eq!(tx.stats().no_feedback_timeouts, 0);
    assert!(rx.stats().feedbacks > 10);
}

/// The same for an RPC client with TFRC: the first response sets the rate, and the
/// requests after the first go at it.
#[test]
fn rfc5348_4_6_an_rpc_client_paces_at_the_rate_its_first_response_allows() {
    let mut net = Net::new(Duration::from_millis(20));
    let sa = net.a.bind(0).unwrap();
    let sb = net.b.bind(2049).unwrap();
    let mut client = RpcClient::new(RpcClientConfig {
        rate: RateControl::Tfrc,
        requests: Some(100),
        ..RpcClientConfig::nfs(SocketAddrV4::new(B, 2049))
    });
    let mut server = RpcServer::new(Duration::ZERO, 64, 1472);
    let mut completed_by_1s = 0;
    for t in 0..3000 {
        let now = ms(t);
        net.step(now);
        client.poll(
            now,
            &mut StackSocket {
                stack: &mut net.a,
                id: sa,
            },
        );
        server.poll(
            now,
            &mut StackSocket {
                stack: &mut net.b,
                id: sb,
            },
        );
        net.step(now);
        if t == 1000 {
            completed_by_1s = client.stats().completed;
        }
    }
    // 4 outstanding over a 40 ms RTT: 100 requests in about a second. A client that kept
    // the first request's one-a-second schedule completed 1 by then.
    assert!(completed_by_1s > 50, "{completed_by_1s} completed by 1 s");
    assert_eq!(client.stats().completed, 100);
    assert_eq!(client.stats().timeouts, 0);
}

/// A socket that records what is sent and hands out queued datagrams.
#[derive(Default)]
struct Fake {
    inbox: VecDeque<(Vec<u8>, SocketAddrV4)>,
    sent: Vec<Vec<u8>>,
}

impl DatagramSocket for Fake {
    fn send_to(&mut self, _dst: SocketAddrV4, payload: &[u8]) -> bool {
        self.sent.push(payload.to_vec());
        true
    }
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, SocketAddrV4, u8)> {
        let (d, from) = self.inbox.pop_front()?;
        let n = d.len().min(buf.len());
        buf[..n].copy_from_slice(&d[..n]);
        Some((d.len(), from, 0))
    }
}

fn data(seq: u32, sent: Instant, rtt_us: u32) -> Vec<u8> {
    let mut b = vec![0u8; 1000];
    Message::Data {
        seq,
        sent_ns: sent.as_nanos(),
        rtt_us,
    }
    .write(&mut b);
    b
}

fn feedbacks(f: &Fake) -> usize {
    f.sent
        .iter()
        .filter(|p| matches!(Message::parse(p), Some(Message::Feedback(Feedback { .. }))))
        .count()
}

/// RFC 5348 §6.2: the receiver reports once per RTT while data arrives. Polled at the
/// time it asked for, it reports (whatever the RTT's rounding to the nanosecond: an RTT of
/// 58 569 us once made the wake-up a nanosecond earlier than the test of whether the
/// report was due, and a caller that woke it there woke it there for ever); with no data
/// since its last report it asks for no wake-up at all.
#[test]
fn rfc5348_6_2_the_receiver_reports_at_the_wake_it_asks_for_and_idles_without_data() {
    let peer = SocketAddrV4::new(A, 49152);
    for rtt_us in [58_569u32, 2_000, 33_333, 100_000, 123_457] {
        let mut rx = StreamReceiver::new();
        let mut sock = Fake::default();
        let t0 = Instant::from_nanos(665_754_520);
        sock.inbox.push_back((data(0, t0, rtt_us), peer));
        let first = rx.poll(t0, &mut sock);
        assert_eq!(feedbacks(&sock), 1, "the first packet is reported at once");
        assert_eq!(first, None, "nothing new to report: no wake ({rtt_us} us)");
        let t1 = t0 + Duration::from_micros(1);
        sock.inbox.push_back((data(1, t1, rtt_us), peer));
        let wake = rx.poll(t1, &mut sock).expect("data to report: a wake");
        assert!(wake > t1);
        assert_eq!(rx.poll(wake, &mut sock), None, "{rtt_us} us");
        assert_eq!(feedbacks(&sock), 2, "reported at its wake ({rtt_us} us)");
    }
}
