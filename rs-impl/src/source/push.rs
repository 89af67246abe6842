//! The bounded push source: see [`push`] for the contract.
//!
//! # How it is built (the hot path)
//!
//! A push source is driven by its producers, as a processor is by its upstream, so it has an
//! engine of its own rather than a [`Pull`](super::Pull) source under the pull engine:
//!
//! * **Permits.** One atomic word, [`Room`], counts the offers that may still be taken:
//!   `capacity` plus everything requested minus everything offered. An offer takes one with
//!   a compare-and-swap; a request adds `n`. Its top bit says that a producer is waiting, so a
//!   request locks the waiters' list only when someone waits there.
//! * **Delivery.** The element then goes through the subscription's [`DrainLoop`]: when
//!   nobody drains, [`DrainLoop::try_drain_with`] puts it straight into the drainer-only
//!   queue and the producer's thread delivers it (no lock: the loop hands its state over
//!   through its counter). Only when another thread is draining at that moment (a request,
//!   another producer) does the element go through the inbox, a locked queue the drainer
//!   empties only when a flag says it holds something.
//!
//! So an offer that finds room and an idle loop costs three atomic read-modify-writes (the
//! permit, the loop's counter up and down) plus the subscriber's `on_next`, and no lock, no
//! allocation and no wake-up.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
// The subscription is handed out as an `rs_api::SubscriptionRef`, a std `Arc` in every build
// (as in the pull engine); the atomics and locks inside come from the facade.
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscription, SubscriptionRef, UNBOUNDED,
};

use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex, MutexGuard};
use crate::panics;
use crate::serial::DrainLoop;

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
    /// No room: `capacity` elements beyond the outstanding demand are offered already.
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

/// [`Room`]'s top bit: a producer waits for a permit (in the waiters' list).
const WAITING: u64 = 1 << 63;
/// [`Room`]'s next bit: offers are over (the stream ended, or the subscription did).
const SHUT: u64 = 1 << 62;
/// [`Room`]'s permit count; all ones is "unbounded" (unbounded demand).
const PERMITS: u64 = SHUT - 1;

/// The offers that may still be taken (`capacity + requested - offered`), whether offers are
/// over, and whether a producer waits. Every change is one read-modify-write of one word, so
/// an offer is one atomic operation, and a request's addition (or the end) and a producer's
/// "I wait" are totally ordered: either the producer's last look sees the new permits (or
/// the end), or the waker sees the producer waiting and wakes it.
struct Room(AtomicU64);

impl Room {
    /// Takes a permit, if there is one and offers are not over.
    #[inline]
    fn take(&self) -> Claim {
        self.claim(false)
    }

    /// As [`take`](Self::take), but marks a producer waiting when there is no permit.
    fn take_or_wait(&self) -> Claim {
        self.claim(true)
    }

    #[inline]
    fn claim(&self, wait: bool) -> Claim {
        let seen = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |room| {
                if room & SHUT != 0 {
                    None
                } else {
                    match room & PERMITS {
                        0 if wait && room & WAITING == 0 => Some(room | WAITING),
                        0 | PERMITS => None, // none, or unbounded: nothing to change
                        _ => Some(room - 1),
                    }
                }
            })
            .unwrap_or_else(|room| room);
        if seen & SHUT != 0 {
            Claim::Closed
        } else if seen & PERMITS == 0 {
            Claim::Full
        } else {
            Claim::Granted
        }
    }

    /// Adds `n` permits (saturating at unbounded) and clears the waiting mark; `true` if a
    /// producer was waiting (the caller wakes the waiters).
    #[inline]
    fn add(&self, n: u64) -> bool {
        let prev = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |room| {
                (room & SHUT == 0).then(|| (room & PERMITS).saturating_add(n).min(PERMITS))
            })
            .unwrap_or_else(|room| room);
        prev & WAITING != 0 && prev & SHUT == 0
    }

    /// Ends the offers; `true` if a producer was waiting (the caller wakes the waiters).
    fn shut(&self) -> bool {
        let prev = self.0.fetch_or(SHUT, Ordering::AcqRel);
        prev & WAITING != 0 && prev & SHUT == 0
    }

    /// Whether offers are over.
    fn is_shut(&self) -> bool {
        self.0.load(Ordering::Acquire) & SHUT != 0
    }
}

/// Producers waiting for a permit (or for the end).
#[derive(Default)]
struct Waiters {
    /// Threads blocked in `offer_blocking`.
    blocked: usize,
    /// Tasks waiting in `offer` (one entry per waiting future).
    tasks: Vec<Waker>,
}

/// [`Shared::flags`]: the subscription is over (cancelled, terminated, its subscriber
/// panicked, or the publisher was dropped before anyone subscribed); `request` and `cancel`
/// are no-ops and the drainer drops everything.
const CANCELLED: usize = 1;
/// [`Shared::flags`]: `request(0)` was called (rule 3.9).
const BAD_REQUEST: usize = 1 << 1;
/// [`Shared::flags`]: a subscriber waits in [`Shared::incoming`] for its `on_subscribe`.
const SUBSCRIBING: usize = 1 << 2;
/// [`Shared::flags`]: a producer ended the stream (how: [`Shared::end`]).
const ENDED: usize = 1 << 3;
/// [`Shared::flags`]: the [inbox](Shared::inbox) holds elements (set and cleared under its
/// lock): the drainer locks it only then.
const INBOX: usize = 1 << 4;

/// The subscription, shared by the producers, the publisher and the subscriber's handle.
struct Shared<T> {
    /// [`CANCELLED`], [`BAD_REQUEST`], [`SUBSCRIBING`], [`ENDED`], [`INBOX`]: one word, one
    /// load per element in the drainer.
    flags: AtomicUsize,
    /// Cumulative demand (3.8, 3.17).
    demand: Demand,
    /// The producers' permits.
    room: Room,
    /// The serial drain loop and the drainer-only state.
    drain: DrainLoop<State<T>>,
    /// Elements offered while another thread was draining, for the drainer to take.
    inbox: Mutex<VecDeque<T>>,
    /// The subscriber and its handle, from `subscribe` until the drainer calls `on_subscribe`.
    incoming: Mutex<Option<(BoxSubscriber<T>, SubscriptionRef)>>,
    /// How a producer ended the stream, once one did (first end wins).
    end: Mutex<Option<Result<(), Error>>>,
    /// Producers waiting for a permit.
    waiters: Mutex<Waiters>,
    /// Where blocked producers sleep.
    room_changed: Condvar,
    /// Live [`Producer`] handles.
    producers: AtomicUsize,
}

/// The drainer-only state.
struct State<T> {
    /// The subscriber, once `on_subscribe` was called; `None` again after the end.
    subscriber: Option<BoxSubscriber<T>>,
    /// Elements offered and not yet delivered, in order.
    queue: VecDeque<T>,
    /// Elements delivered so far (the drainer's local count; never an atomic per element).
    emitted: u64,
    /// The demand total last read; re-read only when `emitted` reaches it.
    limit: u64,
    /// The subscription is over: whatever arrives now is dropped.
    finished: bool,
}

/// What one offer attempt found.
enum Claim {
    /// A permit was taken: deliver.
    Granted,
    /// No permit now.
    Full,
    /// The stream is over.
    Closed,
}

impl<T> Shared<T> {
    /// Takes a permit or registers as waiting, under the waiters' lock: `Ok(claim)` when the
    /// attempt settled it (granted or closed), `Err(guard)` when the caller must wait (block
    /// on [`room_changed`](Self::room_changed) or keep its waker in the list) with the lock
    /// held, so that the waking request, which takes the lock, cannot slip in between.
    fn claim_or_wait(&self) -> Result<Claim, MutexGuard<'_, Waiters>> {
        match self.room.take() {
            Claim::Full => {}
            settled => return Ok(settled),
        }
        let waiters = self.waiters.lock();
        match self.room.take_or_wait() {
            Claim::Full => Err(waiters),
            settled => Ok(settled),
        }
    }

    /// Ends the offers (the end, cancel, the subscription's end): waiting producers wake up to
    /// their `Closed`.
    fn shut(&self) {
        if self.room.shut() {
            self.wake_waiters();
        }
    }

    /// Wakes every waiting producer (blocked threads and tasks), outside the lock for tasks.
    #[cold]
    fn wake_waiters(&self) {
        // Taking the lock orders this call after a waiter's registration (made under the
        // lock); the notification itself comes after the lock is released, so that a woken
        // thread does not find it held and sleep again on the mutex.
        let (blocked, tasks) = {
            let mut waiters = self.waiters.lock();
            (waiters.blocked > 0, std::mem::take(&mut waiters.tasks))
        };
        if blocked {
            self.room_changed.notify_all();
        }
        for task in tasks {
            task.wake();
        }
    }

    /// Delivers an offered element (a permit is taken): straight into the drainer's queue
    /// when nobody drains (this thread then delivers it), through the inbox otherwise.
    #[inline]
    fn deliver(&self, item: T) {
        let accepted = self.drain.try_drain_with(
            item,
            |st, item| st.queue.push_back(item),
            |st| self.pass(st),
        );
        if let Err(item) = accepted {
            self.post(item);
        }
    }

    /// The inbox path of [`deliver`](Self::deliver): queue first, then record the work (in
    /// the other order the drainer could finish in between).
    #[cold]
    fn post(&self, item: T) {
        {
            let mut inbox = self.inbox.lock();
            inbox.push_back(item);
            self.flags.fetch_or(INBOX, Ordering::AcqRel);
        }
        self.run();
    }

    /// Records work for the drainer and drains if nobody does.
    fn run(&self) {
        self.drain.drain(|st| self.pass(st));
    }

    /// Ends the stream from a producer (`complete`, `fail`, abandonment) unless it has ended.
    fn end(&self, end: Result<(), Error>) {
        {
            let mut slot = self.end.lock();
            if slot.is_some() || self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
                return;
            }
            *slot = Some(end);
        }
        self.flags.fetch_or(ENDED, Ordering::AcqRel);
        self.shut(); // offers fail from now on
        self.run();
    }

    /// Closes everything from outside the drain loop (cancel, the publisher dropped before a
    /// subscriber came): the drainer then drops the subscriber and the queue.
    fn close(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.shut();
        self.run();
    }

    /// Moves the inbox into the queue (the caller saw [`INBOX`]).
    #[cold]
    fn take_inbox(&self, st: &mut State<T>) {
        let mut inbox = self.inbox.lock();
        self.flags.fetch_and(!INBOX, Ordering::AcqRel);
        st.queue.append(&mut inbox);
    }

    /// The one pass every caller runs through the drain loop. One load of the flags per
    /// element tells it everything: cancel, `request(0)`, a waiting subscriber, the end, and
    /// whether the inbox holds anything.
    fn pass(&self, st: &mut State<T>) {
        loop {
            let flags = self.flags.load(Ordering::Acquire);
            if flags & INBOX != 0 {
                self.take_inbox(st);
            }
            if st.finished {
                // Offers that raced the end: dropped.
                panics::drop_guarded(std::mem::take(&mut st.queue));
                return;
            }
            if flags & CANCELLED != 0 {
                self.finish(st);
                return;
            }
            let Some(subscriber) = st.subscriber.as_mut() else {
                // Not subscribed yet: keep the queue (at most `capacity` elements), unless the
                // subscriber is waiting for its `on_subscribe`.
                let incoming = if flags & SUBSCRIBING != 0 {
                    self.incoming.lock().take()
                } else {
                    None
                };
                let Some((mut subscriber, handle)) = incoming else {
                    return;
                };
                if panics::guard("on_subscribe", || subscriber.on_subscribe(handle)).is_err() {
                    panics::drop_guarded(subscriber);
                    self.finish(st);
                    return;
                }
                st.subscriber = Some(subscriber);
                continue;
            };
            if flags & BAD_REQUEST != 0 {
                self.terminate(st, Some(SpecViolation::NonPositiveRequest.into()));
                return;
            }
            if st.queue.is_empty() {
                // The end is due once the queue is empty. An element a producer posted before
                // it ended was taken above: its `INBOX` precedes `ENDED` in the word's order.
                if flags & ENDED != 0 {
                    let end = self.end.lock().take().and_then(Result::err);
                    self.terminate(st, end);
                }
                return;
            }
            if st.emitted == st.limit {
                st.limit = self.demand.total();
                if st.emitted == st.limit {
                    return; // 1.1: no demand; the queue waits for the next request
                }
            }
            let Some(item) = st.queue.pop_front() else {
                return;
            };
            st.emitted += 1;
            if panics::guard("on_next", || subscriber.on_next(item)).is_err() {
                // 2.13: a panicking subscriber is a cancelled subscriber.
                self.finish(st);
                return;
            }
        }
    }

    /// Ends the subscription: drops the subscriber and every element, and fails every offer
    /// from now on.
    fn finish(&self, st: &mut State<T>) {
        let flags = self.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        st.finished = true;
        panics::drop_guarded(st.subscriber.take());
        if flags & INBOX != 0 {
            self.take_inbox(st);
        }
        panics::drop_guarded(std::mem::take(&mut st.queue));
        self.shut();
    }

    /// Delivers the terminal signal (`on_error` if `error` is set) and finishes.
    fn terminate(&self, st: &mut State<T>, error: Option<Error>) {
        let subscriber = st.subscriber.take();
        self.finish(st); // from here on, `request` and `cancel` are no-ops (2.3 allows them)
        let Some(mut subscriber) = subscriber else {
            return;
        };
        let _ = match error {
            Some(e) => panics::guard("on_error", || subscriber.on_error(e)),
            None => panics::guard("on_complete", || subscriber.on_complete()),
        };
        panics::drop_guarded(subscriber);
    }
}

impl<T: Send + 'static> Subscription for Shared<T> {
    fn request(&self, n: u64) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            self.flags.fetch_or(BAD_REQUEST, Ordering::AcqRel);
        } else {
            let permits = if self.demand.total() == UNBOUNDED {
                PERMITS
            } else {
                n
            };
            if self.room.add(permits) {
                self.wake_waiters();
            }
        }
        self.run();
    }

    fn cancel(&self) {
        self.close();
    }
}

/// Creates a bounded push source (a publisher fed by a [`Producer`] handle from callbacks,
/// from a thread of its own, or from async code): the publisher and its producer handle.
///
/// `capacity` is how many elements may wait for demand; with 0 every offer waits until the
/// subscriber has requested the element.
///
/// # Contract
///
/// * **Unicast, hot.** [`push`] returns a publisher and its producer. The first subscriber
///   gets every element offered (those queued before it subscribed first); any later
///   subscriber is refused: `on_subscribe`, then `on_error(`[`SpecViolation::Rejected`]`)`
///   (rule 1.9). Elements are never duplicated nor dropped while the subscription lives, and
///   each producer's elements arrive in the order it offered them.
/// * **Bounded (what bounds memory).** An offer is taken only while fewer than
///   `capacity + requested` elements have been offered in all: at most `capacity` elements
///   ever wait for a request. So with **capacity 0 the producer waits for demand** (it may run
///   ahead exactly as far as the subscriber asked, and no further). Nothing else is buffered.
/// * **Offering.** [`Producer::try_offer`] never waits ([`TryOfferError::Full`] when there is
///   no room); [`Producer::offer_blocking`] blocks the thread until there is room;
///   [`Producer::offer`] is a future that waits without blocking. All three fail with the
///   element given back once the stream is over (cancelled, completed, failed, refused).
/// * **Which thread runs the subscriber's callbacks:** whichever thread makes progress
///   possible — the producer's thread in its offer when there is demand (the subscriber is
///   called from inside the offer, outside every lock), the thread that calls `request` when
///   elements were queued, or the thread that calls [`Producer::complete`] /
///   [`Producer::fail`]. `on_subscribe` runs in `subscribe`, unless a producer is delivering
///   at that instant (then on its thread, before anything else). Signals are serial (1.3)
///   through the [serial drain loop](crate::serial).
/// * **Cost (the hot path):** an offer that finds room costs three atomic
///   read-modify-writes besides `on_next`: no lock, no allocation, no wake-up. A producer
///   waiting for room sleeps, and a request wakes it only if one waits.
/// * **Demand:** `request(0)` is the 3.9 error, demand saturates (3.17), and `request` may be
///   called from any thread and re-entrantly from `on_next`.
/// * **End.** [`Producer::complete`] / [`Producer::fail`] end the stream after the queued
///   elements (the terminal signal needs no demand once the queue is empty). Dropping every
///   producer without either fails the stream with [`Abandoned`] (never a silent truncation).
///   Dropping the publisher before anyone subscribed closes the producer side. An offer from
///   one clone racing `complete` from another may be taken and then dropped unseen.
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
        flags: AtomicUsize::new(0),
        demand: Demand::new(),
        room: Room(AtomicU64::new(
            u64::try_from(capacity).unwrap_or(PERMITS).min(PERMITS),
        )),
        drain: DrainLoop::new(State {
            subscriber: None,
            queue: VecDeque::with_capacity(capacity.min(4096)),
            emitted: 0,
            limit: 0,
            finished: false,
        }),
        inbox: Mutex::new(VecDeque::new()),
        incoming: Mutex::new(None),
        end: Mutex::new(None),
        waiters: Mutex::new(Waiters::default()),
        room_changed: Condvar::new(),
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
    /// The subscription, until the first subscriber takes it.
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
            Some(shared) => {
                let handle: SubscriptionRef = shared.clone();
                *shared.incoming.lock() = Some((subscriber, handle));
                shared.flags.fetch_or(SUBSCRIBING, Ordering::AcqRel);
                shared.run();
            }
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
            shared.close(); // nobody can subscribe any more: drop the queue
        }
    }
}

/// The producer handle of a [`push`] source. Cloneable: every clone offers into the same
/// source; the stream is abandoned when the last one is dropped without ending it.
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
    /// [`TryOfferError::Full`] when there is no room (see [`push`]); [`TryOfferError::Closed`]
    /// when the stream is over. Either way the element comes back.
    ///
    /// # Examples
    ///
    /// See [`push`].
    #[inline]
    pub fn try_offer(&self, item: T) -> Result<(), TryOfferError<T>> {
        match self.shared.room.take() {
            Claim::Granted => {
                self.shared.deliver(item);
                Ok(())
            }
            Claim::Full => Err(TryOfferError::Full(item)),
            Claim::Closed => Err(TryOfferError::Closed(item)),
        }
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
        loop {
            match self.shared.claim_or_wait() {
                Ok(Claim::Granted) => {
                    self.shared.deliver(item);
                    return Ok(());
                }
                Ok(Claim::Closed) => return Err(Closed(item)),
                Ok(Claim::Full) => {}
                Err(mut waiters) => {
                    waiters.blocked += 1;
                    let mut waiters = self.shared.room_changed.wait(waiters);
                    waiters.blocked -= 1;
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
        self.shared.room.is_shut()
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
        let shared = &self.producer.shared;
        match shared.claim_or_wait() {
            Ok(Claim::Granted) => {
                shared.deliver(item);
                Poll::Ready(Ok(()))
            }
            Ok(Claim::Closed) => Poll::Ready(Err(Closed(item))),
            Ok(Claim::Full) => unreachable!("claim_or_wait settles Full by waiting"),
            Err(mut waiters) => {
                if !waiters.tasks.iter().any(|w| w.will_wake(cx.waker())) {
                    waiters.tasks.push(cx.waker().clone());
                }
                drop(waiters);
                self.item = Some(item);
                Poll::Pending
            }
        }
    }
}
