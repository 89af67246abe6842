//! Cold, unicast source publishers.
//!
//! # Contract
//!
//! * **Cold:** every [`subscribe`](rs_api::Publisher::subscribe) starts a fresh run of the
//!   source for that subscriber alone; any number of subscribers may subscribe, each sees the
//!   whole sequence (rule 1.11: each subscription is independent).
//! * **Driven by the caller:** there is no thread of its own. Signals are delivered by whoever
//!   is draining the subscription's [serial drain loop](crate::serial): the `subscribe` caller
//!   (for `on_subscribe`, and for terminal signals of empty or failed sources), then the
//!   callers of `request`. `request` may therefore call `on_next`, `on_complete` and `on_error`
//!   synchronously (rules 3.10, 3.11), re-entrantly with depth 1 (3.3).
//! * **Demand:** never more `on_next` than requested (1.1); `request(0)` ends the subscription
//!   with `on_error(`[`SpecViolation::NonPositiveRequest`](rs_api::SpecViolation)`)` (3.9);
//!   demand saturates (3.17).
//! * **End:** a finite source completes as soon as its end is known, without waiting for more
//!   demand: the engine pulls one element ahead (see [`Pull`]). Empty and failed sources
//!   terminate right after `on_subscribe`.
//! * **Cancel:** signals stop at once if cancel comes from inside `on_next`, or after the
//!   element in flight if it comes from another thread (1.8, 3.12); the subscriber and the
//!   source are dropped (3.13). Nothing is buffered, so nothing in flight is lost.
//! * **Panics:** a panicking subscriber is cancelled and dropped (2.13); a panicking source fails
//!   the stream with `on_error` (also a factory that panics while making the source for a
//!   subscription: `on_subscribe`, then `on_error`). No panic reaches the caller.
//! * **Memory:** one subscription holds the subscriber, the source and at most one element
//!   pulled ahead.
//!
//! | publisher | what it emits |
//! |---|---|
//! | [`from_iter`] | the elements of a cloneable `IntoIterator`, then `on_complete` |
//! | [`range`] | the integers of a range (`a..b`, `a..=b`, or open: `a..`), then `on_complete` |
//! | [`from_fn`] | the elements of a fresh iterator made per subscription |
//! | [`from_pull`] | the steps of a fresh [`Pull`] source made per subscription (which may answer "not ready" and wake the engine later) |
//! | [`push`] | what a [`Producer`] offers, from callbacks, a thread or async code: hot, unicast, bounded (its own module docs give its contract) |
//! | [`empty`] | `on_complete` at once |
//! | [`failed`] | `on_error` with the given error at once |
//! | [`never()`] | nothing, until cancelled |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let numbers = source::range(0u64..10);
//! let (subscriber, result) = collect(RequestStrategy::Prefetch(4));
//! numbers.subscribe(Box::new(subscriber));
//! assert_eq!(result.wait().unwrap(), (0..10).collect::<Vec<_>>());
//! ```

mod pull;
mod push;
mod range;

use std::fmt;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::{BoxSubscriber, Error, Publisher};

pub use pull::{Pull, Pulled};
pub use push::{push, Abandoned, Closed, Offer, Producer, PushPublisher, TryOfferError};
pub use range::IntegerRange;

/// Makes the source of one subscription with `make` and starts it. A panic in `make` (a
/// user's factory, `Clone` or `into_iter`) must not escape `subscribe` (rule 1.9): the
/// subscriber gets `on_subscribe` and then `on_error` saying so (1.4), like a panic in `pull`.
fn subscribe_made<T, P>(make: impl FnOnce() -> P, subscriber: BoxSubscriber<T>)
where
    T: Send + 'static,
    P: Pull<T> + 'static,
{
    match catch_unwind(AssertUnwindSafe(make)) {
        Ok(source) => pull::subscribe_pull(source, subscriber),
        Err(payload) => {
            let error = Error::msg(format!(
                "the source panicked while being made for a subscription: {}",
                crate::panics::panic_message(&*payload)
            ));
            pull::subscribe_pull(Fail(Some(error)), subscriber);
        }
    }
}

/// Adapts an iterator to [`Pull`].
#[derive(Debug)]
struct IterPull<I>(I);

impl<I> Pull<I::Item> for IterPull<I>
where
    I: Iterator + Send,
{
    fn pull(&mut self) -> Pulled<I::Item> {
        match self.0.next() {
            Some(item) => Pulled::Next(item),
            None => Pulled::Complete,
        }
    }
}

/// Publishes the elements of a cloneable `IntoIterator` (see [`from_iter`]).
#[derive(Debug, Clone)]
pub struct IterPublisher<I> {
    iterable: I,
}

/// A publisher of the elements of `iterable`; each subscription iterates a fresh clone.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let p = rs_impl::source::from_iter(vec!["a", "b"]);
/// for _ in 0..2 {
///     let (s, r) = collect(RequestStrategy::OneByOne);
///     p.subscribe(Box::new(s));
///     assert_eq!(r.wait().unwrap(), vec!["a", "b"]);
/// }
/// ```
pub fn from_iter<I>(iterable: I) -> IterPublisher<I>
where
    I: IntoIterator + Clone,
{
    IterPublisher { iterable }
}

/// A publisher of the integers in `range`: `a..b`, `a..=b`, or the open `a..`, which runs to
/// the type's maximum (included) and then completes, instead of overflowing.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// rs_impl::source::range(3i32..6).subscribe(Box::new(s));
/// assert_eq!(r.wait().unwrap(), vec![3, 4, 5]);
///
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// rs_impl::source::range(250u8..).subscribe(Box::new(s)); // open: up to u8::MAX
/// assert_eq!(r.wait().unwrap(), vec![250, 251, 252, 253, 254, 255]);
/// ```
pub fn range<R: IntegerRange>(range: R) -> IterPublisher<R::Iter> {
    IterPublisher {
        iterable: range.into_bounded(),
    }
}

impl<I> Publisher<I::Item> for IterPublisher<I>
where
    I: IntoIterator + Clone,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<I::Item>) {
        subscribe_made(|| IterPull(self.iterable.clone().into_iter()), subscriber);
    }
}

/// Publishes the iterator made by a factory for each subscription (see [`from_fn`]).
pub struct FnPublisher<F> {
    factory: F,
}

impl<F> fmt::Debug for FnPublisher<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnPublisher").finish_non_exhaustive()
    }
}

/// A publisher that calls `factory` once per subscription and publishes that iterator.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let p = rs_impl::source::from_fn(|| (1..=3).map(|x| x * 10));
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// assert_eq!(r.wait().unwrap(), vec![10, 20, 30]);
/// ```
pub fn from_fn<F, I>(factory: F) -> FnPublisher<F>
where
    F: Fn() -> I,
    I: IntoIterator,
{
    FnPublisher { factory }
}

impl<F, I> Publisher<I::Item> for FnPublisher<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::IntoIter: Send + 'static,
    I::Item: Send + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<I::Item>) {
        subscribe_made(|| IterPull((self.factory)().into_iter()), subscriber);
    }
}

/// Publishes the [`Pull`] source made by a factory for each subscription (see [`from_pull`]).
pub struct PullPublisher<F> {
    factory: F,
}

impl<F> fmt::Debug for PullPublisher<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PullPublisher").finish_non_exhaustive()
    }
}

/// A publisher that calls `factory` once per subscription and drives that [`Pull`] source.
///
/// # Examples
///
/// See [`Pull`].
pub fn from_pull<F, P>(factory: F) -> PullPublisher<F>
where
    F: Fn() -> P,
{
    PullPublisher { factory }
}

impl<T, F, P> Publisher<T> for PullPublisher<F>
where
    F: Fn() -> P,
    P: Pull<T> + 'static,
    T: Send + 'static,
{
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        subscribe_made(|| (self.factory)(), subscriber);
    }
}

/// Completes each subscriber right after `on_subscribe` (see [`empty`]).
pub struct Empty<T>(PhantomData<fn() -> T>);

impl<T> fmt::Debug for Empty<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Empty")
    }
}

impl<T> Clone for Empty<T> {
    fn clone(&self) -> Self {
        Empty(PhantomData)
    }
}

/// A publisher of no elements: `on_subscribe`, then `on_complete` (rule 1.5, 2.9).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect::<u8>(RequestStrategy::Unbounded);
/// rs_impl::source::empty().subscribe(Box::new(s));
/// assert!(r.wait().unwrap().is_empty());
/// ```
pub fn empty<T>() -> Empty<T> {
    Empty(PhantomData)
}

struct Done;

impl<T> Pull<T> for Done {
    fn pull(&mut self) -> Pulled<T> {
        Pulled::Complete
    }
}

impl<T: Send + 'static> Publisher<T> for Empty<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        pull::subscribe_pull(Done, subscriber);
    }
}

/// Fails each subscriber right after `on_subscribe` (see [`failed`]).
pub struct Failed<T> {
    error: Error,
    _marker: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Failed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Failed").field(&self.error).finish()
    }
}

impl<T> Clone for Failed<T> {
    fn clone(&self) -> Self {
        Failed {
            error: self.error.clone(),
            _marker: PhantomData,
        }
    }
}

/// A publisher that fails every subscriber with `error`: `on_subscribe`, then `on_error`
/// (rules 1.4, 1.9, 2.10). Every subscriber gets a clone of the same error.
///
/// # Examples
///
/// ```
/// use rs_api::{Error, Publisher};
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect::<u8>(RequestStrategy::Unbounded);
/// rs_impl::source::failed(Error::msg("no data")).subscribe(Box::new(s));
/// assert_eq!(r.wait().unwrap_err().to_string(), "no data");
/// ```
pub fn failed<T>(error: Error) -> Failed<T> {
    Failed {
        error,
        _marker: PhantomData,
    }
}

struct Fail(Option<Error>);

impl<T> Pull<T> for Fail {
    fn pull(&mut self) -> Pulled<T> {
        match self.0.take() {
            Some(e) => Pulled::Error(e),
            None => Pulled::Never,
        }
    }
}

impl<T: Send + 'static> Publisher<T> for Failed<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        pull::subscribe_pull(Fail(Some(self.error.clone())), subscriber);
    }
}

/// Never signals anything after `on_subscribe` (see [`never()`]).
pub struct Never<T>(PhantomData<fn() -> T>);

impl<T> fmt::Debug for Never<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Never")
    }
}

impl<T> Clone for Never<T> {
    fn clone(&self) -> Self {
        Never(PhantomData)
    }
}

/// A publisher that never emits nor terminates: `on_subscribe` and then silence, until the
/// subscriber cancels (which drops it, 3.13). `request(0)` still fails it with the 3.9 error.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect::<u8>(RequestStrategy::Unbounded);
/// rs_impl::source::never().subscribe(Box::new(s));
/// assert!(r.try_take().is_none()); // still running
/// r.cancel();
/// ```
pub fn never<T>() -> Never<T> {
    Never(PhantomData)
}

struct Silent;

impl<T> Pull<T> for Silent {
    fn pull(&mut self) -> Pulled<T> {
        Pulled::Never
    }
}

impl<T: Send + 'static> Publisher<T> for Never<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        pull::subscribe_pull(Silent, subscriber);
    }
}
