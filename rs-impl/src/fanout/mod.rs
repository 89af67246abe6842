//! Fanout: one stream, many subscribers, each at its own pace inside one bounded buffer.
//!
//! Two faces of one engine:
//!
//! | item | what it is |
//! |---|---|
//! | [`FanoutProcessor`] | a `Processor<T, T>`: subscribe it to any upstream publisher, subscribe any number of subscribers to it |
//! | [`channel`] | a producer handle ([`Sender`]: `try_send`, blocking `send`, `send_async(..).await`, `complete`, `fail`) and a [`FanoutPublisher`] |
//! | [`FanoutConfig`] | buffer sizes (initial, maximum), what happens when the last subscriber leaves, an optional subscription timeout |
//! | [`FanoutStats`] | subscribers, buffered elements, deliveries, and the work counters (cursor reads, demand reads) |
//! | `ring` (private) | the resizable multi-reader ring buffer, with a reader count per slot (Pekko #3730, seed 000) |
//!
//! # Contract
//!
//! * **What a subscriber sees.** Every element from the one it joined at, in order, each
//!   exactly once, by [`Clone`] (for large payloads use `Arc<T>`: a delivery is then a
//!   reference-count increment, and the buffer drops its own `Arc` as soon as the slowest
//!   subscriber has passed the slot). Nothing is ever dropped to make room.
//! * **Backpressure.** No subscriber gets more `on_next` than it requested (1.1). All
//!   subscribers share one buffer of at most [`FanoutConfig::max_capacity`] elements, so the
//!   fastest subscriber leads the slowest by at most that many elements: a slow subscriber
//!   holds the producer back, never the other subscribers' elements. The producer's free
//!   capacity ([`Sender::try_send`] fails with [`TrySendError::Full`]) and the demand the
//!   processor signals upstream are exactly the free space: `max_capacity - buffered` (the
//!   processor asks its upstream for that space in batches of a quarter of the maximum, and
//!   at once when subscribed).
//! * **Late subscribers** start at the oldest element still retained, i.e. the oldest one some
//!   current subscriber has not read yet, or, while nobody is subscribed, everything sent since
//!   the buffer last had a reader (design/seed-designs.md §A.7). A subscriber whose
//!   `subscribe` returned before a `send` (or an upstream `on_next`) started gets that element,
//!   also when another thread is draining and both wait for its pass (joins are taken before
//!   elements). After the end of the stream a
//!   new subscriber gets `on_subscribe` and then: after completion, the retained backlog (if
//!   any) and `on_complete`; after a failure, `on_error` with that failure; after a
//!   [shutdown](LastSubscriberPolicy::CancelUpstream), `on_error(`[`FanoutError::ShutDown`]`)`;
//!   after a [subscription timeout](FanoutConfig::subscription_timeout),
//!   `on_error(`[`FanoutError::SubscriptionTimeout`]`)`; after the producer's thread panicked,
//!   `on_error(`[`FanoutError::ProducerPanicked`]`)`.
//! * **Cancel** is idempotent and frees the subscriber's hold on the buffer at once: elements
//!   only it still needed are dropped, and the producer may use the space. The subscriber is
//!   dropped (3.13). When the **last** subscriber leaves (cancel, `request(0)`, panic), the
//!   [`LastSubscriberPolicy`] decides: [`CancelUpstream`](LastSubscriberPolicy::CancelUpstream)
//!   (the default, as Pekko does, and what the TCK's identity-processor verification expects
//!   of a processor whose only subscriber cancels) cancels the upstream or closes the channel
//!   and drops the buffer; [`KeepBuffering`](LastSubscriberPolicy::KeepBuffering) keeps
//!   accepting elements up to the maximum for the next subscriber.
//! * **Termination.** Completion reaches each subscriber after its own backlog (at once for a
//!   subscriber that has read everything, with or without demand). A failure reaches every
//!   subscriber at once, dropping backlogs (rule 4.2 for the processor).
//! * **Bad input and panics.** `request(0)` fails that subscriber alone with
//!   [`SpecViolation::NonPositiveRequest`](rs_api::SpecViolation) (3.9); demand saturates
//!   (3.17). A subscriber that panics (in any signal, or in the element's `clone`) is cancelled
//!   and reported through [`panics`](crate::panics) (2.13); the others lose nothing. No panic of
//!   a subscriber or of an element's `Drop` reaches the producer or a requester.
//!
//! # Threads
//!
//! There is no thread of its own. Delivery happens on **whichever thread drives** the
//! [serial drain loop](crate::serial): the producer's `send` (or the upstream's `on_next`), a
//! subscriber's `request` or `cancel`, `subscribe`. All signals, to all subscribers, are
//! serial: one drainer at a time, so each subscriber's signals never overlap (1.3), and a
//! `request` made from inside `on_next` only records demand (3.3). `request` and `cancel` may
//! be called from any thread at any time; a caller that finds another thread draining returns
//! at once (3.4), leaving the work to it. In the usual setup the producer's `send` delivers
//! each element to every subscriber before it returns, so a subscriber that is slow **in
//! `on_next`** slows the producer by its processing time (a subscriber that is slow to
//! *request* only holds the buffer, up to its maximum).
//!
//! **A slow subscriber behind an async boundary.** To keep a slow consumer off the producer's
//! thread, subscribe it through an island:
//! `Flow::from_shared_publisher(Arc::new(fanout_publisher), 1024)` (any stages)
//! `.into_publisher(&runtime)`, then subscribe the slow subscriber to that
//! [`FlowPublisher`](crate::island::FlowPublisher). The island's input side requests its
//! buffer's size up front and half of it again each time half was taken, queues what it
//! receives, and the island runs the subscriber's `on_next` on a worker of the
//! [`Runtime`](crate::island::Runtime). Give it a buffer of hundreds of elements (the
//! boundary's default is [`DEFAULT_BOUNDARY_SIZE`](crate::boundary::DEFAULT_BOUNDARY_SIZE)):
//! with a small one each crossing wakes the island for a few elements and the wake-ups cost
//! more than the work moved off the producer's thread (the `fanout-slow` benchmark: 1.2–1.4
//! M el/s with the flow's default of 16, 2.8–3.2 with 1024, against 2.8–3.5 with the slow
//! subscriber on the producer's thread, on 2 cores). A
//! [`BoundarySubscriber`](crate::boundary::BoundarySubscriber) with
//! [`Flow::from_boundary`](crate::island::Flow::from_boundary) does the same with a ring of a
//! chosen size. The fanout needs nothing special for it: each visit hands such a subscriber
//! every element its demand allows in one run, and its cursor moves once. The fast
//! subscribers then pay only the slow one's hold on the buffer (it may lag by the fanout's
//! maximum plus the island's buffer), not its processing time; the `fanout-slow` benchmark
//! measures both arrangements.
//!
//! # Cost
//!
//! Per element, the work is the deliveries themselves: a pass visits only the subscribers that
//! have demand, each visit delivers everything that subscriber may have and then moves its
//! cursor in the ring once; a subscriber out of demand is parked and costs nothing until it
//! requests. No cursor scan per read, no subscription scan per element or per request, no
//! atomic read-modify-write per delivery, no allocation per element.
//! [`FanoutStats::cursor_reads`] and [`FanoutStats::demand_reads`] count that work.
//!
//! # Memory
//!
//! At most [`FanoutConfig::max_capacity`] elements are retained (the buffer starts at
//! [`FanoutConfig::initial_capacity`] and doubles while a write finds it full, never
//! shrinking), plus, briefly, the elements a producer hands over while another thread is
//! draining (within the same bound for a [`Sender`]; a processor's upstream that ignores demand
//! fails the fanout with [`FanoutError::UpstreamOverflow`]). Per subscriber: one slot with its
//! cursor and counters.
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::fanout::{self, FanoutConfig};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let (mut tx, publisher) = fanout::channel::<u64>(FanoutConfig::new(8).unwrap());
//! let (fast, fast_result) = collect(RequestStrategy::Unbounded);
//! let (slow, slow_result) = collect(RequestStrategy::OneByOne);
//! publisher.subscribe(Box::new(fast));
//! publisher.subscribe(Box::new(slow));
//! for i in 0..100 {
//!     tx.send(i).unwrap(); // delivers to both on this thread
//! }
//! tx.complete();
//! assert_eq!(fast_result.wait().unwrap(), (0..100).collect::<Vec<_>>());
//! assert_eq!(slow_result.wait().unwrap(), (0..100).collect::<Vec<_>>());
//! ```
//!
//! The processor over any publisher:
//!
//! ```
//! use rs_api::{Publisher, PublisherExt};
//! use rs_impl::fanout::{FanoutConfig, FanoutProcessor};
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let fanout = FanoutProcessor::<u32>::new(FanoutConfig::default());
//! let (a, ra) = collect(RequestStrategy::Prefetch(4));
//! let (b, rb) = collect(RequestStrategy::Unbounded);
//! fanout.subscribe(Box::new(a));
//! fanout.subscribe(Box::new(b));
//! source::range(0u32..1000).subscribe_with(fanout.clone());
//! assert_eq!(ra.wait().unwrap(), (0..1000).collect::<Vec<_>>());
//! assert_eq!(rb.wait().unwrap().len(), 1000);
//! ```

mod channel;
mod core;
mod processor;
mod ring;
mod roster;
#[cfg(all(test, not(rs_loom)))]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use channel::{channel, FanoutPublisher, SendError, SendFuture, Sender, TrySendError};
pub use processor::FanoutProcessor;

/// The largest maximum capacity a [`FanoutConfig`] accepts: 2^30 elements.
pub const MAX_CAPACITY: usize = 1 << 30;

/// The default initial capacity: 16 elements.
pub const DEFAULT_INITIAL_CAPACITY: usize = 16;

/// The default maximum capacity: 256 elements.
pub const DEFAULT_MAX_CAPACITY: usize = 256;

/// What a fanout does when its last subscriber leaves (by cancel, `request(0)` or a panic)
/// before the stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LastSubscriberPolicy {
    /// Shut down: cancel the upstream (processor) or close the channel (the producer's sends
    /// fail with `Closed`), drop the buffer, and answer later subscribers with
    /// [`FanoutError::ShutDown`]. The default: it is what Pekko's fanout does, and what the
    /// TCK's identity-processor verification expects (a processor whose only downstream
    /// cancels must cancel its upstream; rule 3.14 allows it), and it never holds a producer
    /// forever on a buffer nobody reads.
    #[default]
    CancelUpstream,
    /// Keep buffering, up to the maximum capacity, for the next subscriber, who starts at the
    /// oldest retained element. A fanout that never had a subscriber always behaves so.
    KeepBuffering,
}

/// What happens when nobody subscribes in time (see [`FanoutConfig::subscription_timeout`]).
#[derive(Clone)]
pub enum TimeoutMode {
    /// Give up: cancel the upstream (close the channel), drop the buffer, answer every later
    /// subscriber with [`FanoutError::SubscriptionTimeout`].
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
#[derive(Debug, Clone)]
pub struct SubscriptionTimeout {
    /// How long.
    pub after: Duration,
    /// What then.
    pub mode: TimeoutMode,
}

/// A [`FanoutConfig`] that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A capacity of 0: the buffer must hold at least one element.
    #[error("a fanout buffer capacity must be at least 1")]
    ZeroCapacity,
    /// A capacity above [`MAX_CAPACITY`].
    #[error(
        "a fanout buffer capacity of {requested} is above the largest supported, {MAX_CAPACITY}"
    )]
    TooLarge {
        /// The capacity asked for.
        requested: usize,
    },
    /// An initial capacity above the maximum.
    #[error("the initial capacity {initial} of a fanout buffer is above its maximum {max}")]
    InitialAboveMax {
        /// The initial capacity (rounded up to a power of two).
        initial: usize,
        /// The maximum capacity (rounded up to a power of two).
        max: usize,
    },
}

/// How a fanout buffers and when it gives up.
///
/// Capacities are rounded up to powers of two (like tokio's broadcast channel), so that a
/// position's slot is a mask away.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy, TimeoutMode};
///
/// let config = FanoutConfig::with_capacities(4, 100)
///     .unwrap()
///     .last_subscriber(LastSubscriberPolicy::KeepBuffering)
///     .subscription_timeout(Duration::from_secs(5), TimeoutMode::Cancel);
/// assert_eq!(config.initial_capacity(), 4);
/// assert_eq!(config.max_capacity(), 128);
/// assert!(FanoutConfig::new(0).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct FanoutConfig {
    initial: usize,
    max: usize,
    last_subscriber: LastSubscriberPolicy,
    subscription_timeout: Option<SubscriptionTimeout>,
    /// Tests: the position of the first element (to start near the wrap point).
    #[cfg(test)]
    start: u64,
    /// Tests: the quadratic variant (Pekko before #3730) for the complexity regression.
    #[cfg(test)]
    quadratic: bool,
    /// Loom builds: a deliberately broken variant, for the loom models' broken twins.
    #[cfg(rs_loom)]
    fault: Fault,
}

/// Loom builds only: deliberately broken variants of the fanout, one mechanism disabled each,
/// so that the loom models (`rs-impl/tests/loom/fanout.rs`) can show that they reject the bug
/// each mechanism prevents. Never use these anywhere else.
#[cfg(rs_loom)]
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fault {
    /// The real fanout.
    #[default]
    None,
    /// A leaving subscriber keeps its hold on the buffer (its cursor stays in the ring).
    LeaveKeepsHold,
    /// Parking a subscriber does not re-read its demand after setting `PARKED`: a request in
    /// between is lost.
    ParkWithoutRecheck,
    /// Completion reaches only the caught-up subscribers with demand, not the parked ones.
    CompleteSkipsParked,
    /// A drain on a subscriber's thread frees space without waking the waiting producer.
    NoWakeOnSpace,
}

impl Default for FanoutConfig {
    /// Initial capacity [`DEFAULT_INITIAL_CAPACITY`], maximum [`DEFAULT_MAX_CAPACITY`],
    /// [`LastSubscriberPolicy::CancelUpstream`], no subscription timeout.
    fn default() -> Self {
        FanoutConfig {
            initial: DEFAULT_INITIAL_CAPACITY,
            max: DEFAULT_MAX_CAPACITY,
            last_subscriber: LastSubscriberPolicy::default(),
            subscription_timeout: None,
            #[cfg(test)]
            start: 0,
            #[cfg(test)]
            quadratic: false,
            #[cfg(rs_loom)]
            fault: Fault::None,
        }
    }
}

fn round(capacity: usize) -> Result<usize, ConfigError> {
    match capacity {
        0 => Err(ConfigError::ZeroCapacity),
        n if n > MAX_CAPACITY => Err(ConfigError::TooLarge { requested: n }),
        n => Ok(n.next_power_of_two()),
    }
}

impl FanoutConfig {
    /// A buffer of at most `max_capacity` elements (rounded up to a power of two), starting at
    /// [`DEFAULT_INITIAL_CAPACITY`] or the maximum if smaller; the other settings default.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ZeroCapacity`] for 0, [`ConfigError::TooLarge`] above [`MAX_CAPACITY`].
    ///
    /// # Examples
    ///
    /// ```
    /// let c = rs_impl::fanout::FanoutConfig::new(5).unwrap();
    /// assert_eq!((c.initial_capacity(), c.max_capacity()), (8, 8));
    /// ```
    pub fn new(max_capacity: usize) -> Result<Self, ConfigError> {
        let max = round(max_capacity)?;
        Ok(FanoutConfig {
            initial: DEFAULT_INITIAL_CAPACITY.min(max),
            max,
            ..FanoutConfig::default()
        })
    }

    /// A buffer that starts at `initial` elements and grows up to `max` (both rounded up to
    /// powers of two).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new) for either size, and [`ConfigError::InitialAboveMax`].
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::fanout::{ConfigError, FanoutConfig};
    /// assert_eq!(
    ///     FanoutConfig::with_capacities(8, 4).unwrap_err(),
    ///     ConfigError::InitialAboveMax { initial: 8, max: 4 }
    /// );
    /// ```
    pub fn with_capacities(initial: usize, max: usize) -> Result<Self, ConfigError> {
        let (initial, max) = (round(initial)?, round(max)?);
        if initial > max {
            return Err(ConfigError::InitialAboveMax { initial, max });
        }
        Ok(FanoutConfig {
            initial,
            max,
            ..FanoutConfig::default()
        })
    }

    /// Sets what happens when the last subscriber leaves (see [`LastSubscriberPolicy`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy};
    /// let c = FanoutConfig::default().last_subscriber(LastSubscriberPolicy::KeepBuffering);
    /// assert_eq!(c.last_subscriber_policy(), LastSubscriberPolicy::KeepBuffering);
    /// ```
    #[must_use]
    pub fn last_subscriber(mut self, policy: LastSubscriberPolicy) -> Self {
        self.last_subscriber = policy;
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
    /// let c = FanoutConfig::default().subscription_timeout(Duration::from_secs(1), TimeoutMode::Cancel);
    /// assert_eq!(c.subscription_timeout_setting().unwrap().after, Duration::from_secs(1));
    /// ```
    #[must_use]
    pub fn subscription_timeout(mut self, after: Duration, mode: TimeoutMode) -> Self {
        self.subscription_timeout = Some(SubscriptionTimeout { after, mode });
        self
    }

    /// Loom builds only: makes this fanout a deliberately broken variant (see [`Fault`]).
    #[cfg(rs_loom)]
    #[doc(hidden)]
    #[must_use]
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }

    /// The initial capacity.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::FanoutConfig::default().initial_capacity(), 16);
    /// ```
    pub fn initial_capacity(&self) -> usize {
        self.initial
    }

    /// The maximum capacity: the most elements ever retained, and the most the fastest
    /// subscriber can lead the slowest by.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::FanoutConfig::default().max_capacity(), 256);
    /// ```
    pub fn max_capacity(&self) -> usize {
        self.max
    }

    /// The policy for the last subscriber leaving.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::fanout::{FanoutConfig, LastSubscriberPolicy};
    /// assert_eq!(FanoutConfig::default().last_subscriber_policy(), LastSubscriberPolicy::CancelUpstream);
    /// ```
    pub fn last_subscriber_policy(&self) -> LastSubscriberPolicy {
        self.last_subscriber
    }

    /// The subscription timeout, if set.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::fanout::FanoutConfig::default().subscription_timeout_setting().is_none());
    /// ```
    pub fn subscription_timeout_setting(&self) -> Option<&SubscriptionTimeout> {
        self.subscription_timeout.as_ref()
    }

    /// The position of the first element.
    fn start(&self) -> u64 {
        #[cfg(test)]
        return self.start;
        #[cfg(not(test))]
        0
    }
}

/// Why a fanout ended a subscriber that had done nothing wrong, as delivered in `on_error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FanoutError {
    /// The last subscriber left and the fanout shut down
    /// ([`LastSubscriberPolicy::CancelUpstream`]).
    #[error(
        "the fanout shut down when its last subscriber left: it cancelled its upstream (or \
         closed its channel) and dropped its buffer"
    )]
    ShutDown,
    /// Nobody subscribed in time ([`TimeoutMode::Cancel`]).
    #[error("no subscriber joined the fanout within {0:?}: it cancelled its upstream (or closed its channel)")]
    SubscriptionTimeout(Duration),
    /// The channel's [`Sender`] was dropped while its thread was panicking.
    #[error("the fanout's producer panicked: its sender was dropped while its thread unwound")]
    ProducerPanicked,
    /// The processor's upstream sent more elements than requested (rule 1.1).
    #[error("rule 1.1 violated by the fanout's upstream: more elements than requested")]
    UpstreamOverflow,
}

/// A snapshot of a fanout, as published by its last drain pass.
///
/// The counters make the cost visible: in steady state `cursor_reads` grows by about one per
/// element whatever the number of subscribers (the ring reads the reader count of the oldest
/// slot, never the cursors), and `demand_reads` by at most one per delivery (a subscriber's
/// demand is re-read only when its cached total is used up), never by a scan of every
/// subscription.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout::{self, FanoutConfig};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (mut tx, p) = fanout::channel::<u8>(FanoutConfig::default());
/// let (s, r) = collect(RequestStrategy::Unbounded);
/// p.subscribe(Box::new(s));
/// tx.send(1).unwrap();
/// let stats = p.stats();
/// assert_eq!((stats.subscribers, stats.elements, stats.deliveries), (1, 1, 1));
/// tx.complete();
/// r.wait().unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FanoutStats {
    /// Current subscribers.
    pub subscribers: usize,
    /// Elements retained in the buffer.
    pub buffered: usize,
    /// The buffer's current array length.
    pub capacity: usize,
    /// The buffer's maximum capacity.
    pub max_capacity: usize,
    /// Elements written into the buffer so far.
    pub elements: u64,
    /// `on_next` calls made so far, over all subscribers.
    pub deliveries: u64,
    /// Reader positions the buffer examined to reclaim slots.
    pub cursor_reads: u64,
    /// Times a subscriber's demand was read (or, in a scanning design, examined).
    pub demand_reads: u64,
}

impl From<FanoutError> for rs_api::Error {
    fn from(e: FanoutError) -> Self {
        rs_api::Error::new(e)
    }
}
