//! The processor's own four tests, and its versions of the whitebox 3.15 and 3.16 tests.

use std::sync::Arc;

use rs_api::Error;

use super::{AsWhitebox, IdentityProcessorVerification, Own, Setup, UpstreamErrorPolicy};
use crate::env::TestEnvironment;
use crate::hints;
use crate::instruments::ManualSubscriber;
use crate::outcome::{ensure, Stop, TestResult};
use crate::subscriber::{same_error, with_async_errors};
use crate::suite::{specs, TestSpec};

const COORDINATION_HINT: &str =
    "if the processor coordinates requests/emissions when it has several subscribers at once, \
     override does_coordinated_emission() to return true";

/// A processor with the TCK's publisher upstream; a failure keeps the errors flopped meanwhile.
fn run<V: IdentityProcessorVerification>(
    v: &Arc<V>,
    env: &TestEnvironment,
    body: impl FnOnce(&Setup<V>) -> TestResult,
) -> TestResult {
    let s = Setup::new(v, env);
    with_async_errors(env, body(&s))
}

/// Sends the next element from upstream and expects it at `sub`.
fn send_through<V: IdentityProcessorVerification>(
    s: &Setup<V>,
    sub: &ManualSubscriber<V::Item>,
    ctx: &str,
) -> TestResult {
    let x = s.send_next(ctx)?;
    expect_element(sub, &x, ctx)
}

fn test_error() -> Error {
    Error::msg("rs-tck: test exception")
}

fn multi<V: IdentityProcessorVerification>(v: &V, needed: u64) -> TestResult {
    let max = v.max_supported_subscribers();
    if max < needed {
        return Err(Stop::skipped(format!(
            "The Publisher under test only supports {max} subscribers, while this test requires \
             at least {needed} to run."
        )));
    }
    Ok(())
}

fn expect_element<T: PartialEq + std::fmt::Debug + Send + 'static>(
    sub: &ManualSubscriber<T>,
    expected: &T,
    context: &str,
) -> TestResult {
    let x = sub.next_element(context)?;
    ensure!(
        x == *expected,
        "{context}: expected element {expected:?}, got {x:?}"
    );
    Ok(())
}

pub(super) fn required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error<
    V: IdentityProcessorVerification,
>(
    o: &Own<V>,
    env: &TestEnvironment,
) -> TestResult {
    multi(&*o.0, 2)?;
    run(&o.0, env, |s| {
        let sub1 = s.subscriber(env)?;
        let sub2 = s.subscriber(env)?;
        if o.0.does_coordinated_emission() {
            sub1.request(1)?;
            sub2.request(1)?;
            let x = s.send_next("rule 1.4: the processor must request from upstream")?;
            expect_element(&sub1, &x, "rule 1.4: subscriber 1")?;
            expect_element(&sub2, &x, "rule 1.4: subscriber 2")?;
            sub1.request(1)?;
            sub2.request(1)?;
        } else {
            sub1.request(1)?;
            let x = s.send_next(&format!("rule 1.4 ({COORDINATION_HINT})"))?;
            expect_element(&sub1, &x, &format!("rule 1.4 ({COORDINATION_HINT})"))?;
            sub2.request(1)?;
            expect_element(&sub2, &x, "rule 1.4: subscriber 2")?;
        }
        let e = test_error();
        s.upstream.send_error(e.clone());
        for (i, sub) in [&sub1, &sub2].into_iter().enumerate() {
            let got = sub.expect_error(&format!(
                "rule 1.4: the upstream's error must reach subscriber {}",
                i + 1
            ))?;
            ensure!(
                same_error(&got, &e),
                "rule 1.4: subscriber {} got on_error({got}), not the upstream's error ({e})",
                i + 1
            );
        }
        env.verify_no_async_errors_no_delay()
    })
}

pub(super) fn must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream<
    V: IdentityProcessorVerification,
>(
    o: &Own<V>,
    env: &TestEnvironment,
) -> TestResult {
    run(&o.0, env, |s| {
        let sub = s.subscriber(env)?;
        let e = test_error();
        s.upstream.send_error(e.clone());
        let got = sub.expect_error(
            "rule 4.2: the upstream's on_error must reach the downstream at once, without a \
             request",
        )?;
        ensure!(
            same_error(&got, &e),
            "rule 4.2: the downstream got on_error({got}), not the upstream's error ({e})"
        );
        // The recovery branch's obligation, shared by both: the failed subscription counts as
        // cancelled. Downstream activity must not reach it (the upstream flops a request after
        // on_error as rule 2.4).
        sub.request(1)?;
        sub.cancel()?;
        let late = s.subscriber(env)?;
        late.request(1)?;
        late.expect_error("rule 4.2: a subscriber that joins after the error gets it too")?;
        env.verify_no_async_errors()
            .map_err(|e| e.context("rule 4.2: after the upstream's on_error"))?;
        ensure!(
            !s.upstream.is_cancelled(),
            "rule 4.2: after the upstream's on_error the processor cancelled that subscription; \
             it must treat it as cancelled already (recovering or forwarding alike)"
        );
        Ok(())
    })
}

pub(super) fn required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago<
    V: IdentityProcessorVerification,
>(
    o: &Own<V>,
    env: &TestEnvironment,
) -> TestResult {
    multi(&*o.0, 2)?;
    run(&o.0, env, |s| {
        let ctx = "rule 2.1: the processor must request from upstream for demand signalled long \
                   ago";
        let sub1 = s.subscriber(env)?;
        sub1.request(20)?;
        send_through(s, &sub1, ctx)?;
        send_through(s, &sub1, ctx)?;
        let sub2 = s.subscriber(env)?;
        // sub1 has 18 pending, sub2 none.
        if o.0.does_coordinated_emission() {
            sub2.expect_none("subscriber 2 has not requested yet")?;
            sub2.request(1)?;
            let z = s.send_next(ctx)?;
            expect_element(&sub1, &z, ctx)?;
            expect_element(&sub2, &z, ctx)?;
        } else {
            let z = s.send_next(ctx)?;
            expect_element(&sub1, &z, &format!("{ctx} ({COORDINATION_HINT})"))?;
            sub2.expect_none("subscriber 2 has not requested yet")?;
            sub2.request(1)?;
            expect_element(&sub2, &z, ctx)?;
        }
        s.upstream.send_completion();
        sub1.expect_completion("subscriber 1 after the upstream completed")?;
        sub2.expect_completion("subscriber 2 after the upstream completed")?;
        env.verify_no_async_errors_no_delay()
    })
}

pub(super) fn required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight<
    V: IdentityProcessorVerification,
>(
    o: &Own<V>,
    env: &TestEnvironment,
) -> TestResult {
    let policy = o.0.upstream_error_policy();
    run(&o.0, env, |s| {
        let ctx = format!(
            "rule 4.2 (upstream_error_policy: {policy:?}): an upstream on_error while the \
             processor holds elements its subscriber has not requested"
        );
        let sub = s.subscriber(env)?;
        sub.request(1)?;
        send_through(s, &sub, &ctx)?;
        // Elements the subscriber has not asked for: the processor holds them.
        let mut held = Vec::new();
        while held.len() < 2
            && env.poll_until(env.default_timeout(), || s.upstream.outstanding() > 0)
        {
            held.push(s.send_next(&ctx)?);
        }
        if held.is_empty() {
            return Err(Stop::skipped(format!(
                "{ctx}: the processor requested nothing from upstream beyond what its \
                 subscriber requested, so it never holds an element to test this with"
            )));
        }
        let e = test_error();
        s.upstream.send_error(e.clone());
        let n = held.len();
        match policy {
            UpstreamErrorPolicy::Immediately => {
                let got = sub
                    .expect_error(&format!(
                        "{ctx}: the error must reach the subscriber at once, without a \
                         request, dropping the {n} held elements"
                    ))
                    .map_err(|s| s.with_hint(hints::ERROR_IMMEDIATELY))?;
                ensure!(
                    same_error(&got, &e),
                    "{ctx}: the subscriber got on_error({got}), not the upstream's error ({e})"
                );
                sub.request(n as u64)?;
                sub.expect_none(&format!(
                    "{ctx}: nothing may follow on_error (rule 1.7), the held elements included"
                ))
                .map_err(|s| s.with_hint(hints::ERROR_IMMEDIATELY))?;
            }
            UpstreamErrorPolicy::AfterHeldElements => {
                sub.expect_none(&format!(
                    "{ctx}: without demand nothing may come: the error must wait for the {n} \
                     held elements"
                ))
                .map_err(|s| s.with_hint(hints::ERROR_AFTER_HELD))?;
                for (i, x) in held.iter().enumerate() {
                    sub.request(1)?;
                    expect_element(
                        &sub,
                        x,
                        &format!("{ctx}: held element {} of {n}, on request", i + 1),
                    )
                    .map_err(|s| s.with_hint(hints::ERROR_AFTER_HELD))?;
                }
                let got = sub
                    .expect_error(&format!(
                        "{ctx}: after the last held element the error must follow at once, \
                         without a request"
                    ))
                    .map_err(|s| s.with_hint(hints::ERROR_AFTER_HELD))?;
                ensure!(
                    same_error(&got, &e),
                    "{ctx}: the subscriber got on_error({got}), not the upstream's error ({e})"
                );
            }
        }
        env.verify_no_async_errors_no_delay()
    })
}

/// 3.15 on the processor's downstream subscription: `cancel` returns normally, also when
/// repeated and from another thread.
pub(super) fn spec315<V: IdentityProcessorVerification>(
    w: &AsWhitebox<V>,
    env: &TestEnvironment,
) -> TestResult {
    run(&w.0, env, |s| {
        let ctx = "rule 3.15: the processor's downstream subscription";
        let sub = s.subscriber(env)?;
        sub.request(1)?;
        send_through(s, &sub, ctx)?;
        sub.cancel().map_err(|e| e.context(ctx))?;
        sub.cancel().map_err(|e| e.context(ctx))?;
        let h = sub.handle().clone();
        std::thread::spawn(move || h.try_cancel())
            .join()
            .map_err(|_| Stop::failed(format!("{ctx}: cancel from another thread panicked")))?
            .map_err(|m| Stop::failed(format!("{ctx}: {m}")))?;
        env.verify_no_async_errors_no_delay()
    })
}

/// 3.16 on the processor's downstream subscription: `request` returns normally for any `n`,
/// and `request(0)` comes back as `on_error`.
pub(super) fn spec316<V: IdentityProcessorVerification>(
    w: &AsWhitebox<V>,
    env: &TestEnvironment,
) -> TestResult {
    run(&w.0, env, |s| {
        let ctx = "rule 3.16: the processor's downstream subscription";
        let sub = s.subscriber(env)?;
        for n in [1, u64::MAX, i64::MAX as u64] {
            sub.request(n).map_err(|e| e.context(ctx))?;
        }
        send_through(s, &sub, ctx)?;
        sub.request(0).map_err(|e| e.context(ctx))?;
        sub.expect_error(
            "rule 3.16: request(0) must return normally and report the failure through on_error",
        )?;
        env.verify_no_async_errors_no_delay()
    })
}

/// The processor's own four tests.
pub(super) fn specs<V: IdentityProcessorVerification>() -> Vec<TestSpec<Own<V>>> {
    specs![V, self:
        required_spec104_must_call_on_error_on_all_its_subscribers_if_it_encounters_a_non_recoverable_error, "required_spec104_mustCallOnErrorOnAllItsSubscribersIfItEncountersANonRecoverableError", "1.4",
            "does the processor forward an upstream on_error to every current subscriber, not only the first?";
        must_immediately_pass_on_on_error_events_received_from_its_upstream_to_its_downstream, "mustImmediatelyPassOnOnErrorEventsReceivedFromItsUpstreamToItsDownstream", "4.2",
            "does the processor forward an upstream error at once, without waiting for downstream demand, and leave the failed upstream subscription alone afterwards (no request, no cancel)?";
        required_must_request_from_upstream_for_elements_that_have_been_requested_long_ago, "required_mustRequestFromUpstreamForElementsThatHaveBeenRequestedLongAgo", "2.1",
            "does the processor request from upstream again as downstream demand arrives? a processor that emits only when every subscriber has demand must say so: does_coordinated_emission() = true";
        required_spec402_must_follow_its_declared_policy_for_an_error_with_elements_in_flight, "", "4.2",
            "does the processor handle an upstream error with elements in flight as it declares (upstream_error_policy)?";
    ]
}
