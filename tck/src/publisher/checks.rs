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

// ---------------------------------------------------------------------------------------
// 1.x

pub(super) fn required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 5, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.expect_none("rule 1.1: the publisher signalled before the first request")?;
    sub.request(1)?;
    sub.next_element("rule 1.1: after request(1)")
        .map_err(no_delivery)?;
    sub.expect_none("rule 1.1: the publisher produced more than the 1 element requested")?;
    sub.request(1)?;
    sub.request(2)?;
    sub.next_elements(3, "rule 1.1: after request(1) and request(2)")
        .map_err(no_delivery)?;
    sub.expect_none("rule 1.1: the publisher produced more than the 4 elements requested")?;
    sub.cancel()
}

pub(super) fn required_spec102_may_signal_less_than_requested_and_terminate_subscription<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(10)?;
    sub.next_elements(3, "rule 1.2: request(10) of a 3-element publisher")
        .map_err(no_delivery)?;
    sub.expect_completion(
        "rule 1.2: after its 3 elements, with 7 still requested, the publisher must complete",
    )
}

/// The subscriber of the 1.3 test: requests one at a time, from inside `on_next` or through a
/// helper thread, and detects overlapping signals.
struct SequentialSubscriber {
    env: TestEnvironment,
    done: Latch,
    elements: u64,
    received: Arc<AtomicU64>,
    in_signal: Arc<AtomicBool>,
    subscription: Option<SubscriptionRef>,
    /// With a helper thread: where to send the subscription for each `request(1)`.
    helper: Option<mpsc::Sender<SubscriptionRef>>,
}

impl SequentialSubscriber {
    fn enter(&self, signal: &str) {
        if self.in_signal.swap(true, Ordering::AcqRel) {
            self.env.flop(format!(
                "rule 1.3: {signal} entered while another signal to the same subscriber was \
                 still running (signals must be serial)"
            ));
        }
    }

    fn exit(&self) {
        self.in_signal.store(false, Ordering::Release);
    }

    fn request_one(&self) {
        let Some(s) = self.subscription.clone() else {
            return;
        };
        match &self.helper {
            Some(tx) => {
                let _ = tx.send(s);
            }
            None => {
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.request(1))) {
                    self.env.flop(format!(
                        "rule 1.3: request(1) from inside on_next panicked: {}",
                        panic_message(&*p)
                    ));
                }
            }
        }
    }
}

impl<T> Subscriber<T> for SequentialSubscriber {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.enter("on_subscribe");
        self.subscription = Some(s);
        self.request_one();
        self.exit();
    }

    fn on_next(&mut self, _item: T) {
        self.enter("on_next");
        let n = self.received.fetch_add(1, Ordering::AcqRel) + 1;
        if n <= self.elements {
            self.request_one();
        }
        self.exit();
    }

    fn on_error(&mut self, error: Error) {
        self.enter("on_error");
        self.env
            .flop(format!("rule 1.3: unexpected on_error({error})"));
        self.done.close();
        self.exit();
    }

    fn on_complete(&mut self) {
        self.enter("on_complete");
        self.done.close();
        self.exit();
    }
}

pub(super) fn stochastic_spec103_must_signal_on_methods_sequentially<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const ITERATIONS: u32 = 100;
    const ELEMENTS: u64 = 10;
    if v.skip_stochastic_tests() {
        return Err(Stop::skipped(
            "Skipping stochastic test because skip_stochastic_tests() returned true",
        ));
    }
    for i in 1..=ITERATIONS {
        let p = active(v, ELEMENTS, true)?;
        let concurrent = i % 2 == 0;
        let done = Latch::new(env);
        let received = Arc::new(AtomicU64::new(0));
        let timeout = env.default_timeout() * ELEMENTS as u32;
        let helper = concurrent.then(|| {
            let (tx, rx) = mpsc::channel::<SubscriptionRef>();
            let env = env.clone();
            std::thread::spawn(move || {
                while let Ok(s) = rx.recv_timeout(timeout) {
                    if let Err(p) = catch_unwind(AssertUnwindSafe(|| s.request(1))) {
                        env.flop(format!(
                            "rule 1.3: request(1) from another thread panicked: {}",
                            panic_message(&*p)
                        ));
                    }
                }
            });
            tx
        });
        let sub = SequentialSubscriber {
            env: env.clone(),
            done: done.clone(),
            elements: ELEMENTS,
            received: received.clone(),
            in_signal: Arc::new(AtomicBool::new(false)),
            subscription: None,
            helper,
        };
        subscribe_guarded(&*p, Box::new(sub))?;
        let mode = if concurrent {
            "requests from a helper thread"
        } else {
            "requests from inside on_next"
        };
        if done.expect_close(timeout, "").is_err() {
            fail!(
                "rule 1.3: iteration {i} of {ITERATIONS} ({mode}): expected on_complete after \
                 {ELEMENTS} elements requested one by one, received {} elements and no \
                 on_complete within {} ms (lost wake-up?)",
                received.load(Ordering::Acquire),
                timeout.as_millis()
            );
        }
        env.verify_no_async_errors_no_delay()
            .map_err(|s| s.context(&format!("iteration {i} of {ITERATIONS} ({mode})")))?;
    }
    Ok(())
}

/// The 1.4 / 1.9 failed-publisher check: exactly one `on_subscribe`, then exactly one
/// `on_error`, nothing else.
fn failed_publisher_signals<T: Send + 'static>(
    env: &TestEnvironment,
    p: &BoxPublisher<T>,
    rule: &str,
) -> TestResult {
    struct LatchSubscriber {
        env: TestEnvironment,
        rule: String,
        on_subscribe: Latch,
        on_error: Latch,
    }
    impl<T> Subscriber<T> for LatchSubscriber {
        fn on_subscribe(&mut self, _s: SubscriptionRef) {
            self.on_subscribe
                .assert_open("rule 1.9: only one on_subscribe expected");
            self.on_subscribe.close();
        }
        fn on_next(&mut self, _item: T) {
            self.env.flop(format!(
                "rule {}: the failed publisher signalled on_next",
                self.rule
            ));
        }
        fn on_error(&mut self, _e: Error) {
            self.on_subscribe
                .assert_closed("rule 1.9: on_subscribe must be called before on_error");
            self.on_error
                .assert_open("rule 1.7: only one on_error expected");
            self.on_error.close();
        }
        fn on_complete(&mut self) {
            self.env.flop(format!(
                "rule {}: the failed publisher signalled on_complete instead of on_error",
                self.rule
            ));
        }
    }
    let on_subscribe = Latch::new(env);
    let on_error = Latch::new(env);
    subscribe_guarded(
        &**p,
        Box::new(LatchSubscriber {
            env: env.clone(),
            rule: rule.to_owned(),
            on_subscribe: on_subscribe.clone(),
            on_error: on_error.clone(),
        }),
    )?;
    env.verify_no_async_errors_no_delay()?;
    on_subscribe.expect_close(
        env.default_timeout(),
        "rule 1.9: should have received on_subscribe",
    )?;
    on_error.expect_close(
        env.default_timeout(),
        &format!("rule {rule}: should have received on_error from the failed publisher"),
    )?;
    env.verify_no_async_errors_no_delay()
}

pub(super) fn optional_spec104_must_signal_on_error_when_fails<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    // As the JVM: a hard failure once a failed publisher is supplied.
    let p = failed_publisher(v)?;
    failed_publisher_signals(env, &p, "1.4")
}

pub(super) fn required_spec105_must_signal_on_complete_when_finite_stream_terminates<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    for _ in 0..3 {
        sub.request_next_element("rule 1.5: requesting the 3 elements one by one")
            .map_err(no_delivery)?;
    }
    sub.request_end_of_stream("rule 1.5: a finite stream must signal on_complete")?;
    sub.expect_none("rule 1.7: a signal after on_complete")
        .map_err(|s| s.with_hint(hints::AFTER_ON_COMPLETE))
}

pub(super) fn optional_spec105_empty_stream_must_terminate_by_signalling_on_complete<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 0, true)?;
    optional(env, || {
        let sub = subscribe(v, env, &p)?;
        sub.request(1)?;
        sub.expect_completion("rule 1.5: an empty stream must signal on_complete")?;
        sub.expect_none("rule 1.7: a signal after on_complete")
            .map_err(|s| s.with_hint(hints::AFTER_ON_COMPLETE))
    })
}

pub(super) fn untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let n = v.max_elements_from_publisher().min(1);
    let p = active(v, n, true)?;
    let wait = env.timeouts().reference_drop;
    let sub = subscribe(v, env, &p)?;
    sub.request(1)?;
    if n == 1 {
        sub.next_element("rule 1.6: the one element")
            .map_err(no_delivery)?;
    }
    sub.expect_completion("rule 1.6: the stream must complete")?;
    sub.expect_subscriber_dropped(
        wait,
        "rule 1.6: after on_complete the subscription counts as cancelled, so the publisher \
         must drop its subscriber",
    )?;
    sub.request(1)?;
    sub.cancel()?;
    sub.expect_none("rule 1.6: a signal in answer to request/cancel after on_complete")?;
    if let Some(fp) = v.create_failed_publisher() {
        let fp: BoxPublisher<V::Item> = Box::new(fp);
        let sub = subscribe(v, env, &fp)?;
        sub.request(1)?;
        sub.expect_error("rule 1.6: the failed publisher must signal on_error")
            .map_err(|s| s.with_hint(hints::FAILED_PUBLISHER))?;
        sub.expect_subscriber_dropped(
            wait,
            "rule 1.6: after on_error the subscription counts as cancelled, so the publisher \
             must drop its subscriber",
        )?;
        sub.request(1)?;
        sub.cancel()?;
        sub.expect_none("rule 1.6: a signal in answer to request/cancel after on_error")?;
    }
    Ok(())
}

pub(super) fn required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 1, true)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(10)?;
    sub.next_element("rule 1.7: the one element")
        .map_err(no_delivery)?;
    sub.expect_completion("rule 1.7: on_complete after the one element")?;
    sub.request(10)?;
    sub.expect_none("rule 1.7: a signal after on_complete")
}

pub(super) fn untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = failed_publisher(v)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(1)?;
    sub.expect_error("rule 1.7: the failed publisher must signal on_error")
        .map_err(|s| s.with_hint(hints::FAILED_PUBLISHER))?;
    sub.request(10)?;
    sub.cancel()?;
    sub.expect_none("rule 1.7: a signal after on_error")
}

pub(super) fn untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 2, false)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(1)?;
    sub.next_element("rule 1.8: the first of 2 elements")
        .map_err(no_delivery)?;
    sub.cancel()?;
    sub.request(1)?;
    // 2.8: an element in flight may still come; a terminal signal may not.
    loop {
        match sub.next_signal(env.no_signals_timeout()) {
            None => return Ok(()),
            Some(Signal::Next(_)) => continue,
            Some(other) => fail!(
                "rule 1.8: {other} after cancel: a cancelled subscription must not receive \
                 on_complete or on_error"
            ),
        }
    }
}

pub(super) fn required_spec109_must_issue_on_subscribe_for_non_null_subscriber<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 0, false)?;
    let (sub, probe) = ManualSubscriber::<V::Item>::new(env);
    subscribe_guarded(&*p, Box::new(probe))?;
    env.verify_no_async_errors_no_delay()?;
    sub.expect_subscribed()?;
    env.verify_no_async_errors_no_delay()
}

pub(super) fn untested_spec109_subscribe_should_not_throw_non_fatal_throwable<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let n = v.max_elements_from_publisher().min(1);
    let p = active(v, n, false)?;
    let ctx = "rule 1.9: subscribe, request and cancel must return normally";
    let sub = subscribe(v, env, &p).map_err(|s| s.context(ctx))?;
    sub.request(1).map_err(|s| s.context(ctx))?;
    sub.request(UNBOUNDED).map_err(|s| s.context(ctx))?;
    sub.cancel().map_err(|s| s.context(ctx))?;
    sub.cancel().map_err(|s| s.context(ctx))
}

pub(super) fn required_spec109_subscribe_throw_npe_on_null_subscriber<V: PublisherVerification>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::skipped(
        "decided by the types: Publisher::subscribe takes a Box<dyn Subscriber<T>>, which \
         cannot be null, so there is no null subscriber to reject",
    ))
}

pub(super) fn required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = failed_publisher(v)?;
    failed_publisher_signals(env, &p, "1.9")
}

pub(super) fn untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice<
    V: PublisherVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::skipped(
        "decided by the types: Publisher::subscribe takes the subscriber by value \
         (Box<dyn Subscriber<T>>), so the same subscriber cannot be subscribed twice",
    ))
}

/// A 1.11 test that needs `subscribers` at once, as the verification declares
/// ([`PublisherVerification::max_supported_subscribers`]): undeclared, an optional test (a
/// failure is an unmet optional requirement); declared multiple, a required one (a test that
/// needs more than the declared number is skipped); declared unicast, skipped.
fn multicast<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    subscribers: u64,
    body: impl FnOnce() -> TestResult,
) -> TestResult {
    match v.max_supported_subscribers() {
        SupportedSubscribers::Undeclared => optional(env, body),
        SupportedSubscribers::AtMost(n) if n < subscribers => Err(Stop::skipped(format!(
            "this test needs {subscribers} subscribers at once, and the verification declares \
             at most {n} (max_supported_subscribers)"
        ))),
        SupportedSubscribers::AtMost(_) => body()
            .and_then(|()| env.verify_no_async_errors_no_delay())
            .map_err(|s| {
                s.context(
                    "(required: the verification declares multiple subscribers, \
                     max_supported_subscribers)",
                )
            }),
    }
}

/// Requests 1 on each of `subs` and takes the element or the end of each, in order. With
/// independent demand each waits right after its own request (as the JVM); with coordinated
/// emission every subscriber requests first (nothing moves until all have demand).
fn request_one_each<V: PublisherVerification>(
    v: &V,
    subs: &[&ManualSubscriber<V::Item>],
    context: impl Fn(usize) -> String,
) -> TestResult<Vec<Option<V::Item>>> {
    if v.does_coordinated_emission() {
        for s in subs {
            s.request(1)?;
        }
        subs.iter()
            .enumerate()
            .map(|(i, s)| s.next_element_or_end_of_stream(&context(i)))
            .collect()
    } else {
        subs.iter()
            .enumerate()
            .map(|(i, s)| s.request_next_element_or_end_of_stream(&context(i)))
            .collect()
    }
}

pub(super) fn optional_spec111_may_support_multi_subscribe<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 1, false)?;
    multicast(v, env, 2, || {
        let _a = subscribe(v, env, &p)?;
        let _b = subscribe(v, env, &p)?;
        env.verify_no_async_errors()
            .map_err(|s| s.context("rule 1.11: a second subscriber"))
    })
}

pub(super) fn optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 1, false)?;
    multicast(v, env, 2, || {
        let a = subscribe(v, env, &p)?;
        let b = subscribe(v, env, &p)?;
        request_one_each(v, &[&a, &b], |i| {
            format!(
                "rule 1.11: the {} subscriber",
                ["first", "second"][i.min(1)]
            )
        })?;
        let r = env.verify_no_async_errors();
        a.cancel()?;
        b.cancel()?;
        r
    })
}

fn same_sequences<T: PartialEq + std::fmt::Debug>(lists: &[Vec<T>]) -> TestResult {
    for (i, l) in lists.iter().enumerate().skip(1) {
        ensure!(
            *l == lists[0],
            "rule 1.11: subscriber {} received {l:?}, but subscriber 1 received {:?}",
            i + 1,
            lists[0]
        );
    }
    Ok(())
}

pub(super) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 5, true)?;
    multicast(v, env, 3, || {
        let subs = [
            subscribe(v, env, &p)?,
            subscribe(v, env, &p)?,
            subscribe(v, env, &p)?,
        ];
        let mut lists: [Vec<V::Item>; 3] = Default::default();
        // Interleaved, in a different order each round.
        let orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [2, 1, 0], [1, 2, 0]];
        for order in orders {
            let round = order.map(|i| &subs[i]);
            let got = request_one_each(v, &round, |k| {
                format!(
                    "rule 1.11: subscriber {} requesting one by one",
                    order[k] + 1
                )
            })?;
            for (k, x) in got.into_iter().enumerate() {
                let i = order[k];
                match x {
                    Some(x) => lists[i].push(x),
                    None => fail!(
                        "rule 1.11: subscriber {} requesting one by one: expected an element, \
                         got on_complete",
                        i + 1
                    ),
                }
            }
        }
        for (i, s) in subs.iter().enumerate() {
            s.request_end_of_stream(&format!("rule 1.11: subscriber {}", i + 1))?;
        }
        same_sequences(&lists)
    })
}

fn many_upfront<V: PublisherVerification>(
    v: &V,
    env: &TestEnvironment,
    completion: bool,
) -> TestResult {
    let p = active(v, 3, completion)?;
    multicast(v, env, 3, || {
        let subs = [
            subscribe(v, env, &p)?,
            subscribe(v, env, &p)?,
            subscribe(v, env, &p)?,
        ];
        for s in &subs {
            s.request(4)?;
        }
        let mut lists = Vec::new();
        for (i, s) in subs.iter().enumerate() {
            lists.push(s.next_elements(3, &format!("rule 1.11: subscriber {}", i + 1))?);
        }
        if completion {
            for (i, s) in subs.iter().enumerate() {
                s.expect_completion(&format!("rule 1.11: subscriber {}", i + 1))?;
            }
        }
        same_sequences(&lists)
    })
}

pub(super) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    many_upfront(v, env, false)
}

pub(super) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    many_upfront(v, env, true)
}

pub(super) fn optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    // The JVM TCK misses a publisher that drops (or starves) an earlier subscriber when a
    // later one joins (reactive-streams-jvm #371).
    const ELEMENTS: u64 = 5;
    let p = active(v, ELEMENTS, true)?;
    multicast(v, env, 3, || {
        let first = subscribe(v, env, &p)?;
        first.request(1)?;
        first.next_element("rule 1.11: subscriber 1, alone")?;
        let later = [subscribe(v, env, &p)?, subscribe(v, env, &p)?];
        // Everyone requests the rest (with coordinated emission nothing moves otherwise).
        first.request(ELEMENTS - 1)?;
        for s in &later {
            s.request(ELEMENTS - 1)?;
        }
        first.next_elements(
            ELEMENTS - 1,
            "rule 1.11: subscriber 1 must keep receiving after subscribers 2 and 3 joined",
        )?;
        first.expect_completion(
            "rule 1.11: subscriber 1 must keep receiving after subscribers 2 and 3 joined, up \
             to on_complete after its 5 elements",
        )?;
        for (i, s) in later.iter().enumerate() {
            s.next_element_or_end_of_stream(&format!(
                "rule 1.11: subscriber {} must receive on_next or on_complete",
                i + 2
            ))?;
        }
        for s in later.iter().chain([&first]) {
            s.cancel()?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// 3.x

pub(super) fn required_spec302_must_allow_synchronous_request_calls_from_on_next_and_on_subscribe<
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

pub(super) fn required_spec303_must_not_allow_unbounded_recursion<V: PublisherVerification>(
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

pub(super) fn untested_spec304_request_should_not_perform_heavy_computations<
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

pub(super) fn untested_spec305_cancel_must_not_synchronously_perform_heavy_computation<
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

pub(super) fn required_spec306_after_subscription_is_cancelled_request_must_be_nops<
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

pub(super) fn required_spec307_after_subscription_is_cancelled_additional_cancelations_must_be_nops<
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

pub(super) fn required_spec309_request_zero_must_signal_illegal_argument_exception<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    illegal_demand(v, env, 0, "request(0)").map(drop)
}

pub(super) fn required_spec309_request_negative_number_must_signal_illegal_argument_exception<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let k = random_positive();
    let n = super::demand_from_jvm(-k);
    illegal_demand(
        v,
        env,
        n,
        &format!("request({}) (the JVM's request(-{k}))", n),
    )
    .map(drop)
}

pub(super) fn optional_spec309_request_negative_number_may_signal_illegal_argument_exception_with_specific_message<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 10, false)?;
    optional(env, || {
        let k = random_positive();
        let sub = subscribe(v, env, &p)?;
        sub.request(super::demand_from_jvm(-k))?;
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

pub(super) fn required_spec312_cancel_must_make_the_publisher_to_eventually_stop_signaling<
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

pub(super) fn required_spec312_cancel_under_unbounded_demand_must_make_the_publisher_stop_signaling<
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

pub(super) fn required_spec313_cancel_must_make_the_publisher_eventually_drop_all_references_to_the_subscriber<
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

pub(super) fn required_spec317_must_support_a_pending_element_count_up_to_long_max_value<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    sub.request(i64::MAX as u64)?;
    let ctx = "rule 3.17: after request(i64::MAX)";
    sub.next_elements(3, ctx)?;
    sub.expect_completion(ctx)?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(ctx))
}

pub(super) fn required_spec317_must_support_a_cumulative_pending_element_count_up_to_long_max_value<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = active(v, 3, true)?;
    let sub = subscribe(v, env, &p)?;
    let half = i64::MAX as u64 / 2;
    sub.request(half)?;
    sub.request(half)?;
    sub.request(1)?; // now exactly i64::MAX
    let ctx = "rule 3.17: after a cumulative demand of i64::MAX (2 × i64::MAX/2 + 1)";
    sub.next_elements(3, ctx)?;
    sub.expect_completion(ctx)?;
    env.verify_no_async_errors_no_delay()
        .map_err(|s| s.context(ctx))
}

pub(super) fn required_spec317_must_not_signal_on_error_when_pending_above_long_max_value<
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
