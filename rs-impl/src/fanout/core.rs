//! The engine shared by [`FanoutProcessor`](super::FanoutProcessor) and
//! [`channel`](super::channel): the ring buffer, the subscribers with their cursors, and the
//! one drain pass that moves elements from the producer into the ring and from the ring to the
//! subscribers.
//!
//! # Threads and the drain loop
//!
//! All drainer state ([`State`]) sits in one [`DrainLoop`]: whoever calls in — the producer's
//! send or the upstream's `on_next`, a subscriber's `request` or `cancel`, `subscribe` —
//! records what changed and runs the pass if nobody else is draining. Everything that does not
//! come from the drainer itself goes through the [`Inbox`] (a short lock, never held while
//! calling out); the producer's element skips the inbox when the producer is the drainer, which
//! is the steady state of a producer-driven fanout.
//!
//! # The hot path
//!
//! Per element written, the **group** (the caught-up subscribers with demand) gets it in one
//! loop (a comparison of the element's position with the member's `stop`, the position where
//! the demand last read runs out; a clone and a call each; nothing stored per member; one
//! `catch_unwind` for the whole loop, re-entered after a member that panics) and moves in the
//! ring with one count update. In the steady state the buffer is empty and every
//! subscriber is in the group: the element then goes **through**, cloned for all members but
//! the last and moved into the last, and the ring only counts it
//! ([`Ring::pass_through`](super::ring::Ring::pass_through)), with no slot written or
//! reclaimed; if a member does not take it, it goes into the buffer after all. What the
//! producer's `send` still pays per element besides the deliveries is the drain loop's two
//! atomic read-modify-writes (entering and leaving: about 9 ns each on the 2-core benchmark
//! machine) and a few loads and plain stores (the free space, the statistics).
//!
//! Each **lagging** subscriber (behind, with demand) is visited once per pass: it gets
//! every element its demand allows (its demand is re-read from its [`Demand`] only when its
//! local `emitted` count reaches the total last read), then its cursor moves in the ring once.
//! A subscriber whose demand runs out is **parked**: it leaves both lists and is not looked at
//! again until its own `request` un-parks it (the `PARKED` flag, claimed by exactly one side)
//! and queues its id. No scan of cursors or subscriptions happens per element or per request;
//! the only O(subscribers) walks are at completion and failure.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are handed out as `rs_api::SubscriptionRef` (a std `Arc<dyn _>`), so the
// handles and the core are std `Arc`s in every build; the atomics and locks inside come from
// the facade.
use std::sync::{Arc, Weak};
use std::task::Waker;

use rs_api::{BoxSubscriber, Error, SpecViolation, Subscriber, Subscription, SubscriptionRef};

use super::ring::Ring;
use super::roster::{Roster, Set, Sub};
use super::{FanoutConfig, FanoutError, FanoutStats, LastSubscriberPolicy, TimeoutMode};
use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use crate::panics;
use crate::serial::DrainLoop;

/// [`Handle::flags`]: cancelled by the subscriber, by a terminal signal or by a panic.
const CANCELLED: usize = 1;
/// [`Handle::flags`]: `request(0)` (rule 3.9); set together with `CANCELLED`.
const BAD_REQUEST: usize = 2;
/// [`Handle::flags`]: the drainer parked the subscriber (its demand ran out); whoever clears
/// the bit (a `request`, or the drainer finding demand after all) brings it back.
const PARKED: usize = 4;

/// [`Core::space`]: the producer waits for space (bit 0); the rest is `released << 1`.
const WAITING: u64 = 1;

/// No slab id yet (a handle whose subscriber never joined).
const NO_ID: u64 = u64::MAX;

/// The subscription handed to one subscriber.
pub(crate) struct Handle<T> {
    core: Arc<Core<T>>,
    /// Slab index (low 32 bits) and generation (high 32 bits), set before `on_subscribe`.
    id: AtomicU64,
    demand: Demand,
    /// `CANCELLED | BAD_REQUEST | PARKED`.
    flags: AtomicUsize,
}

/// What callers hand to the drainer. Short critical sections; never held while calling out.
struct Inbox<T> {
    /// Elements the producer sent while someone else was draining, in order.
    elements: VecDeque<T>,
    /// Subscribers to start.
    joining: Vec<(BoxSubscriber<T>, Arc<Handle<T>>)>,
    /// Parked subscribers whose `request` un-parked them.
    woken: Vec<u64>,
    /// Subscribers that cancelled or requested 0.
    leaving: Vec<u64>,
    /// How the stream ends, from the producer, the upstream or the subscription timeout.
    terminal: Option<Terminal>,
    /// The upstream's subscription (processor), until the drainer takes it.
    upstream: Option<SubscriptionRef>,
    /// The upstream sent more than it was asked for (rule 1.1).
    overflow: bool,
}

impl<T> Default for Inbox<T> {
    fn default() -> Self {
        Inbox {
            elements: VecDeque::new(),
            joining: Vec::new(),
            woken: Vec::new(),
            leaving: Vec::new(),
            terminal: None,
            upstream: None,
            overflow: false,
        }
    }
}

/// How the stream ends.
enum Terminal {
    /// The producer or the upstream completed.
    Complete,
    /// The producer or the upstream failed (the upstream is not cancelled: rule 4.2).
    Fail(Error),
    /// The fanout gave up (subscription timeout): the upstream is cancelled.
    Abort(Error),
}

/// Why a subscriber left the group during a broadcast.
enum Dropout {
    /// Out of demand: parked at the element it did not get.
    NoDemand,
    /// Cancelled (or `request(0)`).
    Cancelled,
    /// Panicked in `on_next` (or in the element's `clone`).
    Panicked(Box<dyn std::any::Any + Send>),
}

/// Why a subscriber leaves.
enum Leave {
    /// It cancelled (or was cancelled): no signal.
    Cancelled,
    /// `request(0)`: `on_error` with the 3.9 violation.
    BadRequest,
    /// It panicked in the named signal (reported): no further signal.
    Panicked(&'static str, Box<dyn std::any::Any + Send>),
    /// The stream completed and it has read everything.
    Complete,
    /// The stream failed.
    Error(Error),
}

/// Counters the drainer keeps in plain fields and publishes once per pass.
#[derive(Default)]
struct Counters {
    elements: u64,
    deliveries: u64,
    demand_reads: u64,
}

/// The drainer-only state.
struct State<T> {
    ring: Ring<T>,
    /// The subscribers, by set (group, lagging, parked).
    roster: Roster<T>,
    /// Scratch for a broadcast's dropouts (kept to reuse its allocation).
    dropouts: Vec<(usize, Dropout)>,
    /// The last subscriber left by cancel, panic or `request(0)` during this pass.
    lost_last: bool,
    /// The stream completed (late subscribers still get the retained backlog, then complete).
    completed: bool,
    /// The stream ended with this error (failure, shutdown, timeout): later subscribers get it.
    failed: Option<Error>,
    /// The processor's upstream.
    upstream: Option<SubscriptionRef>,
    /// Elements asked of the upstream so far, and received.
    requested: u64,
    received: u64,
    counters: Counters,
    /// Drainer-owned spares swapped with the inbox's vectors, so taking the inbox allocates
    /// nothing in steady state.
    spare: Inbox<T>,
    /// The test-only quadratic variant also scans every subscription's demand per element.
    #[cfg(test)]
    quadratic: bool,
}

/// The published statistics.
#[derive(Default)]
struct Stats {
    subscribers: AtomicUsize,
    buffered: AtomicUsize,
    capacity: AtomicUsize,
    elements: AtomicU64,
    deliveries: AtomicU64,
    cursor_reads: AtomicU64,
    demand_reads: AtomicU64,
}

/// The producer's waker or blocked thread.
#[derive(Default)]
struct Waiter {
    waker: Option<Waker>,
    signalled: bool,
}

/// The shared core. See the [module docs](self).
pub(crate) struct Core<T> {
    config: FanoutConfig,
    /// Whether a [`Sender`](super::Sender) produces (else an upstream, through the processor).
    channel: bool,
    drain: DrainLoop<State<T>>,
    inbox: Mutex<Inbox<T>>,
    /// The inbox has something (checked with a load per pass; taken with the lock).
    pending: AtomicBool,
    /// `released << 1 | WAITING`: elements the ring has let go of, and whether the producer
    /// waits for space. The producer's own passes store it; other drainers add to it with one
    /// read-modify-write and wake the producer if `WAITING` was set.
    space: AtomicU64,
    /// The producer may no longer send (the fanout failed, shut down or timed out).
    closed: AtomicBool,
    waiter: Mutex<Waiter>,
    wake: Condvar,
    /// The first upstream `on_subscribe` wins (2.5).
    has_upstream: AtomicBool,
    /// A subscriber has joined (stops the subscription timeout).
    joined: Mutex<bool>,
    joined_cv: Condvar,
    stats: Stats,
}

impl<T> std::fmt::Debug for Core<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core")
            .field("config", &self.config)
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

/// What [`Core::try_send`] reports.
pub(crate) enum Offer<T> {
    Sent,
    Full(T),
    Closed(T),
}

/// The group's hot loop, shared by the write-through and the buffered broadcast: hands a clone
/// of `$item` (the element at `$at`) to each of `$subs` that is ready for it, and records by
/// index in `$dropouts` those that did not take it (out of demand, cancelled, or panicked).
///
/// One `catch_unwind` guards a whole run of deliveries, not each one: the index of the member
/// being served lives outside the guarded closure, so when a member's `clone` or `on_next`
/// panics the loop records that member as panicked and resumes with the next one under a new
/// guard. Nothing is lost or repeated, and the steady state pays no unwinding frame per
/// delivery (one per element), which measured about a fifth of the per-delivery cost at 128
/// subscribers (see `fanout_prof` in `benches/examples`).
///
/// A macro, not a function: as a function taking the group as a slice (even
/// `#[inline(always)]`) the loop measured about 30% slower at 128 subscribers.
macro_rules! hand_to_each {
    ($subs:expr, $item:expr, $at:expr, $check_flags:expr, $demand_reads:expr, $dropouts:expr) => {{
        let subs = &mut $subs[..];
        let item = $item;
        let at: u64 = $at;
        let mut j = 0;
        while j < subs.len() {
            // A panicking `clone` counts as this subscriber's panic, like its `on_next`.
            let run = catch_unwind(AssertUnwindSafe(|| {
                while let Some(sub) = subs.get_mut(j) {
                    match ready(sub, at, $check_flags, &mut $demand_reads) {
                        Ok(()) => sub.subscriber.on_next(item.clone()),
                        Err(dropout) => $dropouts.push((j, dropout)),
                    }
                    j += 1;
                }
            }));
            if let Err(p) = run {
                $dropouts.push((j, Dropout::Panicked(p)));
                j += 1;
            }
        }
    }};
}

impl<T: Clone + Send + 'static> Core<T> {
    /// A core for a channel (`channel = true`) or a processor, starting positions at `start`.
    pub(crate) fn new(config: FanoutConfig, channel: bool, start: u64) -> Arc<Self> {
        #[allow(unused_mut)]
        let mut ring = Ring::new(config.initial_capacity(), config.max_capacity(), start);
        #[cfg(test)]
        let quadratic = config.quadratic;
        #[cfg(test)]
        if quadratic {
            ring = ring.quadratic();
        }
        let core = Arc::new(Core {
            channel,
            drain: DrainLoop::new(State {
                ring,
                roster: Roster::new(),
                dropouts: Vec::new(),
                lost_last: false,
                completed: false,
                failed: None,
                upstream: None,
                requested: 0,
                received: 0,
                counters: Counters::default(),
                spare: Inbox::default(),
                #[cfg(test)]
                quadratic,
            }),
            inbox: Mutex::new(Inbox::default()),
            pending: AtomicBool::new(false),
            space: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            waiter: Mutex::new(Waiter::default()),
            wake: Condvar::new(),
            has_upstream: AtomicBool::new(false),
            joined: Mutex::new(false),
            joined_cv: Condvar::new(),
            stats: Stats::default(),
            config,
        });
        core.stats
            .capacity
            .store(core.config.initial_capacity(), Ordering::Relaxed);
        if let Some(timeout) = core.config.subscription_timeout.clone() {
            let weak = Arc::downgrade(&core);
            crate::loom::thread::spawn(move || Core::watch_subscription_timeout(weak, timeout));
        }
        core
    }

    pub(crate) fn config(&self) -> &FanoutConfig {
        &self.config
    }

    /// Runs the drain loop with no element of the producer's.
    fn run(&self) {
        self.drain.drain(|st| self.pass(st, &mut None, false));
    }

    /// Puts something in the inbox and drains.
    fn post(&self, f: impl FnOnce(&mut Inbox<T>)) {
        f(&mut self.inbox.lock());
        // Read-modify-writes on `pending` (here and in `take_inbox`) keep every update in one
        // order with the others; the hot path only loads it. (With plain stores, loom 0.7.3
        // reported a pass that missed a posted wake-up although the post's store
        // happened-before that pass's load; the RMWs cost nothing in steady state.)
        self.pending.swap(true, Ordering::AcqRel);
        self.run();
    }

    // ----- producer side -------------------------------------------------------------------

    /// Hands one element of the producer's (the channel's sender, or the upstream's
    /// `on_next`) to the drain loop: written and delivered at once if nobody else is draining,
    /// else queued for the drainer.
    pub(crate) fn offer(&self, item: T) {
        let producer = self.channel;
        let mut item = Some(item);
        self.drain.drain(|st| self.pass(st, &mut item, producer));
        if let Some(item) = item {
            {
                let mut inbox = self.inbox.lock();
                if !self.channel && inbox.elements.len() >= self.config.max_capacity() {
                    // More queued than the buffer can ever hold: the upstream ignores demand.
                    inbox.overflow = true;
                } else {
                    inbox.elements.push_back(item);
                }
            }
            self.pending.swap(true, Ordering::AcqRel);
            self.drain.drain(|st| self.pass(st, &mut None, producer));
        }
    }

    /// The channel's `try_send`: `sent` is the number of elements the sender has handed over
    /// so far (the sender's own count).
    pub(crate) fn try_send(&self, sent: &mut u64, item: T) -> Offer<T> {
        if self.closed.load(Ordering::Acquire) {
            return Offer::Closed(item);
        }
        if !self.has_room(*sent, self.space.load(Ordering::Acquire)) {
            return Offer::Full(item);
        }
        *sent += 1;
        self.offer(item);
        Offer::Sent
    }

    fn has_room(&self, sent: u64, space: u64) -> bool {
        sent.wrapping_sub(space >> 1) < self.config.max_capacity() as u64
    }

    /// Registers the producer as waiting for space (its async waker, if any). Returns `true`
    /// if the caller should retry at once: there is room, or the channel is closed.
    pub(crate) fn register_waiter(&self, sent: u64, waker: Option<&Waker>) -> bool {
        let mut w = self.waiter.lock();
        match (waker, &w.waker) {
            (Some(new), Some(old)) if new.will_wake(old) => {}
            (Some(new), _) => w.waker = Some(new.clone()),
            (None, _) => w.waker = None,
        }
        w.signalled = false;
        let space = self.space.fetch_or(WAITING, Ordering::AcqRel);
        if self.has_room(sent, space) || self.closed.load(Ordering::Acquire) {
            self.space.fetch_and(!WAITING, Ordering::AcqRel);
            w.waker = None;
            return true;
        }
        false
    }

    /// Withdraws a registration (a dropped send future).
    pub(crate) fn unregister_waiter(&self) {
        let mut w = self.waiter.lock();
        w.waker = None;
        self.space.fetch_and(!WAITING, Ordering::AcqRel);
    }

    /// Blocks the producer's thread until it was woken after [`register_waiter`].
    pub(crate) fn wait_for_space(&self) {
        let mut w = self.waiter.lock();
        while !w.signalled {
            w = self.wake.wait(w);
        }
    }

    fn wake_producer(&self) {
        let waker = {
            let mut w = self.waiter.lock();
            w.signalled = true;
            w.waker.take()
        };
        self.space.fetch_and(!WAITING, Ordering::AcqRel);
        self.wake.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// The producer's or the upstream's end of stream.
    pub(crate) fn terminate(&self, error: Option<Error>) {
        self.end(match error {
            None => Terminal::Complete,
            Some(e) => Terminal::Fail(e),
        });
    }

    fn end(&self, terminal: Terminal) {
        self.post(|inbox| {
            if inbox.terminal.is_none() {
                inbox.terminal = Some(terminal);
            }
        });
    }

    /// The processor's upstream subscription (the first one wins, rule 2.5).
    pub(crate) fn upstream_subscribed(&self, subscription: SubscriptionRef) {
        if self.has_upstream.swap(true, Ordering::AcqRel) {
            subscription.cancel();
            return;
        }
        self.post(|inbox| inbox.upstream = Some(subscription));
    }

    // ----- subscribers -----------------------------------------------------------------------

    pub(crate) fn subscribe(self: &Arc<Self>, subscriber: BoxSubscriber<T>) {
        let handle = Arc::new(Handle {
            core: self.clone(),
            id: AtomicU64::new(NO_ID),
            demand: Demand::new(),
            flags: AtomicUsize::new(PARKED),
        });
        self.post(|inbox| inbox.joining.push((subscriber, handle)));
    }

    pub(crate) fn stats(&self) -> FanoutStats {
        let s = &self.stats;
        FanoutStats {
            subscribers: s.subscribers.load(Ordering::Relaxed),
            buffered: s.buffered.load(Ordering::Relaxed),
            capacity: s.capacity.load(Ordering::Relaxed),
            max_capacity: self.config.max_capacity(),
            elements: s.elements.load(Ordering::Relaxed),
            deliveries: s.deliveries.load(Ordering::Relaxed),
            cursor_reads: s.cursor_reads.load(Ordering::Relaxed),
            demand_reads: s.demand_reads.load(Ordering::Relaxed),
        }
    }

    // ----- the pass ----------------------------------------------------------------------------

    /// The one pass. `item` is the producer's element when the producer is the drainer;
    /// `producer` says whether this thread is the channel's producer (which then cannot be
    /// waiting for space).
    #[inline(always)]
    fn pass(&self, st: &mut State<T>, item: &mut Option<T>, producer: bool) {
        // The steady state (a producer's element, nobody joining, leaving or waking) runs
        // only the first lines of each step; the rest is out of line.
        let released = st.ring.released();
        if self.pending.load(Ordering::Acquire) {
            self.take_inbox(st);
        }
        if let Some(x) = item.take() {
            self.write(st, x);
        }
        if !st.roster.lagging.is_empty() {
            self.deliver(st);
        }
        if st.lost_last {
            self.lost_last(st);
        }
        if st.upstream.is_some() {
            self.replenish(st);
        }
        let delta = st.ring.released().wrapping_sub(released);
        #[cfg(rs_loom)]
        let producer = producer || self.config.fault == super::Fault::NoWakeOnSpace;
        if delta != 0 && self.channel {
            if producer {
                // Nobody else writes `space` while we drain, and the producer (this thread)
                // is not waiting.
                self.space.store(st.ring.released() << 1, Ordering::Release);
            } else {
                self.released_elsewhere(delta);
            }
        }
        self.publish(st);
    }

    /// The last subscriber left during this pass (by cancel, panic or `request(0)`).
    #[cold]
    #[inline(never)]
    fn lost_last(&self, st: &mut State<T>) {
        st.lost_last = false;
        if st.roster.len() == 0
            && !st.completed
            && st.failed.is_none()
            && self.config.last_subscriber == LastSubscriberPolicy::CancelUpstream
        {
            self.end_with(st, FanoutError::ShutDown.into(), true);
        }
    }

    /// Space freed by a drain on another thread than the producer's: publish it with one
    /// read-modify-write, which tells whether the producer waits for it.
    #[inline(never)]
    fn released_elsewhere(&self, delta: u64) {
        if self.space.fetch_add(delta << 1, Ordering::AcqRel) & WAITING != 0 {
            self.wake_producer();
        }
    }

    fn publish(&self, st: &State<T>) {
        let s = &self.stats;
        s.subscribers.store(st.roster.len(), Ordering::Relaxed);
        s.buffered.store(st.ring.len(), Ordering::Relaxed);
        s.capacity.store(st.ring.capacity(), Ordering::Relaxed);
        s.elements.store(st.counters.elements, Ordering::Relaxed);
        s.deliveries
            .store(st.counters.deliveries, Ordering::Relaxed);
        s.cursor_reads
            .store(st.ring.cursor_reads(), Ordering::Relaxed);
        s.demand_reads
            .store(st.counters.demand_reads, Ordering::Relaxed);
    }

    /// Takes and handles everything posted since the last pass.
    #[inline(never)]
    fn take_inbox(&self, st: &mut State<T>) {
        let mut taken = std::mem::take(&mut st.spare);
        {
            self.pending.swap(false, Ordering::AcqRel);
            let mut inbox = self.inbox.lock();
            std::mem::swap(&mut inbox.elements, &mut taken.elements);
            std::mem::swap(&mut inbox.joining, &mut taken.joining);
            std::mem::swap(&mut inbox.woken, &mut taken.woken);
            std::mem::swap(&mut inbox.leaving, &mut taken.leaving);
            taken.terminal = inbox.terminal.take();
            taken.upstream = inbox.upstream.take();
            taken.overflow = std::mem::take(&mut inbox.overflow);
        }
        if let Some(up) = taken.upstream.take() {
            if st.completed || st.failed.is_some() {
                up.cancel();
            } else {
                st.upstream = Some(up);
            }
        }
        for id in taken.woken.drain(..) {
            if let Some(i) = st.roster.live(id) {
                // A wake-up is stale when the subscriber was attached since (by `join`) and
                // parked again: `PARKED` is then set once more, and the next request posts anew.
                let flags = st.roster.get(i).handle.flags.load(Ordering::Acquire);
                if st.roster.set_of(i) == Set::Parked && flags & PARKED == 0 {
                    self.attach(st, i);
                }
            }
        }
        for id in taken.leaving.drain(..) {
            if let Some(i) = st.roster.live(id) {
                let flags = st.roster.get(i).handle.flags.load(Ordering::Acquire);
                self.remove(st, i, leave_reason(flags));
            }
        }
        // Joins before the elements: a `subscribe` that returned before a `send` (or an
        // upstream `on_next`) started gets that element, even when both were queued for
        // another thread's pass (they are taken together, or the join in an earlier pass).
        // Elements before the terminal signal, which a joiner then gets after its backlog.
        for (subscriber, handle) in taken.joining.drain(..) {
            self.join(st, subscriber, handle);
        }
        for x in taken.elements.drain(..) {
            self.write(st, x);
        }
        if taken.overflow {
            self.upstream_overflow(st);
        }
        match taken.terminal.take() {
            Some(Terminal::Complete) => self.complete(st),
            Some(Terminal::Fail(e)) => self.end_with(st, e, false),
            Some(Terminal::Abort(e)) => self.end_with(st, e, true),
            None => {}
        }
        st.spare = taken;
    }

    /// Writes one element of the producer's into the ring and hands it to the group.
    #[inline(always)]
    fn write(&self, st: &mut State<T>, x: T) {
        if st.completed || st.failed.is_some() {
            panics::drop_guarded(x); // the stream ended meanwhile: dropped with the buffer
            return;
        }
        if let Some(x) = self.write_through(st, x) {
            self.write_buffered(st, x);
        }
    }

    /// [`write`](Self::write) through the buffer's slot.
    #[inline(never)]
    fn write_buffered(&self, st: &mut State<T>, x: T) {
        match st.ring.write(x) {
            Ok(()) => {
                st.counters.elements += 1;
                st.received += 1;
                self.broadcast(st);
            }
            Err(x) => {
                panics::drop_guarded(x);
                self.upstream_overflow(st);
            }
        }
    }

    /// The steady state's fast path of [`write`](Self::write): when the buffer is empty and
    /// every reader is in the group, the element goes straight to the group, cloned for each
    /// member but the last and moved into the last, and the buffer only counts it
    /// ([`Ring::pass_through`]: positions, `released` and the cursor read come out exactly as
    /// through the slot). If a member does not take it (out of demand, cancelled, or panicked
    /// before the last got it), the element goes into the buffer after all and the broadcast
    /// ends as [`broadcast`](Self::broadcast) ends. Hands the element back when the fast path
    /// does not apply.
    #[inline(always)]
    fn write_through(&self, st: &mut State<T>, x: T) -> Option<T> {
        #[cfg(test)]
        if st.quadratic {
            return Some(x);
        }
        if !st.ring.is_empty() || st.roster.group.len() != st.ring.readers() {
            return Some(x);
        }
        let at = st.ring.write_pos();
        let State {
            ring,
            roster,
            dropouts,
            counters,
            received,
            ..
        } = st;
        let Some((last, rest)) = roster.group.split_last_mut() else {
            return Some(x); // no reader: the element waits in the buffer
        };
        counters.elements += 1;
        *received += 1;
        // As in `broadcast`.
        let check_flags = self.pending.load(Ordering::Acquire);
        hand_to_each!(rest, &x, at, check_flags, counters.demand_reads, dropouts);
        let n = rest.len() + 1;
        let last_ready = ready(last, at, check_flags, &mut counters.demand_reads);
        if last_ready.is_ok() && dropouts.is_empty() {
            // Everyone else took it: the last takes the element itself, and nobody needs it
            // any more.
            let s = &mut last.subscriber;
            let taken = catch_unwind(AssertUnwindSafe(|| s.on_next(x)));
            ring.pass_through();
            if let Err(p) = taken {
                // It took the element and panicked: it leaves from the new position.
                roster.group[n - 1].leave_group(ring.write_pos());
                let i = roster.park_group_member(n - 1);
                dropouts.push((i, Dropout::Panicked(p)));
                counters.deliveries += (n - 1) as u64;
                self.dropouts(st);
            } else {
                counters.deliveries += n as u64;
            }
            return None;
        }
        self.write_through_dropouts(st, x, last_ready);
        None
    }

    /// The end of [`write_through`](Self::write_through) when a member other than the last
    /// did not take the element, or the last one will not: the last one gets a clone if it
    /// takes it, then the element goes into the buffer for those who did not, as if written
    /// first, and the broadcast ends as [`broadcast`](Self::broadcast) ends.
    #[inline(never)]
    fn write_through_dropouts(&self, st: &mut State<T>, x: T, last_ready: Result<(), Dropout>) {
        let at = st.ring.write_pos();
        let n = st.roster.group.len();
        let last = &mut st.roster.group[n - 1];
        let dropout = match last_ready {
            Err(dropout) => Some(dropout),
            Ok(()) => {
                let s = &mut last.subscriber;
                catch_unwind(AssertUnwindSafe(|| s.on_next(x.clone())))
                    .err()
                    .map(Dropout::Panicked)
            }
        };
        if let Some(dropout) = dropout {
            st.dropouts.push((n - 1, dropout));
        }
        // Someone did not take it: it stays in the buffer for them, as if written first.
        if let Err(x) = st.ring.write(x) {
            // Unreachable: the buffer is empty, and holds at least one element.
            panics::drop_guarded(x);
            return;
        }
        self.settle(st, at);
    }

    /// The upstream sent more than it was asked for (rule 1.1): the fanout fails and cancels
    /// it.
    fn upstream_overflow(&self, st: &mut State<T>) {
        if st.completed || st.failed.is_some() {
            return;
        }
        self.end_with(st, FanoutError::UpstreamOverflow.into(), true);
    }

    /// The stream completed: subscribers with nothing left to read complete now, the others
    /// after their backlog.
    fn complete(&self, st: &mut State<T>) {
        if st.completed || st.failed.is_some() {
            return;
        }
        st.completed = true;
        st.upstream = None;
        for i in st.roster.slots() {
            #[cfg(rs_loom)]
            if self.config.fault == super::Fault::CompleteSkipsParked
                && st.roster.set_of(i) != Set::Group
            {
                continue;
            }
            if self.position(st, i) == st.ring.write_pos() {
                self.remove(st, i, Leave::Complete);
            }
        }
    }

    /// Ends the stream with `error` for every subscriber now and every later one; drops the
    /// buffer; closes the producer; cancels the upstream if `cancel_upstream` (not after the
    /// upstream's own failure, rule 4.2).
    fn end_with(&self, st: &mut State<T>, error: Error, cancel_upstream: bool) {
        if st.completed || st.failed.is_some() {
            return;
        }
        st.failed = Some(error.clone());
        if let Some(up) = st.upstream.take() {
            if cancel_upstream {
                up.cancel();
            }
        }
        for i in st.roster.slots() {
            self.remove(st, i, Leave::Error(error.clone()));
        }
        st.lost_last = false;
        st.ring.clear();
        self.closed.store(true, Ordering::Release);
        if self.channel {
            self.wake_producer();
        }
    }

    /// Starts a subscriber: `on_subscribe`, then the end of the stream if it ended.
    fn join(&self, st: &mut State<T>, mut subscriber: BoxSubscriber<T>, handle: Arc<Handle<T>>) {
        if self.config.subscription_timeout.is_some() {
            let mut joined = self.joined.lock();
            if !*joined {
                *joined = true;
                self.joined_cv.notify_all();
            }
        }
        if let Some(error) = st.failed.clone() {
            // 1.9: on_subscribe first, then the terminal signal; requests are no-ops (1.6).
            handle.flags.store(CANCELLED, Ordering::Release);
            let sref: SubscriptionRef = handle;
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_subscribe(sref))) {
                panics::subscriber_panicked("on_subscribe", p);
            } else if let Err(p) = catch_unwind(AssertUnwindSafe(|| subscriber.on_error(error))) {
                panics::subscriber_panicked("on_error", p);
            }
            panics::drop_guarded(subscriber);
            return;
        }
        let cursor = st.ring.join();
        let sref: SubscriptionRef = handle.clone();
        let (i, id) = st.roster.insert(subscriber, handle, cursor);
        let sub = st.roster.get_mut(i);
        sub.handle.id.store(id, Ordering::Release);
        let s = &mut sub.subscriber;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_subscribe(sref))) {
            sub.handle.flags.fetch_or(CANCELLED, Ordering::AcqRel);
            self.remove(st, i, Leave::Panicked("on_subscribe", p));
            return;
        }
        let flags = sub.handle.flags.load(Ordering::Acquire);
        if flags & CANCELLED != 0 {
            self.remove(st, i, leave_reason(flags));
        } else if st.completed && cursor == st.ring.write_pos() {
            self.remove(st, i, Leave::Complete);
        } else if flags & PARKED == 0 {
            // It requested from on_subscribe; the queued wake-up will find it attached.
            self.attach(st, i);
        }
    }

    /// The position of subscriber `i`.
    fn position(&self, st: &State<T>, i: usize) -> u64 {
        match st.roster.set_of(i) {
            Set::Group => st.ring.write_pos(),
            _ => st.roster.get(i).cursor,
        }
    }

    /// Puts parked subscriber `i` (with demand) in the group if caught up, else in `lagging`.
    fn attach(&self, st: &mut State<T>, i: usize) {
        debug_assert_eq!(st.roster.set_of(i), Set::Parked);
        let pos = st.ring.write_pos();
        let sub = st.roster.get_mut(i);
        if sub.cursor == pos {
            sub.enter_group(pos);
            st.roster.move_to(i, Set::Group);
        } else {
            st.roster.move_to(i, Set::Lagging);
        }
    }

    /// Parks subscriber `i` without looking at its demand; its `cursor` is then its position.
    fn detach(&self, st: &mut State<T>, i: usize) {
        if st.roster.set_of(i) == Set::Group {
            let pos = st.ring.write_pos();
            st.roster.get_mut(i).leave_group(pos);
        }
        st.roster.move_to(i, Set::Parked);
    }

    /// Removes subscriber `i` and sends it what `why` says; frees its hold on the buffer.
    fn remove(&self, st: &mut State<T>, i: usize, why: Leave) {
        self.detach(st, i);
        let mut sub = st.roster.take(i);
        #[cfg(rs_loom)]
        let keep_hold = self.config.fault == super::Fault::LeaveKeepsHold;
        #[cfg(not(rs_loom))]
        let keep_hold = false;
        if !keep_hold {
            st.ring.leave(sub.cursor);
        }
        let last = st.roster.len() == 0;
        sub.handle.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        let s = &mut sub.subscriber;
        match why {
            Leave::Cancelled => st.lost_last |= last,
            Leave::Panicked(signal, p) => {
                st.lost_last |= last;
                panics::subscriber_panicked(signal, p);
            }
            Leave::BadRequest => {
                st.lost_last |= last;
                let e: Error = SpecViolation::NonPositiveRequest.into();
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_error(e))) {
                    panics::subscriber_panicked("on_error", p);
                }
            }
            Leave::Complete => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_complete())) {
                    panics::subscriber_panicked("on_complete", p);
                }
            }
            Leave::Error(e) => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_error(e))) {
                    panics::subscriber_panicked("on_error", p);
                }
            }
        }
        // 3.13: the subscriber is dropped; its `Drop` must not unwind the drain loop.
        panics::drop_guarded(sub);
    }

    /// Hands the element just written to every subscriber of the group: the steady-state hot
    /// loop (one demand comparison, one load of the shared `pending` flag, one clone and one
    /// call per subscriber). Those who take it move to the new write position together, with
    /// one count update in the ring.
    fn broadcast(&self, st: &mut State<T>) {
        if st.roster.group.is_empty() {
            return;
        }
        let at = st.ring.write_pos().wrapping_sub(1);
        let State {
            ring,
            roster,
            dropouts,
            counters,
            ..
        } = st;
        let Some(item) = ring.get(at) else {
            return; // unreachable: the element was just written
        };
        // Every cancel sets its subscriber's flag and then posts to the inbox (setting
        // `pending`), so while `pending` is clear no flag needs a look. Read once per element:
        // a subscriber cancelled while this loop runs may still get this one element (2.8),
        // and none after it.
        let check_flags = self.pending.load(Ordering::Acquire);
        hand_to_each!(
            roster.group,
            item,
            at,
            check_flags,
            counters.demand_reads,
            dropouts
        );
        self.settle(st, at);
    }

    /// The end of a broadcast of the element at `at`, which is in the buffer: the group
    /// members that did not take it (in `dropouts`, by index in the group) leave the group,
    /// the others move past it together.
    fn settle(&self, st: &mut State<T>, at: u64) {
        let State {
            ring,
            roster,
            dropouts,
            counters,
            ..
        } = st;
        // They leave the group, highest index first, so that each `swap_remove` leaves the
        // others in place: at `at` if they did not take the element (as the ring counts them),
        // after it if they did (a panicking `on_next`).
        for (j, dropout) in dropouts.iter_mut().rev() {
            let took = matches!(dropout, Dropout::Panicked(_));
            roster.group[*j].leave_group(if took { at.wrapping_add(1) } else { at });
            if took {
                ring.moved(at, at.wrapping_add(1));
            }
            *j = roster.park_group_member(*j);
        }
        let took = roster.group.len();
        counters.deliveries += took as u64;
        ring.moved_many(at, at.wrapping_add(1), took as u32);
        #[cfg(test)]
        if st.quadratic {
            for _ in 0..took {
                self.scan_demand(st);
            }
        }
        if !st.dropouts.is_empty() {
            self.dropouts(st);
        }
    }

    /// Parks or removes the subscribers that left the group during a broadcast.
    #[inline(never)]
    fn dropouts(&self, st: &mut State<T>) {
        let mut dropouts = std::mem::take(&mut st.dropouts);
        for (i, dropout) in dropouts.drain(..) {
            match dropout {
                Dropout::NoDemand => self.park(st, i),
                Dropout::Cancelled => {
                    let flags = st.roster.get(i).handle.flags.load(Ordering::Acquire);
                    self.remove(st, i, leave_reason(flags));
                }
                Dropout::Panicked(p) => {
                    st.counters.deliveries += 1;
                    self.remove(st, i, Leave::Panicked("on_next", p));
                }
            }
        }
        st.dropouts = dropouts;
    }

    /// Visits every lagging subscriber.
    #[inline(never)]
    fn deliver(&self, st: &mut State<T>) {
        let mut r = 0;
        while r < st.roster.lagging.len() {
            if self.visit(st, r) {
                r += 1;
            }
        }
    }

    /// Delivers to the subscriber at `lagging[r]` everything it may have, then moves its
    /// cursor in the ring once. Returns `true` if it stays at `lagging[r]`; `false` if it
    /// left (joined the group, parked, or was removed: another subscriber now sits at `r`).
    fn visit(&self, st: &mut State<T>, r: usize) -> bool {
        let State {
            ring,
            roster,
            counters,
            ..
        } = st;
        let sub = &mut roster.lagging[r];
        let handle = &*sub.handle;
        let start = sub.cursor;
        let mut pos = start;
        let mut panic = None;
        // Until caught up, out of demand, cancelled or panicked.
        while let Some(item) = ring.get(pos) {
            if sub.emitted == sub.limit {
                counters.demand_reads += 1;
                sub.limit = handle.demand.total();
                if sub.emitted == sub.limit {
                    break;
                }
            }
            if handle.flags.load(Ordering::Acquire) & CANCELLED != 0 {
                break;
            }
            sub.emitted += 1;
            pos = pos.wrapping_add(1);
            let s = &mut sub.subscriber;
            // A panicking `clone` counts as this subscriber's panic, like its `on_next`.
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.on_next(item.clone()))) {
                panic = Some(p);
                break;
            }
        }
        let delivered = pos.wrapping_sub(start);
        counters.deliveries += delivered;
        sub.cursor = pos;
        let caught_up = pos == ring.write_pos();
        let out_of_demand = sub.emitted == sub.limit;
        let flags = handle.flags.load(Ordering::Acquire);
        let i = roster.slot_of_lagging(r);
        ring.moved(start, pos);
        #[cfg(test)]
        if st.quadratic {
            for _ in 0..delivered {
                self.scan_demand(st);
            }
        }
        if let Some(p) = panic {
            self.remove(st, i, Leave::Panicked("on_next", p));
        } else if flags & CANCELLED != 0 {
            self.remove(st, i, leave_reason(flags));
        } else if caught_up && st.completed {
            self.remove(st, i, Leave::Complete);
        } else if out_of_demand {
            st.roster.move_to(i, Set::Parked);
            self.park(st, i);
        } else if caught_up {
            st.roster.get_mut(i).enter_group(pos);
            st.roster.move_to(i, Set::Group);
        } else {
            return true; // not reached: it reads until caught up or out of demand
        }
        false
    }

    /// Parks subscriber `i` (already in the parked set), whose demand looked exhausted; if
    /// demand arrived meanwhile, attaches it again instead.
    fn park(&self, st: &mut State<T>, i: usize) {
        let sub = st.roster.get_mut(i);
        let prev = sub.handle.flags.fetch_or(PARKED, Ordering::AcqRel);
        if prev & CANCELLED != 0 {
            return; // its leaving is queued
        }
        #[cfg(rs_loom)]
        if self.config.fault == super::Fault::ParkWithoutRecheck {
            return;
        }
        // The flag's read-modify-write orders this read after any request that did not see
        // PARKED set: that request's demand is visible here.
        st.counters.demand_reads += 1;
        let total = sub.handle.demand.total();
        if total != sub.limit && sub.handle.flags.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0
        {
            sub.limit = total;
            self.attach(st, i);
        }
        // Else a request un-parked it and queued its id: it comes back through the inbox.
    }

    /// Test-only quadratic variant: after each element read, recompute an upstream demand by
    /// scanning every subscription, as Pekko's `SubscriberManagement` does.
    #[cfg(test)]
    fn scan_demand(&self, st: &mut State<T>) {
        let mut max = 0u64;
        for i in st.roster.slots() {
            let s = st.roster.get(i);
            st.counters.demand_reads += 1;
            let emitted = if st.roster.set_of(i) == Set::Group {
                s.limit
                    .wrapping_sub(s.stop.wrapping_sub(st.ring.write_pos()))
            } else {
                s.emitted
            };
            max = max.max(s.handle.demand.outstanding(emitted));
        }
        std::hint::black_box(max.min(st.ring.free() as u64));
    }

    /// Processor: asks the upstream for the free space not already asked for, in batches of
    /// at least a quarter of the maximum (at once the first time).
    fn replenish(&self, st: &mut State<T>) {
        let Some(up) = &st.upstream else {
            return;
        };
        let in_flight = st.requested - st.received;
        let free = (st.ring.free() as u64).saturating_sub(in_flight);
        let batch = (self.config.max_capacity() as u64 / 4).max(1);
        if free >= batch || (st.requested == 0 && free > 0) {
            st.requested += free;
            let up = up.clone();
            up.request(free);
        }
    }

    // ----- subscription timeout ------------------------------------------------------------

    fn watch_subscription_timeout(core: Weak<Self>, timeout: super::SubscriptionTimeout) {
        let deadline = std::time::Instant::now() + timeout.after;
        loop {
            let Some(c) = core.upgrade() else { return };
            let joined = c.joined.lock();
            if *joined {
                return;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                drop(joined);
                match &timeout.mode {
                    TimeoutMode::Cancel => {
                        let e: Error = FanoutError::SubscriptionTimeout(timeout.after).into();
                        c.end(Terminal::Abort(e));
                    }
                    TimeoutMode::Warn(warn) => {
                        let _ = catch_unwind(AssertUnwindSafe(|| warn(timeout.after)));
                    }
                }
                return;
            }
            // Wake at least every 50 ms to let go of the core if everyone else did.
            let wait = (deadline - now).min(std::time::Duration::from_millis(50));
            let _ = c.joined_cv.wait_timeout(joined, wait);
        }
    }
}

/// Whether group member `sub` takes the element at position `at`: it has demand for it (its
/// [`Demand`] is re-read only when `at` reaches its `stop`, the end of the total last read)
/// and, if `check_flags`, it has not cancelled. Nothing is stored when it does: its count of
/// elements delivered is its `stop` (see [`Sub::enter_group`]).
#[inline(always)]
fn ready<T>(
    sub: &mut Sub<T>,
    at: u64,
    check_flags: bool,
    demand_reads: &mut u64,
) -> Result<(), Dropout> {
    if at == sub.stop && {
        *demand_reads += 1;
        let total = sub.handle.demand.total();
        sub.stop = sub.stop.wrapping_add(total.wrapping_sub(sub.limit));
        sub.limit = total;
        at == sub.stop
    } {
        return Err(Dropout::NoDemand);
    }
    if check_flags && sub.handle.flags.load(Ordering::Acquire) & CANCELLED != 0 {
        return Err(Dropout::Cancelled);
    }
    Ok(())
}

/// Why a subscriber whose `CANCELLED` flag is set leaves.
fn leave_reason(flags: usize) -> Leave {
    if flags & BAD_REQUEST != 0 {
        Leave::BadRequest
    } else {
        Leave::Cancelled
    }
}

impl<T: Clone + Send + 'static> Subscription for Handle<T> {
    fn request(&self, n: u64) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            // 3.9: cancel, and the drainer answers with on_error.
            if self
                .flags
                .fetch_or(CANCELLED | BAD_REQUEST, Ordering::AcqRel)
                & CANCELLED
                == 0
            {
                let id = self.id.load(Ordering::Acquire);
                self.core.post(|inbox| inbox.leaving.push(id));
            }
            return;
        }
        // A read-modify-write even when not parked: it orders this request's demand before the
        // drainer's re-read in `park` (see there), so no wake-up is lost.
        if self.flags.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0 {
            let id = self.id.load(Ordering::Acquire);
            self.core.post(|inbox| inbox.woken.push(id));
        }
    }

    fn cancel(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        let id = self.id.load(Ordering::Acquire);
        self.core.post(|inbox| inbox.leaving.push(id));
    }
}
