//! The subscription a fanout hands each subscriber: its demand, its flags, and how its
//! `request` and `cancel` reach the drainer ([`Post`]).
//!
//! A `request` only adds to the subscriber's [`Demand`] (one read-modify-write) unless the
//! drainer parked the subscriber for want of demand; then it also posts the subscriber's id
//! so that the next pass takes it back. A `cancel` (or `request(0)`) sets [`CANCELLED`] and
//! posts the id. Whoever posts also drains if nobody does (rule 3.4: never waits).

// Subscriptions are handed out as `rs_api::SubscriptionRef` (a std `Arc<dyn _>`), so the
// handle and the core behind it are std `Arc`s in every build; the atomics inside come from
// the facade.
use std::sync::Arc;

use rs_api::Subscription;

use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// [`Handle::flags`]: cancelled by the subscriber, by a terminal signal or by a panic.
pub(super) const CANCELLED: usize = 1;
/// [`Handle::flags`]: `request(0)` (rule 3.9); set together with `CANCELLED`.
pub(super) const BAD_REQUEST: usize = 2;
/// [`Handle::flags`]: the drainer parked the subscriber (its demand ran out); whoever clears
/// the bit (a `request`, or the drainer finding demand after all) brings it back.
pub(super) const PARKED: usize = 4;

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
    /// What the subscriber requested in all (3.8, 3.17).
    pub(super) demand: Demand,
    /// `CANCELLED | BAD_REQUEST | PARKED`.
    pub(super) flags: AtomicUsize,
}

impl Handle {
    /// A handle posting to `core`, parked (nothing requested yet).
    pub(super) fn new(core: Arc<dyn Post>) -> Self {
        Handle {
            core,
            id: AtomicU64::new(NO_ID),
            demand: Demand::new(),
            flags: AtomicUsize::new(PARKED),
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
        if self.demand.request(n).is_err() {
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
        // A read-modify-write even when not parked: it orders this request's demand before the
        // drainer's re-read when it parks the subscriber, so no wake-up is lost.
        if self.flags.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0 {
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
