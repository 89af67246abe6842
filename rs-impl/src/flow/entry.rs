//! Where a segment's elements come from: an in-port ([`PortEntry`]), a source iterator run
//! inside the island ([`IterEntry`]), or a boundary's input side ([`RingEntry`]).

use rs_api::Error;

use super::exit::{Exit, Step};
use super::ring_in::RingIn;
use crate::handoff::Polled;
use crate::island::{Ctx, Inlet};

/// Elements an iterator entry moves per handler call before the segment posts to itself (so
/// that an island fed by an endless iterator still yields after its budget of events).
pub(crate) const ITER_BATCH: usize = 1024;

/// What [`Entry::pump`] ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pumped {
    /// Every element asked for was taken.
    Moved,
    /// The entry has nothing now.
    Empty,
    /// The entry ended; everything before was delivered.
    Complete,
    /// The entry's upstream failed.
    Failed,
    /// The exit stopped taking input.
    Stopped,
}

/// What a stalled entry (its exit has no room) has to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stall {
    /// Nothing: wait for room.
    Wait,
    /// It ended and everything was delivered: complete without demand.
    Complete,
    /// Its upstream failed: nothing more can be delivered now (eager error).
    Failed,
}

/// A segment's source of elements (see the module docs).
pub(crate) trait Entry: Send {
    /// Its elements.
    type Item: Send + 'static;
    /// The in-port, for an entry that is one (it is driven by the stage's `on_push`).
    fn port(&self) -> Option<Inlet<Self::Item>> {
        None
    }
    /// Registers with the island (a boundary's input side subscribes to its publisher); an
    /// error fails the segment.
    fn start(&mut self, cx: &mut Ctx<'_>) -> Result<(), Error> {
        let _ = cx;
        Ok(())
    }
    /// Elements one handler call moves at most (then the segment comes back through its own
    /// mailbox).
    fn batch(&self) -> usize;
    /// Moves up to `n` elements into `exit` (which has room for them).
    fn pump<X: Exit<Self::Item>>(&mut self, cx: &mut Ctx<'_>, exit: &mut X, n: usize) -> Pumped;
    /// Moves one element into `exit` (which has room for it): `pump(cx, exit, 1)`, which an
    /// entry may do more directly (a segment answering one pull of its out-port).
    #[inline(always)]
    fn pump_one<X: Exit<Self::Item>>(&mut self, cx: &mut Ctx<'_>, exit: &mut X) -> Pumped {
        self.pump(cx, exit, 1)
    }
    /// Whether [`pump`](Entry::pump) itself reports the entry's end (with the last element:
    /// an iterator read one ahead), so that [`stalled`](Entry::stalled) after a pump that
    /// [moved](Pumped::Moved) an element always says [`Stall::Wait`] and need not be asked.
    const PUMP_REPORTS_END: bool = false;
    /// The exit has no room: whether the entry ended or failed meanwhile.
    fn stalled(&mut self) -> Stall {
        Stall::Wait
    }
    /// Something was posted to the segment (a subscription arrived, a flush).
    fn refresh(&mut self) {}
    /// Waits briefly for more input before the island parks; `true` if some arrived.
    fn linger(&mut self) -> bool {
        false
    }
    /// The downstream is gone: no more input (buffered input is dropped).
    fn cancel(&mut self);
    /// The entry's end was acted on.
    fn close(&mut self) {}
    /// The upstream's error, after [`Pumped::Failed`] or [`Stall::Failed`].
    fn error(&mut self) -> Error {
        Error::msg("the upstream failed")
    }
}

/// An in-port: one element per pull.
pub(crate) struct PortEntry<T>(pub(crate) Inlet<T>);

impl<T: Send + 'static> Entry for PortEntry<T> {
    type Item = T;
    fn port(&self) -> Option<Inlet<T>> {
        Some(self.0)
    }
    fn batch(&self) -> usize {
        1
    }
    fn pump<X: Exit<T>>(&mut self, _: &mut Ctx<'_>, _: &mut X, _: usize) -> Pumped {
        Pumped::Empty // driven by pulls and pushes, not pumped
    }
    fn cancel(&mut self) {} // closed with the stage's ports
}

/// A source iterator, read one ahead so that the last element completes the segment (push
/// then complete, without waiting for a pull that would only find the end: rules 1.2, 1.5).
pub(crate) struct IterEntry<I: Iterator> {
    iter: Option<I>,
    next: Option<I::Item>,
    started: bool,
}

impl<I: Iterator> IterEntry<I> {
    pub(crate) fn new(iter: I) -> Self {
        IterEntry {
            iter: Some(iter),
            next: None,
            started: false,
        }
    }

    #[inline]
    fn advance(&mut self) {
        self.next = match &mut self.iter {
            Some(it) => it.next(),
            None => None,
        };
    }
}

impl<I> Entry for IterEntry<I>
where
    I: Iterator + Send,
    I::Item: Send + 'static,
{
    type Item = I::Item;

    fn batch(&self) -> usize {
        ITER_BATCH
    }

    // `pump` returns `Complete` with the last element (read one ahead): after `Moved`, the
    // next element is there, and `stalled` would say `Wait`.
    const PUMP_REPORTS_END: bool = true;

    #[inline]
    fn pump<X: Exit<I::Item>>(&mut self, cx: &mut Ctx<'_>, exit: &mut X, n: usize) -> Pumped {
        if !self.started {
            self.started = true;
            self.advance();
        }
        let Some(iter) = self.iter.as_mut() else {
            return Pumped::Complete; // cancelled: `next` was dropped with it
        };
        // The element read ahead is held in a local for the run (no store and reload per
        // element); `Ahead` puts it back into `next` when the run ends, by return or by a
        // panic (which the segment catches: `cancel` then drops it, guarded).
        let mut ahead = Ahead {
            slot: &mut self.next,
            cur: None,
        };
        ahead.cur = ahead.slot.take();
        for _ in 0..n {
            let Some(x) = ahead.cur.take() else {
                return Pumped::Complete;
            };
            ahead.cur = iter.next();
            if exit.push(cx, x) == Step::Stop {
                return Pumped::Stopped;
            }
        }
        if ahead.cur.is_none() {
            return Pumped::Complete; // the last element completes the segment
        }
        Pumped::Moved
    }

    /// One element, without `pump`'s run: the element read ahead goes out and the next one
    /// is read straight into `next` (no local to hold it and put back: for one element that
    /// cost more than it saved).
    #[inline]
    fn pump_one<X: Exit<I::Item>>(&mut self, cx: &mut Ctx<'_>, exit: &mut X) -> Pumped {
        if !self.started {
            self.started = true;
            self.advance();
        }
        let Some(iter) = self.iter.as_mut() else {
            return Pumped::Complete; // cancelled: `next` was dropped with it
        };
        let Some(x) = self.next.take() else {
            return Pumped::Complete;
        };
        // Read ahead before the push, as `pump` does (a panic here drops `x`, and `next` stays
        // empty: the same outcome).
        self.next = iter.next();
        if exit.push(cx, x) == Step::Stop {
            return Pumped::Stopped;
        }
        if self.next.is_none() {
            return Pumped::Complete; // the last element completes the segment
        }
        Pumped::Moved
    }

    fn stalled(&mut self) -> Stall {
        if self.started && self.next.is_none() {
            Stall::Complete
        } else {
            Stall::Wait
        }
    }

    fn cancel(&mut self) {
        self.started = true;
        crate::panics::drop_guarded(self.next.take());
        crate::panics::drop_guarded(self.iter.take());
    }
}

/// The element an [`IterEntry`] read ahead, held in a local during a pump and put back into
/// the entry when the pump ends (also when it unwinds).
struct Ahead<'a, T> {
    slot: &'a mut Option<T>,
    cur: Option<T>,
}

impl<T> Drop for Ahead<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        // `slot` was taken: nothing is dropped here.
        *self.slot = self.cur.take();
    }
}

/// Starts the producer of a ring (the islands of an upstream flow of ours).
pub(crate) type StartUpstream = Box<dyn FnOnce() + Send>;

/// A boundary's input side.
pub(crate) struct RingEntry<T>(RingIn<T>, Option<StartUpstream>);

impl<T: Send + 'static> RingEntry<T> {
    pub(crate) fn new(ring: RingIn<T>) -> Self {
        RingEntry(ring, None)
    }

    /// Runs `start` once the entry is registered with its island (it starts the islands that
    /// write into the ring).
    pub(crate) fn with_upstream(mut self, start: StartUpstream) -> Self {
        self.1 = Some(start);
        self
    }
}

impl<T: Send + 'static> Entry for RingEntry<T> {
    type Item = T;

    fn start(&mut self, cx: &mut Ctx<'_>) -> Result<(), Error> {
        self.0.start(cx)?;
        if let Some(start) = self.1.take() {
            start();
        }
        Ok(())
    }

    fn batch(&self) -> usize {
        self.0.size()
    }

    #[inline]
    fn pump<X: Exit<T>>(&mut self, cx: &mut Ctx<'_>, exit: &mut X, n: usize) -> Pumped {
        for _ in 0..n {
            match self.0.poll() {
                Polled::Item(x) => {
                    if exit.push(cx, x) == Step::Stop {
                        return Pumped::Stopped;
                    }
                }
                Polled::Empty => return Pumped::Empty,
                Polled::Complete => return Pumped::Complete,
                Polled::Failed => return Pumped::Failed,
            }
        }
        Pumped::Moved
    }

    fn stalled(&mut self) -> Stall {
        if self.0.failed() {
            Stall::Failed
        } else if self.0.at_end() {
            Stall::Complete
        } else {
            Stall::Wait
        }
    }

    fn refresh(&mut self) {
        self.0.refresh();
    }

    fn linger(&mut self) -> bool {
        self.0.linger()
    }

    fn cancel(&mut self) {
        self.0.cancel();
    }

    fn close(&mut self) {
        self.0.close();
    }

    fn error(&mut self) -> Error {
        self.0.error()
    }
}
