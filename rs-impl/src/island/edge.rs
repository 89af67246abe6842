//! The island's edges: where Reactive Streams signals enter and leave an island.
//!
//! * [`PublisherSource`] (the input side) subscribes to any [`Publisher`] with a
//!   [`BoundarySubscriber`](crate::boundary::BoundarySubscriber), which keeps a power-of-two
//!   ring of `size` elements, requests `size` up front and `size / 2` each time `size / 2`
//!   elements have been **taken by the island** (not received), so the upstream's outstanding
//!   demand never exceeds the free space and an overrun can only mean that the upstream broke
//!   rule 1.1 (the island then fails with [`IslandError::InputOverrun`](super::IslandError)
//!   and cancels it). Completion is deferred until the ring drained; an error is delivered as
//!   soon as nothing more can be delivered at once, and drops the buffered input. Every call
//!   on the upstream subscription (`request`, `cancel`) is made from the island, so they are
//!   serial (rule 2.7); the subscriber's signals only record and post to the island's mailbox
//!   — except that `on_complete`/`on_error` wait, if the island is inside `request` on
//!   another thread at that moment, until that call returns, so that no request starts after
//!   a terminal signal was received (rule 2.4). A publisher that blocked its `request` until a
//!   concurrent terminal signal returned would deadlock with this; rule 3.4 asks `request`
//!   not to.
//! * [`SubscriberSink`] (the output side) serves one [`Subscriber`]: `request` and `cancel` on
//!   its subscription only record demand or the cancel and post to the mailbox, returning at
//!   once (rules 3.4, 3.5; recursion 3.3 is impossible by construction). The subscriber's
//!   signals run on the island's thread, serially (1.3); `request(0)` is answered with
//!   `on_error` naming rule 3.9; a panicking subscriber is cancelled (2.13) and its panic
//!   reported through [`crate::panics`].
//!
//! Between two islands of one flow ([`Flow::async_boundary`](super::Flow::async_boundary)),
//! neither edge is used: the batching boundary ([`crate::boundary`]) joins the upstream
//! island's last fused segment directly to the downstream island's first one.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are `rs_api::SubscriptionRef`s (std `Arc<dyn Subscription>`) in every build;
// the atomics and locks inside come from the facade.
use std::sync::Arc as StdArc;

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED,
};

use super::fused::Sent;
use super::mailbox::Notifier;
use super::segment::{port_terminal, Closing, Entry, SegOut, Segment};
use super::stage::{Ctx, Inlet, Outlet, PortId, Ports, RunEnd, Stage};
use crate::boundary::input::RingIn;
use crate::boundary::Shared;
use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::panics as report;

/// A publisher shared with the island that subscribes to it.
pub type SharedPublisher<T> = StdArc<dyn Publisher<T> + Send + Sync>;

/// A source stage that subscribes to a [`Publisher`] and emits its elements, through a
/// [`BoundarySubscriber`](crate::boundary::BoundarySubscriber) (see the module docs for the
/// buffering and demand rules).
pub struct PublisherSource<T>(Segment<T>);

impl<T> fmt::Debug for PublisherSource<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("PublisherSource").field(&self.0).finish()
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
        let shared = Shared::new(size);
        PublisherSource(Segment::new(
            Entry::Ring(RingIn::new(shared, Some(publisher))),
            port_terminal(outlet),
            SegOut::Port(outlet.id().index()),
        ))
    }
}

impl<T: Send + 'static> Stage for PublisherSource<T> {
    fn ports(&self, ports: &mut Ports) {
        self.0.ports(ports);
    }
    fn name(&self) -> &'static str {
        "PublisherSource"
    }
    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        self.0.pre_start(ctx);
    }
    fn on_pull(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
        self.0.on_pull(p, ctx);
    }
    fn on_async_input(&mut self, ctx: &mut Ctx<'_>) {
        self.0.on_async_input(ctx);
    }
    fn on_downstream_finish(&mut self, p: PortId, ctx: &mut Ctx<'_>) {
        self.0.on_downstream_finish(p, ctx);
    }
    fn on_park(&mut self, end: RunEnd, ctx: &mut Ctx<'_>) {
        self.0.on_park(end, ctx);
    }
    fn post_stop(&mut self) {
        self.0.post_stop();
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

/// One subscriber served from inside an island: its demand, its cancel, its signals. Used by
/// [`SubscriberSink`] (a stage of its own) and by a fused segment that ends in the island's
/// subscriber (after a boundary), so both serve a subscriber the same way.
pub(crate) struct SubscriberOut<T> {
    subscriber: Option<BoxSubscriber<T>>,
    shared: Option<Arc<OutputShared>>,
    /// Elements delivered (the island's own count: no atomic per element).
    emitted: u64,
    /// The demand total last read; re-read only when `emitted` reaches it.
    limit: u64,
}

impl<T> fmt::Debug for SubscriberOut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriberOut")
            .field("emitted", &self.emitted)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> SubscriberOut<T> {
    pub(crate) fn new(subscriber: BoxSubscriber<T>) -> Self {
        SubscriberOut {
            subscriber: Some(subscriber),
            shared: None,
            emitted: 0,
            limit: 0,
        }
    }

    /// Hands the subscriber its subscription (`on_subscribe`, on the thread that starts the
    /// island); a panic there cancels it.
    pub(crate) fn start(&mut self, ctx: &mut Ctx<'_>) {
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
                self.finish(None);
            }
        }
    }

    fn flags(&self) -> usize {
        match (&self.shared, &self.subscriber) {
            (Some(s), Some(_)) => s.flags.load(Ordering::Acquire),
            _ => CANCELLED,
        }
    }

    /// Elements it may deliver now (0 after a cancel or a bad request: see [`closed`]).
    ///
    /// [`closed`]: Self::closed
    #[inline]
    pub(crate) fn room(&mut self) -> usize {
        if self.flags() != 0 {
            return 0;
        }
        if self.emitted == self.limit {
            if let Some(s) = &self.shared {
                self.limit = s.demand.total();
            }
        }
        if self.limit == UNBOUNDED {
            return usize::MAX;
        }
        usize::try_from(self.limit - self.emitted).unwrap_or(usize::MAX)
    }

    /// Whether the subscription ended from downstream: cancelled, or `request(0)`, which the
    /// subscriber is told about with `on_error` naming rule 3.9.
    pub(crate) fn closed(&mut self) -> Option<Closing> {
        let flags = self.flags();
        if flags & BAD_REQUEST != 0 && self.subscriber.is_some() {
            Some(Closing::Failed(SpecViolation::NonPositiveRequest.into()))
        } else if flags & CANCELLED != 0 {
            Some(Closing::Cancelled)
        } else {
            None
        }
    }

    /// Delivers `x` (`on_next`); a panicking subscriber is cancelled (2.13): [`Sent::Done`].
    #[inline]
    pub(crate) fn push(&mut self, x: T) -> Sent {
        if self.flags() != 0 {
            drop(x); // cancelled meanwhile: 1.8
            return Sent::Pushed;
        }
        self.emitted += 1;
        if let Some(subscriber) = self.subscriber.as_mut() {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_next(x))) {
                report::subscriber_panicked("on_next", p);
                self.finish(None);
                return Sent::Done;
            }
        }
        Sent::Pushed
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

    /// Whether the subscriber was let go.
    pub(crate) fn is_finished(&self) -> bool {
        self.subscriber.is_none()
    }
}

/// A sink stage that serves one [`Subscriber`] (see the module docs).
pub struct SubscriberSink<T> {
    inlet: Inlet<T>,
    out: SubscriberOut<T>,
}

impl<T> fmt::Debug for SubscriberSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriberSink")
            .field("out", &self.out)
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
            out: SubscriberOut::new(subscriber),
        }
    }

    /// Acts on a cancel or a bad request; otherwise pulls if there is demand.
    fn check(&mut self, ctx: &mut Ctx<'_>) {
        if self.out.room() > 0 {
            if !ctx.is_inlet_closed(self.inlet) && !ctx.has_been_pulled(self.inlet) {
                ctx.pull(self.inlet);
            }
            return;
        }
        match self.out.closed() {
            Some(Closing::Cancelled) => self.finish(None, ctx),
            Some(Closing::Failed(e)) => self.finish(Some(Some(e)), ctx),
            None => {}
        }
    }

    fn finish(&mut self, terminal: Option<Option<Error>>, ctx: &mut Ctx<'_>) {
        self.out.finish(terminal);
        ctx.complete_stage();
    }
}

impl<T: Send + 'static> Stage for SubscriberSink<T> {
    fn ports(&self, ports: &mut Ports) {
        ports.inlet(self.inlet);
    }

    fn pre_start(&mut self, ctx: &mut Ctx<'_>) {
        self.out.start(ctx);
        if self.out.is_finished() {
            ctx.complete_stage();
            return;
        }
        self.check(ctx);
    }

    #[inline]
    fn on_push(&mut self, _: PortId, ctx: &mut Ctx<'_>) {
        let x = ctx.grab(self.inlet);
        if self.out.push(x) == Sent::Done {
            ctx.complete_stage(); // 2.13: a panicking subscriber is cancelled
            return;
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
        self.out.finish(None);
    }
}
