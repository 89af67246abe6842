//! A configurable test publisher: correct with `Knobs::default()`, broken in exactly the ways
//! its knobs say. Elements are `u64`s, produced lazily (so `i32::MAX` elements cost nothing).
//!
//! It is a small, self-contained drain loop (a work-in-progress counter plus a locked state),
//! so that each knob can break one thing in one place. With the `own_thread` knob the same
//! passes run on a thread of its own per subscription instead of the caller's: every signal,
//! `on_subscribe` first, comes from that thread, and `request`/`cancel` only record and wake it
//! (the shape of a publisher over a blocking source).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscription, SubscriptionRef,
    UNBOUNDED_THRESHOLD,
};
use rs_tck::publisher::{PublisherVerification, SupportedSubscribers};

/// What to break. Every knob off: a correct publisher.
#[derive(Debug, Clone, Default)]
pub(crate) struct Knobs {
    /// Produce `elements + len_offset` elements instead of `elements`.
    pub(crate) len_offset: i64,
    /// A failed publisher: `on_subscribe`, then `on_error` (no elements).
    pub(crate) fail: bool,
    /// 1.1: once anything is requested, emit this many elements more than requested.
    pub(crate) extra_elements: u64,
    /// 1.1: emit one element before any request.
    pub(crate) emit_before_request: bool,
    /// 1.2, 1.4, 1.5: never signal `on_complete`/`on_error`.
    pub(crate) no_terminal: bool,
    /// 1.9: never call `on_subscribe`.
    pub(crate) skip_on_subscribe: bool,
    /// 1.9: signal the terminal signal before `on_subscribe` (failed publisher).
    pub(crate) terminal_before_on_subscribe: bool,
    /// 1.7: after the terminal signal, answer each `request` with another signal
    /// (`on_next` after `on_complete`, `on_complete` after `on_error`).
    pub(crate) signal_after_terminal: bool,
    /// 1.6: keep the subscriber after the terminal signal.
    pub(crate) keep_subscriber_after_terminal: bool,
    /// 3.13: keep the subscriber after cancel.
    pub(crate) keep_subscriber_after_cancel: bool,
    /// 1.8: signal `on_complete` on cancel.
    pub(crate) complete_on_cancel: bool,
    /// 1.9: panic in `subscribe`.
    pub(crate) panic_in_subscribe: bool,
    /// 1.9/3.16: panic in `request`.
    pub(crate) panic_in_request: bool,
    /// 3.2/3.3: no trampoline: `request` emits while holding the state, and a re-entrant
    /// `request` panics because the state is already borrowed (a `RefCell`-style bug).
    pub(crate) reentrant_request_panics: bool,
    /// 1.3: a lost wake-up: requests that arrive while the publisher drains are dropped.
    pub(crate) drop_requests_while_draining: bool,
    /// 3.6: `cancel` does nothing.
    pub(crate) ignore_cancel: bool,
    /// 3.7: a second `cancel` signals `on_error`.
    pub(crate) error_on_repeated_cancel: bool,
    /// 3.7: a second `cancel` panics.
    pub(crate) panic_on_repeated_cancel: bool,
    /// 3.9: `request(0)` is ignored.
    pub(crate) ignore_zero_request: bool,
    /// 3.9: `request(0)` fails with this message instead of the rule's.
    pub(crate) zero_request_message: Option<&'static str>,
    /// 3.17: fail the stream when total demand exceeds this.
    pub(crate) error_on_demand_above: Option<u64>,
    /// 3.17: demand is added with `checked_add(..).expect(..)`: panics on overflow.
    pub(crate) panic_on_demand_overflow: bool,
    /// 3.12: on cancel, flush all remaining elements, ignoring demand.
    pub(crate) flush_on_cancel: bool,
    /// 1.11: reject every subscriber after the first (`on_subscribe`, then `on_error`).
    pub(crate) unicast: bool,
    /// 1.11: each subscriber gets a different sequence.
    pub(crate) per_subscriber_sequence: bool,
    /// 1.11: a new subscriber silently takes the place of the one before (which is dropped
    /// without a signal), as a publisher with one subscriber slot does.
    pub(crate) drop_earlier_subscriber_on_join: bool,
    /// 3.12: under unbounded demand, the emission loop no longer checks the cancelled flag (a
    /// fast path for `request(UNBOUNDED)`).
    pub(crate) ignore_cancel_under_unbounded_demand: bool,
    /// 3.17: demand is kept as a signed 64-bit count that wraps (a Java `long` without an
    /// overflow check): past `i64::MAX` it turns negative, and the publisher stalls.
    pub(crate) signed_wrapping_demand: bool,
    /// 1.5: no look-ahead: the publisher finds out that it has ended only when asked for the
    /// next element (demand left after the last one), so without demand it never completes.
    pub(crate) no_look_ahead: bool,
    /// 2.13: subscriber panics are not caught: they escape into `subscribe` or `request`.
    pub(crate) unguarded_signals: bool,
    /// 2.13: a subscriber's panic is caught and ignored: the publisher keeps signalling it.
    pub(crate) swallow_subscriber_panics: bool,
    /// Not a fault: every signal comes from a thread of the publisher's own, started by
    /// `subscribe` (see the module docs).
    pub(crate) own_thread: bool,
}

/// The publisher.
pub(crate) struct TestPublisher {
    elements: u64,
    knobs: Arc<Knobs>,
    subscribers: AtomicU64,
    /// The latest subscription (the `drop_earlier_subscriber_on_join` knob).
    latest: Mutex<Option<Weak<TestSubscription>>>,
}

impl TestPublisher {
    /// A publisher of `elements` elements, broken as `knobs` say.
    pub(crate) fn new(elements: u64, knobs: Knobs) -> Self {
        TestPublisher {
            elements,
            knobs: Arc::new(knobs),
            subscribers: AtomicU64::new(0),
            latest: Mutex::new(None),
        }
    }
}

struct Noop;
impl Subscription for Noop {
    fn request(&self, _n: u64) {}
    fn cancel(&self) {}
}

/// The `unicast` knob: refuses a subscriber correctly (rule 1.9: `on_subscribe`, then
/// `on_error`).
pub(crate) fn reject_as_unicast(mut subscriber: BoxSubscriber<u64>) {
    subscriber.on_subscribe(Arc::new(Noop));
    subscriber.on_error(
        SpecViolation::Rejected {
            reason: "unicast (test knob)".into(),
        }
        .into(),
    );
}

impl Publisher<u64> for TestPublisher {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        let k = &self.knobs;
        if k.panic_in_subscribe {
            panic!("subscribe panicked (test knob)");
        }
        let index = self.subscribers.fetch_add(1, Ordering::AcqRel);
        if k.unicast && index > 0 {
            reject_as_unicast(subscriber);
            return;
        }
        let end = u64::try_from(self.elements as i128 + i128::from(k.len_offset)).unwrap_or(0);
        let base = if k.per_subscriber_sequence {
            index * 1000
        } else {
            0
        };
        let sub = Arc::new(TestSubscription {
            knobs: k.clone(),
            wip: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            demand: AtomicU64::new(0),
            cancelled: AtomicBool::new(false),
            cancels: AtomicU32::new(0),
            zero: AtomicBool::new(false),
            demand_error: AtomicBool::new(false),
            woken: Mutex::new(false),
            wake: Condvar::new(),
            state: Mutex::new(State {
                subscriber: None,
                zombie: None,
                next: 0,
                end,
                base,
                emitted: 0,
                terminated: false,
            }),
        });
        if k.drop_earlier_subscriber_on_join {
            let mut latest = self.latest.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(earlier) = latest.take().and_then(|w| w.upgrade()) {
                // Dropped without a signal: its subscriber just stops hearing anything.
                earlier.cancelled.store(true, Ordering::Release);
                earlier.drain(None);
            }
            *latest = Some(Arc::downgrade(&sub));
        }
        let handle: SubscriptionRef = sub.clone();
        if k.terminal_before_on_subscribe {
            if k.fail {
                subscriber.on_error(Error::msg("failed on purpose"));
            } else {
                subscriber.on_complete();
            }
            subscriber.on_subscribe(handle);
            return;
        }
        sub.lock().subscriber = Some(subscriber);
        if k.reentrant_request_panics {
            let mut st = sub.lock();
            if let Some(s) = st.subscriber.as_mut() {
                s.on_subscribe(handle);
            }
            sub.pass(&mut st);
            return;
        }
        if k.own_thread {
            std::thread::spawn(move || sub.run_own_thread(handle));
            return;
        }
        sub.drain(Some(handle));
    }
}

struct State {
    subscriber: Option<BoxSubscriber<u64>>,
    /// A subscriber kept after it should have been dropped (1.6, 1.7, 3.13 knobs).
    zombie: Option<BoxSubscriber<u64>>,
    next: u64,
    end: u64,
    base: u64,
    emitted: u64,
    terminated: bool,
}

struct TestSubscription {
    knobs: Arc<Knobs>,
    wip: AtomicUsize,
    draining: AtomicBool,
    demand: AtomicU64,
    cancelled: AtomicBool,
    cancels: AtomicU32,
    zero: AtomicBool,
    demand_error: AtomicBool,
    /// The `own_thread` knob: set by `request`/`cancel`, waited for by the thread.
    woken: Mutex<bool>,
    wake: Condvar,
    state: Mutex<State>,
}

impl TestSubscription {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The work-in-progress drain loop: one drainer, no lost wake-up (unless a knob says so).
    /// With `own_thread`, it only wakes the subscription's thread.
    fn drain(&self, mut first: Option<SubscriptionRef>) {
        if self.knobs.own_thread {
            *self.woken.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.wake.notify_one();
            return;
        }
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        let mut missed = 1;
        loop {
            self.drain_pass(&mut first);
            missed = self.wip.fetch_sub(missed, Ordering::AcqRel) - missed;
            if missed == 0 {
                break;
            }
        }
    }

    /// One pass: `on_subscribe` first (`first`), then whatever is due; whether the
    /// subscription is over.
    fn drain_pass(&self, first: &mut Option<SubscriptionRef>) -> bool {
        let mut st = self.lock();
        self.draining.store(true, Ordering::Release);
        if let Some(h) = first.take() {
            if !self.knobs.skip_on_subscribe {
                self.guarded(&mut st, |s| s.on_subscribe(h));
            }
        }
        self.pass(&mut st);
        self.draining.store(false, Ordering::Release);
        st.terminated
    }

    /// The `own_thread` knob: the subscription's thread runs every pass, woken by `request`
    /// and `cancel`, until the subscription is over.
    fn run_own_thread(&self, handle: SubscriptionRef) {
        let mut first = Some(handle);
        while !self.drain_pass(&mut first) {
            let mut woken = self.woken.lock().unwrap_or_else(|e| e.into_inner());
            while !*woken {
                woken = self.wake.wait(woken).unwrap_or_else(|e| e.into_inner());
            }
            *woken = false;
        }
    }

    fn terminate(&self, st: &mut State) {
        st.terminated = true;
        let k = &self.knobs;
        let s = st.subscriber.take();
        if k.keep_subscriber_after_terminal || k.signal_after_terminal {
            st.zombie = s;
        }
    }

    /// Calls the subscriber under the rule 2.13 guard: a panic ends the subscription (the
    /// subscriber is dropped) and returns `false`, unless a knob breaks that.
    fn guarded(&self, st: &mut State, f: impl FnOnce(&mut BoxSubscriber<u64>)) -> bool {
        let k = &self.knobs;
        let Some(s) = st.subscriber.as_mut() else {
            return false;
        };
        if k.unguarded_signals {
            f(s);
            return true;
        }
        match catch_unwind(AssertUnwindSafe(|| f(s))) {
            Ok(()) => true,
            Err(_) if k.swallow_subscriber_panics => true,
            Err(_) => {
                st.terminated = true;
                let s = st.subscriber.take();
                let _ = catch_unwind(AssertUnwindSafe(|| drop(s)));
                false
            }
        }
    }

    fn pass(&self, st: &mut State) {
        let k = &self.knobs;
        loop {
            if st.terminated {
                return;
            }
            let unbounded = self.demand.load(Ordering::Acquire) >= UNBOUNDED_THRESHOLD;
            if self.cancelled.load(Ordering::Acquire)
                && !(k.ignore_cancel_under_unbounded_demand && unbounded)
            {
                if st.subscriber.is_some() {
                    if k.complete_on_cancel {
                        self.guarded(st, |s| s.on_complete());
                    }
                    if k.flush_on_cancel {
                        while st.next < st.end {
                            let x = st.base + st.next;
                            st.next += 1;
                            if !self.guarded(st, |s| s.on_next(x)) {
                                break;
                            }
                        }
                    }
                }
                st.terminated = true;
                let s = st.subscriber.take();
                if k.keep_subscriber_after_cancel || k.error_on_repeated_cancel {
                    st.zombie = s;
                }
                return;
            }
            if st.subscriber.is_none() {
                return;
            }
            if self.zero.load(Ordering::Acquire) {
                let e = match k.zero_request_message {
                    Some(m) => Error::msg(m),
                    None => SpecViolation::NonPositiveRequest.into(),
                };
                self.guarded(st, |s| s.on_error(e));
                self.terminate(st);
                return;
            }
            if self.demand_error.load(Ordering::Acquire) {
                self.guarded(st, |s| {
                    s.on_error(Error::msg("demand too large (test knob)"))
                });
                self.terminate(st);
                return;
            }
            if k.fail {
                if !k.no_terminal {
                    self.guarded(st, |s| s.on_error(Error::msg("failed on purpose")));
                    self.terminate(st);
                }
                return;
            }
            if st.next >= st.end {
                let asked = self.demand.load(Ordering::Acquire) > st.emitted;
                if !k.no_terminal && (asked || !k.no_look_ahead) {
                    self.guarded(st, |s| s.on_complete());
                    self.terminate(st);
                }
                return;
            }
            let mut demand = self.demand.load(Ordering::Acquire);
            if k.signed_wrapping_demand && (demand as i64) < 0 {
                demand = 0; // a negative Java long: no demand
            }
            let mut allowed = if demand > 0 {
                demand.saturating_add(k.extra_elements)
            } else {
                0
            };
            if k.emit_before_request {
                allowed = allowed.max(1);
            }
            if st.emitted >= allowed {
                return;
            }
            st.emitted += 1;
            let x = st.base + st.next;
            st.next += 1;
            if !self.guarded(st, |s| s.on_next(x)) {
                return;
            }
        }
    }

    fn add_demand(&self, n: u64) {
        let k = &self.knobs;
        let r = self
            .demand
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |d| {
                Some(if k.panic_on_demand_overflow {
                    d.checked_add(n).expect("demand overflow (test knob)")
                } else if k.signed_wrapping_demand {
                    (d as i64).wrapping_add(n as i64) as u64
                } else {
                    d.saturating_add(n)
                })
            });
        let total = match r {
            Ok(prev) => prev.saturating_add(n),
            Err(d) => d,
        };
        if k.error_on_demand_above.is_some_and(|limit| total > limit) {
            self.demand_error.store(true, Ordering::Release);
        }
    }
}

impl Subscription for TestSubscription {
    fn request(&self, n: u64) {
        let k = &self.knobs;
        if k.panic_in_request {
            panic!("request panicked (test knob)");
        }
        if k.reentrant_request_panics {
            let mut st = self.state.try_lock().unwrap_or_else(|_| {
                panic!(
                    "re-entrant request: the publisher's state is already borrowed (no \
                     trampoline; test knob)"
                )
            });
            self.add_demand(n.max(1));
            self.pass(&mut st);
            return;
        }
        if k.signal_after_terminal {
            if let Ok(mut st) = self.state.try_lock() {
                if st.terminated {
                    if let Some(z) = st.zombie.as_mut() {
                        if k.fail {
                            z.on_complete();
                        } else {
                            z.on_next(999);
                        }
                    }
                    return;
                }
            }
        }
        if self.cancelled.load(Ordering::Acquire) {
            return; // 3.6
        }
        if k.drop_requests_while_draining && self.draining.load(Ordering::Acquire) {
            return;
        }
        if n == 0 {
            if !k.ignore_zero_request {
                self.zero.store(true, Ordering::Release);
            }
        } else {
            self.add_demand(n);
        }
        self.drain(None);
    }

    fn cancel(&self) {
        let k = &self.knobs;
        if self.cancels.fetch_add(1, Ordering::AcqRel) > 0 {
            if k.panic_on_repeated_cancel {
                panic!("cancel called twice (test knob)");
            }
            if k.error_on_repeated_cancel {
                if let Some(z) = self.lock().zombie.as_mut() {
                    z.on_error(Error::msg("cancelled twice (test knob)"));
                }
            }
            return;
        }
        if k.ignore_cancel {
            return;
        }
        self.cancelled.store(true, Ordering::Release);
        self.drain(None);
    }
}

/// A publisher verification over [`TestPublisher`].
#[derive(Debug, Clone)]
pub(crate) struct Broken {
    /// Knobs of `create_publisher`.
    pub(crate) knobs: Knobs,
    /// Knobs of `create_failed_publisher` (`fail` is set for you); `None`: no failed publisher.
    pub(crate) failed: Option<Knobs>,
    /// `max_elements_from_publisher`.
    pub(crate) max_elements: u64,
    /// `bounded_depth_of_on_next_and_request_recursion`.
    pub(crate) depth: u64,
    /// `max_supported_subscribers` (the test publisher is cold: any number is true).
    pub(crate) subscribers: SupportedSubscribers,
}

impl Broken {
    /// A correct publisher and a correct failed publisher.
    pub(crate) fn correct() -> Self {
        Broken {
            knobs: Knobs::default(),
            failed: Some(Knobs::default()),
            max_elements: rs_tck::publisher::DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER,
            depth: 1,
            subscribers: SupportedSubscribers::Undeclared,
        }
    }

    /// A publisher broken by `knobs`; a correct failed publisher.
    pub(crate) fn publisher(knobs: Knobs) -> Self {
        Broken {
            knobs,
            ..Broken::correct()
        }
    }

    /// A correct publisher and a correct failed publisher, each signalling from a thread of
    /// its own.
    pub(crate) fn own_thread() -> Self {
        let k = Knobs {
            own_thread: true,
            ..Knobs::default()
        };
        Broken {
            knobs: k.clone(),
            failed: Some(k),
            ..Broken::correct()
        }
    }

    /// `self`, declaring multiple subscribers (the 1.11 tests become required).
    pub(crate) fn multicast(self) -> Self {
        Broken {
            subscribers: SupportedSubscribers::MANY,
            ..self
        }
    }

    /// A correct publisher; a failed publisher broken by `knobs`.
    pub(crate) fn failed(knobs: Knobs) -> Self {
        Broken {
            failed: Some(knobs),
            ..Broken::correct()
        }
    }
}

impl PublisherVerification for Broken {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        TestPublisher::new(elements, self.knobs.clone())
    }

    fn create_failed_publisher(&self) -> Option<impl Publisher<u64> + Send + 'static> {
        self.failed
            .clone()
            .map(|k| TestPublisher::new(0, Knobs { fail: true, ..k }))
    }

    fn max_elements_from_publisher(&self) -> u64 {
        self.max_elements
    }

    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        self.depth
    }

    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        self.subscribers
    }
}
