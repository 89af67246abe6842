//! A global allocator that counts what every thread of the test process allocates, for the
//! `*_alloc` test targets (each its own process: include it with
//! `#[path = "support/counting_alloc.rs"] mod counting_alloc;`, which installs it as the
//! process's global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Allocations by every thread (alloc, alloc_zeroed, realloc).
pub(crate) static ALLOCS: AtomicU64 = AtomicU64::new(0);

/// Bytes asked for by every thread (a `realloc` counts its new size).
#[allow(dead_code)] // not every test target reads the bytes
pub(crate) static BYTES: AtomicU64 = AtomicU64::new(0);

std::thread_local! {
    /// Allocations by this thread (const-initialised, no destructor: counting it allocates
    /// nothing and registers nothing).
    static THREAD: Cell<u64> = const { Cell::new(0) };
}

/// Allocations made so far by the calling thread: for a target whose work all runs on the
/// test's own thread, immune to what the test harness's other threads allocate meanwhile.
#[allow(dead_code)] // not every test target counts per thread
pub(crate) fn thread_allocs() -> u64 {
    THREAD.with(Cell::get)
}

/// Counts one allocation, for every thread and for this one.
fn count(size: usize) {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(size as u64, Ordering::Relaxed);
    // `try_with`: a thread being torn down still allocates (and is counted above).
    let _ = THREAD.try_with(|n| n.set(n.get() + 1));
}

struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged (so the
// `GlobalAlloc` contract is `System`'s); the counters are plain atomics and a const-initialised
// thread-local `Cell` without destructor, none of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract, which is `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds `realloc`'s rules.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;
