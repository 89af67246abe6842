//! Merging streams: [`merge`], [`flat_map`](MergeExt::flat_map),
//! [`concat_map`](MergeExt::concat_map) and [`observe_on`], without pooling (seed 003,
//! RxJava #1908).
//!
//! Each is here for plain publishers (the [`MergeExt`] methods, [`merge`], [`observe_on`]);
//! a [`Flow`](crate::flow::Flow) has the same operators, run inside its islands
//! (`Flow::flat_map`, `Flow::merge`, `Flow::concat_map`, `Flow::observe_on`).
//!
//! # Contract (for a subscriber of a merge)
//!
//! * **What a subscriber sees:** `on_subscribe` before `subscribe` returns, then the elements
//!   of every inner stream, interleaved as they arrive (each inner's own order kept; with
//!   [`concat_map`](MergeExt::concat_map), one inner after the other), at most as many as it
//!   requested (rule 1.1), serially (1.3), then one terminal signal.
//! * **Who may call `request`/`cancel`, from which thread:** anyone, from any thread, also
//!   re-entrantly from `on_next`. Signals are delivered by whichever thread is draining: the
//!   caller of `subscribe` or `request`, or the thread an inner signals on (a merge of plain
//!   publishers has no thread of its own: it is driven like the sources of
//!   [`crate::source`]). `request(0)` ends the subscription with `on_error` naming rule 3.9;
//!   demand saturates (3.17).
//! * **When slow:** at most `max_concurrency` inners are subscribed at once (the outer is
//!   asked for one more as each ends); each inner is asked for `prefetch` elements, and for
//!   `prefetch / 4` more each time that many of its elements were delivered (RxJava's flatMap
//!   batch). What an inner sent beyond the subscriber's demand waits in **that inner's own
//!   queue** of `prefetch` slots, made only when an element could not go straight downstream,
//!   owned by the inner and freed when both its ends are gone (never pooled, never shared).
//!   Memory is bounded by `max_concurrency × prefetch` elements.
//! * **The fast path:** an inner's element goes straight to `on_next` — no queue touched or
//!   made — when nobody is draining, nothing of that inner is queued, and there is demand.
//!   Inners known to be a value ([`source::just`](crate::source::just), `Option`) or an
//!   iterator ([`source::range`](crate::source::range), [`source::from_iter`](crate::source::from_iter),
//!   `Vec`) are not subscribed to at all: the drain takes their elements directly ([`Inner`]).
//! * **The typed lane:** a known iterator reaches the merge with its static type
//!   ([`Inner::visit`]); when nobody drains and no other inner or value waits, it is drained
//!   in a loop compiled for that type, straight into `on_next`, the demand read once per
//!   batch (once in all when unbounded) — no box, queue or subscription
//!   ([`MergeStats::typed_lane`]). What demand does not cover is boxed once and served
//!   round-robin like any other inner.
//! * **The pulled outer:** a flat map or merge whose outer is a known iterator
//!   ([`IterPublisher::flat_map`](crate::source::IterPublisher::flat_map), [`merge`]) pulls it
//!   with its static type instead of subscribing to it ([`OuterPulled`]), and delivers the
//!   values and known iterators its elements map to in one hold of the drain. A subscription
//!   to a merge of known inners allocates two blocks, however many inners and elements.
//! * **Fairness:** the drain serves the inners round-robin, at most `prefetch` elements from
//!   each per visit, and resumes where it stopped, so no inner starves another.
//! * **A publisher that ignores demand:** an inner whose queue is full is cancelled and ends
//!   with [`MergeError::MissingBackpressure`] — never a drop, never an unbounded queue.
//! * **On cancel:** the outer and every inner are cancelled, what the queues hold is dropped,
//!   the subscriber is dropped (3.13). An element already being delivered on another thread
//!   may still arrive (2.8); none starts after the drain saw the cancel.
//! * **On termination:** an inner's and the outer's terminal signals are kept outside the
//!   queues; completion comes after every queue drained. Errors are **eager** by default: the
//!   first error cancels everything and is delivered at once (queued elements are dropped).
//!   With [`MergeConfig::delay_errors`], errors wait until every other inner ended; one is
//!   delivered as it is, several as [`MergeError::Composite`].
//! * **A late subscriber** gets its own run of the outer and of every inner (as cold as they
//!   are).
//! * **A panicking subscriber** is cancelled (2.13), which cancels the outer and every
//!   inner; the panic is reported ([`crate::panics`]). A panic in the mapping function or in
//!   an inner's iterator fails the stream like an error.
//!
//! # How the drain works
//!
//! One [serial drain loop](crate::serial) per subscription holds the subscriber and the
//! inners' consumer ends. An element of an inner tries the fast path
//! ([`DrainLoop::try_fast`](crate::serial::DrainLoop::try_fast)); otherwise it goes into the
//! inner's queue, the inner is put on the **ready list** (see below) and the drain is run. A
//! pass checks, in order: cancel, a bad request, an eager error; takes the inners that
//! arrived meanwhile and the ready list; emits waiting values, then serves the listed inners
//! round-robin; removes those whose terminal signal was seen with an empty queue; repeats the
//! round only while a visit stopped at its per-visit cap (whatever arrives later runs the
//! drain again); and completes once the outer ended and nothing is left. The outer is asked for more
//! *after* the drain loop is left, so that an outer emitting inside `request` subscribes its
//! next inners while nobody drains (and their elements take the fast path).
//!
//! **The ready list.** A pass visits only the inners that may have something for it, not every
//! inner it serves: each inner keeps its place in the drain (`Slots` in `core.rs`) until it
//! ends, and the drain keeps the places to visit in round-robin order. An inner is listed
//! when it is admitted; a subscribed inner lists itself again when it queued an element or
//! ended, through a per-inner flag (`InnerShared::list` in `shared.rs`): the producer swaps
//! it to `true` after queueing (or recording its end) and, when it was `false`, pushes its
//! place onto the core's shared list (a `Vec` under a lock, swapped with the drain's own, so
//! no allocation in steady state); the drain swaps it back to `false` at the start of each
//! visit, **before** it looks at the inner's end and queue. Both swaps are read-modify-writes
//! on one flag, so either the producer's comes first and the visit sees what it queued, or
//! the drain's comes first and the producer lists the inner again: an element is never left
//! in a queue that no visit will read. A visit ends one of four ways: at its per-visit cap
//! (visited again next round), for want of demand with elements left (kept aside, moved back
//! to the list when a round starts with room: after the next request), empty (off the list
//! until its producer lists it again), or ended (removed). Known iterators are listed by the
//! drain alone. The loom models `merge_ready_list_keeps_a_late_element` (twin: the flag
//! cleared after the visit, `Fault::MergeUnlistsAfterVisit`: an element queued after the
//! visit's last look at the queue waits forever) and `merge_inner_end_races_its_admission`
//! (twin: the queue looked at before the end) pin it.
//!
//! [`observe_on`] is the island's input side: see its docs.
//!
//! # Costs (counted)
//!
//! Instructions per element under callgrind (`benches/examples/merge_prof.rs`, the
//! difference of two sizes, an unbounded `for_each` subscriber whose own `on_next` is 8 of
//! them), against futures' `StreamExt::flat_map` on the same shapes (`fut-flat`,
//! `fut-flatjust`):
//!
//! | shape | ours | futures `flat_map` |
//! |---|---|---|
//! | 1,000 known iterators of 1,000 (`iter`, `flat`: the typed lane) | 21 | 28 |
//! | `range(0..n).flat_map(just)` (`flatjust`: a value per inner) | 41 (56 before value runs) | 25 |
//! | `merge` of 1,000 values (`just`) | 75 (92 before value runs) | |
//! | 1,000 subscribed ranges of 1,000 (`subscribed`) | 130 | |
//!
//! The typed lane's loop is 13 instructions an element (the demand count, the iterator, the
//! indirect `on_next`, the cancel flag); guarding each call on its own instead of the batch
//! made it 15. A pulled outer's values go in **runs**: the demand, the waiting values and
//! the outer's replenish batch are looked at once per run (`Core::value_run` in `core.rs`),
//! the counts added once per run, and the value handed back out of the inner's guarded visit
//! to be delivered by the pull loop (whose counters then stay in registers): per value, the
//! outer's `next`, the mapping, the visit, the guarded `on_next` and the cancel flag. What is
//! left per value is mostly those calls' guards and the subscriber's own `on_next`. The runs
//! cost a size-1 subscription about 50 instructions of 2,700 (`flatjust 1`).
//!
//! Not cut yet: with subscribed inners that emit inside the outer's `request`, 20 of the 130
//! per element (and a locked `fetch_add`) are `OuterRequests::flush_pending` entered from each
//! element's fast path only to count a miss: an inner that completed gave its place back
//! (`pending` is not 0) while the flush that requested it is still on the stack. Skipping the
//! flush needs to know that the drain hold added nothing to `pending` (a flag in the drain's
//! state set by every add made with the drain held), and a loom model.
//!
//! **Inners on other threads** (`merge_prof async 1000`: a merge of 1,000 islands of 1,000
//! on a 2-thread pool, each island's elements arriving on whichever pool thread runs it),
//! sampled with `perf` (cpu-clock) before the ready list: 38% of the time in `InnerSubscriber::on_next` (the fast
//! path and the enqueue, with the drain's state and the subscriber bouncing between the two
//! threads that take the drain in turn), 30% in `Core::pass`. A pass serves the inners
//! round-robin by **visiting every one**: with 1,000 subscribed inners mostly idle, each of
//! the ~3 passes per inner (3,000 per 1,000,000 elements; 18-100% of the inners queued on
//! contention in a run) reads 1,000 slots on 1,000 cache lines, and repeats the round while
//! it moved anything. What would cut it: a ready list (an inner that queues or ends pushes
//! its index once, the pass visits only those, and the ones stalled on demand on the next
//! request), and a round that is repeated only when a visit hit its per-visit cap (new
//! arrivals and requests already re-run the drain loop). The second is done (2026-12-03): a
//! pass no longer ends with a round that finds nothing, which cut the passes' instructions
//! by a fifth (callgrind, `merge_prof async 1000 2`, one run each: `Core::pass` inclusive
//! 178 → 141 million, the whole run 531 → 496 million); `tests/merge_scale.rs`'s counts,
//! the merge loom models and 40 runs of `tests/merge_hazard.rs` pass unchanged. The ready
//! list is the first (2026-12-03, described under "How the drain works"): callgrind,
//! `merge_prof async 1000 2` (2,000,000 elements, one run each; valgrind runs the threads one
//! at a time, so the interleavings are not the real ones): the whole run 494 → 385 million
//! instructions (247 → 193 per element), `Core::pass`'s row (inclusive) 148 → 29 million.
//! Timed (`merge_prof async 1000 10`, main's binary against this one, alternated under the
//! bench lock on the 2-core machine), two sets: 6 pairs, median 17.7 → 29.8 M elements/s
//! (each pair 1.2x-2.2x); 10 pairs, median 27.6 → 44.0 (each pair 1.1x-2.8x, median 1.6x;
//! main's runs 14.8-33.6, this one's 25.9-57.4: the figure still swings with which thread
//! takes the drain). `bench-report --quick --only merge-n-async-of-n` alternated twice each
//! could not tell the two apart (ours 21.3 and 31.4 against main's 21.7 and 31.4, tokio's
//! `StreamMap` 5.1-15.1 in the same runs): its timed runs of about 80 ms are shorter than one
//! op of 1,000,000 elements. The shapes on one thread did not move (callgrind, per element,
//! sizes 200 and 400, or 2,000 and 10,000 for values, main → ready list): `subscribed` 124 →
//! 124, `iter` 20 → 20, `just` 70-73 both (three runs each), `flatjust` 38 → 39. What is left
//! is mostly `InnerSubscriber::on_next`: the fast path and the enqueue, with the drain's
//! state bouncing between the two threads.
//!
//! # Layout
//!
//! | file | what it holds |
//! |---|---|
//! | `inner.rs` | [`Inner`], [`InnerSource`], [`Subscribed`]: what an inner stream is |
//! | `core.rs` | the drain of a plain-publisher merge: its state, the pass, the downstream subscription |
//! | `shared.rs` | what a subscribed inner shares with its drain: its end, its queue once made, its subscription |
//! | `subscribers.rs` | the outer's and the inners' subscribers of a plain-publisher merge |
//! | `typed.rs` | the typed lane: a known iterator drained in a loop compiled for its type |
//! | `publisher.rs` | [`FlatMap`], [`merge`], [`MergeExt`] |
//! | `pull.rs` | the pulled outer ([`OuterPulled`]): a known iterator as the outer, pulled with its static type |
//! | `observe_on.rs` | [`observe_on`] |
//! | `stage.rs` | the fan-in stage of a flow's `flat_map` |
//! | `flow.rs` | the `Flow` operators |
//!
//! # Examples
//!
//! ```
//! use rs_api::Publisher;
//! use rs_impl::merge::MergeExt;
//! use rs_impl::{source, subscriber::{collect, RequestStrategy}};
//!
//! // 100 inners of 100 elements: known iterators, merged without a subscription each.
//! let p = source::range(0u64..100).flat_map(|i| source::range(i * 100..(i + 1) * 100), 8, 128);
//! let (s, h) = collect(RequestStrategy::Prefetch(64));
//! p.subscribe(Box::new(s));
//! let mut seen = h.wait().unwrap();
//! seen.sort();
//! assert_eq!(seen, (0..10_000).collect::<Vec<_>>());
//! ```

mod core;
mod flow;
mod inner;
mod observe_on;
mod publisher;
mod pull;
mod shared;
mod stage;
mod subscribers;
mod typed;

use crate::loom::sync::atomic::{AtomicU64, Ordering};

pub use flow::{FlatMapShape, MergeShape, ObserveOnShape};
pub use inner::{Inner, InnerSource, InnerVisitor, Subscribed};
pub use observe_on::observe_on;
pub use publisher::{
    merge, merge_with, FlatMap, Identity, Inners, InnersIter, Merge, MergeExt, OuterPulled,
    OuterSubscribed,
};

/// The prefetch of each inner by default (RxJava's buffer size).
pub const DEFAULT_PREFETCH: usize = 128;

/// The inners subscribed at once by default (RxJava's flatMap default).
pub const DEFAULT_MAX_CONCURRENCY: usize = 128;

/// How a merge runs: inners at once, each inner's prefetch, when errors are delivered.
///
/// # Examples
///
/// ```
/// use rs_impl::merge::MergeConfig;
/// let c = MergeConfig::new().max_concurrency(4).prefetch(32).delay_errors(true);
/// assert_eq!((c.max_concurrency, c.prefetch, c.delay_errors), (4, 32, true));
/// assert_eq!(MergeConfig::default().prefetch, rs_impl::merge::DEFAULT_PREFETCH);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeConfig {
    /// Inners subscribed (or iterated) at once; `usize::MAX`: no bound.
    pub max_concurrency: usize,
    /// Elements requested from each inner up front; its queue's size.
    pub prefetch: usize,
    /// Deliver errors after every other inner ended (instead of at once).
    pub delay_errors: bool,
}

impl Default for MergeConfig {
    fn default() -> Self {
        MergeConfig {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            prefetch: DEFAULT_PREFETCH,
            delay_errors: false,
        }
    }
}

impl MergeConfig {
    /// The defaults: [`DEFAULT_MAX_CONCURRENCY`], [`DEFAULT_PREFETCH`], eager errors.
    ///
    /// # Examples
    ///
    /// See [`MergeConfig`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the inners subscribed at once.
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    ///
    /// # Examples
    ///
    /// See [`MergeConfig`].
    pub fn max_concurrency(mut self, n: usize) -> Self {
        assert!(n > 0, "MergeConfig::max_concurrency: at least one inner");
        self.max_concurrency = n;
        self
    }

    /// Sets each inner's prefetch (and queue size).
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    ///
    /// # Examples
    ///
    /// See [`MergeConfig`].
    pub fn prefetch(mut self, n: usize) -> Self {
        assert!(n > 0, "MergeConfig::prefetch: at least one element");
        self.prefetch = n;
        self
    }

    /// Delivers errors after every other inner ended.
    ///
    /// # Examples
    ///
    /// See [`MergeConfig`].
    pub fn delay_errors(mut self, delay: bool) -> Self {
        self.delay_errors = delay;
        self
    }

    /// The batch an inner is replenished by: a quarter of its prefetch (RxJava's flatMap).
    #[inline]
    pub(crate) fn replenish(&self) -> usize {
        (self.prefetch / 4).max(1)
    }

    /// Rejects zero fields (set directly on the struct).
    pub(crate) fn checked(self) -> Self {
        self.max_concurrency(self.max_concurrency)
            .prefetch(self.prefetch)
    }
}

/// What fails a merge besides its inners' own errors.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// An inner sent more elements than it was asked for, and its queue of `capacity` was
    /// full (RxJava's `MissingBackpressureException`).
    #[error("missing backpressure: an inner sent more than the {capacity} elements it was asked for (rule 1.1)")]
    MissingBackpressure {
        /// The inner's queue size (its prefetch).
        capacity: usize,
    },
    /// Several errors, delivered together at the end (with delayed errors).
    #[error("{} inner streams failed; the first: {}", .errors.len(), .errors[0])]
    Composite {
        /// Every error, in the order they were received.
        errors: Vec<rs_api::Error>,
    },
}

/// What the subscriptions of one merge publisher did (see [`FlatMap::stats`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeStats {
    /// Downstream subscriptions.
    pub subscriptions: u64,
    /// Inner publishers subscribed to (values and iterators are not).
    pub inner_subscriptions: u64,
    /// Inner queues made (each on an inner's first element that could not go straight
    /// downstream).
    pub queues: u64,
    /// Drain passes (added when a subscription ends).
    pub drain_passes: u64,
    /// Elements that went straight downstream from an inner's `on_next` (added when a
    /// subscription ends).
    pub fast_path: u64,
    /// Elements of known iterators drained by the typed lane: pulled with the iterator's
    /// static type straight into `on_next`, without a box, queue or subscription (added when a
    /// subscription ends).
    pub typed_lane: u64,
}

/// The shared counters behind [`MergeStats`] (relaxed; none is touched per element).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) subscriptions: AtomicU64,
    pub(crate) inner_subscriptions: AtomicU64,
    pub(crate) queues: AtomicU64,
    pub(crate) passes: AtomicU64,
    pub(crate) fast: AtomicU64,
    pub(crate) typed: AtomicU64,
}

/// Whatever holds a merge publisher's [`Counters`]: the block a [`FlatMap`] shares with its
/// clones and subscriptions (its function and its counters together), seen by a subscription
/// without the function's type.
pub(crate) trait Counted: Send + Sync {
    /// The counters.
    fn counters(&self) -> &Counters;
}

/// What a [`FlatMap`] shares with its clones and its subscriptions, in one block: the
/// function each outer element is mapped with, and the counters behind [`FlatMap::stats`].
pub(crate) struct Shared<F> {
    /// The function.
    pub(crate) f: F,
    /// The counters of every subscription.
    pub(crate) counters: Counters,
}

impl<F: Send + Sync> Counted for Shared<F> {
    fn counters(&self) -> &Counters {
        &self.counters
    }
}

impl Counters {
    pub(crate) fn snapshot(&self) -> MergeStats {
        MergeStats {
            subscriptions: self.subscriptions.load(Ordering::Relaxed),
            inner_subscriptions: self.inner_subscriptions.load(Ordering::Relaxed),
            queues: self.queues.load(Ordering::Relaxed),
            drain_passes: self.passes.load(Ordering::Relaxed),
            fast_path: self.fast.load(Ordering::Relaxed),
            typed_lane: self.typed.load(Ordering::Relaxed),
        }
    }
}
