//! RFC 8985 RACK-TLP in the engine (`TcpConfig::loss_detection`), beside the duplicate-ACK
//! threshold on the same scripted paths: two endpoints on an in-memory path with a 40 ms
//! round trip, SACK recovery, one ACK per segment.
//!
//! The seed's fast-retransmit message (April 1990) names the two limits RACK and TLP answer:
//! a threshold of duplicate ACKs assumes that "duplicate acks mean dropped packets", which
//! reordering breaks; and a loss at the tail of a flight brings no duplicate ACKs, so the
//! sender waits for the timeout, after which "the pipe is guaranteed to be empty so we must
//! slow-start".

use ackclock_tcp::{
    InitialWindow, LossDetection, RecoveryAlgorithm, Stats, TcpConfig, TraceEvent, TraceKind,
};
use ackclock_testkit::pair::{Dir, Harness, PacketInfo, PipeConfig};
use ackclock_wire::{Duration, Instant};
use std::collections::HashMap;

const MSS: u32 = 1000;
/// Data bytes in a full segment: the MSS less the timestamps option.
const PAYLOAD: usize = MSS as usize - 12;

fn config(ld: LossDetection) -> TcpConfig {
    let mut cfg = TcpConfig::sack();
    cfg.mss = MSS as u16;
    cfg.loss_detection = ld;
    cfg.dsack = true;
    cfg.timestamps = true;
    cfg.initial_window = InitialWindow::Segments(10);
    cfg.window_scale = true;
    cfg.send_buffer_bytes = 1 << 20;
    cfg.recv_buffer_bytes = 1 << 20;
    cfg.ack.segments_per_ack = 1;
    cfg
}

fn pipe() -> PipeConfig {
    PipeConfig {
        delay: Duration::from_millis(20),
        rate_bps: 0,
        ..PipeConfig::default()
    }
}

struct Run {
    stats: Stats,
    /// The sender's recovery algorithm after the handshake.
    recovery: RecoveryAlgorithm,
    trace: Vec<TraceEvent>,
    /// When the last byte was read by the receiver.
    done: Instant,
}

/// Sends `bytes` from A to B over `pipe`, dropping what `drop` says (A to B), and checks
/// that B read every byte in order.
fn run(
    cfg: TcpConfig,
    pipe: PipeConfig,
    seed: u64,
    bytes: usize,
    drop: impl FnMut(&PacketInfo) -> bool + Send + 'static,
) -> Run {
    run_pair(cfg.clone(), cfg, pipe, seed, bytes, drop, false)
}

/// [`run`] with the sender's configuration `a` and the receiver's `b`; with `close` the
/// sender closes once everything is queued: its FIN rides the last data segment.
fn run_pair(
    a: TcpConfig,
    b: TcpConfig,
    pipe: PipeConfig,
    seed: u64,
    bytes: usize,
    drop: impl FnMut(&PacketInfo) -> bool + Send + 'static,
    close: bool,
) -> Run {
    let mut h = Harness::new(seed, pipe);
    h.set_filter(Dir::AtoB, Box::new(drop));
    let ca = h.open(9, a, b);
    h.a.conn_mut(ca).unwrap().set_tracing(true);
    let data: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let mut got = Vec::with_capacity(data.len());
    let mut buf = vec![0u8; 64 * 1024];
    let (mut sent, mut cb, mut done, mut closed) = (0, None, Instant::ZERO, false);
    let ok = h.run(Instant::ZERO + Duration::from_secs(600), |h| {
        if let Some(c) = h.a.conn_mut(ca) {
            if sent < data.len() {
                sent += c.send(&data[sent..]).unwrap_or(0);
            }
            // Closing in SYN-SENT would delete the connection (RFC 9293 §3.10.4).
            if close && !closed && sent == data.len() && c.is_established() {
                closed = c.close().is_ok();
            }
        }
        if cb.is_none() {
            cb = h.b.accept(9);
        }
        if let Some(c) = cb.and_then(|id| h.b.conn_mut(id)) {
            while let Ok(n) = c.recv(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
            }
        }
        if got.len() == data.len() && done == Instant::ZERO {
            done = h.now;
        }
        got.len() == data.len()
    });
    assert!(ok, "transfer did not complete");
    assert!(got == data, "the bytes received differ from those sent");
    let c = h.a.conn_mut(ca).unwrap();
    let mut trace = Vec::new();
    c.take_trace(&mut trace);
    Run {
        stats: c.stats(),
        recovery: c.recovery_algorithm(),
        trace,
        done,
    }
}

/// Drops the first `times` transmissions of the data segments whose index (among A's data
/// segments, first transmissions counted in order) is in `which`.
fn drop_data(which: Vec<u64>, times: u32) -> impl FnMut(&PacketInfo) -> bool + Send {
    let mut first_seq: HashMap<u64, u32> = HashMap::new();
    let mut dropped: HashMap<u32, u32> = HashMap::new();
    move |p| {
        if p.payload_len == 0 {
            return false;
        }
        if let Some(i) = p.data_index {
            if which.contains(&i) {
                first_seq.entry(i).or_insert(p.seq);
            }
        }
        if first_seq.values().any(|&s| s == p.seq) {
            let n = dropped.entry(p.seq).or_insert(0);
            if *n < times {
                *n += 1;
                return true;
            }
        }
        false
    }
}

fn count(r: &Run, kind: TraceKind) -> usize {
    r.trace.iter().filter(|e| e.kind == kind).count()
}

/// RFC 8985 §3.3: with one segment lost in the middle of a flight and nothing reordered,
/// RACK starts the recovery as the threshold would (the reordering window is zero once
/// three segments are SACKed, §6.2 step 4), resends only the lost segment, and no timeout
/// fires.
#[test]
fn rfc8985_3_3_a_single_loss_is_repaired_by_fast_recovery_without_a_timeout() {
    for ld in [LossDetection::Rack, LossDetection::RackTlp] {
        let r = run(
            config(ld),
            pipe(),
            1,
            200 * MSS as usize,
            drop_data(vec![40], 1),
        );
        assert_eq!(r.stats.timeouts, 0, "{ld}");
        assert_eq!(r.stats.recoveries, 1, "{ld}");
        assert_eq!(
            r.stats.retransmitted_segs, 1,
            "{ld}: only the lost segment is resent"
        );
    }
}

/// RFC 8985 §6.2 step 5 and §2.2 (lost retransmissions): when the retransmission is lost
/// too, RACK finds it lost by time, once a segment sent after it is delivered, and resends
/// it again inside the same recovery. RFC 6675's threshold cannot tell (HighRxt is past it)
/// and waits for the retransmission timer.
#[test]
fn rfc8985_6_2_a_lost_retransmission_is_resent_without_waiting_for_the_rto() {
    let rack = run(
        config(LossDetection::Rack),
        pipe(),
        1,
        300 * MSS as usize,
        drop_data(vec![40], 2),
    );
    let dupack = run(
        config(LossDetection::DupAck),
        pipe(),
        1,
        300 * MSS as usize,
        drop_data(vec![40], 2),
    );
    assert_eq!(rack.stats.timeouts, 0, "RACK");
    assert!(dupack.stats.timeouts >= 1, "the threshold needs the RTO");
    assert!(
        rack.done < dupack.done,
        "RACK done at {:?}, the threshold at {:?}",
        rack.done,
        dupack.done
    );
}

/// RFC 8985 §7 (the seed's second limit): losing the last segments of a transfer brings
/// no duplicate ACKs; with the threshold the sender waits for the RTO and slow-starts, with
/// TLP a probe about two round trips after the last ACK draws the SACK that lets RACK repair
/// the tail. For each of the last 1, 2 and 3 segments lost: no timeout with TLP, one
/// without, and TLP finishes sooner.
#[test]
fn rfc8985_7_tail_losses_are_repaired_by_a_probe_not_the_rto() {
    let total = 20u64;
    for lost in 1..=3u64 {
        let which: Vec<u64> = (total - lost..total).collect();
        let tlp = run(
            config(LossDetection::RackTlp),
            pipe(),
            1,
            (total as usize) * PAYLOAD,
            drop_data(which.clone(), 1),
        );
        let dupack = run(
            config(LossDetection::DupAck),
            pipe(),
            1,
            (total as usize) * PAYLOAD,
            drop_data(which, 1),
        );
        assert_eq!(tlp.stats.timeouts, 0, "{lost} lost, TLP");
        assert!(tlp.stats.tlp_probes >= 1, "{lost} lost: a probe went out");
        assert_eq!(
            count(&tlp, TraceKind::TailLossProbe),
            tlp.stats.tlp_probes as usize
        );
        assert!(dupack.stats.timeouts >= 1, "{lost} lost, the threshold");
        assert!(
            tlp.done < dupack.done,
            "{lost} lost: TLP done at {:?}, the threshold at {:?}",
            tlp.done,
            dupack.done
        );
    }
}

/// RFC 8985 §7 with the FIN on the last segment: the probe resends it (data and FIN), and
/// the receiver's SACK block, which reports the data but not the FIN, counts as delivering
/// it, so RACK repairs the tail without the RTO. (Before, the record waited for the FIN's
/// sequence number in a block: experiment 20 found every closing transfer waiting for the
/// RTO.)
#[test]
fn rfc8985_7_a_tail_loss_with_the_fin_on_the_last_segment_is_repaired_by_the_probe() {
    for lost in 1..=3u64 {
        let which: Vec<u64> = (20 - lost..20).collect();
        let r = run_pair(
            config(LossDetection::RackTlp),
            config(LossDetection::RackTlp),
            pipe(),
            1,
            20 * PAYLOAD,
            drop_data(which, 1),
            true,
        );
        assert_eq!(r.stats.timeouts, 0, "{lost} lost with the FIN");
        assert!(r.stats.tlp_probes >= 1);
    }
}

/// RFC 8985 §7.3 and §7.4.2: a probe when the flight's last segment was lost resends that
/// segment, and its ACK ends the transfer without a timeout. That ACK acknowledges exactly
/// the probe's episode (TLP.end_seq) and carries no D-SACK: §7.4.2 waits for an ACK beyond
/// it before calling it a repaired loss, so with nothing sent after, no reduction is made
/// and no TLP recovery counted.
#[test]
fn rfc8985_7_4_2_a_probe_that_repairs_the_last_segment_ends_the_transfer_undecided() {
    let r = run(
        config(LossDetection::RackTlp),
        pipe(),
        1,
        30 * PAYLOAD,
        drop_data(vec![29], 1),
    );
    assert_eq!(r.stats.timeouts, 0);
    assert_eq!(r.stats.tlp_probes, 1);
    assert_eq!(r.stats.tlp_recoveries, 0);
    assert_eq!(
        r.stats.ssthresh_bytes,
        u32::MAX,
        "no reduction: {:?}",
        r.stats
    );
}

/// RFC 8985 §6.2 steps 3 and 4 against the seed's "duplicate acks mean dropped packets": on
/// a path that holds back 3% of the packets by 8 ms (a fifth of the round trip), the
/// threshold of 3 takes many reorderings for losses and resends segments that had arrived;
/// RACK, once it has seen reordering, waits min_RTT/4 (10 ms) and resends far fewer.
#[test]
fn rfc8985_6_2_reordering_draws_fewer_spurious_retransmissions_than_the_threshold() {
    let path = PipeConfig {
        reorder: 0.03,
        reorder_delay: Duration::from_millis(8),
        ..pipe()
    };
    let mut rack_rtx = 0;
    let mut dup_rtx = 0;
    for seed in 1..=4 {
        let rack = run(
            config(LossDetection::Rack),
            path.clone(),
            seed,
            400 * MSS as usize,
            |_| false,
        );
        let dupack = run(
            config(LossDetection::DupAck),
            path.clone(),
            seed,
            400 * MSS as usize,
            |_| false,
        );
        rack_rtx += rack.stats.retransmitted_segs;
        dup_rtx += dupack.stats.retransmitted_segs;
    }
    // Nothing is lost: every retransmission is spurious.
    assert!(dup_rtx >= 8, "the threshold resent {dup_rtx} segments");
    assert!(
        rack_rtx * 3 <= dup_rtx,
        "RACK resent {rack_rtx} segments, the threshold {dup_rtx}"
    );
}

/// RACK needs SACK (a duplicate ACK without blocks says nothing about which segment
/// arrived): with a peer that does not offer it, the connection falls back to the
/// duplicate-ACK threshold (RFC 6582 NewReno) and still repairs a loss.
#[test]
fn rack_without_sack_falls_back_to_the_duplicate_ack_threshold() {
    let mut b = config(LossDetection::DupAck);
    b.sack = false;
    let r = run_pair(
        config(LossDetection::RackTlp),
        b,
        pipe(),
        1,
        100 * PAYLOAD,
        drop_data(vec![40], 1),
        false,
    );
    assert_eq!(r.recovery, RecoveryAlgorithm::NewReno);
    assert_eq!(r.stats.tlp_probes, 0);
    assert_eq!(r.stats.fast_retransmits, 1);
}

/// RFC 8985 §6.3 with the engine's go-back-N after a timeout: a resend of that go-back-N that
/// is lost again is found lost by RACK (a segment sent after it is SACKed and RACK.rtt plus
/// the reordering window has passed) and resent at once, not after a second, backed-off
/// timeout. A blackout of the data path from 300 to 700 ms forces the first timeout; then
/// the third data segment sent after it is lost. Before, that segment waited for the second
/// timeout (2 timeouts, done at 2.86 s); now one timeout, done at 1.86 s. (Found with BBR,
/// whose window after the timeout grows past the flight: RACK's marks were the only record
/// of the loss, and nothing but the timer resent them.)
#[test]
fn rfc8985_6_3_a_go_back_n_resend_lost_again_is_resent_without_a_second_timeout() {
    let mut after = 0u64;
    let blackout_then_third = move |p: &PacketInfo| {
        if p.payload_len == 0 {
            return false;
        }
        let ms = p.at.as_nanos() / 1_000_000;
        if (300..700).contains(&ms) {
            return true;
        }
        if ms >= 700 {
            after += 1;
            return after == 3;
        }
        false
    };
    let r = run(
        config(LossDetection::RackTlp),
        pipe(),
        1,
        2000 * MSS as usize,
        blackout_then_third,
    );
    assert_eq!(r.stats.timeouts, 1, "{:?}", r.stats);
    assert!(
        r.done < Instant::from_nanos(2_000_000_000),
        "done at {:?}",
        r.done
    );
}
