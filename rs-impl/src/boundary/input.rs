//! The input side as a segment's entry: the consumer end of a boundary inside its island.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rs_api::Error;

use super::ring::{Polled, Reader, Shared};
use super::subscriber::BoundarySubscriber;
use crate::flow::SharedPublisher;
use crate::island::{Ctx, IslandError};
use crate::loom::sync::Arc;
use crate::panics as report;

/// A boundary's consumer end in a segment: the ring, and (for `Flow::from_publisher`) the
/// publisher it subscribes to when the island starts.
pub(crate) struct RingIn<T> {
    reader: Reader<T>,
    publisher: Option<SharedPublisher<T>>,
}

impl<T> fmt::Debug for RingIn<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingIn")
            .field("reader", &self.reader)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> RingIn<T> {
    /// The consumer end of `shared`; the caller claimed it (one consumer per boundary).
    pub(crate) fn new(shared: Arc<Shared<T>>, publisher: Option<SharedPublisher<T>>) -> Self {
        RingIn {
            reader: Reader::new(shared),
            publisher,
        }
    }

    /// The ring's size.
    pub(crate) fn size(&self) -> usize {
        self.reader.shared().size()
    }

    /// Registers with the island and subscribes to the publisher, if any (on the thread that
    /// starts the island); a panicking `subscribe` fails the segment.
    pub(crate) fn start(&mut self, ctx: &mut Ctx<'_>) -> Result<(), Error> {
        self.reader.attach(ctx.notifier());
        if let Some(publisher) = self.publisher.take() {
            let subscriber = BoundarySubscriber::attached(self.reader.shared().clone());
            let r = catch_unwind(AssertUnwindSafe(|| {
                publisher.subscribe(Box::new(subscriber));
            }));
            if let Err(p) = r {
                return Err(Error::new(IslandError::StagePanicked {
                    stage: "Flow::from_publisher (upstream subscribe)",
                    message: report::panic_message(&*p),
                }));
            }
        }
        Ok(())
    }

    /// Acts on a new subscription or producer (prefetch).
    pub(crate) fn refresh(&mut self) {
        self.reader.refresh();
    }

    /// The next element, or why there is none.
    #[inline]
    pub(crate) fn poll(&mut self) -> Polled<T> {
        self.reader.poll()
    }

    /// Waits a little, spinning, for the producer's next flush when the ring is empty and the
    /// producer island is running on another thread: `true` if something arrived.
    pub(crate) fn linger(&mut self) -> bool {
        // Under loom one round (each spin is a yield to the model: the same paths, a small
        // search); 1023 spins in all otherwise (about 12 µs on the 2-core benchmark machine,
        // where waking a parked island through futures' pool costs tens of microseconds: the
        // `boundary` scenario at K = 1 on the default runtime went from 54 to 69 M el/s, median
        // of one run each, against 255 spins; K = 3, K = 10 and tokio unchanged).
        let steps = if crate::loom::IS_LOOM { 1 } else { 10 };
        for step in 0..steps {
            for _ in 0..(1u32 << step) {
                crate::loom::hint::spin_loop();
            }
            if self.reader.has_published() {
                return true;
            }
            if !self.reader.producer_running() {
                return false;
            }
        }
        false
    }

    /// Whether the ring is drained and the upstream completed.
    pub(crate) fn at_end(&mut self) -> bool {
        self.reader.at_end()
    }

    /// Whether the upstream failed or overran.
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        self.reader.failed()
    }

    /// The upstream's error.
    pub(crate) fn error(&mut self) -> Error {
        self.reader.error()
    }

    /// Cancels the upstream (drops buffered input).
    pub(crate) fn cancel(&mut self) {
        self.reader.cancel();
    }

    /// The upstream's end was acted on.
    pub(crate) fn close(&mut self) {
        self.reader.close();
    }
}
