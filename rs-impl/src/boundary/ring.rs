//! The handoff of one boundary: a single-producer single-consumer ring of a power-of-two size,
//! its demand counter, and its signals.
//!
//! # Indices
//!
//! Positions are free-running `usize` counts, compared with wrapping arithmetic; a position
//! `i` lives in slot `i & mask`. The **producer** (a boundary's output side, or the
//! [`BoundarySubscriber`](super::BoundarySubscriber) a foreign publisher signals) writes slots
//! `[tail, written)` privately and makes them visible by storing `tail` (release): that store is
//! a **flush**, followed by one notification of the consumer's island. The **consumer** (the
//! input side, a stage of the downstream island) moves elements out of `[head, tail)` (acquire
//! load of `tail`) and, each time `batch = size / 2` of them have been taken, adds `batch` to
//! `granted` (release) and tells the producer. The producer writes position `i` only when
//! `i < granted` (acquire load).
//!
//! **Why a slot is free when the producer writes it** (the argument every `unsafe` block here
//! relies on): the consumer raises `granted` only by what it has taken, starting from `size`,
//! so `granted ≤ head + size` at the moment of each store, where `head` counts the elements
//! taken (moved out) before that store. A write at `i < granted` therefore targets a slot whose
//! previous occupant, position `i - size < head`, was moved out before the release store of
//! `granted` that the producer acquired: the move happens-before the write. Symmetrically, the
//! consumer reads position `i` only when `i < tail` (acquire), and the producer's write of `i`
//! happened-before its release store of `tail`. Each slot is therefore accessed by one side at
//! a time, and an element is moved out exactly once. An overrun (a producer with no room) never
//! writes: it is reported instead (rule 1.1 broken upstream, or a bug).
//!
//! A **foreign** producer (a publisher signalling a `BoundarySubscriber`) is bounded by the
//! ring's free space instead: it writes position `i` only when `i < head + size`, where `head`
//! is what the consumer had taken at its last grant (stored, release, before `granted`). The
//! same argument holds with `head + size` in place of `granted`; a publisher that keeps to its
//! demand stays within both, and an early element (before the first request) finds room.
//!
//! # Signals
//!
//! `state` carries the producer's terminal signal (`COMPLETE`, `FAILED` with the error in
//! `control`, `OVERRUN`) and the consumer's `CANCELLED`. The producer sets its terminal bit
//! **after** its last flush (release), so a consumer that sees the bit (acquire) and then
//! re-reads `tail` sees every element published before it: elements and the terminal signal
//! travel in one order, as through one FIFO. The rare things — a foreign subscription, the
//! error, which island to notify, the rule-2.4 bookkeeping — sit in `control` behind a mutex
//! that is never taken per element.
//!
//! # Memory
//!
//! The ring is allocated once, when the boundary is made; neither side allocates afterwards.
//! No buffer is ever shared beyond the two sides of one boundary (seed 003's pooling hazard
//! cannot arise: the ring lives as long as either side holds it). Elements left when a side
//! stops are dropped by whoever owns them at that moment: the producer its unpublished ones,
//! the consumer what it had been given, the ring itself what was published after the consumer
//! left.

use std::fmt;
use std::mem::MaybeUninit;

use rs_api::{Error, SubscriptionRef};

use crate::island::Notifier;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use crate::loom::thread::{self, ThreadId};
use crate::panics as report;

/// `state`: the producer completed after its last flush.
pub(crate) const COMPLETE: usize = 1;
/// `state`: the producer failed after its last flush (the error is in `control`).
pub(crate) const FAILED: usize = 2;
/// `state`: the producer had an element and no room for it (upstream broke rule 1.1).
pub(crate) const OVERRUN: usize = 4;
/// `state`: the consumer is gone (cancelled, failed, finished): nothing more is wanted.
pub(crate) const CANCELLED: usize = 8;
/// `state`: any producer terminal bit.
pub(crate) const ENDED: usize = COMPLETE | FAILED | OVERRUN;

/// Keeps a hot counter on a cache line of its own (no false sharing between the producer's
/// and the consumer's counters).
#[repr(align(128))]
struct Padded<T>(T);

/// Who writes into a boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Producer {
    /// Nobody yet.
    None,
    /// A foreign publisher, through a `BoundarySubscriber` it signals.
    Foreign,
    /// An output side of another island, writing batches directly.
    Internal,
}

/// The rare state of a boundary, behind the mutex.
pub(crate) struct Control {
    pub(crate) producer: Producer,
    /// A foreign subscription not yet taken by the consumer.
    pub(crate) subscription: Option<SubscriptionRef>,
    /// The producer's error (with `FAILED`).
    pub(crate) error: Option<Error>,
    /// The consumer island's stage, once it started.
    pub(crate) consumer: Option<Notifier>,
    /// The internal producer island's stage, once it started.
    pub(crate) producer_stage: Option<Notifier>,
    /// An island consumes this boundary (one may).
    pub(crate) consumer_claimed: bool,
    /// The consumer's thread while it is inside a foreign `request` (rule 2.4).
    pub(crate) calling: Option<ThreadId>,
}

/// One boundary: the ring, its counters and signals (see the module docs).
pub(crate) struct Shared<T> {
    /// Published by the producer: positions below it may be read.
    tail: Padded<AtomicUsize>,
    /// Granted by the consumer: positions below it may be written.
    granted: Padded<AtomicUsize>,
    /// Read per element by both sides, written never: a cache line of its own.
    ring: Padded<Ring<T>>,
    /// Elements the consumer took, as of its last grant (and where it stopped, once it left:
    /// the ring drops what lies beyond). A foreign producer's room ends at `head + size`.
    head: Padded<AtomicUsize>,
    state: AtomicUsize,
    /// Flushes that published something (the producer's own count: one relaxed add each).
    flushes: AtomicU64,
    /// Grants the consumer made after the prefetch.
    grants: AtomicU64,
    control: Mutex<Control>,
    /// Signalled when the consumer's foreign `request` returns (rule 2.4).
    returned: Condvar,
}

/// The slots and their mask.
struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
}

impl<T> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Boundary")
            .field("size", &self.ring.0.slots.len())
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

// SAFETY: the slots hold `T: Send` values moved between the producer's and the consumer's
// threads; each slot is accessed by one side at a time, ordered by the release/acquire pairs
// on `tail` and `granted` (module docs). Everything else is atomics and a mutex.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above: shared access is confined to the protocol (one side per slot at a time).
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// A boundary of `size` slots (rounded up to a power of two, at least 2).
    pub(crate) fn new(size: usize) -> Arc<Self> {
        let size = size.max(2).next_power_of_two();
        Arc::new(Shared {
            tail: Padded(AtomicUsize::new(0)),
            granted: Padded(AtomicUsize::new(0)),
            state: AtomicUsize::new(0),
            head: Padded(AtomicUsize::new(0)),
            flushes: AtomicU64::new(0),
            grants: AtomicU64::new(0),
            ring: Padded(Ring {
                slots: (0..size)
                    .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                    .collect(),
                mask: size - 1,
            }),
            control: Mutex::new(Control {
                producer: Producer::None,
                subscription: None,
                error: None,
                consumer: None,
                producer_stage: None,
                consumer_claimed: false,
                calling: None,
            }),
            returned: Condvar::new(),
        })
    }

    /// The ring's size (a power of two).
    pub(crate) fn size(&self) -> usize {
        self.ring.0.mask + 1
    }

    pub(crate) fn control(&self) -> MutexGuard<'_, Control> {
        self.control.lock()
    }

    /// What went through the boundary so far.
    pub(crate) fn stats(&self) -> super::BoundaryStats {
        super::BoundaryStats {
            published: self.tail.0.load(Ordering::Acquire) as u64,
            flushes: self.flushes.load(Ordering::Relaxed),
            granted: self.granted.0.load(Ordering::Acquire) as u64,
            grants: self.grants.load(Ordering::Relaxed),
        }
    }

    /// The signal bits (acquire).
    pub(crate) fn state(&self) -> usize {
        self.state.load(Ordering::Acquire)
    }

    /// Sets signal bits (release); returns the bits before.
    pub(crate) fn signal(&self, bits: usize) -> usize {
        self.state.fetch_or(bits, Ordering::AcqRel)
    }

    /// Claims the producer side for `kind`; `false` if it is taken or the consumer is gone.
    pub(crate) fn claim(&self, kind: Producer, control: &mut Control) -> bool {
        if control.producer != Producer::None || self.state() & CANCELLED != 0 {
            return false;
        }
        control.producer = kind;
        true
    }

    /// Claims the consumer side; `false` if an island consumes it already.
    pub(crate) fn claim_consumer(&self) -> bool {
        !std::mem::replace(&mut self.control.lock().consumer_claimed, true)
    }

    /// The consumer's `request(n)` on a foreign subscription, never started once a terminal
    /// signal arrived or the consumer left (rule 2.4): marked under the lock; the foreign
    /// `on_complete`/`on_error` wait for a request in flight on another thread to return.
    pub(crate) fn request(&self, subscription: &SubscriptionRef, n: u64) {
        {
            let mut control = self.control.lock();
            #[cfg(rs_loom)]
            let skip_check = broken_terminal_wait();
            #[cfg(not(rs_loom))]
            let skip_check = false;
            if !skip_check && self.state() & (ENDED | CANCELLED) != 0 {
                return;
            }
            control.calling = Some(thread::current().id());
        }
        subscription.request(n); // may deliver synchronously, on this thread
        self.control.lock().calling = None;
        self.returned.notify_all();
    }

    /// A foreign terminal signal: sets `bits` (and the error), tells the consumer, and waits
    /// for a consumer `request` in flight on another thread (rule 2.4).
    pub(crate) fn terminate(&self, bits: usize, error: Option<Error>) {
        let me = thread::current().id();
        let mut control = self.control.lock();
        if self.state() & ENDED == 0 {
            if error.is_some() {
                control.error = error;
            }
            self.signal(bits);
        }
        if let Some(n) = &control.consumer {
            n.notify();
        }
        #[cfg(rs_loom)]
        if broken_terminal_wait() {
            return;
        }
        while control.calling.is_some_and(|t| t != me) {
            control = self.returned.wait(control);
        }
    }

    /// Moves the element at position `i` out.
    ///
    /// # Safety
    ///
    /// `i` is below a `tail` the caller acquired, not yet moved out, and the caller is the
    /// consumer (or the ring's last owner, in `Drop`).
    unsafe fn take(&self, i: usize) -> T {
        let ring = &self.ring.0;
        // SAFETY: per the contract the producer's write of position `i` happened-before the
        // acquired `tail` store (the slot holds an initialised `T`), it is moved out once, and
        // nobody else reads or writes the slot until the consumer grants it again (module
        // docs).
        ring.slots[i & ring.mask].with_mut(|p| unsafe { (*p).assume_init_read() })
    }

    /// Writes `x` at position `i`.
    ///
    /// # Safety
    ///
    /// The caller is the one producer, `i` is below a `granted` it acquired, and position `i`
    /// was not written before.
    unsafe fn put(&self, i: usize, x: T) {
        let ring = &self.ring.0;
        // SAFETY: per the contract the slot's previous occupant was moved out before the
        // acquired `granted` (or `head`) store (module docs): the slot is the producer's
        // alone, and writing over a moved-out `MaybeUninit` drops nothing.
        ring.slots[i & ring.mask].with_mut(|p| unsafe {
            (*p).write(x);
        });
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // The last owner: what was published after the consumer left is still here.
        let mut i = self.head.0.load(Ordering::Acquire);
        let tail = self.tail.0.load(Ordering::Acquire);
        while i != tail {
            // SAFETY: `[head, tail)` holds published elements the consumer never took (it
            // stored `head` when it left, after dropping everything below it); we are the last
            // owner, so nobody else touches the slots.
            let x = unsafe { self.take(i) };
            i = i.wrapping_add(1);
            report::drop_guarded(x);
        }
    }
}

/// Loom builds only: whether the foreign producer's rule-2.4 protocol is broken on purpose
/// (the loom model's twin: requests without looking for a terminal signal, terminal signals
/// that do not wait). Process-wide, set only in the child process that runs the broken twin.
#[cfg(rs_loom)]
fn broken_terminal_wait() -> bool {
    BROKEN_TERMINAL_WAIT.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(rs_loom)]
#[allow(clippy::disallowed_types)]
static BROKEN_TERMINAL_WAIT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Loom builds only: breaks the input side's rule-2.4 protocol for this process (see the loom
/// model `island_input_request_races_upstream_completion`).
#[cfg(rs_loom)]
#[doc(hidden)]
pub fn break_terminal_wait_for_loom() {
    BROKEN_TERMINAL_WAIT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Loom builds only: the ways the loom models' broken twins break the boundary. Process-wide,
/// set only in the child process that runs a broken twin.
#[cfg(rs_loom)]
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoomBreak {
    /// The producer sets its terminal bit before its last flush.
    TerminalBeforeFlush,
    /// The consumer's cancel skips the elements it was given without dropping them.
    CancelForgetsBuffer,
    /// The consumer notifies the producer before it stores the new grant.
    GrantAfterNotify,
    /// The consumer keeps delivering buffered input after the upstream failed.
    ErrorWaitsForInput,
}

#[cfg(rs_loom)]
#[allow(clippy::disallowed_types)]
static LOOM_BREAK: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Loom builds only: breaks the boundary in one way for this process (the loom models' twins).
#[cfg(rs_loom)]
#[doc(hidden)]
pub fn break_for_loom(how: LoomBreak) {
    LOOM_BREAK.store(how as usize + 1, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(rs_loom)]
pub(crate) fn broken(how: LoomBreak) -> bool {
    LOOM_BREAK.load(std::sync::atomic::Ordering::Relaxed) == how as usize + 1
}

#[cfg(not(rs_loom))]
#[inline(always)]
pub(crate) fn broken(_: LoomBreak) -> bool {
    false
}

#[cfg(not(rs_loom))]
#[derive(Debug, Clone, Copy)]
pub(crate) enum LoomBreak {
    TerminalBeforeFlush,
    CancelForgetsBuffer,
    GrantAfterNotify,
    ErrorWaitsForInput,
}

/// The producer's end of a boundary: the positions it wrote, published and may write.
pub(crate) struct Writer<T> {
    shared: Arc<Shared<T>>,
    /// Positions written (`[published, written)` are not yet visible).
    written: usize,
    published: usize,
    /// `granted` as last read.
    limit: usize,
    /// Flush when this many are unpublished (at least 1).
    cap: usize,
    /// The consumer island's stage, once known.
    consumer: Option<Notifier>,
    /// A terminal signal was sent.
    ended: bool,
    /// A foreign producer: its room is the ring's free space, not the grants (see
    /// [`Writer::foreign`]).
    foreign: bool,
}

impl<T> fmt::Debug for Writer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("written", &self.written)
            .field("published", &self.published)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl<T> Writer<T> {
    /// The producer end of `shared` (claimed by the caller), flushing every `cap` elements.
    pub(crate) fn new(shared: Arc<Shared<T>>, cap: usize) -> Self {
        Writer {
            shared,
            written: 0,
            published: 0,
            limit: 0,
            cap: cap.max(1),
            consumer: None,
            ended: false,
            foreign: false,
        }
    }

    /// The producer end for a foreign publisher: each element is flushed on its own, and its
    /// room is the ring's free space (`head + size`, as of the consumer's last grant) rather
    /// than the grants. A publisher that keeps to its demand never comes near either limit
    /// (the grants never exceed the free space); one that sends an element before the first
    /// request is buffered as long as there is space (as Pekko's input boundary does); only an
    /// element with no slot left is an overrun.
    pub(crate) fn foreign(shared: Arc<Shared<T>>) -> Self {
        let mut w = Writer::new(shared, 1);
        w.foreign = true;
        w
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.shared
    }

    /// Positions it may write now (re-reads `granted` when none is left).
    #[inline]
    pub(crate) fn room(&mut self) -> usize {
        let r = self.limit.wrapping_sub(self.written);
        if r != 0 {
            return r;
        }
        self.limit = if self.foreign {
            let head = self.shared.head.0.load(Ordering::Acquire);
            head.wrapping_add(self.shared.size())
        } else {
            self.shared.granted.0.load(Ordering::Acquire)
        };
        self.limit.wrapping_sub(self.written)
    }

    /// Writes `x` at the next position, unpublished; `Err(x)` without room (nothing written).
    #[inline]
    pub(crate) fn push(&mut self, x: T) -> Result<(), T> {
        if self.room() == 0 || self.ended {
            return Err(x);
        }
        // SAFETY: we are the boundary's one producer (claimed), `written < limit`, a `granted`
        // we acquired, and position `written` was not written before (it only grows).
        unsafe { self.shared.put(self.written, x) };
        self.written = self.written.wrapping_add(1);
        Ok(())
    }

    /// Elements written and not yet published.
    #[inline]
    pub(crate) fn pending(&self) -> usize {
        self.written.wrapping_sub(self.published)
    }

    /// Whether the batch reached its cap.
    #[inline]
    pub(crate) fn full(&self) -> bool {
        self.pending() >= self.cap
    }

    /// Publishes what was written, without telling the consumer; `true` if anything was.
    fn publish(&mut self) -> bool {
        if self.written == self.published {
            return false;
        }
        self.shared.tail.0.store(self.written, Ordering::Release);
        self.published = self.written;
        self.shared.flushes.fetch_add(1, Ordering::Relaxed);
        true
    }

    /// A flush: publishes what was written and wakes the consumer once.
    pub(crate) fn flush(&mut self) {
        if self.publish() {
            self.notify_consumer();
        }
    }

    /// Tells the consumer's island (if it started: otherwise its start catches up).
    pub(crate) fn notify_consumer(&mut self) {
        if self.consumer.is_none() {
            self.consumer = self.shared.control().consumer.clone();
        }
        if let Some(n) = &self.consumer {
            n.notify();
        }
    }

    /// Whether the consumer is gone.
    pub(crate) fn cancelled(&self) -> bool {
        self.shared.state() & CANCELLED != 0
    }

    /// Completes: flushes first (the batch goes before the signal), then `COMPLETE`.
    pub(crate) fn complete(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        if broken(LoomBreak::TerminalBeforeFlush) {
            self.shared.signal(COMPLETE);
            self.publish();
            self.notify_consumer();
            return;
        }
        self.publish();
        self.shared.signal(COMPLETE);
        self.notify_consumer();
    }

    /// Fails: flushes first if the consumer is still there, drops the batch if not; then
    /// `FAILED` with `error`.
    pub(crate) fn fail(&mut self, error: Error) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        if self.cancelled() {
            self.drop_pending();
            return;
        }
        self.publish();
        self.shared.control().error = Some(error);
        self.shared.signal(FAILED);
        self.notify_consumer();
    }

    /// Reports an element without room (the upstream broke rule 1.1): `OVERRUN`.
    pub(crate) fn overrun(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.publish();
        self.shared.signal(OVERRUN);
        self.notify_consumer();
    }

    /// Marks the end without a signal (a foreign terminal signal goes through
    /// [`Shared::terminate`]).
    pub(crate) fn end(&mut self) {
        self.ended = true;
    }

    /// Whether a terminal signal was sent.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Drops the unpublished batch in place (on cancel, or a failure after the consumer left).
    pub(crate) fn drop_pending(&mut self) {
        while self.written != self.published {
            self.written = self.written.wrapping_sub(1);
            // SAFETY: positions `[published, written)` were written by us and never published:
            // nobody else can reach them, and each is moved out once (`written` shrinks first).
            let x = unsafe { self.shared.take(self.written) };
            report::drop_guarded(x);
        }
    }
}

impl<T> Drop for Writer<T> {
    fn drop(&mut self) {
        self.drop_pending();
    }
}

/// What the consumer found.
#[derive(Debug)]
pub(crate) enum Polled<T> {
    /// The next element.
    Item(T),
    /// Nothing now: a flush or a signal will notify.
    Empty,
    /// Drained, and the producer completed.
    Complete,
    /// The producer failed or overran (the caller decides when to act: see the input side).
    Failed,
}

/// The consumer's end of a boundary.
pub(crate) struct Reader<T> {
    shared: Arc<Shared<T>>,
    head: usize,
    /// `tail` as last read.
    tail: usize,
    /// Taken since the last grant.
    taken: usize,
    /// Granted so far (the consumer alone stores `granted`).
    granted: usize,
    batch: usize,
    /// The internal producer's stage, once known.
    producer: Option<Notifier>,
    /// The foreign subscription, once taken.
    subscription: Option<SubscriptionRef>,
    /// The prefetch was granted.
    prefetched: bool,
    /// A grant was made (the next ones are replenishments).
    prefetched_once: bool,
    /// Cancelled, or the producer's end acted on: no more grants.
    closed: bool,
}

impl<T> fmt::Debug for Reader<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("head", &self.head)
            .field("tail", &self.tail)
            .field("granted", &self.granted)
            .finish_non_exhaustive()
    }
}

impl<T> Reader<T> {
    /// The consumer end of `shared`.
    pub(crate) fn new(shared: Arc<Shared<T>>) -> Self {
        let size = shared.size();
        Reader {
            shared,
            head: 0,
            tail: 0,
            taken: 0,
            granted: 0,
            batch: (size / 2).max(1),
            producer: None,
            subscription: None,
            prefetched: false,
            prefetched_once: false,
            closed: false,
        }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.shared
    }

    /// Registers the consumer's island stage (the producer notifies it from now on).
    pub(crate) fn attach(&mut self, notifier: Notifier) {
        self.shared.control().consumer = Some(notifier);
    }

    /// Acts on what arrived through `control`: a foreign subscription (prefetch, or cancel if
    /// the consumer left), the internal producer (prefetch).
    pub(crate) fn refresh(&mut self) {
        if self.prefetched {
            // Nothing more comes through `control`: a later subscription is refused at the
            // door (rule 2.5), and the lock is not taken per batch.
            return;
        }
        let (producer, subscription) = {
            let mut control = self.shared.control();
            (control.producer, control.subscription.take())
        };
        match producer {
            Producer::None => {}
            Producer::Internal => {
                if !self.prefetched {
                    self.prefetched = true;
                    let size = self.shared.size();
                    self.grant(size);
                }
            }
            Producer::Foreign => {
                if let Some(s) = subscription {
                    if self.closed {
                        s.cancel(); // the consumer left before the subscription arrived
                    } else {
                        self.subscription = Some(s);
                        self.prefetched = true;
                        let size = self.shared.size();
                        self.grant(size); // may deliver synchronously
                    }
                }
            }
        }
    }

    /// The next element, or why there is none.
    #[inline]
    pub(crate) fn poll(&mut self) -> Polled<T> {
        if self.head == self.tail {
            self.tail = self.shared.tail.0.load(Ordering::Acquire);
            if self.head == self.tail {
                return self.poll_signal();
            }
        }
        // SAFETY: `head < tail`, a `tail` we acquired, and position `head` was not taken
        // before (it only grows); we are the boundary's one consumer.
        let x = unsafe { self.shared.take(self.head) };
        self.head = self.head.wrapping_add(1);
        self.taken += 1;
        if self.taken == self.batch {
            self.taken = 0;
            self.grant(self.batch);
        }
        Polled::Item(x)
    }

    /// The ring is empty: the producer's signal, if any.
    #[cold]
    fn poll_signal(&mut self) -> Polled<T> {
        let state = self.shared.state();
        if state & (FAILED | OVERRUN) != 0 {
            return Polled::Failed;
        }
        if state & COMPLETE != 0 {
            // The completion was set after the last flush: re-read the tail.
            self.tail = self.shared.tail.0.load(Ordering::Acquire);
            if self.head != self.tail {
                return self.poll();
            }
            return Polled::Complete;
        }
        Polled::Empty
    }

    /// Whether the producer failed or overran (then buffered input is dropped: see the input
    /// side for when).
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        self.shared.state() & (FAILED | OVERRUN) != 0
    }

    /// The producer's error: its own, or an overrun of `capacity`.
    pub(crate) fn error(&mut self) -> Error {
        if self.shared.state() & OVERRUN != 0 {
            return Error::new(crate::island::IslandError::InputOverrun {
                capacity: self.shared.size(),
            });
        }
        self.shared
            .control()
            .error
            .clone()
            .unwrap_or_else(|| Error::msg("the upstream failed"))
    }

    /// Grants `n` more positions: stores the new total, then tells the producer (a foreign one
    /// through its subscription, under the rule-2.4 protocol).
    fn grant(&mut self, n: usize) {
        if self.closed {
            return;
        }
        self.granted = self.granted.wrapping_add(n);
        // Where we are: a foreign producer's room ends one ring past it.
        self.shared.head.0.store(self.head, Ordering::Release);
        if self.prefetched_once {
            self.shared.grants.fetch_add(1, Ordering::Relaxed);
        }
        self.prefetched_once = true;
        if let Some(s) = self.subscription.clone() {
            self.shared.granted.0.store(self.granted, Ordering::Release);
            self.shared.request(&s, n as u64);
            return;
        }
        if broken(LoomBreak::GrantAfterNotify) {
            self.notify_producer();
            self.shared.granted.0.store(self.granted, Ordering::Release);
            return;
        }
        self.shared.granted.0.store(self.granted, Ordering::Release);
        self.notify_producer();
    }

    fn notify_producer(&mut self) {
        if self.producer.is_none() {
            self.producer = self.shared.control().producer_stage.clone();
        }
        if let Some(n) = &self.producer {
            n.notify();
        }
    }

    /// The consumer leaves: no more grants, the buffered input is dropped, and the producer is
    /// told (a foreign one is cancelled unless it ended already).
    pub(crate) fn cancel(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        let before = self.shared.signal(CANCELLED);
        self.drop_buffered();
        // A foreign subscription recorded but not taken yet is ours to cancel too: it was
        // claimed before `CANCELLED` was set (under the lock), or it is refused at the door.
        let pending = self.shared.control().subscription.take();
        match self.subscription.take().or(pending) {
            Some(s) => {
                // After the publisher's own terminal signal the subscription is over (2.4).
                if before & (COMPLETE | FAILED) == 0 {
                    s.cancel();
                }
            }
            None => self.notify_producer(),
        }
    }

    /// Whether the producer published something not taken yet.
    pub(crate) fn has_published(&self) -> bool {
        self.shared.tail.0.load(Ordering::Acquire) != self.head
    }

    /// Whether the producer is an island being polled right now (so a flush may be near).
    pub(crate) fn producer_running(&mut self) -> bool {
        if self.subscription.is_some() || self.closed {
            return false;
        }
        if self.producer.is_none() {
            self.producer = self.shared.control().producer_stage.clone();
        }
        self.producer.as_ref().is_some_and(|n| n.is_running())
    }

    /// Whether the ring is drained and the producer completed.
    pub(crate) fn at_end(&mut self) -> bool {
        if self.head != self.tail || self.shared.state() & COMPLETE == 0 {
            return false;
        }
        // The completion was set after the last flush: re-read the tail.
        self.tail = self.shared.tail.0.load(Ordering::Acquire);
        self.head == self.tail
    }

    /// The producer's end was acted on: no more grants, the buffer is dropped. A producer that
    /// did not end (it overran) is cancelled.
    pub(crate) fn close(&mut self) {
        if self.shared.state() & (COMPLETE | FAILED) == 0 {
            self.cancel();
            return;
        }
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        self.shared.signal(CANCELLED);
        self.subscription = None;
        self.drop_buffered();
    }

    /// Drops what was published and not taken, and records where the consumer stopped.
    fn drop_buffered(&mut self) {
        if broken(LoomBreak::CancelForgetsBuffer) {
            // Skips the buffered elements (they are never dropped: a leak, not a double drop).
            self.tail = self.shared.tail.0.load(Ordering::Acquire);
            self.head = self.tail;
            self.shared.head.0.store(self.head, Ordering::Release);
            return;
        }
        self.tail = self.shared.tail.0.load(Ordering::Acquire);
        while self.head != self.tail {
            // SAFETY: `head < tail` (acquired), not taken before; we are the consumer.
            let x = unsafe { self.shared.take(self.head) };
            self.head = self.head.wrapping_add(1);
            report::drop_guarded(x);
        }
        self.shared.head.0.store(self.head, Ordering::Release);
    }
}

impl<T> Drop for Reader<T> {
    fn drop(&mut self) {
        self.drop_buffered();
    }
}
