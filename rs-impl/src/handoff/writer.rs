//! The producer's end of a ring: [`Writer`].

use std::fmt;

use rs_api::{Error, SubscriptionRef};

use super::ring::{
    Ring, CANCELLED, COMPLETE, DROPPED, FAILED, INDEX_MASK, OVERRUN, PARKED, SHIFT, SUBSCRIBED,
};
use super::wake::Wake;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::Ordering;
use crate::loom::sync::Arc;
use crate::panics as report;

/// What bounds a writer (see the ring's module docs, point 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The ring's free space, `head + size`: a foreign publisher signalling a subscriber,
    /// whose demand the reader controls through its requests. An element that finds no free
    /// slot broke that demand (an overrun); one sent before the first request is kept while
    /// there is space.
    Space,
    /// The reader's credit, `granted`: an island producing into the ring, which writes only
    /// what was granted (nothing before the first grant).
    Credit,
}

/// The producer's end of a ring: writes elements privately and publishes them in batches.
///
/// Per element, [`push`](Self::push) writes one slot (after a look at its cached limit); a
/// [`flush`](Self::flush) publishes everything written since the last one with one
/// read-modify-write and wakes the reader only if it is parked. The writer flushes by itself
/// when a batch reaches its cap ([`push_batched`](Self::push_batched)); the owner flushes at
/// the end of a run, and every terminal signal publishes what was written first.
pub(crate) struct Writer<T, W: Wake> {
    ring: Arc<Ring<T, W>>,
    /// Positions written; `[published, written)` are not yet visible.
    written: usize,
    published: usize,
    /// The bound as last read.
    limit: usize,
    /// Flush when this many are unpublished (at least 1).
    cap: usize,
    bound: Bound,
    /// A terminal signal was sent (or the end was taken over by the owner).
    ended: bool,
    /// Ended, or a publication found the reader gone: [`send`](Self::send) drops at once.
    stopped: bool,
    /// Flushes that published something (counted when `cap > 1`).
    flushes: u64,
}

impl<T, W: Wake> fmt::Debug for Writer<T, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Writer")
            .field("written", &self.written)
            .field("published", &self.published)
            .field("limit", &self.limit)
            .field("bound", &self.bound)
            .finish_non_exhaustive()
    }
}

impl<T, W: Wake> Writer<T, W> {
    /// The producer end of `ring` (one per ring: the caller makes sure), bounded by `bound`,
    /// flushing by itself every `cap` elements in [`push_batched`](Self::push_batched).
    pub(crate) fn new(ring: Arc<Ring<T, W>>, bound: Bound, cap: usize) -> Self {
        let limit = match bound {
            Bound::Space => ring.size(),
            Bound::Credit => 0,
        };
        let cap = cap.max(1);
        if cap == 1 {
            // Every flush publishes exactly one element: the statistics say so instead of a
            // count per element.
            ring.count_flushes(super::ring::EVERY_ELEMENT);
        }
        Writer {
            ring,
            written: 0,
            published: 0,
            limit,
            cap,
            bound,
            ended: false,
            stopped: false,
            flushes: 0,
        }
    }

    /// The ring.
    #[inline]
    pub(crate) fn ring(&self) -> &Arc<Ring<T, W>> {
        &self.ring
    }

    /// Registers the writer's wake target: the reader wakes it when it grants credit and when
    /// it leaves.
    pub(crate) fn register(&self, waker: &W) {
        self.ring.register_writer(waker);
    }

    /// Positions it may write now (re-reads its bound when its cached one is used up).
    #[inline]
    pub(crate) fn room(&mut self) -> usize {
        let r = self.limit.wrapping_sub(self.written) & INDEX_MASK;
        if r != 0 {
            return r;
        }
        self.limit = match self.bound {
            Bound::Space => self.ring.head().wrapping_add(self.ring.size()) & INDEX_MASK,
            Bound::Credit => self.ring.granted(),
        };
        self.limit.wrapping_sub(self.written) & INDEX_MASK
    }

    /// Writes `x` at the next position, unpublished; `Err(x)` without room or after the end
    /// (nothing written).
    #[inline]
    pub(crate) fn push(&mut self, x: T) -> Result<(), T> {
        if self.ended {
            return Err(x);
        }
        self.write(x)
    }

    /// [`push`](Self::push) without the look at the end (the caller looked).
    #[inline]
    fn write(&mut self, x: T) -> Result<(), T> {
        if self.room() == 0 {
            return Err(x);
        }
        // SAFETY: we are the ring's one writer, `written` is below a limit we acquired (`room`),
        // and position `written` was not written before (it only grows, modulo the wrap).
        unsafe { self.ring.put(self.written, x) };
        self.written = self.written.wrapping_add(1) & INDEX_MASK;
        Ok(())
    }

    /// [`push`](Self::push), then a flush once the batch reached its cap.
    #[inline]
    pub(crate) fn push_batched(&mut self, x: T) -> Result<(), T> {
        self.push(x)?;
        if self.pending() >= self.cap {
            self.flush();
        }
        Ok(())
    }

    /// A foreign producer's element (`on_next`): published at once; one without room is an
    /// overrun (dropped, and [`overrun`](Self::overrun) signalled); after the end, or once a
    /// publication found the reader gone, it is dropped at once (rule 2.8).
    #[inline]
    pub(crate) fn send(&mut self, x: T) {
        debug_assert_eq!(self.cap, 1, "a writer that sends flushes every element");
        if self.stopped {
            return;
        }
        if let Err(x) = self.write(x) {
            drop(x);
            if !self.ring.cancelled() {
                self.overrun();
            }
            return;
        }
        // `flush` for one element, with one test of the state before for both the parked and
        // the gone reader.
        let prev = self.ring.state.fetch_add(1 << SHIFT, Ordering::AcqRel);
        self.published = self.written;
        if prev & (PARKED | CANCELLED) != 0 {
            self.after_publish(prev);
        }
    }

    /// The state before a publication had `PARKED` or `CANCELLED`: wake the parked reader, or
    /// stop sending to a gone one.
    #[cold]
    fn after_publish(&mut self, prev: usize) {
        if prev & CANCELLED != 0 {
            self.stopped = true;
        } else {
            self.ring.wake_reader(prev);
        }
    }

    /// Elements written and not yet published.
    #[inline]
    pub(crate) fn pending(&self) -> usize {
        self.written.wrapping_sub(self.published) & INDEX_MASK
    }

    /// Publishes what was written, adding `bits` (signals, clear until now) in the same
    /// read-modify-write; returns the state before.
    #[inline]
    fn publish(&mut self, bits: usize) -> usize {
        let n = self.pending();
        let prev = self
            .ring
            .state
            .fetch_add((n << SHIFT) | bits, Ordering::AcqRel);
        if n != 0 {
            self.published = self.written;
            if self.cap > 1 {
                self.flushes += 1;
                self.ring.count_flushes(self.flushes);
            }
        }
        prev
    }

    /// A flush: publishes what was written and wakes the reader if it is parked; `true` if
    /// anything was published.
    #[inline]
    pub(crate) fn flush(&mut self) -> bool {
        if self.written == self.published {
            return false;
        }
        let prev = self.publish(0);
        if prev & (PARKED | CANCELLED) != 0 {
            self.after_publish(prev);
        }
        true
    }

    /// Publishes the pending batch with the terminal `bit`, then wakes the reader.
    fn end_with(&mut self, bit: usize) {
        let prev = self.publish(bit);
        if prev & CANCELLED == 0 {
            self.ring.wake_reader(prev);
        }
    }

    /// Whether the reader left.
    #[inline]
    pub(crate) fn cancelled(&self) -> bool {
        self.ring.cancelled()
    }

    /// Whether a terminal signal was sent.
    #[inline]
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Hands `subscription` to the reader (which takes it when it sees `SUBSCRIBED`). Returns
    /// it back when the reader left already: the caller cancels it.
    pub(crate) fn subscribed(&mut self, subscription: SubscriptionRef) -> Option<SubscriptionRef> {
        self.ring.put_subscription(subscription);
        let prev = self.ring.signal(SUBSCRIBED);
        if prev & CANCELLED != 0 && !fault::active(Fault::HandoverIgnoresLeave) {
            // The reader's leave came first and did not see `SUBSCRIBED`: ours to cancel (or
            // it took it after all, and this finds nothing).
            return self.ring.take_subscription();
        }
        None
    }

    /// Completes: publishes the batch and `COMPLETE` in one read-modify-write (the batch goes
    /// before the signal). Closes the reader's request guard first (rule 2.4).
    pub(crate) fn complete(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.stopped = true;
        self.ring.guard.terminal();
        if fault::active(Fault::TerminalBeforeFlush) {
            self.ring.signal(COMPLETE);
            self.flush();
            return;
        }
        self.end_with(COMPLETE);
    }

    /// Fails with `error`: publishes the batch and `FAILED` (the error stored before), unless
    /// the reader left: then the batch is dropped and nothing is signalled. Closes the
    /// reader's request guard first (rule 2.4).
    pub(crate) fn fail(&mut self, error: Error) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.stopped = true;
        self.ring.guard.terminal();
        if self.cancelled() {
            self.drop_pending();
            return;
        }
        self.ring.set_error(error);
        self.end_with(FAILED);
    }

    /// Reports an element without room (the producer broke its bound): publishes the batch and
    /// `OVERRUN`. The reader sees
    /// [`Failure::Overrun`](super::Failure::Overrun).
    pub(crate) fn overrun(&mut self) {
        if std::mem::replace(&mut self.ended, true) {
            return;
        }
        self.stopped = true;
        self.end_with(OVERRUN);
    }

    /// Marks the end without a signal: the owner sent none on purpose (after the reader left).
    pub(crate) fn end_quietly(&mut self) {
        self.ended = true;
        self.stopped = true;
    }

    /// Drops the unpublished batch in place (on cancel, or a failure after the reader left).
    pub(crate) fn drop_pending(&mut self) {
        while self.written != self.published {
            self.written = self.written.wrapping_sub(1) & INDEX_MASK;
            // SAFETY: positions `[published, written)` were written by us and never published:
            // nobody else can reach them, and each is moved out once (`written` shrinks first).
            let x = unsafe { self.ring.take(self.written) };
            report::drop_guarded(x);
        }
    }
}

impl<T, W: Wake> Drop for Writer<T, W> {
    fn drop(&mut self) {
        self.drop_pending();
        if !self.ended {
            // Gone without a terminal signal: the reader must not wait forever.
            self.ring.signal(DROPPED);
        }
    }
}
