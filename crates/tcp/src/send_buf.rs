//! The send buffer: a fixed ring holding the bytes from SND.UNA onward (sent but not yet
//! acknowledged, then not yet sent). Its capacity is the socket buffer of the seeds'
//! experiments (e.g. the 1..17-packet sweep of seed 000, Oct 1988); it never grows, is
//! allocated when the application first writes, and can be given back when empty.

/// The send buffer of one connection: a ring of fixed capacity holding the bytes from
/// SND.UNA onward. See the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct SendBuffer {
    /// Empty until the first write, then `cap` bytes.
    ring: Box<[u8]>,
    cap: usize,
    /// Ring index of the byte at SND.UNA.
    head: usize,
    len: usize,
}

impl SendBuffer {
    /// An empty buffer of `capacity` bytes (at least 1). No memory is allocated until the
    /// first write.
    pub(crate) fn new(capacity: usize) -> Self {
        SendBuffer {
            ring: Box::default(),
            cap: capacity.max(1),
            head: 0,
            len: 0,
        }
    }
    /// The capacity in bytes, allocated or not.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }
    /// Gives the ring's memory back when it holds nothing; the next write allocates it
    /// again. Returns whether it did.
    pub(crate) fn release(&mut self) -> bool {
        if self.len == 0 && !self.ring.is_empty() {
            self.ring = Box::default();
            self.head = 0;
            return true;
        }
        false
    }
    /// Bytes held (unacknowledged plus unsent).
    pub(crate) fn len(&self) -> usize {
        self.len
    }
    /// True when the buffer holds nothing.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes that can still be written: capacity minus `len`.
    pub(crate) fn free(&self) -> usize {
        self.cap - self.len
    }
    /// `(a + b) % capacity` for `a < capacity` and `b <= capacity`, with a compare instead
    /// of a 64-bit division (as `RecvBuffer` does).
    #[inline]
    fn wrap_add(&self, a: usize, b: usize) -> usize {
        let room = self.cap - b;
        if a >= room {
            a - room
        } else {
            a + b
        }
    }

    /// Appends as much of `data` as fits; returns the count.
    pub(crate) fn write(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.free());
        if n == 0 {
            return 0;
        }
        if self.ring.is_empty() {
            self.ring = vec![0u8; self.cap].into_boxed_slice();
            self.head = 0;
        }
        let cap = self.cap;
        let tail = self.wrap_add(self.head, self.len);
        let first = n.min(cap - tail);
        self.ring[tail..tail + first].copy_from_slice(&data[..first]);
        self.ring[..n - first].copy_from_slice(&data[first..n]);
        self.len += n;
        n
    }
    /// Lends `f` the free space after the last byte, up to the end of the ring (one
    /// contiguous slice, so at most `free()` bytes; empty when the buffer is full); `f`
    /// writes its data at the start of that slice and returns how many bytes it wrote
    /// (clamped to the slice) with its own result. The zero-copy form of
    /// [`write`](Self::write): the application produces its bytes in the ring.
    pub(crate) fn write_with<R>(&mut self, f: impl FnOnce(&mut [u8]) -> (usize, R)) -> R {
        if self.free() == 0 {
            return f(&mut []).1;
        }
        if self.ring.is_empty() {
            self.ring = vec![0u8; self.cap].into_boxed_slice();
            self.head = 0;
        }
        let tail = self.wrap_add(self.head, self.len);
        let room = self.free().min(self.cap - tail);
        let (n, r) = f(&mut self.ring[tail..tail + room]);
        self.len += n.min(room);
        r
    }
    /// Up to `len` bytes starting `offset` bytes after SND.UNA, as at most two slices (the
    /// ring may wrap). Shorter if the buffer holds less.
    #[inline]
    pub(crate) fn slices(&self, offset: usize, len: usize) -> (&[u8], &[u8]) {
        if offset >= self.len {
            return (&[], &[]);
        }
        let len = len.min(self.len - offset);
        let cap = self.cap;
        let start = self.wrap_add(self.head, offset);
        let first = len.min(cap - start);
        (&self.ring[start..start + first], &self.ring[..len - first])
    }
    /// Frees `n` acknowledged bytes from the front.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = self.wrap_add(self.head, n);
        self.len -= n;
        if self.len == 0 {
            // Keep segments contiguous in the common case of a drained buffer.
            self.head = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_slices_consume_wrap() {
        let mut b = SendBuffer::new(8);
        assert_eq!(b.write(b"abcdef"), 6);
        b.consume(4);
        assert_eq!(b.write(b"ghijklmn"), 6);
        assert_eq!(b.len(), 8);
        assert_eq!(b.free(), 0);
        let (x, y) = b.slices(0, 8);
        assert_eq!([x, y].concat(), b"efghijkl");
        let (x, y) = b.slices(3, 3);
        assert_eq!([x, y].concat(), b"hij");
        assert_eq!(b.slices(8, 1), (&[][..], &[][..]));
        b.consume(100);
        assert!(b.is_empty());
    }

    #[test]
    fn write_with_lends_the_contiguous_free_space_and_keeps_what_was_written() {
        let mut b = SendBuffer::new(8);
        assert_eq!(b.write(b"abcdef"), 6);
        b.consume(4);
        // Free: indices 6..8 then 0..4; the closure sees the first part only.
        let seen = b.write_with(|buf| {
            buf.copy_from_slice(b"gh");
            (2, buf.len())
        });
        assert_eq!(seen, 2);
        let seen = b.write_with(|buf| {
            buf[..3].copy_from_slice(b"ijk");
            (3, buf.len())
        });
        assert_eq!(seen, 4);
        let (x, y) = b.slices(0, 8);
        assert_eq!([x, y].concat(), b"efghijk");
        // A closure that claims more than it was lent adds only what fits.
        b.write_with(|buf| {
            buf.fill(b'z');
            (100, ())
        });
        assert_eq!(b.free(), 0);
        assert_eq!(b.write_with(|buf| (0, buf.len())), 0);
        let (x, y) = b.slices(0, 8);
        assert_eq!([x, y].concat(), b"efghijkz");
    }

    #[test]
    fn the_ring_is_allocated_by_the_first_write_and_released_when_empty() {
        let mut b = SendBuffer::new(1 << 20);
        assert_eq!(b.ring.len(), 0, "allocated before any write");
        assert_eq!((b.capacity(), b.free()), (1 << 20, 1 << 20));
        assert_eq!(b.write(b""), 0);
        assert_eq!(b.ring.len(), 0);
        assert_eq!(b.write(b"abc"), 3);
        assert_eq!(b.ring.len(), 1 << 20);
        assert!(!b.release(), "released while holding data");
        b.consume(3);
        assert!(b.release());
        assert_eq!(b.ring.len(), 0);
        assert_eq!(b.write(b"de"), 2);
        let (x, y) = b.slices(0, 2);
        assert_eq!([x, y].concat(), b"de");
    }
}
