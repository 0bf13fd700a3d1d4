//! The datagram applications over a simple path (tests/harness): RPC retransmission timers
//! (seed 000, 11 Feb 1988: RPC and NFS "known to have congestion problems"; RFC 6298 for
//! the adaptive timer), TFRC (RFC 5348) and rate AIMD streams, and, under random loss and
//! random paths, that every application keeps its work bounded.

mod harness;

use ackclock_dgram::rate::{throughput_equation, AimdRate, Controller, TfrcRate};
use ackclock_dgram::rpc::{
    rpc_rtt_config, Arrivals, RateControl, RpcClient, RpcClientConfig, RpcServer, Timer,
};
use ackclock_dgram::stream::{StreamReceiver, StreamSender, StreamSenderConfig};
use ackclock_wire::{Duration, Instant};
use harness::{Direction, Path, SERVER};
use proptest::prelude::*;

fn at(s: f64) -> Instant {
    Instant::ZERO + Duration::from_secs_f64(s)
}

fn path(rate_bps: f64, one_way_ms: u64, limit: usize, loss: f64, seed: u64) -> Path {
    Path::new(
        Direction::new(rate_bps, Duration::from_millis(one_way_ms), limit, loss),
        Direction::new(rate_bps, Duration::from_millis(one_way_ms), limit, loss),
        seed,
    )
}

fn server() -> RpcServer {
    RpcServer::new(Duration::ZERO, 1000, 65507)
}

#[test]
fn seed_rpc_fixed_timer_retransmits_every_timeout_into_a_black_hole() {
    let mut p = path(1e6, 10, 100, 1.0, 1);
    let mut c = RpcClient::new(RpcClientConfig {
        requests: Some(1),
        outstanding: 1,
        ..RpcClientConfig::nfs(SERVER)
    });
    p.run(&mut c, &mut server(), at(10.0));
    let s = c.stats();
    // 5 transmissions 0.7 s apart, then given up at 3.5 s.
    assert_eq!((s.transmissions, s.retransmissions), (5, 4));
    assert_eq!((s.failed, s.completed), (1, 0));
    assert_eq!(s.timeouts, 5);
    assert_eq!(c.finished_at(), Some(at(3.5)));
}

#[test]
fn rfc6298_5_5_adaptive_timer_backs_off_into_a_black_hole() {
    let mut p = path(1e6, 10, 100, 1.0, 1);
    let mut c = RpcClient::new(RpcClientConfig {
        requests: Some(1),
        ..RpcClientConfig::dns(SERVER)
    });
    p.run(&mut c, &mut server(), at(100.0));
    // Initial RTO 1 s (RFC 6298 §2.1), doubled at each expiry: sent at 0, 1, 3, 7; given
    // up at 15 s.
    assert_eq!(c.stats().transmissions, 4);
    assert_eq!(c.finished_at(), Some(at(15.0)));
}

#[test]
fn rfc6298_adaptive_timer_learns_the_path_and_never_retransmits_on_a_clean_one() {
    let mut p = path(10e6, 50, 100, 0.0, 1);
    let mut c = RpcClient::new(RpcClientConfig {
        requests: Some(200),
        timer: Timer::Adaptive(rpc_rtt_config()),
        ..RpcClientConfig::nfs(SERVER)
    });
    p.run(&mut c, &mut server(), at(60.0));
    let s = c.stats();
    assert_eq!((s.completed, s.retransmissions, s.failed), (200, 0, 0));
    // 100 ms of propagation plus serialization of 156 + 1052 bytes at 10 Mb/s (~1 ms).
    let srtt = c.srtt().as_secs_f64();
    assert!((0.100..0.103).contains(&srtt), "srtt {srtt}");
    assert_eq!(p.forward.delivered, 200);
}

#[test]
fn seed_rpc_fixed_timer_shorter_than_the_queue_sends_every_request_again() {
    // 16 outstanding 1052-byte responses at 64 kb/s: each waits up to 2 s in the server's
    // direction, far past the 0.7 s timer; the adaptive timer waits it out.
    let run = |timer| {
        let mut p = path(64e3, 10, 30, 0.0, 1);
        let mut c = RpcClient::new(RpcClientConfig {
            outstanding: 16,
            stop: Some(at(60.0)),
            timer,
            ..RpcClientConfig::nfs(SERVER)
        });
        p.run(&mut c, &mut server(), at(90.0));
        c.stats().clone()
    };
    let fixed = run(Timer::Fixed(Duration::from_millis(700)));
    let adaptive = run(Timer::Adaptive(rpc_rtt_config()));
    assert!(
        fixed.transmissions > 2 * fixed.completed,
        "fixed: {fixed:?}"
    );
    assert!(
        fixed.duplicate_responses > 0 && fixed.failed > 0,
        "{fixed:?}"
    );
    assert!(
        adaptive.transmissions * 10 < adaptive.completed * 11,
        "adaptive: {adaptive:?}"
    );
    assert!(
        adaptive.completed > fixed.completed,
        "{adaptive:?} vs {fixed:?}"
    );
}

#[test]
fn dns_like_poisson_queries_wait_for_their_slot_and_all_complete() {
    let mut p = path(1e6, 20, 50, 0.0, 3);
    let mut c = RpcClient::new(RpcClientConfig {
        stop: Some(at(30.0)),
        ..RpcClientConfig::dns(SERVER)
    });
    p.run(&mut c, &mut server(), at(40.0));
    let s = c.stats();
    // About 10 a second for 30 s.
    assert!((250..=350).contains(&s.issued), "{s:?}");
    assert_eq!(s.completed, s.issued);
    assert_eq!(s.retransmissions, 0);
    assert!(s.latency.quantile(0.5).unwrap() >= 40e6);
}

fn stream(ctl: Controller, secs: f64) -> (StreamSender, StreamReceiver) {
    (
        StreamSender::new(
            StreamSenderConfig {
                dst: SERVER,
                packet_bytes: 1000,
                start: Instant::ZERO,
                stop: Some(at(secs)),
                bytes: None,
            },
            ctl,
        ),
        StreamReceiver::new(),
    )
}

#[test]
fn rfc5348_tfrc_alone_fills_a_drop_tail_bottleneck() {
    let mut p = path(1e6, 20, 20, 0.0, 1);
    let (mut s, mut r) = stream(Controller::Tfrc(TfrcRate::new(1028)), 60.0);
    p.run(&mut s, &mut r, at(61.0));
    // The last 50 s carried at least 85% of what the link can.
    let util = p.forward.bytes as f64 * 8.0 / 60.0 / 1e6;
    assert!(util > 0.85, "utilization {util}");
    assert!(r.stats().loss_events > 0, "the queue overflowed");
    assert!(r.p() > 0.0 && r.p() < 0.1, "p {}", r.p());
    assert!(s.stats().feedbacks > 100);
}

#[test]
fn rfc5348_3_1_tfrc_rate_at_a_fixed_loss_rate_is_the_equations() {
    // Random loss of 1% on a fast link: no queue, so the loss event rate is about the
    // loss rate (losses rarely fall within one RTT of each other at this p), and the rate
    // converges to the equation's at that p and RTT.
    let mut p = path(100e6, 50, 10_000, 0.01, 7);
    let (mut s, mut r) = stream(Controller::Tfrc(TfrcRate::new(1028)), 200.0);
    p.run(&mut s, &mut r, at(200.0));
    let pe = r.p();
    assert!((0.005..0.02).contains(&pe), "loss event rate {pe}");
    let x_eq = throughput_equation(1028.0, 0.1, pe, 0.4, 1.0);
    let x = s.controller().rate();
    assert!(
        (x / x_eq - 1.0).abs() < 0.3,
        "rate {x} B/s against the equation's {x_eq} B/s at p = {pe}"
    );
}

#[test]
fn rate_aimd_stream_halves_on_loss_and_stays_near_the_bottleneck() {
    let mut p = path(1e6, 20, 20, 0.0, 1);
    let (mut s, mut r) = stream(Controller::Aimd(AimdRate::new(1028)), 60.0);
    p.run(&mut s, &mut r, at(61.0));
    let util = p.forward.bytes as f64 * 8.0 / 60.0 / 1e6;
    assert!(util > 0.7, "utilization {util}");
    assert!(s.stats().loss_events > 3);
    // It never ran far past the link: at most twice its rate.
    assert!(s.controller().rate() * 8.0 < 2.0e6);
}

#[test]
fn an_uncontrolled_stream_sends_its_fixed_rate_whatever_is_lost() {
    let mut p = path(1e6, 20, 20, 0.0, 1);
    let (mut s, mut r) = stream(Controller::Fixed(250_000.0), 10.0);
    p.run(&mut s, &mut r, at(11.0));
    // 2 Mb/s of 1028-byte packets into a 1 Mb/s link for 10 s: about 2432 sent, half lost.
    assert!(
        (2400..=2440).contains(&s.stats().packets),
        "{:?}",
        s.stats()
    );
    assert!(p.forward.dropped > 1000);
    assert!(r.stats().lost > 1000);
}

#[test]
fn a_stream_receiver_takes_a_huge_sequence_jump_as_one_loss_event() {
    use ackclock_dgram::msg::Message;
    use ackclock_dgram::DatagramSocket;
    struct Feed(Vec<Vec<u8>>, Vec<Vec<u8>>);
    impl DatagramSocket for Feed {
        fn send_to(&mut self, _: core::net::SocketAddrV4, p: &[u8]) -> bool {
            self.1.push(p.to_vec());
            true
        }
        fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, core::net::SocketAddrV4, u8)> {
            let d = self.0.pop()?;
            let n = d.len().min(buf.len());
            buf[..n].copy_from_slice(&d[..n]);
            Some((d.len(), harness::CLIENT, 0))
        }
    }
    let mut r = StreamReceiver::new();
    let mut feed = Feed(Vec::new(), Vec::new());
    for (i, seq) in [
        0u32,
        1,
        2,
        1_000_000_000,
        1_000_000_001,
        1_000_000_002,
        1_000_000_003,
        1_000_000_001,
        3_000_000_000,
    ]
    .into_iter()
    .enumerate()
    {
        let mut b = [0u8; 100];
        Message::Data {
            seq,
            sent_ns: i as u64 * 100_000_000,
            rtt_us: 10_000,
        }
        .write(&mut b);
        feed.0.push(b.to_vec());
        r.poll(at(i as f64 * 0.1), &mut feed);
    }
    // The jump forward and the jump back (3e9 is 1.3e9 behind 1e9 in serial arithmetic,
    // RFC 1982) are one loss event each; the second 1e9 + 1 is a duplicate; nothing walks
    // the gaps packet by packet.
    assert_eq!(r.stats().loss_events, 2);
    assert_eq!(r.stats().late_or_duplicate, 1);
    assert_eq!(r.stats().packets, 9);
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(64))]

    /// Under random loss, rates, delays and buffers, every combination of timer and rate
    /// control finishes: each request completes or is given up, the client stops, and no
    /// party asks to run again at the same instant without end.
    #[test]
    fn rpc_clients_always_finish_and_never_spin(
        loss in 0.0f64..0.5,
        rate in 32e3f64..100e6,
        delay in 0u64..300,
        limit in 1usize..100,
        outstanding in 1usize..32,
        timer_fixed in any::<bool>(),
        control in 0u8..3,
        poisson in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut p = path(rate, delay, limit, loss, seed);
        let mut c = RpcClient::new(RpcClientConfig {
            outstanding,
            // Ten requests: even at the 60 s RTO ceiling, 5 transmissions each end within
            // the hour the test runs.
            requests: Some(10),
            timer: if timer_fixed {
                Timer::Fixed(Duration::from_millis(300))
            } else {
                Timer::Adaptive(rpc_rtt_config())
            },
            rate: [RateControl::None, RateControl::Aimd, RateControl::Tfrc][control as usize],
            arrivals: if poisson {
                Arrivals::Poisson { per_sec: 50.0, backlog: 20 }
            } else {
                Arrivals::Closed
            },
            seed,
            ..RpcClientConfig::nfs(SERVER)
        });
        p.run(&mut c, &mut server(), at(3600.0));
        let s = c.stats();
        prop_assert_eq!(s.issued, s.completed + s.failed, "{:?}", s);
        prop_assert!(s.issued + s.refused >= 10);
        prop_assert!(c.finished_at().is_some(), "{:?}", s);
        prop_assert!(s.transmissions <= 5 * s.issued);
        prop_assert!(p.max_polls_at_one_instant < 1000);
    }

    #[test]
    fn streams_stay_paced_and_never_spin(
        loss in 0.0f64..0.5,
        rate in 32e3f64..50e6,
        delay in 0u64..300,
        limit in 1usize..100,
        control in 0u8..3,
        seed in any::<u64>(),
    ) {
        let mut p = path(rate, delay, limit, loss, seed);
        let ctl = match control {
            0 => Controller::Tfrc(TfrcRate::new(1028)),
            1 => Controller::Aimd(AimdRate::new(1028)),
            _ => Controller::Fixed(rate / 8.0),
        };
        let (mut s, mut r) = stream(ctl, 20.0);
        p.run(&mut s, &mut r, at(25.0));
        prop_assert!(p.max_polls_at_one_instant < 1000);
        // Never more than twice the link's rate on average, nor below one packet per
        // t_mbi.
        let sent = s.stats().packets as f64 * 1028.0 * 8.0 / 20.0;
        prop_assert!(sent <= 2.0 * rate + 1028.0 * 8.0 * 64.0 / 20.0, "sent {} b/s on {} b/s", sent, rate);
        prop_assert!(s.stats().packets >= 1);
        prop_assert!(r.stats().packets <= s.stats().packets);
    }
}

/// A socket that delivers the given datagrams once and swallows what is sent.
struct Garbage(Vec<Vec<u8>>);

impl ackclock_dgram::DatagramSocket for Garbage {
    fn send_to(&mut self, _: core::net::SocketAddrV4, _: &[u8]) -> bool {
        true
    }
    fn recv_from(&mut self, buf: &mut [u8]) -> Option<(usize, core::net::SocketAddrV4, u8)> {
        let d = self.0.pop()?;
        let n = d.len().min(buf.len());
        buf[..n].copy_from_slice(&d[..n]);
        Some((d.len(), harness::CLIENT, 0))
    }
}

proptest! {
    #![proptest_config(ackclock_testkit::proptest_config(256))]

    /// Whatever arrives (any bytes, any message kind with any fields, timestamps from the
    /// future), no application panics, and each counts what it could not use.
    #[test]
    fn arbitrary_datagrams_never_panic_any_application(
        datagrams in proptest::collection::vec(
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..64),
                (1u8..5, any::<u8>(), any::<u32>(), any::<u64>(), any::<u32>(), any::<[u8; 12]>())
                    .prop_map(|(k, x, id, ts, w, tail)| {
                        let mut b = vec![k, x, 0, 0];
                        b.extend_from_slice(&id.to_be_bytes());
                        b.extend_from_slice(&ts.to_be_bytes());
                        b.extend_from_slice(&w.to_be_bytes());
                        b.extend_from_slice(&tail);
                        b
                    }),
            ],
            0..40,
        ),
        now_ms in 0u64..100_000,
    ) {
        let now = at(now_ms as f64 / 1000.0);
        let mut c = RpcClient::new(RpcClientConfig {
            rate: RateControl::Tfrc,
            ..RpcClientConfig::nfs(SERVER)
        });
        c.poll(now, &mut Garbage(datagrams.clone()));
        let mut s = server();
        s.poll(now, &mut Garbage(datagrams.clone()));
        let (mut tx, mut rx) = stream(Controller::Tfrc(TfrcRate::new(1028)), 10.0);
        tx.poll(now, &mut Garbage(datagrams.clone()));
        rx.poll(now, &mut Garbage(datagrams.clone()));
        prop_assert!(c.stats().completed == 0);
    }
}
