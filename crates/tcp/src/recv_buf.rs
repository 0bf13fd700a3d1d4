//! The TCP receive buffer: in-order data waiting for the application, and out-of-order data
//! waiting for a hole to fill (RFC 9293 §3.10.7.4, RFC 5681 §4.2, RFC 2018).
//!
//! Memory is bounded at construction: one ring of `capacity` bytes, allocated when the first
//! byte arrives, and at most [`max_ranges`]`(capacity)` range slots, allocated when the
//! first out-of-order segment does and grown (doubling) only when a loss pattern needs more
//! islands (a connection that never receives, or never out of order, pays for neither).
//! RFC 9293 §3.10.7.4 says segments beyond RCV.NXT "SHOULD be held for later processing"
//! (SHLD-31), but only acceptable ones, inside RCV.WND; storing nothing outside the
//! advertised window means whatever a peer sends cannot grow the buffer.
//!
//! Layout of the ring, starting at `head`:
//!
//! ```text
//! | readable (len) | window = capacity - len: free space, holes, out-of-order ranges |
//!                  ^ in-order edge = RCV.NXT
//! ```
//!
//! Out-of-order data is written straight into its final place in the window, so filling a
//! hole makes everything behind it readable without moving a byte; the ranges only record
//! which window bytes hold data. They are kept as absolute stream positions (bytes since the
//! connection started, as `u64`), so advancing RCV.NXT never has to rewrite them; public
//! offsets are relative to RCV.NXT.

use ackclock_wire::checksum;

/// Range slots (islands of out-of-order data between holes) a buffer starts with, and the
/// fewest it may grow to.
///
/// RFC 2018 §3 lets a SACK option report at most 4 blocks (3 with timestamps), but the
/// receiver may hold more islands than one ACK can report (RFC 2018 §4: the first block is
/// the most recent arrival, the others repeat recently reported blocks). 32 slots are 512
/// bytes and cover the loss patterns of most paths.
pub(crate) const MIN_RANGES: usize = 32;

/// Buffer bytes per range slot beyond [`MIN_RANGES`]: an island and a hole of one
/// full-sized segment each (2 x 1024 bytes and more), so a window of full-sized segments
/// with every other one lost fits. Slots stay under 1% of the buffer (16 bytes per 2 KiB).
/// Fixed at 32 slots, a 4 MiB window with BBR's losses on a 7-packet buffer (one segment in
/// five) dropped two thirds of what arrived out of order, and the sender resent it: Linux's
/// out-of-order queue is bounded by the buffer's memory only.
const BYTES_PER_RANGE: usize = 2048;

/// The most range slots a buffer of `capacity` bytes tracks. A segment that would need
/// one more is dropped ([`ReassemblyFull`]): holding out-of-order data is a SHOULD (RFC 9293
/// SHLD-31), and the peer retransmits what was dropped; a peer that sends tiny segments
/// with holes between them cannot make the slots outgrow 1% of the buffer.
pub(crate) const fn max_ranges(capacity: usize) -> usize {
    let by_size = capacity / BYTES_PER_RANGE;
    if by_size > MIN_RANGES {
        by_size
    } else {
        MIN_RANGES
    }
}

/// [`RecvBuffer::insert`] refused a segment that would have opened a new out-of-order range
/// while all [`max_ranges`] slots are in use. Nothing was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("reassembly queue full: too many out-of-order ranges")]
pub(crate) struct ReassemblyFull;

/// A half-open range `[start, end)` of absolute stream positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Span {
    start: u64,
    end: u64,
}

/// The receive buffer of one connection. See the module documentation.
///
/// `repr(C)` keeps `len` and `nxt` apart: when they are adjacent, the compiler merges the
/// two additions of a commit into a vector add that costs more instructions than it saves.
#[derive(Clone)]
#[repr(C)]
pub(crate) struct RecvBuffer {
    /// The ring: empty until the first byte arrives, then `cap` bytes (see `ensure_ring`),
    /// and empty again after `release`.
    ring: Box<[u8]>,
    /// The capacity: what the ring holds once allocated, and what the window is made of.
    cap: usize,
    /// Ring index of the first readable byte.
    head: usize,
    /// Readable (in-order, not yet consumed) bytes.
    len: usize,
    n_ranges: usize,
    /// Bytes copied to the in-order edge by `stage_with_sum` and not yet committed.
    staged: usize,
    /// Absolute stream position of the in-order edge, i.e. RCV.NXT counted from 0.
    nxt: u64,
    /// Out-of-order ranges, `ranges[..n_ranges]` sorted, disjoint, non-adjacent, each
    /// starting after `nxt` and ending at most `capacity` bytes after the first readable
    /// byte (they lie inside the window that was advertised when they arrived).
    /// Empty until the first out-of-order segment, then [`MIN_RANGES`] slots, doubled
    /// when full up to [`max_ranges`] of the capacity.
    ranges: Box<[Span]>,
}

impl core::fmt::Debug for RecvBuffer {
    // Not derived: the ring's contents would swamp every log line.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RecvBuffer")
            .field("capacity", &self.capacity())
            .field("rcv_nxt_abs", &self.nxt)
            .field("len", &self.len)
            .field("window", &self.window())
            .field("staged", &self.staged)
            // Absolute positions; subtract `rcv_nxt_abs` for the offsets the API uses.
            .field("out_of_order", &self.ranges())
            .finish()
    }
}

impl RecvBuffer {
    /// A buffer of `capacity` bytes. The ring is allocated when the first byte arrives, so
    /// a connection that never receives data (an idle one, or a half-open one under a SYN
    /// flood) costs no buffer memory; it is the only allocation the buffer makes until a
    /// `release` (`clone` makes a second buffer with its own ring).
    ///
    /// `capacity` should be positive; a zero-capacity buffer is allowed but advertises a
    /// zero window forever and stores nothing.
    pub(crate) fn new(capacity: usize) -> Self {
        RecvBuffer {
            ring: Box::default(),
            cap: capacity,
            head: 0,
            len: 0,
            nxt: 0,
            ranges: Box::default(),
            n_ranges: 0,
            staged: 0,
        }
    }

    /// The capacity in bytes, allocated or not: the most the window can offer.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Whether the ring is allocated (header prediction copies into it without asking).
    #[inline]
    pub(crate) fn is_allocated(&self) -> bool {
        self.ring.len() == self.cap
    }

    /// Allocates the ring if it is not (the first byte to arrive, or the first after a
    /// `release`).
    #[inline]
    fn ensure_ring(&mut self) {
        if !self.is_allocated() {
            self.allocate();
        }
    }

    #[cold]
    #[inline(never)]
    fn allocate(&mut self) {
        self.ring = vec![0u8; self.cap].into_boxed_slice();
        self.head = 0;
    }

    /// Gives the ring's memory back when nothing is held (readable, out of order or
    /// staged); the next byte to arrive allocates it again. Returns whether it did.
    pub(crate) fn release(&mut self) -> bool {
        if self.len == 0 && self.n_ranges == 0 && self.staged == 0 && !self.ring.is_empty() {
            self.ring = Box::default();
            self.head = 0;
            return true;
        }
        false
    }

    /// In-order bytes ready for the application.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// True when no in-order byte waits to be read (out-of-order data may be held).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Free space the receiver can advertise: `capacity() - len()`.
    ///
    /// Out-of-order data does not shrink it: it already sits in the ring inside this window,
    /// at the place it will occupy once the holes fill, so advertising it again costs no
    /// memory. Shrinking the window on out-of-order arrival would also move the right edge
    /// left, which RFC 9293 §3.8.6 strongly discourages.
    #[inline]
    pub(crate) fn window(&self) -> usize {
        self.capacity() - self.len
    }

    /// Whether out-of-order data is held beyond RCV.NXT, waiting for a hole to fill.
    #[inline]
    pub(crate) fn has_out_of_order(&self) -> bool {
        self.n_ranges != 0
    }

    /// Stores `data`, which starts `offset` bytes after RCV.NXT, and returns how many bytes
    /// RCV.NXT advanced.
    ///
    /// Bytes at or beyond the window (`offset + i >= window()`) are dropped: the engine trims
    /// segments to the window (RFC 9293 §3.10.7.4), and this is the bound that keeps memory
    /// fixed whatever the caller passes. Bytes already held are overwritten, not compared:
    /// a retransmission carries the same bytes. When the data reaches the in-order edge,
    /// RCV.NXT advances over it and over every out-of-order range it makes contiguous.
    ///
    /// A pending [`stage_with_sum`](Self::stage_with_sum) is discarded: the data may land on
    /// the staged bytes.
    ///
    /// # Errors
    /// [`ReassemblyFull`] when the data is out of order, touches no existing range, and all
    /// [`max_ranges`] slots are in use. Nothing is stored then; data that extends or merges
    /// existing ranges, or reaches the in-order edge, is always accepted.
    pub(crate) fn insert(&mut self, offset: usize, data: &[u8]) -> Result<usize, ReassemblyFull> {
        self.staged = 0;
        let window = self.window();
        if offset >= window || data.is_empty() {
            return Ok(0);
        }
        // offset < window, so this neither underflows nor lets offset + n overflow.
        let n = data.len().min(window - offset);
        let data = &data[..n];
        let start = self.nxt + offset as u64;
        let end = start + n as u64;

        if offset == 0 {
            // In order: RCV.NXT advances over the data accepted (RFC 9293 §3.10.7.4) and over
            // every range it now touches, which the out-of-order data was kept for.
            self.write(0, data);
            return Ok(self.advance_to(end));
        }

        // Ranges that overlap or touch [start, end) are ranges[i..j]: adjacency counts, so
        // the result stays non-adjacent and one SACK block describes each island.
        let ranges = &self.ranges[..self.n_ranges];
        let i = ranges.partition_point(|r| r.end < start);
        let j = ranges.partition_point(|r| r.start <= end);
        if i == j {
            if self.n_ranges == self.ranges.len() && !self.grow_ranges() {
                return Err(ReassemblyFull);
            }
            self.write(offset, data);
            self.ranges.copy_within(i..self.n_ranges, i + 1);
            self.ranges[i] = Span { start, end };
            self.n_ranges += 1;
        } else {
            self.write(offset, data);
            let merged = Span {
                start: start.min(self.ranges[i].start),
                end: end.max(self.ranges[j - 1].end),
            };
            self.ranges[i] = merged;
            self.ranges.copy_within(j..self.n_ranges, i + 1);
            self.n_ranges -= j - i - 1;
        }
        Ok(0)
    }

    /// Header-prediction fast path (checksum-and-copy): copies as much of `data` as the
    /// window holds to the in-order edge, without making it readable, and returns the count
    /// copied and the RFC 1071 sum of those bytes (not complemented; see
    /// [`ackclock_wire::checksum`]). The caller adds the pseudo-header and header sums,
    /// verifies, and then calls [`commit`](Self::commit), or drops the segment by doing
    /// nothing: uncommitted bytes lie in free space and are overwritten later.
    ///
    /// Only valid without out-of-order data: the edge is then followed by free space only,
    /// so the copy cannot land on a stored range. With out-of-order data held it copies
    /// nothing and returns `(0, 0)`; use [`insert`](Self::insert).
    ///
    /// Reads between staging and committing are fine; [`insert`](Self::insert) and
    /// [`clear`](Self::clear) discard the staged bytes.
    #[inline(always)]
    pub(crate) fn stage_with_sum(&mut self, data: &[u8]) -> (usize, u16) {
        self.staged = 0;
        let n = data.len().min(self.window());
        if n == 0 || self.has_out_of_order() {
            return (0, 0);
        }
        self.ensure_ring();
        let cap = self.capacity();
        let pos = self.edge();
        if n <= cap - pos {
            // The common case, inlined into header prediction: one contiguous piece (the
            // ring restarts at index 0 whenever it drains, see `consume`).
            let sum = checksum::copy_and_sum(&mut self.ring[pos..pos + n], &data[..n]);
            self.staged = n;
            return (n, sum);
        }
        self.stage_wrapped(data, n, pos)
    }

    /// [`stage_with_sum`](Self::stage_with_sum) for header prediction, which has already
    /// checked what that function would: `data` is not empty, fits the window, and
    /// nothing is held out of order. Stages all of it and returns its sum.
    #[inline(always)]
    pub(crate) fn stage_fitting_with_sum(&mut self, data: &[u8]) -> u16 {
        debug_assert!(!data.is_empty() && data.len() <= self.window());
        debug_assert!(!self.has_out_of_order());
        // Header prediction runs only with the ring allocated (`prediction_allowed`).
        debug_assert!(self.is_allocated());
        let n = data.len();
        let pos = self.edge();
        let room = &mut self.ring[pos..];
        if n <= room.len() {
            self.staged = n;
            return checksum::copy_and_sum(room, data);
        }
        self.stage_wrapped(data, n, pos).1
    }

    /// [`commit`](Self::commit) of everything [`stage_fitting_with_sum`] staged, `n` bytes,
    /// with nothing held out of order (header prediction).
    ///
    /// [`stage_fitting_with_sum`]: Self::stage_fitting_with_sum
    #[inline(always)]
    pub(crate) fn commit_fitting(&mut self, n: usize) {
        debug_assert!(n == self.staged && !self.has_out_of_order());
        self.staged = 0;
        self.nxt += n as u64;
        self.len += n;
    }

    /// [`stage_with_sum`](Self::stage_with_sum) when the copy wraps around the end of the
    /// ring: two pieces.
    #[cold]
    #[inline(never)]
    fn stage_wrapped(&mut self, data: &[u8], n: usize, pos: usize) -> (usize, u16) {
        let first = self.capacity() - pos;
        let sum_a = checksum::copy_and_sum(&mut self.ring[pos..], &data[..first]);
        // The second piece starts at ring index 0. When the first piece has odd length the
        // second one's 16-bit words straddle the cut (RFC 1071 §2(B)); `concat` swaps its
        // sum's bytes for that.
        let sum_b = checksum::copy_and_sum(&mut self.ring[..], &data[first..n]);
        self.staged = n;
        (n, checksum::concat(sum_a, first, sum_b))
    }

    /// Bytes staged and not yet committed.
    #[inline]
    pub(crate) fn staged(&self) -> usize {
        self.staged
    }

    /// Makes the first `n` staged bytes readable (RCV.NXT advances by `n`). `n` is clamped
    /// to the bytes staged and not yet committed, so a stray call cannot expose garbage.
    #[inline(always)]
    pub(crate) fn commit(&mut self, n: usize) {
        let n = n.min(self.staged);
        self.staged -= n;
        if self.n_ranges == 0 {
            // Nothing out of order (always so on the header-prediction path): the edge just
            // moves, with no search of the ranges.
            self.nxt += n as u64;
            self.len += n;
        } else {
            self.advance_to(self.nxt + n as u64);
        }
    }

    /// Out-of-order ranges as `(start, end)` offsets from RCV.NXT, ascending, disjoint and
    /// non-adjacent, for building SACK blocks (RFC 2018 §4).
    #[inline]
    pub(crate) fn out_of_order_ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let nxt = self.nxt;
        self.ranges[..self.n_ranges]
            .iter()
            .map(move |r| ((r.start - nxt) as usize, (r.end - nxt) as usize))
    }

    /// The out-of-order range holding the byte `offset` bytes after RCV.NXT, if any. RFC 2018
    /// §4 wants the first SACK block to be the one containing the segment that triggered
    /// the ACK; the engine asks with that segment's offset after inserting it.
    pub(crate) fn range_containing(&self, offset: usize) -> Option<(usize, usize)> {
        if offset >= self.capacity() {
            // Every range ends within `capacity` bytes of RCV.NXT.
            return None;
        }
        let pos = self.nxt + offset as u64;
        let ranges = self.ranges();
        let k = ranges.partition_point(|r| r.end <= pos);
        match ranges.get(k) {
            Some(r) if r.start <= pos => {
                Some(((r.start - self.nxt) as usize, (r.end - self.nxt) as usize))
            }
            _ => None,
        }
    }

    /// The first (lowest) part of `[offset, offset + len)` (offsets from RCV.NXT) that is
    /// already held out of order, as offsets from RCV.NXT: the duplicate range a D-SACK
    /// block reports (RFC 2883) for a segment landing there. Asked before the segment is
    /// inserted.
    pub(crate) fn first_held_overlap(&self, offset: usize, len: usize) -> Option<(usize, usize)> {
        let start = self.nxt + offset as u64;
        let end = start + len as u64;
        let ranges = self.ranges();
        let k = ranges.partition_point(|r| r.end <= start);
        match ranges.get(k) {
            Some(r) if r.start < end => Some((
                (r.start.max(start) - self.nxt) as usize,
                (r.end.min(end) - self.nxt) as usize,
            )),
            _ => None,
        }
    }

    /// Bytes held out of order (the sum of the range lengths).
    #[cfg(test)]
    pub(crate) fn out_of_order_bytes(&self) -> usize {
        self.ranges()
            .iter()
            .map(|r| (r.end - r.start) as usize)
            .sum()
    }

    /// Copies up to `buf.len()` readable bytes into `buf` and frees them; returns the count.
    #[inline]
    pub(crate) fn read(&mut self, buf: &mut [u8]) -> usize {
        let (a, b) = self.readable_slices();
        let na = a.len().min(buf.len());
        buf[..na].copy_from_slice(&a[..na]);
        let nb = b.len().min(buf.len() - na);
        buf[na..na + nb].copy_from_slice(&b[..nb]);
        let n = na + nb;
        self.consume(n);
        n
    }

    /// The readable bytes, in order, as at most two slices (two when they wrap around the
    /// end of the ring). Free them with [`consume`](Self::consume).
    #[inline]
    pub(crate) fn readable_slices(&self) -> (&[u8], &[u8]) {
        let first = self.len.min(self.capacity() - self.head);
        (
            &self.ring[self.head..self.head + first],
            &self.ring[..self.len - first],
        )
    }

    /// Frees the first `n` readable bytes (clamped to `len()`), opening the window by `n`.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = self.wrap_add(self.head, n);
        self.len -= n;
        if self.len == 0 && self.n_ranges == 0 && self.staged == 0 {
            // Nothing in the ring is worth keeping in place, so restart at index 0: in a
            // bulk transfer whose reader keeps up, every segment then lands contiguously and
            // the fast path never has to split its copy and sum at the wrap.
            self.head = 0;
        }
    }

    /// Drops everything, readable, staged and out of order (RST, abort).
    #[cfg(test)]
    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
        self.nxt = 0;
        self.n_ranges = 0;
        self.staged = 0;
    }

    // -------------------------------------------------------------------------------------

    /// Makes room for one more range: the first [`MIN_RANGES`] slots, or twice as many, up
    /// to [`max_ranges`]. Returns false when the buffer already has the most it may.
    #[cold]
    #[inline(never)]
    fn grow_ranges(&mut self) -> bool {
        let max = max_ranges(self.cap);
        let have = self.ranges.len();
        if have >= max {
            return false;
        }
        let want = if have == 0 { MIN_RANGES } else { have * 2 }.min(max);
        let mut grown = vec![Span::default(); want];
        grown[..have].copy_from_slice(&self.ranges);
        self.ranges = grown.into_boxed_slice();
        true
    }

    #[inline]
    fn ranges(&self) -> &[Span] {
        &self.ranges[..self.n_ranges]
    }

    /// `(a + b) % capacity` for `a < capacity` (or both 0) and `b <= capacity`, without
    /// overflow; the result is below `capacity` (0 when it is 0).
    #[inline]
    fn wrap_add(&self, a: usize, b: usize) -> usize {
        let room = self.capacity() - b;
        if a >= room {
            a - room
        } else {
            a + b
        }
    }

    /// Ring index of the in-order edge (the byte at offset 0).
    #[inline]
    fn edge(&self) -> usize {
        self.wrap_add(self.head, self.len)
    }

    /// Copies `data` to the window bytes starting `offset` after the edge; the caller has
    /// trimmed it so `offset + data.len() <= window()`.
    #[inline]
    fn write(&mut self, offset: usize, data: &[u8]) {
        self.ensure_ring();
        let cap = self.capacity();
        let pos = self.wrap_add(self.edge(), offset);
        let first = data.len().min(cap - pos);
        self.ring[pos..pos + first].copy_from_slice(&data[..first]);
        self.ring[..data.len() - first].copy_from_slice(&data[first..]);
    }

    /// Moves RCV.NXT to `new_end` (not before it), making the bytes between readable, and
    /// then over any out-of-order ranges that have become contiguous. Returns the advance.
    #[inline]
    fn advance_to(&mut self, mut new_end: u64) -> usize {
        let old = self.nxt;
        let k = self.ranges().partition_point(|r| r.start <= new_end);
        if k > 0 {
            new_end = new_end.max(self.ranges[k - 1].end);
            self.ranges.copy_within(k..self.n_ranges, 0);
            self.n_ranges -= k;
        }
        let adv = new_end.saturating_sub(old) as usize;
        self.nxt = old + adv as u64;
        self.len += adv;
        adv
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ackclock_wire::checksum::reference_sum;
    use proptest::prelude::*;

    /// A deterministic byte stream; retransmissions of a position carry the same byte.
    fn byte_at(pos: usize) -> u8 {
        let x = (pos as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (x >> 56) as u8 ^ (pos as u8)
    }

    fn stream(start: usize, end: usize) -> Vec<u8> {
        (start..end).map(byte_at).collect()
    }

    fn read_all(rb: &mut RecvBuffer) -> Vec<u8> {
        let mut out = vec![0u8; rb.len()];
        let n = rb.read(&mut out);
        assert_eq!(n, out.len());
        assert!(rb.is_empty());
        out
    }

    fn ranges(rb: &RecvBuffer) -> Vec<(usize, usize)> {
        rb.out_of_order_ranges().collect()
    }

    /// The structural invariants every state must satisfy.
    fn check_invariants(rb: &RecvBuffer) {
        assert_eq!(rb.len() + rb.window(), rb.capacity());
        assert_eq!(rb.is_empty(), rb.readable_slices().0.is_empty());
        let r = ranges(rb);
        assert_eq!(rb.has_out_of_order(), !r.is_empty());
        assert!(r.len() <= max_ranges(rb.capacity()));
        let mut prev_end = 0;
        for (k, &(s, e)) in r.iter().enumerate() {
            // Offset 0 would be in order; adjacency would have been merged.
            assert!(
                s > prev_end,
                "range {k} {r:?} not sorted/disjoint/non-adjacent"
            );
            assert!(s < e, "empty range in {r:?}");
            assert!(
                e <= rb.window(),
                "range {r:?} outside window {}",
                rb.window()
            );
            assert_eq!(rb.range_containing(s), Some((s, e)));
            assert_eq!(rb.range_containing(e - 1), Some((s, e)));
            assert_eq!(rb.range_containing(e), None);
            prev_end = e;
        }
        assert_eq!(
            rb.out_of_order_bytes(),
            r.iter().map(|&(s, e)| e - s).sum::<usize>()
        );
        let (a, b) = rb.readable_slices();
        assert_eq!(a.len() + b.len(), rb.len());
    }

    #[test]
    fn in_order_append_and_read() {
        let mut rb = RecvBuffer::new(100);
        assert!(rb.is_empty());
        assert_eq!(rb.insert(0, &stream(0, 30)), Ok(30));
        assert_eq!(rb.insert(0, &stream(30, 50)), Ok(20));
        assert_eq!(rb.len(), 50);
        assert_eq!(rb.window(), 50);
        let mut buf = [0u8; 10];
        assert_eq!(rb.read(&mut buf), 10);
        assert_eq!(buf[..], stream(0, 10)[..]);
        assert_eq!(read_all(&mut rb), stream(10, 50));
        assert_eq!(rb.read(&mut buf), 0);
        assert_eq!(rb.window(), 100);
        check_invariants(&rb);
    }

    #[test]
    fn out_of_order_then_fill_hole() {
        let mut rb = RecvBuffer::new(100);
        assert_eq!(rb.insert(10, &stream(10, 20)), Ok(0));
        assert!(rb.is_empty());
        assert!(rb.has_out_of_order());
        assert_eq!(ranges(&rb), [(10, 20)]);
        assert_eq!(rb.out_of_order_bytes(), 10);
        // Out-of-order data does not shrink the advertised window.
        assert_eq!(rb.window(), 100);
        // Filling the hole advances RCV.NXT over the hole and the range behind it.
        assert_eq!(rb.insert(0, &stream(0, 10)), Ok(20));
        assert!(!rb.has_out_of_order());
        assert_eq!(rb.out_of_order_bytes(), 0);
        assert_eq!(read_all(&mut rb), stream(0, 20));
        check_invariants(&rb);
    }

    #[test]
    fn ranges_are_relative_to_rcv_nxt_as_it_advances() {
        let mut rb = RecvBuffer::new(100);
        rb.insert(30, &stream(30, 40)).unwrap();
        assert_eq!(rb.insert(0, &stream(0, 5)), Ok(5));
        assert_eq!(ranges(&rb), [(25, 35)]);
        assert_eq!(rb.range_containing(25), Some((25, 35)));
        assert_eq!(rb.range_containing(24), None);
        // Reading does not move RCV.NXT, so offsets stay the same.
        read_all(&mut rb);
        assert_eq!(ranges(&rb), [(25, 35)]);
        assert_eq!(rb.insert(0, &stream(5, 35)), Ok(35));
        assert_eq!(read_all(&mut rb), stream(5, 40));
    }

    #[test]
    fn first_held_overlap_is_the_lowest_duplicate_range() {
        // RFC 2883's D-SACK reports one duplicate range: the lowest part of a segment that
        // is already held.
        let mut rb = RecvBuffer::new(1000);
        assert_eq!(rb.first_held_overlap(0, 100), None);
        for s in [200, 400, 600] {
            rb.insert(s, &stream(s, s + 100)).unwrap();
        }
        assert_eq!(
            rb.first_held_overlap(100, 100),
            None,
            "fills a hole exactly"
        );
        assert_eq!(rb.first_held_overlap(300, 100), None);
        assert_eq!(rb.first_held_overlap(150, 100), Some((200, 250)));
        assert_eq!(rb.first_held_overlap(250, 25), Some((250, 275)));
        assert_eq!(rb.first_held_overlap(0, 700), Some((200, 300)));
        assert_eq!(rb.first_held_overlap(450, 250), Some((450, 500)));
        assert_eq!(rb.first_held_overlap(650, 100), Some((650, 700)));
        assert_eq!(rb.first_held_overlap(700, 100), None, "touches only");
        // Offsets follow RCV.NXT as it advances.
        assert_eq!(rb.insert(0, &stream(0, 200)), Ok(300));
        assert_eq!(rb.first_held_overlap(50, 100), Some((100, 150)));
    }

    #[test]
    fn segment_spanning_several_holes() {
        let mut rb = RecvBuffer::new(200);
        for s in [10, 30, 50, 70] {
            rb.insert(s, &stream(s, s + 5)).unwrap();
        }
        assert_eq!(ranges(&rb), [(10, 15), (30, 35), (50, 55), (70, 75)]);
        // Covers the holes around the middle two ranges and overlaps the last one.
        assert_eq!(rb.insert(20, &stream(20, 72)), Ok(0));
        assert_eq!(ranges(&rb), [(10, 15), (20, 75)]);
        check_invariants(&rb);
        // One in-order segment covering everything up to beyond the last range.
        assert_eq!(rb.insert(0, &stream(0, 80)), Ok(80));
        assert!(!rb.has_out_of_order());
        assert_eq!(read_all(&mut rb), stream(0, 80));
    }

    #[test]
    fn in_order_segment_merging_ranges_it_only_partly_reaches() {
        let mut rb = RecvBuffer::new(200);
        rb.insert(10, &stream(10, 20)).unwrap();
        rb.insert(30, &stream(30, 40)).unwrap();
        rb.insert(60, &stream(60, 70)).unwrap();
        // A retransmission overlapping the in-order edge and the first range, and touching
        // (adjacent to) the second: both become in order, the third stays.
        assert_eq!(rb.insert(0, &stream(0, 30)), Ok(40));
        assert_eq!(ranges(&rb), [(20, 30)]);
        assert_eq!(read_all(&mut rb), stream(0, 40));
        check_invariants(&rb);
    }

    #[test]
    fn duplicates_and_overlaps_in_every_position() {
        // Each case: an existing range [20, 30), a new segment, the resulting ranges.
        type Case = ((usize, usize), &'static [(usize, usize)]);
        let cases: &[Case] = &[
            ((20, 30), &[(20, 30)]),           // exact duplicate
            ((22, 27), &[(20, 30)]),           // inside
            ((15, 25), &[(15, 30)]),           // left overlap
            ((25, 35), &[(20, 35)]),           // right overlap
            ((15, 35), &[(15, 35)]),           // covering
            ((10, 20), &[(10, 30)]),           // adjacent on the left
            ((30, 40), &[(20, 40)]),           // adjacent on the right
            ((5, 10), &[(5, 10), (20, 30)]),   // separate, before
            ((40, 50), &[(20, 30), (40, 50)]), // separate, after
            ((20, 20), &[(20, 30)]),           // empty
        ];
        for &((s, e), want) in cases {
            let mut rb = RecvBuffer::new(100);
            rb.insert(20, &stream(20, 30)).unwrap();
            assert_eq!(rb.insert(s, &stream(s, e)), Ok(0), "case {s}..{e}");
            assert_eq!(ranges(&rb), want, "case {s}..{e}");
            check_invariants(&rb);
            assert_eq!(rb.insert(0, &stream(0, 60)), Ok(60));
            assert_eq!(read_all(&mut rb), stream(0, 60), "case {s}..{e}");
        }
    }

    #[test]
    fn duplicate_of_in_order_data_is_harmless() {
        let mut rb = RecvBuffer::new(100);
        rb.insert(0, &stream(0, 20)).unwrap();
        // The engine trims already-received bytes; what is left is offset 0 again, a
        // duplicate of nothing new, or a fresh segment.
        assert_eq!(rb.insert(0, &[]), Ok(0));
        assert_eq!(rb.len(), 20);
        assert_eq!(read_all(&mut rb), stream(0, 20));
    }

    #[test]
    fn data_beyond_the_window_is_trimmed() {
        let mut rb = RecvBuffer::new(50);
        rb.insert(0, &stream(0, 20)).unwrap();
        assert_eq!(rb.window(), 30);
        // Straddling the right edge: only the part inside the window is kept.
        assert_eq!(rb.insert(25, &stream(20 + 25, 20 + 40)), Ok(0));
        assert_eq!(ranges(&rb), [(25, 30)]);
        // Starting at or beyond the edge: nothing is stored.
        assert_eq!(rb.insert(30, &stream(50, 60)), Ok(0));
        assert_eq!(rb.insert(usize::MAX, &[1, 2, 3]), Ok(0));
        assert_eq!(rb.insert(usize::MAX - 1, &[1, 2, 3]), Ok(0));
        assert_eq!(ranges(&rb), [(25, 30)]);
        // An in-order segment larger than the window fills it exactly.
        assert_eq!(rb.insert(0, &stream(20, 100)), Ok(30));
        assert_eq!(rb.window(), 0);
        assert!(!rb.has_out_of_order());
        check_invariants(&rb);
        // Zero window: everything is dropped, nothing panics.
        assert_eq!(rb.insert(0, &stream(50, 60)), Ok(0));
        assert_eq!(rb.insert(1, &stream(51, 60)), Ok(0));
        assert_eq!(rb.stage_with_sum(&stream(50, 60)), (0, 0));
        assert_eq!(rb.range_containing(0), None);
        assert_eq!(rb.range_containing(usize::MAX), None);
        assert_eq!(read_all(&mut rb), stream(0, 50));
    }

    #[test]
    fn insert_wraps_the_ring() {
        for shift in 1..16 {
            let mut rb = RecvBuffer::new(16);
            // Leave one unread byte so the ring is not rewound to index 0.
            rb.insert(0, &stream(0, shift + 1)).unwrap();
            let mut sink = vec![0u8; shift];
            rb.read(&mut sink);
            assert_eq!(rb.len(), 1);
            // Out of order first, across the wrap point, then the hole.
            let base = shift + 1;
            assert_eq!(rb.insert(5, &stream(base + 5, base + 15)), Ok(0));
            assert_eq!(rb.insert(0, &stream(base, base + 5)), Ok(15));
            assert_eq!(rb.window(), 0);
            let (a, b) = rb.readable_slices();
            let mut got = a.to_vec();
            got.extend_from_slice(b);
            assert_eq!(got, stream(shift, base + 15), "shift {shift}");
            check_invariants(&rb);
        }
    }

    #[test]
    fn readable_slices_and_consume_across_the_wrap() {
        let mut rb = RecvBuffer::new(10);
        rb.insert(0, &stream(0, 8)).unwrap();
        rb.consume(6);
        rb.insert(0, &stream(8, 14)).unwrap();
        let (a, b) = rb.readable_slices();
        assert_eq!(a, &stream(6, 10)[..]);
        assert_eq!(b, &stream(10, 14)[..]);
        rb.consume(5);
        let (a, b) = rb.readable_slices();
        assert_eq!(a, &stream(11, 14)[..]);
        assert!(b.is_empty());
        rb.consume(usize::MAX);
        assert!(rb.is_empty());
        assert_eq!(rb.window(), 10);
        assert_eq!(rb.readable_slices(), (&[][..], &[][..]));
    }

    /// Stages `len` bytes into a ring of `cap` bytes whose in-order edge sits at index
    /// `shift + 1` (one unread byte keeps the ring from rewinding), so the copy splits at the
    /// ring's end after `cap - shift - 1` bytes; checks the sum and the bytes.
    fn check_stage_at(cap: usize, shift: usize, len: usize) {
        let mut rb = RecvBuffer::new(cap);
        if shift > 0 {
            rb.insert(0, &stream(0, shift + 1)).unwrap();
            let mut sink = vec![0u8; shift];
            rb.read(&mut sink);
        }
        let before = rb.len();
        let start = rb.len() + shift;
        let data = stream(start, start + len);
        let (n, sum) = rb.stage_with_sum(&data);
        assert_eq!(n, len.min(rb.window()));
        assert_eq!(
            sum,
            reference_sum(&data[..n]),
            "cap {cap} shift {shift} len {len}"
        );
        assert_eq!(rb.len(), before, "staging makes nothing readable");
        rb.commit(n);
        assert_eq!(rb.len(), before + n);
        let got = read_all(&mut rb);
        assert_eq!(got[before..], data[..n]);
        check_invariants(&rb);
    }

    #[test]
    fn stage_with_sum_wraps_the_ring_at_odd_and_even_points() {
        const CAP: usize = 16;
        for shift in 0..CAP {
            for len in 0..=CAP + 3 {
                check_stage_at(CAP, shift, len);
            }
        }
    }

    #[test]
    fn stage_with_sum_wraps_with_pieces_long_enough_for_vector_sums() {
        // Pieces of 128 bytes and more take the checksum's vector paths; both pieces should,
        // and the split should fall at odd and even points.
        const CAP: usize = 2048;
        for shift in [0, 1, 2, 3, 700, 701, 1023, 1024, 1500, 1501, 1919, 1920] {
            for len in [127, 128, 129, 255, 256, 257, 1000, 1001, 1500, 2047, 2048] {
                check_stage_at(CAP, shift, len);
            }
        }
    }

    #[test]
    fn stage_never_touches_readable_bytes() {
        let mut rb = RecvBuffer::new(16);
        rb.insert(0, &stream(0, 15)).unwrap();
        rb.consume(5); // head 5, 10 readable, edge at 15, 6 free bytes wrapping to 0..5
        let (n, sum) = rb.stage_with_sum(&[0xaa; 40]);
        assert_eq!(n, 6);
        assert_eq!(sum, reference_sum(&[0xaa; 6]));
        let (a, b) = rb.readable_slices();
        assert_eq!([a, b].concat(), stream(5, 15));
    }

    #[test]
    fn commit_after_stage_makes_bytes_readable() {
        let mut rb = RecvBuffer::new(100);
        let data = stream(0, 40);
        assert_eq!(rb.stage_with_sum(&data), (40, reference_sum(&data)));
        rb.commit(25);
        assert_eq!(rb.len(), 25);
        // The rest of the staging stays valid for a later commit; reading in between is fine.
        let mut first = [0u8; 10];
        rb.read(&mut first);
        rb.commit(100); // clamped to the 15 bytes still staged
        assert_eq!(rb.len(), 30);
        rb.commit(5); // nothing staged any more
        assert_eq!(rb.len(), 30);
        let mut all = first.to_vec();
        all.extend(read_all(&mut rb));
        assert_eq!(all, data);
        check_invariants(&rb);
    }

    #[test]
    fn staging_without_commit_leaves_nothing_readable() {
        let mut rb = RecvBuffer::new(100);
        rb.insert(0, &stream(0, 10)).unwrap();
        // A segment whose checksum fails: staged, never committed.
        let (n, _) = rb.stage_with_sum(&[0xee; 30]);
        assert_eq!(n, 30);
        assert_eq!(rb.len(), 10);
        assert_eq!(rb.window(), 90);
        // The retransmission arrives through the slow path and overwrites the junk.
        assert_eq!(rb.insert(0, &stream(10, 40)), Ok(30));
        rb.commit(30); // the insert discarded the staging
        assert_eq!(read_all(&mut rb), stream(0, 40));
        // Staging again then inserting elsewhere also discards it.
        rb.stage_with_sum(&[0xee; 8]);
        rb.insert(20, &stream(60, 70)).unwrap();
        rb.commit(8);
        assert!(rb.is_empty());
        check_invariants(&rb);
    }

    #[test]
    fn stage_is_refused_while_out_of_order_data_is_held() {
        let mut rb = RecvBuffer::new(100);
        rb.insert(10, &stream(10, 20)).unwrap();
        assert_eq!(rb.stage_with_sum(&[0xee; 15]), (0, 0));
        rb.commit(15);
        assert!(rb.is_empty());
        assert_eq!(ranges(&rb), [(10, 20)]);
        assert_eq!(rb.insert(0, &stream(0, 10)), Ok(20));
        assert_eq!(read_all(&mut rb), stream(0, 20));
    }

    /// RFC 9293 SHLD-31 (hold out-of-order data) with a large window: one segment lost in
    /// two across a 4 MiB window leaves about 1,450 islands, and the buffer holds them all
    /// (it held 32 and dropped the rest, which the sender then resent); the slots stop at
    /// one per 2 KiB of buffer, so a peer's tiny segments cannot grow them further.
    #[test]
    fn rfc9293_shld_31_a_large_window_holds_an_island_per_lost_segment() {
        const MSS: usize = 1448;
        let cap = 4 << 20;
        let mut rb = RecvBuffer::new(cap);
        let mut islands = 0;
        let mut at = MSS;
        while at + MSS <= cap {
            assert_eq!(
                rb.insert(at, &stream(at, at + MSS)),
                Ok(0),
                "island at {at}"
            );
            islands += 1;
            at += 2 * MSS;
        }
        assert_eq!(rb.out_of_order_ranges().count(), islands);
        assert!(islands > 1400);
        check_invariants(&rb);
        // One-byte islands two bytes apart fill the remaining slots, then are refused.
        let mut rb = RecvBuffer::new(cap);
        let max = max_ranges(cap);
        assert_eq!(max, 2048);
        for k in 0..max {
            assert_eq!(rb.insert(2 * k + 1, &[7]), Ok(0));
        }
        assert_eq!(rb.insert(2 * max + 1, &[7]), Err(ReassemblyFull));
        check_invariants(&rb);
    }

    #[test]
    fn reassembly_full_then_merging_inserts_still_succeed() {
        const MAX_RANGES: usize = MIN_RANGES;
        let cap = 4 * MAX_RANGES + 100;
        assert_eq!(
            max_ranges(cap),
            MIN_RANGES,
            "a small buffer keeps the minimum"
        );
        let mut rb = RecvBuffer::new(cap);
        for k in 0..MAX_RANGES {
            let s = 4 * k + 2;
            assert_eq!(rb.insert(s, &stream(s, s + 1)), Ok(0));
        }
        assert_eq!(rb.out_of_order_ranges().count(), MAX_RANGES);
        // A new island anywhere is refused and stores nothing.
        let far = 4 * MAX_RANGES + 10;
        assert_eq!(rb.insert(far, &stream(far, far + 3)), Err(ReassemblyFull));
        assert_eq!(rb.insert(4, &stream(4, 5)), Err(ReassemblyFull));
        assert_eq!(rb.range_containing(far), None);
        assert_eq!(rb.out_of_order_bytes(), MAX_RANGES);
        // Extending a range, merging two, and in-order data are accepted.
        assert_eq!(rb.insert(3, &stream(3, 4)), Ok(0)); // adjacent to [2,3)
        assert_eq!(rb.insert(4, &stream(4, 6)), Ok(0)); // adjacent to both: merges [2,4), [6,7)
        assert_eq!(rb.out_of_order_ranges().count(), MAX_RANGES - 1);
        assert_eq!(ranges(&rb)[0], (2, 7));
        // A slot is free again, so a new island fits.
        assert_eq!(rb.insert(far, &stream(far, far + 3)), Ok(0));
        assert_eq!(rb.insert(12, &stream(12, 13)), Err(ReassemblyFull));
        assert_eq!(rb.insert(0, &stream(0, 2)), Ok(7));
        check_invariants(&rb);
        // Fill everything and check the bytes.
        assert_eq!(rb.insert(0, &stream(7, far + 3)), Ok(far + 3 - 7));
        assert!(!rb.has_out_of_order());
        assert_eq!(read_all(&mut rb), stream(0, far + 3));
    }

    #[test]
    fn window_accounting() {
        let mut rb = RecvBuffer::new(64);
        assert_eq!(rb.capacity(), 64);
        assert_eq!(rb.window(), 64);
        rb.insert(40, &stream(40, 64)).unwrap();
        assert_eq!(rb.window(), 64, "out-of-order data lies inside the window");
        rb.insert(0, &stream(0, 10)).unwrap();
        assert_eq!(rb.window(), 54);
        assert_eq!(ranges(&rb), [(30, 54)]);
        rb.consume(4);
        assert_eq!(rb.window(), 58);
        // The range ends at the old right edge, still inside the (grown) window.
        assert_eq!(ranges(&rb), [(30, 54)]);
        rb.insert(0, &stream(10, 40)).unwrap();
        assert_eq!(rb.len(), 60);
        assert_eq!(rb.window(), 4);
        check_invariants(&rb);
    }

    #[test]
    fn the_ring_is_allocated_by_the_first_byte_and_released_when_empty() {
        let mut rb = RecvBuffer::new(1 << 20);
        assert!(!rb.is_allocated());
        assert_eq!(rb.window(), 1 << 20);
        assert_eq!(rb.insert(5, &stream(5, 9)), Ok(0));
        assert!(rb.is_allocated(), "out-of-order data needs the ring too");
        assert!(!rb.release(), "released while holding out-of-order data");
        assert_eq!(rb.insert(0, &stream(0, 5)), Ok(9));
        let mut out = [0u8; 16];
        assert_eq!(rb.read(&mut out), 9);
        assert!(rb.release());
        assert!(!rb.is_allocated());
        let (n, _) = rb.stage_with_sum(&stream(9, 20));
        assert_eq!(n, 11);
        rb.commit(n);
        assert_eq!(rb.read(&mut out), 11);
        assert_eq!(&out[..11], &stream(9, 20)[..]);
    }

    #[test]
    fn clear_drops_everything() {
        let mut rb = RecvBuffer::new(64);
        rb.insert(0, &stream(0, 10)).unwrap();
        rb.insert(20, &stream(20, 30)).unwrap();
        rb.clear();
        assert!(rb.is_empty());
        assert!(!rb.has_out_of_order());
        assert_eq!(rb.window(), 64);
        assert_eq!(rb.out_of_order_bytes(), 0);
        rb.commit(10);
        assert!(rb.is_empty());
        // Usable as new afterwards.
        assert_eq!(rb.insert(0, &stream(0, 64)), Ok(64));
        assert_eq!(read_all(&mut rb), stream(0, 64));
        check_invariants(&rb);
    }

    #[test]
    fn zero_capacity_stores_nothing_and_does_not_panic() {
        let mut rb = RecvBuffer::new(0);
        assert_eq!(rb.window(), 0);
        assert_eq!(rb.insert(0, &[1, 2, 3]), Ok(0));
        assert_eq!(rb.stage_with_sum(&[1, 2, 3]), (0, 0));
        rb.commit(3);
        rb.consume(3);
        assert_eq!(rb.read(&mut [0u8; 4]), 0);
        assert_eq!(rb.range_containing(0), None);
        check_invariants(&rb);
    }

    // ---------------------------------------------------------------------------------
    // Property tests against a bitmap model.

    /// The obvious model: which absolute stream bytes have arrived, RCV.NXT, and how many
    /// bytes the application has read.
    struct Model {
        cap: usize,
        have: Vec<bool>,
        nxt: usize,
        read: usize,
    }

    impl Model {
        fn new(cap: usize) -> Self {
            Model {
                cap,
                have: Vec::new(),
                nxt: 0,
                read: 0,
            }
        }

        fn window(&self) -> usize {
            self.cap - (self.nxt - self.read)
        }

        fn has(&self, pos: usize) -> bool {
            self.have.get(pos).copied().unwrap_or(false)
        }

        /// Out-of-order runs as absolute positions.
        fn runs_abs(&self) -> Vec<(usize, usize)> {
            let mut runs = Vec::new();
            let mut p = self.nxt;
            while p < self.have.len() {
                if self.have[p] {
                    let s = p;
                    while self.has(p) {
                        p += 1;
                    }
                    runs.push((s, p));
                } else {
                    p += 1;
                }
            }
            runs
        }

        fn runs(&self) -> Vec<(usize, usize)> {
            self.runs_abs()
                .into_iter()
                .map(|(s, e)| (s - self.nxt, e - self.nxt))
                .collect()
        }

        /// What `insert(offset, data of len)` must return, applying it to the model.
        fn insert(&mut self, offset: usize, len: usize) -> Result<usize, ReassemblyFull> {
            let win = self.window();
            if len == 0 || offset >= win {
                return Ok(0);
            }
            let s = self.nxt + offset;
            let e = s + len.min(win - offset);
            if offset > 0 {
                let runs = self.runs_abs();
                let touches = runs.iter().any(|&(a, b)| a <= e && b >= s);
                if !touches && runs.len() == max_ranges(self.cap) {
                    return Err(ReassemblyFull);
                }
            }
            if self.have.len() < e {
                self.have.resize(e, false);
            }
            self.have[s..e].fill(true);
            Ok(self.advance())
        }

        fn advance(&mut self) -> usize {
            let old = self.nxt;
            while self.has(self.nxt) {
                self.nxt += 1;
            }
            self.nxt - old
        }

        fn commit(&mut self, n: usize) {
            let e = self.nxt + n;
            if self.have.len() < e {
                self.have.resize(e, false);
            }
            self.have[self.nxt..e].fill(true);
            self.advance();
        }

        fn check(&self, rb: &RecvBuffer) {
            check_invariants(rb);
            assert_eq!(rb.len(), self.nxt - self.read);
            assert_eq!(rb.window(), self.window());
            assert_eq!(ranges(rb), self.runs());
        }
    }

    /// xorshift64*: cheap deterministic randomness inside one proptest case.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        /// Uniform-ish in `0..n` (0 when `n == 0`).
        fn below(&mut self, n: usize) -> usize {
            if n == 0 {
                0
            } else {
                (self.next() % n as u64) as usize
            }
        }
        fn chance(&mut self, one_in: usize) -> bool {
            self.below(one_in) == 0
        }
    }

    /// Reads up to `max` bytes, alternating between the copying and the zero-copy API, and
    /// checks them against the stream.
    fn app_read(rb: &mut RecvBuffer, model: &mut Model, rng: &mut Rng, data: &[u8], max: usize) {
        let want = rng.below(max + 1);
        let got = if rng.chance(2) {
            let mut buf = vec![0u8; want];
            let n = rb.read(&mut buf);
            buf.truncate(n);
            buf
        } else {
            let (a, b) = rb.readable_slices();
            let mut v = [a, b].concat();
            v.truncate(want);
            rb.consume(v.len());
            v
        };
        assert_eq!(got.len(), want.min(model.nxt - model.read));
        assert_eq!(got[..], data[model.read..model.read + got.len()]);
        model.read += got.len();
    }

    proptest! {
        #![proptest_config(ackclock_testkit::proptest_config(256))]

        /// A whole transfer: a sender retransmits random, overlapping segments inside the
        /// advertised window (trimmed as the engine trims them, RFC 9293 §3.10.7.4) in random
        /// order, sometimes through the fast path, while the application reads random
        /// amounts. The application must read exactly the stream, and the buffer must match
        /// the bitmap model at every step.
        #[test]
        fn transfer_delivers_the_stream_exactly(
            stream_len in 0usize..20_000,
            cap in 1usize..8192,
            max_seg in 1usize..3000,
            seed in any::<u64>(),
        ) {
            let data = stream(0, stream_len);
            let mut rng = Rng(seed | 1);
            let mut rb = RecvBuffer::new(cap);
            let mut model = Model::new(cap);
            let mut steps = 0u64;
            while model.read < stream_len {
                steps += 1;
                prop_assert!(steps < 2_000_000, "no progress");
                let win = model.window();
                if win == 0 || rng.chance(3) {
                    app_read(&mut rb, &mut model, &mut rng, &data, cap);
                    model.check(&rb);
                    continue;
                }
                // The sender's segment: from slightly before RCV.NXT (old duplicates) to
                // the right window edge; one in eight is the retransmission of the first
                // unacknowledged byte a retransmission timer would send.
                let start = if rng.chance(8) {
                    model.nxt
                } else {
                    let slack = rng.below(2000).min(model.nxt);
                    model.nxt - slack + rng.below(slack + win)
                };
                let end = (start + 1 + rng.below(max_seg)).min(stream_len);
                if start >= end {
                    continue;
                }
                // The engine cuts off what is already received...
                let s = start.max(model.nxt);
                // ...and usually the part beyond the window; sometimes leave that to the
                // buffer.
                let e = if rng.chance(2) { end.min(model.nxt + win) } else { end };
                if s >= e {
                    continue;
                }
                let offset = s - model.nxt;
                let seg = &data[s..e];
                if offset == 0 && !rb.has_out_of_order() && rng.chance(2) {
                    let (n, sum) = rb.stage_with_sum(seg);
                    prop_assert_eq!(n, seg.len().min(win));
                    prop_assert_eq!(sum, reference_sum(&seg[..n]));
                    // Checksum failure (no commit), partial or whole commit.
                    let c = match rng.below(4) {
                        0 => 0,
                        1 => rng.below(n + 1),
                        _ => n,
                    };
                    if c > 0 {
                        rb.commit(c);
                    }
                    model.commit(c);
                } else {
                    let want = model.insert(offset, seg.len());
                    prop_assert_eq!(rb.insert(offset, seg), want);
                    if want.is_ok() && model.has(s) && s > model.nxt {
                        // RFC 2018 §4: the block holding the segment just received.
                        let r = rb.range_containing(offset);
                        prop_assert!(matches!(r, Some((a, b)) if a <= offset && offset < b));
                    }
                }
                model.check(&rb);
            }
            prop_assert_eq!(model.read, stream_len);
            prop_assert!(rb.is_empty());
        }

        /// Arbitrary operations, including offsets far beyond the window, empty segments and
        /// enough small islands to exhaust the range slots, compared with the bitmap model
        /// after every step.
        #[test]
        fn matches_bitmap_model(
            cap in 1usize..600,
            ops in prop::collection::vec(
                prop_oneof![
                    6 => (0usize..700, 0usize..24).prop_map(|(o, l)| (0u8, o, l)),
                    // Tiny islands, to exhaust the range slots.
                    8 => (0usize..160, 1usize..2).prop_map(|(o, l)| (0u8, o, l)),
                    1 => (0usize..4, 0usize..24).prop_map(|(o, l)| (0u8, usize::MAX - o, l)),
                    2 => (0usize..200, Just(0usize)).prop_map(|(n, _)| (1u8, n, 0)),
                    1 => (0usize..100, 0usize..120).prop_map(|(l, c)| (2u8, l, c)),
                ],
                0..400,
            ),
        ) {
            let mut rb = RecvBuffer::new(cap);
            let mut model = Model::new(cap);
            let mut rng = Rng(0x1234_5678_9abc_def1);
            let all = stream(0, 8 * 700 * 400);
            for (kind, a, b) in ops {
                match kind {
                    0 => {
                        let (offset, len) = (a, b);
                        let seg = match model.nxt.checked_add(offset) {
                            Some(s) if s.saturating_add(len) <= all.len() => all[s..s + len].to_vec(),
                            _ => vec![0xee; len],
                        };
                        let want = model.insert(offset, len);
                        prop_assert_eq!(rb.insert(offset, &seg), want);
                    }
                    1 => app_read(&mut rb, &mut model, &mut rng, &all, a),
                    _ => {
                        let s = model.nxt;
                        let seg = &all[s..s + a];
                        let (n, sum) = rb.stage_with_sum(seg);
                        if model.runs_abs().is_empty() {
                            prop_assert_eq!(n, a.min(model.window()));
                            prop_assert_eq!(sum, reference_sum(&seg[..n]));
                            let c = b.min(n);
                            rb.commit(b);
                            model.commit(c);
                        } else {
                            prop_assert_eq!((n, sum), (0, 0));
                            rb.commit(b);
                        }
                    }
                }
                model.check(&rb);
            }
            // Everything still readable is the stream.
            let rest = read_all(&mut rb);
            prop_assert_eq!(&rest[..], &all[model.read..model.nxt]);
        }
    }
}
