//! The whitebox probe: what a subscriber under test reports to, and the puppet through which
//! the TCK drives it (the JVM TCK's `WhiteboxSubscriberProbe` and `SubscriberPuppet`).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

use rs_api::{Error, Subscriber, SubscriptionRef};

use crate::env::TestEnvironment;
use crate::instruments::{Latch, Receptacle, Signal};
use crate::outcome::{Stop, TestResult};
use rs_impl::panics::panic_message;

/// How the TCK drives a whitebox subscriber (the JVM's `SubscriberPuppet`). The subscriber
/// under test registers one with [`WhiteboxSubscriberProbe::register_on_subscribe`].
///
/// * `trigger_request(n)` only has to make the subscriber's total demand reach at least `n`
///   eventually: requesting one at a time, as elements arrive, is fine; the TCK waits for each
///   actual request before it sends an element.
/// * `signal_cancel()` makes the subscriber cancel its subscription (possibly merged with
///   requests not yet made).
///
/// Both may be called from any thread, also concurrently (the rule 2.7 test does so): the
/// subscriber must keep its own calls on the subscription serial.
pub trait SubscriberPuppet: Send + Sync {
    /// Makes the subscriber request so that its total demand reaches at least `elements`.
    fn trigger_request(&self, elements: u64);
    /// Makes the subscriber cancel its subscription.
    fn signal_cancel(&self);
}

#[derive(Default)]
struct ProbeState {
    puppet: Option<Arc<dyn SubscriberPuppet>>,
    terminal: Option<&'static str>,
}

struct Shared<T> {
    env: TestEnvironment,
    state: Mutex<ProbeState>,
    registered: Latch,
    received: Receptacle<Signal<T>>,
}

/// What a whitebox subscriber under test reports to (the JVM's `WhiteboxSubscriberProbe`):
/// cheap to clone; clones share the record.
///
/// The subscriber calls `register_on_subscribe(puppet)` from its `on_subscribe`, and
/// `register_on_next`, `register_on_error`, `register_on_complete` as it processes those
/// signals. The probe flops (rule 1.9/2.12) on a second registration, on a signal before the
/// registration, and (1.7) on anything after a terminal signal.
///
/// # Examples
///
/// ```
/// use rs_tck::env::TestEnvironment;
/// use rs_tck::subscriber::{SubscriberPuppet, WhiteboxSubscriberProbe};
///
/// struct Noop;
/// impl SubscriberPuppet for Noop {
///     fn trigger_request(&self, _n: u64) {}
///     fn signal_cancel(&self) {}
/// }
/// let env = TestEnvironment::new(Default::default());
/// let probe = WhiteboxSubscriberProbe::new(&env);
/// probe.register_on_subscribe(Noop);
/// probe.register_on_next(1u8);
/// probe.register_on_complete();
/// probe.expect_next(&1, "the element").unwrap();
/// probe.expect_completion("the end").unwrap();
/// env.verify_no_async_errors_no_delay().unwrap();
/// ```
pub struct WhiteboxSubscriberProbe<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for WhiteboxSubscriberProbe<T> {
    fn clone(&self) -> Self {
        WhiteboxSubscriberProbe {
            shared: self.shared.clone(),
        }
    }
}

impl<T> fmt::Debug for WhiteboxSubscriberProbe<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WhiteboxSubscriberProbe")
            .finish_non_exhaustive()
    }
}

impl<T> WhiteboxSubscriberProbe<T> {
    fn lock(&self) -> MutexGuard<'_, ProbeState> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn check(&self, signal: &str) {
        let st = self.lock();
        let (registered, terminal) = (st.puppet.is_some(), st.terminal);
        drop(st);
        if !registered {
            self.shared.env.flop(format!(
                "rule 1.9: the subscriber registered {signal} before registering on_subscribe \
                 with the probe"
            ));
        }
        if let Some(t) = terminal {
            self.shared.env.flop(format!(
                "rule 1.7: the subscriber registered {signal} after {t}"
            ));
        }
    }
}

impl<T: Send + fmt::Debug + PartialEq + 'static> WhiteboxSubscriberProbe<T> {
    /// A probe reporting to `env`.
    pub fn new(env: &TestEnvironment) -> Self {
        WhiteboxSubscriberProbe {
            shared: Arc::new(Shared {
                env: env.clone(),
                state: Mutex::new(ProbeState::default()),
                registered: Latch::new(env),
                received: Receptacle::new(1024),
            }),
        }
    }

    /// Registers the puppet; call from `on_subscribe`. A second registration flops.
    pub fn register_on_subscribe(&self, puppet: impl SubscriberPuppet + 'static) {
        let mut st = self.lock();
        if st.puppet.is_some() {
            drop(st);
            self.shared.env.flop(
                "rule 2.12/2.5: the subscriber registered on_subscribe with the probe a second \
                 time",
            );
            return;
        }
        st.puppet = Some(Arc::new(puppet));
        drop(st);
        self.shared.registered.close();
    }

    /// Registers an element the subscriber received.
    pub fn register_on_next(&self, element: T) {
        self.check("on_next");
        if let Err(Signal::Next(x)) = self.shared.received.push(Signal::Next(element)) {
            self.shared.env.flop(format!(
                "the probe's buffer overflowed at on_next({x:?}): more elements than the TCK \
                 sent"
            ));
        }
    }

    /// Registers the error the subscriber received.
    pub fn register_on_error(&self, error: Error) {
        self.check("on_error");
        self.lock().terminal.get_or_insert("on_error");
        self.shared.received.push_unbounded(Signal::Error(error));
    }

    /// Registers completion.
    pub fn register_on_complete(&self) {
        self.check("on_complete");
        self.lock().terminal.get_or_insert("on_complete");
        self.shared.received.push_unbounded(Signal::Complete);
    }

    /// Waits up to the default timeout for the puppet's registration (the JVM's setup check).
    ///
    /// # Errors
    ///
    /// A failure when the subscriber did not register on_subscribe in time.
    pub fn expect_registered(&self) -> TestResult<Arc<dyn SubscriberPuppet>> {
        self.shared.registered.expect_close(
            self.shared.env.default_timeout(),
            "the subscriber under test did not call probe.register_on_subscribe(puppet) from \
             its on_subscribe",
        )?;
        self.lock()
            .puppet
            .clone()
            .ok_or_else(|| Stop::failed("no puppet registered"))
    }

    fn next_signal(&self, context: &str) -> TestResult<Signal<T>> {
        let t = self.shared.env.default_timeout();
        self.shared.received.poll(t).ok_or_else(|| {
            Stop::failed(format!(
                "{context}: the probe registered no signal within {} ms",
                t.as_millis()
            ))
        })
    }

    /// Expects `expected` as the next registered signal.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal, or none.
    pub fn expect_next(&self, expected: &T, context: &str) -> TestResult {
        match self.next_signal(context)? {
            Signal::Next(x) if x == *expected => Ok(()),
            other => Err(Stop::failed(format!(
                "{context}: expected the probe to register on_next({expected:?}), got {other}"
            ))),
        }
    }

    /// Expects `on_next(expected)` or `on_error` as the next registered signal; `true` for
    /// `on_error`.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal, or none.
    pub fn expect_next_or_error(&self, expected: &T, context: &str) -> TestResult<bool> {
        match self.next_signal(context)? {
            Signal::Next(x) if x == *expected => Ok(false),
            Signal::Error(_) => Ok(true),
            other => Err(Stop::failed(format!(
                "{context}: expected the probe to register on_next({expected:?}) or on_error, \
                 got {other}"
            ))),
        }
    }

    /// Expects `on_complete` as the next registered signal.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal, or none.
    pub fn expect_completion(&self, context: &str) -> TestResult {
        match self.next_signal(context)? {
            Signal::Complete => Ok(()),
            other => Err(Stop::failed(format!(
                "{context}: expected the probe to register on_complete, got {other}"
            ))),
        }
    }

    /// Expects `on_error` as the next registered signal; returns the error.
    ///
    /// # Errors
    ///
    /// A failure with `context` on any other signal, or none.
    pub fn expect_error(&self, context: &str) -> TestResult<Error> {
        match self.next_signal(context)? {
            Signal::Error(e) => Ok(e),
            other => Err(Stop::failed(format!(
                "{context}: expected the probe to register on_error, got {other}"
            ))),
        }
    }

    /// Expects nothing registered within the no-signals timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` naming what was registered.
    pub fn expect_none(&self, context: &str) -> TestResult {
        match self
            .shared
            .received
            .poll(self.shared.env.no_signals_timeout())
        {
            None => Ok(()),
            Some(s) => Err(Stop::failed(format!(
                "{context}: the probe registered an unexpected {s}"
            ))),
        }
    }
}

/// Calls the puppet's `trigger_request(n)`, turning a panic into a failure.
pub(crate) fn trigger_request(puppet: &dyn SubscriberPuppet, n: u64) -> TestResult {
    catch_unwind(AssertUnwindSafe(|| puppet.trigger_request(n))).map_err(|p| {
        Stop::failed(format!(
            "the puppet's trigger_request({n}) panicked: {}",
            panic_message(&*p)
        ))
    })
}

/// Calls the puppet's `signal_cancel()`, turning a panic into a failure.
pub(crate) fn signal_cancel(puppet: &dyn SubscriberPuppet) -> TestResult {
    catch_unwind(AssertUnwindSafe(|| puppet.signal_cancel())).map_err(|p| {
        Stop::failed(format!(
            "the puppet's signal_cancel() panicked: {}",
            panic_message(&*p)
        ))
    })
}

/// Wraps a subscriber so that it reports to a [`WhiteboxSubscriberProbe`]: the thin adapter
/// that lets an existing subscriber run the whitebox verification.
///
/// Each signal goes to the inner subscriber first, then to the probe. The puppet is
/// registered at the first `on_subscribe`. For subscribers that manage their own demand (such
/// as `rs_impl`'s ready-made ones), a puppet whose `trigger_request` does nothing is correct
/// as long as the subscriber keeps requesting as it consumes: its demand then reaches any `n`
/// eventually.
///
/// # Examples
///
/// ```
/// use rs_tck::subscriber::{ProbeReporting, SubscriberPuppet, WhiteboxSubscriberProbe};
/// use rs_impl::subscriber::{collect, Handle, RequestStrategy};
///
/// struct CancelOnly(Handle<Vec<u64>>);
/// impl SubscriberPuppet for CancelOnly {
///     fn trigger_request(&self, _n: u64) {}
///     fn signal_cancel(&self) { self.0.cancel() }
/// }
/// let env = rs_tck::env::TestEnvironment::new(Default::default());
/// let probe = WhiteboxSubscriberProbe::<u64>::new(&env);
/// let (s, handle) = collect::<u64>(RequestStrategy::OneByOne);
/// let subscriber: Box<dyn rs_api::Subscriber<u64>> =
///     Box::new(ProbeReporting::new(s, probe, CancelOnly(handle)));
/// # drop(subscriber);
/// ```
pub struct ProbeReporting<S, T, P> {
    inner: S,
    probe: WhiteboxSubscriberProbe<T>,
    puppet: Option<P>,
}

impl<S, T, P> fmt::Debug for ProbeReporting<S, T, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProbeReporting").finish_non_exhaustive()
    }
}

impl<S, T, P> ProbeReporting<S, T, P> {
    /// `inner`, reporting to `probe`, driven by `puppet`.
    pub fn new(inner: S, probe: WhiteboxSubscriberProbe<T>, puppet: P) -> Self {
        ProbeReporting {
            inner,
            probe,
            puppet: Some(puppet),
        }
    }
}

impl<S, T, P> Subscriber<T> for ProbeReporting<S, T, P>
where
    S: Subscriber<T>,
    T: Send + Clone + fmt::Debug + PartialEq + 'static,
    P: SubscriberPuppet + 'static,
{
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        if let Some(p) = self.puppet.take() {
            self.probe.register_on_subscribe(p);
        }
        self.inner.on_subscribe(subscription);
    }

    fn on_next(&mut self, item: T) {
        self.inner.on_next(item.clone());
        self.probe.register_on_next(item);
    }

    fn on_error(&mut self, error: Error) {
        self.inner.on_error(error.clone());
        self.probe.register_on_error(error);
    }

    fn on_complete(&mut self) {
        self.inner.on_complete();
        self.probe.register_on_complete();
    }
}
