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
//! | [`from_stream`], [`from_try_stream`] (unicast); [`from_stream_fn`], [`from_try_stream_fn`] (a fresh stream per subscriber) | `Stream` → Publisher | the stream is polled once per requested element, plus one look-ahead poll after each (so that a finished or failed stream ends without a request) | at most one element held (the look-ahead's), nothing else buffered | an island per subscription, on a [`Runtime`](crate::island::Runtime), signals the subscriber |
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
//! # What an element costs across threads
//!
//! `to_stream` with the publisher on another thread (issue 24, measured at prefetch 256 and
//! 1024 against a futures and a tokio mpsc channel in their blocking-send modes). Per
//! element, the stream's subscriber publishes into the hand-off ring with one
//! read-modify-write on the word the consumer parks on, and wakes the consumer's task only
//! when it had parked (each park is one read-modify-write on the consumer's side). The
//! channels' own per-element cost is higher (a lock or a node per message, and a wake-up
//! per message once the channel is full: 50–440 futex calls per thousand elements at 256,
//! against 10–16 for ours). What is left on ours:
//!
//! * **The word's cache line.** A consumer faster than its producer used to take each element
//!   the moment it appeared: it read the word once per element while the producer wrote it
//!   once per element, and the line crossed between the cores twice per element. The
//!   consumer's bounded spin before it parks now waits for a run (32 elements, or as many as
//!   are on their way: [`PublisherStream`]'s "Waking"). Measured (`perf stat`, 3 × 10^6
//!   elements per run, medians of runs alternating with the previous build under the bench
//!   lock, 2026-12-03, load 3–4 on the 2-core machine): producer thread at 1024 from
//!   19.6 to 41.2 M el/s and from 99 to 49 ns of CPU per element; at 256 from 10.5 (6.5–13.9)
//!   to 12.1 (11.8–12.2) M el/s, 111 to 88 ns; pool thread at 256 from 6.6 to 8.4 M el/s
//!   (140 to 111 ns), at 1024 from 10.0 to 11.0 (105 to 90 ns). Above all the slow runs go:
//!   in one quick report each, back to back (`bench-report --only to_stream,boundary
//!   --quick`, 12:17Z), the pool thread at 256 went from 5.77 (2.99–8.25) to 8.24
//!   (7.15–10.7) M el/s and the producer thread from 10.3 (2.28–15.8) to 14.2 (11.8–17.1).
//! * **Sleeps, at a small capacity.** The stream requests its prefetch and then half of it
//!   each time half was consumed, so at 256 the producer may run at most 128–256 elements
//!   ahead. When the two threads do not run at the same time (more runnable threads than
//!   cores), each side then sleeps about once per 256 elements (counted with
//!   `perf record -e syscalls:sys_enter_futex`, per thread: producer 1.6–4.5, consumer
//!   1.4–3.9 sleeps per thousand elements at 256; 0.6 and 1.2–1.4 at 1024), and a sleep and
//!   its wake-up cost more than the 128 elements between them. That is the bound's own
//!   price: no request policy moves it (replenishing every quarter or eighth of the prefetch
//!   was measured: the same sleeps, within the noise), and a spin only pays when the other
//!   thread is running. The push source's blocked sender watches its permits for a moment
//!   before it sleeps (see [`crate::source::push`]). Timed figures at 256 swing two- to
//!   fourfold between runs on the shared machine; the counts above are steadier.
//!
//! Publishing a run at once needs the producer to say where its run ends; an island's output
//! side does (it flushes per run of the island), a subscriber fed through `on_next` cannot
//! tell (see the fanout's module docs for the experiment).
//!
//! # The executor
//!
//! Every bridge that needs a task takes the crate's one executor parameter, a
//! [`Runtime`](crate::island::Runtime): futures' thread pool (the default), tokio
//! (`Runtime::tokio`, cargo feature `tokio`), any `futures::task::Spawn`
//! (`Runtime::from_spawn`), or a thread per task on the loom facade
//! (`Runtime::thread_per_task`, so the bridges can be model-checked).
//!
//! **Stream → Publisher runs on islands:** each subscription of [`from_stream`] (and its
//! siblings) is one [island](crate::island): a [`StreamSource`](crate::flow::StreamSource)
//! stage feeding the island's output side, which handles demand, cancel, `request(0)` and
//! panics, and yields after a budget of events. (The same stream source takes the flow's
//! fused operators: `Flow::from_stream(make).map(..)`.) The consumer-side adapters
//! ([`sink_subscriber`], [`from_async`]) run a task of their own. One island or task is
//! spawned per subscription (one allocation, never per element).
//!
//! # Examples
//!
//! A round trip: publisher → stream → `StreamExt` operators → publisher.
//!
//! ```
//! use futures::StreamExt;
//! use rs_api::Publisher;
//! use rs_impl::compat::{from_try_stream, PublisherCompat};
//! use rs_impl::subscriber::{collect, RequestStrategy};
//!
//! let runtime = rs_impl::island::Runtime::with_threads(1).unwrap();
//! let evens = rs_impl::source::range(0u32..10)
//!     .to_stream(4)
//!     .filter(|x| futures::future::ready(x.as_ref().map_or(true, |x| x % 2 == 0)));
//! let publisher = from_try_stream(evens, &runtime);
//! let (s, result) = collect(RequestStrategy::Prefetch(2));
//! publisher.subscribe(Box::new(s));
//! assert_eq!(result.wait().unwrap(), vec![0, 2, 4, 6, 8]);
//! ```

#[cfg(feature = "async-subscriber")]
mod async_subscriber;
mod iter;
mod publisher;
mod sink;
mod stream;
mod task;

use rs_api::Publisher;

pub(crate) use crate::handoff::into_error;
pub use crate::handoff::CompatError;
#[cfg(feature = "async-subscriber")]
pub use async_subscriber::{from_async, AsyncSubscriber};
pub use iter::{blocking_iter, BlockingIter};
pub use publisher::{
    from_stream, from_stream_fn, from_try_stream, from_try_stream_fn, StreamFnPublisher,
    StreamPublisher,
};
pub use sink::sink_subscriber;
pub use stream::{stream_subscriber, to_stream, PublisherStream, StreamSubscriber};
pub use task::Completion;

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
    ///
    /// # Panics
    ///
    /// If `prefetch` is 0.
    #[track_caller]
    fn to_stream(&self, prefetch: usize) -> PublisherStream<T>
    where
        T: Send + 'static,
    {
        to_stream(self, prefetch)
    }

    /// Subscribes and reads the publisher as a blocking `Iterator` (see [`blocking_iter`]).
    ///
    /// # Panics
    ///
    /// If `prefetch` is 0.
    #[track_caller]
    fn blocking_iter(&self, prefetch: usize) -> BlockingIter<T>
    where
        T: Send + 'static,
    {
        blocking_iter(self, prefetch)
    }
}

impl<T, P: Publisher<T> + ?Sized> PublisherCompat<T> for P {}
