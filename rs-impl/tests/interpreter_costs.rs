//! What the interpreter's event loop does per element, counted (never timed): for a chain of
//! stages wired port to port, how many events go through the queue and how many are chased.
//!
//! The shape is the `interpreter` benchmark's (an iterator source, `k` identity stages, a sink
//! pulling one element at a time): every element costs a pull and a push per connection, and
//! chasing runs them without the queue, up to the chase limit (16) per dequeued event.
#![cfg(not(rs_loom))]

use rs_impl::flow::ops::Identity;
use rs_impl::flow::{IterSource, OperatorStage};
use rs_impl::island::stages::CollectSink;
use rs_impl::island::{GraphBuilder, Stats};

/// Runs `0..n` through `k` identity stages into a collecting sink; the counters and whether
/// every element arrived in order.
fn run_chain(n: u64, k: usize) -> Stats {
    let mut g = GraphBuilder::new();
    let (o, mut i) = g.connection::<u64>();
    g.add_stage(IterSource::new(o, 0..n));
    for _ in 0..k {
        let (o, next) = g.connection::<u64>();
        g.add_stage(OperatorStage::new(i, o, Identity::new()));
        i = next;
    }
    let (sink, seen) = CollectSink::new(i);
    g.add_stage(sink);
    let mut interpreter = g.build().expect("a linear chain");
    interpreter.execute(u64::MAX);
    assert!(interpreter.is_completed());
    let items = seen.take().expect("ended").expect("completed");
    assert_eq!(items, (0..n).collect::<Vec<_>>());
    interpreter.stats()
}

#[test]
fn a_chain_of_one_stage_takes_four_events_per_element_and_dequeues_one_in_seventeen() {
    let n = 10_000;
    let s = run_chain(n, 1);
    let events = s.dequeued + s.chased;
    // A pull and a push on each of the two connections per element, plus a bounded start and
    // end (the first pulls, the completions).
    assert!(
        events >= 4 * n && events <= 4 * n + 16,
        "{events} events for {n} elements: {s:?}"
    );
    // One chase loop for pushes and pulls: the source's push answering a chased pull is
    // chased too, so a dequeued event is followed by up to 16 chased ones. Before, that push
    // went back to the queue: one dequeued event per element (`n`).
    assert!(
        s.dequeued <= events / 17 + 8,
        "{} dequeued of {events} events: {s:?}",
        s.dequeued
    );
}

#[test]
fn a_longer_chain_dequeues_one_event_per_chase_limit() {
    let n = 2_000;
    let k = 10;
    let s = run_chain(n, k);
    let events = s.dequeued + s.chased;
    let per_element = 2 * (k as u64 + 1);
    assert!(
        events >= per_element * n && events <= per_element * n + 4 * (k as u64 + 2),
        "{events} events for {n} elements: {s:?}"
    );
    assert!(
        s.dequeued <= events / 17 + 2 * (k as u64 + 2),
        "{} dequeued of {events} events: {s:?}",
        s.dequeued
    );
}
