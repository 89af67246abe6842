//! [`ManualSubscriber`]: the test-driven subscriber, and the [`ProbeSubscriber`] it hands to
//! the publisher under test.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef};

use super::receptacle::DEFAULT_CAPACITY;
use super::{Latch, Receptacle};
use crate::env::{AsyncError, TestEnvironment};
use crate::hints;
use crate::outcome::{Stop, TestResult};
use rs_impl::panics::panic_message;

/// One signal as the probe recorded it.
#[derive(Debug, Clone)]
pub enum Signal<T> {
    /// `on_next(item)`.
    Next(T),
    /// `on_complete()`.
    Complete,
    /// `on_error(error)`.
    Error(Error),
}

impl<T: fmt::Debug> fmt::Display for Signal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Signal::Next(x) => write!(f, "on_next({x:?})"),
            Signal::Complete => f.write_str("on_complete"),
            Signal::Error(e) => write!(f, "on_error({e})"),
        }
    }
}

static NEXT_PROBE_ID: AtomicU64 = AtomicU64::new(1);

/// Bookkeeping shared by the probe subscriber (publisher side) and its handle (test side).
#[derive(Default)]
struct ProbeState {
    subscription: Option<SubscriptionRef>,
    /// Total requested through the handle (saturating), for the 1.1 check.
    requested: u64,
    /// `on_next` calls seen.
    delivered: u64,
    /// The terminal signal seen, if any.
    terminal: Option<&'static str>,
    /// Signals in progress right now (more than one means overlap or recursion).
    active: u64,
}

struct Shared<T> {
    id: u64,
    env: TestEnvironment,
    state: Mutex<ProbeState>,
    subscribed: Latch,
    received: Receptacle<Signal<T>>,
    /// The allowed `on_next` nesting (rule 3.3), normally 1.
    recursion_bound: u64,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, ProbeState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The test side of a probe, as seen from inside the probe's hooks: `request` and `cancel`
/// that keep the probe's demand count (for the 1.1 check) and never let a panic escape into
/// the publisher (a panic is recorded as a flop instead). Cheap to clone.
pub struct ProbeHandle<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for ProbeHandle<T> {
    fn clone(&self) -> Self {
        ProbeHandle {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for ProbeHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProbeHandle")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl<T> ProbeHandle<T> {
    /// The subscription received in `on_subscribe`, if any.
    pub fn subscription(&self) -> Option<SubscriptionRef> {
        self.shared.lock().subscription.clone()
    }

    /// `request(n)` on the subscription, counting the demand; a panic becomes an error.
    ///
    /// # Errors
    ///
    /// A message naming rule 3.16 when `request` panics, or saying that there is no
    /// subscription yet.
    pub fn try_request(&self, n: u64) -> Result<(), String> {
        let Some(s) = ({
            let mut st = self.shared.lock();
            st.requested = st.requested.saturating_add(n);
            st.subscription.clone()
        }) else {
            return Err(format!("request({n}) before on_subscribe"));
        };
        catch_unwind(AssertUnwindSafe(|| s.request(n)))
            .map_err(|p| format!("rule 3.16: request({n}) panicked: {}", panic_message(&*p)))
    }

    /// `cancel()` on the subscription; a panic becomes an error.
    ///
    /// # Errors
    ///
    /// A message naming rule 3.15 when `cancel` panics, or saying that there is no
    /// subscription yet.
    pub fn try_cancel(&self) -> Result<(), String> {
        let Some(s) = self.subscription() else {
            return Err("cancel before on_subscribe".to_owned());
        };
        catch_unwind(AssertUnwindSafe(|| s.cancel()))
            .map_err(|p| format!("rule 3.15: cancel panicked: {}", panic_message(&*p)))
    }

    /// Requests `n` from inside a signal; a panic is flopped, not propagated.
    pub fn request(&self, n: u64) {
        if let Err(m) = self.try_request(n) {
            self.shared.env.flop(m);
        }
    }

    /// Cancels from inside a signal; a panic is flopped, not propagated.
    pub fn cancel(&self) {
        if let Err(m) = self.try_cancel() {
            self.shared.env.flop(m);
        }
    }

    /// The number of `on_next` calls received so far.
    pub fn delivered(&self) -> u64 {
        self.shared.lock().delivered
    }
}

type OnSubscribeHook<T> = Box<dyn FnMut(&ProbeHandle<T>) + Send>;
type OnNextHook<T> = Box<dyn FnMut(&ProbeHandle<T>, &T) + Send>;

/// The subscriber a [`ManualSubscriber`] hands to the publisher under test.
///
/// It records every signal for the test thread and checks, as signals arrive (flopping on a
/// violation):
/// * 1.9: nothing before `on_subscribe`; `on_subscribe` once;
/// * 1.1: no more `on_next` than requested through the probe;
/// * 1.7: nothing after `on_complete`/`on_error`;
/// * 1.3 and 3.3: no overlapping signals, and no `on_next` nesting beyond the bound.
///
/// It owns a token whose `Weak` the handle keeps, so the test can tell when the publisher has
/// dropped it (1.6, 3.13). Hooks let a test add behaviour (requests from `on_subscribe` or
/// `on_next`), like the JVM TCK's anonymous subclasses.
pub struct ProbeSubscriber<T> {
    shared: Arc<Shared<T>>,
    _token: Arc<()>,
    on_subscribe_hook: Option<OnSubscribeHook<T>>,
    on_next_hook: Option<OnNextHook<T>>,
    blackhole: bool,
}

impl<T> fmt::Debug for ProbeSubscriber<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProbeSubscriber")
            .field("id", &self.shared.id)
            .finish_non_exhaustive()
    }
}

impl<T> ProbeSubscriber<T> {
    /// Runs `hook` at the end of `on_subscribe` (after the subscription is stored).
    pub fn on_subscribe_hook(mut self, hook: impl FnMut(&ProbeHandle<T>) + Send + 'static) -> Self {
        self.on_subscribe_hook = Some(Box::new(hook));
        self
    }

    /// Runs `hook` in every `on_next`, before the element is recorded.
    pub fn on_next_hook(mut self, hook: impl FnMut(&ProbeHandle<T>, &T) + Send + 'static) -> Self {
        self.on_next_hook = Some(Box::new(hook));
        self
    }

    /// Does not record elements (the JVM's blackhole subscriber); counts and checks still
    /// apply.
    pub fn blackhole(mut self) -> Self {
        self.blackhole = true;
        self
    }

    fn handle(&self) -> ProbeHandle<T> {
        ProbeHandle {
            shared: self.shared.clone(),
        }
    }

    /// Common entry checks (1.9, 1.7, 1.3); counts the signal as in progress.
    fn enter(&self, st: &mut ProbeState, signal: &str) {
        if st.subscription.is_none() {
            self.shared
                .env
                .flop(format!("rule 1.9: {signal} arrived before on_subscribe"));
        }
        if let Some(t) = st.terminal {
            self.shared
                .env
                .flop(format!("rule 1.7: {signal} arrived after {t}"));
        }
        st.active += 1;
        if st.active > 1 && signal != "on_next" {
            self.shared.env.flop(format!(
                "rule 1.3: {signal} overlapped another signal to the same subscriber"
            ));
        }
    }
}

impl<T: Send + fmt::Debug + 'static> Subscriber<T> for ProbeSubscriber<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        {
            let mut st = self.shared.lock();
            if st.subscription.is_some() {
                drop(st);
                self.shared.env.flop(
                    "rule 1.9/2.12: on_subscribe was called a second time on the same subscriber",
                );
                return;
            }
            if let Some(t) = st.terminal {
                self.shared
                    .env
                    .flop(format!("rule 1.9: on_subscribe arrived after {t}"));
            }
            st.subscription = Some(subscription);
            st.active += 1;
        }
        self.shared.subscribed.close();
        let handle = self.handle();
        if let Some(hook) = self.on_subscribe_hook.as_mut() {
            hook(&handle);
        }
        self.shared.lock().active -= 1;
    }

    fn on_next(&mut self, item: T) {
        {
            let mut st = self.shared.lock();
            self.enter(&mut st, "on_next");
            st.delivered += 1;
            if st.delivered > st.requested {
                let (d, r) = (st.delivered, st.requested);
                drop(st);
                self.shared.env.flop(format!(
                    "rule 1.1: on_next({item:?}) is element {d}, but only {r} were requested"
                ));
                st = self.shared.lock();
            }
            if st.active > self.shared.recursion_bound {
                let a = st.active;
                drop(st);
                self.shared.env.flop(format!(
                    "rule 3.3 (or 1.3): {a} on_next calls in progress at once on {:?}, \
                     yet the recursion bound is {}",
                    std::thread::current().id(),
                    self.shared.recursion_bound
                ));
            }
        }
        let handle = self.handle();
        if let Some(hook) = self.on_next_hook.as_mut() {
            hook(&handle, &item);
        }
        if !self.blackhole {
            if let Err(Signal::Next(item)) = self.shared.received.push(Signal::Next(item)) {
                self.shared.env.flop(format!(
                    "the probe's buffer of {DEFAULT_CAPACITY} unconsumed elements overflowed at \
                     on_next({item:?}): the publisher signalled more than the test took \
                     (rule 1.1?)"
                ));
            }
        }
        self.shared.lock().active -= 1;
    }

    fn on_error(&mut self, error: Error) {
        {
            let mut st = self.shared.lock();
            self.enter(&mut st, "on_error");
            st.terminal.get_or_insert("on_error");
        }
        self.shared.env.record(AsyncError {
            message: format!("unexpected on_error({error})"),
            probe: Some(self.shared.id),
            error: Some(error.clone()),
        });
        self.shared.received.push_unbounded(Signal::Error(error));
        self.shared.lock().active -= 1;
    }

    fn on_complete(&mut self) {
        {
            let mut st = self.shared.lock();
            self.enter(&mut st, "on_complete");
            st.terminal.get_or_insert("on_complete");
        }
        self.shared.received.push_unbounded(Signal::Complete);
        self.shared.lock().active -= 1;
    }
}

/// A test-driven subscriber (the JVM TCK's `ManualSubscriberWithSubscriptionSupport`): the
/// test subscribes it, then requests, cancels and expects signals with timeouts. Every wait
/// returns a failure naming what was expected; checks made while signals arrive flop (see
/// [`ProbeSubscriber`]).
///
/// # Examples
///
/// ```
/// use rs_tck::{env::TestEnvironment, instruments::ManualSubscriber};
///
/// let env = TestEnvironment::new(Default::default());
/// let publisher = rs_impl::source::range(0u64..2);
/// let sub = ManualSubscriber::subscribe(&env, &publisher).unwrap();
/// assert_eq!(sub.request_next_element("first").unwrap(), 0);
/// assert_eq!(sub.request_next_element("second").unwrap(), 1);
/// sub.expect_completion("end").unwrap();
/// assert!(sub.is_subscriber_dropped()); // rule 1.6
/// env.verify_no_async_errors_no_delay().unwrap();
/// ```
pub struct ManualSubscriber<T> {
    handle: ProbeHandle<T>,
    token: Weak<()>,
}

impl<T> fmt::Debug for ManualSubscriber<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualSubscriber")
            .field("id", &self.handle.shared.id)
            .finish_non_exhaustive()
    }
}

impl<T: Send + fmt::Debug + 'static> ManualSubscriber<T> {
    /// A probe pair with the default `on_next` recursion bound of 1.
    pub fn new(env: &TestEnvironment) -> (Self, ProbeSubscriber<T>) {
        Self::with_recursion_bound(env, 1)
    }

    /// A probe pair: the handle for the test, the subscriber for the publisher. `bound` is the
    /// allowed nesting of `on_next` (rule 3.3).
    pub fn with_recursion_bound(env: &TestEnvironment, bound: u64) -> (Self, ProbeSubscriber<T>) {
        let shared = Arc::new(Shared {
            id: NEXT_PROBE_ID.fetch_add(1, Ordering::Relaxed),
            env: env.clone(),
            state: Mutex::new(ProbeState::default()),
            subscribed: Latch::new(env),
            received: Receptacle::new(DEFAULT_CAPACITY),
            recursion_bound: bound.max(1),
        });
        let token = Arc::new(());
        let manual = ManualSubscriber {
            handle: ProbeHandle {
                shared: shared.clone(),
            },
            token: Arc::downgrade(&token),
        };
        let probe = ProbeSubscriber {
            shared,
            _token: token,
            on_subscribe_hook: None,
            on_next_hook: None,
            blackhole: false,
        };
        (manual, probe)
    }

    /// Creates a probe, subscribes it to `publisher` and waits for `on_subscribe` (the JVM's
    /// `env.newManualSubscriber`).
    ///
    /// # Errors
    ///
    /// A 1.9 failure if `subscribe` panics or `on_subscribe` does not come within the default
    /// timeout.
    pub fn subscribe<P>(env: &TestEnvironment, publisher: &P) -> TestResult<Self>
    where
        P: Publisher<T> + ?Sized,
    {
        let (manual, probe) = Self::new(env);
        manual.subscribe_probe(publisher, probe)?;
        Ok(manual)
    }

    /// Subscribes `probe` (this handle's own subscriber, possibly with hooks) to `publisher`
    /// and waits for `on_subscribe`.
    ///
    /// # Errors
    ///
    /// As [`subscribe`](Self::subscribe).
    pub fn subscribe_probe<P>(&self, publisher: &P, probe: ProbeSubscriber<T>) -> TestResult
    where
        P: Publisher<T> + ?Sized,
    {
        subscribe_guarded(publisher, Box::new(probe))?;
        self.expect_subscribed()
    }

    /// Waits for `on_subscribe` up to the default timeout.
    ///
    /// # Errors
    ///
    /// A 1.9 failure when it does not come.
    pub fn expect_subscribed(&self) -> TestResult {
        self.handle
            .shared
            .subscribed
            .expect_close(
                self.env().default_timeout(),
                "rule 1.9: the publisher did not call on_subscribe",
            )
            .map_err(|s| s.with_hint(hints::ON_SUBSCRIBE))
    }

    /// The environment this probe reports to.
    pub fn env(&self) -> &TestEnvironment {
        &self.handle.shared.env
    }

    /// This probe's id, as recorded in [`AsyncError::probe`].
    pub fn id(&self) -> u64 {
        self.handle.shared.id
    }

    /// The hook-side handle of this probe.
    pub fn handle(&self) -> &ProbeHandle<T> {
        &self.handle
    }

    /// The subscription, once `on_subscribe` came.
    pub fn subscription(&self) -> Option<SubscriptionRef> {
        self.handle.subscription()
    }

    /// `request(n)`.
    ///
    /// # Errors
    ///
    /// A 3.16 failure if `request` panics.
    pub fn request(&self, n: u64) -> TestResult {
        self.handle.try_request(n).map_err(Stop::Failed)
    }

    /// `cancel()`.
    ///
    /// # Errors
    ///
    /// A 3.15 failure if `cancel` panics.
    pub fn cancel(&self) -> TestResult {
        self.handle.try_cancel().map_err(Stop::Failed)
    }

    /// The terminal signal received so far (`"on_complete"`/`"on_error"`), if any.
    pub fn terminal(&self) -> Option<&'static str> {
        self.handle.shared.lock().terminal
    }

    /// The number of `on_next` calls received so far.
    pub fn delivered(&self) -> u64 {
        self.handle.delivered()
    }

    /// Whether the publisher has dropped the probe subscriber.
    pub fn is_subscriber_dropped(&self) -> bool {
        self.token.upgrade().is_none()
    }

    /// Waits until the publisher has dropped the probe subscriber, polling up to `timeout`.
    ///
    /// # Errors
    ///
    /// A failure with `context` when it is still held after `timeout`.
    pub fn expect_subscriber_dropped(&self, timeout: Duration, context: &str) -> TestResult {
        if self
            .env()
            .poll_until(timeout, || self.is_subscriber_dropped())
        {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{context}: the publisher still holds the subscriber {} ms later",
                timeout.as_millis()
            )))
        }
    }

    /// The next recorded signal, waiting up to `timeout`. An `on_error` taken here is no
    /// longer reported as an unexpected async error.
    pub fn next_signal(&self, timeout: Duration) -> Option<Signal<T>> {
        let s = self.handle.shared.received.poll(timeout)?;
        if let Signal::Error(e) = &s {
            self.consume_error_flop(e);
        }
        Some(s)
    }

    fn consume_error_flop(&self, e: &Error) {
        let id = self.id();
        self.env().take_async_error(|a| {
            a.probe == Some(id) && a.error.as_ref().is_some_and(|x| x.ptr_eq(e))
        });
    }

    /// The next element, within the default timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` on a terminal signal or a timeout.
    pub fn next_element(&self, context: &str) -> TestResult<T> {
        match self.next_element_or_end_of_stream(context)? {
            Some(x) => Ok(x),
            None => Err(
                Stop::failed(format!("{context}: expected an element, got on_complete"))
                    .with_hint(hints::TOO_FEW_ELEMENTS),
            ),
        }
    }

    /// The next element or `None` on `on_complete`, within the default timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` on `on_error` or a timeout.
    pub fn next_element_or_end_of_stream(&self, context: &str) -> TestResult<Option<T>> {
        let t = self.env().default_timeout();
        match self.next_signal(t) {
            Some(Signal::Next(x)) => Ok(Some(x)),
            Some(Signal::Complete) => Ok(None),
            Some(Signal::Error(e)) => Err(Stop::failed(format!(
                "{context}: expected an element, got on_error({e})"
            ))),
            None => Err(Stop::failed(format!(
                "{context}: no element within {} ms",
                t.as_millis()
            ))),
        }
    }

    /// The next `n` elements.
    ///
    /// # Errors
    ///
    /// As [`next_element`](Self::next_element).
    pub fn next_elements(&self, n: u64, context: &str) -> TestResult<Vec<T>> {
        (0..n)
            .map(|i| self.next_element(&format!("{context} (element {} of {n})", i + 1)))
            .collect()
    }

    /// `request(1)`, then the next element.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request) and [`next_element`](Self::next_element).
    pub fn request_next_element(&self, context: &str) -> TestResult<T> {
        self.request(1)?;
        self.next_element(context)
    }

    /// `request(1)`, then the next element or the end of the stream.
    ///
    /// # Errors
    ///
    /// As [`next_element_or_end_of_stream`](Self::next_element_or_end_of_stream).
    pub fn request_next_element_or_end_of_stream(&self, context: &str) -> TestResult<Option<T>> {
        self.request(1)?;
        self.next_element_or_end_of_stream(context)
    }

    /// `request(1)`, then `on_complete` (the JVM's `requestEndOfStream`).
    ///
    /// # Errors
    ///
    /// As [`expect_completion`](Self::expect_completion).
    pub fn request_end_of_stream(&self, context: &str) -> TestResult {
        self.request(1)?;
        self.expect_completion(context)
    }

    /// Expects `on_complete` as the next signal, within the default timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal or a timeout.
    pub fn expect_completion(&self, context: &str) -> TestResult {
        let t = self.env().default_timeout();
        match self.next_signal(t) {
            Some(Signal::Complete) => Ok(()),
            Some(Signal::Next(x)) => Err(Stop::failed(format!(
                "{context}: expected on_complete, got on_next({x:?}): an element more than \
                 expected"
            ))
            .with_hint(hints::TOO_MANY_ELEMENTS)),
            Some(other) => Err(Stop::failed(format!(
                "{context}: expected on_complete, got {other}"
            ))),
            None => {
                let outstanding = self.outstanding();
                if outstanding == 0 {
                    Err(Stop::failed(format!(
                        "{context}: no on_complete within {} ms after the last element, with \
                         no demand left (the publisher waits for a request to discover its \
                         end?)",
                        t.as_millis()
                    ))
                    .with_hint(hints::LOOK_AHEAD))
                } else {
                    Err(Stop::failed(format!(
                        "{context}: no on_complete within {} ms ({outstanding} requested and \
                         not delivered)",
                        t.as_millis()
                    ))
                    .with_hint(hints::ELEMENTS_RUN_OUT))
                }
            }
        }
    }

    /// The demand requested through this probe and not yet delivered.
    pub fn outstanding(&self) -> u64 {
        let st = self.handle.shared.lock();
        st.requested.saturating_sub(st.delivered)
    }

    /// Expects `on_error` as the next signal, within the default timeout; returns the error.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal or a timeout.
    pub fn expect_error(&self, context: &str) -> TestResult<Error> {
        let t = self.env().default_timeout();
        match self.next_signal(t) {
            Some(Signal::Error(e)) => Ok(e),
            Some(other) => Err(Stop::failed(format!(
                "{context}: expected on_error, got {other}"
            ))),
            None => Err(Stop::failed(format!(
                "{context}: no on_error within {} ms",
                t.as_millis()
            ))),
        }
    }

    /// Expects no signal within the no-signals timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` naming the signal that came.
    pub fn expect_none(&self, context: &str) -> TestResult {
        match self.next_signal(self.env().no_signals_timeout()) {
            None => Ok(()),
            Some(s) => Err(Stop::failed(format!("{context}: unexpected {s}"))),
        }
    }
}

/// Calls `publisher.subscribe(subscriber)`, turning a panic into a 1.9 failure.
///
/// # Errors
///
/// A failure naming rule 1.9 when `subscribe` panics.
pub fn subscribe_guarded<T, P>(publisher: &P, subscriber: Box<dyn Subscriber<T>>) -> TestResult
where
    P: Publisher<T> + ?Sized,
{
    catch_unwind(AssertUnwindSafe(|| publisher.subscribe(subscriber))).map_err(|p| {
        Stop::failed(format!(
            "rule 1.9: subscribe must return normally, but it panicked: {}",
            panic_message(&*p)
        ))
        .with_hint(hints::MUST_NOT_PANIC)
    })
}
