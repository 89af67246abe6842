//! The push source (`rs_impl::source::push`): a sender blocked for want of demand racing the
//! subscriber's requests from another thread, and its sends racing the drains those requests
//! run (the inbox hand-off); a send racing `complete` from a clone of the sender.

use std::sync::Arc as StdArc;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef};
use rs_impl::loom::sync::{Arc, Mutex};
use rs_impl::loom::thread;
use rs_impl::loom::Fault;
use rs_impl::source::{push, PushSender};

use crate::broken::BrokenPush;

/// What the subscriber saw, under a loom lock.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) items: Vec<u64>,
    pub(crate) completed: usize,
}

/// A subscriber that records into [`Seen`] and hands its subscription out.
pub(crate) struct Recorder {
    pub(crate) seen: Arc<Mutex<Seen>>,
    pub(crate) subscription: Arc<Mutex<Option<SubscriptionRef>>>,
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        *self.subscription.lock() = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        self.seen.lock().items.push(x);
    }
    fn on_error(&mut self, e: Error) {
        panic!("no error in this model: {e}");
    }
    fn on_complete(&mut self) {
        self.seen.lock().completed += 1;
    }
}

/// A capacity-0 push source as the model needs it: the producer half (moved to the producer's
/// thread) and the subscription, with the subscriber already subscribed, so that the broken
/// twin runs the same model.
pub(crate) trait PushSource: Sized {
    type Producer: Send + 'static;
    fn subscribed(seen: &Arc<Mutex<Seen>>) -> (Self::Producer, SubscriptionRef);
    /// `false` when the send was refused.
    fn blocking_send(p: &Self::Producer, x: u64) -> bool;
    fn complete(p: &Self::Producer);
}

/// The real one.
pub(crate) struct Real;

impl PushSource for Real {
    type Producer = PushSender<u64>;
    fn subscribed(seen: &Arc<Mutex<Seen>>) -> (PushSender<u64>, SubscriptionRef) {
        let (producer, publisher) = push::<u64>(0);
        let slot = Arc::new(Mutex::new(None));
        publisher.subscribe(Box::new(Recorder {
            seen: seen.clone(),
            subscription: slot.clone(),
        }));
        // Nobody else drains yet: `on_subscribe` ran inside `subscribe`.
        let subscription = slot.lock().take().expect("on_subscribe in subscribe");
        (producer, subscription)
    }
    fn blocking_send(p: &PushSender<u64>, x: u64) -> bool {
        p.blocking_send(x).is_ok()
    }
    fn complete(p: &PushSender<u64>) {
        p.complete();
    }
}

/// No lost wake-up, nothing lost, order kept. The sender thread sends 1, 2, 3 into a
/// capacity-0 source and completes; nothing is requested at first, so it blocks. The main
/// thread requests 1 three times: each request races the sender's look at the permits
/// (it may find none and sleep, or be between its look and its sleep) and the sender's
/// delivery (a request's drain may be running when the sender hands its element over,
/// which then goes through the inbox). If a wake-up is lost the sender sleeps forever and
/// loom reports a deadlock.
pub(crate) fn blocked_producer_racing_requests<S: PushSource>() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (producer, subscription) = S::subscribed(&seen);
    let feeder = thread::spawn(move || {
        for x in 1..=3 {
            assert!(S::blocking_send(&producer, x), "a send was refused");
        }
        S::complete(&producer);
    });
    for _ in 0..3 {
        subscription.request(1);
    }
    feeder.join().unwrap();
    let seen = seen.lock();
    assert_eq!(seen.items, vec![1, 2, 3], "every element once, in order");
    assert_eq!(seen.completed, 1, "one on_complete after the elements");
    drop(StdArc::clone(&subscription));
}

#[test]
fn push_blocked_producer_racing_requests() {
    rs_impl::loom::model(blocked_producer_racing_requests::<Real>);
}

crate::loom_rejects!(
    push_model_rejects_a_lost_wake_up,
    "deadlock",
    blocked_producer_racing_requests::<BrokenPush>
);

/// A send racing `complete` from a clone, while a request drains on a third thread: nothing
/// is accepted and then dropped. Capacity 0, the subscriber subscribed with no demand; thread
/// S sends 1 (`try_send`), thread E completes through a clone, the main thread requests 1. In
/// every interleaving: if the send returned `Ok`, the element is delivered before the one
/// `on_complete`; if it returned `Closed`, nothing was delivered. The end is recorded under
/// the inbox's lock and a send through the inbox looks at it under the same lock; the twin
/// skips that look, so an element queued after the end was delivered is accepted and lost.
pub(crate) fn send_racing_complete_from_a_clone() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (tx, subscription) = Real::subscribed(&seen);
    let ender = tx.clone();
    let sender = thread::spawn(move || tx.try_send(1).is_ok());
    let end = thread::spawn(move || ender.complete());
    subscription.request(1);
    let accepted = sender.join().unwrap();
    end.join().unwrap();
    let seen = seen.lock();
    assert_eq!(seen.completed, 1, "one on_complete");
    if accepted {
        assert_eq!(seen.items, vec![1], "an accepted element was lost");
    } else {
        assert!(seen.items.is_empty(), "a refused element was delivered");
    }
    drop(StdArc::clone(&subscription));
}

#[test]
fn push_send_racing_complete_from_a_clone() {
    rs_impl::loom::model(send_racing_complete_from_a_clone);
}

crate::loom_rejects!(
    push_send_racing_complete_model_rejects_a_send_that_ignores_the_end,
    "an accepted element was lost",
    fault Fault::SendIgnoresEnd,
    send_racing_complete_from_a_clone
);
