//! Keyed lanes with one lane cost nothing: `Flow::lanes(1, ..)` is the lane flow applied
//! inline. Counted by a global allocator: materialising and running it allocates exactly what
//! the same flow written without `lanes` allocates (count and bytes), on the same one island.
//!
//! Its own test target (its own process): the global allocator counts everything. One test,
//! run on the test's thread (the island polled by `block_on` here), so the count is ours.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::sync::atomic::{AtomicU64, Ordering};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{ALLOCS, BYTES};

use rs_api::{Subscriber, SubscriptionRef};
use rs_impl::flow::{Flow, Shape};

/// Counts elements, asks for everything, allocates nothing.
struct Count(std::sync::Arc<AtomicU64>);

impl Subscriber<u64> for Count {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(u64::MAX);
    }
    fn on_next(&mut self, _: u64) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn on_error(&mut self, e: rs_api::Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {}
}

/// Allocations (count, bytes) of materialising `flow` and running it to its end on this
/// thread, and the elements it delivered.
fn run<S: Shape<Out = u64>>(flow: &Flow<S>) -> (u64, u64, u64) {
    let seen = std::sync::Arc::new(AtomicU64::new(0));
    let sub = Box::new(Count(seen.clone()));
    let (a0, b0) = (ALLOCS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst));
    let island = flow.into_island(sub).expect("one island");
    futures::executor::block_on(island);
    let (a1, b1) = (ALLOCS.load(Ordering::SeqCst), BYTES.load(Ordering::SeqCst));
    (a1 - a0, b1 - b0, seen.load(Ordering::SeqCst))
}

/// The run with the fewest allocations of three (count, bytes, elements).
fn fewest(mut f: impl FnMut() -> (u64, u64, u64)) -> (u64, u64, u64) {
    (0..3).map(|_| f()).min().expect("three runs")
}

#[test]
fn one_lane_allocates_what_the_plain_flow_allocates() {
    let n = 100_000u64;
    let plain = Flow::from_iter(0..n)
        .map(|x| x.wrapping_mul(3))
        .filter(|x| x % 2 == 0);
    let laned = Flow::from_iter(0..n).lanes(
        1,
        |x: &u64| *x,
        |lane| lane.map(|x| x.wrapping_mul(3)).filter(|x| x % 2 == 0),
    );
    assert_eq!(
        (plain.islands(), laned.islands()),
        (1, 1),
        "one island each"
    );
    // Warm up (thread-locals, the executor's first use), then take the fewest of three runs
    // each: another thread of the test process (the harness) may allocate meanwhile, which
    // only ever adds to a count.
    let _ = run(&plain);
    let _ = run(&laned);
    let p = fewest(|| run(&plain));
    let l = fewest(|| run(&laned));
    assert_eq!(p.2, n / 2);
    assert_eq!(l.2, n / 2);
    assert_eq!(
        (l.0, l.1),
        (p.0, p.1),
        "lanes(1) allocated (count, bytes) {:?}, the plain flow {:?}",
        (l.0, l.1),
        (p.0, p.1)
    );
    // And nothing per element: a run of ten times as many allocates the same.
    let big = Flow::from_iter(0..10 * n).lanes(
        1,
        |x: &u64| *x,
        |lane| lane.map(|x| x.wrapping_mul(3)).filter(|x| x % 2 == 0),
    );
    let b = fewest(|| run(&big));
    assert_eq!(
        (b.0, b.1),
        (l.0, l.1),
        "allocation per element with one lane"
    );
}
