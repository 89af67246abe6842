//! Scenarios `lanes` and `lanes-trivial`: keyed lanes (seed 004, akka.net #8315/#8318's
//! lane-scaling sweep). `0..n` is keyed by the element itself (Kafka's murmur2 over its
//! big-endian bytes, `toPositive(h) % lanes`), split over K lanes, each lane doing the
//! per-element work, and merged back into one summing consumer.
//!
//! Parameter K: lanes 1, 2, 4, 8. `lanes` gives every element [`WORK_ROUNDS`] rounds of a
//! xorshift: deterministic spin work of about 500 ns on the 2-core machine these run on
//! (akka.net's "about 500 ns of work per element"), so the sweep shows how lanes spread the
//! work over cores. `lanes-trivial` does no work (the identity), so the sweep shows what the
//! lanes themselves cost per element.
//!
//! | implementation | what |
//! |---|---|
//! | `rs-impl lanes` | ours: `Flow::from_iter(0..n).lanes(K, key, map(work))` into `for_each`, on `Runtime::new()` (futures' thread pool, one thread per core). Lanes of 4096 (the default), rings of 1024 into the merging island. K = 1 is the flow itself (`map(work)` inline, one island). |
//! | `fused, one island (ceiling)` | the same work with no lanes: `Flow::from_iter(0..n).map(work)` into `for_each` on one island: the one-core ceiling |
//! | `crossbeam bounded, thread per lane` | peer: the caller thread hashes each element the same way and sends it on a `Vec` of K `crossbeam_channel::bounded(4096)`; K threads do the work and send into one `bounded(1024)`; a consumer thread sums |
//! | `tokio mpsc, task per lane` | peer: the same with a `Vec` of K `tokio::sync::mpsc::channel(4096)`, K tasks and one `channel(1024)` into a summing task, on a 2-worker tokio runtime |

use std::hint::black_box;
use std::sync::Arc;
use std::thread;

use rs_api::Publisher;
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::lanes::{lane_of, LaneKey, LanesConfig, DEFAULT_LANE_CAPACITY};
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

/// Rounds of the xorshift of the `lanes` scenario's per-element work: about 500 ns on the
/// 2-core machine (about 3.5 ns a round, measured there).
pub const WORK_ROUNDS: u32 = 140;

/// The ring from each lane into the merge, ours and the peers' shared channel alike.
pub const MERGE_RING: usize = 1024;

/// The per-element work: `rounds` rounds of a xorshift seeded by `x`; returns `x`.
#[inline]
pub fn work(x: u64, rounds: u32) -> u64 {
    let mut h = x | 1;
    for _ in 0..rounds {
        h ^= h << 13;
        h ^= h >> 7;
        h ^= h << 17;
    }
    black_box(h);
    x
}

fn lanes(k: u64) -> usize {
    usize::try_from(k).expect("a small number of lanes")
}

/// The lane of `x` among `k`, as ours picks it.
#[inline]
fn lane(x: u64, k: usize) -> usize {
    lane_of(x.lane_hash(), k)
}

/// Ours: K keyed lanes doing `rounds` of work, merged into a summing `for_each`.
fn ours(k: u64, n: u64, rounds: u32) -> u64 {
    let runtime = Runtime::new().expect("the island thread pool starts");
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    Flow::from_iter(0..n)
        .lanes_with(
            LanesConfig::new(lanes(k)).output(MERGE_RING),
            |x: &u64| *x,
            move |l| l.map(move |x| work(x, rounds)),
        )
        .into_publisher(&runtime)
        .subscribe(Box::new(s));
    done.wait().expect("the lanes complete");
    sum.get()
}

/// The ceiling: the same work on one island, no lanes.
fn fused(n: u64, rounds: u32) -> u64 {
    let runtime = Runtime::new().expect("the island thread pool starts");
    let sum = Arc::new(Checksum::default());
    let acc = sum.clone();
    let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| acc.add(x));
    Flow::from_iter(0..n)
        .map(move |x| work(x, rounds))
        .into_publisher(&runtime)
        .subscribe(Box::new(s));
    done.wait().expect("the flow completes");
    sum.get()
}

/// Peer: a `Vec` of K crossbeam `bounded(4096)` senders, a thread per lane, one
/// `bounded(1024)` into a summing consumer thread.
fn crossbeam(k: u64, n: u64, rounds: u32) -> u64 {
    let k = lanes(k);
    let (out_tx, out_rx) = crossbeam_channel::bounded::<u64>(MERGE_RING);
    let consumer = thread::spawn(move || {
        let sum = Checksum::default();
        for x in out_rx {
            sum.add(x);
        }
        sum.get()
    });
    let mut senders = Vec::with_capacity(k);
    let mut workers = Vec::with_capacity(k);
    for _ in 0..k {
        let (tx, rx) = crossbeam_channel::bounded::<u64>(DEFAULT_LANE_CAPACITY);
        let out = out_tx.clone();
        senders.push(tx);
        workers.push(thread::spawn(move || {
            for x in rx {
                out.send(work(x, rounds)).expect("the consumer is alive");
            }
        }));
    }
    drop(out_tx);
    for x in 0..n {
        senders[lane(x, k)].send(x).expect("the lane is alive");
    }
    drop(senders);
    for w in workers {
        w.join().expect("a lane thread");
    }
    consumer.join().expect("the consumer")
}

/// Peer: a `Vec` of K tokio `mpsc::channel(4096)` senders, a task per lane, one
/// `channel(1024)` into a summing task, on a 2-worker runtime.
fn tokio_mpsc(k: u64, n: u64, rounds: u32) -> u64 {
    let k = lanes(k);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    rt.block_on(async move {
        let (out_tx, mut out_rx) = tokio::sync::mpsc::channel::<u64>(MERGE_RING);
        let consumer = tokio::spawn(async move {
            let sum = Checksum::default();
            while let Some(x) = out_rx.recv().await {
                sum.add(x);
            }
            sum.get()
        });
        let mut senders = Vec::with_capacity(k);
        let mut workers = Vec::with_capacity(k);
        for _ in 0..k {
            let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(DEFAULT_LANE_CAPACITY);
            let out = out_tx.clone();
            senders.push(tx);
            workers.push(tokio::spawn(async move {
                while let Some(x) = rx.recv().await {
                    out.send(work(x, rounds))
                        .await
                        .expect("the consumer is alive");
                }
            }));
        }
        drop(out_tx);
        let dispatcher = tokio::spawn(async move {
            for x in 0..n {
                senders[lane(x, k)]
                    .send(x)
                    .await
                    .expect("the lane is alive");
            }
        });
        dispatcher.await.expect("dispatcher");
        for w in workers {
            w.await.expect("a lane task");
        }
        consumer.await.expect("consumer")
    })
}

/// Ours, with the work.
pub fn ours_work(k: u64, n: u64) -> u64 {
    ours(k, n, WORK_ROUNDS)
}
/// The ceiling, with the work.
pub fn fused_work(_: u64, n: u64) -> u64 {
    fused(n, WORK_ROUNDS)
}
/// The crossbeam peer, with the work.
pub fn crossbeam_work(k: u64, n: u64) -> u64 {
    crossbeam(k, n, WORK_ROUNDS)
}
/// The tokio peer, with the work.
pub fn tokio_work(k: u64, n: u64) -> u64 {
    tokio_mpsc(k, n, WORK_ROUNDS)
}
/// Ours, no work.
pub fn ours_trivial(k: u64, n: u64) -> u64 {
    ours(k, n, 0)
}
/// The ceiling, no work.
pub fn fused_trivial(_: u64, n: u64) -> u64 {
    fused(n, 0)
}
/// The crossbeam peer, no work.
pub fn crossbeam_trivial(k: u64, n: u64) -> u64 {
    crossbeam(k, n, 0)
}
/// The tokio peer, no work.
pub fn tokio_trivial(k: u64, n: u64) -> u64 {
    tokio_mpsc(k, n, 0)
}

fn implementations(runs: [fn(u64, u64) -> u64; 4]) -> Vec<Implementation> {
    vec![
        Implementation {
            name: "rs-impl lanes",
            ours: true,
            per_param: true,
            what: "Flow::from_iter(0..n).lanes(K, |x| *x, map(work)) into for_each on Runtime::new(): lanes of 4096, merged through rings of 1024; K = 1 inline",
            run: runs[0],
            lossy: false,
        },
        Implementation {
            name: "fused, one island (ceiling)",
            ours: false,
            per_param: false,
            what: "Flow::from_iter(0..n).map(work) into for_each: the same work on one island, the one-core ceiling",
            run: runs[1],
            lossy: false,
        },
        Implementation {
            name: "crossbeam bounded, thread per lane",
            ours: false,
            per_param: true,
            what: "the caller sends each element (same murmur2 lane) on a Vec of K crossbeam bounded(4096); K threads work and send into one bounded(1024); a thread sums",
            run: runs[2],
            lossy: false,
        },
        Implementation {
            name: "tokio mpsc, task per lane",
            ours: false,
            per_param: true,
            what: "the same with a Vec of K tokio mpsc::channel(4096), K tasks and one channel(1024) into a summing task, 2-worker runtime",
            run: runs[3],
            lossy: false,
        },
    ]
}

/// The `lanes` scenario: about 500 ns of work per element.
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::lanes::scenario();
/// for imp in &s.implementations {
///     assert_eq!((imp.run)(4, 1000), (s.expected)(4, 1000), "{}", imp.name);
/// }
/// ```
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "lanes",
        title: "Keyed lanes (seed 004): 0..n keyed over K lanes, about 500 ns of spin work per element in the lanes, merged back",
        param_name: "lanes",
        params: [1, 2, 4, 8].into_iter().map(Param::new).collect(),
        implementations: implementations([ours_work, fused_work, crossbeam_work, tokio_work]),
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}

/// The `lanes-trivial` scenario: the same with no work (what the lanes cost).
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::lanes::trivial_scenario();
/// for imp in &s.implementations {
///     assert_eq!((imp.run)(2, 1000), (s.expected)(2, 1000), "{}", imp.name);
/// }
/// ```
#[must_use]
pub fn trivial_scenario() -> Scenario {
    Scenario {
        id: "lanes-trivial",
        title: "Keyed lanes with no work per element: what the lanes themselves cost",
        param_name: "lanes",
        params: [1, 2, 4, 8].into_iter().map(Param::new).collect(),
        implementations: implementations([
            ours_trivial,
            fused_trivial,
            crossbeam_trivial,
            tokio_trivial,
        ]),
        expected: sum_below,
        cross_thread: true,
        deliveries: None,
        ops: None,
    }
}
