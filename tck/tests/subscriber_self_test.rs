//! Self-tests of the subscriber whitebox and blackbox verifications.
//!
//! 1. The built-in subscribers (the runner's registry, `tck/src/bin/rs-tck/registry/`) and the correct configuration of the
//!    test subscriber pass every check that can fail.
//! 2. For **every** check that can fail, at least one deliberately broken subscriber
//!    (`…_should_fail_by_…`, built from the knobs of `support/broken_subscriber.rs`) makes
//!    exactly that check fail, with a message naming the rule and the reason.
//!
//! | check | broken subscriber (knob): self-test |
//! |---|---|
//! | W happy path | never registers with the probe (`no_register`): `w_happy_path_should_fail_by_not_registering_with_the_probe`; never requests (`no_request`): `w_happy_path_should_fail_by_not_requesting` |
//! | W/B 2.1 | `no_request`: `…_spec201_should_fail_by_not_requesting`; `request_zero`: `…_spec201_should_fail_by_requesting_zero` |
//! | W/B 2.3 `on_complete` | `request_in_on_complete`: `…_spec203_complete_should_fail_by_requesting_in_on_complete` |
//! | W/B 2.3 `on_error` | `cancel_in_on_error`: `…_spec203_error_should_fail_by_cancelling_in_on_error` |
//! | W/B 2.4 | `keep_subscription_after_terminal`: `…_spec204_should_fail_by_requesting_after_the_terminal_signal` |
//! | W/B 2.5 | `ignore_second_subscription`: `…_spec205_should_fail_by_not_cancelling_the_second_subscription`; B also `request_second_subscription`: `b_spec205_should_fail_by_requesting_from_the_second_subscription` |
//! | W 2.6 | `lazy_cancel`: `w_spec206_should_fail_by_cancelling_only_at_the_next_signal` |
//! | W/B 2.7 | `unserialized`: `…_spec207_should_fail_by_overlapping_calls`; W also `replenish_unserialized` (its own request from `on_next` racing the puppet's cancel): `w_spec207_should_fail_by_replenishing_unserialized_with_a_cancel` |
//! | W 2.8 | `panic_on_next_after_cancel`: `w_spec208_should_fail_by_panicking_on_next_after_cancel` |
//! | W/B 2.9 ×2 | `panic_on_complete`: `…_spec209_with_request_…`, `…_spec209_without_request_should_fail_by_panicking_in_on_complete` |
//! | W/B 2.10 ×2 | `panic_on_error`: `…_spec210_with_request_…`, `…_spec210_without_request_should_fail_by_panicking_in_on_error` |
//! | W/B 2.13 (failing signal) | `panic_on_next`: `…_spec213_should_fail_by_panicking_in_on_next` |
//! | W/B 3.1 | `requests_after_drop`: `…_spec301_should_fail_by_requesting_from_a_thread_left_behind` |
//! | W 3.8 | `short_request`: `w_spec308_should_fail_by_requesting_less_than_triggered` |
//! | W/B 3.10 | `lock_across_request`: `…_spec310_should_fail_by_holding_its_state_across_request` |
//! | W/B 3.11 | `lock_across_request`: `…_spec311_should_fail_by_holding_its_state_across_request` |
//! | W 3.14 | `panic_on_drop_without_terminal`: `w_spec314_should_fail_by_panicking_when_dropped_without_a_terminal_signal` |
//!
//! The checks that cannot fail (skipped as decided by the types, or untested with a reason)
//! are listed in `support/cannot_fail.rs`; `every_check_has_a_should_fail_case` asserts that
//! every other check has a case, and `every_check_has_a_hint` that every check's failure
//! points at the cause.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[allow(dead_code)] // the loom half of the registry is not used here
#[path = "../src/bin/rs-tck/registry/mod.rs"]
mod registry;
mod support;

use rs_tck::outcome::Outcome;
use rs_tck::subscriber::{blackbox, whitebox};
use rs_tck::suite::Suite;
use support::broken_subscriber::{BrokenSubscriber, SubKnobs};
use support::cannot_fail::{BLACKBOX as B_CANNOT_FAIL, WHITEBOX as W_CANNOT_FAIL};
use support::expect::{
    assert_case, assert_coverage, assert_every_check_has_a_hint, not_passed, Expect,
};

fn knobs(f: impl FnOnce(&mut SubKnobs)) -> BrokenSubscriber {
    let mut k = SubKnobs::default();
    f(&mut k);
    BrokenSubscriber { knobs: k }
}

fn check_case(suite: Suite, check: &str, needles: &[&str]) {
    assert_case(&suite, check, Expect::Fail, needles);
}

macro_rules! should_fail {
    ($cases:ident, $verify:path; $( $case:ident : $check:ident, $subject:expr, [$($needle:literal),* $(,)?] ;)*) => {
        $(
            #[test]
            fn $case() {
                check_case($verify("broken", $subject), stringify!($check), &[$($needle),*]);
            }
        )*
        /// (self-test name, check name) of every should-fail case.
        const $cases: &[(&str, &str)] = &[$((stringify!($case), stringify!($check))),*];
    };
}

should_fail! { W_CASES, whitebox::verify;
    w_happy_path_should_fail_by_not_registering_with_the_probe:
        required_exercise_whitebox_happy_path, knobs(|k| k.no_register = true),
        ["register_on_subscribe"];
    w_happy_path_should_fail_by_not_requesting:
        required_exercise_whitebox_happy_path, knobs(|k| k.no_request = true),
        ["happy path", "outstanding demand"];
    w_spec201_should_fail_by_not_requesting:
        required_spec201_must_signal_demand_via_subscription_request, knobs(|k| k.no_request = true),
        ["rule 2.1", "outstanding demand is 0"];
    w_spec201_should_fail_by_requesting_zero:
        required_spec201_must_signal_demand_via_subscription_request, knobs(|k| k.request_zero = true),
        ["rule 2.1", "request(0)"];
    w_spec203_complete_should_fail_by_requesting_in_on_complete:
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete, knobs(|k| k.request_in_on_complete = true),
        ["rule 2.3", "request(1) from inside on_complete"];
    w_spec203_error_should_fail_by_cancelling_in_on_error:
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error, knobs(|k| k.cancel_in_on_error = true),
        ["rule 2.3", "cancel() from inside"];
    w_spec204_should_fail_by_requesting_after_the_terminal_signal:
        untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error, knobs(|k| k.keep_subscription_after_terminal = true),
        ["rule 2.4", "request(1) after on_complete"];
    w_spec205_should_fail_by_not_cancelling_the_second_subscription:
        required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, knobs(|k| k.ignore_second_subscription = true),
        ["rule 2.5", "cancel a second one"];
    w_spec206_should_fail_by_cancelling_only_at_the_next_signal:
        untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid, knobs(|k| k.lazy_cancel = true),
        ["rule 2.6", "without waiting for a further signal"];
    w_spec207_should_fail_by_overlapping_calls:
        untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, knobs(|k| k.unserialized = true),
        ["rule 2.7", "overlapped"];
    w_spec207_should_fail_by_replenishing_unserialized_with_a_cancel:
        untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, knobs(|k| k.replenish_unserialized = true),
        ["rule 2.7", "overlapped"];
    w_spec207_should_fail_by_replenishing_unserialized_with_a_cancel_and_no_trigger_request:
        untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, knobs(|k| { k.self_requesting = true; k.replenish_unserialized = true; }),
        ["rule 2.7", "cancel() overlapped"];
    w_spec208_should_fail_by_panicking_on_next_after_cancel:
        required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel, knobs(|k| k.panic_on_next_after_cancel = true),
        ["rule 2.8", "on_next panicked"];
    w_spec209_with_request_should_fail_by_panicking_in_on_complete:
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call, knobs(|k| k.panic_on_complete = true),
        ["rule 2.9", "on_complete panicked"];
    w_spec209_without_request_should_fail_by_panicking_in_on_complete:
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call, knobs(|k| k.panic_on_complete = true),
        ["rule 2.9", "on_complete panicked"];
    w_spec210_with_request_should_fail_by_panicking_in_on_error:
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call, knobs(|k| k.panic_on_error = true),
        ["rule 2.10", "on_error panicked"];
    w_spec210_without_request_should_fail_by_panicking_in_on_error:
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call, knobs(|k| k.panic_on_error = true),
        ["rule 2.10", "on_error panicked"];
    w_spec213_should_fail_by_panicking_in_on_next:
        untested_spec213_failing_on_signal_invocation, knobs(|k| k.panic_on_next = true),
        ["rule 2.13", "on_next panicked"];
    w_spec301_should_fail_by_requesting_from_a_thread_left_behind:
        untested_spec301_must_not_be_called_outside_subscriber_context, knobs(|k| k.requests_after_drop = true),
        ["rule 3.1", "after the publisher dropped the subscriber"];
    w_spec308_should_fail_by_requesting_less_than_triggered:
        required_spec308_request_must_register_given_number_elements_to_be_produced, knobs(|k| k.short_request = true),
        ["rule 3.8", "the second element", "outstanding demand is 0"];
    w_spec310_should_fail_by_holding_its_state_across_request:
        untested_spec310_request_may_synchronously_call_on_next_on_subscriber, knobs(|k| k.lock_across_request = true),
        ["rule 3.10", "on_next panicked"];
    w_spec311_should_fail_by_holding_its_state_across_request:
        untested_spec311_request_may_synchronously_call_on_complete_or_on_error, knobs(|k| k.lock_across_request = true),
        ["rule 3.11", "panicked"];
    w_spec314_should_fail_by_panicking_when_dropped_without_a_terminal_signal:
        untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists, knobs(|k| k.panic_on_drop_without_terminal = true),
        ["3.14", "dropping the subscriber without a terminal signal", "panicked"];
}

should_fail! { B_CASES, blackbox::verify;
    b_spec201_should_fail_by_not_requesting:
        required_spec201_blackbox_must_signal_demand_via_subscription_request, knobs(|k| k.no_request = true),
        ["rule 2.1", "outstanding demand is 0"];
    b_spec201_should_fail_by_requesting_zero:
        required_spec201_blackbox_must_signal_demand_via_subscription_request, knobs(|k| k.request_zero = true),
        ["rule 2.1", "request(0)"];
    b_spec203_complete_should_fail_by_requesting_in_on_complete:
        required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete, knobs(|k| k.request_in_on_complete = true),
        ["rule 2.3", "request(1) from inside on_complete"];
    b_spec203_error_should_fail_by_cancelling_in_on_error:
        required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error, knobs(|k| k.cancel_in_on_error = true),
        ["rule 2.3", "cancel() from inside"];
    b_spec204_should_fail_by_requesting_after_the_terminal_signal:
        untested_spec204_blackbox_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error, knobs(|k| k.keep_subscription_after_terminal = true),
        ["rule 2.4", "request(1) after on_complete"];
    b_spec205_should_fail_by_not_cancelling_the_second_subscription:
        required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, knobs(|k| k.ignore_second_subscription = true),
        ["rule 2.5", "cancel a second one"];
    b_spec205_should_fail_by_requesting_from_the_second_subscription:
        required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, knobs(|k| k.request_second_subscription = true),
        ["rule 2.5", "requested from the second subscription"];
    b_spec207_should_fail_by_overlapping_calls:
        untested_spec207_blackbox_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, knobs(|k| k.unserialized = true),
        ["rule 2.7", "overlapped"];
    b_spec209_with_request_should_fail_by_panicking_in_on_complete:
        required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call, knobs(|k| k.panic_on_complete = true),
        ["rule 2.9", "on_complete panicked"];
    b_spec209_without_request_should_fail_by_panicking_in_on_complete:
        required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call, knobs(|k| k.panic_on_complete = true),
        ["rule 2.9", "on_complete panicked"];
    b_spec210_with_request_should_fail_by_panicking_in_on_error:
        required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call, knobs(|k| k.panic_on_error = true),
        ["rule 2.10", "on_error panicked"];
    b_spec210_without_request_should_fail_by_panicking_in_on_error:
        required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call, knobs(|k| k.panic_on_error = true),
        ["rule 2.10", "on_error panicked"];
    b_spec213_should_fail_by_panicking_in_on_next:
        untested_spec213_blackbox_failing_on_signal_invocation, knobs(|k| k.panic_on_next = true),
        ["rule 2.13", "on_next panicked"];
    b_spec301_should_fail_by_requesting_from_a_thread_left_behind:
        untested_spec301_blackbox_must_not_be_called_outside_subscriber_context, knobs(|k| k.requests_after_drop = true),
        ["rule 3.1", "after the publisher dropped the subscriber"];
    b_spec310_should_fail_by_holding_its_state_across_request:
        untested_spec310_blackbox_request_may_synchronously_call_on_next_on_subscriber, knobs(|k| k.lock_across_request = true),
        ["rule 3.10", "on_next panicked"];
    b_spec311_should_fail_by_holding_its_state_across_request:
        untested_spec311_blackbox_request_may_synchronously_call_on_complete_or_on_error, knobs(|k| k.lock_across_request = true),
        ["rule 3.11", "panicked"];
}

#[test]
fn every_check_has_a_should_fail_case() {
    let w: Vec<&str> = whitebox::specs::<BrokenSubscriber>()
        .iter()
        .map(|s| s.name)
        .collect();
    let b: Vec<&str> = blackbox::specs::<BrokenSubscriber>()
        .iter()
        .map(|s| s.name)
        .collect();
    assert_eq!((w.len(), b.len()), (27, 26));
    assert_coverage(&w, W_CASES, W_CANNOT_FAIL);
    assert_coverage(&b, B_CASES, B_CANNOT_FAIL);
    assert_eq!(w.len() - W_CANNOT_FAIL.len(), 19);
    assert_eq!(b.len() - B_CANNOT_FAIL.len(), 14);
}

#[test]
fn every_check_has_a_hint() {
    assert_every_check_has_a_hint(&whitebox::verify("broken", BrokenSubscriber::default()));
    assert_every_check_has_a_hint(&blackbox::verify("broken", BrokenSubscriber::default()));
    assert_every_check_has_a_hint(&rs_tck::loom::verify_subscriber(
        "broken",
        BrokenSubscriber::default(),
    ));
}

#[test]
fn the_test_subscriber_without_knobs_passes_every_check() {
    let others = not_passed(&whitebox::verify("correct", BrokenSubscriber::default()));
    let names: Vec<&str> = others.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, W_CANNOT_FAIL, "{others:#?}");
    assert!(others.iter().all(|(_, o)| !o.detail.is_empty()));
    let others = not_passed(&blackbox::verify("correct", BrokenSubscriber::default()));
    let names: Vec<&str> = others.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, B_CANNOT_FAIL, "{others:#?}");
    assert!(others.iter().all(|(_, o)| !o.detail.is_empty()));
}

/// Issue #9: the 2.7 check no longer depends on the puppet's `trigger_request`: a subscriber
/// that requests by itself, with a puppet whose `trigger_request` does nothing, is checked (its
/// unserialised twin fails above) and, serialising its cancel with its own requests, passes.
#[test]
fn w_spec207_passes_a_self_requesting_subscriber_with_a_serialised_cancel() {
    let suite = whitebox::verify("self-requesting", knobs(|k| k.self_requesting = true));
    let o = suite
        .test("untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization")
        .unwrap()
        .run();
    assert_eq!(o.outcome, Outcome::Passed, "{o:?}");
}

#[test]
fn the_built_in_subscribers_and_processors_pass() {
    let suites: Vec<Suite> = registry::all()
        .into_iter()
        .filter(|s| s.verification != "publisher")
        .collect();
    let records = rs_tck::runner::run(
        &suites,
        &rs_tck::runner::RunOptions {
            threads: 8,
            progress: false,
        },
    );
    // The counts follow from the registry: every registered subscriber is verified both
    // ways, each subscriber suite holds its whole verification, and every test of every
    // suite produced a record.
    let names = |v: &str| {
        let mut n: Vec<&str> = suites
            .iter()
            .filter(|s| s.verification == v)
            .map(|s| s.implementation.as_str())
            .collect();
        n.sort_unstable();
        n
    };
    let (w, b) = (names("subscriber_whitebox"), names("subscriber_blackbox"));
    assert!(!w.is_empty());
    assert_eq!(
        w, b,
        "every registered subscriber has a whitebox and a blackbox suite"
    );
    assert!(!names("identity_processor").is_empty());
    let checks = [
        (
            "subscriber_whitebox",
            whitebox::specs::<BrokenSubscriber>().len(),
        ),
        (
            "subscriber_blackbox",
            blackbox::specs::<BrokenSubscriber>().len(),
        ),
    ];
    for (v, n) in checks {
        for s in suites.iter().filter(|s| s.verification == v) {
            assert_eq!(s.tests.len(), n, "{} {v}", s.implementation);
        }
    }
    let count = |v: &str| records.iter().filter(|r| r.verification == v).count();
    for v in [
        "subscriber_whitebox",
        "subscriber_blackbox",
        "identity_processor",
    ] {
        let tests: usize = suites
            .iter()
            .filter(|s| s.verification == v)
            .map(|s| s.tests.len())
            .sum();
        assert_eq!(count(v), tests, "{v}");
    }
    for r in &records {
        assert_ne!(r.outcome, rs_tck::outcome::Outcome::Failed, "{r:#?}");
        if matches!(r.outcome, Outcome::Skipped | Outcome::Untested) {
            assert!(!r.detail.is_empty(), "{r:#?}");
        }
    }
}
