//! Verifications for subscribers that drive async Rust: **Sink-as-subscriber** adapters (a
//! `futures::Sink` fed from a publisher, as `rs_impl::compat::sink_subscriber`) and
//! **async-callback** adapters (a subscriber whose `on_next` is an `async fn`, as
//! `rs_impl::compat::from_async` with `AsyncSubscriber`).
//!
//! The TCK supplies the async end — a [`TestSink`] that is ready only when the TCK says so, a
//! [`TestCallback`] whose calls finish only when the TCK lets them and which reports any two
//! calls running at once — and the factory wraps it in the adapter under test. Upstream is the
//! TCK's [`ManualPublisher`], which sends only against demand and checks every call the
//! adapter makes on its subscription (rules 2.3, 2.4, 2.7, 3.1, no `request(0)`). These add to
//! the subscriber verifications (whitebox, blackbox), which the same adapters run too.
//!
//! | verification | implement | factory | run with |
//! |---|---|---|---|
//! | `sink_subscriber` | [`SinkSubscriberVerification`] | `create_subscriber(sink: TestSink<T>) -> impl Subscriber<T>` | [`verify_sink`] |
//! | `async_callback` | [`AsyncCallbackVerification`] | `create_subscriber(callback: TestCallback<T>) -> impl Subscriber<T>` | [`verify_async`] |
//!
//! # The checks
//!
//! | check | rule | what it checks |
//! |---|---|---|
//! | `required_sink_no_demand_before_the_sink_is_ready` | 2.1 | the sink is not ready: during the no-signals window nothing may be requested; once it is ready, demand comes and the element reaches the sink |
//! | `required_sink_demand_must_follow_the_sinks_readiness` | bounded buffering | the sink takes one element and is not ready again, five times: each time, no more may be requested than the sink accepted plus the declared [`max_buffered`](SinkSubscriberVerification::max_buffered) |
//! | `required_sink_must_receive_every_element_in_order_and_be_closed_on_completion` | 2.9 | 10 elements, then `on_complete`: the sink gets each in order, every `start_send` after a ready `poll_ready`, then `poll_close` |
//! | `required_sink_error_must_cancel_upstream` | 2.6 | the sink fails (its `poll_ready` returns an error once it has accepted one element): the adapter must cancel its subscription |
//! | `required_async_callbacks_must_never_overlap` | 1.3, 2.7 | the callbacks do not finish for the no-signals window while the TCK serves every request; then they do: no two callbacks may ever run at once, and every element is called back in order, then `on_complete` once |
//! | `required_async_callback_demand_must_wait_for_the_callbacks` | bounded buffering | while the callbacks do not finish, the demand stays within the callbacks finished plus the declared [`prefetch`](AsyncCallbackVerification::prefetch) |
//! | `required_async_callback_must_get_the_upstream_error_after_the_elements` | 2.10 | 3 elements then `on_error`: three `on_next` callbacks, then `on_error` with that error, nothing else |
//!
//! The bounded-buffering checks are skipped, saying so, without a declaration.
//!
//! # Examples
//!
//! `rs_impl::compat::sink_subscriber` and `from_async` through both verifications:
//!
//! ```
//! use std::ops::ControlFlow;
//! use rs_api::{Error, Subscriber};
//! use rs_impl::compat::{from_async, sink_subscriber, AsyncSubscriber};
//! use rs_tck::adapters::{AsyncCallbackVerification, SinkSubscriberVerification, TestCallback, TestSink};
//! use rs_tck::publisher::BufferBound;
//!
//! fn pool() -> rs_impl::Runtime {
//!     rs_impl::Runtime::with_threads(1).unwrap()
//! }
//!
//! struct Sink(rs_impl::Runtime);
//! impl SinkSubscriberVerification for Sink {
//!     type Item = u64;
//!     fn create_subscriber(&self, sink: TestSink<u64>) -> impl Subscriber<u64> + 'static {
//!         let (s, done) = sink_subscriber(sink, &self.0);
//!         done.detach(); // the verification watches the sink, not the completion
//!         s
//!     }
//!     fn create_element(&self, i: u64) -> u64 { i }
//!     fn max_buffered(&self) -> BufferBound { BufferBound::AtMost(1) }
//! }
//!
//! /// The glue from `AsyncSubscriber` to the TCK's callback.
//! struct Glue(TestCallback<u64>);
//! #[async_trait::async_trait]
//! impl AsyncSubscriber<u64> for Glue {
//!     async fn on_next(&mut self, item: u64) -> ControlFlow<()> { self.0.on_next(item).await }
//!     async fn on_error(&mut self, error: Error) { self.0.on_error(error).await }
//!     async fn on_complete(&mut self) { self.0.on_complete().await }
//! }
//! struct Async(rs_impl::Runtime);
//! impl AsyncCallbackVerification for Async {
//!     type Item = u64;
//!     fn create_subscriber(&self, callback: TestCallback<u64>) -> impl Subscriber<u64> + 'static {
//!         let (s, done) = from_async(Glue(callback), 4, &self.0);
//!         done.detach();
//!         s
//!     }
//!     fn create_element(&self, i: u64) -> u64 { i }
//!     fn prefetch(&self) -> BufferBound { BufferBound::AtMost(4) }
//! }
//!
//! for suite in [
//!     rs_tck::adapters::verify_sink("sink_subscriber", Sink(pool())),
//!     rs_tck::adapters::verify_async("from_async(4)", Async(pool())),
//! ] {
//!     for t in &suite.tests {
//!         assert_eq!(t.run().outcome, rs_tck::outcome::Outcome::Passed, "{}", t.name);
//!     }
//! }
//! ```
//!
//! # Each check can fail
//!
//! `tck/tests/adapters_self_test.rs` runs every check over broken adapters
//! (`tck/tests/support/broken_adapter.rs`): a sink adapter that requests before the sink is
//! ready, one that never closes the sink, one that swallows the sink's error; an async adapter
//! that spawns a task per callback, and one that loses the upstream's error.

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures::Sink;
use rs_api::{Error, Subscriber};

use crate::env::{TestEnvironment, Timeouts};
use crate::hints;
use crate::outcome::{ensure, fail, Stop, TestResult};
use crate::publisher::BufferBound;
use crate::subscriber::{with_async_errors, ManualPublisher, Mode};
use crate::suite::{specs, Suite, TestSpec};

/// The name of [`verify_sink`]'s verification in reports.
pub const SINK: &str = "sink_subscriber";

/// The name of [`verify_async`]'s verification in reports.
pub const ASYNC: &str = "async_callback";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

// ---------------------------------------------------------------------------------------
// The sink

#[derive(Debug)]
struct SinkState<T> {
    ready: bool,
    /// `poll_ready` returned `Ready(Ok)` and no `start_send` has used it yet.
    granted: bool,
    accepted: Vec<T>,
    closed: bool,
    /// `poll_ready` fails with this once the sink has accepted that many elements.
    failure: Option<(u64, Error)>,
    waker: Option<Waker>,
}

#[derive(Debug)]
struct SinkShared<T> {
    env: TestEnvironment,
    state: Mutex<SinkState<T>>,
}

/// The TCK's sink: a `futures::Sink<T, Error = rs_api::Error>` that is ready only when the
/// TCK says so, keeps what it accepts, and flops a `start_send` without a ready `poll_ready`
/// first (the `Sink` contract). Hand it to the adapter under test.
#[derive(Debug)]
pub struct TestSink<T> {
    shared: Arc<SinkShared<T>>,
}

impl<T> TestSink<T> {
    fn new(env: &TestEnvironment) -> (TestSink<T>, Arc<SinkShared<T>>) {
        let shared = Arc::new(SinkShared {
            env: env.clone(),
            state: Mutex::new(SinkState {
                ready: false,
                granted: false,
                accepted: Vec::new(),
                closed: false,
                failure: None,
                waker: None,
            }),
        });
        (
            TestSink {
                shared: shared.clone(),
            },
            shared,
        )
    }
}

impl<T> SinkShared<T> {
    fn set_ready(&self, ready: bool) {
        let waker = {
            let mut st = lock(&self.state);
            st.ready = ready;
            if ready {
                st.waker.take()
            } else {
                None
            }
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Makes `poll_ready` fail with `error` once `accepted` elements were accepted.
    fn fail_after(&self, accepted: u64, error: Error) {
        let waker = {
            let mut st = lock(&self.state);
            st.failure = Some((accepted, error));
            st.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn accepted(&self) -> u64 {
        lock(&self.state).accepted.len() as u64
    }

    fn closed(&self) -> bool {
        lock(&self.state).closed
    }
}

impl<T> Unpin for TestSink<T> {}

impl<T> Sink<T> for TestSink<T> {
    type Error = Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let mut st = lock(&self.shared.state);
        if let Some((after, e)) = &st.failure {
            if st.accepted.len() as u64 >= *after {
                return Poll::Ready(Err(e.clone()));
            }
        }
        if st.ready {
            st.granted = true;
            Poll::Ready(Ok(()))
        } else {
            st.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Error> {
        let mut st = lock(&self.shared.state);
        if !st.granted {
            drop(st);
            self.shared.env.flop(
                "Sink contract: start_send without a poll_ready that returned Ready(Ok) first",
            );
            st = lock(&self.shared.state);
        }
        st.granted = false;
        st.accepted.push(item);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        lock(&self.shared.state).closed = true;
        Poll::Ready(Ok(()))
    }
}

/// What a Sink-as-subscriber adapter provides to be verified.
///
/// Shared between tests that run at once on several threads (hence `Send + Sync`).
pub trait SinkSubscriberVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Clone + fmt::Debug + PartialEq + 'static;

    /// The adapter under test, feeding `sink`.
    fn create_subscriber(
        &self,
        sink: TestSink<Self::Item>,
    ) -> impl Subscriber<Self::Item> + 'static;

    /// The element with index `element`.
    fn create_element(&self, element: u64) -> Self::Item;

    /// How many elements the adapter may have requested and not yet handed to the sink
    /// (outstanding demand plus held elements). The default, [`BufferBound::Undeclared`], skips
    /// the readiness-bound check, saying so.
    fn max_buffered(&self) -> BufferBound {
        BufferBound::Undeclared
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// The Sink-as-subscriber verification's suite for `v`, reported under `implementation`.
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify_sink<V: SinkSubscriberVerification>(
    implementation: impl Into<String>,
    v: V,
) -> Suite {
    Suite::new(implementation, SINK, v.timeouts(), v, sink_specs::<V>())
}

/// The Sink-as-subscriber checks.
pub fn sink_specs<V: SinkSubscriberVerification>() -> Vec<TestSpec<V>> {
    specs![V, self:
        required_sink_no_demand_before_the_sink_is_ready, "", "2.1", hints::SINK_READY;
        required_sink_demand_must_follow_the_sinks_readiness, "", "", hints::SINK_READY;
        required_sink_must_receive_every_element_in_order_and_be_closed_on_completion, "", "2.9", hints::SINK_DELIVERY;
        required_sink_error_must_cancel_upstream, "", "2.6", hints::SINK_ERROR;
    ]
}

struct SinkStage<'v, V: SinkSubscriberVerification> {
    v: &'v V,
    env: &'v TestEnvironment,
    publisher: ManualPublisher<V::Item>,
    sink: Arc<SinkShared<V::Item>>,
    sent: u64,
}

impl<V: SinkSubscriberVerification> SinkStage<'_, V> {
    fn send_next(&mut self, context: &str) -> TestResult {
        self.publisher.ensure_demand(1, context)?;
        self.publisher.send_next(self.v.create_element(self.sent))?;
        self.sent += 1;
        Ok(())
    }

    fn expect_accepted(&self, n: u64, context: &str) -> TestResult {
        if self
            .env
            .poll_until(self.env.default_timeout(), || self.sink.accepted() >= n)
        {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{context}: the sink accepted {} of the {n} elements sent",
                self.sink.accepted()
            ))
            .with_hint(hints::SINK_DELIVERY))
        }
    }
}

fn run_sink<V: SinkSubscriberVerification>(
    v: &V,
    env: &TestEnvironment,
    body: impl FnOnce(&mut SinkStage<'_, V>) -> TestResult,
) -> TestResult {
    let (sink, shared) = TestSink::new(env);
    let subscriber = v.create_subscriber(sink);
    let publisher = ManualPublisher::new(env, Mode::Manual);
    publisher.subscribe(Box::new(subscriber));
    let mut stage = SinkStage {
        v,
        env,
        publisher,
        sink: shared,
        sent: 0,
    };
    let r = body(&mut stage);
    if !stage.publisher.is_cancelled() {
        stage.publisher.send_completion();
    }
    with_async_errors(env, r.and_then(|()| env.verify_no_async_errors_no_delay()))
}

pub(crate) fn required_sink_no_demand_before_the_sink_is_ready<V: SinkSubscriberVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run_sink(v, env, |s| {
        let watched = env.poll_until(env.no_signals_timeout(), || s.publisher.requested() > 0);
        ensure!(
            !watched,
            "rule 2.1: the adapter requested {} while its sink was not ready: no demand may be \
             signalled before the sink has room — hint: {}",
            s.publisher.requested(),
            hints::SINK_READY
        );
        s.sink.set_ready(true);
        s.send_next("rule 2.1: once the sink is ready, the adapter must request")?;
        s.expect_accepted(1, "rule 2.1: the element requested once the sink was ready")
    })
}

pub(crate) fn required_sink_demand_must_follow_the_sinks_readiness<
    V: SinkSubscriberVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let bound = match v.max_buffered() {
        BufferBound::Undeclared => {
            return Err(Stop::skipped(
                "the verification declares no bound on what the adapter holds \
                 (SinkSubscriberVerification::max_buffered is BufferBound::Undeclared)",
            ))
        }
        BufferBound::AtMost(b) => b,
    };
    run_sink(v, env, |s| {
        for k in 1..=5u64 {
            s.sink.set_ready(true);
            let ctx = format!("bounded buffering: round {k} of 5 (the sink takes one element)");
            s.send_next(&ctx)?;
            s.expect_accepted(k, &ctx)?;
            s.sink.set_ready(false);
            // The sink is full again; the TCK serves whatever the adapter requests meanwhile.
            let mut over = None;
            env.poll_until(env.no_signals_timeout(), || {
                while s.publisher.outstanding() > 0 {
                    if let Err(e) = s.publisher.send_next(s.v.create_element(s.sent)) {
                        over = Some(e);
                        return true;
                    }
                    s.sent += 1;
                }
                let (requested, accepted) = (s.publisher.requested(), s.sink.accepted());
                if requested > accepted.saturating_add(bound) {
                    over = Some(Stop::failed(format!(
                        "{ctx}: with the sink not ready, the adapter had requested {requested} \
                         and the sink accepted {accepted}: more than the declared {bound} held"
                    )));
                    return true;
                }
                false
            });
            if let Some(e) = over {
                return Err(e.with_hint(hints::SINK_READY));
            }
        }
        Ok(())
    })
}

pub(crate) fn required_sink_must_receive_every_element_in_order_and_be_closed_on_completion<
    V: SinkSubscriberVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const N: u64 = 10;
    run_sink(v, env, |s| {
        s.sink.set_ready(true);
        for i in 0..N {
            s.send_next(&format!("rule 2.9: element {} of {N}", i + 1))?;
        }
        s.expect_accepted(N, "rule 2.9")?;
        {
            let st = lock(&s.sink.state);
            for (i, x) in st.accepted.iter().enumerate() {
                let expected = s.v.create_element(i as u64);
                ensure!(
                    *x == expected,
                    "rule 2.9: the sink's element {} is {x:?}, expected {expected:?}",
                    i + 1
                );
            }
        }
        s.publisher.send_completion();
        ensure!(
            env.poll_until(env.default_timeout(), || s.sink.closed()),
            "rule 2.9: after on_complete the adapter must close the sink (poll_close): not \
             closed within {} ms",
            env.default_timeout().as_millis()
        );
        Ok(())
    })
}

pub(crate) fn required_sink_error_must_cancel_upstream<V: SinkSubscriberVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run_sink(v, env, |s| {
        s.sink.fail_after(1, Error::msg("rs-tck: the sink failed"));
        s.sink.set_ready(true);
        s.send_next("rule 2.6: the first element")?;
        s.expect_accepted(1, "rule 2.6: the first element")?;
        s.publisher.expect_cancelling(
            "rule 2.6: after its sink failed, the adapter no longer needs its subscription and \
             must cancel it",
        )
    })
}

// ---------------------------------------------------------------------------------------
// The async callback

/// One callback the adapter made.
#[derive(Debug, Clone, PartialEq)]
enum Call<T> {
    Next(T),
    Error(String),
    Complete,
}

#[derive(Debug)]
struct CallbackState<T> {
    /// Callbacks may finish.
    open: bool,
    /// Running now: started (first polled) and not finished.
    running: u64,
    started: Vec<Call<T>>,
    finished: u64,
    /// The waker of every callback waiting for the gate.
    wakers: Vec<Waker>,
}

#[derive(Debug)]
struct CallbackShared<T> {
    env: TestEnvironment,
    state: Mutex<CallbackState<T>>,
}

/// The TCK's async callback: hand it to the adapter under test, whose subscriber calls
/// [`on_next`](Self::on_next), [`on_error`](Self::on_error) and
/// [`on_complete`](Self::on_complete) and awaits what they return. A call runs from its first
/// poll until it finishes, which it does only once the TCK opens its gate; the TCK flops a call
/// that starts while another is running (rules 1.3 and 2.7, for async code). Cheap to clone:
/// clones are the same callback.
#[derive(Debug)]
pub struct TestCallback<T> {
    shared: Arc<CallbackShared<T>>,
}

impl<T> Clone for TestCallback<T> {
    fn clone(&self) -> Self {
        TestCallback {
            shared: self.shared.clone(),
        }
    }
}

/// A call of a [`TestCallback`]: finishes once the TCK lets it.
#[must_use = "futures do nothing unless polled: the adapter must await the callback"]
#[derive(Debug)]
pub struct CallbackFuture<T, R> {
    shared: Arc<CallbackShared<T>>,
    call: Option<Call<T>>,
    output: Option<R>,
    /// Started (counted as running) and not finished.
    running: bool,
}

impl<T> TestCallback<T> {
    fn new(env: &TestEnvironment) -> Self {
        TestCallback {
            shared: Arc::new(CallbackShared {
                env: env.clone(),
                state: Mutex::new(CallbackState {
                    open: false,
                    running: 0,
                    started: Vec::new(),
                    finished: 0,
                    wakers: Vec::new(),
                }),
            }),
        }
    }

    /// The element callback: resolves to `ControlFlow::Continue(())`.
    pub fn on_next(&self, item: T) -> CallbackFuture<T, ControlFlow<()>> {
        self.call(Call::Next(item), ControlFlow::Continue(()))
    }

    /// The error callback.
    pub fn on_error(&self, error: Error) -> CallbackFuture<T, ()> {
        self.call(Call::Error(error.to_string()), ())
    }

    /// The completion callback.
    pub fn on_complete(&self) -> CallbackFuture<T, ()> {
        self.call(Call::Complete, ())
    }

    fn call<R>(&self, call: Call<T>, output: R) -> CallbackFuture<T, R> {
        CallbackFuture {
            shared: self.shared.clone(),
            call: Some(call),
            output: Some(output),
            running: false,
        }
    }

    fn set_open(&self, open: bool) {
        let wakers = {
            let mut st = lock(&self.shared.state);
            st.open = open;
            if open {
                std::mem::take(&mut st.wakers)
            } else {
                Vec::new()
            }
        };
        for w in wakers {
            w.wake();
        }
    }

    fn finished(&self) -> u64 {
        lock(&self.shared.state).finished
    }

    fn started(&self) -> usize {
        lock(&self.shared.state).started.len()
    }
}

impl<T, R> Unpin for CallbackFuture<T, R> {}

impl<T: fmt::Debug, R> Future for CallbackFuture<T, R> {
    type Output = R;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R> {
        let this = &mut *self;
        let mut st = lock(&this.shared.state);
        if let Some(call) = this.call.take() {
            if st.running > 0 {
                let what = format!("{call:?}");
                drop(st);
                this.shared.env.flop(format!(
                    "rule 1.3/2.7: the callback {what} started while another callback was \
                     still running: the adapter must await each callback before the next"
                ));
                st = lock(&this.shared.state);
            }
            st.running += 1;
            st.started.push(call);
            this.running = true;
        }
        if st.open {
            st.running -= 1;
            st.finished += 1;
            this.running = false;
            Poll::Ready(this.output.take().expect("polled after it finished"))
        } else {
            st.wakers.push(cx.waker().clone());
            Poll::Pending
        }
    }
}

impl<T, R> Drop for CallbackFuture<T, R> {
    fn drop(&mut self) {
        if self.running {
            lock(&self.shared.state).running -= 1;
        }
    }
}

/// What an async-callback adapter provides to be verified.
///
/// Shared between tests that run at once on several threads (hence `Send + Sync`).
pub trait AsyncCallbackVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Clone + fmt::Debug + PartialEq + 'static;

    /// The adapter under test, calling `callback` (and awaiting its calls).
    fn create_subscriber(
        &self,
        callback: TestCallback<Self::Item>,
    ) -> impl Subscriber<Self::Item> + 'static;

    /// The element with index `element`.
    fn create_element(&self, element: u64) -> Self::Item;

    /// How many elements the adapter may have requested beyond the callbacks that finished
    /// (its prefetch). The default, [`BufferBound::Undeclared`], skips the demand check,
    /// saying so.
    fn prefetch(&self) -> BufferBound {
        BufferBound::Undeclared
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// The async-callback verification's suite for `v`, reported under `implementation`.
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify_async<V: AsyncCallbackVerification>(
    implementation: impl Into<String>,
    v: V,
) -> Suite {
    Suite::new(implementation, ASYNC, v.timeouts(), v, async_specs::<V>())
}

/// The async-callback checks.
pub fn async_specs<V: AsyncCallbackVerification>() -> Vec<TestSpec<V>> {
    specs![V, self:
        required_async_callbacks_must_never_overlap, "", "1.3", hints::CALLBACKS_SERIAL;
        required_async_callback_demand_must_wait_for_the_callbacks, "", "", hints::CALLBACKS_DEMAND;
        required_async_callback_must_get_the_upstream_error_after_the_elements, "", "2.10", hints::CALLBACKS_TERMINAL;
    ]
}

struct AsyncStage<'v, V: AsyncCallbackVerification> {
    v: &'v V,
    publisher: ManualPublisher<V::Item>,
    callback: TestCallback<V::Item>,
    sent: u64,
}

impl<V: AsyncCallbackVerification> AsyncStage<'_, V> {
    /// Serves every outstanding request, up to `total` elements in all.
    fn feed(&mut self, total: u64) -> TestResult {
        while self.publisher.outstanding() > 0 && self.sent < total {
            self.publisher.send_next(self.v.create_element(self.sent))?;
            self.sent += 1;
        }
        Ok(())
    }

    /// The calls made so far, each checked against what was sent: every element in order,
    /// then (if `terminal`) that terminal call, and nothing else.
    fn expect_calls(&self, n: u64, terminal: Option<Call<V::Item>>, context: &str) -> TestResult {
        let st = lock(&self.callback.shared.state);
        let mut expected: Vec<Call<V::Item>> = (0..n)
            .map(|i| Call::Next(self.v.create_element(i)))
            .collect();
        expected.extend(terminal);
        ensure!(
            st.started == expected,
            "{context}: the callbacks were {:?}, expected {expected:?} — hint: {}",
            st.started,
            hints::CALLBACKS_TERMINAL
        );
        Ok(())
    }
}

fn run_async<V: AsyncCallbackVerification>(
    v: &V,
    env: &TestEnvironment,
    body: impl FnOnce(&mut AsyncStage<'_, V>) -> TestResult,
) -> TestResult {
    let callback = TestCallback::new(env);
    let subscriber = v.create_subscriber(callback.clone());
    let publisher = ManualPublisher::new(env, Mode::Manual);
    publisher.subscribe(Box::new(subscriber));
    let mut stage = AsyncStage {
        v,
        publisher,
        callback,
        sent: 0,
    };
    let r = body(&mut stage);
    stage.callback.set_open(true);
    with_async_errors(env, r.and_then(|()| env.verify_no_async_errors_no_delay()))
}

fn declared<V: AsyncCallbackVerification>(v: &V) -> TestResult<u64> {
    match v.prefetch() {
        BufferBound::Undeclared => Err(Stop::skipped(
            "the verification declares no prefetch (AsyncCallbackVerification::prefetch is \
             BufferBound::Undeclared): nothing to hold the adapter's demand to",
        )),
        BufferBound::AtMost(p) => Ok(p),
    }
}

pub(crate) fn required_async_callbacks_must_never_overlap<V: AsyncCallbackVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const N: u64 = 12;
    run_async(v, env, |s| {
        // The callbacks cannot finish: an adapter that starts the next one anyway overlaps.
        let mut failed = None;
        env.poll_until(env.no_signals_timeout(), || {
            failed = s.feed(N).err();
            failed.is_some()
        });
        if let Some(e) = failed {
            return Err(e);
        }
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.with_hint(hints::CALLBACKS_SERIAL))?;
        s.callback.set_open(true);
        let ctx = format!("rule 1.3: {N} elements, then on_complete");
        // Every element called back: bounded by progress, not time.
        loop {
            s.feed(N)?;
            if s.sent == N && s.callback.finished() >= N {
                break;
            }
            let last = (s.sent, s.callback.finished());
            let moved = env.poll_until(env.default_timeout(), || {
                s.publisher.outstanding() > 0 || s.callback.finished() != last.1
            });
            if !moved {
                fail!(
                    "{ctx}: the adapter must call back every element: {} sent, {} callbacks \
                     finished, no progress within {} ms — hint: {}",
                    last.0,
                    last.1,
                    env.default_timeout().as_millis(),
                    hints::CALLBACKS_TERMINAL
                );
            }
        }
        s.publisher.send_completion();
        if !env.poll_until(env.default_timeout(), || s.callback.finished() > N) {
            fail!(
                "{ctx}: no on_complete callback within {} ms of on_complete — hint: {}",
                env.default_timeout().as_millis(),
                hints::CALLBACKS_TERMINAL
            );
        }
        s.expect_calls(N, Some(Call::Complete), &ctx)?;
        env.verify_no_async_errors_no_delay()
            .map_err(|e| e.with_hint(hints::CALLBACKS_SERIAL))
    })
}

pub(crate) fn required_async_callback_demand_must_wait_for_the_callbacks<
    V: AsyncCallbackVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = declared(v)?;
    let total = p * 3 + 8;
    run_async(v, env, |s| {
        for round in 1..=3 {
            let mut over = None;
            env.poll_until(env.no_signals_timeout(), || {
                if let Err(e) = s.feed(total) {
                    over = Some(e);
                    return true;
                }
                let (requested, finished) = (s.publisher.requested(), s.callback.finished());
                if requested > finished.saturating_add(p) {
                    over = Some(Stop::failed(format!(
                        "bounded buffering: round {round}, while the callbacks could not \
                         finish: {requested} requested with {finished} callbacks finished, \
                         above finished + the declared prefetch of {p}"
                    )));
                    return true;
                }
                false
            });
            if let Some(e) = over {
                return Err(e.with_hint(hints::CALLBACKS_DEMAND));
            }
            // Let the callbacks run for a moment, then hold them again.
            s.callback.set_open(true);
            let before = s.callback.finished();
            env.poll_until(env.default_timeout(), || {
                let _ = s.feed(total);
                s.callback.finished() > before
            });
            s.callback.set_open(false);
        }
        Ok(())
    })
}

pub(crate) fn required_async_callback_must_get_the_upstream_error_after_the_elements<
    V: AsyncCallbackVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const N: u64 = 3;
    run_async(v, env, |s| {
        s.callback.set_open(true);
        for i in 0..N {
            s.publisher
                .ensure_demand(1, &format!("rule 2.10: element {} of {N}", i + 1))?;
            s.feed(i + 1)?;
        }
        let ctx = format!("rule 2.10: {N} elements, then on_error");
        if !env.poll_until(env.default_timeout(), || s.callback.finished() >= N) {
            fail!(
                "{ctx}: {} of the {N} on_next callbacks finished — hint: {}",
                s.callback.finished(),
                hints::CALLBACKS_TERMINAL
            );
        }
        let e = Error::msg("rs-tck: test exception");
        s.publisher.send_error(e.clone());
        if !env.poll_until(env.default_timeout(), || s.callback.started() as u64 > N) {
            fail!(
                "{ctx}: no on_error callback within {} ms of on_error — hint: {}",
                env.default_timeout().as_millis(),
                hints::CALLBACKS_TERMINAL
            );
        }
        // Nothing after it either.
        env.verify_no_async_errors()?;
        s.expect_calls(N, Some(Call::Error(e.to_string())), &ctx)
    })
}
