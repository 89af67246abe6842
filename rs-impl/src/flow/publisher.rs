//! A flow as a publisher ([`FlowPublisher`]) and as a processor ([`IslandProcessor`]).
//!
//! Type erasure happens here, at the island's edge: a [`FlowPublisher<T>`] holds its blueprint
//! behind a trait object whose two methods are each compiled for that blueprint's exact type
//! (one for a subscriber, one for a boundary of ours), so the fused chain inside stays static.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
};

use super::builder::Flow;
use super::edge::{RingExit, SubscriberExit};
use super::shape::{Build, FromBoundary, Shape};
use crate::boundary::output::RingOut;
use crate::boundary::ring::Shared;
use crate::boundary::BoundarySubscriber;
use crate::island::{Island, IslandError, Runtime};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::loom::sync::{Arc, Mutex};
use crate::panics as report;

/// Where a subscriber waits until its island starts (so that a failed build can give it
/// back).
pub(crate) type SubscriberSlot<T> = Arc<Mutex<Option<BoxSubscriber<T>>>>;

/// A blueprint with its island budget, erased at the island's edge.
pub(crate) trait Blueprint<T>: Send + Sync {
    /// The islands of one materialisation serving the subscriber in `slot`.
    fn for_subscriber(&self, slot: &SubscriberSlot<T>) -> Result<Vec<Island>, Error>;
    /// The islands of one materialisation whose last one writes into `ring` (claimed).
    fn into_ring(&self, ring: &Arc<Shared<T>>) -> Result<Vec<Island>, Error>;
    /// The islands one materialisation runs on.
    fn islands(&self) -> usize;
}

/// A blueprint and the budget of its islands.
pub(crate) struct Plan<S> {
    pub(crate) shape: S,
    pub(crate) budget: u64,
}

impl<S: Shape> Plan<S> {
    fn build<X: super::exit::Exit<S::Out> + 'static>(&self, exit: X) -> Result<Vec<Island>, Error> {
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut b = Build::default();
            self.shape.place(&mut b, exit)?;
            b.finish()
        }));
        let interpreters = match r {
            Ok(Ok(i)) => i,
            Ok(Err(e)) => return Err(Error::new(e)),
            Err(p) => {
                return Err(Error::new(IslandError::StagePanicked {
                    stage: "a stage factory",
                    message: report::panic_message(&*p),
                }))
            }
        };
        Ok(interpreters
            .into_iter()
            .map(|i| Island::new(i).with_budget(self.budget))
            .collect())
    }
}

impl<S: Shape> Blueprint<S::Out> for Plan<S> {
    fn for_subscriber(&self, slot: &SubscriberSlot<S::Out>) -> Result<Vec<Island>, Error> {
        self.build(SubscriberExit::deferred(slot.clone()))
    }

    fn into_ring(&self, ring: &Arc<Shared<S::Out>>) -> Result<Vec<Island>, Error> {
        let cap = (ring.size() / 2).max(1);
        self.build(RingExit(RingOut::new(ring.clone(), cap)))
    }

    fn islands(&self) -> usize {
        self.shape.islands()
    }
}

/// A blueprint that could not be materialised: the error, and the subscriber given back (not
/// yet subscribed to anything).
pub struct NotBuilt<T> {
    /// The subscriber handed to [`Flow::into_island`].
    pub subscriber: BoxSubscriber<T>,
    /// Why the island could not be built.
    pub error: Error,
}

impl<T> fmt::Debug for NotBuilt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotBuilt")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// Materialises `plan` for `subscriber`.
pub(crate) fn islands_for<T: Send + 'static>(
    plan: &dyn Blueprint<T>,
    subscriber: BoxSubscriber<T>,
) -> Result<Vec<Island>, NotBuilt<T>> {
    let slot: SubscriberSlot<T> = Arc::new(Mutex::new(Some(subscriber)));
    match plan.for_subscriber(&slot) {
        Ok(islands) => Ok(islands),
        Err(e) => {
            let subscriber = slot.lock().take();
            Err(NotBuilt {
                subscriber: subscriber.unwrap_or_else(|| Box::new(Refused)),
                error: e,
            })
        }
    }
}

/// Stands in for a subscriber lost inside a failed build; never signalled.
struct Refused;

impl<T> Subscriber<T> for Refused {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.cancel();
    }
    fn on_next(&mut self, _: T) {}
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {}
}

/// The subscription given with a refusal: nothing to request or cancel.
struct Over;

impl Subscription for Over {
    fn request(&self, _: u64) {}
    fn cancel(&self) {}
}

/// 1.9: `on_subscribe`, then the refusal as `on_error`; no panic escapes.
pub(crate) fn refuse<T>(mut subscriber: BoxSubscriber<T>, error: Error) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        subscriber.on_subscribe(StdArc::new(Over));
        subscriber.on_error(error);
    }));
    if let Err(p) = r {
        report::subscriber_panicked("on_error", p);
    }
    report::drop_guarded(subscriber);
}

/// Starts `islands` here (`on_subscribe` before `subscribe` returns) and spawns them.
fn start_and_spawn(islands: Vec<Island>, runtime: &Runtime) {
    let mut islands = islands;
    for island in &mut islands {
        island.start();
    }
    for island in islands {
        runtime.spawn(island);
    }
}

/// A publisher running a [`Flow`] on a [`Runtime`]: each `subscribe` materialises the
/// blueprint afresh (its own islands, its own upstream subscription) and spawns it. See
/// [`Flow`] for the contract.
#[must_use = "a publisher does nothing until it is subscribed to"]
pub struct FlowPublisher<T> {
    plan: StdArc<dyn Blueprint<T>>,
    runtime: Runtime,
}

impl<T> Clone for FlowPublisher<T> {
    fn clone(&self) -> Self {
        FlowPublisher {
            plan: self.plan.clone(),
            runtime: self.runtime.clone(),
        }
    }
}

impl<T> fmt::Debug for FlowPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlowPublisher")
            .field("islands", &self.plan.islands())
            .field("runtime", &self.runtime)
            .finish()
    }
}

impl<T: Send + 'static> FlowPublisher<T> {
    pub(crate) fn new(plan: StdArc<dyn Blueprint<T>>, runtime: Runtime) -> Self {
        FlowPublisher { plan, runtime }
    }

    /// Materialises the flow into `ring` (a boundary of ours, whose producer side the caller
    /// claimed) and spawns it; a failed build fails the ring.
    pub(crate) fn spawn_into(&self, ring: Arc<Shared<T>>) {
        match self.plan.into_ring(&ring) {
            Ok(islands) => start_and_spawn(islands, &self.runtime),
            Err(e) => RingOut::new(ring, 1).fail(e),
        }
    }
}

impl<T: Send + 'static> Publisher<T> for FlowPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        match islands_for(&*self.plan, subscriber) {
            Ok(islands) => start_and_spawn(islands, &self.runtime),
            Err(NotBuilt { subscriber, error }) => refuse(subscriber, error),
        }
    }
}

/// A [`Processor`](rs_api::Processor) that runs a flow on its own islands: its subscriber
/// half is the first island's input side (a [`BoundarySubscriber`]), its publisher half the
/// last island's output. A cheap `Clone` handle (one clone goes to the upstream's
/// `subscribe`, another serves the downstream).
///
/// **Unicast:** the first downstream `subscribe` materialises the flow; any later subscriber
/// gets `on_subscribe` and then `on_error` with [`SpecViolation::Rejected`] (rule 1.9). The
/// upstream may subscribe the processor before or after that: signals that arrive first wait
/// in the input buffer (its size, prefetched and replenished by half) and the island catches
/// up when it starts. Everything else is the contract of [`Flow`]: the upstream's completion
/// after every element, its error at once, a downstream cancel cancelling it.
///
/// # Examples
///
/// ```
/// use rs_api::{Publisher, PublisherExt};
/// use rs_impl::flow::IslandProcessor;
/// use rs_impl::island::Runtime;
/// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
///
/// let runtime = Runtime::with_threads(1).unwrap();
/// let doubled = IslandProcessor::new(|f| f.map(|x: u32| x * 2), 16, &runtime);
/// let (s, h) = collect(RequestStrategy::Prefetch(4));
/// doubled.subscribe(Box::new(s));
/// source::range(0u32..5).subscribe_with(doubled.clone());
/// assert_eq!(h.wait().unwrap(), vec![0, 2, 4, 6, 8]);
/// ```
#[must_use = "a processor does nothing until it is subscribed to and subscribed with"]
pub struct IslandProcessor<T, R> {
    input: BoundarySubscriber<T>,
    shared: StdArc<ProcessorShared<R>>,
}

struct ProcessorShared<R> {
    publisher: FlowPublisher<R>,
    materialised: AtomicBool,
}

impl<T, R> Clone for IslandProcessor<T, R> {
    fn clone(&self) -> Self {
        IslandProcessor {
            input: self.input.clone(),
            shared: self.shared.clone(),
        }
    }
}

impl<T, R> fmt::Debug for IslandProcessor<T, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IslandProcessor")
            .field("publisher", &self.shared.publisher)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static, R: Send + 'static> IslandProcessor<T, R> {
    /// A processor running `build(input)` on `runtime`, where `input` is the flow of the
    /// elements this processor receives as a subscriber, through an input buffer of `buffer`
    /// elements (rounded up to a power of two).
    ///
    /// # Panics
    ///
    /// If `buffer` is 0.
    ///
    /// # Examples
    ///
    /// See [`IslandProcessor`].
    pub fn new<S, F>(build: F, buffer: usize, runtime: &Runtime) -> Self
    where
        S: Shape<Out = R>,
        F: FnOnce(Flow<FromBoundary<T>>) -> Flow<S>,
    {
        let (input, ring) = BoundarySubscriber::<T>::new(buffer);
        let flow = build(Flow::from_boundary(ring));
        IslandProcessor {
            input,
            shared: StdArc::new(ProcessorShared {
                publisher: flow.into_publisher(runtime),
                materialised: AtomicBool::new(false),
            }),
        }
    }
}

impl<T: Send + 'static, R: Send + 'static> Subscriber<T> for IslandProcessor<T, R> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.input.on_subscribe(subscription);
    }
    fn on_next(&mut self, item: T) {
        self.input.on_next(item);
    }
    fn on_error(&mut self, error: Error) {
        self.input.on_error(error);
    }
    fn on_complete(&mut self) {
        self.input.on_complete();
    }
}

impl<T: Send + 'static, R: Send + 'static> Publisher<R> for IslandProcessor<T, R> {
    fn subscribe(&self, subscriber: BoxSubscriber<R>) {
        if self.shared.materialised.swap(true, Ordering::AcqRel) {
            refuse(
                subscriber,
                SpecViolation::Rejected {
                    reason: "an IslandProcessor serves one subscriber".into(),
                }
                .into(),
            );
            return;
        }
        self.shared.publisher.subscribe(subscriber);
    }
}
