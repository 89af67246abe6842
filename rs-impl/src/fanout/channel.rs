//! [`channel`]: a producer handle ([`Sender`]) and a [`FanoutPublisher`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rs_api::{BoxSubscriber, Error, Publisher};

use super::core::{Core, Offer};
use super::{FanoutConfig, FanoutError, FanoutStats};

/// A fanout fed by a producer handle: the [`Sender`] and a [`FanoutPublisher`] that any number
/// of subscribers may subscribe to (now or later; see the [module docs](super) for what a late
/// subscriber sees).
///
/// The sender may send up to the configured maximum capacity before anyone subscribes; those
/// elements wait for the first subscriber.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout::{self, FanoutConfig, TrySendError};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (mut tx, publisher) = fanout::channel::<u32>(FanoutConfig::new(2).unwrap());
/// tx.try_send(1).unwrap();
/// tx.try_send(2).unwrap();
/// assert!(matches!(tx.try_send(3), Err(TrySendError::Full(3)))); // nobody reads yet
///
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s)); // starts at the oldest retained element
/// tx.try_send(3).unwrap();
/// drop(tx); // dropping the sender completes the stream
/// assert_eq!(result.wait().unwrap(), vec![1, 2, 3]);
/// ```
pub fn channel<T: Clone + Send + 'static>(config: FanoutConfig) -> (Sender<T>, FanoutPublisher<T>) {
    let start = config.start();
    let core = Core::new(config, true, start);
    (
        Sender {
            core: core.clone(),
            sent: 0,
            done: false,
        },
        FanoutPublisher { core },
    )
}

/// The publishing half of a [`channel`]: a cheap `Clone` handle; subscribe any number of
/// subscribers.
pub struct FanoutPublisher<T: Clone + Send + 'static> {
    core: Arc<Core<T>>,
}

impl<T: Clone + Send + 'static> Clone for FanoutPublisher<T> {
    fn clone(&self) -> Self {
        FanoutPublisher {
            core: self.core.clone(),
        }
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
    /// let (mut tx, p) = rs_impl::fanout::channel::<u8>(Default::default());
    /// tx.try_send(7).unwrap();
    /// assert_eq!(p.stats().buffered, 1);
    /// ```
    pub fn stats(&self) -> FanoutStats {
        self.core.stats()
    }
}

impl<T: Clone + Send + 'static> Publisher<T> for FanoutPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        self.core.subscribe(subscriber);
    }
}

/// Why [`Sender::try_send`] handed the element back.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The buffer holds its maximum: the slowest subscriber has not read the oldest element
    /// yet (or nobody has subscribed).
    Full(T),
    /// The fanout will take no more elements: it shut down when its last subscriber left, or
    /// timed out waiting for a first one (see [`FanoutError`]).
    Closed(T),
}

impl<T> TrySendError<T> {
    /// The element that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::TrySendError::Full(3).into_inner(), 3);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(x) | TrySendError::Closed(x) => x,
        }
    }

    /// Whether the buffer was full.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::fanout::TrySendError::Full(()).is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }

    /// Whether the fanout was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::fanout::TrySendError::Closed(()).is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        matches!(self, TrySendError::Closed(_))
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("sending on a full fanout"),
            TrySendError::Closed(_) => f.write_str("sending on a closed fanout"),
        }
    }
}

impl<T> std::error::Error for TrySendError<T> {}

/// [`Sender::send`] and [`Sender::send_async`] found the fanout closed; the element is handed
/// back.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The element that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::fanout::SendError(5).into_inner(), 5);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a closed fanout")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// The producer handle of a [`channel`]. Not `Clone`: a fanout has one producer, so its
/// elements have one order. `Send`, so it may move to the producer's thread or task.
///
/// Each successful send delivers the element, on the calling thread, to every subscriber that
/// has demand for it, unless another thread is draining at that moment (then that thread
/// delivers it). Dropping the sender completes the stream, like [`complete`](Self::complete);
/// dropped while its thread panics, it fails the stream with
/// [`FanoutError::ProducerPanicked`] instead, so subscribers never mistake a crash for the end.
///
/// Do not block on a send from inside one of this fanout's subscribers: the space it waits for
/// is freed by the drain pass that is calling that subscriber.
pub struct Sender<T: Clone + Send + 'static> {
    core: Arc<Core<T>>,
    /// Elements handed over so far (plus the first position); with the ring's `released`
    /// count, the occupied space.
    sent: u64,
    /// Completed or failed explicitly.
    done: bool,
}

impl<T: Clone + Send + 'static> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender")
            .field("closed", &self.core.is_closed())
            .finish_non_exhaustive()
    }
}

impl<T: Clone + Send + 'static> Sender<T> {
    /// Sends `item` if the buffer has room, without waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when the buffer holds its maximum, [`TrySendError::Closed`] when
    /// the fanout takes no more elements; either way with the element.
    ///
    /// # Examples
    ///
    /// ```
    /// let (mut tx, _p) = rs_impl::fanout::channel::<u8>(rs_impl::fanout::FanoutConfig::new(1).unwrap());
    /// assert!(tx.try_send(1).is_ok());
    /// assert!(tx.try_send(2).unwrap_err().is_full());
    /// ```
    pub fn try_send(&mut self, item: T) -> Result<(), TrySendError<T>> {
        match self.core.try_send(&mut self.sent, item) {
            Offer::Sent => Ok(()),
            Offer::Full(x) => Err(TrySendError::Full(x)),
            Offer::Closed(x) => Err(TrySendError::Closed(x)),
        }
    }

    /// Sends `item`, blocking the thread while the buffer is full.
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
    /// let (mut tx, p) = rs_impl::fanout::channel::<u32>(rs_impl::fanout::FanoutConfig::new(2).unwrap());
    /// let (s, r) = collect(RequestStrategy::OneByOne);
    /// p.subscribe(Box::new(s));
    /// let producer = std::thread::spawn(move || {
    ///     for i in 0..100 {
    ///         tx.send(i).unwrap();
    ///     }
    /// });
    /// producer.join().unwrap();
    /// assert_eq!(r.wait().unwrap().len(), 100);
    /// ```
    pub fn send(&mut self, item: T) -> Result<(), SendError<T>> {
        let mut item = item;
        loop {
            match self.core.try_send(&mut self.sent, item) {
                Offer::Sent => return Ok(()),
                Offer::Closed(x) => return Err(SendError(x)),
                Offer::Full(x) => {
                    item = x;
                    if !self.core.register_waiter(self.sent, None) {
                        self.core.wait_for_space();
                    }
                }
            }
        }
    }

    /// Sends `item`, waiting without blocking the thread while the buffer is full: the future
    /// registers its task's [`Waker`](std::task::Waker), which the drain pass that frees space
    /// wakes (no polling loop). Dropping the future withdraws the element and the
    /// registration.
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
    /// let (mut tx, p) = rs_impl::fanout::channel::<u32>(rs_impl::fanout::FanoutConfig::new(4).unwrap());
    /// let (s, r) = collect(RequestStrategy::Unbounded);
    /// p.subscribe(Box::new(s));
    /// futures::executor::block_on(async move {
    ///     for i in 0..10 {
    ///         tx.send_async(i).await.unwrap();
    ///     }
    /// });
    /// assert_eq!(r.wait().unwrap(), (0..10).collect::<Vec<_>>());
    /// ```
    pub fn send_async(&mut self, item: T) -> SendFuture<'_, T> {
        SendFuture {
            sender: self,
            item: Some(item),
            registered: false,
        }
    }

    /// Completes the stream: each subscriber gets `on_complete` after its backlog.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(Default::default());
    /// tx.complete();
    /// ```
    pub fn complete(mut self) {
        self.done = true;
        self.core.terminate(None);
    }

    /// Fails the stream: every subscriber gets `on_error(error)` at once (backlogs are
    /// dropped), and so does every later subscriber.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(Default::default());
    /// tx.fail(rs_api::Error::msg("source gone"));
    /// ```
    pub fn fail(mut self, error: Error) {
        self.done = true;
        self.core.terminate(Some(error));
    }

    /// Whether the fanout takes no more elements (it shut down or timed out).
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(Default::default());
    /// assert!(!tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// A publisher handle of this channel (the same as the one [`channel`] returned).
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _p) = rs_impl::fanout::channel::<u8>(Default::default());
    /// let p2 = tx.publisher();
    /// assert_eq!(p2.stats().subscribers, 0);
    /// ```
    pub fn publisher(&self) -> FanoutPublisher<T> {
        FanoutPublisher {
            core: self.core.clone(),
        }
    }
}

impl<T: Clone + Send + 'static> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if crate::loom::thread::panicking() {
            self.core
                .terminate(Some(FanoutError::ProducerPanicked.into()));
        } else {
            self.core.terminate(None);
        }
    }
}

/// The future of [`Sender::send_async`].
#[must_use = "futures do nothing unless polled"]
pub struct SendFuture<'a, T: Clone + Send + 'static> {
    sender: &'a mut Sender<T>,
    item: Option<T>,
    registered: bool,
}

impl<T: Clone + Send + 'static> fmt::Debug for SendFuture<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendFuture")
            .field("pending", &self.item.is_some())
            .finish_non_exhaustive()
    }
}

// Nothing in the future is pinned: it holds a reference and the element by value.
impl<T: Clone + Send + 'static> Unpin for SendFuture<'_, T> {}

impl<T: Clone + Send + 'static> Future for SendFuture<'_, T> {
    type Output = Result<(), SendError<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let Some(mut item) = this.item.take() else {
            return Poll::Ready(Ok(())); // polled again after completion
        };
        loop {
            match this.sender.core.try_send(&mut this.sender.sent, item) {
                Offer::Sent => {
                    this.registered = false;
                    return Poll::Ready(Ok(()));
                }
                Offer::Closed(x) => {
                    this.registered = false;
                    return Poll::Ready(Err(SendError(x)));
                }
                Offer::Full(x) => {
                    item = x;
                    if this
                        .sender
                        .core
                        .register_waiter(this.sender.sent, Some(cx.waker()))
                    {
                        continue; // room (or closed) meanwhile: try again now
                    }
                    this.registered = true;
                    this.item = Some(item);
                    return Poll::Pending;
                }
            }
        }
    }
}

impl<T: Clone + Send + 'static> Drop for SendFuture<'_, T> {
    fn drop(&mut self) {
        if self.registered && self.item.is_some() {
            self.sender.core.unregister_waiter();
        }
    }
}
