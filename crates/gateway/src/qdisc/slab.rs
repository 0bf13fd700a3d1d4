//! A fixed pool of packet slots threaded into per-flow FIFOs (doubly linked, by index), so
//! the fair queues hold any mix of flows in memory sized once by the packet limit: no
//! per-flow buffers, no allocation per packet.

use ackclock_wire::Instant;

pub(crate) const NIL: u32 = u32::MAX;

struct Slot<P> {
    pkt: Option<P>,
    enq: Instant,
    len: usize,
    prev: u32,
    next: u32,
}

/// One FIFO threaded through a [`Slab`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct FlowList {
    head: u32,
    tail: u32,
    pub pkts: usize,
    pub bytes: usize,
}

impl Default for FlowList {
    fn default() -> Self {
        FlowList {
            head: NIL,
            tail: NIL,
            pkts: 0,
            bytes: 0,
        }
    }
}

impl FlowList {
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

pub(crate) struct Slab<P> {
    slots: Vec<Slot<P>>,
    free: u32,
    used: usize,
}

impl<P> Slab<P> {
    /// A pool of exactly `capacity` slots.
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.min(u32::MAX as usize - 1);
        let mut slots = Vec::with_capacity(capacity);
        for i in 0..capacity {
            slots.push(Slot {
                pkt: None,
                enq: Instant::ZERO,
                len: 0,
                prev: NIL,
                next: if i + 1 < capacity {
                    (i + 1) as u32
                } else {
                    NIL
                },
            });
        }
        Slab {
            slots,
            free: if capacity > 0 { 0 } else { NIL },
            used: 0,
        }
    }

    /// How many packets the pool holds when full.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[cfg(test)]
    pub fn is_full(&self) -> bool {
        self.free == NIL
    }

    /// How many slots hold a packet.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Appends to `list`. Returns the packet back if the pool is full.
    pub fn push_back(
        &mut self,
        list: &mut FlowList,
        pkt: P,
        len: usize,
        enq: Instant,
    ) -> Result<(), P> {
        if self.free == NIL {
            return Err(pkt);
        }
        let i = self.free;
        let s = &mut self.slots[i as usize];
        self.free = s.next;
        s.pkt = Some(pkt);
        s.enq = enq;
        s.len = len;
        s.prev = list.tail;
        s.next = NIL;
        if list.tail == NIL {
            list.head = i;
        } else {
            self.slots[list.tail as usize].next = i;
        }
        list.tail = i;
        list.pkts += 1;
        list.bytes += len;
        self.used += 1;
        Ok(())
    }

    fn unlink(&mut self, list: &mut FlowList, i: u32) -> (P, Instant, usize) {
        let (prev, next) = {
            let s = &self.slots[i as usize];
            (s.prev, s.next)
        };
        if prev == NIL {
            list.head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
        let s = &mut self.slots[i as usize];
        let pkt = s.pkt.take().expect("linked slot holds a packet");
        let out = (pkt, s.enq, s.len);
        s.next = self.free;
        s.prev = NIL;
        self.free = i;
        list.pkts -= 1;
        list.bytes -= out.2;
        self.used -= 1;
        out
    }

    pub fn pop_front(&mut self, list: &mut FlowList) -> Option<(P, Instant, usize)> {
        (list.head != NIL).then(|| self.unlink(list, list.head))
    }

    pub fn pop_back(&mut self, list: &mut FlowList) -> Option<(P, Instant, usize)> {
        (list.tail != NIL).then(|| self.unlink(list, list.tail))
    }

    /// Length in bytes of the packet at the head of `list`.
    pub fn front_len(&self, list: &FlowList) -> Option<usize> {
        (list.head != NIL).then(|| self.slots[list.head as usize].len)
    }

    /// Length in bytes of the packet at the tail of `list`.
    pub fn back_len(&self, list: &FlowList) -> Option<usize> {
        (list.tail != NIL).then(|| self.slots[list.tail as usize].len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_lists_keep_fifo_order_and_recycle_slots() {
        let mut s: Slab<u32> = Slab::new(4);
        let (mut a, mut b) = (FlowList::default(), FlowList::default());
        s.push_back(&mut a, 1, 10, Instant::ZERO).unwrap();
        s.push_back(&mut b, 100, 20, Instant::ZERO).unwrap();
        s.push_back(&mut a, 2, 10, Instant::ZERO).unwrap();
        s.push_back(&mut a, 3, 10, Instant::ZERO).unwrap();
        assert!(s.is_full());
        assert_eq!(s.push_back(&mut b, 101, 1, Instant::ZERO), Err(101));
        assert_eq!((a.pkts, a.bytes, b.pkts, b.bytes), (3, 30, 1, 20));
        assert_eq!(s.pop_back(&mut a).unwrap().0, 3);
        assert_eq!(s.pop_front(&mut a).unwrap().0, 1);
        s.push_back(&mut b, 101, 5, Instant::ZERO).unwrap();
        s.push_back(&mut b, 102, 5, Instant::ZERO).unwrap();
        assert_eq!(s.front_len(&b), Some(20));
        assert_eq!(s.back_len(&b), Some(5));
        let drained: Vec<u32> = std::iter::from_fn(|| s.pop_front(&mut b).map(|x| x.0)).collect();
        assert_eq!(drained, vec![100, 101, 102]);
        assert_eq!(s.pop_front(&mut a).unwrap().0, 2);
        assert!(a.is_empty() && b.is_empty());
        assert_eq!(s.used(), 0);
    }
}
