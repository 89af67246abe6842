//! How a ready-made subscriber requests: the [`RequestStrategy`], and [`Upstream`], which
//! applies it to the one subscription the subscriber keeps (rules 2.1, 2.3–2.5).

use std::fmt;

use rs_api::{SubscriptionRef, UNBOUNDED};

use super::gate::Gate;

/// How a ready-made subscriber requests.
///
/// A prefetch is a size (how many elements may be outstanding, hence buffered by whoever
/// sends them), so it is a `usize`, as every size in this crate is; the requests it makes
/// are demand counts (`u64`).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// let (s, h) = collect(RequestStrategy::Prefetch(8)); // at most 8 outstanding
/// rs_impl::source::range(0u32..20).subscribe(Box::new(s));
/// assert_eq!(h.wait().unwrap().len(), 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestStrategy {
    /// `request(UNBOUNDED)` once, in `on_subscribe`.
    Unbounded,
    /// Request `n` up front, then `n / 2` (at least 1) after each `n / 2` consumed: at most
    /// `n` elements outstanding. `Prefetch(0)` makes the subscriber constructors panic (a
    /// request of 0 would be a rule 3.9 violation; nothing is silently rounded).
    Prefetch(usize),
    /// `request(1)` up front and after each element (same as `Prefetch(1)`).
    OneByOne,
}

impl RequestStrategy {
    /// Panics on a strategy that cannot request: `Prefetch(0)`.
    #[track_caller]
    pub(super) fn check(self) {
        assert!(
            self != RequestStrategy::Prefetch(0),
            "RequestStrategy::Prefetch(0): a prefetch must be at least 1 (a request of 0 breaks \
             rule 3.9); use OneByOne or Prefetch(1)"
        );
    }

    /// The first request and the replenishing batch, both at least 1.
    fn sizes(self) -> (u64, u64) {
        match self {
            RequestStrategy::Unbounded => (UNBOUNDED, 0),
            RequestStrategy::OneByOne => (1, 1),
            RequestStrategy::Prefetch(n) => {
                let n = u64::try_from(n).unwrap_or(u64::MAX).max(1);
                (n, (n / 2).max(1))
            }
        }
    }
}

/// The subscription-handling half shared by the ready-made subscribers.
///
/// Its calls go through the rule-2.7 [`Gate`] the caller passes in (kept in the outcome
/// slot the subscriber shares with its handle, so that the pair is one allocation).
pub(super) struct Upstream {
    subscription: Option<SubscriptionRef>,
    /// First request; `UNBOUNDED` for the unbounded strategy.
    initial: u64,
    /// Replenishing batch; 0 when unbounded.
    batch: u64,
    /// Elements left before the next replenishing request: counts down from `batch` (from
    /// `u64::MAX` when unbounded, where reaching 0 only starts the count again). One
    /// decrement and one test per element, whatever the strategy.
    left: u64,
    /// A terminal signal arrived, or the handle cancelled.
    ended: bool,
    /// The subscription again, when it takes concurrent calls (one of this crate's, marked by
    /// its publisher: [`crate::demand::takes_concurrent_calls`]) and the strategy replenishes:
    /// replenishing requests skip the gate and are made inline, from `on_next` (one test
    /// for both conditions per replenish).
    direct: Option<SubscriptionRef>,
}

impl fmt::Debug for Upstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("subscribed", &self.subscription.is_some())
            .field("initial", &self.initial)
            .field("batch", &self.batch)
            .field("left", &self.left)
            .field("ended", &self.ended)
            .finish()
    }
}

impl Upstream {
    pub(super) fn new(strategy: RequestStrategy) -> Self {
        let (initial, batch) = strategy.sizes();
        Upstream {
            subscription: None,
            initial,
            batch,
            left: if batch == 0 { u64::MAX } else { batch },
            ended: false,
            direct: None,
        }
    }

    /// 2.5: keeps the first subscription and makes the first request; cancels any other.
    /// The handle sees the subscription before the first request; if the handle cancelled
    /// already, the subscription is cancelled at once, without a request.
    pub(super) fn on_subscribe(&mut self, gate: &Gate, subscription: SubscriptionRef) {
        if self.subscription.is_some() || self.ended {
            subscription.cancel();
            return;
        }
        if !gate.keep(&subscription) {
            self.ended = true;
            subscription.cancel();
            return;
        }
        if self.batch != 0 && crate::demand::takes_concurrent_calls(&subscription) {
            self.direct = Some(subscription.clone());
        }
        self.subscription = Some(subscription.clone());
        gate.request(&subscription, self.initial);
    }

    /// Counts one consumed element and replenishes demand when a batch is used up. Inlined
    /// into each subscriber's `on_next` (a call per element cost ten instructions of an
    /// unbounded subscriber's thirty in a merge's typed lane).
    ///
    /// With one-by-one demand this runs the request after every element, so its path is
    /// counted (issue 24, callgrind on `benches/examples/source_prof`): it used to be a
    /// strategy test, a count up to the batch, and an out-of-line replenish that tested the
    /// subscription and the `direct` flag before its call (about 20 instructions besides the
    /// request itself). Now: a countdown (decrement and test, the same for every strategy),
    /// then one test of [`direct`](Self::direct) and the request, inline (a tail call when the
    /// consumer is inlined); a gated or ended subscription takes the out-of-line path.
    #[inline]
    pub(super) fn consumed_one(&mut self, gate: &Gate) {
        self.left -= 1;
        if self.left != 0 {
            return;
        }
        match &self.direct {
            Some(s) => {
                // Our own subscription: a cancel from the handle meanwhile is fine, and a
                // request after it is ignored (3.6).
                self.left = self.batch;
                s.request(self.batch);
            }
            None => self.replenish(gate),
        }
    }

    /// A batch was used up (or, unbounded, 2^64 - 1 elements): asks for the next one through
    /// the gate, unless the demand is unbounded or the subscription is gone.
    #[inline(never)]
    fn replenish(&mut self, gate: &Gate) {
        if self.batch == 0 {
            self.left = u64::MAX;
            return;
        }
        self.left = self.batch;
        if let Some(s) = &self.subscription {
            gate.request(s, self.batch);
        }
    }

    /// Cancels the subscription from inside a signal (the consumer panicked), serial with
    /// the handle's `cancel` through the gate; nothing is requested afterwards.
    pub(super) fn cancel(&mut self, gate: &Gate) {
        self.ended = true;
        self.subscription = None;
        self.direct = None;
        gate.cancel();
    }

    /// 2.3, 2.4: forget the subscription without calling it.
    pub(super) fn end(&mut self) {
        self.ended = true;
        self.subscription = None;
        self.direct = None;
    }
}

#[cfg(all(test, not(rs_loom)))]
mod tests {
    use rs_api::Subscription;

    use crate::loom::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// Counts what it was asked.
    #[derive(Default)]
    struct Counting(AtomicU64);

    impl Subscription for Counting {
        fn request(&self, n: u64) {
            self.0.fetch_add(n, Ordering::Relaxed);
        }
        fn cancel(&self) {}
    }

    #[test]
    fn only_a_subscription_marked_by_its_publisher_skips_the_gate() {
        for marked in [false, true] {
            let counting = std::sync::Arc::new(Counting::default());
            let s: SubscriptionRef = counting.clone();
            let gate = Gate::new();
            let mut up = Upstream::new(RequestStrategy::OneByOne);
            {
                let _mark = marked.then(|| crate::demand::concurrent_calls(&s));
                up.on_subscribe(&gate, s.clone());
            }
            assert_eq!(up.direct.is_some(), marked);
            for _ in 0..10 {
                up.consumed_one(&gate);
            }
            assert_eq!(counting.0.load(Ordering::Relaxed), 11, "marked = {marked}");
        }
        // A mark for another subscription does not count.
        let other: SubscriptionRef = std::sync::Arc::new(Counting::default());
        let s: SubscriptionRef = std::sync::Arc::new(Counting::default());
        let gate = Gate::new();
        let mut up = Upstream::new(RequestStrategy::OneByOne);
        let _mark = crate::demand::concurrent_calls(&other);
        up.on_subscribe(&gate, s);
        assert!(up.direct.is_none());
    }
}
