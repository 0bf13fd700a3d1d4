//! The bookkeeping every queue discipline shares, written once. This is the shape of ns-3's
//! `QueueDisc`: the base class counts arrivals, drops and departures, and a discipline's
//! `DoEnqueue`/`DoDequeue` write only its drop and schedule rule.
//!
//! A [`Queue`] is where the packets are (its store) with the bytes they take, the limits,
//! and the [`QueueStats`]. Each event (arrival, refusal, admission, eviction, departure) is
//! one method that moves the packet and counts it, so `arrived == dequeued + dropped() +
//! len_pkts()` holds by construction. The packets are counted once, by the store.
//!
//! - [`Fifo`]: one FIFO of timestamped packets, preallocated to its limits: the whole queue
//!   of drop-tail, random drop, RED and CoDel.
//! - [`FlowQueues`]: per-flow FIFOs threaded through one [`Slab`], under limits on their
//!   total: the queues of DRR and FQ-CoDel, whose rules pick the list.
//! - [`bookkeeping_methods!`]: the [`Qdisc`](super::Qdisc) methods that only read or reset
//!   the bookkeeping.

use super::codel::CodelQueue;
use super::slab::{FlowList, Slab};
use super::{DropReason, Enqueue};
use crate::packet::PacketLike;
use crate::stats::QueueStats;
use ackclock_wire::{Duration, Instant};
use std::collections::VecDeque;

/// A [`Queue`]'s packet and byte limits (`usize::MAX`: no limit).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub pkts: usize,
    pub bytes: usize,
}

impl Limits {
    pub fn new(pkts: Option<usize>, bytes: Option<usize>) -> Self {
        Limits {
            pkts: pkts.unwrap_or(usize::MAX),
            bytes: bytes.unwrap_or(usize::MAX),
        }
    }
    /// Whether a packet of `len` bytes fits in a queue holding `pkts` packets and `bytes` bytes.
    #[inline]
    pub fn fits(&self, pkts: usize, bytes: usize, len: usize) -> bool {
        pkts < self.pkts && bytes.saturating_add(len) <= self.bytes
    }
    /// How many packets to preallocate room for: the packet limit, or for a byte limit the
    /// number of the smallest IPv4/TCP packets (40 bytes, a bare ACK) that fit.
    pub fn capacity_hint(&self) -> usize {
        let by_bytes = if self.bytes == usize::MAX {
            usize::MAX
        } else {
            self.bytes / 40 + 1
        };
        self.pkts.min(by_bytes).min(1 << 20)
    }
}

/// Where a [`Queue`]'s packets are; it counts them.
pub(crate) trait Store {
    fn pkts(&self) -> usize;
}

/// A queued packet and the time it arrived (queueing delay = dequeue time - `enq`).
#[derive(Debug)]
pub(crate) struct Entry<P> {
    pkt: P,
    enq: Instant,
}

impl<P> Store for VecDeque<Entry<P>> {
    #[inline]
    fn pkts(&self) -> usize {
        self.len()
    }
}

impl<P> Store for Slab<P> {
    #[inline]
    fn pkts(&self) -> usize {
        self.used()
    }
}

/// Packets in a store, the bytes they take, the limits, and the statistics (see the module
/// doc).
pub(crate) struct Queue<S> {
    store: S,
    bytes: usize,
    limits: Limits,
    stats: QueueStats,
}

/// One FIFO of timestamped packets.
pub(crate) type Fifo<P> = Queue<VecDeque<Entry<P>>>;

/// Per-flow FIFOs in one [`Slab`] sized by the packet limit. The lists ([`FlowList`])
/// belong to the discipline's flows; the limits and the statistics are for all of them
/// together.
pub(crate) type FlowQueues<P> = Queue<Slab<P>>;

impl<S: Store> Queue<S> {
    fn with_store(store: S, limits: Limits) -> Self {
        Queue {
            store,
            bytes: 0,
            limits,
            stats: QueueStats::new(),
        }
    }

    /// Counts an arriving packet; returns its length in bytes.
    #[inline]
    pub fn arrive<P: PacketLike>(&mut self, pkt: &P) -> usize {
        let len = pkt.len_bytes();
        self.stats.on_arrival(len);
        len
    }

    /// Whether a packet of `len` bytes fits within the limits.
    #[inline]
    pub fn fits(&self, len: usize) -> bool {
        self.limits.fits(self.store.pkts(), self.bytes, len)
    }

    /// Whether a packet of `len` bytes fits once one queued packet of `victim_len` bytes is
    /// pushed out. The disciplines that push out drop at most one packet per arrival, so
    /// when one victim would not make room they refuse the arrival instead.
    #[inline]
    pub fn fits_instead_of(&self, victim_len: usize, len: usize) -> bool {
        self.limits
            .fits(self.store.pkts() - 1, self.bytes - victim_len, len)
    }

    /// Refuses an arriving packet (ns-3's `DropBeforeEnqueue`).
    #[inline]
    pub fn refuse<P>(&mut self, pkt: P, len: usize, why: DropReason) -> Enqueue<P> {
        self.stats.on_drop(len, why);
        Enqueue::Dropped(pkt, why)
    }

    /// An arriving packet was marked CE instead of being dropped early (RFC 3168 §5); it is
    /// still to be admitted.
    #[inline]
    pub fn marked(&mut self) {
        self.stats.marked += 1;
    }

    /// A packet of `len` bytes was just put in the store.
    #[inline]
    fn admitted(&mut self, len: usize) {
        self.bytes += len;
        self.stats.on_admit(self.store.pkts(), self.bytes);
    }

    /// A queued packet of `len` bytes was just taken out of the store to make room.
    #[inline]
    fn evicted(&mut self, len: usize, why: DropReason) {
        self.bytes -= len;
        self.stats.on_drop(len, why);
    }

    /// A queued packet of `len` bytes was just taken out of the store for the link.
    #[inline]
    fn departed(&mut self, len: usize, sojourn: Duration) {
        self.bytes -= len;
        self.stats.on_dequeue(len, sojourn);
    }

    #[inline]
    pub fn len_pkts(&self) -> usize {
        self.store.pkts()
    }
    #[inline]
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.store.pkts() == 0
    }
    pub fn stats(&self) -> &QueueStats {
        &self.stats
    }
    pub fn reset_stats(&mut self) {
        self.stats.reset();
    }
}

impl<P: PacketLike> Fifo<P> {
    /// An empty FIFO with room for [`Limits::capacity_hint`] packets, so that enqueue and
    /// dequeue do not allocate.
    pub fn new(limits: Limits) -> Self {
        Queue::with_store(VecDeque::with_capacity(limits.capacity_hint()), limits)
    }

    /// Appends an arriving packet of `len` bytes, without checking the limits.
    #[inline]
    pub fn admit(&mut self, now: Instant, pkt: P, len: usize) {
        self.store.push_back(Entry { pkt, enq: now });
        self.admitted(len);
    }

    /// Drop-tail's rule, which is also the hard limit of every AQM: appends the packet if it
    /// fits, else refuses it as an overflow.
    #[inline]
    pub fn admit_or_overflow(&mut self, now: Instant, pkt: P, len: usize) -> Enqueue<P> {
        if !self.fits(len) {
            return self.refuse(pkt, len, DropReason::Overflow);
        }
        self.admit(now, pkt, len);
        Enqueue::Queued
    }

    /// The length in bytes of the queued packet at `index` (0 is the head).
    #[inline]
    pub fn len_at(&self, index: usize) -> usize {
        self.store[index].pkt.len_bytes()
    }

    /// Pushes out the queued packet at `index` (0 is the head) to make room for an arrival.
    #[inline]
    pub fn evict(&mut self, index: usize, why: DropReason) -> P {
        let Some(e) = self.store.remove(index) else {
            unreachable!("victim index is below the queue length")
        };
        self.evicted(e.pkt.len_bytes(), why);
        e.pkt
    }

    /// Sends the head packet, counting its sojourn time.
    #[inline]
    pub fn pop(&mut self, now: Instant) -> Option<P> {
        let e = self.store.pop_front()?;
        self.departed(e.pkt.len_bytes(), now - e.enq);
        Some(e.pkt)
    }

    /// The FIFO as CoDel pulls from it, and the statistics apart. CoDel's control law
    /// (RFC 8289 §5) takes a packet off the head first and only then decides whether to
    /// send, mark or drop it, so the queue it pulls from keeps the byte count while the
    /// caller counts each verdict into the statistics.
    #[inline]
    pub fn codel_parts(&mut self) -> (FifoHead<'_, P>, &mut QueueStats) {
        let Queue {
            store,
            bytes,
            stats,
            ..
        } = self;
        (FifoHead { q: store, bytes }, stats)
    }
}

/// A [`Fifo`]'s packets and byte count without its statistics (see [`Fifo::codel_parts`]).
pub(crate) struct FifoHead<'a, P> {
    q: &'a mut VecDeque<Entry<P>>,
    bytes: &'a mut usize,
}

impl<P: PacketLike> CodelQueue<P> for FifoHead<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<(P, Instant)> {
        let e = self.q.pop_front()?;
        *self.bytes -= e.pkt.len_bytes();
        Some((e.pkt, e.enq))
    }
    #[inline]
    fn backlog_bytes(&self) -> usize {
        *self.bytes
    }
}

impl<P: PacketLike> FlowQueues<P> {
    /// Room for `limit_pkts` packets in all, allocated once.
    pub fn new(limit_pkts: usize, limit_bytes: Option<usize>) -> Self {
        let slab = Slab::new(limit_pkts);
        let limits = Limits::new(Some(slab.capacity()), limit_bytes);
        Queue::with_store(slab, limits)
    }

    /// Appends an arriving packet of `len` bytes to `list`, once [`fits`](Self::fits) or an
    /// eviction made room.
    #[inline]
    pub fn admit(&mut self, list: &mut FlowList, now: Instant, pkt: P, len: usize) {
        if self.store.push_back(list, pkt, len, now).is_err() {
            unreachable!("admission checked the pool");
        }
        self.admitted(len);
    }

    /// Length in bytes of the packet at the head of `list`.
    #[inline]
    pub fn front_len(&self, list: &FlowList) -> Option<usize> {
        self.store.front_len(list)
    }

    /// Length in bytes of the packet at the tail of `list`.
    #[inline]
    pub fn back_len(&self, list: &FlowList) -> Option<usize> {
        self.store.back_len(list)
    }

    /// Pushes out the head of `list` to make room for an arrival.
    #[inline]
    pub fn evict_front(&mut self, list: &mut FlowList, why: DropReason) -> Option<P> {
        let (pkt, _, len) = self.store.pop_front(list)?;
        self.evicted(len, why);
        Some(pkt)
    }

    /// Pushes out the tail of `list` to make room for an arrival.
    #[inline]
    pub fn evict_back(&mut self, list: &mut FlowList, why: DropReason) -> Option<P> {
        let (pkt, _, len) = self.store.pop_back(list)?;
        self.evicted(len, why);
        Some(pkt)
    }

    /// Sends the head of `list`, counting its sojourn time.
    #[inline]
    pub fn pop(&mut self, list: &mut FlowList, now: Instant) -> Option<P> {
        let (pkt, enq, len) = self.store.pop_front(list)?;
        self.departed(len, now - enq);
        Some(pkt)
    }

    /// `list` as CoDel pulls from it, and the statistics apart (see [`Fifo::codel_parts`]).
    /// CoDel's "backlog <= MAXPACKET" test sees the bytes of all the lists, as Linux's
    /// FQ-CoDel does.
    #[inline]
    pub fn codel_parts<'a>(
        &'a mut self,
        list: &'a mut FlowList,
    ) -> (FlowHead<'a, P>, &'a mut QueueStats) {
        let Queue {
            store,
            bytes,
            stats,
            ..
        } = self;
        (
            FlowHead {
                slab: store,
                list,
                bytes,
            },
            stats,
        )
    }
}

/// One list of a [`FlowQueues`] and the byte count of all of them, without the statistics
/// (see [`FlowQueues::codel_parts`]).
pub(crate) struct FlowHead<'a, P> {
    slab: &'a mut Slab<P>,
    list: &'a mut FlowList,
    bytes: &'a mut usize,
}

impl<P> CodelQueue<P> for FlowHead<'_, P> {
    #[inline]
    fn pop(&mut self) -> Option<(P, Instant)> {
        let (p, enq, len) = self.slab.pop_front(self.list)?;
        *self.bytes -= len;
        Some((p, enq))
    }
    #[inline]
    fn backlog_bytes(&self) -> usize {
        *self.bytes
    }
}

/// The [`Qdisc`](super::Qdisc) methods that only read or reset the bookkeeping, written in a
/// discipline's `impl Qdisc` as `bookkeeping_methods!(field);` where `field` holds its
/// [`Queue`].
macro_rules! bookkeeping_methods {
    ($field:ident) => {
        fn len_pkts(&self) -> usize {
            self.$field.len_pkts()
        }
        fn len_bytes(&self) -> usize {
            self.$field.len_bytes()
        }
        fn stats(&self) -> &$crate::stats::QueueStats {
            self.$field.stats()
        }
        fn reset_stats(&mut self) {
            self.$field.reset_stats();
        }
    };
}
pub(crate) use bookkeeping_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::TestPacket;
    use crate::qdisc::test_util::t_ms;

    fn pkt(id: u64, len: usize) -> TestPacket {
        TestPacket::new(id, 0, len)
    }

    /// Every counter of one FIFO after a script that takes each path once.
    #[test]
    fn each_event_counts_once_in_the_backlog_and_the_stats() {
        let mut f = Fifo::new(Limits::new(Some(3), Some(2500)));
        let len = f.arrive(&pkt(0, 1000));
        assert_eq!(len, 1000);
        f.admit(t_ms(0.0), pkt(0, 1000), len);
        let len = f.arrive(&pkt(1, 1000));
        assert_eq!(
            f.admit_or_overflow(t_ms(1.0), pkt(1, 1000), len),
            Enqueue::Queued
        );
        // 2000 + 1000 > 2500 bytes; it fits once the 1000-byte head is pushed out, and a
        // 1600-byte packet would not.
        let len = f.arrive(&pkt(2, 1000));
        assert!(!f.fits(len));
        assert!(f.fits_instead_of(f.len_at(0), len));
        assert!(!f.fits_instead_of(f.len_at(0), 1600));
        assert_eq!(f.evict(0, DropReason::RandomDrop).id, 0);
        f.admit(t_ms(1.0), pkt(2, 1000), len);
        let len = f.arrive(&pkt(3, 1000));
        match f.admit_or_overflow(t_ms(1.0), pkt(3, 1000), len) {
            Enqueue::Dropped(p, DropReason::Overflow) => assert_eq!(p.id, 3),
            other => panic!("{other:?}"),
        }
        assert_eq!((f.len_pkts(), f.len_bytes()), (2, 2000));
        assert_eq!(f.pop(t_ms(4.0)).unwrap().id, 1);
        assert_eq!(f.pop(t_ms(5.0)).unwrap().id, 2);
        assert!(f.pop(t_ms(5.0)).is_none());
        assert!(f.is_empty());
        let s = f.stats();
        assert_eq!((s.arrived, s.enqueued, s.dequeued), (4, 3, 2));
        assert_eq!(
            (s.dropped_overflow, s.dropped_random, s.dropped()),
            (1, 1, 2)
        );
        assert_eq!(
            (s.bytes_in, s.bytes_out, s.bytes_dropped),
            (4000, 2000, 2000)
        );
        assert_eq!((s.max_len_pkts, s.max_len_bytes), (2, 2000));
        // Sojourn times 3 ms and 4 ms.
        assert_eq!(s.mean_delay(), Some(Duration::from_micros(3500)));
        f.reset_stats();
        assert_eq!(f.stats(), &QueueStats::new());
    }

    #[test]
    fn the_packet_limit_and_the_byte_limit_each_refuse() {
        let mut f = Fifo::new(Limits::new(Some(2), None));
        for i in 0..2 {
            assert!(f
                .admit_or_overflow(t_ms(0.0), pkt(i, 1500), 1500)
                .is_queued());
        }
        assert!(!f.fits(1));
        let f = Fifo::<TestPacket>::new(Limits::new(None, Some(100)));
        assert!(f.fits(100));
        assert!(!f.fits(101));
        assert!(!f.fits(usize::MAX), "no overflow in the byte sum");
    }

    /// CoDel takes packets through [`FifoHead`], which moves the byte count and leaves the
    /// counting of each packet to the caller.
    #[test]
    fn codel_parts_move_the_bytes_and_leave_the_stats_to_the_caller() {
        let mut f = Fifo::new(Limits::new(Some(10), None));
        f.admit(t_ms(0.0), pkt(0, 300), 300);
        f.admit(t_ms(1.0), pkt(1, 200), 200);
        let (mut head, stats) = f.codel_parts();
        let (p, enq) = head.pop().unwrap();
        assert_eq!((p.id, enq), (0, t_ms(0.0)));
        assert_eq!(head.backlog_bytes(), 200);
        stats.on_drop(p.len, DropReason::Codel);
        assert_eq!((f.len_pkts(), f.len_bytes()), (1, 200));
        assert_eq!(f.stats().dropped_codel, 1);
        assert_eq!(f.stats().dequeued, 0);
    }

    /// The per-flow queues count like one FIFO: every list's packets against one pair of
    /// limits and one set of statistics.
    #[test]
    fn flow_queues_count_all_lists_together() {
        let mut q = FlowQueues::new(3, Some(2000));
        let (mut a, mut b) = (FlowList::default(), FlowList::default());
        for (i, to_b) in [false, false, true].into_iter().enumerate() {
            let list = if to_b { &mut b } else { &mut a };
            let p = pkt(i as u64, 600);
            let len = q.arrive(&p);
            assert!(q.fits(len));
            q.admit(list, t_ms(0.0), p, len);
        }
        // Three packets: the packet limit (the slab's size) is reached before the bytes.
        let len = q.arrive(&pkt(3, 100));
        assert!(!q.fits(len));
        assert!(q.fits_instead_of(q.back_len(&a).unwrap(), len));
        assert_eq!(q.evict_back(&mut a, DropReason::Overflow).unwrap().id, 1);
        q.admit(&mut b, t_ms(1.0), pkt(3, 100), len);
        assert_eq!(q.front_len(&b), Some(600));
        assert_eq!(q.evict_front(&mut b, DropReason::Overflow).unwrap().id, 2);
        assert_eq!((q.len_pkts(), q.len_bytes()), (2, 700));
        // CoDel's view of list `a` sees the bytes of both lists.
        let (mut head, stats) = q.codel_parts(&mut a);
        let (p, _) = head.pop().unwrap();
        assert_eq!((p.id, head.backlog_bytes()), (0, 100));
        stats.on_drop(p.len, DropReason::Codel);
        assert_eq!(q.pop(&mut b, t_ms(3.0)).unwrap().id, 3);
        assert!(q.pop(&mut b, t_ms(3.0)).is_none());
        assert!(q.is_empty());
        let s = q.stats();
        assert_eq!((s.arrived, s.enqueued, s.dequeued), (4, 4, 1));
        assert_eq!((s.dropped_overflow, s.dropped_codel), (2, 1));
        assert_eq!(
            (s.bytes_in, s.bytes_out, s.bytes_dropped),
            (1900, 100, 1800)
        );
        assert_eq!((s.max_len_pkts, s.max_len_bytes), (3, 1800));
        assert_eq!(s.mean_delay(), Some(Duration::from_millis(2)));
    }
}
