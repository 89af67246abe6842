//! [`Tally`]: a subscriber that keeps every element it receives (no buffer limit) and can panic
//! on purpose, for the checks that run several subscribers at once, many elements, or a
//! subscriber that panics (rule 2.13).

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use rs_api::{Error, Subscriber, SubscriptionRef};

use crate::env::TestEnvironment;
use crate::outcome::{Stop, TestResult};
use rs_impl::panics::panic_message;

/// The message of every deliberate panic of a [`Tally`]: how a check recognises its own panic
/// when a publisher lets it escape.
pub(crate) const DELIBERATE_PANIC: &str = "rs-tck: a deliberate panic of the test subscriber";

/// Panics on purpose, without the panic hook's report (`resume_unwind` does not call it):
/// the run's output stays free of panics that are part of a check.
fn deliberate_panic(signal: &str) -> ! {
    std::panic::resume_unwind(Box::new(format!(
        "{DELIBERATE_PANIC} in {signal} (rule 2.13)"
    )))
}

/// Where a [`Tally`] panics on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PanicAt {
    /// Never.
    Never,
    /// In `on_subscribe`, after requesting this many elements (0: none).
    OnSubscribe {
        /// Requested before the panic.
        request: u64,
    },
    /// In the `k`-th `on_next` (1-based), after counting the element.
    OnNext(u64),
}

#[derive(Default)]
struct State<T> {
    subscription: Option<SubscriptionRef>,
    /// Booked before each request is made (saturating): rule 1.1's bound.
    requested: u64,
    elements: Vec<T>,
    completes: usize,
    errors: Vec<Error>,
    /// The signal that panicked on purpose, once it did.
    panicked: Option<&'static str>,
}

struct Shared<T> {
    env: TestEnvironment,
    label: String,
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The subscriber half: hand it to the publisher under test.
pub(crate) struct Tally<T> {
    shared: Arc<Shared<T>>,
    panic_at: PanicAt,
    _token: Arc<()>,
}

/// The test's half: requests, cancels, reads what arrived.
pub(crate) struct TallyHandle<T> {
    shared: Arc<Shared<T>>,
    token: Weak<()>,
}

impl<T> fmt::Debug for TallyHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TallyHandle")
            .field("label", &self.shared.label)
            .finish_non_exhaustive()
    }
}

impl<T: Send + fmt::Debug + 'static> Tally<T> {
    /// A pair reporting to `env`; `label` names the subscriber in failures ("subscriber 2").
    pub(crate) fn new(
        env: &TestEnvironment,
        label: impl Into<String>,
        panic_at: PanicAt,
    ) -> (Tally<T>, TallyHandle<T>) {
        let shared = Arc::new(Shared {
            env: env.clone(),
            label: label.into(),
            state: Mutex::new(State {
                subscription: None,
                requested: 0,
                elements: Vec::new(),
                completes: 0,
                errors: Vec::new(),
                panicked: None,
            }),
        });
        let token = Arc::new(());
        let handle = TallyHandle {
            shared: shared.clone(),
            token: Arc::downgrade(&token),
        };
        (
            Tally {
                shared,
                panic_at,
                _token: token,
            },
            handle,
        )
    }

    /// The common entry checks; `false`: the signal must be ignored (it came after the
    /// subscriber panicked, which is flopped).
    fn enter(&self, st: &State<T>, signal: &str) -> bool {
        let label = &self.shared.label;
        if let Some(p) = st.panicked {
            self.shared.env.flop(format!(
                "rule 2.13: {signal} to {label} after its {p} panicked: the publisher must treat \
                 the subscription as cancelled and stop signalling that subscriber"
            ));
            return false;
        }
        if st.subscription.is_none() && signal != "on_subscribe" {
            self.shared
                .env
                .flop(format!("rule 1.9: {signal} to {label} before on_subscribe"));
        }
        if st.completes + st.errors.len() > 0 {
            self.shared.env.flop(format!(
                "rule 1.7: {signal} to {label} after its terminal signal"
            ));
        }
        true
    }
}

impl<T: Send + fmt::Debug + 'static> Subscriber<T> for Tally<T> {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        {
            let mut st = self.shared.lock();
            if !self.enter(&st, "on_subscribe") {
                return;
            }
            if st.subscription.is_some() {
                drop(st);
                self.shared.env.flop(format!(
                    "rule 1.9: on_subscribe to {} a second time",
                    self.shared.label
                ));
                return;
            }
            st.subscription = Some(subscription.clone());
            if let PanicAt::OnSubscribe { request } = self.panic_at {
                st.requested = st.requested.saturating_add(request);
            }
        }
        if let PanicAt::OnSubscribe { request } = self.panic_at {
            if request > 0 {
                let _ = catch_unwind(AssertUnwindSafe(|| subscription.request(request)));
            }
            self.shared.lock().panicked = Some("on_subscribe");
            deliberate_panic("on_subscribe");
        }
    }

    fn on_next(&mut self, item: T) {
        let n = {
            let mut st = self.shared.lock();
            if !self.enter(&st, "on_next") {
                return;
            }
            if st.elements.len() as u64 >= st.requested {
                let r = st.requested;
                drop(st);
                self.shared.env.flop(format!(
                    "rule 1.1: on_next({item:?}) to {} is element {}, but only {r} were requested",
                    self.shared.label,
                    r + 1
                ));
                st = self.shared.lock();
            }
            st.elements.push(item);
            st.elements.len() as u64
        };
        if self.panic_at == PanicAt::OnNext(n) {
            self.shared.lock().panicked = Some("on_next");
            deliberate_panic(&format!("on_next #{n}"));
        }
    }

    fn on_error(&mut self, error: Error) {
        let mut st = self.shared.lock();
        if self.enter(&st, "on_error") {
            st.errors.push(error);
        }
    }

    fn on_complete(&mut self) {
        let mut st = self.shared.lock();
        if self.enter(&st, "on_complete") {
            st.completes += 1;
        }
    }
}

impl<T> TallyHandle<T> {
    /// `f` of the elements received so far.
    pub(crate) fn with_elements<R>(&self, f: impl FnOnce(&[T]) -> R) -> R {
        f(&self.shared.lock().elements)
    }

    /// The subscriber's name in failures.
    pub(crate) fn label(&self) -> &str {
        &self.shared.label
    }

    /// Waits up to the default timeout for `on_subscribe`.
    pub(crate) fn expect_subscribed(&self) -> TestResult {
        let env = &self.shared.env;
        if env.poll_until(env.default_timeout(), || {
            self.shared.lock().subscription.is_some()
        }) {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "rule 1.9: the publisher did not call on_subscribe on {}",
                self.shared.label
            ))
            .with_hint(crate::hints::ON_SUBSCRIBE))
        }
    }

    /// Books `n` as requested, then requests it.
    ///
    /// # Errors
    ///
    /// When `request` panics: with the subscriber's own deliberate panic, the publisher let a
    /// subscriber's panic escape (2.13); otherwise the publisher's `request` panicked (3.16).
    pub(crate) fn request(&self, n: u64) -> TestResult {
        let s = {
            let mut st = self.shared.lock();
            st.requested = st.requested.saturating_add(n);
            st.subscription.clone()
        };
        let Some(s) = s else {
            return Err(Stop::failed(format!(
                "request({n}) on {} before on_subscribe",
                self.shared.label
            )));
        };
        guard_call(&format!("request({n}) on {}", self.shared.label), || {
            s.request(n)
        })
    }

    /// Cancels.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub(crate) fn cancel(&self) -> TestResult {
        let s = self.shared.lock().subscription.clone();
        match s {
            Some(s) => guard_call(&format!("cancel() on {}", self.shared.label), || s.cancel()),
            None => Ok(()),
        }
    }

    /// Elements received so far.
    pub(crate) fn count(&self) -> u64 {
        self.shared.lock().elements.len() as u64
    }

    /// `on_complete` calls received.
    pub(crate) fn completes(&self) -> usize {
        self.shared.lock().completes
    }

    /// The `on_error` errors received.
    pub(crate) fn errors(&self) -> Vec<Error> {
        self.shared.lock().errors.clone()
    }

    /// Whether a terminal signal came.
    pub(crate) fn is_terminated(&self) -> bool {
        let st = self.shared.lock();
        st.completes + st.errors.len() > 0
    }

    /// Whether it panicked on purpose already.
    pub(crate) fn has_panicked(&self) -> bool {
        self.shared.lock().panicked.is_some()
    }

    /// Whether the publisher dropped the subscriber half.
    pub(crate) fn is_dropped(&self) -> bool {
        self.token.upgrade().is_none()
    }

    /// Waits up to `timeout` for the publisher to drop the subscriber.
    ///
    /// # Errors
    ///
    /// A failure with `context` when it still holds it.
    pub(crate) fn expect_dropped(&self, timeout: Duration, context: &str) -> TestResult {
        if self.shared.env.poll_until(timeout, || self.is_dropped()) {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{context}: the publisher still holds {} {} ms later",
                self.shared.label,
                timeout.as_millis()
            )))
        }
    }
}

/// Calls `f` (a `request` or `cancel` on the publisher under test) and turns a panic into a
/// failure: the tally's own deliberate panic escaping (2.13), or the publisher's (3.16).
pub(crate) fn guard_call(what: &str, f: impl FnOnce()) -> TestResult {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let m = panic_message(&*p);
        if m.contains(DELIBERATE_PANIC) {
            Stop::failed(format!(
                "rule 2.13: a subscriber's panic escaped from {what}: {m}"
            ))
            .with_hint(crate::hints::PANIC_ESCAPED)
        } else {
            Stop::failed(format!("rule 3.16: {what} panicked: {m}"))
        }
    })
}

/// Waits until `done` holds, as long as `progress` (a count that grows while the publisher
/// works) keeps changing: fails with `what` (and the counts) after the default timeout passes
/// without progress. A bound by progress, not by the total time a run of many elements takes.
pub(crate) fn wait_while_progressing(
    env: &TestEnvironment,
    what: &str,
    mut progress: impl FnMut() -> u64,
    mut done: impl FnMut() -> bool,
) -> TestResult {
    let mut last = progress();
    loop {
        if done() {
            return Ok(());
        }
        let moved = env.poll_until(env.default_timeout(), || done() || progress() != last);
        if !moved {
            return Err(Stop::failed(format!(
                "{what} (no progress within {} ms, at {last})",
                env.default_timeout().as_millis()
            )));
        }
        last = progress();
    }
}
