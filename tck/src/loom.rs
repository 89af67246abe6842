//! Loom mode of the TCK: the concurrency rules, checked in every interleaving.
//!
//! The JVM TCK samples rule 1.3 over 100 runs and cannot observe happens-before at all; it
//! never checks cancel racing emission, terminal signals racing an element in flight, or two
//! `on_subscribe` calls racing (spec rules §5). These scenarios run those races inside
//! [`rs_impl::loom::model`], which — in a build with `RUSTFLAGS="--cfg rs_loom"` — explores every
//! interleaving of the threads involved (up to `LOOM_MAX_PREEMPTIONS` preemptions).
//!
//! # What your implementation needs
//!
//! Build it on `rs-impl`'s facade ([`rs_impl::loom`]: its atomics, mutexes, `Arc`, threads), or
//! on loom's types directly under `cfg(rs_loom)`, so that loom sees its synchronisation. Code
//! on plain `std` types still runs, but loom cannot explore or check what it does not see. In a
//! normal build each scenario runs once with std types (a smoke test).
//!
//! # The scenarios
//!
//! Publisher scenarios take a factory `Fn(elements) -> impl Publisher<T>` that must return a
//! publisher of exactly `elements` elements (2 or 3) that then completes, like the JVM TCK's
//! `createPublisher(elements)`. Subscriber scenarios take a factory of fresh subscribers.
//!
//! | function | rules | interleaving |
//! |---|---|---|
//! | [`required_spec103_concurrent_request_vs_emission`] | 1.3, 1.1, 3.8 | two threads request while the subscribing thread emits |
//! | [`required_spec303_reentrant_and_concurrent_request`] | 3.3, 3.2, 1.3 | a re-entrant request from `on_next` races a request from another thread |
//! | [`required_spec107_complete_racing_on_next`] | 1.7, 1.6, 3.13 | two requests race the last `on_next` and the `on_complete` |
//! | [`required_spec107_error_racing_on_next`] | 1.7, 3.9 | `request(0)` from another thread races `on_next` |
//! | [`required_spec312_cancel_racing_emission`] | 3.5–3.7, 3.12, 3.13, 1.8 | two cancels and a request race emission |
//! | [`required_spec205_racing_on_subscribe`] | 2.5 | two threads hand the subscriber a subscription at once |
//!
//! [`publisher_scenarios`] and [`subscriber_scenarios`] run them all. Each scenario uses at most
//! 3 threads, so the default `LOOM_MAX_PREEMPTIONS=2` run takes seconds.
//!
//! # How a failure reads
//!
//! The probe subscriber never panics inside a signal (publishers may catch subscriber panics,
//! rule 2.13); it records violations and the scenario asserts at the end of each interleaving,
//! with a message that names the rule, e.g. `rule 1.3: on_next overlaps another signal`.
//! Other failures come from loom itself: a *deadlock* means that a signal the scenario waits for
//! (an element, the terminal signal, or the publisher dropping the subscriber after cancel,
//! rule 3.13) never came in that interleaving; *Arc leaked* means a loom `Arc` outlived the
//! interleaving (often a subscriber that was never dropped). Rerun a failing scenario with
//! `LOOM_LOG=trace LOOM_LOCATION=1` to see the interleaving.
//!
//! # Examples
//!
//! In `tests/loom.rs` of your crate (run with
//! `RUSTFLAGS="--cfg rs_loom" cargo test --release --test loom`):
//!
//! ```
//! use rs_impl::source;
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! // A publisher of `n` elements; here rs-impl's range source.
//! rs_tck::loom::publisher_scenarios(|n| source::range(0u64..n));
//!
//! // A subscriber that must cancel a second subscription (2.5).
//! rs_tck::loom::subscriber_scenarios::<u64, _, _>(|| collect(RequestStrategy::Prefetch(2)).0);
//! ```
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc as StdArc;

use rs_api::{Error, Publisher, Subscriber, Subscription, SubscriptionRef};
use rs_impl::loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use rs_impl::loom::sync::{Arc, Condvar, Mutex};
use rs_impl::loom::thread;

/// Runs every publisher scenario against publishers made by `factory`.
///
/// `factory(n)` must return a publisher of exactly `n` elements that then completes.
///
/// # Panics
///
/// When a scenario finds a violation (see the [module documentation](self)).
///
/// # Examples
///
/// ```
/// rs_tck::loom::publisher_scenarios(|n| rs_impl::source::range(0u32..n as u32));
/// ```
pub fn publisher_scenarios<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    let factory = StdArc::new(factory);
    let f = factory.clone();
    required_spec103_concurrent_request_vs_emission(move |n| f(n));
    let f = factory.clone();
    required_spec303_reentrant_and_concurrent_request(move |n| f(n));
    let f = factory.clone();
    required_spec107_complete_racing_on_next(move |n| f(n));
    let f = factory.clone();
    required_spec107_error_racing_on_next(move |n| f(n));
    required_spec312_cancel_racing_emission(move |n| factory(n));
}

/// Runs every subscriber scenario against subscribers made by `factory`.
///
/// # Panics
///
/// When a scenario finds a violation.
///
/// # Examples
///
/// ```
/// use rs_impl::subscriber::{for_each, RequestStrategy};
/// rs_tck::loom::subscriber_scenarios::<u8, _, _>(|| for_each(RequestStrategy::Unbounded, |_| {}).0);
/// ```
pub fn subscriber_scenarios<T, S, F>(factory: F)
where
    T: Send + 'static,
    S: Subscriber<T> + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    required_spec205_racing_on_subscribe(factory);
}

/// Rules 1.3, 1.1 and 3.8. Interleaving: 3 elements; the probe requests 1 from `on_subscribe`
/// (so the subscribing thread starts emitting) while two other threads request 1 each. In every
/// interleaving: signals never overlap and each happens-before the next (1.3), never more
/// elements than requested (1.1), and all 3 arrive (no request lost, 3.8).
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// rs_tck::loom::required_spec103_concurrent_request_vs_emission(|n| rs_impl::source::range(0..n));
/// ```
pub fn required_spec103_concurrent_request_vs_emission<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<T>::new(&record, 1, None);
        let a = spawn_request(&record, 1);
        let b = spawn_request(&record, 1);
        factory(3).subscribe(Box::new(probe));
        a.join().expect("requesting thread");
        b.join().expect("requesting thread");
        record.await_received(3);
        record.finish(token, 3);
    });
}

/// Rules 3.3, 3.2 and 1.3. Interleaving: 3 elements; the probe requests 1 from `on_subscribe`
/// and 1 more re-entrantly from inside the first `on_next`, while another thread requests 1. In
/// every interleaving: the re-entrant request does not recurse into `on_next` (the in-signal
/// flag catches nesting as an overlap), and all 3 elements arrive.
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// rs_tck::loom::required_spec303_reentrant_and_concurrent_request(|n| rs_impl::source::range(0..n));
/// ```
pub fn required_spec303_reentrant_and_concurrent_request<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<T>::new(&record, 1, Some((1, 1)));
        let a = spawn_request(&record, 1);
        factory(3).subscribe(Box::new(probe));
        a.join().expect("requesting thread");
        record.await_received(3);
        record.finish(token, 3);
    });
}

/// Rules 1.7, 1.6 and 3.13. Interleaving: 2 elements; the probe requests 1 from `on_subscribe`,
/// then the subscribing thread and another thread request 1 each at once, so the last `on_next`
/// and the `on_complete` race a request. In every interleaving: both elements, exactly one
/// `on_complete`, nothing after it, and the subscriber dropped (1.6, 3.13).
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// rs_tck::loom::required_spec107_complete_racing_on_next(|n| rs_impl::source::range(0..n));
/// ```
pub fn required_spec107_complete_racing_on_next<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<T>::new(&record, 1, None);
        let a = spawn_request(&record, 1);
        factory(2).subscribe(Box::new(probe));
        record.wait_subscription().request(1);
        a.join().expect("requesting thread");
        record.await_terminal();
        let totals = record.finish(token, 3);
        assert_eq!(
            totals.received, 2,
            "rule 1.2/1.5: expected both elements before on_complete"
        );
        assert_eq!(
            totals.completes, 1,
            "rule 1.5/1.7: expected exactly one on_complete"
        );
    });
}

/// Rules 1.7 and 3.9. Interleaving: 3 elements; the probe requests 1 from `on_subscribe` and 1
/// re-entrantly from the first `on_next`, while another thread calls `request(0)`, so the
/// rule 3.9 `on_error` races the elements in flight. In every interleaving: exactly one
/// `on_error`, naming rule 3.9, no `on_complete`, nothing after the error, at most 2 elements.
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// rs_tck::loom::required_spec107_error_racing_on_next(|n| rs_impl::source::range(0..n));
/// ```
pub fn required_spec107_error_racing_on_next<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<T>::new(&record, 1, Some((1, 1)));
        let a = spawn_request(&record, 0);
        factory(3).subscribe(Box::new(probe));
        a.join().expect("requesting thread");
        record.await_terminal();
        let totals = record.finish(token, 2);
        assert_eq!(
            totals.errors, 1,
            "rule 3.9: request(0) must end in exactly one on_error"
        );
        assert_eq!(
            totals.completes, 0,
            "rule 1.7: on_complete as well as on_error"
        );
        let error = totals.last_error.unwrap_or_default();
        assert!(
            error.contains("3.9"),
            "rule 3.9: the error does not name the rule: {error:?}"
        );
    });
}

/// Rules 3.5–3.7, 3.12, 3.13 and 1.8. Interleaving: 3 elements; the probe requests 1 from
/// `on_subscribe` (emission starts on the subscribing thread) while one thread cancels and
/// another requests 1 and then cancels too. Then, after both, `request(1)` and `cancel()` once
/// more. In every interleaving: at most the 2 requested elements, no terminal signal, the extra
/// calls are harmless no-ops (3.6, 3.7), and the publisher drops the subscriber (3.13; if it
/// never does, loom reports a deadlock of the wait for it).
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// rs_tck::loom::required_spec312_cancel_racing_emission(|n| rs_impl::source::range(0..n));
/// ```
pub fn required_spec312_cancel_racing_emission<T, P, F>(factory: F)
where
    T: Send + 'static,
    P: Publisher<T> + 'static,
    F: Fn(u64) -> P + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let record = Record::new();
        let (probe, token) = Probe::<T>::new(&record, 1, None);
        let a = {
            let record = record.clone();
            thread::spawn(move || record.wait_subscription().cancel())
        };
        let b = {
            let record = record.clone();
            thread::spawn(move || {
                let s = record.wait_subscription();
                s.request(1);
                s.cancel(); // 3.5: concurrently with the other cancel
            })
        };
        factory(3).subscribe(Box::new(probe));
        a.join().expect("cancelling thread");
        b.join().expect("cancelling thread");
        let s = record.wait_subscription();
        s.request(1); // 3.6: a no-op
        s.cancel(); // 3.7: a no-op
        drop(s);
        let totals = record.finish(token, 2);
        assert_eq!(
            totals.completes + totals.errors,
            0,
            "rule 1.8: a terminal signal for a cancelled subscription with 3 elements and 2 requested"
        );
    });
}

/// Rule 2.5. Interleaving: two threads — two publishers, say, both handed the same subscriber
/// behind a lock, since `on_subscribe` takes `&mut self` — call `on_subscribe` with their own
/// subscription at once, in either order. In every interleaving exactly one subscription is kept
/// (requested from, not cancelled) and the other is cancelled and never requested from.
///
/// # Panics
///
/// On a violation, naming the rule.
///
/// # Examples
///
/// ```
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// rs_tck::loom::required_spec205_racing_on_subscribe::<u8, _, _>(|| collect(RequestStrategy::OneByOne).0);
/// ```
pub fn required_spec205_racing_on_subscribe<T, S, F>(factory: F)
where
    T: Send + 'static,
    S: Subscriber<T> + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    rs_impl::loom::model(move || {
        let subscriber = Arc::new(Mutex::new(factory()));
        let a = StdArc::new(Recording::default());
        let b = StdArc::new(Recording::default());
        let other = {
            let subscriber = subscriber.clone();
            let a = a.clone();
            thread::spawn(move || Subscriber::<T>::on_subscribe(&mut *subscriber.lock(), a))
        };
        Subscriber::<T>::on_subscribe(&mut *subscriber.lock(), b.clone());
        other.join().expect("subscribing thread");
        let (sa, sb) = (a.state(), b.state());
        let kept = [sa, sb]
            .iter()
            .filter(|s| s.requested && !s.cancelled)
            .count();
        assert_eq!(
            kept, 1,
            "rule 2.5: {kept} subscriptions kept (first {sa:?}, second {sb:?}); exactly one must be"
        );
        let refused = if sa.requested && !sa.cancelled {
            sb
        } else {
            sa
        };
        assert!(
            refused.cancelled,
            "rule 2.5: the extra subscription was not cancelled"
        );
        assert!(
            !refused.requested,
            "rule 2.5: the extra subscription was requested from"
        );
        drop(subscriber);
    });
}

/// A subscription that records what its subscriber did with it.
#[derive(Debug, Default)]
struct Recording {
    requested: AtomicBool,
    cancelled: AtomicBool,
}

#[derive(Debug, Clone, Copy)]
struct RecordingState {
    requested: bool,
    cancelled: bool,
}

impl Recording {
    fn state(&self) -> RecordingState {
        RecordingState {
            requested: self.requested.load(Ordering::Acquire),
            cancelled: self.cancelled.load(Ordering::Acquire),
        }
    }
}

impl Subscription for Recording {
    fn request(&self, _n: u64) {
        self.requested.store(true, Ordering::Release);
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }
}

/// Spawns a thread that waits for the subscription and requests `n`.
fn spawn_request(record: &Arc<Record>, n: u64) -> thread::JoinHandle<()> {
    let record = record.clone();
    thread::spawn(move || record.wait_subscription().request(n))
}

/// What the probe saw, shared with the scenario's threads.
struct Record {
    /// Set while a signal runs. Relaxed read-modify-writes on purpose: they see every overlap
    /// (an RMW reads the latest value) without adding happens-before edges, which would hide a
    /// publisher that forgets them.
    in_signal: AtomicBool,
    /// Elements received, updated with a Relaxed load and a separate store *outside* the lock
    /// below: if the publisher moves signalling to another thread without a happens-before
    /// edge, loom lets the load read a stale count, which shows as a mismatch with `progress`.
    shadow: AtomicU64,
    /// Everything else, under a lock, with a condition variable for the scenario to wait on.
    progress: Mutex<Progress>,
    changed: Condvar,
}

#[derive(Default)]
struct Progress {
    subscription: Option<SubscriptionRef>,
    received: u64,
    completes: usize,
    errors: usize,
    last_error: Option<String>,
    dropped: bool,
    violations: Vec<String>,
}

/// The totals of one interleaving.
struct Totals {
    received: u64,
    completes: usize,
    errors: usize,
    last_error: Option<String>,
}

impl Record {
    fn new() -> Arc<Record> {
        Arc::new(Record {
            in_signal: AtomicBool::new(false),
            shadow: AtomicU64::new(0),
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
        })
    }

    fn update(&self, f: impl FnOnce(&mut Progress)) {
        let mut p = self.progress.lock();
        f(&mut p);
        drop(p);
        self.changed.notify_all();
    }

    fn violation(&self, what: String) {
        self.update(|p| p.violations.push(what));
    }

    /// Waits until `until` holds (a blocking wait: loom reports a deadlock if it never does).
    fn wait_for<R>(&self, mut until: impl FnMut(&mut Progress) -> Option<R>) -> R {
        let mut p = self.progress.lock();
        loop {
            if let Some(r) = until(&mut p) {
                return r;
            }
            p = self.changed.wait(p);
        }
    }

    fn wait_subscription(&self) -> SubscriptionRef {
        self.wait_for(|p| p.subscription.clone())
    }

    fn await_received(&self, n: u64) {
        self.wait_for(|p| (p.received >= n || p.completes + p.errors > 0).then_some(()));
    }

    fn await_terminal(&self) {
        self.wait_for(|p| (p.completes + p.errors > 0).then_some(()));
    }

    /// Cancels (3.13 is then due even without a terminal signal), waits for the publisher to drop
    /// the subscriber, and asserts every rule recorded, and at most `max` elements (1.1).
    fn finish(&self, token: std::sync::Weak<()>, max: u64) -> Totals {
        let s = self.progress.lock().subscription.take();
        if let Some(s) = s {
            s.cancel();
        }
        self.wait_for(|p| p.dropped.then_some(()));
        assert!(
            token.upgrade().is_none(),
            "rule 3.13: the subscriber is still referenced"
        );
        let mut p = self.progress.lock();
        p.subscription = None;
        assert!(p.violations.is_empty(), "{}", p.violations.join("; "));
        assert!(
            p.completes + p.errors <= 1,
            "rule 1.7: {} terminal signals",
            p.completes + p.errors
        );
        assert!(
            p.received <= max,
            "rule 1.1: {} elements for {max} requested",
            p.received
        );
        Totals {
            received: p.received,
            completes: p.completes,
            errors: p.errors,
            last_error: p.last_error.take(),
        }
    }
}

/// The probe subscriber.
struct Probe<T> {
    record: Arc<Record>,
    initial: u64,
    /// `Some((k, n))`: request `n` re-entrantly from inside the `k`-th `on_next` (1-based).
    reentrant: Option<(u64, u64)>,
    subscription: Option<SubscriptionRef>,
    subscribed: bool,
    terminated: bool,
    received: u64,
    /// A std `Arc` whose `Weak` the scenario keeps (loom has no `Weak`): the deterministic
    /// check of 3.13 at the end of each interleaving.
    _token: StdArc<()>,
    _marker: PhantomData<fn(T)>,
}

impl<T> fmt::Debug for Probe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Probe")
            .field("received", &self.received)
            .finish_non_exhaustive()
    }
}

impl<T> Probe<T> {
    fn new(
        record: &Arc<Record>,
        initial: u64,
        reentrant: Option<(u64, u64)>,
    ) -> (Self, std::sync::Weak<()>) {
        let token = StdArc::new(());
        let weak = StdArc::downgrade(&token);
        let probe = Probe {
            record: record.clone(),
            initial,
            reentrant,
            subscription: None,
            subscribed: false,
            terminated: false,
            received: 0,
            _token: token,
            _marker: PhantomData,
        };
        (probe, weak)
    }

    fn enter(&self, signal: &str) {
        if self.record.in_signal.swap(true, Ordering::Relaxed) {
            self.record.violation(format!(
                "rule 1.3: {signal} overlaps another signal (concurrent, or nested by recursion, 3.3)"
            ));
        }
        if self.terminated {
            self.record
                .violation(format!("rule 1.7: {signal} after the terminal signal"));
        }
        if !self.subscribed && signal != "on_subscribe" {
            self.record
                .violation(format!("rule 1.9: {signal} before on_subscribe"));
        }
    }

    fn exit(&self) {
        self.record.in_signal.store(false, Ordering::Relaxed);
    }

    fn terminal(&mut self, error: Option<Error>) {
        self.terminated = true;
        self.subscription = None; // 2.3, 2.4: dropped without being called
        self.record.update(|p| match error {
            Some(e) => {
                p.errors += 1;
                p.last_error = Some(e.to_string());
            }
            None => p.completes += 1,
        });
    }
}

impl<T: Send> Subscriber<T> for Probe<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.enter("on_subscribe");
        if self.subscribed {
            self.record
                .violation("rule 1.9/2.12: on_subscribe twice".to_owned());
        }
        self.subscribed = true;
        let s = subscription.clone();
        self.record.update(|p| p.subscription = Some(s));
        self.subscription = Some(subscription.clone());
        if self.initial > 0 {
            subscription.request(self.initial);
        }
        self.exit();
    }

    fn on_next(&mut self, _item: T) {
        self.enter("on_next");
        self.received += 1;
        let received = self.received;
        self.record.update(|p| p.received = received);
        // After the lock is released: see `Record::shadow`.
        let seen = self.record.shadow.load(Ordering::Relaxed);
        if seen + 1 != received {
            self.record.violation(format!(
                "rule 1.3: on_next #{received} does not happen-after on_next #{seen}+1 (signals handed between threads without synchronisation)"
            ));
        }
        self.record.shadow.store(received, Ordering::Relaxed);
        if let Some((k, n)) = self.reentrant {
            if k == received {
                if let Some(s) = &self.subscription {
                    s.request(n); // 3.2
                }
            }
        }
        self.exit();
    }

    fn on_error(&mut self, error: Error) {
        self.enter("on_error");
        self.terminal(Some(error));
        self.exit();
    }

    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.terminal(None);
        self.exit();
    }
}

impl<T> Drop for Probe<T> {
    fn drop(&mut self) {
        self.record.update(|p| p.dropped = true);
    }
}
