//! [`empty`]: `on_complete` right after `on_subscribe` ([`Empty`]).

use std::fmt;
use std::marker::PhantomData;

use rs_api::{BoxSubscriber, Publisher};

use super::pull::{self, Pull, Pulled};

/// Completes each subscriber right after `on_subscribe` (see [`empty`]).
#[must_use = "a publisher does nothing until subscribed to"]
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
