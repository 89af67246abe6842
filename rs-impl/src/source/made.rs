//! Sources made per subscription: the guard around a user's factory.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::{BoxSubscriber, Error};

use super::failed::Fail;
use super::pull::{self, Pull};

/// Makes the source of one subscription with `make` and starts it. A panic in `make` (a
/// user's factory, `Clone` or `into_iter`) must not escape `subscribe` (rule 1.9): the
/// subscriber gets `on_subscribe` and then `on_error` saying so (1.4), like a panic in `pull`.
pub(super) fn subscribe_made<T, P>(make: impl FnOnce() -> P, subscriber: BoxSubscriber<T>)
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
