//! Ready-made subscribers: [`collect`] into a `Vec`, [`for_each`] element, and [`external`]:
//! one whose demand and signals are driven from outside (for bridges and event loops; its
//! own docs give its contract).
//!
//! # Contract
//!
//! * **Demand** follows a [`RequestStrategy`]: unbounded, or a bounded prefetch of `n` that is
//!   replenished by `n / 2` (at least 1) each time that many elements have been consumed, so
//!   at most `n` elements are ever outstanding (rule 2.1).
//! * **One subscription** (2.5): a second `on_subscribe` — or one after the end — is cancelled
//!   at once, and the first subscription is kept.
//! * **Terminal signals** (2.3, 2.4): the subscription is dropped without being called.
//! * **Serial calls** (2.7): the subscriber's own requests (made from inside its signals) and
//!   its handle's `cancel` (from any thread) never overlap on the subscription, and nothing is
//!   requested after the cancel; no lock is held while calling out.
//! * **The handle:** each subscriber comes with a handle that waits for the outcome from any
//!   thread (or is awaited: it is a `Future`), and can cancel the subscription. If the subscriber is dropped without a terminal
//!   signal (cancelled, or a panic made the publisher drop it), the outcome is the
//!   [`Cancelled`] error — a waiting thread never hangs on a subscriber that is gone.
//! * **Cost:** no lock and no allocation per element (`collect` pushes into its own `Vec`; the
//!   handle sees the result only at the end).
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, for_each, RequestStrategy};
//!
//! let (s, result) = collect(RequestStrategy::Prefetch(8));
//! source::range(0u32..100).subscribe(Box::new(s));
//! assert_eq!(result.wait().unwrap().len(), 100);
//!
//! let mut sum = 0u64;
//! let total = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
//! let t = total.clone();
//! let (s, done) = for_each(RequestStrategy::OneByOne, move |x: u64| {
//!     sum += x;
//!     t.store(sum, std::sync::atomic::Ordering::Relaxed);
//! });
//! source::range(1u64..5).subscribe(Box::new(s));
//! done.wait().unwrap();
//! assert_eq!(total.load(std::sync::atomic::Ordering::Relaxed), 10);
//! ```

mod external;

pub use external::{external, External, Requester, Signals};

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use rs_api::{Error, Subscriber, SubscriptionRef, UNBOUNDED};

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex};

/// How a ready-made subscriber requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestStrategy {
    /// `request(UNBOUNDED)` once, in `on_subscribe`.
    Unbounded,
    /// Request `n` up front, then `n / 2` (at least 1) after each `n / 2` consumed. `Prefetch(0)`
    /// is taken as `Prefetch(1)` (a request of 0 would be a rule 3.9 violation).
    Prefetch(u64),
    /// `request(1)` up front and after each element (same as `Prefetch(1)`).
    OneByOne,
}

impl RequestStrategy {
    /// The first request and the replenishing batch, both at least 1.
    fn sizes(self) -> (u64, u64) {
        match self {
            RequestStrategy::Unbounded => (UNBOUNDED, 0),
            RequestStrategy::OneByOne => (1, 1),
            RequestStrategy::Prefetch(n) => {
                let n = n.max(1);
                (n, (n / 2).max(1))
            }
        }
    }
}

/// The subscription-handling half shared by the ready-made subscribers.
struct Upstream {
    subscription: Option<SubscriptionRef>,
    /// Serialises this subscriber's calls with its handle's `cancel` (rule 2.7).
    gate: Arc<Gate>,
    /// First request; `UNBOUNDED` for the unbounded strategy.
    initial: u64,
    /// Replenishing batch; 0 when unbounded.
    batch: u64,
    /// Elements consumed since the last replenishing request.
    consumed: u64,
    /// A terminal signal arrived, or the handle cancelled.
    ended: bool,
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("subscribed", &self.subscription.is_some())
            .field("initial", &self.initial)
            .field("batch", &self.batch)
            .field("consumed", &self.consumed)
            .field("ended", &self.ended)
            .finish()
    }
}

impl Upstream {
    fn new(strategy: RequestStrategy, gate: Arc<Gate>) -> Self {
        let (initial, batch) = strategy.sizes();
        Upstream {
            subscription: None,
            gate,
            initial,
            batch,
            consumed: 0,
            ended: false,
        }
    }

    /// 2.5: keeps the first subscription and makes the first request; cancels any other.
    /// The handle sees the subscription before the first request; if the handle cancelled
    /// already, the subscription is cancelled at once, without a request.
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self.subscription.is_some() || self.ended {
            subscription.cancel();
            return;
        }
        if !self.gate.keep(&subscription) {
            self.ended = true;
            subscription.cancel();
            return;
        }
        self.subscription = Some(subscription.clone());
        self.gate.request(&subscription, self.initial);
    }

    /// Counts one consumed element and replenishes demand when a batch is used up.
    fn consumed_one(&mut self) {
        if self.batch == 0 {
            return;
        }
        self.consumed += 1;
        if self.consumed == self.batch {
            self.consumed = 0;
            if let Some(s) = &self.subscription {
                self.gate.request(s, self.batch);
            }
        }
    }

    /// 2.3, 2.4: forget the subscription without calling it.
    fn end(&mut self) {
        self.ended = true;
        self.subscription = None;
    }
}

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

/// Serialises the calls made on one subscription by a ready-made subscriber (its requests,
/// from inside its signals) and by its [`Handle`] (`cancel`, from any thread): rule 2.7.
///
/// No lock is held while calling out. The subscriber brackets each call with the `CALLING`
/// bit; a handle that finds the bit set only records `CANCEL_REQUESTED`, and the subscriber
/// performs the cancel right after its own call returns. Otherwise the handle claims
/// `CANCEL_DONE` and cancels itself, and the subscriber makes no call afterwards.
struct Gate {
    /// `CALLING | CANCEL_REQUESTED | CANCEL_DONE` bits.
    state: AtomicUsize,
    /// The subscription as the handle sees it, and whether the handle cancelled. One lock for
    /// both, so a cancel racing `on_subscribe` is either seen by `keep` or finds the
    /// subscription to cancel.
    link: Mutex<Link>,
}

/// The subscriber is calling the subscription.
const CALLING: usize = 1;
/// The handle asked for a cancel while the subscriber was calling.
const CANCEL_REQUESTED: usize = 2;
/// The cancel has been made (or is being made); no call follows.
const CANCEL_DONE: usize = 4;

/// What the handle knows of the subscription.
#[derive(Default)]
struct Link {
    /// The subscription, from `on_subscribe` until the terminal signal or the cancel.
    subscription: Option<SubscriptionRef>,
    /// The handle cancelled. A cancel made before `on_subscribe` is not lost: the
    /// subscription is cancelled as soon as it arrives.
    cancelled: bool,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Gate {
            state: AtomicUsize::new(0),
            link: Mutex::new(Link::default()),
        })
    }

    /// Keeps `s` for the handle's `cancel`; `false` if the handle cancelled already.
    fn keep(&self, s: &SubscriptionRef) -> bool {
        let mut link = self.link.lock();
        if link.cancelled {
            return false;
        }
        link.subscription = Some(s.clone());
        true
    }

    /// The subscriber's `request(n)`, serial with the handle's `cancel`.
    fn request(&self, s: &SubscriptionRef, n: u64) {
        let before = self.state.fetch_or(CALLING, Ordering::AcqRel);
        if before & CANCEL_DONE == 0 {
            s.request(n);
        }
        let before = self.state.fetch_and(!CALLING, Ordering::AcqRel);
        if before & (CANCEL_REQUESTED | CANCEL_DONE) == CANCEL_REQUESTED {
            // The handle cancelled during our call and left the cancel to us.
            self.state.fetch_or(CANCEL_DONE, Ordering::AcqRel);
            s.cancel();
        }
    }

    /// The handle's `cancel`: made now, or by the subscriber right after its current call.
    fn cancel(&self) {
        let s = {
            let mut link = self.link.lock();
            link.cancelled = true;
            link.subscription.take()
        };
        let Some(s) = s else { return };
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CANCEL_DONE != 0 {
                return;
            }
            let (next, mine) = if state & CALLING != 0 {
                (state | CANCEL_REQUESTED, false)
            } else {
                (state | CANCEL_REQUESTED | CANCEL_DONE, true)
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if mine {
                        s.cancel();
                    }
                    return;
                }
                Err(actual) => state = actual,
            }
        }
    }

    /// 2.4: forgets the subscription after the terminal signal.
    fn end(&self) {
        self.link.lock().subscription.take();
    }
}

/// The outcome slot shared between a subscriber and its handle.
struct Slot<R> {
    /// The outcome, and whether one was ever set (it can be taken once).
    outcome: Mutex<(Option<Result<R, Error>>, bool)>,
    ready: Condvar,
    /// The task awaiting the handle, registered under the `outcome` lock.
    waker: Mutex<Option<Waker>>,
    /// The calls on the subscription, for the handle's `cancel`.
    gate: Arc<Gate>,
}

impl<R> Slot<R> {
    fn new() -> Arc<Self> {
        Arc::new(Slot {
            outcome: Mutex::new((None, false)),
            ready: Condvar::new(),
            waker: Mutex::new(None),
            gate: Gate::new(),
        })
    }

    /// Sets the outcome unless one is set already.
    fn complete(&self, outcome: Result<R, Error>) {
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
        // Registered before `complete` can take the lock to set the outcome: no lost wake-up.
        *self.waker.lock() = Some(cx.waker().clone());
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

/// A handle on the outcome of a [`collect`] or [`for_each`] subscriber.
///
/// Wait for it from a thread ([`wait`](Self::wait)) or `.await` it: it is a `Future` of the
/// same outcome, woken by the subscriber's terminal signal (or its drop), on any executor.
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

/// A subscriber that collects every element into a `Vec` (see [`collect`]).
pub struct Collect<T> {
    upstream: Upstream,
    items: Vec<T>,
    slot: Arc<Slot<Vec<T>>>,
}

impl<T> fmt::Debug for Collect<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Collect")
            .field("upstream", &self.upstream)
            .field("received", &self.items.len())
            .finish()
    }
}

/// A subscriber that collects every element, and the handle that returns them.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, h) = collect(RequestStrategy::Prefetch(2));
/// rs_impl::source::range(0u8..5).subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
pub fn collect<T>(strategy: RequestStrategy) -> (Collect<T>, Handle<Vec<T>>) {
    let slot = Slot::new();
    (
        Collect {
            upstream: Upstream::new(strategy, slot.gate.clone()),
            items: Vec::new(),
            slot: slot.clone(),
        },
        Handle { slot },
    )
}

impl<T: Send> Subscriber<T> for Collect<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.upstream.on_subscribe(subscription);
    }

    fn on_next(&mut self, item: T) {
        self.items.push(item);
        self.upstream.consumed_one();
    }

    fn on_error(&mut self, error: Error) {
        self.upstream.end();
        self.slot.complete(Err(error));
    }

    fn on_complete(&mut self) {
        self.upstream.end();
        self.slot.complete(Ok(std::mem::take(&mut self.items)));
    }
}

impl<T> Drop for Collect<T> {
    fn drop(&mut self) {
        self.slot.complete(Err(Error::new(Cancelled)));
    }
}

/// A subscriber that calls a closure for each element (see [`for_each`]).
pub struct ForEach<F> {
    upstream: Upstream,
    f: F,
    slot: Arc<Slot<()>>,
}

impl<F> fmt::Debug for ForEach<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForEach")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

/// A subscriber that calls `f` for each element on the publisher's thread, and the handle
/// that reports how the stream ended.
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{for_each, RequestStrategy};
/// let (s, h) = for_each(RequestStrategy::Prefetch(16), |x: u32| assert!(x < 3));
/// rs_impl::source::range(0u32..3).subscribe(Box::new(s));
/// h.wait().unwrap();
/// ```
pub fn for_each<T, F>(strategy: RequestStrategy, f: F) -> (ForEach<F>, Handle<()>)
where
    F: FnMut(T) + Send,
{
    let slot = Slot::new();
    (
        ForEach {
            upstream: Upstream::new(strategy, slot.gate.clone()),
            f,
            slot: slot.clone(),
        },
        Handle { slot },
    )
}

impl<T, F> Subscriber<T> for ForEach<F>
where
    F: FnMut(T) + Send,
{
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.upstream.on_subscribe(subscription);
    }

    fn on_next(&mut self, item: T) {
        (self.f)(item);
        self.upstream.consumed_one();
    }

    fn on_error(&mut self, error: Error) {
        self.upstream.end();
        self.slot.complete(Err(error));
    }

    fn on_complete(&mut self) {
        self.upstream.end();
        self.slot.complete(Ok(()));
    }
}

impl<F> Drop for ForEach<F> {
    fn drop(&mut self) {
        self.slot.complete(Err(Error::new(Cancelled)));
    }
}
