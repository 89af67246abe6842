//! The ring shared by one [`Writer`](super::Writer) and one [`Reader`](super::Reader): its
//! slots, the state word, the consumer's released head and credit, and the rare things
//! (registered wake targets, the subscription handed over, the producer's error) behind locks
//! that are never taken per element.
//!
//! # Lineage
//!
//! A bounded single-producer single-consumer ring of a power-of-two size with free-running
//! positions and cached remote indices, as in crossbeam's `ArrayQueue` and Lamport's
//! original queue, specialised the way Pekko PR #3288 builds Pekko's batching async boundary
//! (Pekko #3288): the producer publishes a **batch** with one read-modify-write, and the
//! consumer hands slots back a batch at a time. The park protocol is the one tokio's
//! `AtomicWaker` users rely on, folded into the word that also carries the tail, as the
//! stream bridge's first ring did (a read-modify-write on the same location as the
//! publication, so no `SeqCst` fence is needed on either side).
//!
//! # Positions
//!
//! Positions count elements modulo `INDEX_MASK + 1` (the width left above the flag bits in
//! the state word); position `i` lives in slot `i & mask`. Differences are taken with
//! wrapping subtraction masked with `INDEX_MASK`, so the counts keep working across the wrap
//! (the ring is far smaller than the position space).
//!
//! | counter | who stores it | meaning |
//! |---|---|---|
//! | `state >> SHIFT` (**tail**) | the writer, by a read-modify-write per flush | positions below it are published |
//! | `head` | the reader, a release store per released batch | positions below it were moved out (slots free again) |
//! | `granted` | the reader, a release store per grant | the writer's credit: positions below it may be written (credit mode) |
//!
//! # Why a slot has one owner at a time
//!
//! The argument every `unsafe` block of the hand-off relies on:
//!
//! 1. The writer writes position `i` only when `i` is below its **limit**: `head + size` (space
//!    mode) or `granted` (credit mode), read with acquire. The reader stores `head` only after
//!    it moved every position below it out, and stores `granted` only after `head`, keeping
//!    `granted ≤ head + size` (it grants what it released, after a first grant of at most
//!    `size` at `head = 0`). So position `i`'s slot last held position `i - size`, which was
//!    moved out before the release store the writer acquired: the move happens-before the
//!    write.
//! 2. The reader reads position `i` only when `i` is below a tail it loaded with acquire; the
//!    writer wrote position `i` before the read-modify-write that published it (release).
//!    Published positions are never written again until point 1 allows it.
//! 3. Each position is moved out once: the reader's `head` and the writer's unpublished range
//!    only grow or shrink past positions they own, and the ring's `Drop` (the last owner)
//!    takes exactly `[head, tail)`, which neither side holds any more (the reader stores its
//!    final `head` when it leaves or is dropped; the writer drops what it never published).
//!
//! # Signals
//!
//! The low bits of the state word are signals. The producer's terminal bits (`COMPLETE`,
//! `FAILED`, `OVERRUN`) are set by the same read-modify-write that publishes its last batch,
//! or a later one: a reader that loads the word sees a tail and the signals together, so a
//! terminal bit is seen only with every element published before it (elements and signals in
//! one order, as through one FIFO). `SUBSCRIBED` hands a subscription over, `DROPPED` says the
//! writer went away without a terminal signal, `CANCELLED` that the reader left, and `PARKED`
//! that the reader waits for a wake-up.
//!
//! # Waking
//!
//! A publication wakes the reader only if `PARKED` was set (the reader registers its wake
//! target, then sets `PARKED` with a read-modify-write and compares what it read with what it
//! last saw: the two read-modify-writes are totally ordered, so either the writer sees
//! `PARKED` or the reader sees the new tail). A signal (subscription, terminal, overrun,
//! drop) wakes the registered reader whether parked or not: it is rare (a few per stream),
//! and a reader that stopped for want of downstream demand must still hear an error at once.
//! The reader wakes the registered writer (an island producing into the ring) when it grants
//! credit and when it leaves.

use std::fmt;
use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;
use rs_api::{Error, SubscriptionRef};

use super::guard::InFlight;
use super::wake::Wake;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex};
use crate::panics as report;

/// The reader waits for a wake-up: the next publication wakes it.
pub(super) const PARKED: usize = 1;
/// A subscription waits in the ring for the reader ([`Ring::take_subscription`]).
pub(super) const SUBSCRIBED: usize = 1 << 1;
/// The writer completed after its last publication.
pub(super) const COMPLETE: usize = 1 << 2;
/// The writer failed after its last publication (the error waits in the ring).
pub(super) const FAILED: usize = 1 << 3;
/// An element found no room: the producer broke its bound (rule 1.1 upstream).
pub(super) const OVERRUN: usize = 1 << 4;
/// The writer went away without a terminal signal.
pub(super) const DROPPED: usize = 1 << 5;
/// The reader left: nothing more is wanted.
pub(super) const CANCELLED: usize = 1 << 6;
/// The writer's terminal signals.
pub(super) const ENDED: usize = COMPLETE | FAILED | OVERRUN;
/// Signal bits below the tail.
pub(super) const SHIFT: u32 = 7;
/// The signal bits.
pub(super) const FLAGS: usize = (1 << SHIFT) - 1;
/// Positions count modulo `INDEX_MASK + 1`.
pub(super) const INDEX_MASK: usize = usize::MAX >> SHIFT;
/// The flush count of a writer that publishes each element on its own: as many as published.
pub(super) const EVERY_ELEMENT: u64 = u64::MAX;

/// Why a hand-off ended other than by completion; callers map it to their own errors
/// (`IslandError::InputOverrun`, `CompatError::Overflow`, …).
#[derive(Debug, Clone)]
pub(crate) enum Failure {
    /// The producer's own error (`on_error`, or an island's failure).
    Error(Error),
    /// An element found no room in a ring of `capacity`: the producer sent more than it was
    /// allowed (rule 1.1 broken upstream).
    Overrun {
        /// The ring's size.
        capacity: usize,
    },
    /// The producer went away without a terminal signal.
    Abandoned,
}

/// What went through a ring so far (relaxed counters, for tests and diagnostics).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stats {
    /// Elements published.
    pub(crate) published: u64,
    /// Publications of at least one element.
    pub(crate) flushes: u64,
    /// Credit granted in all.
    pub(crate) granted: u64,
    /// Grants after the first.
    pub(crate) grants: u64,
}

/// The reader's side of the shared counters: stored by the reader only.
#[derive(Debug)]
struct Released {
    /// Positions below it were moved out (the free-space bound is `head + size`).
    head: AtomicUsize,
    /// The writer's credit in credit mode.
    granted: AtomicUsize,
    /// Grants after the first (statistics).
    grants: AtomicU64,
}

/// The slots and their mask: read by both sides, never written after creation.
struct Slots<T> {
    cells: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// `cells.len() - 1`; the length is a power of two.
    mask: usize,
}

/// One hand-off between a writer and a reader (see the module docs). `W` is what either side
/// registers to be woken by the other.
pub(crate) struct Ring<T, W> {
    /// `tail << SHIFT | signals`; the writer publishes through it, the reader parks on it.
    pub(super) state: CachePadded<AtomicUsize>,
    /// Stored by the reader: its released head and the writer's credit.
    released: CachePadded<Released>,
    /// Stored by the writer: its flushes (statistics; its own line, so the per-element path of
    /// a writer that flushes each element writes nothing the reader reads).
    flushes: CachePadded<AtomicU64>,
    slots: CachePadded<Slots<T>>,
    /// The reader's wake target; locked to register and to wake, never per element.
    reader: Mutex<Option<W>>,
    /// The writer's wake target (an island producing into the ring).
    writer: Mutex<Option<W>>,
    /// A subscription from `on_subscribe`, until the reader takes it.
    subscription: Mutex<Option<SubscriptionRef>>,
    /// The writer's error (with `FAILED`), until the reader takes it.
    error: Mutex<Option<Error>>,
    /// The reader's requests on the subscription against the writer's terminal signals
    /// (rule 2.4).
    pub(super) guard: InFlight,
}

impl<T, W> fmt::Debug for Ring<T, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ring")
            .field("size", &self.size())
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

// SAFETY: the slots hold `T: Send` values moved from the writer's thread to the reader's;
// each slot is accessed by one side at a time, ordered by the release/acquire pairs on the
// state word, `head` and `granted` (module docs). Everything else is atomics and mutexes, and
// `W: Send + Sync` (the `Wake` bound) is only cloned and called.
unsafe impl<T: Send, W: Send + Sync> Send for Ring<T, W> {}
// SAFETY: as above: shared access to the slots is confined to the protocol.
unsafe impl<T: Send, W: Send + Sync> Sync for Ring<T, W> {}

impl<T, W: Wake> Ring<T, W> {
    /// A ring of at least `capacity` slots (rounded up to a power of two, at least 1),
    /// allocated once.
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        let size = capacity.max(1).next_power_of_two();
        assert!(size <= INDEX_MASK / 2, "a ring of {capacity} is too large");
        Arc::new(Ring {
            state: CachePadded::new(AtomicUsize::new(0)),
            released: CachePadded::new(Released {
                head: AtomicUsize::new(0),
                granted: AtomicUsize::new(0),
                grants: AtomicU64::new(0),
            }),
            flushes: CachePadded::new(AtomicU64::new(0)),
            slots: CachePadded::new(Slots {
                cells: (0..size)
                    .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                    .collect(),
                mask: size - 1,
            }),
            reader: Mutex::new(None),
            writer: Mutex::new(None),
            subscription: Mutex::new(None),
            error: Mutex::new(None),
            guard: InFlight::new(),
        })
    }
}

impl<T, W> Ring<T, W> {
    /// The number of slots (a power of two).
    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.slots.mask + 1
    }

    /// The signal bits, fresh (acquire).
    #[inline]
    pub(super) fn flags(&self) -> usize {
        self.state.load(Ordering::Acquire) & FLAGS
    }

    /// Whether the reader left.
    #[inline]
    pub(crate) fn cancelled(&self) -> bool {
        self.flags() & CANCELLED != 0
    }

    /// Whether the writer ended (completed, failed, overran) or went away: the subscription
    /// must not be called any more (rule 2.4). One load.
    #[inline]
    pub(crate) fn producer_ended(&self) -> bool {
        self.flags() & (ENDED | DROPPED) != 0
    }

    /// What went through the ring so far.
    pub(crate) fn stats(&self) -> Stats {
        let published = (self.state.load(Ordering::Acquire) >> SHIFT) as u64;
        let flushes = match self.flushes.load(Ordering::Relaxed) {
            EVERY_ELEMENT => published,
            n => n,
        };
        Stats {
            published,
            flushes,
            granted: self.released.granted.load(Ordering::Acquire) as u64,
            grants: self.released.grants.load(Ordering::Relaxed),
        }
    }

    /// Elements published and not yet handed back by the reader (it hands slots back a batch
    /// at a time, so this counts what it took since its last release too): the ring's depth
    /// as its writer sees it (keyed lanes' depth handle).
    pub(crate) fn depth(&self) -> usize {
        let tail = self.state.load(Ordering::Acquire) >> SHIFT;
        tail.wrapping_sub(self.head()) & INDEX_MASK
    }

    /// The rule-2.4 guard of the reader's requests.
    #[inline]
    pub(crate) fn guard(&self) -> &InFlight {
        &self.guard
    }

    /// The released head (acquire).
    #[inline]
    pub(super) fn head(&self) -> usize {
        self.released.head.load(Ordering::Acquire)
    }

    /// The writer's credit (acquire).
    #[inline]
    pub(super) fn granted(&self) -> usize {
        self.released.granted.load(Ordering::Acquire)
    }

    /// The reader releases the slots below `head` (all moved out).
    #[inline]
    pub(super) fn release_head(&self, head: usize) {
        self.released.head.store(head, Ordering::Release);
    }

    /// The reader grants credit up to `granted` (after releasing the head it covers).
    #[inline]
    pub(super) fn release_credit(&self, granted: usize, grants: u64) {
        self.released.granted.store(granted, Ordering::Release);
        self.released.grants.store(grants, Ordering::Relaxed);
    }

    /// The writer's flush count (its own statistics line).
    #[inline]
    pub(super) fn count_flushes(&self, flushes: u64) {
        self.flushes.store(flushes, Ordering::Relaxed);
    }

    /// Whether the writer publishes every element on its own (set when it is made: a hint).
    #[inline]
    pub(super) fn flushes_each(&self) -> bool {
        self.flushes.load(Ordering::Relaxed) == EVERY_ELEMENT
    }

    /// Stores the writer's error (before `FAILED` is set).
    pub(super) fn set_error(&self, error: Error) {
        *self.error.lock() = Some(error);
    }

    /// Takes the writer's error (once).
    pub(super) fn take_error(&self) -> Option<Error> {
        self.error.lock().take()
    }

    /// Stores a subscription for the reader (before `SUBSCRIBED` is set).
    pub(super) fn put_subscription(&self, subscription: SubscriptionRef) {
        *self.subscription.lock() = Some(subscription);
    }

    /// Takes the subscription handed over (once).
    pub(super) fn take_subscription(&self) -> Option<SubscriptionRef> {
        self.subscription.lock().take()
    }

    /// Moves the element at position `i` out.
    ///
    /// # Safety
    ///
    /// Position `i` holds an initialised element that the caller owns now: published to the
    /// reader and not moved out (the caller is the reader, or the ring's last owner), or
    /// written and never published (the caller is the writer).
    #[inline]
    pub(super) unsafe fn take(&self, i: usize) -> T {
        let slots = &*self.slots;
        // SAFETY: per the contract the slot holds an initialised `T` that only the caller may
        // touch now (module docs, points 1–3), and it is moved out once: the caller's position
        // moves past it.
        slots.cells[i & slots.mask].with_mut(|p| unsafe { (*p).assume_init_read() })
    }

    /// Writes `x` at position `i`.
    ///
    /// # Safety
    ///
    /// The caller is the writer, `i` is below a limit it acquired (module docs, point 1), and
    /// position `i` was not written before.
    #[inline]
    pub(super) unsafe fn put(&self, i: usize, x: T) {
        let slots = &*self.slots;
        // SAFETY: per the contract the slot's previous occupant was moved out before the
        // release store the writer acquired: the slot is the writer's alone, and writing over a
        // moved-out `MaybeUninit` drops nothing.
        slots.cells[i & slots.mask].with_mut(|p| unsafe {
            (*p).write(x);
        });
    }
}

impl<T, W: Wake> Ring<T, W> {
    /// Registers `waker` as the reader's wake target (kept if it wakes the same owner).
    pub(super) fn register_reader(&self, waker: &W) {
        register(&self.reader, waker);
    }

    /// Registers `waker` as the writer's wake target.
    pub(super) fn register_writer(&self, waker: &W) {
        register(&self.writer, waker);
    }

    /// The writer's wake target, if registered.
    pub(super) fn writer_waker(&self) -> Option<W> {
        self.writer.lock().clone()
    }

    /// Wakes the reader (called by the writer when `prev`, the state before its change, had
    /// `PARKED`, or for a signal): clears `PARKED` first, so that the reader's next park sets
    /// it again, then wakes outside the lock.
    #[cold]
    pub(super) fn wake_reader(&self, prev: usize) {
        if prev & PARKED != 0 {
            self.state.fetch_and(!PARKED, Ordering::AcqRel);
        }
        let waker = self.reader.lock().clone();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Sets signal `bits` and wakes the reader unless it left; returns the bits before.
    pub(super) fn signal(&self, bits: usize) -> usize {
        let prev = self.state.fetch_or(bits, Ordering::AcqRel);
        if prev & CANCELLED == 0 {
            self.wake_reader(prev);
        }
        prev
    }
}

/// Registers `waker` in `slot` unless the one there wakes the same owner.
fn register<W: Wake>(slot: &Mutex<Option<W>>, waker: &W) {
    let mut slot = slot.lock();
    match &*slot {
        Some(w) if w.will_wake(waker) => {}
        _ => *slot = Some(waker.clone()),
    }
}

impl<T, W> Drop for Ring<T, W> {
    fn drop(&mut self) {
        // The last owner: what was published after the reader stopped is still here.
        let tail = self.state.load(Ordering::Acquire) >> SHIFT;
        let mut i = self.head();
        while i != tail {
            // SAFETY: `[head, tail)` holds published elements the reader never took (it stored
            // its final `head` when it left or was dropped); we are the last owner, so nobody
            // else touches the slots.
            let x = unsafe { self.take(i) };
            i = i.wrapping_add(1) & INDEX_MASK;
            report::drop_guarded(x);
        }
    }
}
