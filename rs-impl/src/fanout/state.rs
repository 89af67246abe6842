//! The drainer-only state of a fanout ([`State`]) and what happens to a subscriber over its
//! life: it joins, is parked when its demand runs out and attached again when it requests,
//! and leaves (cancel, `request(0)`, panic, the end of the stream).
//!
//! Only the drainer of the fanout's serial drain loop touches a `State`, so nothing here is
//! synchronised; what other threads change (demand, flags) is read through each subscriber's
//! [`Handle`].

use std::panic::{catch_unwind, AssertUnwindSafe};
// The subscription handles are std `Arc`s (see `handle.rs`).
use std::sync::Arc;

use rs_api::{BoxSubscriber, Error, SpecViolation, SubscriptionRef};

use super::handle::{Handle, BAD_REQUEST, CANCELLED};
use super::inbox::Inbox;
use super::ring::Ring;
use super::roster::{Roster, Set};
use crate::loom::fault::{self, Fault};
use crate::loom::sync::atomic::Ordering;
use crate::panics;

/// Why a subscriber left the group during a broadcast.
pub(super) enum Dropout {
    /// Out of demand: parked at the element it did not get.
    NoDemand,
    /// Cancelled (or `request(0)`).
    Cancelled,
    /// Panicked in `on_next` (or in the element's `clone`).
    Panicked(Box<dyn std::any::Any + Send>),
}

/// Why a subscriber leaves.
pub(super) enum Leave {
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

/// Why a subscriber whose `CANCELLED` flag is set leaves.
pub(super) fn leave_reason(flags: usize) -> Leave {
    if flags & BAD_REQUEST != 0 {
        Leave::BadRequest
    } else {
        Leave::Cancelled
    }
}

/// Counters the drainer keeps in plain fields and publishes once per pass.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) elements: u64,
    pub(super) deliveries: u64,
    pub(super) demand_reads: u64,
}

/// The drainer-only state.
pub(super) struct State<T> {
    pub(super) ring: Ring<T>,
    /// The subscribers, by set (group, lagging, parked).
    pub(super) roster: Roster<T>,
    /// Scratch for a broadcast's dropouts (kept to reuse its allocation).
    pub(super) dropouts: Vec<(usize, Dropout)>,
    /// The last subscriber left by cancel, panic or `request(0)` during this pass.
    pub(super) lost_last: bool,
    /// Every publisher handle of the channel is gone: once no subscriber is left, nobody can
    /// ever receive, and the channel closes.
    pub(super) unreachable: bool,
    /// The stream completed (late subscribers still get the retained backlog, then complete).
    pub(super) completed: bool,
    /// The stream ended with this error (failure, shutdown, timeout): later subscribers get it.
    pub(super) failed: Option<Error>,
    /// The processor's upstream.
    pub(super) upstream: Option<SubscriptionRef>,
    /// Elements asked of the upstream so far, and received.
    pub(super) requested: u64,
    pub(super) received: u64,
    /// A channel's permits that this drainer holds: space the ring freed and that has not been
    /// handed back to the senders' room yet. A send made by the drainer itself takes one of
    /// these without touching the room (the steady state of a producer-driven channel).
    pub(super) credit: u64,
    pub(super) counters: Counters,
    /// Drainer-owned spares swapped with the inbox's vectors, so taking the inbox allocates
    /// nothing in steady state.
    pub(super) spare: Inbox<T>,
    /// The test-only quadratic variant also scans every subscription's demand per element.
    #[cfg(test)]
    pub(super) quadratic: bool,
}

impl<T: Clone + Send + 'static> State<T> {
    /// A state around `ring`, nobody subscribed.
    pub(super) fn new(ring: Ring<T>) -> Self {
        State {
            ring,
            roster: Roster::new(),
            dropouts: Vec::new(),
            lost_last: false,
            unreachable: false,
            completed: false,
            failed: None,
            upstream: None,
            requested: 0,
            received: 0,
            credit: 0,
            counters: Counters::default(),
            spare: Inbox::default(),
            #[cfg(test)]
            quadratic: false,
        }
    }

    /// Whether the stream has ended (completed or failed).
    #[inline]
    pub(super) fn ended(&self) -> bool {
        self.completed || self.failed.is_some()
    }

    /// Starts a subscriber: `on_subscribe`, then the end of the stream if it ended.
    pub(super) fn join(&mut self, mut subscriber: BoxSubscriber<T>, handle: Arc<Handle>) {
        if let Some(error) = self.failed.clone() {
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
        let cursor = self.ring.join();
        let sref: SubscriptionRef = handle.clone();
        let (i, id) = self.roster.insert(subscriber, handle, cursor);
        let sub = self.roster.get_mut(i);
        sub.handle.set_id(id);
        let s = &mut sub.subscriber;
        // The handle's request and cancel only record and post: they take concurrent calls.
        let mark = crate::demand::concurrent_calls(&sref);
        let r = catch_unwind(AssertUnwindSafe(|| s.on_subscribe(sref)));
        drop(mark);
        if let Err(p) = r {
            sub.handle.flags.fetch_or(CANCELLED, Ordering::AcqRel);
            self.remove(i, Leave::Panicked("on_subscribe", p));
            return;
        }
        let flags = sub.handle.flags.load(Ordering::Acquire);
        if flags & CANCELLED != 0 {
            self.remove(i, leave_reason(flags));
        } else if self.completed && cursor == self.ring.write_pos() {
            self.remove(i, Leave::Complete);
        } else if !sub.handle.demand.parked() {
            // It requested from on_subscribe; the queued wake-up will find it attached.
            self.attach(i);
        }
    }

    /// The position of subscriber `i`.
    pub(super) fn position(&self, i: usize) -> u64 {
        match self.roster.set_of(i) {
            Set::Group => self.ring.write_pos(),
            _ => self.roster.get(i).cursor,
        }
    }

    /// Puts parked subscriber `i` (with demand) in the group if caught up, else in `lagging`.
    pub(super) fn attach(&mut self, i: usize) {
        debug_assert_eq!(self.roster.set_of(i), Set::Parked);
        let pos = self.ring.write_pos();
        if self.roster.get(i).cursor == pos {
            self.roster.join_group(i, pos);
        } else {
            self.roster.move_to(i, Set::Lagging);
        }
    }

    /// Parks subscriber `i` without looking at its demand; its `cursor` is then its position.
    fn detach(&mut self, i: usize) {
        if self.roster.set_of(i) == Set::Group {
            let pos = self.ring.write_pos();
            self.roster.get_mut(i).leave_group(pos);
        }
        self.roster.move_to(i, Set::Parked);
    }

    /// Removes subscriber `i` and sends it what `why` says; frees its hold on the buffer.
    pub(super) fn remove(&mut self, i: usize, why: Leave) {
        self.detach(i);
        let mut sub = self.roster.take(i);
        if !fault::active(Fault::LeaveKeepsHold) {
            self.ring.leave(sub.cursor);
        }
        let last = self.roster.len() == 0;
        sub.handle.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        let s = &mut sub.subscriber;
        match why {
            Leave::Cancelled => self.lost_last |= last,
            Leave::Panicked(signal, p) => {
                self.lost_last |= last;
                panics::subscriber_panicked(signal, p);
            }
            Leave::BadRequest => {
                self.lost_last |= last;
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

    /// Parks subscriber `i` (already in the parked set), whose demand looked exhausted; if
    /// demand arrived meanwhile, attaches it again instead.
    pub(super) fn park(&mut self, i: usize) {
        let sub = self.roster.get_mut(i);
        // One word: the total returned is the one at the moment the bit was set, so a request
        // that did not see the bit is counted in it.
        let total = sub.handle.demand.park();
        if sub.handle.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // its leaving is queued
        }
        if fault::active(Fault::ParkWithoutRecheck) {
            return;
        }
        self.counters.demand_reads += 1;
        if total != sub.limit && sub.handle.demand.unpark() {
            sub.limit = total;
            self.attach(i);
        }
        // Else a request un-parked it and queued its id: it comes back through the inbox.
    }

    /// A wake-up from the inbox for subscriber `id`: attaches it if it is still parked. A
    /// wake-up is stale when the subscriber was attached since (by `join`) and parked again:
    /// the parked bit is then set once more, and the next request posts anew.
    pub(super) fn woken(&mut self, id: u64) {
        if let Some(i) = self.roster.live(id) {
            let parked = self.roster.get(i).handle.demand.parked();
            if self.roster.set_of(i) == Set::Parked && !parked {
                self.attach(i);
            }
        }
    }

    /// A leaving from the inbox for subscriber `id`.
    pub(super) fn leaving(&mut self, id: u64) {
        if let Some(i) = self.roster.live(id) {
            let flags = self.roster.get(i).handle.flags.load(Ordering::Acquire);
            self.remove(i, leave_reason(flags));
        }
    }

    /// The stream completed: subscribers with nothing left to read complete now, the others
    /// after their backlog.
    pub(super) fn complete(&mut self) {
        if self.ended() {
            return;
        }
        self.completed = true;
        self.upstream = None;
        for i in self.roster.slots() {
            if fault::active(Fault::CompleteSkipsParked) && self.roster.set_of(i) != Set::Group {
                continue;
            }
            if self.position(i) == self.ring.write_pos() {
                self.remove(i, Leave::Complete);
            }
        }
    }

    /// Ends the stream with `error` for every subscriber now and every later one, and drops
    /// the buffer; cancels the upstream first if `cancel_upstream` (not after the upstream's
    /// own failure, rule 4.2). Returns `false` if the stream had ended already.
    pub(super) fn fail_all(&mut self, error: Error, cancel_upstream: bool) -> bool {
        if self.ended() {
            return false;
        }
        self.failed = Some(error.clone());
        if let Some(up) = self.upstream.take() {
            if cancel_upstream {
                up.cancel();
            }
        }
        for i in self.roster.slots() {
            self.remove(i, Leave::Error(error.clone()));
        }
        self.lost_last = false;
        self.ring.clear();
        true
    }
}
