//! The bounded push source: see [`push`] for the contract.
//!
//! # How it is built (the hot path)
//!
//! A push source is driven by its senders, as a processor is by its upstream, so it has an
//! engine of its own rather than a [`Pull`](super::Pull) source under the pull engine:
//!
//! * **Permits.** The [`Room`] word counts the sends that may still be taken: `capacity`
//!   plus everything requested minus everything sent. A send takes one with a
//!   compare-and-swap; a request adds `n`. Its top bit says that a sender is waiting, so a
//!   request locks the waiters' list only when someone waits there.
//! * **Delivery.** The element then goes through the subscription's [`DrainLoop`]: when
//!   nobody drains, [`DrainLoop::try_drain_with`] puts it straight into the drainer-only
//!   queue and the sender's thread delivers it (no lock: the loop hands its state over
//!   through its counter). Only when another thread is draining at that moment (a request,
//!   another sender) does the element go through the inbox, a locked queue the drainer
//!   empties only when a flag says it holds something.
//! * **The end** is recorded under the inbox's lock, and an element going through the inbox
//!   looks at the end under the same lock: an element is either queued before the end (and
//!   delivered before the terminal signal) or handed back to its sender, never accepted and
//!   then dropped unseen.
//!
//! So a send that finds room and an idle loop costs three atomic read-modify-writes (the
//! permit, the loop's counter up and down) plus the subscriber's `on_next`, and no lock, no
//! allocation and no wake-up.
//!
//! A `blocking_send` that finds no permit watches the permit word for a moment (127 pause
//! hints, about 3 µs) before it sleeps on the waiters' condition variable, and a handle whose
//! last such spin did not pay sleeps at once for the next seven (the producer API's
//! `Inlet::blocking_send`). It pays when the consumer is running and hands permits back
//! within the spin: the producer-thread row of the `to_stream` scenario at 256
//! (`to_stream` replenishes every 128) went from 10.96 to 12.07 M el/s in medians of
//! alternating runs, issue 24. `offer_blocking`, the name an independent measurement used,
//! is this method's name before the producer API (commit cccf422): the same path.
//!
//! **Feeding an island** (`Flow::from_publisher_with(push, n)`, the `boundary` scenario's
//! push-source row; issue 24). The subscriber is the island's input side, which publishes
//! each `on_next` into its ring (a fourth read-modify-write, on the word the island polls:
//! the slot's and that word's cache lines move to the island's core per element, a foreign
//! publisher's contract being that no element waits for more) and wakes the island only when
//! it parked. With `push(0)` the permits are exactly the island's requests (its ring, then
//! half of it each time half was taken). Where an element's time goes (`perf record`, K = 0,
//! 2026-12-03): the send's three read-modify-writes are 46% of `blocking_send`'s own samples,
//! 8% of all; the pass and the queue 9%; the publication in `on_next` 7%; thread switches and
//! wake-ups about a third (the island parks on its empty ring, and the sender, woken by its
//! requests, sleeps about once per thousand elements). **A cheaper send does not make this
//! chain faster** on the 2-core machine measured: handing the element straight to `on_next`
//! when nothing is due before it (`DrainLoop::try_fast`, no queue and no pass) took the
//! sender's `blocking_send` from 193 to 126 instructions per element (callgrind, K = 0 and 3;
//! the whole chain 295 → 224 at K = 0), yet the K = 0 row lost in all five alternating pairs
//! (9.7–12.7 against 12.6–19.3 M el/s, load 30–44; K = 3 lost three of five), its islands
//! parking 27–38 thousand times per 9·10^6 elements against 18–24 and the sender preempted by
//! the island worker it wakes 9–16 thousand times against 1–5 (`perf record -e
//! sched:sched_switch`). The same direct hand-over with the pass still run after it
//! (`try_drain_with`: 186 instructions) switches as often as the code here and gained nothing
//! either; why skipping the pass changes the scheduling was not found. So on this machine the
//! sender's instructions are not what limits the row: its parks and wake-ups are, and a
//! sender writing into the island's ring itself (its free slots as the permits: the permit
//! and the loop's two read-modify-writes saved) would have to show that it adds no parks
//! before it is worth its new synchronisation. Not kept either: lingers of the first
//! island for the sender's next element or run (no gain beyond the noise). The downstream
//! islands' lingers are adaptive (`RingIn::linger` in
//! `flow/ring_in.rs`: 117–121 → 80–84 ns of CPU per element at K = 3).

use std::collections::VecDeque;
use std::fmt;
// The subscription is handed out as an `rs_api::SubscriptionRef`, a std `Arc` in every build
// (as in the pull engine); the atomics and locks inside come from the facade.
use std::sync::Arc;

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscription, SubscriptionRef, UNBOUNDED,
};

use crate::demand::Demand;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;
use crate::producer::{
    self, Channel, Claim, CloseReason, Inlet, Room, SendError, TrySendError, Waiters, UNLIMITED,
};
use crate::serial::DrainLoop;

/// [`Shared::flags`]: the subscription is over (cancelled, terminated, its subscriber
/// panicked, or the publisher was dropped before anyone subscribed); `request` and `cancel`
/// are no-ops and the drainer drops everything.
const CANCELLED: usize = 1;
/// [`Shared::flags`]: `request(0)` was called (rule 3.9).
const BAD_REQUEST: usize = 1 << 1;
/// [`Shared::flags`]: a subscriber waits in [`Shared::incoming`] for its `on_subscribe`.
const SUBSCRIBING: usize = 1 << 2;
/// [`Shared::flags`]: a sender ended the stream (how: [`Shared::end`]).
const ENDED: usize = 1 << 3;
/// [`Shared::flags`]: the [inbox](Shared::inbox) holds elements (set and cleared under its
/// lock): the drainer locks it only then.
const INBOX: usize = 1 << 4;

/// The subscription, shared by the senders, the publisher and the subscriber's handle.
struct Shared<T> {
    /// [`CANCELLED`], [`BAD_REQUEST`], [`SUBSCRIBING`], [`ENDED`], [`INBOX`]: one word, one
    /// load per element in the drainer.
    flags: AtomicUsize,
    /// Cumulative demand (3.8, 3.17).
    demand: Demand,
    /// The senders' permits.
    room: Room,
    /// Senders waiting for a permit.
    waiters: Waiters,
    /// Live [`PushSender`] handles.
    senders: AtomicUsize,
    /// The serial drain loop and the drainer-only state.
    drain: DrainLoop<State<T>>,
    /// Elements sent while another thread was draining, for the drainer to take. Its lock
    /// also orders such a send with the end (see [`Shared::end`]).
    inbox: Mutex<VecDeque<T>>,
    /// The subscriber and its handle, from `subscribe` until the drainer calls `on_subscribe`.
    incoming: Mutex<Option<(BoxSubscriber<T>, SubscriptionRef)>>,
    /// How a sender ended the stream, once one did (first end wins).
    end: Mutex<Option<Result<(), Error>>>,
}

/// The drainer-only state.
struct State<T> {
    /// The subscriber, once `on_subscribe` was called; `None` again after the end.
    subscriber: Option<BoxSubscriber<T>>,
    /// Elements sent and not yet delivered, in order.
    queue: VecDeque<T>,
    /// Elements delivered so far (the drainer's local count; never an atomic per element).
    emitted: u64,
    /// The demand total last read; re-read only when `emitted` reaches it.
    limit: u64,
    /// The subscription is over: whatever arrives now is dropped.
    finished: bool,
}

impl<T: Send + 'static> Channel for Shared<T> {
    type Item = T;

    fn room(&self) -> &Room {
        &self.room
    }

    fn waiters(&self) -> &Waiters {
        &self.waiters
    }

    fn senders(&self) -> &AtomicUsize {
        &self.senders
    }

    #[inline]
    fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        match self.room.take() {
            Claim::Granted => self.send_permitted(item).map_err(TrySendError::Closed),
            Claim::Full => Err(TrySendError::Full(item)),
            Claim::Closed => Err(TrySendError::Closed(item)),
        }
    }

    /// Straight into the drainer's queue when nobody drains (this thread then delivers it),
    /// through the inbox otherwise.
    #[inline]
    fn send_permitted(&self, item: T) -> Result<(), T> {
        let mut back = None;
        let accepted = self.drain.try_drain_with(
            item,
            |st, item| {
                if st.finished {
                    back = Some(item); // the subscription is over: the sender keeps it
                } else {
                    st.queue.push_back(item);
                }
            },
            |st| self.pass(st),
        );
        match (accepted, back) {
            (Ok(()), None) => Ok(()),
            (Ok(()), Some(item)) => Err(item),
            (Err(item), _) => self.post(item),
        }
    }

    fn end(&self, end: Result<(), Error>) {
        let woke = {
            // Under the inbox's lock: a send through the inbox comes before the end or sees it.
            let _inbox = self.inbox.lock();
            let mut slot = self.end.lock();
            if slot.is_some() || self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
                return;
            }
            let reason = match &end {
                Ok(()) => CloseReason::Completed,
                Err(e) => CloseReason::Failed(e.clone()),
            };
            *slot = Some(end);
            self.flags.fetch_or(ENDED, Ordering::AcqRel);
            self.room.shut(|| reason) // sends fail from now on
        };
        if woke {
            self.waiters.wake_all();
        }
        self.run();
    }
}

impl<T> Shared<T> {
    /// The inbox path of [`send_permitted`](Channel::send_permitted): queue first, then
    /// record the work (in the other order the drainer could finish in between). Refused once
    /// the stream ended.
    #[cold]
    fn post(&self, item: T) -> Result<(), T> {
        {
            let mut inbox = self.inbox.lock();
            if self.room.is_shut() && !fault::active(Fault::SendIgnoresEnd) {
                return Err(item);
            }
            inbox.push_back(item);
            self.flags.fetch_or(INBOX, Ordering::AcqRel);
        }
        self.run();
        Ok(())
    }

    /// Records work for the drainer and drains if nobody does.
    fn run(&self) {
        self.drain.drain(|st| self.pass(st));
    }

    /// Ends sending (cancel, the subscription's end): waiting senders wake up to `Closed`.
    fn shut(&self, reason: impl FnOnce() -> CloseReason) {
        if self.room.shut(reason) {
            self.waiters.wake_all();
        }
    }

    /// Closes everything from outside the drain loop (cancel, the publisher dropped before a
    /// subscriber came): the drainer then drops the subscriber and the queue.
    fn close(&self, reason: CloseReason) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.shut(|| reason);
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
                // Sends that raced a cancel: dropped with the subscription.
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
        // The reason was recorded by whoever ended it (an end, a cancel); a subscriber that
        // panicked is a cancelled one (2.13).
        self.shut(|| CloseReason::Cancelled);
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
                UNLIMITED
            } else {
                n
            };
            if self.room.add(permits) {
                self.waiters.wake_all();
            }
        }
        self.run();
    }

    fn cancel(&self) {
        self.close(CloseReason::Cancelled);
    }
}

/// Creates a bounded push source: a [`PushSender`] that sends from callbacks, from a thread
/// of its own or from async code, and the [`PushPublisher`] its one subscriber subscribes to.
///
/// `capacity` is how many elements may wait for demand. **0 is accepted and has a meaning of
/// its own** (the exception to the crate's size rule, which elsewhere panics on a size of 0):
/// no buffer beyond demand, so every send waits until the subscriber has requested its
/// element. A capacity larger than the permit counter (2^62 - 1) counts as unlimited.
///
/// # Contract
///
/// * **Unicast, hot.** The first subscriber gets every element sent (those queued before it
///   subscribed first); any later subscriber is refused: `on_subscribe`, then
///   `on_error(`[`SpecViolation::Rejected`]`)` (rule 1.9). Elements are never duplicated nor
///   dropped while the subscription lives, and each sender's elements arrive in the order it
///   sent them.
/// * **Bounded (what bounds memory).** A send is taken only while fewer than
///   `capacity + requested` elements have been sent in all: at most `capacity` elements ever
///   wait for a request. So with **capacity 0 the sender waits for demand** (it may run ahead
///   exactly as far as the subscriber asked, and no further). Nothing else is buffered.
/// * **Sending** is the producer API (shared with the [fanout](crate::fanout) and the [push source](crate::source::push): errors [`TrySendError`](crate::TrySendError), [`SendError`](crate::SendError)): [`PushSender::try_send`] never
///   waits ([`TrySendError::Full`] when there is no room); [`PushSender::send`] waits without
///   blocking the thread; [`PushSender::blocking_send`] blocks the thread; the sender is a
///   [`futures::Sink`]. Each fails with the element given back once the stream is over
///   (cancelled, completed, failed, refused, or the publisher dropped before anyone
///   subscribed).
/// * **Which thread runs the subscriber's callbacks:** whichever thread makes progress
///   possible — the sender's thread in its send when there is demand (the subscriber is
///   called from inside the send, outside every lock), the thread that calls `request` when
///   elements were queued, or the thread that calls [`PushSender::complete`] /
///   [`PushSender::fail`]. `on_subscribe` runs in `subscribe`, unless a sender is delivering
///   at that instant (then on its thread, before anything else). Signals are serial (1.3)
///   through the [serial drain loop](crate::serial).
/// * **Demand:** `request(0)` is the 3.9 error, demand saturates (3.17), and `request` may be
///   called from any thread and re-entrantly from `on_next`.
/// * **End.** [`PushSender::complete`] / [`PushSender::fail`] end the stream after the
///   queued elements (the terminal signal needs no demand once the queue is empty). Dropping
///   every sender without either fails the stream with
///   [`ProducerError::Dropped`](crate::ProducerError::Dropped); dropping one while
///   its thread panics fails it with
///   [`ProducerError::Panicked`](crate::ProducerError::Panicked) (never a silent
///   truncation). A send racing the end from another clone is either delivered before the
///   terminal signal or handed back: never accepted and then dropped.
/// * **Cancel** (3.13): the subscriber, the queue and its elements are dropped at once; every
///   waiting and later send fails with `Closed`.
/// * **Panics:** a panicking subscriber is cancelled (2.13) and the senders see `Closed`.
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
/// let (tx, publisher) = push::<u32>(0);
/// let (s, result) = collect(RequestStrategy::Prefetch(4));
/// publisher.subscribe(Box::new(s));
/// std::thread::spawn(move || {
///     for i in 0..100 {
///         tx.blocking_send(i).expect("still subscribed");
///     }
///     tx.complete();
/// });
/// assert_eq!(result.wait().unwrap(), (0..100).collect::<Vec<_>>());
/// ```
///
/// Capacity 2:
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::TrySendError;
/// use rs_impl::source::push;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let (tx, publisher) = push::<&str>(2);
/// tx.try_send("a").unwrap(); // queued: room for 2 before anyone asks
/// tx.try_send("b").unwrap();
/// assert!(matches!(tx.try_send("c"), Err(TrySendError::Full("c"))));
/// let (s, result) = collect(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// tx.try_send("c").unwrap(); // demand: handed straight to on_next
/// tx.complete();
/// assert_eq!(result.wait().unwrap(), vec!["a", "b", "c"]);
/// ```
pub fn push<T: Send + 'static>(capacity: usize) -> (PushSender<T>, PushPublisher<T>) {
    let shared = Arc::new(Shared {
        flags: AtomicUsize::new(0),
        demand: Demand::new(),
        room: Room::new(u64::try_from(capacity).unwrap_or(UNLIMITED)),
        waiters: Waiters::new(),
        senders: AtomicUsize::new(1),
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
    });
    (
        PushSender {
            inner: Inlet::new(shared.clone()),
        },
        PushPublisher {
            shared: Mutex::new(Some(shared)),
        },
    )
}

/// The publisher side of a [`push`] source (unicast: see the contract of [`push`]).
///
/// Dropping it before anyone subscribed closes the source: nobody can receive, so the
/// senders' sends fail instead of waiting forever.
#[must_use = "a push source delivers nothing until its publisher is subscribed to"]
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
            None => super::failed::failed::<T>(
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
            shared.close(CloseReason::Unsubscribable); // nobody can subscribe any more: drop the queue, fail the sends
        }
    }
}

/// The sending half of a [`push`] source: the producer API (shared with the [fanout](crate::fanout) and the [push source](crate::source::push): errors [`TrySendError`](crate::TrySendError), [`SendError`](crate::SendError)) (`try_send`,
/// `send(..).await`, `blocking_send`, `complete`, `fail`, a [`futures::Sink`]).
///
/// A cheap `Clone` handle, `Send` and `Sync`: every clone sends into the same source. Dropping
/// the last one without [`complete`](Self::complete) or [`fail`](Self::fail) fails the stream
/// with [`ProducerError::Dropped`](crate::ProducerError::Dropped); dropping any
/// while its thread panics fails it with
/// [`ProducerError::Panicked`](crate::ProducerError::Panicked).
#[must_use = "a sender sends nothing unless used; dropping the last one without complete fails the stream"]
pub struct PushSender<T: Send + 'static> {
    inner: Inlet<Shared<T>>,
}

impl<T: Send + 'static> Clone for PushSender<T> {
    fn clone(&self) -> Self {
        PushSender {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Send + 'static> fmt::Debug for PushSender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushSender")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

producer::sink_via_inlet!(PushSender, Send + 'static);

impl<T: Send + 'static> PushSender<T> {
    /// Sends `item` if there is room (see [`push`] for what room means), without waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when there is no room, [`TrySendError::Closed`] when the stream
    /// is over; either way with the element.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _publisher) = rs_impl::source::push::<u8>(1);
    /// assert!(tx.try_send(1).is_ok());
    /// assert!(tx.try_send(2).unwrap_err().is_full());
    /// ```
    #[inline]
    pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        self.inner.try_send(item)
    }

    /// Sends `item`, waiting without blocking the thread until there is room.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the element when the stream is over (also while waiting).
    ///
    /// # Cancel safety
    ///
    /// If the future is dropped before it completes, the element was not sent: it is dropped
    /// with the future, and nothing else changes (no room is held). For a send that keeps
    /// the element when abandoned, wait with the [`futures::Sink`]'s `poll_ready` (which
    /// holds a reservation, no element) and then send.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, publisher) = rs_impl::source::push::<u32>(0);
    /// let (s, result) = collect(RequestStrategy::OneByOne);
    /// publisher.subscribe(Box::new(s));
    /// futures::executor::block_on(async {
    ///     for i in 0..3 {
    ///         tx.send(i).await.unwrap();
    ///     }
    ///     tx.complete();
    /// });
    /// assert_eq!(result.wait().unwrap(), vec![0, 1, 2]);
    /// ```
    pub async fn send(&self, item: T) -> Result<(), SendError<T>> {
        self.inner.send(item).await
    }

    /// Sends `item`, **blocking the thread** until there is room. Do not call it from an
    /// async task (use [`send`](Self::send)), nor from inside this source's subscriber (the
    /// room it waits for comes from that subscriber's requests). Without room it first
    /// watches for it a few microseconds (a bounded spin, backing off for a while when one
    /// did not pay), then sleeps until a request or the end wakes it.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the element when the stream is over (also while waiting).
    ///
    /// # Examples
    ///
    /// See [`push`].
    pub fn blocking_send(&self, item: T) -> Result<(), SendError<T>> {
        self.inner.blocking_send(item)
    }

    /// Ends the stream successfully after the queued elements, for every handle; later sends
    /// fail. A second end (or one after cancel) changes nothing.
    ///
    /// # Examples
    ///
    /// See [`push`].
    pub fn complete(&self) {
        self.inner.complete();
    }

    /// Ends the stream with `error` after the queued elements, for every handle; later sends
    /// fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Publisher};
    /// use rs_impl::subscriber::{collect, RequestStrategy};
    /// let (tx, publisher) = rs_impl::source::push::<u32>(1);
    /// let (s, result) = collect(RequestStrategy::Unbounded);
    /// publisher.subscribe(Box::new(s));
    /// tx.fail(Error::msg("sensor unplugged"));
    /// assert_eq!(result.wait().unwrap_err().to_string(), "sensor unplugged");
    /// ```
    pub fn fail(&self, error: Error) {
        self.inner.fail(error);
    }

    /// Whether the stream is over for the senders (cancelled, ended, refused, or nobody can
    /// subscribe): every send would fail.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, publisher) = rs_impl::source::push::<u8>(1);
    /// assert!(!tx.is_closed());
    /// drop(publisher); // nobody can subscribe any more
    /// assert!(tx.is_closed());
    /// ```
    pub fn is_closed(&self) -> bool {
        self.inner.is_closed()
    }

    /// Why the stream takes no more elements (`None` while it does): what to look at when a
    /// send comes back `Closed`. See [`CloseReason`](crate::CloseReason).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_impl::CloseReason;
    /// let (tx, publisher) = rs_impl::source::push::<u8>(1);
    /// drop(publisher); // nobody can subscribe any more
    /// assert!(matches!(tx.closed_reason(), Some(CloseReason::Unsubscribable)));
    /// ```
    pub fn closed_reason(&self) -> Option<crate::CloseReason> {
        self.inner.closed_reason()
    }
}
