//! The producer API's public errors: what a send hands back ([`TrySendError`], [`SendError`],
//! [`SinkError`]), why a stream whose producer vanished failed ([`ProducerError`]), and why a
//! channel closed ([`CloseReason`]). Re-exported at the crate root.

use std::fmt;

use rs_api::Error;

/// Why `try_send` handed the element back.
///
/// # Examples
///
/// ```
/// use rs_impl::TrySendError;
/// let (tx, _publisher) = rs_impl::fanout::channel::<u8>(1);
/// tx.try_send(1).unwrap();
/// let e = tx.try_send(2).unwrap_err();
/// assert!(e.is_full());
/// assert_eq!(e.into_inner(), 2);
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// No room now: the element would exceed the channel's bound.
    Full(T),
    /// The stream takes no more elements (it ended, or nobody can receive any more); the
    /// sender's `closed_reason` says why ([`CloseReason`]).
    Closed(T),
}

impl<T> TrySendError<T> {
    /// The element that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::TrySendError::Full(3).into_inner(), 3);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(x) | TrySendError::Closed(x) => x,
        }
    }

    /// Whether there was no room.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::TrySendError::Full(()).is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, TrySendError::Full(_))
    }

    /// Whether the stream was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(rs_impl::TrySendError::Closed(()).is_closed());
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
            TrySendError::Full(_) => f.write_str("no room: the channel is full"),
            TrySendError::Closed(_) => f.write_str("sending on a closed channel"),
        }
    }
}

impl<T> std::error::Error for TrySendError<T> {}

impl<T> From<SendError<T>> for TrySendError<T> {
    fn from(e: SendError<T>) -> Self {
        TrySendError::Closed(e.0)
    }
}

/// `send` or `blocking_send` found the stream closed; the element is handed back. The
/// sender's `closed_reason` says why ([`CloseReason`]).
///
/// # Examples
///
/// ```
/// let (tx, publisher) = rs_impl::fanout::channel::<u8>(4);
/// drop(publisher); // nobody can ever subscribe: the channel closes
/// assert_eq!(tx.blocking_send(7).unwrap_err().into_inner(), 7);
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The element that was not sent.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::SendError(5).into_inner(), 5);
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
        f.write_str("sending on a closed channel")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// The error of a sender's [`futures::Sink`] implementation.
///
/// # Examples
///
/// ```
/// use futures::SinkExt;
/// use rs_impl::SinkError;
/// let (mut tx, publisher) = rs_impl::fanout::channel::<u8>(4);
/// drop(publisher); // closes the channel
/// // The `Sink`'s `send` (the sender's own `send` is the inherent async method).
/// let e = futures::executor::block_on(SinkExt::send(&mut tx, 1)).unwrap_err();
/// assert!(matches!(e, SinkError::Closed(_)));
/// ```
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum SinkError<T> {
    /// The stream takes no more elements; `start_send` hands its element back (`Some`), the
    /// other methods have none (`None`).
    Closed(Option<T>),
    /// `start_send` was called without a successful `poll_ready` while there was no room (a
    /// misuse of the `Sink` protocol); the element comes back.
    NotReady(T),
}

impl<T> SinkError<T> {
    /// The element that was not sent, if the failing call had one.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(rs_impl::SinkError::NotReady(4).into_inner(), Some(4));
    /// ```
    pub fn into_inner(self) -> Option<T> {
        match self {
            SinkError::Closed(x) => x,
            SinkError::NotReady(x) => Some(x),
        }
    }
}

impl<T> fmt::Debug for SinkError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkError::Closed(_) => f.write_str("Closed(..)"),
            SinkError::NotReady(_) => f.write_str("NotReady(..)"),
        }
    }
}

impl<T> fmt::Display for SinkError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkError::Closed(_) => f.write_str("sending on a closed channel"),
            SinkError::NotReady(_) => {
                f.write_str("start_send without a successful poll_ready, and the channel is full")
            }
        }
    }
}

impl<T> std::error::Error for SinkError<T> {}

/// How a stream ends when its producer disappears without `complete` or `fail`, as delivered
/// in `on_error`.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::ProducerError;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (tx, publisher) = rs_impl::fanout::channel::<u8>(4);
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// tx.try_send(1).unwrap();
/// drop(tx); // no complete: a cut-short stream, not a finished one
/// let e = result.wait().unwrap_err();
/// assert_eq!(e.downcast_ref::<ProducerError>(), Some(&ProducerError::Dropped));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProducerError {
    /// Every sender was dropped without `complete` or `fail`.
    #[error(
        "every sender was dropped without complete or fail: the stream was cut short, it did \
         not complete"
    )]
    Dropped,
    /// A sender was dropped while its thread panicked.
    #[error(
        "a sender was dropped while its thread panicked: the producer crashed and the stream \
         was cut short"
    )]
    Panicked,
}

impl From<ProducerError> for Error {
    fn from(e: ProducerError) -> Self {
        Error::new(e)
    }
}

/// Why a channel takes no more elements: what a sender's `closed_reason` says after a send
/// came back [`Closed`](TrySendError::Closed) (the send errors carry only the element, as
/// tokio's do).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::fanout::{self, FanoutConfig, FanoutError, LastSubscriberPolicy};
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// use rs_impl::CloseReason;
///
/// let config = FanoutConfig::new(4).last_subscriber(LastSubscriberPolicy::CancelUpstream);
/// let (tx, publisher) = fanout::channel_with::<u8>(config);
/// let (s, h) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// h.cancel(); // the last subscriber leaves: this policy closes the channel
/// assert!(tx.try_send(1).unwrap_err().is_closed());
/// match tx.closed_reason() {
///     Some(CloseReason::Failed(e)) => {
///         assert_eq!(e.downcast_ref::<FanoutError>(), Some(&FanoutError::ShutDown))
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CloseReason {
    /// A producer completed the stream (`complete`, or the `Sink`'s `close`).
    Completed,
    /// The stream ended with this error, the one its subscribers get: a producer's `fail`, a
    /// vanished or panicked producer ([`ProducerError`]), or the channel's own reason (for the
    /// fanout a [`FanoutError`](crate::fanout::FanoutError): its last subscriber left under
    /// `LastSubscriberPolicy::CancelUpstream`, every publisher handle was dropped with nobody
    /// subscribed, nobody subscribed in time).
    Failed(Error),
    /// The subscriber cancelled its subscription (the push source: nobody else can receive).
    Cancelled,
    /// The publisher was dropped before anyone subscribed (the push source: nobody can
    /// receive).
    Unsubscribable,
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Completed => f.write_str("a producer completed the stream"),
            CloseReason::Failed(e) => write!(f, "the stream ended with an error: {e}"),
            CloseReason::Cancelled => f.write_str("the subscriber cancelled"),
            CloseReason::Unsubscribable => {
                f.write_str("the publisher was dropped before anyone subscribed")
            }
        }
    }
}
