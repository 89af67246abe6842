//! [`failed`]: `on_error` right after `on_subscribe` ([`Failed`]).

use std::fmt;
use std::marker::PhantomData;

use rs_api::{BoxSubscriber, Error, Publisher};

use super::pull::{self, Pull, Pulled};

/// Fails each subscriber right after `on_subscribe` (see [`failed`]).
#[must_use = "a publisher does nothing until subscribed to"]
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

pub(super) struct Fail(pub(super) Option<Error>);

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
