//! Self-tests of the identity-processor verification.
//!
//! 1. The correct configuration of the test processor (`rs_impl`'s `IdentityProcessor` behind
//!    knob-free interceptors) passes every check that can fail.
//! 2. For **every** one of the 77 checks that can fail, at least one deliberately broken
//!    processor (`…_should_fail_by_…`, built from `support/broken_processor.rs`, whose knobs are
//!    the broken publisher's downstream, the broken subscriber's upstream, and a few of its
//!    own) makes exactly that check fail (or, for an optional check, be skipped as unmet) with a
//!    message naming the rule and the reason. The case names say the fault; the table of
//!    check → fault is the list of cases below (`CASES`), one line each.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use rs_tck::hints;
use rs_tck::outcome::Outcome;
use rs_tck::processor::{self, IdentityProcessorVerification, UpstreamErrorPolicy};
use support::broken_multicast::{BrokenMulticastProcessor, MulticastKnobs};
use support::broken_processor::{BrokenIdentity, ProcKnobs};
use support::broken_publisher::{Broken, Knobs};
use support::broken_subscriber::SubKnobs;
use support::expect::{
    assert_case_with_hint, assert_coverage, assert_every_check_has_a_hint, not_passed, Expect,
};

fn pubk(f: impl FnOnce(&mut Knobs)) -> BrokenIdentity {
    let mut k = Knobs::default();
    f(&mut k);
    BrokenIdentity {
        publisher: Broken::publisher(k),
        ..Default::default()
    }
}

fn subk(f: impl FnOnce(&mut SubKnobs)) -> BrokenIdentity {
    let mut k = SubKnobs::default();
    f(&mut k);
    BrokenIdentity {
        subscriber: k,
        ..Default::default()
    }
}

fn prock(f: impl FnOnce(&mut ProcKnobs)) -> BrokenIdentity {
    let mut k = ProcKnobs::default();
    f(&mut k);
    BrokenIdentity {
        processor: k,
        ..Default::default()
    }
}

fn multicast(f: impl FnOnce(&mut MulticastKnobs)) -> BrokenMulticastProcessor {
    let mut k = MulticastKnobs::default();
    f(&mut k);
    BrokenMulticastProcessor(k)
}

fn failedk(f: impl FnOnce(&mut Knobs)) -> BrokenIdentity {
    let mut k = Knobs::default();
    f(&mut k);
    BrokenIdentity {
        publisher: Broken::failed(k),
        ..Default::default()
    }
}

/// The correct processor, with `f` applied to the downstream hooks.
fn hooks(f: impl FnOnce(&mut Broken)) -> BrokenIdentity {
    let mut b = Broken::correct();
    f(&mut b);
    BrokenIdentity {
        publisher: b,
        ..Default::default()
    }
}

fn check_case<V: IdentityProcessorVerification>(
    check: &str,
    expect: Expect,
    v: V,
    needles: &[&str],
    hint: Option<&str>,
) {
    assert_case_with_hint(
        &processor::verify("broken", v),
        check,
        expect,
        needles,
        hint,
    );
}

macro_rules! should_fail {
    ($( $case:ident : $check:ident, $expect:ident, $v:expr, [$($needle:literal),* $(,)?] $(, hint: $hint:expr)? ;)*) => {
        $(
            #[test]
            fn $case() {
                let hint: Option<&str> = None $(.or(Some($hint)))?;
                check_case(stringify!($check), Expect::$expect, $v, &[$($needle),*], hint);
            }
        )*
        /// (self-test name, check name) of every should-fail case.
        const CASES: &[(&str, &str)] = &[$((stringify!($case), stringify!($check))),*];
    };
}

should_fail! {
    // ---- the 46 publisher tests, through the processor (downstream faults) ----
    p_create_publisher1_should_fail_by_duplicating_an_element:
        required_create_publisher1_must_produce_a_stream_of_exactly1_element, Fail, pubk(|k| k.len_offset = 1), ["exactly 1 element"], hint: hints::TOO_MANY_ELEMENTS;
    p_create_publisher3_should_fail_by_dropping_an_element:
        required_create_publisher3_must_produce_a_stream_of_exactly3_elements, Fail, pubk(|k| k.len_offset = -1), ["produced only 2 elements"];
    p_validate_max_elements_should_fail_by_exceeding_i64_max:
        required_validate_max_elements_from_publisher, Fail, hooks(|b| b.max_elements = u64::MAX), ["above i64::MAX"];
    p_validate_recursion_depth_should_fail_by_being_zero:
        required_validate_bounded_depth_of_on_next_and_request_recursion, Fail, hooks(|b| b.depth = 0), ["at least 1"];
    p_spec101_should_fail_by_emitting_more_than_requested:
        required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements, Fail, pubk(|k| k.extra_elements = 1), ["rule 1.1"];
    p_spec102_should_fail_by_not_completing:
        required_spec102_may_signal_less_than_requested_and_terminate_subscription, Fail, pubk(|k| k.no_terminal = true), ["rule 1.2", "no on_complete"];
    p_spec103_should_fail_by_losing_a_wake_up:
        stochastic_spec103_must_signal_on_methods_sequentially, Fail, pubk(|k| k.drop_requests_while_draining = true), ["rule 1.3", "lost wake-up"];
    p_spec104_should_fail_by_a_failed_publisher_without_on_error:
        optional_spec104_must_signal_on_error_when_fails, Fail, failedk(|k| k.no_terminal = true), ["rule 1.4", "on_error"];
    p_spec105_should_fail_by_not_completing:
        required_spec105_must_signal_on_complete_when_finite_stream_terminates, Fail, pubk(|k| k.no_terminal = true), ["rule 1.5"], hint: hints::ELEMENTS_RUN_OUT;
    p_spec105_empty_should_fail_by_not_completing:
        optional_spec105_empty_stream_must_terminate_by_signalling_on_complete, Unmet, pubk(|k| k.no_terminal = true), ["rule 1.5"], hint: hints::ELEMENTS_RUN_OUT;
    p_spec106_should_fail_by_keeping_the_subscriber_after_on_complete:
        untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called, Fail, pubk(|k| k.keep_subscriber_after_terminal = true), ["rule 1.6", "still holds the subscriber"];
    p_spec107_should_fail_by_on_next_after_on_complete:
        required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled, Fail, pubk(|k| k.signal_after_terminal = true), ["rule 1.7", "on_next(999)"];
    p_spec107_error_should_fail_by_on_complete_after_on_error:
        untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled, Fail, failedk(|k| k.signal_after_terminal = true), ["rule 1.7", "after on_error"];
    p_spec108_should_fail_by_completing_on_cancel:
        untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals, Fail, pubk(|k| k.complete_on_cancel = true), ["rule 1.8", "on_complete after cancel"];
    p_spec109_should_fail_by_not_calling_on_subscribe:
        required_spec109_must_issue_on_subscribe_for_non_null_subscriber, Fail, pubk(|k| k.skip_on_subscribe = true), ["rule 1.9"];
    p_spec109_must_not_panic_should_fail_by_panicking_in_subscribe:
        untested_spec109_subscribe_should_not_throw_non_fatal_throwable, Fail, pubk(|k| k.panic_in_subscribe = true), ["rule 1.9", "panicked"];
    p_spec109_rejection_should_fail_by_on_error_before_on_subscribe:
        required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe, Fail, failedk(|k| k.terminal_before_on_subscribe = true), ["rule 1.9", "before on_error"];
    // A processor declares any number of subscribers by default (max_supported_subscribers):
    // its 1.11 checks are required.
    p_spec111_multi_subscribe_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_may_support_multi_subscribe, Fail, pubk(|k| k.unicast = true), ["rule 1.11", "on_error", "required"];
    p_spec111_registered_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals, Fail, pubk(|k| k.unicast = true), ["rule 1.11", "on_error", "required"];
    p_spec111_one_by_one_should_fail_by_rejecting_the_second_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one, Fail, pubk(|k| k.unicast = true), ["rule 1.11", "on_error", "required"];
    p_spec111_many_upfront_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront, Fail, pubk(|k| k.per_subscriber_sequence = true), ["rule 1.11", "subscriber 2 received", "required"];
    p_spec111_many_upfront_complete_should_fail_by_a_different_sequence_per_subscriber:
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected, Fail, pubk(|k| k.per_subscriber_sequence = true), ["rule 1.11", "subscriber 2 received", "required"];
    p_spec111_keep_receiving_should_fail_by_dropping_the_earlier_subscriber:
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, Fail, pubk(|k| k.drop_earlier_subscriber_on_join = true), ["rule 1.11", "subscriber 1 must keep receiving", "required"];
    // A ring that grows by copying its slots as they lie: the readers behind the wrap point
    // read the wrong elements (the fault shows only while the ring grows).
    p_spec111_growth_should_fail_by_growing_without_unwrapping:
        required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows, Fail, multicast(|k| k.grow_without_unwrapping = true), ["rule 1.11", "subscriber 2 received element #"];
    p_spec213_on_subscribe_should_fail_by_signalling_after_the_panic:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled, Fail, pubk(|k| k.swallow_subscriber_panics = true), ["rule 2.13", "after its on_subscribe panicked"];
    p_spec213_on_next_should_fail_by_signalling_after_the_panic:
        required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled, Fail, pubk(|k| k.swallow_subscriber_panics = true), ["rule 2.13", "after its on_next panicked"];
    p_spec213_multicast_should_fail_by_signalling_after_the_panic:
        required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics, Fail, pubk(|k| k.swallow_subscriber_panics = true), ["rule 2.13", "to subscriber 2 after its on_next panicked"];
    p_bounded_buffer_should_fail_by_requesting_unbounded_demand_upstream:
        required_must_not_request_more_from_upstream_than_the_declared_buffer_holds, Fail, prock(|k| k.request_unbounded_upstream = true), ["bounded buffering", "unbounded demand", "declared buffer of 16"];
    p_spec302_should_fail_by_panicking_on_a_reentrant_request:
        required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe, Fail, pubk(|k| k.reentrant_request_panics = true), ["rule 3.2", "re-entrant request"];
    p_spec303_should_fail_by_recursing_without_a_trampoline:
        required_spec303_must_not_allow_unbounded_recursion, Fail, pubk(|k| k.reentrant_request_panics = true), ["rule 3.3", "re-entrant request"];
    p_spec306_should_fail_by_ignoring_cancel:
        required_spec306_after_subscription_is_cancelled_request_must_be_nops, Fail, pubk(|k| k.ignore_cancel = true), ["rule 3.6"];
    p_spec307_should_fail_by_panicking_on_a_repeated_cancel:
        required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops, Fail, pubk(|k| k.panic_on_repeated_cancel = true), ["rule 3.7", "cancel panicked"];
    p_spec309_zero_should_fail_by_ignoring_request_zero:
        required_spec309_request_zero_must_signal_illegal_argument_exception, Fail, pubk(|k| k.ignore_zero_request = true), ["rule 3.9", "no on_error"];
    p_spec309_negative_should_fail_by_ignoring_request_zero:
        required_spec309_request_negative_number_must_signal_illegal_argument_exception, Fail, pubk(|k| k.ignore_zero_request = true), ["rule 3.9", "no on_error"];
    p_spec309_message_should_fail_by_an_unspecific_message:
        optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message, Unmet, pubk(|k| k.zero_request_message = Some("bad demand")), ["rule 3.9", "bad demand"];
    p_spec312_should_fail_by_flushing_on_cancel:
        required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling, Fail, pubk(|k| k.flush_on_cancel = true), ["rule 3.12"];
    p_spec312_unbounded_should_fail_by_ignoring_cancel_under_unbounded_demand:
        required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling, Fail, pubk(|k| k.ignore_cancel_under_unbounded_demand = true), ["rule 3.12", "kept signalling"];
    p_spec313_should_fail_by_keeping_the_subscriber_after_cancel:
        required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber, Fail, pubk(|k| k.keep_subscriber_after_cancel = true), ["rule 3.13", "still holds the subscriber"];
    p_spec317_should_fail_by_erroring_on_large_demand:
        required_spec317_must_support_a_pending_element_count_up_to_long_max_value, Fail, pubk(|k| k.error_on_demand_above = Some(i32::MAX as u64)), ["rule 3.17", "demand too large"];
    p_spec317_cumulative_should_fail_by_erroring_on_large_demand:
        required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value, Fail, pubk(|k| k.error_on_demand_above = Some(i32::MAX as u64)), ["rule 3.17", "demand too large"];
    p_spec317_overflow_should_fail_by_panicking_on_demand_overflow:
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, Fail, pubk(|k| k.panic_on_demand_overflow = true), ["rule 3.17", "demand overflow"];
    // ---- the 27 whitebox tests, through the processor (upstream faults) ----
    w_happy_path_should_fail_by_not_requesting_upstream:
        required_exercise_whitebox_happy_path, Fail, subk(|k| k.no_request = true), ["happy path"];
    w_spec201_should_fail_by_not_requesting_upstream:
        required_spec201_must_signal_demand_via_subscription_request, Fail, subk(|k| k.no_request = true), ["rule 2.1"];
    w_spec201_should_fail_by_requesting_zero_upstream:
        required_spec201_must_signal_demand_via_subscription_request, Fail, subk(|k| k.request_zero = true), ["request(0)"];
    w_spec203_complete_should_fail_by_requesting_in_on_complete:
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete, Fail, subk(|k| k.request_in_on_complete = true), ["rule 2.3"];
    w_spec203_error_should_fail_by_cancelling_in_on_error:
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error, Fail, subk(|k| k.cancel_in_on_error = true), ["rule 2.3"];
    w_spec204_should_fail_by_requesting_upstream_after_the_terminal_signal:
        untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error, Fail, subk(|k| k.keep_subscription_after_terminal = true), ["rule 2.4"];
    w_spec205_should_fail_by_not_cancelling_the_second_subscription:
        required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, Fail, subk(|k| k.ignore_second_subscription = true), ["rule 2.5"];
    w_spec206_should_fail_by_cancelling_upstream_only_at_the_next_signal:
        untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid, Fail, subk(|k| k.lazy_cancel = true), ["rule 2.6"];
    w_spec207_should_fail_by_requesting_upstream_from_the_callers_thread:
        untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, Fail, subk(|k| k.unserialized = true), ["rule 2.7", "overlapped"];
    w_spec208_should_fail_by_panicking_on_next_after_cancel:
        required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel, Fail, subk(|k| k.panic_on_next_after_cancel = true), ["rule 2.8", "panicked"];
    w_spec209_with_request_should_fail_by_panicking_in_on_complete:
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call, Fail, subk(|k| k.panic_on_complete = true), ["rule 2.9", "panicked"];
    w_spec209_without_request_should_fail_by_panicking_in_on_complete:
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call, Fail, subk(|k| k.panic_on_complete = true), ["rule 2.9", "panicked"];
    w_spec210_with_request_should_fail_by_panicking_in_on_error:
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call, Fail, subk(|k| k.panic_on_error = true), ["rule 2.10", "panicked"];
    w_spec210_without_request_should_fail_by_panicking_in_on_error:
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call, Fail, subk(|k| k.panic_on_error = true), ["rule 2.10", "panicked"];
    w_spec213_should_fail_by_panicking_in_on_next:
        untested_spec213_failing_on_signal_invocation, Fail, subk(|k| k.panic_on_next = true), ["rule 2.13", "on_next panicked"];
    w_spec301_should_fail_by_requesting_from_a_thread_left_behind:
        untested_spec301_must_not_be_called_outside_subscriber_context, Fail, subk(|k| k.requests_after_drop = true), ["rule 3.1"];
    w_spec308_should_fail_by_dropping_elements:
        required_spec308_request_must_register_given_number_elements_to_be_produced, Fail, prock(|k| k.drop_every_second_element = true), ["rule 3.8"];
    w_spec310_should_fail_by_holding_its_state_across_an_upstream_request:
        untested_spec310_request_may_synchronously_call_on_next_on_subscriber, Fail, subk(|k| k.lock_across_request = true), ["rule 3.10", "panicked"];
    w_spec311_should_fail_by_holding_its_state_across_an_upstream_request:
        untested_spec311_request_may_synchronously_call_on_complete_or_on_error, Fail, subk(|k| k.lock_across_request = true), ["rule 3.11", "panicked"];
    w_spec314_should_fail_by_panicking_when_dropped_without_a_terminal_signal:
        untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists, Fail, subk(|k| k.panic_on_drop_without_terminal = true), ["3.14", "panicked"];
    w_spec315_should_fail_by_panicking_on_a_repeated_downstream_cancel:
        untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error, Fail, pubk(|k| k.panic_on_repeated_cancel = true), ["rule 3.15", "cancel panicked"];
    w_spec316_should_fail_by_ignoring_a_downstream_request_zero:
        untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber, Fail, pubk(|k| k.ignore_zero_request = true), ["rule 3.16", "on_error"];
    w_spec316_should_fail_by_panicking_in_a_downstream_request:
        untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber, Fail, pubk(|k| k.panic_in_request = true), ["rule 3.16", "panicked"];
    // ---- the processor's own three ----
    ip_spec104_should_fail_by_erroring_only_the_first_subscriber:
        required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error, Fail, prock(|k| k.error_to_first_only = true), ["rule 1.4", "subscriber 2"];
    ip_spec42_should_fail_by_holding_the_error_until_a_request:
        must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream, Fail, prock(|k| k.delay_error_until_request = true), ["rule 4.2", "without a request"];
    ip_spec42_should_fail_by_cancelling_the_failed_upstream:
        must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream, Fail, prock(|k| k.cancel_upstream_after_error = true), ["rule 4.2", "cancelled that subscription"];
    // Issue 21, item 4: an upstream error with elements in flight, held to the declared policy.
    ip_spec402_in_flight_should_fail_by_holding_the_error_until_a_request:
        required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight, Fail, prock(|k| k.delay_error_until_request = true), ["rule 4.2", "Immediately", "at once, without a request", "no on_error"], hint: hints::ERROR_IMMEDIATELY;
    ip_spec402_in_flight_declared_after_held_should_fail_by_an_error_that_overtakes_them:
        required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight, Fail, BrokenIdentity { error_policy: UpstreamErrorPolicy::AfterHeldElements, ..Default::default() }, ["rule 4.2", "AfterHeldElements", "must wait for the", "unexpected on_error"], hint: hints::ERROR_AFTER_HELD;
    ip_spec402_in_flight_declared_after_held_should_fail_by_waiting_for_a_request_after_the_last:
        required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight, Fail, BrokenIdentity { error_policy: UpstreamErrorPolicy::AfterHeldElements, ..prock(|k| { k.error_after_held_elements = true; k.delay_error_until_request = true; }) }, ["rule 4.2", "after the last held element", "no on_error"], hint: hints::ERROR_AFTER_HELD;
    ip_long_ago_should_fail_by_coordinating_without_saying_so:
        required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago, Fail, BrokenIdentity { coordinated: false, ..Default::default() }, ["does_coordinated_emission"];
}

#[test]
fn every_check_has_a_should_fail_case() {
    let suite = processor::verify("broken", BrokenIdentity::default());
    assert_eq!(suite.tests.len(), 77);
    let names: Vec<&str> = suite.tests.iter().map(|t| t.name).collect();
    let cannot_fail = support::cannot_fail::processor();
    assert_coverage(&names, CASES, &cannot_fail);
    assert!(CASES.len() >= 77 - cannot_fail.len());
}

/// Issue 21, item 7: the loom processor scenarios have names of their own, apart from the
/// publisher and subscriber scenarios of the same rules (and the same hints).
#[test]
fn the_loom_processor_scenarios_have_names_of_their_own() {
    let processor = rs_tck::loom::verify_processor("p", BrokenIdentity::default());
    let publisher =
        rs_tck::loom::verify_publisher("p", support::broken_publisher::Broken::correct());
    assert_eq!(processor.tests.len(), 6);
    for t in &processor.tests {
        assert!(t.name.contains("_processor_"), "{}", t.name);
        assert!(publisher.test(t.name).is_none(), "{}", t.name);
    }
    for (p, q) in publisher.tests.iter().zip(&processor.tests) {
        assert_eq!(p.rule, q.rule);
        assert_eq!(p.hint, q.hint);
    }
}

#[test]
fn every_check_has_a_hint() {
    assert_every_check_has_a_hint(&processor::verify("broken", BrokenIdentity::default()));
    assert_every_check_has_a_hint(&rs_tck::loom::verify_processor(
        "broken",
        BrokenIdentity::default(),
    ));
}

#[test]
fn the_test_processor_without_knobs_passes_every_check() {
    let cannot_fail = support::cannot_fail::processor();
    let others = not_passed(&processor::verify("correct", BrokenIdentity::default()));
    for (name, o) in &others {
        // Coordinated emission (IdentityProcessor's) included: the 1.11 checks let every
        // subscriber request before they wait.
        assert!(cannot_fail.contains(&name.as_str()), "{name}: {o:?}");
        assert_ne!(o.outcome, Outcome::Failed, "{name}: {o:?}");
        assert!(!o.detail.is_empty());
    }
}

/// A processor that delivers its held elements before an upstream error passes the in-flight
/// check when it declares that policy (and the JVM's 4.2 check, where nothing is held).
#[test]
fn a_processor_that_errors_after_its_held_elements_passes_when_it_declares_so() {
    let v = BrokenIdentity {
        error_policy: UpstreamErrorPolicy::AfterHeldElements,
        ..prock(|k| k.error_after_held_elements = true)
    };
    let suite = processor::verify("after held", v);
    for name in [
        "required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight",
        "must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream",
    ] {
        let o = suite.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Passed, "{name}: {o:?}");
    }
}

/// A processor that declares one subscriber at most has its 1.11 checks skipped as not
/// applicable (and the processor's own two-subscriber check too), not failed.
#[test]
fn a_unicast_declaration_skips_the_multicast_checks() {
    let v = BrokenIdentity {
        max_subscribers: 1,
        ..pubk(|k| k.unicast = true)
    };
    let suite = processor::verify("unicast", v);
    let multicast: Vec<_> = suite.tests.iter().filter(|t| t.rule == "1.11").collect();
    assert_eq!(multicast.len(), 8);
    for t in multicast
        .into_iter()
        .filter(|t| t.name != "declaration_max_supported_subscribers")
    {
        let o = t.run();
        assert_eq!(o.outcome, Outcome::Skipped, "{}: {o:?}", t.name);
        assert!(o.detail.contains("declares at most 1"), "{}: {o:?}", t.name);
    }
}

/// The growth case's processor (a shared ring that starts at 4 and grows to its buffer) is
/// correct with every knob off: it passes the growth check, as it does the other multicast
/// checks. With its ring broken (grown without unwrapping), it still passes those others —
/// they stay within its first sizes, or grow it before the readers spread — and fails only
/// where the ring grows under readers at different positions: the should-fail case is about
/// growth, nothing else.
#[test]
fn the_growth_case_fails_for_growth_alone() {
    const GROWTH: &str =
        "required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows";
    let others: Vec<&str> = processor::verify("names", BrokenMulticastProcessor::default())
        .tests
        .iter()
        .filter(|t| t.rule == "1.11" && t.name != GROWTH)
        .map(|t| t.name)
        .collect();
    assert_eq!(others.len(), 7, "{others:?}");
    let correct = processor::verify("correct", BrokenMulticastProcessor::default());
    let broken = processor::verify("broken", multicast(|k| k.grow_without_unwrapping = true));
    for name in others.iter().chain([&GROWTH]) {
        let o = correct.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Passed, "correct, {name}: {o:?}");
    }
    for name in &others {
        let o = broken.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Passed, "broken, {name}: {o:?}");
    }
}

/// Issue 21, item 3: a processor that declares no buffer bound has the bounded-buffering check
/// skipped, with the reason naming the setting to declare.
#[test]
fn a_processor_without_a_declared_buffer_bound_is_skipped_saying_so() {
    struct Undeclared;
    impl IdentityProcessorVerification for Undeclared {
        type Item = u64;
        fn create_identity_processor(
            &self,
            buffer_size: usize,
        ) -> impl rs_api::Processor<u64, u64> + Clone + Send + 'static {
            rs_impl::processor::IdentityProcessor::new(buffer_size)
        }
        fn create_element(&self, element: u64) -> u64 {
            element
        }
        fn max_buffered_elements(&self, _buffer_size: usize) -> rs_tck::publisher::BufferBound {
            rs_tck::publisher::BufferBound::Undeclared
        }
    }
    let o = processor::verify("undeclared", Undeclared)
        .test("required_must_not_request_more_from_upstream_than_the_declared_buffer_holds")
        .unwrap()
        .run();
    assert_eq!(o.outcome, Outcome::Skipped, "{o:?}");
    assert!(o.detail.contains("declares no buffer bound"), "{o:?}");
    assert!(o.detail.contains("max_buffered_elements"), "{o:?}");
    assert!(!o.detail.contains("not built on an upstream"), "{o:?}");
}
