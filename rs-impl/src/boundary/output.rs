//! The output side as a segment's exit: the producer end of a boundary inside its island.

use std::fmt;

use rs_api::Error;

use super::shared::Shared;
use crate::handoff::{Bound, Writer};
use crate::island::fused::Sent;
use crate::island::segment::Closing;
use crate::island::{Ctx, IslandError, Notifier, RunEnd};
use crate::loom::sync::Arc;

/// A boundary's producer end in a segment: collects what its island produces during a run and
/// flushes when the run ends, at its cap, and before completion or failure. It writes only
/// what the input side granted (credit mode).
pub(crate) struct RingOut<T> {
    writer: Writer<T, Notifier>,
}

impl<T> fmt::Debug for RingOut<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingOut")
            .field("writer", &self.writer)
            .finish()
    }
}

impl<T: Send + 'static> RingOut<T> {
    /// The producer end of `shared` (claimed by the caller), flushing every `cap` elements.
    pub(crate) fn new(shared: Arc<Shared<T>>, cap: usize) -> Self {
        RingOut {
            writer: Writer::new(shared.ring.clone(), Bound::Credit, cap),
        }
    }

    /// Registers the island's stage, so that grants and cancels wake it.
    pub(crate) fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.writer.register(&ctx.notifier());
    }

    #[inline]
    pub(crate) fn room(&mut self) -> usize {
        self.writer.room()
    }

    pub(crate) fn closed(&mut self) -> Option<Closing> {
        if self.writer.cancelled() {
            self.writer.drop_pending(); // the batch is dropped on cancel
            Some(Closing::Cancelled)
        } else {
            None
        }
    }

    /// Appends `x` to the batch; flushes at the cap.
    #[inline]
    pub(crate) fn push(&mut self, x: T) -> Sent {
        match self.writer.push_batched(x) {
            Ok(()) => Sent::Pushed,
            Err(x) => {
                // Never beyond demand: the segment asks `room` first. Reported, not hidden.
                drop(x);
                debug_assert!(false, "a boundary's output side wrote beyond its demand");
                self.writer.overrun();
                Sent::Done
            }
        }
    }

    /// The island's run ends: flush.
    pub(crate) fn on_park(&mut self, _end: RunEnd) {
        self.writer.flush();
    }

    pub(crate) fn complete(&mut self) {
        self.writer.complete();
    }

    pub(crate) fn fail(&mut self, error: Error) {
        self.writer.fail(error);
    }

    /// Stops without a terminal signal: after a cancel the batch is dropped; otherwise the
    /// island was dropped unfinished, and the consumer must not wait forever.
    pub(crate) fn stop(&mut self) {
        if self.writer.ended() {
            return;
        }
        if self.writer.cancelled() {
            self.writer.drop_pending();
            self.writer.end_quietly();
        } else {
            self.writer.fail(Error::new(IslandError::Abandoned));
        }
    }
}
