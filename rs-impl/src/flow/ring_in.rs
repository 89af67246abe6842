//! A boundary's input side inside its island: the consumer end of its ring (see
//! [`crate::boundary`]), the state behind a segment's ring entry.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc as StdArc;

use rs_api::{Error, Publisher};

use crate::boundary::{BoundarySubscriber, Producer, Shared};
use crate::handoff::{Failure, Polled, Reader};
use crate::island::{Ctx, IslandError, Notifier};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::Arc;
use crate::panics as report;

/// A publisher shared by every materialisation of a flow that reads it.
pub type SharedPublisher<T> = StdArc<dyn Publisher<T> + Send + Sync>;

/// A boundary's consumer end in a segment: the ring's reader, and (for
/// `Flow::from_publisher`) the publisher it subscribes to when the island starts.
///
/// The reader releases `size / 2` slots at a time and, in credit mode, grants as much: to an
/// output side of ours by waking its island, to a foreign publisher by a request (rule 2.4
/// guarded: see [`crate::handoff`]).
///
/// **What an element costs entering an island** (issue 24). From an output side of ours:
/// one slot read and a share of one publication per run, and a wake-up only when this island
/// parked. From a foreign publisher (a fanout, a push source, anyone else's): one
/// read-modify-write per element on the ring word this island polls, a wake-up whenever it
/// had parked on the empty ring (together a quarter to a third of all the work behind a
/// fanout of 1 or 8 subscribers, counted by publishing every 64 elements instead: see
/// [`crate::fanout`]), and this island's requests run on its own thread (a
/// fanout's un-parked subscriber is then delivered to by the requesting island: see the cost
/// section of [`crate::fanout`]). [`linger`](Self::linger) does not spin for a foreign
/// producer: spinning before parking was measured for it and gained nothing beyond the
/// noise, and counted again (2026-12-03): up to 84% fewer context switches behind a fanout,
/// but up to 2.5× the CPU time and a longer wall time in every pair, the spinning island
/// taking the producer's core on 2 cores; replenishing three quarters of the ring instead of
/// half did nothing beyond the noise either (the findings are in [`crate::fanout`] and in
/// `rs-impl/src/source/push.rs`).
pub(crate) struct RingIn<T> {
    reader: Reader<T, Notifier>,
    shared: Arc<Shared<T>>,
    publisher: Option<SharedPublisher<T>>,
    /// The producer arrived and the prefetch was granted.
    prefetched: bool,
    /// The last [`linger`](Self::linger) spun to its end with the producer running and no
    /// flush: the next one is short ([`LINGER_SHORT`] rounds instead of [`LINGER_LONG`]).
    linger_missed: bool,
}

/// Rounds of a full [`RingIn::linger`] (round `r` spins `2^r` pause hints: 1023 in all, about
/// 25 µs on the machine measured).
const LINGER_LONG: u32 = 10;
/// Rounds of a linger after one that did not pay (127 pause hints, about 3 µs).
const LINGER_SHORT: u32 = 7;

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
        let batch = (shared.size() / 2).max(1);
        Self::with_batch(shared, publisher, batch)
    }

    /// [`new`](Self::new), replenishing `batch` at a time instead of half the ring
    /// (`observe_on`: three quarters).
    pub(crate) fn with_batch(
        shared: Arc<Shared<T>>,
        publisher: Option<SharedPublisher<T>>,
        batch: usize,
    ) -> Self {
        let batch = batch.clamp(1, shared.size());
        RingIn {
            reader: Reader::new(shared.ring.clone(), batch, true),
            shared,
            publisher,
            prefetched: false,
            linger_missed: false,
        }
    }

    /// The ring's size.
    pub(crate) fn size(&self) -> usize {
        self.shared.size()
    }

    /// Registers with the island and subscribes to the publisher, if any (on the thread that
    /// starts the island); a panicking `subscribe` fails the segment.
    pub(crate) fn start(&mut self, ctx: &mut Ctx<'_>) -> Result<(), Error> {
        let notifier = ctx.notifier();
        self.reader.register(&notifier);
        self.shared.control().consumer = Some(notifier);
        if let Some(publisher) = self.publisher.take() {
            let subscriber = BoundarySubscriber::attached(self.shared.clone());
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

    /// Acts on a producer that arrived: the prefetch of the ring's size (a grant to an output
    /// side of ours, a request to a foreign subscription, which may deliver synchronously).
    /// Nothing to do once prefetched: a later subscription is refused at the door (rule 2.5),
    /// and no lock is taken per batch.
    pub(crate) fn refresh(&mut self) {
        if self.prefetched || self.reader.left() {
            return;
        }
        let producer = self.shared.control().producer;
        let ready = match producer {
            Producer::None => false,
            Producer::Internal => true,
            Producer::Foreign => self.reader.take_subscription(),
        };
        if ready {
            self.prefetched = true;
            let size = self.shared.size();
            self.reader.grant(size);
        }
    }

    /// The next element, or why there is none. An empty ring is parked before `Empty` is
    /// returned, so that the producer's next flush wakes this island (and only then: a flush
    /// into a ring that is being drained wakes nobody).
    #[inline]
    pub(crate) fn poll(&mut self) -> Polled<T> {
        match self.reader.poll() {
            Polled::Empty => self.park(),
            p => p,
        }
    }

    /// Parks the empty ring, unless something arrived since the last look.
    #[cold]
    fn park(&mut self) -> Polled<T> {
        loop {
            if self.reader.park() {
                return Polled::Empty;
            }
            match self.reader.poll() {
                Polled::Empty => {}
                p => return p,
            }
        }
    }

    /// Waits a little, spinning, for the producer's next flush when the ring is empty and the
    /// producer island is running on another thread: `true` if something arrived.
    ///
    /// **Adaptive** (issue 24, the push-source chain): a linger that spins to its end while the
    /// producer island is still running and has not flushed did not pay, and the next linger
    /// of this island is short ([`LINGER_SHORT`] rounds: 127 pause hints instead of 1023);
    /// one that pays makes the next one full again. A producer island that takes longer than
    /// the spin to fill its batch (paced by a slower upstream, such as a sender on the calling
    /// thread, or descheduled on a machine with more runnable threads than cores) would
    /// otherwise cost this island the whole spin at every park. A linger that ends because
    /// the producer stopped running is no miss: it parked in time. Nor is one for a producer
    /// that publishes every element on its own (an unbatched boundary): it publishes soon or
    /// not at all (it was descheduled), and a park there costs a wake-up per element (the
    /// unbatched `boundary` rows lost 10–14% at K = 3 and 10 with that producer adaptive
    /// too). Counted on the
    /// `boundary` scenario's push-source row at K = 3 (3 × 3·10^6 elements, alternating
    /// builds, 2 cores at load 6–46): 39–48 thousand lingers that did not pay against 1–7
    /// thousand that did, and the chain's CPU time 117–121 ns per element with the full spin
    /// every time, 80–84 adaptive (8.2–8.6 against 5.7–7.8 M el/s). The `from_iter` chain's
    /// CPU time is unchanged (47–48 against 49–50 ns per element); it parks more (3.8 context
    /// switches per thousand elements against 2.3–2.4) when its lingers miss on a loaded
    /// machine. On a machine with idle cores a linger that pays keeps them full.
    pub(crate) fn linger(&mut self) -> bool {
        // Under loom one round (each spin is a yield to the model: the same paths, a small
        // search); otherwise up to 1023 spins: waking a parked island through an executor
        // costs far more than that on the machines measured (docs/benchmarks.md), and a flush
        // that near saves both islands a park and a wake-up.
        let steps = if crate::loom::IS_LOOM {
            1
        } else if self.linger_missed {
            LINGER_SHORT
        } else {
            LINGER_LONG
        };
        for step in 0..steps {
            for _ in 0..(1u32 << step) {
                crate::loom::hint::spin_loop();
            }
            if self.reader.has_published() {
                self.linger_missed = false;
                return true;
            }
            if !self.producer_running() {
                return false;
            }
        }
        // A producer that publishes every element on its own publishes soon or not at all (it
        // was descheduled): its lingers stay full, a park costing a wake-up per element there.
        self.linger_missed = !crate::loom::IS_LOOM && !self.reader.writer_flushes_each();
        false
    }

    /// Whether the producer is an island being polled right now (so a flush may be near).
    fn producer_running(&mut self) -> bool {
        if self.reader.has_subscription() || self.reader.left() {
            return false;
        }
        self.reader.writer().is_some_and(|n| n.is_running())
    }

    /// Whether the ring is drained and the upstream completed.
    pub(crate) fn at_end(&mut self) -> bool {
        self.reader.at_end()
    }

    /// Whether the upstream failed, overran or vanished (acted on at once, ahead of the
    /// buffered input: eager).
    #[inline]
    pub(crate) fn failed(&self) -> bool {
        self.reader.failed() && !fault::active(Fault::ErrorWaitsForInput)
    }

    /// The upstream's error.
    pub(crate) fn error(&mut self) -> Error {
        match self.reader.failure() {
            Failure::Error(e) => e,
            Failure::Overrun { capacity } => Error::new(IslandError::InputOverrun { capacity }),
            Failure::Abandoned => Error::new(IslandError::Abandoned),
        }
    }

    /// Cancels the upstream (drops buffered input).
    pub(crate) fn cancel(&mut self) {
        self.reader.leave();
    }

    /// The upstream's end was acted on: no more grants, the buffer is dropped; a producer
    /// that did not end by itself (it overran) is cancelled.
    pub(crate) fn close(&mut self) {
        self.reader.leave();
    }
}
