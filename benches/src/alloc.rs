//! A counting global allocator: how many allocations, and how many bytes, every thread made.
//!
//! [`CountingAlloc`] forwards to [`System`] and adds each allocation to two process-wide atomic
//! counters (relaxed `fetch_add`s). It counts on **every thread**, including threads a scenario
//! spawns (the consumer side of a pipeline, a tokio worker), which a thread-local profiler such
//! as divan's `AllocProfiler` would miss.
//!
//! What counts: each `alloc`/`alloc_zeroed` adds 1 allocation and its size; each `realloc`
//! adds 1 allocation and the size of the new block (a growing `Vec` pays for every move).
//! Frees are not subtracted: the figures are *allocation traffic*, not live memory.
//!
//! Install it in a binary or bench target (the counters live here, so any instance counts):
//!
//! ```
//! #[global_allocator]
//! static ALLOC: rs_benches::alloc::CountingAlloc = rs_benches::alloc::CountingAlloc;
//!
//! fn main() {
//!     let before = rs_benches::alloc::snapshot();
//!     let v = std::hint::black_box(vec![0u8; 1000]);
//!     let counts = rs_benches::alloc::snapshot().since(before);
//!     assert!(rs_benches::alloc::is_counting());
//!     assert!(counts.allocs >= 1 && counts.bytes >= 1000);
//!     drop(v);
//! }
//! ```
//!
//! Then read the counters around a measured run with [`snapshot`]; [`AllocCounts::since`] gives
//! the difference. The counters are process-wide, so keep other threads of your own quiet while
//! measuring. Without the global allocator installed, the counters stay at zero
//! ([`is_counting`] tells).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The counting allocator: [`System`] plus two atomic counters (see the module docs).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAlloc;

#[inline]
fn count(size: usize) {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract (layout handling, no unwinding, returned pointers) is System's; the
// counters are plain atomics and never allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract (non-zero size), which is
        // exactly `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`; same contract as `System::alloc_zeroed`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by this allocator, i.e. by `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` was returned by `System` with `layout`, and the caller upholds
        // `realloc`'s contract for `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocation counters at one moment (or a difference of two, see [`AllocCounts::since`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AllocCounts {
    /// Number of allocations (`alloc`, `alloc_zeroed`, `realloc`).
    pub allocs: u64,
    /// Bytes requested by those allocations.
    pub bytes: u64,
}

impl AllocCounts {
    /// The counts made after `earlier` was taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_benches::alloc::{snapshot, AllocCounts};
    /// let before = snapshot();
    /// let v: Vec<u64> = Vec::with_capacity(4);
    /// let made = snapshot().since(before);
    /// // Zero unless the counting allocator is installed in this binary.
    /// assert!(made.bytes == 0 || made.bytes >= 32);
    /// drop(v);
    /// ```
    #[must_use]
    pub fn since(self, earlier: AllocCounts) -> AllocCounts {
        AllocCounts {
            allocs: self.allocs.wrapping_sub(earlier.allocs),
            bytes: self.bytes.wrapping_sub(earlier.bytes),
        }
    }
}

/// The process-wide counters now.
///
/// # Examples
///
/// ```
/// let a = rs_benches::alloc::snapshot();
/// let b = rs_benches::alloc::snapshot();
/// assert!(b.allocs >= a.allocs);
/// ```
#[must_use]
pub fn snapshot() -> AllocCounts {
    AllocCounts {
        allocs: ALLOCS.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
    }
}

/// Whether [`CountingAlloc`] is the global allocator of this process (it makes one probe
/// allocation and looks at the counters).
///
/// # Examples
///
/// ```
/// // Doctests do not install the counting allocator.
/// assert!(!rs_benches::alloc::is_counting());
/// ```
#[must_use]
pub fn is_counting() -> bool {
    let before = snapshot();
    let probe = std::hint::black_box(Box::new(0u64));
    drop(probe);
    snapshot().since(before).allocs > 0
}
