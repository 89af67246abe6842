//! The merge of plain publishers: one [`Core`] per downstream subscription — its drain loop,
//! the inners it runs, the outer's deferred requests — and its downstream subscription.
//!
//! **After the end, nothing is admitted.** An inner that reaches a drain which has ended
//! (cancelled or terminated) is let go at once, a subscribed one cancelled, wherever it
//! arrives: through the shared list (the passes after the end discard it) or straight into
//! the state when it finds the drain free (`admit_one`, `Core::admit_typed`). The
//! second way used to keep it: an inner pulled by `subscribe` while another thread's cancel
//! ran the last pass was subscribed to and never cancelled, and an island inner then waited
//! for demand forever, in a reference cycle with this core (found by
//! `rs-impl/tests/merge_hazard.rs`; main had it too; `admit_one` tells the race, and the loom
//! model `merge_inner_arrives_after_cancel` pins it).

use std::any::Any;
use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
// The core is handed out as an `rs_api::SubscriptionRef`, a std `Arc` in every build (as in
// `source::pull`); the reference counts are no part of any protocol here, and every atomic and
// lock inside comes from the facade.
use std::sync::Arc as StdArc;

use rs_api::{BoxSubscriber, Error, SpecViolation, Subscription, SubscriptionRef, UNBOUNDED};

use super::shared::InnerShared;
use super::{Counted, MergeConfig, MergeError};
use crate::demand::Demand;
use crate::handoff::SpscConsumer;
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;
use crate::serial::DrainLoop;

/// Downstream cancelled, or the stream ended: nothing more is delivered.
pub(super) const CANCELLED: usize = 1;
/// Downstream requested 0 (rule 3.9).
pub(super) const BAD_REQUEST: usize = 1 << 1;
/// An error waits (eager mode): the stream fails at the next pass.
pub(super) const FAILED: usize = 1 << 2;
/// The outer stream ended (completed or failed): no more inners arrive.
const OUTER_DONE: usize = 1 << 3;

/// An inner as it reaches the drain: a value, an iterator, or a subscribed publisher.
pub(super) enum Arrival<U> {
    Just(U),
    Iter(Box<dyn Iterator<Item = U> + Send>),
    Sub(StdArc<InnerShared<U>>),
}

/// An inner the drain serves.
pub(super) enum Slot<U> {
    /// A known iterator, read one ahead when there is no demand (so that its end is seen
    /// without demand, rules 1.2 and 1.5).
    Iter {
        iter: Box<dyn Iterator<Item = U> + Send>,
        ahead: Option<U>,
    },
    /// A subscribed publisher: its queue once it made one, its subscription for replenishing,
    /// and what was taken since the last replenish.
    Sub {
        inner: StdArc<InnerShared<U>>,
        queue: Option<SpscConsumer<U>>,
        subscription: Option<SubscriptionRef>,
        consumed: usize,
    },
}

/// How a visit of an inner left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// It gave its per-visit cap and may hold more: visited again in the next round.
    Capped,
    /// Downstream had no room and it holds more: visited again once demand came.
    NoRoom,
    /// It gave everything it held (its flag cleared first: what it queues next lists it).
    Empty,
    /// Its terminal signal was seen with nothing left: removed.
    Ended,
}

/// The inners the drain serves, each in a place of its own that it keeps until it ends (so
/// that an inner on another thread can name it), and which of them the next round visits:
/// the **ready list** (see the module docs of [`crate::merge`], "How the drain works", and
/// "Costs" for what it saved).
///
/// A place is in `ready` or `stalled` at most once (its `queued` mark); known iterators are
/// listed by the drain itself while they have elements, subscribed inners also by their
/// producers ([`InnerShared::list`]) through the core's shared list.
pub(super) struct Slots<U> {
    places: Vec<Option<Place<U>>>,
    /// Places free for the next inner (reused: no allocation in steady state).
    free: Vec<usize>,
    live: usize,
    /// Places the next round visits, in round-robin order.
    ready: VecDeque<usize>,
    /// Places that stopped for want of demand with elements left: moved back to `ready`
    /// when a round starts with room.
    stalled: Vec<usize>,
}

struct Place<U> {
    slot: Slot<U>,
    /// In `ready` or `stalled`.
    queued: bool,
}

impl<U> Slots<U> {
    fn new() -> Self {
        Slots {
            places: Vec::new(),
            free: Vec::new(),
            live: 0,
            ready: VecDeque::new(),
            stalled: Vec::new(),
        }
    }

    /// Whether no inner is served.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Takes `slot` in and lists it: the next round visits it.
    pub(super) fn add(&mut self, slot: Slot<U>) {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.places.push(None);
                self.places.len() - 1
            }
        };
        if let Slot::Sub { inner, .. } = &slot {
            inner.set_slot(i);
        }
        self.places[i] = Some(Place { slot, queued: true });
        self.ready.push_back(i);
        self.live += 1;
    }

    /// Lists the inner at `i` (named by its producer), unless it is listed already or the
    /// place is free (the inner ended meanwhile).
    fn list(&mut self, i: usize) {
        if let Some(Some(p)) = self.places.get_mut(i) {
            if !p.queued {
                p.queued = true;
                self.ready.push_back(i);
            }
        }
    }

    /// Frees the place `i` (its inner ended), giving its slot back.
    fn remove(&mut self, i: usize) -> Slot<U> {
        let p = self.places[i].take().expect("a live place");
        self.free.push(i);
        self.live -= 1;
        p.slot
    }

    /// Every inner, taken out (the subscription ended).
    fn take_all(&mut self) -> impl Iterator<Item = Slot<U>> + '_ {
        self.ready.clear();
        self.stalled.clear();
        self.free.clear();
        self.live = 0;
        self.places.drain(..).flatten().map(|p| p.slot)
    }
}

/// The downstream end, as the drainer holds it.
pub(super) struct Out<U> {
    pub(super) subscriber: Option<BoxSubscriber<U>>,
    /// The handle for `on_subscribe`, until the first pass delivers it.
    pub(super) first: Option<SubscriptionRef>,
    /// Terminated or cancelled: the subscriber is gone.
    finished: bool,
    pub(super) emitted: u64,
    /// The demand total as last read.
    pub(super) limit: u64,
    passes: u64,
    pub(super) fast: u64,
    /// Elements the typed lane delivered.
    pub(super) typed: u64,
}

/// Values a pulled outer may deliver straight downstream, one after the other, without
/// [`Core::take_value`]'s checks and counts per value (see [`Core::value_run`]): `left` of the
/// `granted` are still to go; the counts of the others are added by [`Core::settle_run`].
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ValueRun {
    pub(super) granted: u64,
    pub(super) left: u64,
}

/// A subscriber's panic, caught.
pub(super) type Panic = Box<dyn Any + Send>;

impl<U> Out<U> {
    /// Whether downstream takes one more element now.
    #[inline]
    pub(super) fn has_room(&mut self, demand: &Demand) -> bool {
        if self.emitted != self.limit {
            return true;
        }
        self.limit = demand.total();
        self.limit == UNBOUNDED || self.emitted != self.limit
    }

    /// Delivers `u` without counting it (a value of a [`ValueRun`], counted when the run is
    /// settled).
    #[inline]
    pub(super) fn emit_uncounted(&mut self, u: U) -> Result<(), Panic> {
        let Some(s) = self.subscriber.as_mut() else {
            panics::drop_guarded(u);
            return Ok(());
        };
        catch_unwind(AssertUnwindSafe(|| s.on_next(u)))
    }

    /// Counts an element delivered on the fast path.
    #[inline]
    pub(super) fn count_fast(&mut self) {
        self.fast += 1;
    }

    /// Delivers `u` (the caller checked the room).
    #[inline]
    pub(super) fn emit(&mut self, u: U) -> Result<(), Panic> {
        let Some(s) = self.subscriber.as_mut() else {
            panics::drop_guarded(u);
            return Ok(());
        };
        self.emitted += 1;
        catch_unwind(AssertUnwindSafe(|| s.on_next(u)))
    }
}

/// What only the drainer touches.
pub(super) struct State<U> {
    pub(super) out: Out<U>,
    /// Values that found no demand.
    pub(super) scalars: VecDeque<U>,
    pub(super) inners: Slots<U>,
    /// Inners finished since the outer was last asked for more.
    pub(super) completed: u64,
    /// Values emitted since the outer was last asked for more.
    scalars_done: u64,
    /// The arrivals taken from the shared list (reused).
    taken: Vec<Arrival<U>>,
    /// The places taken from the shared ready list (reused).
    listed: Vec<usize>,
    /// The outer's subscription was let go after its end.
    outer_released: bool,
}

impl<U> State<U> {
    /// Whether the subscription ended.
    #[inline]
    pub(super) fn finished(&self) -> bool {
        self.out.finished
    }
}

/// The outer's requests, made outside the drain loop (serially, by whoever finds them
/// pending), so that an outer that emits inside `request` subscribes its inners while nobody
/// drains, and their first elements take the fast path.
struct OuterRequests {
    subscription: Mutex<Option<SubscriptionRef>>,
    pending: AtomicU64,
    wip: AtomicUsize,
}

impl OuterRequests {
    fn add(&self, n: u64) {
        if n != 0 {
            self.pending.fetch_add(n, Ordering::AcqRel);
        }
    }

    /// Makes the pending requests, unless another caller is making them (it will see these).
    /// Inlined: it runs after every element of the fast path, where nothing is pending but
    /// once in a batch (a call that returned at once was 17 instructions of a subscribed
    /// inner's 127 per element).
    #[inline]
    fn flush(&self) {
        if self.pending.load(Ordering::Acquire) != 0 {
            self.flush_pending();
        }
    }

    /// [`flush`](Self::flush) with something pending.
    #[inline(never)]
    fn flush_pending(&self) {
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        let mut missed = 1;
        loop {
            let n = self.pending.swap(0, Ordering::AcqRel);
            if n != 0 {
                let s = self.subscription.lock().clone();
                if let Some(s) = s {
                    s.request(n);
                }
            }
            let before = self.wip.fetch_sub(missed, Ordering::AcqRel);
            missed = before - missed;
            if missed == 0 {
                break;
            }
        }
    }

    /// Cancels the outer (once); `quietly`: only let it go (it ended by itself).
    fn release(&self, quietly: bool) {
        let s = self.subscription.lock().take();
        if let Some(s) = s {
            if !quietly {
                s.cancel();
            }
        }
    }
}

/// One downstream subscription of a merge (see the module docs of [`crate::merge`]).
pub(super) struct Core<U> {
    pub(super) drain: DrainLoop<State<U>>,
    pub(super) demand: Demand,
    pub(super) flags: AtomicUsize,
    /// Errors held for the end (delay mode) or for the next pass (eager mode).
    errors: Mutex<Vec<Error>>,
    /// Inners that arrived while the drain was busy.
    incoming: Mutex<Vec<Arrival<U>>>,
    pub(super) has_incoming: AtomicBool,
    /// The places of subscribed inners that queued an element or ended since the drain last
    /// visited them (each once until its next visit: [`InnerShared::list`]).
    ready: Mutex<Vec<usize>>,
    has_ready: AtomicBool,
    outer: OuterRequests,
    pub(super) config: MergeConfig,
    /// The publisher's counters (in the block it shares with its subscriptions).
    pub(super) counters: StdArc<dyn Counted>,
}

impl<U> fmt::Debug for Core<U> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Core")
            .field("flags", &self.flags.load(Ordering::Relaxed))
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<U: Send + 'static> Core<U> {
    /// A core for `subscriber`, which gets `on_subscribe` before this returns.
    pub(super) fn start(
        subscriber: BoxSubscriber<U>,
        config: MergeConfig,
        counters: StdArc<dyn Counted>,
    ) -> StdArc<Self> {
        counters
            .counters()
            .subscriptions
            .fetch_add(1, Ordering::Relaxed);
        let core = StdArc::new(Core {
            drain: DrainLoop::new(State {
                out: Out {
                    subscriber: Some(subscriber),
                    first: None,
                    finished: false,
                    emitted: 0,
                    limit: 0,
                    passes: 0,
                    fast: 0,
                    typed: 0,
                },
                scalars: VecDeque::new(),
                inners: Slots::new(),
                completed: 0,
                scalars_done: 0,
                taken: Vec::new(),
                listed: Vec::new(),
                outer_released: false,
            }),
            demand: Demand::new(),
            flags: AtomicUsize::new(0),
            errors: Mutex::new(Vec::new()),
            incoming: Mutex::new(Vec::new()),
            has_incoming: AtomicBool::new(false),
            ready: Mutex::new(Vec::new()),
            has_ready: AtomicBool::new(false),
            outer: OuterRequests {
                subscription: Mutex::new(None),
                pending: AtomicU64::new(0),
                wip: AtomicUsize::new(0),
            },
            config,
            counters,
        });
        let handle: SubscriptionRef = core.clone();
        let mut first = Some(handle);
        core.drain.drain(|st| {
            if let Some(h) = first.take() {
                st.out.first = Some(h);
            }
            core.pass(st);
        });
        core
    }

    /// Whether nothing more is delivered (cancelled or ended).
    #[inline]
    pub(super) fn is_cancelled(&self) -> bool {
        self.flags.load(Ordering::Acquire) & CANCELLED != 0
    }

    /// Records work and drains if nobody does; then makes the outer's pending requests.
    pub(super) fn signal(&self) {
        if self.drain.drain(|st| self.pass(st)) {
            self.outer.flush();
        }
    }

    /// After a fast path that held the drain: the outer's pending requests.
    #[inline]
    pub(super) fn after_fast(&self) {
        self.outer.flush();
    }

    /// The outer subscribed: keep its subscription (unless the merge ended) and ask for the
    /// first inners.
    pub(super) fn outer_subscribed(&self, s: SubscriptionRef) {
        {
            let mut slot = self.outer.subscription.lock();
            if self.is_cancelled() || slot.is_some() {
                drop(slot);
                s.cancel(); // ended meanwhile (3.13), or a second subscription (2.5)
                return;
            }
            *slot = Some(s);
        }
        let mc = self.config.max_concurrency;
        self.outer.add(if mc == usize::MAX {
            UNBOUNDED
        } else {
            mc as u64
        });
        self.outer.flush();
    }

    /// Cancels the outer (its function failed).
    pub(super) fn cancel_outer(&self) {
        self.outer.release(false);
    }

    /// Hands `arrival` to the drain: into its state at once when nobody drains (and drains),
    /// or through the shared list.
    pub(super) fn arrive(&self, arrival: Arrival<U>) {
        let r = self
            .drain
            .try_drain_with(arrival, |st, a| admit_one(st, a), |st| self.pass(st));
        match r {
            Ok(()) => self.outer.flush(),
            Err(a) => {
                self.incoming.lock().push(a);
                self.has_incoming.store(true, Ordering::Release);
                self.signal();
            }
        }
    }

    /// A value from the outer's function: straight downstream when nobody drains, no value is
    /// waiting before it and there is demand; otherwise to the drain.
    pub(super) fn arrive_value(&self, u: U) {
        let r = self
            .drain
            .try_fast(u, |st, u| self.take_value(st, u), |st| self.pass(st));
        match r {
            Ok(()) => self.outer.flush(),
            Err(u) => self.arrive(Arrival::Just(u)),
        }
    }

    /// With the drain held: a value straight downstream when no value waits before it and
    /// there is demand, else kept for a pass.
    ///
    /// Inlined into the pulled outer's loop: per value, the checks, the counts and the
    /// `on_next`; the rest (a panic, a value kept, the outer asked for more) is out of line.
    #[inline(always)]
    pub(super) fn take_value(&self, st: &mut State<U>, u: U) {
        if !st.out.finished && st.scalars.is_empty() && st.out.has_room(&self.demand) {
            st.out.fast += 1;
            if let Err(p) = st.out.emit(u) {
                self.subscriber_panicked(st, p);
                return;
            }
            st.scalars_done += 1;
            if st.scalars_done >= self.scalar_limit() {
                self.replenish_scalars(st);
            }
        } else {
            self.keep_value(st, u);
        }
    }

    /// With the drain held: how many values, at most `most`, may go straight downstream one
    /// after the other from now with no check but the cancel flag (a [`ValueRun`]): none when
    /// the subscription ended or a value waits; else what the demand read now and the
    /// outer's replenish batch (RxJava's scalar limit) leave room for. The run's counts are
    /// added by [`settle_run`](Self::settle_run).
    #[inline]
    pub(super) fn value_run(&self, st: &mut State<U>, most: u64) -> u64 {
        if st.out.finished || !st.scalars.is_empty() || st.out.subscriber.is_none() {
            return 0;
        }
        if st.out.emitted == st.out.limit {
            st.out.limit = self.demand.total();
        }
        let room = if st.out.limit == UNBOUNDED {
            u64::MAX
        } else {
            st.out.limit - st.out.emitted
        };
        room.min(self.scalar_limit().saturating_sub(st.scalars_done))
            .min(most)
    }

    /// With the drain held: adds what `run` delivered since it was last settled to the counts
    /// [`take_value`](Self::take_value) keeps per value (emitted, fast path, values toward the
    /// outer's replenish), and asks the outer for more when the batch is full — the same
    /// requests, at the same points of the stream, as per value.
    #[inline]
    pub(super) fn settle_run(&self, st: &mut State<U>, run: &mut ValueRun) {
        let n = run.granted - run.left;
        if n == 0 {
            return;
        }
        run.granted = run.left;
        st.out.emitted += n;
        st.out.fast += n;
        st.scalars_done += n;
        if st.scalars_done >= self.scalar_limit() {
            self.replenish_scalars(st);
        }
    }

    /// With the drain held: a value that cannot go downstream now is kept for a pass (or
    /// dropped, after the end).
    #[inline(never)]
    fn keep_value(&self, st: &mut State<U>, u: U) {
        if st.out.finished {
            panics::drop_guarded(u);
        } else {
            st.scalars.push_back(u);
        }
    }

    /// Values emitted before the outer is asked for as many more: half its concurrency
    /// (RxJava's scalar limit).
    #[inline]
    fn scalar_limit(&self) -> u64 {
        (self.config.max_concurrency / 2).max(1) as u64
    }

    /// With the drain held: an inner that is nothing gives its place back to the outer (asked
    /// once the drain is left).
    pub(super) fn empty_held(&self) {
        self.outer.add(1);
    }

    /// Asks the outer for more once half its concurrency of values was emitted (RxJava's
    /// scalar limit).
    fn replenish_scalars(&self, st: &mut State<U>) {
        if st.scalars_done >= self.scalar_limit() {
            self.outer.add(st.scalars_done);
            st.scalars_done = 0;
        }
    }

    /// After `inner` queued an element or ended: puts it on the ready list unless the drain
    /// will visit it anyway. The caller then runs the drain ([`signal`](Self::signal)).
    #[inline]
    pub(super) fn list(&self, inner: &InnerShared<U>) {
        if let Some(i) = inner.list() {
            self.ready.lock().push(i);
            self.has_ready.store(true, Ordering::Release);
        }
    }

    /// An inner that is nothing: its place goes back to the outer.
    pub(super) fn inner_empty(&self) {
        self.outer.add(1);
        self.outer.flush();
    }

    /// Records `error` (an inner's or, with `outer`, the outer's, which ends it); eager mode
    /// fails the stream at the next pass.
    pub(super) fn error(&self, error: Error, outer: bool) {
        self.errors.lock().push(error);
        let mut bits = if self.config.delay_errors { 0 } else { FAILED };
        if outer {
            bits |= OUTER_DONE;
        }
        if bits != 0 {
            self.flags.fetch_or(bits, Ordering::AcqRel);
        }
        self.signal();
    }

    /// With the drain held (the pulled outer's iterator ended inside the drain): the outer
    /// completed; the pass that follows sees it, as it would see a signal's.
    pub(super) fn outer_complete_held(&self) {
        self.flags.fetch_or(OUTER_DONE, Ordering::AcqRel);
    }

    /// The outer completed.
    pub(super) fn outer_complete(&self) {
        self.flags.fetch_or(OUTER_DONE, Ordering::AcqRel);
        self.signal();
    }

    /// One drain pass (the module docs of [`crate::merge`] describe it).
    pub(super) fn pass(&self, st: &mut State<U>) {
        st.out.passes += 1;
        if st.out.finished {
            self.discard_incoming();
            return;
        }
        if let Some(h) = st.out.first.take() {
            if let Some(s) = st.out.subscriber.as_mut() {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_subscribe(h))) {
                    self.subscriber_panicked(st, p);
                    return;
                }
            }
        }
        loop {
            let flags = self.flags.load(Ordering::Acquire);
            if flags & CANCELLED != 0 && !fault::active(Fault::MergeIgnoresCancel) {
                self.stop(st, None);
                return;
            }
            if flags & BAD_REQUEST != 0 {
                self.stop(st, Some(Some(SpecViolation::NonPositiveRequest.into())));
                return;
            }
            if flags & FAILED != 0 {
                let e = self.take_error();
                self.stop(st, Some(Some(e)));
                return;
            }
            // Loaded before the arrivals are taken: every inner the outer sent before its end
            // is in the list by then.
            let outer_done = flags & OUTER_DONE != 0;
            if outer_done && !st.outer_released {
                st.outer_released = true;
                self.outer.release(true);
            }
            if self.has_incoming.load(Ordering::Acquire) {
                self.has_incoming.store(false, Ordering::Release);
                let mut taken = std::mem::take(&mut st.taken);
                std::mem::swap(&mut *self.incoming.lock(), &mut taken);
                st.taken = taken;
            }
            self.admit(st);
            if self.has_ready.load(Ordering::Acquire) {
                self.has_ready.store(false, Ordering::Release);
                let mut listed = std::mem::take(&mut st.listed);
                std::mem::swap(&mut *self.ready.lock(), &mut listed);
                for i in listed.drain(..) {
                    st.inners.list(i);
                }
                st.listed = listed;
            }
            let again = match self.serve(st) {
                Ok(again) => again,
                Err(p) => {
                    self.subscriber_panicked(st, p);
                    return;
                }
            };
            if st.out.finished {
                return;
            }
            if outer_done
                && st.inners.is_empty()
                && st.scalars.is_empty()
                && !self.has_incoming.load(Ordering::Acquire)
            {
                let errors = std::mem::take(&mut *self.errors.lock());
                let end = match errors.len() {
                    0 => None,
                    1 => errors.into_iter().next(),
                    _ => Some(Error::new(MergeError::Composite { errors })),
                };
                // The terminal signal, outside every queue: after they all drained.
                self.stop(st, Some(end));
                return;
            }
            if !again {
                break;
            }
        }
        if st.completed != 0 {
            self.outer.add(st.completed);
            st.completed = 0;
        }
    }

    /// Moves the arrivals taken into the drain's own lists.
    fn admit(&self, st: &mut State<U>) {
        if st.taken.is_empty() {
            return;
        }
        let mut taken = std::mem::take(&mut st.taken);
        for a in taken.drain(..) {
            admit_one(st, a);
        }
        st.taken = taken;
    }

    /// Emits what the values and the listed inners hold (the ready list, round-robin; those
    /// stalled for want of demand are listed again when the round starts with room), and
    /// removes the inners that ended. `true` if the round must be repeated: a visit stopped at
    /// its per-visit cap with more to give, or the subscriber cancelled meanwhile (the pass's
    /// next round acts on it).
    ///
    /// A subscribed inner's flag is cleared at the start of its visit, before its end and its
    /// queue are looked at ([`InnerShared::list`]): a visit that finds it empty takes it off
    /// the list, and what it queues after that look lists it again.
    ///
    /// A round that took everything it could is not repeated: whatever arrives after an
    /// inner's visit (an element queued, an inner's end, a new inner, a request) runs the
    /// drain again through [`signal`](Self::signal) (the drain loop re-runs the pass for work
    /// posted while it ran), and an inner stopped for want of demand waits for a request,
    /// which signals. Repeating while anything moved (as before) ended every pass with a
    /// round that found nothing, and every round visited every inner: with 1,000 subscribed
    /// inners, 1,000 slots read for nothing each time (`merge_prof async 1000`, the module
    /// docs).
    fn serve(&self, st: &mut State<U>) -> Result<bool, Panic> {
        while !st.scalars.is_empty() && st.out.has_room(&self.demand) {
            let u = st.scalars.pop_front().expect("not empty");
            st.out.emit(u)?;
            st.scalars_done += 1;
            if self.cancelled_meanwhile() {
                return Ok(true);
            }
        }
        self.replenish_scalars(st);
        let State {
            out,
            inners,
            completed,
            ..
        } = st;
        if inners.ready.is_empty() && inners.stalled.is_empty() {
            return Ok(false);
        }
        if !inners.stalled.is_empty() && out.has_room(&self.demand) {
            inners.ready.extend(inners.stalled.drain(..));
        }
        let mut again = false;
        let per_visit = self.config.prefetch.max(1);
        // One round: the places listed now, each visited once (those listed during the round
        // wait for the next).
        let mut visits = inners.ready.len();
        while visits > 0 {
            visits -= 1;
            let Some(i) = inners.ready.pop_front() else {
                break;
            };
            let place = inners.places[i].as_mut().expect("a listed place is live");
            let visit = match &mut place.slot {
                Slot::Iter { iter, ahead } => self.serve_iter(out, iter, ahead, per_visit)?,
                Slot::Sub {
                    inner,
                    queue,
                    subscription,
                    consumed,
                } => {
                    inner.unlist();
                    let v = self.serve_sub(out, inner, queue, subscription, consumed, per_visit)?;
                    inner.unlist_late();
                    v
                }
            };
            match visit {
                Visit::Capped => {
                    again = true;
                    inners.ready.push_back(i);
                }
                Visit::NoRoom => inners.stalled.push(i),
                Visit::Empty => place.queued = false,
                Visit::Ended => {
                    *completed += 1;
                    drop_slot(inners.remove(i));
                }
            }
            if self.cancelled_meanwhile() {
                return Ok(true);
            }
        }
        Ok(again)
    }

    /// Pulls from a known iterator while there is demand (at most `cap`); without demand,
    /// reads one ahead to see its end.
    fn serve_iter(
        &self,
        out: &mut Out<U>,
        iter: &mut Box<dyn Iterator<Item = U> + Send>,
        ahead: &mut Option<U>,
        cap: usize,
    ) -> Result<Visit, Panic> {
        for _ in 0..cap {
            if !out.has_room(&self.demand) {
                if ahead.is_none() {
                    match self.next_guarded(iter) {
                        Some(u) => *ahead = Some(u),
                        None => return Ok(Visit::Ended),
                    }
                }
                return Ok(Visit::NoRoom);
            }
            let u = match ahead.take() {
                Some(u) => u,
                None => match self.next_guarded(iter) {
                    Some(u) => u,
                    None => return Ok(Visit::Ended),
                },
            };
            out.emit(u)?;
            if self.cancelled_meanwhile() {
                return Ok(Visit::Capped);
            }
        }
        Ok(Visit::Capped)
    }

    /// The next item of an inner iterator; a panic in it is that inner's error.
    fn next_guarded(&self, iter: &mut Box<dyn Iterator<Item = U> + Send>) -> Option<U> {
        match catch_unwind(AssertUnwindSafe(|| iter.next())) {
            Ok(x) => x,
            Err(p) => {
                self.iterator_panicked(p);
                None
            }
        }
    }

    /// An inner iterator panicked: that inner's error (it ends).
    pub(super) fn iterator_panicked(&self, p: Panic) {
        let e = Error::msg(format!(
            "an inner iterator panicked: {}",
            panics::panic_message(&*p)
        ));
        self.errors.lock().push(e);
        if !self.config.delay_errors {
            self.flags.fetch_or(FAILED, Ordering::AcqRel);
        }
    }

    /// Takes from a subscribed inner's queue while there is demand (at most `cap`),
    /// replenishing it every `prefetch / 4`; it ended once its terminal signal was seen and
    /// its queue is empty. The caller cleared the inner's listed flag first
    /// ([`InnerShared::unlist`]): a visit that ends [`Visit::Empty`] leaves it to the
    /// producer to list it again.
    fn serve_sub(
        &self,
        out: &mut Out<U>,
        inner: &StdArc<InnerShared<U>>,
        queue: &mut Option<SpscConsumer<U>>,
        subscription: &mut Option<SubscriptionRef>,
        consumed: &mut usize,
        cap: usize,
    ) -> Result<Visit, Panic> {
        // The end first, then the queue: what was queued before the end is seen with it.
        let done = if fault::active(Fault::MergeEndBeforeQueue) {
            if queue.is_none() {
                *queue = inner.take_consumer();
            }
            inner.is_done()
        } else {
            let done = inner.is_done();
            if queue.is_none() {
                *queue = inner.take_consumer();
            }
            done
        };
        let gone = if done { Visit::Ended } else { Visit::Empty };
        let Some(q) = queue.as_mut() else {
            return Ok(gone);
        };
        let limit = self.config.replenish();
        for _ in 0..cap {
            if !out.has_room(&self.demand) {
                return Ok(if q.is_empty() { gone } else { Visit::NoRoom });
            }
            let Some(u) = q.poll() else {
                return Ok(gone);
            };
            out.emit(u)?;
            *consumed += 1;
            if *consumed == limit && !done {
                *consumed = 0;
                if subscription.is_none() {
                    *subscription = inner.subscription();
                }
                if let Some(s) = subscription {
                    s.request(limit as u64);
                }
            }
            if self.cancelled_meanwhile() {
                return Ok(Visit::Capped);
            }
        }
        Ok(if done && q.is_empty() {
            Visit::Ended
        } else {
            Visit::Capped
        })
    }

    /// Whether the subscriber cancelled (or requested 0) during the last `on_next`: the pass
    /// acts on it before the next element (a cancel from inside `on_next` stops the signals at
    /// once, rule 1.8).
    #[inline]
    pub(super) fn cancelled_meanwhile(&self) -> bool {
        self.flags.load(Ordering::Acquire) & (CANCELLED | BAD_REQUEST) != 0
            && !fault::active(Fault::MergeIgnoresCancel)
    }

    /// The first error held (eager mode).
    fn take_error(&self) -> Error {
        let mut errors = self.errors.lock();
        if errors.is_empty() {
            Error::msg("merge failed")
        } else {
            errors.remove(0)
        }
    }

    /// A subscriber's panic (rule 2.13): the subscription is cancelled, the panic reported.
    pub(super) fn subscriber_panicked(&self, st: &mut State<U>, p: Panic) {
        panics::drop_guarded(st.out.subscriber.take());
        self.stop(st, None);
        panics::subscriber_panicked("on_next", p);
    }

    /// Ends the subscription: every inner and the outer cancelled, what they hold dropped;
    /// `end`: `Some(None)` completes, `Some(Some(e))` fails, `None` signals nothing.
    fn stop(&self, st: &mut State<U>, end: Option<Option<Error>>) {
        if st.out.finished {
            return;
        }
        st.out.finished = true;
        self.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        self.outer.release(st.outer_released);
        // Each list looked at before it is drained: a subscription that ends with nothing
        // left (the usual end) pays no drain of an empty list.
        if !st.inners.is_empty() {
            for slot in st.inners.take_all() {
                if let Slot::Sub { inner, .. } = &slot {
                    inner.cancel();
                }
                drop_slot(slot);
            }
        }
        if !st.scalars.is_empty() {
            for u in st.scalars.drain(..) {
                panics::drop_guarded(u);
            }
        }
        if !st.taken.is_empty() {
            for a in st.taken.drain(..) {
                drop_arrival(a);
            }
        }
        self.discard_incoming();
        let counters = self.counters.counters();
        for (counter, n) in [
            (&counters.passes, st.out.passes),
            (&counters.fast, st.out.fast),
            (&counters.typed, st.out.typed),
        ] {
            if n != 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
        st.out.passes = 0;
        st.out.fast = 0;
        st.out.typed = 0;
        if let Some(mut s) = st.out.subscriber.take() {
            let r = match end {
                None => Ok(()),
                Some(None) => catch_unwind(AssertUnwindSafe(|| s.on_complete())),
                Some(Some(e)) => catch_unwind(AssertUnwindSafe(|| s.on_error(e))),
            };
            if let Err(p) = r {
                panics::subscriber_panicked("a terminal signal", p);
            }
            panics::drop_guarded(s);
        }
    }

    /// Drops what arrived after the end, cancelling the inners among it.
    fn discard_incoming(&self) {
        if !self.has_incoming.load(Ordering::Acquire) {
            return;
        }
        self.has_incoming.store(false, Ordering::Release);
        let arrivals = std::mem::take(&mut *self.incoming.lock());
        for a in arrivals {
            drop_arrival(a);
        }
    }
}

/// Puts one arrival into the drain's own lists; after the end, lets it go instead (a
/// subscribed inner is cancelled, so that whoever is about to subscribe to it sees that and
/// does not).
///
/// An arrival that finds the drain free is admitted right there ([`Core::arrive`]), and the
/// drain may be free because the subscription ended: a cancel from another thread, made
/// while the outer's request was between its look at the cancel flag and the arrival of the
/// inner it had just pulled, runs the last pass itself ([`Core::stop`] cancels every inner it
/// holds, then the passes only discard what waits in the shared list). Kept here, that inner
/// was never cancelled: [`start_inner`](super::subscribers::start_inner) found it not
/// cancelled and subscribed, the inner's subscriber asked for its prefetch, dropped what came
/// (the merge had ended) and never asked again, and the inner waited for demand forever with
/// what it held; an island inner also held the core, through its subscriber, while the core
/// held the inner's subscription and, through it, the island: a cycle, never freed. Found by
/// `rs-impl/tests/merge_hazard.rs` once its streams cancelled at once were cancelled while
/// the merge's `subscribe` was still pulling its inners (1 stream in about 1,000; the loom
/// model `merge_inner_arrives_after_cancel` and its broken twin pin it).
fn admit_one<U>(st: &mut State<U>, a: Arrival<U>) {
    if st.out.finished && !fault::active(Fault::MergeAdmitsAfterEnd) {
        drop_arrival(a);
        return;
    }
    match a {
        Arrival::Just(u) => st.scalars.push_back(u),
        Arrival::Iter(iter) => st.inners.add(Slot::Iter { iter, ahead: None }),
        Arrival::Sub(inner) => st.inners.add(Slot::Sub {
            inner,
            queue: None,
            subscription: None,
            consumed: 0,
        }),
    }
}

/// Drops an inner the drain served (its consumer half, iterator, or value), guarded.
fn drop_slot<U>(slot: Slot<U>) {
    panics::drop_guarded(slot);
}

/// Drops an arrival that will not be served; a subscribed inner is cancelled.
fn drop_arrival<U>(a: Arrival<U>) {
    if let Arrival::Sub(inner) = &a {
        inner.cancel();
    }
    panics::drop_guarded(a);
}

impl<U: Send + 'static> Subscription for Core<U> {
    fn request(&self, n: u64) {
        if self.is_cancelled() {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            self.flags.fetch_or(BAD_REQUEST, Ordering::AcqRel);
        }
        self.signal();
    }

    fn cancel(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.signal();
    }
}
