//! Self-tests of the Publisher → `Stream` bridge verification (`rs_tck::stream`): the correct
//! test bridge passes every check; for every check, a broken bridge
//! (`support/broken_stream.rs`) makes it fail with the rule and the reason. The built-in
//! `to_stream` is verified through the registry (`compat::to_stream(8)` and `(1)` in
//! `tck/src/bin/rs-tck/registry/compat.rs`), and `publisher_self_test.rs`'s
//! `the_built_in_publishers_pass` asserts that every check of it passes.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use rs_tck::hints;
use rs_tck::outcome::Outcome;
use rs_tck::stream;
use support::broken_stream::{BrokenBridge, StreamKnobs};
use support::expect::{
    assert_case_with_hint, assert_coverage, assert_every_check_has_a_hint, Expect,
};

fn knobs(f: impl FnOnce(&mut StreamKnobs)) -> BrokenBridge {
    let mut k = StreamKnobs::default();
    f(&mut k);
    BrokenBridge::with(k)
}

macro_rules! should_fail {
    ($( $case:ident : $check:ident, $v:expr, [$($needle:literal),* $(,)?] $(, hint: $hint:expr)? ;)*) => {
        $(
            #[test]
            fn $case() {
                let hint: Option<&str> = None $(.or(Some($hint)))?;
                assert_case_with_hint(&stream::verify("broken", $v), stringify!($check), Expect::Fail, &[$($needle),*], hint);
            }
        )*
        /// (self-test name, check name) of every should-fail case.
        const CASES: &[(&str, &str)] = &[$((stringify!($case), stringify!($check))),*];
    };
}

should_fail! {
    elements_should_fail_by_never_waking_the_consumer:
        required_stream_must_yield_every_element_in_order_and_end_after_on_complete,
        knobs(|k| k.no_wake = true),
        ["rule 2.9", "was not woken"], hint: hints::STREAM_WAKE;
    error_should_fail_by_swallowing_the_error:
        required_stream_must_yield_the_upstream_error_after_the_elements_then_end,
        knobs(|k| k.swallow_error = true),
        ["rule 2.10", "must yield the error as Err", "None"], hint: hints::STREAM_ERROR;
    ended_should_fail_by_returning_pending_after_the_end:
        required_stream_polled_after_its_end_must_stay_ended,
        knobs(|k| k.pending_after_end = true),
        ["rule 2.4", "poll #1 after the end", "Pending"];
    ended_should_fail_by_requesting_after_the_end:
        required_stream_polled_after_its_end_must_stay_ended,
        knobs(|k| k.request_after_end = true),
        ["rule 2.4", "after on_complete/on_error"];
    drop_should_fail_by_not_cancelling:
        required_stream_drop_must_cancel_upstream,
        knobs(|k| k.no_cancel_on_drop = true),
        ["rule 2.6", "dropping the stream must cancel"];
    demand_should_fail_by_requesting_unbounded_demand:
        required_stream_demand_must_stay_within_polled_plus_prefetch,
        knobs(|k| k.unbounded = true),
        ["bounded buffering", "unbounded demand", "prefetch of 4"];
    demand_should_fail_by_replenishing_on_every_element_received:
        required_stream_demand_must_stay_within_polled_plus_prefetch,
        knobs(|k| k.eager_replenish = true),
        ["bounded buffering", "above polled + the declared prefetch of 4"];
    backpressure_should_fail_by_replenishing_on_every_element_received:
        required_stream_backpressure_must_hold_while_the_consumer_does_not_poll,
        knobs(|k| k.eager_replenish = true),
        ["bounded buffering", "2 items polled, then no poll", "prefetch of 4"];
}

#[test]
fn every_check_has_a_should_fail_case() {
    let suite = stream::verify("broken", BrokenBridge::with(StreamKnobs::default()));
    assert_eq!(suite.tests.len(), 6);
    let names: Vec<&str> = suite.tests.iter().map(|t| t.name).collect();
    assert_coverage(&names, CASES, &[]);
    assert_every_check_has_a_hint(&suite);
}

#[test]
fn the_test_bridge_without_knobs_passes_every_check() {
    let suite = stream::verify("correct", BrokenBridge::with(StreamKnobs::default()));
    for t in &suite.tests {
        let o = t.run();
        assert_eq!(o.outcome, Outcome::Passed, "{}: {o:?}", t.name);
    }
}

#[test]
fn without_a_prefetch_the_bounded_checks_are_skipped_with_the_reason() {
    struct Undeclared(BrokenBridge);
    impl stream::StreamBridgeVerification for Undeclared {
        type Item = u64;
        fn create_stream(
            &self,
            publisher: rs_api::BoxPublisher<u64>,
        ) -> impl futures::Stream<Item = Result<u64, rs_api::Error>> + Send + 'static {
            self.0.create_stream(publisher)
        }
        fn create_element(&self, element: u64) -> u64 {
            element
        }
    }
    let suite = stream::verify(
        "undeclared",
        Undeclared(BrokenBridge::with(StreamKnobs::default())),
    );
    for name in [
        "required_stream_demand_must_stay_within_polled_plus_prefetch",
        "required_stream_backpressure_must_hold_while_the_consumer_does_not_poll",
    ] {
        let o = suite.test(name).unwrap().run();
        assert_eq!(o.outcome, Outcome::Skipped, "{name}: {o:?}");
        assert!(o.detail.contains("declares no prefetch"), "{o:?}");
    }
}
