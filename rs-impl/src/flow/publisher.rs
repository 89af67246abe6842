//! A flow as a publisher: [`FlowPublisher`]; a materialisation that failed: [`NotBuilt`].

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef};

use super::blueprint::{start_and_spawn, Blueprint, SubscriberSlot};
use crate::island::{Island, Runtime};
use crate::loom::sync::{Arc, Mutex};
use crate::panics as report;

/// A blueprint that could not be materialised: the error, and the subscriber given back (not
/// yet subscribed to anything).
pub struct NotBuilt<T> {
    /// The subscriber handed to [`Flow::into_island`](crate::flow::Flow::into_island).
    pub subscriber: BoxSubscriber<T>,
    /// Why the island could not be built.
    pub error: Error,
}

impl<T> fmt::Debug for NotBuilt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NotBuilt")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// Materialises `plan` for `subscriber`.
pub(crate) fn islands_for<T: Send + 'static>(
    plan: &dyn Blueprint<T>,
    subscriber: BoxSubscriber<T>,
) -> Result<Vec<Island>, NotBuilt<T>> {
    let slot: SubscriberSlot<T> = Arc::new(Mutex::new(Some(subscriber)));
    match plan.for_subscriber(&slot) {
        Ok(islands) => Ok(islands),
        Err(e) => {
            let subscriber = slot.lock().take();
            Err(NotBuilt {
                subscriber: subscriber.unwrap_or_else(|| Box::new(Refused)),
                error: e,
            })
        }
    }
}

/// Stands in for a subscriber lost inside a failed build; never signalled.
struct Refused;

impl<T> Subscriber<T> for Refused {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.cancel();
    }
    fn on_next(&mut self, _: T) {}
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {}
}

/// The subscription given with a refusal: nothing to request or cancel.
struct Over;

impl Subscription for Over {
    fn request(&self, _: u64) {}
    fn cancel(&self) {}
}

/// 1.9: `on_subscribe`, then the refusal as `on_error`; no panic escapes.
pub(crate) fn refuse<T>(mut subscriber: BoxSubscriber<T>, error: Error) {
    let r = catch_unwind(AssertUnwindSafe(|| {
        subscriber.on_subscribe(StdArc::new(Over));
        subscriber.on_error(error);
    }));
    if let Err(p) = r {
        report::subscriber_panicked("on_error", p);
    }
    report::drop_guarded(subscriber);
}

/// A publisher running a [`Flow`](crate::flow::Flow) on a [`Runtime`]: each `subscribe` materialises the
/// blueprint afresh (its own islands, its own upstream subscription) and spawns it. See
/// [`Flow`](crate::flow::Flow) for the contract.
#[must_use = "a publisher does nothing until it is subscribed to"]
pub struct FlowPublisher<T> {
    plan: StdArc<dyn Blueprint<T>>,
    runtime: Runtime,
}

impl<T> Clone for FlowPublisher<T> {
    fn clone(&self) -> Self {
        FlowPublisher {
            plan: self.plan.clone(),
            runtime: self.runtime.clone(),
        }
    }
}

impl<T> fmt::Debug for FlowPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlowPublisher")
            .field("islands", &self.plan.islands())
            .field("runtime", &self.runtime)
            .finish()
    }
}

impl<T: Send + 'static> FlowPublisher<T> {
    pub(crate) fn new(plan: StdArc<dyn Blueprint<T>>, runtime: Runtime) -> Self {
        FlowPublisher { plan, runtime }
    }

    /// The blueprint and the runtime (for a flow of ours that reads this one).
    pub(crate) fn parts(&self) -> (StdArc<dyn Blueprint<T>>, Runtime) {
        (self.plan.clone(), self.runtime.clone())
    }
}

impl<T: Send + 'static> Publisher<T> for FlowPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        match islands_for(&*self.plan, subscriber) {
            Ok(islands) => start_and_spawn(islands, &self.runtime),
            Err(NotBuilt { subscriber, error }) => refuse(subscriber, error),
        }
    }
}
