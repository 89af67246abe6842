//! [`IslandProcessor`]: a flow as a processor.

use std::fmt;
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, SubscriptionRef};

use super::builder::Flow;
use super::publisher::{refuse, FlowPublisher};
use super::shape::{FromBoundary, Shape};
use crate::boundary::BoundarySubscriber;
use crate::island::Runtime;
use crate::loom::sync::atomic::{AtomicBool, Ordering};

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
    #[track_caller]
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
