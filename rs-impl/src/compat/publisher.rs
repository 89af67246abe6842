//! `Stream` → Publisher: [`StreamPublisher`] and [`StreamFnPublisher`], each subscription an
//! island (a [`StreamSource`](crate::flow::StreamSource) feeding the island's output side) on
//! a [`Runtime`].

use std::fmt;

use futures::stream::Stream;
use rs_api::{BoxSubscriber, Publisher, SpecViolation};

use crate::flow::{BoxStream, Flow, FromStream, NotBuilt};
use crate::island::Runtime;
use crate::loom::sync::Mutex;

/// A `Stream` published as a Reactive Streams publisher (see [`from_stream`]).
#[must_use = "a publisher does nothing until it is subscribed to"]
pub struct StreamPublisher<T> {
    /// The stream, until the first subscriber takes it.
    stream: Mutex<Option<BoxStream<T>>>,
    runtime: Runtime,
}

impl<T> fmt::Debug for StreamPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamPublisher")
            .field("subscribed", &self.stream.lock().is_none())
            .finish_non_exhaustive()
    }
}

/// Publishes `stream`, polling it on an island run on `runtime`.
///
/// # Contract
///
/// * **Unicast:** a stream can be read once. The first subscriber gets it; later ones are
///   refused (`on_subscribe`, then `on_error(`[`SpecViolation::Rejected`]`)`, rule 1.9).
///   [`from_stream_fn`] makes a fresh stream per subscriber.
/// * **Demand-driven:** the island polls the stream for each element the subscriber has
///   requested. After each element (and at the start) it polls **once more, ahead**, as the
///   cold sources do, so that a finished (or failed) stream ends without waiting for a
///   request that would only find the end (rules 1.4, 1.5, 1.6, 1.9); an element that
///   look-ahead finds is held until the next request. **The bound: at most one element
///   held**, nothing else buffered. The cost of the look-ahead: a live stream (a channel's
///   receiver, a sensor) gives up that one element before the subscriber asked for it; if
///   the subscriber then cancels instead of requesting, it is dropped with the stream. (The
///   look-ahead is what the TCK requires: without it a failed stream cannot report its error
///   to a subscriber that has not requested, and the 1.4, 1.6 and 1.9 checks fail.)
/// * **Waiting:** a stream that is not ready wakes the island through its waker; `request`
///   and `cancel` only post to the island and return at once (rules 3.3, 3.4, 3.5), from any
///   thread.
/// * **Which thread runs the callbacks:** `on_subscribe` runs in `subscribe`, on the caller's
///   thread; every other signal runs on the island, one at a time (1.3).
/// * **End:** the stream's end is `on_complete`; the stream is dropped right after (and
///   after a failure or a cancel: rule 3.13, promptly, even while it is pending). A panic in
///   the stream is `on_error(`[`CompatError::StreamPanicked`](super::CompatError::StreamPanicked)`)`;
///   a panicking subscriber is cancelled (2.13); `request(0)` is the 3.9 error.
/// * **The executor:** the island yields to it after
///   [`DEFAULT_BUDGET`](crate::island::DEFAULT_BUDGET) events per poll. If the executor
///   drops the island before the end, the subscriber is dropped without a terminal signal
///   (see [`Runtime`]).
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let publisher = rs_impl::compat::from_stream(futures::stream::iter(0..5u32), &runtime);
/// let (s, result) = collect(RequestStrategy::Prefetch(2));
/// publisher.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap(), vec![0, 1, 2, 3, 4]);
/// ```
pub fn from_stream<T, St>(stream: St, runtime: &Runtime) -> StreamPublisher<T>
where
    St: Stream<Item = T> + Send + 'static,
    T: Send + 'static,
{
    use futures::StreamExt;
    StreamPublisher {
        stream: Mutex::new(Some(Box::pin(stream.map(Ok)))),
        runtime: runtime.clone(),
    }
}

/// Publishes a stream of `Result`s: `Ok` elements as `on_next`, the first `Err` as
/// `on_error` (the stream is dropped after it). Any error type goes (an [`rs_api::Error`]
/// passes through as it is; any other is wrapped, so `Error::is` finds it). Otherwise as
/// [`from_stream`].
///
/// # Examples
///
/// ```
/// use rs_api::{Error, Publisher};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let items = futures::stream::iter(vec![Ok(1), Err(Error::msg("bad reading")), Ok(3)]);
/// let publisher = rs_impl::compat::from_try_stream(items, &runtime);
/// let (s, result) = collect::<i32>(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap_err().to_string(), "bad reading");
/// ```
pub fn from_try_stream<T, Er, St>(stream: St, runtime: &Runtime) -> StreamPublisher<T>
where
    St: Stream<Item = Result<T, Er>> + Send + 'static,
    Er: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
{
    use futures::TryStreamExt;
    StreamPublisher {
        stream: Mutex::new(Some(Box::pin(stream.map_err(super::into_error)))),
        runtime: runtime.clone(),
    }
}

impl<T: Send + 'static> Publisher<T> for StreamPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        let stream = self.stream.lock().take();
        let Some(stream) = stream else {
            let refused = SpecViolation::Rejected {
                reason: "a stream can be read once: this publisher has its subscriber".into(),
            };
            crate::source::failed::<T>(refused.into()).subscribe(subscriber);
            return;
        };
        let once = Mutex::new(Some(stream));
        let flow = Flow::from_boxed_stream(move || {
            once.lock()
                .take()
                .expect("a one-stream flow is materialised once")
        });
        run(&flow, subscriber, &self.runtime);
    }
}

/// Materialises `flow` for `subscriber` (`on_subscribe` before this returns) and spawns the
/// island on `runtime`.
fn run<T: Send + 'static>(
    flow: &Flow<FromStream<T>>,
    subscriber: BoxSubscriber<T>,
    runtime: &Runtime,
) {
    match flow.into_island(subscriber) {
        Ok(mut island) => {
            island.start();
            runtime.spawn(island);
        }
        Err(NotBuilt { subscriber, error }) => {
            crate::source::failed::<T>(error).subscribe(subscriber);
        }
    }
}

/// A publisher of a fresh stream per subscriber (see [`from_stream_fn`]).
#[must_use = "a publisher does nothing until it is subscribed to"]
pub struct StreamFnPublisher<T> {
    flow: Flow<FromStream<T>>,
    runtime: Runtime,
}

impl<T> fmt::Debug for StreamFnPublisher<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamFnPublisher").finish_non_exhaustive()
    }
}

/// Publishes a **fresh stream per subscriber**: `make` is called in each `subscribe`, and its
/// stream is driven for that subscriber alone, on an island of its own on `runtime`.
///
/// The cold counterpart of [`from_stream`] (whose contract each subscription has, except
/// that it is not unicast): any number of subscribers, each from the beginning of its own
/// stream, each with its own demand. A panic in `make` does not escape `subscribe`: that
/// subscriber gets `on_subscribe`, then `on_error` saying so (rule 1.9). (With the islands
/// [`Flow`] the same stream source takes operators: `Flow::from_stream(make).map(..)`.)
///
/// # Examples
///
/// ```
/// use rs_api::Publisher;
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let publisher =
///     rs_impl::compat::from_stream_fn(|| futures::stream::iter(1..=3u32), &runtime);
/// let (a, ra) = collect(RequestStrategy::Prefetch(2));
/// let (b, rb) = collect(RequestStrategy::OneByOne);
/// publisher.subscribe(Box::new(a));
/// publisher.subscribe(Box::new(b));
/// assert_eq!(ra.wait().unwrap(), vec![1, 2, 3]);
/// assert_eq!(rb.wait().unwrap(), vec![1, 2, 3]);
/// ```
pub fn from_stream_fn<T, St, F>(make: F, runtime: &Runtime) -> StreamFnPublisher<T>
where
    F: Fn() -> St + Send + Sync + 'static,
    St: Stream<Item = T> + Send + 'static,
    T: Send + 'static,
{
    StreamFnPublisher {
        flow: Flow::from_stream(make),
        runtime: runtime.clone(),
    }
}

/// [`from_stream_fn`] for streams of `Result`s: each subscriber's stream as in
/// [`from_try_stream`].
///
/// # Examples
///
/// ```
/// use rs_api::{Error, Publisher};
/// use rs_impl::subscriber::{collect, RequestStrategy};
///
/// let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
/// let publisher = rs_impl::compat::from_try_stream_fn(
///     || futures::stream::iter(vec![Ok(1), Err(Error::msg("sensor gone"))]),
///     &runtime,
/// );
/// let (s, result) = collect::<u8>(RequestStrategy::Unbounded);
/// publisher.subscribe(Box::new(s));
/// assert_eq!(result.wait().unwrap_err().to_string(), "sensor gone");
/// ```
pub fn from_try_stream_fn<T, Er, St, F>(make: F, runtime: &Runtime) -> StreamFnPublisher<T>
where
    F: Fn() -> St + Send + Sync + 'static,
    St: Stream<Item = Result<T, Er>> + Send + 'static,
    Er: std::error::Error + Send + Sync + 'static,
    T: Send + 'static,
{
    StreamFnPublisher {
        flow: Flow::from_try_stream(make),
        runtime: runtime.clone(),
    }
}

impl<T: Send + 'static> Publisher<T> for StreamFnPublisher<T> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        run(&self.flow, subscriber, &self.runtime);
    }
}
