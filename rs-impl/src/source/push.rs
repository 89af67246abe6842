//! The bounded push source: see [`push`] for the contract.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use rs_api::{BoxSubscriber, Error, Publisher, SpecViolation};

use super::pull::{subscribe_pull, Pull, Pulled};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use crate::panics;

/// The error of an offer made after the stream ended: the element comes back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the push source is closed (cancelled, completed, failed, or never subscribed)")]
pub struct Closed<T>(pub T);

impl<T> fmt::Debug for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Closed(..)")
    }
}

/// Why [`Producer::try_offer`] did not take the element; the element comes back.
#[derive(Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryOfferError<T> {
    /// No room: `capacity` elements beyond the outstanding demand are queued already.
    #[error("the push source is full")]
    Full(T),
    /// The stream is over.
    #[error("the push source is closed")]
    Closed(T),
}

impl<T> TryOfferError<T> {
    /// The element that was not taken.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_p, producer) = rs_impl::source::push::<u8>(0);
    /// assert_eq!(producer.try_offer(7).unwrap_err().into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            TryOfferError::Full(t) | TryOfferError::Closed(t) => t,
        }
    }
}

impl<T> fmt::Debug for TryOfferError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryOfferError::Full(_) => f.write_str("Full(..)"),
            TryOfferError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

/// The error a subscriber gets when every [`Producer`] was dropped without
/// [`complete`](Producer::complete) or [`fail`](Producer::fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("every producer of the push source was dropped without complete or fail")]
pub struct Abandoned;

/// The queue and everyone waiting on it, behind one lock.
struct Queue<T> {
    items: VecDeque<T>,
    capacity: usize,
    /// Elements the subscriber has asked for and the engine has not taken yet (told by the
    /// engine through [`Pull::demand`]): the producer may hand over that many beyond
    /// `capacity`. Saturates at `u64::MAX` (unbounded).
    credit: u64,
    /// The engine answered [`Pulled::NotReady`]: wake it when something arrives.
    engine_waiting: bool,
    /// The engine's waker ([`Pull::set_waker`]).
    engine: Option<Waker>,
    /// How the producer ended the stream, once it did.
    end: Option<Result<(), Error>>,
    /// No more offers: cancelled, terminated, refused, or the publisher dropped unsubscribed.
    closed: bool,
    /// Threads blocked in `offer_blocking`.
    blocked: usize,
    /// Tasks waiting in `offer` (one entry per waiting future).
    waiting: Vec<Waker>,
}

impl<T> Queue<T> {
    fn has_room(&self) -> bool {
        let queued = u64::try_from(self.items.len()).unwrap_or(u64::MAX);
        let capacity = u64::try_from(self.capacity).unwrap_or(u64::MAX);
        queued < capacity.saturating_add(self.credit)
    }

    /// Takes the element if there is room; returns the engine's waker when it must be woken.
    fn offer(&mut self, item: T) -> Result<Option<Waker>, TryOfferError<T>> {
        if self.closed || self.end.is_some() {
            return Err(TryOfferError::Closed(item));
        }
        if !self.has_room() {
            return Err(TryOfferError::Full(item));
        }
        self.items.push_back(item);
        Ok(self.take_engine())
    }

    fn take_engine(&mut self) -> Option<Waker> {
        if std::mem::take(&mut self.engine_waiting) {
            self.engine.clone()
        } else {
            None
        }
    }

    /// Everyone who waits for room, to be woken outside the lock.
    fn take_waiting(&mut self) -> Option<Vec<Waker>> {
        if self.waiting.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut self.waiting))
        }
    }
}

/// What the producer handles, the publisher and the engine's source share.
struct Shared<T> {
    queue: Mutex<Queue<T>>,
    room: Condvar,
    /// Live [`Producer`] handles.
    producers: AtomicUsize,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Queue<T>> {
        self.queue.lock()
    }

    /// Wakes producers waiting for room (blocked threads and tasks). Call after releasing
    /// the lock with what [`Queue::take_waiting`] returned and whether threads are blocked.
    fn notify_room(&self, blocked: bool, tasks: Option<Vec<Waker>>) {
        if blocked {
            self.room.notify_all();
        }
        for w in tasks.into_iter().flatten() {
            w.wake();
        }
    }

    /// Ends the stream from the producer side (`complete`, `fail`, abandonment) unless it has
    /// ended already; wakes the engine.
    fn end(&self, end: Result<(), Error>) {
        let waker = {
            let mut q = self.lock();
            if q.closed || q.end.is_some() {
                return;
            }
            q.end = Some(end);
            q.engine.clone()
        };
        // The engine may be idle without having answered NotReady (no demand, element held
        // ahead): the end must still be seen, so always wake it.
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Closes the producer side: no more offers; queued elements are dropped (outside the
    /// lock); every waiting producer wakes up to its `Closed`.
    fn close(&self) {
        let (items, blocked, tasks) = {
            let mut q = self.lock();
            q.closed = true;
            q.engine = None;
            q.engine_waiting = false;
            (
                std::mem::take(&mut q.items),
                q.blocked > 0,
                q.take_waiting(),
            )
        };
        self.notify_room(blocked, tasks);
        panics::drop_guarded(items);
    }
}

/// Creates a bounded push source (a publisher fed by a [`Producer`] handle from callbacks,
/// from a thread of its own, or from async code): the publisher and its producer handle.
///
/// `capacity` is how many elements may wait for demand; with 0 every offer waits until the
/// subscriber has requested the element.
///
///
/// # Contract
///
/// * **Unicast, hot.** [`push`] returns a publisher and its producer. The first subscriber
///   gets every element offered (those queued before it subscribed first); any later
///   subscriber is refused: `on_subscribe`, then `on_error(`[`SpecViolation::Rejected`]`)`
///   (rule 1.9). Elements are never duplicated nor dropped while the subscription lives.
/// * **Bounded (what bounds memory).** The queue holds at most `capacity` elements beyond
///   the subscriber's outstanding demand: an offer finds room while fewer than
///   `capacity + outstanding` elements are queued. So with **capacity 0 the producer waits for
///   demand** (it may run ahead exactly as far as the subscriber asked, and no further), and
///   at most `capacity` elements ever wait for a request. Nothing else is buffered anywhere.
/// * **Offering.** [`Producer::try_offer`] never waits ([`TryOfferError::Full`] when there is
///   no room); [`Producer::offer_blocking`] blocks the thread until there is room;
///   [`Producer::offer`] is a future that waits without blocking. All three fail with the
///   element given back once the stream is over (cancelled, completed, failed, refused).
/// * **Which thread runs the subscriber's callbacks:** whichever thread makes progress
///   possible — the producer's thread in its `offer` when there is demand (the subscriber is
///   called from inside the offer, outside every lock), the thread that calls `request` when
///   elements were queued, or the thread that calls [`Producer::complete`] /
///   [`Producer::fail`]. Signals are serial (1.3) through the [serial drain loop](crate::serial).
/// * **Demand** follows the [`Pull`](super::Pull) engine: `request(0)` is the 3.9 error,
///   demand saturates (3.17), and `request` may be called from any thread and re-entrantly.
/// * **End.** [`Producer::complete`] / [`Producer::fail`] end the stream after the queued
///   elements (the terminal signal needs no demand once the queue is empty). Dropping every
///   producer without either fails the stream with [`Abandoned`] (never a silent truncation).
///   Dropping the publisher before anyone subscribed closes the producer side.
/// * **Cancel** (3.13): the subscriber, the queue and its elements are dropped at once; every
///   waiting and later offer fails with [`Closed`].
/// * **Panics:** a panicking subscriber is cancelled (2.13) and the producer sees [`Closed`].
///
/// # Examples
///
/// A publisher that emits from a thread of its own, waiting for demand (capacity 0):
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::source::push;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (publisher, producer) = push::<u32>(0);
/// let (s, result) = collect(RequestStrategy::Prefetch(4));
/// publisher.subscribe(Box::new(s));
/// std::thread::spawn(move || {
///     for i in 0..100 {
///         producer.offer_blocking(i).expect("still subscribed");
///     }
///     producer.complete();
/// });
/// assert_eq!(result.wait().unwrap(), (0..100).collect::<Vec<_>>());
/// ```
///
/// Capacity 2:
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::source::{push, TryOfferError};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (publisher, producer) = push::<&str>(2);
/// producer.try_offer("a").unwrap(); // queued: room for 2 before anyone asks
/// producer.try_offer("b").unwrap();
/// assert!(matches!(producer.try_offer("c"), Err(TryOfferError::Full("c"))));
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// producer.try_offer("c").unwrap(); // demand: handed straight to on_next
/// producer.complete();
/// assert_eq!(result.wait().unwrap(), vec!["a", "b", "c"]);
/// ```
pub fn push<T: Send + 'static>(capacity: usize) -> (PushPublisher<T>, Producer<T>) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            items: VecDeque::with_capacity(capacity.min(4096)),
            capacity,
            credit: 0,
            engine_waiting: false,
            engine: None,
            end: None,
            closed: false,
            blocked: 0,
            waiting: Vec::new(),
        }),
        room: Condvar::new(),
        producers: AtomicUsize::new(1),
    });
    (
        PushPublisher {
            shared: Mutex::new(Some(shared.clone())),
        },
        Producer { shared },
    )
}

/// The publisher side of a [`push`] source (unicast: see the contract of [`push`]).
pub struct PushPublisher<T> {
    /// The queue, until the first subscriber takes it.
    shared: Mutex<Option<Arc<Shared<T>>>>,
}

impl<T> fmt::Debug for PushPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushPublisher")
            .field("subscribed", &self.shared.lock().is_none())
            .finish()
    }
}

impl<T: Send + 'static> Publisher<T> for PushPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        let taken = self.shared.lock().take();
        match taken {
            Some(shared) => subscribe_pull(
                Source {
                    shared,
                    drained: false,
                },
                subscriber,
            ),
            None => super::failed::<T>(
                SpecViolation::Rejected {
                    reason: "a push source serves one subscriber, and it has one".into(),
                }
                .into(),
            )
            .subscribe(subscriber),
        }
    }
}

impl<T> Drop for PushPublisher<T> {
    fn drop(&mut self) {
        let unsubscribed = self.shared.lock().take();
        if let Some(shared) = unsubscribed {
            shared.close();
        }
    }
}

/// The engine's view of the queue.
struct Source<T> {
    shared: Arc<Shared<T>>,
    /// The last pop emptied the queue and marked the engine as waiting (under the lock), so
    /// the next pull may answer `NotReady` without locking: an offer made since then wakes
    /// the engine, whose next pass pulls again (and locks). Saves a lock per element when the
    /// producer and the engine alternate.
    drained: bool,
}

impl<T: Send> Pull<T> for Source<T> {
    fn set_waker(&mut self, waker: Waker) {
        self.shared.lock().engine = Some(waker);
    }

    fn demand(&mut self, outstanding: u64) {
        let (blocked, tasks) = {
            let mut q = self.shared.lock();
            let before = q.has_room();
            q.credit = outstanding;
            let notify = !before && q.has_room();
            (
                notify && q.blocked > 0,
                if notify { q.take_waiting() } else { None },
            )
        };
        self.shared.notify_room(blocked, tasks);
    }

    fn pull(&mut self) -> Pulled<T> {
        if std::mem::take(&mut self.drained) {
            return Pulled::NotReady;
        }
        let (step, blocked, tasks) = {
            let mut q = self.shared.lock();
            let was_full = !q.has_room();
            match q.items.pop_front() {
                Some(item) => {
                    if q.credit != u64::MAX {
                        q.credit = q.credit.saturating_sub(1);
                    }
                    if q.items.is_empty() && q.end.is_none() {
                        q.engine_waiting = true;
                        self.drained = true;
                    }
                    let notify = was_full && q.has_room();
                    let blocked = notify && q.blocked > 0;
                    let tasks = if notify { q.take_waiting() } else { None };
                    (Pulled::Next(item), blocked, tasks)
                }
                None => match &q.end {
                    Some(Ok(())) => (Pulled::Complete, false, None),
                    Some(Err(e)) => (Pulled::Error(e.clone()), false, None),
                    None => {
                        q.engine_waiting = true;
                        (Pulled::NotReady, false, None)
                    }
                },
            }
        };
        self.shared.notify_room(blocked, tasks);
        step
    }

    fn pull_ahead(&mut self) -> Pulled<T> {
        // No demand: take nothing (the queue alone bounds what waits), report only the end.
        self.drained = false;
        let mut q = self.shared.lock();
        if q.items.is_empty() {
            match &q.end {
                Some(Ok(())) => return Pulled::Complete,
                Some(Err(e)) => return Pulled::Error(e.clone()),
                // Only the end can come now: wake the engine for it, not for elements (they
                // wait for a request, which drains anyway).
                None => q.engine_waiting = true,
            }
        }
        Pulled::NotReady
    }
}

impl<T> Drop for Source<T> {
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// The producer handle of a [`push`] source. Cloneable: every clone offers into the same
/// queue; the stream is abandoned when the last one is dropped without ending it.
pub struct Producer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer").finish_non_exhaustive()
    }
}

impl<T> Clone for Producer<T> {
    fn clone(&self) -> Self {
        self.shared.producers.fetch_add(1, Ordering::AcqRel);
        Producer {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        if self.shared.producers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.end(Err(Error::new(Abandoned)));
        }
    }
}

impl<T> Producer<T> {
    /// Offers `item` without waiting.
    ///
    /// # Errors
    ///
    /// [`TryOfferError::Full`] when the queue is at capacity and nobody asked for the element;
    /// [`TryOfferError::Closed`] when the stream is over. Either way the element comes back.
    ///
    /// # Examples
    ///
    /// See [`push`].
    pub fn try_offer(&self, item: T) -> Result<(), TryOfferError<T>> {
        let waker = self.shared.lock().offer(item)?;
        if let Some(w) = waker {
            w.wake(); // delivers on this thread, outside the lock
        }
        Ok(())
    }

    /// Offers `item`, blocking this thread until there is room (see [`push`] for what room
    /// means).
    ///
    /// # Errors
    ///
    /// [`Closed`] with the element when the stream is over.
    ///
    /// # Examples
    ///
    /// See the contract of [`push`].
    pub fn offer_blocking(&self, item: T) -> Result<(), Closed<T>> {
        let mut item = item;
        let mut q = self.shared.lock();
        loop {
            match q.offer(item) {
                Ok(waker) => {
                    drop(q);
                    if let Some(w) = waker {
                        w.wake();
                    }
                    return Ok(());
                }
                Err(TryOfferError::Closed(back)) => return Err(Closed(back)),
                Err(TryOfferError::Full(back)) => {
                    item = back;
                    q.blocked += 1;
                    q = self.shared.room.wait(q);
                    q.blocked -= 1;
                }
            }
        }
    }

    /// Offers `item`, waiting without blocking the thread until there is room.
    ///
    /// # Errors
    ///
    /// The future resolves to [`Closed`] with the element when the stream is over.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (publisher, producer) = rs_impl::source::push::<u32>(0);
    /// let (s, result) = collect(RequestStrategy::OneByOne);
    /// publisher.subscribe(Box::new(s));
    /// futures::executor::block_on(async {
    ///     for i in 0..3 {
    ///         producer.offer(i).await.unwrap();
    ///     }
    ///     producer.complete();
    /// });
    /// assert_eq!(result.wait().unwrap(), vec![0, 1, 2]);
    /// ```
    pub fn offer(&self, item: T) -> Offer<'_, T> {
        Offer {
            producer: self,
            item: Some(item),
        }
    }

    /// Ends the stream successfully after the queued elements; later offers fail. A second
    /// end (or one after cancel) changes nothing.
    ///
    /// # Examples
    ///
    /// See [`push`].
    pub fn complete(&self) {
        self.shared.end(Ok(()));
    }

    /// Ends the stream with `error` after the queued elements; later offers fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Publisher};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (publisher, producer) = rs_impl::source::push::<u32>(1);
    /// let (s, result) = collect(RequestStrategy::Unbounded);
    /// publisher.subscribe(Box::new(s));
    /// producer.fail(Error::msg("sensor unplugged"));
    /// assert_eq!(result.wait().unwrap_err().to_string(), "sensor unplugged");
    /// ```
    pub fn fail(&self, error: Error) {
        self.shared.end(Err(error));
    }

    /// Whether the stream is over for the producer (cancelled, ended, or refused): every
    /// offer would fail.
    ///
    /// # Examples
    ///
    /// ```
    /// let (publisher, producer) = rs_impl::source::push::<u8>(1);
    /// assert!(!producer.is_closed());
    /// drop(publisher); // nobody can subscribe any more
    /// assert!(producer.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        let q = self.shared.lock();
        q.closed || q.end.is_some()
    }
}

/// The future of [`Producer::offer`].
#[must_use = "futures do nothing unless polled"]
pub struct Offer<'a, T> {
    producer: &'a Producer<T>,
    item: Option<T>,
}

impl<T> fmt::Debug for Offer<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Offer")
            .field("done", &self.item.is_none())
            .finish()
    }
}

impl<T> Unpin for Offer<'_, T> {}

impl<T> Future for Offer<'_, T> {
    type Output = Result<(), Closed<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(item) = self.item.take() else {
            panic!("Offer polled after completion");
        };
        let mut q = self.producer.shared.lock();
        match q.offer(item) {
            Ok(waker) => {
                drop(q);
                if let Some(w) = waker {
                    w.wake();
                }
                Poll::Ready(Ok(()))
            }
            Err(TryOfferError::Closed(back)) => Poll::Ready(Err(Closed(back))),
            Err(TryOfferError::Full(back)) => {
                if !q.waiting.iter().any(|w| w.will_wake(cx.waker())) {
                    q.waiting.push(cx.waker().clone());
                }
                drop(q);
                self.item = Some(back);
                Poll::Pending
            }
        }
    }
}
