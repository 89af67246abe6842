//! The rule 1.x checks (the publisher's signals: their number, order and termination, and
//! rule 1.11's multicast), one function per JVM TCK test of the same name.

use super::*;

pub(in crate::publisher) fn required_spec101_subscription_request_must_result_in_the_correct_number_of_produced_elements<
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

pub(in crate::publisher) fn required_spec102_may_signal_less_than_requested_and_terminate_subscription<
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

pub(in crate::publisher) fn stochastic_spec103_must_signal_on_methods_sequentially<
    V: PublisherVerification,
>(
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

pub(in crate::publisher) fn optional_spec104_must_signal_on_error_when_fails<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    // As the JVM: a hard failure once a failed publisher is supplied.
    let p = failed_publisher(v)?;
    failed_publisher_signals(env, &p, "1.4")
}

pub(in crate::publisher) fn required_spec105_must_signal_on_complete_when_finite_stream_terminates<
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

pub(in crate::publisher) fn optional_spec105_empty_stream_must_terminate_by_signalling_on_complete<
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

pub(in crate::publisher) fn untested_spec106_must_consider_subscription_cancelled_after_on_error_or_on_complete_has_been_called<
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

pub(in crate::publisher) fn required_spec107_must_not_emit_further_signals_once_on_complete_has_been_signalled<
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

pub(in crate::publisher) fn untested_spec107_must_not_emit_further_signals_once_on_error_has_been_signalled<
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

pub(in crate::publisher) fn untested_spec108_possibly_canceled_subscription_should_not_receive_on_error_or_on_complete_signals<
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

pub(in crate::publisher) fn required_spec109_must_issue_on_subscribe_for_non_null_subscriber<
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

pub(in crate::publisher) fn untested_spec109_subscribe_should_not_throw_non_fatal_throwable<
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

pub(in crate::publisher) fn required_spec109_subscribe_throw_npe_on_null_subscriber<
    V: PublisherVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::skipped(
        "decided by the types: Publisher::subscribe takes a Box<dyn Subscriber<T>>, which \
         cannot be null, so there is no null subscriber to reject",
    ))
}

pub(in crate::publisher) fn required_spec109_may_reject_calls_to_subscribe_if_publisher_is_unable_or_unwilling_to_serve_them_rejection_must_trigger_on_error_after_on_subscribe<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = failed_publisher(v)?;
    failed_publisher_signals(env, &p, "1.9")
}

pub(in crate::publisher) fn untested_spec110_reject_a_subscription_request_if_the_same_subscriber_subscribes_twice<
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

pub(in crate::publisher) fn optional_spec111_may_support_multi_subscribe<
    V: PublisherVerification,
>(
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

pub(in crate::publisher) fn optional_spec111_registered_subscribers_must_receive_on_next_or_on_complete_signals<
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

pub(in crate::publisher) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_one_by_one<
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

pub(in crate::publisher) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    many_upfront(v, env, false)
}

pub(in crate::publisher) fn optional_spec111_multicast_must_produce_the_same_elements_in_the_same_sequence_to_all_of_its_subscribers_when_requesting_many_upfront_and_complete_as_expected<
    V: PublisherVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    many_upfront(v, env, true)
}

pub(in crate::publisher) fn optional_spec111_multicast_earlier_subscribers_must_keep_receiving_after_later_ones_join<
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
