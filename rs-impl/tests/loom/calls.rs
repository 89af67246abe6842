//! A ready-made subscriber's own calls on its subscription: `request` from inside `on_next`
//! racing its handle's `cancel` from another thread; and its terminal signal racing a thread
//! that waits on the handle (the outcome notifies only a waiter it counted).

use std::sync::Arc as StdArc;

use rs_api::{Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use rs_impl::loom::thread;
use rs_impl::subscriber::{collect, Handle, RequestStrategy};

/// A subscription that flags overlapping calls and counts them.
#[derive(Debug, Default)]
struct Serial {
    in_call: AtomicBool,
    requests: AtomicU64,
    cancels: AtomicUsize,
    /// Requests that arrived after a cancel had returned.
    after_cancel: AtomicU64,
}

impl Serial {
    fn enter(&self) {
        // Relaxed: detects an overlap without adding the happens-before edge it checks for.
        let overlapped = self.in_call.swap(true, Ordering::Relaxed);
        assert!(
            !overlapped,
            "rule 2.7: two calls on the subscription overlap"
        );
    }
    fn leave(&self) {
        self.in_call.store(false, Ordering::Relaxed);
    }
}

impl Subscription for Serial {
    fn request(&self, _n: u64) {
        self.enter();
        if self.cancels.load(Ordering::Relaxed) > 0 {
            self.after_cancel.fetch_add(1, Ordering::Relaxed);
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.leave();
    }
    fn cancel(&self) {
        self.enter();
        self.cancels.fetch_add(1, Ordering::Relaxed);
        self.leave();
    }
}

/// How the other thread cancels.
pub(crate) trait Canceller: Send + 'static {
    fn cancel(&self);
}

/// The real way: through the handle, which serialises with the subscriber's own calls.
impl Canceller for Handle<Vec<u64>> {
    fn cancel(&self) {
        Handle::cancel(self)
    }
}

/// Rule 2.7 (and 3.7 seen from the subscriber). Interleaving: a `collect` subscriber with
/// `Prefetch(2)` replenishes (`request(1)`) from inside its `on_next` while another thread
/// cancels through the handle — before, during or after that request. In every interleaving
/// the calls on the subscription never overlap, the cancel is made exactly once, and no
/// request follows it.
pub(crate) fn request_racing_handle_cancel<C: Canceller>(
    canceller: fn(&SubscriptionRef, Handle<Vec<u64>>) -> C,
) {
    let (mut subscriber, handle) =
        collect::<u64>(rs_impl::subscriber::RequestStrategy::Prefetch(2));
    let serial = StdArc::new(Serial::default());
    let sref: SubscriptionRef = serial.clone();
    subscriber.on_subscribe(sref.clone());
    let c = canceller(&sref, handle);
    let other = thread::spawn(move || c.cancel());
    subscriber.on_next(1); // replenishes with request(1): prefetch 2, batch 1
    other.join().unwrap();
    assert_eq!(
        serial.cancels.load(Ordering::Relaxed),
        1,
        "rule 3.7: cancel made once"
    );
    assert_eq!(
        serial.after_cancel.load(Ordering::Relaxed),
        0,
        "rule 3.6 / 2.7: a request after the cancel"
    );
    drop(subscriber);
}

#[test]
fn subscriber_request_racing_handle_cancel() {
    crate::exhaustive(|| request_racing_handle_cancel(|_, h| h));
}

crate::loom_rejects!(
    calls_model_rejects_broken_handle_that_cancels_directly,
    "rule 2.7",
    || request_racing_handle_cancel(|s, handle| {
        handle.detach(); // the twin cancels directly; dropping the handle would cancel too
        crate::broken::BrokenDirectCancel(s.clone())
    })
);

/// No lost wake-up: a thread blocked in `Handle::wait` while the stream completes on another
/// thread is woken. The outcome notifies only when a waiter is counted (a stream that ended
/// before anyone waited makes no `futex` wake call), so the waiter must count itself under the
/// lock the outcome is set under, with no gap before its wait.
fn wait_racing_completion() {
    let (subscriber, handle) = collect::<u8>(RequestStrategy::Unbounded);
    let t = thread::spawn(move || {
        let mut subscriber = subscriber;
        subscriber.on_next(7);
        subscriber.on_complete();
    });
    assert_eq!(handle.wait().expect("completed"), vec![7]);
    t.join().expect("the completing thread");
}

#[test]
fn handle_wait_racing_completion() {
    loom::model(wait_racing_completion);
}

crate::loom_rejects!(
    calls_model_rejects_a_waiter_counted_after_the_lock,
    "deadlock",
    fault rs_impl::loom::Fault::WaiterCountedLate,
    wait_racing_completion
);
