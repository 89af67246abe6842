//! The producer side shared by the fanout channel ([`FanoutSender`](crate::fanout::FanoutSender))
//! and the push source ([`PushSender`](crate::source::PushSender)): one API in tokio's shape,
//! one set of error types.
//!
//! # Contract (both senders)
//!
//! * **Sending.** `try_send(&self, x)` never waits: it hands the element back in
//!   [`TrySendError::Full`] when there is no room, in [`TrySendError::Closed`] when the stream
//!   takes no more elements. `send(&self, x).await` waits for room without blocking the
//!   thread; `blocking_send(&self, x)` blocks the thread. Both hand the element back in
//!   [`SendError`] once the stream is closed (also while waiting). What "room" means is each
//!   channel's own (the fanout: free buffer space; the push source: buffer plus demand).
//! * **Many producers.** A sender is a cheap `Clone` handle, `Send` and `Sync`; every clone
//!   sends into the same stream. Sends are serialised inside: each handle's elements arrive in
//!   the order it sent them, and elements of different handles interleave in the order their
//!   sends took effect.
//! * **The end.** `complete()` and `fail(error)` end the stream for every handle (the first
//!   end wins; later sends fail with `Closed`). Dropping the **last** handle without either ends
//!   the stream with `on_error(`[`ProducerError::Dropped`]`)`: a producer that vanished is not
//!   a clean end, and subscribers never mistake it for one. Dropping **any** handle while its
//!   thread panics ([`std::thread::panicking`]) fails the stream with
//!   [`ProducerError::Panicked`] at once, even if other handles live: the panicking producer's
//!   remaining elements are missing, so the stream must not look complete.
//! * **Sink.** Each sender is a [`futures::Sink`]: `poll_ready` reserves room for one element
//!   (waiting as `send` does), `start_send` uses the reservation (the element is then sent, as
//!   by `try_send`), `poll_flush` has nothing to do (nothing waits in the handle), and
//!   `poll_close` **completes the stream** for every handle. Errors are [`SinkError`], which
//!   gives `start_send`'s element back. A reservation that is never used is given back when
//!   the handle is dropped.
//! * **Nothing hangs, nothing escapes.** A waiting send wakes when room appears or the stream
//!   closes (every cause of closing wakes every waiter). No subscriber panic reaches a sender:
//!   the channel's drain loop catches it (rule 2.13).
//!
//! # What a send costs
//!
//! A send that finds a permit: one compare-and-swap on the [`Room`] word, then the channel's
//! delivery (the push source: its drain loop's two read-modify-writes and the subscriber's
//! `on_next`, which for an island's input side is one more, on the word the island reads).
//! Counted for issue 24 on the push source feeding an island at K = 3 boundaries: 20–23 ns of
//! the sender's CPU per element, a fifth of the chain's; the island is woken once per run
//! (700 elements and more), not per element (the counts: `rs-impl/src/source/push.rs`). A
//! send that finds none spins briefly ([`Room::spin`], adaptive: see
//! [`Inlet::blocking_send`]'s `spin_pays`), then sleeps: 1.2–1.8 sleeps per thousand elements
//! there, one per replenishment of the island's half ring, since the chain behind is slower
//! than the sender.
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::TrySendError;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let (tx, publisher) = rs_impl::source::push::<u32>(1);
//! tx.try_send(1).unwrap();
//! assert!(matches!(tx.try_send(2), Err(TrySendError::Full(2))));
//! let (s, result) = collect(RequestStrategy::Unbounded);
//! publisher.subscribe(Box::new(s));
//! let tx2 = tx.clone();
//! tx2.blocking_send(2).unwrap();
//! tx.complete();
//! assert_eq!(result.wait().unwrap(), vec![1, 2]);
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use rs_api::Error;

use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex};

mod error;

pub use error::{CloseReason, ProducerError, SendError, SinkError, TrySendError};

// ----- permits ---------------------------------------------------------------------------------

/// [`Room`]'s top bit: a sender waits for a permit (in [`Waiters`]).
const WAITING: u64 = 1 << 63;
/// [`Room`]'s next bit: sends are over (the stream ended, or nobody can receive).
const SHUT: u64 = 1 << 62;
/// [`Room`]'s permit count; all ones is "unlimited" (the push source under unbounded demand).
pub(crate) const UNLIMITED: u64 = SHUT - 1;
/// A handle whose last spin did not pay sleeps at once for this many blocked sends, then
/// spins again (see [`Inlet::blocking_send`]).
const SPIN_RETRY: u32 = 8;

/// What one attempt to take a permit found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// A permit was taken.
    Granted,
    /// None now.
    Full,
    /// Sends are over.
    Closed,
}

/// The permits senders take from, in one atomic word: the count, whether sends are over
/// ([`SHUT`]), and whether a sender waits ([`WAITING`]).
///
/// Every change is one read-modify-write of the one word, so a sender's "none left, I wait"
/// and a permit's return (or the end) are totally ordered: either the sender's look sees the
/// new permits (or the end), or whoever adds them sees the sender waiting and wakes it.
pub(crate) struct Room {
    word: AtomicU64,
    /// Why sends are over: set once, before [`SHUT`] (so whoever sees the bit finds it).
    reason: Mutex<Option<CloseReason>>,
}

impl Room {
    /// A room with `permits` permits (at most [`UNLIMITED`]).
    pub(crate) fn new(permits: u64) -> Self {
        Room {
            word: AtomicU64::new(permits.min(UNLIMITED)),
            reason: Mutex::new(None),
        }
    }

    /// Why sends are over (`None` while they are not).
    pub(crate) fn reason(&self) -> Option<CloseReason> {
        if !self.is_shut() {
            return None;
        }
        self.reason.lock().clone()
    }

    /// Takes a permit, if there is one and sends are not over.
    #[inline]
    pub(crate) fn take(&self) -> Claim {
        self.claim(false)
    }

    /// As [`take`](Self::take), but marks a sender waiting when there is no permit.
    pub(crate) fn take_or_wait(&self) -> Claim {
        self.claim(true)
    }

    #[inline]
    fn claim(&self, wait: bool) -> Claim {
        let seen = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |room| {
                if room & SHUT != 0 {
                    None
                } else {
                    match room & UNLIMITED {
                        0 if wait && room & WAITING == 0 => Some(room | WAITING),
                        0 | UNLIMITED => None, // none, or unlimited: nothing to change
                        _ => Some(room - 1),
                    }
                }
            })
            .unwrap_or_else(|room| room);
        if seen & SHUT != 0 {
            Claim::Closed
        } else if seen & UNLIMITED == 0 {
            Claim::Full
        } else {
            Claim::Granted
        }
    }

    /// Adds `n` permits (saturating at unlimited) and clears the waiting mark; `true` if a
    /// sender was waiting (the caller then wakes the [`Waiters`]). Nothing once shut.
    #[inline]
    pub(crate) fn add(&self, n: u64) -> bool {
        let prev = self
            .word
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |room| {
                (room & SHUT == 0).then(|| (room & UNLIMITED).saturating_add(n).min(UNLIMITED))
            })
            .unwrap_or_else(|room| room);
        prev & WAITING != 0 && prev & SHUT == 0
    }

    /// Ends the sends because of `reason` (the first reason stays); `true` if a sender was
    /// waiting (the caller then wakes the waiters).
    #[cold]
    pub(crate) fn shut(&self, reason: impl FnOnce() -> CloseReason) -> bool {
        {
            let mut slot = self.reason.lock();
            if slot.is_none() {
                *slot = Some(reason());
            }
        }
        let prev = self.word.fetch_or(SHUT, Ordering::AcqRel);
        prev & WAITING != 0 && prev & SHUT == 0
    }

    /// Watches the word for a short while before a blocked sender sleeps: `true` as soon as
    /// a permit (or the end) shows. The crate's bounded spin ([`spin_until`](crate::loom::spin_until):
    /// 127 pause hints, about 3 µs on the machine measured, never a yield), the twin of the
    /// stream bridge's reader spin: a consumer that is running hands permits back sooner than
    /// a sleep and a wake-up take (a system call on each side and two thread switches). Only
    /// a hint: the caller takes the permit with [`take`](Self::take) as before. Not in the
    /// loom build.
    pub(crate) fn spin(&self) -> bool {
        // Relaxed: a hint; `take` reads the word again with acquire.
        crate::loom::spin_until(|| self.word.load(Ordering::Relaxed) & (SHUT | UNLIMITED) != 0)
    }

    /// Whether sends are over.
    #[inline]
    pub(crate) fn is_shut(&self) -> bool {
        self.word.load(Ordering::Acquire) & SHUT != 0
    }

    /// Whether permits given back now would be wanted at once: a sender waits, or none is
    /// left (and sends are not over). One load: the fanout asks it at the end of each pass to
    /// decide whether to hand the space it freed back to the room now.
    #[inline]
    pub(crate) fn wanted(&self) -> bool {
        let room = self.word.load(Ordering::Acquire);
        room & SHUT == 0 && (room & WAITING != 0 || room & UNLIMITED == 0)
    }
}

// ----- waiting senders -------------------------------------------------------------------------

/// The senders waiting for a permit: threads blocked in `blocking_send`, tasks in `send` or a
/// `Sink`'s `poll_ready`.
#[derive(Default)]
struct WaitList {
    /// Bumped by every wake: a blocked thread sleeps only while it is unchanged since its
    /// last look at the room, so a wake between its look and its sleep is never missed.
    epoch: u64,
    /// Threads blocked.
    blocked: usize,
    /// Tasks waiting, one entry per waiting future (or `Sink`), by registration id: a future
    /// polled again updates its own entry, and one dropped while waiting removes it, without
    /// touching another future of the same task.
    tasks: Vec<(u64, Waker)>,
    /// The next registration id.
    next_id: u64,
}

/// Where waiting senders wait. Wakes come from whoever gives permits back or shuts the room,
/// after the room said a sender waits.
pub(crate) struct Waiters {
    list: Mutex<WaitList>,
    wake: Condvar,
}

impl Waiters {
    /// Nobody waiting.
    pub(crate) fn new() -> Self {
        Waiters {
            list: Mutex::new(WaitList::default()),
            wake: Condvar::new(),
        }
    }

    /// Wakes every waiting sender (each looks at the room again). Task wakers are called
    /// outside the lock, and the notification comes after the lock is released, so that a
    /// woken thread does not find it held and sleep again on the mutex.
    #[cold]
    pub(crate) fn wake_all(&self) {
        let (blocked, tasks) = {
            let mut list = self.list.lock();
            list.epoch = list.epoch.wrapping_add(1);
            (list.blocked > 0, std::mem::take(&mut list.tasks))
        };
        if blocked {
            self.wake.notify_all();
        }
        for (_, task) in tasks {
            task.wake();
        }
    }

    /// Withdraws registration `id` (a future dropped while it waited). Nothing if it was
    /// woken meanwhile (a wake takes every registration).
    fn withdraw(&self, id: u64) {
        self.list.lock().tasks.retain(|(i, _)| *i != id);
    }
}

/// A waiting future's registration in [`Waiters`], withdrawn when the future is dropped.
struct Registration<'a> {
    waiters: &'a Waiters,
    id: Option<u64>,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.waiters.withdraw(id);
        }
    }
}

impl fmt::Debug for Waiters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiters").finish_non_exhaustive()
    }
}

// ----- the channel behind a sender -------------------------------------------------------------

/// What a channel offers its senders: the fanout's core and the push source's subscription
/// implement it; [`Inlet`] builds the whole producer API on it.
pub(crate) trait Channel: Send + Sync + 'static {
    /// The element type.
    type Item: Send;

    /// The permits.
    fn room(&self) -> &Room;

    /// Where senders wait for permits.
    fn waiters(&self) -> &Waiters;

    /// Live sender handles (starts at 1: the handle the constructor returns).
    fn senders(&self) -> &AtomicUsize;

    /// Sends without waiting (each channel's fast path).
    fn try_send(&self, item: Self::Item) -> Result<(), TrySendError<Self::Item>>;

    /// Sends an element whose permit the caller took from the room; the element comes back if
    /// the stream ended meanwhile.
    fn send_permitted(&self, item: Self::Item) -> Result<(), Self::Item>;

    /// Sends `first` and then, while each is taken at once, the elements `more` gives (it
    /// is called only after the previous element was taken; `None` ends the burst). `Ok`:
    /// every element taken from `more` was sent. The error carries the one element that
    /// was not (`more` is not called after it). The default sends `first` alone, as
    /// [`try_send`](Self::try_send); a channel with a drain loop sends the burst in one
    /// entry.
    fn try_send_burst(
        &self,
        first: Self::Item,
        more: &mut dyn FnMut() -> Option<Self::Item>,
    ) -> Result<(), TrySendError<Self::Item>> {
        let _ = more;
        self.try_send(first)
    }

    /// Called by a sender that has just marked itself waiting, before it sleeps: a channel
    /// that keeps freed permits aside (the fanout's drainer) makes sure a pass runs that sees
    /// the mark and hands them over.
    fn nudge(&self) {}

    /// Ends the stream (first end wins): `Ok` completes, `Err` fails. Shuts the room.
    fn end(&self, end: Result<(), Error>);
}

/// The next element of a burst's iterator; a panic there ends the burst (`None`) and is kept
/// in `panicked` for the sender to resume once the channel's drain loop is left.
fn next_guarded<I: Iterator>(
    it: &mut I,
    panicked: &mut Option<Box<dyn std::any::Any + Send>>,
) -> Option<I::Item> {
    if panicked.is_some() {
        return None;
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| it.next())) {
        Ok(x) => x,
        Err(p) => {
            *panicked = Some(p);
            None
        }
    }
}

/// Waits for a permit, blocking the thread: `true` when one was taken, `false` when the
/// stream closed.
fn wait_permit_blocking<C: Channel>(c: &C) -> bool {
    loop {
        let epoch = {
            let mut list = c.waiters().list.lock();
            match c.room().take_or_wait() {
                Claim::Granted => return true,
                Claim::Closed => return false,
                Claim::Full => {}
            }
            list.blocked += 1;
            list.epoch
        };
        c.nudge();
        let mut list = c.waiters().list.lock();
        while list.epoch == epoch {
            list = c.waiters().wake.wait(list);
        }
        list.blocked -= 1;
    }
}

/// Takes a permit or registers the task (under registration `reg`) to be woken when one may
/// be free.
fn poll_permit<C: Channel>(c: &C, cx: &mut Context<'_>, reg: &mut Option<u64>) -> Poll<bool> {
    {
        let mut list = c.waiters().list.lock();
        let settled = match c.room().take_or_wait() {
            Claim::Granted => Some(true),
            Claim::Closed => Some(false),
            Claim::Full => None,
        };
        if let Some(granted) = settled {
            if let Some(id) = reg.take() {
                list.tasks.retain(|(i, _)| *i != id);
            }
            return Poll::Ready(granted);
        }
        let entry = reg.and_then(|id| list.tasks.iter_mut().find(|(i, _)| *i == id));
        match entry {
            Some((_, waker)) => {
                if !waker.will_wake(cx.waker()) {
                    *waker = cx.waker().clone();
                }
            }
            None => {
                // First wait, or woken since (a wake takes every registration).
                let id = list.next_id;
                list.next_id = list.next_id.wrapping_add(1);
                list.tasks.push((id, cx.waker().clone()));
                *reg = Some(id);
            }
        }
    }
    // Registered before the nudge: a permit it frees wakes this task.
    c.nudge();
    Poll::Pending
}

/// One poll of an async send of `slot`'s element.
fn poll_send<C: Channel>(
    c: &C,
    cx: &mut Context<'_>,
    slot: &mut Option<C::Item>,
    reg: &mut Option<u64>,
) -> Poll<Result<(), SendError<C::Item>>> {
    let Some(item) = slot.take() else {
        return Poll::Ready(Ok(())); // polled after completion
    };
    let item = match c.try_send(item) {
        Ok(()) => return Poll::Ready(Ok(())),
        Err(TrySendError::Closed(x)) => return Poll::Ready(Err(SendError(x))),
        Err(TrySendError::Full(x)) => x,
    };
    match poll_permit(c, cx, reg) {
        Poll::Ready(true) => Poll::Ready(c.send_permitted(item).map_err(SendError)),
        Poll::Ready(false) => Poll::Ready(Err(SendError(item))),
        Poll::Pending => {
            *slot = Some(item);
            Poll::Pending
        }
    }
}

/// A sender handle over channel `C`: everything of the producer API that does not depend on
/// the channel. [`FanoutSender`](crate::fanout::FanoutSender) and
/// [`PushSender`](crate::source::PushSender) wrap one each.
pub(crate) struct Inlet<C: Channel> {
    chan: Arc<C>,
    /// This handle holds a permit from a `Sink::poll_ready`.
    reserved: bool,
    /// Blocked sends since this handle's last spin that did not pay (0: the last one paid, or
    /// none yet): a hint, relaxed (see [`blocking_send`](Self::blocking_send)).
    spin_misses: crate::loom::SpinHint,
    /// The `Sink`'s registration while `poll_ready` waits.
    registration: Option<u64>,
    _item: PhantomData<fn(C::Item)>,
}

impl<C: Channel> Inlet<C> {
    /// The first handle of `chan` (whose sender count starts at 1).
    pub(crate) fn new(chan: Arc<C>) -> Self {
        Inlet {
            chan,
            reserved: false,
            spin_misses: crate::loom::SpinHint::default(),
            registration: None,
            _item: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn try_send(&self, item: C::Item) -> Result<(), TrySendError<C::Item>> {
        self.chan.try_send(item)
    }

    pub(crate) async fn send(&self, item: C::Item) -> Result<(), SendError<C::Item>> {
        let mut slot = Some(item);
        let mut reg = Registration {
            waiters: self.chan.waiters(),
            id: None,
        };
        std::future::poll_fn(|cx| poll_send(&*self.chan, cx, &mut slot, &mut reg.id)).await
    }

    pub(crate) fn blocking_send(&self, item: C::Item) -> Result<(), SendError<C::Item>> {
        match self.try_send_blocking(item)? {
            None => Ok(()),
            Some(full) => self.blocking_send_full(full),
        }
    }

    /// The rest of [`blocking_send`](Self::blocking_send) once the buffer was full: spin,
    /// then sleep for a permit. Out of line so that the sent-at-once path does not save and
    /// restore the registers this part needs (a fanout `blocking_send`: 210 → 201 instructions
    /// per element at one subscriber, 2245 → 2236 at 128, callgrind); it waits anyway, so the
    /// call costs nothing.
    #[cold]
    #[inline(never)]
    fn blocking_send_full(&self, mut item: C::Item) -> Result<(), SendError<C::Item>> {
        if self.spin_pays() {
            item = match self.try_send_blocking(item)? {
                None => return Ok(()),
                Some(full) => full,
            };
        }
        if !wait_permit_blocking(&*self.chan) {
            return Err(SendError(item));
        }
        self.chan.send_permitted(item).map_err(SendError)
    }

    /// One `try_send` of a blocking send: `None` if sent, the element back if full, the
    /// error if the stream is closed.
    #[inline]
    fn try_send_blocking(&self, item: C::Item) -> Result<Option<C::Item>, SendError<C::Item>> {
        match self.chan.try_send(item) {
            Ok(()) => Ok(None),
            Err(TrySendError::Closed(x)) => Err(SendError(x)),
            Err(TrySendError::Full(x)) => Ok(Some(x)),
        }
    }

    /// Before a blocked send sleeps: watches the room for a permit ([`Room::spin`]) if this
    /// handle's last spin paid off, or [`SPIN_RETRY`] blocked sends after one that did not;
    /// `true` if a permit (or the end) showed. Adaptive so that a consumer that is not running
    /// (a machine with more runnable threads than cores) costs a sender at most one spin in
    /// [`SPIN_RETRY`] sleeps.
    fn spin_pays(&self) -> bool {
        let misses = self.spin_misses.get();
        if misses != 0 && misses < SPIN_RETRY {
            self.spin_misses.set(misses + 1);
            return false;
        }
        let paid = self.chan.room().spin(); // never in the loom build
        self.spin_misses.set(if paid { 0 } else { 1 });
        paid
    }

    /// Sends every element of `items` in order, in bursts (see
    /// [`Channel::try_send_burst`]), blocking the thread while the buffer is full. A panic of
    /// the iterator reaches the caller after the burst that called it ended cleanly.
    pub(crate) fn blocking_send_all<I>(&self, items: I) -> Result<(), SendError<C::Item>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let mut it = items.into_iter();
        while let Some(full) = self.burst(&mut it)? {
            self.blocking_send(full)?;
        }
        Ok(())
    }

    /// One burst from `it` (see [`Channel::try_send_burst`]): `None` once `it` is exhausted,
    /// or the element that found the buffer full, for the caller to wait with. A panic of the
    /// iterator resumes after the burst that called it ended cleanly.
    fn burst<I: Iterator<Item = C::Item>>(
        &self,
        it: &mut I,
    ) -> Result<Option<C::Item>, SendError<C::Item>> {
        let mut panicked = None;
        while let Some(first) = it.next() {
            let r = self
                .chan
                .try_send_burst(first, &mut || next_guarded(it, &mut panicked));
            if let Some(p) = panicked.take() {
                std::panic::resume_unwind(p);
            }
            match r {
                Ok(()) => {}
                Err(TrySendError::Closed(x)) => return Err(SendError(x)),
                Err(TrySendError::Full(x)) => return Ok(Some(x)),
            }
        }
        Ok(None)
    }

    /// [`blocking_send_all`](Self::blocking_send_all), waiting without blocking the thread.
    pub(crate) async fn send_all_async<I>(&self, items: I) -> Result<(), SendError<C::Item>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let mut it = items.into_iter();
        while let Some(full) = self.burst(&mut it)? {
            self.send(full).await?;
        }
        Ok(())
    }

    pub(crate) fn complete(&self) {
        self.chan.end(Ok(()));
    }

    pub(crate) fn fail(&self, error: Error) {
        self.chan.end(Err(error));
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.chan.room().is_shut()
    }

    pub(crate) fn closed_reason(&self) -> Option<CloseReason> {
        self.chan.room().reason()
    }

    /// Gives back an unused reservation.
    fn unreserve(&mut self) {
        if std::mem::take(&mut self.reserved) && self.chan.room().add(1) {
            self.chan.waiters().wake_all();
        }
    }

    pub(crate) fn poll_ready(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SinkError<C::Item>>> {
        if self.reserved {
            if self.chan.room().is_shut() {
                self.reserved = false;
                return Poll::Ready(Err(SinkError::Closed(None)));
            }
            return Poll::Ready(Ok(()));
        }
        match poll_permit(&*self.chan, cx, &mut self.registration) {
            Poll::Ready(true) => {
                self.reserved = true;
                Poll::Ready(Ok(()))
            }
            Poll::Ready(false) => Poll::Ready(Err(SinkError::Closed(None))),
            Poll::Pending => Poll::Pending,
        }
    }

    pub(crate) fn start_send(&mut self, item: C::Item) -> Result<(), SinkError<C::Item>> {
        if std::mem::take(&mut self.reserved) {
            return self
                .chan
                .send_permitted(item)
                .map_err(|x| SinkError::Closed(Some(x)));
        }
        match self.chan.try_send(item) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(x)) => Err(SinkError::NotReady(x)),
            Err(TrySendError::Closed(x)) => Err(SinkError::Closed(Some(x))),
        }
    }

    pub(crate) fn poll_flush(&mut self) -> Poll<Result<(), SinkError<C::Item>>> {
        Poll::Ready(Ok(()))
    }

    pub(crate) fn poll_close(&mut self) -> Poll<Result<(), SinkError<C::Item>>> {
        self.unreserve();
        self.complete();
        Poll::Ready(Ok(()))
    }
}

impl<C: Channel> Clone for Inlet<C> {
    fn clone(&self) -> Self {
        self.chan.senders().fetch_add(1, Ordering::AcqRel);
        Inlet::new(self.chan.clone())
    }
}

impl<C: Channel> Drop for Inlet<C> {
    fn drop(&mut self) {
        self.unreserve();
        if let Some(id) = self.registration.take() {
            self.chan.waiters().withdraw(id);
        }
        if crate::loom::thread::panicking() {
            // A panicking producer is never a clean end, whoever else still sends.
            self.chan.end(Err(ProducerError::Panicked.into()));
        }
        if self.chan.senders().fetch_sub(1, Ordering::AcqRel) == 1 {
            self.chan.end(Err(ProducerError::Dropped.into()));
        }
    }
}

/// Implements the producer API's [`futures::Sink`] for a sender type `$sender<T>` (with the
/// bounds `$bounds` on `T`) whose `inner` field is an [`Inlet`].
macro_rules! sink_via_inlet {
    ($sender:ident, $($bounds:tt)+) => {
        impl<T: $($bounds)+> futures::Sink<T> for $sender<T> {
            type Error = crate::producer::SinkError<T>;

            fn poll_ready(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                self.get_mut().inner.poll_ready(cx)
            }

            fn start_send(self: std::pin::Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
                self.get_mut().inner.start_send(item)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                self.get_mut().inner.poll_flush()
            }

            fn poll_close(
                self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<Result<(), Self::Error>> {
                self.get_mut().inner.poll_close()
            }
        }
    };
}
pub(crate) use sink_via_inlet;
