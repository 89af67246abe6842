//! [`ManualPublisher`]: the TCK-driven upstream of a subscriber under test (the JVM TCK's
//! `ManualPublisher`), which checks every call the subscriber makes on its subscription.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread::ThreadId;
use std::time::Duration;

use rs_api::{BoxSubscriber, Error, Publisher, Subscription, SubscriptionRef};

use crate::env::TestEnvironment;
use crate::instruments::Latch;
use crate::outcome::{Stop, TestResult};
use rs_impl::panics::panic_message;

/// How the [`ManualPublisher`] delivers elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The JVM's way: the test sends each element itself ([`ManualPublisher::send_next`]),
    /// only against demand; `request` only records.
    Manual,
    /// A synchronous publisher (rules 3.10, 3.11): elements and terminal signals offered with
    /// [`ManualPublisher::offer`] are delivered from inside `request`, on the caller's thread.
    /// A `request` made from inside a signal is trampolined: delivered right after that signal
    /// returns, on the same thread (safe Rust cannot re-enter a `&mut self` subscriber).
    Synchronous,
}

enum Item<T> {
    Subscribe(SubscriptionRef),
    Next(T),
    Complete,
    Failure(Error),
    Drop,
}

/// Demand bookkeeping.
#[derive(Debug, Default)]
struct Books {
    /// Total requested (saturating).
    requested: u64,
    /// Elements sent (manual mode: when sent; synchronous mode: when delivered).
    sent: u64,
    /// Every `request(n)` in order, for [`ManualPublisher::expect_request`].
    log: VecDeque<u64>,
}

struct Inner<T> {
    env: TestEnvironment,
    mode: Mode,
    subscriber: Mutex<Option<BoxSubscriber<T>>>,
    queue: Mutex<VecDeque<Item<T>>>,
    books: Mutex<Books>,
    wip: AtomicUsize,
    cancelled: Latch,
    /// Calls in progress on the subscription (rule 2.7 overlap detector).
    active: AtomicUsize,
    /// How long each call lingers inside the subscription, to widen the window in which an
    /// overlapping call is caught (rule 2.7 tests only; zero otherwise).
    linger_micros: AtomicU64,
    /// The thread delivering `on_complete`/`on_error` right now (rule 2.3).
    in_terminal: Mutex<Option<ThreadId>>,
    /// A terminal signal was delivered (rule 2.4).
    terminated: AtomicBool,
    /// The subscriber was dropped by this publisher (rule 3.1).
    dropped: AtomicBool,
}

impl<T> Inner<T> {
    fn books(&self) -> MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn queue(&self) -> MutexGuard<'_, VecDeque<Item<T>>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The checks common to `request` and `cancel`; returns the overlap guard.
    fn enter(&self, call: &str) -> CallGuard<'_> {
        let current = std::thread::current().id();
        if *self.in_terminal.lock().unwrap_or_else(|e| e.into_inner()) == Some(current) {
            self.env.flop(format!(
                "rule 2.3: the subscriber called {call} from inside on_complete/on_error"
            ));
        } else if self.dropped.load(Ordering::Acquire) && !call.starts_with("cancel") {
            self.env.flop(format!(
                "rule 3.1: {call} was called after the publisher dropped the subscriber: the \
                 call came from outside the subscriber's context (a thread or handle it left \
                 behind)"
            ));
        } else if self.dropped.load(Ordering::Acquire) {
            self.env.flop(format!(
                "rule 3.1: {call} was called after the publisher dropped the subscriber"
            ));
        } else if self.terminated.load(Ordering::Acquire) && call.starts_with("request") {
            self.env.flop(format!(
                "rule 2.4: {call} after on_complete/on_error: the subscriber must consider the \
                 subscription cancelled"
            ));
        }
        if self.active.fetch_add(1, Ordering::AcqRel) > 0 {
            self.env.flop(format!(
                "rule 2.7: {call} overlapped another request/cancel call of the same \
                 subscriber: its calls on the subscription must be serial"
            ));
        }
        let linger = self.linger_micros.load(Ordering::Acquire);
        if linger > 0 {
            std::thread::sleep(Duration::from_micros(linger));
        }
        CallGuard(&self.active)
    }
}

struct CallGuard<'a>(&'a AtomicUsize);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<T: Send + 'static> Inner<T> {
    /// The work-in-progress drain loop: one deliverer at a time, re-entrant calls trampolined.
    fn drain(&self) {
        if self.wip.fetch_add(1, Ordering::AcqRel) != 0 {
            return;
        }
        self.drain_loop();
    }

    /// The drainer's loop, entered with the counter already raised.
    fn drain_loop(&self) {
        let mut missed = 1;
        loop {
            while let Some(item) = self.next_item() {
                self.deliver(item);
            }
            missed = self.wip.fetch_sub(missed, Ordering::AcqRel) - missed;
            if missed == 0 {
                break;
            }
        }
    }

    fn next_item(&self) -> Option<Item<T>> {
        let mut q = self.queue();
        if self.mode == Mode::Synchronous && matches!(q.front(), Some(Item::Next(_))) {
            let mut b = self.books();
            if b.requested <= b.sent {
                return None;
            }
            b.sent += 1;
        }
        q.pop_front()
    }

    fn deliver(&self, item: Item<T>) {
        let mut guard = self.subscriber.lock().unwrap_or_else(|e| e.into_inner());
        let Some(s) = guard.as_mut() else {
            return;
        };
        let (signal, result) = match item {
            Item::Subscribe(sref) => (
                "on_subscribe",
                catch_unwind(AssertUnwindSafe(|| s.on_subscribe(sref))),
            ),
            Item::Next(x) => ("on_next", catch_unwind(AssertUnwindSafe(|| s.on_next(x)))),
            Item::Complete => {
                *self.in_terminal.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(std::thread::current().id());
                let r = catch_unwind(AssertUnwindSafe(|| s.on_complete()));
                *self.in_terminal.lock().unwrap_or_else(|e| e.into_inner()) = None;
                self.terminated.store(true, Ordering::Release);
                ("on_complete", r)
            }
            Item::Failure(e) => {
                *self.in_terminal.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(std::thread::current().id());
                let r = catch_unwind(AssertUnwindSafe(|| s.on_error(e)));
                *self.in_terminal.lock().unwrap_or_else(|e| e.into_inner()) = None;
                self.terminated.store(true, Ordering::Release);
                ("on_error", r)
            }
            Item::Drop => {
                let s = guard.take();
                drop(guard);
                let r = catch_unwind(AssertUnwindSafe(|| drop(s)));
                self.dropped.store(true, Ordering::Release);
                if let Err(p) = r {
                    self.env.flop(format!(
                        "rule 2.13 (3.14): dropping the subscriber without a terminal signal \
                         (the publisher shut down after cancel) panicked: {}",
                        panic_message(&*p)
                    ));
                }
                return;
            }
        };
        if let Err(p) = result {
            // 2.13: the caller treats the subscription as cancelled and drops the subscriber.
            let s = guard.take();
            drop(guard);
            let _ = catch_unwind(AssertUnwindSafe(|| drop(s)));
            self.dropped.store(true, Ordering::Release);
            self.env.flop(format!(
                "rule 2.13: the subscriber's {signal} panicked (signals must return normally): {}",
                panic_message(&*p)
            ));
        }
    }

    fn push(&self, item: Item<T>) {
        self.queue().push_back(item);
        self.drain();
    }
}

/// The subscription the [`ManualPublisher`] hands to its subscriber. It records every
/// `request`, and flops on: `request(0)` (the JVM's `expectRequest` check), calls from inside
/// `on_complete`/`on_error` (2.3), a `request` after the terminal signal (2.4), calls after the
/// publisher dropped the subscriber (3.1), and overlapping calls (2.7).
struct ManualSubscription<T> {
    inner: Weak<Inner<T>>,
}

impl<T: Send + 'static> Subscription for ManualSubscription<T> {
    fn request(&self, n: u64) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        {
            let _g = inner.enter(&format!("request({n})"));
            if n == 0 {
                inner.env.flop(
                    "rule 2.1/3.9: the subscriber called request(0); a subscriber must request \
                     at least 1 (the JVM TCK's expectRequest fails on n <= 0)",
                );
            }
            let mut b = inner.books();
            b.requested = b.requested.saturating_add(n);
            b.log.push_back(n);
        }
        if inner.mode == Mode::Synchronous {
            inner.drain();
        }
    }

    fn cancel(&self) {
        let Some(inner) = self.inner.upgrade() else {
            return;
        };
        let _g = inner.enter("cancel()");
        inner.cancelled.close();
    }
}

/// A second subscription, handed to a subscriber that already has one (rule 2.5).
#[derive(Debug)]
pub struct SecondSubscription {
    cancelled: Latch,
    requested: AtomicBool,
}

impl Subscription for SecondSubscription {
    fn request(&self, _n: u64) {
        self.requested.store(true, Ordering::Release);
    }
    fn cancel(&self) {
        self.cancelled.close();
    }
}

impl SecondSubscription {
    /// Waits up to `timeout` for `cancel`.
    ///
    /// # Errors
    ///
    /// A failure with `context` if it was not cancelled in time.
    pub fn expect_cancelling(&self, timeout: Duration, context: &str) -> TestResult {
        self.cancelled.expect_close(timeout, context)
    }

    /// Whether `request` was called on it.
    pub fn was_requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }
}

/// A TCK-driven publisher for one subscriber under test (the JVM TCK's `ManualPublisher`).
///
/// In [`Mode::Manual`] the test sends every signal itself, from its own thread, and only
/// against demand ([`send_next`](Self::send_next) fails when the subscriber has not requested).
/// In [`Mode::Synchronous`] elements offered in advance are delivered from inside `request`.
/// Every signal is delivered under `catch_unwind`: a panicking subscriber is flopped (2.13) and
/// dropped. The subscription checks every call the subscriber makes (see the module table).
///
/// # Examples
///
/// ```
/// use rs_tck::env::TestEnvironment;
/// use rs_tck::subscriber::{ManualPublisher, Mode};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let env = TestEnvironment::new(Default::default());
/// let publisher = ManualPublisher::new(&env, Mode::Manual);
/// let (s, handle) = collect(RequestStrategy::OneByOne);
/// publisher.subscribe(Box::new(s));
/// publisher.ensure_demand(1, "collect requests one").unwrap();
/// publisher.send_next(7u64).unwrap();
/// publisher.send_completion();
/// assert_eq!(handle.wait().unwrap(), vec![7]);
/// env.verify_no_async_errors_no_delay().unwrap();
/// ```
pub struct ManualPublisher<T> {
    inner: Arc<Inner<T>>,
}

/// The TCK's publisher as an `rs_api` publisher, for an implementation that subscribes itself
/// (a bridge given a publisher): the same as [`ManualPublisher::subscribe`].
impl<T: Send + 'static> Publisher<T> for ManualPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        ManualPublisher::subscribe(self, subscriber);
    }
}

/// A clone is a handle of the same publisher (for a helper thread that watches it).
impl<T> Clone for ManualPublisher<T> {
    fn clone(&self) -> Self {
        ManualPublisher {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for ManualPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualPublisher")
            .field("mode", &self.inner.mode)
            .finish_non_exhaustive()
    }
}

impl<T: Send + 'static> ManualPublisher<T> {
    /// A publisher reporting to `env`, with no subscriber yet.
    pub fn new(env: &TestEnvironment, mode: Mode) -> Self {
        ManualPublisher {
            inner: Arc::new(Inner {
                env: env.clone(),
                mode,
                subscriber: Mutex::new(None),
                queue: Mutex::new(VecDeque::new()),
                books: Mutex::new(Books::default()),
                wip: AtomicUsize::new(0),
                cancelled: Latch::new(env),
                active: AtomicUsize::new(0),
                linger_micros: AtomicU64::new(0),
                in_terminal: Mutex::new(None),
                terminated: AtomicBool::new(false),
                dropped: AtomicBool::new(false),
            }),
        }
    }

    /// Takes `subscriber` and calls its `on_subscribe` (on this thread).
    pub fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        *self
            .inner
            .subscriber
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(subscriber);
        let sref: SubscriptionRef = Arc::new(ManualSubscription {
            inner: Arc::downgrade(&self.inner),
        });
        self.inner.push(Item::Subscribe(sref));
    }

    /// Makes every `request`/`cancel` call linger for `d`, so that an overlapping call (2.7)
    /// is caught reliably.
    pub fn set_linger(&self, d: Duration) {
        self.inner.linger_micros.store(
            u64::try_from(d.as_micros()).unwrap_or(u64::MAX),
            Ordering::Release,
        );
    }

    /// Hands the subscriber a second subscription (2.5) and returns it.
    pub fn send_second_on_subscribe(&self) -> Arc<SecondSubscription> {
        let second = Arc::new(SecondSubscription {
            cancelled: Latch::new(&self.inner.env),
            requested: AtomicBool::new(false),
        });
        self.inner.push(Item::Subscribe(second.clone()));
        second
    }

    /// The demand not yet served: total requested minus sent.
    pub fn outstanding(&self) -> u64 {
        let b = self.inner.books();
        b.requested.saturating_sub(b.sent)
    }

    /// The total requested so far.
    pub fn requested(&self) -> u64 {
        self.inner.books().requested
    }

    /// Waits until at least `n` elements are requested and not yet sent (the JVM's
    /// `expectRequest`, tolerant of subscribers that request one at a time: the puppet's
    /// `trigger_request(n)` only has to make demand reach `n` eventually).
    ///
    /// # Errors
    ///
    /// A failure with `context` when the demand does not reach `n` within the default timeout.
    pub fn ensure_demand(&self, n: u64, context: &str) -> TestResult {
        let env = &self.inner.env;
        if env.poll_until(env.default_timeout(), || self.outstanding() >= n) {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{context}: expected the subscriber to request (outstanding demand of at least \
                 {n}), but the outstanding demand is {} after {} ms",
                self.outstanding(),
                env.default_timeout().as_millis()
            )))
        }
    }

    /// Takes the oldest recorded `request(n)`, waiting up to the default timeout.
    ///
    /// # Errors
    ///
    /// A failure with `context` when no request came in time.
    pub fn expect_request(&self, context: &str) -> TestResult<u64> {
        let env = &self.inner.env;
        let mut got = None;
        env.poll_until(env.default_timeout(), || {
            got = self.inner.books().log.pop_front();
            got.is_some()
        });
        got.ok_or_else(|| {
            Stop::failed(format!(
                "{context}: expected a request, none came within {} ms",
                env.default_timeout().as_millis()
            ))
        })
    }

    /// Sends `element`, on this thread, against the outstanding demand.
    ///
    /// # Errors
    ///
    /// A failure (the TCK never sends without demand) when nothing is outstanding.
    pub fn send_next(&self, element: T) -> TestResult {
        {
            let mut b = self.inner.books();
            if b.requested <= b.sent {
                return Err(Stop::failed(format!(
                    "the TCK sends only against demand, and the subscriber has none \
                     outstanding ({} requested, {} sent)",
                    b.requested, b.sent
                )));
            }
            b.sent += 1;
        }
        self.inner.push(Item::Next(element));
        Ok(())
    }

    /// Queues `element` (synchronous mode): it is delivered as soon as there is demand, from
    /// inside the `request` that makes it.
    pub fn offer(&self, element: T) {
        self.inner.push(Item::Next(element));
    }

    /// Sends `on_complete` (queued after offered elements in synchronous mode).
    pub fn send_completion(&self) {
        self.inner.push(Item::Complete);
    }

    /// Sends `on_error(error)` (queued after offered elements in synchronous mode).
    pub fn send_error(&self, error: Error) {
        self.inner.push(Item::Failure(error));
    }

    /// Drops the subscriber, as a publisher does after cancel (3.13) or when it shuts down
    /// (3.14); a panic of its `Drop` is flopped. Later calls on the subscription flop (3.1).
    pub fn drop_subscriber(&self) {
        self.inner.push(Item::Drop);
    }

    /// Runs `f` on this thread as if it were a signal: serially with the deliveries, and with
    /// any delivery that a `request` made inside `f` causes trampolined until `f` returns (for
    /// hooks that need the subscriber while no signal runs, such as the blackbox
    /// `trigger_request`). Waits for another thread's delivery to finish first.
    pub fn run_as_signal(&self, f: impl FnOnce()) {
        let inner = &self.inner;
        while inner
            .wip
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            std::thread::yield_now();
        }
        let r = catch_unwind(AssertUnwindSafe(f));
        inner.drain_loop();
        if let Err(p) = r {
            inner.env.flop(format!(
                "the verification's trigger_request hook panicked: {}",
                panic_message(&*p)
            ));
        }
    }

    /// Waits (spinning, up to `timeout`) until the subscriber has a `request` or `cancel` call
    /// in progress on the subscription; whether it did. With a linger set
    /// ([`set_linger`](Self::set_linger)) each call stays in progress that long, so a call
    /// made right after this returns `true` overlaps it unless the subscriber serialises its
    /// calls (rule 2.7).
    pub fn wait_for_call_in_progress(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while self.inner.active.load(Ordering::Acquire) == 0 {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    /// Whether everything queued has been delivered.
    pub fn is_drained(&self) -> bool {
        self.inner.queue().is_empty()
    }

    /// Whether the subscriber cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.is_closed()
    }

    /// Waits up to the default timeout for `cancel`.
    ///
    /// # Errors
    ///
    /// A failure with `context` when the subscriber did not cancel in time.
    pub fn expect_cancelling(&self, context: &str) -> TestResult {
        self.inner
            .cancelled
            .expect_close(self.inner.env.default_timeout(), context)
    }

    /// Waits up to the default timeout until every queued item has been delivered.
    ///
    /// # Errors
    ///
    /// A failure with `context` when items are still queued.
    pub fn expect_drained(&self, context: &str) -> TestResult {
        let env = &self.inner.env;
        if env.poll_until(env.default_timeout(), || self.is_drained()) {
            Ok(())
        } else {
            Err(Stop::failed(format!(
                "{context}: the offered signals were not all delivered within {} ms \
                 (outstanding demand {})",
                env.default_timeout().as_millis(),
                self.outstanding()
            )))
        }
    }
}
