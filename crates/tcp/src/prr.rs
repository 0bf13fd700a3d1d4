//! Proportional Rate Reduction (PRR), RFC 9937 (December 2025, obsoletes RFC 6937): how much
//! a sender may send on each ACK of a window reduction, so that the data in flight falls
//! smoothly from where it was to ssthresh over one round trip, rather than stopping for half
//! a round trip and then sending one segment per ACK (RFC 6675's `cwnd - pipe`) or bursting
//! when the window deflates (Reno's inflation).
//!
//! Pure arithmetic on byte counts, in the RFC's names: the connection tells it when a
//! reduction starts (§6.1), what each ACK delivered and what the pipe is then (§6.2), and
//! what it sent (prr_out); it answers the send quota, SndCnt. The RFC sets
//! `cwnd = pipe + SndCnt` on every ACK; the engine keeps cwnd as the controller's
//! (ssthresh) and lets the quota gate the output instead, which sends the same bytes.

/// The PRR state of one reduction (RFC 9937 §6.1's variables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prr {
    /// RecoverFS: what may be delivered during this reduction, fixed at its start.
    recover_fs: u32,
    /// The target flight size, from the congestion controller (CongCtrlAlg()).
    ssthresh: u32,
    /// prr_delivered: bytes delivered to the receiver since the reduction began.
    prr_delivered: u32,
    /// prr_out: bytes sent (new data and retransmissions) since the reduction began.
    prr_out: u32,
    /// SndCnt of the last ACK less what has been sent since: what may still go now.
    sndcnt: u32,
    /// Without SACK: the bytes the episode's duplicate ACKs say have left the network and
    /// that SND.UNA has not yet passed (one SMSS per duplicate ACK, as RFC 9937 §6.2
    /// counts them), taken off the flight to estimate the pipe.
    dup_bytes: u32,
    /// A reduction is in progress.
    active: bool,
}

/// RFC 9937 §6.1's RecoverFS: SND.NXT - SND.UNA (`flight`), less the bytes SACKed before
/// the ACK that started recovery (`sacked`, all the scoreboard holds after that ACK, less
/// `newly_sacked`, what that ACK added: those will not be counted as delivered during the
/// reduction), plus the bytes that ACK cumulatively acknowledged (`newly_acked`, which it
/// will count).
pub(crate) fn recover_fs(flight: u32, sacked: u32, newly_sacked: u32, newly_acked: u32) -> u32 {
    flight
        .saturating_sub(sacked.saturating_sub(newly_sacked))
        .saturating_add(newly_acked)
}

impl Prr {
    /// RFC 9937 §6.1, initialization: prr_delivered = prr_out = 0, the controller's
    /// `ssthresh`, and `recover_fs` (see [`recover_fs`]). The quota is empty until the
    /// per-ACK step of the ACK that started the reduction.
    pub(crate) fn start(&mut self, recover_fs: u32, ssthresh: u32) {
        *self = Prr {
            recover_fs,
            ssthresh,
            active: true,
            ..Prr::default()
        };
    }

    /// The reduction ended (RFC 9937 §6: the caller sets cwnd = ssthresh) or was
    /// abandoned (a timeout).
    pub(crate) fn stop(&mut self) {
        self.active = false;
        self.sndcnt = 0;
    }

    /// A reduction is in progress.
    pub(crate) fn is_active(&self) -> bool {
        self.active
    }

    /// What may still be sent on the last ACK's SndCnt, in bytes.
    pub(crate) fn quota(&self) -> u32 {
        self.sndcnt
    }

    /// prr_delivered.
    #[cfg(test)]
    pub(crate) fn delivered(&self) -> u32 {
        self.prr_delivered
    }

    /// prr_out.
    #[cfg(test)]
    pub(crate) fn out(&self) -> u32 {
        self.prr_out
    }

    /// RFC 9937 §6.2's DeliveredData of one ACK with SACK: the bytes it cumulatively
    /// acknowledged (`newly_acked`) plus the change in the bytes SACKed (`sacked_before` to
    /// `sacked_after`), which is negative when SND.UNA passes ranges SACKed earlier (counted
    /// when they were SACKed).
    pub(crate) fn delivered_data(newly_acked: u32, sacked_before: u32, sacked_after: u32) -> u32 {
        let d = i64::from(newly_acked) + i64::from(sacked_after) - i64::from(sacked_before);
        u32::try_from(d.max(0)).unwrap_or(u32::MAX)
    }

    /// Without SACK, the duplicate ACKs before the one that started recovery (`n`): the
    /// segments they stand for were delivered before the reduction (as the bytes SACKed
    /// before recovery, which RecoverFS leaves out).
    pub(crate) fn note_prior_dupacks(&mut self, n: u32, mss: u32) {
        self.dup_bytes = n.saturating_mul(mss);
    }

    /// RFC 9937 §6.2's DeliveredData of one ACK without SACK, and the pipe it leaves. A
    /// duplicate ACK delivered one SMSS (§6.2); the bytes it stands for are kept as if
    /// SACKed, so that an ACK moving SND.UNA by `acked` delivers the change in SND.UNA plus
    /// the change in those bytes, the SACK formula: all of it but the hole's segment was
    /// counted when its duplicate ACKs came. The bytes standing for SACKed ones are bounded
    /// by the flight after the ACK (`flight`) less the segment at SND.UNA, the hole: no
    /// more can have arrived above it than was outstanding, which is this engine's bound on
    /// a receiver that splits its ACKs. (RFC 9937 bounds it instead by counting duplicate
    /// ACKs only while prr_delivered < RecoverFS; in a NewReno episode that lasts several
    /// round trips, that stops the ACK clock once one window has been counted, and the
    /// flight drains to nothing before the exit.) The pipe is the flight less those bytes
    /// (RFC 6675's pipe, the duplicate ACKs standing for the SACKed segments). Returns
    /// (DeliveredData, pipe).
    pub(crate) fn on_ack_without_sack(
        &mut self,
        acked: u32,
        dupack: bool,
        flight: u32,
        mss: u32,
    ) -> (u32, u32) {
        let before = self.dup_bytes;
        let mut after = if acked > 0 {
            before.saturating_sub(acked.saturating_sub(mss))
        } else {
            before
        };
        if dupack {
            after = after.saturating_add(mss);
        }
        after = after.min(flight.saturating_sub(mss));
        self.dup_bytes = after;
        (Self::delivered_data(acked, before, after), flight - after)
    }

    /// RFC 9937 §6.2, on every ACK that starts or continues the reduction (not the one that
    /// ends it): `delivered` is its DeliveredData, `pipe` the data in flight after it (RFC
    /// 6675's pipe), `safe_ack` that it advanced SND.UNA and indicated no further loss.
    /// Returns SndCnt, which becomes the quota.
    ///
    /// - An ACK that delivered nothing changes nothing (§6.2).
    /// - While pipe > ssthresh, the proportional part: sending follows delivery in the
    ///   proportion ssthresh/RecoverFS, SndCnt = CEIL(prr_delivered * ssthresh /
    ///   RecoverFS) - prr_out.
    /// - Once pipe <= ssthresh, a reduction bound: the conservative one (PRR-CRB), sending no
    ///   more than was delivered, MAX(prr_delivered - prr_out, DeliveredData); on a safe ACK
    ///   the slow-start one (PRR-SSRB), one SMSS more; either way no more than brings pipe
    ///   up to ssthresh.
    /// - If nothing was sent yet and SndCnt is 0, SndCnt = SMSS: the fast retransmit goes
    ///   out whatever the proportion.
    pub(crate) fn on_ack(&mut self, delivered: u32, pipe: u32, safe_ack: bool, mss: u32) -> u32 {
        if delivered == 0 {
            return self.sndcnt;
        }
        self.prr_delivered = self.prr_delivered.saturating_add(delivered);
        let mut sndcnt = if pipe > self.ssthresh {
            // Proportional Rate Reduction, the division rounding up.
            let num = u64::from(self.prr_delivered) * u64::from(self.ssthresh);
            let out = num.div_ceil(u64::from(self.recover_fs.max(1)));
            u32::try_from(out.saturating_sub(u64::from(self.prr_out))).unwrap_or(u32::MAX)
        } else {
            // PRR-CRB by default; PRR-SSRB when recovery makes good progress.
            let mut limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered);
            if safe_ack {
                limit = limit.saturating_add(mss);
            }
            // Catch up, as far as the bound permits.
            (self.ssthresh - pipe).min(limit)
        };
        if self.prr_out == 0 && sndcnt == 0 {
            // Force the fast retransmit upon entering recovery.
            sndcnt = mss;
        }
        self.sndcnt = sndcnt;
        sndcnt
    }

    /// `bytes` (data or a retransmission) were sent during the reduction: prr_out grows, the
    /// quota shrinks.
    pub(crate) fn on_sent(&mut self, bytes: u32) {
        self.prr_out = self.prr_out.saturating_add(bytes);
        self.sndcnt = self.sndcnt.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Segments of 1000 bytes: the RFC's examples count in segments.
    const MSS: u32 = 1000;

    fn seg(n: u32) -> u32 {
        n * MSS
    }

    #[test]
    fn rfc9937_6_1_recover_fs_leaves_out_what_was_sacked_before_recovery() {
        // 22 segments outstanding; the ACK that starts recovery SACKs a third segment after
        // two SACKed by the earlier duplicate ACKs: those two will not be delivered again.
        assert_eq!(recover_fs(seg(22), seg(3), seg(1), 0), seg(20));
        // The (rare) ACK that starts recovery and also moves SND.UNA: those bytes count.
        assert_eq!(recover_fs(seg(22), seg(3), seg(1), seg(2)), seg(22));
        // No SACK at all.
        assert_eq!(recover_fs(seg(20), 0, 0, 0), seg(20));
    }

    #[test]
    fn rfc9937_6_1_start_resets_the_counters() {
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        p.on_ack(seg(1), seg(18), false, MSS);
        p.on_sent(seg(1));
        p.start(seg(12), seg(6));
        assert!(p.is_active());
        assert_eq!((p.delivered(), p.out(), p.quota()), (0, 0, 0));
    }

    #[test]
    fn rfc9937_6_2_an_ack_that_delivers_nothing_changes_nothing() {
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        // CEIL(1000 * 10 / 20) = 500 bytes; the fast retransmit, a whole segment, takes it.
        assert_eq!(p.on_ack(seg(1), seg(18), false, MSS), 500);
        p.on_sent(seg(1));
        assert_eq!(p.on_ack(0, seg(17), true, MSS), 0);
        assert_eq!((p.delivered(), p.out()), (seg(1), seg(1)));
    }

    #[test]
    fn rfc9937_6_2_sndcnt_is_proportional_while_pipe_exceeds_ssthresh() {
        // ssthresh/RecoverFS = 10/20: one byte out per two delivered, rounding up.
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        let mut sent = 0;
        for n in 1..=8 {
            let s = p.on_ack(seg(1), seg(15), false, MSS);
            assert_eq!(s, seg(n).div_ceil(2) - sent, "ACK {n}");
            p.on_sent(s);
            sent += s;
        }
        assert_eq!(p.out(), seg(4));
        // CUBIC's 0.7: ssthresh 14 of RecoverFS 20; byte counts need not be whole segments.
        p.start(seg(20), seg(14));
        assert_eq!(p.on_ack(seg(1), seg(18), false, MSS), 700);
        p.on_sent(700);
        assert_eq!(p.on_ack(seg(1), seg(18), false, MSS), 700);
        // The 700 not sent on the last ACK stays in the quota: CEIL(5000 * 14 / 20) - 700.
        assert_eq!(p.on_ack(seg(3), seg(16), false, MSS), 3500 - 700);
    }

    #[test]
    fn rfc9937_6_2_the_conservative_bound_sends_no_more_than_was_delivered() {
        // pipe <= ssthresh and no safe ACK: PRR-CRB, MAX(prr_delivered - prr_out,
        // DeliveredData), here DeliveredData, however far pipe is below ssthresh.
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        p.on_sent(seg(1)); // the fast retransmit
        assert_eq!(p.on_ack(seg(1), seg(4), false, MSS), seg(1));
        p.on_sent(seg(1));
        assert_eq!(p.on_ack(seg(2), seg(3), false, MSS), seg(2));
        // What was delivered and not yet sent on may go later: prr_delivered - prr_out = 2
        // segments (the 2 of the last ACK, unsent, and 1 now, less the 1 sent before).
        assert_eq!(p.on_ack(seg(1), seg(2), false, MSS), seg(2));
        // Never beyond ssthresh - pipe.
        assert_eq!(p.on_ack(seg(5), seg(9), false, MSS), seg(1));
    }

    #[test]
    fn rfc9937_6_2_the_slow_start_bound_adds_one_mss_on_a_safe_ack() {
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        p.on_sent(seg(1));
        // Same ACK, safe (SND.UNA advanced, no further loss): PRR-SSRB, one SMSS more.
        assert_eq!(p.on_ack(seg(1), seg(4), true, MSS), seg(2));
        p.on_sent(seg(2));
        assert_eq!(p.on_ack(seg(1), seg(5), true, MSS), seg(2));
        // Still bounded by ssthresh - pipe.
        assert_eq!(p.on_ack(seg(1), seg(9), true, MSS), seg(1));
    }

    #[test]
    fn rfc9937_6_2_the_fast_retransmit_goes_out_whatever_the_proportion() {
        // A large RecoverFS against a small ssthresh: the first ACK's proportion is a few
        // bytes (CEIL(1000 * 1000 / 100000) = 10)...
        let mut p = Prr::default();
        p.start(seg(100), seg(1));
        assert_eq!(p.on_ack(seg(1), seg(97), false, MSS), 10);
        // ...but with nothing sent and SndCnt 0, SndCnt is one SMSS.
        let mut p = Prr::default();
        p.start(seg(100), 0);
        assert_eq!(p.on_ack(seg(1), seg(97), false, MSS), MSS);
        p.on_sent(MSS);
        assert_eq!(p.on_ack(seg(1), seg(96), false, MSS), 0);
    }

    #[test]
    fn rfc9937_6_2_delivered_data_is_the_change_in_snd_una_plus_the_change_in_sacked() {
        assert_eq!(Prr::delivered_data(seg(1), seg(5), seg(6)), seg(2));
        // SND.UNA passes 5 segments SACKed before: only the hole's segment is new.
        assert_eq!(Prr::delivered_data(seg(6), seg(5), 0), seg(1));
        assert_eq!(Prr::delivered_data(0, seg(5), seg(2)), 0);
    }

    #[test]
    fn rfc9937_6_2_without_sack_a_duplicate_ack_delivers_one_mss() {
        let mut p = Prr::default();
        p.start(seg(20), seg(10));
        // The two duplicate ACKs before the third, which started recovery.
        p.note_prior_dupacks(2, MSS);
        assert_eq!(
            p.on_ack_without_sack(0, true, seg(22), MSS),
            (seg(1), seg(19))
        );
        for n in 0..15 {
            let (d, pipe) = p.on_ack_without_sack(0, true, seg(22), MSS);
            assert_eq!((d, pipe), (seg(1), seg(18 - n)), "duplicate ACK {}", n + 4);
        }
        // A partial ACK of 5 segments: the hole's and 4 counted already by duplicate ACKs.
        assert_eq!(
            p.on_ack_without_sack(seg(5), false, seg(17), MSS),
            (seg(1), seg(3))
        );
        // An ACK of the next hole and every segment the duplicate ACKs counted: 2 left.
        assert_eq!(
            p.on_ack_without_sack(seg(15), false, seg(2), MSS),
            (seg(1), seg(2))
        );
    }

    #[test]
    fn without_sack_duplicate_acks_count_no_more_than_was_outstanding() {
        // A receiver that splits its ACKs: no more than the flight less the hole counts.
        let mut p = Prr::default();
        p.start(seg(4), seg(2));
        let mut total = 0;
        for _ in 0..10 {
            let (d, pipe) = p.on_ack_without_sack(0, true, seg(4), MSS);
            total += d;
            assert!(pipe >= MSS);
        }
        assert_eq!(total, seg(3));
    }

    /// One returning ACK of a worked example: what it delivers (segments newly SACKed or
    /// cumulatively acknowledged), whether it is safe (SND.UNA advanced, no further loss),
    /// and what the RFC's diagram shows after it: cwnd (pipe + SndCnt) and inflight (pipe,
    /// before any sending).
    struct Row {
        ack: u32,
        delivered: u32,
        lost_now: u32,
        safe: bool,
        cwnd: u32,
        inflight: u32,
    }

    /// Runs `rows` from a flight of `pipe` segments through a reduction that starts at the
    /// ACK marked `lost_now` (the third duplicate ACK, whose SACK marks the lost segments),
    /// sending what SndCnt allows, and checks each ACK's cwnd and inflight against the row.
    /// Returns the segments sent per ACK. The RFC's examples count in segments: here one
    /// byte stands for one segment (SMSS = 1), so CEIL rounds to whole segments as theirs.
    fn run(
        rows: &[Row],
        mut pipe: u32,
        recover_fs_segs: u32,
        ssthresh_segs: u32,
        cwnd_before: u32,
    ) -> Vec<u32> {
        let mut p = Prr::default();
        let mut sent = Vec::new();
        for r in rows {
            pipe -= r.delivered + r.lost_now;
            if r.lost_now > 0 {
                p.start(recover_fs_segs, ssthresh_segs);
            }
            let cwnd = if p.is_active() {
                pipe + p.on_ack(r.delivered, pipe, r.safe, 1)
            } else {
                cwnd_before
            };
            assert_eq!(
                (cwnd, pipe),
                (r.cwnd, r.inflight),
                "ACK #{}: (cwnd, inflight)",
                r.ack
            );
            // Limited transmit (RFC 3042) sends one segment on each of the first two
            // duplicate ACKs, before the reduction.
            let n = if p.is_active() { p.quota() } else { 1 };
            if p.is_active() {
                p.on_sent(n);
            }
            pipe += n;
            sent.push(n);
        }
        sent
    }

    fn row(ack: u32, delivered: u32, lost_now: u32, safe: bool, cwnd: u32, inflight: u32) -> Row {
        Row {
            ack,
            delivered,
            lost_now,
            safe,
            cwnd,
            inflight,
        }
    }

    /// RFC 9937 §8, Example 1: Reno, cwnd = FlightSize = 20 segments, segment 0 lost,
    /// ssthresh 10, limited transmit. ACKs 1 to 19 SACK the rest of the flight, 20 and 21 the
    /// two limited-transmit segments; ACK 22, the retransmission's, ends recovery (cwnd =
    /// ssthresh, §6.3) and is not a PRR step. RecoverFS = SND.NXT - SND.UNA (22) less the two
    /// segments SACKed before the third duplicate ACK = 20.
    ///
    /// The RFC's diagram and the RFC's pseudocode disagree at ACKs 19 and 20. At ACK 19
    /// inflight is 10 = ssthresh, so the pseudocode's `if (pipe > ssthresh)` takes the
    /// reduction bound, whose MIN(ssthresh - pipe, ...) is 0: nothing is sent, cwnd 10. The
    /// diagram shows cwnd 11 and a new segment, which is what the proportional formula
    /// would give there (CEIL(17 * 10 / 20) - 8 = 1), as if the test were `>=`. The segment
    /// goes out one ACK later instead (ACK 20, where pipe 9 < ssthresh and the bound allows
    /// MIN(1, 10) = 1), so inflight at ACK 20 is 9, not the diagram's 10; from ACK 21 on the
    /// two agree again, and both send 13 segments in the round trip. We follow the
    /// pseudocode; the diagram's value is asserted for every other ACK.
    #[test]
    fn rfc9937_8_example_1_single_loss_ack_by_ack() {
        let mut rows = vec![
            row(1, 1, 0, false, 20, 19),
            row(2, 1, 0, false, 20, 19),
            // The third duplicate ACK: segment 0 is lost (IsLost), recovery starts.
            row(3, 1, 1, false, 19, 18),
        ];
        // ACKs 4 to 18: cwnd and inflight step down together, one segment per two ACKs.
        for ack in 4..=18 {
            let inflight = 18 - (ack - 3) / 2;
            let cwnd = inflight + (ack % 2);
            rows.push(row(ack, 1, 0, false, cwnd, inflight));
        }
        // ACKs 19 and 20: see the doc comment (the diagram shows (11, 10) and (10, 10)).
        rows.push(row(19, 1, 0, false, 10, 10));
        rows.push(row(20, 1, 0, false, 10, 9));
        rows.push(row(21, 1, 0, false, 10, 9));
        // The diagram's rows, ACKs 1 to 18 and 21, as printed in RFC 9937 §8.
        let diagram_cwnd = [
            20, 20, 19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10,
        ];
        let diagram_inflight = [
            19, 19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9,
        ];
        for r in &rows {
            if r.ack != 19 && r.ack != 20 {
                let i = r.ack as usize - 1;
                assert_eq!(
                    (r.cwnd, r.inflight),
                    (diagram_cwnd[i], diagram_inflight[i]),
                    "row {} copies the diagram",
                    r.ack
                );
            }
        }
        let sent = run(&rows, 20, 20, 10, 20);
        // N N R, then one new segment on every other ACK.
        let mut expected = vec![1, 1, 1];
        expected.extend((4..=18).map(|ack| ack % 2));
        expected.extend([0, 1, 1]);
        assert_eq!(sent, expected);
        // 12 segments on ACKs 1 to 21; the diagram's 13th goes on ACK 22, which ends
        // recovery with cwnd = ssthresh = 10 (§6) and 9 in flight.
        assert_eq!(sent.iter().sum::<u32>(), 12);
    }

    /// Our own worked example of both reduction bounds (not one of the RFC's diagrams): a
    /// burst of 15 segments lost from a flight of 20 (segments 0 to 14), ssthresh 10,
    /// limited transmit. The third duplicate ACK (SACKing segment 17) marks all 15 lost:
    /// pipe = 22 - 3 SACKed - 15 lost = 4, already below ssthresh, so PRR is in a reduction
    /// bound from the start. On duplicate ACKs (not safe) PRR-CRB sends one segment per
    /// segment delivered; once retransmissions are cumulatively acknowledged (safe ACKs)
    /// PRR-SSRB sends one more per ACK, a slow start back up to ssthresh.
    #[test]
    fn burst_loss_conservative_then_slow_start_bound() {
        let rows = [
            row(15, 1, 0, false, 20, 19),
            row(16, 1, 0, false, 20, 19),
            // Segments 0..=14 lost; RecoverFS = 22 - 2 = 20. CRB: MIN(10 - 4, MAX(1, 1)).
            row(17, 1, 15, false, 5, 4),
            row(18, 1, 0, false, 5, 4),
            row(19, 1, 0, false, 5, 4),
            // SACKs of the limited-transmit segments 20 and 21.
            row(20, 1, 0, false, 5, 4),
            row(21, 1, 0, false, 5, 4),
            // ACKs of the first retransmissions: SND.UNA advances by one segment, no new
            // loss: PRR-SSRB, MAX(prr_delivered - prr_out, 1) + 1 = 2, pipe grows by one.
            row(0, 1, 0, true, 6, 4),
            row(1, 1, 0, true, 7, 5),
            row(2, 1, 0, true, 8, 6),
            row(3, 1, 0, true, 9, 7),
            row(4, 1, 0, true, 10, 8),
            // pipe 9: MIN(ssthresh - pipe = 1, 2) = 1, and from here on one per ACK.
            row(5, 1, 0, true, 10, 9),
            row(6, 1, 0, true, 10, 9),
            // Not safe (another loss indicated): CRB, still MAX(0, 1) = 1 within the bound.
            row(7, 1, 0, false, 10, 9),
        ];
        let sent = run(&rows, 20, 20, 10, 20);
        assert_eq!(sent, [1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1]);
    }
}
