//! Subscriber blackbox verification: the JVM TCK's `SubscriberBlackboxVerification`, all 26
//! tests (see the [module table](super) for what each checks).

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use rs_api::{Error, Subscriber, SubscriptionRef};

use super::manual_publisher::{ManualPublisher, Mode};
use super::{decided_by_the_types, with_async_errors, NPE_REASON};
use crate::env::{TestEnvironment, Timeouts};
use crate::outcome::{Stop, TestResult};
use crate::suite::{specs, Suite, TestSpec};

/// The verification's name in reports.
pub const VERIFICATION: &str = "subscriber_blackbox";

/// The most elements the 2.1 test sends, whatever the subscriber requests (as the JVM).
pub const MAX_ELEMENTS_2_1: u64 = 512;

/// What a subscriber implementation provides to be verified in blackbox mode (the JVM's
/// `SubscriberBlackboxVerification`): one factory,
/// [`create_subscriber`](Self::create_subscriber), the elements to send, and an optional
/// nudge.
///
/// The same value runs the blackbox verification ([`verify`]) and the loom scenario of rule 2.5
/// ([`loom::verify_subscriber`](crate::loom::verify_subscriber)). Shared between tests that run
/// at once on several threads (hence `Send + Sync`). The factory returns
/// `impl Subscriber<Item> + 'static`: your subscriber's own type, or a
/// [`BoxSubscriber`](rs_api::BoxSubscriber).
pub trait SubscriberBlackboxVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Clone + fmt::Debug + 'static;

    /// A fresh subscriber under test. The JVM's `createSubscriber()`.
    fn create_subscriber(&self) -> impl Subscriber<Self::Item> + 'static;

    /// The element with index `element` (the JVM's `createElement(int)`).
    fn create_element(&self, element: u64) -> Self::Item;

    /// The JVM's optional `triggerRequest(subscriber)`: for subscribers that need an outside
    /// nudge before they request. `subscriber` is the value
    /// [`create_subscriber`](Self::create_subscriber) returned: downcast it to your type, as a
    /// JVM implementation casts (`subscriber.downcast_mut::<MySubscriber>()`). Called serially
    /// with the signals (never during one). The default does nothing. The loom mode's rule 2.5
    /// scenario ([`loom::verify_subscriber`](crate::loom::verify_subscriber)) calls it too, once
    /// both racing `on_subscribe` calls have returned — with the value
    /// [`create_cloneable_subscriber`](Self::create_cloneable_subscriber) returned, when there is
    /// one — so a subscriber that requests only when nudged passes there as here.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::any::Any;
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// use rs_tck::subscriber::SubscriberBlackboxVerification;
    ///
    /// /// Requests only when told to.
    /// #[derive(Default)]
    /// struct OnDemand(Option<SubscriptionRef>);
    /// impl Subscriber<u64> for OnDemand {
    ///     fn on_subscribe(&mut self, s: SubscriptionRef) {
    ///         if self.0.is_some() { s.cancel() } else { self.0 = Some(s) }
    ///     }
    ///     fn on_next(&mut self, _: u64) {}
    ///     fn on_error(&mut self, _: Error) { self.0 = None }
    ///     fn on_complete(&mut self) { self.0 = None }
    /// }
    /// struct V;
    /// impl SubscriberBlackboxVerification for V {
    ///     type Item = u64;
    ///     fn create_subscriber(&self) -> impl Subscriber<u64> + 'static { OnDemand::default() }
    ///     fn create_element(&self, i: u64) -> u64 { i }
    ///     fn trigger_request(&self, subscriber: &mut dyn Any) {
    ///         let s = subscriber.downcast_mut::<OnDemand>().expect("an OnDemand");
    ///         if let Some(sub) = &s.0 { sub.request(1) }
    ///     }
    /// }
    /// let suite = rs_tck::subscriber::blackbox::verify("on-demand", V);
    /// let t = suite.test("required_spec201_blackbox_must_signal_demand_via_subscription_request");
    /// assert_eq!(t.unwrap().run().outcome, rs_tck::outcome::Outcome::Passed);
    /// // The loom mode's 2.5 scenario nudges it the same way.
    /// let loom = rs_tck::loom::verify_subscriber("on-demand", V);
    /// assert_eq!(loom.tests[0].run().outcome, rs_tck::outcome::Outcome::Passed);
    /// ```
    fn trigger_request(&self, subscriber: &mut dyn Any) {
        let _ = subscriber;
    }

    /// A fresh subscriber whose clones are handles of the same subscriber (they share its
    /// state), if yours is such a handle; `None` (the default) if it is not `Clone`.
    ///
    /// Only the loom mode's rule 2.5 scenario uses it
    /// ([`loom::verify_subscriber`](crate::loom::verify_subscriber)): with a cloneable
    /// subscriber, two threads call `on_subscribe` **on two clones at once**, as two publishers
    /// handed clones of one subscriber do, so a "first subscription wins" check that is a load
    /// and a separate store is caught. Without one, the two calls race on one subscriber behind
    /// a lock (the only way to call a `&mut self` subscriber from two threads), which
    /// serialises them. Return your subscriber here if it is `Clone`: otherwise its 2.5 race is
    /// not checked.
    ///
    /// # Examples
    ///
    /// ```
    /// use rs_api::{Error, Subscriber, SubscriptionRef};
    /// use rs_impl::loom::sync::{Arc, atomic::{AtomicBool, Ordering}};
    /// use rs_tck::subscriber::SubscriberBlackboxVerification;
    ///
    /// /// Keeps the first subscription it is given, whichever clone is given it.
    /// #[derive(Clone, Default)]
    /// struct Shared(Arc<AtomicBool>);
    /// impl Subscriber<u64> for Shared {
    ///     fn on_subscribe(&mut self, s: SubscriptionRef) {
    ///         // One atomic step: a load followed by a store would let both calls through.
    ///         if self.0.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok() {
    ///             s.request(1);
    ///         } else {
    ///             s.cancel(); // 2.5
    ///         }
    ///     }
    ///     fn on_next(&mut self, _: u64) {}
    ///     fn on_error(&mut self, _: Error) {}
    ///     fn on_complete(&mut self) {}
    /// }
    /// struct V;
    /// impl SubscriberBlackboxVerification for V {
    ///     type Item = u64;
    ///     fn create_subscriber(&self) -> impl Subscriber<u64> + 'static { Shared::default() }
    ///     fn create_element(&self, i: u64) -> u64 { i }
    ///     fn create_cloneable_subscriber(&self) -> Option<impl Subscriber<u64> + Clone + 'static> {
    ///         Some(Shared::default())
    ///     }
    /// }
    /// let suite = rs_tck::loom::verify_subscriber("shared", V);
    /// assert_eq!(suite.tests[0].run().outcome, rs_tck::outcome::Outcome::Passed);
    /// ```
    fn create_cloneable_subscriber(&self) -> Option<impl Subscriber<Self::Item> + Clone + 'static> {
        None::<NotCloneable<Self::Item>>
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// The type of [`SubscriberBlackboxVerification::create_cloneable_subscriber`]'s default `None`:
/// no value of it exists.
#[derive(Debug, Clone)]
#[allow(dead_code)] // never constructed: it cannot be
pub(crate) struct NotCloneable<T>(
    std::convert::Infallible,
    std::marker::PhantomData<fn() -> T>,
);

impl<T> Subscriber<T> for NotCloneable<T> {
    fn on_subscribe(&mut self, _subscription: SubscriptionRef) {
        match self.0 {}
    }
    fn on_next(&mut self, _item: T) {
        match self.0 {}
    }
    fn on_error(&mut self, _error: Error) {
        match self.0 {}
    }
    fn on_complete(&mut self) {
        match self.0 {}
    }
}

/// The blackbox verification's suite for the verification `v`, reported under `implementation`.
///
/// # Examples
///
/// ```
/// use rs_api::Subscriber;
/// use rs_impl::subscriber::{collect, RequestStrategy};
/// use rs_tck::subscriber::SubscriberBlackboxVerification;
///
/// struct Collect;
/// impl SubscriberBlackboxVerification for Collect {
///     type Item = u64;
///     fn create_subscriber(&self) -> impl Subscriber<u64> + 'static {
///         let (s, handle) = collect::<u64>(RequestStrategy::OneByOne);
///         handle.detach(); // nobody waits for the outcome (dropping the handle cancels)
///         s
///     }
///     fn create_element(&self, i: u64) -> u64 { i }
/// }
/// let suite = rs_tck::subscriber::blackbox::verify("collect", Collect);
/// assert_eq!(suite.tests.len(), 26);
/// let t = suite.test("required_spec201_blackbox_must_signal_demand_via_subscription_request");
/// assert_eq!(t.unwrap().run().outcome, rs_tck::outcome::Outcome::Passed);
/// ```
pub fn verify<V: SubscriberBlackboxVerification>(implementation: impl Into<String>, v: V) -> Suite {
    Suite::new(implementation, VERIFICATION, v.timeouts(), v, specs::<V>())
}

/// Lets the TCK reach the subscriber for `trigger_request` while the publisher owns it.
struct SharedSubscriber<S>(Arc<Mutex<S>>);

impl<T, S: Subscriber<T>> Subscriber<T> for SharedSubscriber<S> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_subscribe(subscription)
    }
    fn on_next(&mut self, item: T) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_next(item)
    }
    fn on_error(&mut self, error: Error) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_error(error)
    }
    fn on_complete(&mut self) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .on_complete()
    }
}

struct Stage<'v, V: SubscriberBlackboxVerification> {
    v: &'v V,
    /// The subscriber, while the publisher holds it (dropping it must really drop it); for
    /// the verification's `trigger_request`.
    subscriber: Weak<Mutex<dyn Any + Send>>,
    publisher: ManualPublisher<V::Item>,
    next: AtomicU64,
}

impl<'v, V: SubscriberBlackboxVerification> Stage<'v, V> {
    fn element(&self) -> V::Item {
        self.v
            .create_element(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Calls the verification's `trigger_request`, serially with the signals (deliveries
    /// its `request` causes in synchronous mode follow right after it, on this thread).
    fn trigger_request(&self) {
        self.publisher.run_as_signal(|| {
            if let Some(sub) = self.subscriber.upgrade() {
                let mut s = sub.lock().unwrap_or_else(|e| e.into_inner());
                self.v.trigger_request(&mut *s);
            }
        });
    }

    fn send_next(&self, context: &str) -> TestResult {
        self.publisher.ensure_demand(1, context)?;
        self.publisher.send_next(self.element())
    }
}

fn run<V: SubscriberBlackboxVerification>(
    v: &V,
    env: &TestEnvironment,
    mode: Mode,
    body: impl FnOnce(&Stage<'_, V>) -> TestResult,
) -> TestResult {
    let subscriber = Arc::new(Mutex::new(v.create_subscriber()));
    let erased: Arc<Mutex<dyn Any + Send>> = subscriber.clone();
    let weak = Arc::downgrade(&erased);
    drop(erased);
    let publisher = ManualPublisher::new(env, mode);
    publisher.subscribe(Box::new(SharedSubscriber(subscriber)));
    let stage = Stage {
        v,
        subscriber: weak,
        publisher,
        next: AtomicU64::new(0),
    };
    with_async_errors(env, body(&stage))
}

fn test_error() -> Error {
    Error::msg("rs-tck: test exception")
}

// ---------------------------------------------------------------------------------------

pub(crate) fn required_spec201_blackbox_must_signal_demand_via_subscription_request<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request();
        let ctx = "rule 2.1: the subscriber must signal demand with request";
        s.publisher.ensure_demand(1, ctx)?;
        let mut sent = 0u64;
        while sent < MAX_ELEMENTS_2_1 && !s.publisher.is_cancelled() {
            if s.publisher.outstanding() == 0 {
                // A subscriber that requests one at a time asks again after each element.
                if s.publisher.ensure_demand(1, ctx).is_err() {
                    break;
                }
            }
            s.publisher.send_next(s.element())?;
            sent += 1;
        }
        s.publisher.send_completion();
        env.verify_no_async_errors_no_delay()
    })
}

pub(crate) fn untested_spec202_blackbox_should_asynchronously_dispatch<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(super::whitebox::SPEC202_REASON))
}

fn terminal<V: SubscriberBlackboxVerification>(
    v: &V,
    env: &TestEnvironment,
    error: bool,
    with_request: bool,
    rule: &str,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        if with_request {
            s.trigger_request();
            s.publisher.ensure_demand(1, rule)?;
        }
        if error {
            s.publisher.send_error(test_error());
        } else {
            s.publisher.send_completion();
        }
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.context(rule))
    })
}

pub(crate) fn required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(v, env, false, false, "rule 2.3: on_complete")
}

pub(crate) fn required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(v, env, true, false, "rule 2.3: on_error")
}

pub(crate) fn untested_spec204_blackbox_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    for error in [false, true] {
        let what = if error { "on_error" } else { "on_complete" };
        run(v, env, Mode::Manual, |s| {
            s.trigger_request();
            s.send_next("rule 2.4: an element before the terminal signal")?;
            if error {
                s.publisher.send_error(test_error());
            } else {
                s.publisher.send_completion();
            }
            // Nudge it to request: it must not, the subscription counts as cancelled.
            s.trigger_request();
            env.verify_no_async_errors().map_err(|e| {
                e.context(&format!(
                    "rule 2.4: after {what}, trigger_request and the no-signals window"
                ))
            })
        })?;
    }
    Ok(())
}

pub(crate) fn required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal<
    V: SubscriberBlackboxVerification,
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
        if second.was_requested() {
            return Err(Stop::failed(
                "rule 2.5: the subscriber requested from the second subscription instead of \
                 only cancelling it",
            ));
        }
        env.verify_no_async_errors()
    })
}

pub(crate) fn untested_spec206_blackbox_must_call_subscription_cancel_if_it_is_no_longer_valid<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "blackbox: the TCK has no way to tell the subscriber that it no longer needs its \
         subscription; the whitebox test checks 2.6 through the puppet's signal_cancel",
    ))
}

pub(crate) fn untested_spec207_blackbox_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const ELEMENTS: u64 = 16;
    run(v, env, Mode::Manual, |s| {
        s.publisher.set_linger(env.default_timeout() / 50);
        s.trigger_request();
        let ctx = "rule 2.7: elements delivered from alternating threads";
        for i in 0..ELEMENTS {
            if s.publisher.is_cancelled() || s.publisher.ensure_demand(1, ctx).is_err() {
                break;
            }
            let x = s.element();
            let r = if i % 2 == 0 {
                s.publisher.send_next(x)
            } else {
                // Serially, from another thread (joined before the next signal).
                std::thread::scope(|scope| {
                    scope
                        .spawn(|| s.publisher.send_next(x))
                        .join()
                        .unwrap_or_else(|_| Err(Stop::failed("send_next panicked")))
                })
            };
            r?;
        }
        s.publisher.set_linger(std::time::Duration::ZERO);
        s.publisher.send_completion();
        env.verify_no_async_errors()
    })
}

pub(crate) fn untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "blackbox: the TCK cannot make the subscriber cancel; the whitebox test checks 2.8 \
         after the puppet's signal_cancel",
    ))
}

pub(crate) fn required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(
        v,
        env,
        false,
        true,
        "rule 2.9: on_complete with a preceding request",
    )
}

pub(crate) fn required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(
        v,
        env,
        false,
        false,
        "rule 2.9: on_complete without a preceding request",
    )
}

pub(crate) fn required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(
        v,
        env,
        true,
        true,
        "rule 2.10: on_error with a preceding request",
    )
}

pub(crate) fn required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    terminal(
        v,
        env,
        true,
        false,
        "rule 2.10: on_error without a preceding request",
    )
}

pub(crate) fn untested_spec211_blackbox_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(super::SPEC211_REASON)
}

pub(crate) fn untested_spec212_blackbox_must_not_call_on_subscribe_more_than_once_based_on_object_equality<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(super::SPEC212_REASON)
}

pub(crate) fn untested_spec213_blackbox_failing_on_signal_invocation<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let ctx = "rule 2.13: signals must return normally on every legal sequence";
    run(v, env, Mode::Manual, |s| {
        s.trigger_request();
        for _ in 0..3 {
            if s.publisher.ensure_demand(1, ctx).is_err() {
                break;
            }
            s.publisher.send_next(s.element())?;
        }
        s.publisher.send_completion();
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.context("elements, then on_complete"))
    })?;
    run(v, env, Mode::Manual, |s| {
        s.publisher.send_error(test_error());
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.context("on_error without request"))
    })
}

pub(crate) fn required_spec213_blackbox_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn required_spec213_blackbox_on_next_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn required_spec213_blackbox_on_error_must_throw_null_pointer_exception_when_parameters_are_null<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    decided_by_the_types(NPE_REASON)
}

pub(crate) fn untested_spec301_blackbox_must_not_be_called_outside_subscriber_context<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, Mode::Manual, |s| {
        s.trigger_request();
        s.send_next("rule 3.1: an element")?;
        s.publisher.send_completion();
        // The publisher is done with the subscriber: nothing may call the subscription now,
        // from any thread the subscriber started.
        s.publisher.drop_subscriber();
        env.verify_no_async_errors()
            .map_err(|e| e.context("rule 3.1: after on_complete and the subscriber's drop"))
    })
}

pub(crate) fn untested_spec308_blackbox_request_must_register_given_number_elements_to_be_produced<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "blackbox: the TCK cannot make the subscriber request a given n (the whitebox puppet \
         can), and the publisher side of 3.8 is checked by the publisher verification's 1.1 \
         test",
    ))
}

fn synchronous<V: SubscriberBlackboxVerification>(
    v: &V,
    env: &TestEnvironment,
    elements: u64,
    terminal: Option<bool>,
    rule: &str,
) -> TestResult {
    run(v, env, Mode::Synchronous, |s| {
        for _ in 0..elements {
            s.publisher.offer(s.element());
        }
        match terminal {
            Some(true) => s.publisher.send_error(test_error()),
            Some(false) => s.publisher.send_completion(),
            None => {}
        }
        // The subscriber's own requests (from its signals) are served synchronously on the
        // requesting thread, right after the signal returns; the hook's too.
        s.trigger_request();
        s.publisher.expect_drained(&format!(
            "{rule}: the publisher delivers synchronously from inside request"
        ))?;
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.context(rule))
    })
}

pub(crate) fn untested_spec310_blackbox_request_may_synchronously_call_on_next_on_subscriber<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    synchronous(v, env, 3, None, "rule 3.10")
}

pub(crate) fn untested_spec311_blackbox_request_may_synchronously_call_on_complete_or_on_error<
    V: SubscriberBlackboxVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    synchronous(v, env, 1, Some(false), "rule 3.11")?;
    synchronous(v, env, 1, Some(true), "rule 3.11")
}

pub(crate) fn untested_spec314_blackbox_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(
        "blackbox: 3.14 follows a cancel, which the TCK cannot make a blackbox subscriber do; \
         the whitebox test checks it (cancel, then the publisher drops the subscriber without \
         a terminal signal)",
    ))
}

pub(crate) fn untested_spec315_blackbox_cancel_must_not_throw_exception_and_must_signal_on_error<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(super::SPEC315_REASON))
}

pub(crate) fn untested_spec316_blackbox_request_must_not_throw_exception_and_must_on_error_the_subscriber<
    V: SubscriberBlackboxVerification,
>(
    _v: &V,
    _env: &TestEnvironment,
) -> TestResult {
    Err(Stop::untested(super::SPEC316_REASON))
}

/// The 26 tests, in the JVM TCK's order.
pub fn specs<V: SubscriberBlackboxVerification>() -> Vec<TestSpec<V>> {
    specs![V, self:
        required_spec201_blackbox_must_signal_demand_via_subscription_request, "required_spec201_blackbox_mustSignalDemandViaSubscriptionRequest", "2.1",
            "does the subscriber request by itself (from on_subscribe, and again as it consumes), or, if it needs a nudge, does trigger_request provide it?";
        untested_spec202_blackbox_should_asynchronously_dispatch, "untested_spec202_blackbox_shouldAsynchronouslyDispatch", "2.2",
            "a recommendation: hand slow processing to another thread instead of doing it inside on_next";
        required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_complete, "required_spec203_blackbox_mustNotCallMethodsOnSubscriptionOrPublisherInOnComplete", "2.3",
            "does on_complete drop the subscription without calling request or cancel on it?";
        required_spec203_blackbox_must_not_call_methods_on_subscription_or_publisher_in_on_error, "required_spec203_blackbox_mustNotCallMethodsOnSubscriptionOrPublisherInOnError", "2.3",
            "does on_error drop the subscription without calling request or cancel on it?";
        untested_spec204_blackbox_must_consider_the_subscription_as_cancelled_in_after_recieving_on_complete_or_on_error, "untested_spec204_blackbox_mustConsiderTheSubscriptionAsCancelledInAfterRecievingOnCompleteOrOnError", "2.4",
            "after on_complete or on_error, is the subscription dropped, so that nothing (trigger_request included) requests from it again?";
        required_spec205_blackbox_must_call_subscription_cancel_if_it_already_has_an_subscription_and_receives_another_on_subscribe_signal, "required_spec205_blackbox_mustCallSubscriptionCancelIfItAlreadyHasAnSubscriptionAndReceivesAnotherOnSubscribeSignal", "2.5",
            "does on_subscribe cancel a second subscription while one is active, and never request from it?";
        untested_spec206_blackbox_must_call_subscription_cancel_if_it_is_no_longer_valid, "untested_spec206_blackbox_mustCallSubscriptionCancelIfItIsNoLongerValid", "2.6",
            "cancel a subscription you no longer need (the whitebox verification checks it)";
        untested_spec207_blackbox_must_ensure_all_calls_on_its_subscription_take_place_from_the_same_thread_or_take_care_of_synchronization, "untested_spec207_blackbox_mustEnsureAllCallsOnItsSubscriptionTakePlaceFromTheSameThreadOrTakeCareOfSynchronization", "2.7",
            "are the subscriber's calls on its subscription serialised, whichever thread delivers the signal that makes them? one gate around every call";
        untested_spec208_blackbox_must_be_prepared_to_receive_on_next_signals_after_having_called_subscription_cancel, "untested_spec208_blackbox_mustBePreparedToReceiveOnNextSignalsAfterHavingCalledSubscriptionCancel", "2.8",
            "accept on_next after cancel (the whitebox verification checks it)";
        required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_with_preceding_request_call, "required_spec209_blackbox_mustBePreparedToReceiveAnOnCompleteSignalWithPrecedingRequestCall", "2.9",
            "does on_complete return normally after a request?";
        required_spec209_blackbox_must_be_prepared_to_receive_an_on_complete_signal_without_preceding_request_call, "required_spec209_blackbox_mustBePreparedToReceiveAnOnCompleteSignalWithoutPrecedingRequestCall", "2.9",
            "does on_complete return normally without any request before it?";
        required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_with_preceding_request_call, "required_spec210_blackbox_mustBePreparedToReceiveAnOnErrorSignalWithPrecedingRequestCall", "2.10",
            "does on_error return normally after a request?";
        required_spec210_blackbox_must_be_prepared_to_receive_an_on_error_signal_without_preceding_request_call, "required_spec210_blackbox_mustBePreparedToReceiveAnOnErrorSignalWithoutPrecedingRequestCall", "2.10",
            "does on_error return normally without any request before it?";
        untested_spec211_blackbox_must_make_sure_that_all_calls_on_its_methods_happen_before_the_processing_of_the_respective_events, "untested_spec211_blackbox_mustMakeSureThatAllCallsOnItsMethodsHappenBeforeTheProcessingOfTheRespectiveEvents", "2.11",
            "nothing to do: signals move their arguments into &mut self methods of a Send subscriber";
        untested_spec212_blackbox_must_not_call_on_subscribe_more_than_once_based_on_object_equality, "untested_spec212_blackbox_mustNotCallOnSubscribeMoreThanOnceBasedOnObjectEquality", "2.12",
            "nothing to do: a subscriber is subscribed by value, once";
        untested_spec213_blackbox_failing_on_signal_invocation, "untested_spec213_blackbox_failingOnSignalInvocation", "2.13",
            "do the signal methods return normally (no panic) in every legal sequence?";
        required_spec213_blackbox_on_subscribe_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_blackbox_onSubscribe_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        required_spec213_blackbox_on_next_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_blackbox_onNext_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        required_spec213_blackbox_on_error_must_throw_null_pointer_exception_when_parameters_are_null, "required_spec213_blackbox_onError_mustThrowNullPointerExceptionWhenParametersAreNull", "2.13",
            "nothing to do: Rust arguments cannot be null";
        untested_spec301_blackbox_must_not_be_called_outside_subscriber_context, "untested_spec301_blackbox_mustNotBeCalledOutsideSubscriberContext", "3.1",
            "after the publisher drops the subscriber, does anything it left behind (a thread, a timer, a handle) still call the subscription? stop them when the subscriber ends or is dropped";
        untested_spec308_blackbox_request_must_register_given_number_elements_to_be_produced, "untested_spec308_blackbox_requestMustRegisterGivenNumberElementsToBeProduced", "3.8",
            "request what you mean to consume (the whitebox verification checks the amounts)";
        untested_spec310_blackbox_request_may_synchronously_call_on_next_on_subscriber, "untested_spec310_blackbox_requestMaySynchronouslyCallOnNextOnSubscriber", "3.10",
            "is request called with no lock or borrow of the subscriber's state held? a synchronous publisher calls on_next from inside request";
        untested_spec311_blackbox_request_may_synchronously_call_on_complete_or_on_error, "untested_spec311_blackbox_requestMaySynchronouslyCallOnCompleteOrOnError", "3.11",
            "is request called with no lock or borrow of the subscriber's state held? a synchronous publisher calls on_complete or on_error from inside request";
        untested_spec314_blackbox_cancel_may_cause_the_publisher_to_shutdown_if_no_other_subscription_exists, "untested_spec314_blackbox_cancelMayCauseThePublisherToShutdownIfNoOtherSubscriptionExists", "3.14",
            "make Drop safe without a terminal signal (the whitebox verification checks it)";
        untested_spec315_blackbox_cancel_must_not_throw_exception_and_must_signal_on_error, "untested_spec315_blackbox_cancelMustNotThrowExceptionAndMustSignalOnError", "3.15",
            "nothing to check here: the subscription is the TCK's (publishers and processors are checked)";
        untested_spec316_blackbox_request_must_not_throw_exception_and_must_on_error_the_subscriber, "untested_spec316_blackbox_requestMustNotThrowExceptionAndMustOnErrorTheSubscriber", "3.16",
            "nothing to check here: the subscription is the TCK's (publishers and processors are checked)";
    ]
}
