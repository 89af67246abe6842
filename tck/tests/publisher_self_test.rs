//! Self-tests of the publisher verification.
//!
//! 1. The built-in publishers (the runner's registry, `tck/src/bin/rs-tck/registry/`) and the correct configuration of the
//!    test publisher pass every check.
//! 2. For **every** check that can fail, at least one deliberately broken publisher
//!    (`…_should_fail_by_…`, built from the knobs of `support::broken_publisher`) makes
//!    exactly that check fail — or, for an optional check, be skipped as an unmet optional
//!    requirement — with a message naming the rule and the reason.
//!
//! The four checks that cannot fail are the two decided by the types (1.9's null subscriber,
//! 1.10) and the two untested ones (3.4, 3.5); `every_check_has_a_should_fail_case` asserts
//! that every other check has a case.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

#[allow(dead_code)] // the loom half of the registry is not used here
#[path = "../src/bin/rs-tck/registry/mod.rs"]
mod registry;
mod support;

use rs_tck::hints;
use rs_tck::outcome::{Outcome, TestOutcome};
use rs_tck::publisher::{self, PublisherVerification};
use rs_tck::suite::Kind;
use support::broken_multicast::{BrokenMulticast, MulticastKnobs};
use support::broken_on_upstream::OnUpstream;
use support::broken_publisher::{Broken, Knobs};
use support::cannot_fail::PUBLISHER as CANNOT_FAIL;
use support::expect::{
    assert_case_with_hint, assert_coverage, assert_every_check_has_a_hint, not_passed, Expect,
};

fn run_check(v: Broken, check: &str) -> TestOutcome {
    let suite = publisher::verify("broken", v);
    let test = suite
        .test(check)
        .unwrap_or_else(|| panic!("no check named {check}"));
    test.run()
}

fn check_case<V: PublisherVerification>(
    check: &str,
    expect: Expect,
    v: V,
    needles: &[&str],
    hint: Option<&str>,
) {
    assert_case_with_hint(
        &publisher::verify("broken", v),
        check,
        expect,
        needles,
        hint,
    );
}

fn multicast(f: impl FnOnce(&mut MulticastKnobs)) -> BrokenMulticast {
    let mut k = MulticastKnobs::default();
    f(&mut k);
    BrokenMulticast(k)
}

fn knobs(f: impl FnOnce(&mut Knobs)) -> Knobs {
    let mut k = Knobs::default();
    f(&mut k);
    k
}

macro_rules! should_fail {
    ($( $case:ident : $check:ident, $expect:ident, $verification:expr, [$($needle:literal),* $(,)?] $(, hint: $hint:expr)? ;)*) => {
        $(
            #[test]
            fn $case() {
                let hint: Option<&str> = None $(.or(Some($hint)))?;
                check_case(stringify!($check), Expect::$expect, $verification, &[$($needle),*], hint);
            }
        )*
        /// (self-test name, check name) of every should-fail case.
        const CASES: &[(&str, &str)] = &[$((stringify!($case), stringify!($check))),*];
    };
}

should_fail! {
    create_publisher1_should_fail_by_producing_too_many_elements:
        required_create_publisher1_must_produce_a_stream_of_exactly1_element, Fail,
        Broken::publisher(knobs(|k| k.len_offset = 1)),
        ["exactly 1 element", "got on_next"], hint: hints::TOO_MANY_ELEMENTS;
    create_publisher3_should_fail_by_producing_too_few_elements:
        required_create_publisher3_must_produce_a_stream_of_exactly3_elements, Fail,
        Broken::publisher(knobs(|k| k.len_offset = -1)),
        ["produced only 2 elements"];
    validate_max_elements_should_fail_by_exceeding_i64_max:
        required_validate_max_elements_from_publisher, Fail,
        Broken { max_elements: u64::MAX, ..Broken::correct() },
        ["above i64::MAX"];
    validate_recursion_depth_should_fail_by_being_zero:
        required_validate_bounded_depth_of_on_next_and_request_recursion, Fail,
        Broken { depth: 0, ..Broken::correct() },
        ["at least 1"];
    spec101_should_fail_by_emitting_more_than_requested:
        required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements, Fail,
        Broken::publisher(knobs(|k| k.extra_elements = 1)),
        ["rule 1.1", "more than the 1 element requested"];
    spec101_should_fail_by_emitting_before_any_request:
        required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements, Fail,
        Broken::publisher(knobs(|k| k.emit_before_request = true)),
        ["rule 1.1", "before the first request"];
    spec102_should_fail_by_not_completing:
        required_spec102_may_signal_less_than_requested_and_terminate_subscription, Fail,
        Broken::publisher(knobs(|k| k.no_terminal = true)),
        ["rule 1.2", "no on_complete"];
    spec103_should_fail_by_losing_a_wake_up:
        stochastic_spec103_must_signal_on_methods_sequentially, Fail,
        Broken::publisher(knobs(|k| k.drop_requests_while_draining = true)),
        ["rule 1.3", "lost wake-up"];
    spec104_should_fail_by_not_signalling_on_error:
        optional_spec104_must_signal_on_error_when_fails, Fail,
        Broken::failed(knobs(|k| k.no_terminal = true)),
        ["rule 1.4", "on_error"];
    spec105_should_fail_by_not_completing:
        required_spec105_must_signal_on_complete_when_finite_stream_terminates, Fail,
        Broken::publisher(knobs(|k| k.no_terminal = true)),
        ["rule 1.5", "on_complete"], hint: hints::ELEMENTS_RUN_OUT;
    // Issue 20, item 7: one element too many is not a completion problem.
    spec105_should_fail_by_emitting_one_element_too_many:
        required_spec105_must_signal_on_complete_when_finite_stream_terminates, Fail,
        Broken::publisher(knobs(|k| k.len_offset = 1)),
        ["rule 1.5", "got on_next(3)", "an element more than expected"], hint: hints::TOO_MANY_ELEMENTS;
    spec105_empty_should_fail_by_not_completing:
        optional_spec105_empty_stream_must_terminate_by_signalling_on_complete, Unmet,
        Broken::publisher(knobs(|k| k.no_terminal = true)),
        ["rule 1.5", "on_complete"], hint: hints::ELEMENTS_RUN_OUT;
    spec106_should_fail_by_keeping_the_subscriber_after_on_complete:
        untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called, Fail,
        Broken::publisher(knobs(|k| k.keep_subscriber_after_terminal = true)),
        ["rule 1.6", "after on_complete", "still holds the subscriber"];
    // Issue 20, item 7: a publisher that waits for demand to discover its end gets the
    // look-ahead hint, not 1.6's ("is the subscriber dropped …").
    spec106_should_fail_by_waiting_for_demand_before_discovering_its_end:
        untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called, Fail,
        Broken::publisher(knobs(|k| k.no_look_ahead = true)),
        ["rule 1.6", "no on_complete", "no demand left"], hint: hints::LOOK_AHEAD;
    spec106_should_fail_by_keeping_the_subscriber_after_on_error:
        untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called, Fail,
        Broken::failed(knobs(|k| k.keep_subscriber_after_terminal = true)),
        ["rule 1.6", "after on_error", "still holds the subscriber"];
    spec107_should_fail_by_on_next_after_on_complete:
        required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled, Fail,
        Broken::publisher(knobs(|k| k.signal_after_terminal = true)),
        ["rule 1.7", "on_next(999)"];
    spec107_error_should_fail_by_on_complete_after_on_error:
        untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled, Fail,
        Broken::failed(knobs(|k| k.signal_after_terminal = true)),
        ["rule 1.7", "after on_error", "on_complete"];
    spec108_should_fail_by_completing_on_cancel:
        untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals, Fail,
        Broken::publisher(knobs(|k| k.complete_on_cancel = true)),
        ["rule 1.8", "on_complete after cancel"];
    spec109_should_fail_by_not_calling_on_subscribe:
        required_spec109_must_issue_on_subscribe_for_non_null_subscriber, Fail,
        Broken::publisher(knobs(|k| k.skip_on_subscribe = true)),
        ["rule 1.9", "before on_subscribe"];
    spec109_must_not_panic_should_fail_by_panicking_in_subscribe:
        untested_spec109_subscribe_should_not_throw_non_fatal_throwable, Fail,
        Broken::publisher(knobs(|k| k.panic_in_subscribe = true)),
        ["rule 1.9", "subscribe must return normally", "panicked"];
    spec109_must_not_panic_should_fail_by_panicking_in_request:
        untested_spec109_subscribe_should_not_throw_non_fatal_throwable, Fail,
        Broken::publisher(knobs(|k| k.panic_in_request = true)),
        ["rule 1.9", "rule 3.16", "panicked"];
    spec109_rejection_should_fail_by_on_error_before_on_subscribe:
        required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe, Fail,
        Broken::failed(knobs(|k| k.terminal_before_on_subscribe = true)),
        ["rule 1.9", "before on_error"];
    spec111_multi_subscribe_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_may_support_multi_subscribe, Unmet,
        Broken::publisher(knobs(|k| k.unicast = true)),
        ["rule 1.11", "on_error"];
    spec111_registered_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals, Unmet,
        Broken::publisher(knobs(|k| k.unicast = true)),
        ["rule 1.11", "on_error"];
    spec111_one_by_one_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one, Unmet,
        Broken::publisher(knobs(|k| k.per_subscriber_sequence = true)),
        ["rule 1.11", "subscriber 2 received"];
    spec111_many_upfront_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront, Unmet,
        Broken::publisher(knobs(|k| k.per_subscriber_sequence = true)),
        ["rule 1.11", "subscriber 2 received"];
    spec111_many_upfront_complete_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected, Unmet,
        Broken::publisher(knobs(|k| k.per_subscriber_sequence = true)),
        ["rule 1.11", "subscriber 2 received"];
    spec111_many_upfront_complete_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected, Unmet,
        Broken::publisher(knobs(|k| k.unicast = true)),
        ["rule 1.11", "on_error"];
    // Declared multicast (max_supported_subscribers): the same faults fail the 1.11 checks.
    spec111_multi_subscribe_declared_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_may_support_multi_subscribe, Fail,
        Broken::publisher(knobs(|k| k.unicast = true)).multicast(),
        ["rule 1.11", "on_error", "required: the verification declares multiple subscribers"];
    spec111_registered_declared_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals, Fail,
        Broken::publisher(knobs(|k| k.unicast = true)).multicast(),
        ["rule 1.11", "on_error", "required"];
    spec111_one_by_one_declared_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one, Fail,
        Broken::publisher(knobs(|k| k.per_subscriber_sequence = true)).multicast(),
        ["rule 1.11", "subscriber 2 received", "required"];
    spec111_many_upfront_declared_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront, Fail,
        Broken::publisher(knobs(|k| k.per_subscriber_sequence = true)).multicast(),
        ["rule 1.11", "subscriber 2 received", "required"];
    spec111_many_upfront_complete_declared_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected, Fail,
        Broken::publisher(knobs(|k| k.unicast = true)).multicast(),
        ["rule 1.11", "on_error", "required"];
    spec111_keep_receiving_should_fail_by_dropping_the_earlier_subscriber:
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, Unmet,
        Broken::publisher(knobs(|k| k.drop_earlier_subscriber_on_join = true)),
        ["rule 1.11", "subscriber 1 must keep receiving"];
    spec111_keep_receiving_declared_should_fail_by_dropping_the_earlier_subscriber:
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, Fail,
        Broken::publisher(knobs(|k| k.drop_earlier_subscriber_on_join = true)).multicast(),
        ["rule 1.11", "subscriber 1 must keep receiving", "no element within", "required"];
    // … nor 1.11's ("does a subscriber joining leave the others' subscriptions alone …").
    spec111_keep_receiving_declared_should_fail_by_waiting_for_demand_before_discovering_its_end:
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, Fail,
        Broken::publisher(knobs(|k| k.no_look_ahead = true)).multicast(),
        ["rule 1.11", "subscriber 1", "no demand left", "required"], hint: hints::LOOK_AHEAD;
    spec111_keep_receiving_declared_should_fail_by_dropping_the_earlier_subscriber_on_its_own_thread:
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, Fail,
        Broken::publisher(knobs(|k| { k.drop_earlier_subscriber_on_join = true; k.own_thread = true; })).multicast(),
        ["rule 1.11", "subscriber 1 must keep receiving", "required"];
    // Issue 21, item 1: several subscribers while the shared buffer grows.
    spec111_growth_should_fail_by_growing_without_unwrapping:
        required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows, Fail,
        multicast(|k| k.grow_without_unwrapping = true),
        ["rule 1.11", "subscriber 2 received element #"];
    // Issue 21, item 2 (and issue 20, item 9): rule 2.13's publisher half.
    spec213_on_subscribe_should_fail_by_letting_the_panic_escape:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled, Fail,
        Broken::publisher(knobs(|k| k.unguarded_signals = true)),
        ["rule 2.13", "escaped from subscribe", "on_subscribe"], hint: hints::PANIC_ESCAPED;
    spec213_on_subscribe_should_fail_by_signalling_after_the_panic:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled, Fail,
        Broken::publisher(knobs(|k| k.swallow_subscriber_panics = true)),
        ["rule 2.13", "on_next to the subscriber after its on_subscribe panicked"];
    spec213_on_next_should_fail_by_letting_the_panic_escape:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled, Fail,
        Broken::publisher(knobs(|k| k.unguarded_signals = true)),
        ["rule 2.13", "escaped from request(5)"], hint: hints::PANIC_ESCAPED;
    spec213_on_next_should_fail_by_signalling_after_the_panic:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled, Fail,
        Broken::publisher(knobs(|k| k.swallow_subscriber_panics = true)),
        ["rule 2.13", "on_next to the subscriber after its on_next panicked"];
    spec213_multicast_should_fail_by_stopping_everyone:
        required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics, Fail,
        multicast(|k| k.panic_stops_everyone = true),
        ["rule 2.13", "subscribers 1 and 3 must get every element", "no progress"];
    spec213_multicast_should_fail_by_letting_the_panic_escape:
        required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics, Fail,
        multicast(|k| k.unguarded = true),
        ["rule 2.13", "escaped from request(10) on subscriber 2"], hint: hints::PANIC_ESCAPED;
    spec213_multicast_should_fail_by_signalling_after_the_panic:
        required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics, Fail,
        Broken::publisher(knobs(|k| k.swallow_subscriber_panics = true)).multicast(),
        ["rule 2.13", "to subscriber 2 after its on_next panicked"];
    // Issue 21, item 3: bounded buffering on an upstream.
    bounded_buffer_should_fail_by_requesting_unbounded_demand_upstream:
        required_must_not_request_more_from_upstream_than_the_declared_buffer_holds, Fail,
        OnUpstream { greedy: true, ..OnUpstream::correct() },
        ["bounded buffering", "with no downstream demand", "unbounded demand", "declared buffer of 8"];
    bounded_buffer_should_fail_by_buffering_more_than_declared:
        required_must_not_request_more_from_upstream_than_the_declared_buffer_holds, Fail,
        OnUpstream { bound: rs_tck::publisher::BufferBound::AtMost(4), ..OnUpstream::correct() },
        ["bounded buffering", "taken 8 from its upstream", "declared buffer of 4"];
    spec302_should_fail_by_panicking_on_a_reentrant_request:
        required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe, Fail,
        Broken::publisher(knobs(|k| k.reentrant_request_panics = true)),
        ["rule 3.2", "re-entrant request"];
    spec303_should_fail_by_recursing_without_a_trampoline:
        required_spec303_must_not_allow_unbounded_recursion, Fail,
        Broken::publisher(knobs(|k| k.reentrant_request_panics = true)),
        ["rule 3.3", "re-entrant request"];
    spec303_should_fail_by_never_calling_on_subscribe_from_its_own_thread:
        required_spec303_must_not_allow_unbounded_recursion, Fail,
        Broken::publisher(knobs(|k| { k.skip_on_subscribe = true; k.own_thread = true; })),
        ["rule 3.3", "rule 1.9", "did not call on_subscribe"], hint: hints::ON_SUBSCRIBE;
    spec306_should_fail_by_ignoring_cancel:
        required_spec306_after_subscription_is_cancelled_request_must_be_nops, Fail,
        Broken::publisher(knobs(|k| k.ignore_cancel = true)),
        ["rule 3.6", "unexpected on_next"];
    spec307_should_fail_by_signalling_on_error_on_a_repeated_cancel:
        required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops, Fail,
        Broken::publisher(knobs(|k| k.error_on_repeated_cancel = true)),
        ["rule 3.7", "on_error(cancelled twice"];
    spec307_should_fail_by_panicking_on_a_repeated_cancel:
        required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops, Fail,
        Broken::publisher(knobs(|k| k.panic_on_repeated_cancel = true)),
        ["rule 3.7", "cancel panicked"];
    spec309_zero_should_fail_by_ignoring_request_zero:
        required_spec309_request_zero_must_signal_illegal_argument_exception, Fail,
        Broken::publisher(knobs(|k| k.ignore_zero_request = true)),
        ["rule 3.9", "request(0)", "no on_error"];
    spec309_negative_should_fail_by_ignoring_request_zero:
        required_spec309_request_negative_number_must_signal_illegal_argument_exception, Fail,
        Broken::publisher(knobs(|k| k.ignore_zero_request = true)),
        ["rule 3.9", "the JVM's request(-", "no on_error"];
    spec309_message_should_fail_by_an_unspecific_message:
        optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message, Unmet,
        Broken::publisher(knobs(|k| k.zero_request_message = Some("bad demand"))),
        ["rule 3.9", "bad demand"];
    spec312_should_fail_by_flushing_on_cancel:
        required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling, Fail,
        Broken::publisher(knobs(|k| k.flush_on_cancel = true)),
        ["rule 3.12", "more than the 15 requested"];
    spec312_unbounded_should_fail_by_ignoring_cancel_under_unbounded_demand:
        required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling, Fail,
        Broken::publisher(knobs(|k| k.ignore_cancel_under_unbounded_demand = true)),
        ["rule 3.12", "request(UNBOUNDED)", "kept signalling", "more than 1024 elements after cancel"];
    spec312_unbounded_should_fail_by_ignoring_cancel_under_unbounded_demand_on_its_own_thread:
        required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling, Fail,
        Broken::publisher(knobs(|k| { k.ignore_cancel_under_unbounded_demand = true; k.own_thread = true; })),
        ["rule 3.12", "kept signalling"];
    spec313_should_fail_by_keeping_the_subscriber_after_cancel:
        required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber, Fail,
        Broken::publisher(knobs(|k| k.keep_subscriber_after_cancel = true)),
        ["rule 3.13", "still holds the subscriber"];
    spec317_should_fail_by_erroring_on_large_demand:
        required_spec317_must_support_a_pending_element_count_up_to_long_max_value, Fail,
        Broken::publisher(knobs(|k| k.error_on_demand_above = Some(i32::MAX as u64))),
        ["rule 3.17", "demand too large"];
    spec317_cumulative_should_fail_by_erroring_on_large_demand:
        required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value, Fail,
        Broken::publisher(knobs(|k| k.error_on_demand_above = Some(i32::MAX as u64))),
        ["rule 3.17", "demand too large"];
    spec317_overflow_should_fail_by_panicking_on_demand_overflow:
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, Fail,
        Broken::publisher(knobs(|k| k.panic_on_demand_overflow = true)),
        ["rule 3.17", "demand overflow"];
    spec317_overflow_should_fail_by_erroring_on_large_demand:
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, Fail,
        Broken::publisher(knobs(|k| k.error_on_demand_above = Some(i64::MAX as u64))),
        ["rule 3.17", "unexpected on_error"];
    spec317_overflow_should_fail_by_wrapping_demand:
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, Fail,
        Broken::publisher(knobs(|k| k.signed_wrapping_demand = true)),
        ["rule 3.17", "the elements stopped", "2 of the 11"];
    spec317_overflow_should_fail_by_wrapping_demand_on_its_own_thread:
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, Fail,
        Broken::publisher(knobs(|k| { k.signed_wrapping_demand = true; k.own_thread = true; })),
        ["rule 3.17", "the elements stopped"];
}

#[test]
fn every_check_has_a_should_fail_case() {
    let specs = publisher::specs::<Broken>();
    assert_eq!(specs.len(), 46);
    let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
    assert_coverage(&names, CASES, CANNOT_FAIL);
    let required_and_optional = specs
        .iter()
        .filter(|s| matches!(s.kind(), Kind::Required | Kind::Optional))
        .count();
    assert_eq!(required_and_optional, 37);
    assert!(
        CASES.len() >= required_and_optional,
        "{} should-fail cases, fewer than the {required_and_optional} required and optional \
         checks",
        CASES.len()
    );
}

#[test]
fn every_check_has_a_hint() {
    assert_every_check_has_a_hint(&publisher::verify("broken", Broken::correct()));
    assert_every_check_has_a_hint(&rs_tck::loom::verify_publisher("broken", Broken::correct()));
}

#[test]
fn the_checks_that_cannot_fail_are_skipped_or_untested_with_a_reason() {
    let suite = publisher::verify("correct", Broken::correct());
    for name in CANNOT_FAIL {
        let o = suite.test(name).unwrap().run();
        assert!(
            matches!(o.outcome, Outcome::Skipped | Outcome::Untested),
            "{name}: {o:?}"
        );
        assert!(!o.detail.is_empty());
    }
}

/// What the correct test publisher does not pass, besides the checks that cannot fail: the
/// multicast-only checks when it declares nothing, and bounded buffering (it is not built on
/// an upstream). Each is skipped with its reason.
const SKIPPED_UNDECLARED: &[&str] = &[
    "required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows",
    "required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics",
];
const NOT_ON_AN_UPSTREAM: &str =
    "required_must_not_request_more_from_upstream_than_the_declared_buffer_holds";

/// Asserts that `suite` passes every check but `expected` (each skipped or untested with a
/// reason).
fn assert_passes_all_but(suite: &rs_tck::suite::Suite, expected: &[&str]) {
    let others = not_passed(suite);
    let mut names: Vec<&str> = others.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected, "{others:#?}");
    for (n, o) in &others {
        assert_ne!(o.outcome, Outcome::Failed, "{n}: {o:?}");
        assert!(!o.detail.is_empty(), "{n}: {o:?}");
    }
}

#[test]
fn the_test_publisher_without_knobs_passes_every_check() {
    let suite = publisher::verify("correct", Broken::correct());
    let expected: Vec<&str> = CANNOT_FAIL
        .iter()
        .chain(SKIPPED_UNDECLARED)
        .copied()
        .chain([NOT_ON_AN_UPSTREAM])
        .collect();
    assert_passes_all_but(&suite, &expected);
}

/// Issue 21, item 8: a publisher that declares nothing has its multicast checks skipped, and
/// the report says so once, by name, in the declaration's record.
#[test]
fn an_undeclared_publisher_is_told_once_which_multicast_checks_were_skipped() {
    let suite = publisher::verify("undeclared", Broken::correct());
    let o = suite
        .test("declaration_max_supported_subscribers")
        .unwrap()
        .run();
    assert_eq!(o.outcome, Outcome::Skipped, "{o:?}");
    for name in SKIPPED_UNDECLARED {
        assert!(o.detail.contains(name), "{o:?}");
        let skip = suite.test(name).unwrap().run();
        assert_eq!(skip.outcome, Outcome::Skipped);
        assert!(
            skip.detail
                .contains("declaration_max_supported_subscribers"),
            "{skip:?}"
        );
    }
    let declared = publisher::verify("declared", Broken::correct().multicast());
    let o = declared
        .test("declaration_max_supported_subscribers")
        .unwrap()
        .run();
    assert_eq!(o.outcome, Outcome::Passed, "{o:?}");
}

/// The multicast test publisher (a shared ring that grows) passes the multicast checks with
/// every knob off.
#[test]
fn a_correct_multicast_publisher_passes_the_multicast_checks() {
    let suite = publisher::verify("multicast", BrokenMulticast::default());
    for name in SKIPPED_UNDECLARED.iter().chain(&[
        "optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join",
        "optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one",
    ]) {
        let o = suite.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Passed, "{name}: {o:?}");
    }
}

/// The fanout with a buffer that starts at 2 and may grow to 1024 (the registry's fanout entries
/// start at their maximum, so their buffers never grow). Its upstream starts only once three
/// subscribers have joined (a gate that waits for the fanout's subscriber count), so the
/// growth check makes the buffer grow and wrap while its readers sit at different positions.
/// It passes, as it does the panicking-subscriber check.
#[test]
fn a_fanout_whose_buffer_grows_passes_the_multicast_checks() {
    use rs_api::{BoxSubscriber, Publisher};
    use rs_impl::fanout::{FanoutConfig, FanoutProcessor};

    /// `range(0..n)`, subscribed only once the fanout has three subscribers (or after 10 s).
    struct Gated {
        n: u64,
        fanout: FanoutProcessor<u64>,
    }
    impl Publisher<u64> for Gated {
        fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
            let (n, fanout) = (self.n, self.fanout.clone());
            std::thread::spawn(move || {
                for _ in 0..10_000 {
                    if fanout.stats().subscribers >= 3 {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                rs_impl::source::range(0..n).subscribe(subscriber);
            });
        }
    }
    struct GrowingFanout;
    impl PublisherVerification for GrowingFanout {
        type Item = u64;
        fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
            let config = FanoutConfig::new(1024).grow_from(2);
            let fanout = FanoutProcessor::<u64>::with_config(config);
            Gated {
                n,
                fanout: fanout.clone(),
            }
            .subscribe(Box::new(fanout.clone()));
            fanout
        }
        fn max_supported_subscribers(&self) -> rs_tck::publisher::SupportedSubscribers {
            rs_tck::publisher::SupportedSubscribers::MANY
        }
    }
    let suite = publisher::verify("growing fanout", GrowingFanout);
    for name in SKIPPED_UNDECLARED {
        let o = suite.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Passed, "{name}: {o:?}");
    }
}

/// The publisher built on an upstream passes with its real bound declared, and is skipped
/// with the reason when it declares none.
#[test]
fn bounded_buffering_passes_a_bounded_publisher_and_skips_an_undeclared_one() {
    let suite = publisher::verify("on upstream", OnUpstream::correct());
    let cannot_fail: Vec<&str> = CANNOT_FAIL
        .iter()
        .copied()
        .filter(|n| *n != "declaration_max_supported_subscribers")
        .collect();
    assert_passes_all_but(&suite, &cannot_fail);
    let undeclared = OnUpstream {
        bound: rs_tck::publisher::BufferBound::Undeclared,
        ..OnUpstream::correct()
    };
    let o = publisher::verify("undeclared", undeclared)
        .test(NOT_ON_AN_UPSTREAM)
        .unwrap()
        .run();
    assert_eq!(o.outcome, Outcome::Skipped);
    assert!(o.detail.contains("declares no buffer bound"), "{o:?}");
}

/// Issue #9: the same correct publisher, signalling from a thread of its own (`on_subscribe`
/// included), passes every check that can fail, also with multiple subscribers declared (the
/// 1.11 checks required).
#[test]
fn the_test_publisher_on_its_own_thread_passes_every_check() {
    let undeclared: Vec<&str> = CANNOT_FAIL
        .iter()
        .chain(SKIPPED_UNDECLARED)
        .copied()
        .chain([NOT_ON_AN_UPSTREAM])
        .collect();
    assert_passes_all_but(
        &publisher::verify("own thread", Broken::own_thread()),
        &undeclared,
    );
    let declared: Vec<&str> = CANNOT_FAIL
        .iter()
        .copied()
        .filter(|n| *n != "declaration_max_supported_subscribers")
        .chain([NOT_ON_AN_UPSTREAM])
        .collect();
    assert_passes_all_but(
        &publisher::verify("own thread", Broken::own_thread().multicast()),
        &declared,
    );
}

/// With multiple subscribers declared, the 1.11 checks are required ones, and the correct
/// publisher passes them; declared unicast, they are skipped as not applicable.
#[test]
fn a_multicast_declaration_makes_the_1_11_checks_required() {
    let suite = publisher::verify("multicast", Broken::correct().multicast());
    let multicast: Vec<_> = suite.tests.iter().filter(|t| t.rule == "1.11").collect();
    assert_eq!(multicast.len(), 8);
    for t in &multicast {
        assert_eq!(t.kind, Kind::Required, "{}", t.name);
        assert_eq!(t.run().outcome, Outcome::Passed, "{}", t.name);
    }
    let undeclared = publisher::verify("undeclared", Broken::correct());
    assert!(undeclared
        .tests
        .iter()
        .filter(|t| t.rule == "1.11" && t.name.starts_with("optional_"))
        .all(|t| t.kind == Kind::Optional));
    let unicast = publisher::verify(
        "unicast",
        Broken {
            subscribers: rs_tck::publisher::SupportedSubscribers::AtMost(1),
            ..Broken::publisher(knobs(|k| k.unicast = true))
        },
    );
    for t in unicast
        .tests
        .iter()
        .filter(|t| t.rule == "1.11" && t.name != "declaration_max_supported_subscribers")
    {
        let o = t.run();
        assert_eq!(o.outcome, Outcome::Skipped, "{}: {o:?}", t.name);
        assert!(o.detail.contains("declares at most 1"), "{}: {o:?}", t.name);
    }
}

#[test]
fn the_built_in_publishers_pass() {
    let records = rs_tck::runner::run(
        &registry::all(),
        &rs_tck::runner::RunOptions {
            threads: 8,
            progress: false,
        },
    );
    assert!(records.len() >= 5 * 40);
    for r in &records {
        assert_ne!(r.outcome, Outcome::Failed, "{r:#?}");
        if r.outcome == Outcome::Untested && r.verification == "publisher" {
            assert!(r.rule == "3.4" || r.rule == "3.5", "{r:#?}");
            assert!(!r.detail.is_empty());
        }
    }
    // Every built-in publisher that can produce elements runs the 3.17 overflow test.
    let range_overflow = records.iter().find(|r| {
        r.implementation == "source::range"
            && r.test
                == "required_spec317_must_not_signal_on_error_when_pending_above_long_max_value"
    });
    assert_eq!(range_overflow.map(|r| r.outcome), Some(Outcome::Passed));
    // Nothing is skipped without a reason; the known rs-impl failures are reported as such.
    for r in records.iter().filter(|r| r.outcome == Outcome::Skipped) {
        assert!(!r.detail.is_empty(), "{r:#?}");
        let known = registry::KNOWN_FAILURES
            .iter()
            .any(|(i, v, t, _)| *i == r.implementation && *v == r.verification && *t == r.test);
        assert_eq!(known, r.detail.starts_with("KNOWN FAILURE"), "{r:#?}");
    }
    // The new checks ran against the built-ins they are for, and passed.
    let passed = |test: &str| {
        records
            .iter()
            .filter(|r| r.test == test && r.outcome == Outcome::Passed)
            .map(|r| r.implementation.as_str())
            .collect::<Vec<_>>()
    };
    for (test, at_least) in [
        (
            SKIPPED_UNDECLARED[0],
            [
                "fanout::channel",
                // Issue 21, item 1: a built-in whose buffer grows during the check.
                "fanout::channel_with(grow_from(2))",
                "fanout::FanoutProcessor",
                "processor::IdentityProcessor",
            ]
            .as_slice(),
        ),
        (
            SKIPPED_UNDECLARED[1],
            &[
                "fanout::channel",
                "fanout::FanoutProcessor",
                "processor::IdentityProcessor",
            ],
        ),
        (
            NOT_ON_AN_UPSTREAM,
            &[
                "compat::from_stream",
                "compat::to_stream → from_try_stream",
                "processor::IdentityProcessor",
                "fanout::FanoutProcessor",
                // Issue 21, item 3: the publishers built on an upstream, as publishers.
                "island::Flow::from_publisher(range).filter.map",
                "boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)",
            ],
        ),
        (
            "required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled",
            &["source::range", "fanout::channel", "compat::from_stream"],
        ),
    ] {
        let got = passed(test);
        for i in at_least {
            assert!(got.contains(i), "{test} did not pass for {i}: {got:?}");
        }
    }
    // Issue 21, item 3: bounded buffering runs on every built-in publisher built on an
    // upstream, as a publisher (not only through the processor verification), and passes; no
    // publisher built on one is told that it is not.
    for implementation in [
        "fanout::FanoutProcessor",
        "island::Flow::from_publisher(range).filter.map",
        "boundary::Flow::from_publisher(range).async_boundary().filter.async_boundary(16)",
    ] {
        let r = records
            .iter()
            .find(|r| {
                r.implementation == implementation
                    && r.verification == "publisher"
                    && r.test == NOT_ON_AN_UPSTREAM
            })
            .unwrap_or_else(|| panic!("no bounded-buffering record for {implementation}"));
        assert_eq!(r.outcome, Outcome::Passed, "{r:#?}");
    }
    for r in records
        .iter()
        .filter(|r| r.test == NOT_ON_AN_UPSTREAM && r.detail.contains("not built on an upstream"))
    {
        assert!(
            !r.implementation.contains("from_publisher")
                && !r.implementation.contains("Processor")
                && !r.implementation.contains("from_stream"),
            "{r:#?}"
        );
    }
    for verification in ["stream_bridge", "sink_subscriber", "async_callback"] {
        let mine: Vec<_> = records
            .iter()
            .filter(|r| r.verification == verification)
            .collect();
        assert!(
            !mine.is_empty(),
            "no built-in runs the {verification} verification"
        );
        assert!(
            mine.iter().all(|r| r.outcome == Outcome::Passed),
            "{mine:#?}"
        );
    }
    // Issue 20, item 11: the summary fits one screen's width, a few lines per implementation.
    let mut out = Vec::new();
    rs_tck::report::write_summary(&mut out, &records).unwrap();
    let text = String::from_utf8(out).unwrap();
    let implementations = records
        .iter()
        .map(|r| r.implementation.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    assert!(text.lines().count() <= 1 + 3 * implementations, "{text}");
    assert!(
        text.lines()
            .all(|l| l.chars().count() <= rs_tck::report::SUMMARY_WIDTH),
        "{text}"
    );
}

#[test]
fn a_skip_from_configuration_is_reported_with_its_reason() {
    let v = Broken {
        max_elements: 2,
        failed: None,
        ..Broken::correct()
    };
    assert_eq!(v.max_elements_from_publisher(), 2);
    let o = run_check(
        v.clone(),
        "required_spec102_may_signal_less_than_requested_and_terminate_subscription",
    );
    assert_eq!(o.outcome, Outcome::Skipped);
    assert!(o.detail.contains("required elements nr: 3"), "{o:?}");
    let o = run_check(v, "optional_spec104_must_signal_on_error_when_fails");
    assert_eq!(o.outcome, Outcome::Skipped);
    assert!(o.detail.contains("create_failed_publisher"), "{o:?}");
    let o = run_check(
        Broken {
            max_elements: publisher::PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE,
            ..Broken::correct()
        },
        "required_spec105_must_signal_on_complete_when_finite_stream_terminates",
    );
    assert_eq!(o.outcome, Outcome::Skipped);
    assert!(o.detail.contains("on_complete"), "{o:?}");
}
