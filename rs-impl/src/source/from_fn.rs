//! [`from_fn`]: a fresh iterator made per subscription ([`FnPublisher`]).

use std::fmt;

use rs_api::{BoxSubscriber, Publisher};

use super::iter::IterPull;
use super::made::subscribe_made;

/// Publishes the iterator made by a factory for each subscription (see [`from_fn`]).
#[must_use = "a publisher does nothing until subscribed to"]
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
