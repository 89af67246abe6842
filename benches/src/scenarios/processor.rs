//! Scenario `processor`: one source through `IdentityProcessor` to K subscribers, all on the
//! calling thread.
//!
//! Workload: the `u64`s `0..n`, each delivered to every one of K subscribers, which add it to
//! one shared [`Checksum`] (K deliveries per element; the checksum is K times the sum).
//! Throughput is in source elements per second. Parameter: K, the number of subscribers.
//! Everything runs on the calling thread: the processor's serial drain loop runs inside the
//! source's `on_next`. Buffers are 16 elements everywhere (the JVM TCK's processor buffer).

use std::sync::Arc;

use rs_api::{Publisher, PublisherExt};
use rs_impl::processor::IdentityProcessor;
use rs_impl::source::range;
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario};

/// The buffer of every implementation: the processor's, the channels' capacity.
pub const BUFFER: usize = 16;

fn subscribers(k: u64) -> usize {
    usize::try_from(k.max(1)).expect("subscriber count fits usize")
}

/// The checksum of `n` elements delivered to each of `k` subscribers.
///
/// # Examples
///
/// ```
/// assert_eq!(rs_benches::scenarios::processor::expected(3, 4), 18);
/// ```
#[must_use]
pub fn expected(k: u64, n: u64) -> u64 {
    sum_below(k, n).wrapping_mul(k.max(1))
}

/// Ours: `range(0..n)` into `IdentityProcessor::new(16)`, with K `for_each` subscribers
/// (`Prefetch(16)`: request 16, then 8 after each 8) subscribed first.
pub fn rs_impl(k: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let processor = IdentityProcessor::<u64>::new(BUFFER);
    let mut handles = Vec::with_capacity(subscribers(k));
    for _ in 0..subscribers(k) {
        let acc = Arc::clone(&sum);
        let (subscriber, done) = for_each(RequestStrategy::Prefetch(BUFFER), move |x| {
            acc.add(x);
        });
        processor.subscribe(Box::new(subscriber));
        handles.push(done);
    }
    range(0..n).subscribe_with(processor);
    for done in handles {
        done.wait().expect("the processor completes");
    }
    sum.get()
}

/// Ceiling: a plain loop handing each element to K sinks.
pub fn loop_over_sinks(k: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    let k = subscribers(k);
    for x in 0..n {
        for _ in 0..k {
            sum.add(x);
        }
    }
    sum.get()
}

/// Peer: `tokio::sync::broadcast::channel(16)` with K receivers, on one thread: send 16
/// elements, then every receiver drains them with `try_recv` (nothing is lost: nobody lags).
pub fn tokio_broadcast(k: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    let (tx, rx) = tokio::sync::broadcast::channel::<u64>(BUFFER);
    let mut receivers: Vec<_> = (0..subscribers(k)).map(|_| tx.subscribe()).collect();
    drop(rx);
    let mut x = 0;
    while x < n {
        let end = (x + BUFFER as u64).min(n);
        for v in x..end {
            tx.send(v).expect("receivers alive");
        }
        for r in &mut receivers {
            while let Ok(v) = r.try_recv() {
                sum.add(v);
            }
        }
        x = end;
    }
    sum.get()
}

/// Peer: K crossbeam-channel `bounded(16)` channels, on one thread: each element is sent to
/// every channel (`try_send`); every 16 elements, each channel is drained (`try_iter`).
pub fn crossbeam_channels(k: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    let channels: Vec<_> = (0..subscribers(k))
        .map(|_| crossbeam_channel::bounded::<u64>(BUFFER))
        .collect();
    let mut x = 0;
    while x < n {
        let end = (x + BUFFER as u64).min(n);
        for v in x..end {
            for (tx, _) in &channels {
                tx.try_send(v).expect("room for a batch");
            }
        }
        for (_, rx) in &channels {
            for v in rx.try_iter() {
                sum.add(v);
            }
        }
        x = end;
    }
    sum.get()
}

/// The `processor` scenario.
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "processor",
        title: "Identity processor: one source → processor → K subscribers, on one thread",
        param_name: "subscribers",
        params: [1, 8, 32].into_iter().map(Param::new).collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl range → IdentityProcessor → K for_each",
                ours: true,
                per_param: true,
                what: "rs_impl::source::range into processor::IdentityProcessor::new(16) with K \
                       subscriber::for_each(Prefetch(16)) subscribers (coordinated emission)",
                run: rs_impl,
                lossy: false,
            },
            Implementation {
                name: "loop over K sinks (ceiling)",
                ours: false,
                per_param: true,
                what: "for each element, a plain loop adding it K times: no protocol at all",
                run: loop_over_sinks,
                lossy: false,
            },
            Implementation {
                name: "tokio broadcast same thread",
                ours: false,
                per_param: true,
                what: "tokio::sync::broadcast::channel(16) with K receivers: send 16, then each \
                       receiver drains them with try_recv (multicast, no loss at this pace)",
                run: tokio_broadcast,
                lossy: false,
            },
            Implementation {
                name: "crossbeam-channel ×K same thread",
                ours: false,
                per_param: true,
                what: "K crossbeam bounded(16) channels: each element try_sent to every channel, \
                       each channel drained every 16 elements",
                run: crossbeam_channels,
                lossy: false,
            },
        ],
        expected,
        cross_thread: false,
        deliveries: None,
        ops: None,
    }
}
