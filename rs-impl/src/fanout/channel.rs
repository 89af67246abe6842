//! [`channel`]: a producer handle ([`FanoutSender`]) and a [`FanoutPublisher`].

use std::fmt;
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, Publisher};

use super::config::FanoutConfig;
use super::core::Core;
use super::stats::FanoutStats;
use crate::producer::{self, Inlet, SendError, TrySendError};

/// A fanout channel of `capacity` elements (rounded up to a power of two, allocated at once)
/// with the default policies: the [`FanoutSender`] and a [`FanoutPublisher`] that any number
/// of subscribers may subscribe to, now or later (see the [module docs](super) for what a late
/// subscriber sees). For growth, a last-subscriber policy or a subscription timeout, see
/// [`channel_with`].
///
/// The sender may send up to `capacity` elements before anyone subscribes; those elements
/// wait for the first subscriber.
///
/// # Panics
///
/// If `capacity` is 0 (the buffer must hold at least one element) or above
/// [`MAX_CAPACITY`](super::MAX_CAPACITY).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout;
/// use rs_impl::TrySendError;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (tx, publisher) = fanout::channel::<u32>(2);
/// tx.try_send(1).unwrap();
/// tx.try_send(2).unwrap();
/// assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3)))); // nobody reads yet
///
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s)); // starts at the oldest retained element
/// tx.try_send(3).unwrap();
/// tx.complete();
/// assert_eq!(result.wait().unwrap(), vec![1, 2, 3]);
/// ```
pub fn channel<T: Clone + Send + 'static>(
    capacity: usize,
) -> (FanoutSender<T>, FanoutPublisher<T>) {
    channel_with(FanoutConfig::new(capacity))
}

/// A fanout channel configured by `config` (see [`channel`]).
///
/// # Examples
///
/// ```
/// use rs_impl::fanout::{self, FanoutConfig};
/// let (tx, publisher) = fanout::channel_with::<u8>(FanoutConfig::new(1024).grow_from(16));
/// assert_eq!(publisher.stats().capacity, 16);
/// # drop(tx);
/// ```
pub fn channel_with<T: Clone + Send + 'static>(
    config: FanoutConfig,
) -> (FanoutSender<T>, FanoutPublisher<T>) {
    let core = Core::new(config, true);
    (
        FanoutSender {
            inner: Inlet::new(core.clone()),
        },
        FanoutPublisher { core },
    )
}

/// The publishing half of a [`channel`]: a cheap `Clone` handle; subscribe any number of
/// subscribers.
///
/// When every publisher handle is dropped while no subscriber is left, nobody can ever
/// receive the channel's elements: the channel closes
/// ([`FanoutError::PublishersDropped`](super::FanoutError::PublishersDropped)), and the
/// senders' sends fail instead of waiting forever. While subscribers remain, it closes when
/// the last of them leaves.
#[must_use = "a fanout delivers nothing until subscribed to; dropping every publisher handle closes the channel"]
pub struct FanoutPublisher<T: Clone + Send + 'static> {
    core: Arc<Core<T>>,
}

impl<T: Clone + Send + 'static> Clone for FanoutPublisher<T> {
    fn clone(&self) -> Self {
        self.core.publisher_cloned();
        FanoutPublisher {
            core: self.core.clone(),
        }
    }
}

impl<T: Clone + Send + 'static> Drop for FanoutPublisher<T> {
    fn drop(&mut self) {
        self.core.publisher_dropped();
    }
}

impl<T: Clone + Send + 'static> fmt::Debug for FanoutPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FanoutPublisher")
            .field("config", self.core.config())
            .finish_non_exhaustive()
    }
}

impl<T: Clone + Send + 'static> FanoutPublisher<T> {
    /// A snapshot of the fanout's state and work counters.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, p) = rs_impl::fanout::channel::<u8>(16);
    /// tx.try_send(7).unwrap();
    /// assert_eq!(p.stats().buffered, 1);
    /// ```
    pub fn stats(&self) -> FanoutStats {
        self.core.stats()
    }

    /// Entries into the fanout's drain loop so far (unit tests).
    #[cfg(test)]
    pub(super) fn drain_calls(&self) -> usize {
        self.core.drain_calls()
    }
}

impl<T: Clone + Send + 'static> Publisher<T> for FanoutPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        self.core.subscribe(subscriber);
    }
}

/// The sending half of a [`channel`]: the producer API (shared with the [fanout](crate::fanout) and the [push source](crate::source::push): errors [`TrySendError`](crate::TrySendError), [`SendError`](crate::SendError)) (`try_send`,
/// `send(..).await`, `blocking_send`, `complete`, `fail`, a [`futures::Sink`]).
///
/// A cheap `Clone` handle, `Send` and `Sync`: every clone sends into the same fanout, and
/// sends are serialised inside (each handle's elements keep their order). Each successful
/// send delivers the element to every subscriber that has demand for it, on the calling
/// thread, unless another thread is draining at that moment (then that thread delivers it).
///
/// Dropping the last handle without [`complete`](Self::complete) or [`fail`](Self::fail)
/// fails the stream with [`ProducerError::Dropped`](crate::ProducerError::Dropped),
/// and dropping any handle while its thread panics fails it with
/// [`ProducerError::Panicked`](crate::ProducerError::Panicked): subscribers never
/// mistake a vanished or crashed producer for the end.
///
/// Do not block on a send from inside one of this fanout's subscribers: the space it waits for
/// is freed by the drain pass that is calling that subscriber.
#[must_use = "a sender sends nothing unless used; dropping the last one without complete fails the stream"]
pub struct FanoutSender<T: Clone + Send + 'static> {
    inner: Inlet<Core<T>>,
}

impl<T: Clone + Send + 'static> Clone for FanoutSender<T> {
    fn clone(&self) -> Self {
        FanoutSender {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Clone + Send + 'static> fmt::Debug for FanoutSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FanoutSender")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

producer::sink_via_inlet!(FanoutSender, Clone + Send + 'static);

impl<T: Clone + Send + 'static> FanoutSender<T> {
    /// Sends `item` if the buffer has room, without waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when the buffer holds its capacity (the slowest subscriber has
    /// not read the oldest element yet, or nobody has subscribed), [`TrySendError::Closed`]
    /// when the fanout takes no more elements; either way with the element. While another
    /// thread is delivering, the space that delivery frees may be seen only when it is done.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(1);
    /// assert!(tx.try_send(1).is_ok());
    /// assert!(tx.try_send(2).unwrap_err().is_full());
    /// ```
    #[inline]
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        self.inner.try_send(item)
    }

    /// Sends `item`, waiting without blocking the thread while the buffer is full: the task's
    /// [`Waker`](std::task::Waker) is woken by the drain pass that frees space (no polling
    /// loop).
    ///
    /// # Errors
    ///
    /// [`SendError`] with the element when the fanout is closed (also while waiting).
    ///
    /// # Cancel safety
    ///
    /// If the future is dropped before it completes, the element was not sent: it is dropped
    /// with the future, and nothing else changes (no space is held). For a send that keeps
    /// the element when abandoned, wait with the [`futures::Sink`]'s `poll_ready` (which
    /// holds a reservation, no element) and then send.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, p) = rs_impl::fanout::channel::<u32>(4);
    /// let (s, r) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// futures::executor::block_on(async {
    ///     for i in 0..10 {
    ///         tx.send(i).await.unwrap();
    ///     }
    ///     tx.complete();
    /// });
    /// assert_eq!(r.wait().unwrap(), (0..10).collect::<Vec<_>>());
    /// ```
    pub async fn send(&self, item: T) -> Result<(), SendError<T>> {
        self.inner.send(item).await
    }

    /// Sends `item`, **blocking the thread** while the buffer is full. Do not call it from an
    /// async task (use [`send`](Self::send)), nor from inside one of this fanout's
    /// subscribers.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the element when the fanout is closed (also while waiting).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, p) = rs_impl::fanout::channel::<u32>(2);
    /// let (s, r) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// let producer = std::thread::spawn(move || {
    ///     for i in 0..100 {
    ///         tx.blocking_send(i).unwrap();
    ///     }
    ///     tx.complete();
    /// });
    /// producer.join().unwrap();
    /// assert_eq!(r.wait().unwrap().len(), 100);
    /// ```
    pub fn blocking_send(&self, item: T) -> Result<(), SendError<T>> {
        self.inner.blocking_send(item)
    }

    /// Sends every element of `items` in order, **blocking the thread** while the buffer is
    /// full: the burst entry. While there is room and nobody else is delivering, the whole
    /// run enters the drain loop once — each element is written and delivered to every
    /// subscriber in the same pass — instead of entering and leaving it per element (two
    /// atomic read-modify-writes each, the cost of [`blocking_send`](Self::blocking_send)
    /// besides the delivery). When the buffer fills, it waits as `blocking_send` does and
    /// goes on with the next burst. Same rules as `blocking_send`: not from an async task nor
    /// from inside one of this fanout's subscribers.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the first element not sent when the fanout is closed (the rest of
    /// `items` is not taken); the elements before it were sent.
    ///
    /// # Panics
    ///
    /// A panic of the iterator reaches the caller (after the elements before it were sent).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, p) = rs_impl::fanout::channel::<u32>(8);
    /// let (s, r) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// tx.blocking_send_all(0..100).unwrap();
    /// tx.complete();
    /// assert_eq!(r.wait().unwrap(), (0..100).collect::<Vec<_>>());
    /// ```
    pub fn blocking_send_all<I>(&self, items: I) -> Result<(), SendError<T>>
    where
        I: IntoIterator<Item = T>,
    {
        self.inner.blocking_send_all(items)
    }

    /// [`blocking_send_all`](Self::blocking_send_all) for async code: waits without
    /// blocking the thread while the buffer is full (as [`send`](Self::send)). Not named
    /// `send_all`, which is [`futures::SinkExt::send_all`] (a stream through the `Sink`).
    ///
    /// # Errors
    ///
    /// [`SendError`] with the first element not sent when the fanout is closed.
    ///
    /// # Cancel safety
    ///
    /// Dropped while waiting, the element it waited with is dropped and the rest of `items`
    /// is not sent; the elements before were sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, p) = rs_impl::fanout::channel::<u32>(4);
    /// let (s, r) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// futures::executor::block_on(tx.send_iter(vec![1, 2, 3])).unwrap();
    /// tx.complete();
    /// assert_eq!(r.wait().unwrap(), vec![1, 2, 3]);
    /// ```
    pub async fn send_iter<I>(&self, items: I) -> Result<(), SendError<T>>
    where
        I: IntoIterator<Item = T>,
    {
        self.inner.send_all_async(items).await
    }

    /// Completes the stream, for every handle: each subscriber gets `on_complete` after its
    /// backlog; later sends fail. A second end changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(4);
    /// tx.complete();
    /// assert!(tx.is_closed());
    /// ```
    pub fn complete(&self) {
        self.inner.complete();
    }

    /// Fails the stream, for every handle: every subscriber gets `on_error(error)` at once
    /// (backlogs are dropped), and so does every later subscriber.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(4);
    /// tx.fail(rs_api::Error::msg("source gone"));
    /// assert!(tx.is_closed());
    /// ```
    pub fn fail(&self, error: Error) {
        self.inner.fail(error);
    }

    /// Whether the fanout takes no more elements: it ended, shut down, timed out, or nobody
    /// can subscribe to it any more.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, publisher) = rs_impl::fanout::channel::<u8>(4);
    /// assert!(!tx.is_closed());
    /// drop(publisher); // nobody subscribed, and nobody can any more
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Why the fanout takes no more elements (`None` while it does): what to look at when a
    /// send comes back `Closed`. See [`CloseReason`](crate::CloseReason).
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, publisher) = rs_impl::fanout::channel::<u8>(4);
    /// assert!(tx.closed_reason().is_none());
    /// drop(publisher); // nobody subscribed, and nobody can any more
    /// let why = tx.closed_reason().unwrap();
    /// assert!(why.to_string().contains("every publisher handle"), "{why}");
    /// ```
    pub fn closed_reason(&self) -> Option<crate::CloseReason> {
        self.inner.closed_reason()
    }
}
