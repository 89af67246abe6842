//! Scenario `boundary`: Pekko PR #3288's `AsyncBoundaryThroughputBenchmark` — `0..n` through K
//! identity stages, each followed by an asynchronous boundary, into a summing subscriber.
//!
//! Parameter K: the number of boundaries (0, 1, 3, 10). K = 0 is the fused baseline: the
//! source and the subscriber on one island (for the peers: one thread, no channel). Every
//! implementation crosses K thread (or task) hops, applies the identity once per hop, and adds
//! every element to the checksum at the end. Runtimes, threads and channels are created inside
//! the measured run (amortised over `n`), for ours and the peers alike.
//!
//! Elements in flight per hop are matched: our ring has [`RING`] slots (the default, 1024:
//! prefetch 1024, a batch flushed at 512 at the latest); the per-element channels have
//! capacity [`RING`]; the hand-batched chain moves `Vec`s of [`BATCH`] through
//! `bounded(QUEUED = 2)` channels (two batches queued, one being filled, one being drained per
//! hop: 1024 elements).
//!
//! | implementation | what |
//! |---|---|
//! | `rs-impl batched, default runtime` | ours: `Flow::from_iter(0..n)` + K × (`identity()`, `async_boundary()`), on `Runtime::new()` (futures' thread pool, one thread per core) |
//! | `rs-impl unbatched, default runtime` | the same with `BoundaryConfig::batching(false)`: every element flushed on its own, one wake-up each |
//! | `rs-impl batched, tokio` | ours on a 2-worker tokio multi-thread runtime (`Runtime::from_spawner`) |
//! | `rs-impl unbatched, tokio` | the same, batching off |
//! | `crossbeam per element` | peer: K + 1 threads joined by K `crossbeam_channel::bounded(1024)`, one `send` per element |
//! | `crossbeam Vec batches of 256` | peer, hand-batched: the same chain moving `Vec<u64>`s of 256 through `bounded(2)` (a new `Vec` per batch at the source, forwarded by the hops) |
//! | `tokio mpsc` | peer: K + 1 tasks joined by K `tokio::sync::mpsc::channel(1024)` on a 2-worker runtime |
//! | `futures mpsc` | peer: K + 1 tasks joined by K `futures::channel::mpsc::channel(1023)` on a 2-thread futures `ThreadPool` |

use std::sync::Arc;
use std::thread;

use futures::{SinkExt, StreamExt};
use rs_api::Publisher;
use rs_impl::boundary::BoundaryConfig;
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

/// Slots of our ring, and the capacity of the per-element channels.
pub const RING: usize = rs_impl::boundary::DEFAULT_BOUNDARY_SIZE;
/// Elements per `Vec` of the hand-batched chain.
pub const BATCH: usize = 256;
/// `Vec`s queued per hop of the hand-batched chain: with one being filled and one being
/// drained, `RING` elements in flight per hop, as in ours.
pub const QUEUED: usize = RING / BATCH - 2;

fn hops(k: u64) -> usize {
    usize::try_from(k).expect("a small number of hops")
}

/// Ours: K × (identity, boundary) on `runtime`, into a summing `for_each`.
fn ours(k: u64, n: u64, runtime: &Runtime, batching: bool) -> u64 {
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let config = BoundaryConfig::new().size(RING).batching(batching);
    let mut flow = Flow::from_iter(0..n).boxed();
    for _ in 0..k {
        flow = flow.identity().async_boundary_with(config).boxed();
    }
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    flow.into_publisher(runtime).subscribe(Box::new(s));
    done.wait().expect("the flow completes");
    sum.get()
}

fn default_runtime() -> Runtime {
    Runtime::new().expect("the island thread pool starts")
}

fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime")
}

/// Ours, batched, on the default runtime.
pub fn batched_default(k: u64, n: u64) -> u64 {
    ours(k, n, &default_runtime(), true)
}

/// Ours, batching off, on the default runtime.
pub fn unbatched_default(k: u64, n: u64) -> u64 {
    ours(k, n, &default_runtime(), false)
}

fn on_tokio(k: u64, n: u64, batching: bool) -> u64 {
    let rt = tokio_runtime();
    let handle = rt.handle().clone();
    let runtime = Runtime::from_spawner(move |island| {
        handle.spawn(island);
    });
    let sum = ours(k, n, &runtime, batching);
    drop(runtime);
    sum
}

/// Ours, batched, on tokio.
pub fn batched_tokio(k: u64, n: u64) -> u64 {
    on_tokio(k, n, true)
}

/// Ours, batching off, on tokio.
pub fn unbatched_tokio(k: u64, n: u64) -> u64 {
    on_tokio(k, n, false)
}

/// Ours, fed from the calling thread (issue 24): `source::push(0)`, one `blocking_send` per
/// element, read by `Flow::from_publisher_with(push, RING)` (the island's input side, a ring
/// of `RING`) + K × (identity, boundary) into a summing `for_each`, on the default runtime.
/// K = 0 is one hop already: the calling thread into the island.
pub fn push_default(k: u64, n: u64) -> u64 {
    let runtime = default_runtime();
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let (tx, p) = rs_impl::source::push::<u64>(0);
    let config = BoundaryConfig::new().size(RING);
    let mut flow = Flow::from_publisher_with(p, RING).boxed();
    for _ in 0..k {
        flow = flow.identity().async_boundary_with(config).boxed();
    }
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    flow.into_publisher(&runtime).subscribe(Box::new(s));
    for x in 0..n {
        tx.blocking_send(x).expect("the flow is alive");
    }
    tx.complete();
    done.wait().expect("the flow completes");
    sum.get()
}

/// The K = 0 baseline of the peers: no hop at all.
fn no_hop(n: u64) -> u64 {
    let sum = Checksum::default();
    for x in 0..n {
        sum.add(std::convert::identity(x));
    }
    sum.get()
}

/// A chain of K crossbeam `bounded(capacity)` hops moving messages `M`: `produce` sends from
/// a thread of its own, K − 1 threads `forward` each message to the next hop, and the calling
/// thread hands each message at the end to `consume`.
fn crossbeam_chain<M: Send + 'static>(
    k: u64,
    capacity: usize,
    produce: impl FnOnce(crossbeam_channel::Sender<M>) + Send + 'static,
    forward: fn(M) -> M,
    mut consume: impl FnMut(M),
) {
    let (tx, mut rx) = crossbeam_channel::bounded::<M>(capacity);
    let mut threads = vec![thread::spawn(move || produce(tx))];
    for _ in 1..hops(k) {
        let (tx, next) = crossbeam_channel::bounded::<M>(capacity);
        let from = std::mem::replace(&mut rx, next);
        threads.push(thread::spawn(move || {
            for m in from {
                tx.send(forward(m)).expect("the chain is alive");
            }
        }));
    }
    for m in rx {
        consume(m);
    }
    for t in threads {
        t.join().expect("a thread of the chain");
    }
}

/// Peer: K crossbeam `bounded(RING)` hops, one `send` per element.
pub fn crossbeam_per_element(k: u64, n: u64) -> u64 {
    if k == 0 {
        return no_hop(n);
    }
    let sum = Checksum::default();
    crossbeam_chain(
        k,
        RING,
        move |tx| {
            for x in 0..n {
                tx.send(x).expect("the chain is alive");
            }
        },
        std::convert::identity,
        |x| sum.add(x),
    );
    sum.get()
}

/// Peer: K crossbeam `bounded(QUEUED)` hops moving `Vec`s of `BATCH` (a new `Vec` per batch
/// at the source; each hop applies the identity in place and forwards it).
pub fn crossbeam_batched(k: u64, n: u64) -> u64 {
    if k == 0 {
        return no_hop(n);
    }
    let sum = Checksum::default();
    crossbeam_chain(
        k,
        QUEUED,
        move |tx| {
            let mut batch = Vec::with_capacity(BATCH);
            for x in 0..n {
                batch.push(x);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    tx.send(full).expect("the chain is alive");
                }
            }
            if !batch.is_empty() {
                tx.send(batch).expect("the chain is alive");
            }
        },
        |mut batch: Vec<u64>| {
            for x in &mut batch {
                *x = std::convert::identity(*x);
            }
            batch
        },
        |batch| {
            for x in batch {
                sum.add(x);
            }
        },
    );
    sum.get()
}

/// Peer: K tokio `mpsc::channel(RING)` hops between tasks on a 2-worker runtime.
pub fn tokio_mpsc(k: u64, n: u64) -> u64 {
    if k == 0 {
        return no_hop(n);
    }
    let rt = tokio_runtime();
    rt.block_on(async move {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(RING);
        let producer = tokio::spawn(async move {
            for x in 0..n {
                tx.send(x).await.expect("the chain is alive");
            }
        });
        let mut forwarders = Vec::new();
        for _ in 1..hops(k) {
            let (tx, next) = tokio::sync::mpsc::channel::<u64>(RING);
            let mut from = std::mem::replace(&mut rx, next);
            forwarders.push(tokio::spawn(async move {
                while let Some(x) = from.recv().await {
                    tx.send(std::convert::identity(x))
                        .await
                        .expect("the chain is alive");
                }
            }));
        }
        let consumer = tokio::spawn(async move {
            let sum = Checksum::default();
            while let Some(x) = rx.recv().await {
                sum.add(x);
            }
            sum.get()
        });
        producer.await.expect("producer");
        for f in forwarders {
            f.await.expect("forwarder");
        }
        consumer.await.expect("consumer")
    })
}

/// Peer: K futures `mpsc::channel(RING - 1)` hops (its capacity is the buffer plus one slot
/// per sender) between tasks on a 2-thread futures `ThreadPool`.
pub fn futures_mpsc(k: u64, n: u64) -> u64 {
    if k == 0 {
        return no_hop(n);
    }
    let pool = futures::executor::ThreadPool::builder()
        .pool_size(2)
        .create()
        .expect("thread pool");
    let (mut tx, mut rx) = futures::channel::mpsc::channel::<u64>(RING - 1);
    pool.spawn_ok(async move {
        let mut items = futures::stream::iter(0..n).map(Ok);
        tx.send_all(&mut items).await.expect("the chain is alive");
    });
    for _ in 1..hops(k) {
        let (mut tx, next) = futures::channel::mpsc::channel::<u64>(RING - 1);
        let from = std::mem::replace(&mut rx, next);
        pool.spawn_ok(async move {
            let mut items = from.map(|x| Ok(std::convert::identity(x)));
            tx.send_all(&mut items).await.expect("the chain is alive");
        });
    }
    let (done_tx, done_rx) = futures::channel::oneshot::channel();
    pool.spawn_ok(async move {
        let sum = Checksum::default();
        let mut rx = rx;
        while let Some(x) = rx.next().await {
            sum.add(x);
        }
        done_tx.send(sum.get()).ok();
    });
    futures::executor::block_on(done_rx).expect("the consumer finishes")
}

/// The `boundary` scenario.
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::boundary::scenario();
/// for imp in &s.implementations {
///     assert_eq!((imp.run)(3, 1000), (s.expected)(3, 1000), "{}", imp.name);
/// }
/// ```
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "boundary",
        title: "Pekko PR #3288's AsyncBoundaryThroughputBenchmark: K identity stages, each behind an async boundary",
        param_name: "async boundaries (hops)",
        params: [0, 1, 3, 10].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl batched, default runtime",
                ours: true,
                per_param: true,
                what: "Flow::from_iter + K × (identity, async_boundary: ring 1024) into for_each, on Runtime::new() (futures' thread pool)",
                run: batched_default,
                lossy: false,
            },
            Implementation {
                name: "rs-impl unbatched, default runtime",
                ours: true,
                per_param: true,
                what: "the same with batching off: every element flushed on its own, one wake-up each",
                run: unbatched_default,
                lossy: false,
            },
            Implementation {
                name: "rs-impl batched, tokio",
                ours: true,
                per_param: true,
                what: "the same flow, batched, on a 2-worker tokio runtime through Runtime::from_spawner",
                run: batched_tokio,
                lossy: false,
            },
            Implementation {
                name: "rs-impl unbatched, tokio",
                ours: true,
                per_param: true,
                what: "the same on tokio, batching off",
                run: unbatched_tokio,
                lossy: false,
            },
            Implementation {
                name: "rs-impl push source, default runtime",
                ours: true,
                per_param: true,
                what: "fed from the calling thread: source::push(0) + blocking_send per element, Flow::from_publisher_with(push, 1024) + K × (identity, async_boundary) into for_each, on Runtime::new() (K = 0: one hop, into the island)",
                run: push_default,
                lossy: false,
            },
            Implementation {
                name: "crossbeam per element",
                ours: false,
                per_param: true,
                what: "K + 1 threads joined by K crossbeam bounded(1024), one send per element",
                run: crossbeam_per_element,
                lossy: false,
            },
            Implementation {
                name: "crossbeam Vec batches of 256",
                ours: false,
                per_param: true,
                what: "the same chain moving Vec<u64>s of 256 through bounded(2): hand-batched",
                run: crossbeam_batched,
                lossy: false,
            },
            Implementation {
                name: "tokio mpsc",
                ours: false,
                per_param: true,
                what: "K + 1 tasks joined by K tokio::sync::mpsc::channel(1024) on a 2-worker runtime",
                run: tokio_mpsc,
                lossy: false,
            },
            Implementation {
                name: "futures mpsc",
                ours: false,
                per_param: true,
                what: "K + 1 tasks joined by K futures::channel::mpsc::channel(1023) on a 2-thread futures ThreadPool",
                run: futures_mpsc,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}
