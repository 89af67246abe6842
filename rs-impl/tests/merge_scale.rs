//! Scale without quadratic work (seed 003): 100,000 inners of one element, 1,000 inners of
//! 1,000, one inner of 1,000,000, each run to completion; the merge's own counts (inner
//! subscriptions, queues made, drain passes) are asserted, and so is their growth: the same
//! shape at twice the size may cost at most about twice as much (linear; quadratic work would
//! cost four times).
#![cfg(not(rs_loom))]
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{BoxPublisher, Publisher};
use rs_impl::merge::MergeStats;
use rs_impl::source;
use rs_impl::subscriber::{for_each, RequestStrategy};

/// Runs `inners` inners of `each` elements (subscribed publishers, or known iterators) with
/// `max_concurrency` 128 and prefetch 128 to completion under `strategy`; the counts.
fn run(inners: u64, each: u64, subscribed: bool, strategy: RequestStrategy) -> MergeStats {
    let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c = count.clone();
    let (s, h) = for_each(strategy, move |_x: u64| {
        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let stats = if subscribed {
        let p = source::range(0..inners).flat_map(
            move |i| -> BoxPublisher<u64> { Box::new(source::range(i * each..(i + 1) * each)) },
            128,
            128,
        );
        p.subscribe(Box::new(s));
        h.wait().unwrap();
        p.stats()
    } else {
        let p = source::range(0..inners).flat_map(
            move |i| source::range(i * each..(i + 1) * each),
            128,
            128,
        );
        p.subscribe(Box::new(s));
        h.wait().unwrap();
        p.stats()
    };
    assert_eq!(
        count.load(std::sync::atomic::Ordering::Relaxed),
        inners * each,
        "every element delivered"
    );
    stats
}

/// Asserts that `big` (twice the size of `small`) costs at most about twice as much in `what`.
fn linear(what: &str, small: u64, big: u64) {
    assert!(
        big <= 2 * small + small / 10 + 16,
        "{what}: {small} at half the size, {big} at full size: more than linear"
    );
}

#[test]
fn a_hundred_thousand_inners_of_one_element() {
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(64)] {
        let half = run(50_000, 1, true, strategy);
        let full = run(100_000, 1, true, strategy);
        assert_eq!(full.inner_subscriptions, 100_000);
        assert!(full.queues <= 100_000, "{full:?}");
        assert!(full.drain_passes <= 4 * 100_000, "{full:?}");
        linear("drain passes", half.drain_passes, full.drain_passes);
        linear("queues", half.queues, full.queues);
        if strategy == RequestStrategy::Unbounded {
            // With demand, each element goes straight downstream: no queue is ever made.
            assert_eq!(full.queues, 0, "{full:?}");
            assert_eq!(full.fast_path, 100_000, "{full:?}");
        }
    }
    // Known iterators: no subscription, no queue.
    let full = run(100_000, 1, false, RequestStrategy::Unbounded);
    assert_eq!((full.inner_subscriptions, full.queues), (0, 0), "{full:?}");
    assert!(full.drain_passes <= 4 * 100_000, "{full:?}");
}

#[test]
fn a_thousand_inners_of_a_thousand() {
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(64)] {
        let half = run(500, 1_000, true, strategy);
        let full = run(1_000, 1_000, true, strategy);
        assert_eq!(full.inner_subscriptions, 1_000);
        assert!(
            full.queues <= 1_000,
            "at most one queue per inner: {full:?}"
        );
        linear("drain passes", half.drain_passes, full.drain_passes);
        if strategy == RequestStrategy::Unbounded {
            assert_eq!(full.queues, 0, "{full:?}");
            assert_eq!(full.fast_path, 1_000_000, "{full:?}");
        } else {
            // A pass per element at most (the subscriber asks 32 at a time).
            assert!(full.drain_passes <= 1_000_000, "{full:?}");
        }
    }
    let full = run(1_000, 1_000, false, RequestStrategy::Prefetch(64));
    assert_eq!((full.inner_subscriptions, full.queues), (0, 0), "{full:?}");
    // Known iterators are pulled in batches: a pass per request of the subscriber (32 at a
    // time), not per element.
    assert!(full.drain_passes <= 1_000_000 / 32 + 4_000, "{full:?}");
}

#[test]
fn one_inner_of_a_million() {
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(64)] {
        let half = run(1, 500_000, true, strategy);
        let full = run(1, 1_000_000, true, strategy);
        assert_eq!(full.inner_subscriptions, 1);
        assert!(full.queues <= 1, "{full:?}");
        linear("drain passes", half.drain_passes, full.drain_passes);
        if strategy == RequestStrategy::Unbounded {
            assert_eq!(full.fast_path, 1_000_000, "{full:?}");
            assert!(full.drain_passes <= 16, "{full:?}");
        }
    }
}
