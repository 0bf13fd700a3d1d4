//! The receiver's ACK policy: RFC 5681 §4.2 and RFC 9293 §3.8.6.3 (delayed ACKs), and the
//! engine's quick-ACK mode.

use ackclock_tcp::{AckPolicy, TcpConfig};
use ackclock_testkit::peer::*;

/// The receive buffer fits in an unscaled window, so the window-update rule (which would
/// announce the window regained as data arrives into a buffer larger than 65535) does not
/// mix its ACKs with the ACK policy's.
fn cfg_with(ack: AckPolicy) -> TcpConfig {
    TcpConfig {
        ack,
        recv_buffer_bytes: 60_000,
        ..cfg_unlimited()
    }
}

/// Sends `n` full-sized (1460-byte) in-order segments, one at a time with 1 ms between
/// them; returns after which segments (1-based) an ACK went out at once, and checks that
/// each ACK covers everything received so far.
fn acks_after_each(p: &mut Peer, n: usize) -> Vec<usize> {
    let mut v = Vec::new();
    for i in 1..=n {
        let out = p.send_data(&data(1460));
        if !out.is_empty() {
            assert_eq!(out.len(), 1, "{out:?}");
            assert!(out[0].is_pure_ack());
            assert_eq!(out[0].ack, p.snd_nxt, "the ACK covers all data received");
            v.push(i);
        }
        p.now += ms(1);
    }
    v
}

#[test]
fn rfc5681_4_2_ack_at_least_every_second_full_sized_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy::default()));
    assert_eq!(AckPolicy::default().segments_per_ack, 2);
    assert_eq!(acks_after_each(&mut p, 8), vec![2, 4, 6, 8]);
}

#[test]
fn rfc5681_4_2_segments_per_ack_4_acks_every_fourth_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 4,
        ..AckPolicy::default()
    }));
    assert_eq!(acks_after_each(&mut p, 16), vec![4, 8, 12, 16]);
}

#[test]
fn rfc5681_4_2_segments_per_ack_8_acks_every_eighth_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 8,
        ..AckPolicy::default()
    }));
    assert_eq!(acks_after_each(&mut p, 24), vec![8, 16, 24]);
}

#[test]
fn rfc5681_4_2_segments_per_ack_1_acks_every_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 1,
        ..AckPolicy::default()
    }));
    assert_eq!(acks_after_each(&mut p, 5), vec![1, 2, 3, 4, 5]);
}

#[test]
fn rfc9293_3_8_6_3_delayed_ack_timer_acks_a_lone_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy::default()));
    let t0 = p.now;
    let out = p.send_data(b"lone");
    assert!(
        out.is_empty(),
        "the ACK of a lone small segment is delayed: {out:?}"
    );
    let out = p.advance(secs(2));
    assert_eq!(out.len(), 1, "{out:?}");
    let (t, s) = &out[0];
    assert!(s.is_pure_ack());
    assert_eq!(s.ack, p.snd_nxt);
    assert_eq!(*t - t0, ms(200), "default delayed-ACK time");
    assert!(*t - t0 < ms(500), "RFC 9293: MUST be less than 0.5 s");
    assert_eq!(p.conn().stats().delayed_acks_out, 1);
}

#[test]
fn rfc9293_3_8_6_3_delayed_ack_time_is_configurable() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        delayed_ack: ms(40),
        ..AckPolicy::default()
    }));
    let t0 = p.now;
    assert!(p.send_data(&data(1460)).is_empty());
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0 - t0, ms(40));
}

#[test]
fn rfc9293_3_8_6_3_delayed_ack_not_restarted_by_later_segment() {
    // The delay bounds the ACK of the FIRST unacknowledged segment.
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 8,
        ..AckPolicy::default()
    }));
    let t0 = p.now;
    p.send_data(b"one");
    p.now += ms(150);
    p.send_data(b"two");
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0 - t0, ms(200));
    assert_eq!(out[0].1.ack, p.snd_nxt);
}

#[test]
fn rfc5681_4_2_out_of_order_segment_is_acked_immediately() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 8,
        ..AckPolicy::default()
    }));
    let o = p.out(ACK).seq(p.snd_nxt + 1460).payload(&data(1460));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "immediate duplicate ACK: {out:?}");
    assert!(out[0].is_pure_ack());
    assert_eq!(out[0].ack, p.snd_nxt);
    // Each further out-of-order segment draws its own duplicate ACK.
    let o = p.out(ACK).seq(p.snd_nxt + 2920).payload(&data(1460));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, p.snd_nxt);
}

#[test]
fn rfc5681_4_2_segment_filling_a_gap_is_acked_immediately() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        segments_per_ack: 8,
        ..AckPolicy::default()
    }));
    let b = p.snd_nxt;
    let o = p.out(ACK).seq(b + 100).payload(&data(100));
    p.inject(&o);
    // Fills the gap completely.
    let o = p.out(ACK).seq(b).payload(&data(100));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ack, b + 200);
    // Fills part of a gap.
    let o = p.out(ACK).seq(b + 400).payload(&data(100));
    p.inject(&o);
    let o = p.out(ACK).seq(b + 200).payload(&data(100));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "partial fill: {out:?}");
    assert_eq!(out[0].ack, b + 300);
}

#[test]
fn quickack_mode_acks_every_segment() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        quickack: true,
        segments_per_ack: 8,
        ..AckPolicy::default()
    }));
    assert_eq!(acks_after_each(&mut p, 5), vec![1, 2, 3, 4, 5]);
    // Small segments too.
    let out = p.send_data(b"x");
    assert_eq!(out.len(), 1);
}

#[test]
fn delayed_ack_zero_disables_delaying() {
    let mut p = Peer::established(cfg_with(AckPolicy {
        delayed_ack: ms(0),
        ..AckPolicy::default()
    }));
    let out = p.send_data(b"x");
    assert_eq!(out.len(), 1, "{out:?}");
}

#[test]
fn rfc9293_3_10_7_4_data_is_acked_piggybacked_on_outgoing_data() {
    // An ACK rides on data the application sends: no separate delayed ACK follows.
    let mut p = Peer::established(cfg_with(AckPolicy::default()));
    p.send_data(b"request");
    let out = p.app_send(b"response");
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, p.snd_nxt);
    p.absorb(&out);
    let later = p.advance(secs(1));
    assert!(
        later.iter().all(|(_, s)| !s.is_pure_ack()),
        "no redundant delayed ACK: {later:?}"
    );
}

#[test]
fn delayed_ack_clock_acks_at_the_next_tick_of_a_200_ms_clock() {
    // 4.3BSD's tcp_fasttimo: the delayed ACK goes out at the next tick of a 200 ms clock,
    // 0-200 ms after the segment, always on the same ticks (the clock does not restart).
    let mut p = Peer::established(cfg_with(AckPolicy {
        delayed_ack_clock: true,
        ..AckPolicy::default()
    }));
    let (mut ticks, mut waits) = (Vec::new(), Vec::new());
    for k in 0..6u64 {
        // Segments arrive at times spread over the clock's period.
        p.now += ms(137 + 61 * k);
        let t0 = p.now;
        assert!(p.send_data(b"x").is_empty());
        let out = p.advance(secs(1));
        assert_eq!(out.len(), 1, "{out:?}");
        let (t, s) = &out[0];
        assert!(s.is_pure_ack() && s.ack == p.snd_nxt);
        let wait = *t - t0;
        assert!(wait > ms(0) && wait <= ms(200), "waited {wait:?}");
        ticks.push(*t);
        waits.push(wait);
    }
    // Every ACK went out on the same 200 ms grid, and the waits differ.
    for w in ticks.windows(2) {
        assert_eq!((w[1] - w[0]).as_nanos() % ms(200).as_nanos(), 0);
    }
    assert!(waits.iter().any(|w| *w != waits[0]), "{waits:?}");
}

#[test]
fn rfc5681_4_2_count_small_segments_acks_every_second_segment_of_any_size() {
    // FreeBSD's rule (the packetdrill suite's reordering-* scripts): segments of 1, 2, 4, 8
    // and 16 bytes in order draw an ACK after the 2nd and the 4th, the 5th waits for the
    // delayed-ACK timer.
    let mut p = Peer::established(cfg_with(AckPolicy {
        delayed_ack: ms(40),
        count_small_segments: true,
        ..AckPolicy::default()
    }));
    let mut acked_after = Vec::new();
    for (i, n) in [1usize, 2, 4, 8, 16].into_iter().enumerate() {
        let out = p.send_data(&data(n));
        if !out.is_empty() {
            assert_eq!(out.len(), 1, "{out:?}");
            assert!(out[0].is_pure_ack());
            assert_eq!(out[0].ack, p.snd_nxt, "the ACK covers all data received");
            acked_after.push(i + 1);
        }
    }
    assert_eq!(acked_after, vec![2, 4]);
    let t0 = p.now;
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].0 - t0, ms(40));
    assert_eq!(out[0].1.ack, p.snd_nxt);
}

#[test]
fn rfc5681_4_2_count_small_segments_counts_from_the_last_ack_sent() {
    // reordering-21345: the out-of-order segment and the one filling the hole are ACKed at
    // once; the count starts again from there.
    let mut p = Peer::established(cfg_with(AckPolicy {
        delayed_ack: ms(40),
        count_small_segments: true,
        ..AckPolicy::default()
    }));
    let b = p.snd_nxt;
    let o = p.out(ACK).seq(b.wrapping_add(1)).payload(&data(2));
    assert_eq!(p.inject(&o).len(), 1, "out of order: immediate ACK");
    let o = p.out(ACK).seq(b).payload(&data(1));
    let out = p.inject(&o);
    assert_eq!(out.len(), 1, "hole filled: immediate ACK");
    assert_eq!(out[0].ack, b.wrapping_add(3));
    p.snd_nxt = b.wrapping_add(3);
    assert!(p.send_data(&data(4)).is_empty());
    let out = p.send_data(&data(8));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ack, p.snd_nxt);
}

#[test]
fn rfc5681_4_2_small_segments_do_not_count_by_default() {
    // Only full-sized segments count (or 2 MSS of bytes): two small segments wait for the
    // delayed-ACK timer.
    assert!(!AckPolicy::default().count_small_segments);
    let mut p = Peer::established(cfg_with(AckPolicy::default()));
    assert!(p.send_data(&data(1)).is_empty());
    assert!(p.send_data(&data(2)).is_empty());
    let out = p.advance(secs(1));
    assert_eq!(out.len(), 1, "{out:?}");
}
