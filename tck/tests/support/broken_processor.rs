//! A configurable test processor: `rs_impl`'s `IdentityProcessor` behind two interceptors,
//! correct with every knob off, broken in exactly the ways its knobs say.
//!
//! * Downstream (the processor as a publisher) the knobs are the broken publisher's
//!   ([`Knobs`]), applied to each downstream subscriber and its subscription.
//! * Upstream (the processor as a subscriber) the knobs are the broken subscriber's
//!   ([`SubKnobs`]), applied to the processor's upstream signals and its calls upstream.
//! * [`ProcKnobs`] break the processor's own rules.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rs_api::{
    BoxSubscriber, Error, Processor, Publisher, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED, UNBOUNDED_THRESHOLD,
};
use rs_impl::processor::IdentityProcessor;
use rs_tck::processor::{IdentityProcessorVerification, UpstreamErrorPolicy};
use rs_tck::publisher::PublisherVerification;

use super::broken_publisher::{Broken, Knobs};
use super::broken_subscriber::SubKnobs;

/// The processor's own faults.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProcKnobs {
    /// 1.4 (IP): forward an upstream error to the first subscriber only.
    pub(crate) error_to_first_only: bool,
    /// 4.2: hold an upstream error until the downstream requests.
    pub(crate) delay_error_until_request: bool,
    /// 4.2 (recovery branch): cancel the failed upstream subscription after its error.
    pub(crate) cancel_upstream_after_error: bool,
    /// 3.8 (through the processor): drop every second element from upstream.
    pub(crate) drop_every_second_element: bool,
    /// Bounded buffering: turn the processor's first upstream request into unbounded demand.
    pub(crate) request_unbounded_upstream: bool,
    /// Not a fault by itself: an upstream error is queued behind the buffered elements (the
    /// processor completes inside, and each subscriber gets the error where it would have got
    /// `on_complete`): the `AfterHeldElements` policy.
    pub(crate) error_after_held_elements: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Processor-wide state of the interceptors.
struct PShared {
    pk: ProcKnobs,
    knobs: Arc<Knobs>,
    sk: SubKnobs,
    subscribers: AtomicU64,
    /// The first upstream subscription (a copy the interceptors may misuse).
    upstream: Mutex<Option<SubscriptionRef>>,
    has_upstream: AtomicBool,
    upstream_terminated: AtomicBool,
    upstream_cancelled: AtomicBool,
    cancel_pending: AtomicBool,
    /// Held across an upstream request by the `lock_across_request` knob.
    state: Mutex<()>,
    elements: AtomicU64,
    /// Downstream states kept alive on purpose (3.13 knob).
    leaks: Mutex<Vec<Arc<DownState>>>,
    /// The latest downstream subscriber (the `drop_earlier_subscriber_on_join` knob).
    latest: Mutex<Option<Weak<DownState>>>,
    /// The upstream error queued behind the buffered elements (`error_after_held_elements`).
    pending_error: Mutex<Option<Error>>,
    /// The first upstream request was made (`request_unbounded_upstream`).
    requested_upstream: AtomicBool,
}

impl PShared {
    fn upstream(&self) -> Option<SubscriptionRef> {
        lock(&self.upstream).clone()
    }
}

// ------------------------------------------------------------------------------------------
// Upstream side

/// The processor's view of its upstream subscription.
struct UpSub {
    shared: Arc<PShared>,
    inner: SubscriptionRef,
    primary: bool,
}

impl Subscription for UpSub {
    fn request(&self, n: u64) {
        let sk = &self.shared.sk;
        if self.primary && (sk.no_request || sk.lock_across_request) {
            return;
        }
        if self.primary
            && self.shared.pk.request_unbounded_upstream
            && !self.shared.requested_upstream.swap(true, Ordering::AcqRel)
        {
            self.inner.request(UNBOUNDED);
            return;
        }
        self.inner.request(if sk.request_zero { 0 } else { n });
    }

    fn cancel(&self) {
        if self.primary {
            self.shared
                .upstream_cancelled
                .store(true, Ordering::Release);
            if self.shared.sk.lazy_cancel {
                self.shared.cancel_pending.store(true, Ordering::Release);
                return;
            }
        }
        self.inner.cancel();
    }
}

/// The broken processor: a `Clone` handle, as `IdentityProcessor` is. As its upstream's
/// subscriber it applies the subscriber knobs; as a publisher, the publisher knobs.
#[derive(Clone)]
struct BrokenProcessor {
    inner: IdentityProcessor<u64>,
    shared: Arc<PShared>,
    /// One per handle: the last handle to go is the processor being dropped.
    handles: Arc<()>,
}

impl Subscriber<u64> for BrokenProcessor {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        let sh = &self.shared;
        let primary = !sh.has_upstream.swap(true, Ordering::AcqRel);
        if primary {
            *lock(&sh.upstream) = Some(s.clone());
        } else if sh.sk.ignore_second_subscription {
            return;
        }
        self.inner.on_subscribe(Arc::new(UpSub {
            shared: sh.clone(),
            inner: s,
            primary,
        }));
    }

    fn on_next(&mut self, item: u64) {
        let sh = self.shared.clone();
        let (sk, pk) = (&sh.sk, &sh.pk);
        if sk.lock_across_request && sh.state.try_lock().is_err() {
            panic!("on_next re-entered while the state is held across request (test knob)");
        }
        if sh.cancel_pending.swap(false, Ordering::AcqRel) {
            if let Some(up) = sh.upstream() {
                up.cancel();
            }
        }
        if sk.panic_on_next {
            panic!("on_next panicked (test knob)");
        }
        if sk.panic_on_next_after_cancel && sh.upstream_cancelled.load(Ordering::Acquire) {
            panic!("on_next after cancel panicked (test knob)");
        }
        let i = sh.elements.fetch_add(1, Ordering::AcqRel);
        if pk.drop_every_second_element && i % 2 == 1 {
            return;
        }
        self.inner.on_next(item);
    }

    fn on_error(&mut self, error: Error) {
        let sh = self.shared.clone();
        sh.upstream_terminated.store(true, Ordering::Release);
        if sh.sk.cancel_in_on_error {
            if let Some(up) = sh.upstream() {
                up.cancel();
            }
        }
        if sh.sk.panic_on_error {
            panic!("on_error panicked (test knob)");
        }
        if sh.pk.error_after_held_elements {
            *lock(&sh.pending_error) = Some(error);
            self.inner.on_complete();
            return;
        }
        self.inner.on_error(error);
        if sh.pk.cancel_upstream_after_error {
            if let Some(up) = sh.upstream() {
                // Later, from another thread (not inside on_error, which 2.3 catches).
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(5));
                    up.cancel();
                });
            }
        }
    }

    fn on_complete(&mut self) {
        let sh = self.shared.clone();
        sh.upstream_terminated.store(true, Ordering::Release);
        if sh.sk.request_in_on_complete {
            if let Some(up) = sh.upstream() {
                up.request(1);
            }
        }
        if sh.sk.panic_on_complete {
            panic!("on_complete panicked (test knob)");
        }
        self.inner.on_complete();
    }
}

impl Drop for BrokenProcessor {
    fn drop(&mut self) {
        if Arc::get_mut(&mut self.handles).is_none() {
            return; // not the last handle
        }
        let sh = &self.shared;
        if sh.sk.requests_after_drop {
            if let Some(up) = sh.upstream() {
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        std::thread::sleep(Duration::from_millis(5));
                        up.request(1);
                    }
                });
            }
        }
        if sh.sk.panic_on_drop_without_terminal
            && !sh.upstream_terminated.load(Ordering::Acquire)
            && !std::thread::panicking()
        {
            panic!("dropped without a terminal signal (test knob)");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Downstream side

/// One downstream subscriber as the interceptor keeps it.
struct DownState {
    shared: Arc<PShared>,
    index: u64,
    subscriber: Mutex<Option<BoxSubscriber<u64>>>,
    zombie: Mutex<Option<BoxSubscriber<u64>>>,
    inner: Mutex<Option<SubscriptionRef>>,
    in_signal: AtomicBool,
    terminated: AtomicBool,
    cancels: AtomicU32,
    demand: AtomicU64,
    held_error: Mutex<Option<Error>>,
    first: AtomicBool,
    /// Cancelled while a signal was in progress: drop (or keep) the subscriber after it.
    cancelled: AtomicBool,
}

impl DownState {
    fn knobs(&self) -> &Knobs {
        &self.shared.knobs
    }

    fn inner(&self) -> Option<SubscriptionRef> {
        lock(&self.inner).clone()
    }

    fn with_subscriber(&self, f: impl FnOnce(&mut BoxSubscriber<u64>)) {
        let mut g = lock(&self.subscriber);
        if let Some(s) = g.as_mut() {
            self.in_signal.store(true, Ordering::Release);
            if self.knobs().swallow_subscriber_panics {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(s)));
            } else {
                f(s);
            }
            self.in_signal.store(false, Ordering::Release);
        }
        if self.cancelled.load(Ordering::Acquire) {
            let s = g.take();
            drop(g);
            self.release(s);
        }
    }

    /// Drops the subscriber after cancel, or keeps it (3.13 knobs).
    fn release(&self, s: Option<BoxSubscriber<u64>>) {
        let k = self.knobs();
        if k.keep_subscriber_after_cancel || k.error_on_repeated_cancel {
            if s.is_some() {
                *lock(&self.zombie) = s;
            }
        } else {
            drop(s);
        }
    }

    /// Ends the downstream subscriber with `f` and drops or keeps it.
    fn end(&self, f: impl FnOnce(&mut BoxSubscriber<u64>)) {
        self.terminated.store(true, Ordering::Release);
        let s = lock(&self.subscriber).take();
        if let Some(mut s) = s {
            f(&mut s);
            let k = self.knobs();
            if k.keep_subscriber_after_terminal || k.signal_after_terminal {
                *lock(&self.zombie) = Some(s);
            }
        }
    }

    fn fail(&self, e: Error) {
        self.end(|s| s.on_error(e));
        if let Some(i) = self.inner() {
            i.cancel();
        }
    }
}

struct DownSubscriber(Arc<DownState>);

impl Subscriber<u64> for DownSubscriber {
    fn on_subscribe(&mut self, sref: SubscriptionRef) {
        let st = &self.0;
        *lock(&st.inner) = Some(sref.clone());
        if !st.knobs().skip_on_subscribe {
            let handle: SubscriptionRef = Arc::new(DownSubscription(st.clone()));
            st.with_subscriber(|s| s.on_subscribe(handle));
        }
        if st.knobs().emit_before_request {
            sref.request(1);
        }
    }

    fn on_next(&mut self, item: u64) {
        let st = &self.0;
        let k = st.knobs();
        let first = st.first.swap(false, Ordering::AcqRel);
        if first && k.len_offset < 0 {
            // Swallowed: ask for a replacement, so the downstream's demand is not lost.
            if let Some(i) = st.inner() {
                i.request(1);
            }
            return;
        }
        let x = if k.per_subscriber_sequence {
            item + st.index * 1000
        } else {
            item
        };
        st.with_subscriber(|s| s.on_next(x));
        if first && k.len_offset > 0 {
            st.with_subscriber(|s| s.on_next(x));
        }
    }

    fn on_error(&mut self, error: Error) {
        let st = &self.0;
        let pk = &st.shared.pk;
        if st.knobs().no_terminal || (pk.error_to_first_only && st.index > 0) {
            return;
        }
        if pk.delay_error_until_request {
            *lock(&st.held_error) = Some(error);
            return;
        }
        st.end(|s| s.on_error(error));
    }

    fn on_complete(&mut self) {
        let st = &self.0;
        if st.knobs().no_terminal {
            return;
        }
        let pending = lock(&st.shared.pending_error).clone();
        if let Some(e) = pending {
            // The upstream's error, queued behind the buffered elements.
            self.on_error(e);
            return;
        }
        st.end(|s| s.on_complete());
    }
}

impl Drop for DownSubscriber {
    /// The processor dropped its subscriber (after a cancel, a terminal signal, or its panic):
    /// the downstream subscriber goes with it (it holds the subscription, which holds this
    /// state: without this, a cycle).
    fn drop(&mut self) {
        let st = &self.0;
        let s = match st.subscriber.try_lock() {
            Ok(mut g) => g.take(),
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner().take(),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        st.release(s);
    }
}

struct DownSubscription(Arc<DownState>);

impl Subscription for DownSubscription {
    fn request(&self, n: u64) {
        let st = &self.0;
        let k = st.knobs().clone();
        let sh = st.shared.clone();
        if k.panic_in_request {
            panic!("request panicked (test knob)");
        }
        if st.in_signal.load(Ordering::Acquire) {
            if k.reentrant_request_panics {
                panic!(
                    "re-entrant request: the publisher's state is already borrowed (no \
                     trampoline; test knob)"
                );
            }
            if k.drop_requests_while_draining {
                return;
            }
        }
        if st.terminated.load(Ordering::Acquire) {
            if k.signal_after_terminal {
                if let Some(z) = lock(&st.zombie).as_mut() {
                    z.on_next(999);
                }
            }
            if sh.sk.keep_subscription_after_terminal {
                if let Some(up) = sh.upstream() {
                    up.request(n.max(1));
                }
            }
            return;
        }
        if let Some(e) = lock(&st.held_error).take() {
            st.end(|s| s.on_error(e));
            return;
        }
        if n == 0 {
            if k.ignore_zero_request {
                return;
            }
            if let Some(m) = k.zero_request_message {
                st.fail(Error::msg(m));
                return;
            }
        }
        let r = st
            .demand
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                Some(if k.panic_on_demand_overflow {
                    d.checked_add(n).expect("demand overflow (test knob)")
                } else {
                    d.saturating_add(n)
                })
            });
        let total = r.map_or(u64::MAX, |d| d.saturating_add(n));
        if k.error_on_demand_above.is_some_and(|limit| total > limit) {
            st.fail(Error::msg("demand too large (test knob)"));
            return;
        }
        if sh.sk.unserialized {
            if let Some(up) = sh.upstream() {
                up.request(n.max(1)); // straight from the caller's thread
            }
        }
        if sh.sk.lock_across_request {
            let _g = lock(&sh.state);
            if let Some(up) = sh.upstream() {
                up.request(n.max(1)); // a synchronous on_next re-enters: it panics
            }
        }
        if let Some(i) = st.inner() {
            i.request(if n == 0 {
                0
            } else {
                n.saturating_add(k.extra_elements)
            });
        }
    }

    fn cancel(&self) {
        let st = &self.0;
        let k = st.knobs().clone();
        if st.cancels.fetch_add(1, Ordering::AcqRel) > 0 {
            if k.panic_on_repeated_cancel {
                panic!("cancel called twice (test knob)");
            }
            if k.error_on_repeated_cancel {
                if let Some(z) = lock(&st.zombie).as_mut() {
                    z.on_error(Error::msg("cancelled twice (test knob)"));
                }
            }
            return;
        }
        if k.ignore_cancel
            || (k.ignore_cancel_under_unbounded_demand
                && st.demand.load(Ordering::Acquire) >= UNBOUNDED_THRESHOLD)
        {
            return;
        }
        if k.complete_on_cancel && !st.in_signal.load(Ordering::Acquire) {
            st.with_subscriber(|s| s.on_complete());
        }
        let inner = st.inner();
        if k.flush_on_cancel && !st.in_signal.load(Ordering::Acquire) {
            if let Some(i) = &inner {
                i.request(UNBOUNDED);
            }
        }
        if k.keep_subscriber_after_cancel || k.error_on_repeated_cancel {
            lock(&st.shared.leaks).push(st.clone());
        }
        st.cancelled.store(true, Ordering::Release);
        if !st.in_signal.load(Ordering::Acquire) {
            // Not inside a signal (which holds the subscriber): release it now.
            if let Ok(mut g) = st.subscriber.try_lock() {
                let s = g.take();
                drop(g);
                st.release(s);
            }
        }
        if let Some(i) = inner {
            i.cancel();
        }
    }
}

impl Publisher<u64> for BrokenProcessor {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        let sh = &self.shared;
        let k = &sh.knobs;
        if k.panic_in_subscribe {
            panic!("subscribe panicked (test knob)");
        }
        let index = sh.subscribers.fetch_add(1, Ordering::AcqRel);
        if k.unicast && index > 0 {
            super::broken_publisher::reject_as_unicast(subscriber);
            return;
        }
        let st = Arc::new(DownState {
            shared: sh.clone(),
            index,
            subscriber: Mutex::new(Some(subscriber)),
            zombie: Mutex::new(None),
            inner: Mutex::new(None),
            in_signal: AtomicBool::new(false),
            terminated: AtomicBool::new(false),
            cancels: AtomicU32::new(0),
            demand: AtomicU64::new(0),
            held_error: Mutex::new(None),
            first: AtomicBool::new(true),
            cancelled: AtomicBool::new(false),
        });
        if k.drop_earlier_subscriber_on_join {
            let mut latest = lock(&sh.latest);
            if let Some(earlier) = latest.take().and_then(|w| w.upgrade()) {
                // Dropped without a signal: its subscriber just stops hearing anything.
                earlier.cancelled.store(true, Ordering::Release);
                if let Ok(mut g) = earlier.subscriber.try_lock() {
                    let s = g.take();
                    drop(g);
                    drop(s);
                }
                if let Some(i) = earlier.inner() {
                    i.cancel();
                }
            }
            *latest = Some(Arc::downgrade(&st));
        }
        self.inner.subscribe(Box::new(DownSubscriber(st)));
    }
}

// ------------------------------------------------------------------------------------------

/// An identity-processor verification over the broken processor.
#[derive(Debug, Clone)]
pub(crate) struct BrokenIdentity {
    /// Downstream: the publisher knobs (`knobs`), the failed publisher, the maximum number of
    /// elements and the recursion depth, as for the broken publisher.
    pub(crate) publisher: Broken,
    /// Upstream (subscriber) knobs.
    pub(crate) subscriber: SubKnobs,
    /// The processor's own knobs.
    pub(crate) processor: ProcKnobs,
    pub(crate) coordinated: bool,
    /// `max_supported_subscribers`.
    pub(crate) max_subscribers: u64,
    /// `upstream_error_policy`.
    pub(crate) error_policy: UpstreamErrorPolicy,
}

impl Default for BrokenIdentity {
    fn default() -> Self {
        BrokenIdentity {
            publisher: Broken::correct(),
            subscriber: SubKnobs::default(),
            processor: ProcKnobs::default(),
            coordinated: true,
            max_subscribers: u64::MAX,
            error_policy: UpstreamErrorPolicy::Immediately,
        }
    }
}

impl IdentityProcessorVerification for BrokenIdentity {
    type Item = u64;

    fn create_identity_processor(
        &self,
        buffer_size: usize,
    ) -> impl Processor<u64, u64> + Clone + Send + 'static {
        BrokenProcessor {
            inner: IdentityProcessor::new(buffer_size),
            shared: Arc::new(PShared {
                pk: self.processor.clone(),
                knobs: Arc::new(self.publisher.knobs.clone()),
                sk: self.subscriber.clone(),
                subscribers: AtomicU64::new(0),
                upstream: Mutex::new(None),
                has_upstream: AtomicBool::new(false),
                upstream_terminated: AtomicBool::new(false),
                upstream_cancelled: AtomicBool::new(false),
                cancel_pending: AtomicBool::new(false),
                state: Mutex::new(()),
                elements: AtomicU64::new(0),
                leaks: Mutex::new(Vec::new()),
                latest: Mutex::new(None),
                pending_error: Mutex::new(None),
                requested_upstream: AtomicBool::new(false),
            }),
            handles: Arc::new(()),
        }
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        self.publisher.create_failed_publisher()
    }

    fn max_elements_from_publisher(&self) -> u64 {
        self.publisher.max_elements_from_publisher()
    }

    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        self.publisher
            .bounded_depth_of_on_next_and_request_recursion()
    }

    fn does_coordinated_emission(&self) -> bool {
        self.coordinated
    }

    fn max_supported_subscribers(&self) -> u64 {
        self.max_subscribers
    }

    fn upstream_error_policy(&self) -> UpstreamErrorPolicy {
        self.error_policy
    }
}
