//! [`just`]: one value, then `on_complete` ([`Just`]).

use rs_api::{BoxSubscriber, Publisher};

use super::iter::IterPull;
use super::made::subscribe_made;

/// Publishes one value, then completes (see [`just`]).
#[derive(Debug, Clone)]
#[must_use = "a publisher does nothing until subscribed to"]
pub struct Just<T> {
    value: T,
}

/// A publisher of `value` alone (a clone per subscription), then `on_complete`. Merged or
/// flat-mapped ([`crate::merge`]), it is a known single value: it is emitted without a
/// subscription.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, r) = collect(RequestStrategy::OneByOne);
/// rs_impl::source::just(7u8).subscribe(Box::new(s));
/// assert_eq!(r.wait().unwrap(), vec![7]);
/// ```
pub fn just<T: Clone>(value: T) -> Just<T> {
    Just { value }
}

impl<T> Just<T> {
    /// The value.
    pub(crate) fn into_value(self) -> T {
        self.value
    }
}

impl<T: Clone + Send + 'static> Publisher<T> for Just<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        subscribe_made(|| IterPull(std::iter::once(self.value.clone())), subscriber);
    }
}
