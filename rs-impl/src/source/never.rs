//! [`never()`]: nothing after `on_subscribe`, until cancelled ([`Never`]).

use std::fmt;
use std::marker::PhantomData;

use rs_api::{BoxSubscriber, Publisher};

use super::pull::{self, Pull, Pulled};

/// Never signals anything after `on_subscribe` (see [`never()`]).
#[must_use = "a publisher does nothing until subscribed to"]
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
