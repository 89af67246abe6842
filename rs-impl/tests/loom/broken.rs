//! Deliberately broken twins of the building blocks, one bug each, for proving that every
//! model can fail. Never use these anywhere else.

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED,
};
use rs_impl::demand::Demand;
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::serial::DrainLoop;

use crate::demand::Counter;
use crate::drain::Drain;
use crate::handoff::{Handoff, Produce};

// ----- demand --------------------------------------------------------------------------------

/// BUG: adds with a load and a separate store instead of one read-modify-write, so concurrent
/// requests overwrite each other (lost demand, rule 3.8).
#[derive(Debug)]
pub(crate) struct BrokenLoadStoreDemand(AtomicU64);

impl Counter for BrokenLoadStoreDemand {
    fn new() -> Self {
        BrokenLoadStoreDemand(AtomicU64::new(0))
    }
    fn request(&self, n: u64) -> u64 {
        let prev = self.0.load(Ordering::Acquire);
        self.0.store(prev.saturating_add(n), Ordering::Release);
        prev
    }
    fn total(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    fn outstanding(&self, emitted: u64) -> u64 {
        self.total().saturating_sub(emitted)
    }
}

/// BUG: `fetch_add` wraps instead of saturating (rule 3.17).
#[derive(Debug)]
pub(crate) struct BrokenWrappingDemand(AtomicU64);

impl Counter for BrokenWrappingDemand {
    fn new() -> Self {
        BrokenWrappingDemand(AtomicU64::new(0))
    }
    fn request(&self, n: u64) -> u64 {
        self.0.fetch_add(n, Ordering::AcqRel)
    }
    fn total(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    fn outstanding(&self, emitted: u64) -> u64 {
        let t = self.total();
        if t == UNBOUNDED {
            t
        } else {
            t.saturating_sub(emitted)
        }
    }
}

// ----- drain loops ---------------------------------------------------------------------------

/// BUG: no work-in-progress counter at all; every caller runs the pass itself, so a re-entrant
/// request recurses into `on_next` (3.3) and a concurrent one overlaps it (1.3).
#[derive(Debug)]
pub(crate) struct BrokenNoSerialDrain;

impl Drain for BrokenNoSerialDrain {
    fn new() -> Self {
        BrokenNoSerialDrain
    }
    fn drain(&self, pass: &mut dyn FnMut()) -> bool {
        pass();
        true
    }
}

/// BUG: the missing re-check. After one pass the drainer resets the counter to 0 instead of
/// subtracting what it saw, so work recorded during the pass is forgotten (a lost wake-up).
#[derive(Debug)]
pub(crate) struct BrokenStoreZeroDrain {
    wip: AtomicUsize,
    lock: Mutex<()>,
}

impl Drain for BrokenStoreZeroDrain {
    fn new() -> Self {
        BrokenStoreZeroDrain {
            wip: AtomicUsize::new(0),
            lock: Mutex::new(()),
        }
    }
    fn drain(&self, pass: &mut dyn FnMut()) -> bool {
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return false;
        }
        let guard = self.lock.lock();
        pass();
        self.wip.store(0, Ordering::Release);
        drop(guard);
        true
    }
}

/// BUG: the lock-free shape of the drain loop (the counter alone hands the state from one
/// drainer to the next, as in RxJava) with `Relaxed` where `AcqRel` is needed: the next drainer
/// is not ordered after the previous one's writes.
#[derive(Debug)]
pub(crate) struct BrokenRelaxedDrain {
    wip: AtomicUsize,
}

impl Drain for BrokenRelaxedDrain {
    fn new() -> Self {
        BrokenRelaxedDrain {
            wip: AtomicUsize::new(0),
        }
    }
    fn drain(&self, pass: &mut dyn FnMut()) -> bool {
        if self.wip.fetch_add(1, Ordering::Relaxed) != 0 {
            return false;
        }
        let mut missed = 1;
        loop {
            pass();
            let before = self.wip.fetch_sub(missed, Ordering::Relaxed);
            missed = before - missed;
            if missed == 0 {
                return true;
            }
        }
    }
}

// ----- a source ------------------------------------------------------------------------------

/// Which bug a [`BrokenSource`] has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bug {
    /// Cancel stops emission but keeps the subscriber (rule 3.13).
    KeepsSubscriberOnCancel,
    /// After `on_complete`/`on_error` the subscription is not ended, so a later pass signals
    /// again (rules 1.6, 1.7).
    TerminalKeepsSubscriber,
}

/// A small source of `0..count` on the real `DrainLoop` and `Demand`, with one [`Bug`].
#[derive(Debug)]
pub(crate) struct BrokenSource {
    count: u64,
    bug: Bug,
}

impl BrokenSource {
    pub(crate) fn new(count: u64, bug: Bug) -> Self {
        BrokenSource { count, bug }
    }
}

struct State {
    subscriber: Option<BoxSubscriber<u64>>,
    emitted: u64,
}

struct BrokenSubscription {
    count: u64,
    bug: Bug,
    demand: Demand,
    cancelled: AtomicBool,
    bad_request: AtomicBool,
    drain: DrainLoop<State>,
}

impl BrokenSubscription {
    fn run(&self, mut first: Option<SubscriptionRef>) {
        self.drain.drain(|st| {
            let Some(s) = st.subscriber.as_mut() else {
                return;
            };
            if let Some(handle) = first.take() {
                s.on_subscribe(handle);
            }
            loop {
                if self.cancelled.load(Ordering::Acquire) {
                    if self.bug != Bug::KeepsSubscriberOnCancel {
                        st.subscriber = None;
                    }
                    return;
                }
                let s = st.subscriber.as_mut().expect("active");
                let terminal = if self.bad_request.load(Ordering::Acquire) {
                    s.on_error(Error::from(SpecViolation::NonPositiveRequest));
                    true
                } else if st.emitted == self.count {
                    s.on_complete();
                    true
                } else {
                    false
                };
                if terminal {
                    if self.bug != Bug::TerminalKeepsSubscriber {
                        st.subscriber = None;
                    }
                    return;
                }
                if self.demand.outstanding(st.emitted) == 0 {
                    return;
                }
                let item = st.emitted;
                st.emitted += 1;
                s.on_next(item);
            }
        });
    }
}

impl Subscription for BrokenSubscription {
    fn request(&self, n: u64) {
        if self.demand.request(n).is_err() {
            self.bad_request.store(true, Ordering::Release);
        }
        self.run(None);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.run(None);
    }
}

impl Publisher<u64> for BrokenSource {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        let sub = std::sync::Arc::new(BrokenSubscription {
            count: self.count,
            bug: self.bug,
            demand: Demand::new(),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
            drain: DrainLoop::new(State {
                subscriber: Some(subscriber),
                emitted: 0,
            }),
        });
        let handle: SubscriptionRef = sub.clone();
        sub.run(Some(handle));
    }
}

// ----- a subscriber --------------------------------------------------------------------------

/// BUG: keeps whichever subscription came last and requests from it; never cancels (rule 2.5).
#[derive(Default)]
pub(crate) struct BrokenKeepsSecondSubscriber {
    subscription: Option<SubscriptionRef>,
}

impl Subscriber<u64> for BrokenKeepsSecondSubscriber {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        subscription.request(1);
        self.subscription = Some(subscription);
    }
    fn on_next(&mut self, _item: u64) {}
    fn on_error(&mut self, _error: Error) {}
    fn on_complete(&mut self) {}
}

/// BUG: a handle that calls `cancel` on the subscription directly from its own thread, as the
/// ready-made subscribers' handle once did, so it can overlap the subscriber's own `request`
/// (rule 2.7).
pub(crate) struct BrokenDirectCancel(pub(crate) rs_api::SubscriptionRef);

impl crate::calls::Canceller for BrokenDirectCancel {
    fn cancel(&self) {
        self.0.cancel();
    }
}

// ----- publisher → stream handoff ------------------------------------------------------------

/// The state of [`BrokenStreamHandoff`]: a one-element mailbox with a parked flag.
#[derive(Default)]
pub(crate) struct BrokenMailbox {
    /// The elements waiting.
    item: Mutex<std::collections::VecDeque<u64>>,
    done: AtomicBool,
    parked: AtomicBool,
    waker: Mutex<Option<std::task::Waker>>,
}

impl BrokenMailbox {
    fn wake_if_parked(&self) {
        if self.parked.swap(false, Ordering::AcqRel) {
            let w = self.waker.lock().clone();
            if let Some(w) = w {
                w.wake();
            }
        }
    }

    /// Takes the element, if any.
    fn take(&self) -> Option<u64> {
        self.item.lock().pop_front()
    }
}

/// The producer half of [`BrokenStreamHandoff`].
pub(crate) struct BrokenInlet(rs_impl::loom::sync::Arc<BrokenMailbox>);

impl Subscriber<u64> for BrokenInlet {
    fn on_subscribe(&mut self, _s: SubscriptionRef) {}
    fn on_next(&mut self, item: u64) {
        self.0.item.lock().push_back(item);
        self.0.wake_if_parked();
    }
    fn on_error(&mut self, _e: Error) {
        self.on_complete();
    }
    fn on_complete(&mut self) {
        self.0.done.store(true, Ordering::Release);
        self.0.wake_if_parked();
    }
}

/// BUG: the missing re-check. The consumer looks for an element, then registers its waker and
/// parks, without looking again: an element (or the end) published between its look and its
/// parking finds it not parked yet, so nobody wakes it (a lost wake-up). The real ring parks
/// with a read-modify-write of the word the producer publishes through, and re-checks.
pub(crate) struct BrokenStreamHandoff(rs_impl::loom::sync::Arc<BrokenMailbox>);

impl crate::stream::StreamHandoff for BrokenStreamHandoff {
    type Producer = BrokenInlet;
    fn split() -> (BrokenInlet, BrokenStreamHandoff) {
        let m = rs_impl::loom::sync::Arc::new(BrokenMailbox::default());
        (BrokenInlet(m.clone()), BrokenStreamHandoff(m))
    }
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<u64>> {
        if let Some(x) = self.0.take() {
            return std::task::Poll::Ready(Some(x));
        }
        if self.0.done.load(Ordering::Acquire) {
            // `done` was stored after the element: acquiring it makes the element visible.
            return std::task::Poll::Ready(self.0.take());
        }
        *self.0.waker.lock() = Some(cx.waker().clone());
        self.0.parked.store(true, Ordering::Release);
        std::task::Poll::Pending
    }
}

// ----- hand-off --------------------------------------------------------------------------------

/// BUG: when busy, records the work before queueing the value, so the drainer can finish in
/// between and the value waits in the queue with nobody draining (a lost wake-up).
pub(crate) struct BrokenRecordFirst;

impl Produce for BrokenRecordFirst {
    fn produce(h: &Handoff, value: u32) {
        let accepted = h
            .drain
            .try_drain_with(value, |st, v| st.push(v), |st| h.pass(st));
        if let Err(value) = accepted {
            h.poke();
            h.queue.lock().push_back(value);
        }
    }
}

// ----- push source -----------------------------------------------------------------------------

/// The shared state of [`BrokenPush`].
#[derive(Default)]
pub(crate) struct BrokenPushState {
    permits: u64,
    done: bool,
}

/// The producer half of [`BrokenPush`]: permits under a lock, a condition variable for the
/// blocked producer, and the recording subscriber it delivers to.
pub(crate) struct BrokenPushProducer {
    state: Arc<(Mutex<BrokenPushState>, Condvar)>,
    seen: Arc<Mutex<crate::push::Seen>>,
}

/// The subscription of [`BrokenPush`].
struct BrokenPushSubscription(Arc<(Mutex<BrokenPushState>, Condvar)>);

impl Subscription for BrokenPushSubscription {
    fn request(&self, n: u64) {
        let (lock, changed) = &*self.0;
        lock.lock().permits += n;
        changed.notify_all();
    }
    fn cancel(&self) {
        let (lock, changed) = &*self.0;
        lock.lock().done = true;
        changed.notify_all();
    }
}

/// BUG: the producer looks for a permit under the lock, releases it, and then locks again to
/// sleep, without looking again: a request (and its notification) that comes in between is
/// missed, and the producer sleeps although there is demand (a lost wake-up). The real source
/// marks itself waiting in the same read-modify-write that finds no permit, and a request that
/// sees the mark wakes it under the waiters' lock.
pub(crate) struct BrokenPush;

impl crate::push::PushSource for BrokenPush {
    type Producer = BrokenPushProducer;
    fn subscribed(seen: &Arc<Mutex<crate::push::Seen>>) -> (BrokenPushProducer, SubscriptionRef) {
        let state = Arc::new((Mutex::new(BrokenPushState::default()), Condvar::new()));
        let subscription: SubscriptionRef =
            std::sync::Arc::new(BrokenPushSubscription(state.clone()));
        (
            BrokenPushProducer {
                state,
                seen: seen.clone(),
            },
            subscription,
        )
    }
    fn blocking_send(p: &BrokenPushProducer, x: u64) -> bool {
        let (lock, changed) = &*p.state;
        loop {
            {
                let mut s = lock.lock();
                if s.done {
                    return false;
                }
                if s.permits > 0 {
                    s.permits -= 1;
                    break;
                }
            }
            let s = lock.lock(); // BUG: no second look before sleeping
            drop(changed.wait(s));
        }
        p.seen.lock().items.push(x);
        true
    }
    fn complete(p: &BrokenPushProducer) {
        p.seen.lock().completed += 1;
    }
}
