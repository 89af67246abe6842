//! Self-tests of the Sink-as-subscriber and async-callback verifications
//! (`rs_tck::adapters`): `rs_impl::compat::sink_subscriber` and `from_async` pass every check;
//! for every check, a broken adapter (`support/broken_adapter.rs`) makes it fail with the rule
//! and the reason.
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use rs_tck::adapters;
use rs_tck::outcome::Outcome;
use support::broken_adapter::{AsyncKnobs, BrokenAsyncAdapter, BrokenSinkAdapter, SinkKnobs};
use support::expect::{assert_case, assert_coverage, assert_every_check_has_a_hint, Expect};

fn sink(f: impl FnOnce(&mut SinkKnobs)) -> BrokenSinkAdapter {
    let mut k = SinkKnobs::default();
    f(&mut k);
    BrokenSinkAdapter(k)
}

fn callback(f: impl FnOnce(&mut AsyncKnobs)) -> BrokenAsyncAdapter {
    let mut k = AsyncKnobs::default();
    f(&mut k);
    BrokenAsyncAdapter(k)
}

macro_rules! should_fail {
    ($cases:ident, $verify:path; $( $case:ident : $check:ident, $v:expr, [$($needle:literal),* $(,)?] ;)*) => {
        $(
            #[test]
            fn $case() {
                assert_case(&$verify("broken", $v), stringify!($check), Expect::Fail, &[$($needle),*]);
            }
        )*
        /// (self-test name, check name) of every should-fail case.
        const $cases: &[(&str, &str)] = &[$((stringify!($case), stringify!($check))),*];
    };
}

should_fail! { SINK_CASES, adapters::verify_sink;
    sink_ready_should_fail_by_requesting_before_the_sink_is_ready:
        required_sink_no_demand_before_the_sink_is_ready,
        sink(|k| k.ready_lie = true),
        ["rule 2.1", "while its sink was not ready"];
    sink_readiness_should_fail_by_requesting_while_the_sink_is_full:
        required_sink_demand_must_follow_the_sinks_readiness,
        sink(|k| k.ready_lie = true),
        ["bounded buffering", "with the sink not ready", "more than the declared 1 held"];
    sink_delivery_should_fail_by_never_closing_the_sink:
        required_sink_must_receive_every_element_in_order_and_be_closed_on_completion,
        sink(|k| k.no_close = true),
        ["rule 2.9", "must close the sink"];
    sink_error_should_fail_by_swallowing_the_sinks_error:
        required_sink_error_must_cancel_upstream,
        sink(|k| k.swallow_errors = true),
        ["rule 2.6", "after its sink failed", "must cancel"];
}

should_fail! { ASYNC_CASES, adapters::verify_async;
    callbacks_should_fail_by_spawning_a_task_per_callback:
        required_async_callbacks_must_never_overlap,
        callback(|k| k.spawn_per_callback = true),
        ["rule 1.3/2.7", "started while another callback was still running"];
    callback_demand_should_fail_by_requesting_ahead_of_the_callbacks:
        required_async_callback_demand_must_wait_for_the_callbacks,
        callback(|k| k.spawn_per_callback = true),
        ["bounded buffering", "while the callbacks could not finish", "prefetch of 4"];
    callback_error_should_fail_by_losing_the_error:
        required_async_callback_must_get_the_upstream_error_after_the_elements,
        callback(|k| k.lose_error = true),
        ["rule 2.10", "no on_error callback"];
}

#[test]
fn every_check_has_a_should_fail_case() {
    for (suite, cases) in [
        (adapters::verify_sink("broken", sink(|_| {})), SINK_CASES),
        (
            adapters::verify_async("broken", callback(|_| {})),
            ASYNC_CASES,
        ),
    ] {
        let names: Vec<&str> = suite.tests.iter().map(|t| t.name).collect();
        assert_coverage(&names, cases, &[]);
        assert_every_check_has_a_hint(&suite);
    }
}

#[test]
fn the_rs_impl_adapters_pass_every_check() {
    for suite in [
        adapters::verify_sink("sink_subscriber", sink(|_| {})),
        adapters::verify_async("from_async", callback(|_| {})),
    ] {
        for t in &suite.tests {
            let o = t.run();
            assert_eq!(o.outcome, Outcome::Passed, "{}: {o:?}", t.name);
        }
    }
}
