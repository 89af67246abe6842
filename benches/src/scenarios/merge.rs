//! Seed 003's shapes (RxJava's `OperatorMergePerf` and `OperatorObserveOnPerf`, issue #1908):
//! merge and flat_map of plain publishers, and observe_on, against the Rust peers. One op is
//! one subscription run to completion; a run of `n` elements is `n / E` whole ops of `E`
//! elements (plus one smaller op for the rest), so the harness's elements per second divided
//! by `E` is ops per second. Every op moves the `u64`s `0..E` (split between its inners) into
//! the checksum.
//!
//! | scenario | shape (E elements per op at size N) | ours | peers |
//! |---|---|---|---|
//! | `merge-1-stream-of-n-merges` | `oneStreamOfNthatMergesIn1`: N values, each its own inner (E = N) | `range(0..N).flat_map(just)` | futures `flatten_unordered`, `flat_map`, `select_all` |
//! | `merge-1-sync-of-n` | `merge1SyncStreamOfN`: one inner of N (E = N) | `merge([range])`: a known iterator; subscribed (boxed); `from_iter([0..N]).flat_map(range)` | futures `select_all`, `flatten_unordered`, `flat_map`; tokio-stream `StreamMap` |
//! | `merge-n-sync-of-n` | `mergeNSyncStreamsOfN`: N inners of N (E = N²) | `merge(N ranges)`: known iterators; subscribed; `from_iter(N ranges).flat_map(range)` | as above |
//! | `merge-n-async-of-n` | `mergeNAsyncStreamsOfN`: N inners of N, each on a pool (E = N²) | `merge(N flows)`, each inner an island on a 2-thread pool | futures `select_all` of N mpsc receivers fed by tasks on a 2-thread `ThreadPool`; tokio-stream `StreamMap` of N `ReceiverStream`s fed by tasks on a 2-worker runtime |
//! | `merge-2-async-of-n` | `mergeTwoAsyncStreamsOfN`: two inners of N on a pool (E = 2N) | `merge(2 flows)` | futures `select_all` of two receivers; tokio-stream `merge` of two `ReceiverStream`s |
//! | `merge-n-sync-of-1` | `mergeNSyncStreamsOf1`: N single values (E = N) | `merge(N just)` | futures `select_all`, `flatten_unordered`, `flat_map` of `once`; tokio-stream `StreamMap` |
//! | `observe-on` | `observeOn{Computation,NewThread,Immediate}`: N elements handed to another executor (E = N) | `range.observe_on(runtime, 128)` on a 2-thread pool, a thread per task, and a `LocalPool` on the calling thread | tokio `mpsc::channel(128)` (a producer task per op on a 2-worker runtime), crossbeam `bounded(128)` (a producer thread per run, fed per op) |
//!
//! Pools, runtimes and threads are made once per run (amortised over its ops), as the JMH
//! benchmarks make their schedulers once; channels and subscriptions once per op.

use std::sync::Arc;
use std::thread;

use futures::executor::{block_on, LocalPool, ThreadPool};
use futures::future::ready;
use futures::{stream, SinkExt, StreamExt};
use rs_api::Publisher;
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::merge::{self, MergeExt};
use rs_impl::source::{from_iter, just, range};
use rs_impl::subscriber::{for_each, RequestStrategy};
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamMap;

use super::imp;
use crate::scenario::{sum_below, Checksum, Implementation, Ops, Param, Scenario};

/// The seed's figures (RxJava 1.x, pooled `SpmcArrayQueue`, JMH throughput, ops/s), labelled
/// as what they are.
const REFERENCE: &str = "RxJava 1.x, seed 003 (#1908), its own machine, JVM: not comparable \
                         as figures, only as shape";

/// Runs `n` elements as ops of `e`: `n / e` whole ops, then one of `n % e`.
fn in_ops(e: u64, n: u64, mut op: impl FnMut(u64)) {
    let e = e.max(1);
    for _ in 0..n / e {
        op(e);
    }
    if n % e != 0 {
        op(n % e);
    }
}

/// The checksum of [`in_ops`]: each op moves `0..its size`.
fn ops_sum(e: u64, n: u64) -> u64 {
    let e = e.max(1);
    (n / e)
        .wrapping_mul(sum_below(0, e))
        .wrapping_add(sum_below(0, n % e))
}

/// `0..m` cut into inners of `size` (the last one shorter).
fn chunks(m: u64, size: u64) -> impl Iterator<Item = std::ops::Range<u64>> + Clone {
    let size = size.max(1);
    (0..m.div_ceil(size)).map(move |k| k * size..((k + 1) * size).min(m))
}

/// Sums a stream under `block_on`.
fn sum_stream<S: futures::Stream<Item = u64>>(s: S, sum: &Checksum) {
    block_on(s.for_each(|x| {
        sum.add(x);
        ready(())
    }));
}

/// Subscribes `p` with an unbounded `for_each` into `sum` and waits for its end.
fn ours<P: Publisher<u64>>(p: &P, sum: &Arc<Checksum>) {
    let acc = Arc::clone(sum);
    let (s, h) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    p.subscribe(Box::new(s));
    h.wait().expect("the merge completes");
}

// ----- oneStreamOfNthatMergesIn1 --------------------------------------------------------------

fn one_stream_ours(size: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    in_ops(size, n, |m| {
        ours(&range(0..m).flat_map(just, 128, 128), &sum);
    });
    sum.get()
}

fn one_stream_flatten_unordered(size: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    in_ops(size, n, |m| {
        sum_stream(
            stream::iter(0..m)
                .map(|x| stream::once(ready(x)))
                .flatten_unordered(None),
            &sum,
        );
    });
    sum.get()
}

fn one_stream_flat_map(size: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    in_ops(size, n, |m| {
        sum_stream(
            stream::iter(0..m).flat_map(|x| stream::once(ready(x))),
            &sum,
        );
    });
    sum.get()
}

fn one_stream_select_all(size: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    in_ops(size, n, |m| {
        sum_stream(
            stream::select_all((0..m).map(|x| stream::once(ready(x)))),
            &sum,
        );
    });
    sum.get()
}

// ----- merge of N synchronous inners of `each` (merge1SyncStreamOfN, mergeNSyncStreamsOfN) ----

/// Ours: the inners as known iterators (no subscription).
fn sync_ours_iter(m: u64, each: u64, sum: &Arc<Checksum>) {
    let inners: Vec<_> = chunks(m, each).map(range).collect();
    ours(&merge::merge(inners), sum);
}

/// Ours: a flat map of a known outer iterator of ranges (the seed's `range.map(range)`
/// merged): the outer pulled, each inner drained by the typed lane; built per op, as the
/// peers' streams are.
fn sync_ours_flat(m: u64, each: u64, sum: &Arc<Checksum>) {
    ours(&from_iter(chunks(m, each)).flat_map(range, 128, 128), sum);
}

/// Ours: the inners as boxed publishers (subscribed, queued on contention).
fn sync_ours_subscribed(m: u64, each: u64, sum: &Arc<Checksum>) {
    let inners: Vec<Arc<dyn Publisher<u64> + Send + Sync>> = chunks(m, each)
        .map(|r| -> Arc<dyn Publisher<u64> + Send + Sync> { Arc::new(range(r)) })
        .collect();
    ours(&merge::merge(inners), sum);
}

fn sync_select_all(m: u64, each: u64, sum: &Checksum) {
    sum_stream(stream::select_all(chunks(m, each).map(stream::iter)), sum);
}

fn sync_flatten_unordered(m: u64, each: u64, sum: &Checksum) {
    sum_stream(
        stream::iter(chunks(m, each).map(stream::iter)).flatten_unordered(None),
        sum,
    );
}

fn sync_flat_map(m: u64, each: u64, sum: &Checksum) {
    sum_stream(stream::iter(chunks(m, each)).flat_map(stream::iter), sum);
}

fn sync_stream_map(m: u64, each: u64, sum: &Checksum) {
    let mut map = StreamMap::new();
    for (k, r) in chunks(m, each).enumerate() {
        map.insert(k, stream::iter(r));
    }
    sum_stream(map.map(|(_, x)| x), sum);
}

/// The run functions of the synchronous shapes: `name: elements per op, elements per inner
/// => one op`.
macro_rules! sync_shape {
    ($($name:ident: $per_op:expr, $each:expr => $f:ident;)*) => {$(
        fn $name(size: u64, n: u64) -> u64 {
            let per_op: fn(u64) -> u64 = $per_op;
            let each: fn(u64) -> u64 = $each;
            let sum = Arc::new(Checksum::default());
            in_ops(per_op(size), n, |m| $f(m, each(size), &sum));
            sum.get()
        }
    )*};
}

sync_shape! {
    one_sync_ours_iter: |s| s, |s| s => sync_ours_iter;
    one_sync_ours_subscribed: |s| s, |s| s => sync_ours_subscribed;
    one_sync_ours_flat: |s| s, |s| s => sync_ours_flat;
    one_sync_select_all: |s| s, |s| s => sync_select_all;
    one_sync_flatten_unordered: |s| s, |s| s => sync_flatten_unordered;
    one_sync_flat_map: |s| s, |s| s => sync_flat_map;
    one_sync_stream_map: |s| s, |s| s => sync_stream_map;
    n_sync_ours_iter: |s: u64| s * s, |s| s => sync_ours_iter;
    n_sync_ours_subscribed: |s: u64| s * s, |s| s => sync_ours_subscribed;
    n_sync_ours_flat: |s: u64| s * s, |s| s => sync_ours_flat;
    n_sync_select_all: |s: u64| s * s, |s| s => sync_select_all;
    n_sync_flatten_unordered: |s: u64| s * s, |s| s => sync_flatten_unordered;
    n_sync_flat_map: |s: u64| s * s, |s| s => sync_flat_map;
    n_sync_stream_map: |s: u64| s * s, |s| s => sync_stream_map;
    n_of_1_ours: |s| s, |_| 1 => sync_ours_just;
    n_of_1_select_all: |s| s, |_| 1 => once_select_all;
    n_of_1_flatten_unordered: |s| s, |_| 1 => once_flatten_unordered;
    n_of_1_flat_map: |s| s, |_| 1 => once_flat_map;
    n_of_1_stream_map: |s| s, |_| 1 => once_stream_map;
}

/// Ours, `mergeNSyncStreamsOf1`: a merge of `m` single values.
fn sync_ours_just(m: u64, _each: u64, sum: &Arc<Checksum>) {
    ours(&merge::merge((0..m).map(just).collect::<Vec<_>>()), sum);
}

fn once_select_all(m: u64, _: u64, sum: &Checksum) {
    sum_stream(
        stream::select_all((0..m).map(|x| stream::once(ready(x)))),
        sum,
    );
}

fn once_flatten_unordered(m: u64, _: u64, sum: &Checksum) {
    sum_stream(
        stream::iter((0..m).map(|x| stream::once(ready(x)))).flatten_unordered(None),
        sum,
    );
}

fn once_flat_map(m: u64, _: u64, sum: &Checksum) {
    sum_stream(stream::iter(0..m).flat_map(|x| stream::once(ready(x))), sum);
}

fn once_stream_map(m: u64, _: u64, sum: &Checksum) {
    let mut map = StreamMap::new();
    for x in 0..m {
        map.insert(x, stream::once(ready(x)));
    }
    sum_stream(map.map(|(_, x)| x), sum);
}

// ----- inners on a pool (mergeNAsyncStreamsOfN, mergeTwoAsyncStreamsOfN) ----------------------

/// Ours: each inner an island on `runtime` (`Flow::from_iter(..).into_publisher`).
fn async_ours(size: u64, n: u64, per_op: u64, each: u64) -> u64 {
    let runtime = Runtime::with_threads(2).expect("pool");
    let sum = Arc::new(Checksum::default());
    in_ops(per_op, n, |m| {
        let inners: Vec<_> = chunks(m, each)
            .map(|r| Flow::from_iter(r).into_publisher(&runtime))
            .collect();
        ours(&merge::merge(inners), &sum);
    });
    let _ = size;
    sum.get()
}

/// futures: each inner a task on a 2-thread `ThreadPool` sending into an mpsc channel of 128;
/// `select_all` of the receivers on the calling thread.
fn async_futures(per_op: u64, each: u64, n: u64) -> u64 {
    let pool = ThreadPool::builder().pool_size(2).create().expect("pool");
    let sum = Checksum::default();
    in_ops(per_op, n, |m| {
        let receivers: Vec<_> = chunks(m, each)
            .map(|r| {
                let (mut tx, rx) = futures::channel::mpsc::channel::<u64>(127);
                pool.spawn_ok(async move {
                    let mut s = stream::iter(r).map(Ok);
                    let _ = tx.send_all(&mut s).await;
                });
                rx
            })
            .collect();
        sum_stream(stream::select_all(receivers), &sum);
    });
    sum.get()
}

/// tokio: each inner a task on a 2-worker runtime sending into `mpsc::channel(128)`; a
/// `StreamMap` of `ReceiverStream`s (or `merge` of two) on the calling thread.
fn async_tokio(per_op: u64, each: u64, n: u64, two: bool) -> u64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let sum = Checksum::default();
    in_ops(per_op, n, |m| {
        let receivers: Vec<_> = chunks(m, each)
            .map(|r| {
                let (tx, rx) = tokio::sync::mpsc::channel::<u64>(128);
                rt.spawn(async move {
                    for x in r {
                        if tx.send(x).await.is_err() {
                            break;
                        }
                    }
                });
                ReceiverStream::new(rx)
            })
            .collect();
        if two && receivers.len() == 2 {
            let mut it = receivers.into_iter();
            let (a, b) = (it.next().expect("a"), it.next().expect("b"));
            sum_stream(tokio_stream::StreamExt::merge(a, b), &sum);
        } else {
            let mut map = StreamMap::new();
            for (k, r) in receivers.into_iter().enumerate() {
                map.insert(k, r);
            }
            sum_stream(map.map(|(_, x)| x), &sum);
        }
    });
    sum.get()
}

fn n_async_ours(size: u64, n: u64) -> u64 {
    async_ours(size, n, size * size, size)
}
fn n_async_futures(size: u64, n: u64) -> u64 {
    async_futures(size * size, size, n)
}
fn n_async_tokio(size: u64, n: u64) -> u64 {
    async_tokio(size * size, size, n, false)
}
fn two_async_ours(size: u64, n: u64) -> u64 {
    async_ours(size, n, 2 * size, size)
}
fn two_async_futures(size: u64, n: u64) -> u64 {
    async_futures(2 * size, size, n)
}
fn two_async_tokio(size: u64, n: u64) -> u64 {
    async_tokio(2 * size, size, n, true)
}

// ----- observeOn --------------------------------------------------------------------------------

fn observe_on_ours(size: u64, n: u64, runtime: &Runtime) -> u64 {
    let sum = Arc::new(Checksum::default());
    in_ops(size, n, |m| {
        ours(&range(0..m).observe_on(runtime, 128), &sum)
    });
    sum.get()
}

fn observe_on_pool(size: u64, n: u64) -> u64 {
    observe_on_ours(size, n, &Runtime::with_threads(2).expect("pool"))
}

fn observe_on_new_thread(size: u64, n: u64) -> u64 {
    observe_on_ours(size, n, &Runtime::thread_per_task())
}

/// Ours, immediate: the island runs on a `LocalPool` on the calling thread (handed over
/// through a channel: it is not `Send`).
fn observe_on_immediate(size: u64, n: u64) -> u64 {
    let mut pool = LocalPool::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let runtime = Runtime::from_spawner(move |task| {
        let _ = tx.lock().expect("the queue").send(task);
    });
    let sum = Arc::new(Checksum::default());
    in_ops(size, n, |m| {
        let acc = Arc::clone(&sum);
        let (s, h) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
        range(0..m).observe_on(&runtime, 128).subscribe(Box::new(s));
        for task in rx.try_iter() {
            futures::task::SpawnExt::spawn(&pool.spawner(), task).expect("the local pool runs");
        }
        pool.run_until_stalled();
        h.try_take().expect("completed").expect("no error");
    });
    sum.get()
}

/// tokio: a producer task per op sends `0..m` into `mpsc::channel(128)`; the calling thread
/// receives with `blocking_recv`.
fn observe_on_tokio(size: u64, n: u64) -> u64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let sum = Checksum::default();
    in_ops(size, n, |m| {
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(128);
        rt.spawn(async move {
            for x in 0..m {
                if tx.send(x).await.is_err() {
                    break;
                }
            }
        });
        while let Some(x) = rx.blocking_recv() {
            sum.add(x);
        }
    });
    sum.get()
}

/// crossbeam: one producer thread per run, handed a `bounded(128)` sender and a count per op;
/// the calling thread receives.
fn observe_on_crossbeam(size: u64, n: u64) -> u64 {
    let (jobs, job_rx) = crossbeam_channel::unbounded::<(u64, crossbeam_channel::Sender<u64>)>();
    let producer = thread::spawn(move || {
        for (m, tx) in job_rx {
            for x in 0..m {
                tx.send(x).expect("consumer alive");
            }
        }
    });
    let sum = Checksum::default();
    in_ops(size, n, |m| {
        let (tx, rx) = crossbeam_channel::bounded::<u64>(128);
        jobs.send((m, tx)).expect("producer alive");
        for x in rx {
            sum.add(x);
        }
    });
    drop(jobs);
    producer.join().expect("producer");
    sum.get()
}

// ----- the scenarios ----------------------------------------------------------------------------

/// Elements per op at a size, and the checksum of a run of `n` elements at that size.
type Shape = (fn(u64) -> u64, fn(u64, u64) -> u64);

fn scenario(
    id: &'static str,
    title: &'static str,
    params: &[u64],
    (per_op, expected): Shape,
    cross_thread: bool,
    reference: &'static [(&'static str, &'static [(u64, f64)])],
    implementations: Vec<Implementation>,
) -> Scenario {
    Scenario {
        id,
        title,
        param_name: "size",
        params: params.iter().copied().map(Param::new).collect(),
        implementations,
        expected,
        cross_thread,
        deliveries: None,
        ops: Some(Ops {
            elements_per_op: per_op,
            reference: REFERENCE,
            reference_ops: reference,
        }),
    }
}

/// `oneStreamOfNthatMergesIn1`.
#[must_use]
pub fn one_stream_scenario() -> Scenario {
    scenario(
        "merge-1-stream-of-n-merges",
        "oneStreamOfNthatMergesIn1: N values, each merged as an inner of its own",
        &[1, 1_000, 1_000_000],
        (|s| s, ops_sum),
        false,
        &[(
            "RxJava 1.x oneStreamOfNthatMergesIn1",
            &[(1, 5_397_752.619), (1_000, 29_257.005), (1_000_000, 35.506)],
        )],
        vec![
            imp("rs-impl flat_map(just)", true, "range(0..N).flat_map(source::just, 128, 128): known values, no subscription, the fast path", one_stream_ours),
            imp("futures flatten_unordered", false, "stream::iter(0..N).map(stream::once).flatten_unordered(None) under block_on", one_stream_flatten_unordered),
            imp("futures flat_map", false, "stream::iter(0..N).flat_map(stream::once) (sequential) under block_on", one_stream_flat_map),
            imp("futures select_all", false, "stream::select_all of N stream::once under block_on", one_stream_select_all),
        ],
    )
}

/// `merge1SyncStreamOfN`.
#[must_use]
pub fn one_sync_scenario() -> Scenario {
    scenario(
        "merge-1-sync-of-n",
        "merge1SyncStreamOfN: one synchronous inner of N",
        &[1, 1_000, 1_000_000],
        (|s| s, ops_sum),
        false,
        &[(
            "RxJava 1.x merge1SyncStreamOfN",
            &[(1, 5_448_592.507), (1_000, 54_425.611), (1_000_000, 52.477)],
        )],
        vec![
            imp("rs-impl merge, known iterator", true, "merge(vec![range(0..N)]): the inner is a known iterator, pulled by the drain", one_sync_ours_iter),
            imp("rs-impl merge, subscribed", true, "merge(vec![Arc<dyn Publisher>(range(0..N))]): subscribed, its elements on the fast path", one_sync_ours_subscribed),
            imp("rs-impl flat_map of ranges", true, "from_iter([0..N]).flat_map(range, 128, 128): the outer pulled, the inner drained by the typed lane", one_sync_ours_flat),
            imp("futures select_all", false, "stream::select_all([stream::iter(0..N)]) under block_on", one_sync_select_all),
            imp("futures flatten_unordered", false, "stream::iter([stream::iter(0..N)]).flatten_unordered(None)", one_sync_flatten_unordered),
            imp("futures flat_map", false, "stream::iter([0..N]).flat_map(stream::iter)", one_sync_flat_map),
            imp("tokio-stream StreamMap", false, "StreamMap with one stream::iter(0..N)", one_sync_stream_map),
        ],
    )
}

/// `mergeNSyncStreamsOfN`.
#[must_use]
pub fn n_sync_scenario() -> Scenario {
    scenario(
        "merge-n-sync-of-n",
        "mergeNSyncStreamsOfN: N synchronous inners of N (N² elements per op)",
        &[1, 1_000],
        (|s| s * s, |s, n| ops_sum(s * s, n)),
        false,
        &[(
            "RxJava 1.x mergeNSyncStreamsOfN",
            &[(1, 5_815_289.623), (1_000, 52.525)],
        )],
        vec![
            imp(
                "rs-impl merge, known iterators",
                true,
                "merge(N × range(0..N)): known iterators, served round-robin",
                n_sync_ours_iter,
            ),
            imp(
                "rs-impl merge, subscribed",
                true,
                "merge(N × Arc<dyn Publisher>(range)): N subscriptions, prefetch 128",
                n_sync_ours_subscribed,
            ),
            imp(
                "rs-impl flat_map of ranges",
                true,
                "from_iter(N ranges).flat_map(range, 128, 128): the outer pulled, each inner drained by the typed lane",
                n_sync_ours_flat,
            ),
            imp(
                "futures select_all",
                false,
                "stream::select_all(N × stream::iter) under block_on",
                n_sync_select_all,
            ),
            imp(
                "futures flatten_unordered",
                false,
                "stream::iter(N × stream::iter).flatten_unordered(None)",
                n_sync_flatten_unordered,
            ),
            imp(
                "futures flat_map",
                false,
                "stream::iter(N ranges).flat_map(stream::iter) (sequential)",
                n_sync_flat_map,
            ),
            imp(
                "tokio-stream StreamMap",
                false,
                "StreamMap of N stream::iter",
                n_sync_stream_map,
            ),
        ],
    )
}

/// `mergeNAsyncStreamsOfN`.
#[must_use]
pub fn n_async_scenario() -> Scenario {
    scenario(
        "merge-n-async-of-n",
        "mergeNAsyncStreamsOfN: N inners of N, each produced on a 2-thread pool",
        &[1, 1_000],
        (|s| s * s, |s, n| ops_sum(s * s, n)),
        true,
        &[(
            "RxJava 1.x mergeNAsyncStreamsOfN",
            &[(1, 92_792.488), (1_000, 4.957)],
        )],
        vec![
            imp("rs-impl merge of islands", true, "merge(N × Flow::from_iter(0..N).into_publisher(2-thread pool)): each inner an island; its elements straight downstream or through its own queue", n_async_ours),
            imp("futures select_all of mpsc", false, "N tasks on a 2-thread ThreadPool, each send_all into mpsc::channel(128); select_all of the receivers under block_on", n_async_futures),
            imp("tokio-stream StreamMap of mpsc", false, "N tasks on a 2-worker runtime, each sending into mpsc::channel(128); StreamMap of ReceiverStreams under block_on", n_async_tokio),
        ],
    )
}

/// `mergeTwoAsyncStreamsOfN`.
#[must_use]
pub fn two_async_scenario() -> Scenario {
    scenario(
        "merge-2-async-of-n",
        "mergeTwoAsyncStreamsOfN: two inners of N, each produced on a 2-thread pool",
        &[1, 1_000],
        (|s| 2 * s, |s, n| ops_sum(2 * s, n)),
        true,
        &[(
            "RxJava 1.x mergeTwoAsyncStreamsOfN",
            &[(1, 77_640.706), (1_000, 3_000.748)],
        )],
        vec![
            imp("rs-impl merge of islands", true, "merge(2 × Flow::from_iter(0..N).into_publisher(2-thread pool))", two_async_ours),
            imp("futures select_all of mpsc", false, "2 tasks on a 2-thread ThreadPool into mpsc::channel(128); select_all under block_on", two_async_futures),
            imp("tokio-stream merge of mpsc", false, "2 tasks on a 2-worker runtime into mpsc::channel(128); tokio_stream merge of the two ReceiverStreams under block_on", two_async_tokio),
        ],
    )
}

/// `mergeNSyncStreamsOf1`.
#[must_use]
pub fn n_of_1_scenario() -> Scenario {
    scenario(
        "merge-n-sync-of-1",
        "mergeNSyncStreamsOf1: a merge of N single values",
        &[1, 100, 1_000],
        (|s| s, ops_sum),
        false,
        &[(
            "RxJava 1.x mergeNSyncStreamsOf1",
            &[(1, 4_608_856.070), (100, 431_920.261), (1_000, 52_309.410)],
        )],
        vec![
            imp(
                "rs-impl merge(just)",
                true,
                "merge(N × source::just): known values, no subscription",
                n_of_1_ours,
            ),
            imp(
                "futures select_all",
                false,
                "stream::select_all(N × stream::once) under block_on",
                n_of_1_select_all,
            ),
            imp(
                "futures flatten_unordered",
                false,
                "stream::iter(N × stream::once).flatten_unordered(None)",
                n_of_1_flatten_unordered,
            ),
            imp(
                "futures flat_map",
                false,
                "stream::iter(0..N).flat_map(stream::once)",
                n_of_1_flat_map,
            ),
            imp(
                "tokio-stream StreamMap",
                false,
                "StreamMap of N stream::once",
                n_of_1_stream_map,
            ),
        ],
    )
}

/// `observeOn{Computation,NewThread,Immediate}`.
#[must_use]
pub fn observe_on_scenario() -> Scenario {
    scenario(
        "observe-on",
        "observeOn: N elements of a range handed to another executor",
        &[1, 1_000, 1_000_000],
        (|s| s, ops_sum),
        true,
        &[
            (
                "RxJava 1.x observeOnComputation",
                &[(1, 109_192.288), (1_000, 6_952.955), (1_000_000, 12.267)],
            ),
            (
                "RxJava 1.x observeOnNewThread",
                &[(1, 16_899.056), (1_000, 7_262.566), (1_000_000, 13.520)],
            ),
            (
                "RxJava 1.x observeOnImmediate",
                &[(1, 16_430_666.170), (1_000, 153_431.778), (1_000_000, 150.061)],
            ),
        ],
        vec![
            imp("rs-impl observe_on, pool", true, "range(0..N).observe_on(2-thread futures pool, 128): an island per subscription, prefetch 128, replenished at 96", observe_on_pool),
            imp("rs-impl observe_on, new thread", true, "the same on Runtime::thread_per_task(): a thread per subscription", observe_on_new_thread),
            imp("rs-impl observe_on, immediate", true, "the same on a LocalPool run on the calling thread", observe_on_immediate),
            imp("tokio mpsc", false, "a producer task per op on a 2-worker runtime into mpsc::channel(128); blocking_recv on the calling thread", observe_on_tokio),
            imp("crossbeam bounded", false, "one producer thread per run, bounded(128) per op, recv on the calling thread", observe_on_crossbeam),
        ],
    )
}
