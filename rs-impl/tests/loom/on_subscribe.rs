//! Two threads deliver `on_subscribe` to one ready-made subscriber at once.

use std::sync::Arc as StdArc;

use rs_api::{Subscriber, Subscription};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::subscriber::{collect, for_each, RequestStrategy};

use crate::broken::BrokenKeepsSecondSubscriber;

/// A subscription that only records what its subscriber did with it.
#[derive(Debug, Default)]
pub(crate) struct Recording {
    requested: AtomicU64,
    cancelled: AtomicBool,
}

impl Subscription for Recording {
    fn request(&self, n: u64) {
        self.requested.fetch_add(n.min(1 << 32), Ordering::AcqRel);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// Rule 2.5 (and 2.12's "at most once" seen from the subscriber). Interleaving: two threads —
/// two publishers, say, both handed the same subscriber behind a lock, since `on_subscribe`
/// takes `&mut self` — call `on_subscribe` with their own subscription at once, in either order.
/// In every interleaving exactly one subscription is kept (requested from, not cancelled) and
/// the other is cancelled without ever being requested from.
pub(crate) fn racing_on_subscribe<S: Subscriber<u64> + 'static>(make: fn() -> S) {
    let subscriber = Arc::new(Mutex::new(make()));
    let a = StdArc::new(Recording::default());
    let b = StdArc::new(Recording::default());
    let other = {
        let subscriber = subscriber.clone();
        let a = a.clone();
        thread::spawn(move || subscriber.lock().on_subscribe(a))
    };
    subscriber.lock().on_subscribe(b.clone());
    other.join().unwrap();
    let state = |r: &Recording| {
        (
            r.requested.load(Ordering::Acquire),
            r.cancelled.load(Ordering::Acquire),
        )
    };
    let (sa, sb) = (state(&a), state(&b));
    let kept = [sa, sb]
        .iter()
        .filter(|(req, cancelled)| *req > 0 && !cancelled)
        .count();
    assert_eq!(
        kept, 1,
        "rule 2.5: {kept} subscriptions kept (a: {sa:?}, b: {sb:?})"
    );
    let refused = if sa.0 > 0 && !sa.1 { sb } else { sa };
    assert!(
        refused.1,
        "rule 2.5: the second subscription was not cancelled"
    );
    assert_eq!(
        refused.0, 0,
        "rule 2.5: the cancelled subscription was requested from"
    );
}

// The handles are detached: dropping one cancels the subscription, which is not this model's
// subject.
fn make_collect() -> impl Subscriber<u64> {
    let (subscriber, handle) = collect::<u64>(RequestStrategy::Prefetch(2));
    handle.detach();
    subscriber
}

fn make_for_each() -> impl Subscriber<u64> {
    let (subscriber, handle) = for_each(RequestStrategy::Unbounded, |_: u64| {});
    handle.detach();
    subscriber
}

/// Rules 3.5/3.12 seen from a ready-made subscriber's handle (and 2.6). Interleaving: a thread
/// hands the subscriber its subscription while the main thread cancels through the handle —
/// before, during or after `on_subscribe`. In every interleaving the subscription ends up
/// cancelled: a cancel that arrives before the subscription must not be lost.
fn handle_cancel_racing_on_subscribe() {
    let (subscriber, handle) = collect::<u64>(RequestStrategy::Unbounded);
    let subscription = StdArc::new(Recording::default());
    let other = {
        let subscription = subscription.clone();
        let mut subscriber = subscriber;
        thread::spawn(move || {
            subscriber.on_subscribe(subscription);
            subscriber // kept alive, as by a publisher that has not dropped it yet
        })
    };
    handle.cancel();
    let subscriber = other.join().unwrap();
    assert!(
        subscription.cancelled.load(Ordering::Acquire),
        "rule 3.12: Handle::cancel before on_subscribe was lost; the subscription stays active"
    );
    drop(subscriber);
}

#[test]
fn on_subscribe_racing_handle_cancel() {
    loom::model(handle_cancel_racing_on_subscribe);
}

#[test]
fn on_subscribe_racing_collect() {
    loom::model(|| racing_on_subscribe(make_collect));
}

#[test]
fn on_subscribe_racing_for_each() {
    loom::model(|| racing_on_subscribe(make_for_each));
}

crate::loom_rejects!(
    on_subscribe_model_rejects_broken_subscriber_that_keeps_the_second,
    "rule 2.5",
    || { racing_on_subscribe(BrokenKeepsSecondSubscriber::default) }
);
