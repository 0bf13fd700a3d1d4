//! Spurious retransmissions and the undo of their reductions (`TcpConfig::undo`,
//! `TcpConfig::frto`), against a scripted peer: F-RTO (RFC 5682 §2.1), Eifel detection with
//! timestamps (RFC 3522) and its response (RFC 4015 §3.2), and D-SACK detection of a
//! needless fast retransmit (RFC 3708 §3).

use ackclock_tcp::{InitialWindow, TcpConfig};
use ackclock_testkit::peer::*;
use ackclock_wire::{SackBlock, SackBlocks, TcpOptions};

const MSS: usize = 1460;

fn cfg(frto: bool, undo: bool) -> TcpConfig {
    TcpConfig {
        nagle: false,
        initial_window: InitialWindow::Segments(10),
        frto,
        undo,
        ..TcpConfig::newreno()
    }
}

/// [`cfg`] with SACK recovery (RFC 6675) and D-SACK.
fn sack_cfg(undo: bool) -> TcpConfig {
    TcpConfig {
        timestamps: false,
        ..TcpConfig {
            sack: true,
            recovery: ackclock_tcp::RecoveryAlgorithm::Sack,
            ..cfg(false, undo)
        }
    }
}

/// An established connection (the peer offers `sack` and `ts`) that has sent a flight of
/// ten segments, none acknowledged; returns the peer and the flight.
fn flight(cfg: TcpConfig, sack: bool, ts: bool) -> (Peer, Vec<Seg>) {
    let (mut p, _) = Peer::passive(cfg, syn_opts(Some(MSS as u16), None, sack, ts));
    let f = p.app_send(&data(40 * MSS));
    assert_eq!(f.len(), 10, "the initial window: {f:?}");
    (p, f)
}

/// Runs the timers until the first retransmission by timeout; returns it.
fn timeout(p: &mut Peer, flight: &[Seg]) -> Seg {
    let mut out = Vec::new();
    for _ in 0..500 {
        out = p.advance(ms(10));
        if !out.is_empty() {
            break;
        }
    }
    let rtx: Vec<&Seg> = out
        .iter()
        .map(|(_, s)| s)
        .filter(|s| !s.payload.is_empty())
        .collect();
    assert_eq!(rtx.len(), 1, "one retransmission at the timeout: {rtx:?}");
    assert_eq!(rtx[0].seq, flight[0].seq);
    assert_eq!(p.conn().stats().timeouts, 1);
    rtx[0].clone()
}

/// The peer acknowledges up to the end of `s` (the original segments arrived late).
fn ack_to(p: &mut Peer, s: &Seg) -> Vec<Seg> {
    p.rcv_nxt = s.end();
    let o = p.out(ACK);
    p.inject(&o)
}

fn data_segs(out: &[Seg]) -> Vec<&Seg> {
    out.iter().filter(|s| !s.payload.is_empty()).collect()
}

/// The peer's ACK (RCV.NXT as set) with one SACK block `[left, right)`, and its timestamps
/// when the connection has them.
fn ack_with_block(p: &Peer, left: u32, right: u32) -> Out {
    let o = p.out(ACK);
    let ts = o.opts.timestamps;
    let mut b = SackBlocks::default();
    b.push(SackBlock { left, right });
    o.opts(TcpOptions {
        sack: b,
        timestamps: ts,
        ..TcpOptions::NONE
    })
}

/// Segments 1, 2 and 3 of the flight arrive before segment 0: three duplicate ACKs with a
/// growing SACK block, the third of which starts the fast recovery; returns what was sent.
fn three_dupacks_for_segment_0(p: &mut Peer, f: &[Seg]) -> Vec<Seg> {
    p.rcv_nxt = f[0].seq;
    let mut out = Vec::new();
    for k in 1..=3 {
        let o = ack_with_block(p, f[1].seq, f[k].end());
        out.extend(p.inject(&o));
    }
    out
}

/// RFC 5682 §2.1 steps 2.b and 3.b: after the timeout's retransmission, an ACK that covers
/// it draws two new segments (not resends); the next ACK acknowledges data that was never
/// resent, so the timeout was spurious: the reduction is undone and nothing more of the old
/// flight is resent. Without F-RTO the same ACKs draw go-back-N resends of the whole flight.
#[test]
fn rfc5682_2_1_step3b_an_ack_of_unresent_data_after_two_new_segments_is_a_spurious_timeout() {
    let mut resent = Vec::new();
    for frto in [true, false] {
        let (mut p, f) = flight(cfg(frto, false), false, false);
        let cwnd_before = p.conn().stats().cwnd_bytes;
        timeout(&mut p, &f);
        let out = ack_to(&mut p, &f[0]);
        let new = data_segs(&out);
        if frto {
            assert_eq!(new.len(), 2, "step 2.b: two segments: {new:?}");
            assert!(
                new.iter().all(|s| seq_le(f[9].end(), s.seq)),
                "new data: {new:?}"
            );
        }
        for s in &f[1..] {
            ack_to(&mut p, s);
        }
        let st = p.conn().stats();
        if frto {
            assert_eq!((st.spurious_rtos, st.undos), (1, 1), "{st:?}");
            assert!(
                st.ssthresh_bytes >= cwnd_before,
                "ssthresh back to pipe_prev: {st:?}"
            );
        } else {
            assert_eq!((st.spurious_rtos, st.undos), (0, 0));
        }
        resent.push(st.retransmitted_segs);
    }
    assert_eq!(resent[0], 1, "F-RTO resends only the first segment");
    assert!(
        resent[1] >= 5,
        "go-back-N resends the flight: {}",
        resent[1]
    );
}

/// RFC 5682 §2.1 step 3.a: a duplicate ACK after the two new segments means the timeout was
/// real: cwnd at most 3 SMSS, and the rest of the flight is resent in slow start.
#[test]
fn rfc5682_2_1_step3a_a_duplicate_ack_after_the_new_segments_means_a_real_timeout() {
    let (mut p, f) = flight(cfg(true, false), false, false);
    timeout(&mut p, &f);
    let out = ack_to(&mut p, &f[0]);
    assert_eq!(data_segs(&out).len(), 2);
    // Segment 1 was lost: the receiver's next ACK repeats the last one.
    let o = p.out(ACK);
    let out = p.inject(&o);
    let st = p.conn().stats();
    assert_eq!((st.spurious_rtos, st.undos), (0, 0));
    assert!(st.cwnd_bytes <= 3 * MSS as u32, "{st:?}");
    let resent = data_segs(&out);
    assert!(
        !resent.is_empty() && resent[0].seq == f[1].seq,
        "resends segment 1: {resent:?}"
    );
}

/// RFC 5682 §2.1 step 2.a: an ACK that covers everything sent before the timeout leaves
/// nothing to tell: the conventional recovery goes on, nothing is undone.
#[test]
fn rfc5682_2_1_step2a_an_ack_of_the_whole_flight_reverts_to_the_conventional_recovery() {
    let (mut p, f) = flight(cfg(true, false), false, false);
    timeout(&mut p, &f);
    ack_to(&mut p, &f[9]);
    let st = p.conn().stats();
    assert_eq!((st.spurious_rtos, st.undos), (0, 0));
}

/// RFC 3522 and RFC 4015 §3.2: with timestamps, the first ACK after the timeout echoes the
/// original's timestamp, older than the retransmission's: the timeout was spurious; ssthresh
/// goes back to what it was before, cwnd to the flight plus at most an initial window, and
/// sending resumes with new data: nothing more of the flight is resent.
#[test]
fn rfc4015_3_2_eifel_detection_undoes_a_spurious_timeout_and_resumes_with_new_data() {
    let (mut p, f) = flight(
        TcpConfig {
            timestamps: true,
            ..cfg(false, true)
        },
        false,
        true,
    );
    let ssthresh_before = p.conn().stats().ssthresh_bytes;
    timeout(&mut p, &f);
    // The ACK of the original segment 0 echoes its timestamp.
    p.ts_recent = f[0].tsval().unwrap();
    let out = ack_to(&mut p, &f[0]);
    let st = p.conn().stats();
    assert_eq!((st.spurious_rtos, st.undos), (1, 1), "{st:?}");
    assert_eq!(st.ssthresh_bytes, ssthresh_before);
    let sent = data_segs(&out);
    assert!(
        sent.iter().all(|s| seq_le(f[9].end(), s.seq)),
        "new data only, no resends: {sent:?}"
    );
    for s in &f[1..] {
        ack_to(&mut p, s);
    }
    assert_eq!(p.conn().stats().retransmitted_segs, 1);
}

/// RFC 3708 §3: a fast retransmit that D-SACK then shows arrived twice (the "lost" segment
/// was only delayed past three others) was needless: cwnd and ssthresh go back to their
/// values before the reduction. Without `undo` the reduction stays.
#[test]
fn rfc3708_3_a_fast_retransmit_whose_resend_is_dsacked_is_undone() {
    for undo in [true, false] {
        let (mut p, f) = flight(sack_cfg(undo), true, false);
        // Segments 1..=3 arrive, 0 does not (yet): three duplicate ACKs with SACK blocks.
        three_dupacks_for_segment_0(&mut p, &f);
        let st = p.conn().stats();
        assert_eq!(st.fast_retransmits, 1, "{st:?}");
        let cwnd_reduced = st.cwnd_bytes;
        // The original 0 arrives, then the resend: the receiver acknowledges everything
        // up to 3 and reports the resent 0 with a D-SACK block.
        p.rcv_nxt = f[3].end();
        let o = ack_with_block(&p, f[0].seq, f[0].end());
        p.inject(&o);
        let st = p.conn().stats();
        assert_eq!(st.dsacks_in, 1, "counted whether or not undo is on");
        if undo {
            assert_eq!((st.spurious_recoveries, st.undos), (1, 1), "{st:?}");
            assert!(st.ssthresh_bytes > cwnd_reduced, "{st:?}");
        } else {
            assert_eq!(st.undos, 0);
        }
    }
}

/// RFC 4015 §3.2's cwnd (the flight plus min(acked, IW)) after a spurious timeout whose
/// ACK left nothing in flight is a byte or two: the response keeps at least a segment, or
/// a CUBIC sender (whose window counts segments) rounded it to zero and never sent again.
/// The adversarial suite's case: 1-byte buffers, 15% loss of the ACKs' direction.
#[test]
fn rfc4015_a_spurious_timeout_with_nothing_left_in_flight_keeps_a_window() {
    use ackclock_testkit::bytes;
    use ackclock_testkit::pair::{two_way_transfer, Harness, PipeConfig};
    use ackclock_wire::Duration;
    let small = |c: TcpConfig| TcpConfig {
        send_buffer_bytes: 1,
        recv_buffer_bytes: 1,
        initial_window: InitialWindow::Segments(1),
        nagle: false,
        timestamps: true,
        window_scale: false,
        max_retransmits: 100,
        ..c
    };
    let a = small(TcpConfig::vanilla_4_3bsd());
    let b = small(TcpConfig {
        mss: 741,
        undo: true,
        ..TcpConfig::cubic()
    });
    let lossy = PipeConfig {
        delay: Duration::from_millis(1),
        loss: 0.149,
        ..PipeConfig::default()
    };
    let clean = PipeConfig {
        loss: 0.0,
        ..lossy.clone()
    };
    let data = bytes(6, 0x5555);
    let mut h = Harness::asymmetric(0, lossy, clean);
    let r = two_way_transfer(&mut h, a, b, &[], &data, Duration::from_secs(200_000));
    assert_eq!(r.a_got, data);
    assert!(r.completed);
}

/// RFC 3522 §2 for a fast retransmit (as Linux's `tcp_packet_delayed`): the first ACK of new
/// data after it echoes the original segment's timestamp, older than the retransmission's,
/// so the "lost" segment was only delayed past three others: the reduction is undone at
/// once, without waiting for a D-SACK.
#[test]
fn rfc3522_2_an_ack_echoing_the_original_after_a_fast_retransmit_undoes_the_recovery() {
    for undo in [true, false] {
        let (mut p, f) = flight(
            TcpConfig {
                timestamps: true,
                ..sack_cfg(undo)
            },
            true,
            true,
        );
        let before = p.conn().stats();
        // The duplicates come a round trip later (the timestamps then differ).
        p.now += ms(40);
        three_dupacks_for_segment_0(&mut p, &f);
        assert_eq!(p.conn().stats().fast_retransmits, 1);
        // The delayed original arrives: the receiver acknowledges through segment 3,
        // echoing the original's timestamp (the segment that filled the hole).
        p.ts_recent = f[0].tsval().unwrap();
        p.rcv_nxt = f[3].end();
        let o = p.out(ACK);
        p.inject(&o);
        let st = p.conn().stats();
        if undo {
            assert_eq!((st.spurious_recoveries, st.undos), (1, 1), "{st:?}");
            assert_eq!(st.ssthresh_bytes, before.ssthresh_bytes, "{st:?}");
        } else {
            assert_eq!((st.spurious_recoveries, st.undos), (0, 0));
        }
    }
}

/// RFC 3708 §3 with RFC 9937 PRR, the undo coming on a partial ACK (the episode goes on)
/// or on the ACK that ends the episode, of a sender still in slow start: the episode ends
/// with the undo (as Linux's) and cwnd is the window before it. Before, PRR started over
/// from the restored, unbounded ssthresh, or took its last step to it, and cwnd became 4 GB
/// (found by reordering scenarios).
#[test]
fn rfc3708_3_an_undo_ends_prr_and_restores_the_slow_start_window() {
    for through in [3, 9] {
        let (mut p, f) = flight(
            TcpConfig {
                window_reduction: ackclock_tcp::WindowReduction::Prr,
                ..sack_cfg(true)
            },
            true,
            false,
        );
        let before = p.conn().stats();
        assert_eq!(before.ssthresh_bytes, u32::MAX, "slow start: {before:?}");
        // Segments 1..=3 arrive before 0: three duplicate ACKs.
        three_dupacks_for_segment_0(&mut p, &f);
        assert!(p.conn().stats().in_recovery);
        // The original 0 arrives, then its resend: an ACK through `through` with a D-SACK.
        p.rcv_nxt = f[through].end();
        let o = ack_with_block(&p, f[0].seq, f[0].end());
        p.inject(&o);
        let st = p.conn().stats();
        assert_eq!((st.spurious_recoveries, st.undos), (1, 1), "{st:?}");
        assert!(!st.in_recovery, "the undo ends the episode: {st:?}");
        assert_eq!(st.ssthresh_bytes, u32::MAX, "{st:?}");
        // The rest of the flight is acknowledged one segment at a time.
        for s in &f[through + 1..] {
            ack_to(&mut p, s);
        }
        let st = p.conn().stats();
        assert!(
            st.cwnd_bytes >= before.cwnd_bytes && st.cwnd_bytes <= 3 * before.cwnd_bytes,
            "through {through}: slow start from the window before: {} then {}",
            before.cwnd_bytes,
            st.cwnd_bytes
        );
    }
}

/// A window that the controller sets itself (BBR's, `owns_recovery_window`), whatever the
/// connection asks: ten segments, one after a timeout (as Linux's `tcp_enter_loss`), then
/// growing by what each ACK acknowledges (as BBR's window does after a timeout).
#[derive(Debug)]
struct OwnWindow(u32);

impl ackclock_tcp::cc::CongestionControl for OwnWindow {
    fn name(&self) -> &'static str {
        "own-window"
    }
    fn cwnd(&self) -> u32 {
        self.0
    }
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    fn on_ack(&mut self, ev: &ackclock_tcp::cc::AckEvent) {
        self.0 += ev.bytes_acked;
    }
    fn on_congestion(&mut self, _ev: &ackclock_tcp::cc::CongestionEvent) {}
    fn on_rto(&mut self, ev: &ackclock_tcp::cc::CongestionEvent, _first: bool) {
        self.0 = ev.mss;
    }
    fn set_cwnd(&mut self, _cwnd: u32) {}
    fn owns_recovery_window(&self) -> bool {
        true
    }
}

#[derive(Debug)]
struct OwnWindowFactory;

impl ackclock_tcp::cc::CongestionControlFactory for OwnWindowFactory {
    fn build(
        &self,
        _init: ackclock_tcp::cc::CcInit,
    ) -> Box<dyn ackclock_tcp::cc::CongestionControl> {
        Box::new(OwnWindow(10 * MSS as u32))
    }
}

/// Step 2.b opens the window by two segments over the flight through the connection's
/// `set_cwnd`; a controller that keeps its own window (BBR) ignores that, and with its
/// window at or below the flight nothing would go until the next, backed-off, timeout (found
/// in the simulator: BBR on 10 Mbit/s, 100 ms, 1% loss stalled after a timeout's first
/// ACK). F-RTO is not run for such a controller: after the timeout's first ACK it resends
/// the rest of the flight as without F-RTO.
#[test]
fn rfc5682_2_1_f_rto_is_not_run_for_a_controller_that_owns_its_window() {
    let c = TcpConfig {
        congestion: ackclock_tcp::CongestionAlgorithm::Custom(std::sync::Arc::new(
            OwnWindowFactory,
        )),
        ..cfg(true, false)
    };
    let (mut p, f) = flight(c, false, false);
    timeout(&mut p, &f);
    let out = ack_to(&mut p, &f[0]);
    let sent = data_segs(&out);
    assert!(
        !sent.is_empty(),
        "the first ACK after the timeout sends nothing"
    );
    assert_eq!(
        sent[0].seq, f[1].seq,
        "go-back-N, not F-RTO's new data: {sent:?}"
    );
}
