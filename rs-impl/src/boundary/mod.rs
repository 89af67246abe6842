//! The batching async boundary: where elements cross from one island to another (Pekko PR #3288;
//! Pekko #3288).
//!
//! [`Flow::async_boundary`](crate::flow::Flow::async_boundary) cuts a flow in two: the
//! stages before it run on one island, the stages after it on another, each on a worker of
//! the [`Runtime`](crate::island::Runtime). Between them sits one **boundary**: a ring of a
//! power-of-two size that the upstream island (the **output side**) writes into and the
//! downstream island (the **input side**, a [`BoundarySubscriber`]) reads from. It is a
//! single-producer single-consumer hand-off (the crate's one hand-off ring, shared with the
//! stream bridges): no lock and no allocation per element or per batch; one
//! read-modify-write per batch, and a wake-up only when the downstream island waits for it.
//!
//! # Contract
//!
//! * **What crosses, and when.** The output side collects the elements its island produces
//!   during one run of the island and **flushes** them — publishes the ring's new tail and
//!   wakes the downstream island if it parked on the ring — when the run ends (the island parks or yields), when
//!   the batch reaches its cap (half the ring), and before completion or failure. A batch of
//!   one element is one event, a batch of many is one event. Elements and the terminal signal
//!   keep their order, as through one FIFO per boundary.
//! * **Demand.** The input side prefetches the ring's size and grants `size / 2` more each
//!   time the downstream island has *taken* `size / 2`; the output side never writes beyond
//!   what was granted, so it never runs ahead of downstream demand by more than the ring, and
//!   a slow downstream holds the upstream island (which parks, freeing its worker).
//! * **The downstream island parks only when the ring is empty;** the upstream island only
//!   when it has no demand or nothing to produce. Before parking on an empty ring whose
//!   producing island is being polled on another thread at that moment, the input side spins
//!   briefly (1023 spin-loop hints at most) for the next flush: a flush
//!   that near saves both islands a park and a wake-up through the executor (adaptive
//!   spinning, as a mutex spins while its owner runs). It never spins for a foreign producer
//!   or for an island that is not running.
//! * **Completion** reaches the downstream stages after every element (deferred until the
//!   ring drained). **An error** reaches them as soon as nothing more can be delivered at once
//!   (what downstream demand allows right now is delivered first, the rest of the ring is
//!   dropped: eager). A **cancel** from downstream drops the ring's content and the upstream
//!   island's unflushed batch, and cancels upstream; a failure of the upstream island after
//!   that drops its batch too.
//! * **Who calls what, on which thread.** Each side runs on its own island's worker; they
//!   meet only in the ring's atomics and in posts to each other's mailbox. Nothing of one
//!   island ever runs on the other's thread.
//! * **Memory** is bounded by the ring (allocated once, when the boundary is materialised) —
//!   no pool shared beyond the two sides of one boundary (RxJava #1908's lesson), so storage is
//!   never recycled while either side still holds it.
//! * **Panics** in a stage fail the stream across the boundary with
//!   [`IslandError::StagePanicked`](crate::island::IslandError::StagePanicked); a panicking
//!   subscriber at the end is cancelled, which cancels upstream across every boundary.
//!
//! **Only internal boundaries batch.** A user's own [`Subscriber`](rs_api::Subscriber) of a
//! [`FlowPublisher`](crate::flow::FlowPublisher) gets one `on_next` per element; a
//! [`BoundarySubscriber`] subscribed to one of our output sides (a `FlowPublisher`, an
//! [`IslandProcessor`](crate::flow::IslandProcessor)) is recognised and gets batches written
//! straight into its ring. A [`BoundarySubscriber`] subscribed to any other publisher takes
//! one `on_next` at a time, publishing each at once (the latency of a lone element is one
//! wake-up of its island).
//!
//! [`BoundaryConfig::batching`] turns batching off (every element flushed on its own, with a
//! wake-up each): the benchmark's baseline.
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::boundary::BoundaryConfig;
//! use rs_impl::island::{Runtime};
//! use rs_impl::flow::{Flow};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let runtime = Runtime::new().unwrap();
//! let p = Flow::from_iter(0u64..10_000)
//!     .map(|x| x + 1)
//!     .async_boundary() // the map runs on one island…
//!     .filter(|x| x % 2 == 0)
//!     .async_boundary_with(BoundaryConfig::new().size(64)) // …the filter on a second…
//!     .map(|x| x * 10) // …and this map on a third, which serves the subscriber
//!     .into_publisher(&runtime);
//! let (s, h) = collect(RequestStrategy::Prefetch(32));
//! p.subscribe(Box::new(s));
//! let got = h.wait().unwrap();
//! assert_eq!(got.len(), 5_000);
//! assert_eq!(got[0], 20);
//! ```

mod shared;
mod subscriber;

pub(crate) use shared::{Producer, Shared};
pub use subscriber::{BoundaryInput, BoundarySubscriber};

/// What went through one boundary so far (for tests and diagnostics; see
/// [`BoundarySubscriber::stats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BoundaryStats {
    /// Elements the producer published (made visible to the consumer).
    pub published: u64,
    /// Flushes that published at least one element: each one event for the consumer (a lone
    /// element, or a batch), with at most one wake-up.
    pub flushes: u64,
    /// Positions the consumer granted in all: the prefetch, then `size / 2` per `size / 2`
    /// taken.
    pub granted: u64,
    /// Grants after the prefetch.
    pub grants: u64,
}

/// The ring size of [`Flow::async_boundary`](crate::flow::Flow::async_boundary): elements in
/// flight across one boundary at most (a power of two).
pub const DEFAULT_BOUNDARY_SIZE: usize = 1024;

/// How one boundary is set up: its ring's size.
///
/// # Examples
///
/// ```
/// use rs_impl::boundary::BoundaryConfig;
/// let c = BoundaryConfig::new().size(1000);
/// assert_eq!(c.ring_size(), 1024);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundaryConfig {
    size: usize,
    batching: bool,
}

impl Default for BoundaryConfig {
    fn default() -> Self {
        BoundaryConfig::new()
    }
}

impl BoundaryConfig {
    /// [`DEFAULT_BOUNDARY_SIZE`].
    ///
    /// # Examples
    ///
    /// See [`BoundaryConfig`].
    pub fn new() -> Self {
        BoundaryConfig {
            size: DEFAULT_BOUNDARY_SIZE,
            batching: true,
        }
    }

    /// The ring's size: rounded up to a power of two, at least 2. Prefetch is the size,
    /// replenishment half of it, and a batch is flushed at half of it at the latest.
    ///
    /// # Panics
    ///
    /// If `size` is 0 (the crate's size rule: a ring must hold at least one element).
    ///
    /// # Examples
    ///
    /// See [`BoundaryConfig`].
    #[track_caller]
    pub fn size(mut self, size: usize) -> Self {
        assert!(
            size > 0,
            "BoundaryConfig::size(0): a boundary's ring must hold at least one element"
        );
        self.size = size;
        self
    }

    /// Whether the output side batches (the default). Off, every element is flushed on its
    /// own with a wake-up of the downstream island: the same protocol one element at a time,
    /// for measuring what batching buys (the benchmarks' baseline and the TCK's twin; not
    /// part of the documented API).
    #[doc(hidden)]
    pub fn batching(mut self, on: bool) -> Self {
        self.batching = on;
        self
    }

    /// The ring's size as it will be made (a power of two).
    ///
    /// # Examples
    ///
    /// See [`BoundaryConfig`].
    pub fn ring_size(&self) -> usize {
        self.size.max(2).next_power_of_two()
    }

    /// Whether the output side batches.
    #[doc(hidden)]
    pub fn is_batching(&self) -> bool {
        self.batching
    }

    /// The output side's flush cap.
    pub(crate) fn cap(&self) -> usize {
        if self.batching {
            (self.ring_size() / 2).max(1)
        } else {
            1
        }
    }
}
