//! Scenario `pipeline`: a producer thread hands `u64`s to a consumer thread.
//!
//! This is **not** the batching async boundary (a later issue builds it and adds the
//! `boundary` scenario); it is the cross-thread handoff that boundary will have to beat,
//! measured today with what exists. The calling thread produces `0..n`; one spawned thread
//! consumes them into a [`Checksum`]. Parameter k: elements in flight (channel capacity; for
//! the batched variant, two batches of k/2). Thread start and channel creation are inside the
//! measured time (amortised over `n`). On a 2-core machine shared with other work, the
//! figures include scheduling noise: read the ratios.

use std::sync::Arc;
use std::thread;

use futures::{SinkExt, StreamExt};
use rs_api::{Error, Publisher, Subscriber, SubscriptionRef};
use rs_impl::source::range;
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

fn capacity(k: u64) -> usize {
    usize::try_from(k.max(1)).expect("capacity fits usize")
}

/// Spawns the consumer thread of the crossbeam-based variants.
fn crossbeam_consumer<T, F>(rx: crossbeam_channel::Receiver<T>, mut f: F) -> thread::JoinHandle<u64>
where
    T: Send + 'static,
    F: FnMut(&Checksum, T) + Send + 'static,
{
    thread::spawn(move || {
        let sum = Checksum::default();
        for item in rx {
            f(&sum, item);
        }
        sum.get()
    })
}

/// Ours, per element: `range(0..n)` drained on the calling thread into `for_each` (unbounded
/// demand), whose closure `send`s each element into a crossbeam `bounded(k)`; the blocking
/// send is the backpressure. Cost = our source + the crossbeam handoff.
pub fn rs_impl_per_element(k: u64, n: u64) -> u64 {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(capacity(k));
    let consumer = crossbeam_consumer(rx, |sum, x| sum.add(x));
    let (subscriber, done) = for_each(RequestStrategy::Unbounded, move |x: u64| {
        tx.send(x).expect("consumer alive");
    });
    range(0..n).subscribe(Box::new(subscriber));
    done.wait().expect("range completes");
    consumer.join().expect("consumer thread")
}

/// A subscriber that forwards elements in `Vec` batches through a crossbeam channel.
struct BatchForwarder {
    tx: Option<crossbeam_channel::Sender<Vec<u64>>>,
    batch: Vec<u64>,
    size: usize,
}

impl BatchForwarder {
    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(self.size));
        if let Some(tx) = &self.tx {
            tx.send(full).expect("consumer alive");
        }
    }
}

impl Subscriber<u64> for BatchForwarder {
    fn on_subscribe(&mut self, subscription: SubscriptionRef) {
        subscription.request(rs_api::UNBOUNDED);
    }

    fn on_next(&mut self, item: u64) {
        self.batch.push(item);
        if self.batch.len() == self.size {
            self.flush();
        }
    }

    fn on_error(&mut self, _error: Error) {
        // Dropping the sender ends the consumer; the checksum then shows the loss.
        self.tx = None;
    }

    fn on_complete(&mut self) {
        self.flush();
        self.tx = None;
    }
}

/// Ours, batched: `range(0..n)` drained on the calling thread into a subscriber that sends
/// `Vec<u64>` batches of k/2 through a crossbeam `bounded(1)` (at most k elements queued or
/// being filled); the consumer iterates each batch. A hand-rolled preview of the batching
/// boundary: one channel operation and one allocation per batch instead of per element.
pub fn rs_impl_batched(k: u64, n: u64) -> u64 {
    let size = capacity(k / 2);
    let (tx, rx) = crossbeam_channel::bounded::<Vec<u64>>(1);
    let consumer = crossbeam_consumer(rx, |sum, batch: Vec<u64>| {
        for x in batch {
            sum.add(x);
        }
    });
    let forwarder = BatchForwarder {
        tx: Some(tx),
        batch: Vec::with_capacity(size),
        size,
    };
    range(0..n).subscribe(Box::new(forwarder));
    consumer.join().expect("consumer thread")
}

/// Peer: crossbeam-channel `bounded(k)`, `send` per element on the calling thread, `recv` on
/// the consumer thread.
pub fn crossbeam_bounded(k: u64, n: u64) -> u64 {
    let (tx, rx) = crossbeam_channel::bounded::<u64>(capacity(k));
    let consumer = crossbeam_consumer(rx, |sum, x| sum.add(x));
    for x in 0..n {
        tx.send(x).expect("consumer alive");
    }
    drop(tx);
    consumer.join().expect("consumer thread")
}

/// Peer: `tokio::sync::mpsc::channel(k)` between two tasks on a 2-worker multi-thread tokio
/// runtime (created inside the measured time); the tasks may share a worker.
pub fn tokio_mpsc(k: u64, n: u64) -> u64 {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio runtime");
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u64>(capacity(k));
    rt.block_on(async move {
        let producer = tokio::spawn(async move {
            for x in 0..n {
                tx.send(x).await.expect("consumer alive");
            }
        });
        let consumer = tokio::spawn(async move {
            let sum = Checksum::default();
            while let Some(x) = rx.recv().await {
                sum.add(x);
            }
            sum.get()
        });
        producer.await.expect("producer task");
        consumer.await.expect("consumer task")
    })
}

/// Peer: `futures::channel::mpsc::channel(k - 1)` (its capacity is buffer + one slot per
/// sender, so k in all); `block_on(send_all)` on the calling thread, `block_on(for_each)` on
/// the consumer thread.
pub fn futures_mpsc(k: u64, n: u64) -> u64 {
    let (mut tx, rx) = futures::channel::mpsc::channel::<u64>(capacity(k) - 1);
    let consumer = thread::spawn(move || {
        let sum = Arc::new(Checksum::default());
        let acc = Arc::clone(&sum);
        futures::executor::block_on(rx.for_each(move |x| {
            acc.add(x);
            futures::future::ready(())
        }));
        sum.get()
    });
    futures::executor::block_on(async {
        let mut items = futures::stream::iter(0..n).map(Ok);
        tx.send_all(&mut items).await.expect("consumer alive");
        tx.close_channel();
    });
    drop(tx);
    consumer.join().expect("consumer thread")
}

/// The `pipeline` scenario.
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "pipeline",
        title: "Cross-thread pipeline: producer thread → consumer thread, u64 payload",
        param_name: "elements in flight (channel capacity)",
        params: [16, 256, 1024].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl → crossbeam, per element",
                ours: true,
                per_param: true,
                what: "our range drained on the producer thread into for_each, which sends each \
                       element into crossbeam bounded(k): our source cost + crossbeam's handoff",
                run: rs_impl_per_element,
                lossy: false,
            },
            Implementation {
                name: "rs-impl → crossbeam, Vec batches of k/2",
                ours: true,
                per_param: true,
                what: "our range into a subscriber that sends Vec batches of k/2 through \
                       crossbeam bounded(1): a hand-rolled preview of the batching boundary",
                run: rs_impl_batched,
                lossy: false,
            },
            Implementation {
                name: "crossbeam-channel bounded",
                ours: false,
                per_param: true,
                what: "crossbeam_channel::bounded(k): send per element / recv per element",
                run: crossbeam_bounded,
                lossy: false,
            },
            Implementation {
                name: "tokio mpsc",
                ours: false,
                per_param: true,
                what: "tokio::sync::mpsc::channel(k), producer and consumer tasks on a 2-worker \
                       runtime (runtime start inside the measured time)",
                run: tokio_mpsc,
                lossy: false,
            },
            Implementation {
                name: "futures mpsc",
                ours: false,
                per_param: true,
                what: "futures::channel::mpsc::channel(k-1) (+1 slot per sender), send_all on \
                       the producer thread, for_each under block_on on the consumer thread",
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
