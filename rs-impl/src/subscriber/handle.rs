//! The outcome of a ready-made subscriber: the [`Slot`] it shares with its [`Handle`], and the
//! typed outcomes of a stream that did not end by itself ([`Cancelled`], [`Panicked`],
//! [`Dropped`]) or whose outcome was taken already ([`AlreadyTaken`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rs_api::Error;

use super::gate::Gate;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::{Arc, Condvar, Mutex};

/// The outcome of a stream whose subscription was cancelled through the handle
/// ([`Handle::cancel`], or dropping the handle) before it ended.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, Cancelled, RequestStrategy};
/// let (s, h) = collect::<u8>(RequestStrategy::Unbounded);
/// rs_impl::source::never().subscribe(Box::new(s));
/// h.cancel();
/// assert!(h.wait().unwrap_err().is::<Cancelled>());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the subscription was cancelled through its handle before the stream ended")]
pub struct Cancelled;

/// The outcome of a stream whose consumer (the closure of [`for_each`](super::for_each), or
/// what a ready-made subscriber does with an element) panicked: the subscriber cancelled its
/// subscription and reported the panic (through [`panics`](crate::panics)); the panic did not
/// reach the publisher.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{for_each, Panicked, RequestStrategy};
/// # std::panic::set_hook(Box::new(|_| {}));
/// let (s, h) = for_each(RequestStrategy::Unbounded, |x: u32| assert!(x < 2, "too big: {x}"));
/// rs_impl::source::range(0u32..10).subscribe(Box::new(s));
/// let e = h.wait().unwrap_err();
/// assert!(e.downcast_ref::<Panicked>().unwrap().message().contains("too big: 2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the subscriber panicked in {signal}: {message}")]
pub struct Panicked {
    signal: &'static str,
    message: String,
}

impl Panicked {
    /// An outcome for a panic in `signal` with `message`.
    pub(super) fn new(signal: &'static str, message: String) -> Self {
        Panicked { signal, message }
    }

    /// The signal it panicked in (`"on_next"`).
    ///
    /// # Examples
    ///
    /// See [`Panicked`].
    pub fn signal(&self) -> &'static str {
        self.signal
    }

    /// The panic's message.
    ///
    /// # Examples
    ///
    /// See [`Panicked`].
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The outcome of a stream whose publisher dropped the subscriber without a terminal signal,
/// although nobody cancelled and the subscriber did not panic (a publisher breaking rules
/// 1.4/1.5, or one that was itself torn down): a waiting thread or task never hangs on a
/// subscriber that is gone.
///
/// # Examples
///
/// ```
/// use rs_impl::subscriber::{collect, Dropped, RequestStrategy};
/// let (s, h) = collect::<u8>(RequestStrategy::Unbounded);
/// drop(s); // never subscribed, never ended
/// assert!(h.wait().unwrap_err().is::<Dropped>());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the publisher dropped the subscriber without a terminal signal (nobody cancelled it, and it did not panic)")]
pub struct Dropped;

/// The error a handle reports when its outcome was already taken by
/// [`Handle::try_take`]: waiting again would never end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the outcome was already taken from this handle")]
pub struct AlreadyTaken;

/// What the outcome lock guards.
struct Outcome<R> {
    /// The outcome, until taken (it can be taken once).
    value: Option<Result<R, Error>>,
    /// Whether one was ever set.
    set: bool,
    /// Threads waiting on `ready`: the outcome notifies only when there is one, so that a
    /// stream that ended before anyone waited (a synchronous one, the usual case) costs no
    /// `futex` wake system call (std's `Condvar::notify_all` makes one whether or not anyone
    /// waits: one per subscription, counted with `strace -c`).
    waiting: usize,
    /// The task awaiting the handle (under the same lock: set and taken without a lock of
    /// its own).
    waker: Option<Waker>,
}

/// The outcome slot shared between a subscriber and its handle.
pub(super) struct Slot<R> {
    /// The outcome, whether one was set, and the waiting threads.
    outcome: Mutex<Outcome<R>>,
    ready: Condvar,
    /// The calls on the subscription, for the handle's `cancel` (inline: the slot is the
    /// one block a ready-made subscriber and its handle share).
    pub(super) gate: Gate,
}

impl<R> Slot<R> {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Slot {
            outcome: Mutex::new(Outcome {
                value: None,
                set: false,
                waiting: 0,
                waker: None,
            }),
            ready: Condvar::new(),
            gate: Gate::new(),
        })
    }

    /// Sets the outcome unless one is set already.
    pub(super) fn complete(&self, outcome: Result<R, Error>) {
        self.complete_with(|| outcome);
    }

    /// Sets the outcome `outcome` makes, unless one is set already (then `outcome` is not
    /// called: a subscriber dropped after its terminal signal makes no error it would throw
    /// away, so a completed stream allocates nothing at the end).
    pub(super) fn complete_with(&self, outcome: impl FnOnce() -> Result<R, Error>) {
        let mut slot = self.outcome.lock();
        if !slot.set {
            slot.value = Some(outcome());
            slot.set = true;
            if slot.waiting != 0 {
                self.ready.notify_all();
            }
        }
        let waker = slot.waker.take();
        drop(slot);
        if let Some(w) = waker {
            w.wake();
        }
        self.gate.end();
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<Result<R, Error>> {
        let mut slot = self.outcome.lock();
        if let Some(outcome) = slot.value.take() {
            return Poll::Ready(outcome);
        }
        if slot.set {
            return Poll::Ready(Err(Error::new(AlreadyTaken)));
        }
        // Registered under the lock `complete` sets the outcome and takes the waker under:
        // no lost wake-up.
        slot.waker = Some(cx.waker().clone());
        drop(slot);
        Poll::Pending
    }

    fn wait(&self) -> Result<R, Error> {
        let mut slot = self.outcome.lock();
        loop {
            if let Some(outcome) = slot.value.take() {
                return outcome;
            }
            if slot.set {
                return Err(Error::new(AlreadyTaken));
            }
            // Counted under the lock that `complete_with` checks it under, and the lock is
            // released only inside `wait`: no lost wake-up.
            if fault::active(Fault::WaiterCountedLate) {
                drop(slot);
                slot = self.outcome.lock();
            }
            slot.waiting += 1;
            slot = self.ready.wait(slot);
            slot.waiting -= 1;
        }
    }

    fn wait_timeout(&self, timeout: Duration) -> Option<Result<R, Error>> {
        let Some(deadline) = std::time::Instant::now().checked_add(timeout) else {
            // A timeout too large for `Instant` (such as `Duration::MAX`) never expires.
            return Some(self.wait());
        };
        let mut slot = self.outcome.lock();
        loop {
            if let Some(outcome) = slot.value.take() {
                return Some(outcome);
            }
            if slot.set {
                return Some(Err(Error::new(AlreadyTaken)));
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return None;
            }
            slot.waiting += 1;
            let (s, _) = self.ready.wait_timeout(slot, deadline - now);
            slot = s;
            slot.waiting -= 1;
        }
    }

    fn try_take(&self) -> Option<Result<R, Error>> {
        self.outcome.lock().value.take()
    }

    fn cancel(&self) {
        self.gate.cancel();
    }

    /// Whether the handle cancelled (or the subscriber cancelled itself after a panic).
    pub(super) fn cancelled(&self) -> bool {
        self.gate.cancelled()
    }
}

/// A handle on the outcome of a [`collect`](super::collect) or [`for_each`](super::for_each)
/// subscriber.
///
/// Wait for it from a thread ([`wait`](Self::wait)) or `.await` it: it is a `Future` of the
/// same outcome, woken by the subscriber's terminal signal (or its drop), on any executor.
///
/// **Dropping the handle cancels the subscription**, as dropping a `Stream` or futures'
/// `RemoteHandle` does: nobody is listening any more, so the stream stops instead of running
/// on (an endless source would otherwise keep a thread busy forever). To let the stream run
/// to its end without keeping the handle, call [`detach`](Self::detach).
///
/// The outcome is the stream's: `Ok` with the result after `on_complete`, the error of
/// `on_error`, or one of the typed outcomes of a stream that did not end by itself:
/// [`Cancelled`] (through this handle), [`Panicked`] (the consumer panicked), [`Dropped`] (the
/// publisher dropped the subscriber without a terminal signal).
///
/// # Cancel safety
///
/// Awaiting the handle and dropping it before it is ready (in a `select!` branch that lost,
/// say) drops the handle: the subscription is cancelled and the outcome is lost. To stop
/// waiting without stopping the stream, `detach` the handle instead (and keep whatever the
/// consumer writes elsewhere), or poll it by reference (`&mut handle`, it is `Unpin`).
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
#[must_use = "dropping the handle cancels the subscription; call detach() to let the stream run"]
pub struct Handle<R> {
    slot: Arc<Slot<R>>,
    /// Dropping the handle leaves the subscription alone.
    detached: bool,
}

impl<R> Drop for Handle<R> {
    fn drop(&mut self) {
        if !self.detached {
            self.slot.cancel();
        }
    }
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
        Handle {
            slot,
            detached: false,
        }
    }
}

impl<R> fmt::Debug for Handle<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

impl<R> Handle<R> {
    /// **Blocks the thread** until the stream ends; returns its outcome (see [`Handle`]).
    ///
    /// # Errors
    ///
    /// The stream's error, or [`Cancelled`], [`Panicked`], [`Dropped`].
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

    /// **Blocks the thread** for at most `timeout`; `Err(self)` if the stream has not ended by
    /// then. A timeout too large to represent as a deadline (such as `Duration::MAX`) waits
    /// like [`wait`](Self::wait).
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
    /// it arrives, and nothing is requested. Dropping the handle does the same.
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

    /// Lets the stream run to its end without this handle: dropping it no longer cancels,
    /// and the outcome is discarded (as dropping a tokio `JoinHandle`, or futures'
    /// `RemoteHandle::forget`).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{for_each, RequestStrategy};
    /// let seen = Arc::new(AtomicU32::new(0));
    /// let s2 = seen.clone();
    /// let (s, h) = for_each(RequestStrategy::Unbounded, move |_: u8| {
    ///     s2.fetch_add(1, Ordering::Relaxed);
    /// });
    /// h.detach(); // no handle: the stream still runs to its end
    /// rs_impl::source::range(0u8..5).subscribe(Box::new(s));
    /// assert_eq!(seen.load(Ordering::Relaxed), 5);
    /// ```
    pub fn detach(mut self) {
        self.detached = true;
    }
}
