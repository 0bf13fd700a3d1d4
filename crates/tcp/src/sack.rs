//! The sender's SACK scoreboard and the RFC 6675 routines over it: Update, IsLost, SetPipe
//! and NextSeg (RFC 6675 §4). The scoreboard records which byte ranges above SND.UNA the
//! receiver has reported holding (RFC 2018); memory is a fixed array of ranges.

use crate::seq::SeqNum;
use ackclock_wire::SackBlocks;

/// Ranges the scoreboard can hold. A receiver reports at most 4 blocks per ACK, but over a
/// window many islands can accumulate; 32 covers every loss pattern short of a third of a
/// 100-segment window lost in alternation. Beyond that, new islands are not recorded (the
/// sender then simply knows less and retransmits more conservatively).
pub(crate) const MAX_SACK_RANGES: usize = 32;

/// What NextSeg chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextSeg {
    /// Rule 1 or 3: retransmit `len` bytes of a hole from `seq`.
    Retransmit {
        /// First byte to resend.
        seq: SeqNum,
        /// Bytes to resend, at most one SMSS.
        len: u32,
    },
    /// Rule 2: send new data.
    NewData,
    /// Rule 4: the one rescue retransmission of the episode.
    Rescue {
        /// First byte to resend.
        seq: SeqNum,
        /// Bytes to resend, at most one SMSS.
        len: u32,
    },
}

/// The SACK scoreboard of one connection: the byte ranges above SND.UNA the receiver
/// reported holding, plus RFC 6675's HighRxt and RescueRxt. Ranges are
/// `[left, right)`, sorted and disjoint; at most [`MAX_SACK_RANGES`] are kept.
#[derive(Clone, Debug)]
// `repr(C)`: `n`, which every ACK reads (`advance`), last, next to the recovery's per-ACK
// fields (see `Recovery`).
#[repr(C)]
pub(crate) struct Scoreboard {
    /// SACKed ranges `[left, right)`, sorted, disjoint, non-adjacent, above SND.UNA.
    ranges: [(SeqNum, SeqNum); MAX_SACK_RANGES],
    /// One past the highest byte retransmitted in this episode (RFC 6675 HighRxt + 1).
    pub high_rxt: SeqNum,
    /// RFC 6675 RescueRxt.
    pub rescue_rxt: Option<SeqNum>,
    n: usize,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard {
            ranges: [(SeqNum::new(0), SeqNum::new(0)); MAX_SACK_RANGES],
            n: 0,
            high_rxt: SeqNum::new(0),
            rescue_rxt: None,
        }
    }
}

impl Scoreboard {
    /// The SACKed ranges `[left, right)`, lowest first.
    pub(crate) fn ranges(&self) -> &[(SeqNum, SeqNum)] {
        &self.ranges[..self.n]
    }
    /// Forgets every SACKed range (after a timeout: the receiver may have reneged, RFC
    /// 2018 §8). HighRxt and RescueRxt are left as they are.
    pub(crate) fn clear(&mut self) {
        self.n = 0;
    }

    /// Drops everything at or below the new SND.UNA.
    pub(crate) fn advance(&mut self, snd_una: SeqNum) {
        let mut w = 0;
        for i in 0..self.n {
            let (l, r) = self.ranges[i];
            if r <= snd_una {
                continue;
            }
            self.ranges[w] = (l.max(snd_una), r);
            w += 1;
        }
        self.n = w;
    }

    /// RFC 6675 Update(): records the blocks of an ACK, clipped to (SND.UNA, SND.MAX].
    /// Blocks at or below SND.UNA (D-SACK, RFC 2883) and nonsense blocks are ignored.
    pub(crate) fn update(&mut self, snd_una: SeqNum, snd_max: SeqNum, blocks: &SackBlocks) {
        for b in blocks {
            let l = SeqNum::new(b.left).max(snd_una);
            let r = SeqNum::new(b.right).min(snd_max);
            if r <= l || SeqNum::new(b.left) >= SeqNum::new(b.right) {
                continue;
            }
            self.insert(l, r);
        }
    }

    fn insert(&mut self, l: SeqNum, r: SeqNum) {
        // Find the first range that ends at or after l (it may touch or overlap).
        let mut i = 0;
        while i < self.n && self.ranges[i].1 < l {
            i += 1;
        }
        let (mut nl, mut nr) = (l, r);
        let mut j = i;
        while j < self.n && self.ranges[j].0 <= nr {
            nl = nl.min(self.ranges[j].0);
            nr = nr.max(self.ranges[j].1);
            j += 1;
        }
        let merged = j - i;
        if merged == 0 {
            if self.n == MAX_SACK_RANGES {
                return;
            }
            self.ranges.copy_within(i..self.n, i + 1);
            self.n += 1;
        } else if merged > 1 {
            self.ranges.copy_within(j..self.n, i + 1);
            self.n -= merged - 1;
        }
        self.ranges[i] = (nl, nr);
    }

    /// Bytes SACKed.
    pub(crate) fn sacked_bytes(&self) -> u32 {
        self.ranges().iter().map(|(l, r)| r.since(*l)).sum()
    }

    /// Bytes SACKed above `s` (the part of each range from `s` on).
    pub(crate) fn sacked_above(&self, s: SeqNum) -> u32 {
        self.ranges()
            .iter()
            .filter(|(_, r)| *r > s)
            .map(|(l, r)| r.since((*l).max(s)))
            .sum()
    }

    /// The right edge of the highest SACKed range.
    pub(crate) fn highest_sacked(&self) -> Option<SeqNum> {
        self.ranges().last().map(|r| r.1)
    }

    /// Whether byte `s` lies in a SACKed range.
    pub(crate) fn is_sacked(&self, s: SeqNum) -> bool {
        self.ranges().iter().any(|(l, r)| s >= *l && s < *r)
    }

    /// RFC 6675 IsLost(SeqNum): DupThresh discontiguous SACKed ranges above `s`, or more
    /// than (DupThresh - 1) * SMSS bytes SACKed above it.
    pub(crate) fn is_lost(&self, s: SeqNum, dupthresh: u32, mss: u32) -> bool {
        let mut bytes = 0u32;
        let mut count = 0u32;
        for &(l, r) in self.ranges().iter().rev() {
            if r <= s {
                break;
            }
            bytes += r.since(l.max(s + 1u32));
            count += 1;
        }
        count >= dupthresh || bytes > dupthresh.saturating_sub(1) * mss
    }

    /// RFC 6675 SetPipe(): octets in (SND.UNA .. SND.MAX) not SACKed count once if not
    /// lost and once more if retransmitted (at or below HighRxt). Computed per hole: IsLost
    /// is constant across a hole, since the same ranges lie above each of its bytes.
    pub(crate) fn pipe(&self, snd_una: SeqNum, snd_max: SeqNum, dupthresh: u32, mss: u32) -> u32 {
        let mut pipe = 0u32;
        let mut start = snd_una;
        let mut idx = 0;
        loop {
            let end = if idx < self.n {
                self.ranges[idx].0
            } else {
                snd_max
            };
            if end > start {
                let hole = end.since(start);
                if !self.is_lost(start, dupthresh, mss) {
                    pipe += hole;
                }
                if self.high_rxt > start {
                    pipe += self.high_rxt.min(end).since(start);
                }
            }
            if idx >= self.n {
                break;
            }
            start = self.ranges[idx].1;
            idx += 1;
        }
        pipe
    }

    /// RFC 6675 NextSeg(). `new_data_ok` says whether rule 2 may send new data (data is
    /// waiting and the receiver's window allows it); `recover` is the RecoveryPoint.
    pub(crate) fn next_seg(
        &self,
        snd_una: SeqNum,
        dupthresh: u32,
        mss: u32,
        new_data_ok: bool,
        recover: SeqNum,
    ) -> Option<NextSeg> {
        let highest = self.highest_sacked()?;
        // Holes between SND.UNA and the highest SACKed byte, in order.
        let mut start = snd_una;
        let mut first_not_lost: Option<NextSeg> = None;
        for &(l, r) in self.ranges() {
            if l > start {
                let s = start.max(self.high_rxt);
                if s < l && s < highest {
                    let seg = NextSeg::Retransmit {
                        seq: s,
                        len: l.since(s).min(mss),
                    };
                    // Rule 1: the first hole above HighRxt that is lost.
                    if self.is_lost(s, dupthresh, mss) {
                        return Some(seg);
                    }
                    // Remember rule 3's candidate.
                    if first_not_lost.is_none() {
                        first_not_lost = Some(seg);
                    }
                }
            }
            start = r;
        }
        // Rule 2: new data.
        if new_data_ok {
            return Some(NextSeg::NewData);
        }
        // Rule 3: a hole not yet deemed lost.
        if first_not_lost.is_some() {
            return first_not_lost;
        }
        // Rule 4: one rescue retransmission per episode, of the highest unSACKed data.
        let rescue_ok = match self.rescue_rxt {
            None => true,
            Some(rr) => snd_una > rr,
        };
        if rescue_ok {
            // The highest outstanding unSACKed byte lies below RecoveryPoint, above the
            // highest SACK or in the last hole.
            let top = recover;
            let mut s = top;
            if let Some(&(l, r)) = self.ranges().last() {
                if r >= top {
                    s = l;
                }
            }
            if s > snd_una {
                let seq = s - mss.min(s.since(snd_una));
                let len = s.since(seq);
                if len > 0 && !self.is_sacked(seq) {
                    return Some(NextSeg::Rescue { seq, len });
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n`, which every ACK reads, is last: next to the recovery's per-ACK fields (see
    /// `Recovery`'s layout).
    #[test]
    fn the_count_of_ranges_is_the_last_field() {
        use core::mem::{offset_of, size_of};
        assert_eq!(
            offset_of!(Scoreboard, n) + size_of::<usize>(),
            size_of::<Scoreboard>()
        );
    }
    use ackclock_wire::SackBlock;

    fn s(v: u32) -> SeqNum {
        SeqNum::new(v)
    }
    fn blocks(v: &[(u32, u32)]) -> SackBlocks {
        let mut b = SackBlocks::new();
        for &(l, r) in v {
            b.push(SackBlock { left: l, right: r });
        }
        b
    }

    #[test]
    fn update_merges_and_clips() {
        let mut sb = Scoreboard::default();
        sb.update(s(1000), s(10000), &blocks(&[(3000, 4000), (6000, 7000)]));
        sb.update(
            s(1000),
            s(10000),
            &blocks(&[(4000, 5000), (500, 1500), (9000, 12000)]),
        );
        assert_eq!(
            sb.ranges(),
            &[
                (s(1000), s(1500)),
                (s(3000), s(5000)),
                (s(6000), s(7000)),
                (s(9000), s(10000))
            ]
        );
        sb.update(s(1000), s(10000), &blocks(&[(1400, 9500)]));
        assert_eq!(sb.ranges(), &[(s(1000), s(10000))]);
        sb.advance(s(5000));
        assert_eq!(sb.ranges(), &[(s(5000), s(10000))]);
        assert_eq!(sb.sacked_bytes(), 5000);
    }

    #[test]
    fn sacked_above_counts_the_part_of_each_range_past_a_point() {
        let mut sb = Scoreboard::default();
        sb.update(s(1000), s(10000), &blocks(&[(3000, 4000), (6000, 7000)]));
        assert_eq!(sb.sacked_above(s(1000)), 2000);
        assert_eq!(sb.sacked_above(s(3500)), 1500);
        assert_eq!(sb.sacked_above(s(4000)), 1000);
        assert_eq!(sb.sacked_above(s(7000)), 0);
    }

    #[test]
    fn is_lost_by_bytes_or_ranges() {
        let mss = 1000;
        let mut sb = Scoreboard::default();
        // Segment 0 lost; segments 1, 2 SACKed: 2000 bytes above is not more than 2*MSS.
        sb.update(s(0), s(10000), &blocks(&[(1000, 3000)]));
        assert!(!sb.is_lost(s(0), 3, mss));
        sb.update(s(0), s(10000), &blocks(&[(3000, 3001)]));
        assert!(sb.is_lost(s(0), 3, mss), "more than 2*SMSS SACKed above");
        // Three discontiguous ranges above count even when small.
        let mut sc = Scoreboard::default();
        sc.update(
            s(0),
            s(10000),
            &blocks(&[(100, 200), (300, 400), (500, 600)]),
        );
        assert!(sc.is_lost(s(0), 3, mss));
        assert!(!sc.is_lost(s(250), 3, mss));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_and_retransmitted() {
        let mss = 1000;
        let mut sb = Scoreboard::default();
        // 10 segments out; 0 lost, 1..=4 SACKed, 5..=9 in flight.
        sb.update(s(0), s(10000), &blocks(&[(1000, 5000)]));
        // Hole 0: lost (4000 SACKed above). Above the SACK: 5000 bytes not lost.
        assert_eq!(sb.pipe(s(0), s(10000), 3, mss), 5000);
        sb.high_rxt = s(1000);
        assert_eq!(
            sb.pipe(s(0), s(10000), 3, mss),
            6000,
            "the retransmission counts"
        );
    }

    #[test]
    fn next_seg_rules_in_order() {
        let mss = 1000;
        let mut sb = Scoreboard::default();
        // Holes at 0 and 5000; 5000's hole has only 1000 SACKed above: not lost.
        sb.update(s(0), s(8000), &blocks(&[(1000, 5000), (6000, 7000)]));
        let r = s(8000);
        assert_eq!(
            sb.next_seg(s(0), 3, mss, true, r),
            Some(NextSeg::Retransmit {
                seq: s(0),
                len: 1000
            })
        );
        sb.high_rxt = s(1000);
        assert_eq!(sb.next_seg(s(0), 3, mss, true, r), Some(NextSeg::NewData));
        assert_eq!(
            sb.next_seg(s(0), 3, mss, false, r),
            Some(NextSeg::Retransmit {
                seq: s(5000),
                len: 1000
            }),
            "rule 3"
        );
        sb.high_rxt = s(6000);
        // Rule 4: the rescue covers the highest unSACKed data below RecoveryPoint.
        assert_eq!(
            sb.next_seg(s(0), 3, mss, false, r),
            Some(NextSeg::Rescue {
                seq: s(7000),
                len: 1000
            })
        );
        sb.rescue_rxt = Some(r);
        assert_eq!(sb.next_seg(s(0), 3, mss, false, r), None);
    }

    #[test]
    fn capacity_is_bounded() {
        let mut sb = Scoreboard::default();
        for i in 0..100u32 {
            sb.update(s(0), s(1_000_000), &blocks(&[(i * 100 + 50, i * 100 + 60)]));
        }
        assert_eq!(sb.ranges().len(), MAX_SACK_RANGES);
        for w in sb.ranges().windows(2) {
            assert!(w[0].1 < w[1].0);
        }
    }
}
