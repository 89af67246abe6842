//! [`FanoutProcessor`]: the fanout as a `Processor<T, T>`.

use std::fmt;
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, SubscriptionRef};

use super::config::FanoutConfig;
use super::core::Core;
use super::stats::FanoutStats;

/// A multicast processor in which every subscriber reads at its own pace from one bounded
/// buffer.
///
/// A cheap `Clone` handle: move one clone into the upstream's `subscribe`, subscribe
/// downstream subscribers to another. The upstream is asked for exactly the buffer's free
/// space: at once when it subscribes, then in batches of a quarter of the maximum capacity as
/// the slowest subscriber frees slots. See the [module documentation](super) for the contract.
///
/// Unlike [`IdentityProcessor`](crate::processor::IdentityProcessor), emission is not
/// coordinated: a subscriber with demand gets the next element as soon as it arrives, whatever
/// the others requested (the [`processor`](crate::processor) module says when to use which).
///
/// # Examples
///
/// ```
/// use rs_api::{Publisher, PublisherExt};
/// use rs_impl::fanout::FanoutProcessor;
/// use rs_impl::source;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let p = FanoutProcessor::<u64>::new(4);
/// let (s, r) = collect(RequestStrategy::OneByOne);
/// p.subscribe(Box::new(s));
/// source::range(0u64..10).subscribe_with(p.clone());
/// assert_eq!(r.wait().unwrap(), (0..10).collect::<Vec<_>>());
/// ```
#[must_use = "a processor does nothing until subscribed to an upstream and subscribed to"]
pub struct FanoutProcessor<T: Clone + Send + 'static> {
    core: Arc<Core<T>>,
}

impl<T: Clone + Send + 'static> Clone for FanoutProcessor<T> {
    fn clone(&self) -> Self {
        FanoutProcessor {
            core: self.core.clone(),
        }
    }
}

impl<T: Clone + Send + 'static> fmt::Debug for FanoutProcessor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FanoutProcessor")
            .field("config", self.core.config())
            .finish_non_exhaustive()
    }
}

impl<T: Clone + Send + 'static> FanoutProcessor<T> {
    /// A processor with a buffer of `capacity` elements (rounded up to a power of two,
    /// allocated at once) and the default policies (see [`with_config`](Self::with_config)
    /// for the others).
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 (the buffer must hold at least one element) or above
    /// [`MAX_CAPACITY`](super::MAX_CAPACITY).
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::fanout::FanoutProcessor::<u8>::new(16);
    /// assert_eq!(p.stats().subscribers, 0);
    /// ```
    pub fn new(capacity: usize) -> Self {
        Self::with_config(FanoutConfig::new(capacity))
    }

    /// A processor with `config`'s buffer and policies.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::fanout::{FanoutConfig, FanoutProcessor, LastSubscriberPolicy};
    /// let config = FanoutConfig::new(64).last_subscriber(LastSubscriberPolicy::KeepBuffering);
    /// let p = FanoutProcessor::<u8>::with_config(config);
    /// assert_eq!(p.stats().max_capacity, 64);
    /// ```
    pub fn with_config(config: FanoutConfig) -> Self {
        FanoutProcessor {
            core: Core::new(config, false),
        }
    }

    /// A snapshot of the processor's state and work counters.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::fanout::FanoutProcessor::<u8>::new(256);
    /// assert_eq!(p.stats().max_capacity, 256);
    /// ```
    pub fn stats(&self) -> FanoutStats {
        self.core.stats()
    }
}

impl<T: Clone + Send + 'static> Publisher<T> for FanoutProcessor<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        self.core.subscribe(subscriber);
    }
}

impl<T: Clone + Send + 'static> Subscriber<T> for FanoutProcessor<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.core.upstream_subscribed(subscription);
    }

    fn on_next(&mut self, item: T) {
        self.core.offer(item);
    }

    fn on_error(&mut self, error: Error) {
        self.core.terminate(Some(error));
    }

    fn on_complete(&mut self) {
        self.core.terminate(None);
    }
}
