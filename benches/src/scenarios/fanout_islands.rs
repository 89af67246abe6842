//! Scenarios `fanout-islands` and `fanout-1024`: the fanout at capacity 1024, with every
//! subscriber on an island of its own (the broadcast-channel use: receivers off the
//! producer's thread) and on the producer's thread.
//!
//! Every subscriber (receiver) adds each element to a [`Checksum`] of its own; a run returns
//! the sum, which must be N × `sum_below(n)`. The figure is **input** elements per second.
//! Parameter: subscribers N ∈ {1, 8, 32, 128}. Capacity [`CAPACITY`] everywhere: the
//! fanout's, each island's input buffer, each peer's channel.
//!
//! * `fanout-islands`: ours subscribes N × `Flow::from_shared_publisher(fanout, 1024)
//!   .into_publisher(&runtime)` (the default runtime: one worker per core), each island into
//!   a summing `for_each`; the calling thread sends. The peers with backpressure and a
//!   thread per receiver: `bus` and `multiqueue2`, and crossbeam's `Vec<Sender>`.
//! * `fanout-1024`: the `fanout` scenario's rows at capacity 1024, every subscriber on the
//!   producer's thread, against the closure loop (the ceiling) and the one-thread peers.

use std::sync::Arc;
use std::thread;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef, UNBOUNDED};
use rs_impl::fanout;
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::subscriber::{for_each, RequestStrategy};

use super::fanout::{self as shared, expected, sums, total};
use super::imp;
use crate::scenario::{Checksum, Param, Scenario};

/// The capacity of every buffer in these scenarios.
pub const CAPACITY: usize = 1024;

/// The subscriber counts.
const SUBSCRIBERS: [u64; 4] = [1, 8, 32, 128];

/// How ours sends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Send {
    /// `blocking_send` per element.
    Each,
    /// `blocking_send_all(0..n)`: the burst entry.
    Burst,
}

fn send(tx: &fanout::FanoutSender<u64>, n: u64, how: Send) {
    match how {
        Send::Each => {
            for x in 0..n {
                tx.blocking_send(x).expect("subscribers never leave");
            }
        }
        Send::Burst => tx.blocking_send_all(0..n).expect("subscribers never leave"),
    }
    tx.complete();
}

/// Ours, `fanout-islands`: every subscriber on an island of its own.
fn ours_islands(k: u64, n: u64, how: Send) -> u64 {
    let runtime = Runtime::new().expect("the island thread pool starts");
    let (tx, p) = fanout::channel::<u64>(CAPACITY);
    let sums = sums(k);
    let shared: rs_impl::flow::SharedPublisher<u64> = Arc::new(p.clone());
    let handles: Vec<_> = sums
        .iter()
        .map(|sum| {
            let sum = sum.clone();
            let (s, done) = for_each(RequestStrategy::Unbounded, move |x: u64| sum.add(x));
            Flow::from_shared_publisher(shared.clone(), CAPACITY)
                .into_publisher(&runtime)
                .subscribe(Box::new(s));
            done
        })
        .collect();
    // The islands subscribe when they start; a late subscriber would start at the oldest
    // retained element, so wait for every one.
    while p.stats().subscribers < sums.len() {
        thread::yield_now();
    }
    send(&tx, n, how);
    for h in handles {
        h.wait().expect("every island completes");
    }
    total(&sums)
}

/// Ours: N islands, `blocking_send` per element.
pub fn rs_impl_islands(k: u64, n: u64) -> u64 {
    ours_islands(k, n, Send::Each)
}

/// Ours: N islands, the burst entry.
pub fn rs_impl_islands_burst(k: u64, n: u64) -> u64 {
    ours_islands(k, n, Send::Burst)
}

/// A subscriber with unbounded demand adding to its checksum (on the producer's thread).
struct Sum(Arc<Checksum>, bool, Option<SubscriptionRef>);

impl Subscriber<u64> for Sum {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(if self.1 { 1 } else { UNBOUNDED });
        self.2 = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        self.0.add(x);
        if self.1 {
            if let Some(s) = &self.2 {
                s.request(1);
            }
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {}
}

fn ours_here(k: u64, n: u64, how: Send, one_by_one: bool) -> u64 {
    let (tx, p) = fanout::channel::<u64>(CAPACITY);
    let sums = sums(k);
    for sum in &sums {
        p.subscribe(Box::new(Sum(sum.clone(), one_by_one, None)));
    }
    send(&tx, n, how);
    total(&sums)
}

/// Ours, `fanout-1024`: `blocking_send` per element, subscribers on the producer's thread.
pub fn rs_impl_channel(k: u64, n: u64) -> u64 {
    ours_here(k, n, Send::Each, false)
}

/// Ours, `fanout-1024`: the burst entry.
pub fn rs_impl_channel_burst(k: u64, n: u64) -> u64 {
    ours_here(k, n, Send::Burst, false)
}

/// Ours, `fanout-1024`: `request(1)` from inside every `on_next`.
pub fn rs_impl_channel_one_by_one(k: u64, n: u64) -> u64 {
    ours_here(k, n, Send::Each, true)
}

/// The ceiling: N boxed closures per element on one thread.
pub fn closure_loop(k: u64, n: u64) -> u64 {
    shared::closures(k, n, false)
}

/// Peer: `bus::Bus::new(CAPACITY)`, one reader thread each, blocking `broadcast`.
pub fn bus_threads(k: u64, n: u64) -> u64 {
    shared::bus_threads(CAPACITY, k, n, false)
}

/// Peer: `multiqueue2::broadcast_queue(CAPACITY)`, one stream and thread each; `try_send`
/// retried with a yield while full.
pub fn multiqueue2_threads(k: u64, n: u64) -> u64 {
    shared::multiqueue_threads(CAPACITY, k, n, false)
}

/// Peer: N crossbeam `bounded(CAPACITY)` channels, one consumer thread each.
pub fn crossbeam_vec_threads(k: u64, n: u64) -> u64 {
    shared::crossbeam_threads(CAPACITY, k, n, false)
}

/// Peer: `multiqueue2` on one thread: `try_send`; when full, drain every stream.
pub fn multiqueue2_one_thread(k: u64, n: u64) -> u64 {
    shared::multiqueue2_one_thread_at(CAPACITY, k, n)
}

/// Peer: `bus` on one thread: `try_broadcast`; when full, drain every reader.
pub fn bus_one_thread(k: u64, n: u64) -> u64 {
    shared::bus_one_thread_at(CAPACITY, k, n)
}

fn params() -> Vec<Param> {
    SUBSCRIBERS.iter().copied().map(Param::new).collect()
}

/// The `fanout-islands` scenario: every subscriber on an island of its own.
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::fanout_islands::islands_scenario();
/// for imp in &s.implementations {
///     assert_eq!((imp.run)(8, 2000), (s.expected)(8, 2000), "{}", imp.name);
/// }
/// ```
#[must_use]
pub fn islands_scenario() -> Scenario {
    Scenario {
        id: "fanout-islands",
        title: "One producer, N subscribers each on an island of its own (u64, capacity 1024)",
        param_name: "subscribers",
        params: params(),
        implementations: vec![
            imp(
                "rs-impl fanout → N islands",
                true,
                "fanout::channel(1024), N × Flow::from_shared_publisher(fanout, 1024).into_publisher(default runtime) \
                 into a summing for_each; blocking_send per element on the calling thread",
                rs_impl_islands,
            ),
            imp(
                "rs-impl fanout → N islands, burst",
                true,
                "the same, sent with blocking_send_all(0..n) (the burst entry)",
                rs_impl_islands_burst,
            ),
            imp(
                "bus, threads",
                false,
                "bus::Bus::new(1024), one reader thread each, blocking broadcast",
                bus_threads,
            ),
            imp(
                "multiqueue2, threads",
                false,
                "multiqueue2::broadcast_queue(1024), one stream and thread each; try_send retried \
                 with a yield while full",
                multiqueue2_threads,
            ),
            imp(
                "crossbeam Vec<Sender>, threads",
                false,
                "N crossbeam bounded(1024) channels, one consumer thread each; send to each",
                crossbeam_vec_threads,
            ),
        ],
        expected,
        cross_thread: true,
        deliveries: Some(|k| k),
        ops: None,
    }
}

/// The `fanout-1024` scenario: the fanout rows at capacity 1024, subscribers on the
/// producer's thread.
///
/// # Examples
///
/// ```
/// let s = rs_benches::scenarios::fanout_islands::capacity_scenario();
/// for imp in &s.implementations {
///     assert_eq!((imp.run)(8, 3000), (s.expected)(8, 3000), "{}", imp.name);
/// }
/// ```
#[must_use]
pub fn capacity_scenario() -> Scenario {
    Scenario {
        id: "fanout-1024",
        title: "One producer, N subscribers on its thread (u64, capacity 1024)",
        param_name: "subscribers",
        params: params(),
        implementations: vec![
            imp(
                "rs-impl fanout channel",
                true,
                "fanout::channel(1024): blocking_send per element, delivered to every subscriber \
                 (unbounded demand) before it returns",
                rs_impl_channel,
            ),
            imp(
                "rs-impl fanout channel, burst",
                true,
                "the same with blocking_send_all(0..n): one drain-loop entry per burst",
                rs_impl_channel_burst,
            ),
            imp(
                "rs-impl fanout channel, request(1)",
                true,
                "blocking_send per element, every subscriber calling request(1) from inside each on_next",
                rs_impl_channel_one_by_one,
            ),
            imp(
                "closure loop (ceiling)",
                false,
                "N boxed closures called per element on one thread: no buffer, no protocol",
                closure_loop,
            ),
            imp(
                "multiqueue2, one thread",
                false,
                "multiqueue2 (1024) on one thread: try_send, drain every stream when full",
                multiqueue2_one_thread,
            ),
            imp(
                "bus, one thread",
                false,
                "bus (1024) on one thread: try_broadcast, drain every reader when full",
                bus_one_thread,
            ),
        ],
        expected,
        cross_thread: false,
        deliveries: Some(|k| k),
        ops: None,
    }
}
