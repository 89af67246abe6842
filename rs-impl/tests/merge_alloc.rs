//! What a merge allocates per subscription, counted by a global allocator (seed 003's setup
//! cost): known inners (values, iterators) cost nothing per inner and nothing per element; a
//! merge of known inners under unbounded demand subscribes nothing, queues nothing and boxes
//! no iterator (the typed lane); a known outer (`range(..).flat_map`, `merge`) is pulled, not
//! subscribed to.
//!
//! Its own test target (its own process), one test whose subscriptions all run on its own
//! thread (every inner here is synchronous): it counts that thread's allocations
//! ([`counting_alloc::thread_allocs`]), not the whole process's, so that what the test
//! harness's main thread allocates meanwhile (it did, in about half of the runs: 4 more of a
//! merge of 1,000 ranges) is not counted as the merge's.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rs_api::{Publisher, Subscriber, SubscriptionRef};
use rs_impl::merge;
use rs_impl::source::{just, range, IterPublisher};
use rs_impl::subscriber::{for_each, RequestStrategy};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::thread_allocs;

/// What a [`Count`] saw.
#[derive(Default)]
struct Seen {
    elements: AtomicU64,
    sum: AtomicU64,
    completed: AtomicU64,
}

/// Sums elements, asks for `batch` at a time (`u64::MAX`: everything at once), allocates
/// nothing per element.
struct Count {
    seen: Arc<Seen>,
    batch: u64,
    sub: Option<SubscriptionRef>,
    since: u64,
}

impl Subscriber<u64> for Count {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(self.batch);
        self.sub = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        self.seen.elements.fetch_add(1, Ordering::Relaxed);
        self.seen.sum.fetch_add(x, Ordering::Relaxed);
        self.since += 1;
        if self.batch != u64::MAX && self.since == self.batch {
            self.since = 0;
            if let Some(s) = &self.sub {
                s.request(self.batch);
            }
        }
    }
    fn on_error(&mut self, e: rs_api::Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {
        self.sub = None;
        self.seen.completed.fetch_add(1, Ordering::Relaxed);
    }
}

/// Allocations of subscribing `p` with a [`Count`] asking `batch` at a time and running it to
/// its end on this thread (the subscriber's own box and handle made before counting), and what
/// it saw (elements, sum).
fn allocs_of<P: Publisher<u64>>(p: &P, batch: u64) -> (u64, u64, u64) {
    let seen = Arc::new(Seen::default());
    let sub = Box::new(Count {
        seen: seen.clone(),
        batch,
        sub: None,
        since: 0,
    });
    let before = thread_allocs();
    p.subscribe(sub);
    let after = thread_allocs();
    assert_eq!(seen.completed.load(Ordering::SeqCst), 1, "completed once");
    (
        after - before,
        seen.elements.load(Ordering::SeqCst),
        seen.sum.load(Ordering::SeqCst),
    )
}

fn sum_below(n: u64) -> u64 {
    n * n.saturating_sub(1) / 2
}

/// A merge of `n` ranges of `each` (made before counting).
fn ranges(n: u64, each: u64) -> merge::Merge<IterPublisher<std::ops::Range<u64>>, u64> {
    merge::merge(
        (0..n)
            .map(|k| range(k * each..(k + 1) * each))
            .collect::<Vec<_>>(),
    )
}

fn a_merge_of_known_iterators_subscribes_queues_and_boxes_nothing_per_inner() {
    let few = ranges(10, 100);
    let many = ranges(1_000, 100);
    let (a_few, n, s) = allocs_of(&few, u64::MAX);
    assert_eq!((n, s), (1_000, sum_below(1_000)));
    let (a_many, n, s) = allocs_of(&many, u64::MAX);
    assert_eq!((n, s), (100_000, sum_below(100_000)));
    // A hundred times the inners, not one allocation more: no subscription, queue or box per
    // inner, nothing per element.
    assert_eq!(
        a_few, a_many,
        "allocations per subscription grow with the inners"
    );
    let stats = many.stats();
    assert_eq!(stats.inner_subscriptions, 0, "{stats:?}");
    assert_eq!(stats.queues, 0, "{stats:?}");
    assert_eq!(stats.typed_lane, 100_000, "{stats:?}");
}

fn a_size_one_merge_allocates_two_blocks_per_subscription() {
    let values = merge::merge(vec![just(7u64)]);
    let iterators = merge::merge(vec![range(7u64..8)]);
    let flat = range(7u64..8).flat_map(just, 128, 128);
    for _ in 0..3 {
        // The drain's shared state (one `Arc`) and the pulled outer's subscription (one
        // `Arc`): nothing per inner, no subscriber box, no queue, no outer subscription.
        assert_eq!(allocs_of(&values, u64::MAX), (2, 1, 7));
        assert_eq!(allocs_of(&iterators, u64::MAX), (2, 1, 7));
        assert_eq!(allocs_of(&flat, u64::MAX), (2, 1, 7));
    }
    assert_eq!(values.stats().inner_subscriptions, 0);
    assert_eq!(flat.stats().inner_subscriptions, 0);
}

/// Allocations of one op of the benchmark's size-1 shapes (seed 003's setup cost): `make`
/// builds the publisher, which is subscribed with an unbounded `for_each` and waited for.
fn allocs_of_op<P: Publisher<u64>>(make: impl FnOnce() -> P) -> u64 {
    let seen = Arc::new(AtomicU64::new(0));
    let before = thread_allocs();
    let p = make();
    let acc = seen.clone();
    let (s, h) = for_each(RequestStrategy::Unbounded, move |x: u64| {
        acc.fetch_add(x, Ordering::Relaxed);
    });
    p.subscribe(Box::new(s));
    h.wait().expect("completes");
    drop(p);
    let after = thread_allocs();
    assert_eq!(seen.load(Ordering::SeqCst), 7);
    after - before
}

fn a_size_one_op_with_a_ready_made_subscriber_allocates_five_blocks() {
    for _ in 0..3 {
        // The publisher's function and counters (one block), the subscriber's box, the slot
        // it shares with its handle (the rule-2.7 gate inside), the drain's state, the pulled
        // outer's subscription. Nothing at the end: a completed subscriber that is dropped
        // makes no error.
        assert_eq!(allocs_of_op(|| range(7u64..8).flat_map(just, 128, 128)), 5);
        // The same, plus the caller's `Vec` and the inners' shared slice.
        assert_eq!(allocs_of_op(|| merge::merge(vec![just(7u64)])), 7);
        assert_eq!(allocs_of_op(|| merge::merge(vec![range(7u64..8)])), 7);
    }
}

fn the_pulled_outer_costs_nothing_per_element_under_any_demand() {
    for batch in [1, 7, 128, u64::MAX] {
        let small = range(0u64..1_000).flat_map(just, 128, 128);
        let big = range(0u64..100_000).flat_map(just, 128, 128);
        let (a_small, n, s) = allocs_of(&small, batch);
        assert_eq!((n, s), (1_000, sum_below(1_000)));
        let (a_big, n, s) = allocs_of(&big, batch);
        assert_eq!((n, s), (100_000, sum_below(100_000)));
        // Values that found no demand wait in one list of the drain's, grown once.
        assert!(
            a_big <= a_small + 2,
            "batch {batch}: {a_small} allocations for 1,000 elements, {a_big} for 100,000"
        );
    }
}

fn known_iterators_under_bounded_demand_are_boxed_once_each_and_lose_nothing() {
    for batch in [1, 3, 64] {
        let p = ranges(4, 1_000);
        let (a, n, s) = allocs_of(&p, batch);
        assert_eq!((n, s), (4_000, sum_below(4_000)), "batch {batch}");
        // At most one box per inner (the rest of an iterator demand did not cover) and the
        // drain's list of inners; nothing per element.
        assert!(a <= 2 + 4 + 4, "batch {batch}: {a} allocations");
        let stats = p.stats();
        assert_eq!(
            (stats.inner_subscriptions, stats.queues),
            (0, 0),
            "{stats:?}"
        );
    }
}

#[test]
fn merge_allocations_per_subscription() {
    a_merge_of_known_iterators_subscribes_queues_and_boxes_nothing_per_inner();
    a_size_one_merge_allocates_two_blocks_per_subscription();
    a_size_one_op_with_a_ready_made_subscriber_allocates_five_blocks();
    the_pulled_outer_costs_nothing_per_element_under_any_demand();
    known_iterators_under_bounded_demand_are_boxed_once_each_and_lose_nothing();
}
