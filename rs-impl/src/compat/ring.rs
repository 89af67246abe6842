//! The handoff between a subscriber (the producer side: the publisher's signals, serial by
//! rule 1.3) and one async consumer (a `Stream`'s `poll_next`): a bounded single-producer,
//! single-consumer ring plus a state word that carries the ring's tail and the signals.
//!
//! # Why this shape
//!
//! * **No allocation and no lock per element.** The ring is allocated once (a power of two of
//!   at least the demand the consumer may have outstanding). Per element, the producer writes
//!   a slot and makes one read-modify-write of the state word; the consumer reads the slot and
//!   stores its head. Each side caches the other's index and re-reads it only when its cache
//!   says empty (consumer) or full (producer).
//! * **A wake-up only when the consumer is parked.** The consumer registers its waker and
//!   sets `PARKED` with a read-modify-write of the same state word that the producer's
//!   publication increments. Read-modify-writes of one location are totally ordered, so either
//!   the producer sees `PARKED` (and wakes), or the consumer's `fetch_or` sees the producer's
//!   new tail (and does not sleep): no lost wake-up, with no `SeqCst` fence on either side.
//!   The loom model `compat_stream` checks exactly this race, next to a broken twin.
//! * **Signals in the same word.** `on_subscribe`, the terminal signals, an overflow (a
//!   publisher that broke rule 1.1) and the subscriber being dropped are bits next to the
//!   tail, so one load tells the consumer the tail and whether the stream has ended after it.

use std::mem::MaybeUninit;
use std::task::Waker;

use rs_api::{Error, SubscriptionRef};

use super::calls::InFlight;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::{Arc, Mutex};

/// The consumer is parked: wake it on the next change.
pub(crate) const PARKED: usize = 1;
/// `on_subscribe` arrived; the subscription waits in [`Ring::take_subscription`].
pub(crate) const SUBSCRIBED: usize = 1 << 1;
/// `on_complete` or `on_error` arrived (the error, if any, in [`Ring::take_error`]).
pub(crate) const DONE: usize = 1 << 2;
/// The publisher sent more than was requested (rule 1.1) and an element did not fit.
pub(crate) const OVERFLOW: usize = 1 << 3;
/// The publisher dropped the subscriber (after its terminal signal, after cancel, or without
/// either: a broken publisher).
pub(crate) const CLOSED: usize = 1 << 4;
/// The consumer is gone: a late `on_subscribe` must cancel its subscription itself.
pub(crate) const GONE: usize = 1 << 5;
/// Rounds of [`Outlet::spin`] (round `r` spins `2^r` pause hints).
const SPIN_ROUNDS: u32 = 7;
/// Bits below the tail.
const SHIFT: u32 = 6;
const FLAGS: usize = (1 << SHIFT) - 1;
/// One element published: the tail's unit in the state word.
const ONE: usize = 1 << SHIFT;
/// Indices count modulo `INDEX_MASK + 1` (the tail's width in the state word).
const INDEX_MASK: usize = usize::MAX >> SHIFT;

/// The state shared by the two halves.
pub(crate) struct Ring<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    /// `slots.len() - 1`; the length is a power of two.
    mask: usize,
    /// `tail << SHIFT | flags`. Only the producer adds to the tail.
    state: AtomicUsize,
    /// The consumer's next index (modulo `INDEX_MASK + 1`). Only the consumer stores it.
    head: AtomicUsize,
    /// The parked consumer's waker; locked only to park and to wake, never per element.
    waker: Mutex<Option<Waker>>,
    /// The subscription, from `on_subscribe` until the consumer takes it.
    subscription: Mutex<Option<SubscriptionRef>>,
    /// The error of `on_error`, until the consumer takes it.
    error: Mutex<Option<Error>>,
    /// The consumer's requests against the terminal signals (rule 2.4).
    pub(crate) calls: InFlight,
}

// SAFETY: the slots are the only non-`Sync` part. A slot is written only by the producer half
// (one owner at a time: `Inlet` is not `Clone`, and its methods take `&mut self`) while it is
// outside `head..tail`, and read only by the consumer half (`Outlet`, likewise) while inside.
// The producer publishes a slot with the `AcqRel` increment of the tail, which the consumer
// acquires before reading it; the consumer gives it back with the `Release` store of `head`,
// which the producer acquires before reusing it. Elements cross threads, hence `T: Send`.
unsafe impl<T: Send> Sync for Ring<T> {}

/// Creates a ring for at least `capacity` elements (rounded up to a power of two, at least 1).
pub(crate) fn ring<T>(capacity: usize) -> (Inlet<T>, Outlet<T>) {
    let len = capacity.max(1).next_power_of_two();
    let slots = (0..len)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect::<Vec<_>>()
        .into_boxed_slice();
    let ring = Arc::new(Ring {
        slots,
        mask: len - 1,
        state: AtomicUsize::new(0),
        head: AtomicUsize::new(0),
        waker: Mutex::new(None),
        subscription: Mutex::new(None),
        error: Mutex::new(None),
        calls: InFlight::new(),
    });
    (
        Inlet {
            ring: ring.clone(),
            tail: 0,
            head: 0,
            overflowed: false,
        },
        Outlet {
            ring,
            head: 0,
            tail: 0,
            flags: 0,
        },
    )
}

impl<T> Ring<T> {
    /// The number of slots.
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Sets `bits`; wakes the consumer if it was parked.
    fn signal(&self, bits: usize) {
        let prev = self.state.fetch_or(bits, Ordering::AcqRel);
        if prev & PARKED != 0 {
            self.wake();
        }
    }

    /// Clears `PARKED` and wakes the registered waker (outside the lock).
    #[cold]
    fn wake(&self) {
        self.state.fetch_and(!PARKED, Ordering::AcqRel);
        let waker = self.waker.lock().clone();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Whether no terminal signal (nor an overflow, nor the subscriber's drop) has arrived:
    /// the subscription may still be called. One load; asked once per request, not per element.
    pub(crate) fn is_open(&self) -> bool {
        self.state.load(Ordering::Acquire) & (DONE | OVERFLOW | CLOSED) == 0
    }

    /// Takes the subscription handed over by `on_subscribe` (once).
    pub(crate) fn take_subscription(&self) -> Option<SubscriptionRef> {
        self.subscription.lock().take()
    }

    /// Takes the error of `on_error` (once).
    pub(crate) fn take_error(&self) -> Option<Error> {
        self.error.lock().take()
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // Both halves are gone: drop the elements published and never consumed.
        let tail = self.state.load(Ordering::Acquire) >> SHIFT;
        let mut head = self.head.load(Ordering::Acquire);
        while head != tail {
            // SAFETY: `head..tail` holds initialised elements (published, not consumed), and
            // with both halves gone nobody else touches the slots.
            self.slots[head & self.mask].with_mut(|p| unsafe { (*p).assume_init_drop() });
            head = (head + 1) & INDEX_MASK;
        }
    }
}

/// The producer half, owned by the subscriber.
pub(crate) struct Inlet<T> {
    ring: Arc<Ring<T>>,
    /// The next index to write (the producer's own copy of the tail).
    tail: usize,
    /// The consumer's head as last read.
    head: usize,
    /// An element did not fit once: everything after it is dropped.
    overflowed: bool,
}

impl<T> Inlet<T> {
    /// The shared state.
    pub(crate) fn ring(&self) -> &Ring<T> {
        &self.ring
    }

    /// Publishes `item`. An element that does not fit (the publisher sent more than was
    /// requested: rule 1.1) is dropped and `OVERFLOW` is signalled.
    #[inline]
    pub(crate) fn push(&mut self, item: T) {
        if self.overflowed {
            return;
        }
        let len = self.ring.slots.len();
        if self.tail.wrapping_sub(self.head) & INDEX_MASK >= len {
            self.head = self.ring.head.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.head) & INDEX_MASK >= len {
                self.overflowed = true;
                drop(item);
                self.ring.signal(OVERFLOW);
                return;
            }
        }
        // SAFETY: the slot at `tail` is outside `head..tail` (checked above against the
        // consumer's released head), so the consumer does not read it, and only this half
        // writes slots.
        self.ring.slots[self.tail & self.ring.mask].with_mut(|p| unsafe {
            (*p).write(item);
        });
        self.tail = (self.tail + 1) & INDEX_MASK;
        let prev = self.ring.state.fetch_add(ONE, Ordering::AcqRel);
        if prev & PARKED != 0 {
            self.ring.wake();
        }
    }

    /// Hands the subscription to the consumer. Returns it back when the consumer is gone
    /// already (the caller must cancel it).
    pub(crate) fn subscribed(&mut self, subscription: SubscriptionRef) -> Option<SubscriptionRef> {
        *self.ring.subscription.lock() = Some(subscription);
        let prev = self.ring.state.fetch_or(SUBSCRIBED, Ordering::AcqRel);
        if prev & GONE != 0 {
            return self.ring.take_subscription();
        }
        if prev & PARKED != 0 {
            self.ring.wake();
        }
        None
    }

    /// `on_complete` (`None`) or `on_error`.
    pub(crate) fn done(&mut self, error: Option<Error>) {
        // Rule 2.4: from here on the consumer starts no request, and one it is making on its
        // thread right now is waited for.
        self.ring.calls.terminal();
        if let Some(e) = error {
            *self.ring.error.lock() = Some(e);
        }
        self.ring.signal(DONE);
    }
}

impl<T> Drop for Inlet<T> {
    fn drop(&mut self) {
        self.ring.signal(CLOSED);
    }
}

/// The consumer half, owned by the stream.
pub(crate) struct Outlet<T> {
    ring: Arc<Ring<T>>,
    /// The next index to read (the consumer's own copy of the head).
    head: usize,
    /// The producer's tail as last read.
    tail: usize,
    /// The signal bits as last read.
    flags: usize,
}

impl<T> Outlet<T> {
    /// The shared state.
    pub(crate) fn ring(&self) -> &Ring<T> {
        &self.ring
    }

    /// The signal bits as last read (by [`pop`](Self::pop) or [`park`](Self::park)).
    pub(crate) fn flags(&self) -> usize {
        self.flags
    }

    /// Takes the next element, if one is published. When it finds nothing it has just read
    /// the state word, so [`flags`](Self::flags) is current.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.head == self.tail {
            let state = self.ring.state.load(Ordering::Acquire);
            self.tail = state >> SHIFT;
            self.flags = state & FLAGS;
            if self.head == self.tail {
                return None;
            }
        }
        // SAFETY: `head` is inside `head..tail`: the producer published this slot with the
        // increment we acquired, and does not write it again before we release `head`.
        let item = self.ring.slots[self.head & self.ring.mask]
            .with(|p| unsafe { (*p).assume_init_read() });
        self.head = (self.head + 1) & INDEX_MASK;
        self.ring.head.store(self.head, Ordering::Release);
        Some(item)
    }

    /// Nothing to take now: when elements are `on_the_way` (requested, not arrived), watches
    /// for them briefly ([`spin`](Self::spin)), then [parks](Self::park). `true`: parked (the
    /// caller returns `Pending`); `false`: something arrived, look again.
    pub(crate) fn wait(&mut self, waker: &Waker, on_the_way: bool) -> bool {
        if on_the_way && self.spin() {
            return false;
        }
        self.park(waker)
    }

    /// Watches the state word for a short while before the caller parks: `true` as soon as it
    /// changes (an element or a signal arrived). A bounded spin (crossbeam's `Backoff::spin`
    /// for [`SPIN_ROUNDS`] rounds: 127 pause hints in all, a microsecond or two, never a
    /// yield): a producer in the middle of a burst publishes its next element sooner than a
    /// park and a wake-up take (each a system call and a thread switch), and without it a
    /// consumer faster than its producer parks once per element. Not in the loom build, where
    /// it would only multiply the interleavings without changing what can happen.
    fn spin(&self) -> bool {
        if crate::loom::IS_LOOM {
            return false;
        }
        let seen = (self.tail << SHIFT | self.flags) & !PARKED;
        let backoff = crossbeam_utils::Backoff::new();
        for _ in 0..SPIN_ROUNDS {
            backoff.spin();
            // Relaxed: only a hint; `pop` and `park` read the word again with Acquire.
            if self.ring.state.load(Ordering::Relaxed) & !PARKED != seen {
                return true;
            }
        }
        false
    }

    /// Parks: registers `waker` and sets `PARKED`, unless something arrived meanwhile.
    /// Returns `true` if parked (the caller returns `Pending`), `false` if there is something
    /// new to look at (elements or signals); then `PARKED` is cleared again.
    fn park(&mut self, waker: &Waker) -> bool {
        {
            let mut slot = self.ring.waker.lock();
            match &*slot {
                Some(w) if w.will_wake(waker) => {}
                _ => *slot = Some(waker.clone()),
            }
        }
        let prev = self.ring.state.fetch_or(PARKED, Ordering::AcqRel);
        let seen = self.tail << SHIFT | self.flags;
        if prev & !PARKED == seen & !PARKED {
            return true;
        }
        self.ring.state.fetch_and(!PARKED, Ordering::AcqRel);
        false
    }

    /// Marks the consumer gone. Returns the subscription if `on_subscribe` handed one over
    /// that the consumer never took (the caller must cancel it).
    pub(crate) fn leave(&mut self) -> Option<SubscriptionRef> {
        let prev = self.ring.state.fetch_or(GONE, Ordering::AcqRel);
        if prev & SUBSCRIBED != 0 {
            self.ring.take_subscription()
        } else {
            None
        }
    }
}
