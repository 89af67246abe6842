//! [`Spsc`]: the lean sibling of the hand-off ring, for a queue that is created lazily and
//! drained by a drain loop that owns the consumer's turn (merge's per-inner queues).
//!
//! # Contract
//!
//! * **One producer, one consumer, a bounded array of a power-of-two size**, allocated once
//!   when the queue is made: no lock and no allocation per element. The producer holds a
//!   [`SpscProducer`], the consumer a [`SpscConsumer`]; each half holds the queue by an
//!   `Arc`, so the storage is freed when the last half is dropped and never recycled (the
//!   RxJava #1908 hazard — a queue returned to a pool while its producer still writes into it
//!   — cannot be written).
//! * **No signals, no waking:** a terminal signal lives outside the queue (its owner keeps
//!   it), so every slot is for elements; whoever drains is told by its own drain loop.
//! * **Full:** [`SpscProducer::offer`] gives the element back; the owner reports the
//!   producer's broken bound (a missing-backpressure error), nothing is dropped silently.
//! * **Order:** elements come out in the order they went in.
//!
//! # Why a slot has one owner at a time
//!
//! The producer writes position `i` only when `i < head + size` for a `head` it loaded with
//! acquire: the consumer stores `head` (release) after moving position `i - size` out. The
//! consumer reads position `i` only when `i < tail` for a `tail` it loaded with acquire: the
//! producer stores `tail` (release) after writing it. Each position is moved out once, by the
//! consumer, or by the queue's `Drop` for `[head, tail)` once neither half is left.

use std::fmt;
use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Arc;
use crate::panics as report;

/// The shared storage of one queue (see the module docs).
pub(crate) struct Spsc<T> {
    /// Positions below it were moved out; stored by the consumer.
    head: CachePadded<AtomicUsize>,
    /// Positions below it were written; stored by the producer.
    tail: CachePadded<AtomicUsize>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
}

impl<T> fmt::Debug for Spsc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Spsc")
            .field("size", &(self.mask + 1))
            .field("head", &self.head.load(Ordering::Relaxed))
            .field("tail", &self.tail.load(Ordering::Relaxed))
            .finish()
    }
}

// SAFETY: the slots hold `T: Send` values moved from the producer's thread to the consumer's;
// each slot is reached by one side at a time, ordered by the release/acquire pairs on `head`
// and `tail` (module docs).
unsafe impl<T: Send> Send for Spsc<T> {}
// SAFETY: as above: shared access to the slots is confined to the protocol.
unsafe impl<T: Send> Sync for Spsc<T> {}

/// Makes a queue of at least `capacity` slots (rounded up to a power of two, at least 1) and
/// its two halves.
pub(crate) fn spsc<T>(capacity: usize) -> (SpscProducer<T>, SpscConsumer<T>) {
    let size = capacity.max(1).next_power_of_two();
    let q = Arc::new(Spsc {
        head: CachePadded::new(AtomicUsize::new(0)),
        tail: CachePadded::new(AtomicUsize::new(0)),
        slots: (0..size)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect(),
        mask: size - 1,
    });
    (
        SpscProducer {
            q: q.clone(),
            tail: 0,
            limit: size,
        },
        SpscConsumer {
            q,
            head: 0,
            tail: 0,
        },
    )
}

/// The producer's half of an [`Spsc`].
pub(crate) struct SpscProducer<T> {
    q: Arc<Spsc<T>>,
    /// The next position to write (the producer's own copy of `tail`).
    tail: usize,
    /// `head + size` as last loaded.
    limit: usize,
}

impl<T> fmt::Debug for SpscProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpscProducer")
            .field("tail", &self.tail)
            .finish_non_exhaustive()
    }
}

impl<T> SpscProducer<T> {
    /// Appends `x`; `Err(x)` when the queue is full (nothing written).
    #[inline]
    pub(crate) fn offer(&mut self, x: T) -> Result<(), T> {
        if self.tail == self.limit {
            self.limit = self
                .q
                .head
                .load(Ordering::Acquire)
                .wrapping_add(self.q.mask + 1);
            if self.tail == self.limit {
                return Err(x);
            }
        }
        let slot = &self.q.slots[self.tail & self.q.mask];
        // SAFETY: we are the one producer and `tail < head + size` for a `head` we acquired:
        // the slot's previous occupant was moved out before that release store (module docs),
        // so the slot is ours, and writing over a moved-out `MaybeUninit` drops nothing.
        slot.with_mut(|p| unsafe {
            (*p).write(x);
        });
        self.tail = self.tail.wrapping_add(1);
        self.q.tail.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Whether the consumer took everything written (exact while the consumer is not
    /// running: the caller holds the drain loop).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.q.head.load(Ordering::Acquire) == self.tail
    }
}

/// The consumer's half of an [`Spsc`].
pub(crate) struct SpscConsumer<T> {
    q: Arc<Spsc<T>>,
    /// The next position to take (the consumer's own copy of `head`).
    head: usize,
    /// `tail` as last loaded.
    tail: usize,
}

impl<T> fmt::Debug for SpscConsumer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpscConsumer")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

impl<T> SpscConsumer<T> {
    /// Takes the oldest element, if any.
    #[inline]
    pub(crate) fn poll(&mut self) -> Option<T> {
        if self.head == self.tail {
            self.tail = self.q.tail.load(Ordering::Acquire);
            if self.head == self.tail {
                return None;
            }
        }
        let slot = &self.q.slots[self.head & self.q.mask];
        // SAFETY: `head < tail` for a `tail` we acquired: the producer wrote the position
        // before its release store and will not write it again until we store a `head` past
        // it; we are the one consumer and take each position once (`head` grows past it).
        let x = slot.with_mut(|p| unsafe { (*p).assume_init_read() });
        self.head = self.head.wrapping_add(1);
        self.q.head.store(self.head, Ordering::Release);
        Some(x)
    }

    /// Whether nothing is left to take (a fresh look at the producer's `tail`).
    #[inline]
    pub(crate) fn is_empty(&mut self) -> bool {
        if self.head != self.tail {
            return false;
        }
        self.tail = self.q.tail.load(Ordering::Acquire);
        self.head == self.tail
    }
}

impl<T> Drop for Spsc<T> {
    fn drop(&mut self) {
        // The last owner: neither half is left, and both stored their final positions.
        let mut i = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        while i != tail {
            let slot = &self.slots[i & self.mask];
            // SAFETY: `[head, tail)` holds written elements never taken, and we are the last
            // owner: nobody else touches the slots.
            let x = slot.with_mut(|p| unsafe { (*p).assume_init_read() });
            i = i.wrapping_add(1);
            report::drop_guarded(x);
        }
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use super::spsc;

    #[test]
    fn fills_drains_and_wraps_in_order() {
        let (mut p, mut c) = spsc::<u32>(3); // rounded up to 4
        for round in 0..5u32 {
            for i in 0..4 {
                p.offer(round * 10 + i).unwrap();
            }
            assert_eq!(p.offer(99), Err(99), "full at its size");
            assert!(!p.is_empty());
            for i in 0..4 {
                assert_eq!(c.poll(), Some(round * 10 + i));
            }
            assert_eq!(c.poll(), None);
            assert!(c.is_empty() && p.is_empty());
        }
    }

    #[test]
    fn the_last_half_drops_what_was_never_taken() {
        let payload = std::sync::Arc::new(());
        let (mut p, c) = spsc(4);
        p.offer(payload.clone()).unwrap();
        p.offer(payload.clone()).unwrap();
        drop(c);
        assert_eq!(std::sync::Arc::strong_count(&payload), 3);
        drop(p);
        assert_eq!(std::sync::Arc::strong_count(&payload), 1);
    }
}
