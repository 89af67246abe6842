//! Scenarios `to_stream` and `from_stream`: the async-Rust bridges of `rs_impl::compat`.
//!
//! * `to_stream` — publisher → `Stream` → sum. Ours: `PublisherStream` (its bounded SPSC ring)
//!   fed by a cold `range` on the consuming thread, by a publisher whose task runs on a pool
//!   thread (`from_stream` on a futures `ThreadPool`), and by a producer thread through a
//!   `push` source with capacity 0. Peers: the same `range` publisher
//!   bridged into a bounded futures mpsc and a bounded tokio mpsc channel (a `for_each`
//!   subscriber on a producer thread that blocks in `send`), read as a `Stream`. Parameter k:
//!   our prefetch / the peers' channel capacity.
//! * `from_stream` — `Stream` → publisher → `for_each`. Ours: `from_stream` on a futures
//!   `LocalPool` (the task and the subscriber on the calling thread), subscribed by
//!   `subscriber::for_each` with prefetch k. Peer: `StreamExt::for_each` under `block_on`,
//!   which has no demand protocol at all (the ceiling). Parameter k: our prefetch.

use std::sync::Arc;
use std::thread;

use futures::executor::{block_on, LocalPool};
use futures::{SinkExt, StreamExt};
use rs_api::Publisher;
use rs_impl::compat::{from_stream, PublisherCompat};
use rs_impl::source::{push, range};
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario, UNBOUNDED};
use crate::scenarios::source::strategy;

fn capacity(k: u64) -> usize {
    usize::try_from(k.clamp(1, 1 << 20)).expect("capacity fits usize")
}

/// Sums a stream of `Result<u64, _>` on the calling thread under `block_on`.
fn sum_stream<S, E>(stream: S) -> u64
where
    S: futures::Stream<Item = Result<u64, E>>,
    E: std::fmt::Debug,
{
    let sum = Checksum::default();
    block_on(stream.for_each(|x| {
        sum.add(x.expect("no error"));
        futures::future::ready(())
    }));
    sum.get()
}

/// Ours, one thread: `range(0..n).to_stream(k)` summed under `block_on`. The stream's requests
/// drive the cold range on the consuming thread, so no element crosses a thread.
pub fn rs_impl_to_stream_local(k: u64, n: u64) -> u64 {
    sum_stream(range(0..n).to_stream(capacity(k)))
}

/// Ours, across threads: a producer thread `blocking_send`s `0..n` into a `push` source of
/// capacity 0 (it waits for demand, and delivers to `on_next` on its own thread), read as
/// `to_stream(k)` on the calling thread: every element crosses the ring between threads.
pub fn rs_impl_to_stream_threads(k: u64, n: u64) -> u64 {
    let (producer, publisher) = push::<u64>(0);
    let stream = publisher.to_stream(capacity(k));
    let feeder = thread::spawn(move || {
        for x in 0..n {
            producer.blocking_send(x).expect("consumer alive");
        }
        producer.complete();
    });
    let sum = sum_stream(stream);
    feeder.join().expect("producer thread");
    sum
}

/// Ours, across threads: `from_stream(stream::iter(0..n))` whose island runs on a
/// one-thread futures `ThreadPool` (created inside the run, like the peers' producer thread)
/// and signals `on_next` there, read as `to_stream(k)` on the calling thread: every element
/// crosses threads through our ring, with no lock per element.
pub fn rs_impl_to_stream_pool(k: u64, n: u64) -> u64 {
    let pool = futures::executor::ThreadPool::builder()
        .pool_size(1)
        .create()
        .expect("thread pool");
    let publisher = rs_impl::compat::from_stream(
        futures::stream::iter(0..n),
        &rs_impl::island::Runtime::from_spawn(pool),
    );
    sum_stream(publisher.to_stream(capacity(k)))
}

/// Peer: `range(0..n)` into a `for_each` subscriber on a producer thread whose closure blocks
/// in `send` on `futures::channel::mpsc::channel(k - 1)` (k slots with the sender's own); the
/// receiver is the stream, summed under `block_on` on the calling thread.
pub fn futures_mpsc_bridge(k: u64, n: u64) -> u64 {
    let (tx, rx) = futures::channel::mpsc::channel::<u64>(capacity(k) - 1);
    let feeder = thread::spawn(move || {
        let mut tx = tx;
        let (subscriber, done) = for_each(RequestStrategy::Unbounded, move |x: u64| {
            block_on(tx.send(x)).expect("consumer alive");
        });
        range(0..n).subscribe(Box::new(subscriber));
        done.wait().expect("range completes");
    });
    let sum = sum_stream(rx.map(Ok::<u64, ()>));
    feeder.join().expect("producer thread");
    sum
}

/// Peer: as [`futures_mpsc_bridge`] with `tokio::sync::mpsc::channel(k)` (`blocking_send` on
/// the producer thread; `poll_recv` as a `Stream` on the calling thread, no runtime needed).
pub fn tokio_mpsc_bridge(k: u64, n: u64) -> u64 {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(capacity(k));
    let feeder = thread::spawn(move || {
        let (subscriber, done) = for_each(RequestStrategy::Unbounded, move |x: u64| {
            tx.blocking_send(x).expect("consumer alive");
        });
        range(0..n).subscribe(Box::new(subscriber));
        done.wait().expect("range completes");
    });
    let stream = futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).map(Ok::<u64, ()>);
    let sum = sum_stream(stream);
    feeder.join().expect("producer thread");
    sum
}

/// The `to_stream` scenario.
#[must_use]
pub fn to_stream_scenario() -> Scenario {
    Scenario {
        id: "to_stream",
        title: "Publisher → Stream → sum (our bounded bridge against channel bridges)",
        param_name: "prefetch / channel capacity",
        params: [16, 256, 1024].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl to_stream, cold range (one thread)",
                ours: true,
                per_param: true,
                what: "range(0..n).to_stream(k) summed under block_on: the stream's requests \
                       drive the range on the consuming thread",
                run: rs_impl_to_stream_local,
                lossy: false,
            },
            Implementation {
                name: "rs-impl to_stream, publisher on a pool thread",
                ours: true,
                per_param: true,
                what: "from_stream(stream::iter(0..n)), its island on a 1-thread futures \
                       ThreadPool, read as to_stream(k) on the calling thread: every element \
                       crosses threads through our ring",
                run: rs_impl_to_stream_pool,
                lossy: false,
            },
            Implementation {
                name: "rs-impl to_stream, producer thread",
                ours: true,
                per_param: true,
                what: "a producer thread sends 0..n into push(0), read as to_stream(k) on the \
                       calling thread: every element crosses threads through our ring",
                run: rs_impl_to_stream_threads,
                lossy: false,
            },
            Implementation {
                name: "futures mpsc bridge",
                ours: false,
                per_param: true,
                what: "range → for_each on a producer thread, block_on(send) into \
                       futures::channel::mpsc::channel(k-1); the receiver summed as a Stream",
                run: futures_mpsc_bridge,
                lossy: false,
            },
            Implementation {
                name: "tokio mpsc bridge",
                ours: false,
                per_param: true,
                what: "range → for_each on a producer thread, blocking_send into \
                       tokio::sync::mpsc::channel(k); poll_recv summed as a Stream",
                run: tokio_mpsc_bridge,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}

/// Ours: `from_stream(stream::iter(0..n))` on a `LocalPool`, into `for_each` with the request
/// strategy of `k` (prefetch k, or unbounded); the island and the subscriber run on the
/// calling thread.
pub fn rs_impl_from_stream(k: u64, n: u64) -> u64 {
    // The island goes to a `LocalPool` on this thread (not `Send`: through a channel).
    let mut pool = LocalPool::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let runtime = rs_impl::island::Runtime::from_spawner(move |task| {
        let _ = tx.lock().expect("the queue").send(task);
    });
    let publisher = from_stream(futures::stream::iter(0..n), &runtime);
    let sum = Arc::new(Checksum::default());
    let acc = Arc::clone(&sum);
    let (subscriber, done) = for_each(strategy(k), move |x: u64| acc.add(x));
    publisher.subscribe(Box::new(subscriber));
    for task in rx.try_iter() {
        futures::task::SpawnExt::spawn(&pool.spawner(), task).expect("the local pool runs");
    }
    pool.run();
    done.wait().expect("the stream completes");
    sum.get()
}

/// Peer: `block_on(stream::iter(0..n).for_each(..))`: no demand protocol, the ceiling.
pub fn stream_for_each(_k: u64, n: u64) -> u64 {
    crate::scenarios::source::futures_stream_iter(0, n)
}

/// The `from_stream` scenario.
#[must_use]
pub fn from_stream_scenario() -> Scenario {
    Scenario {
        id: "from_stream",
        title: "Stream → Publisher → for_each, on one thread",
        param_name: "our subscriber's prefetch",
        params: [16, 256, UNBOUNDED].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl from_stream → for_each",
                ours: true,
                per_param: true,
                what: "from_stream(stream::iter(0..n)) on a futures LocalPool into \
                       subscriber::for_each(Prefetch(k) or Unbounded)",
                run: rs_impl_from_stream,
                lossy: false,
            },
            Implementation {
                name: "StreamExt::for_each",
                ours: false,
                per_param: false,
                what: "block_on(stream::iter(0..n).for_each(..)): no demand protocol (ceiling)",
                run: stream_for_each,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: false,
        deliveries: None,
        ops: None,
    }
}
