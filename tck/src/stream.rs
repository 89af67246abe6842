//! Publisher → `Stream` bridge verification: for adapters that read a publisher as a
//! [`futures::Stream`] (as `rs_impl::compat::to_stream` does). The stream is the subscriber;
//! the consumer's polls are the demand.
//!
//! Implement [`StreamBridgeVerification`] — one factory, [`create_stream`](StreamBridgeVerification::create_stream),
//! which builds your bridge over the publisher the TCK gives it — and run it with [`verify`].
//! The TCK's publisher is a [`ManualPublisher`]: it sends every element itself, only against
//! the demand the bridge signalled, and checks every call the bridge makes on its subscription
//! (rules 2.3, 2.4, 2.7, 3.1, and no `request(0)`). The TCK polls the stream itself, with a
//! waker of its own, and waits (up to the timeouts) only for a wake-up: a stream that returns
//! `Pending` and never wakes its consumer fails.
//!
//! ```
//! use futures::Stream;
//! use rs_api::{BoxPublisher, Error};
//! use rs_impl::compat::PublisherCompat;
//! use rs_tck::publisher::BufferBound;
//! use rs_tck::stream::StreamBridgeVerification;
//!
//! struct ToStream;
//! impl StreamBridgeVerification for ToStream {
//!     type Item = u64;
//!     fn create_stream(
//!         &self,
//!         publisher: BoxPublisher<u64>,
//!     ) -> impl Stream<Item = Result<u64, Error>> + Send + 'static {
//!         publisher.to_stream(8)
//!     }
//!     fn create_element(&self, i: u64) -> u64 { i }
//!     fn prefetch(&self) -> BufferBound { BufferBound::AtMost(8) }
//! }
//! let suite = rs_tck::stream::verify("to_stream(8)", ToStream);
//! assert_eq!(suite.tests.len(), 6);
//! for t in &suite.tests {
//!     assert_eq!(t.run().outcome, rs_tck::outcome::Outcome::Passed, "{}", t.name);
//! }
//! ```
//!
//! # The checks
//!
//! None has a JVM counterpart (the JVM has no async streams); the rules are those the bridge
//! keeps as a subscriber.
//!
//! | check | rule | what it checks |
//! |---|---|---|
//! | `required_stream_must_yield_every_element_in_order_and_end_after_on_complete` | 2.9 | 20 elements, then `on_complete`, each sent from another thread while the consumer is parked (its poll returned `Pending`): the stream wakes it and yields each as `Ok`, in order, then ends (`None`) |
//! | `required_stream_must_yield_the_upstream_error_after_the_elements_then_end` | 2.10 | 2 elements, then `on_error`: `Ok`, `Ok`, the very error as `Err`, then `None` |
//! | `required_stream_polled_after_its_end_must_stay_ended` | 2.4 | after `None` (from `on_complete`, and separately from `on_error`), three more polls each return `Ready(None)`, and nothing is requested after the terminal signal |
//! | `required_stream_drop_must_cancel_upstream` | 2.6, 3.13 | dropping the stream after one element, and dropping it before any poll, cancels the subscription; nothing calls it once the publisher dropped the subscriber (3.1) |
//! | `required_stream_demand_must_stay_within_polled_plus_prefetch` | bounded buffering | the TCK sends every element as soon as it is requested; at every step the total requested stays within the items polled out plus the declared [`prefetch`](StreamBridgeVerification::prefetch) |
//! | `required_stream_backpressure_must_hold_while_the_consumer_does_not_poll` | bounded buffering | 2 items polled, then no poll for the no-signals window while the TCK keeps serving every request: the demand stays within 2 + prefetch; then every element still comes, in order |
//!
//! The two bounded-buffering checks are skipped, saying so, when the verification declares no
//! prefetch ([`BufferBound::Undeclared`], the default).
//!
//! # Each check can fail
//!
//! `tck/tests/stream_self_test.rs` runs every check over a small bridge with knobs
//! (`tck/tests/support/broken_stream.rs`): unbounded demand, replenishing on every element
//! received, no cancel on drop, `Pending` after the end, a request after the end, an error
//! swallowed, a waker never woken; each makes its check fail with the rule and the reason.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::task::ArcWake;
use futures::Stream;
use rs_api::{BoxPublisher, Error};

use crate::env::{TestEnvironment, Timeouts};
use crate::hints;
use crate::outcome::{ensure, fail, Stop, TestResult};
use crate::publisher::{BufferBound, MAX_CHECKED_BUFFER};
use crate::subscriber::{same_error, with_async_errors, ManualPublisher, Mode};
use crate::suite::{specs, Suite, TestSpec};
use rs_impl::panics::panic_message;

/// The verification's name in reports.
pub const VERIFICATION: &str = "stream_bridge";

/// What a Publisher → `Stream` bridge provides to be verified.
///
/// Shared between tests that run at once on several threads (hence `Send + Sync`).
pub trait StreamBridgeVerification: Send + Sync + 'static {
    /// The element type.
    type Item: Send + Clone + fmt::Debug + PartialEq + 'static;

    /// The bridge under test over `publisher`: subscribes to it (at once, or when first
    /// polled) and returns the stream of its elements (`Ok`) and its error (`Err`).
    fn create_stream(
        &self,
        publisher: BoxPublisher<Self::Item>,
    ) -> impl Stream<Item = Result<Self::Item, Error>> + Send + 'static;

    /// The element with index `element`.
    fn create_element(&self, element: u64) -> Self::Item;

    /// How many elements the stream may have requested beyond those polled out of it (its
    /// prefetch: outstanding demand plus buffered elements). The default,
    /// [`BufferBound::Undeclared`], skips the two bounded-buffering checks, saying so.
    fn prefetch(&self) -> BufferBound {
        BufferBound::Undeclared
    }

    /// The timeouts of every test (default: [`Timeouts::from_env`]).
    fn timeouts(&self) -> Timeouts {
        Timeouts::from_env()
    }
}

/// The stream bridge verification's suite for `v`, reported under `implementation`.
///
/// # Examples
///
/// See the [module docs](self).
pub fn verify<V: StreamBridgeVerification>(implementation: impl Into<String>, v: V) -> Suite {
    Suite::new(implementation, VERIFICATION, v.timeouts(), v, specs::<V>())
}

/// The six checks.
pub fn specs<V: StreamBridgeVerification>() -> Vec<TestSpec<V>> {
    specs![V, self:
        required_stream_must_yield_every_element_in_order_and_end_after_on_complete, "", "2.9",
            "does the stream yield every element the subscriber received, in order, and end (Ready(None)) after on_complete, waking the consumer for each?";
        required_stream_must_yield_the_upstream_error_after_the_elements_then_end, "", "2.10",
            "does on_error become one Err item after the elements received before it, then the end of the stream?";
        required_stream_polled_after_its_end_must_stay_ended, "", "2.4",
            "once the stream has ended, does every later poll return Ready(None) (a FusedStream), without requesting again?";
        required_stream_drop_must_cancel_upstream, "", "2.6",
            "does dropping the stream cancel its subscription (in Drop, also when it was never polled or the subscription arrives after the drop)?";
        required_stream_demand_must_stay_within_polled_plus_prefetch, "", "",
            hints::BOUNDED_STREAM;
        required_stream_backpressure_must_hold_while_the_consumer_does_not_poll, "", "",
            hints::BOUNDED_STREAM;
    ]
}

// ---------------------------------------------------------------------------------------
// The driver: the TCK's publisher, and a consumer that polls with a waker of its own.

#[derive(Default)]
struct Woken(AtomicBool);

impl ArcWake for Woken {
    fn wake_by_ref(arc_self: &Arc<Self>) {
        arc_self.0.store(true, Ordering::Release);
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>;

/// What one poll of the stream gave.
type Polled<T> = Poll<Option<Result<T, Error>>>;

struct Stage<'v, V: StreamBridgeVerification> {
    v: &'v V,
    env: &'v TestEnvironment,
    publisher: ManualPublisher<V::Item>,
    stream: Option<BoxStream<V::Item>>,
    woken: Arc<Woken>,
    /// Elements sent so far, and the most the TCK sends.
    sent: AtomicU64,
    total: u64,
    /// Items polled out of the stream.
    polled: u64,
}

impl<'v, V: StreamBridgeVerification> Stage<'v, V> {
    fn new(v: &'v V, env: &'v TestEnvironment, total: u64) -> TestResult<Self> {
        let publisher = ManualPublisher::new(env, Mode::Manual);
        let boxed: BoxPublisher<V::Item> = Box::new(publisher.clone());
        let stream = catch_unwind(AssertUnwindSafe(|| v.create_stream(boxed)))
            .map_err(|p| Stop::failed(format!("create_stream panicked: {}", panic_message(&*p))))?;
        Ok(Stage {
            v,
            env,
            publisher,
            stream: Some(Box::pin(stream)),
            woken: Arc::new(Woken(AtomicBool::new(true))),
            sent: AtomicU64::new(0),
            total,
            polled: 0,
        })
    }

    fn element(&self, i: u64) -> V::Item {
        self.v.create_element(i)
    }

    /// Sends elements while demand is outstanding, up to the total; how many it sent.
    fn feed(&self) -> TestResult<u64> {
        let mut n = 0;
        while self.publisher.outstanding() > 0 && self.sent.load(Ordering::Acquire) < self.total {
            let i = self.sent.fetch_add(1, Ordering::AcqRel);
            self.publisher.send_next(self.element(i))?;
            n += 1;
        }
        Ok(n)
    }

    /// One poll of the stream, with the TCK's waker; a panic is a failure.
    fn poll_once(&mut self) -> TestResult<Polled<V::Item>> {
        let stream = self
            .stream
            .as_mut()
            .ok_or_else(|| Stop::failed("the stream was dropped"))?;
        self.woken.0.store(false, Ordering::Release);
        let waker = futures::task::waker(self.woken.clone());
        let mut cx = Context::from_waker(&waker);
        let polled = catch_unwind(AssertUnwindSafe(|| stream.as_mut().poll_next(&mut cx)))
            .map_err(|p| {
                Stop::failed(format!(
                    "the stream panicked in poll_next: {}",
                    panic_message(&*p)
                ))
            })?;
        if let Poll::Ready(Some(Ok(_))) = &polled {
            self.polled += 1;
        }
        Ok(polled)
    }

    /// The next item (or the end), feeding the demand the polls signal; waits for a wake-up
    /// between polls, up to the default timeout.
    fn next_item(&mut self, context: &str) -> TestResult<Option<Result<V::Item, Error>>> {
        let deadline = Instant::now() + self.env.default_timeout();
        loop {
            self.feed()?;
            if let Poll::Ready(item) = self.poll_once()? {
                return Ok(item);
            }
            let woken = self.woken.clone();
            let remaining = deadline.saturating_duration_since(Instant::now());
            let moved = self.env.poll_until(remaining, || {
                woken.0.load(Ordering::Acquire)
                    || (self.publisher.outstanding() > 0
                        && self.sent.load(Ordering::Acquire) < self.total)
            });
            if !moved {
                let sent = self.sent.load(Ordering::Acquire);
                let buffered = sent.saturating_sub(self.polled);
                let (msg, hint) = if buffered > 0 || self.publisher.is_drained() && sent > 0 {
                    (
                        format!(
                            "{context}: the stream returned Pending and was not woken within \
                             {} ms, though the subscriber had received {sent} elements and {} \
                             were polled out (Stream contract: wake the consumer's waker when \
                             an item or the end arrives)",
                            self.env.default_timeout().as_millis(),
                            self.polled
                        ),
                        hints::STREAM_WAKE,
                    )
                } else {
                    (
                        format!(
                            "{context}: the stream returned Pending and requested nothing the \
                             TCK could send ({} requested, {sent} sent, {} polled out)",
                            self.publisher.requested(),
                            self.polled
                        ),
                        hints::STREAM_DEMAND,
                    )
                };
                return Err(Stop::failed(msg).with_hint(hint));
            }
        }
    }

    /// The next element, which must be `expected`.
    fn expect_element(&mut self, expected: &V::Item, context: &str) -> TestResult {
        match self.next_item(context)? {
            Some(Ok(x)) if x == *expected => Ok(()),
            Some(Ok(x)) => fail!("{context}: expected {expected:?}, the stream yielded {x:?}"),
            Some(Err(e)) => fail!("{context}: expected {expected:?}, the stream yielded Err({e})"),
            None => fail!("{context}: expected {expected:?}, the stream ended"),
        }
    }

    /// The stream's end.
    fn expect_end(&mut self, context: &str) -> TestResult {
        match self.next_item(context)? {
            None => Ok(()),
            Some(other) => fail!("{context}: expected the end (None), got {other:?}"),
        }
    }

    fn demand_within(&self, prefetch: u64, context: &str) -> TestResult {
        let requested = self.publisher.requested();
        ensure!(
            requested <= self.polled.saturating_add(prefetch),
            "bounded buffering: {context}: {} requested from upstream with {} items polled out \
             of the stream, above polled + the declared prefetch of {prefetch} — hint: {}",
            if requested == u64::MAX {
                "unbounded demand".to_owned()
            } else {
                requested.to_string()
            },
            self.polled,
            hints::BOUNDED_STREAM
        );
        Ok(())
    }
}

fn run<V: StreamBridgeVerification>(
    v: &V,
    env: &TestEnvironment,
    total: u64,
    body: impl FnOnce(&mut Stage<'_, V>) -> TestResult,
) -> TestResult {
    let mut stage = Stage::new(v, env, total)?;
    let result = body(&mut stage);
    drop(stage.stream.take());
    with_async_errors(
        env,
        result.and_then(|()| env.verify_no_async_errors_no_delay()),
    )
}

fn test_error() -> Error {
    Error::msg("rs-tck: test exception")
}

fn declared_prefetch<V: StreamBridgeVerification>(v: &V) -> TestResult<u64> {
    match v.prefetch() {
        BufferBound::Undeclared => Err(Stop::skipped(
            "the verification declares no prefetch (StreamBridgeVerification::prefetch is \
             BufferBound::Undeclared): nothing to hold the stream's demand to",
        )),
        BufferBound::AtMost(p) if p > MAX_CHECKED_BUFFER => Err(Stop::skipped(format!(
            "the declared prefetch {p} is above {MAX_CHECKED_BUFFER}, the largest this check \
             sends elements for"
        ))),
        BufferBound::AtMost(p) => Ok(p),
    }
}

// ---------------------------------------------------------------------------------------

pub(crate) fn required_stream_must_yield_every_element_in_order_and_end_after_on_complete<
    V: StreamBridgeVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    const N: u64 = 20;
    run(v, env, N, |s| {
        // Every element, and the end, is sent from another thread while the consumer is parked
        // (its poll returned Pending): the stream must wake it.
        let parked = AtomicBool::new(false);
        let over = AtomicBool::new(false);
        let publisher = s.publisher.clone();
        let v = s.v;
        std::thread::scope(|scope| -> TestResult {
            let feeder = scope.spawn(|| -> TestResult {
                let ready = |what: &dyn Fn() -> bool| {
                    env.poll_until(env.default_timeout() * 2, || {
                        over.load(Ordering::Acquire) || parked.load(Ordering::Acquire) && what()
                    })
                };
                for i in 0..N {
                    if !ready(&|| publisher.outstanding() > 0) || over.load(Ordering::Acquire) {
                        return Ok(());
                    }
                    parked.store(false, Ordering::Release);
                    publisher.send_next(v.create_element(i))?;
                }
                if ready(&|| true) && !over.load(Ordering::Acquire) {
                    parked.store(false, Ordering::Release);
                    publisher.send_completion();
                }
                Ok(())
            });
            let consume = (|| -> TestResult {
                for i in 0..=N {
                    let ctx = if i < N {
                        format!("rule 2.9: element {} of {N}", i + 1)
                    } else {
                        "rule 2.9: after on_complete".to_owned()
                    };
                    let item = loop {
                        if let Poll::Ready(item) = s.poll_once()? {
                            break item;
                        }
                        parked.store(true, Ordering::Release);
                        let woken = s.woken.clone();
                        if !env
                            .poll_until(env.default_timeout(), || woken.0.load(Ordering::Acquire))
                        {
                            let requested = publisher.requested();
                            let (msg, hint) = if requested as usize > i as usize {
                                (
                                    format!(
                                        "{ctx}: the stream returned Pending and was not woken \
                                         within {} ms after the subscriber received what it \
                                         waited for ({} polled out; Stream contract: wake the \
                                         consumer's waker when an item or the end arrives)",
                                        env.default_timeout().as_millis(),
                                        s.polled
                                    ),
                                    hints::STREAM_WAKE,
                                )
                            } else {
                                (
                                    format!(
                                        "{ctx}: the stream returned Pending and requested \
                                         nothing the TCK could send ({requested} requested, \
                                         {} polled out)",
                                        s.polled
                                    ),
                                    hints::STREAM_DEMAND,
                                )
                            };
                            return Err(Stop::failed(msg).with_hint(hint));
                        }
                    };
                    match (i < N, item) {
                        (true, Some(Ok(x))) => {
                            let expected = v.create_element(i);
                            ensure!(
                                x == expected,
                                "{ctx}: expected {expected:?}, the stream yielded {x:?}"
                            );
                        }
                        (false, None) => {}
                        (true, other) => {
                            fail!(
                                "{ctx}: expected element {:?}, got {other:?}",
                                v.create_element(i)
                            )
                        }
                        (false, other) => fail!("{ctx}: expected the end (None), got {other:?}"),
                    }
                }
                Ok(())
            })();
            over.store(true, Ordering::Release);
            let fed = feeder
                .join()
                .unwrap_or_else(|_| Err(Stop::failed("the TCK's feeding thread panicked")));
            consume.and(fed)
        })
    })
}

pub(crate) fn required_stream_must_yield_the_upstream_error_after_the_elements_then_end<
    V: StreamBridgeVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, 2, |s| {
        for i in 0..2 {
            let x = s.element(i);
            s.expect_element(&x, &format!("rule 2.10: element {} of 2", i + 1))?;
        }
        let e = test_error();
        s.publisher.send_error(e.clone());
        match s.next_item("rule 2.10: after on_error")? {
            Some(Err(got)) if same_error(&got, &e) => {}
            Some(Err(got)) => {
                fail!("rule 2.10: the stream yielded Err({got}), not the error sent ({e})")
            }
            other => fail!(
                "rule 2.10: after on_error the stream must yield the error as Err, got {other:?} \
                 — hint: {}",
                hints::STREAM_ERROR
            ),
        }
        s.expect_end("rule 2.10: after the Err item")
    })
}

pub(crate) fn required_stream_polled_after_its_end_must_stay_ended<V: StreamBridgeVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    for error in [false, true] {
        let what = if error { "on_error" } else { "on_complete" };
        run(v, env, 1, |s| {
            let x = s.element(0);
            s.expect_element(&x, "rule 2.4: the one element")?;
            if error {
                s.publisher.send_error(test_error());
                let _ = s.next_item("rule 2.4: the Err item")?;
            } else {
                s.publisher.send_completion();
            }
            s.expect_end(&format!("rule 2.4: the end after {what}"))?;
            for k in 1..=3 {
                match s.poll_once()? {
                    Poll::Ready(None) => {}
                    other => fail!(
                        "rule 2.4: poll #{k} after the end (after {what}) returned {other:?}: an \
                         ended stream must stay ended (Ready(None))"
                    ),
                }
            }
            s.env
                .verify_no_async_errors()
                .map_err(|e| e.context(&format!("rule 2.4: polled after the end ({what})")))
        })?;
    }
    Ok(())
}

pub(crate) fn required_stream_drop_must_cancel_upstream<V: StreamBridgeVerification>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    run(v, env, 10, |s| {
        let x = s.element(0);
        s.expect_element(&x, "rule 2.6: the first element")?;
        drop(s.stream.take());
        s.publisher
            .expect_cancelling("rule 2.6: dropping the stream must cancel its subscription")?;
        s.publisher.drop_subscriber();
        s.env
            .verify_no_async_errors()
            .map_err(|e| e.context("rule 3.1: after the drop"))
    })?;
    run(v, env, 10, |s| {
        drop(s.stream.take());
        s.publisher.expect_cancelling(
            "rule 2.6: dropping a stream that was never polled must cancel its subscription",
        )
    })
}

pub(crate) fn required_stream_demand_must_stay_within_polled_plus_prefetch<
    V: StreamBridgeVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = declared_prefetch(v)?;
    let n = p * 3 + 5;
    run(v, env, n, |s| {
        s.feed()?;
        s.demand_within(p, "subscribed, never polled")?;
        for i in 0..n {
            let x = s.element(i);
            s.expect_element(&x, &format!("element {} of {n}", i + 1))?;
            s.feed()?;
            s.demand_within(p, &format!("after {} items", i + 1))?;
        }
        s.publisher.send_completion();
        s.expect_end("after on_complete")
    })
}

pub(crate) fn required_stream_backpressure_must_hold_while_the_consumer_does_not_poll<
    V: StreamBridgeVerification,
>(
    v: &V,
    env: &TestEnvironment,
) -> TestResult {
    let p = declared_prefetch(v)?;
    let n = p * 2 + 5;
    run(v, env, n, |s| {
        for i in 0..2 {
            let x = s.element(i);
            s.expect_element(&x, &format!("element {} of {n}", i + 1))?;
        }
        // The consumer stops polling; the TCK serves every request meanwhile.
        let mut over = None;
        s.env.poll_until(s.env.no_signals_timeout(), || {
            if let Err(e) = s.feed() {
                over = Some(e);
                return true;
            }
            if let Err(e) = s.demand_within(p, "2 items polled, then no poll") {
                over = Some(e);
                return true;
            }
            false
        });
        if let Some(e) = over {
            return Err(e);
        }
        for i in 2..n {
            let x = s.element(i);
            s.expect_element(&x, &format!("element {} of {n}, polled again", i + 1))?;
        }
        s.publisher.send_completion();
        s.expect_end("after on_complete")
    })
}
