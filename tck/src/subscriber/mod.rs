//! Subscriber verification: the JVM TCK's `SubscriberWhiteboxVerification` (27 tests, module
//! [`whitebox`]) and `SubscriberBlackboxVerification` (26 tests, module [`blackbox`]).
//!
//! | item | what it is |
//! |---|---|
//! | [`ManualPublisher`] | the TCK-driven upstream: sends only against demand, checks every call the subscriber makes |
//! | [`WhiteboxSubscriberProbe`], [`SubscriberPuppet`] | what a whitebox subscriber reports to, and how the TCK drives it |
//! | [`ProbeReporting`] | a thin wrapper that makes an existing subscriber report to the probe |
//! | [`whitebox::verify`], [`blackbox::verify`] | the suites, for [`tck_main!`](crate::tck_main) or the runner |
//!
//! # Whitebox or blackbox?
//!
//! Run **both** when you can; they check different things. Which one a subscriber can run:
//!
//! * **Blackbox** ([`SubscriberBlackboxVerification`]) needs only a factory: the TCK sees the
//!   subscriber from outside, through the calls it makes on its subscription. Use it for any
//!   subscriber, also one you cannot change (a third party's, a type without a handle), and
//!   first for one that manages its own demand. What it cannot do is make the subscriber act:
//!   the rules that need the subscriber to cancel or to request a given amount when told
//!   (2.6, 2.8, 3.8, 3.14) are untested there, and it cannot see whether the subscriber
//!   processed each signal. The loom mode's 2.5 scenario takes a blackbox verification too
//!   ([`loom::verify_subscriber`](crate::loom::verify_subscriber)).
//! * **Whitebox** ([`SubscriberWhiteboxVerification`]) needs the subscriber to report every
//!   signal it processed to a [`WhiteboxSubscriberProbe`] and to hand the TCK a
//!   [`SubscriberPuppet`] (`trigger_request`, `signal_cancel`) — write it in, or wrap an
//!   existing subscriber in [`ProbeReporting`] with a puppet over its handle. In exchange the
//!   TCK drives it: 2.6, 2.8, 3.8 and 3.14 are real checks, 2.4 is checked on what the puppet
//!   does after the end, and every element and error must reach the probe as sent. For a
//!   subscriber that keeps requesting by itself, a puppet whose `trigger_request` does nothing
//!   is correct: the checks wait for the subscriber's own requests (rule 2.7's check included,
//!   which cancels while any call of the subscriber is in progress).
//!
//! A processor's subscriber side runs the whitebox tests through the processor verification
//! ([`crate::processor`]); this workspace's ready-made subscribers run both (the runner's
//! registry).
//!
//! # What the TCK's publisher checks on every call
//!
//! The subscriber under test gets its subscription from a [`ManualPublisher`], which flops
//! (records an error that fails the test) on:
//!
//! | call | rule |
//! |---|---|
//! | `request(0)` | 2.1/3.9: a subscriber requests at least 1 (the JVM's `expectRequest` check) |
//! | `request`/`cancel` from inside `on_complete`/`on_error` (same thread) | 2.3 |
//! | `request` after `on_complete`/`on_error` | 2.4 (a `cancel` there is tolerated: 3.7 makes it a no-op, and cancel-on-drop guards are idiomatic) |
//! | `request`/`cancel` after the publisher dropped the subscriber | 3.1 (the call came from a thread or handle the subscriber left behind) |
//! | two calls in progress at once | 2.7 |
//! | a panicking signal (`catch_unwind` around each) or a panicking `Drop` | 2.13 |
//!
//! # The 27 whitebox tests
//!
//! | JVM TCK test | ours | rule | what ours checks |
//! |---|---|---|---|
//! | `required_exerciseWhiteboxHappyPath` | `required_exercise_whitebox_happy_path` | setup | as the JVM: request, 2 elements, cancel |
//! | `required_spec201_mustSignalDemandViaSubscriptionRequest` | `required_spec201_must_signal_demand_via_subscription_request` | 2.1 | as the JVM |
//! | `untested_spec202_shouldAsynchronouslyDispatch` | `untested_spec202_should_asynchronously_dispatch` | 2.2 | **untested**: a recommendation; either choice is legal |
//! | `required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnComplete` | `required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete` | 2.3 | a thread mark instead of the JVM's stack walk |
//! | `required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnError` | `required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error` | 2.3 | as above |
//! | `untested_spec204_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError` | `untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error` | 2.4 | **real:** after `on_complete` (and, separately, `on_error`) `trigger_request(1)` twice must not reach the subscription |
//! | `required_spec205_mustCallSubscriptionCancelIfItAlreadyHasAnSubscriptionAndReceivesAnotherOnSubscribeSignal` | `required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal` | 2.5 | as the JVM |
//! | `untested_spec206_mustCallSubscriptionCancelIfItIsNoLongerValid` | `untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid` | 2.6 | **real:** `signal_cancel()` with no further signal to come must still reach the subscription (no lazy cancel) |
//! | `untested_spec207_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization` | `untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization` | 2.7 | **real:** the puppet is driven from two threads at once while elements are delivered against the demand and each call lingers in the subscription; the cancel comes while a call is in progress (the puppet's, or the subscriber's own from inside `on_next`, so a `trigger_request` that does nothing still gets checked); an overlap fails |
//! | `required_spec208_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel` | `required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel` | 2.8 | as the JVM |
//! | `required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithPrecedingRequestCall` | `required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call` | 2.9 | as the JVM |
//! | `required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithoutPrecedingRequestCall` | `required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call` | 2.9 | as the JVM |
//! | `required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithPrecedingRequestCall` | `required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call` | 2.10 | as the JVM; the probe must see the very error sent |
//! | `required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithoutPrecedingRequestCall` | `required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call` | 2.10 | as above |
//! | `untested_spec211_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents` | `untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events` | 2.11 | **skipped, decided by the types** (below) |
//! | `untested_spec212_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality_specViolation` | `untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation` | 2.12 | **skipped, decided by the types** (below) |
//! | `untested_spec213_failingOnSignalInvocation` | `untested_spec213_failing_on_signal_invocation` | 2.13 | **real:** three legal sequences (elements then `on_complete`; `on_error` without request; `on_next` after cancel): no signal may panic |
//! | `required_spec213_onSubscribe_mustThrowNullPointerExceptionWhenParametersAreNull` | `required_spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null` | 2.13 | **skipped, decided by the types**: no null |
//! | `required_spec213_onNext_mustThrowNullPointerExceptionWhenParametersAreNull` | `required_spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null` | 2.13 | as above |
//! | `required_spec213_onError_mustThrowNullPointerExceptionWhenParametersAreNull` | `required_spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null` | 2.13 | as above |
//! | `untested_spec301_mustNotBeCalledOutsideSubscriberContext` | `untested_spec301_must_not_be_called_outside_subscriber_context` | 3.1 | **real:** after cancel the publisher drops the subscriber; no call may follow from anything it left behind |
//! | `required_spec308_requestMustRegisterGivenNumberElementsToBeProduced` | `required_spec308_request_must_register_given_number_elements_to_be_produced` | 3.8 | as the JVM |
//! | `untested_spec310_requestMaySynchronouslyCallOnNextOnSubscriber` | `untested_spec310_request_may_synchronously_call_on_next_on_subscriber` | 3.10 | **real:** a synchronous publisher delivers from inside the `request` that `trigger_request(2)` makes (on a watchdog thread): no deadlock, no panic, both elements seen |
//! | `untested_spec311_requestMaySynchronouslyCallOnCompleteOrOnError` | `untested_spec311_request_may_synchronously_call_on_complete_or_on_error` | 3.11 | **real:** as 3.10, with `on_complete` and (separately) `on_error` delivered from inside `request` |
//! | `untested_spec314_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists` | `untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists` | 3.14 | **real:** after cancel the publisher shuts down, dropping the subscriber without a terminal signal; its `Drop` must not panic |
//! | `untested_spec315_cancelMustNotThrowExceptionAndMustSignalOnError` | `untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error` | 3.15 | **untested** for a subscriber (below); real in the processor verification |
//! | `untested_spec316_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber` | `untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber` | 3.16 | as above |
//!
//! # The 26 blackbox tests
//!
//! The names are the whitebox ones with `_blackbox_` after the rule (the JVM's, in snake case):
//! `required_spec201_blackbox_must_signal_demand_via_subscription_request`, … The blackbox TCK
//! sees only the calls the subscriber makes; it drives it with the optional
//! [`trigger_request`](blackbox::SubscriberBlackboxVerification::trigger_request) hook.
//!
//! | rule | JVM | ours |
//! |---|---|---|
//! | 2.1 | req | as the JVM: up to 512 elements against demand, then `on_complete` |
//! | 2.2 | untested | untested (a recommendation) |
//! | 2.3 ×2 | req | as the JVM (thread mark) |
//! | 2.4 | untested | **real:** after `on_complete`/`on_error`, the hook is called and the no-signals window watched: no `request` may come |
//! | 2.5 | req | as the JVM: cancel the second subscription, never request from it |
//! | 2.6 | untested | untested: the blackbox TCK cannot tell the subscriber it no longer needs the subscription (whitebox checks it) |
//! | 2.7 | untested | **real:** 16 elements delivered from alternating threads while each call lingers; an overlap fails |
//! | 2.8 | untested | untested: the TCK cannot make a blackbox subscriber cancel (whitebox checks it) |
//! | 2.9 ×2, 2.10 ×2 | req | as the JVM |
//! | 2.11, 2.12 | untested | skipped, decided by the types |
//! | 2.13 failing | untested | **real:** elements then `on_complete`; `on_error` without request: no panic |
//! | 2.13 NPE ×3 | req | skipped, decided by the types |
//! | 3.1 | untested | **real:** after `on_complete` the publisher drops the subscriber; no call may follow |
//! | 3.8 | untested | untested: the TCK cannot make a blackbox subscriber request a given `n` (whitebox checks it) |
//! | 3.10, 3.11 | untested | **real:** a synchronous publisher; elements (and `on_complete`, `on_error`) requested from inside a signal or the hook are delivered right after it on the same thread |
//! | 3.14 | untested | untested: follows a cancel, which the TCK cannot cause (whitebox checks it) |
//! | 3.15, 3.16 | untested | untested (below) |
//!
//! # Decisions
//!
//! * **Decided by the types (skipped with the reason, never passed):** the NPE tests of 2.13
//!   (no null in Rust), 2.11 (signals move their arguments into `&mut self` methods of a
//!   `Send` subscriber: any hand-off to another thread goes through a channel or lock, which
//!   orders the call before the processing) and 2.12 (`subscribe` takes the subscriber by
//!   value, so no publisher can hand one subscriber to `subscribe` twice).
//! * **3.15, 3.16** bind the `Subscription`; in a subscriber verification that is the TCK's
//!   own. They are checked on publishers (the publisher verification's must-not-panic test
//!   guards every `request`/`cancel`) and on processors (the identity-processor verification
//!   runs these two tests on the processor's downstream subscription).
//! * **Sending only against demand.** As the JVM TCK since 1.0.3 (#280), the TCK waits for
//!   each actual request before it sends; a subscriber that requests one at a time passes.
//! * **Elements** come from `create_element` directly (the JVM tees them from a helper
//!   publisher).
//!
//! # Each check can fail
//!
//! `tck/tests/subscriber_self_test.rs` runs every check over a configurable broken subscriber
//! (`tck/tests/support/broken_subscriber.rs`); the table of check → broken subscriber is in
//! that file's docs.

pub mod blackbox;
mod manual_publisher;
mod probe;
pub mod whitebox;

use rs_api::Error;

pub use blackbox::SubscriberBlackboxVerification;
pub use manual_publisher::{ManualPublisher, Mode, SecondSubscription};
pub use probe::{ProbeReporting, SubscriberPuppet, WhiteboxSubscriberProbe};
pub use whitebox::SubscriberWhiteboxVerification;

use crate::env::TestEnvironment;
use crate::outcome::{Stop, TestResult};

pub(crate) const NPE_REASON: &str =
    "decided by the types: Rust references and values cannot be null, so there is no null \
     argument to reject";

pub(crate) const SPEC211_REASON: &str =
    "decided by the types: signals move their arguments into `&mut self` methods of a `Send` \
     subscriber; handing an event to another thread needs a channel or lock, which orders the \
     call before the processing (safe Rust cannot process an event before the call that \
     delivered it)";

pub(crate) const SPEC212_REASON: &str =
    "decided by the types: Publisher::subscribe takes the subscriber by value, so no publisher \
     can pass one subscriber to subscribe twice, and each subscribe call owns its subscriber";

pub(crate) const SPEC315_REASON: &str =
    "rule 3.15 binds the Subscription, which in a subscriber verification is the TCK's own; it \
     is checked on publishers (the publisher verification guards every cancel) and on \
     processors (the identity-processor verification runs this test on the processor's \
     downstream subscription)";

pub(crate) const SPEC316_REASON: &str =
    "rule 3.16 binds the Subscription, which in a subscriber verification is the TCK's own; it \
     is checked on publishers (the publisher verification guards every request) and on \
     processors (the identity-processor verification runs this test on the processor's \
     downstream subscription)";

pub(crate) fn decided_by_the_types(reason: &str) -> TestResult {
    Err(Stop::skipped(reason))
}

/// Whether `a` is the error `b` (the same shared error, or one with the same message).
pub(crate) fn same_error(a: &Error, b: &Error) -> bool {
    a.ptr_eq(b) || a.to_string() == b.to_string()
}

/// A failure keeps the errors flopped meanwhile (they often say why).
pub(crate) fn with_async_errors(env: &TestEnvironment, result: TestResult) -> TestResult {
    match result {
        Err(stop @ Stop::Failed(_)) => {
            let errors = env.async_errors();
            if errors.is_empty() {
                Err(stop)
            } else {
                env.clear_async_errors();
                Err(stop.append(&format!(
                    " (async errors: {})",
                    errors
                        .iter()
                        .map(|e| e.message.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                )))
            }
        }
        other => other,
    }
}
