//! [`from_pull`]: a fresh [`Pull`] source made per subscription ([`PullPublisher`]).

use std::fmt;

use rs_api::{BoxSubscriber, Publisher};

use super::made::subscribe_made;
use super::pull::Pull;

/// Publishes the [`Pull`] source made by a factory for each subscription (see [`from_pull`]).
#[must_use = "a publisher does nothing until subscribed to"]
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
