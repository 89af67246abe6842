//! Subscriber whitebox verification: the JVM TCK's `SubscriberWhiteboxVerification`, all 27
//! tests (see the [module table](super) for what each checks).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};

use rs_api::{Error, Subscriber};

use super::manual_publisher::{ManualPublisher, Mode};
use super::probe::{signal_cancel, trigger_request, SubscriberPuppet, WhiteboxSubscriberProbe};
use super::{decided_by_the_types, same_error, with_async_errors, NPE_REASON};
use crate::env::{TestEnvironment, Timeouts};
use crate::outcome::{Stop, TestResult};
use crate::suite::{specs, Suite, TestSpec};
use rs_impl::panics::panic_message;

/// The verification's name in reports.
pub const VERIFICATION: &str = "subscriber_whitebox";

/// What a subscriber implementation provides to be verified in whitebox mode (the JVM's
/// `SubscriberWhiteboxVerification`): one factory,
/// [`create_subscriber`](Self::create_subscriber), and the elements to send.
///
/// Shared between tests that run at once on several threads (hence `Send + Sync`). The
/// factory returns `impl Subscriber<Item> + 'static`: your subscriber's own type, or a
/// [`BoxSubscriber`](rs_api::BoxSubscriber).
pub trait SubscriberWhiteboxVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Clone + fmt::Debug + PartialEq + 'static;

    /// A fresh subscriber under test that reports every signal it processes to `probe`
    /// (registering a [`SubscriberPuppet`] from `on_subscribe`). The JVM's
    /// `createSubscriber(WhiteboxSubscriberProbe)`.
    fn create_subscriber(
        &self,
        probe: WhiteboxSubscriberProbe<Self::Item>,
    ) -> impl Subscriber<Self::Item> + 'static;

    /// The element with index `element` (the JVM's `createElement(int)`); may be called from
    /// any thread.
    fn create_element(&self, element: u64) -> Self::Item;

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// The whitebox verification's suite for the verification `v`, reported under `implementation`.
///
/// # Examples
///
/// ```
/// use rs_api::{Error, Subscriber, SubscriptionRef};
/// use rs_tck::subscriber::{SubscriberPuppet, SubscriberWhiteboxVerification, WhiteboxSubscriberProbe};
/// use std::sync::{Arc, Mutex};
///
/// /// Requests only when the puppet says so; cancels a second subscription.
/// struct Mine { probe: WhiteboxSubscriberProbe<u64>, sub: Arc<Mutex<Option<SubscriptionRef>>> }
/// struct Puppet(Arc<Mutex<Option<SubscriptionRef>>>);
/// impl SubscriberPuppet for Puppet {
///     fn trigger_request(&self, n: u64) {
///         let s = self.0.lock().unwrap().clone();
///         if let Some(s) = s { s.request(n) }
///     }
///     fn signal_cancel(&self) {
///         let s = self.0.lock().unwrap().take();
///         if let Some(s) = s { s.cancel() }
///     }
/// }
/// impl Subscriber<u64> for Mine {
///     fn on_subscribe(&mut self, s: SubscriptionRef) {
///         let mut slot = self.sub.lock().unwrap();
///         if slot.is_some() { s.cancel(); return; }
///         *slot = Some(s);
///         drop(slot);
///         self.probe.register_on_subscribe(Puppet(self.sub.clone()));
///     }
///     fn on_next(&mut self, x: u64) { self.probe.register_on_next(x) }
///     fn on_error(&mut self, e: Error) { self.sub.lock().unwrap().take(); self.probe.register_on_error(e) }
///     fn on_complete(&mut self) { self.sub.lock().unwrap().take(); self.probe.register_on_complete() }
/// }
/// struct V;
/// impl SubscriberWhiteboxVerification for V {
///     type Item = u64;
///     fn create_subscriber(&self, probe: WhiteboxSubscriberProbe<u64>) -> impl Subscriber<u64> + 'static {
///         Mine { probe, sub: Arc::new(Mutex::new(None)) }
///     }
///     fn create_element(&self, i: u64) -> u64 { i }
/// }
/// let suite = rs_tck::subscriber::whitebox::verify("mine", V);
/// assert_eq!(suite.tests.len(), 27);
/// let t = suite.test("required_spec308_request_must_register_given_number_elements_to_be_produced");
/// assert_eq!(t.unwrap().run().outcome, rs_tck::outcome::Outcome::Passed);
/// ```
pub fn verify<V: SubscriberWhiteboxVerification>(implementation: impl Into<String>, v: V) -> Suite {
    Suite::new(implementation, VERIFICATION, v.timeouts(), v, specs::<V>())
}

/// One whitebox test run: the TCK's publisher, the probe and the puppet (the JVM's
/// `WhiteboxTestStage`).
pub(crate) struct Stage<'v, V: SubscriberWhiteboxVerification> {
    v: &'v V,
    pub(crate) publisher: ManualPublisher<V::Item>,
    pub(crate) probe: WhiteboxSubscriberProbe<V::Item>,
    pub(crate) puppet: Arc<dyn SubscriberPuppet>,
    next: AtomicU64,
}

impl<'v, V: SubscriberWhiteboxVerification> Stage<'v, V> {
    /// Creates the subscriber, subscribes it and waits for the puppet.
    pub(crate) fn new(v: &'v V, env: &TestEnvironment, mode: Mode) -> TestResult<Self> {
        let probe = WhiteboxSubscriberProbe::new(env);
        let publisher = ManualPublisher::new(env, mode);
        publisher.subscribe(Box::new(v.create_subscriber(probe.clone())));
        let puppet = probe.expect_registered()?;
        Ok(Stage {
            v,
            publisher,
            probe,
            puppet,
            next: AtomicU64::new(0),
        })
    }

    pub(crate) fn trigger_request(&self, n: u64) -> TestResult {
        trigger_request(&*self.puppet, n)
    }

    pub(crate) fn signal_cancel(&self) -> TestResult {
        signal_cancel(&*self.puppet)
    }

    pub(crate) fn element(&self) -> V::Item {
        self.v
            .create_element(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Waits for demand, then sends the next element; returns it.
    pub(crate) fn signal_next(&self, context: &str) -> TestResult<V::Item> {
        self.publisher.ensure_demand(1, context)?;
        let x = self.element();
        self.publisher.send_next(x.clone())?;
        Ok(x)
    }

    /// Sends the next element and expects the probe to register it.
    pub(crate) fn next_through(&self, context: &str) -> TestResult {
        let x = self.signal_next(context)?;
        self.probe.expect_next(&x, context)
    }
}

fn test_error() -> Error {
    Error::msg("rs-tck: test exception")
}

fn run<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
    mode: Mode,
    body: impl FnOnce(&Stage<'_, V>) -> TestResult,
) -> TestResult {
    let result = Stage::new(v, env, mode).and_then(|stage| body(&stage));
    with_async_errors(env, result)
}

// ---------------------------------------------------------------------------------------

pub(crate) fn required_exercise_whitebox_happy_path<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.next_through("happy path: the first element")?;
        s.trigger_request(1)?;
        s.next_through("happy path: the second element")?;
        s.signal_cancel()?;
        s.publisher
            .expect_cancelling("happy path: signal_cancel() must make the subscriber cancel")?;
        env.verify_no_async_errors()
    })
}

pub(crate) fn required_spec201_must_signal_demand_via_subscription_request<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.publisher.ensure_demand(
            1,
            "rule 2.1: after trigger_request(1) the subscriber must signal demand with request",
        )?;
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn untested_spec202_should_asynchronously_dispatch<V: SubscriberWhiteboxVerification>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(SPEC202_REASON))
}

pub(crate) const SPEC202_REASON: &str =
    "rule 2.2 is a recommendation (SHOULD) about when to dispatch asynchronously, depending on \
     how slow processing is; neither choice is observable as a count";

fn terminal_in_signal<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
    error: bool,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        let what = if error { "on_error" } else { "on_complete" };
        if error {
            s.publisher.send_error(test_error());
            s.probe.expect_error(&format!("rule 2.3: {what}"))?;
        } else {
            s.publisher.send_completion();
            s.probe.expect_completion(&format!("rule 2.3: {what}"))?;
        }
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_in_signal(v, env, false)
}

pub(crate) fn required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_in_signal(v, env, true)
}

pub(crate) fn untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    for error in [false, true] {
        let what = if error { "on_error" } else { "on_complete" };
        run(v, env, Mode::Manual, |s| {
            s.trigger_request(1)?;
            s.next_through("rule 2.4: an element before the terminal signal")?;
            if error {
                s.publisher.send_error(test_error());
                s.probe.expect_error("rule 2.4")?;
            } else {
                s.publisher.send_completion();
                s.probe.expect_completion("rule 2.4")?;
            }
            // The subscription counts as cancelled now: asking the subscriber to request
            // must not reach it.
            s.trigger_request(1)?;
            s.trigger_request(1)?;
            env.verify_no_async_errors()
                .map_err(|e| e.context(&format!("after {what}, trigger_request(1) twice")))
        })?;
    }
    Ok(())
}

pub(crate) fn required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        let second = s.publisher.send_second_on_subscribe();
        second.expect_cancelling(
            env.default_timeout(),
            "rule 2.5: a subscriber with an active subscription must cancel a second one \
             handed to on_subscribe",
        )?;
        env.verify_no_async_errors()
    })
}

pub(crate) fn untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.publisher.ensure_demand(1, "rule 2.6")?;
        // No element follows: the cancel must not wait for the next signal.
        s.signal_cancel()?;
        s.publisher.expect_cancelling(
            "rule 2.6: once the subscription is no longer needed (signal_cancel), the \
             subscriber must cancel it, without waiting for a further signal",
        )?;
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        // Every call lingers in the subscription, so that an overlapping call is caught.
        s.publisher.set_linger(env.default_timeout() / 4);
        // Two puppet threads request; then one of them cancels while a call of the subscriber
        // is in progress, whoever made it: the puppet's `trigger_request`, or the subscriber's
        // own request from inside `on_next` (this thread delivers elements against the
        // demand, as replenishing subscribers, whose `trigger_request` may do nothing, need).
        // No call may overlap another, whatever the hooks do.
        let barrier = Arc::new(Barrier::new(3));
        let (tx, rx) = mpsc::channel::<Result<(), String>>();
        for thread in 0..2 {
            let puppet = s.puppet.clone();
            let publisher = s.publisher.clone();
            let (barrier, tx) = (barrier.clone(), tx.clone());
            let wait = env.default_timeout() * 2;
            std::thread::spawn(move || {
                barrier.wait();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    for _ in 0..3 {
                        puppet.trigger_request(1);
                    }
                    if thread == 1 {
                        // Cancels in any case, once a call is in progress or the wait is over.
                        publisher.wait_for_call_in_progress(wait);
                        puppet.signal_cancel();
                    }
                }));
                let _ = tx.send(r.map_err(|p| panic_message(&*p)));
            });
        }
        drop(tx);
        barrier.wait();
        // Deliver up to 8 elements, each only against outstanding demand, until the cancel.
        let mut sent = 0;
        for _ in 0..200 {
            if sent == 8 || s.publisher.is_cancelled() {
                break;
            }
            if s.publisher.outstanding() == 0 {
                std::thread::sleep(env.default_timeout() / 100);
                continue;
            }
            // A cancel racing the delivery is fine (2.8).
            if s.publisher.send_next(s.element()).is_err() {
                break;
            }
            sent += 1;
        }
        for _ in 0..2 {
            match rx.recv_timeout(env.default_timeout() * 20) {
                Ok(Ok(())) => {}
                Ok(Err(m)) => {
                    return Err(Stop::failed(format!(
                        "rule 2.7: the puppet panicked when called from two threads: {m}"
                    )))
                }
                Err(_) => {
                    return Err(Stop::failed(
                        "rule 2.7: the puppet did not return when called from two threads \
                         (deadlock?)",
                    ))
                }
            }
        }
        s.publisher.set_linger(std::time::Duration::ZERO);
        s.publisher
            .expect_cancelling("rule 2.7: signal_cancel() from a second thread")?;
        env.verify_no_async_errors()
    })
}

pub(crate) fn required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.publisher.ensure_demand(1, "rule 2.8")?;
        s.signal_cancel()?;
        s.publisher.expect_cancelling("rule 2.8: signal_cancel()")?;
        // An element requested before the cancel may still arrive.
        s.signal_next("rule 2.8: an element in flight after cancel")?;
        s.trigger_request(1)?;
        s.trigger_request(1)?;
        env.verify_no_async_errors()
            .map_err(|e| e.context("rule 2.8: on_next after cancel"))
    })
}

fn terminal_with_or_without_request<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
    error: bool,
    with_request: bool,
) -> TestResult {
    let rule = if error { "rule 2.10" } else { "rule 2.9" };
    let how = if with_request {
        "with a preceding request"
    } else {
        "without a preceding request"
    };
    run(v, env, Mode::Manual, |s| {
        if with_request {
            s.trigger_request(1)?;
            s.publisher.ensure_demand(1, rule)?;
        }
        if error {
            let e = test_error();
            s.publisher.send_error(e.clone());
            let got = s.probe.expect_error(&format!("{rule}: on_error {how}"))?;
            if !same_error(&got, &e) {
                return Err(Stop::failed(format!(
                    "{rule}: the probe registered on_error({got}), not the error sent ({e})"
                )));
            }
        } else {
            s.publisher.send_completion();
            s.probe
                .expect_completion(&format!("{rule}: on_complete {how}"))?;
        }
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_with_or_without_request(v, env, false, true)
}

pub(crate) fn required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_with_or_without_request(v, env, false, false)
}

pub(crate) fn required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_with_or_without_request(v, env, true, true)
}

pub(crate) fn required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal_with_or_without_request(v, env, true, false)
}

pub(crate) fn untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(super::SPEC211_REASON)
}

pub(crate) fn untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(super::SPEC212_REASON)
}

pub(crate) fn untested_spec213_failing_on_signal_invocation<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let ctx = "rule 2.13: signals must return normally on every legal sequence";
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(2)?;
        s.next_through(&format!("{ctx} (elements, then on_complete)"))?;
        s.next_through(&format!("{ctx} (elements, then on_complete)"))?;
        s.publisher.send_completion();
        s.probe.expect_completion(ctx)?;
        env.verify_no_async_errors_no_delay()
    })?;
    run(v, env, Mode::Manual, |s| {
        s.publisher.send_error(test_error());
        s.probe
            .expect_error(&format!("{ctx} (on_error without request)"))?;
        env.verify_no_async_errors_no_delay()
    })?;
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.publisher.ensure_demand(1, ctx)?;
        s.signal_cancel()?;
        s.publisher.expect_cancelling(ctx)?;
        s.signal_next(&format!("{ctx} (on_next after cancel)"))?;
        s.publisher.send_completion();
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn required_spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn required_spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn required_spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn untested_spec301_must_not_be_called_outside_subscriber_context<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.publisher.ensure_demand(1, "rule 3.1")?;
        s.signal_cancel()?;
        s.publisher.expect_cancelling("rule 3.1: signal_cancel()")?;
        // As a publisher does after cancel (3.13): drop the subscriber. Its context is gone;
        // no request or cancel may follow.
        s.publisher.drop_subscriber();
        env.verify_no_async_errors()
            .map_err(|e| e.context("rule 3.1: after the publisher dropped the subscriber"))
    })
}

pub(crate) fn required_spec308_request_must_register_given_number_elements_to_be_produced<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(2)?;
        s.next_through("rule 3.8: trigger_request(2), the first element")?;
        s.next_through("rule 3.8: trigger_request(2), the second element")?;
        s.probe
            .expect_none("rule 3.8: only the 2 elements sent may be registered")?;
        s.trigger_request(3)?;
        env.verify_no_async_errors()
    })
}

/// 3.10 and 3.11: the TCK's publisher delivers from inside `request`, on the caller's thread.
fn synchronous_delivery<V: SubscriberWhiteboxVerification>(
    v: &V,
    env: &TestEnvironment,
    elements: u64,
    terminal: Option<bool>,
    rule: &str,
) -> TestResult {
    run(v, env, Mode::Synchronous, |s| {
        let sent: Vec<V::Item> = (0..elements).map(|_| s.element()).collect();
        for x in &sent {
            s.publisher.offer(x.clone());
        }
        match terminal {
            Some(true) => s.publisher.send_error(test_error()),
            Some(false) => s.publisher.send_completion(),
            None => {}
        }
        // trigger_request runs on a helper thread: a deadlock there must not hang the test.
        let puppet = s.puppet.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(trigger_request(&*puppet, elements));
        });
        let ctx = format!(
            "{rule}: the publisher delivers {elements} element(s){} synchronously from inside \
             request",
            match terminal {
                Some(true) => " and on_error",
                Some(false) => " and on_complete",
                None => "",
            }
        );
        match rx.recv_timeout(env.default_timeout() * 10) {
            Ok(r) => r.map_err(|e| e.context(&ctx))?,
            Err(_) => {
                return Err(Stop::failed(format!(
                    "{ctx}: trigger_request({elements}) did not return (a lock held across \
                     request deadlocked?)"
                )))
            }
        }
        if terminal == Some(true) {
            // A processor may drop buffered elements when it forwards an error at once (4.2):
            // the elements are optional here, the error is not.
            let mut errored = false;
            for x in &sent {
                if s.probe.expect_next_or_error(x, &ctx)? {
                    errored = true;
                    break;
                }
            }
            if !errored {
                s.probe.expect_error(&ctx)?;
            }
        } else {
            for x in &sent {
                s.probe.expect_next(x, &ctx)?;
            }
            if terminal == Some(false) {
                s.probe.expect_completion(&ctx)?;
            }
        }
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.context(&ctx))
    })
}

pub(crate) fn untested_spec310_request_may_synchronously_call_on_next_on_subscriber<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    synchronous_delivery(v, env, 2, None, "rule 3.10")
}

pub(crate) fn untested_spec311_request_may_synchronously_call_on_complete_or_on_error<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    synchronous_delivery(v, env, 1, Some(false), "rule 3.11")?;
    synchronous_delivery(v, env, 1, Some(true), "rule 3.11")
}

pub(crate) fn untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists<
    V: SubscriberWhiteboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request(1)?;
        s.next_through("rule 3.14: an element before cancel")?;
        s.signal_cancel()?;
        s.publisher
            .expect_cancelling("rule 3.14: signal_cancel()")?;
        // The publisher shuts down: it drops the subscriber without a terminal signal.
        s.publisher.drop_subscriber();
        s.probe.expect_none(
            "rule 3.14: after cancel the publisher shut down without a terminal signal",
        )?;
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(super::SPEC315_REASON))
}

pub(crate) fn untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber<
    V: SubscriberWhiteboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(super::SPEC316_REASON))
}

/// The 27 tests, in the JVM TCK's order.
pub fn specs<V: SubscriberWhiteboxVerification>() -> Vec<TestSpec<V>> {
    specs![V, self:
        required_exercise_whitebox_happy_path, "required_exerciseWhiteboxHappyPath", "",
            "does the subscriber register a puppet with probe.register_on_subscribe from on_subscribe, request when trigger_request says, report each signal to the probe, and cancel on signal_cancel?";
        required_spec201_must_signal_demand_via_subscription_request, "required_spec201_mustSignalDemandViaSubscriptionRequest", "2.1",
            "does trigger_request(n) make the subscriber call request with n ≥ 1?";
        untested_spec202_should_asynchronously_dispatch, "untested_spec202_shouldAsynchronouslyDispatch", "2.2",
            "a recommendation: hand slow processing to another thread instead of doing it inside on_next";
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_complete, "required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnComplete", "2.3",
            "does on_complete drop the subscription without calling request or cancel on it?";
        required_spec203_must_not_call_methods_on_subscription_or_publisher_in_on_error, "required_spec203_mustNotCallMethodsOnSubscriptionOrPublisherInOnError", "2.3",
            "does on_error drop the subscription without calling request or cancel on it?";
        untested_spec204_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error, "untested_spec204_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError", "2.4",
            "after on_complete or on_error, is the subscription dropped, so that later trigger_request calls cannot reach it?";
        required_spec205_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, "required_spec205_mustCallSubscriptionCancelIfItAlreadyHasAnSubscriptionAndReceivesAnotherOnSubscribeSignal", "2.5",
            "does on_subscribe cancel a second subscription while one is active, and never request from it?";
        untested_spec206_must_call_subscription_cancel_if_it_is_no_longer_valid, "untested_spec206_mustCallSubscriptionCancelIfItIsNoLongerValid", "2.6",
            "does signal_cancel cancel the subscription at once, not at the next signal?";
        untested_spec207_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, "untested_spec207_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization", "2.7",
            "are the subscriber's calls on its subscription serialised (its own requests from on_next against cancels and requests from other threads): one gate around every call, as rs_impl's ready-made subscribers have?";
        required_spec208_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel, "required_spec208_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel", "2.8",
            "does on_next after cancel return normally (ignore the element, do not panic or assert)?";
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call, "required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithPrecedingRequestCall", "2.9",
            "does on_complete return normally after a request?";
        required_spec209_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call, "required_spec209_mustBePreparedToReceiveAnOnCompleteSignalWithoutPrecedingRequestCall", "2.9",
            "does on_complete return normally without any request before it?";
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call, "required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithPrecedingRequestCall", "2.10",
            "does on_error return normally after a request, and report the very error it got?";
        required_spec210_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call, "required_spec210_mustBePreparedToReceiveAnOnErrorSignalWithoutPrecedingRequestCall", "2.10",
            "does on_error return normally without any request before it, and report the very error it got?";
        untested_spec211_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events, "untested_spec211_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents", "2.11",
            "nothing to do: signals move their arguments into &mut self methods of a Send subscriber";
        untested_spec212_must_not_call_on_subscribe_more_than_once_based_on_object_equality_spec_violation, "untested_spec212_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality_specViolation", "2.12",
            "nothing to do: a subscriber is subscribed by value, once";
        untested_spec213_failing_on_signal_invocation, "untested_spec213_failingOnSignalInvocation", "2.13",
            "do the signal methods return normally (no panic, no unwrap on a missing subscription) in every legal sequence?";
        required_spec213_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_onSubscribe_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        required_spec213_on_next_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_onNext_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        required_spec213_on_error_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_onError_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        untested_spec301_must_not_be_called_outside_subscriber_context, "untested_spec301_mustNotBeCalledOutsideSubscriberContext", "3.1",
            "after the publisher drops the subscriber, does anything it left behind (a thread, a timer, a handle) still call the subscription? stop them when the subscriber ends or is dropped";
        required_spec308_request_must_register_given_number_elements_to_be_produced, "required_spec308_requestMustRegisterGivenNumberElementsToBeProduced", "3.8",
            "do the requests that trigger_request(n) makes add up to at least n?";
        untested_spec310_request_may_synchronously_call_on_next_on_subscriber, "untested_spec310_requestMaySynchronouslyCallOnNextOnSubscriber", "3.10",
            "is request called with no lock or borrow of the subscriber's state held? a synchronous publisher calls on_next from inside request";
        untested_spec311_request_may_synchronously_call_on_complete_or_on_error, "untested_spec311_requestMaySynchronouslyCallOnCompleteOrOnError", "3.11",
            "is request called with no lock or borrow of the subscriber's state held? a synchronous publisher calls on_complete or on_error from inside request";
        untested_spec314_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists, "untested_spec314_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists", "3.14",
            "is the subscriber's Drop safe without a terminal signal (the publisher may shut down after cancel and drop it silently)?";
        untested_spec315_cancel_must_not_throw_exception_and_must_signal_on_error, "untested_spec315_cancelMustNotThrowExceptionAndMustSignalOnError", "3.15",
            "cancel on a subscription must return normally (for a processor: its downstream subscription's cancel, also when repeated)";
        untested_spec316_request_must_not_throw_exception_and_must_on_error_the_subscriber, "untested_spec316_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber", "3.16",
            "request on a subscription must return normally, and request(0) must come back as on_error (for a processor: its downstream subscription)";
    ]
}
