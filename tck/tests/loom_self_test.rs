//! Self-tests of the TCK's loom mode: each scenario can fail. A deliberately broken
//! implementation runs through the scenario's test (from the same suites users run) in a
//! child process, which must fail with the rule in its output.
//!
//! Compiled only in the loom build (`scripts/loom.sh`): in a normal build a scenario runs once,
//! and most broken variants need a particular interleaving to show.
#![cfg(rs_loom)]
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
};
use rs_impl::demand::Demand;
use rs_impl::loom::sync::atomic::{AtomicBool, Ordering};
use rs_impl::loom::sync::{Condvar, Mutex};
use rs_tck::outcome::Outcome;
use rs_tck::publisher::PublisherVerification;
use rs_tck::subscriber::SubscriberBlackboxVerification;
use rs_tck::suite::Suite;

/// Asserts that `scenario` of `suite` is rejected with `expected` in its output. `test` is the
/// self-test's own name (its child process runs it again).
fn assert_rejected(test: &str, suite: Suite, scenario: &str, expected: &str) {
    rs_impl::loom::assert_rejected(test, expected, || {
        let t = suite
            .test(scenario)
            .unwrap_or_else(|| panic!("no scenario named {scenario}"));
        let o = t.run();
        assert_eq!(o.outcome, Outcome::Passed, "{}", o.detail);
    });
}

/// BUG: ignores demand: emits every element and completes inside `subscribe` (rule 1.1).
struct BrokenIgnoresDemand;

struct Noop;

impl Subscription for Noop {
    fn request(&self, _n: u64) {}
    fn cancel(&self) {}
}

struct IgnoresDemand(u64);

impl Publisher<u64> for IgnoresDemand {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        subscriber.on_subscribe(std::sync::Arc::new(Noop));
        for i in 0..self.0 {
            subscriber.on_next(i);
        }
        subscriber.on_complete();
    }
}

impl PublisherVerification for BrokenIgnoresDemand {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        IgnoresDemand(elements)
    }
}

/// BUG: keeps whichever subscription came last and requests from it (rule 2.5).
#[derive(Default)]
struct KeepsSecond(Option<SubscriptionRef>);

impl Subscriber<u64> for KeepsSecond {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        subscription.request(1);
        self.0 = Some(subscription);
    }
    fn on_next(&mut self, _item: u64) {}
    fn on_error(&mut self, _error: Error) {}
    fn on_complete(&mut self) {}
}

struct BrokenKeepsSecond;

impl SubscriberBlackboxVerification for BrokenKeepsSecond {
    type Item = u64;

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        KeepsSecond::default()
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }
}

#[test]
fn spec107_error_scenario_should_fail_by_ignoring_demand() {
    assert_rejected(
        "spec107_error_scenario_should_fail_by_ignoring_demand",
        rs_tck::loom::verify_publisher("broken", BrokenIgnoresDemand),
        "required_spec107_error_racing_on_next",
        "rule 1.1",
    );
}

#[test]
fn spec205_scenario_should_fail_by_keeping_the_second_subscription() {
    assert_rejected(
        "spec205_scenario_should_fail_by_keeping_the_second_subscription",
        rs_tck::loom::verify_subscriber("broken", BrokenKeepsSecond),
        "required_spec205_racing_on_subscribe",
        "rule 2.5",
    );
}

// ------------------------------------------------------------------------------------------
// A publisher that signals from a thread of its own (issue #9): correct with every knob off,
// and its broken twins.

/// What to break in [`OwnThread`].
#[derive(Debug, Clone, Copy, Default)]
struct OwnThreadKnobs {
    /// 3.6: the thread reads the cancelled flag *before* the demand, so it can see a request
    /// made after cancel (new demand) next to a stale "not cancelled".
    cancel_read_before_demand: bool,
    /// 3.13: the thread keeps the subscriber (in the subscription, a reference cycle) instead
    /// of dropping it when the stream ends or is cancelled.
    keep_subscriber: bool,
    /// 3.8: `request` wakes the thread without recording that it did, so a request made while
    /// the thread is busy is lost.
    wake_without_flag: bool,
}

/// Publishes `0..n` from a thread per subscription, on the loom facade: `request` and `cancel`
/// record and wake the thread, which makes every signal and drops the subscriber at the end.
struct OwnThread {
    n: u64,
    knobs: OwnThreadKnobs,
}

struct Control {
    knobs: OwnThreadKnobs,
    demand: Demand,
    cancelled: AtomicBool,
    bad_request: AtomicBool,
    woken: Mutex<bool>,
    wake: Condvar,
    /// Where the `keep_subscriber` knob keeps it.
    kept: Mutex<Option<BoxSubscriber<u64>>>,
}

impl Control {
    fn notify(&self) {
        if !self.knobs.wake_without_flag {
            *self.woken.lock() = true;
        }
        self.wake.notify_one();
    }

    fn wait(&self) {
        let mut woken = self.woken.lock();
        while !*woken {
            woken = self.wake.wait(woken);
        }
        *woken = false;
    }
}

impl Subscription for Control {
    fn request(&self, n: u64) {
        if self.demand.request(n).is_err() {
            self.bad_request.store(true, Ordering::Release);
        }
        self.notify();
    }

    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.notify();
    }
}

impl Publisher<u64> for OwnThread {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        let (n, knobs) = (self.n, self.knobs);
        let control = std::sync::Arc::new(Control {
            knobs,
            demand: Demand::new(),
            cancelled: AtomicBool::new(false),
            bad_request: AtomicBool::new(false),
            woken: Mutex::new(false),
            wake: Condvar::new(),
            kept: Mutex::new(None),
        });
        rs_impl::loom::thread::spawn(move || {
            subscriber.on_subscribe(control.clone());
            let mut emitted = 0;
            loop {
                let cancelled_first = knobs
                    .cancel_read_before_demand
                    .then(|| control.cancelled.load(Ordering::Acquire));
                let outstanding = control.demand.outstanding(emitted);
                let bad_request = control.bad_request.load(Ordering::Acquire);
                let cancelled =
                    cancelled_first.unwrap_or_else(|| control.cancelled.load(Ordering::Acquire));
                if cancelled {
                    break;
                }
                if bad_request {
                    subscriber.on_error(SpecViolation::NonPositiveRequest.into());
                    break;
                }
                if emitted == n {
                    subscriber.on_complete();
                    break;
                }
                if outstanding == 0 {
                    control.wait();
                    continue;
                }
                subscriber.on_next(emitted);
                emitted += 1;
            }
            if knobs.keep_subscriber {
                *control.kept.lock() = Some(subscriber);
            }
        });
    }
}

impl PublisherVerification for OwnThreadKnobs {
    type Item = u64;

    fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
        OwnThread {
            n: elements,
            knobs: *self,
        }
    }
}

/// The correct publisher that signals (and drops its subscriber) from a thread of its own
/// passes every scenario: before issue #9 the probe recorded its drop before it released the
/// token that the 3.13 check watches, and every scenario failed it.
#[test]
fn a_publisher_on_its_own_thread_passes_every_scenario() {
    let suite = rs_tck::loom::verify_publisher("own thread", OwnThreadKnobs::default());
    assert_eq!(suite.tests.len(), 5);
    for t in &suite.tests {
        let o = t.run();
        assert_eq!(o.outcome, Outcome::Passed, "{}: {}", t.name, o.detail);
    }
}

#[test]
fn spec312_scenario_should_fail_by_keeping_the_subscriber_on_its_own_thread() {
    assert_rejected(
        "spec312_scenario_should_fail_by_keeping_the_subscriber_on_its_own_thread",
        rs_tck::loom::verify_publisher(
            "broken",
            OwnThreadKnobs {
                keep_subscriber: true,
                ..OwnThreadKnobs::default()
            },
        ),
        "required_spec312_cancel_racing_emission",
        "rule 3.13: the publisher never dropped the subscriber",
    );
}

#[test]
fn spec312_scenario_should_fail_by_reading_the_cancel_flag_before_the_demand() {
    assert_rejected(
        "spec312_scenario_should_fail_by_reading_the_cancel_flag_before_the_demand",
        rs_tck::loom::verify_publisher(
            "broken",
            OwnThreadKnobs {
                cancel_read_before_demand: true,
                ..OwnThreadKnobs::default()
            },
        ),
        "required_spec312_cancel_racing_emission",
        "rule 3.6: on_next #3, but only 2 elements were requested before cancel",
    );
}

#[test]
fn spec103_scenario_should_fail_by_losing_a_wake_up_on_its_own_thread() {
    assert_rejected(
        "spec103_scenario_should_fail_by_losing_a_wake_up_on_its_own_thread",
        rs_tck::loom::verify_publisher(
            "broken",
            OwnThreadKnobs {
                wake_without_flag: true,
                ..OwnThreadKnobs::default()
            },
        ),
        "required_spec103_concurrent_request_vs_emission",
        "rule 3.8: only some of the 3 elements requested arrived",
    );
}

// ------------------------------------------------------------------------------------------
// Rule 2.5 on two clones of one subscriber (issue #9): a check that is a load and a separate
// store lets both subscriptions through; a compare-exchange keeps exactly one.

/// A cloneable subscriber whose clones share one "subscribed" flag.
#[derive(Clone)]
struct SharedFlag {
    subscribed: rs_impl::loom::sync::Arc<AtomicBool>,
    /// BUG when set: the check and the set are two steps.
    load_then_store: bool,
}

impl Subscriber<u64> for SharedFlag {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        let first = if self.load_then_store {
            let taken = self.subscribed.load(Ordering::Acquire);
            self.subscribed.store(true, Ordering::Release);
            !taken
        } else {
            self.subscribed
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        };
        if first {
            subscription.request(1);
        } else {
            subscription.cancel(); // 2.5
        }
    }
    fn on_next(&mut self, _item: u64) {}
    fn on_error(&mut self, _error: Error) {}
    fn on_complete(&mut self) {}
}

struct Cloneable {
    load_then_store: bool,
}

impl Cloneable {
    fn subscriber(&self) -> SharedFlag {
        SharedFlag {
            subscribed: rs_impl::loom::sync::Arc::new(AtomicBool::new(false)),
            load_then_store: self.load_then_store,
        }
    }
}

impl SubscriberBlackboxVerification for Cloneable {
    type Item = u64;

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        self.subscriber()
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn create_cloneable_subscriber(&self) -> Option<impl Subscriber<u64> + Clone + 'static> {
        Some(self.subscriber())
    }
}

#[test]
fn spec205_scenario_passes_a_compare_exchange_on_two_clones() {
    let suite = rs_tck::loom::verify_subscriber(
        "cloneable",
        Cloneable {
            load_then_store: false,
        },
    );
    let o = suite.tests[0].run();
    assert_eq!(o.outcome, Outcome::Passed, "{}", o.detail);
}

#[test]
fn spec205_scenario_should_fail_by_a_load_then_a_store_on_two_clones() {
    assert_rejected(
        "spec205_scenario_should_fail_by_a_load_then_a_store_on_two_clones",
        rs_tck::loom::verify_subscriber(
            "broken",
            Cloneable {
                load_then_store: true,
            },
        ),
        "required_spec205_racing_on_subscribe",
        "rule 2.5: 2 subscriptions kept",
    );
}

// ------------------------------------------------------------------------------------------
// Issue 21, item 7: the 2.5 scenario nudges the subscriber as the blackbox verification does.

/// Requests only when the verification's `trigger_request` tells it to; keeps the first
/// subscription (one compare-exchange on a flag its clones share), cancels any other.
#[derive(Clone)]
struct OnDemand {
    subscribed: rs_impl::loom::sync::Arc<AtomicBool>,
    kept: rs_impl::loom::sync::Arc<Mutex<Option<SubscriptionRef>>>,
}

impl Subscriber<u64> for OnDemand {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if self
            .subscribed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            *self.kept.lock() = Some(subscription);
        } else {
            subscription.cancel(); // 2.5
        }
    }
    fn on_next(&mut self, _item: u64) {}
    fn on_error(&mut self, _error: Error) {}
    fn on_complete(&mut self) {}
}

struct Nudged;

impl Nudged {
    fn subscriber() -> OnDemand {
        OnDemand {
            subscribed: rs_impl::loom::sync::Arc::new(AtomicBool::new(false)),
            kept: rs_impl::loom::sync::Arc::new(Mutex::new(None)),
        }
    }
}

impl SubscriberBlackboxVerification for Nudged {
    type Item = u64;

    fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
        Nudged::subscriber()
    }

    fn create_element(&self, element: u64) -> u64 {
        element
    }

    fn trigger_request(&self, subscriber: &mut dyn std::any::Any) {
        let s = subscriber.downcast_mut::<OnDemand>().expect("an OnDemand");
        if let Some(sub) = s.kept.lock().as_ref() {
            sub.request(1);
        }
    }

    fn create_cloneable_subscriber(&self) -> Option<impl Subscriber<u64> + Clone + 'static> {
        Some(Nudged::subscriber())
    }
}

#[test]
fn spec205_scenario_passes_a_subscriber_that_requests_only_when_nudged() {
    let o = rs_tck::loom::verify_subscriber("nudged", Nudged).tests[0].run();
    assert_eq!(o.outcome, Outcome::Passed, "{}", o.detail);
}

// ------------------------------------------------------------------------------------------
// Issue 20, item 8: a publisher on a plain std thread (which loom cannot see) is reported as
// that, not as the deadlock that follows ("rule 1.9: the publisher never called on_subscribe").

/// Signals everything from a `std::thread`, with std locks: correct, but invisible to loom.
struct StdThreadPublisher;

struct StdDemand(std::sync::Mutex<u64>, std::sync::Condvar);

impl Subscription for StdDemand {
    fn request(&self, n: u64) {
        *self.0.lock().unwrap() += n;
        self.1.notify_one();
    }
    fn cancel(&self) {
        *self.0.lock().unwrap() = u64::MAX;
        self.1.notify_one();
    }
}

impl Publisher<u64> for StdThreadPublisher {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        std::thread::spawn(move || {
            let demand = std::sync::Arc::new(StdDemand(
                std::sync::Mutex::new(0),
                std::sync::Condvar::new(),
            ));
            subscriber.on_subscribe(demand.clone());
            // Waits for demand that never comes (the scenario cannot request): leaked.
            let mut d = demand.0.lock().unwrap();
            while *d == 0 {
                d = demand.1.wait(d).unwrap();
            }
        });
    }
}

impl PublisherVerification for StdThreadPublisher {
    type Item = u64;

    fn create_publisher(&self, _elements: u64) -> impl Publisher<u64> + Send + 'static {
        StdThreadPublisher
    }
}

/// The output of `scenario` of `suite`, run in a child process (this test binary, filtered to
/// the self-test `test`, as [`assert_rejected`] runs it), which must fail.
fn rejection(test: &str, suite: Suite, scenario: &str) -> String {
    const CHILD: &str = "RS_TCK_LOOM_SELF_TEST_REJECTION_CHILD";
    if std::env::var_os(CHILD).is_some() {
        let o = suite
            .test(scenario)
            .unwrap_or_else(|| panic!("no scenario named {scenario}"))
            .run();
        assert_eq!(o.outcome, Outcome::Passed, "{}", o.detail);
        std::process::exit(0); // accepted: the parent reports it
    }
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run the broken variant in a child process");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "the broken variant was accepted:\n{text}"
    );
    text
}

#[test]
fn spec103_scenario_should_fail_by_signalling_from_a_std_thread() {
    const STD_THREAD: &str = "the publisher called on_subscribe from a thread loom does not know";
    let text = rejection(
        "spec103_scenario_should_fail_by_signalling_from_a_std_thread",
        rs_tck::loom::verify_publisher("std thread", StdThreadPublisher),
        "required_spec103_concurrent_request_vs_emission",
    );
    // The first thing noted (the scenario's process aborts: the deadlock that follows is
    // found while the model's threads are suspended): the std thread, ahead of anything that
    // follows from it.
    let first_note = text
        .find(rs_tck::harness::NOTE_PREFIX)
        .map(|i| &text[i + rs_tck::harness::NOTE_PREFIX.len()..])
        .unwrap_or_else(|| panic!("nothing noted:\n{text}"));
    assert!(first_note.starts_with(STD_THREAD), "{text}");
    // Not the misleading wait that the std thread leaves unanswered: it did call on_subscribe.
    assert!(
        !text.contains("rule 1.9: the publisher never called on_subscribe"),
        "{text}"
    );
    assert!(!text.contains(rs_tck::loom::DEADLOCKED), "{text}");
}
