//! The allocator of the endpoint's per-connection tables (the slot array and the 4-tuple
//! table): large tables in 2 MiB-aligned blocks that Linux is asked to back with
//! transparent huge pages.
//!
//! Why: at a million connections the slot array is 64 MB and the 4-tuple table 10 MB per
//! endpoint, and every segment reads one random line of each (two of the table: its control
//! bytes and its index). In 4 KiB pages each of those reads is also a TLB miss and a page
//! walk, which is most of what a segment costs at a million connections beyond what it costs
//! at a thousand (BENCHMARKS.md, "Many connections"). In 2 MiB pages the two tables are 38
//! TLB entries, which stay cached. The connections themselves stay with the global allocator:
//! a slab of huge pages for them was tried and was slower (the same section, "Connections in
//! a slab of huge pages").
//!
//! Tables below 2 MiB (fewer than 32,768 connections) come from the global allocator as they
//! are. The advice is `madvise(MADV_HUGEPAGE)`, which the kernel's default THP mode
//! (`madvise`) honours and the modes `always` and `never` make moot; elsewhere than Linux
//! there is no advice and only the alignment remains.

use allocator_api2::alloc::{AllocError, Allocator, Global, Layout};
use core::ptr::NonNull;

/// The size and alignment of a huge page on x86-64 and aarch64 with 4 KiB base pages.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// Allocates tables of at least [`HUGE_PAGE`] bytes in whole, aligned huge pages (advised
/// as such when `huge_pages` is set), smaller ones as the global allocator does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableAlloc {
    huge_pages: bool,
}

impl TableAlloc {
    pub(crate) fn new(huge_pages: bool) -> Self {
        TableAlloc { huge_pages }
    }

    /// The block a large table really takes: whole huge pages, aligned to one. `None` for
    /// tables left to the global allocator as they are.
    fn huge_layout(layout: Layout) -> Option<Layout> {
        if layout.size() < HUGE_PAGE {
            return None;
        }
        // A size too large to round up goes to the global allocator, which refuses it.
        let size = layout.size().checked_add(HUGE_PAGE - 1)? & !(HUGE_PAGE - 1);
        Layout::from_size_align(size, layout.align().max(HUGE_PAGE)).ok()
    }
}

// SAFETY: blocks come from the global allocator and are given back to it with the layout
// they were allocated with (`huge_layout` is a pure function of the caller's layout, which
// `Allocator`'s contract makes the same at deallocation, up to the size this returns, which
// is the caller's own). Advice changes neither contents nor mappings.
unsafe impl Allocator for TableAlloc {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let Some(huge) = Self::huge_layout(layout) else {
            return Global.allocate(layout);
        };
        // SAFETY: `huge` has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(huge) }).ok_or(AllocError)?;
        if self.huge_pages {
            advise_huge_pages(ptr.as_ptr(), huge.size());
        }
        Ok(NonNull::slice_from_raw_parts(ptr, layout.size()))
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        match Self::huge_layout(layout) {
            // SAFETY: allocated above with this layout (the contract of `deallocate`).
            Some(huge) => unsafe { std::alloc::dealloc(ptr.as_ptr(), huge) },
            // SAFETY: allocated by `Global` with this layout.
            None => unsafe { Global.deallocate(ptr, layout) },
        }
    }
}

/// Asks Linux to back `len` bytes at `addr` (both multiples of 2 MiB) with transparent huge
/// pages. A refusal (an old kernel, THP compiled out) leaves 4 KiB pages, which work.
#[cfg(all(target_os = "linux", not(miri)))]
fn advise_huge_pages(addr: *mut u8, len: usize) {
    // SAFETY: madvise(MADV_HUGEPAGE) changes no contents and no mapping, only how the kernel
    // backs pages of this range, which is ours (allocated just now).
    unsafe {
        libc::madvise(addr.cast(), len, libc::MADV_HUGEPAGE);
    }
}

// Miri does not model madvise (nor pages).
#[cfg(any(not(target_os = "linux"), miri))]
fn advise_huge_pages(_addr: *mut u8, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_tables_keep_their_layout_and_large_ones_take_whole_aligned_huge_pages() {
        let small = Layout::from_size_align(HUGE_PAGE - 64, 64).unwrap();
        assert_eq!(TableAlloc::huge_layout(small), None);
        let exact = Layout::from_size_align(HUGE_PAGE, 64).unwrap();
        assert_eq!(
            TableAlloc::huge_layout(exact),
            Some(Layout::from_size_align(HUGE_PAGE, HUGE_PAGE).unwrap())
        );
        let odd = Layout::from_size_align(3 * HUGE_PAGE + 16, 8).unwrap();
        assert_eq!(
            TableAlloc::huge_layout(odd),
            Some(Layout::from_size_align(4 * HUGE_PAGE, HUGE_PAGE).unwrap())
        );
    }

    #[test]
    fn a_large_table_is_aligned_to_a_huge_page_and_holds_what_was_written() {
        for huge_pages in [false, true] {
            let mut v: allocator_api2::vec::Vec<u64, TableAlloc> =
                allocator_api2::vec::Vec::new_in(TableAlloc::new(huge_pages));
            // Grows through small blocks into large ones (moving its contents each time).
            for i in 0..(HUGE_PAGE as u64 / 4) {
                v.push(i);
            }
            assert_eq!(v.as_ptr() as usize % HUGE_PAGE, 0);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
            v.truncate(10);
            v.shrink_to_fit();
            assert_eq!(&v[..], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        }
    }
}
