//! The ready-made subscribers: [`Collect`], [`ForEach`] and [`Fold`], one [`Core`] (the
//! signal handling) with what each does with an element ([`Consume`]).

use std::fmt;

use rs_api::{Error, Subscriber, SubscriptionRef};

use super::handle::{Cancelled, Dropped, Handle, Panicked, Slot};
use super::request::{RequestStrategy, Upstream};
use crate::loom::sync::Arc;

/// What a ready-made subscriber does with each element, and what its handle gets at the end.
pub(super) trait Consume<T>: Send {
    /// The outcome of a stream that completed.
    type Output;
    /// Takes one element.
    fn consume(&mut self, item: T);
    /// The outcome, at `on_complete`.
    fn finish(&mut self) -> Self::Output;
}

/// The signal handling both ready-made subscribers share: the subscription ([`Upstream`],
/// which requests by the strategy and keeps calls serial with the handle's cancel), the
/// consumer, and the outcome slot (completed with [`Panicked`] when the consumer panics, and
/// with [`Cancelled`] or [`Dropped`] if the subscriber is dropped without a terminal signal).
pub(super) struct Core<C, R> {
    upstream: Upstream,
    consumer: C,
    slot: Arc<Slot<R>>,
    /// The consumer panicked: it is not called again, and the outcome is set.
    panicked: bool,
}

impl<C, R> Core<C, R> {
    /// A subscriber core consuming with `consumer`, and its handle.
    #[track_caller]
    fn new(strategy: RequestStrategy, consumer: C) -> (Self, Handle<R>) {
        strategy.check();
        let slot = Slot::new();
        let core = Core {
            upstream: Upstream::new(strategy),
            consumer,
            slot: slot.clone(),
            panicked: false,
        };
        (core, Handle::new(slot))
    }

    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.upstream.on_subscribe(&self.slot.gate, subscription);
    }

    fn on_next<T>(&mut self, item: T)
    where
        C: Consume<T, Output = R>,
    {
        if self.panicked {
            return; // an element in flight when the cancel was made (rule 2.8)
        }
        let consumer = &mut self.consumer;
        match crate::panics::guard("on_next", || consumer.consume(item)) {
            Ok(()) => self.upstream.consumed_one(&self.slot.gate),
            Err(violation) => {
                // The panic ends this subscriber, not the publisher's thread: the subscriber
                // cancels (2.13 asks signals to return normally) and reports its own outcome.
                self.panicked = true;
                let message = match &violation {
                    rs_api::SpecViolation::SubscriberPanicked { message, .. } => message.clone(),
                    other => other.to_string(),
                };
                // Cancel first: the outcome's slot forgets the subscription once set.
                self.upstream.cancel(&self.slot.gate);
                self.slot
                    .complete(Err(Error::new(Panicked::new("on_next", message))));
            }
        }
    }

    fn on_error(&mut self, error: Error) {
        self.upstream.end();
        self.slot.complete(Err(error));
    }

    fn on_complete<T>(&mut self)
    where
        C: Consume<T, Output = R>,
    {
        self.upstream.end();
        if !self.panicked {
            self.slot.complete(Ok(self.consumer.finish()));
        }
    }
}

impl<C, R> Drop for Core<C, R> {
    fn drop(&mut self) {
        // Whether the handle cancelled is looked at only when no outcome was set (under the
        // outcome's lock, then the gate's: nothing takes them in the other order).
        let slot = &self.slot;
        slot.complete_with(|| {
            Err(if slot.cancelled() {
                Error::new(Cancelled)
            } else {
                Error::new(Dropped)
            })
        });
    }
}

/// The four signals of a ready-made subscriber (a newtype over its [`Core`]) go to the core.
macro_rules! signals_to_core {
    () => {
        fn on_subscribe(&mut self, subscription: SubscriptionRef) {
            self.0.on_subscribe(subscription);
        }

        fn on_next(&mut self, item: T) {
            self.0.on_next(item);
        }

        fn on_error(&mut self, error: Error) {
            self.0.on_error(error);
        }

        fn on_complete(&mut self) {
            self.0.on_complete::<T>();
        }
    };
}

/// Collects into a `Vec`.
impl<T: Send> Consume<T> for Vec<T> {
    type Output = Vec<T>;

    fn consume(&mut self, item: T) {
        self.push(item);
    }

    fn finish(&mut self) -> Vec<T> {
        std::mem::take(self)
    }
}

/// Calls a closure.
pub(super) struct Each<F>(F);

impl<T, F: FnMut(T) + Send> Consume<T> for Each<F> {
    type Output = ();

    fn consume(&mut self, item: T) {
        (self.0)(item);
    }

    fn finish(&mut self) {}
}

/// A subscriber that collects every element into a `Vec` (see [`collect`]).
#[must_use = "a subscriber receives nothing until subscribed to a publisher"]
pub struct Collect<T>(Core<Vec<T>, Vec<T>>);

impl<T> fmt::Debug for Collect<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collect")
            .field("upstream", &self.0.upstream)
            .field("received", &self.0.consumer.len())
            .finish()
    }
}

/// A subscriber that collects every element, and the handle that returns them (dropping the
/// handle cancels the subscription: see [`Handle`]).
///
/// # Panics
///
/// If `strategy` is `Prefetch(0)`.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, h) = collect(RequestStrategy::Prefetch(2));
/// rs_impl::source::range(0u8..5).subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
#[track_caller]
pub fn collect<T>(strategy: RequestStrategy) -> (Collect<T>, Handle<Vec<T>>) {
    let (core, handle) = Core::new(strategy, Vec::new());
    (Collect(core), handle)
}

impl<T: Send> Subscriber<T> for Collect<T> {
    signals_to_core!();
}

/// A subscriber that calls a closure for each element (see [`for_each`]).
#[must_use = "a subscriber receives nothing until subscribed to a publisher"]
pub struct ForEach<F>(Core<Each<F>, ()>);

impl<F> fmt::Debug for ForEach<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForEach")
            .field("upstream", &self.0.upstream)
            .finish_non_exhaustive()
    }
}

/// A subscriber that calls `f` for each element on the publisher's thread, and the handle
/// that reports how the stream ended (dropping the handle cancels the subscription: see
/// [`Handle`]). If `f` panics, the subscriber cancels its subscription and the outcome is
/// [`Panicked`]; the panic does not reach the publisher.
///
/// # Panics
///
/// If `strategy` is `Prefetch(0)`.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{for_each, RequestStrategy};
/// let (s, h) = for_each(RequestStrategy::Prefetch(16), |x: u32| assert!(x < 3));
/// rs_impl::source::range(0u32..3).subscribe(Box::new(s));
/// h.wait().unwrap();
/// ```
#[track_caller]
pub fn for_each<T, F>(strategy: RequestStrategy, f: F) -> (ForEach<F>, Handle<()>)
where
    F: FnMut(T) + Send,
{
    let (core, handle) = Core::new(strategy, Each(f));
    (ForEach(core), handle)
}

impl<T, F> Subscriber<T> for ForEach<F>
where
    F: FnMut(T) + Send,
{
    signals_to_core!();
}

/// Folds with a closure; the accumulator is out only while the closure runs.
pub(super) struct Folder<A, F> {
    acc: Option<A>,
    f: F,
}

impl<T, A: Send, F: FnMut(A, T) -> A + Send> Consume<T> for Folder<A, F> {
    type Output = A;

    #[inline]
    fn consume(&mut self, item: T) {
        if let Some(acc) = self.acc.take() {
            self.acc = Some((self.f)(acc, item));
        }
    }

    fn finish(&mut self) -> A {
        // Always there: `consume` puts it back unless the closure panicked, and after a
        // panic the core never calls `finish`.
        self.acc
            .take()
            .expect("the fold's accumulator is there until the end")
    }
}

/// A subscriber that folds every element into an accumulator (see [`fold`]).
#[must_use = "a subscriber receives nothing until subscribed to a publisher"]
pub struct Fold<A, F>(Core<Folder<A, F>, A>);

impl<A, F> fmt::Debug for Fold<A, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fold")
            .field("upstream", &self.0.upstream)
            .finish_non_exhaustive()
    }
}

/// A subscriber that folds every element into `init` with `f` (as [`Iterator::fold`]) on the
/// publisher's thread, and the handle that returns the result when the stream completes: a
/// sum, a count, a maximum without writing a subscriber. If `f` panics, the subscriber
/// cancels its subscription and the outcome is [`Panicked`]; an error upstream is the
/// outcome instead of the result (dropping the handle cancels the subscription: see
/// [`Handle`]).
///
/// # Panics
///
/// If `strategy` is `Prefetch(0)`.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{fold, RequestStrategy};
/// let (s, sum) = fold(RequestStrategy::Unbounded, 0u64, |acc, x: u64| acc + x);
/// rs_impl::source::range(1u64..=100).subscribe(Box::new(s));
/// assert_eq!(sum.wait().unwrap(), 5050);
///
/// // The largest element, one at a time:
/// let (s, max) = fold(RequestStrategy::OneByOne, None, |m: Option<i32>, x| m.max(Some(x)));
/// rs_impl::source::from_iter(vec![3, 9, 4]).subscribe(Box::new(s));
/// assert_eq!(max.wait().unwrap(), Some(9));
/// ```
#[track_caller]
pub fn fold<T, A, F>(strategy: RequestStrategy, init: A, f: F) -> (Fold<A, F>, Handle<A>)
where
    A: Send,
    F: FnMut(A, T) -> A + Send,
{
    let (core, handle) = Core::new(strategy, Folder { acc: Some(init), f });
    (Fold(core), handle)
}

impl<T, A, F> Subscriber<T> for Fold<A, F>
where
    A: Send,
    F: FnMut(A, T) -> A + Send,
{
    signals_to_core!();
}
