//! Scenarios `fanout` and `fanout-slow`: one producer, N subscribers, `u64` elements, the same
//! capacity ([`CAPACITY`]) for everyone.
//!
//! Every subscriber (consumer, receiver, closure) adds each element to a [`Checksum`] of its
//! own; a run returns the sum of them, which must be N × `sum_below(n)`. The figure is **input**
//! elements per second; deliveries per second are that × N (the report gives both).
//!
//! Two families of peers, because this machine has 2 cores:
//!
//! * **their idiomatic mode**: a thread (or a task) per consumer. With N above 2 that measures
//!   oversubscription (N + 1 threads on 2 cores) as much as the channel;
//! * **one thread**: the producer fills the channel until it is full, then drains every
//!   consumer, on one thread: the per-element cost of the channel's protocol, which is what
//!   ours (whose subscribers run on the producer's thread, inside `send`) is compared with most
//!   fairly.
//!
//! `tokio::sync::broadcast` never waits for a slow receiver: it overwrites, and the receiver
//! gets `Lagged(k)`. It is run in its idiomatic mode and reported as lossy, with the share of
//! the deliveries it actually made.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef, UNBOUNDED};
use rs_impl::fanout::{self, FanoutProcessor};
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::subscriber::{for_each, RequestStrategy};

use super::imp;
use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

/// The buffer of every implementation: elements the fastest consumer may lead the slowest by
/// (ours: the fanout's maximum capacity; the peers: their channel capacity).
pub const CAPACITY: usize = 64;

/// The subscriber counts of `fanout` (Pekko PR #3730's grid).
const SUBSCRIBERS: [u64; 5] = [1, 2, 8, 32, 128];
/// The subscriber counts of `fanout-slow` (one of them slow).
const SLOW_SUBSCRIBERS: [u64; 3] = [2, 8, 32];

/// The slow subscriber's extra work per element (about a microsecond on the benchmark machine).
fn slow_work(x: u64) -> u64 {
    let mut v = x;
    for _ in 0..300 {
        v = black_box(v.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    v
}

pub(super) fn count(k: u64) -> usize {
    usize::try_from(k.max(1)).expect("fits usize")
}

/// N checksums' sum: `k × sum_below(n)`.
pub(super) fn expected(k: u64, n: u64) -> u64 {
    sum_below(0, n).wrapping_mul(k)
}

// ----- ours ----------------------------------------------------------------------------------

/// A subscriber adding to its own checksum, with unbounded demand: the same work per element
/// as a closure of the ceiling. If given a counter, its `on_complete` adds one to it (in
/// [`rs_impl_channel_slow_behind_boundary`] the island's thread may be the fanout's drainer,
/// so the fast subscribers may finish there, after `complete` returned).
struct Sum(Arc<Checksum>, Option<Arc<AtomicUsize>>);

impl Subscriber<u64> for Sum {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(UNBOUNDED);
    }
    #[inline]
    fn on_next(&mut self, x: u64) {
        self.0.add(x);
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {
        if let Some(done) = &self.1 {
            done.fetch_add(1, Ordering::Release);
        }
    }
}

/// As [`Sum`], calling `request(1)` from inside every `on_next`.
struct SumOneByOne(Arc<Checksum>, Option<SubscriptionRef>);

impl Subscriber<u64> for SumOneByOne {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(1);
        self.1 = Some(s);
    }
    #[inline]
    fn on_next(&mut self, x: u64) {
        self.0.add(x);
        if let Some(s) = &self.1 {
            s.request(1);
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {}
}

/// As [`Sum`], doing `slow_work` first.
struct SumSlow(Arc<Checksum>);

impl Subscriber<u64> for SumSlow {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(UNBOUNDED);
    }
    fn on_next(&mut self, x: u64) {
        black_box(slow_work(x));
        self.0.add(x);
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {}
}

pub(super) fn sums(k: u64) -> Vec<Arc<Checksum>> {
    (0..count(k))
        .map(|_| Arc::new(Checksum::default()))
        .collect()
}

pub(super) fn total(sums: &[Arc<Checksum>]) -> u64 {
    sums.iter().fold(0u64, |a, s| a.wrapping_add(s.get()))
}

fn ours(k: u64, n: u64, one_by_one: bool, slow: bool) -> u64 {
    let (tx, p) = fanout::channel::<u64>(CAPACITY);
    let sums = sums(k);
    for (i, sum) in sums.iter().enumerate() {
        let sum = sum.clone();
        if slow && i == 0 {
            p.subscribe(Box::new(SumSlow(sum)));
        } else if one_by_one {
            p.subscribe(Box::new(SumOneByOne(sum, None)));
        } else {
            p.subscribe(Box::new(Sum(sum, None)));
        }
    }
    for x in 0..n {
        tx.blocking_send(x).expect("subscribers never leave");
    }
    tx.complete();
    total(&sums)
}

/// Ours: `fanout::channel`, k subscribers with unbounded demand, `blocking_send` per element on the
/// calling thread, which delivers to every subscriber before it returns.
pub fn rs_impl_channel(k: u64, n: u64) -> u64 {
    ours(k, n, false, false)
}

/// Ours: as [`rs_impl_channel`], the elements sent with the burst entry
/// (`blocking_send_all(0..n)`): the drain loop is entered once per burst (a run until the
/// buffer is full, which with continuous demand is the whole run), not once per element.
pub fn rs_impl_channel_burst(k: u64, n: u64) -> u64 {
    let (tx, p) = fanout::channel::<u64>(CAPACITY);
    let sums = sums(k);
    for sum in &sums {
        p.subscribe(Box::new(Sum(sum.clone(), None)));
    }
    tx.blocking_send_all(0..n).expect("subscribers never leave");
    tx.complete();
    total(&sums)
}

/// Ours: as [`rs_impl_channel`], each subscriber requesting 1 from inside every `on_next`.
pub fn rs_impl_channel_one_by_one(k: u64, n: u64) -> u64 {
    ours(k, n, true, false)
}

/// Ours: `FanoutProcessor` subscribed to `rs_impl::source::range(0..n)`; k subscribers with
/// unbounded demand; everything runs in `subscribe` on the calling thread.
pub fn rs_impl_processor(k: u64, n: u64) -> u64 {
    let p = FanoutProcessor::<u64>::new(CAPACITY);
    let sums = sums(k);
    for sum in &sums {
        p.subscribe(Box::new(Sum(sum.clone(), None)));
    }
    rs_impl::source::range(0..n).subscribe(Box::new(p));
    total(&sums)
}

/// Ours, `fanout-slow`: subscriber 0 does `slow_work` per element.
pub fn rs_impl_channel_slow(k: u64, n: u64) -> u64 {
    ours(k, n, false, true)
}

/// The island input buffer of the slow subscriber behind a boundary: the boundary's default
/// ring size. (With the flow's default input buffer of 16 the island asks for 8 at a time and
/// the crossing's wake-ups cost more than the slow work it moves; `docs/benchmarks.md` has
/// the figures.)
const SLOW_BUFFER: usize = rs_impl::boundary::DEFAULT_BOUNDARY_SIZE;

/// Ours, `fanout-slow`, with the slow subscriber behind an async boundary (issue #13): it
/// subscribes to `Flow::from_shared_publisher(fanout, SLOW_BUFFER).into_publisher(&runtime)`,
/// so its work runs on
/// an island of the default runtime (futures' thread pool) while the fast subscribers run on
/// whichever thread drains (mostly the producer's). The island's input side prefetches and
/// replenishes in halves, so the fanout still never holds more than its 64 elements. The
/// island subscribes to the fanout asynchronously: the run waits for it to have joined before
/// it sends (a late subscriber starts at the oldest retained element), and for every
/// subscriber's completion at the end.
pub fn rs_impl_channel_slow_behind_boundary(k: u64, n: u64) -> u64 {
    let runtime = Runtime::new().expect("the island thread pool starts");
    let (tx, p) = fanout::channel::<u64>(CAPACITY);
    let sums = sums(k);
    let slow = sums[0].clone();
    let (s, slow_done) = for_each(RequestStrategy::Unbounded, move |x: u64| {
        black_box(slow_work(x));
        slow.add(x);
    });
    Flow::from_shared_publisher(Arc::new(p.clone()), SLOW_BUFFER)
        .into_publisher(&runtime)
        .subscribe(Box::new(s));
    while p.stats().subscribers == 0 {
        thread::yield_now();
    }
    let completed = Arc::new(AtomicUsize::new(0));
    for sum in &sums[1..] {
        p.subscribe(Box::new(Sum(sum.clone(), Some(completed.clone()))));
    }
    for x in 0..n {
        tx.blocking_send(x).expect("subscribers never leave");
    }
    tx.complete();
    slow_done.wait().expect("the slow subscriber completes");
    while completed.load(Ordering::Acquire) < sums.len() - 1 {
        thread::yield_now();
    }
    total(&sums)
}

// ----- the ceiling ---------------------------------------------------------------------------

/// The closure loop over `k` checksums (closure 0 doing `slow_work` when `slow`).
pub(super) fn closures(k: u64, n: u64, slow: bool) -> u64 {
    let sums = sums(k);
    let mut fs: Vec<Box<dyn FnMut(u64)>> = sums
        .iter()
        .enumerate()
        .map(|(i, sum)| {
            let sum = sum.clone();
            if slow && i == 0 {
                Box::new(move |x: u64| {
                    black_box(slow_work(x));
                    sum.add(x);
                }) as Box<dyn FnMut(u64)>
            } else {
                Box::new(move |x: u64| sum.add(x)) as Box<dyn FnMut(u64)>
            }
        })
        .collect();
    for x in 0..n {
        for f in &mut fs {
            f(x);
        }
    }
    total(&sums)
}

/// The ceiling: a plain loop calling k boxed closures per element, on one thread.
pub fn closure_loop(k: u64, n: u64) -> u64 {
    closures(k, n, false)
}

/// The ceiling of `fanout-slow`: closure 0 does `slow_work`.
pub fn closure_loop_slow(k: u64, n: u64) -> u64 {
    closures(k, n, true)
}

// ----- crossbeam: a Vec of bounded senders ---------------------------------------------------

/// `k` crossbeam `bounded(capacity)` channels, a consumer thread each (consumer 0 slow when
/// `slow`); the calling thread sends every element to each.
pub(super) fn crossbeam_threads(capacity: usize, k: u64, n: u64, slow: bool) -> u64 {
    let mut txs = Vec::new();
    let mut consumers = Vec::new();
    for i in 0..count(k) {
        let (tx, rx) = crossbeam_channel::bounded::<u64>(capacity);
        txs.push(tx);
        let slow = slow && i == 0;
        consumers.push(thread::spawn(move || {
            let sum = Checksum::default();
            for x in rx {
                if slow {
                    black_box(slow_work(x));
                }
                sum.add(x);
            }
            sum.get()
        }));
    }
    for x in 0..n {
        for tx in &txs {
            tx.send(x).expect("consumer alive");
        }
    }
    drop(txs);
    consumers
        .into_iter()
        .fold(0u64, |a, c| a.wrapping_add(c.join().expect("consumer")))
}

/// Peer: a `Vec` of crossbeam `bounded(CAPACITY)` senders, one consumer thread each; the
/// producer `send`s every element to every sender.
pub fn crossbeam_vec_threads(k: u64, n: u64) -> u64 {
    crossbeam_threads(CAPACITY, k, n, false)
}

/// Peer, `fanout-slow`: as [`crossbeam_vec_threads`], consumer 0 slow.
pub fn crossbeam_vec_threads_slow(k: u64, n: u64) -> u64 {
    crossbeam_threads(CAPACITY, k, n, true)
}

/// Peer: a `Vec` of crossbeam `bounded(CAPACITY)` channels on one thread: `try_send` to every
/// channel; when one is full, drain every receiver (`try_recv`) into its checksum.
pub fn crossbeam_vec_one_thread(k: u64, n: u64) -> u64 {
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..count(k))
        .map(|_| crossbeam_channel::bounded::<u64>(CAPACITY))
        .unzip();
    let sums: Vec<Checksum> = (0..count(k)).map(|_| Checksum::default()).collect();
    let drain = |rxs: &[crossbeam_channel::Receiver<u64>]| {
        for (rx, sum) in rxs.iter().zip(&sums) {
            while let Ok(x) = rx.try_recv() {
                sum.add(x);
            }
        }
    };
    for x in 0..n {
        for tx in &txs {
            if let Err(crossbeam_channel::TrySendError::Full(v)) = tx.try_send(x) {
                drain(&rxs);
                tx.try_send(v).expect("room after draining");
            }
        }
    }
    drain(&rxs);
    sums.iter().fold(0u64, |a, s| a.wrapping_add(s.get()))
}

// ----- bus -----------------------------------------------------------------------------------

/// `bus::Bus::new(capacity)`, a reader thread each (reader 0 slow when `slow`); blocking
/// `broadcast`.
pub(super) fn bus_threads(capacity: usize, k: u64, n: u64, slow: bool) -> u64 {
    let mut bus = bus::Bus::<u64>::new(capacity);
    let consumers: Vec<_> = (0..count(k))
        .map(|i| {
            let mut rx = bus.add_rx();
            let slow = slow && i == 0;
            thread::spawn(move || {
                let sum = Checksum::default();
                for x in rx.iter() {
                    if slow {
                        black_box(slow_work(x));
                    }
                    sum.add(x);
                }
                sum.get()
            })
        })
        .collect();
    for x in 0..n {
        bus.broadcast(x);
    }
    drop(bus);
    consumers
        .into_iter()
        .fold(0u64, |a, c| a.wrapping_add(c.join().expect("consumer")))
}

/// Peer: `bus::Bus::new(CAPACITY)`, one reader thread each; blocking `broadcast`.
pub fn bus_threads_fast(k: u64, n: u64) -> u64 {
    bus_threads(CAPACITY, k, n, false)
}

/// Peer, `fanout-slow`: as [`bus_threads_fast`], reader 0 slow.
pub fn bus_threads_slow(k: u64, n: u64) -> u64 {
    bus_threads(CAPACITY, k, n, true)
}

/// Peer: `bus` on one thread: `try_broadcast`; when full, drain every reader (`try_recv`).
pub fn bus_one_thread(k: u64, n: u64) -> u64 {
    bus_one_thread_at(CAPACITY, k, n)
}

/// [`bus_one_thread`] with a bus of `capacity`.
pub(super) fn bus_one_thread_at(capacity: usize, k: u64, n: u64) -> u64 {
    let mut bus = bus::Bus::<u64>::new(capacity);
    let mut rxs: Vec<_> = (0..count(k)).map(|_| bus.add_rx()).collect();
    let sums: Vec<Checksum> = (0..count(k)).map(|_| Checksum::default()).collect();
    let drain = |rxs: &mut [bus::BusReader<u64>]| {
        for (rx, sum) in rxs.iter_mut().zip(&sums) {
            while let Ok(x) = rx.try_recv() {
                sum.add(x);
            }
        }
    };
    for x in 0..n {
        if let Err(v) = bus.try_broadcast(x) {
            drain(&mut rxs);
            bus.try_broadcast(v).expect("room after draining");
        }
    }
    drain(&mut rxs);
    sums.iter().fold(0u64, |a, s| a.wrapping_add(s.get()))
}

// ----- multiqueue2 ---------------------------------------------------------------------------

/// `multiqueue2::broadcast_queue(capacity)`, a stream and thread each (stream 0 slow when
/// `slow`); `try_send` retried with a yield while full.
pub(super) fn multiqueue_threads(capacity: usize, k: u64, n: u64, slow: bool) -> u64 {
    let (tx, rx) = multiqueue2::broadcast_queue::<u64>(capacity as _);
    let consumers: Vec<_> = (0..count(k))
        .map(|i| {
            let stream = rx.add_stream();
            let slow = slow && i == 0;
            thread::spawn(move || {
                let sum = Checksum::default();
                while let Ok(x) = stream.recv() {
                    if slow {
                        black_box(slow_work(x));
                    }
                    sum.add(x);
                }
                sum.get()
            })
        })
        .collect();
    rx.unsubscribe();
    for x in 0..n {
        let mut v = x;
        // multiqueue2 has no blocking send: its documented pattern is to retry.
        while let Err(std::sync::mpsc::TrySendError::Full(back)) = tx.try_send(v) {
            v = back;
            thread::yield_now();
        }
    }
    drop(tx);
    consumers
        .into_iter()
        .fold(0u64, |a, c| a.wrapping_add(c.join().expect("consumer")))
}

/// Peer: `multiqueue2::broadcast_queue(CAPACITY)`, one stream and thread per consumer;
/// `try_send` retried with a yield while full.
pub fn multiqueue2_threads(k: u64, n: u64) -> u64 {
    multiqueue_threads(CAPACITY, k, n, false)
}

/// Peer, `fanout-slow`: as [`multiqueue2_threads`], stream 0 slow.
pub fn multiqueue2_threads_slow(k: u64, n: u64) -> u64 {
    multiqueue_threads(CAPACITY, k, n, true)
}

/// Peer: `multiqueue2` on one thread: `try_send`; when full, drain every stream.
pub fn multiqueue2_one_thread(k: u64, n: u64) -> u64 {
    multiqueue2_one_thread_at(CAPACITY, k, n)
}

/// [`multiqueue2_one_thread`] with a queue of `capacity`.
pub(super) fn multiqueue2_one_thread_at(capacity: usize, k: u64, n: u64) -> u64 {
    let (tx, rx) = multiqueue2::broadcast_queue::<u64>(capacity as _);
    let streams: Vec<_> = (0..count(k)).map(|_| rx.add_stream()).collect();
    rx.unsubscribe();
    let sums: Vec<Checksum> = (0..count(k)).map(|_| Checksum::default()).collect();
    let drain = || {
        for (s, sum) in streams.iter().zip(&sums) {
            while let Ok(x) = s.try_recv() {
                sum.add(x);
            }
        }
    };
    for x in 0..n {
        if let Err(std::sync::mpsc::TrySendError::Full(v)) = tx.try_send(x) {
            drain();
            tx.try_send(v).expect("room after draining");
        }
    }
    drain();
    sums.iter().fold(0u64, |a, s| a.wrapping_add(s.get()))
}

// ----- async-broadcast -----------------------------------------------------------------------

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime")
}

fn async_broadcast_tasks(k: u64, n: u64, slow: bool) -> u64 {
    let rt = runtime();
    let (tx, rx) = async_broadcast::broadcast::<u64>(CAPACITY);
    rt.block_on(async move {
        let consumers: Vec<_> = (0..count(k))
            .map(|i| {
                let mut rx = rx.new_receiver();
                let slow = slow && i == 0;
                tokio::spawn(async move {
                    let sum = Checksum::default();
                    while let Ok(x) = rx.recv_direct().await {
                        if slow {
                            black_box(slow_work(x));
                        }
                        sum.add(x);
                    }
                    sum.get()
                })
            })
            .collect();
        drop(rx);
        let producer = tokio::spawn(async move {
            for x in 0..n {
                tx.broadcast_direct(x).await.expect("receivers alive");
            }
        });
        producer.await.expect("producer");
        let mut total = 0u64;
        for c in consumers {
            total = total.wrapping_add(c.await.expect("consumer"));
        }
        total
    })
}

/// Peer: `async_broadcast::broadcast(CAPACITY)` (its default: waits when full), a producer task
/// and one receiver task each on a 2-worker tokio runtime started inside the measured time;
/// the non-boxing `broadcast_direct` / `recv_direct`.
pub fn async_broadcast_tasks_fast(k: u64, n: u64) -> u64 {
    async_broadcast_tasks(k, n, false)
}

/// Peer, `fanout-slow`: as [`async_broadcast_tasks_fast`], receiver 0 slow.
pub fn async_broadcast_tasks_slow(k: u64, n: u64) -> u64 {
    async_broadcast_tasks(k, n, true)
}

/// Peer: `async-broadcast` on one thread, no runtime: `try_broadcast`; when full, drain every
/// receiver (`try_recv`).
pub fn async_broadcast_one_thread(k: u64, n: u64) -> u64 {
    let (tx, rx) = async_broadcast::broadcast::<u64>(CAPACITY);
    let mut rxs: Vec<_> = (0..count(k)).map(|_| rx.new_receiver()).collect();
    drop(rx);
    let sums: Vec<Checksum> = (0..count(k)).map(|_| Checksum::default()).collect();
    let drain = |rxs: &mut [async_broadcast::Receiver<u64>]| {
        for (rx, sum) in rxs.iter_mut().zip(&sums) {
            while let Ok(x) = rx.try_recv() {
                sum.add(x);
            }
        }
    };
    for x in 0..n {
        if let Err(async_broadcast::TrySendError::Full(v)) = tx.try_broadcast(x) {
            drain(&mut rxs);
            tx.try_broadcast(v).expect("room after draining");
        }
    }
    drain(&mut rxs);
    sums.iter().fold(0u64, |a, s| a.wrapping_add(s.get()))
}

// ----- tokio broadcast (lossy) ---------------------------------------------------------------

/// Lossy peer: `tokio::sync::broadcast::channel(CAPACITY)`, a producer task and one receiver
/// task each on a 2-worker runtime. The sender never waits; a receiver that falls behind gets
/// `Lagged(k)` and skips. Returns the number of deliveries made (the harness reports the share).
pub fn tokio_broadcast_tasks(k: u64, n: u64) -> u64 {
    let rt = runtime();
    let (tx, rx) = tokio::sync::broadcast::channel::<u64>(CAPACITY);
    rt.block_on(async move {
        let consumers: Vec<_> = (0..count(k))
            .map(|_| {
                let mut rx = rx.resubscribe();
                tokio::spawn(async move {
                    let sum = Checksum::default();
                    let mut got = 0u64;
                    loop {
                        match rx.recv().await {
                            Ok(x) => {
                                sum.add(x);
                                got += 1;
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                        }
                    }
                    black_box(sum.get());
                    got
                })
            })
            .collect();
        drop(rx);
        let producer = tokio::spawn(async move {
            for x in 0..n {
                let _ = tx.send(x);
            }
        });
        producer.await.expect("producer");
        let mut got = 0u64;
        for c in consumers {
            got += c.await.expect("consumer");
        }
        got
    })
}

fn subscribers(values: &[u64]) -> Vec<Param> {
    values.iter().map(|&k| Param::new(k)).collect()
}

/// The `fanout` scenario: one producer, N subscribers, continuous demand (and ours with
/// `request(1)` per element).
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "fanout",
        title: "One producer, N subscribers (u64, capacity 64): continuous demand",
        param_name: "subscribers",
        params: subscribers(&SUBSCRIBERS),
        implementations: vec![
            imp(
                "rs-impl fanout channel",
                true,
                "fanout::channel(capacity 64): blocking_send per element on the calling thread, which \
                 delivers to every subscriber (unbounded demand) before it returns",
                rs_impl_channel,
            ),
            imp(
                "rs-impl fanout channel, request(1)",
                true,
                "as above, every subscriber calling request(1) from inside each on_next",
                rs_impl_channel_one_by_one,
            ),
            imp(
                "rs-impl fanout channel, burst",
                true,
                "fanout::channel(capacity 64), blocking_send_all(0..n): the burst entry, one \
                 drain-loop entry per run of sends instead of one per element",
                rs_impl_channel_burst,
            ),
            imp(
                "rs-impl FanoutProcessor ← range",
                true,
                "FanoutProcessor(capacity 64) subscribed to source::range(0..n); the processor \
                 asks the range for its free space; all on the calling thread",
                rs_impl_processor,
            ),
            imp(
                "closure loop (ceiling)",
                false,
                "a plain loop calling N boxed closures per element on one thread: no buffer, \
                 no protocol",
                closure_loop,
            ),
            imp(
                "crossbeam Vec<Sender>, threads",
                false,
                "N crossbeam bounded(64) channels, one consumer thread each; send to each",
                crossbeam_vec_threads,
            ),
            imp(
                "crossbeam Vec<Sender>, one thread",
                false,
                "N crossbeam bounded(64) channels on one thread: try_send to each, drain all \
                 when one is full",
                crossbeam_vec_one_thread,
            ),
            imp(
                "bus, threads",
                false,
                "bus::Bus::new(64), one reader thread each, blocking broadcast",
                bus_threads_fast,
            ),
            imp(
                "bus, one thread",
                false,
                "bus on one thread: try_broadcast, drain every reader when full",
                bus_one_thread,
            ),
            imp(
                "multiqueue2, threads",
                false,
                "multiqueue2::broadcast_queue(64), one stream and thread each; try_send \
                 retried with a yield while full",
                multiqueue2_threads,
            ),
            imp(
                "multiqueue2, one thread",
                false,
                "multiqueue2 on one thread: try_send, drain every stream when full",
                multiqueue2_one_thread,
            ),
            imp(
                "async-broadcast, tasks",
                false,
                "async_broadcast::broadcast(64) (waits when full), producer task and one \
                 receiver task each on a 2-worker tokio runtime; broadcast_direct/recv_direct",
                async_broadcast_tasks_fast,
            ),
            imp(
                "async-broadcast, one thread",
                false,
                "async-broadcast on one thread, no runtime: try_broadcast, drain every \
                 receiver when full",
                async_broadcast_one_thread,
            ),
            Implementation {
                lossy: true,
                ..imp(
                    "tokio broadcast, tasks",
                    false,
                    "tokio::sync::broadcast::channel(64): never waits, a lagging receiver skips \
                     (Lagged); producer and receiver tasks on a 2-worker runtime",
                    tokio_broadcast_tasks,
                )
            },
        ],
        expected,
        cross_thread: true,
        deliveries: Some(|k| k),
        ops: None,
    }
}

/// The `fanout-slow` scenario: one subscriber of N does about a microsecond of extra work per
/// element.
#[must_use]
pub fn slow_scenario() -> Scenario {
    Scenario {
        id: "fanout-slow",
        title: "One producer, N subscribers of which one is slow (≈1 µs extra per element)",
        param_name: "subscribers",
        params: subscribers(&SLOW_SUBSCRIBERS),
        implementations: vec![
            imp(
                "rs-impl fanout channel",
                true,
                "fanout::channel(64); the slow subscriber runs on the producer's thread like the \
                 others",
                rs_impl_channel_slow,
            ),
            imp(
                "rs-impl fanout channel, slow one behind a boundary",
                true,
                "fanout::channel(64); the slow subscriber behind \
                 Flow::from_shared_publisher(fanout, 1024).into_publisher(&Runtime::new()), so \
                 it runs on an island of the default runtime; the fast ones on the producer's \
                 thread",
                rs_impl_channel_slow_behind_boundary,
            ),
            imp(
                "closure loop (ceiling)",
                false,
                "N boxed closures on one thread, one of them slow",
                closure_loop_slow,
            ),
            imp(
                "crossbeam Vec<Sender>, threads",
                false,
                "N crossbeam bounded(64) channels, one consumer thread each, one slow",
                crossbeam_vec_threads_slow,
            ),
            imp(
                "bus, threads",
                false,
                "bus::Bus::new(64), one reader thread each, one slow",
                bus_threads_slow,
            ),
            imp(
                "multiqueue2, threads",
                false,
                "multiqueue2::broadcast_queue(64), one stream and thread each, one slow",
                multiqueue2_threads_slow,
            ),
            imp(
                "async-broadcast, tasks",
                false,
                "async_broadcast(64), receiver tasks on a 2-worker runtime, one slow",
                async_broadcast_tasks_slow,
            ),
        ],
        expected,
        cross_thread: true,
        deliveries: Some(|k| k),
        ops: None,
    }
}
