//! The subscription a fanout hands each subscriber: its demand, its flags, and how its
//! `request` and `cancel` reach the drainer ([`Post`]).
//!
//! A `request` only adds to the subscriber's demand (one read-modify-write) unless the
//! drainer parked the subscriber for want of demand; then it also posts the subscriber's id
//! so that the next pass takes it back. A `cancel` (or `request(0)`) sets [`CANCELLED`] and
//! posts the id. Whoever posts also drains if nobody does (rule 3.4: never waits).
//!
//! **Demand and the parked bit share one word** ([`DemandWord`]). They used to be two (the
//! shared [`Demand`](crate::demand::Demand) counter and a `PARKED` bit among the flags), so a
//! request made two read-modify-writes (the demand's compare-and-swap, then a `fetch_and` of
//! the parked bit, which ordered the demand before the drainer's re-read when it parked the
//! subscriber) and the drainer two when it parked. In one word the request's one
//! compare-and-swap adds the demand and clears the bit, and the drainer's `fetch_or` that
//! parks returns the demand it must compare: either the request comes first in the word's
//! modification order (the drainer sees its demand and does not stay parked) or the park
//! does (the request sees the bit and posts the wake-up). No wake-up is lost, with no
//! store-load ordering between two locations to get right. Counted with `request(1)` from
//! every `on_next` at 32 subscribers (issue 24; callgrind on `fanout_prof 32 N 1 r1-ours`,
//! capacity 64): see the module docs of the fanout for the figures.

// Subscriptions are handed out as `rs_api::SubscriptionRef` (a std `Arc<dyn _>`), so the
// handle and the core behind it are std `Arc`s in every build; the atomics inside come from
// the facade.
use std::sync::Arc;

use rs_api::Subscription;

use rs_api::{is_unbounded, UNBOUNDED};

use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// [`Handle::flags`]: cancelled by the subscriber, by a terminal signal or by a panic.
pub(super) const CANCELLED: usize = 1;
/// [`Handle::flags`]: `request(0)` (rule 3.9); set together with `CANCELLED`.
pub(super) const BAD_REQUEST: usize = 2;
/// [`DemandWord`]: the drainer parked the subscriber (its demand ran out); whoever clears
/// the bit (a `request`, or the drainer finding demand after all) brings it back.
const PARKED: u64 = 1 << 63;
/// [`DemandWord`]: the total requested, below the parked bit. Every bounded total is below
/// [`rs_api::UNBOUNDED_THRESHOLD`] (`2^63 - 1`, rule 3.17), so 63 bits hold them all, and
/// the mask itself (the threshold) stands for unbounded.
const TOTAL: u64 = PARKED - 1;

/// A subscriber's cumulative demand (3.8, 3.17: saturating, a total at the threshold is
/// unbounded) and the drainer's parked bit, in one atomic word (see the module docs).
#[derive(Debug)]
pub(super) struct DemandWord(AtomicU64);

impl DemandWord {
    /// No demand yet, parked (nothing requested).
    fn new() -> Self {
        DemandWord(AtomicU64::new(PARKED))
    }

    /// Adds `n` (at least 1) to the total, saturating, and clears the parked bit; whether it
    /// was set (the caller then posts the wake-up).
    #[inline]
    fn request(&self, n: u64) -> bool {
        let add = n.min(TOTAL);
        let mut word = self.0.load(Ordering::Acquire);
        loop {
            let total = word & TOTAL;
            // Both below 2^63: the sum cannot overflow; at the threshold it is unbounded.
            let next = if total == TOTAL {
                TOTAL
            } else {
                (total + add).min(TOTAL)
            };
            if next == word {
                return false; // unbounded and not parked: nothing to write
            }
            match self
                .0
                .compare_exchange(word, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(prev) => return prev & PARKED != 0,
                Err(actual) => word = actual,
            }
        }
    }

    /// The total requested so far, as the drainer counts it: `2^63 - 1` (the threshold) once
    /// unbounded, not [`UNBOUNDED`]. The drainer only compares totals with its counts and
    /// adds their differences, and `2^63 - 1` elements are as far beyond any stream as
    /// `u64::MAX` (which the drainer's counts met in the same way before): not mapping it
    /// spares the group's loop a compare and a conditional move per delivery (about 6
    /// instructions with the constants, counted with callgrind at 32 subscribers).
    #[inline]
    pub(super) fn total(&self) -> u64 {
        self.0.load(Ordering::Acquire) & TOTAL
    }

    /// The demand not yet served when `emitted` elements were delivered ([`UNBOUNDED`] once
    /// unbounded).
    #[cfg(test)]
    pub(super) fn outstanding(&self, emitted: u64) -> u64 {
        let total = self.total();
        if total == TOTAL {
            UNBOUNDED
        } else {
            total.saturating_sub(emitted)
        }
    }

    /// Sets the parked bit (the drainer, whose count reached the total it knew); returns the
    /// total at that moment (as [`total`](Self::total) counts it): if it grew, a request came
    /// first and did not see the bit.
    pub(super) fn park(&self) -> u64 {
        self.0.fetch_or(PARKED, Ordering::AcqRel) & TOTAL
    }

    /// Clears the parked bit (the drainer, finding demand after all); whether it was still
    /// set (else a request cleared it and posted the wake-up).
    pub(super) fn unpark(&self) -> bool {
        self.0.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0
    }

    /// Whether the parked bit is set.
    pub(super) fn parked(&self) -> bool {
        self.0.load(Ordering::Acquire) & PARKED != 0
    }
}

/// No roster id yet (a handle whose subscriber has not joined).
const NO_ID: u64 = u64::MAX;

/// Where a subscription posts what the drainer must act on: the fanout's core.
pub(super) trait Post: Send + Sync {
    /// The subscriber with `id` cancelled or requested 0 (its flags say which).
    fn leaving(&self, id: u64);
    /// The parked subscriber with `id` has demand again.
    fn woken(&self, id: u64);
}

/// The subscription handed to one subscriber.
pub(super) struct Handle {
    core: Arc<dyn Post>,
    /// Roster id (slot index in the low 32 bits, generation in the high 32), set before
    /// `on_subscribe`.
    id: AtomicU64,
    /// What the subscriber requested in all (3.8, 3.17), and whether the drainer parked it.
    pub(super) demand: DemandWord,
    /// `CANCELLED | BAD_REQUEST`.
    pub(super) flags: AtomicUsize,
}

impl Handle {
    /// A handle posting to `core`, parked (nothing requested yet).
    pub(super) fn new(core: Arc<dyn Post>) -> Self {
        Handle {
            core,
            id: AtomicU64::new(NO_ID),
            demand: DemandWord::new(),
            flags: AtomicUsize::new(0),
        }
    }

    /// Records the roster id (the drainer, before `on_subscribe`).
    pub(super) fn set_id(&self, id: u64) {
        self.id.store(id, Ordering::Release);
    }

    fn id(&self) -> u64 {
        self.id.load(Ordering::Acquire)
    }
}

impl Subscription for Handle {
    fn request(&self, n: u64) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if n == 0 {
            // 3.9: cancel, and the drainer answers with on_error.
            if self
                .flags
                .fetch_or(CANCELLED | BAD_REQUEST, Ordering::AcqRel)
                & CANCELLED
                == 0
            {
                self.core.leaving(self.id());
            }
            return;
        }
        // One read-modify-write: the demand added and the parked bit cleared together, so
        // the drainer's park either sees this demand or this request sees the bit.
        if self
            .demand
            .request(if is_unbounded(n) { UNBOUNDED } else { n })
        {
            self.core.woken(self.id());
        }
    }

    fn cancel(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.core.leaving(self.id());
    }
}
