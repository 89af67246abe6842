//! The rule 2.7 call gate: a ready-made subscriber's own requests (from inside its signals)
//! and its handle's `cancel` (from any thread) never overlap on the subscription.

use rs_api::SubscriptionRef;

use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;

/// Serialises the calls made on one subscription by a ready-made subscriber (its requests,
/// from inside its signals) and by its [`Handle`] (`cancel`, from any thread): rule 2.7.
///
/// No lock is held while calling out. The subscriber brackets each call with the `CALLING`
/// bit; a handle that finds the bit set only records `CANCEL_REQUESTED`, and the subscriber
/// performs the cancel right after its own call returns. Otherwise the handle claims
/// `CANCEL_DONE` and cancels itself, and the subscriber makes no call afterwards.
pub(super) struct Gate {
    /// `CALLING | CANCEL_REQUESTED | CANCEL_DONE` bits.
    state: AtomicUsize,
    /// The subscription as the handle sees it, and whether the handle cancelled. One lock for
    /// both, so a cancel racing `on_subscribe` is either seen by `keep` or finds the
    /// subscription to cancel.
    link: Mutex<Link>,
}

/// The subscriber is calling the subscription.
const CALLING: usize = 1;
/// The handle asked for a cancel while the subscriber was calling.
const CANCEL_REQUESTED: usize = 2;
/// The cancel has been made (or is being made); no call follows.
const CANCEL_DONE: usize = 4;

/// What the handle knows of the subscription.
#[derive(Default)]
struct Link {
    /// The subscription, from `on_subscribe` until the terminal signal or the cancel.
    subscription: Option<SubscriptionRef>,
    /// The handle cancelled. A cancel made before `on_subscribe` is not lost: the
    /// subscription is cancelled as soon as it arrives.
    cancelled: bool,
}

impl Gate {
    /// A gate kept inline in the outcome slot (no allocation of its own).
    pub(super) fn new() -> Self {
        Gate {
            state: AtomicUsize::new(0),
            link: Mutex::new(Link::default()),
        }
    }

    /// Keeps `s` for the handle's `cancel`; `false` if the handle cancelled already.
    pub(super) fn keep(&self, s: &SubscriptionRef) -> bool {
        let mut link = self.link.lock();
        if link.cancelled {
            return false;
        }
        link.subscription = Some(s.clone());
        true
    }

    /// The subscriber's `request(n)`, serial with the handle's `cancel`.
    pub(super) fn request(&self, s: &SubscriptionRef, n: u64) {
        let before = self.state.fetch_or(CALLING, Ordering::AcqRel);
        if before & CANCEL_DONE == 0 {
            s.request(n);
        }
        let before = self.state.fetch_and(!CALLING, Ordering::AcqRel);
        if before & (CANCEL_REQUESTED | CANCEL_DONE) == CANCEL_REQUESTED {
            // The handle cancelled during our call and left the cancel to us.
            self.state.fetch_or(CANCEL_DONE, Ordering::AcqRel);
            s.cancel();
        }
    }

    /// The handle's `cancel`: made now, or by the subscriber right after its current call.
    pub(super) fn cancel(&self) {
        let s = {
            let mut link = self.link.lock();
            link.cancelled = true;
            link.subscription.take()
        };
        let Some(s) = s else { return };
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & CANCEL_DONE != 0 {
                return;
            }
            let (next, mine) = if state & CALLING != 0 {
                (state | CANCEL_REQUESTED, false)
            } else {
                (state | CANCEL_REQUESTED | CANCEL_DONE, true)
            };
            match self
                .state
                .compare_exchange(state, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if mine {
                        s.cancel();
                    }
                    return;
                }
                Err(actual) => state = actual,
            }
        }
    }

    /// Whether the handle cancelled.
    pub(super) fn cancelled(&self) -> bool {
        self.link.lock().cancelled
    }

    /// 2.4: forgets the subscription after the terminal signal.
    pub(super) fn end(&self) {
        self.link.lock().subscription.take();
    }
}
