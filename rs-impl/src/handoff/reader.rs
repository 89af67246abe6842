//! The consumer's end of a ring: [`Reader`].

use std::fmt;

use rs_api::{Error, SubscriptionRef};

use super::ring::{
    Failure, Ring, CANCELLED, COMPLETE, DROPPED, FAILED, FLAGS, INDEX_MASK, OVERRUN, PARKED, SHIFT,
    SUBSCRIBED,
};
use super::wake::Wake;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::Ordering;
use crate::loom::sync::Arc;
use crate::panics as report;

/// The run [`Reader::spin`] waits for (fewer when fewer are on their way).
const SPIN_RUN: usize = 32;

/// What the reader found.
#[derive(Debug)]
pub(crate) enum Polled<T> {
    /// The next element.
    Item(T),
    /// Nothing now: a publication (to a parked reader) or a signal will wake it.
    Empty,
    /// Drained, and the writer completed.
    Complete,
    /// Drained as far as the writer got, and it failed, overran or went away: see
    /// [`Reader::failure`] (the caller decides whether buffered elements go first: they do
    /// here, since `poll` reports this only when the ring is empty).
    Failed,
}

/// The consumer's end of a ring: moves elements out, hands slots back in batches, grants
/// credit, parks, and owns the subscription it took from the writer.
///
/// Per element, [`poll`](Self::poll) reads one slot and counts it; every `batch` elements it
/// **releases** them: stores its head (the writer's free space) and, in credit mode, extends
/// the writer's credit by as much and announces it — a request on the subscription, or a
/// wake-up of the writer's island.
pub(crate) struct Reader<T, W: Wake> {
    ring: Arc<Ring<T, W>>,
    /// The next position to take.
    head: usize,
    /// The tail as last read.
    tail: usize,
    /// The signal bits as last read (with the tail, in one load).
    flags: usize,
    /// The head at which the next release is due (every `batch` taken: one comparison per
    /// element).
    release_at: usize,
    /// Releases each element (`batch` 1 without credit: the bridges), with no bookkeeping.
    per_element: bool,
    /// Release every this many taken (at least 1).
    batch: usize,
    /// Whether releases extend the writer's credit (credit mode).
    credit: bool,
    /// The credit granted so far (the reader alone stores it).
    granted: usize,
    /// An explicit grant was made: releases are announced from now on.
    announcing: bool,
    /// Grants after the first (statistics).
    grants: u64,
    /// The subscription taken from the writer, once taken.
    subscription: Option<SubscriptionRef>,
    /// The writer's wake target, once known.
    writer: Option<W>,
    /// Left: nothing is taken any more.
    left: bool,
}

impl<T, W: Wake> fmt::Debug for Reader<T, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("head", &self.head)
            .field("tail", &self.tail)
            .field("granted", &self.granted)
            .field("left", &self.left)
            .finish_non_exhaustive()
    }
}

impl<T, W: Wake> Reader<T, W> {
    /// The consumer end of `ring` (one per ring: the caller makes sure), releasing every
    /// `batch` elements taken; with `credit`, each release also extends the writer's credit.
    pub(crate) fn new(ring: Arc<Ring<T, W>>, batch: usize, credit: bool) -> Self {
        let batch = batch.max(1);
        Reader {
            ring,
            head: 0,
            tail: 0,
            flags: 0,
            release_at: batch,
            per_element: batch == 1 && !credit,
            batch,
            credit,
            granted: 0,
            announcing: false,
            grants: 0,
            subscription: None,
            writer: None,
            left: false,
        }
    }

    /// The ring.
    #[inline]
    pub(crate) fn ring(&self) -> &Arc<Ring<T, W>> {
        &self.ring
    }

    /// Registers the reader's wake target (kept if it wakes the same owner).
    pub(crate) fn register(&self, waker: &W) {
        self.ring.register_reader(waker);
    }

    /// Loads the state: `true` if there is something to take.
    #[inline]
    fn refresh(&mut self) -> bool {
        if self.left {
            return false;
        }
        let state = self.ring.state.load(Ordering::Acquire);
        self.tail = state >> SHIFT;
        self.flags = state & FLAGS;
        self.head != self.tail
    }

    /// The next element, or why there is none (from one load of the state: a terminal signal
    /// is reported only once everything published before it was taken).
    #[inline]
    pub(crate) fn poll(&mut self) -> Polled<T> {
        if self.head == self.tail && !self.refresh() {
            return self.status();
        }
        // SAFETY: `head` is below a tail we acquired and was not taken before (it only grows,
        // modulo the wrap); we are the ring's one reader (ring module docs, point 2).
        let x = unsafe { self.ring.take(self.head) };
        self.head = self.head.wrapping_add(1) & INDEX_MASK;
        if self.per_element {
            self.ring.release_head(self.head);
        } else if self.head == self.release_at {
            self.release();
        }
        Polled::Item(x)
    }

    /// The ring is empty: the writer's signal, if any.
    #[cold]
    fn status(&self) -> Polled<T> {
        let f = self.flags;
        if f & (FAILED | OVERRUN) != 0 {
            Polled::Failed
        } else if f & COMPLETE != 0 {
            Polled::Complete
        } else if f & DROPPED != 0 {
            Polled::Failed
        } else {
            Polled::Empty
        }
    }

    /// Hands the last `batch` slots back: stores the head and, in credit mode, the credit
    /// (announced once an explicit grant opened it).
    #[inline]
    fn release(&mut self) {
        self.release_at = self.head.wrapping_add(self.batch) & INDEX_MASK;
        self.ring.release_head(self.head);
        if !self.credit {
            return;
        }
        self.granted = self.granted.wrapping_add(self.batch) & INDEX_MASK;
        if !self.announcing {
            self.ring.release_credit(self.granted, self.grants);
            return;
        }
        self.grants += 1;
        self.extend_credit(self.batch);
    }

    /// Grants `n` positions of credit (a prefetch): at most what keeps the credit within one
    /// ring past the head (`size` at first). Stores the head and the credit, then announces
    /// it: a request of `n` on the subscription (rule 2.4 guarded), or a wake-up of the writer.
    pub(crate) fn grant(&mut self, n: usize) {
        if self.left {
            return;
        }
        self.ring.release_head(self.head);
        self.granted = self.granted.wrapping_add(n) & INDEX_MASK;
        if std::mem::replace(&mut self.announcing, true) {
            self.grants += 1;
        }
        self.extend_credit(n);
    }

    /// Stores the credit, then announces the `n` new positions (in that order: a writer woken
    /// by the announcement must find the credit).
    #[inline]
    fn extend_credit(&mut self, n: usize) {
        if fault::active(Fault::GrantAfterNotify) {
            self.announce(n);
            self.ring.release_credit(self.granted, self.grants);
            return;
        }
        self.ring.release_credit(self.granted, self.grants);
        self.announce(n);
    }

    /// Tells the writer about `n` more: through the subscription, or by waking it.
    fn announce(&mut self, n: usize) {
        if self.subscription.is_some() {
            self.request(u64::try_from(n).unwrap_or(u64::MAX));
        } else {
            self.wake_writer();
        }
    }

    /// Requests `n` on the subscription taken, if any: never once the writer ended or went
    /// away or the reader left, and a terminal signal arriving meanwhile on another thread
    /// waits for the call to return (rule 2.4). `true` if the request was made.
    pub(crate) fn request(&self, n: u64) -> bool {
        let Some(s) = &self.subscription else {
            return false;
        };
        if self.left || self.ring.producer_ended() {
            return false;
        }
        self.ring.guard().call(|| s.request(n)) // may deliver synchronously, on this thread
    }

    /// Takes the subscription the writer handed over, if it did; `true` once one is held.
    pub(crate) fn take_subscription(&mut self) -> bool {
        if self.subscription.is_none() && !self.left && self.ring.flags() & SUBSCRIBED != 0 {
            self.subscription = self.ring.take_subscription();
        }
        self.subscription.is_some()
    }

    /// Whether a subscription was taken.
    #[inline]
    pub(crate) fn has_subscription(&self) -> bool {
        self.subscription.is_some()
    }

    /// The writer's wake target, once it registered one.
    pub(crate) fn writer(&mut self) -> Option<&W> {
        if self.writer.is_none() {
            self.writer = self.ring.writer_waker();
        }
        self.writer.as_ref()
    }

    fn wake_writer(&mut self) {
        if let Some(w) = self.writer() {
            w.wake();
        }
    }

    /// Whether the writer publishes every element on its own (a batch of one: a foreign
    /// publisher's input side, an unbatched boundary); a hint, read relaxed.
    #[inline]
    pub(crate) fn writer_flushes_each(&self) -> bool {
        self.ring.flushes_each()
    }

    /// Whether the writer published something not taken yet (a fresh look).
    #[inline]
    pub(crate) fn has_published(&self) -> bool {
        !self.left && self.ring.state.load(Ordering::Acquire) >> SHIFT != self.head
    }

    /// Whether the writer failed, overran or went away (a fresh look; buffered elements may
    /// remain).
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        let f = self.ring.flags();
        f & (FAILED | OVERRUN) != 0 || f & (DROPPED | COMPLETE) == DROPPED
    }

    /// Whether the ring is drained and the writer completed.
    pub(crate) fn at_end(&mut self) -> bool {
        if self.head != self.tail {
            return false;
        }
        self.refresh();
        self.head == self.tail && self.flags & COMPLETE != 0
    }

    /// Why the writer ended, when [`poll`](Self::poll) said [`Polled::Failed`] (its error is
    /// handed out once; later calls say it failed without it).
    pub(crate) fn failure(&mut self) -> Failure {
        let f = self.ring.flags();
        if f & OVERRUN != 0 {
            Failure::Overrun {
                capacity: self.ring.size(),
            }
        } else if f & FAILED != 0 {
            Failure::Error(
                self.ring
                    .take_error()
                    .unwrap_or_else(|| Error::msg("the upstream failed")),
            )
        } else {
            Failure::Abandoned
        }
    }

    /// Parks: sets `PARKED` unless something arrived since the last look; `true` if parked
    /// (a publication or a signal wakes the registered wake target), `false` if there is
    /// something new to look at (then `PARKED` is cleared again).
    ///
    /// The read-modify-write is on the word the writer publishes through: either the writer's
    /// publication comes after it and sees `PARKED`, or it comes before and this sees the new
    /// tail (ring module docs, "Waking"). Register the wake target first.
    pub(crate) fn park(&mut self) -> bool {
        if self.head != self.tail || self.left {
            return false;
        }
        let seen = (self.tail << SHIFT) | self.flags;
        let prev = self.ring.state.fetch_or(PARKED, Ordering::AcqRel);
        if fault::active(Fault::ReaderParksBlind) || (prev ^ seen) & !PARKED == 0 {
            return true;
        }
        self.ring.state.fetch_and(!PARKED, Ordering::AcqRel);
        false
    }

    /// Watches the state word for a short while before the caller parks, for a **run**:
    /// `true` once at least `min(on_the_way, SPIN_RUN)` elements are there or a signal
    /// arrived, or, when the spin ends, if anything arrived at all. A bounded spin
    /// (the crate's [`spin_until`](crate::loom::spin_until): 127 pause hints in all, about
    /// 3 µs on the machine measured, never a yield): a producer in the middle of a burst
    /// publishes its next elements sooner than a park and a wake-up take (each a system call
    /// and a thread switch), and without it a consumer faster than its producer parks once per
    /// element. It waits for a run rather than for the first element: a consumer that takes
    /// each element the moment it is published reads the state word once per element while
    /// the producer writes it once per element, and the word's cache line then crosses
    /// between the two cores twice per element (measured for issue 24: the producer-thread
    /// `to_stream` row fell to 3–5 M el/s in that mode). Waiting costs a run's first element
    /// at most the spin's length. Not in the loom build, where it would only multiply the
    /// interleavings without changing what can happen.
    pub(crate) fn spin(&self, on_the_way: usize) -> bool {
        let seen = ((self.tail << SHIFT) | self.flags) & !PARKED;
        let run = on_the_way.clamp(1, SPIN_RUN);
        let mut arrived = false;
        let ready = crate::loom::spin_until(|| {
            // Relaxed: only a hint; `poll` and `park` read the word again with acquire.
            let now = self.ring.state.load(Ordering::Relaxed) & !PARKED;
            if now == seen {
                return false;
            }
            arrived = true;
            let ready = (now >> SHIFT).wrapping_sub(self.head) & INDEX_MASK;
            (now ^ seen) & FLAGS != 0 || ready >= run
        });
        ready || arrived
    }

    /// Nothing to take now: when elements are `on_the_way` (requested, not arrived: how
    /// many), watches for a run of them briefly ([`spin`](Self::spin)), then registers
    /// `waker` and [parks](Self::park). `true`: parked (the caller returns `Pending`);
    /// `false`: something arrived, look again.
    pub(crate) fn wait(&mut self, waker: &W, on_the_way: usize) -> bool {
        if on_the_way > 0 && self.spin(on_the_way) {
            return false;
        }
        self.register(waker);
        self.park()
    }

    /// The reader leaves (idempotent): sets `CANCELLED`, drops what was published and not
    /// taken, stores where it stopped (the ring drops what comes after), and tells the writer:
    /// the subscription — its own, or one handed over and never taken — is cancelled unless
    /// the writer signalled its own end first (rule 2.4: then it is over); without one, the
    /// writer's wake target is woken.
    pub(crate) fn leave(&mut self) {
        if std::mem::replace(&mut self.left, true) {
            return;
        }
        let prev = self.ring.state.fetch_or(CANCELLED, Ordering::AcqRel);
        self.drop_buffered();
        let orphan = if prev & SUBSCRIBED != 0 && self.subscription.is_none() {
            self.ring.take_subscription()
        } else {
            None
        };
        match self.subscription.take().or(orphan) {
            Some(s) => {
                // Over after the writer's own terminal signal (rule 2.4); otherwise cancelled,
                // also when the writer went away without one (nothing says it is over).
                if prev & (COMPLETE | FAILED) == 0 {
                    s.cancel();
                }
            }
            None => self.wake_writer(),
        }
    }

    /// Whether the reader left.
    #[inline]
    pub(crate) fn left(&self) -> bool {
        self.left
    }

    /// Drops what was published and not taken, and releases the head past it.
    fn drop_buffered(&mut self) {
        let tail = self.ring.state.load(Ordering::Acquire) >> SHIFT;
        if fault::active(Fault::CancelForgetsBuffer) {
            // Skips the buffered elements (never dropped: a leak, not a double drop).
            self.head = tail;
            self.tail = tail;
            self.ring.release_head(self.head);
            return;
        }
        self.tail = tail;
        while self.head != self.tail {
            // SAFETY: `head` is below a tail we acquired and was not taken before; we are the
            // ring's one reader.
            let x = unsafe { self.ring.take(self.head) };
            self.head = self.head.wrapping_add(1) & INDEX_MASK;
            report::drop_guarded(x);
        }
        self.ring.release_head(self.head);
    }
}

impl<T, W: Wake> Drop for Reader<T, W> {
    fn drop(&mut self) {
        self.leave();
    }
}

#[cfg(test)]
mod tests {
    //! Private invariants of the positions (the protocol is checked by the loom models
    //! through the public bridges: rs-impl/tests/loom/).

    use super::super::ring::INDEX_MASK;

    #[test]
    fn positions_wrap_within_the_index_space() {
        let near = INDEX_MASK - 1;
        let next = near.wrapping_add(3) & INDEX_MASK;
        assert_eq!(next, 1);
        assert_eq!(next.wrapping_sub(near) & INDEX_MASK, 3);
    }
}
