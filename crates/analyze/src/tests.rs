//! One test per rule, on hand-built segments between a (198.18.0.1:40000) and b
//! (198.18.0.2:5001).

use crate::{Analysis, Analyzer};
use ackclock_wire::tcp::Timestamps;
use ackclock_wire::{
    write_ipv4_tcp, Instant, Ipv4Header, SackBlock, SackBlocks, TcpFlags, TcpHeader, TcpOptions,
    IPPROTO_TCP,
};
use core::net::Ipv4Addr;

const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const ISN_A: u32 = 1_000;
const ISN_B: u32 = 5_000;

/// A capture being written: segments at given milliseconds.
struct Cap {
    an: Analyzer,
}

#[derive(Clone, Copy)]
struct Seg {
    from_a: bool,
    seq: u32,
    ack: u32,
    flags: TcpFlags,
    window: u16,
    len: usize,
    opts: TcpOptions,
}

impl Seg {
    /// Data of a: `len` bytes at relative sequence `rel` (1 is the first data byte).
    fn data(rel: u32, len: usize) -> Seg {
        Seg {
            from_a: true,
            seq: ISN_A + rel,
            ack: ISN_B + 1,
            flags: TcpFlags::ACK,
            window: 65535,
            len,
            opts: TcpOptions::NONE,
        }
    }
    /// b's ACK of a's data up to relative `rel`.
    fn ack(rel: u32) -> Seg {
        Seg {
            from_a: false,
            seq: ISN_B + 1,
            ack: ISN_A + rel,
            flags: TcpFlags::ACK,
            window: 65535,
            len: 0,
            opts: TcpOptions::NONE,
        }
    }
    fn sack(mut self, blocks: &[(u32, u32)]) -> Seg {
        let mut s = SackBlocks::new();
        for &(l, r) in blocks {
            s.push(SackBlock {
                left: ISN_A + l,
                right: ISN_A + r,
            });
        }
        self.opts.sack = s;
        self
    }
}

impl Cap {
    fn new() -> Cap {
        Cap {
            an: Analyzer::new(),
        }
    }

    fn at(&mut self, ms: u64, s: Seg) -> &mut Self {
        let (src, dst, sp, dp) = if s.from_a {
            (A, B, 40000, 5001)
        } else {
            (B, A, 5001, 40000)
        };
        let tcp = TcpHeader {
            src_port: sp,
            dst_port: dp,
            seq: s.seq,
            ack: s.ack,
            flags: s.flags,
            window: s.window,
            urgent: 0,
            options: s.opts,
        };
        let mut buf = [0u8; 1600];
        let payload = vec![0u8; s.len];
        let n = write_ipv4_tcp(
            &mut buf,
            &Ipv4Header::new(src, dst, IPPROTO_TCP),
            &tcp,
            &payload,
        )
        .unwrap();
        self.an
            .ip_packet(Instant::from_nanos(ms * 1_000_000), &buf[..n], n);
        self
    }

    /// The three-way handshake at 0, 10 and 20 ms, each SYN offering `wscale`.
    fn handshake(&mut self, wscale: (Option<u8>, Option<u8>)) -> &mut Self {
        let syn = |from_a: bool, ws: Option<u8>| Seg {
            from_a,
            seq: if from_a { ISN_A } else { ISN_B },
            ack: if from_a { 0 } else { ISN_A + 1 },
            flags: if from_a {
                TcpFlags::SYN
            } else {
                TcpFlags::SYN | TcpFlags::ACK
            },
            window: 65535,
            len: 0,
            opts: TcpOptions {
                mss: Some(1460),
                window_scale: ws,
                ..TcpOptions::NONE
            },
        };
        self.at(0, syn(true, wscale.0))
            .at(10, syn(false, wscale.1))
            .at(20, Seg::data(1, 0))
    }

    fn done(self) -> Analysis {
        self.an.finish()
    }
}

#[test]
fn karn_no_rtt_sample_from_a_retransmitted_segment() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(300, Seg::data(1, 1000)) // the timeout's retransmission
        .at(350, Seg::ack(1001)) // whose ACK? ambiguous: no sample
        .at(400, Seg::data(1001, 1000))
        .at(450, Seg::ack(2001)); // sent once: a 50 ms sample
    let a = c.done();
    let d = &a.connections[0].directions[0];
    assert_eq!(d.rexmt_pkts, 1);
    assert_eq!(d.rexmt_bytes, 1000);
    let rtt = d.rtt_ms.as_ref().unwrap();
    assert_eq!(rtt.count, 1);
    assert_eq!(rtt.p50, 50.0);
    assert_eq!(d.handshake_rtt_ms, Some(10.0));
    assert_eq!(d.unique_bytes, 2000);
}

#[test]
fn tcptrace_no_rtt_sample_when_an_earlier_covered_segment_went_later() {
    // Segment 2 went once, but the ACK that names its end also covers segment 1's
    // retransmission: the wait is the hole's, not segment 2's.
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(300, Seg::data(1, 1000))
        .at(350, Seg::ack(2001));
    let d = &c.done().connections[0].directions[0];
    assert!(d.rtt_ms.is_none());
}

#[test]
fn an_rtt_sample_needs_an_ack_that_ends_a_segment() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(140, Seg::ack(2001)); // a delayed ACK of both: one sample, of the second
    let d = &c.done().connections[0].directions[0];
    let rtt = d.rtt_ms.as_ref().unwrap();
    assert_eq!((rtt.count, rtt.p50), (1, 39.0));
}

#[test]
fn rfc2883_dsack_marks_the_retransmission_spurious() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(200, Seg::data(1, 1000)) // a timeout too early
        .at(250, Seg::ack(1001)) // the original's ACK
        .at(300, Seg::ack(1001).sack(&[(1, 1001)])); // the duplicate's: D-SACK
    let a = c.done();
    let d = &a.connections[0].directions[0];
    assert_eq!(d.rexmt_pkts, 1);
    assert_eq!(d.spurious.dsack, 1);
    assert_eq!(d.spurious.already_acked, 0);
    assert_eq!(d.spurious.total, 1);
    assert_eq!(a.connections[0].directions[1].dsack_pkts, 1);
}

#[test]
fn rfc2883_dsack_inside_the_second_block() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(102, Seg::data(2001, 1000))
        .at(200, Seg::data(2001, 1000))
        // 1 lost; 1001..3001 SACKed and 2001..3001 reported twice.
        .at(250, Seg::ack(1).sack(&[(2001, 3001), (1001, 3001)]));
    let d = &c.done().connections[0].directions[0];
    assert_eq!((d.spurious.dsack, d.spurious.total), (1, 1));
}

#[test]
fn a_retransmission_of_data_already_acked_is_spurious() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(150, Seg::ack(1001))
        .at(200, Seg::data(1, 1000));
    let d = &c.done().connections[0].directions[0];
    assert_eq!(d.rexmt_pkts, 1);
    assert_eq!(d.spurious.already_acked, 1);
    assert_eq!(d.spurious.total, 1);
}

#[test]
fn a_retransmission_of_sacked_data_is_spurious_and_of_a_hole_is_not() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(150, Seg::ack(1).sack(&[(1001, 2001)]))
        .at(200, Seg::data(1, 1000)) // the hole: needed
        .at(201, Seg::data(1001, 1000)); // SACKed already: not needed
    let d = &c.done().connections[0].directions[0];
    assert_eq!(d.rexmt_pkts, 2);
    assert_eq!((d.spurious.already_acked, d.spurious.total), (1, 1));
}

#[test]
fn reordering_is_new_data_below_the_highest_sent_and_not_a_retransmission() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(2001, 1000))
        .at(102, Seg::data(1001, 1000)) // new bytes, below 3001: out of order
        .at(103, Seg::data(1001, 1000)); // the same bytes again: a retransmission
    let d = &c.done().connections[0].directions[0];
    assert_eq!(d.out_of_order_pkts, 1);
    assert_eq!(d.rexmt_pkts, 1);
    assert_eq!(d.unique_bytes, 3000);
}

#[test]
fn rfc7323_window_scale_applies_when_both_syns_offer_it() {
    let mut c = Cap::new();
    let mut ack = Seg::ack(1);
    ack.window = 100;
    c.handshake((Some(7), Some(3))).at(30, ack);
    let a = c.done();
    let conn = &a.connections[0];
    assert!(conn.window_scaling.known && conn.window_scaling.in_effect);
    // b's SYN-ACK advertised 65535 unscaled; its later ACK 100 << 3.
    assert_eq!(conn.directions[1].max_window, 65535);
    assert_eq!(conn.directions[1].min_window, 800);

    let mut c = Cap::new();
    c.handshake((Some(7), None)).at(30, ack);
    let conn = &c.done().connections[0];
    assert!(conn.window_scaling.known && !conn.window_scaling.in_effect);
    assert_eq!(conn.directions[1].min_window, 100);
}

#[test]
fn without_the_syns_windows_are_taken_unscaled_and_it_is_said() {
    let mut c = Cap::new();
    let mut ack = Seg::ack(1001);
    ack.window = 100;
    c.at(100, Seg::data(1, 1000)).at(150, ack);
    let a = c.done();
    let conn = &a.connections[0];
    assert!(!conn.window_scaling.known);
    assert_eq!(conn.directions[1].max_window, 100);
    assert!(crate::report::text(&a).contains("SYNs not captured: windows taken unscaled"));
    // The RTT sample needs no SYN.
    assert_eq!(conn.directions[0].rtt_ms.as_ref().unwrap().count, 1);
}

#[test]
fn zero_window_advertisements_are_counted_on_the_advertising_side() {
    let mut c = Cap::new();
    let mut zero = Seg::ack(1001);
    zero.window = 0;
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(150, zero)
        .at(160, zero)
        .at(400, Seg::data(1001, 1)) // a probe
        .at(450, Seg::ack(1001));
    let a = c.done();
    assert_eq!(a.connections[0].directions[1].zero_window_adv, 2);
    let d = &a.connections[0].directions[0];
    assert_eq!((d.zwnd_probe_pkts, d.rexmt_pkts), (1, 0));
    // From 150 ms on, all 1000 bytes outstanding... none: the ACK took them. With a zero
    // window and nothing outstanding the sender is idle, not window-limited.
    assert!(d.limits.idle_s > 0.2);
}

#[test]
fn the_receive_window_limits_when_outstanding_reaches_it() {
    let mut c = Cap::new();
    let mut small = Seg::ack(1);
    small.window = 2000;
    c.handshake((None, None))
        .at(30, small)
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000)) // 2000 outstanding = the window
        .at(200, Seg::ack(2001));
    let d = &c.done().connections[0].directions[0];
    // 100..101: 1000 outstanding >= 2000 - 1000: limited already; 101..200 too.
    assert!(
        (d.limits.rwnd_limited_s - 0.1).abs() < 1e-9,
        "{:?}",
        d.limits
    );
    assert_eq!(d.limits.max_outstanding, 2000);
    assert_eq!(d.limits.main_limit(), "receive window");
}

#[test]
fn duplicate_acks_repeat_the_highest_ack_after_data_was_acked() {
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(102, Seg::data(2001, 1000))
        .at(103, Seg::data(3001, 1000))
        .at(104, Seg::data(4001, 1000))
        .at(150, Seg::ack(1001))
        .at(151, Seg::ack(1001).sack(&[(2001, 3001)]))
        .at(152, Seg::ack(1001).sack(&[(2001, 4001)]))
        .at(153, Seg::ack(1001).sack(&[(2001, 5001)]))
        .at(154, Seg::ack(1001).sack(&[(2001, 5001)]));
    let a = c.done();
    let d = &a.connections[0].directions[0];
    assert_eq!((d.dup_acks, d.triple_dup_acks), (4, 1));
    let b = &a.connections[0].directions[1];
    assert_eq!((b.sack_pkts, b.max_sack_blocks, b.dsack_pkts), (4, 1, 0));
    // The handshake's repeated ACK of nothing (before any data was ACKed) is no duplicate.
    assert_eq!(b.dup_acks, 0);
}

#[test]
fn a_syn_after_a_closed_connection_starts_another() {
    let mut c = Cap::new();
    let fin = |mut s: Seg| {
        s.flags = TcpFlags::ACK | TcpFlags::FIN;
        s
    };
    c.handshake((None, None))
        .at(100, fin(Seg::data(1, 0)))
        .at(110, fin(Seg::ack(2)))
        .at(120, Seg::data(2, 0));
    c.handshake((None, None));
    let a = c.done();
    assert_eq!(a.connections.len(), 2);
    assert!(a.connections[0].complete);
}

#[test]
fn malformed_and_foreign_packets_are_counted_and_skipped() {
    let mut an = Analyzer::new();
    an.ip_packet(Instant::ZERO, &[0x45, 0, 0], 3);
    an.ip_packet(Instant::ZERO, &[0x60; 40], 40);
    let mut buf = [0u8; 100];
    let ip = Ipv4Header::new(A, B, 17);
    ip.emit(&mut buf, 8).unwrap();
    an.ip_packet(Instant::ZERO, &buf[..28], 28);
    let a = an.finish();
    assert_eq!(a.packets.malformed.get("truncated"), Some(&1));
    assert_eq!(a.packets.malformed.get("not IPv4"), Some(&1));
    assert_eq!(a.packets.not_tcp, 1);
    assert!(a.connections.is_empty());
}

#[test]
fn timestamps_give_their_own_rtt_samples() {
    let ts = |mut s: Seg, val: u32, ecr: u32| {
        s.opts.timestamps = Some(Timestamps {
            tsval: val,
            tsecr: ecr,
        });
        s
    };
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, ts(Seg::data(1, 1000), 7, 1))
        .at(200, ts(Seg::data(1, 1000), 9, 1)) // retransmitted: no data/ACK sample
        .at(260, ts(Seg::ack(1001), 2, 9)); // echoes 9: 60 ms after it was sent
    let d = &c.done().connections[0].directions[0];
    assert!(d.rtt_ms.is_none());
    let t = d.ts_rtt_ms.as_ref().unwrap();
    assert_eq!((t.count, t.p50), (1, 60.0));
}

#[test]
fn rfc9293_a_fin_occupies_a_sequence_number_and_its_ack_is_a_sample() {
    let fin = |mut s: Seg| {
        s.flags = TcpFlags::ACK | TcpFlags::FIN;
        s
    };
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, fin(Seg::data(1, 1000)))
        .at(150, Seg::ack(1002)) // data and FIN: a 50 ms sample
        .at(160, fin(Seg::ack(1002)));
    let a = c.done();
    let d = &a.connections[0].directions[0];
    assert_eq!(d.rtt_ms.as_ref().map(|s| (s.count, s.p50)), Some((1, 50.0)));
    // b's FIN repeats the ACK with no data and the same window: tcptrace's duplicate.
    assert_eq!((d.fins, d.rexmt_pkts, d.dup_acks), (1, 0, 1));
    // b's bare FIN, never acknowledged here: no sample.
    assert!(a.connections[0].directions[1].rtt_ms.is_none());
}

#[test]
fn a_window_update_is_no_duplicate_ack() {
    let mut grown = Seg::ack(1001);
    grown.window = 60000;
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(101, Seg::data(1001, 1000))
        .at(150, Seg::ack(1001))
        .at(151, grown) // the same ACK, a new window: an update
        .at(152, grown); // and again: a duplicate
    let d = &c.done().connections[0].directions[0];
    assert_eq!(d.dup_acks, 1);
}

#[test]
fn tcptrace_a_retransmitted_syn_is_a_retransmission_but_not_data() {
    let mut c = Cap::new();
    let syn = Seg {
        from_a: true,
        seq: ISN_A,
        ack: 0,
        flags: TcpFlags::SYN,
        window: 65535,
        len: 0,
        opts: TcpOptions::NONE,
    };
    c.at(0, syn).at(1000, syn).at(1010, {
        let mut s = Seg::ack(1);
        s.seq = ISN_B;
        s.flags = TcpFlags::SYN | TcpFlags::ACK;
        s
    });
    c.at(1020, Seg::data(1, 1000)).at(1070, Seg::ack(1001));
    let d = &c.done().connections[0].directions[0];
    assert_eq!((d.rexmt_pkts, d.rexmt_bytes, d.unique_bytes), (1, 1, 1000));
    // Karn: the SYN went twice, so the handshake has no RTT.
    assert_eq!(d.handshake_rtt_ms, None);
}

#[test]
fn tcptrace_repeated_pure_acks_of_a_syn_are_duplicates() {
    // b sends nothing but its SYN-ACK and ACKs; a's pure ACKs that repeat the ACK of b's
    // SYN (window unchanged) are duplicate ACKs of b's direction, as tcptrace counts them.
    let mut a_ack = Seg::data(1, 0);
    a_ack.window = 65535;
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(30, Seg::data(1, 1000))
        .at(60, Seg::ack(1001))
        .at(70, a_ack)
        .at(80, a_ack);
    let a = c.done();
    assert_eq!(a.connections[0].directions[1].dup_acks, 2);
}

#[test]
fn a_capture_that_goes_back_in_time_gives_no_negative_rtt() {
    // Records out of time order (a merged capture, a clock step): found by the fuzz target.
    let mut c = Cap::new();
    c.handshake((None, None))
        .at(100, Seg::data(1, 1000))
        .at(50, Seg::ack(1001));
    let d = &c.done().connections[0].directions[0];
    assert_eq!(d.rtt_ms.as_ref().map(|s| s.p50), Some(0.0));
}
