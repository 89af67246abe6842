//! The typed lane of a plain-publisher merge: an inner known to be an iterator
//! ([`Inner::visit`](super::Inner::visit) hands it over with its static type) is drained in a
//! loop compiled for that type, straight into the subscriber, with the demand read once per
//! batch — no subscription, no queue, no box — when nobody drains and no other inner or value
//! waits (so none can starve: the round-robin has nobody else to serve). What demand does not
//! cover is boxed and served round-robin by the drain like any known iterator.

use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::UNBOUNDED;

use super::core::{Core, Out, Panic, Slot, State, BAD_REQUEST, CANCELLED, FAILED};
use super::inner::{InnerSource, InnerVisitor};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::Ordering;
use crate::panics;

/// How one typed batch ended.
enum Batch {
    /// The iterator ended (or panicked: its error is recorded).
    Ended,
    /// Demand ran out, or the subscription was cancelled: the iterator is kept.
    Stopped,
}

/// Starts an inner handed over by [`Inner::visit`](super::Inner::visit) if it is a typed
/// iterator; any other inner comes back as its [`InnerSource`] (made by the inner's own
/// code, which the caller guards), to be started with
/// [`start_inner`](super::subscribers::start_inner).
pub(super) struct Start<'a, U>(pub(super) &'a Core<U>);

impl<U: Send + 'static> InnerVisitor<U> for Start<'_, U> {
    type Out = Option<InnerSource<U>>;

    fn iter<J>(self, iterable: J) -> Self::Out
    where
        J: IntoIterator<Item = U>,
        J::IntoIter: Send + 'static,
    {
        match catch_unwind(AssertUnwindSafe(|| iterable.into_iter())) {
            Ok(iter) => self.0.arrive_iter(iter),
            Err(p) => {
                self.0.iterator_panicked(p);
                self.0.inner_ended();
            }
        }
        None
    }

    fn source(self, source: InnerSource<U>) -> Self::Out {
        Some(source)
    }
}

impl<U: Send + 'static> Core<U> {
    /// A known iterator arrives: drained typed at once when nobody drains and nothing else
    /// waits; otherwise (or for what demand did not cover) boxed and served by the drain.
    pub(super) fn arrive_iter<J>(&self, iter: J)
    where
        J: Iterator<Item = U> + Send + 'static,
    {
        let r =
            self.drain
                .try_drain_with(iter, |st, it| self.admit_typed(st, it), |st| self.pass(st));
        match r {
            Ok(()) => self.after_fast(),
            Err(it) => self.arrive(super::core::Arrival::Iter(Box::new(it))),
        }
    }

    /// An inner ended before it reached the drain (its iterator panicked on creation): its
    /// place goes back to the outer, and the drain sees the error.
    fn inner_ended(&self) {
        self.inner_empty();
        self.signal();
    }

    /// With the drain held: the typed drain when the iterator is alone, else a boxed slot;
    /// dropped after the end (3.13: nothing is kept for an ended subscription).
    pub(super) fn admit_typed<J>(&self, st: &mut State<U>, mut iter: J)
    where
        J: Iterator<Item = U> + Send + 'static,
    {
        if st.finished() {
            panics::drop_guarded(iter);
            return;
        }
        let alone = st.inners.is_empty()
            && st.scalars.is_empty()
            && st.out.first.is_none()
            && !st.finished()
            && !self.has_incoming.load(Ordering::Acquire)
            && self.flags.load(Ordering::Acquire) & (CANCELLED | BAD_REQUEST | FAILED) == 0;
        if alone {
            match self.drain_typed(&mut st.out, &mut iter) {
                Ok(Batch::Ended) => {
                    st.completed += 1;
                    panics::drop_guarded(iter);
                    return;
                }
                Ok(Batch::Stopped) => {}
                Err(p) => {
                    panics::drop_guarded(iter);
                    self.subscriber_panicked(st, p);
                    return;
                }
            }
        }
        st.inners.add(Slot::Iter {
            iter: Box::new(iter),
            ahead: None,
        });
    }

    /// Pulls `iter` straight into the subscriber while there is demand, reading the demand
    /// once per batch (once in all when unbounded) and the cancel flag after each element
    /// (rule 1.8: a cancel from inside `on_next` stops the signals at once).
    fn drain_typed<J>(&self, out: &mut Out<U>, iter: &mut J) -> Result<Batch, Panic>
    where
        J: Iterator<Item = U>,
    {
        let Some(s) = out.subscriber.as_mut() else {
            return Ok(Batch::Stopped);
        };
        loop {
            if out.emitted == out.limit {
                out.limit = self.demand.total();
            }
            let room = if out.limit == UNBOUNDED || fault::active(Fault::MergeTypedReadsDemandOnce)
            {
                u64::MAX
            } else {
                out.limit - out.emitted
            };
            if room == 0 {
                return Ok(Batch::Stopped);
            }
            let mut sent = 0u64;
            let mut in_next = true;
            let mut ended = false;
            let r = catch_unwind(AssertUnwindSafe(|| {
                while sent < room {
                    in_next = true;
                    let Some(u) = iter.next() else {
                        ended = true;
                        return;
                    };
                    in_next = false;
                    sent += 1;
                    s.on_next(u);
                    if self.cancelled_meanwhile() {
                        return;
                    }
                }
            }));
            out.emitted += sent;
            out.typed += sent;
            match r {
                Ok(()) if ended => return Ok(Batch::Ended),
                Ok(()) if self.cancelled_meanwhile() => return Ok(Batch::Stopped),
                Ok(()) => {}
                Err(p) if in_next => {
                    self.iterator_panicked(p);
                    return Ok(Batch::Ended);
                }
                Err(p) => return Err(p),
            }
        }
    }
}
