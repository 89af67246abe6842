//! The bodies of the publisher checks. Each follows the JVM TCK's test of the same name
//! (`PublisherVerification` in reactive-streams-jvm's `tck`, v1.0.4); departures, and the
//! checks of our own, are documented in the [module table](super).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use rs_api::{BoxPublisher, Error, Subscriber, SubscriptionRef, UNBOUNDED};

use super::{
    PublisherVerification, SupportedSubscribers, DEFAULT_MAX_ELEMENTS_FROM_PUBLISHER,
    PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE,
};
use crate::env::TestEnvironment;
use crate::hints;
use crate::instruments::{subscribe_guarded, Latch, ManualSubscriber, Signal};
use crate::outcome::{ensure, fail, Stop, TestResult};
use crate::suite::UNMET_OPTIONAL;
use rs_impl::panics::panic_message;

mod spec1;
mod spec3;

pub(super) use spec1::*;
pub use spec3::CANCEL_SLACK_UNDER_UNBOUNDED_DEMAND;
pub(super) use spec3::*;

/// The pass detail of the two 3.9 negative-number tests.
pub(super) const NEGATIVE_DEMAND_NOTE: &str =
    "a negative demand cannot be expressed as u64; checked as a JVM bridge delivers it: \
     demand_from_jvm(-k) = request(0)";

// ---------------------------------------------------------------------------------------
// Helpers (the JVM's activePublisherTest, optionalActivePublisherTest, ...)

/// Skips unless the publisher can produce `elements` (and complete, if `completion`); then
/// creates it.
pub(super) fn active<V: PublisherVerification>(
    v: &V,
    elements: u64,
    completion: bool,
) -> TestResult<BoxPublisher<V::Item>> {
    require_elements(v, elements, completion)?;
    Ok(Box::new(v.create_publisher(elements)))
}

/// Skips unless the publisher can produce `elements` (and complete, if `completion`): the
/// JVM's `activePublisherTest` rule, shared with the loom scenarios.
pub(crate) fn require_elements<V: PublisherVerification>(
    v: &V,
    elements: u64,
    completion: bool,
) -> TestResult {
    let max = v.max_elements_from_publisher();
    if elements > max {
        return Err(Stop::skipped(format!(
            "Unable to run this test, as required elements nr: {elements} is higher than \
             supported by given producer: {max}"
        )));
    }
    if completion && max >= PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE {
        return Err(Stop::skipped(
            "This test requires an on_complete signal, which this publisher is unable to \
             provide (max_elements_from_publisher() returned \
             PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE)",
        ));
    }
    Ok(())
}

/// The failed publisher, or a skip.
fn failed_publisher<V: PublisherVerification>(v: &V) -> TestResult<BoxPublisher<V::Item>> {
    let failed = v.create_failed_publisher();
    failed
        .map(|p| Box::new(p) as BoxPublisher<V::Item>)
        .ok_or_else(|| {
            Stop::skipped(
                "no failed publisher: implement PublisherVerification::create_failed_publisher \
             to run this test",
            )
        })
}

/// An optional test: a failure becomes a skip.
fn optional(env: &TestEnvironment, body: impl FnOnce() -> TestResult) -> TestResult {
    let result = body().and_then(|()| env.verify_no_async_errors_no_delay());
    result.map_err(|stop| match stop {
        Stop::Failed(m) => Stop::skipped(format!(
            "Skipped because the tested publisher {UNMET_OPTIONAL}: {m}"
        )),
        other => other,
    })
}

fn subscribe<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    p: &BoxPublisher<V::Item>,
) -> TestResult<ManualSubscriber<V::Item>> {
    let (sub, probe) = ManualSubscriber::with_recursion_bound(
        env,
        v.bounded_depth_of_on_next_and_request_recursion(),
    );
    sub.subscribe_probe(&**p, probe)?;
    Ok(sub)
}

/// Runs `f` on a helper thread and waits for it; a call that does not return in time (a
/// deadlock on a re-entrant `request`) fails with `what`.
fn with_watchdog<R: Send + 'static>(
    env: &TestEnvironment,
    what: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> TestResult<R> {
    let timeout = env.default_timeout() * 10;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(p)) => Err(Stop::failed(format!(
            "{what}: panicked: {}",
            panic_message(&*p)
        ))),
        Err(_) => Err(Stop::failed(format!(
            "{what}: did not return within {} ms (a re-entrant request deadlocked?)",
            timeout.as_millis()
        ))),
    }
}

/// A requested element did not come (a timeout, not an early end or an error): the hint of
/// that, not the check's own.
fn no_delivery(stop: Stop) -> Stop {
    if stop.message().contains("no element within") {
        stop.with_hint(hints::NO_DELIVERY)
    } else {
        stop
    }
}

/// A random `k ≥ 1` for the negative-demand tests.
fn random_positive() -> i64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(7);
    i64::from(nanos % 1_000_000) + 1
}

// ---------------------------------------------------------------------------------------
// Setup and validation

pub(super) fn required_create_publisher1_must_produce_a_stream_of_exactly1_element<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 1, true)?;
    let sub = subscribe(v, env, &p)?;
    let first = sub.request_next_element_or_end_of_stream("create_publisher(1)")?;
    ensure!(first.is_some(), "create_publisher(1) produced no elements");
    sub.request_end_of_stream(
        "create_publisher(1) must produce exactly 1 element, then on_complete",
    )
}

pub(super) fn required_create_publisher3_must_produce_a_stream_of_exactly3_elements<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    for i in 1..=3 {
        let x = sub.request_next_element_or_end_of_stream("create_publisher(3)")?;
        ensure!(
            x.is_some(),
            "create_publisher(3) produced only {} elements",
            i - 1
        );
    }
    sub.request_end_of_stream(
        "create_publisher(3) must produce exactly 3 elements, then on_complete",
    )
}

pub(super) fn required_validate_max_elements_from_publisher<V: PublisherVerification>(
    v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    let max = v.max_elements_from_publisher();
    ensure!(
        max <= PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE,
        "max_elements_from_publisher() returned {max}, above i64::MAX \
         (PUBLISHER_UNABLE_TO_SIGNAL_ON_COMPLETE, the largest meaningful value)"
    );
    Ok(())
}

pub(super) fn required_validate_bounded_depth_of_on_next_and_request_recursion<
    V: PublisherVerification,
>(
    v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    let depth = v.bounded_depth_of_on_next_and_request_recursion();
    ensure!(
        depth >= 1,
        "bounded_depth_of_on_next_and_request_recursion() must be at least 1, was {depth}"
    );
    Ok(())
}
