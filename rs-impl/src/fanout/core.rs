//! The engine shared by [`FanoutProcessor`](super::FanoutProcessor) and
//! [`channel`](super::channel): one drain pass that takes what callers posted, moves the
//! producer's elements into the ring and from the ring to the subscribers, and keeps the
//! channel's permits.
//!
//! # Threads and the drain loop
//!
//! All drainer state ([`State`]) sits in one [`DrainLoop`]: whoever calls in — a sender or the
//! upstream's `on_next`, a subscriber's `request` or `cancel`, `subscribe` — records what
//! changed and runs the pass if nobody else is draining. Everything that does not come from
//! the drainer itself goes through the [`Inbox`] (a short lock, never held while calling
//! out); the producer's element skips the inbox when the producer is the drainer, which is the
//! steady state of a producer-driven fanout.
//!
//! # A channel's permits
//!
//! A channel's senders may have at most `capacity` elements in the fanout (retained, queued
//! in the inbox, or on their way). The permits for them are in two places:
//!
//! * the senders' [`Room`] (one atomic word, shared by every sender), and
//! * the drainer's [`credit`](State::credit): the space the ring freed during passes and
//!   that has not been handed back to the room.
//!
//! A send that becomes the drainer takes a permit from the credit, a plain decrement, and
//! only when the credit is empty from the room; a send that finds another thread draining
//! takes one from the room and queues its element. At the end of each pass the drainer hands
//! its credit back to the room **only if it is wanted** ([`Room::wanted`]: a sender waits, or
//! the room is empty), one load to find out. So in the steady state (one producer that drains
//! its own sends) the permits cost no atomic read-modify-write at all: what a send pays
//! besides its deliveries is the drain loop's two.
//!
//! No wake-up is lost: a sender that finds no permit marks itself waiting in the room (one
//! read-modify-write that fails to take a permit), then runs the drain loop once more
//! ([`Channel::nudge`]); that pass, or the pass of whoever is draining, which sees the mark
//! through the drain loop's counter, hands the credit back and wakes it. Every later pass is
//! ordered after that one by the loop's counter, so it sees the mark too, until a hand-back
//! clears it.
//!
//! The end is recorded under the inbox's lock together with shutting the room, and a send
//! that queues its element looks at the room under the same lock: an element is either
//! queued before the end (and delivered before `on_complete`) or handed back to its sender.

use std::panic::{catch_unwind, AssertUnwindSafe};
// Subscriptions are handed out as `rs_api::SubscriptionRef` (a std `Arc<dyn _>`), so the
// handles and the core are std `Arc`s in every build; the atomics and locks inside come from
// the facade.
use std::sync::{Arc, Weak};

use rs_api::{BoxSubscriber, Error, SubscriptionRef};

use super::config::{FanoutConfig, LastSubscriberPolicy, SubscriptionTimeout, TimeoutMode};
use super::deliver::{Burst, Overflow, Run};
use super::error::FanoutError;
use super::handle::{Handle, Post};
use super::inbox::{Inbox, Terminal};
use super::ring::Ring;
use super::state::State;
use super::stats::{FanoutStats, Stats};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use crate::loom::sync::{Condvar, Mutex};
use crate::producer::{Channel, Claim, CloseReason, Room, TrySendError, Waiters};
use crate::serial::DrainLoop;

/// How the pass takes the element handed to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Take {
    /// A processor's upstream `on_next`: bounded by the demand the processor signalled.
    Upstream,
    /// A channel's send that has no permit yet: the pass takes one (from its credit, else
    /// from the room) or hands the element back.
    Permit,
    /// A channel's send whose permit the sender took from the room.
    Held,
}

/// The shared core. See the [module docs](self).
pub(super) struct Core<T> {
    config: FanoutConfig,
    /// Whether senders produce (a channel), else an upstream (a processor).
    channel: bool,
    drain: DrainLoop<State<T>>,
    inbox: Mutex<Inbox<T>>,
    /// The inbox has something (checked with a load per pass; taken with the lock).
    pending: AtomicBool,
    /// The senders' permits (a channel's); shut when the stream ends or nobody can receive.
    room: Room,
    /// Senders waiting for a permit.
    waiters: Waiters,
    /// Live sender handles (a channel's).
    senders: AtomicUsize,
    /// Live publisher handles (a channel's): at 0, nobody can subscribe any more.
    publishers: AtomicUsize,
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

impl<T: Clone + Send + 'static> Core<T> {
    /// A core for a channel (`channel = true`) or a processor.
    pub(super) fn new(config: FanoutConfig, channel: bool) -> Arc<Self> {
        #[allow(unused_mut)]
        let mut ring = Ring::new(config.initial_capacity(), config.capacity(), config.start());
        #[cfg(test)]
        if config.quadratic {
            ring = ring.quadratic();
        }
        #[allow(unused_mut)]
        let mut state = State::new(ring);
        #[cfg(test)]
        {
            state.quadratic = config.quadratic;
        }
        let core = Arc::new(Core {
            channel,
            drain: DrainLoop::new(state),
            inbox: Mutex::new(Inbox::default()),
            pending: AtomicBool::new(false),
            room: Room::new(config.capacity() as u64),
            waiters: Waiters::new(),
            senders: AtomicUsize::new(1),
            publishers: AtomicUsize::new(1),
            has_upstream: AtomicBool::new(false),
            joined: Mutex::new(false),
            joined_cv: Condvar::new(),
            stats: Stats::default(),
            config,
        });
        core.stats
            .capacity
            .store(core.config.initial_capacity(), Ordering::Relaxed);
        if let Some(timeout) = core.config.subscription_timeout_setting().cloned() {
            let weak = Arc::downgrade(&core);
            crate::loom::thread::spawn(move || Core::watch_subscription_timeout(weak, timeout));
        }
        core
    }

    pub(super) fn config(&self) -> &FanoutConfig {
        &self.config
    }

    /// The effective policy for the last subscriber leaving (see [`LastSubscriberPolicy`]).
    fn policy(&self) -> LastSubscriberPolicy {
        self.config
            .last_subscriber_policy()
            .unwrap_or(if self.channel {
                LastSubscriberPolicy::KeepBuffering
            } else {
                LastSubscriberPolicy::CancelUpstream
            })
    }

    /// Runs the drain loop with no element of the producer's.
    fn run(&self) {
        self.drain
            .drain(|st| self.pass(st, &mut None, Take::Upstream));
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

    // ----- the processor's upstream ----------------------------------------------------------

    /// Hands one element of the upstream's `on_next` to the drain loop: written and delivered
    /// at once if nobody else is draining, else queued for the drainer.
    pub(super) fn offer(&self, item: T) {
        let mut item = Some(item);
        self.drain
            .drain(|st| self.pass(st, &mut item, Take::Upstream));
        if let Some(item) = item {
            {
                let mut inbox = self.inbox.lock();
                if inbox.elements.len() >= self.config.capacity() {
                    // More queued than the buffer can ever hold: the upstream ignores demand.
                    inbox.overflow = true;
                } else {
                    inbox.elements.push_back(item);
                }
            }
            self.pending.swap(true, Ordering::AcqRel);
            self.run();
        }
    }

    /// The upstream's end of stream.
    pub(super) fn terminate(&self, error: Option<Error>) {
        let terminal = match error {
            None => Terminal::Complete,
            Some(e) => Terminal::Fail(e),
        };
        self.post(|inbox| {
            if inbox.terminal.is_none() {
                inbox.terminal = Some(terminal);
            }
        });
    }

    /// The processor's upstream subscription (the first one wins, rule 2.5).
    pub(super) fn upstream_subscribed(&self, subscription: SubscriptionRef) {
        if self.has_upstream.swap(true, Ordering::AcqRel) {
            subscription.cancel();
            return;
        }
        self.post(|inbox| inbox.upstream = Some(subscription));
    }

    /// Processor: asks the upstream for the free space not already asked for, in batches of
    /// at least a quarter of the capacity (at once the first time).
    fn replenish(&self, st: &mut State<T>) {
        let Some(up) = &st.upstream else {
            return;
        };
        let in_flight = st.requested - st.received;
        let free = (st.ring.free() as u64).saturating_sub(in_flight);
        let batch = (self.config.capacity() as u64 / 4).max(1);
        if free >= batch || (st.requested == 0 && free > 0) {
            st.requested += free;
            let up = up.clone();
            up.request(free);
        }
    }

    // ----- subscribers and publishers --------------------------------------------------------

    pub(super) fn subscribe(self: &Arc<Self>, subscriber: BoxSubscriber<T>) {
        let core: Arc<dyn Post> = self.clone();
        let handle = Arc::new(Handle::new(core));
        self.post(|inbox| inbox.joining.push((subscriber, handle)));
    }

    /// A channel's publisher handle was cloned.
    pub(super) fn publisher_cloned(&self) {
        self.publishers.fetch_add(1, Ordering::AcqRel);
    }

    /// A channel's publisher handle was dropped; the last one tells the drainer that nobody
    /// can subscribe any more.
    pub(super) fn publisher_dropped(&self) {
        if self.publishers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.post(|inbox| inbox.publishers_gone = true);
        }
    }

    /// Entries into the drain loop so far (unit tests count bursts with it).
    #[cfg(test)]
    pub(super) fn drain_calls(&self) -> usize {
        self.drain.calls()
    }

    pub(super) fn stats(&self) -> FanoutStats {
        self.stats.snapshot(self.config.capacity())
    }

    // ----- the pass ----------------------------------------------------------------------------

    /// The one pass. `item` is the producer's element when the producer is the drainer, taken
    /// as `take` says; it is left in `item` when the pass hands it back (a channel's send with
    /// no permit, or after the end).
    #[inline(always)]
    fn pass(&self, st: &mut State<T>, item: &mut Option<T>, take: Take) {
        self.pass_with(st, item, take, None);
    }

    /// [`pass`](Self::pass), taking further elements from `more` in the same pass while each
    /// one is taken (a burst: [`try_send_burst`](Channel::try_send_burst), a channel's sends,
    /// `take` = [`Take::Permit`]); an element that is refused is left in `item` and ends the
    /// burst. With `more` `None` this is the one-element pass, and the burst loop compiles
    /// away. In the steady state the burst's elements never leave
    /// [`State::write_run`]'s loop, which does for each what this loop does between two
    /// elements when nothing needs it (see there); the rest comes back here.
    #[inline(always)]
    fn pass_with(
        &self,
        st: &mut State<T>,
        item: &mut Option<T>,
        take: Take,
        mut more: Option<&mut dyn FnMut() -> Option<T>>,
    ) {
        debug_assert!(more.is_none() || (take == Take::Permit && self.channel));
        // The steady state (a producer's element, nobody joining, leaving or waking) runs
        // only the first lines of each step; the rest is out of line.
        let mut released = st.ring.released();
        if self.pending.load(Ordering::Acquire) {
            self.take_inbox(st);
        }
        if let Some(x) = item.take() {
            let burst = more.as_deref_mut().map(|more| Burst {
                more,
                released: &mut released,
            });
            let mut run = self.take_element(st, x, item, take, burst);
            loop {
                let x = match run {
                    Run::Next(y) => y,
                    Run::Exhausted => break,
                    Run::One => {
                        if item.is_some() {
                            break;
                        }
                        let Some(more) = more.as_deref_mut() else {
                            break;
                        };
                        let Some(x) = more() else { break };
                        x
                    }
                };
                // What each one-element pass does between two elements: lagging readers
                // catch up, the space they free becomes credit, and anything posted (a
                // join, a leave, a wake-up) is taken before the next element.
                if !st.roster.lagging.is_empty() {
                    st.deliver();
                }
                if self.channel {
                    let now = st.ring.released();
                    st.credit += now.wrapping_sub(released);
                    released = now;
                }
                if self.pending.load(Ordering::Acquire) {
                    self.take_inbox(st);
                }
                let burst = more.as_deref_mut().map(|more| Burst {
                    more,
                    released: &mut released,
                });
                run = self.take_element(st, x, item, take, burst);
            }
        }
        if !st.roster.lagging.is_empty() {
            st.deliver();
        }
        if st.lost_last || st.unreachable {
            self.nobody_left(st);
        }
        if st.upstream.is_some() {
            self.replenish(st);
        }
        if self.channel {
            st.credit += st.ring.released().wrapping_sub(released);
            if st.credit != 0 && self.room.wanted() {
                self.give_back(st);
            }
        }
        self.publish(st);
    }

    /// Writes the producer's element `x`, if `take` allows; else puts it back in `item`. With
    /// a `burst`, the burst's further elements follow in [`State::write_run`] while they can.
    /// Only the steady state is inline (a permit from the credit, the write); everything
    /// else is out of line, so that the group's loop inlined here stays a tight loop.
    #[inline(always)]
    fn take_element(
        &self,
        st: &mut State<T>,
        x: T,
        item: &mut Option<T>,
        take: Take,
        burst: Option<Burst<'_, T>>,
    ) -> Run<T> {
        let refused = match take {
            Take::Upstream => false,
            Take::Permit => {
                st.ended()
                    || if st.credit > 0 {
                        st.credit -= 1;
                        false
                    } else {
                        !self.permit_from_room()
                    }
            }
            Take::Held => st.ended(),
        };
        if refused {
            *item = Some(x);
            return Run::One;
        }
        let written = match burst {
            // `Take::Permit` and `Take::Held` refused the element above if the stream ended.
            None if take == Take::Upstream => st.write_checked(x, &self.pending).map(|()| Run::One),
            None => st.write(x, &self.pending).map(|()| Run::One),
            Some(burst) => st.write_run(x, &self.pending, Some(burst)),
        };
        match written {
            Ok(run) => run,
            Err(Overflow) => {
                self.overflowed(st);
                Run::One
            }
        }
    }

    /// A permit for the drainer's own send when its credit is used up.
    #[inline(never)]
    fn permit_from_room(&self) -> bool {
        self.room.take() == Claim::Granted
    }

    /// The ring refused an element: the upstream ignored demand (rule 1.1).
    #[cold]
    #[inline(never)]
    fn overflowed(&self, st: &mut State<T>) {
        self.end_with(st, FanoutError::UpstreamOverflow.into(), true);
    }

    /// Hands the drainer's credit back to the room, waking the senders that wait for it.
    #[inline(never)]
    fn give_back(&self, st: &mut State<T>) {
        if fault::active(Fault::NoWakeOnSpace) {
            return;
        }
        let credit = std::mem::take(&mut st.credit);
        if self.room.add(credit) {
            self.waiters.wake_all();
        }
    }

    /// No subscriber may be left: after the last one left during this pass (by cancel,
    /// panic or `request(0)`) the policy decides; with every publisher handle gone, a
    /// fanout nobody can receive from closes.
    #[cold]
    #[inline(never)]
    fn nobody_left(&self, st: &mut State<T>) {
        let lost = std::mem::take(&mut st.lost_last);
        if st.roster.len() != 0 || st.ended() {
            return;
        }
        if st.unreachable {
            self.end_with(st, FanoutError::PublishersDropped.into(), true);
        } else if lost && self.policy() == LastSubscriberPolicy::CancelUpstream {
            self.end_with(st, FanoutError::ShutDown.into(), true);
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
        self.pending.swap(false, Ordering::AcqRel);
        self.inbox.lock().take_into(&mut taken);
        if let Some(up) = taken.upstream.take() {
            if st.ended() {
                up.cancel();
            } else {
                st.upstream = Some(up);
            }
        }
        for id in taken.woken.drain(..) {
            st.woken(id);
        }
        for id in taken.leaving.drain(..) {
            st.leaving(id);
        }
        // Joins before the elements: a `subscribe` that returned before a send (or an
        // upstream `on_next`) started gets that element, even when both were queued for
        // another thread's pass (they are taken together, or the join in an earlier pass).
        // Elements before the terminal signal, which a joiner then gets after its backlog.
        if !taken.joining.is_empty() {
            self.someone_joined();
        }
        for (subscriber, handle) in taken.joining.drain(..) {
            st.join(subscriber, handle);
        }
        for x in taken.elements.drain(..) {
            if st.write_checked(x, &self.pending).is_err() {
                self.overflowed(st);
            }
        }
        if taken.overflow {
            self.end_with(st, FanoutError::UpstreamOverflow.into(), true);
        }
        st.unreachable |= taken.publishers_gone;
        match taken.terminal.take() {
            Some(Terminal::Complete) => st.complete(),
            Some(Terminal::Fail(e)) => self.end_with(st, e, false),
            Some(Terminal::Abort(e)) => self.end_with(st, e, true),
            None => {}
        }
        st.spare = taken;
    }

    /// Ends the stream with `error` for every subscriber now and every later one; drops the
    /// buffer; closes the senders' room; cancels the upstream if `cancel_upstream`.
    #[cold]
    #[inline(never)]
    fn end_with(&self, st: &mut State<T>, error: Error, cancel_upstream: bool) {
        let reason = CloseReason::Failed(error.clone());
        if st.fail_all(error, cancel_upstream) && self.room.shut(|| reason) {
            self.waiters.wake_all();
        }
    }

    // ----- subscription timeout ------------------------------------------------------------

    /// The first subscriber joined: the subscription timeout's thread may stop.
    fn someone_joined(&self) {
        if self.config.subscription_timeout_setting().is_some() {
            let mut joined = self.joined.lock();
            if !*joined {
                *joined = true;
                self.joined_cv.notify_all();
            }
        }
    }

    fn watch_subscription_timeout(core: Weak<Self>, timeout: SubscriptionTimeout) {
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
                        c.post(|inbox| {
                            if inbox.terminal.is_none() {
                                inbox.terminal = Some(Terminal::Abort(e));
                            }
                        });
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

    // ----- the channel's senders -------------------------------------------------------------

    /// The inbox path of a permitted send: queued under the inbox's lock unless the room
    /// was shut (the end is recorded under the same lock, see the [module docs](self)).
    #[cold]
    fn queue_permitted(&self, item: T) -> Result<(), T> {
        {
            let mut inbox = self.inbox.lock();
            if self.room.is_shut() && !fault::active(Fault::SendIgnoresEnd) {
                return Err(item);
            }
            inbox.elements.push_back(item);
        }
        self.pending.swap(true, Ordering::AcqRel);
        self.run();
        Ok(())
    }
}

impl<T: Clone + Send + 'static> Post for Core<T> {
    fn leaving(&self, id: u64) {
        self.post(|inbox| inbox.leaving.push(id));
    }

    fn woken(&self, id: u64) {
        self.post(|inbox| inbox.woken.push(id));
    }
}

impl<T: Clone + Send + 'static> Channel for Core<T> {
    type Item = T;

    fn room(&self) -> &Room {
        &self.room
    }

    fn waiters(&self) -> &Waiters {
        &self.waiters
    }

    fn senders(&self) -> &AtomicUsize {
        &self.senders
    }

    /// As the drainer when nobody drains (a permit from the credit, the element written and
    /// delivered on this thread), else with a permit from the room through the inbox.
    #[inline]
    fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
        if self.room.is_shut() {
            return Err(TrySendError::Closed(item));
        }
        let mut slot = Some(item);
        if self
            .drain
            .drain(|st| self.pass(st, &mut slot, Take::Permit))
        {
            return match slot {
                None => Ok(()),
                Some(x) if self.room.is_shut() => Err(TrySendError::Closed(x)),
                Some(x) => Err(TrySendError::Full(x)),
            };
        }
        let Some(x) = slot else {
            return Ok(()); // unreachable: only the drainer's pass takes it
        };
        match self.room.take() {
            Claim::Granted => self.queue_permitted(x).map_err(TrySendError::Closed),
            Claim::Full => Err(TrySendError::Full(x)),
            Claim::Closed => Err(TrySendError::Closed(x)),
        }
    }

    /// One drain-loop entry for the whole burst when nobody drains: `first`, then what
    /// `more` gives, each written and delivered in the same pass while there is a permit
    /// (two atomic read-modify-writes per burst instead of per element). Otherwise `first`
    /// alone, as [`try_send`](Channel::try_send) sends it.
    #[inline]
    fn try_send_burst(
        &self,
        first: T,
        more: &mut dyn FnMut() -> Option<T>,
    ) -> Result<(), TrySendError<T>> {
        if self.room.is_shut() {
            return Err(TrySendError::Closed(first));
        }
        let mut slot = Some(first);
        if self
            .drain
            .drain(|st| self.pass_with(st, &mut slot, Take::Permit, Some(&mut *more)))
        {
            return match slot {
                None => Ok(()),
                Some(x) if self.room.is_shut() => Err(TrySendError::Closed(x)),
                Some(x) => Err(TrySendError::Full(x)),
            };
        }
        let Some(x) = slot else {
            return Ok(()); // unreachable: only the drainer's pass takes it
        };
        match self.room.take() {
            Claim::Granted => self.queue_permitted(x).map_err(TrySendError::Closed),
            Claim::Full => Err(TrySendError::Full(x)),
            Claim::Closed => Err(TrySendError::Closed(x)),
        }
    }

    fn send_permitted(&self, item: T) -> Result<(), T> {
        let mut slot = Some(item);
        if self.drain.drain(|st| self.pass(st, &mut slot, Take::Held)) {
            return slot.map_or(Ok(()), Err);
        }
        match slot {
            Some(x) => self.queue_permitted(x),
            None => Ok(()), // unreachable: only the drainer's pass takes it
        }
    }

    fn nudge(&self) {
        self.run();
    }

    fn end(&self, end: Result<(), Error>) {
        let woke = {
            let mut inbox = self.inbox.lock();
            let reason = match &end {
                Ok(()) => CloseReason::Completed,
                Err(e) => CloseReason::Failed(e.clone()),
            };
            if inbox.terminal.is_none() {
                inbox.terminal = Some(match end {
                    Ok(()) => Terminal::Complete,
                    Err(e) => Terminal::Fail(e),
                });
            }
            self.room.shut(|| reason)
        };
        self.pending.swap(true, Ordering::AcqRel);
        if woke {
            self.waiters.wake_all();
        }
        self.run();
    }
}
