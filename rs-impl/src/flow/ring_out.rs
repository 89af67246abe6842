//! A boundary's output side inside its island: the producer end of its ring (see
//! [`crate::boundary`]), the state behind a segment's ring exit.

use std::fmt;

use rs_api::Error;

use crate::boundary::Shared;
use crate::handoff::{Bound, Writer};
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

    /// Whether the consumer left (then the batch is dropped).
    pub(crate) fn closed(&mut self) -> bool {
        if self.writer.cancelled() {
            self.writer.drop_pending(); // the batch is dropped on cancel
            true
        } else {
            false
        }
    }

    /// Appends `x` to the batch; flushes at the cap. `Err(x)` without room (nothing
    /// written: the caller asks [`room`](Self::room) first).
    #[inline]
    pub(crate) fn push(&mut self, x: T) -> Result<(), T> {
        self.writer.push_batched(x)
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
