//! Async Rust compatibility: publishers as `Stream`s and back, `Sink`s and async callbacks as
//! subscribers, publishers as blocking iterators.
//!
//! # Contract
//!
//! Every bridge is **bounded and demand-driven in both directions**: backpressure survives the
//! crossing, and no adapter has an unbounded buffer.
//!
//! | adapter | direction | demand | bound (what bounds memory) | threads |
//! |---|---|---|---|---|
//! | [`to_stream`], [`PublisherStream`] | Publisher → `Stream<Item = Result<T, Error>>` | `prefetch` when first polled, then `prefetch / 2` each time that many were consumed | one ring of `prefetch` slots (rounded up to a power of two), allocated once | the publisher signals on its threads; the stream is polled on any executor and woken only when parked |
//! | [`from_stream`], [`from_try_stream`] (unicast); [`from_stream_fn`], [`from_try_stream_fn`] (a fresh stream per subscriber) | `Stream` → Publisher | the stream is polled once per requested element, plus one look-ahead poll after each (so that a finished or failed stream ends without a request) | at most one element held (the look-ahead's), nothing else buffered | an island per subscription, on the islands runtime or any `Spawn` ([`IslandSpawner`]), signals the subscriber |
//! | [`sink_subscriber`] | Publisher → `Sink` | 1 per `poll_ready` that says the sink has room | one slot | the task drives the sink |
//! | [`from_async`] with [`AsyncSubscriber`] | Publisher → async callbacks | `prefetch`, replenished as `on_next` calls finish | `prefetch` slots | the task runs the callbacks, one at a time |
//! | [`blocking_iter`] | Publisher → `Iterator` | as [`to_stream`] | as [`to_stream`] | the iterating thread blocks (parks) |
//!
//! Common to all of them:
//!
//! * **Cancel:** dropping the stream or the iterator, or cancelling a [`Completion`], cancels
//!   the subscription upstream (and the publisher then drops its subscriber: rule 3.13); on
//!   the other side, a subscriber's `cancel` makes the task drop the stream at once, even while
//!   it is pending.
//! * **Errors cross both ways:** `on_error` becomes one `Err` item (then the end); an `Err`
//!   item becomes `on_error` (then the stream is dropped). The bridges' own failures are typed:
//!   [`CompatError`].
//! * **A publisher that breaks the rules** does not grow anything: more elements than
//!   requested (1.1) end the stream with [`CompatError::Overflow`] and cancel upstream.
//! * **Serial calls (2.7):** the calls a stream makes on its subscription all come from
//!   `poll_next` and `Drop`, which take `&mut self`.
//! * **Panics:** a panicking stream becomes `on_error`; a panicking subscriber is cancelled
//!   (2.13); a panicking async callback cancels upstream and resolves the completion to
//!   [`CompatError::SubscriberPanicked`]. No panic of user code escapes into a caller.
//!
//! # The executor
//!
//! **Stream → Publisher runs on the islands runtime:** each subscription of [`from_stream`]
//! (and its siblings) is one [island](crate::island): a
//! [`StreamSource`](crate::island::stages::StreamSource) stage feeding the island's output
//! side, which handles demand, cancel, `request(0)` and panics, and yields after a budget of
//! events. They take an [`IslandSpawner`]: the islands [`Runtime`](crate::island::Runtime)
//! (futures' thread pool sized to the machine: the default choice), or **any
//! [`futures::task::Spawn`]** — futures' `ThreadPool` or `LocalPool` spawner directly, tokio
//! through a three-line adapter. (The same stream source takes the island's fused operators:
//! `island::Flow::from_stream(make).map(..)`.)
//!
//! The consumer-side adapters ([`sink_subscriber`], [`from_async`]) run a task of their own
//! and take any `Spawn`:
//!
//! ```
//! use futures::future::FutureObj;
//! use futures::task::{Spawn, SpawnError};
//!
//! /// Spawns onto a tokio runtime.
//! struct Tokio(tokio::runtime::Handle);
//!
//! impl Spawn for Tokio {
//!     fn spawn_obj(&self, future: FutureObj<'static, ()>) -> Result<(), SpawnError> {
//!         self.0.spawn(future);
//!         Ok(())
//!     }
//! }
//! # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! # let _ = Tokio(rt.handle().clone());
//! ```
//!
//! One island or task is spawned per subscription (one allocation, never per element).
//! [`ThreadPerTask`] gives each a thread of its own, built on the [facade](crate::loom), so
//! that the bridges can be model-checked with loom.
//!
//! # Examples
//!
//! A round trip: publisher → stream → `StreamExt` operators → publisher.
//!
//! ```
//! use futures::executor::LocalPool;
//! use futures::StreamExt;
//! use rs_api::Publisher;
//! use rs_impl::compat::{from_try_stream, PublisherCompat};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let mut pool = LocalPool::new();
//! let evens = rs_impl::source::range(0u32..10)
//!     .to_stream(4)
//!     .filter(|x| futures::future::ready(x.as_ref().map_or(true, |x| x % 2 == 0)));
//! let publisher = from_try_stream(evens, pool.spawner());
//! let (s, result) = collect(RequestStrategy::Prefetch(2));
//! publisher.subscribe(Box::new(s));
//! pool.run();
//! assert_eq!(result.wait().unwrap(), vec![0, 2, 4, 6, 8]);
//! ```

mod async_subscriber;
mod iter;
mod publisher;
mod sink;
mod stream;
mod task;
mod thread;

use rs_api::Publisher;

pub(crate) use crate::handoff::into_error;
pub use crate::handoff::CompatError;
pub use async_subscriber::{from_async, AsyncSubscriber};
pub use iter::{blocking_iter, BlockingIter};
pub use publisher::{
    from_stream, from_stream_fn, from_try_stream, from_try_stream_fn, IslandSpawner,
    StreamFnPublisher, StreamPublisher,
};
pub use sink::sink_subscriber;
pub use stream::{stream_subscriber, to_stream, PublisherStream, StreamSubscriber};
pub use task::Completion;
pub use thread::ThreadPerTask;

/// Compatibility methods for every publisher.
///
/// # Examples
///
/// ```
/// use rs_impl::compat::PublisherCompat;
/// let squares: Vec<u64> = rs_impl::source::range(1u64..4)
///     .blocking_iter(2)
///     .map(|x| x.unwrap().pow(2))
///     .collect();
/// assert_eq!(squares, vec![1, 4, 9]);
/// ```
pub trait PublisherCompat<T>: Publisher<T> {
    /// Subscribes and reads the publisher as a bounded `Stream` (see [`to_stream`]).
    fn to_stream(&self, prefetch: usize) -> PublisherStream<T>
    where
        T: Send + 'static,
    {
        to_stream(self, prefetch)
    }

    /// Subscribes and reads the publisher as a blocking `Iterator` (see [`blocking_iter`]).
    fn blocking_iter(&self, prefetch: usize) -> BlockingIter<T>
    where
        T: Send + 'static,
    {
        blocking_iter(self, prefetch)
    }
}

impl<T, P: Publisher<T> + ?Sized> PublisherCompat<T> for P {}
