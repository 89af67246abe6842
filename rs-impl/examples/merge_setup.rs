//! Setup cost of a merge or flat map of size 1 (seed 003's size-1 shapes), counted: runs
//! `OPS` subscriptions of one shape, each as the benchmark's op (built, subscribed with an
//! unbounded `for_each`, waited for), and prints the allocations per op. Run it under
//! `perf stat -e instructions:u` for instructions per op:
//! `cargo run --release -p rs-impl --example merge_setup -- <shape> [ops] [size]`, shape one
//! of `merge-just` (`size` values), `merge-range` (one range of `size`), `merge-subscribed`
//! (one range of `size` behind an `Arc<dyn Publisher>`: subscribed to), `flat-just` (a range
//! of `size` mapped to values), `flat-range` (one range of `size`, as the inner of a flat
//! map), `futures-select-all` and `futures-flat-map` (the benchmark's peers, `size` values
//! as `stream::once`s), `none` (the loop alone); `size` 1 by default (the setup cost), larger for the cost
//! per element of the single-inner path (seed 003's `oneStreamOfNthatMergesIn1`,
//! `merge1SyncStreamOfN`).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::ready;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::executor::block_on;
use futures::stream::{self, StreamExt};
use rs_api::Publisher;
use rs_impl::merge;
use rs_impl::source::{from_iter, just, range};
use rs_impl::subscriber::{for_each, RequestStrategy};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

struct Counting;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the
// counters are plain atomics that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract, which is `System::alloc`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds `realloc`'s rules.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// One op: subscribes `p` with an unbounded `for_each` adding into `sum`, waits for its end.
fn op<P: Publisher<u64>>(p: &P, sum: &Arc<AtomicU64>) {
    let acc = Arc::clone(sum);
    let (s, h) = for_each(RequestStrategy::Unbounded, move |x: u64| {
        acc.fetch_add(x, Ordering::Relaxed);
    });
    p.subscribe(Box::new(s));
    h.wait().expect("the merge completes");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "merge-just".into());
    let ops: u64 = args.next().map_or(100_000, |n| n.parse().expect("a count"));
    let size: u64 = args.next().map_or(1, |n| n.parse().expect("a size"));
    let sum = Arc::new(AtomicU64::new(0));
    let (a0, b0) = (ALLOCS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst));
    for k in 0..ops {
        let (a, b) = (k * size, (k + 1) * size);
        match shape.as_str() {
            "merge-just" => op(&merge::merge((a..b).map(just).collect::<Vec<_>>()), &sum),
            "merge-range" => op(&merge::merge(vec![range(a..b)]), &sum),
            "merge-subscribed" => {
                let inner: Arc<dyn Publisher<u64> + Send + Sync> = Arc::new(range(a..b));
                op(&merge::merge(vec![inner]), &sum)
            }
            "flat-just" => op(&range(a..b).flat_map(just, 128, 128), &sum),
            // One range as the outer's only element (the benchmark's `from_iter(chunks)`).
            #[allow(clippy::single_range_in_vec_init)]
            "flat-range" => op(&from_iter([a..b]).flat_map(range, 128, 128), &sum),
            // The peers' ops, for their instructions in the same harness (the benchmark's
            // `futures select_all` and `futures flat_map` of `once`).
            "futures-select-all" => {
                let s = stream::select_all((a..b).map(|x| stream::once(ready(x))));
                block_on(s.for_each(|x| {
                    sum.fetch_add(x, Ordering::Relaxed);
                    ready(())
                }));
            }
            "futures-flat-map" => {
                let s = stream::iter(a..b).flat_map(|x| stream::once(ready(x)));
                block_on(s.for_each(|x| {
                    sum.fetch_add(x, Ordering::Relaxed);
                    ready(())
                }));
            }
            "none" => {
                sum.fetch_add((a..b).sum::<u64>(), Ordering::Relaxed);
            }
            other => panic!("unknown shape {other}"),
        }
    }
    let (a1, b1) = (ALLOCS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst));
    let n = ops * size;
    assert_eq!(sum.load(Ordering::SeqCst), n * n.saturating_sub(1) / 2);
    println!(
        "{shape}: {ops} ops of {size}, {:.2} allocations / op, {:.1} B / op",
        (a1 - a0) as f64 / ops as f64,
        (b1 - b0) as f64 / ops as f64
    );
}
