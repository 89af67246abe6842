//! The outcome of a ready-made subscriber: the [`Slot`] it shares with its [`Handle`], and the
//! handle's errors.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rs_api::Error;

use super::gate::Gate;
use crate::loom::sync::{Arc, Condvar, Mutex};

/// The error a handle reports when its subscriber was dropped without a terminal signal
/// (cancelled through the handle, or dropped by the publisher after a panic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the subscriber was dropped without a terminal signal (cancelled, or it panicked)")]
pub struct Cancelled;

/// The error a handle reports when its outcome was already taken by
/// [`Handle::try_take`]: waiting again would never end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the outcome was already taken from this handle")]
pub struct AlreadyTaken;

/// The outcome slot shared between a subscriber and its handle.
pub(super) struct Slot<R> {
    /// The outcome, and whether one was ever set (it can be taken once).
    outcome: Mutex<(Option<Result<R, Error>>, bool)>,
    ready: Condvar,
    /// The task awaiting the handle, registered while the `outcome` lock is held.
    waker: Mutex<Option<Waker>>,
    /// The calls on the subscription, for the handle's `cancel`.
    pub(super) gate: Arc<Gate>,
}

impl<R> Slot<R> {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Slot {
            outcome: Mutex::new((None, false)),
            ready: Condvar::new(),
            waker: Mutex::new(None),
            gate: Gate::new(),
        })
    }

    /// Sets the outcome unless one is set already.
    pub(super) fn complete(&self, outcome: Result<R, Error>) {
        let mut slot = self.outcome.lock();
        if !slot.1 {
            *slot = (Some(outcome), true);
            self.ready.notify_all();
        }
        drop(slot);
        let waker = self.waker.lock().take();
        if let Some(w) = waker {
            w.wake();
        }
        self.gate.end();
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<Result<R, Error>> {
        let mut slot = self.outcome.lock();
        if let Some(outcome) = slot.0.take() {
            return Poll::Ready(outcome);
        }
        if slot.1 {
            return Poll::Ready(Err(Error::new(AlreadyTaken)));
        }
        // Registered before `complete` can take the lock to set the outcome (it takes the
        // waker only after): no lost wake-up.
        *self.waker.lock() = Some(cx.waker().clone());
        drop(slot);
        Poll::Pending
    }

    fn wait(&self) -> Result<R, Error> {
        let mut slot = self.outcome.lock();
        loop {
            if let Some(outcome) = slot.0.take() {
                return outcome;
            }
            if slot.1 {
                return Err(Error::new(AlreadyTaken));
            }
            slot = self.ready.wait(slot);
        }
    }

    fn wait_timeout(&self, timeout: Duration) -> Option<Result<R, Error>> {
        let Some(deadline) = std::time::Instant::now().checked_add(timeout) else {
            // A timeout too large for `Instant` (such as `Duration::MAX`) never expires.
            return Some(self.wait());
        };
        let mut slot = self.outcome.lock();
        loop {
            if let Some(outcome) = slot.0.take() {
                return Some(outcome);
            }
            if slot.1 {
                return Some(Err(Error::new(AlreadyTaken)));
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return None;
            }
            let (s, _) = self.ready.wait_timeout(slot, deadline - now);
            slot = s;
        }
    }

    fn try_take(&self) -> Option<Result<R, Error>> {
        self.outcome.lock().0.take()
    }

    fn cancel(&self) {
        self.gate.cancel();
    }
}

/// A handle on the outcome of a [`collect`](super::collect) or [`for_each`](super::for_each)
/// subscriber.
///
/// Wait for it from a thread ([`wait`](Self::wait)) or `.await` it: it is a `Future` of the
/// same outcome, woken by the subscriber's terminal signal (or its drop), on any executor.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, handle) = collect(RequestStrategy::Prefetch(4));
/// rs_impl::source::range(0u8..3).subscribe(Box::new(s));
/// assert_eq!(futures::executor::block_on(handle).unwrap(), vec![0, 1, 2]);
/// ```
pub struct Handle<R> {
    slot: Arc<Slot<R>>,
}

impl<R> Future for Handle<R> {
    type Output = Result<R, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.slot.poll(cx)
    }
}

impl<R> Handle<R> {
    /// The handle on `slot`.
    pub(super) fn new(slot: Arc<Slot<R>>) -> Self {
        Handle { slot }
    }
}

impl<R> fmt::Debug for Handle<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

impl<R> Handle<R> {
    /// Blocks until the stream ends; returns its result (the error of `on_error`, or
    /// [`Cancelled`] if the subscriber was dropped without a terminal signal).
    ///
    /// # Errors
    ///
    /// The stream's error, or [`Cancelled`].
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// let (s, h) = rs_impl::subscriber::collect(rs_impl::subscriber::RequestStrategy::Unbounded);
    /// rs_impl::source::from_iter([1, 2]).subscribe(Box::new(s));
    /// assert_eq!(h.wait().unwrap(), vec![1, 2]);
    /// ```
    pub fn wait(self) -> Result<R, Error> {
        self.slot.wait()
    }

    /// Waits at most `timeout`; `Err(self)` if the stream has not ended by then. A timeout
    /// too large to represent as a deadline (such as `Duration::MAX`) waits like [`wait`](Self::wait).
    ///
    /// # Errors
    ///
    /// The handle itself, when the timeout passed first.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use std::time::Duration;
    /// let (s, h) = rs_impl::subscriber::collect::<u8>(rs_impl::subscriber::RequestStrategy::Unbounded);
    /// rs_impl::source::never().subscribe(Box::new(s));
    /// let h = h.wait_timeout(Duration::from_millis(1)).unwrap_err();
    /// h.cancel();
    /// assert!(h.wait().is_err());
    /// ```
    pub fn wait_timeout(self, timeout: Duration) -> Result<Result<R, Error>, Self> {
        match self.slot.wait_timeout(timeout) {
            Some(outcome) => Ok(outcome),
            None => Err(self),
        }
    }

    /// The outcome, if the stream has ended; it can be taken once.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// let (s, h) = rs_impl::subscriber::collect::<u8>(rs_impl::subscriber::RequestStrategy::Unbounded);
    /// assert!(h.try_take().is_none());
    /// rs_impl::source::empty().subscribe(Box::new(s));
    /// assert_eq!(h.try_take().unwrap().unwrap(), Vec::<u8>::new());
    /// ```
    pub fn try_take(&self) -> Option<Result<R, Error>> {
        self.slot.try_take()
    }

    /// Cancels the subscription (from any thread). The outcome becomes [`Cancelled`] once the
    /// publisher drops the subscriber, unless a terminal signal came first. A cancel made
    /// before the subscriber is subscribed is kept: the subscription is cancelled as soon as
    /// it arrives, and nothing is requested.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// let (s, h) = rs_impl::subscriber::collect::<u8>(rs_impl::subscriber::RequestStrategy::Unbounded);
    /// rs_impl::source::never().subscribe(Box::new(s));
    /// h.cancel();
    /// assert!(h.wait().unwrap_err().is::<rs_impl::subscriber::Cancelled>());
    /// ```
    pub fn cancel(&self) {
        self.slot.cancel()
    }
}
