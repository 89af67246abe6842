//! The island's edges as exits: the island's subscriber ([`SubscriberExit`]) and a
//! boundary's output side ([`RingExit`]).
//!
//! * [`SubscriberExit`] serves one [`Subscriber`]: `request` and `cancel` on its subscription
//!   only record demand or the cancel and post to the island's mailbox, returning at once
//!   (rules 3.4, 3.5; recursion 3.3 is impossible by construction). The subscriber's signals
//!   run on the island's thread, serially (1.3); `request(0)` is answered with `on_error`
//!   naming rule 3.9; a panicking subscriber is cancelled (2.13) and its panic reported
//!   through [`crate::panics`]. Demand is read from the shared counter only when the
//!   island's own count of delivered elements reaches it: no atomic read-modify-write per
//!   element.
//!
//!   **What an element costs leaving an island** (issue 24's measurements): with bulk demand,
//!   one `dyn` call into the subscriber and a look at the flags (one load); the segment moves a
//!   run of as many elements as the demand allows per handler call. `Exit::push` is inlined
//!   into that run, with the bounded-demand bookkeeping and the panic path out of line, and
//!   the ready-made subscribers count an element without a call (`Upstream::consumed_one`):
//!   counted with callgrind (`interp_prof edge 0 N`: `Flow::from_iter(0..n)`, boxed, into
//!   `for_each(Unbounded)` on the default runtime, the `boundary` scenario at K = 0), 98
//!   instructions per element before, 61 after; 55 since the iterator entry holds the element
//!   it read ahead in a local over the run and `push` looks at the subscription and the
//!   subscriber once for both the cancel check and the delivery — of which the iterator's
//!   read-ahead and the segment's loop (with the `dyn Exit` call of the boxed flow) take
//!   about 18, the exit about 21, and `for_each` with its closure about 14
//!   (`interp_prof flow 1 N`, the same with one fused `identity` and no box: 97 before, 51
//!   after, 45 now). The look at the flags stays per element: a cancel from inside
//!   `on_next` stops the run at the next element. A subscriber requesting
//!   one at a time from inside `on_next` used to cost, per element, the demand counter's
//!   compare-and-swap and a post to the island's mailbox (two more read-modify-writes, a lock
//!   the first time) and then a whole mailbox round trip before the next element — the
//!   island handled one element per event. Such a request is now trampolined
//!   ([`Reentrant`]): made on the island's thread while this exit is delivering, it only adds
//!   to a local count that the segment's next look at its room takes, so the run goes on in
//!   the same handler call. A request from any other thread still posts.
//! * [`RingExit`] writes into a batching boundary (see [`crate::boundary`]): it flushes when
//!   the island's run ends, at its cap, and before completion or failure.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are `rs_api::SubscriptionRef`s (std `Arc<dyn Subscription>`) in every build;
// the atomics and locks inside come from the facade.
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, SpecViolation, Subscription, SubscriptionRef, UNBOUNDED};

use super::blueprint::SubscriberSlot;
use super::exit::{emitted_without_room, Closing, Exit, Step};
use super::ring_out::RingOut;
use crate::demand::{combined, Demand, Reentrant};
use crate::island::{Ctx, Notifier, RunEnd};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::panics as report;

/// [`OutputShared::flags`]: cancelled, or terminated (1.6); requests are no-ops.
const CANCELLED: usize = 1;
/// [`OutputShared::flags`]: `request(0)` was called (3.9).
const BAD_REQUEST: usize = 2;

struct OutputShared {
    demand: Demand,
    /// Requests made from inside `on_next` on the island's thread: recorded locally, taken by
    /// the segment's next look at its room (no post to the mailbox, no round trip).
    reentrant: Reentrant,
    flags: AtomicUsize,
    notifier: Notifier,
}

/// The subscription a [`SubscriberExit`] hands its subscriber: both methods record and post
/// to the island, and return at once.
struct OutputSubscription(Arc<OutputShared>);

impl Subscription for OutputSubscription {
    fn request(&self, n: u64) {
        let shared = &self.0;
        if shared.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if shared.reentrant.try_add(n) {
            return; // from inside on_next, on the island's thread: the segment goes on
        }
        if shared.demand.request(n).is_err() {
            shared.flags.fetch_or(BAD_REQUEST, Ordering::AcqRel);
        }
        shared.notifier.notify();
    }

    fn cancel(&self) {
        if self.0.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED == 0 {
            self.0.notifier.notify();
        }
    }
}

/// One subscriber served from inside an island (see the module docs).
pub(crate) struct SubscriberExit<T> {
    subscriber: Option<BoxSubscriber<T>>,
    /// Where the subscriber waits until the island starts (a failed build gives it back).
    slot: Option<SubscriberSlot<T>>,
    shared: Option<Arc<OutputShared>>,
    /// Elements delivered (the island's own count: no atomic per element).
    emitted: u64,
    /// The demand total last read (plus `local`); re-read only when `emitted` reaches it.
    limit: u64,
    /// Demand requested from inside `on_next` on the island's thread, taken so far.
    local: u64,
}

impl<T> fmt::Debug for SubscriberExit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriberExit")
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> SubscriberExit<T> {
    pub(crate) fn new(subscriber: BoxSubscriber<T>) -> Self {
        SubscriberExit {
            subscriber: Some(subscriber),
            slot: None,
            shared: None,
            emitted: 0,
            limit: 0,
            local: 0,
        }
    }

    /// The exit for the subscriber waiting in `slot` (taken when the island starts).
    pub(crate) fn deferred(slot: SubscriberSlot<T>) -> Self {
        SubscriberExit {
            subscriber: None,
            slot: Some(slot),
            shared: None,
            emitted: 0,
            limit: 0,
            local: 0,
        }
    }

    #[inline]
    fn flags(&self) -> usize {
        match (&self.shared, &self.subscriber) {
            (Some(s), Some(_)) => s.flags.load(Ordering::Acquire),
            _ => CANCELLED,
        }
    }

    /// [`push`](Exit::push) under a bounded demand: re-reads the demand when the count
    /// reaches it, and marks the delivery so that a `request` from inside `on_next` on this
    /// thread only adds to the local count.
    fn push_counted(&mut self, x: T) -> Step {
        if self.emitted == self.limit {
            if let Some(s) = &self.shared {
                self.local = self.local.saturating_add(s.reentrant.take());
                self.limit = combined(s.demand.total(), self.local);
            }
            if self.emitted == self.limit {
                emitted_without_room();
            }
        }
        self.emitted += 1;
        let _delivering = (self.limit != UNBOUNDED)
            .then(|| self.shared.as_ref().map(|s| s.reentrant.deliver()))
            .flatten();
        self.deliver(x)
    }

    /// Hands `x` to the subscriber; a panic there cancels it (2.13): [`Step::Stop`].
    #[inline(always)]
    fn deliver(&mut self, x: T) -> Step {
        if let Some(subscriber) = self.subscriber.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_next(x))) {
                self.next_panicked(p);
                return Step::Stop;
            }
        }
        Step::More
    }

    #[cold]
    #[inline(never)]
    fn next_panicked(&mut self, p: Box<dyn std::any::Any + Send>) {
        report::subscriber_panicked("on_next", p);
        self.finish(None);
    }

    /// Ends the subscription: `terminal` is `None` for a cancel (no signal), `Some(None)` for
    /// `on_complete`, `Some(Some(e))` for `on_error`. The subscriber is dropped (3.13).
    pub(crate) fn finish(&mut self, terminal: Option<Option<Error>>) {
        if let Some(s) = &self.shared {
            s.flags.fetch_or(CANCELLED, Ordering::AcqRel); // 1.6
        }
        if let Some(mut subscriber) = self.subscriber.take() {
            let r = match terminal {
                Some(Some(e)) => Some((
                    "on_error",
                    catch_unwind(AssertUnwindSafe(|| subscriber.on_error(e))),
                )),
                Some(None) => Some((
                    "on_complete",
                    catch_unwind(AssertUnwindSafe(|| subscriber.on_complete())),
                )),
                None => None,
            };
            if let Some((signal, Err(p))) = r {
                report::subscriber_panicked(signal, p);
            }
            report::drop_guarded(subscriber);
        }
    }
}

impl<T: Send + 'static> Exit<T> for SubscriberExit<T> {
    /// Hands the subscriber its subscription (`on_subscribe`, on the thread that starts the
    /// island); a panic there cancels it.
    fn start(&mut self, ctx: &mut Ctx<'_>) -> Step {
        if let Some(slot) = self.slot.take() {
            self.subscriber = slot.lock().take();
        }
        let shared = Arc::new(OutputShared {
            demand: Demand::new(),
            reentrant: Reentrant::new(),
            flags: AtomicUsize::new(0),
            notifier: ctx.notifier(),
        });
        self.shared = Some(shared.clone());
        let handle: SubscriptionRef = StdArc::new(OutputSubscription(shared));
        if let Some(subscriber) = self.subscriber.as_mut() {
            // request and cancel only record and post: they take concurrent calls.
            let mark = crate::demand::concurrent_calls(&handle);
            let r = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(handle)));
            drop(mark);
            if let Err(p) = r {
                report::subscriber_panicked("on_subscribe", p);
                self.finish(None);
                return Step::Stop;
            }
        }
        Step::More
    }

    #[inline]
    fn room(&mut self, _: &Ctx<'_>) -> usize {
        if self.flags() != 0 {
            return 0;
        }
        if self.emitted == self.limit {
            if let Some(s) = &self.shared {
                self.local = self.local.saturating_add(s.reentrant.take());
                self.limit = combined(s.demand.total(), self.local);
            }
        }
        if self.limit == UNBOUNDED {
            return usize::MAX;
        }
        usize::try_from(self.limit - self.emitted).unwrap_or(usize::MAX)
    }

    /// Delivers `x` (`on_next`); a panicking subscriber is cancelled (2.13): [`Step::Stop`].
    ///
    /// Inlined into the segment's run loop: per element a look at the flags, the demand
    /// count, and the subscriber's `on_next` (guarded); the rest is out of line.
    #[inline(always)]
    fn push(&mut self, _: &mut Ctx<'_>, x: T) -> Step {
        // One look at the subscription and the subscriber serves both the cancel check and
        // the delivery (what `flags()` and then `deliver` would look at twice).
        let (Some(shared), Some(subscriber)) = (&self.shared, self.subscriber.as_mut()) else {
            drop(x); // ended: 1.8
            return Step::More; // the segment acts on the end at its next look
        };
        if shared.flags.load(Ordering::Acquire) != 0 {
            drop(x); // cancelled meanwhile: 1.8
            return Step::More; // the segment acts on the cancel at its next look
        }
        if self.limit != UNBOUNDED {
            return self.push_counted(x);
        }
        self.emitted += 1;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_next(x))) {
            self.next_panicked(p);
            return Step::Stop;
        }
        Step::More
    }

    fn complete(&mut self, _: &mut Ctx<'_>) {
        self.finish(Some(None));
    }

    fn fail(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.finish(Some(Some(error)));
    }

    fn abort(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.finish(Some(Some(error)));
    }

    #[inline(always)]
    fn has_pending(&self) -> bool {
        false
    }

    fn resume(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::More
    }

    /// Whether the subscription ended from downstream: cancelled, or `request(0)`, which the
    /// subscriber is told about with `on_error` naming rule 3.9.
    fn closed(&mut self) -> Option<Closing> {
        let flags = self.flags();
        if flags & BAD_REQUEST != 0 && self.subscriber.is_some() {
            Some(Closing::Failed(SpecViolation::NonPositiveRequest.into()))
        } else if flags & CANCELLED != 0 {
            Some(Closing::Cancelled)
        } else {
            None
        }
    }

    fn on_park(&mut self, _: RunEnd) {}

    fn stop(&mut self) {
        self.finish(None);
    }
}

/// A boundary's output side as an exit (see the module docs).
pub(crate) struct RingExit<T>(pub(crate) RingOut<T>);

impl<T> fmt::Debug for RingExit<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RingExit").field(&self.0).finish()
    }
}

impl<T: Send + 'static> Exit<T> for RingExit<T> {
    fn start(&mut self, ctx: &mut Ctx<'_>) -> Step {
        self.0.start(ctx);
        Step::More
    }

    #[inline]
    fn room(&mut self, _: &Ctx<'_>) -> usize {
        self.0.room()
    }

    #[inline]
    fn push(&mut self, _: &mut Ctx<'_>, x: T) -> Step {
        match self.0.push(x) {
            Ok(()) => Step::More,
            Err(x) => {
                drop(x);
                emitted_without_room()
            }
        }
    }

    fn complete(&mut self, _: &mut Ctx<'_>) {
        self.0.complete();
    }

    fn fail(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.0.fail(error);
    }

    fn abort(&mut self, _: &mut Ctx<'_>, error: Error) {
        self.0.fail(error);
    }

    #[inline(always)]
    fn has_pending(&self) -> bool {
        false
    }

    fn resume(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::More
    }

    fn closed(&mut self) -> Option<Closing> {
        self.0.closed().then_some(Closing::Cancelled)
    }

    fn is_boundary(&self) -> bool {
        true
    }

    fn on_park(&mut self, end: RunEnd) {
        self.0.on_park(end);
    }

    fn stop(&mut self) {
        self.0.stop();
    }
}
