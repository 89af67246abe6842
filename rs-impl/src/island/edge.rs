//! The island's edges: where Reactive Streams signals enter and leave an island.
//!
//! * [`PublisherSource`] (the input side) subscribes to any [`Publisher`] with an
//!   [`InputSubscriber`], which keeps a power-of-two buffer of `size` elements, requests `size`
//!   up front and `size / 2` each time `size / 2` elements have been **taken by the island**
//!   (not received), so the upstream's outstanding demand never exceeds the free space and an
//!   overrun can only mean that the upstream broke rule 1.1 (the island then fails with
//!   [`IslandError::InputOverrun`] and cancels it). Completion is deferred until the buffer
//!   drained; an error is delivered at once and drops the buffered input. Every call on the
//!   upstream subscription (`request`, `cancel`) is made from the island, so they are serial
//!   (rule 2.7); the subscriber's signals only record and post to the island's mailbox — except
//!   that `on_complete`/`on_error` wait, if the island is inside `request` on another thread at
//!   that moment, until that call returns, so that no request starts after a terminal signal
//!   was received (rule 2.4). A publisher that blocked its `request` until a concurrent
//!   terminal signal returned would deadlock with this; rule 3.4 asks `request` not to.
//! * [`SubscriberSink`] (the output side) serves one [`Subscriber`]: `request` and `cancel` on
//!   its subscription only record demand or the cancel and post to the mailbox, returning at
//!   once (rules 3.4, 3.5; recursion 3.3 is impossible by construction). The subscriber's
//!   signals run on the island's thread, serially (1.3); `request(0)` is answered with
//!   `on_error` naming rule 3.9; a panicking subscriber is cancelled (2.13) and its panic
//!   reported through [`crate::panics`].
//!
//! # The seam for the batching boundary (issue #13)
//!
//! The boundary between two islands plugs in at exactly these two places, without reshaping
//! the interpreter: its output side is a sink stage like [`SubscriberSink`] that appends to a
//! batch instead of calling `on_next` and flushes when the island parks (the
//! [`Island`](super::Island) poll loop has one place where it parks: that is where a
//! `flush_outputs` hook goes); its input side is [`InputSubscriber`] with a batch-accepting
//! hidden method next to `on_next`, writing into the same power-of-two buffer. Both talk to
//! their island only through a [`Notifier`].

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are `rs_api::SubscriptionRef`s (std `Arc<dyn Subscription>`) in every build;
// the atomics and locks inside come from the facade.
use std::sync::Arc as StdArc;

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED,
};

use super::mailbox::Notifier;
use super::stage::{Ctx, Inlet, Outlet, PortId, Ports, Stage};
use super::IslandError;
use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex};
use crate::loom::thread::{self, ThreadId};
use crate::panics as report;

/// A publisher shared with the island that subscribes to it.
pub type SharedPublisher<T> = StdArc<dyn Publisher<T> + Send + Sync>;

/// What the input subscriber records for the island.
struct Inbox<T> {
    buffer: VecDeque<T>,
    /// A subscription not yet taken by the island.
    subscription: Option<SubscriptionRef>,
    /// Whether a subscription was ever accepted (2.5 for the next ones).
    subscribed: bool,
    /// Upstream's terminal signal: `Some(None)` completion, `Some(Some(e))` failure.
    terminal: Option<Option<Error>>,
    /// The upstream sent more than requested.
    overrun: bool,
    /// The island side is gone: a late `on_subscribe` is cancelled at once.
    closed: bool,
    /// The island's notifier, once the island started (signals before it are caught up by the
    /// island's first run). Called under the inbox lock, so a signal is either recorded before
    /// the island's catch-up or notified after it.
    notifier: Option<Notifier>,
    /// The thread of the island while it is inside `request` on the upstream subscription.
    calling: Option<ThreadId>,
}

impl<T> Inbox<T> {
    fn notify(&self) {
        if let Some(n) = &self.notifier {
            n.notify();
        }
    }
}

/// Loom builds only: whether the input side's rule-2.4 protocol is broken on purpose (the
/// loom model's twin: requests without looking for a terminal signal, terminal signals that
/// do not wait). Process-wide, set only in the child process that runs the broken twin.
#[cfg(rs_loom)]
fn broken_terminal_wait() -> bool {
    BROKEN_TERMINAL_WAIT.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(rs_loom)]
#[allow(clippy::disallowed_types)]
static BROKEN_TERMINAL_WAIT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Loom builds only: breaks the input side's rule-2.4 protocol for this process (see the loom
/// model `island_input_request_races_upstream_completion`).
#[cfg(rs_loom)]
#[doc(hidden)]
pub fn break_terminal_wait_for_loom() {
    BROKEN_TERMINAL_WAIT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The buffer and signals an [`InputSubscriber`] shares with its island.
pub(crate) struct InputShared<T> {
    inbox: Mutex<Inbox<T>>,
    /// Signalled when the island's `request` returns (see [`InputShared::request`]).
    returned: Condvar,
    capacity: usize,
}

impl<T> InputShared<T> {
    /// The island's `request(n)` on the upstream subscription, never started once a terminal
    /// signal was received (rule 2.4): the island marks itself calling under the inbox lock,
    /// unless a terminal signal is recorded, and `on_complete`/`on_error` wait for a request in
    /// flight on another thread to return before they return. (A terminal signal delivered
    /// inside that request, on the island's own thread, does not wait.)
    fn request(&self, subscription: &SubscriptionRef, n: u64) {
        {
            let mut inbox = self.inbox.lock();
            #[cfg(rs_loom)]
            let skip_check = broken_terminal_wait();
            #[cfg(not(rs_loom))]
            let skip_check = false;
            if !skip_check && (inbox.terminal.is_some() || inbox.closed) {
                return;
            }
            inbox.calling = Some(thread::current().id());
        }
        subscription.request(n); // may deliver synchronously, on this thread
        self.inbox.lock().calling = None;
        self.returned.notify_all();
    }

    /// Records a terminal signal and waits for an island `request` in flight on another thread.
    fn terminate(&self, signal: Option<Error>) {
        let me = thread::current().id();
        let mut inbox = self.inbox.lock();
        inbox.terminal.get_or_insert(signal);
        inbox.notify();
        #[cfg(rs_loom)]
        if broken_terminal_wait() {
            return;
        }
        while inbox.calling.is_some_and(|t| t != me) {
            inbox = self.returned.wait(inbox);
        }
    }
}

impl<T> InputShared<T> {
    /// An input buffer of `size` elements (rounded up to a power of two, at least 2), not yet
    /// attached to an island.
    pub(crate) fn new(size: usize) -> Arc<Self> {
        let size = size.max(2).next_power_of_two();
        Arc::new(InputShared {
            inbox: Mutex::new(Inbox {
                buffer: VecDeque::with_capacity(size),
                subscription: None,
                subscribed: false,
                terminal: None,
                overrun: false,
                closed: false,
                notifier: None,
                calling: None,
            }),
            returned: Condvar::new(),
            capacity: size,
        })
    }
}

/// The subscriber through which a [`PublisherSource`] receives its upstream's signals.
///
/// Each signal records what arrived and posts to the island; nothing else runs on the
/// publisher's thread.
pub struct InputSubscriber<T> {
    pub(crate) shared: Arc<InputShared<T>>,
}

impl<T> fmt::Debug for InputSubscriber<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InputSubscriber")
            .field("capacity", &self.shared.capacity)
            .finish()
    }
}

impl<T: Send> Subscriber<T> for InputSubscriber<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let refused = {
            let mut inbox = self.shared.inbox.lock();
            if inbox.subscribed || inbox.closed {
                true
            } else {
                inbox.subscribed = true;
                inbox.subscription = Some(subscription.clone());
                inbox.notify();
                false
            }
        };
        if refused {
            subscription.cancel(); // 2.5, or the island is gone
        }
    }

    fn on_next(&mut self, item: T) {
        let mut inbox = self.shared.inbox.lock();
        if inbox.terminal.is_some() || inbox.closed {
            return; // 2.8: after cancel or the end, dropped
        }
        if inbox.buffer.len() >= self.shared.capacity {
            inbox.overrun = true;
        } else {
            inbox.buffer.push_back(item);
        }
        inbox.notify();
    }

    fn on_error(&mut self, error: Error) {
        self.shared.terminate(Some(error));
    }

    fn on_complete(&mut self) {
        self.shared.terminate(None);
    }
}

/// A source stage that subscribes to a [`Publisher`] and emits its elements (see the module
/// docs for the buffering and demand rules).
pub struct PublisherSource<T> {
    outlet: Outlet<T>,
    publisher: Option<SharedPublisher<T>>,
    shared: Option<Arc<InputShared<T>>>,
    subscription: Option<SubscriptionRef>,
    /// Elements taken from the inbox, in order (the inbox is locked once per refill).
    local: VecDeque<T>,
    size: usize,
    batch: usize,
    /// Elements taken by the island since the last replenishing request.
    taken: usize,
    /// Upstream completed (deferred until `local` and the inbox drained).
    completed: bool,
    /// Upstream terminated or was cancelled: no more requests.
    upstream_done: bool,
}

impl<T> fmt::Debug for PublisherSource<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublisherSource")
            .field("size", &self.size)
            .field("buffered", &self.local.len())
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> PublisherSource<T> {
    /// A source of `publisher`'s elements with an input buffer of `size` (rounded up to a
    /// power of two, at least 2).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (o, _i) = g.connection::<u64>();
    /// let s = rs_impl::island::PublisherSource::new(o, Arc::new(rs_impl::source::range(0..3u64)), 16);
    /// g.add_stage(s);
    /// ```
    pub fn new(outlet: Outlet<T>, publisher: SharedPublisher<T>, size: usize) -> Self {
        Self::attached(outlet, InputShared::new(size), Some(publisher))
    }

    /// A source fed by an input buffer made beforehand (an [`IslandProcessor`]'s subscriber
    /// side), subscribing to `publisher` if one is given.
    ///
    /// [`IslandProcessor`]: super::IslandProcessor
    pub(crate) fn attached(
        outlet: Outlet<T>,
        shared: Arc<InputShared<T>>,
        publisher: Option<SharedPublisher<T>>,
    ) -> Self {
        let size = shared.capacity;
        PublisherSource {
            outlet,
            publisher,
            shared: Some(shared),
            subscription: None,
            local: VecDeque::with_capacity(size),
            size,
            batch: size / 2,
            taken: 0,
            completed: false,
            upstream_done: false,
        }
    }

    /// Moves what arrived into the island; acts on a new subscription, an overrun, an error.
    fn refill(&mut self, ctx: &mut Ctx<'_>) {
        let Some(shared) = self.shared.clone() else {
            return;
        };
        let (subscription, terminal, overrun) = {
            let mut inbox = shared.inbox.lock();
            self.local.extend(inbox.buffer.drain(..));
            (
                inbox.subscription.take(),
                inbox.terminal.take(),
                std::mem::take(&mut inbox.overrun),
            )
        };
        if let Some(s) = subscription {
            if self.upstream_done {
                s.cancel(); // cancelled before the subscription arrived
            } else if terminal.is_none() {
                self.subscription = Some(s.clone());
                shared.request(&s, self.size as u64); // may deliver synchronously
            }
            // With a terminal signal already here, the subscription is over (2.4): no call.
        }
        if overrun {
            self.cancel_upstream();
            self.local.clear();
            ctx.fail_stage(Error::new(IslandError::InputOverrun {
                capacity: self.size,
            }));
            return;
        }
        match terminal {
            Some(Some(error)) => {
                // Eager: the error overtakes buffered input.
                self.upstream_done = true;
                self.subscription = None;
                self.local.clear();
                ctx.fail_stage(error);
            }
            Some(None) => {
                self.upstream_done = true;
                self.subscription = None;
                self.completed = true;
            }
            None => {}
        }
    }

    /// Pushes one element if downstream pulled; completes once drained after completion.
    fn deliver(&mut self, ctx: &mut Ctx<'_>) {
        if ctx.is_outlet_closed(self.outlet) {
            return;
        }
        if self.local.is_empty() {
            // The terminal signal is recorded after the last element, and taken together with
            // the buffer: once `completed` is set, the inbox holds nothing more.
            self.refill(ctx);
            if ctx.is_outlet_closed(self.outlet) {
                return;
            }
            if self.local.is_empty() {
                if self.completed {
                    ctx.complete(self.outlet);
                }
                return;
            }
        }
        if !ctx.is_available(self.outlet) {
            return;
        }
        if let Some(x) = self.local.pop_front() {
            ctx.push(self.outlet, x);
            self.taken += 1;
            if self.taken == self.batch {
                self.taken = 0;
                if let (false, Some(s), Some(shared)) = (
                    self.upstream_done,
                    self.subscription.clone(),
                    self.shared.clone(),
                ) {
                    shared.request(&s, self.batch as u64);
                }
            }
            if self.completed && self.local.is_empty() {
                ctx.complete(self.outlet); // push then complete
            }
        }
    }

    fn cancel_upstream(&mut self) {
        if let Some(shared) = &self.shared {
            let mut inbox = shared.inbox.lock();
            inbox.closed = true;
            inbox.buffer.clear();
            inbox.notifier = None;
        }
        if !self.upstream_done {
            self.upstream_done = true;
            if let Some(s) = self.subscription.take() {
                s.cancel();
            }
        }
    }
}

impl<T: Send + 'static> Stage for PublisherSource<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.outlet(self.outlet);
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        let Some(shared) = self.shared.clone() else {
            return;
        };
        shared.inbox.lock().notifier = Some(ctx.notifier());
        // Catch up with what arrived before the island ran (a processor's upstream).
        ctx.notifier().notify();
        if let Some(publisher) = self.publisher.take() {
            let subscriber = InputSubscriber { shared };
            let r = catch_unwind(AssertUnwindSafe(|| {
                publisher.subscribe(Box::new(subscriber));
            }));
            if let Err(p) = r {
                ctx.fail_stage(Error::new(IslandError::StagePanicked {
                    stage: "PublisherSource (upstream subscribe)",
                    message: report::panic_message(&*p),
                }));
            }
        }
    }

    fn on_pull(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.deliver(ctx);
    }

    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.refill(ctx);
        self.deliver(ctx);
    }

    fn on_downstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.cancel_upstream();
        self.local.clear();
        ctx.complete_stage();
    }

    fn post_stop(&mut self) {
        self.cancel_upstream();
    }
}

/// [`OutputShared::flags`]: cancelled, or terminated (1.6); requests are no-ops.
const CANCELLED: usize = 1;
/// [`OutputShared::flags`]: `request(0)` was called (3.9).
const BAD_REQUEST: usize = 2;

struct OutputShared {
    demand: Demand,
    flags: AtomicUsize,
    notifier: Notifier,
}

/// The subscription a [`SubscriberSink`] hands its subscriber: both methods record and post
/// to the island, and return at once.
struct OutputSubscription(Arc<OutputShared>);

impl Subscription for OutputSubscription {
    fn request(&self, n: u64) {
        let shared = &self.0;
        if shared.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
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

/// A sink stage that serves one [`Subscriber`] (see the module docs).
pub struct SubscriberSink<T> {
    inlet: Inlet<T>,
    subscriber: Option<BoxSubscriber<T>>,
    shared: Option<Arc<OutputShared>>,
    /// Elements delivered (the island's own count: no atomic per element).
    emitted: u64,
    /// The demand total last read; re-read only when `emitted` reaches it.
    limit: u64,
}

impl<T> fmt::Debug for SubscriberSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriberSink")
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> SubscriberSink<T> {
    /// A sink delivering to `subscriber`, which gets `on_subscribe` when the island starts.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut g = rs_impl::island::GraphBuilder::new();
    /// let (_o, i) = g.connection::<u64>();
    /// let (s, _h) = rs_impl::subscriber::collect::<u64>(rs_impl::subscriber::RequestStrategy::Unbounded);
    /// g.add_stage(rs_impl::island::SubscriberSink::new(i, Box::new(s)));
    /// ```
    pub fn new(inlet: Inlet<T>, subscriber: BoxSubscriber<T>) -> Self {
        SubscriberSink {
            inlet,
            subscriber: Some(subscriber),
            shared: None,
            emitted: 0,
            limit: 0,
        }
    }

    fn flags(&self) -> usize {
        self.shared
            .as_ref()
            .map_or(CANCELLED, |s| s.flags.load(Ordering::Acquire))
    }

    /// Acts on a cancel or a bad request; otherwise pulls if there is demand.
    fn check(&mut self, ctx: &mut Ctx<'_>) {
        let flags = self.flags();
        if flags & CANCELLED != 0 {
            self.finish(None, ctx);
            return;
        }
        if flags & BAD_REQUEST != 0 {
            let e = SpecViolation::NonPositiveRequest.into();
            self.finish(Some(Some(e)), ctx);
            return;
        }
        if ctx.is_inlet_closed(self.inlet) || ctx.has_been_pulled(self.inlet) {
            return;
        }
        if self.emitted == self.limit {
            if let Some(s) = &self.shared {
                self.limit = s.demand.total();
            }
        }
        if self.emitted < self.limit || self.limit == UNBOUNDED {
            ctx.pull(self.inlet);
        }
    }

    /// Ends the subscription: `terminal` is `None` for a cancel (no signal), `Some(None)` for
    /// `on_complete`, `Some(Some(e))` for `on_error`. The subscriber is dropped (3.13).
    fn finish(&mut self, terminal: Option<Option<Error>>, ctx: &mut Ctx<'_>) {
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
        ctx.complete_stage();
    }
}

impl<T: Send + 'static> Stage for SubscriberSink<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        let shared = Arc::new(OutputShared {
            demand: Demand::new(),
            flags: AtomicUsize::new(0),
            notifier: ctx.notifier(),
        });
        self.shared = Some(shared.clone());
        let handle: SubscriptionRef = StdArc::new(OutputSubscription(shared));
        if let Some(subscriber) = self.subscriber.as_mut() {
            let r = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(handle)));
            if let Err(p) = r {
                report::subscriber_panicked("on_subscribe", p);
                self.finish(None, ctx);
                return;
            }
        }
        self.check(ctx);
    }

    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        if self.flags() != 0 {
            drop(x); // cancelled meanwhile: 1.8
            self.check(ctx);
            return;
        }
        self.emitted += 1;
        if let Some(subscriber) = self.subscriber.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_next(x))) {
                report::subscriber_panicked("on_next", p);
                self.finish(None, ctx); // 2.13: a panicking subscriber is cancelled
                return;
            }
        }
        self.check(ctx);
    }

    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.check(ctx);
    }

    fn on_upstream_finish(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        self.finish(Some(None), ctx);
    }

    fn on_upstream_failure(&mut self, _: PortId, error: Error, ctx: &mut Ctx<'_>) {
        self.finish(Some(Some(error)), ctx);
    }

    fn post_stop(&mut self) {
        if let Some(s) = &self.shared {
            s.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        }
        if let Some(subscriber) = self.subscriber.take() {
            report::drop_guarded(subscriber);
        }
    }
}
