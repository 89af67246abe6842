//! The rule 3.x checks (the subscription: re-entrant and recursive `request`, cancellation,
//! illegal and overflowing demand), one function per JVM TCK test of the same name.

use super::*;

pub(in crate::publisher) fn required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 6, false)?;
    let (sub, probe) = ManualSubscriber::with_recursion_bound(
        env,
        v.bounded_depth_of_on_next_and_request_recursion(),
    );
    let probe = probe
        .on_subscribe_hook(|h| {
            h.request(1);
            h.request(1);
            h.request(1);
        })
        .on_next_hook(|h, _| h.request(1));
    let ctx = "rule 3.2: request(1) called synchronously from on_subscribe (3 times) and from \
               every on_next";
    with_watchdog(env, ctx, move || subscribe_guarded(&*p, Box::new(probe)))??;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(ctx))?;
    sub.next_elements(6, ctx)?;
    env.verify_no_async_errors().map_err(|s| s.context(ctx))
}

pub(in crate::publisher) fn required_spec303_must_not_allow_unbounded_recursion<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let bound = v.bounded_depth_of_on_next_and_request_recursion();
    let elements = bound.saturating_add(1);
    let p = active(v, elements, false)?;
    let (sub, probe) = ManualSubscriber::with_recursion_bound(env, bound);
    let done = Latch::new(env);
    let hook_done = done.clone();
    let mut signals = 0u64;
    let probe = probe.blackhole().on_next_hook(move |h, _| {
        signals += 1;
        if signals >= elements {
            hook_done.close();
            return;
        }
        h.request(1); // the publisher must break the recursion
    });
    let ctx = "rule 3.3: request(1) -> on_next -> request(1) -> ...";
    let handle = sub.handle().clone();
    with_watchdog(env, ctx, move || subscribe_guarded(&*p, Box::new(probe)))?
        .map_err(|s| s.context(ctx))?;
    // As the JVM's env.subscribe: request only once on_subscribe came, from whichever thread
    // the publisher signals.
    sub.expect_subscribed().map_err(|s| s.context(ctx))?;
    with_watchdog(env, ctx, move || {
        handle.try_request(1).map_err(Stop::Failed)
    })?
    .map_err(|s| s.context(ctx))?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(ctx))?;
    let finished = env.poll_until(env.default_timeout(), || {
        done.is_closed() || sub.terminal().is_some()
    });
    let result = if finished {
        env.verify_no_async_errors_no_delay()
            .map_err(|s| s.context(ctx))
    } else {
        Err(Stop::failed(format!(
            "{ctx}: expected {elements} on_next signals (or a terminal signal), got {}",
            sub.delivered()
        )))
    };
    sub.cancel()?;
    result
}

pub(in crate::publisher) fn untested_spec304_request_should_not_perform_heavy_computations<
    V: PublisherVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "rule 3.4 is about time (request should return promptly); this TCK asserts counts, \
         never wall-clock time, which would make results depend on the machine",
    ))
}

pub(in crate::publisher) fn untested_spec305_cancel_must_not_synchronously_perform_heavy_computation<
    V: PublisherVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "rule 3.5's promptness is about time, which this TCK does not assert; its \
         observable parts are checked elsewhere: idempotence by the 3.7 test, thread safety \
         by the loom mode",
    ))
}

pub(in crate::publisher) fn required_spec306_after_subscription_is_cancelled_request_must_be_nops<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.cancel()?;
    for _ in 0..3 {
        sub.request(1).map_err(|s| s.context("rule 3.6"))?;
    }
    sub.expect_none("rule 3.6: after cancel, request must be a no-op, but a signal came")?;
    env.verify_no_async_errors_no_delay()
}

pub(in crate::publisher) fn required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 1, false)?;
    let sub = subscribe(v, env, &p)?;
    for _ in 0..3 {
        sub.cancel().map_err(|s| s.context("rule 3.7"))?;
    }
    sub.expect_none("rule 3.7: after cancel, cancel must be a no-op, but a signal came")?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context("rule 3.7"))
}

fn illegal_demand<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    n: u64,
    what: &str,
) -> TestResult<Error> {
    let p = active(v, 10, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(n).map_err(|s| s.context("rule 3.9"))?;
    sub.expect_error(&format!(
        "rule 3.9: {what} must be answered with on_error (an IllegalArgumentException on the \
         JVM)"
    ))
}

pub(in crate::publisher) fn required_spec309_request_zero_must_signal_illegal_argument_exception<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    illegal_demand(v, env, 0, "request(0)").map(drop)
}

pub(in crate::publisher) fn required_spec309_request_negative_number_must_signal_illegal_argument_exception<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let k = random_positive();
    let n = crate::publisher::demand_from_jvm(-k);
    illegal_demand(
        v,
        env,
        n,
        &format!("request({}) (the JVM's request(-{k}))", n),
    )
    .map(drop)
}

pub(in crate::publisher) fn optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 10, false)?;
    optional(env, || {
        let k = random_positive();
        let sub = subscribe(v, env, &p)?;
        sub.request(crate::publisher::demand_from_jvm(-k))?;
        let e = sub.expect_error("rule 3.9: request(0) (the JVM's negative request)")?;
        let m = e.to_string();
        ensure!(
            [
                "3.9",
                "non-positive subscription request",
                "negative subscription request"
            ]
            .iter()
            .any(|w| m.contains(w)),
            "rule 3.9: the error message should say the request was non-positive (contain \
             \"3.9\", \"non-positive subscription request\" or \"negative subscription \
             request\"), but it was: {m}"
        );
        Ok(())
    })
}

pub(in crate::publisher) fn required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const DEMAND: u64 = 15;
    let p = active(v, 20, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(10)?;
    sub.request(5)?;
    sub.next_element("rule 3.12: the first element")
        .map_err(no_delivery)?;
    sub.cancel()?;
    let mut signalled = 1u64;
    loop {
        match sub.next_signal(env.no_signals_timeout()) {
            None => break,
            Some(Signal::Next(_)) => {
                signalled += 1;
                ensure!(
                    signalled <= DEMAND,
                    "rule 3.12: after cancel the publisher kept signalling: {signalled} \
                     elements in total, more than the {DEMAND} requested"
                );
            }
            Some(other) => fail!("rule 3.12: {other} after cancel"),
        }
    }
    Ok(())
}

/// How many elements a publisher may still deliver after `cancel` returned, when the cancel
/// came from inside `on_next` under unbounded demand (the rule 3.12 check of that case): what
/// a publisher that emits in batches may have in flight. A publisher that checks the cancelled
/// flag before each `on_next` delivers none.
pub const CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND: u64 = 1024;

pub(in crate::publisher) fn required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const BEFORE_CANCEL: u64 = 10;
    let limit = BEFORE_CANCEL + CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND;
    // An endless publisher, as far as the verification allows: a runaway one is stopped by
    // the count below, not after 2^31 elements or a time.
    let elements = v
        .max_elements_from_publisher()
        .min(DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER);
    if elements <= limit {
        return Err(Stop::skipped(format!(
            "Unable to run this test, as it needs a publisher of more than {limit} elements \
             and max_elements_from_publisher() is {elements}"
        )));
    }
    let p = active(v, elements, false)?;
    let (sub, probe) = ManualSubscriber::with_recursion_bound(
        env,
        v.bounded_depth_of_on_next_and_request_recursion(),
    );
    let overran = Latch::new(env);
    let overran_hook = overran.clone();
    let probe = probe.blackhole().on_next_hook(move |h, _| {
        let n = h.delivered();
        if n == BEFORE_CANCEL {
            h.cancel();
        } else if n > limit {
            // The publisher ignores the cancel: stop its signalling thread here for good (a
            // broken publisher would otherwise run on to the end of its elements).
            overran_hook.close();
            loop {
                std::thread::park();
            }
        }
    });
    sub.subscribe_probe(&*p, probe)?;
    // A publisher that signals from the caller's thread emits inside this request: make it
    // on a thread of its own, so that this one can watch.
    let handle = sub.handle().clone();
    std::thread::spawn(move || handle.request(UNBOUNDED));
    let ctx = format!(
        "rule 3.12: cancel from inside on_next #{BEFORE_CANCEL} under unbounded demand \
         (request(UNBOUNDED))"
    );
    if !env.poll_until(env.default_timeout(), || sub.delivered() >= BEFORE_CANCEL) {
        fail!(
            "{ctx}: expected at least {BEFORE_CANCEL} elements after request(UNBOUNDED), got {}",
            sub.delivered()
        );
    }
    if env.poll_until(env.no_signals_timeout(), || overran.is_closed()) {
        fail!(
            "{ctx}: the publisher kept signalling: more than {CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND} \
             elements after cancel returned (the stream must stop within a bounded number of \
             elements)"
        );
    }
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(&ctx))
}

pub(in crate::publisher) fn required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(1)?;
    sub.next_element("rule 3.13: the first element")
        .map_err(no_delivery)?;
    sub.cancel()?;
    sub.expect_subscriber_dropped(
        env.timeouts().reference_drop + env.default_timeout(),
        "rule 3.13: after cancel the publisher must drop its reference to the subscriber",
    )
}

pub(in crate::publisher) fn required_spec317_must_support_a_pending_element_count_up_to_long_max_value<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    three_elements_after(
        v,
        env,
        &[i64::MAX as u64],
        "rule 3.17: after request(i64::MAX)",
    )
}

/// Rule 3.17's pending-count checks: a publisher of 3 elements, `requests` made in turn
/// (adding up to `i64::MAX`), then all 3 elements, completion and no asynchronous error.
fn three_elements_after<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    requests: &[u64],
    ctx: &str,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    for &n in requests {
        sub.request(n)?;
    }
    sub.next_elements(3, ctx)?;
    sub.expect_completion(ctx)?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(ctx))
}

pub(in crate::publisher) fn required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let half = i64::MAX as u64 / 2;
    // 2 × half + 1 is exactly i64::MAX.
    three_elements_after(
        v,
        env,
        &[half, half, 1],
        "rule 3.17: after a cumulative demand of i64::MAX (2 × i64::MAX/2 + 1)",
    )
}

pub(in crate::publisher) fn required_spec317_must_not_signal_on_error_when_pending_above_long_max_value<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, i32::MAX as u64, false)?;
    let (sub, probe) = ManualSubscriber::with_recursion_bound(
        env,
        v.bounded_depth_of_on_next_and_request_recursion(),
    );
    // 10 requests of i64::MAX - 1 from on_next, then cancel (JVM #259/#260): 11 elements.
    const REQUESTS: u64 = 10;
    let mut calls_left = REQUESTS;
    let probe = probe.blackhole().on_next_hook(move |h, _| {
        if calls_left > 0 {
            calls_left -= 1;
            h.request(i64::MAX as u64 - 1);
        } else {
            h.cancel();
        }
    });
    sub.subscribe_probe(&*p, probe)?;
    let ctx = "rule 3.17: demand far above i64::MAX (request(1), then 10 × request(i64::MAX - \
               1) from on_next) must saturate, not fail";
    sub.request(1).map_err(|s| s.context(ctx))?;
    // Not only no on_error: the elements keep coming (a demand that wraps stalls instead).
    let expected = REQUESTS + 1;
    let arrived = env.poll_until(env.default_timeout(), || sub.delivered() >= expected);
    let r = env.verify_no_async_errors().map_err(|s| s.context(ctx));
    sub.cancel()?;
    r?;
    ensure!(
        arrived,
        "{ctx}: the elements stopped: {} of the {expected} requested arrived (did the demand \
         wrap instead of saturating?)",
        sub.delivered()
    );
    Ok(())
}
