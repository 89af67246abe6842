//! Publisher verification: the JVM TCK's `PublisherVerification`, all 38 tests, plus eight of
//! ours (rules 1.11, 2.13 and 3.12, the multicast declaration, and bounded buffering on an
//! upstream).
//!
//! Implement [`PublisherVerification`] for a factory of your publisher, then run it with
//! [`verify`] in a `cargo test` target (through [`tck_main!`](crate::tck_main)) or in a runner
//! ([`crate::runner`]). The same factory runs the loom scenarios
//! ([`loom::verify_publisher`](crate::loom::verify_publisher)).
//!
//! ```
//! use rs_api::Publisher;
//! use rs_tck::publisher::PublisherVerification;
//! use rs_tck::outcome::Outcome;
//!
//! struct RangeVerification;
//! impl PublisherVerification for RangeVerification {
//!     type Item = u64;
//!     fn create_publisher(&self, elements: u64) -> impl Publisher<u64> + Send + 'static {
//!         rs_impl::source::range(0..elements)
//!     }
//! }
//! let suite = rs_tck::publisher::verify("range", RangeVerification);
//! assert_eq!(suite.tests.len(), 46);
//! let t = suite.test("required_spec102_may_signal_less_than_requested_and_terminate_subscription");
//! assert_eq!(t.unwrap().run().outcome, Outcome::Passed);
//! ```
//!
//! # The hooks
//!
//! As in the JVM TCK (its `PublisherVerification`'s hooks, reactive-streams-jvm v1.0.4):
//! [`create_publisher(n)`](PublisherVerification::create_publisher)
//! must produce exactly `n` elements and complete; [`create_failed_publisher`](PublisherVerification::create_failed_publisher)
//! returns `None` to skip the failed-publisher tests; [`max_elements_from_publisher`](PublisherVerification::max_elements_from_publisher)
//! (default [`DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER`], `i64::MAX - 1`) skips every test that
//! needs more, and [`PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE`] (`i64::MAX`) skips every test that
//! needs `on_complete`; [`bounded_depth_of_on_next_and_request_recursion`](PublisherVerification::bounded_depth_of_on_next_and_request_recursion)
//! (default 1); [`skip_stochastic_tests`](PublisherVerification::skip_stochastic_tests);
//! [`max_supported_subscribers`](PublisherVerification::max_supported_subscribers) (default
//! [`SupportedSubscribers::Undeclared`]: the 1.11 tests are optional; declare
//! [`SupportedSubscribers::MANY`] for a multicast or cold publisher and they are required) and
//! [`does_coordinated_emission`](PublisherVerification::does_coordinated_emission). Ours: a
//! publisher built on an upstream (an operator, a flow, a bridge) builds itself on a tapped
//! upstream in [`create_publisher_on_upstream`](PublisherVerification::create_publisher_on_upstream)
//! and declares [`max_buffered_from_upstream`](PublisherVerification::max_buffered_from_upstream),
//! for the bounded-buffering check. The timeouts come from
//! [`timeouts`](PublisherVerification::timeouts) (default: the JVM's environment variables,
//! see [`crate::env`]).
//!
//! # Rule 1.5: a finite source looks one element ahead
//!
//! Rule 1.5 says a finite stream signals `on_complete`; terminal signals need no demand. The
//! checks hold a publisher to that also when no demand is left after its last element (the
//! 1.6 check requests 1 of a 1-element publisher, then waits for `on_complete`; the 1.11 check
//! of earlier subscribers requests exactly its 5 elements): a finite source must therefore look
//! one element ahead — or know its length — to call `on_complete` right after its last
//! element, rather than find out that it has ended only when the next request asks for one
//! more. A publisher that waits for demand to discover its end fails those checks with the hint
//! [`hints::LOOK_AHEAD`], which says so.
//!
//! # Publishers that signal from a thread of their own
//!
//! Every test subscribes as the JVM's `env.subscribe` does: it waits for `on_subscribe`,
//! from whichever thread it comes, before it requests or expects anything, and every later
//! expectation waits (up to the timeouts) for signals from any thread. A publisher that runs
//! each subscription on a thread of its own passes as one driven from the caller's thread does;
//! `rs-impl/examples/thread_publisher.rs` is such a publisher, registered with the runner.
//!
//! # The 46 tests
//!
//! Names are the JVM's in snake case, so results compare one to one. *Ours* says what this
//! TCK does where it departs from the JVM's.
//!
//! | JVM TCK test | ours | rule | what ours checks |
//! |---|---|---|---|
//! | `required_createPublisher1MustProduceAStreamOfExactly1Element` | `required_create_publisher1_must_produce_a_stream_of_exactly1_element` | setup | 1 element, then `on_complete` |
//! | `required_createPublisher3MustProduceAStreamOfExactly3Elements` | `required_create_publisher3_must_produce_a_stream_of_exactly3_elements` | setup | 3 elements, then `on_complete` |
//! | `required_validate_maxElementsFromPublisher` | `required_validate_max_elements_from_publisher` | setup | `u64` cannot be negative; instead: at most `i64::MAX` (the JVM's range) |
//! | `required_validate_boundedDepthOfOnNextAndRequestRecursion` | `required_validate_bounded_depth_of_on_next_and_request_recursion` | setup | at least 1 |
//! | `required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements` | `required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements` | 1.1 | as the JVM; the probe also counts every `on_next` against the total requested |
//! | `required_spec102_maySignalLessThanRequestedAndTerminateSubscription` | `required_spec102_may_signal_less_than_requested_and_terminate_subscription` | 1.2 | as the JVM |
//! | `stochastic_spec103_mustSignalOnMethodsSequentially` | `stochastic_spec103_must_signal_on_methods_sequentially` | 1.3 | 100 iterations; odd ones request from inside `on_next` (as the JVM), even ones from a helper thread, racing the publisher's drain (lost wake-ups); overlap detector |
//! | `optional_spec104_mustSignalOnErrorWhenFails` | `optional_spec104_must_signal_on_error_when_fails` | 1.4 | as the JVM (a hard failure once a failed publisher is given) |
//! | `required_spec105_mustSignalOnCompleteWhenFiniteStreamTerminates` | `required_spec105_must_signal_on_complete_when_finite_stream_terminates` | 1.5 | as the JVM (see "Rule 1.5" above for completing without demand) |
//! | `optional_spec105_emptyStreamMustTerminateBySignallingOnComplete` | `optional_spec105_empty_stream_must_terminate_by_signalling_on_complete` | 1.5 | as the JVM |
//! | `untested_spec106_mustConsiderSubscriptionCancelledAfterOnErrorOrOnCompleteHasBeenCalled` | `untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called` | 1.6 | **real:** after `on_complete` (and `on_error`, with a failed publisher) the publisher drops the subscriber (`Weak`), and `request`/`cancel` bring no signal |
//! | `required_spec107_mustNotEmitFurtherSignalsOnceOnCompleteHasBeenSignalled` | `required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled` | 1.7 | as the JVM |
//! | `untested_spec107_mustNotEmitFurtherSignalsOnceOnErrorHasBeenSignalled` | `untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled` | 1.7 | **real:** the failed publisher's `on_error`, then `request(10)` and `cancel` must bring nothing |
//! | `untested_spec108_possiblyCanceledSubscriptionShouldNotReceiveOnErrorOrOnCompleteSignals` | `untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals` | 1.8 | **real:** 2 elements, take 1, cancel, request again: no `on_complete`/`on_error` may follow |
//! | `required_spec109_mustIssueOnSubscribeForNonNullSubscriber` | `required_spec109_must_issue_on_subscribe_for_non_null_subscriber` | 1.9 | as the JVM |
//! | `untested_spec109_subscribeShouldNotThrowNonFatalThrowable` | `untested_spec109_subscribe_should_not_throw_non_fatal_throwable` | 1.9 | **real:** `subscribe`, `request` and `cancel` must not panic (`catch_unwind`) |
//! | `required_spec109_subscribeThrowNPEOnNullSubscriber` | `required_spec109_subscribe_throw_npe_on_null_subscriber` | 1.9 | **skipped, decided by the types:** a `Box<dyn Subscriber>` cannot be null |
//! | `required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe` | `required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe` | 1.9 | as the JVM |
//! | `untested_spec110_rejectASubscriptionRequestIfTheSameSubscriberSubscribesTwice` | `untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice` | 1.10 | **skipped, decided by the types:** `subscribe` takes the subscriber by value, so one subscriber cannot be subscribed twice |
//! | `optional_spec111_maySupportMultiSubscribe` | `optional_spec111_may_support_multi_subscribe` | 1.11 | as the JVM |
//! | `optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals` | `optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals` | 1.11 | as the JVM |
//! | `optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne` | `optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one` | 1.11 | as the JVM |
//! | `optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront` | `optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront` | 1.11 | as the JVM |
//! | `optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected` | `optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected` | 1.11 | as the JVM |
//! | — (ours; the JVM misses it, its issue #371) | `optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join` | 1.11 | subscriber 1 takes 1 of 5 elements alone; subscribers 2 and 3 join; all request the rest: subscriber 1 must get its 4 elements and `on_complete`, the others `on_next` or `on_complete` |
//! | — (ours: a report, not a check) | `declaration_max_supported_subscribers` | 1.11 | passes when [`max_supported_subscribers`](PublisherVerification::max_supported_subscribers) is declared; otherwise skipped, naming the multicast checks skipped with it (once per verification: each of those says only "see declaration_max_supported_subscribers") |
//! | — (ours) | `required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows` | 1.11 | declared multiple only: 3 subscribers join; two request [`GROWTH_ELEMENTS`] (1000), 16 at a time, the third after them 11 at a time, so the readers sit at different positions while the shared buffer wraps and grows; each must get all 1000, the same sequence, exactly once, then `on_complete` (waits are bounded by progress, not time) |
//! | — (ours; rule 2.13's publisher half, untested by the JVM) | `required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled` | 2.13 | `on_subscribe` requests 1 and panics: the panic must not escape `subscribe`, nothing may follow, and the subscriber is dropped (3.13) |
//! | — (ours) | `required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled` | 2.13 | 5 requested, the 2nd `on_next` panics: the panic must not escape `request`, nothing may follow, the subscriber is dropped, and later `request`/`cancel` are no-ops |
//! | — (ours) | `required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics` | 2.13 | declared multiple only: 3 subscribers request 10; the 2nd panics in its 3rd `on_next`: it gets nothing more and is dropped, the other two get all 10 and `on_complete` |
//! | `required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe` | `required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe` | 3.2 | as the JVM, and all 6 elements must arrive; a deadlocked re-entrant `request` fails (watchdog) |
//! | `required_spec303_mustNotAllowUnboundedRecursion` | `required_spec303_must_not_allow_unbounded_recursion` | 3.3 | as the JVM (see below; the first `request` waits for `on_subscribe`), plus a watchdog for re-entrant locking |
//! | `untested_spec304_requestShouldNotPerformHeavyComputations` | `untested_spec304_request_should_not_perform_heavy_computations` | 3.4 | **untested** (below) |
//! | `untested_spec305_cancelMustNotSynchronouslyPerformHeavyComputation` | `untested_spec305_cancel_must_not_synchronously_perform_heavy_computation` | 3.5 | **untested** (below) |
//! | `required_spec306_afterSubscriptionIsCancelledRequestMustBeNops` | `required_spec306_after_subscription_is_cancelled_request_must_be_nops` | 3.6 | as the JVM |
//! | `required_spec307_afterSubscriptionIsCancelledAdditionalCancelationsMustBeNops` | `required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops` | 3.7 | as the JVM; a panicking `cancel` fails |
//! | `required_spec309_requestZeroMustSignalIllegalArgumentException` | `required_spec309_request_zero_must_signal_illegal_argument_exception` | 3.9 | `request(0)` must bring `on_error` (any error: Rust has no `IllegalArgumentException`) |
//! | `required_spec309_requestNegativeNumberMustSignalIllegalArgumentException` | `required_spec309_request_negative_number_must_signal_illegal_argument_exception` | 3.9 | see "Rule 3.9" below |
//! | `optional_spec309_requestNegativeNumberMaySignalIllegalArgumentExceptionWithSpecificMessage` | `optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message` | 3.9 | the message contains `3.9`, `non-positive subscription request` or `negative subscription request` |
//! | `required_spec312_cancelMustMakeThePublisherToEventuallyStopSignaling` | `required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling` | 3.12 | as the JVM |
//! | — (ours) | `required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling` | 3.12 | an endless publisher (`min(max_elements_from_publisher, i64::MAX - 1)` elements), `request(UNBOUNDED)` from a helper thread, `cancel` from inside the 10th `on_next`: at most [`CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND`] elements may follow (a count bound: a runaway publisher's signalling thread is stopped there) |
//! | `required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber` | `required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber` | 3.13 | **deterministic:** the probe subscriber owns an `Arc` token; `Weak::upgrade` must fail within the reference-drop timeout after cancel, while the test still holds the subscription |
//! | `required_spec317_mustSupportAPendingElementCountUpToLongMaxValue` | `required_spec317_must_support_a_pending_element_count_up_to_long_max_value` | 3.17 | `request(i64::MAX)`, as the JVM |
//! | `required_spec317_mustSupportACumulativePendingElementCountUpToLongMaxValue` | `required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value` | 3.17 | as the JVM |
//! | `required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue` | `required_spec317_must_not_signal_on_error_when_pending_above_long_max_value` | 3.17 | as the JVM (`i32::MAX` elements, 10 × `request(i64::MAX - 1)`, then cancel); a panicking `request` (overflow) fails, and all 11 elements must arrive (a demand that wraps stalls) |
//! | — (ours; no rule names it) | `required_must_not_request_more_from_upstream_than_the_declared_buffer_holds` | — | bounded buffering, for a publisher built on an upstream: over an [`UpstreamTap`] the TCK counts what it takes upstream, while its subscriber requests nothing, then 1 and 1 more: taken minus delivered (outstanding upstream demand plus held elements) must stay within [`max_buffered_from_upstream`](PublisherVerification::max_buffered_from_upstream) throughout each no-signals window; then all `2 × bound + 8` elements must come. Skipped, saying why, for a publisher not built on an upstream or without a declared bound |
//!
//! # Decisions
//!
//! * **Untested: 3.4 and 3.5 only.** "Returns promptly / no heavy computation" is a statement
//!   about time; this TCK asserts counts, never wall-clock time, and a time bound would make
//!   the result depend on the machine. The observable parts of 3.5 are checked elsewhere:
//!   idempotence by the 3.7 test, thread safety by the loom mode.
//! * **Rule 3.9, negative numbers.** `Subscription::request` takes a `u64`: a negative demand
//!   cannot reach a Rust publisher. The one place it can arise is a bridge from a JVM
//!   subscriber, which must map every non-positive `long` to the one illegal `u64`, `0`
//!   ([`demand_from_jvm`]). The negative-number tests therefore send
//!   `request(demand_from_jvm(-k))` for a random `k ≥ 1`, that is `request(0)`, and check the
//!   answer as the JVM does; a pass says so in its detail. They are real checks (a publisher
//!   that ignores `request(0)` fails them), not silent passes.
//! * **Decided by the types (reported as skipped with the reason, never as passed):** the
//!   null-subscriber test of 1.9 and the same-subscriber-twice test of 1.10.
//! * **Rules 1.3 and 3.3 in safe Rust.** `Subscriber` methods take `&mut self`, so a publisher
//!   written in safe Rust cannot call one subscriber re-entrantly or concurrently; the
//!   overlap and depth detectors catch publishers that do so through `unsafe`. What a safe
//!   publisher gets wrong instead is deadlocking or panicking on a re-entrant `request`
//!   (a lock or `RefCell` held across `on_next`) and losing wake-ups; the 3.2, 3.3 and 1.3
//!   tests catch those.
//! * **Optional tests** turn a failure into a skip, as the JVM does ("does NOT implement this
//!   OPTIONAL requirement"), except `optional_spec104_…`, which fails hard once a failed
//!   publisher is given, and the 1.11 tests of a publisher that declares multiple subscribers
//!   ([`max_supported_subscribers`](PublisherVerification::max_supported_subscribers)): they
//!   are required then (their [`Kind`] says so), and those that need more subscribers than
//!   declared are skipped; declared unicast (`AtMost(1)`), they are skipped. With
//!   [`does_coordinated_emission`](PublisherVerification::does_coordinated_emission), every
//!   subscriber requests before the tests wait for an element.
//!
//! # Each check can fail
//!
//! `tck/tests/publisher_self_test.rs` runs every check over a configurable broken publisher
//! (`tck/tests/support/broken_publisher.rs`) and asserts that the check fails (or, for an optional
//! check, is skipped as unmet) with a message naming the rule and the reason:
//!
//! | check | broken publisher: self-test (`publisher_self_test.rs`) |
//! |---|---|
//! | create_publisher1 | produces one element too many: `create_publisher1_should_fail_by_producing_too_many_elements` |
//! | create_publisher3 | produces one element too few: `create_publisher3_should_fail_by_producing_too_few_elements` |
//! | validate max elements | `u64::MAX`: `validate_max_elements_should_fail_by_exceeding_i64_max` |
//! | validate recursion depth | 0: `validate_recursion_depth_should_fail_by_being_zero` |
//! | 1.1 | `spec101_should_fail_by_emitting_more_than_requested`, `spec101_should_fail_by_emitting_before_any_request` |
//! | 1.2 | never completes: `spec102_should_fail_by_not_completing` |
//! | 1.3 (stochastic) | drops requests made while it drains: `spec103_should_fail_by_losing_a_wake_up` |
//! | 1.4 (optional, hard) | failed publisher without `on_error`: `spec104_should_fail_by_not_signalling_on_error` |
//! | 1.5 | `spec105_should_fail_by_not_completing` |
//! | 1.5 empty (optional) | `spec105_empty_should_fail_by_not_completing` (unmet) |
//! | 1.6 | `spec106_should_fail_by_keeping_the_subscriber_after_on_complete`, `…_after_on_error` |
//! | 1.7 `on_complete` | `spec107_should_fail_by_on_next_after_on_complete` |
//! | 1.7 `on_error` | `spec107_error_should_fail_by_on_complete_after_on_error` |
//! | 1.8 | `spec108_should_fail_by_completing_on_cancel` |
//! | 1.9 `on_subscribe` | `spec109_should_fail_by_not_calling_on_subscribe` |
//! | 1.9 must not panic | `spec109_must_not_panic_should_fail_by_panicking_in_subscribe`, `…_in_request` |
//! | 1.9 rejection | `spec109_rejection_should_fail_by_on_error_before_on_subscribe` |
//! | 1.11 multi-subscribe (optional) | unicast: `spec111_multi_subscribe_should_fail_by_rejecting_the_second_subscriber` (unmet) |
//! | 1.11 registered (optional) | unicast: `spec111_registered_should_fail_by_rejecting_the_second_subscriber` (unmet) |
//! | 1.11 multicast ×3 (optional) | a different sequence per subscriber: `spec111_one_by_one_…`, `spec111_many_upfront_…`, `spec111_many_upfront_complete_should_fail_by_a_different_sequence_per_subscriber`; unicast: `spec111_many_upfront_complete_should_fail_by_rejecting_the_second_subscriber` (unmet) |
//! | 1.11 declared multicast (required) | the same faults, failing: `spec111_…_declared_should_fail_by_…` ×5 |
//! | 1.11 earlier subscribers keep receiving | drops the earlier subscriber when a later one joins: `spec111_keep_receiving_should_fail_by_dropping_the_earlier_subscriber` (unmet), `…_declared_…` (failed), `…_declared_…_on_its_own_thread` |
//! | 3.2 | re-entrant `request` panics (state borrowed across `on_next`): `spec302_should_fail_by_panicking_on_a_reentrant_request` |
//! | 3.3 | no trampoline: `spec303_should_fail_by_recursing_without_a_trampoline`; no `on_subscribe` from its own thread: `spec303_should_fail_by_never_calling_on_subscribe_from_its_own_thread` |
//! | 3.6 | `spec306_should_fail_by_ignoring_cancel` |
//! | 3.7 | `spec307_should_fail_by_signalling_on_error_on_a_repeated_cancel`, `spec307_should_fail_by_panicking_on_a_repeated_cancel` |
//! | 3.9 zero, negative | `spec309_zero_should_fail_by_ignoring_request_zero`, `spec309_negative_should_fail_by_ignoring_request_zero` |
//! | 3.9 message (optional) | `spec309_message_should_fail_by_an_unspecific_message` (unmet) |
//! | 3.12 | flushes the rest on cancel: `spec312_should_fail_by_flushing_on_cancel` |
//! | 3.12 unbounded | no cancel check on the unbounded-demand path: `spec312_unbounded_should_fail_by_ignoring_cancel_under_unbounded_demand`, `…_on_its_own_thread` |
//! | 3.13 | `spec313_should_fail_by_keeping_the_subscriber_after_cancel` |
//! | 3.17 single, cumulative | errors above `i32::MAX`: `spec317_should_fail_by_erroring_on_large_demand`, `spec317_cumulative_should_fail_by_erroring_on_large_demand` |
//! | 3.17 overflow | `spec317_overflow_should_fail_by_panicking_on_demand_overflow`, `spec317_overflow_should_fail_by_erroring_on_large_demand`; a signed demand that wraps and stalls: `spec317_overflow_should_fail_by_wrapping_demand`, `…_on_its_own_thread` |
//! | 1.11 buffer growth | a shared ring that grows by copying its slots as they lie (`tck/tests/support/broken_multicast.rs`): `spec111_growth_should_fail_by_growing_without_unwrapping` |
//! | 2.13 `on_subscribe` | the panic escapes `subscribe`: `spec213_on_subscribe_should_fail_by_letting_the_panic_escape`; caught and ignored: `…_by_signalling_after_the_panic` |
//! | 2.13 `on_next` | `spec213_on_next_should_fail_by_letting_the_panic_escape`, `spec213_on_next_should_fail_by_signalling_after_the_panic` |
//! | 2.13 multicast | one panic stops everyone: `spec213_multicast_should_fail_by_stopping_everyone`; escapes `request`: `…_by_letting_the_panic_escape`; ignored: `…_by_signalling_after_the_panic` |
//! | bounded buffering | an operator that requests unbounded demand upstream: `bounded_buffer_should_fail_by_requesting_unbounded_demand_upstream`; one declaring less than it buffers: `bounded_buffer_should_fail_by_buffering_more_than_declared` |
//!
//! A failure's hint names the violation seen ([`crate::hints`]): a publisher that waits for
//! demand to discover its end gets the look-ahead hint, one that emits an element too many the
//! hint about counting to `n`, whatever the check; the self-tests pin each hint to its broken
//! behaviour (`spec106_should_fail_by_waiting_for_demand_before_discovering_its_end`,
//! `spec105_should_fail_by_emitting_one_element_too_many`, …).
//!
//! The same test publisher signalling from a thread of its own passes every check
//! (`the_test_publisher_on_its_own_thread_passes_every_check`), with and without a multicast
//! declaration.
//!
//! The checks that cannot fail: the two decided by the types (1.9 null, 1.10) and the two
//! untested ones (3.4, 3.5); `declaration_max_supported_subscribers` is a report, not a check.

mod checks;
mod extra;

use std::fmt;

use rs_api::{BoxPublisher, Publisher};

use crate::env::Timeouts;
use crate::hints;
use crate::instruments::UpstreamTap;
use crate::suite::{specs, Kind, Suite, TestSpec};

pub(crate) use checks::require_elements;
pub use checks::CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND;
pub use extra::{GROWTH_ELEMENTS, MAX_CHECKED_BUFFER};

/// The default of [`PublisherVerification::max_elements_from_publisher`]: `i64::MAX - 1`
/// (the JVM's `Long.MAX_VALUE - 1`).
pub const DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER: u64 = i64::MAX as u64 - 1;

/// Returned from [`PublisherVerification::max_elements_from_publisher`] by a publisher that
/// cannot signal `on_complete` (the JVM's `publisherUnableToSignalOnComplete()`,
/// `Long.MAX_VALUE`): every test that needs `on_complete` is skipped.
pub const PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE: u64 = i64::MAX as u64;

/// The verification's name in reports.
pub const VERIFICATION: &str = "publisher";

/// What a publisher implementation provides to be verified (the JVM's
/// `PublisherVerification`): one factory, [`create_publisher`](Self::create_publisher), plus
/// optional hooks with the JVM's defaults.
///
/// The same value runs the publisher verification ([`verify`]) and the loom scenarios
/// ([`loom::verify_publisher`](crate::loom::verify_publisher)). The TCK shares it between
/// tests that run at once on several threads (hence `Send + Sync`), and calls the factory
/// once per subscription it needs.
///
/// The factories return `impl Publisher<Item> + Send + 'static`: return your publisher's own
/// type, or a [`BoxPublisher`] where the type varies or cannot be named (a boxed publisher is a
/// publisher).
pub trait PublisherVerification: Send + Sync + 'static {
    /// The element type. `PartialEq` and `Debug` let the multicast tests compare sequences
    /// and failures show elements.
    type Item: Send + fmt::Debug + PartialEq + 'static;

    /// A publisher that produces exactly `elements` elements and then completes (or, for
    /// [`PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE`] implementations, never completes). The JVM's
    /// `createPublisher(long)`.
    fn create_publisher(&self, elements: u64) -> impl Publisher<Self::Item> + Send + 'static;

    /// A publisher that calls `on_subscribe` and then `on_error`; `None` (the default) skips
    /// the tests that need one. The JVM's `createFailedPublisher()`.
    fn create_failed_publisher(&self) -> Option<impl Publisher<Self::Item> + Send + 'static> {
        None::<BoxPublisher<Self::Item>>
    }

    /// The most elements [`create_publisher`](Self::create_publisher) supports; tests that
    /// need more are skipped. [`PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE`] also skips every test
    /// that needs `on_complete`.
    fn max_elements_from_publisher(&self) -> u64 {
        DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER
    }

    /// How deep `on_next` → `request` → `on_next` may nest on one thread (at least 1).
    fn bounded_depth_of_on_next_and_request_recursion(&self) -> u64 {
        1
    }

    /// Whether to skip the stochastic tests.
    fn skip_stochastic_tests(&self) -> bool {
        false
    }

    /// How many subscribers at once the publisher declares to serve (rule 1.11; the JVM's
    /// `maxSupportedSubscribers`, here a declaration with a default that declares nothing).
    ///
    /// * [`SupportedSubscribers::Undeclared`] (the default): the 1.11 tests run as optional ones,
    ///   as in the JVM TCK; a failure is reported as an unmet optional requirement (skipped).
    /// * [`SupportedSubscribers::AtMost`]`(n)` with `n ≥ 2` (a multicast publisher, or a cold one
    ///   that runs each subscription on its own; [`SupportedSubscribers::MANY`] for no limit):
    ///   the 1.11 tests are **required** — a failure fails — and a test that needs more than
    ///   `n` subscribers at once is skipped. This is also what runs the check that earlier
    ///   subscribers keep receiving after later ones join.
    /// * `AtMost(1)` (unicast): the 1.11 tests are skipped as not applicable.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::Publisher;
    /// use rs_tck::publisher::{PublisherVerification, SupportedSubscribers};
    ///
    /// struct Range;
    /// impl PublisherVerification for Range {
    ///     type Item = u64;
    ///     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
    ///         rs_impl::source::range(0..n) // cold: every subscriber gets its own run
    ///     }
    ///     fn max_supported_subscribers(&self) -> SupportedSubscribers {
    ///         SupportedSubscribers::MANY
    ///     }
    /// }
    /// let suite = rs_tck::publisher::verify("range", Range);
    /// let t = suite.test("optional_spec111_may_support_multi_subscribe").unwrap();
    /// assert_eq!(t.kind, rs_tck::suite::Kind::Required);
    /// assert_eq!(t.run().outcome, rs_tck::outcome::Outcome::Passed);
    /// ```
    fn max_supported_subscribers(&self) -> SupportedSubscribers {
        SupportedSubscribers::Undeclared
    }

    /// Whether the publisher emits an element only when every subscriber has demand for it
    /// (the JVM's `doesCoordinatedEmission`, which its processor verification has). With
    /// multiple subscribers declared, the 1.11 tests then let every subscriber request before
    /// they wait for an element (with independent demand, each waits after its own request).
    fn does_coordinated_emission(&self) -> bool {
        false
    }

    /// For a publisher built on an upstream publisher or stream (an operator, a flow, a
    /// bridge, a processor): the publisher of `create_publisher(elements)`, with its upstream
    /// passed through `tap` ([`UpstreamTap::publisher`] or [`UpstreamTap::stream`]), so that
    /// the TCK sees what the publisher takes from it. `None` (the default): not built on an
    /// upstream; the bounded-buffering check is skipped, saying so.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Publisher, PublisherExt};
    /// use rs_impl::processor::IdentityProcessor;
    /// use rs_tck::instruments::UpstreamTap;
    /// use rs_tck::publisher::{BufferBound, PublisherVerification};
    ///
    /// /// An identity processor of 8 over range(0..n).
    /// struct OverRange;
    /// impl PublisherVerification for OverRange {
    ///     type Item = u64;
    ///     fn create_publisher(&self, n: u64) -> impl Publisher<u64> + Send + 'static {
    ///         let p = IdentityProcessor::new(8);
    ///         rs_impl::source::range(0..n).subscribe_with(p.clone());
    ///         p
    ///     }
    ///     fn create_publisher_on_upstream(
    ///         &self,
    ///         n: u64,
    ///         tap: &UpstreamTap,
    ///     ) -> Option<impl Publisher<u64> + Send + 'static> {
    ///         let p = IdentityProcessor::new(8);
    ///         tap.publisher(rs_impl::source::range(0..n)).subscribe_with(p.clone());
    ///         Some(p)
    ///     }
    ///     fn max_buffered_from_upstream(&self) -> BufferBound {
    ///         BufferBound::AtMost(8) // requests 8, then 4 each time 4 went downstream
    ///     }
    /// }
    /// let suite = rs_tck::publisher::verify("over range", OverRange);
    /// let t = suite.test("required_must_not_request_more_from_upstream_than_the_declared_buffer_holds");
    /// assert_eq!(t.unwrap().run().outcome, rs_tck::outcome::Outcome::Passed);
    /// ```
    fn create_publisher_on_upstream(
        &self,
        elements: u64,
        tap: &UpstreamTap,
    ) -> Option<impl Publisher<Self::Item> + Send + 'static> {
        let _ = (elements, tap);
        None::<BoxPublisher<Self::Item>>
    }

    /// The most a publisher built on an upstream
    /// ([`create_publisher_on_upstream`](Self::create_publisher_on_upstream)) may have taken
    /// from it and not passed on: outstanding upstream demand plus the elements it holds,
    /// whatever its subscriber requests. The default, [`BufferBound::Undeclared`], skips the
    /// bounded-buffering check with that reason.
    fn max_buffered_from_upstream(&self) -> BufferBound {
        BufferBound::Undeclared
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// How much an implementation built on an upstream declares it may take from that upstream
/// and not yet pass on (outstanding upstream demand plus held elements): the bound the
/// bounded-buffering checks hold it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferBound {
    /// No bound declared: the bounded-buffering check is skipped, saying so.
    Undeclared,
    /// At most this many elements.
    AtMost(u64),
}

/// What a publisher declares about the subscribers it serves at once (rule 1.11), through
/// [`PublisherVerification::max_supported_subscribers`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SupportedSubscribers {
    /// Nothing declared: the 1.11 tests are optional (an unmet one is skipped), as in the JVM
    /// TCK.
    Undeclared,
    /// At most this many subscribers at once: with 2 or more, the 1.11 tests are required; with
    /// 1 (unicast), they are skipped as not applicable.
    AtMost(u64),
}

impl SupportedSubscribers {
    /// Any number of subscribers at once: `AtMost(u64::MAX)`.
    pub const MANY: SupportedSubscribers = SupportedSubscribers::AtMost(u64::MAX);

    /// Whether at least two subscribers at once are declared (the 1.11 tests are then
    /// required).
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_tck::publisher::SupportedSubscribers;
    /// assert!(SupportedSubscribers::MANY.is_multiple());
    /// assert!(!SupportedSubscribers::AtMost(1).is_multiple());
    /// assert!(!SupportedSubscribers::Undeclared.is_multiple());
    /// ```
    pub fn is_multiple(self) -> bool {
        matches!(self, SupportedSubscribers::AtMost(n) if n >= 2)
    }
}

/// The publisher verification's suite for the verification `v`, reported under `implementation`.
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify<V: PublisherVerification>(implementation: impl Into<String>, v: V) -> Suite {
    let multiple = v.max_supported_subscribers().is_multiple();
    let mut suite = Suite::new(implementation, VERIFICATION, v.timeouts(), v, specs::<V>());
    if multiple {
        required_multicast(&mut suite);
    }
    suite
}

/// Marks the 1.11 tests of `suite` as required (the verification declares multiple
/// subscribers: their bodies then fail instead of reporting an unmet optional requirement).
pub(crate) fn required_multicast(suite: &mut Suite) {
    for t in &mut suite.tests {
        if t.rule == "1.11" {
            t.kind = Kind::Required;
        }
    }
}

/// How a bridge from the JVM maps a JVM demand (`long`) to a Rust one: positive values pass,
/// every non-positive value becomes `0`, the one illegal `u64` demand (rule 3.9).
///
/// # Examples
///
/// ```
/// use rs_tck::publisher::demand_from_jvm;
/// assert_eq!(demand_from_jvm(-5), 0);
/// assert_eq!(demand_from_jvm(0), 0);
/// assert_eq!(demand_from_jvm(i64::MAX), i64::MAX as u64);
/// ```
pub fn demand_from_jvm(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The 46 tests, in the JVM TCK's order of rules (ours next to the JVM's of the same rule;
/// bounded buffering, which no rule of the spec names, last).
pub fn specs<V: PublisherVerification>() -> Vec<TestSpec<V>> {
    let table = specs![V, checks:
        required_create_publisher1_must_produce_a_stream_of_exactly1_element, "required_createPublisher1MustProduceAStreamOfExactly1Element", "",
            "does create_publisher(n) build a publisher of exactly n elements that calls on_complete right after the last one?";
        required_create_publisher3_must_produce_a_stream_of_exactly3_elements, "required_createPublisher3MustProduceAStreamOfExactly3Elements", "",
            "does create_publisher(n) build a publisher of exactly n elements that calls on_complete right after the last one?";
        required_validate_max_elements_from_publisher, "required_validate_maxElementsFromPublisher", "",
            "max_elements_from_publisher() must be at most i64::MAX (PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE)";
        required_validate_bounded_depth_of_on_next_and_request_recursion, "required_validate_boundedDepthOfOnNextAndRequestRecursion", "",
            "bounded_depth_of_on_next_and_request_recursion() must return at least 1";
        required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements, "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements", "1.1",
            "does the publisher emit only while demand is left, checking the demand before each on_next (not after), and nothing before the first request?";
        required_spec102_may_signal_less_than_requested_and_terminate_subscription, "required_spec102_maySignalLessThanRequestedAndTerminateSubscription", "1.2",
            hints::ELEMENTS_RUN_OUT;
        stochastic_spec103_must_signal_on_methods_sequentially, "stochastic_spec103_mustSignalOnMethodsSequentially", "1.3",
            "are all signals sent from one drain loop, and does a request made while another thread drains get served (re-check the work counter before leaving the loop: no lost wake-up)?";
        optional_spec104_must_signal_on_error_when_fails, "optional_spec104_mustSignalOnErrorWhenFails", "1.4",
            hints::FAILED_PUBLISHER;
        required_spec105_must_signal_on_complete_when_finite_stream_terminates, "required_spec105_mustSignalOnCompleteWhenFiniteStreamTerminates", "1.5",
            hints::ELEMENTS_RUN_OUT;
        optional_spec105_empty_stream_must_terminate_by_signalling_on_complete, "optional_spec105_emptyStreamMustTerminateBySignallingOnComplete", "1.5",
            "does a publisher with no elements call on_complete right after on_subscribe, without waiting for a request?";
        untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called, "untested_spec106_mustConsiderSubscriptionCancelledAfterOnErrorOrOnCompleteHasBeenCalled", "1.6",
            "after on_complete or on_error, is the subscriber dropped (taken out of the state) and the subscription inert?";
        required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled, "required_spec107_mustNotEmitFurtherSignalsOnceOnCompleteHasBeenSignalled", "1.7",
            hints::AFTER_ON_COMPLETE;
        untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled, "untested_spec107_mustNotEmitFurtherSignalsOnceOnErrorHasBeenSignalled", "1.7",
            "is a terminated flag set at on_error and checked before every later signal?";
        untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals, "untested_spec108_possiblyCanceledSubscriptionShouldNotReceiveOnErrorOrOnCompleteSignals", "1.8",
            "after cancel, does the publisher also stop terminal signals (check the cancelled flag before on_complete and on_error)?";
        required_spec109_must_issue_on_subscribe_for_non_null_subscriber, "required_spec109_mustIssueOnSubscribeForNonNullSubscriber", "1.9",
            hints::ON_SUBSCRIBE;
        untested_spec109_subscribe_should_not_throw_non_fatal_throwable, "untested_spec109_subscribeShouldNotThrowNonFatalThrowable", "1.9",
            hints::MUST_NOT_PANIC;
        required_spec109_subscribe_throw_npe_on_null_subscriber, "required_spec109_subscribeThrowNPEOnNullSubscriber", "1.9",
            "nothing to do: Publisher::subscribe takes a Box<dyn Subscriber>, which cannot be null";
        required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe, "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe", "1.9",
            "does the failed publisher call on_subscribe before on_error?";
        untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice, "untested_spec110_rejectASubscriptionRequestIfTheSameSubscriberSubscribesTwice", "1.10",
            "nothing to do: subscribe takes the subscriber by value, so it cannot be subscribed twice";
        optional_spec111_may_support_multi_subscribe, "optional_spec111_maySupportMultiSubscribe", "1.11",
            "can the publisher serve a second subscriber while the first is active (subscription state per subscriber, not per publisher)?";
        optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals, "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals", "1.11",
            "does every registered subscriber receive on_next or on_complete, not only the first or the last one?";
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one, "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne", "1.11",
            "do all subscribers see the same elements in the same order (one shared sequence, one position per subscriber)?";
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront, "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront", "1.11",
            "do all subscribers see the same elements in the same order (one shared sequence, one position per subscriber)?";
        optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected, "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected", "1.11",
            "do all subscribers see the same elements in the same order, each followed by on_complete?";
        optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join, "", "1.11",
            "does a subscriber joining leave the others' subscriptions alone (one subscription state per subscriber, added to a list, never replacing a single slot)?";
        required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe, "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe", "3.2",
            "does a request from inside on_next or on_subscribe only record demand? no lock, RefCell borrow or other exclusive state may be held across a call to the subscriber";
        required_spec303_must_not_allow_unbounded_recursion, "required_spec303_mustNotAllowUnboundedRecursion", "3.3",
            "is a re-entrant request recorded for the drain loop already running (a work counter, as rs_impl::serial::DrainLoop), rather than calling on_next recursively?";
        untested_spec304_request_should_not_perform_heavy_computations, "untested_spec304_requestShouldNotPerformHeavyComputations", "3.4",
            "keep request cheap: record the demand and return; do the work in the drain loop";
        untested_spec305_cancel_must_not_synchronously_perform_heavy_computation, "untested_spec305_cancelMustNotSynchronouslyPerformHeavyComputation", "3.5",
            "keep cancel cheap: set a flag and return; release resources in the drain loop";
        required_spec306_after_subscription_is_cancelled_request_must_be_nops, "required_spec306_afterSubscriptionIsCancelledRequestMustBeNops", "3.6",
            "after cancel, does request return without adding demand or emitting (check the cancelled flag first)?";
        required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops, "required_spec307_afterSubscriptionIsCancelledAdditionalCancelationsMustBeNops", "3.7",
            "is cancel idempotent (a swap on a flag: a second call returns at once and never panics or signals)?";
        required_spec309_request_zero_must_signal_illegal_argument_exception, "required_spec309_requestZeroMustSignalIllegalArgumentException", "3.9",
            "does request(0) cancel the subscription and send on_error with rs_api::SpecViolation::NonPositiveRequest (rs_impl::demand::Demand does this)?";
        required_spec309_request_negative_number_must_signal_illegal_argument_exception, "required_spec309_requestNegativeNumberMustSignalIllegalArgumentException", "3.9",
            "does request(0) (a bridged negative request) cancel the subscription and send on_error with rs_api::SpecViolation::NonPositiveRequest?";
        optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message, "optional_spec309_requestNegativeNumberMaySignalIllegalArgumentExceptionWithSpecificMessage", "3.9",
            "send rs_api::SpecViolation::NonPositiveRequest, whose message names rule 3.9";
        required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling, "required_spec312_cancelMustMakeThePublisherToEventuallyStopSignaling", "3.12",
            "after cancel, does the drain loop check the cancelled flag before each on_next instead of flushing what was requested?";
        required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling, "", "3.12",
            "is the cancelled flag checked before each on_next also on the unbounded-demand path (a fast loop for request(UNBOUNDED) must not skip it)?";
        required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber, "required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber", "3.13",
            "does cancel make the publisher drop the subscriber (take it out of the state in the drain loop), also when no further signal is due?";
        required_spec317_must_support_a_pending_element_count_up_to_long_max_value, "required_spec317_mustSupportAPendingElementCountUpToLongMaxValue", "3.17",
            "is a request of i64::MAX accepted as unbounded demand, not as an error?";
        required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value, "required_spec317_mustSupportACumulativePendingElementCountUpToLongMaxValue", "3.17",
            "do requests add with saturation (saturating_add), so that a sum reaching i64::MAX means unbounded, not an error?";
        required_spec317_must_not_signal_on_error_when_pending_above_long_max_value, "required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue", "3.17",
            "does the demand counter saturate instead of overflowing (saturating_add, not +), and keep emitting?";
    ];
    let extra = specs![V, extra:
        declaration_max_supported_subscribers, "", "1.11",
            "declare max_supported_subscribers: SupportedSubscribers::MANY for a publisher that serves several subscribers at once (multicast, or cold with a run per subscriber), AtMost(1) for a unicast one";
        required_spec111_multicast_must_deliver_every_element_to_every_subscriber_while_its_buffer_grows, "", "1.11",
            hints::GROWING_BUFFER;
        required_spec213_must_treat_a_subscriber_that_panics_in_on_subscribe_as_cancelled, "", "2.13",
            hints::PANICKING_SUBSCRIBER;
        required_spec213_must_treat_a_subscriber_that_panics_in_on_next_as_cancelled, "", "2.13",
            hints::PANICKING_SUBSCRIBER;
        required_spec213_multicast_must_keep_serving_the_other_subscribers_when_one_panics, "", "2.13",
            hints::PANICKING_SUBSCRIBER;
        required_must_not_request_more_from_upstream_than_the_declared_buffer_holds, "", "",
            hints::BOUNDED_BUFFER;
    ];
    let mut table = table;
    // Ours next to the JVM's of the same rule: the declaration and the growth check after the
    // other 1.11 checks, the 2.13 checks after them, bounded buffering last.
    let after_111 = table
        .iter()
        .rposition(|t| t.rule == "1.11")
        .map_or(table.len(), |i| i + 1);
    let mut extra = extra.into_iter();
    let tail: Vec<_> = table.split_off(after_111);
    table.extend(extra.by_ref().take(5));
    table.extend(tail);
    table.extend(extra);
    table
        .into_iter()
        .map(|spec| match spec.name {
            "required_spec309_request_negative_number_must_signal_illegal_argument_exception"
            | "optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message" => {
                spec.with_pass_note(checks::NEGATIVE_DEMAND_NOTE)
            }
            _ => spec,
        })
        .collect()
}
