//! The batching boundary subscriber: the input side of an island, usable on its own.

use std::fmt;

use rs_api::{Error, Subscriber, SubscriptionRef};

use super::shared::{Producer, Shared};
use super::BoundaryStats;
use crate::handoff::{Bound, Writer};
use crate::island::Notifier;
use crate::loom::sync::Arc;

/// A [`Subscriber`] that feeds an island from any [`Publisher`](rs_api::Publisher): the input
/// side of a boundary (see the [module docs](super) for the whole contract).
///
/// It keeps a ring of `size` elements (a power of two), prefetches `size` as soon as its
/// island runs, and requests `size / 2` more each time the island has **taken** `size / 2`,
/// so the upstream's outstanding demand never exceeds the free space; an element that finds
/// no free slot is an overrun — the upstream broke rule 1.1 — and fails the island with
/// [`IslandError::InputOverrun`](crate::island::IslandError::InputOverrun) (the upstream is
/// cancelled). An early element, sent before the first request, is kept if there is room. Completion waits until the island took everything; an error is delivered as
/// soon as nothing more can be delivered at once, and drops the rest of the buffered input.
///
/// * **From one of ours** (an output side: a [`FlowPublisher`](crate::flow::FlowPublisher)
///   or an [`IslandProcessor`](crate::flow::IslandProcessor) subscribed with it): the
///   producing island writes straight into the ring and publishes a batch per run, with one
///   wake-up; no `on_next` call, no allocation.
/// * **From a foreign publisher:** each `on_next` publishes its one element and wakes the
///   island at once, so an element never waits for a batch to fill (its latency is one
///   wake-up of the island). Cost (issue 24): one read-modify-write per element on the word
///   the island reads, so a cache-line transfer per element while both sides run, and a
///   wake-up through the executor whenever the island had drained the ring and parked.
///   Fed from the calling thread through [`source::push`](crate::source::push) this edge
///   runs at 6.6–18 M elements/s on the 2-core benchmark machine depending on its load (the
///   `boundary` scenario's push-source row at K = 3), 0.36–0.45× a hand-batched crossbeam
///   chain in the same run; an island
///   output side of ours (below) publishes per run instead and is not limited by it.
///
/// `on_subscribe`, `on_next` and the terminal signals only record and post to the island;
/// `request` and `cancel` on the upstream subscription are called from the island, serially
/// (rule 2.7). `on_complete`/`on_error` wait, if the island is inside `request` on another
/// thread at that moment, until that call returns, so that no request starts after a
/// terminal signal (rule 2.4; a publisher that blocked `request` until a concurrent terminal
/// signal returned would deadlock with this — rule 3.4 asks `request` not to block).
///
/// A publisher that drops the subscribed handle without a terminal signal (and without having
/// been cancelled) fails the island with
/// [`IslandError::Abandoned`](crate::island::IslandError::Abandoned) instead of leaving it
/// waiting. A second subscription (rule 2.5), or one arriving after the island cancelled, is
/// cancelled at once. Clones are handles on the same boundary; the first one subscribed is
/// its producer.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::boundary::BoundarySubscriber;
/// use rs_impl::island::{Runtime};
/// use rs_impl::flow::{Flow};
/// use rs_impl::{source, subscriber::{collect, RequestStrategy}};
///
/// let runtime = Runtime::with_threads(2).unwrap();
/// let (subscriber, input) = BoundarySubscriber::new(16);
/// // Any publisher: here a foreign-style one, signalling per element.
/// source::range(0u64..100).subscribe(Box::new(subscriber));
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// Flow::from_boundary(input).map(|x| x * 2).into_publisher(&runtime).subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), (0..100).map(|x| x * 2).collect::<Vec<_>>());
/// ```
pub struct BoundarySubscriber<T> {
    shared: Arc<Shared<T>>,
    /// Once this handle is the boundary's producer.
    writer: Option<Writer<T, Notifier>>,
}

impl<T> fmt::Debug for BoundarySubscriber<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundarySubscriber")
            .field("size", &self.shared.size())
            .field("subscribed", &self.writer.is_some())
            .finish()
    }
}

impl<T> Clone for BoundarySubscriber<T> {
    /// Another handle on the same boundary, not subscribed.
    fn clone(&self) -> Self {
        BoundarySubscriber {
            shared: self.shared.clone(),
            writer: None,
        }
    }
}

/// The island side of a [`BoundarySubscriber`] made with [`BoundarySubscriber::new`]: hand it
/// to [`Flow::from_boundary`](crate::flow::Flow::from_boundary). One island can consume it.
pub struct BoundaryInput<T> {
    pub(crate) shared: Arc<Shared<T>>,
}

impl<T> BoundaryInput<T> {
    /// What went through this boundary so far.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_s, input) = rs_impl::boundary::BoundarySubscriber::<u8>::new(16);
    /// assert_eq!(input.stats().flushes, 0);
    /// ```
    pub fn stats(&self) -> BoundaryStats {
        self.shared.stats()
    }
}

impl<T> fmt::Debug for BoundaryInput<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BoundaryInput")
            .field("size", &self.shared.size())
            .finish()
    }
}

impl<T: Send + 'static> BoundarySubscriber<T> {
    /// A boundary subscriber with a ring of `size` elements (rounded up to a power of two, at
    /// least 2), and its island side.
    ///
    /// # Panics
    ///
    /// If `size` is 0 (the crate's size rule: a ring must hold at least one element).
    ///
    /// # Examples
    ///
    /// See [`BoundarySubscriber`].
    #[track_caller]
    pub fn new(size: usize) -> (Self, BoundaryInput<T>) {
        assert!(
            size > 0,
            "BoundarySubscriber::new(0): a boundary's ring must hold at least one element"
        );
        let shared = Shared::new(size);
        (
            BoundarySubscriber::attached(shared.clone()),
            BoundaryInput { shared },
        )
    }

    /// A handle on an existing boundary.
    pub(crate) fn attached(shared: Arc<Shared<T>>) -> Self {
        BoundarySubscriber {
            shared,
            writer: None,
        }
    }

    /// The ring's size.
    ///
    /// # Examples
    ///
    /// ```
    /// let (s, _input) = rs_impl::boundary::BoundarySubscriber::<u8>::new(100);
    /// assert_eq!(s.size(), 128);
    /// ```
    pub fn size(&self) -> usize {
        self.shared.size()
    }

    /// What went through this boundary so far (any handle on it tells the same).
    ///
    /// # Examples
    ///
    /// ```
    /// let (s, _input) = rs_impl::boundary::BoundarySubscriber::<u8>::new(16);
    /// assert_eq!(s.stats().published, 0);
    /// ```
    pub fn stats(&self) -> BoundaryStats {
        self.shared.stats()
    }
}

impl<T: Send + 'static> Subscriber<T> for BoundarySubscriber<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let claimed = self.writer.is_none() && {
            let mut control = self.shared.control();
            self.shared.claim(Producer::Foreign, &mut control)
        };
        if !claimed {
            subscription.cancel(); // 2.5, or the island is gone
            return;
        }
        // A foreign publisher: bounded by the free space, every element published on its own.
        let writer = self
            .writer
            .insert(Writer::new(self.shared.ring.clone(), Bound::Space, 1));
        if let Some(orphan) = writer.subscribed(subscription) {
            orphan.cancel(); // the island left meanwhile
        }
    }

    #[inline]
    fn on_next(&mut self, item: T) {
        match self.writer.as_mut() {
            // An overrun fails the island with `InputOverrun` (and cancels upstream); after
            // the end or the island's cancel the element is dropped (2.8).
            Some(w) => w.send(item),
            None => drop(item), // not subscribed (1.9 broken upstream): dropped
        }
    }

    fn on_error(&mut self, error: Error) {
        if let Some(w) = self.writer.as_mut() {
            w.fail(error);
        }
    }

    fn on_complete(&mut self) {
        if let Some(w) = self.writer.as_mut() {
            w.complete();
        }
    }
}
