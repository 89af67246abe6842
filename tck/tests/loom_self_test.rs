//! Self-tests of the TCK's loom mode: each scenario can fail. A deliberately broken
//! implementation runs through the scenario's test (from the same suites users run) in a
//! child process, which must fail with the rule in its output.
//!
//! Compiled only in the loom build (`scripts/loom.sh`): in a normal build a scenario runs once,
//! and most broken variants need a particular interleaving to show.
#![cfg(rs_loom)]
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use rs_api::{BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef};
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
