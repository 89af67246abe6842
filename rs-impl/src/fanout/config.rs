//! How a fanout buffers and when it gives up: [`FanoutConfig`] and its policies.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The largest capacity a fanout accepts: 2^30 elements.
pub const MAX_CAPACITY: usize = 1 << 30;

/// What a fanout does when its last subscriber leaves (by cancel, `request(0)` or a panic)
/// before the stream ended.
///
/// Unset (the default), a **channel keeps buffering** (its producer is still sending, and
/// the next subscriber may come at any time; a channel nobody can subscribe to any more closes
/// on its own, see [`FanoutError::PublishersDropped`](super::FanoutError::PublishersDropped)),
/// and a **processor cancels its upstream** (what the TCK's identity-processor verification
/// expects of a processor whose only subscriber cancels, rule 3.14, and what Pekko's fanout
/// does).
///
/// # Examples
///
/// ```
/// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy};
/// let config = FanoutConfig::new(8).last_subscriber(LastSubscriberPolicy::CancelUpstream);
/// assert_eq!(config.last_subscriber_policy(), Some(LastSubscriberPolicy::CancelUpstream));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastSubscriberPolicy {
    /// Shut down: cancel the upstream (processor) or close the channel (the producer's sends
    /// fail with `Closed`), drop the buffer, and answer later subscribers with
    /// [`FanoutError::ShutDown`](super::FanoutError::ShutDown).
    CancelUpstream,
    /// Keep buffering, up to the capacity, for the next subscriber, who starts at the oldest
    /// retained element. A fanout that never had a subscriber always behaves so.
    KeepBuffering,
}

/// What happens when nobody subscribes in time (see [`FanoutConfig::subscription_timeout`]).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use rs_impl::fanout::TimeoutMode;
/// let warn = TimeoutMode::Warn(Arc::new(|after| eprintln!("nobody after {after:?}")));
/// assert_eq!(format!("{warn:?}"), "Warn(..)");
/// ```
#[derive(Clone)]
pub enum TimeoutMode {
    /// Give up: cancel the upstream (close the channel), drop the buffer, answer every later
    /// subscriber with [`FanoutError::SubscriptionTimeout`](super::FanoutError::SubscriptionTimeout).
    Cancel,
    /// Call the function with the timeout and keep accepting subscribers.
    Warn(Arc<dyn Fn(Duration) + Send + Sync>),
}

impl fmt::Debug for TimeoutMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeoutMode::Cancel => f.write_str("Cancel"),
            TimeoutMode::Warn(_) => f.write_str("Warn(..)"),
        }
    }
}

/// A subscription timeout: how long a fanout waits for its first subscriber.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_impl::fanout::{FanoutConfig, TimeoutMode};
/// let c = FanoutConfig::new(4).subscription_timeout(Duration::from_secs(1), TimeoutMode::Cancel);
/// assert_eq!(c.subscription_timeout_setting().unwrap().after, Duration::from_secs(1));
/// ```
#[derive(Debug, Clone)]
pub struct SubscriptionTimeout {
    /// How long.
    pub after: Duration,
    /// What then.
    pub mode: TimeoutMode,
}

/// How a fanout buffers and when it gives up: the capacity, optional growth, the policy for
/// the last subscriber leaving, an optional subscription timeout. Build a channel with
/// [`channel_with`](super::channel_with), a processor with
/// [`FanoutProcessor::with_config`](super::FanoutProcessor::with_config); the plain
/// constructors [`channel(capacity)`](super::channel) and
/// [`FanoutProcessor::new(capacity)`](super::FanoutProcessor::new) take the defaults.
///
/// **Sizes** are `usize` and rounded up to powers of two (as tokio's `broadcast::channel`
/// does), so that a position's slot is a mask away. The buffer starts at the full capacity
/// (allocated once, never reallocated while running) unless [`grow_from`](Self::grow_from)
/// asks for a smaller start that doubles as needed.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy, TimeoutMode};
///
/// let config = FanoutConfig::new(100)
///     .grow_from(4)
///     .last_subscriber(LastSubscriberPolicy::CancelUpstream)
///     .subscription_timeout(Duration::from_secs(5), TimeoutMode::Cancel);
/// assert_eq!(config.capacity(), 128);
/// assert_eq!(config.initial_capacity(), 4);
/// let (tx, publisher) = rs_impl::fanout::channel_with::<u32>(config);
/// # drop((tx, publisher));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a configuration does nothing until a channel or processor is built with it"]
pub struct FanoutConfig {
    initial: usize,
    max: usize,
    last_subscriber: Option<LastSubscriberPolicy>,
    subscription_timeout: Option<SubscriptionTimeout>,
    /// Tests: the position of the first element (to start near the wrap point).
    #[cfg(test)]
    pub(super) start: u64,
    /// Tests: the quadratic variant (Pekko before #3730) for the complexity regression.
    #[cfg(test)]
    pub(super) quadratic: bool,
}

/// Rounds a size up to a power of two, panicking on the sizes no buffer can have.
fn round(what: &str, capacity: usize) -> usize {
    assert!(
        capacity > 0,
        "a fanout {what} of 0: the buffer must hold at least one element"
    );
    assert!(
        capacity <= MAX_CAPACITY,
        "a fanout {what} of {capacity} is above the largest supported, {MAX_CAPACITY}"
    );
    capacity.next_power_of_two()
}

impl FanoutConfig {
    /// A buffer of `capacity` elements (rounded up to a power of two), allocated at once; the
    /// other settings default.
    ///
    /// # Panics
    ///
    /// If `capacity` is 0 (the buffer must hold at least one element) or above
    /// [`MAX_CAPACITY`].
    ///
    /// # Examples
    ///
    /// ```
    /// let c = rs_impl::fanout::FanoutConfig::new(5);
    /// assert_eq!((c.initial_capacity(), c.capacity()), (8, 8));
    /// ```
    pub fn new(capacity: usize) -> Self {
        let max = round("capacity", capacity);
        FanoutConfig {
            initial: max,
            max,
            last_subscriber: None,
            subscription_timeout: None,
            #[cfg(test)]
            start: 0,
            #[cfg(test)]
            quadratic: false,
        }
    }

    /// Starts the buffer at `initial` elements (rounded up to a power of two) and lets it
    /// double, while a write finds it full, up to the capacity; it never shrinks.
    ///
    /// # Panics
    ///
    /// If `initial` is 0 or above the capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// let c = rs_impl::fanout::FanoutConfig::new(1024).grow_from(16);
    /// assert_eq!((c.initial_capacity(), c.capacity()), (16, 1024));
    /// ```
    pub fn grow_from(mut self, initial: usize) -> Self {
        let initial = round("initial capacity", initial);
        assert!(
            initial <= self.max,
            "a fanout's initial capacity {initial} is above its capacity {}",
            self.max
        );
        self.initial = initial;
        self
    }

    /// Sets what happens when the last subscriber leaves (see [`LastSubscriberPolicy`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy};
    /// let c = FanoutConfig::new(4).last_subscriber(LastSubscriberPolicy::KeepBuffering);
    /// assert_eq!(c.last_subscriber_policy(), Some(LastSubscriberPolicy::KeepBuffering));
    /// ```
    pub fn last_subscriber(mut self, policy: LastSubscriberPolicy) -> Self {
        self.last_subscriber = Some(policy);
        self
    }

    /// Waits at most `after` for the first subscriber; then does what `mode` says. A timer
    /// thread is started with the fanout and ends when the first subscriber joins, when the
    /// time is up, or soon after the fanout is dropped. Without this setting (the default) a
    /// fanout waits for subscribers forever and starts no thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use rs_impl::fanout::{FanoutConfig, TimeoutMode};
    /// let c = FanoutConfig::new(4).subscription_timeout(Duration::from_secs(1), TimeoutMode::Cancel);
    /// assert!(c.subscription_timeout_setting().is_some());
    /// ```
    pub fn subscription_timeout(mut self, after: Duration, mode: TimeoutMode) -> Self {
        self.subscription_timeout = Some(SubscriptionTimeout { after, mode });
        self
    }

    /// The capacity: the most elements ever retained, and the most the fastest subscriber
    /// can lead the slowest by.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::FanoutConfig::new(256).capacity(), 256);
    /// ```
    pub fn capacity(&self) -> usize {
        self.max
    }

    /// The buffer's initial length (the capacity, unless [`grow_from`](Self::grow_from) set
    /// a smaller start).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::FanoutConfig::new(64).initial_capacity(), 64);
    /// ```
    pub fn initial_capacity(&self) -> usize {
        self.initial
    }

    /// The policy for the last subscriber leaving, if set (unset: see
    /// [`LastSubscriberPolicy`] for what a channel and a processor do).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::FanoutConfig::new(4).last_subscriber_policy(), None);
    /// ```
    pub fn last_subscriber_policy(&self) -> Option<LastSubscriberPolicy> {
        self.last_subscriber
    }

    /// The subscription timeout, if set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::fanout::FanoutConfig::new(4).subscription_timeout_setting().is_none());
    /// ```
    pub fn subscription_timeout_setting(&self) -> Option<&SubscriptionTimeout> {
        self.subscription_timeout.as_ref()
    }

    /// The position of the first element.
    pub(super) fn start(&self) -> u64 {
        #[cfg(test)]
        return self.start;
        #[cfg(not(test))]
        0
    }
}
