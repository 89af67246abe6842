//! The fanout's hot path: an element written into the ring and handed to the subscribers
//! that are caught up (the **group**), and the subscribers behind (the **lagging**) visited
//! once per pass.
//!
//! Per element written, the group gets it in one loop (a clone and a call each; nothing
//! compared or stored per member; one `catch_unwind` for the whole loop, re-entered after a
//! member that panics) and moves in the ring with one count update. The roster keeps
//! `group_stop`, the nearest of the members' `stop`s (the position where the demand last read
//! runs out): until an element's position reaches it, and while nobody posted (the inbox's
//! `pending` flag, which every cancel sets), every member takes the element and nothing needs a
//! look. The element at `group_stop` (or any element while `pending` is set) goes through the
//! **checked** loop instead: each member's position is compared with its `stop` (its demand
//! re-read there), its flags looked at if `pending`, and the next `group_stop` is the nearest
//! `stop` after it. With demand 1 per `request` every element is at `group_stop`; with
//! unbounded demand none is (`mod.rs`, "Cost", has the counts and the timings).
//!
//! In the steady state the buffer is empty and every subscriber is in the group: the element
//! then goes **through**, cloned for all members but the last and moved into the last, and the
//! ring only counts it ([`Ring::pass_through`](super::ring::Ring::pass_through)), with no slot
//! written or reclaimed; if a member does not take it, it goes into the buffer after all.
//!
//! Each lagging subscriber is visited once per pass: it gets every element its demand allows
//! (its demand is re-read only when its local `emitted` count reaches the total last read),
//! then its cursor moves in the ring once. A subscriber whose demand runs out is **parked**
//! (see `state.rs`). No scan of cursors or subscriptions happens per element or per request.

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::handle::CANCELLED;
use super::roster::{Set, Sub};
use super::state::{leave_reason, Dropout, Leave, State};
use crate::loom::sync::atomic::{AtomicBool, Ordering};
use crate::panics;

/// The ring refused an element: it holds its capacity (a processor's upstream that ignored
/// demand; a channel's permits make it impossible there).
pub(super) struct Overflow;

/// A channel's burst handed to [`State::write_run`]: where its further elements come from,
/// and the ring's `released` count that the pass last turned into credit.
pub(super) struct Burst<'a, T> {
    /// The burst's next element (`None` ends it).
    pub(super) more: &'a mut dyn FnMut() -> Option<T>,
    /// The ring's `released` count already added to the drainer's credit.
    pub(super) released: &'a mut u64,
}

/// How [`State::write_run`] ended.
pub(super) enum Run<T> {
    /// No further element was taken from the burst (or there was no burst).
    One,
    /// The burst's `more` gave `None`.
    Exhausted,
    /// The burst's next element, taken from `more`, which needs the pass's work between
    /// elements first (a lagging subscriber, something posted, or no credit).
    Next(T),
}

/// The group's hot loop, shared by the write-through and the buffered broadcast, for an
/// element that every member has demand for (its position is before the roster's
/// `group_stop`) while no flag needs a look: hands a clone of `$item` to each of `$subs`, and
/// records by index in `$dropouts` those that panicked. Nothing is compared or stored per
/// member: per delivery, the index kept for the unwinding, the call, the loop.
///
/// One `catch_unwind` guards a whole run of deliveries, not each one: the index of the member
/// being served lives outside the guarded closure (stored before each call, read only after a
/// panic), so when a member's `clone` or `on_next` panics the loop records that member as
/// panicked and resumes with the next one under a new guard. Nothing is lost or repeated, and
/// the steady state sets up one unwinding frame per element instead of one per delivery
/// (`fanout_prof` in `benches/examples` compares the two).
///
/// A macro, not a function: as a function taking the group as a slice (even
/// `#[inline(always)]`) the loop was measurably slower with many subscribers (the same
/// example measures it).
macro_rules! hand_to_each {
    ($subs:expr, $item:expr, $dropouts:expr) => {{
        let subs = &mut $subs[..];
        let item = $item;
        let mut j = 0;
        while j < subs.len() {
            // A panicking `clone` counts as this subscriber's panic, like its `on_next`.
            let run = catch_unwind(AssertUnwindSafe(|| {
                let mut k = j;
                while let Some(sub) = subs.get_mut(k) {
                    j = k;
                    sub.subscriber.on_next(item.clone());
                    k += 1;
                }
                j = k;
            }));
            if let Err(p) = run {
                $dropouts.push((j, Dropout::Panicked(p)));
                j += 1;
            }
        }
    }};
}

/// [`hand_to_each!`] when the element's position `$at` has reached the roster's `group_stop`
/// or `$check_flags` is set: each member is asked whether it is [`ready`] first (its demand
/// re-read if `$at` is its `stop`, its flags looked at if `$check_flags`); those that are not,
/// and those that panic, are recorded by index in `$dropouts`. Evaluates to the smallest
/// distance from the next position (`$at + 1`) to a member's `stop` (`u64::MAX` for a member
/// without demand for the next element, which leaves): the next `group_stop`, as a distance.
macro_rules! hand_to_each_checked {
    ($subs:expr, $item:expr, $at:expr, $check_flags:expr, $demand_reads:expr, $dropouts:expr) => {{
        let subs = &mut $subs[..];
        let item = $item;
        let at: u64 = $at;
        let check_flags: bool = $check_flags;
        let next = at.wrapping_add(1);
        let mut j = 0;
        let mut nearest = u64::MAX;
        // Whether `nearest` saw every member (a panic loses the run's own minimum).
        let mut exact = true;
        while j < subs.len() {
            // A panicking `clone` counts as this subscriber's panic, like its `on_next`. The
            // flags' look is compiled out of the loop when it is not needed.
            let run = if check_flags {
                catch_unwind(AssertUnwindSafe(|| {
                    checked_run::<_, true>(
                        subs,
                        &mut j,
                        item,
                        at,
                        nearest,
                        &mut $demand_reads,
                        &mut *$dropouts,
                    )
                }))
            } else {
                catch_unwind(AssertUnwindSafe(|| {
                    checked_run::<_, false>(
                        subs,
                        &mut j,
                        item,
                        at,
                        nearest,
                        &mut $demand_reads,
                        &mut *$dropouts,
                    )
                }))
            };
            match run {
                Ok(near) => nearest = near,
                Err(p) => {
                    $dropouts.push((j, Dropout::Panicked(p)));
                    j += 1;
                    exact = false;
                }
            }
        }
        if !exact {
            nearest = subs
                .iter()
                .map(|s| s.stop.wrapping_sub(next))
                .min()
                .unwrap_or(u64::MAX);
        }
        nearest
    }};
}

/// The loop of [`hand_to_each_checked!`] from member `*j` on, inside one unwinding guard:
/// `*j` is the member being served (stored before each delivery, for the guard's handler).
/// Returns `near` lowered to the smallest distance from `at + 1` to a served member's `stop`.
/// `FLAGS`: whether the members' flags need a look.
#[inline(always)]
fn checked_run<T: Clone, const FLAGS: bool>(
    subs: &mut [Sub<T>],
    j: &mut usize,
    item: &T,
    at: u64,
    mut near: u64,
    demand_reads: &mut u64,
    dropouts: &mut Vec<(usize, Dropout)>,
) -> u64 {
    let next = at.wrapping_add(1);
    let mut k = *j;
    while let Some(sub) = subs.get_mut(k) {
        *j = k;
        match ready(sub, at, FLAGS, demand_reads) {
            Ok(()) => sub.subscriber.on_next(item.clone()),
            Err(dropout) => dropouts.push((k, dropout)),
        }
        near = near.min(sub.stop.wrapping_sub(next));
        k += 1;
    }
    *j = k;
    near
}

/// Whether group member `sub` takes the element at position `at`: it has demand for it (its
/// demand is re-read only when `at` reaches its `stop`, the end of the total last read) and,
/// if `check_flags`, it has not cancelled. Nothing is stored when it does: its count of
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

impl<T: Clone + Send + 'static> State<T> {
    /// [`write`](Self::write) unless the stream has ended meanwhile (an upstream's element
    /// after the end, an element queued in the inbox behind an overflow): then `x` is dropped
    /// as the buffer's elements are.
    #[inline]
    pub(super) fn write_checked(&mut self, x: T, pending: &AtomicBool) -> Result<(), Overflow> {
        if self.ended() {
            panics::drop_guarded(x); // the stream ended meanwhile: dropped with the buffer
            return Ok(());
        }
        self.write(x, pending)
    }

    /// Writes one element of the producer's into the ring and hands it to the group.
    /// `pending` is the inbox's flag: while it is clear, no subscriber's flag needs a look.
    ///
    /// Out of line, so that the group's loop exists once per entry (this one and the burst's
    /// [`write_run`](Self::write_run)): with a copy inlined into each of the pass's callers,
    /// the compiler stops inlining the loop's unwinding guard into it, and every delivery then
    /// goes through memory. The one-element path keeps its own copy: through `write_run` a
    /// per-element send cost 21 instructions more than before the burst's loop moved there,
    /// with its own copy 8 more (callgrind, `fanout_prof 1 N 1 r1`); the second copy costs
    /// the burst 2 (90 instead of 88 per element).
    ///
    /// The caller has checked that the stream has not ended (a channel's send refuses the
    /// element then, before taking a permit); [`write_checked`](Self::write_checked) checks
    /// it here. Leaving that second look to the callers that need it saved a per-element
    /// send 4 instructions (201 → 197 at one subscriber, callgrind, `fanout_prof 1 N 1 ours`).
    #[inline(never)]
    pub(super) fn write(&mut self, x: T, pending: &AtomicBool) -> Result<(), Overflow> {
        debug_assert!(!self.ended());
        match self.write_through(x, pending) {
            None => Ok(()),
            Some(x) => self.write_buffered(x, pending),
        }
    }

    /// [`write`](Self::write), then, given a `burst`, the burst's further elements in the same
    /// loop while nothing needs the pass between two of them: no subscriber lagging, nothing
    /// posted, and a permit in the drainer's credit (the space the ring
    /// released since the pass last counted it, `burst.released`, is added to the credit first,
    /// exactly as the pass adds it). The first element that needs the pass comes back as
    /// [`Run::Next`] with nothing done for it but that credit update, which the pass then
    /// repeats as a no-op.
    ///
    /// Out of line, so that the group's loop exists once: with a copy inlined into each of
    /// the pass's callers, the compiler stops inlining the loop's unwinding guard into it,
    /// and every delivery then goes through memory. The burst's loop is here rather than in
    /// the pass so that an element of a burst costs no call into this function.
    #[inline(never)]
    pub(super) fn write_run(
        &mut self,
        mut x: T,
        pending: &AtomicBool,
        mut burst: Option<Burst<'_, T>>,
    ) -> Result<Run<T>, Overflow> {
        if self.ended() {
            panics::drop_guarded(x); // the stream ended meanwhile: dropped with the buffer
            return Ok(Run::One);
        }
        loop {
            if let Some(x) = self.write_through(x, pending) {
                self.write_buffered(x, pending)?;
            }
            let Some(b) = burst.as_mut() else {
                return Ok(Run::One);
            };
            let Some(y) = (b.more)() else {
                return Ok(Run::Exhausted);
            };
            // The stream cannot end inside this loop (only the pass ends it, taking what was
            // posted or after an overflow, which leaves the loop), so `ended` needs no look.
            if !self.roster.lagging.is_empty() || pending.load(Ordering::Acquire) {
                return Ok(Run::Next(y));
            }
            let now = self.ring.released();
            self.credit += now.wrapping_sub(*b.released);
            *b.released = now;
            if self.credit == 0 {
                return Ok(Run::Next(y));
            }
            self.credit -= 1;
            x = y;
        }
    }

    /// [`write`](Self::write) through the buffer's slot.
    #[inline(never)]
    fn write_buffered(&mut self, x: T, pending: &AtomicBool) -> Result<(), Overflow> {
        match self.ring.write(x) {
            Ok(()) => {
                self.counters.elements += 1;
                self.received += 1;
                self.broadcast(pending);
                Ok(())
            }
            Err(x) => {
                panics::drop_guarded(x);
                Err(Overflow)
            }
        }
    }

    /// The steady state's fast path of [`write`](Self::write): when the buffer is empty and
    /// every reader is in the group, the element goes straight to the group, cloned for each
    /// member but the last and moved into the last, and the buffer only counts it
    /// ([`Ring::pass_through`](super::ring::Ring::pass_through): positions, `released` and the
    /// cursor read come out exactly as through the slot). If a member does not take it (out
    /// of demand, cancelled, or panicked before the last got it), the element goes into the
    /// buffer after all and the broadcast ends as [`broadcast`](Self::broadcast) ends. Hands
    /// the element back when the fast path does not apply.
    #[inline(always)]
    fn write_through(&mut self, x: T, pending: &AtomicBool) -> Option<T> {
        #[cfg(test)]
        if self.quadratic {
            return Some(x);
        }
        if !self.ring.is_empty() || self.roster.group.len() != self.ring.readers() {
            return Some(x);
        }
        let at = self.ring.write_pos();
        let State {
            ring,
            roster,
            dropouts,
            counters,
            received,
            ..
        } = self;
        let Some((last, rest)) = roster.group.split_last_mut() else {
            return Some(x); // no reader: the element waits in the buffer
        };
        counters.elements += 1;
        *received += 1;
        // As in `broadcast`.
        let check_flags = pending.load(Ordering::Acquire);
        let n = rest.len() + 1;
        let last_ready = if at != roster.group_stop && !check_flags {
            hand_to_each!(rest, &x, dropouts);
            Ok(())
        } else {
            let nearest =
                hand_to_each_checked!(rest, &x, at, check_flags, counters.demand_reads, dropouts);
            let r = ready(last, at, check_flags, &mut counters.demand_reads);
            let next = at.wrapping_add(1);
            roster.group_stop = next.wrapping_add(nearest.min(last.stop.wrapping_sub(next)));
            r
        };
        if last_ready.is_ok() && dropouts.is_empty() {
            // `Ok(())` owns nothing: forgetting it spares the hot path a call to the drop glue
            // of `Result<(), Dropout>` (which the compiler does not inline).
            std::mem::forget(last_ready);
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
                self.dropouts();
            } else {
                counters.deliveries += n as u64;
            }
            return None;
        }
        self.write_through_dropouts(x, last_ready);
        None
    }

    /// The end of [`write_through`](Self::write_through) when a member other than the last
    /// did not take the element, or the last one will not: the last one gets a clone if it
    /// takes it, then the element goes into the buffer for those who did not, as if written
    /// first, and the broadcast ends as [`broadcast`](Self::broadcast) ends.
    #[inline(never)]
    fn write_through_dropouts(&mut self, x: T, last_ready: Result<(), Dropout>) {
        let at = self.ring.write_pos();
        let n = self.roster.group.len();
        let last = &mut self.roster.group[n - 1];
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
            self.dropouts.push((n - 1, dropout));
        }
        // Someone did not take it: it stays in the buffer for them, as if written first.
        if let Err(x) = self.ring.write(x) {
            // Unreachable: the buffer is empty, and holds at least one element.
            panics::drop_guarded(x);
            return;
        }
        self.settle(at);
    }

    /// Hands the element just written to every subscriber of the group: the steady-state hot
    /// loop (one demand comparison, one load of the shared `pending` flag, one clone and one
    /// call per subscriber). Those who take it move to the new write position together, with
    /// one count update in the ring.
    fn broadcast(&mut self, pending: &AtomicBool) {
        if self.roster.group.is_empty() {
            return;
        }
        let at = self.ring.write_pos().wrapping_sub(1);
        let State {
            ring,
            roster,
            dropouts,
            counters,
            ..
        } = self;
        let Some(item) = ring.get(at) else {
            return; // unreachable: the element was just written
        };
        // Every cancel sets its subscriber's flag and then posts to the inbox (setting
        // `pending`), so while `pending` is clear no flag needs a look. Read once per element:
        // a subscriber cancelled while this loop runs may still get this one element (2.8),
        // and none after it.
        let check_flags = pending.load(Ordering::Acquire);
        if at != roster.group_stop && !check_flags {
            hand_to_each!(roster.group, item, dropouts);
        } else {
            let nearest = hand_to_each_checked!(
                roster.group,
                item,
                at,
                check_flags,
                counters.demand_reads,
                dropouts
            );
            roster.group_stop = at.wrapping_add(1).wrapping_add(nearest);
        }
        self.settle(at);
    }

    /// The end of a broadcast of the element at `at`, which is in the buffer: the group
    /// members that did not take it (in `dropouts`, by index in the group) leave the group,
    /// the others move past it together.
    fn settle(&mut self, at: u64) {
        let State {
            ring,
            roster,
            dropouts,
            counters,
            ..
        } = self;
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
        if self.quadratic {
            for _ in 0..took {
                self.scan_demand();
            }
        }
        if !self.dropouts.is_empty() {
            self.dropouts();
        }
    }

    /// Parks or removes the subscribers that left the group during a broadcast.
    #[inline(never)]
    fn dropouts(&mut self) {
        let mut dropouts = std::mem::take(&mut self.dropouts);
        for (i, dropout) in dropouts.drain(..) {
            match dropout {
                Dropout::NoDemand => self.park(i),
                Dropout::Cancelled => {
                    let flags = self.roster.get(i).handle.flags.load(Ordering::Acquire);
                    self.remove(i, leave_reason(flags));
                }
                Dropout::Panicked(p) => {
                    self.counters.deliveries += 1;
                    self.remove(i, Leave::Panicked("on_next", p));
                }
            }
        }
        self.dropouts = dropouts;
    }

    /// Visits every lagging subscriber.
    #[inline(never)]
    pub(super) fn deliver(&mut self) {
        let mut r = 0;
        while r < self.roster.lagging.len() {
            if self.visit(r) {
                r += 1;
            }
        }
    }

    /// Delivers to the subscriber at `lagging[r]` everything it may have, then moves its
    /// cursor in the ring once. Returns `true` if it stays at `lagging[r]`; `false` if it
    /// left (joined the group, parked, or was removed: another subscriber now sits at `r`).
    fn visit(&mut self, r: usize) -> bool {
        let State {
            ring,
            roster,
            counters,
            ..
        } = self;
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
        if self.quadratic {
            for _ in 0..delivered {
                self.scan_demand();
            }
        }
        if let Some(p) = panic {
            self.remove(i, Leave::Panicked("on_next", p));
        } else if flags & CANCELLED != 0 {
            self.remove(i, leave_reason(flags));
        } else if caught_up && self.completed {
            self.remove(i, Leave::Complete);
        } else if out_of_demand {
            self.roster.move_to(i, Set::Parked);
            self.park(i);
        } else if caught_up {
            self.roster.join_group(i, pos);
        } else {
            return true; // not reached: it reads until caught up or out of demand
        }
        false
    }

    /// Test-only quadratic variant: after each element read, recompute an upstream demand by
    /// scanning every subscription, as Pekko's `SubscriberManagement` does.
    #[cfg(test)]
    fn scan_demand(&mut self) {
        let mut max = 0u64;
        for i in self.roster.slots() {
            let s = self.roster.get(i);
            self.counters.demand_reads += 1;
            let emitted = if self.roster.set_of(i) == Set::Group {
                s.limit
                    .wrapping_sub(s.stop.wrapping_sub(self.ring.write_pos()))
            } else {
                s.emitted
            };
            max = max.max(s.handle.demand.outstanding(emitted));
        }
        std::hint::black_box(max.min(self.ring.free() as u64));
    }
}
