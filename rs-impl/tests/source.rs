//! Behaviour of the cold source publishers (`rs_impl::source`), each checked the same way:
//! exact element counts under every request pattern (1.1, 3.8, 3.17), `request(0)` (3.9),
//! cancel (1.8, 3.6, 3.7, 3.12, 3.13), terminal signals (1.5–1.7, 1.9), bounded recursion (3.3),
//! concurrent requests (1.3) and panics (2.13, 1.4).
//!
//! Every check counts; none measures time. A probe subscriber records its signals in shared
//! state and never asserts inside a signal (the publisher would catch the panic): it counts
//! violations, and the test asserts the counts afterwards.
#![cfg(not(rs_loom))]
// Tests use plain std atomics, mutexes and threads; the facade ban is for rs-impl/src.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier, Mutex, Weak};

use rs_api::{
    Error, Publisher, SpecViolation, Subscriber, SubscriptionRef, UNBOUNDED, UNBOUNDED_THRESHOLD,
};
use rs_impl::source::{self, Pull, Pulled};
use rstest::rstest;

/// Elements of every finite source in the per-publisher tests.
const N: u64 = 10;

// ---------------------------------------------------------------------------------------------
// The publishers under test
// ---------------------------------------------------------------------------------------------

/// Every publisher of `rs_impl::source`, plus a `Pull` source that fails after its elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    FromIter,
    Range,
    FromFn,
    FromPull,
    FromPullFailing,
    Empty,
    Failed,
    Never,
}

/// How a publisher ends once all its elements are requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Complete,
    Error,
    Never,
}

const FAILED_MSG: &str = "the failed publisher's error";
const PULL_FAILED_MSG: &str = "the pull source failed";

/// A `Pull` source of `0..len`, then `Complete` (or `Error` if `fail`).
struct Counter {
    next: u64,
    len: u64,
    fail: bool,
}

impl Pull<u64> for Counter {
    fn pull(&mut self) -> Pulled<u64> {
        if self.next < self.len {
            self.next += 1;
            Pulled::Next(self.next - 1)
        } else if self.fail {
            Pulled::Error(Error::msg(PULL_FAILED_MSG))
        } else {
            Pulled::Complete
        }
    }
}

impl Src {
    /// The publisher; finite ones publish `0..n`.
    fn publisher(self, n: u64) -> Box<dyn Publisher<u64>> {
        match self {
            Src::FromIter => Box::new(source::from_iter((0..n).collect::<Vec<u64>>())),
            Src::Range => Box::new(source::range(0..n)),
            Src::FromFn => Box::new(source::from_fn(move || 0..n)),
            Src::FromPull => Box::new(source::from_pull(move || Counter {
                next: 0,
                len: n,
                fail: false,
            })),
            Src::FromPullFailing => Box::new(source::from_pull(move || Counter {
                next: 0,
                len: n,
                fail: true,
            })),
            Src::Empty => Box::new(source::empty()),
            Src::Failed => Box::new(source::failed(Error::msg(FAILED_MSG))),
            Src::Never => Box::new(source::never()),
        }
    }

    /// How many elements the publisher built with `n` emits in total.
    fn len(self, n: u64) -> u64 {
        match self {
            Src::Empty | Src::Failed | Src::Never => 0,
            _ => n,
        }
    }

    fn end(self) -> End {
        match self {
            Src::FromPullFailing | Src::Failed => End::Error,
            Src::Never => End::Never,
            _ => End::Complete,
        }
    }

    /// Whether the publisher terminates right after `on_subscribe`, before any demand.
    fn terminates_at_once(self) -> bool {
        matches!(self, Src::Empty | Src::Failed)
    }

    fn expected_error(self) -> &'static str {
        match self {
            Src::Failed => FAILED_MSG,
            _ => PULL_FAILED_MSG,
        }
    }
}

/// Repeats a test for every publisher (rstest cases), including the failing `Pull` source.
macro_rules! every_publisher {
    ($(#[$attr:meta])* fn $name:ident($src:ident $($rest:tt)*) $body:block) => {
        $(#[$attr])*
        #[rstest]
        #[case::from_iter(Src::FromIter)]
        #[case::range(Src::Range)]
        #[case::from_fn(Src::FromFn)]
        #[case::from_pull(Src::FromPull)]
        #[case::from_pull_failing(Src::FromPullFailing)]
        #[case::empty(Src::Empty)]
        #[case::failed(Src::Failed)]
        #[case::never(Src::Never)]
        fn $name(#[case] $src: Src $($rest)*) $body
    };
}

/// Repeats a test for every publisher that emits elements.
macro_rules! element_publishers {
    ($(#[$attr:meta])* fn $name:ident($src:ident $($rest:tt)*) $body:block) => {
        $(#[$attr])*
        #[rstest]
        #[case::from_iter(Src::FromIter)]
        #[case::range(Src::Range)]
        #[case::from_fn(Src::FromFn)]
        #[case::from_pull(Src::FromPull)]
        #[case::from_pull_failing(Src::FromPullFailing)]
        fn $name(#[case] $src: Src $($rest)*) $body
    };
}

// ---------------------------------------------------------------------------------------------
// The probe subscriber
// ---------------------------------------------------------------------------------------------

/// What the probe does from inside its signals.
#[derive(Debug, Clone, Default)]
struct Plan {
    /// Requests made from inside `on_subscribe`, in order.
    on_subscribe: Vec<u64>,
    /// Cancel from inside `on_subscribe` (after its requests).
    cancel_in_on_subscribe: bool,
    /// Panic in `on_subscribe` (after its requests).
    panic_in_on_subscribe: bool,
    /// Request this much from inside every `on_next`.
    request_per_next: Option<u64>,
    /// Cancel from inside the `on_next` that brings the element count to this value, then
    /// request more (which must be a no-op, 3.6).
    cancel_at: Option<u64>,
    /// Panic in the `on_next` that brings the element count to this value.
    panic_at: Option<u64>,
    /// Keep every element (for the exact-sequence checks).
    record: bool,
}

/// What the probe saw; shared with the test, which asserts on it afterwards.
#[derive(Default)]
struct Shared {
    subscription: Mutex<Option<SubscriptionRef>>,
    items: Mutex<Vec<u64>>,
    errors: Mutex<Vec<Error>>,
    subscribes: AtomicU64,
    nexts: AtomicU64,
    completes: AtomicU64,
    /// `on_next(x)` with `x` other than the number of elements before it.
    out_of_order: AtomicU64,
    /// Signals before `on_subscribe` (1.9).
    before_subscribe: AtomicU64,
    /// Signals after a terminal signal (1.7).
    after_terminal: AtomicU64,
    /// Set just before the probe or the test cancels; signals after it are counted (1.8).
    cancelled: AtomicBool,
    after_cancel: AtomicU64,
    /// The in-signal flag (1.3): `swap(true)` on entry must find `false`.
    in_signal: AtomicBool,
    overlaps: AtomicU64,
    /// Nesting depth of signals (3.3).
    depth: AtomicU64,
    max_depth: AtomicU64,
}

/// Leaves the signal on drop, also when the probe panics on purpose.
struct InSignal<'a>(&'a Shared);

impl Drop for InSignal<'_> {
    fn drop(&mut self) {
        self.0.depth.fetch_sub(1, SeqCst);
        self.0.in_signal.store(false, SeqCst);
    }
}

impl Shared {
    fn enter(&self, is_subscribe: bool) -> InSignal<'_> {
        if self.in_signal.swap(true, SeqCst) {
            self.overlaps.fetch_add(1, SeqCst);
        }
        let depth = self.depth.fetch_add(1, SeqCst) + 1;
        self.max_depth.fetch_max(depth, SeqCst);
        if !is_subscribe && self.subscribes.load(SeqCst) == 0 {
            self.before_subscribe.fetch_add(1, SeqCst);
        }
        if self.terminals() > 0 {
            self.after_terminal.fetch_add(1, SeqCst);
        }
        if self.cancelled.load(SeqCst) {
            self.after_cancel.fetch_add(1, SeqCst);
        }
        InSignal(self)
    }

    /// The subscription, for the test to drive from outside.
    fn sub(&self) -> SubscriptionRef {
        self.subscription
            .lock()
            .unwrap()
            .clone()
            .expect("on_subscribe was called")
    }

    /// Cancels from outside, marking first that no signal may follow.
    fn cancel(&self) {
        self.cancelled.store(true, SeqCst);
        self.sub().cancel();
    }

    fn nexts(&self) -> u64 {
        self.nexts.load(SeqCst)
    }

    fn completes(&self) -> u64 {
        self.completes.load(SeqCst)
    }

    fn error_count(&self) -> u64 {
        self.errors.lock().unwrap().len() as u64
    }

    fn terminals(&self) -> u64 {
        self.completes() + self.error_count()
    }

    fn error(&self) -> Error {
        let errors = self.errors.lock().unwrap();
        assert_eq!(errors.len(), 1, "exactly one on_error");
        errors[0].clone()
    }

    /// The run stopped (cancel, or a panicking subscriber) after exactly `nexts` elements: the
    /// invariants hold, nothing more arrived, and no terminal signal.
    fn assert_stopped_at(&self, nexts: u64) {
        self.assert_clean();
        assert_eq!(self.nexts(), nexts, "no element after the stop");
        assert_eq!(self.terminals(), 0, "no terminal signal after the stop");
    }

    /// The invariants every run must keep, whatever the scenario.
    fn assert_clean(&self) {
        assert_eq!(
            self.subscribes.load(SeqCst),
            1,
            "on_subscribe exactly once (1.9)"
        );
        assert_eq!(
            self.before_subscribe.load(SeqCst),
            0,
            "on_subscribe first (1.9)"
        );
        assert_eq!(self.overlaps.load(SeqCst), 0, "overlapping signals (1.3)");
        assert!(self.max_depth.load(SeqCst) <= 1, "recursion (3.3)");
        assert_eq!(self.out_of_order.load(SeqCst), 0, "elements out of order");
        assert_eq!(
            self.after_terminal.load(SeqCst),
            0,
            "signal after terminal (1.7)"
        );
        assert_eq!(
            self.after_cancel.load(SeqCst),
            0,
            "signal after cancel (1.8)"
        );
        assert!(self.terminals() <= 1, "at most one terminal signal (1.7)");
    }

    /// The run ended as `src` ends after emitting all of its `len` elements.
    fn assert_finished(&self, src: Src, len: u64) {
        self.assert_clean();
        assert_eq!(self.nexts(), len, "element count");
        match src.end() {
            End::Complete => {
                assert_eq!(self.completes(), 1, "on_complete once");
                assert_eq!(self.error_count(), 0, "no on_error");
            }
            End::Error => {
                assert_eq!(self.completes(), 0, "no on_complete");
                assert_eq!(self.error().to_string(), src.expected_error());
            }
            End::Never => assert_eq!(self.terminals(), 0, "never terminates"),
        }
    }

    /// The run ended with the 3.9 error.
    fn assert_3_9(&self) {
        self.assert_clean();
        assert_eq!(self.completes(), 0);
        let e = self.error();
        assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
        let msg = e.to_string();
        assert!(msg.contains("3.9"), "{msg}");
        assert!(msg.contains("non-positive subscription request"), "{msg}");
    }
}

/// The probe. It holds a token whose `Weak` tells whether the publisher dropped it (3.13).
struct Probe {
    plan: Plan,
    shared: Arc<Shared>,
    subscription: Option<SubscriptionRef>,
    _token: Arc<()>,
}

fn probe(plan: Plan) -> (Probe, Arc<Shared>, Weak<()>) {
    let shared = Arc::new(Shared::default());
    let token = Arc::new(());
    let alive = Arc::downgrade(&token);
    let p = Probe {
        plan,
        shared: shared.clone(),
        subscription: None,
        _token: token,
    };
    (p, shared, alive)
}

/// Subscribes a probe with `plan` to `src` (built with `n`); checks `subscribe` returns
/// normally even if the probe panics (1.9, 2.13).
fn run(src: Src, n: u64, plan: Plan) -> (Arc<Shared>, Weak<()>) {
    let (p, shared, alive) = probe(plan);
    let publisher = src.publisher(n);
    let r = catch_unwind(AssertUnwindSafe(|| publisher.subscribe(Box::new(p))));
    assert!(r.is_ok(), "a panic escaped subscribe");
    (shared, alive)
}

impl Subscriber<u64> for Probe {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let _g = self.shared.enter(true);
        self.shared.subscribes.fetch_add(1, SeqCst);
        *self.shared.subscription.lock().unwrap() = Some(subscription.clone());
        self.subscription = Some(subscription.clone());
        for &n in &self.plan.on_subscribe {
            subscription.request(n);
        }
        if self.plan.cancel_in_on_subscribe {
            self.shared.cancelled.store(true, SeqCst);
            subscription.cancel();
        }
        if self.plan.panic_in_on_subscribe {
            self.shared.cancelled.store(true, SeqCst);
            panic!("probe panics in on_subscribe on purpose");
        }
    }

    fn on_next(&mut self, item: u64) {
        let _g = self.shared.enter(false);
        let before = self.shared.nexts.fetch_add(1, SeqCst);
        if item != before {
            self.shared.out_of_order.fetch_add(1, SeqCst);
        }
        if self.plan.record {
            self.shared.items.lock().unwrap().push(item);
        }
        let count = before + 1;
        let s = self.subscription.as_ref().expect("on_subscribe first");
        if self.plan.panic_at == Some(count) {
            self.shared.cancelled.store(true, SeqCst);
            panic!("probe panics in on_next on purpose");
        }
        if self.plan.cancel_at == Some(count) {
            self.shared.cancelled.store(true, SeqCst);
            s.cancel();
            s.request(10); // 3.6: a no-op after cancel
            s.cancel(); // 3.7: a no-op too
            return;
        }
        if let Some(n) = self.plan.request_per_next {
            s.request(n);
        }
    }

    fn on_error(&mut self, error: Error) {
        let _g = self.shared.enter(false);
        self.subscription = None; // 2.3, 2.4: drop without calling it
        self.shared.errors.lock().unwrap().push(error);
    }

    fn on_complete(&mut self) {
        let _g = self.shared.enter(false);
        self.subscription = None;
        self.shared.completes.fetch_add(1, SeqCst);
    }
}

fn plan() -> Plan {
    Plan::default()
}

// ---------------------------------------------------------------------------------------------
// 1.9: on_subscribe first; nothing without demand
// ---------------------------------------------------------------------------------------------

every_publisher! {
    /// 1.9, 1.1: `on_subscribe` comes first and nothing is emitted without demand; only the
    /// sources known to be empty or failed terminate at once (1.5, 2.9, 2.10).
    fn on_subscribe_first_and_no_element_without_demand(src) {
        let (shared, alive) = run(src, N, plan());
        shared.assert_clean();
        assert_eq!(shared.nexts(), 0);
        if src.terminates_at_once() {
            shared.assert_finished(src, 0);
            assert!(alive.upgrade().is_none(), "dropped after the terminal signal (1.6, 3.13)");
        } else {
            assert_eq!(shared.terminals(), 0);
            assert!(alive.upgrade().is_some(), "kept while the subscription is active");
            shared.cancel();
            assert!(alive.upgrade().is_none(), "dropped on cancel (3.13)");
        }
    }
}

every_publisher! {
    /// 3.2: a request made inside `on_subscribe` is honoured, synchronously, exactly.
    fn request_inside_on_subscribe_is_honoured(src) {
        let (shared, alive) = run(src, N, Plan { on_subscribe: vec![4], ..plan() });
        shared.assert_clean();
        assert_eq!(shared.nexts(), src.len(N).min(4));
        // The rest, from outside.
        shared.sub().request(N);
        shared.assert_finished(src, src.len(N));
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

// ---------------------------------------------------------------------------------------------
// 1.1, 3.8: exact counts under every request pattern
// ---------------------------------------------------------------------------------------------

every_publisher! {
    /// `request(1)` from outside, one at a time: each gives exactly one element, and the
    /// terminal signal follows the last element without waiting for more demand (1.2, 1.5).
    fn request_one_at_a_time_from_outside(src) {
        let (shared, alive) = run(src, N, plan());
        let len = src.len(N);
        for i in 1..=N + 3 {
            shared.sub().request(1);
            shared.assert_clean();
            assert_eq!(shared.nexts(), i.min(len), "after {i} requests of 1");
            if src.end() != End::Never {
                assert_eq!(shared.terminals(), u64::from(i >= len), "after {i} requests of 1");
            }
        }
        shared.assert_finished(src, len);
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

every_publisher! {
    /// `request(1)` from inside `on_subscribe` and every `on_next` (re-entrant, 3.2).
    fn request_one_per_element_from_on_next(src) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![1], request_per_next: Some(1), ..plan() },
        );
        shared.assert_finished(src, src.len(N));
        assert_eq!(shared.max_depth.load(SeqCst), 1);
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

every_publisher! {
    /// `request(chunk)` from outside, repeatedly: the count after `k` requests is exactly
    /// `min(k * chunk, len)`.
    fn request_in_chunks(src, #[values(2, 3, 7, 64)] chunk: u64) {
        let (shared, alive) = run(src, N, plan());
        let len = src.len(N);
        for k in 1..=N {
            shared.sub().request(chunk);
            shared.assert_clean();
            assert_eq!(shared.nexts(), (k * chunk).min(len), "after {k} requests of {chunk}");
        }
        shared.assert_finished(src, len);
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

every_publisher! {
    /// `request(chunk)` from inside every `on_next`, after a first one in `on_subscribe`.
    fn request_in_chunks_from_on_next(src, #[values(2, 3)] chunk: u64) {
        let (shared, _alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![chunk], request_per_next: Some(chunk), ..plan() },
        );
        shared.assert_finished(src, src.len(N));
    }
}

every_publisher! {
    /// 3.17: the canonical unbounded request and the JVM's `Long.MAX_VALUE` both deliver
    /// everything; after the terminal signal the subscriber is dropped (1.6, 3.13).
    fn unbounded_request(src, #[values(UNBOUNDED, UNBOUNDED_THRESHOLD)] n: u64) {
        let (shared, alive) = run(src, N, Plan { on_subscribe: vec![n], ..plan() });
        shared.assert_finished(src, src.len(N));
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

every_publisher! {
    /// 3.17: the JVM TCK's cumulative case, `MAX/2 + MAX/2 + 1`, delivers everything.
    fn cumulative_unbounded_request(src) {
        let half = UNBOUNDED_THRESHOLD / 2;
        let (shared, _alive) = run(src, N, Plan { on_subscribe: vec![half, half, 1], ..plan() });
        shared.assert_finished(src, src.len(N));
    }
}

every_publisher! {
    /// 3.17: demand that overflows `u64` many times over saturates: no error, no wrap, every
    /// element exactly once.
    fn overflowing_demand_saturates(src, #[values(u64::MAX - 1, i64::MAX as u64 - 1)] n: u64) {
        let (shared, alive) = run(src, N, Plan { on_subscribe: vec![n, n], ..plan() });
        for _ in 0..100 {
            shared.sub().request(n);
        }
        shared.assert_finished(src, src.len(N));
        assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
    }
}

element_publishers! {
    /// 3.17: overflowing demand from inside `on_next`, on a longer stream.
    fn overflowing_demand_from_on_next(src, #[values(u64::MAX - 1, i64::MAX as u64 - 1)] n: u64) {
        let (shared, _alive) = run(
            src,
            1_000,
            Plan { on_subscribe: vec![n], request_per_next: Some(n), ..plan() },
        );
        shared.assert_finished(src, 1_000);
    }
}

// ---------------------------------------------------------------------------------------------
// 3.9: request(0)
// ---------------------------------------------------------------------------------------------

every_publisher! {
    /// 3.9: `request(0)` in `on_subscribe` is answered with `on_error` carrying
    /// `SpecViolation::NonPositiveRequest`, and the subscriber is dropped.
    fn request_zero_in_on_subscribe_signals_3_9(src) {
        let (shared, alive) = run(src, N, Plan { on_subscribe: vec![0], ..plan() });
        shared.assert_3_9();
        assert_eq!(shared.nexts(), 0);
        assert!(alive.upgrade().is_none(), "dropped after on_error (1.6, 3.13)");
        // 1.7, 3.6: nothing more, whatever is requested afterwards.
        shared.sub().request(5);
        shared.sub().request(0);
        shared.assert_3_9();
        assert_eq!(shared.nexts(), 0);
    }
}

every_publisher! {
    /// 3.9 mid-stream: after 3 elements, `request(0)` from outside ends the stream with the 3.9
    /// error, even though demand is still outstanding. A stream that already terminated
    /// ignores it (1.7, 3.6).
    fn request_zero_mid_stream(src) {
        let (shared, alive) = run(src, N, plan());
        shared.sub().request(3);
        assert_eq!(shared.nexts(), src.len(N).min(3));
        shared.sub().request(0);
        if src.terminates_at_once() {
            shared.assert_finished(src, 0);
        } else {
            shared.assert_3_9();
            assert_eq!(shared.nexts(), 3.min(src.len(N)));
        }
        assert!(alive.upgrade().is_none());
    }
}

element_publishers! {
    /// 3.9 from inside `on_next`, with demand outstanding: the next signal is the error.
    fn request_zero_from_on_next(src) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![5], request_per_next: Some(0), ..plan() },
        );
        shared.assert_3_9();
        assert_eq!(shared.nexts(), 1, "no element after the request(0)");
        assert!(alive.upgrade().is_none());
    }
}

// ---------------------------------------------------------------------------------------------
// Cancel: 1.8, 3.5–3.7, 3.12, 3.13
// ---------------------------------------------------------------------------------------------

element_publishers! {
    /// Cancel from inside `on_next` stops the stream at once — zero signals after it, also
    /// with a request made after the cancel — and drops the subscriber.
    fn cancel_from_on_next_stops_at_once_and_drops(src, #[values(1, 4, N - 1, N)] at: u64) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![UNBOUNDED], cancel_at: Some(at), ..plan() },
        );
        shared.assert_stopped_at(at);
        assert!(alive.upgrade().is_none(), "dropped on cancel (3.13)");
        // 3.6, 3.7: later calls are no-ops.
        shared.sub().request(5);
        shared.sub().request(0);
        shared.sub().cancel();
        shared.assert_stopped_at(at);
    }
}

every_publisher! {
    /// Cancel from inside `on_subscribe`: no signal follows at all (not even the terminal
    /// signal of an empty or failed source), and the subscriber is dropped.
    fn cancel_in_on_subscribe(src) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![UNBOUNDED], cancel_in_on_subscribe: true, ..plan() },
        );
        shared.assert_stopped_at(0);
        assert!(alive.upgrade().is_none(), "dropped on cancel (3.13)");
    }
}

every_publisher! {
    /// Cancel from outside mid-stream: what was delivered stays, nothing follows, later
    /// requests are no-ops, the subscriber is dropped.
    fn cancel_from_outside_mid_stream(src) {
        let (shared, alive) = run(src, N, plan());
        shared.sub().request(3);
        let before = shared.nexts();
        assert_eq!(before, src.len(N).min(3));
        if src.terminates_at_once() {
            // Already terminated: cancel is a no-op (1.6, 3.7) and nothing changes.
            shared.sub().cancel();
            shared.assert_finished(src, 0);
        } else {
            shared.cancel();
            shared.cancel(); // 3.7
            shared.sub().request(5); // 3.6
            shared.assert_stopped_at(before);
        }
        assert!(alive.upgrade().is_none(), "dropped (3.13)");
    }
}

// ---------------------------------------------------------------------------------------------
// 1.7: terminal once, nothing after
// ---------------------------------------------------------------------------------------------

every_publisher! {
    /// 1.7, 3.6: after the terminal signal, `request`, `request(0)` and `cancel` are no-ops.
    fn calls_after_the_terminal_signal_are_no_ops(src) {
        let (shared, _alive) = run(src, N, Plan { on_subscribe: vec![UNBOUNDED], ..plan() });
        let s = shared.sub();
        for _ in 0..3 {
            s.request(1);
            s.request(UNBOUNDED);
            s.request(0);
            s.cancel();
        }
        if src.end() == End::Never {
            // The never source has no terminal signal; the request(0) above ended it.
            shared.assert_3_9();
        } else {
            shared.assert_finished(src, src.len(N));
        }
    }
}

every_publisher! {
    /// 1.10, 1.11: cold publishers give every subscription its own full run.
    fn every_subscription_is_a_fresh_run(src) {
        let publisher = src.publisher(N);
        for _ in 0..3 {
            let (p, shared, alive) = probe(Plan { on_subscribe: vec![UNBOUNDED], ..plan() });
            publisher.subscribe(Box::new(p));
            shared.assert_finished(src, src.len(N));
            assert_eq!(alive.upgrade().is_none(), src.end() != End::Never);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3.3: bounded recursion over a long stream
// ---------------------------------------------------------------------------------------------

element_publishers! {
    /// 3.3: `request(1)` from inside every `on_next` over 1,000,000 elements: the signal
    /// nesting depth never exceeds 1 (so no stack overflow), and every element arrives.
    fn reentrant_request_over_a_million_elements_keeps_depth_one(src) {
        const MILLION: u64 = 1_000_000;
        let (shared, alive) = run(
            src,
            MILLION,
            Plan { on_subscribe: vec![1], request_per_next: Some(1), ..plan() },
        );
        shared.assert_finished(src, MILLION);
        assert_eq!(shared.max_depth.load(SeqCst), 1, "depth");
        assert!(alive.upgrade().is_none());
    }
}

// ---------------------------------------------------------------------------------------------
// 1.3: concurrent requests
// ---------------------------------------------------------------------------------------------

/// Two threads each request `n / 2` elements one at a time, concurrently with the drain the
/// other thread runs: the subscriber receives exactly `0..n`, in order, then `on_complete`,
/// and no two signals overlap (checked with the in-signal flag in the shared state).
#[rstest]
#[case::range(Src::Range)]
#[case::from_iter(Src::FromIter)]
#[case::from_fn(Src::FromFn)]
#[case::from_pull(Src::FromPull)]
fn two_threads_requesting_lose_and_duplicate_nothing(#[case] src: Src) {
    const ITERATIONS: usize = 300;
    const LEN: u64 = 64;
    for _ in 0..ITERATIONS {
        let (shared, alive) = run(
            src,
            LEN,
            Plan {
                record: true,
                ..plan()
            },
        );
        let start = Arc::new(Barrier::new(2));
        let threads: Vec<_> = (0..2)
            .map(|_| {
                let s = shared.sub();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    for _ in 0..LEN / 2 {
                        s.request(1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("no panic reaches a request caller");
        }
        shared.assert_finished(src, LEN);
        assert_eq!(*shared.items.lock().unwrap(), (0..LEN).collect::<Vec<_>>());
        assert!(alive.upgrade().is_none());
    }
}

/// The same race with different request sizes, plus a third thread's `request(0)` racing with
/// them on some iterations: either way signals never overlap, the elements are a prefix of
/// `0..n` in order, and exactly one terminal signal ends the run.
#[test]
fn concurrent_requests_with_a_racing_request_zero() {
    const LEN: u64 = 50;
    for i in 0..200u64 {
        let (shared, alive) = run(
            Src::Range,
            LEN,
            Plan {
                record: true,
                ..plan()
            },
        );
        let start = Arc::new(Barrier::new(3));
        let threads: Vec<_> = [1u64, 3, 0]
            .into_iter()
            .map(|size| {
                let s = shared.sub();
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    if size == 0 {
                        if i % 2 == 0 {
                            s.request(0);
                        }
                        return;
                    }
                    for _ in 0..LEN / size + 1 {
                        s.request(size);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        shared.assert_clean();
        let items = shared.items.lock().unwrap().clone();
        assert_eq!(items, (0..items.len() as u64).collect::<Vec<_>>());
        assert_eq!(shared.terminals(), 1);
        if i % 2 == 1 {
            assert_eq!(items.len() as u64, LEN);
            assert_eq!(shared.completes(), 1);
        } else if shared.completes() == 0 {
            shared.assert_3_9();
        }
        assert!(alive.upgrade().is_none());
    }
}

/// A cancel racing with a requesting thread: afterwards the subscriber is dropped, signals
/// never overlapped, and at most the element in flight arrived after the cancel returned.
#[test]
fn cancel_racing_with_requests_drops_the_subscriber() {
    const LEN: u64 = 1_000;
    for _ in 0..200 {
        let (shared, alive) = run(
            Src::Range,
            LEN,
            Plan {
                record: true,
                ..plan()
            },
        );
        let start = Arc::new(Barrier::new(2));
        let requester = {
            let s = shared.sub();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                for _ in 0..LEN {
                    s.request(1);
                }
            })
        };
        let canceller = {
            let s = shared.sub();
            std::thread::spawn(move || {
                start.wait();
                s.cancel();
            })
        };
        canceller.join().unwrap();
        let after_cancel_returned = shared.nexts();
        requester.join().unwrap();
        assert_eq!(shared.overlaps.load(SeqCst), 0);
        assert_eq!(shared.out_of_order.load(SeqCst), 0);
        // The element in flight on the other thread may still arrive (1.8 "eventually"), at
        // most one.
        assert!(shared.nexts() <= after_cancel_returned + 1);
        assert!(shared.nexts() <= LEN);
        assert!(shared.completes() <= 1);
        assert_eq!(shared.error_count(), 0);
        assert!(
            alive.upgrade().is_none(),
            "dropped on cancel or completion (3.13)"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 2.13, 1.4: panics
// ---------------------------------------------------------------------------------------------

element_publishers! {
    /// 2.13: a subscriber that panics in `on_next` is cancelled and dropped; no panic reaches
    /// `subscribe` (the drainer here) and no signal follows.
    fn subscriber_panicking_in_on_next_during_subscribe(src) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![UNBOUNDED], panic_at: Some(3), ..plan() },
        );
        shared.assert_stopped_at(3);
        assert!(alive.upgrade().is_none(), "dropped (2.13, 3.13)");
    }
}

element_publishers! {
    /// 2.13: the same when the drainer is a `request` caller: `request` returns normally and
    /// later calls are no-ops.
    fn subscriber_panicking_in_on_next_during_request(src) {
        let (shared, alive) = run(src, N, Plan { panic_at: Some(2), ..plan() });
        let s = shared.sub();
        let r = catch_unwind(AssertUnwindSafe(|| s.request(5)));
        assert!(r.is_ok(), "a panic escaped request");
        assert_eq!(shared.nexts(), 2);
        assert!(alive.upgrade().is_none());
        assert!(catch_unwind(AssertUnwindSafe(|| s.request(5))).is_ok());
        assert!(catch_unwind(AssertUnwindSafe(|| s.cancel())).is_ok());
        shared.assert_stopped_at(2);
    }
}

every_publisher! {
    /// 2.13: a subscriber that panics in `on_subscribe` is dropped; no signal follows and no
    /// panic escapes `subscribe`.
    fn subscriber_panicking_in_on_subscribe(src) {
        let (shared, alive) = run(
            src,
            N,
            Plan { on_subscribe: vec![UNBOUNDED], panic_in_on_subscribe: true, ..plan() },
        );
        shared.assert_stopped_at(0);
        assert!(alive.upgrade().is_none());
    }
}

/// A subscriber that panics in `on_complete` is still dropped, and the panic stays inside.
#[test]
fn subscriber_panicking_in_on_complete_is_dropped() {
    struct PanicOnComplete(#[allow(dead_code)] Arc<()>); // held only for its Weak
    impl Subscriber<u64> for PanicOnComplete {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(UNBOUNDED);
        }
        fn on_next(&mut self, _: u64) {}
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {
            panic!("probe panics in on_complete on purpose");
        }
    }
    let token = Arc::new(());
    let alive = Arc::downgrade(&token);
    let r = catch_unwind(AssertUnwindSafe(|| {
        source::range(0u64..3).subscribe(Box::new(PanicOnComplete(token)));
    }));
    assert!(r.is_ok());
    assert!(alive.upgrade().is_none());
}

/// An iterator that yields `0..ok` and then panics.
struct PanickingIter {
    next: u64,
    ok: u64,
}

impl Iterator for PanickingIter {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        assert!(self.next < self.ok, "the source panics on purpose");
        self.next += 1;
        Some(self.next - 1)
    }
}

/// A `Pull` source that yields `0..ok` and then panics.
struct PanickingPull(PanickingIter);

impl Pull<u64> for PanickingPull {
    fn pull(&mut self) -> Pulled<u64> {
        Pulled::Next(self.0.next().expect("infinite"))
    }
}

fn assert_source_panic_error(shared: &Shared, elements: u64) {
    shared.assert_clean();
    assert_eq!(shared.nexts(), elements);
    assert_eq!(shared.completes(), 0);
    let msg = shared.error().to_string();
    assert!(msg.contains("panicked"), "{msg}");
    assert!(msg.contains("the source panics on purpose"), "{msg}");
}

/// 1.4: a source whose iterator (`from_fn`) or `pull` (`from_pull`) panics fails the stream
/// with `on_error` after the elements it produced; the panic reaches nobody's caller.
#[rstest]
#[case::from_fn_during_subscribe(false, vec![UNBOUNDED])]
#[case::from_pull_during_subscribe(true, vec![UNBOUNDED])]
#[case::from_fn_during_request(false, vec![])]
#[case::from_pull_during_request(true, vec![])]
fn panicking_source_signals_on_error(#[case] pull: bool, #[case] on_subscribe: Vec<u64>) {
    let publisher: Box<dyn Publisher<u64>> = if pull {
        Box::new(source::from_pull(|| {
            PanickingPull(PanickingIter { next: 0, ok: 3 })
        }))
    } else {
        Box::new(source::from_fn(|| PanickingIter { next: 0, ok: 3 }))
    };
    let (p, shared, alive) = probe(Plan {
        on_subscribe,
        ..plan()
    });
    assert!(catch_unwind(AssertUnwindSafe(|| publisher.subscribe(Box::new(p)))).is_ok());
    if shared.terminals() == 0 {
        let s = shared.sub();
        for _ in 0..5 {
            assert!(catch_unwind(AssertUnwindSafe(|| s.request(1))).is_ok());
        }
    }
    assert_source_panic_error(&shared, 3);
    assert!(alive.upgrade().is_none());
}

/// 1.4, 1.9: a factory (`from_fn`, `from_pull`) that panics while making the source for a
/// subscription: `subscribe` returns normally, the subscriber gets `on_subscribe` and then
/// `on_error`, and is dropped.
#[rstest]
#[case::from_fn(false)]
#[case::from_pull(true)]
fn panicking_factory_signals_on_error(#[case] pull: bool) {
    let publisher: Box<dyn Publisher<u64>> = if pull {
        Box::new(source::from_pull(|| -> Counter {
            panic!("the source panics on purpose")
        }))
    } else {
        Box::new(source::from_fn(|| -> std::ops::Range<u64> {
            panic!("the source panics on purpose")
        }))
    };
    let (p, shared, alive) = probe(plan());
    let r = catch_unwind(AssertUnwindSafe(|| publisher.subscribe(Box::new(p))));
    assert!(r.is_ok(), "a panic escaped subscribe (1.9)");
    assert_source_panic_error(&shared, 0);
    assert!(alive.upgrade().is_none());
}

/// 2.13 and "no panic escapes": a subscriber whose `Drop` panics, dropped by the publisher
/// after its terminal signal or a cancel, does not unwind into `subscribe` or `cancel`.
#[rstest]
#[case::after_completion(false)]
#[case::after_cancel(true)]
fn a_panicking_drop_does_not_escape(#[case] cancel: bool) {
    struct PanicOnDrop(Arc<Mutex<Option<SubscriptionRef>>>);
    impl Subscriber<u32> for PanicOnDrop {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            *self.0.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, _: u32) {}
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {}
    }
    impl Drop for PanicOnDrop {
        fn drop(&mut self) {
            panic!("panicking Drop (expected by this test)");
        }
    }
    let slot = Arc::new(Mutex::new(None));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        source::range(0u32..3).subscribe(Box::new(PanicOnDrop(slot.clone())));
        let s = slot.lock().unwrap().take().expect("on_subscribe");
        if cancel {
            s.cancel();
        } else {
            s.request(UNBOUNDED);
        }
    }));
    assert!(outcome.is_ok(), "a panic escaped into the caller");
}

// ---------------------------------------------------------------------------------------------
// The push source's producer API (`rs_impl::producer`, shared with the fanout channel). The
// push source's other behaviour tests are in `tests/compat.rs` (next to the bridges it feeds).
// ---------------------------------------------------------------------------------------------

mod push_sender {
    use std::future::Future;
    use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};

    use futures::{Sink, SinkExt};
    use rs_api::{Error, Publisher};
    use rs_impl::source::push;
    use rs_impl::subscriber::{collect, RequestStrategy};
    use rs_impl::{ProducerError, SinkError, TrySendError};

    #[derive(Default)]
    struct Count(AtomicU64);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// Capacity 0 has a meaning of its own (no buffer beyond demand), so it is accepted.
    #[test]
    fn capacity_zero_is_accepted_and_means_waiting_for_demand() {
        let (tx, publisher) = push::<u8>(0);
        assert!(matches!(tx.try_send(1), Err(TrySendError::Full(1))));
        let (s, h) = collect(RequestStrategy::OneByOne);
        publisher.subscribe(Box::new(s));
        tx.try_send(1).unwrap(); // requested: taken, and delivered at once
        tx.complete();
        assert_eq!(h.wait().unwrap(), vec![1]);
    }

    /// The last handle dropped without `complete` fails the stream with `Dropped`; clones keep
    /// it open; a clone dropped while its thread panics fails it with `Panicked`.
    /// A send that comes back `Closed` can be asked why (issue 20 item 3): the sender's
    /// `closed_reason` names the cause, first cause first.
    #[test]
    fn a_closed_push_source_says_why() {
        use rs_impl::CloseReason;
        // Completed.
        let (tx, p) = push::<u8>(4);
        let (s, _h) = collect(RequestStrategy::Unbounded);
        p.subscribe(Box::new(s));
        assert!(tx.closed_reason().is_none(), "open: no reason");
        tx.complete();
        assert!(tx.try_send(1).unwrap_err().is_closed());
        assert!(matches!(tx.closed_reason(), Some(CloseReason::Completed)));
        tx.fail(Error::msg("later")); // the first end stays
        assert!(matches!(tx.closed_reason(), Some(CloseReason::Completed)));
        // Failed, with the producer's error.
        let (tx, p) = push::<u8>(4);
        let (s, _h) = collect(RequestStrategy::Unbounded);
        p.subscribe(Box::new(s));
        tx.fail(Error::msg("sensor unplugged"));
        match tx.closed_reason() {
            Some(CloseReason::Failed(e)) => assert_eq!(e.to_string(), "sensor unplugged"),
            other => panic!("{other:?}"),
        }
        // Cancelled by the subscriber.
        let (tx, p) = push::<u8>(4);
        let (s, h) = collect(RequestStrategy::Unbounded);
        p.subscribe(Box::new(s));
        h.cancel();
        assert!(tx.blocking_send(1).is_err());
        assert!(matches!(tx.closed_reason(), Some(CloseReason::Cancelled)));
        // Nobody can subscribe.
        let (tx, p) = push::<u8>(4);
        drop(p);
        assert!(tx.try_send(1).unwrap_err().is_closed());
        let why = tx.closed_reason().unwrap();
        assert!(matches!(why, CloseReason::Unsubscribable));
        assert!(
            why.to_string().contains("before anyone subscribed"),
            "{why}"
        );
    }

    #[test]
    fn a_vanished_or_panicked_producer_is_not_a_clean_end() {
        let (tx, publisher) = push::<u8>(4);
        let (s, h) = collect(RequestStrategy::Unbounded);
        publisher.subscribe(Box::new(s));
        let tx2 = tx.clone();
        tx.try_send(1).unwrap();
        drop(tx);
        tx2.try_send(2).unwrap();
        drop(tx2);
        let e = h.wait().unwrap_err();
        assert_eq!(
            e.downcast_ref::<ProducerError>(),
            Some(&ProducerError::Dropped)
        );

        let (tx, publisher) = push::<u8>(4);
        let (s, h) = collect(RequestStrategy::Unbounded);
        publisher.subscribe(Box::new(s));
        let worker = tx.clone();
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let t = std::thread::spawn(move || {
            let _keep = worker;
            panic!("deliberate");
        });
        assert!(t.join().is_err());
        std::panic::set_hook(hook);
        let e = h.wait().unwrap_err();
        assert_eq!(
            e.downcast_ref::<ProducerError>(),
            Some(&ProducerError::Panicked)
        );
        assert!(tx.is_closed());
    }

    /// The `Sink`: `send_all` waits for demand through `poll_ready`, and closing the sink
    /// completes the stream.
    #[test]
    fn the_sink_waits_for_demand_and_close_completes() {
        let (mut tx, publisher) = push::<u32>(0);
        let (s, h) = collect(RequestStrategy::Prefetch(4));
        publisher.subscribe(Box::new(s));
        let feeder = std::thread::spawn(move || {
            let mut items = futures::stream::iter((0..1000).map(Ok::<u32, SinkError<u32>>));
            futures::executor::block_on(async {
                tx.send_all(&mut items).await.unwrap();
                tx.close().await.unwrap();
            });
        });
        feeder.join().unwrap();
        assert_eq!(h.wait().unwrap(), (0..1000).collect::<Vec<_>>());
    }

    /// A reservation taken by `poll_ready` and never used is given back when the handle is
    /// dropped: another sender gets the room; `start_send` without a reservation while full
    /// hands the element back.
    #[test]
    fn an_unused_reservation_is_given_back_and_start_send_without_one_hands_back() {
        let (tx, _publisher) = push::<u8>(1);
        let mut sink = tx.clone();
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        assert!(matches!(
            std::pin::Pin::new(&mut sink).poll_ready(&mut cx),
            Poll::Ready(Ok(()))
        ));
        assert!(
            tx.try_send(1).unwrap_err().is_full(),
            "the sink holds the one permit"
        );
        drop(sink);
        tx.try_send(1).unwrap();
        let mut sink = tx.clone();
        let back = std::pin::Pin::new(&mut sink).start_send(2).unwrap_err();
        assert_eq!(back.into_inner(), Some(2));
    }

    /// A waiting `send` future dropped before completion sends nothing and leaves no wake-up
    /// behind; a second future of the same task keeps its own registration.
    #[test]
    fn a_dropped_send_future_withdraws_only_its_own_registration() {
        let (tx, publisher) = push::<u8>(0);
        let (s, h) = collect(RequestStrategy::Unbounded);
        let counter = Arc::new(Count::default());
        let waker = Waker::from(counter.clone());
        let mut cx = Context::from_waker(&waker);
        let mut kept = std::pin::pin!(tx.send(1));
        assert!(kept.as_mut().poll(&mut cx).is_pending());
        {
            let mut dropped = std::pin::pin!(tx.send(9));
            assert!(dropped.as_mut().poll(&mut cx).is_pending());
        }
        publisher.subscribe(Box::new(s)); // demand: the kept future's task is woken
        assert_eq!(counter.0.load(SeqCst), 1);
        assert!(matches!(kept.as_mut().poll(&mut cx), Poll::Ready(Ok(()))));
        tx.complete();
        assert_eq!(
            h.wait().unwrap(),
            vec![1],
            "the dropped future's element was not sent"
        );
    }

    /// Many clones on many threads: each clone's elements arrive in its order, nothing is
    /// lost; a clone's `complete` racing the others' sends never loses an accepted element
    /// (each send is either delivered before `on_complete` or handed back).
    #[test]
    fn clones_racing_complete_lose_no_accepted_element() {
        for round in 0..50 {
            let (tx, publisher) = push::<(u64, u64)>(2);
            let (s, h) = collect(RequestStrategy::Prefetch(3));
            publisher.subscribe(Box::new(s));
            let accepted = Arc::new(Mutex::new(Vec::new()));
            let threads: Vec<_> = (0..3)
                .map(|t| {
                    let tx = tx.clone();
                    let accepted = accepted.clone();
                    std::thread::spawn(move || {
                        for i in 0..200 {
                            if tx.blocking_send((t, i)).is_err() {
                                return;
                            }
                            accepted.lock().unwrap().push((t, i));
                        }
                    })
                })
                .collect();
            let ender = {
                let tx = tx.clone();
                std::thread::spawn(move || {
                    std::thread::yield_now();
                    tx.complete();
                })
            };
            drop(tx);
            for t in threads {
                t.join().unwrap();
            }
            ender.join().unwrap();
            let got = h.wait().unwrap();
            let mut accepted = accepted.lock().unwrap().clone();
            let mut sorted = got.clone();
            sorted.sort_unstable();
            accepted.sort_unstable();
            assert_eq!(sorted, accepted, "round {round}: delivered == accepted");
            for t in 0..3 {
                let mine: Vec<u64> = got
                    .iter()
                    .filter(|(p, _)| *p == t)
                    .map(|(_, i)| *i)
                    .collect();
                assert_eq!(mine, (0..mine.len() as u64).collect::<Vec<_>>(), "in order");
            }
        }
    }

    /// `fail` from one clone reaches the subscriber; later sends from any clone fail.
    #[test]
    fn fail_ends_the_stream_for_every_clone() {
        let (tx, publisher) = push::<u8>(2);
        let tx2 = tx.clone();
        let (s, h) = collect(RequestStrategy::Unbounded);
        publisher.subscribe(Box::new(s));
        tx.fail(Error::msg("unplugged"));
        assert!(tx2.try_send(1).unwrap_err().is_closed());
        assert!(tx2.blocking_send(1).is_err());
        assert_eq!(h.wait().unwrap_err().to_string(), "unplugged");
    }
}
