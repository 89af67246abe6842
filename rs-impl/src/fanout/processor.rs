//! [`FanoutProcessor`]: the fanout as a `Processor<T, T>`.

use std::fmt;
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, SubscriptionRef};

use super::core::Core;
use super::{FanoutConfig, FanoutStats};

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
/// the others requested.
///
/// # Examples
///
/// ```
/// use rs_api::{Publisher, PublisherExt};
/// use rs_impl::fanout::{FanoutConfig, FanoutProcessor};
/// use rs_impl::source;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let p = FanoutProcessor::<u64>::new(FanoutConfig::new(4).unwrap());
/// let (s, r) = collect(RequestStrategy::OneByOne);
/// p.subscribe(Box::new(s));
/// source::range(0u64..10).subscribe_with(p.clone());
/// assert_eq!(r.wait().unwrap(), (0..10).collect::<Vec<_>>());
/// ```
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
    /// A processor with `config`'s buffer and policies.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::fanout::FanoutProcessor::<u8>::new(Default::default());
    /// assert_eq!(p.stats().subscribers, 0);
    /// ```
    pub fn new(config: FanoutConfig) -> Self {
        let start = config.start();
        FanoutProcessor {
            core: Core::new(config, false, start),
        }
    }

    /// A snapshot of the processor's state and work counters.
    ///
    /// # Examples
    ///
    /// ```
    /// let p = rs_impl::fanout::FanoutProcessor::<u8>::new(Default::default());
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
