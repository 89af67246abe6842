//! The batching boundary: two islands joined by a ring of 2, the producing island polled by
//! `loom::future::block_on` on a thread of the model, the consuming one on the main thread.
//! The elements count their live values, so a leak or a double drop shows in every model.
//!
//! Each model aims at one race the boundary's protocol settles (the ring's module docs): a
//! flush racing a cancel, the completion published after the last batch, an error overtaking
//! buffered input, and the consumer's grant racing the producer island's park. Each has a
//! broken twin that loom must reject.

use rs_api::{Error, Subscriber, SubscriptionRef};
use rs_impl::boundary::BoundaryConfig;
use rs_impl::flow::Flow;
use rs_impl::island::Island;
use rs_impl::loom::sync::atomic::{AtomicUsize, Ordering};
use rs_impl::loom::sync::Arc;
use rs_impl::loom::thread;

use crate::probe::{Behaviour, Probe, Record};

/// An element that counts its live values.
struct Tracked(u64, Arc<AtomicUsize>);

impl Tracked {
    fn new(x: u64, live: &Arc<AtomicUsize>) -> Self {
        live.fetch_add(1, Ordering::AcqRel);
        Tracked(x, live.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.1.fetch_sub(1, Ordering::AcqRel);
        assert!(before > 0, "an element was dropped twice");
    }
}

/// `n` tracked elements (the map panics at `fail_at`), a boundary of `ring`, then
/// `subscriber`.
fn two_islands<S: Subscriber<u64> + 'static>(
    n: u64,
    ring: usize,
    fail_at: Option<u64>,
    subscriber: S,
    live: &Arc<AtomicUsize>,
) -> (Island, Island) {
    let made = live.clone();
    let flow = Flow::from_iter(0..n)
        .map(move |x| {
            if Some(x) == fail_at {
                quiet_panics();
                panic!("the producer failed at {x}");
            }
            Tracked::new(x, &made)
        })
        .async_boundary_with(BoundaryConfig::new().size(ring))
        .map(|t: Tracked| t.0);
    let mut islands = flow
        .into_islands(Box::new(subscriber))
        .expect("two islands");
    let consumer = islands.pop().expect("the consuming island");
    let producer = islands.pop().expect("the producing island");
    (producer, consumer)
}

/// Keeps the producer's deliberate panic out of the output (once per interleaving otherwise);
/// every other panic goes to the default hook.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = info
                .payload()
                .downcast_ref::<String>()
                .is_some_and(|m| m.starts_with("the producer failed"));
            if !quiet {
                default(info);
            }
        }));
    });
}

/// Runs both islands to their end: the producer on a thread of the model.
fn run(mut producer: Island, mut consumer: Island) {
    producer.start();
    consumer.start();
    let a = thread::spawn(move || loom::future::block_on(producer));
    loom::future::block_on(consumer);
    a.join().unwrap();
}

/// Cancels from inside `on_next` of element `at`, after requesting `initial`.
struct Cancels {
    record: Probe,
    at: u64,
    subscription: Option<SubscriptionRef>,
}

impl Subscriber<u64> for Cancels {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.subscription = Some(s.clone());
        self.record.on_subscribe(s);
    }
    fn on_next(&mut self, x: u64) {
        self.record.on_next(x);
        if x == self.at {
            if let Some(s) = self.subscription.take() {
                s.cancel();
            }
        }
    }
    fn on_error(&mut self, e: Error) {
        self.subscription = None;
        self.record.on_error(e);
    }
    fn on_complete(&mut self) {
        self.subscription = None;
        self.record.on_complete();
    }
}

/// Rules 3.12, 3.13, no leak. The producer writes 3 elements through a ring of 2 (a flush at
/// its cap of 1, at each park, before completion) while the consumer cancels from inside
/// `on_next(0)`: the cancel races the producer's flushes. In every interleaving: both islands
/// end (the cancel reached the parked producer), at most the one requested element arrived,
/// and every element made was dropped exactly once — whether the consumer had it buffered,
/// the producer had it in an unflushed batch, or it was published after the consumer left.
pub(crate) fn flush_races_cancel() {
    let record = Record::new();
    let (probe, token) = Probe::new(
        &record,
        Behaviour {
            initial: 3,
            reentrant: None,
        },
    );
    let live = Arc::new(AtomicUsize::new(0));
    let cancels = Cancels {
        record: probe,
        at: 0,
        subscription: None,
    };
    let (producer, consumer) = two_islands(3, 2, None, cancels, &live);
    run(producer, consumer);
    let summary = record.finish();
    assert!(
        summary.received >= 1,
        "rule 1.1: the requested element was lost"
    );
    assert_eq!(
        summary.completes + summary.errors,
        0,
        "rule 1.8: a signal after the cancel"
    );
    assert!(
        token.upgrade().is_none(),
        "rule 3.13: the subscriber is kept"
    );
    assert_eq!(
        live.load(Ordering::Acquire),
        0,
        "leaked: an element was never dropped"
    );
}

/// Rules 1.1, 1.5, no leak: `n` elements through a ring of `ring`, the subscriber asking for
/// all of them; every element and exactly one completion arrive, and nothing leaks.
fn all_delivered(n: u64, ring: usize) {
    let record = Record::new();
    let (probe, _token) = Probe::new(
        &record,
        Behaviour {
            initial: n,
            reentrant: None,
        },
    );
    let live = Arc::new(AtomicUsize::new(0));
    let (producer, consumer) = two_islands(n, ring, None, probe, &live);
    run(producer, consumer);
    let summary = record.finish();
    assert_eq!(
        summary.received, n,
        "rule 1.1/1.5: elements lost before the completion"
    );
    assert_eq!(summary.completes, 1, "rule 1.5: no completion");
    assert_eq!(live.load(Ordering::Acquire), 0, "leaked");
}

/// The producer writes 3 elements into a ring of 8 (below its cap of 4: no flush until the
/// end) and completes — one batch of 3, then the completion — while the consumer takes what
/// it sees: in every interleaving all 3 elements arrive, then exactly one completion.
pub(crate) fn completion_after_a_batch() {
    all_delivered(3, 8);
}

/// Rules 1.4 (eager error), 1.7, no leak. The producer writes 2 elements and fails at the
/// third (flush, then the error); the subscriber asked for 1. In every interleaving the error
/// arrives without more demand (it overtakes the element still buffered, which is dropped),
/// after at most the one element, and nothing follows it.
pub(crate) fn error_overtakes_buffered_input() {
    let record = Record::new();
    let (probe, _token) = Probe::new(
        &record,
        Behaviour {
            initial: 1,
            reentrant: None,
        },
    );
    let live = Arc::new(AtomicUsize::new(0));
    let (producer, consumer) = two_islands(3, 2, Some(2), probe, &live);
    run(producer, consumer);
    let summary = record.finish();
    assert!(summary.received <= 1, "rule 1.1");
    assert_eq!(summary.errors, 1, "rule 1.4: the error did not overtake");
    assert!(
        summary
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("the producer failed at 2")),
        "{:?}",
        summary.last_error
    );
    assert_eq!(
        live.load(Ordering::Acquire),
        0,
        "leaked: buffered input not dropped"
    );
}

/// No lost wake-up. The producer writes 3 elements through a ring of 2: it fills the ring
/// and parks for demand; the consumer takes one and grants one more (its batch is 1), racing
/// that park — before the waker is registered, between the registration and the park's
/// re-check, or after it. In every interleaving the producer wakes and both islands end with
/// all 3 elements and the completion.
pub(crate) fn grant_races_producer_park() {
    all_delivered(3, 2);
}

#[test]
fn boundary_flush_races_cancel() {
    loom::model(flush_races_cancel);
}

#[test]
fn boundary_completion_after_a_batch() {
    loom::model(completion_after_a_batch);
}

#[test]
fn boundary_error_overtakes_buffered_input() {
    loom::model(error_overtakes_buffered_input);
}

#[test]
fn boundary_grant_races_producer_park() {
    loom::model(grant_races_producer_park);
}

crate::loom_rejects!(
    boundary_model_rejects_a_cancel_that_forgets_the_buffer,
    "leaked",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::CancelForgetsBuffer);
        flush_races_cancel()
    }
);

crate::loom_rejects!(
    boundary_model_rejects_a_completion_before_the_last_flush,
    "elements lost before the completion",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::TerminalBeforeFlush);
        completion_after_a_batch()
    }
);

crate::loom_rejects!(
    boundary_model_rejects_an_error_that_waits_for_demand,
    "deadlock",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::ErrorWaitsForInput);
        error_overtakes_buffered_input()
    }
);

crate::loom_rejects!(
    boundary_model_rejects_a_grant_stored_after_its_notification,
    "deadlock",
    || {
        rs_impl::loom::inject(rs_impl::loom::Fault::GrantAfterNotify);
        grant_races_producer_park()
    }
);
