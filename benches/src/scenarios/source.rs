//! Scenario `source`: a cold source drained into a subscriber on the calling thread.
//!
//! Workload: the `u64`s `0..n`, each added to a [`Checksum`]. Parameter: the request size of
//! our subscriber (1 = one-by-one, re-entrant `request(1)` from `on_next`; k = prefetch k,
//! replenished by k/2; unbounded = one `request(u64::MAX)`), and the batch size of the
//! crossbeam peer. See benches/README.md for what each peer measures.

use std::sync::Arc;

use futures::StreamExt;
use rs_api::Publisher;
use rs_impl::source::range;
use rs_impl::subscriber::{for_each, RequestStrategy};

use crate::scenario::{sum_below, Checksum, Implementation, Param, Scenario, UNBOUNDED};

/// The subscriber's request strategy for a parameter value.
#[must_use]
pub fn strategy(param: u64) -> RequestStrategy {
    match param {
        UNBOUNDED => RequestStrategy::Unbounded,
        0 | 1 => RequestStrategy::OneByOne,
        k => RequestStrategy::Prefetch(usize::try_from(k).expect("a prefetch size fits usize")),
    }
}

/// Ours: `rs_impl::source::range(0..n)` into `rs_impl::subscriber::for_each` with the request
/// strategy of `param`, all on the calling thread (the serial drain loop runs in `request`).
pub fn rs_impl(param: u64, n: u64) -> u64 {
    let sum = Arc::new(Checksum::default());
    let acc = Arc::clone(&sum);
    let (subscriber, done) = for_each(strategy(param), move |x: u64| acc.add(x));
    range(0..n).subscribe(Box::new(subscriber));
    done.wait().expect("range completes");
    sum.get()
}

/// Ceiling: a plain `for` loop over `0..n`.
pub fn iterator_loop(_param: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    for x in 0..n {
        sum.add(x);
    }
    sum.get()
}

/// Peer: `futures::executor::block_on(futures::stream::iter(0..n).for_each(..))`.
pub fn futures_stream_iter(_param: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    futures::executor::block_on(futures::stream::iter(0..n).for_each(|x| {
        sum.add(x);
        futures::future::ready(())
    }));
    sum.get()
}

/// Peer: a crossbeam-channel handoff on one thread. Bounded(k): send k elements (`try_send`),
/// then drain them (`try_iter`), repeat. Unbounded: an unbounded channel, send all, drain all.
pub fn crossbeam_same_thread(param: u64, n: u64) -> u64 {
    let sum = Checksum::default();
    if param == UNBOUNDED {
        let (tx, rx) = crossbeam_channel::unbounded();
        for x in 0..n {
            tx.send(x).expect("receiver alive");
        }
        for x in rx.try_iter() {
            sum.add(x);
        }
        return sum.get();
    }
    let k = param.max(1);
    let (tx, rx) = crossbeam_channel::bounded(usize::try_from(k).expect("capacity fits usize"));
    let mut next = 0;
    while next < n {
        let end = n.min(next + k);
        for x in next..end {
            tx.try_send(x).expect("room for a batch of k");
        }
        next = end;
        for x in rx.try_iter() {
            sum.add(x);
        }
    }
    sum.get()
}

/// The `source` scenario.
#[must_use]
pub fn scenario() -> Scenario {
    Scenario {
        id: "source",
        title: "Source drained into a subscriber on one thread (per-element cost)",
        param_name: "request size (our subscriber) / batch size (crossbeam)",
        params: [1, 16, 256, UNBOUNDED]
            .into_iter()
            .map(Param::new)
            .collect(),
        implementations: vec![
            Implementation {
                name: "rs-impl range → for_each",
                ours: true,
                per_param: true,
                what: "rs_impl::source::range into subscriber::for_each with the request \
                       strategy of the parameter (1 = re-entrant one-by-one)",
                run: rs_impl,
                lossy: false,
            },
            Implementation {
                name: "iterator loop (ceiling)",
                ours: false,
                per_param: false,
                what: "a plain for loop over 0..n: no protocol at all, the ceiling",
                run: iterator_loop,
                lossy: false,
            },
            Implementation {
                name: "futures stream::iter",
                ours: false,
                per_param: false,
                what: "block_on(futures::stream::iter(0..n).for_each(..)): pull-based, no \
                       demand protocol",
                run: futures_stream_iter,
                lossy: false,
            },
            Implementation {
                name: "crossbeam-channel same thread",
                ours: false,
                per_param: true,
                what: "bounded(k) channel filled with k elements then drained, on one thread \
                       (unbounded: send all, then drain all): queue cost without contention",
                run: crossbeam_same_thread,
                lossy: false,
            },
        ],
        expected: sum_below,
        cross_thread: false,
        deliveries: None,
        ops: None,
    }
}
