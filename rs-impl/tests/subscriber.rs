//! Behaviour of the ready-made subscribers (`rs_impl::subscriber`): the request pattern of
//! each [`RequestStrategy`] (2.1), one subscription (2.5), no calls from terminal signals
//! (2.3, 2.4), and the handle (`wait`, `try_take`, `wait_timeout`, `cancel`).
//!
//! A hand-written publisher drives the subscribers signal by signal and logs every call made on
//! its subscriptions, so the request pattern is checked exactly.
#![cfg(not(rs_loom))]
// Tests use plain std mutexes and threads; the facade ban is for rs-impl/src.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
    UNBOUNDED,
};
use rs_impl::source;
use rs_impl::subscriber::{
    collect, fold, for_each, Cancelled, Dropped, Handle, Panicked, RequestStrategy,
};
use rstest::rstest;

// ---------------------------------------------------------------------------------------------
// A manual publisher whose subscriptions log every call
// ---------------------------------------------------------------------------------------------

/// A call made on a logging subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Call {
    Request(u64),
    Cancel,
}

/// A subscription that only logs its calls.
#[derive(Debug, Default)]
struct LogSubscription {
    calls: Mutex<Vec<Call>>,
}

impl LogSubscription {
    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    /// Total demand requested (saturating).
    fn requested(&self) -> u64 {
        self.calls().iter().fold(0u64, |acc, c| match c {
            Call::Request(n) => acc.saturating_add(*n),
            Call::Cancel => acc,
        })
    }
}

impl Subscription for LogSubscription {
    fn request(&self, n: u64) {
        self.calls.lock().unwrap().push(Call::Request(n));
    }
    fn cancel(&self) {
        self.calls.lock().unwrap().push(Call::Cancel);
    }
}

/// A publisher that hands out one logging subscription and lets the test send each signal.
struct Manual<T> {
    subscriber: Mutex<Option<BoxSubscriber<T>>>,
    subscription: Arc<LogSubscription>,
    emitted: AtomicU64,
}

impl<T> Manual<T> {
    fn new() -> Self {
        Manual {
            subscriber: Mutex::new(None),
            subscription: Arc::new(LogSubscription::default()),
            emitted: AtomicU64::new(0),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut BoxSubscriber<T>) -> R) -> R {
        f(self
            .subscriber
            .lock()
            .unwrap()
            .as_mut()
            .expect("subscribed"))
    }

    fn calls(&self) -> Vec<Call> {
        self.subscription.calls()
    }

    /// Emits one element, checking first that the subscriber asked for it (1.1).
    fn next(&self, item: T) {
        let emitted = self.emitted.load(SeqCst);
        assert!(
            self.subscription.requested() > emitted,
            "the subscriber let its demand run out after {emitted} elements"
        );
        self.emitted.store(emitted + 1, SeqCst);
        self.with(|s| s.on_next(item));
    }

    /// Demand requested and not yet met.
    fn outstanding(&self) -> u64 {
        self.subscription.requested() - self.emitted.load(SeqCst)
    }

    fn complete(&self) {
        self.with(|s| s.on_complete());
    }

    fn error(&self, e: Error) {
        self.with(|s| s.on_error(e));
    }

    /// Drops the subscriber, as a publisher does on cancel (3.13).
    fn drop_subscriber(&self) {
        drop(self.subscriber.lock().unwrap().take());
    }

    /// Sends a second `on_subscribe` with a fresh logging subscription, returned.
    fn subscribe_again(&self) -> Arc<LogSubscription> {
        let second = Arc::new(LogSubscription::default());
        self.with(|s| s.on_subscribe(second.clone()));
        second
    }

    /// How many references the subscriber holds to the first subscription.
    fn subscriber_refs(&self) -> usize {
        Arc::strong_count(&self.subscription) - 1
    }
}

impl<T> Publisher<T> for Manual<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        *self.subscriber.lock().unwrap() = Some(subscriber);
        let subscription: SubscriptionRef = self.subscription.clone();
        self.with(|s| s.on_subscribe(subscription));
    }
}

/// Which ready-made subscriber a test uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Collect,
    ForEach,
    /// `fold` into a `Vec` (its accumulator is the outcome, as `collect`'s).
    Fold,
}

/// The handle of either subscriber, with one outcome type: the elements seen (`for_each`
/// pushes them into a shared `Vec` from its closure).
enum Outcome {
    Collect(Handle<Vec<u64>>),
    ForEach(Handle<()>, Arc<Mutex<Vec<u64>>>),
    Fold(Handle<Vec<u64>>),
}

impl Outcome {
    fn cancel(&self) {
        match self {
            Outcome::Collect(h) | Outcome::Fold(h) => h.cancel(),
            Outcome::ForEach(h, _) => h.cancel(),
        }
    }

    fn detach(self) {
        match self {
            Outcome::Collect(h) | Outcome::Fold(h) => h.detach(),
            Outcome::ForEach(h, _) => h.detach(),
        }
    }

    fn try_take(&self) -> Option<Result<Vec<u64>, Error>> {
        match self {
            Outcome::Collect(h) | Outcome::Fold(h) => h.try_take(),
            Outcome::ForEach(h, seen) => h
                .try_take()
                .map(|r| r.map(|()| seen.lock().unwrap().clone())),
        }
    }

    fn wait(self) -> Result<Vec<u64>, Error> {
        match self {
            Outcome::Collect(h) | Outcome::Fold(h) => h.wait(),
            Outcome::ForEach(h, seen) => h.wait().map(|()| seen.lock().unwrap().clone()),
        }
    }
}

/// A `kind` subscriber with `strategy` and its handle.
fn subscriber(kind: Kind, strategy: RequestStrategy) -> (BoxSubscriber<u64>, Outcome) {
    match kind {
        Kind::Collect => {
            let (s, h) = collect(strategy);
            (Box::new(s), Outcome::Collect(h))
        }
        Kind::ForEach => {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let seen2 = seen.clone();
            let (s, h) = for_each(strategy, move |x: u64| seen2.lock().unwrap().push(x));
            (Box::new(s), Outcome::ForEach(h, seen))
        }
        Kind::Fold => {
            let (s, h) = fold(strategy, Vec::new(), |mut v: Vec<u64>, x: u64| {
                v.push(x);
                v
            });
            (Box::new(s), Outcome::Fold(h))
        }
    }
}

/// A `kind` subscriber with `strategy`, subscribed to a new manual publisher.
fn manual(kind: Kind, strategy: RequestStrategy) -> (Manual<u64>, Outcome) {
    let m = Manual::new();
    let (s, h) = subscriber(kind, strategy);
    m.subscribe(s);
    (m, h)
}

/// The request pattern a strategy must produce over `elements` elements: the first request,
/// then one replenishing request each time a batch has been consumed.
fn expected_requests(strategy: RequestStrategy, elements: u64) -> Vec<Call> {
    let (first, batch) = match strategy {
        RequestStrategy::Unbounded => return vec![Call::Request(UNBOUNDED)],
        RequestStrategy::OneByOne => (1, 1),
        RequestStrategy::Prefetch(n) => (n as u64, (n as u64 / 2).max(1)),
    };
    let mut calls = vec![Call::Request(first)];
    calls.extend((0..elements / batch).map(|_| Call::Request(batch)));
    calls
}

/// The most demand a strategy may have outstanding.
fn max_outstanding(strategy: RequestStrategy) -> u64 {
    match strategy {
        RequestStrategy::Unbounded => UNBOUNDED,
        RequestStrategy::OneByOne => 1,
        RequestStrategy::Prefetch(n) => n as u64,
    }
}

// ---------------------------------------------------------------------------------------------
// 2.1: the request pattern
// ---------------------------------------------------------------------------------------------

/// Each strategy requests exactly as documented — `Prefetch(n)`: `n` first, then `n / 2`
/// (at least 1) each time `n / 2` have been consumed — checked after every element; demand
/// never runs out and never exceeds `n` outstanding.
#[rstest]
fn request_pattern_is_exact(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
    #[values(
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(1),
        RequestStrategy::Prefetch(2),
        RequestStrategy::Prefetch(3),
        RequestStrategy::Prefetch(8),
        RequestStrategy::Prefetch(17),
        RequestStrategy::Unbounded
    )]
    strategy: RequestStrategy,
) {
    const ELEMENTS: u64 = 100;
    let (m, h) = manual(kind, strategy);
    assert_eq!(m.calls(), expected_requests(strategy, 0), "in on_subscribe");
    for i in 1..=ELEMENTS {
        m.next(i);
        assert_eq!(
            m.calls(),
            expected_requests(strategy, i),
            "after {i} elements"
        );
        assert!(
            m.outstanding() <= max_outstanding(strategy),
            "after {i} elements"
        );
    }
    m.complete();
    assert_eq!(
        m.calls(),
        expected_requests(strategy, ELEMENTS),
        "2.3: nothing on complete"
    );
    assert_eq!(
        m.subscriber_refs(),
        0,
        "2.4: the subscription is dropped on completion"
    );
    assert_eq!(h.wait().unwrap(), (1..=ELEMENTS).collect::<Vec<_>>());
}

/// Against a real publisher, every strategy collects exactly the whole sequence.
#[rstest]
fn every_strategy_collects_a_real_source(
    #[values(
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(5),
        RequestStrategy::Prefetch(64),
        RequestStrategy::Prefetch(usize::MAX),
        RequestStrategy::Unbounded
    )]
    strategy: RequestStrategy,
) {
    let (s, h) = collect(strategy);
    source::range(0u32..1_000).subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), (0..1_000).collect::<Vec<_>>());

    let sum = Arc::new(AtomicU64::new(0));
    let count = Arc::new(AtomicU64::new(0));
    let (sum2, count2) = (sum.clone(), count.clone());
    let (s, h) = for_each(strategy, move |x: u64| {
        sum2.fetch_add(x, SeqCst);
        count2.fetch_add(1, SeqCst);
    });
    source::range(0u64..1_000).subscribe(Box::new(s));
    h.wait().unwrap();
    assert_eq!(count.load(SeqCst), 1_000);
    assert_eq!(sum.load(SeqCst), 999 * 1_000 / 2);
}

// ---------------------------------------------------------------------------------------------
// 2.5: one subscription
// ---------------------------------------------------------------------------------------------

/// 2.5: a second `on_subscribe` is cancelled at once (and nothing else is called on it); the
/// first subscription is kept and keeps being replenished.
#[rstest]
fn second_on_subscribe_is_cancelled_and_the_first_kept(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let strategy = RequestStrategy::Prefetch(2);
    let (m, h) = manual(kind, strategy);
    m.next(1);
    let second = m.subscribe_again();
    assert_eq!(second.calls(), vec![Call::Cancel]);
    assert_eq!(
        m.calls(),
        expected_requests(strategy, 1),
        "the first is untouched"
    );
    m.next(2);
    m.next(3);
    assert_eq!(
        m.calls(),
        expected_requests(strategy, 3),
        "the first is still in use"
    );
    assert_eq!(second.calls(), vec![Call::Cancel]);
    assert_eq!(Arc::strong_count(&second), 1, "the second is not kept");
    m.complete();
    assert_eq!(h.wait().unwrap(), vec![1, 2, 3]);
}

/// 2.5 after the end: an `on_subscribe` after the terminal signal is cancelled too.
#[rstest]
fn on_subscribe_after_the_terminal_signal_is_cancelled(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let (m, h) = manual(kind, RequestStrategy::Unbounded);
    m.complete();
    let late = m.subscribe_again();
    assert_eq!(late.calls(), vec![Call::Cancel]);
    assert_eq!(Arc::strong_count(&late), 1);
    assert_eq!(
        h.wait().unwrap(),
        Vec::<u64>::new(),
        "the outcome is the completion"
    );
}

// ---------------------------------------------------------------------------------------------
// 2.3, 2.4: terminal signals
// ---------------------------------------------------------------------------------------------

/// 2.3, 2.4: `on_error` makes no call on the subscription and drops it; the handle reports the
/// very error that was signalled.
#[rstest]
fn on_error_makes_no_call_and_reports_the_error(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let (m, h) = manual(kind, RequestStrategy::Prefetch(4));
    m.next(7);
    let before = m.calls();
    let e = Error::msg("upstream failed");
    m.error(e.clone());
    assert_eq!(m.calls(), before, "2.3");
    assert_eq!(m.subscriber_refs(), 0, "2.4");
    // A later cancel through the handle has nothing to cancel.
    h.cancel();
    assert_eq!(m.calls(), before);
    assert!(h.wait().unwrap_err().ptr_eq(&e));
}

/// 2.3: after `on_complete`, the handle's `cancel` makes no call either, and the outcome stays.
#[test]
fn cancel_after_completion_is_a_no_op() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::Prefetch(4));
    m.subscribe(Box::new(s));
    m.next(1);
    m.complete();
    let before = m.calls();
    h.cancel();
    h.cancel();
    assert_eq!(m.calls(), before);
    m.drop_subscriber();
    assert_eq!(h.wait().unwrap(), vec![1]);
}

/// 3.9 from the subscriber's side: a `request(0)` error reaches the handle intact.
#[test]
fn the_3_9_error_reaches_the_handle() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    m.subscribe(Box::new(s));
    m.error(SpecViolation::NonPositiveRequest.into());
    let e = h.wait().unwrap_err();
    assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
}

// ---------------------------------------------------------------------------------------------
// The handle
// ---------------------------------------------------------------------------------------------

/// `try_take` is `None` while running, the outcome once after the end, then `None`.
#[test]
fn try_take_returns_the_outcome_once() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::OneByOne);
    assert!(h.try_take().is_none(), "before subscribe");
    m.subscribe(Box::new(s));
    m.next(5);
    assert!(h.try_take().is_none(), "while running");
    m.complete();
    assert_eq!(h.try_take().unwrap().unwrap(), vec![5]);
    assert!(h.try_take().is_none(), "taken once");
    // Dropping the subscriber afterwards does not make up a second outcome.
    m.drop_subscriber();
    assert!(h.try_take().is_none());
    // Waiting for an outcome already taken reports it instead of blocking forever.
    let e = h.wait().unwrap_err();
    assert!(e.is::<rs_impl::subscriber::AlreadyTaken>(), "{e}");
}

/// `wait` blocks until the end, from another thread.
#[test]
fn wait_from_another_thread_gets_the_outcome() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::Prefetch(2));
    m.subscribe(Box::new(s));
    let waiter = std::thread::spawn(move || h.wait());
    for i in 0..10 {
        m.next(i);
    }
    m.complete();
    assert_eq!(waiter.join().unwrap().unwrap(), (0..10).collect::<Vec<_>>());
}

/// `wait_timeout` gives the handle back while the stream runs and the outcome once it ended.
#[test]
fn wait_timeout_returns_the_handle_then_the_outcome() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    m.subscribe(Box::new(s));
    let h = h.wait_timeout(Duration::ZERO).expect_err("still running");
    let h = h
        .wait_timeout(Duration::from_millis(1))
        .expect_err("still running");
    m.next(3);
    m.complete();
    assert_eq!(h.wait_timeout(Duration::ZERO).unwrap().unwrap(), vec![3]);
}

/// `wait_timeout` with a timeout too large to add to `Instant::now()` (such as
/// `Duration::MAX`) must not panic: the outcome is there, so it is returned.
#[test]
fn wait_timeout_with_a_huge_timeout_does_not_panic() {
    let (s, h) = collect::<u8>(RequestStrategy::Unbounded);
    source::from_iter([1u8, 2]).subscribe(Box::new(s));
    assert_eq!(h.wait_timeout(Duration::MAX).unwrap().unwrap(), vec![1, 2]);
}

/// `wait_timeout(Duration::MAX)` on a running stream waits like `wait`.
#[test]
fn wait_timeout_with_a_huge_timeout_waits_for_the_end() {
    let m = Manual::new();
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    m.subscribe(Box::new(s));
    let waiter = std::thread::spawn(move || h.wait_timeout(Duration::MAX).ok());
    m.next(9);
    m.complete();
    assert_eq!(waiter.join().unwrap().unwrap().unwrap(), vec![9]);
}

/// `cancel` cancels the subscription once (3.7 from the subscriber's side); when the publisher
/// then drops the subscriber, the outcome is `Cancelled`.
#[rstest]
fn cancel_through_the_handle(#[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind) {
    let strategy = RequestStrategy::Prefetch(4);
    let (m, h) = manual(kind, strategy);
    m.next(1);
    h.cancel();
    let mut expected = expected_requests(strategy, 1);
    expected.push(Call::Cancel);
    assert_eq!(m.calls(), expected);
    h.cancel();
    assert_eq!(m.calls(), expected, "cancelled only once");
    assert!(
        h.try_take().is_none(),
        "no outcome before the publisher drops the subscriber"
    );
    m.drop_subscriber();
    let e = h.wait().unwrap_err();
    assert!(e.is::<Cancelled>(), "{e}");
}

/// `cancel` from another thread ends a stream that would never end on its own.
#[test]
fn cancel_from_another_thread_ends_a_never_stream() {
    let (s, h) = collect::<u8>(RequestStrategy::Unbounded);
    source::never().subscribe(Box::new(s));
    let h = Arc::new(h);
    let h2 = h.clone();
    std::thread::spawn(move || h2.cancel()).join().unwrap();
    let h = Arc::try_unwrap(h).unwrap();
    assert!(h.wait().unwrap_err().is::<Cancelled>());
}

/// A cancel made through the handle before the subscriber is subscribed is not lost: the
/// subscription is cancelled as soon as it arrives, nothing is requested, and the outcome is
/// `Cancelled`.
#[rstest]
fn cancel_before_subscribe_is_not_lost(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let m = Manual::<u64>::new();
    let (s, h) = subscriber(kind, RequestStrategy::Unbounded);
    h.cancel();
    m.subscribe(s);
    assert_eq!(m.calls(), vec![Call::Cancel]);
    assert_eq!(
        m.subscriber_refs(),
        0,
        "the cancelled subscription is not kept"
    );
    m.drop_subscriber();
    assert!(h.wait().unwrap_err().is::<Cancelled>());

    // The same with a real source: nothing is delivered.
    let (s, h) = subscriber(kind, RequestStrategy::Unbounded);
    h.cancel();
    source::range(0u64..10).subscribe(s);
    assert!(h.wait().unwrap_err().is::<Cancelled>());
}

/// Dropped without a terminal signal although nobody cancelled (a publisher that gave up on
/// it): the outcome is `Dropped`, and a thread waiting for it does not hang.
#[rstest]
fn dropped_without_terminal_gives_dropped(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let (m, h) = manual(kind, RequestStrategy::OneByOne);
    m.next(1);
    let waiter = std::thread::spawn(move || h.wait());
    m.drop_subscriber();
    let e = waiter.join().unwrap().unwrap_err();
    assert!(e.is::<Dropped>(), "{e}");
}

/// 2.13 end to end: a `for_each` closure that panics makes the subscriber cancel its
/// subscription itself (the panic never reaches the publisher's thread); the handle reports
/// `Panicked` with the panic's message — not `Cancelled`, which a cancel through the handle
/// gives (issue 20, item 5: the two had the same outcome).
#[test]
fn a_panicking_consumer_and_a_cancelled_subscription_have_distinct_outcomes() {
    support::quiet_deliberate_panics();
    let seen = Arc::new(AtomicU64::new(0));
    let seen2 = seen.clone();
    let (s, h) = for_each(RequestStrategy::Prefetch(4), move |x: u64| {
        assert!(x < 3, "the closure panics on purpose (deliberate)");
        seen2.fetch_add(1, SeqCst);
    });
    source::range(0u64..100).subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    let p = e
        .downcast_ref::<Panicked>()
        .unwrap_or_else(|| panic!("not Panicked: {e}"));
    assert!(p.message().contains("on purpose"), "{p}");
    assert_eq!(p.signal(), "on_next");
    assert!(!e.is::<Cancelled>());
    assert_eq!(seen.load(SeqCst), 3, "nothing after the panic");

    // The same consumer, cancelled through its handle before it panics: `Cancelled`.
    let (m, h) = manual(Kind::ForEach, RequestStrategy::Prefetch(4));
    m.next(1);
    h.cancel();
    assert_eq!(m.calls().last(), Some(&Call::Cancel));
    m.drop_subscriber();
    let e = h.wait().unwrap_err();
    assert!(e.is::<Cancelled>() && !e.is::<Panicked>(), "{e}");
}

/// A panicking consumer cancels exactly once, through the rule-2.7 gate, and gets no element
/// after its panic even if the publisher had one in flight (2.8).
#[test]
fn a_panicking_consumer_cancels_once_and_takes_nothing_more() {
    support::quiet_deliberate_panics();
    let m = Manual::<u64>::new();
    let (s, h) = for_each(RequestStrategy::Unbounded, |x: u64| {
        assert!(x != 2, "deliberate panic on 2");
    });
    m.subscribe(Box::new(s));
    m.next(1);
    m.next(2);
    m.next(3); // in flight when the cancel was made: ignored
    assert_eq!(
        m.calls(),
        vec![Call::Request(UNBOUNDED), Call::Cancel],
        "one cancel, nothing else"
    );
    m.drop_subscriber();
    assert!(h.wait().unwrap_err().is::<Panicked>());
}

/// Issue 20, item 4: dropping a handle cancels the subscription (as dropping a `Stream`
/// does), for both subscribers; `detach` lets the stream run on and cancels nothing.
#[rstest]
fn dropping_the_handle_cancels_and_detach_does_not(
    #[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind,
) {
    let (m, h) = manual(kind, RequestStrategy::OneByOne);
    m.next(1);
    drop(h);
    assert_eq!(
        m.calls(),
        vec![Call::Request(1), Call::Request(1), Call::Cancel],
        "dropping the handle cancels"
    );

    let (m, h) = manual(kind, RequestStrategy::OneByOne);
    h.detach();
    for i in 1..=3 {
        m.next(i);
    }
    m.complete();
    assert!(
        !m.calls().contains(&Call::Cancel),
        "a detached subscription runs to its end"
    );
}

/// Issue 20, item 4, end to end: an endless producer thread feeding a `for_each` stops once
/// the handle is dropped, because its sends fail; bounded by a count of sends, not by time.
#[test]
fn dropping_a_for_each_handle_stops_an_endless_producer() {
    const BOUND: u64 = 1_000_000;
    let (tx, publisher) = source::push::<u64>(0);
    let got = Arc::new(AtomicU64::new(0));
    let got2 = got.clone();
    let (s, h) = for_each(RequestStrategy::Prefetch(8), move |_x: u64| {
        got2.fetch_add(1, SeqCst);
    });
    publisher.subscribe(Box::new(s));
    let producer = std::thread::spawn(move || {
        let mut sent = 0;
        while sent < BOUND && tx.blocking_send(sent).is_ok() {
            sent += 1;
        }
        sent
    });
    // Wait for some traffic, then drop the handle.
    support::wait_until("the producer's first sends", || got.load(SeqCst) >= 10);
    drop(h);
    let sent = producer.join().unwrap();
    assert!(
        sent < BOUND,
        "the producer ran on after the handle was dropped"
    );
}

/// `Prefetch(0)` cannot request anything (3.9): the constructors panic, nothing is rounded.
#[rstest]
#[should_panic(expected = "Prefetch(0)")]
fn prefetch_zero_panics(#[values(Kind::Collect, Kind::ForEach, Kind::Fold)] kind: Kind) {
    let _ = subscriber(kind, RequestStrategy::Prefetch(0));
}

/// Each outcome's error names what happened.
#[test]
fn the_outcome_errors_say_what_happened() {
    let msg = Cancelled.to_string();
    assert!(msg.contains("cancelled through its handle"), "{msg}");
    let msg = Dropped.to_string();
    assert!(msg.contains("without a terminal signal"), "{msg}");
}

/// `fold` sums without a subscriber of one's own; a panicking closure is the `Panicked`
/// outcome (the subscription cancelled), an upstream error the error, never a result.
#[test]
fn fold_sums_and_reports_panics_and_errors() {
    let (s, sum) = fold(RequestStrategy::OneByOne, 0u64, |acc, x: u64| acc + x);
    rs_impl::source::range(0u64..1_000).subscribe(Box::new(s));
    assert_eq!(sum.wait().unwrap(), 499_500);

    let (m, h) = {
        let m = Manual::new();
        let (s, h) = fold(RequestStrategy::Prefetch(4), 0u64, |acc, x: u64| {
            assert!(x != 2, "the fold broke");
            acc + x
        });
        m.subscribe(Box::new(s));
        (m, h)
    };
    m.next(1);
    m.next(2);
    let e = h.wait().unwrap_err();
    assert!(e.is::<Panicked>(), "{e}");
    assert!(m.calls().contains(&Call::Cancel));

    let (m, h) = {
        let m = Manual::new();
        let (s, h) = fold(RequestStrategy::Unbounded, 0u64, |acc, x: u64| acc + x);
        m.subscribe(Box::new(s));
        (m, h)
    };
    m.next(5);
    m.error(Error::msg("upstream"));
    assert_eq!(h.wait().unwrap_err().to_string(), "upstream");
}
