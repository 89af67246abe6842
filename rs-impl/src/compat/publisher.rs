//! `Stream` → Publisher: [`StreamPublisher`], driven by a task on the executor the user chooses.

use std::fmt;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
// The subscription is handed out as an `rs_api::SubscriptionRef`, a std `Arc` in every build
// (as in the pull engine); the atomics and locks inside come from the facade.
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use futures::future::FutureObj;
use futures::stream::{Stream, StreamExt, TryStreamExt};
use futures::task::Spawn;
use rs_api::{BoxSubscriber, Error, Publisher, SpecViolation, Subscription, UNBOUNDED};

use super::CompatError;
use crate::demand::Demand;
use crate::loom::sync::atomic::{AtomicUsize, Ordering};
use crate::loom::sync::Mutex;
use crate::panics;

/// Elements a driver task emits per poll before it yields to its executor (cooperative
/// scheduling: a fast stream with unbounded demand does not monopolise a worker thread).
pub const BUDGET: usize = 1024;

/// The boxed stream a [`StreamPublisher`] reads.
type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Error>> + Send>>;

/// A `Stream` published as a Reactive Streams publisher (see [`from_stream`]).
pub struct StreamPublisher<T, S> {
    /// The stream, until the first subscriber takes it.
    stream: Mutex<Option<BoxStream<T>>>,
    spawner: S,
}

impl<T, S> fmt::Debug for StreamPublisher<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamPublisher")
            .field("subscribed", &self.stream.lock().is_none())
            .finish_non_exhaustive()
    }
}

/// Publishes `stream`, polling it on a task spawned on `spawner` (any
/// [`futures::task::Spawn`]: futures' `ThreadPool` or `LocalSpawner`, a tokio runtime through
/// a three-line adapter — see the [module docs](super)).
///
/// # Contract
///
/// * **Unicast:** a stream can be read once. The first subscriber gets it; later ones are
///   refused (`on_subscribe`, then `on_error(`[`SpecViolation::Rejected`]`)`, rule 1.9).
/// * **Demand-driven:** the task polls the stream while the subscriber has outstanding demand.
///   When the demand is used up it polls **once more, ahead**, as the cold sources do, so that
///   a finite (or failed) stream ends without waiting for a request that would only find the
///   end (rules 1.4, 1.5, 1.6, 1.9); an element that look-ahead finds is held until the next
///   request. Then it parks, and `request` wakes it (from any thread, re-entrantly from
///   `on_next` too: then it only adds demand, rule 3.3). **The bound: at most one element
///   held**, nothing else buffered. The cost of the look-ahead: a live stream (a channel's
///   receiver, a sensor) gives up that one element before the subscriber asked for it; if
///   the subscriber then cancels instead of requesting, it is dropped with the stream. (The
///   look-ahead is what the TCK requires: without it a failed stream cannot report its error
///   to a subscriber that has not requested, and the 1.4, 1.6 and 1.9 checks fail.)
/// * **Which thread runs the callbacks:** `on_subscribe` runs in `subscribe`, on the caller's
///   thread; every other signal runs on the executor's task, one at a time (1.3).
/// * **End:** the stream's end is `on_complete`; the stream is dropped right after (and
///   after a failure or a cancel: rule 3.13, promptly, even while it is pending). A panic in
///   the stream is `on_error`; a panicking subscriber is cancelled (2.13).
/// * **The executor:** the task yields after [`BUDGET`] elements per poll. If the executor
///   drops the task before the end (it shuts down, or refused the task), the subscriber gets
///   `on_error(`[`CompatError::TaskDropped`]`)`.
///
/// # Examples
///
/// ```
/// use futures::executor::LocalPool;
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let mut pool = LocalPool::new();
/// let publisher = rs_impl::compat::from_stream(futures::stream::iter(0..5u32), pool.spawner());
/// let (s, result) = collect(RequestStrategy::Prefetch(2));
/// publisher.subscribe(Box::new(s));
/// pool.run();
/// assert_eq!(result.wait().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
pub fn from_stream<T, St, S>(stream: St, spawner: S) -> StreamPublisher<T, S>
where
    St: Stream<Item = T> + Send + 'static,
    T: Send + 'static,
    S: Spawn,
{
    StreamPublisher {
        stream: Mutex::new(Some(Box::pin(stream.map(Ok)))),
        spawner,
    }
}

/// Publishes a stream of `Result`s: `Ok` elements as `on_next`, the first `Err` as
/// `on_error` (the stream is dropped after it). Any error type goes (an [`Error`] passes
/// through as it is; any other is wrapped, so `Error::is` finds it). Otherwise as
/// [`from_stream`].
///
/// # Examples
///
/// ```
/// use futures::executor::LocalPool;
/// use rs_api::{Error, Publisher};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let mut pool = LocalPool::new();
/// let items = futures::stream::iter(vec![Ok(1), Err(Error::msg("bad reading")), Ok(3)]);
/// let publisher = rs_impl::compat::from_try_stream(items, pool.spawner());
/// let (s, result) = collect::<i32>(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// pool.run();
/// assert_eq!(result.wait().unwrap_err().to_string(), "bad reading");
/// ```
pub fn from_try_stream<T, E, St, S>(stream: St, spawner: S) -> StreamPublisher<T, S>
where
    St: Stream<Item = Result<T, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
    S: Spawn,
{
    StreamPublisher {
        stream: Mutex::new(Some(Box::pin(stream.map_err(super::into_error)))),
        spawner,
    }
}

impl<T, S> Publisher<T> for StreamPublisher<T, S>
where
    T: Send + 'static,
    S: Spawn,
{
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        let stream = self.stream.lock().take();
        let Some(stream) = stream else {
            let refused = SpecViolation::Rejected {
                reason: "a stream can be read once: this publisher has its subscriber".into(),
            };
            crate::source::failed::<T>(refused.into()).subscribe(subscriber);
            return;
        };
        start(stream, subscriber, &self.spawner);
    }
}

/// A publisher of a fresh stream per subscriber (see [`from_stream_fn`]).
pub struct StreamFnPublisher<T, S> {
    /// Makes one subscription's stream (panics contained by the caller).
    make: Box<dyn Fn() -> BoxStream<T> + Send + Sync>,
    spawner: S,
}

impl<T, S> fmt::Debug for StreamFnPublisher<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamFnPublisher").finish_non_exhaustive()
    }
}

/// Publishes a **fresh stream per subscriber**: `make` is called in each `subscribe`, and its
/// stream is driven for that subscriber alone, on a task of its own spawned on `spawner`.
///
/// The cold counterpart of [`from_stream`] (whose contract each subscription has, except
/// that it is not unicast): any number of subscribers, each from the beginning of its own
/// stream, each with its own demand. A panic in `make` does not escape `subscribe`: that
/// subscriber gets `on_subscribe`, then `on_error` saying so (rule 1.9).
///
/// # Examples
///
/// ```
/// use futures::executor::LocalPool;
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let mut pool = LocalPool::new();
/// let publisher =
///     rs_impl::compat::from_stream_fn(|| futures::stream::iter(1..=3u32), pool.spawner());
/// let (a, ra) = collect(RequestStrategy::Prefetch(2));
/// let (b, rb) = collect(RequestStrategy::OneByOne);
/// publisher.subscribe(Box::new(a));
/// publisher.subscribe(Box::new(b));
/// pool.run();
/// assert_eq!(ra.wait().unwrap(), vec![1, 2, 3]);
/// assert_eq!(rb.wait().unwrap(), vec![1, 2, 3]);
/// ```
pub fn from_stream_fn<T, St, F, S>(make: F, spawner: S) -> StreamFnPublisher<T, S>
where
    F: Fn() -> St + Send + Sync + 'static,
    St: Stream<Item = T> + Send + 'static,
    T: Send + 'static,
    S: Spawn,
{
    StreamFnPublisher {
        make: Box::new(move || Box::pin(make().map(Ok))),
        spawner,
    }
}

/// [`from_stream_fn`] for streams of `Result`s: each subscriber's stream as in
/// [`from_try_stream`].
///
/// # Examples
///
/// ```
/// use futures::executor::LocalPool;
/// use rs_api::{Error, Publisher};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let mut pool = LocalPool::new();
/// let publisher = rs_impl::compat::from_try_stream_fn(
///     || futures::stream::iter(vec![Ok(1), Err(Error::msg("sensor gone"))]),
///     pool.spawner(),
/// );
/// let (s, result) = collect::<u8>(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// pool.run();
/// assert_eq!(result.wait().unwrap_err().to_string(), "sensor gone");
/// ```
pub fn from_try_stream_fn<T, E, St, F, S>(make: F, spawner: S) -> StreamFnPublisher<T, S>
where
    F: Fn() -> St + Send + Sync + 'static,
    St: Stream<Item = Result<T, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
    S: Spawn,
{
    StreamFnPublisher {
        make: Box::new(move || Box::pin(make().map_err(super::into_error))),
        spawner,
    }
}

impl<T, S> Publisher<T> for StreamFnPublisher<T, S>
where
    T: Send + 'static,
    S: Spawn,
{
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        match catch_unwind(AssertUnwindSafe(|| (self.make)())) {
            Ok(stream) => start(stream, subscriber, &self.spawner),
            Err(payload) => {
                let error = Error::msg(format!(
                    "the stream factory panicked while making a subscription's stream: {}",
                    panics::panic_message(&*payload)
                ));
                crate::source::failed::<T>(error).subscribe(subscriber);
            }
        }
    }
}

/// Starts one subscription of `stream` for `subscriber`: `on_subscribe` here, on the
/// caller's thread, then the task that drives the stream, spawned on `spawner`.
fn start<T, S>(stream: BoxStream<T>, mut subscriber: BoxSubscriber<T>, spawner: &S)
where
    T: Send + 'static,
    S: Spawn + ?Sized,
{
    let control = Arc::new(Control {
        demand: Demand::new(),
        flags: AtomicUsize::new(0),
        waker: Mutex::new(None),
    });
    let handle: rs_api::SubscriptionRef = control.clone();
    if panics::guard("on_subscribe", || subscriber.on_subscribe(handle)).is_err() {
        control.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        panics::drop_guarded(subscriber);
        panics::drop_guarded(stream);
        return;
    }
    let task = Drive {
        control,
        stream: Some(stream),
        subscriber: Some(subscriber),
        emitted: 0,
        limit: 0,
        ahead: None,
    };
    spawn(spawner, task);
}

/// The executor seam: every task of the compat module is spawned here. A refused task is
/// dropped, and each task's `Drop` tells its subscriber.
pub(crate) fn spawn<S, F>(spawner: &S, task: F)
where
    S: Spawn + ?Sized,
    F: Future<Output = ()> + Send + 'static,
{
    // The refused task has been dropped by now (and told its subscriber); nothing else to do.
    let _refused = spawner.spawn_obj(FutureObj::new(Box::new(task)));
}

/// [`Control::flags`]: cancelled, or the stream is over.
const CANCELLED: usize = 1;
/// [`Control::flags`]: `request(0)` (rule 3.9).
const BAD_REQUEST: usize = 2;
/// [`Control::flags`]: the task is parked; `request` and `cancel` wake it.
const PARKED: usize = 4;

/// The subscription: what `request` and `cancel` share with the task.
struct Control {
    demand: Demand,
    flags: AtomicUsize,
    /// The parked task's waker; locked only to park and to wake.
    waker: Mutex<Option<Waker>>,
}

impl Control {
    /// Wakes the task if it is parked. The read-modify-write of `flags` orders this call after
    /// the caller's change (demand or flag) for a task that parks concurrently: either the
    /// task's `fetch_or(PARKED)` comes first and is seen here, or it comes after and the task
    /// sees the change.
    fn notify(&self) {
        if self.flags.fetch_and(!PARKED, Ordering::AcqRel) & PARKED != 0 {
            let waker = self.waker.lock().clone();
            if let Some(w) = waker {
                w.wake();
            }
        }
    }

    /// Parks the task: registers `waker` and sets `PARKED`, unless a flag was set meanwhile or
    /// (when `limit` is given) the demand moved past it. `true`: parked.
    fn park(&self, waker: &Waker, limit: Option<u64>) -> bool {
        {
            let mut slot = self.waker.lock();
            match &*slot {
                Some(w) if w.will_wake(waker) => {}
                _ => *slot = Some(waker.clone()),
            }
        }
        let prev = self.flags.fetch_or(PARKED, Ordering::AcqRel);
        let changed = prev & (CANCELLED | BAD_REQUEST) != 0
            || limit.is_some_and(|l| self.demand.total() != l);
        if changed {
            self.flags.fetch_and(!PARKED, Ordering::AcqRel);
        }
        !changed
    }
}

impl Subscription for Control {
    fn request(&self, n: u64) {
        if self.flags.load(Ordering::Acquire) & CANCELLED != 0 {
            return; // 3.6
        }
        if self.demand.request(n).is_err() {
            self.flags.fetch_or(BAD_REQUEST, Ordering::AcqRel);
        }
        self.notify();
    }

    fn cancel(&self) {
        if self.flags.fetch_or(CANCELLED, Ordering::AcqRel) & CANCELLED != 0 {
            return; // 3.7
        }
        self.notify();
    }
}

/// The task that polls the stream and signals the subscriber.
struct Drive<T> {
    control: Arc<Control>,
    /// Dropped at the end, on cancel, and on failure (3.13).
    stream: Option<BoxStream<T>>,
    /// Dropped likewise.
    subscriber: Option<BoxSubscriber<T>>,
    /// Elements emitted (the task's local count; never an atomic per element).
    emitted: u64,
    /// The demand total last read; re-read only when `emitted` reaches it.
    limit: u64,
    /// The element the look-ahead poll found, held until there is demand for it (at most one).
    ahead: Option<T>,
}

impl<T> Drive<T> {
    /// Drops the stream and the subscriber (3.13); later `request`/`cancel` are no-ops.
    fn finish(&mut self) {
        self.control.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        panics::drop_guarded(self.stream.take());
        panics::drop_guarded(self.ahead.take());
        panics::drop_guarded(self.subscriber.take());
    }

    /// Delivers the terminal signal (`on_error` if `error` is set), then finishes.
    fn terminate(&mut self, error: Option<Error>) {
        self.control.flags.fetch_or(CANCELLED, Ordering::AcqRel);
        panics::drop_guarded(self.stream.take());
        panics::drop_guarded(self.ahead.take());
        if let Some(mut s) = self.subscriber.take() {
            let (signal, outcome) = match error {
                Some(e) => ("on_error", catch_unwind(AssertUnwindSafe(|| s.on_error(e)))),
                None => (
                    "on_complete",
                    catch_unwind(AssertUnwindSafe(|| s.on_complete())),
                ),
            };
            if let Err(payload) = outcome {
                panics::subscriber_panicked(signal, payload);
            }
            panics::drop_guarded(s);
        }
    }
}

// Nothing in `Drive` is pinned structurally (the stream is boxed and pinned on its own).
impl<T> Unpin for Drive<T> {}

impl<T> Future for Drive<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let mut budget = BUDGET;
        loop {
            let flags = this.control.flags.load(Ordering::Acquire);
            if flags & CANCELLED != 0 {
                this.finish();
                return Poll::Ready(());
            }
            if flags & BAD_REQUEST != 0 {
                this.terminate(Some(SpecViolation::NonPositiveRequest.into()));
                return Poll::Ready(());
            }
            if this.emitted == this.limit {
                this.limit = this.control.demand.total();
            }
            let demand = this.emitted != this.limit || this.limit == UNBOUNDED;
            if !demand && this.ahead.is_some() {
                // Demand used up and the next element held: wait for a request.
                if this.control.park(cx.waker(), Some(this.limit)) {
                    return Poll::Pending;
                }
                continue;
            }
            if demand {
                if let Some(item) = this.ahead.take() {
                    if !this.emit(item) {
                        return Poll::Ready(());
                    }
                    continue;
                }
            }
            if budget == 0 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            budget -= 1;
            let Some(stream) = this.stream.as_mut() else {
                return Poll::Ready(());
            };
            // With demand, the next element; without, the look-ahead poll that learns the end
            // (or holds the one element it finds until the next request).
            match catch_unwind(AssertUnwindSafe(|| stream.as_mut().poll_next(cx))) {
                Ok(Poll::Ready(Some(Ok(item)))) => {
                    if !demand {
                        this.ahead = Some(item);
                    } else if !this.emit(item) {
                        return Poll::Ready(());
                    }
                }
                Ok(Poll::Ready(Some(Err(e)))) => {
                    this.terminate(Some(e));
                    return Poll::Ready(());
                }
                Ok(Poll::Ready(None)) => {
                    this.terminate(None);
                    return Poll::Ready(());
                }
                Ok(Poll::Pending) => {
                    // The stream wakes us when it has more; `request` and `cancel` must too.
                    let limit = (!demand).then_some(this.limit);
                    if this.control.park(cx.waker(), limit) {
                        return Poll::Pending;
                    }
                }
                Err(payload) => {
                    let e = CompatError::StreamPanicked {
                        message: panics::panic_message(&*payload),
                    };
                    this.terminate(Some(e.into()));
                    return Poll::Ready(());
                }
            }
        }
    }
}

impl<T> Drive<T> {
    /// `on_next(item)` under the 2.13 guard; `false` if the subscriber panicked (it is then
    /// cancelled and dropped).
    #[inline]
    fn emit(&mut self, item: T) -> bool {
        let Some(subscriber) = self.subscriber.as_mut() else {
            return false;
        };
        self.emitted += 1;
        if panics::guard("on_next", || subscriber.on_next(item)).is_err() {
            self.finish(); // a panicking subscriber is a cancelled one
            return false;
        }
        true
    }
}

impl<T> Drop for Drive<T> {
    fn drop(&mut self) {
        if self.subscriber.is_some() && self.control.flags.load(Ordering::Acquire) & CANCELLED == 0
        {
            // The executor dropped the task before the end.
            self.terminate(Some(CompatError::TaskDropped.into()));
        }
    }
}
