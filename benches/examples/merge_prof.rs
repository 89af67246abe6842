//! A quick look at one merge shape without the report (for a profiler):
//! `cargo run --release -p rs-benches --example merge_prof -- [shape] [size] [ops]`, shape one
//! of `iter` (merge of `size` known iterators of `size`), `subscribed` (the same, subscribed),
//! `just` (a merge of `size` values), `flatjust` (`range(0..size).flat_map(just)`), `flat` (a flat
//! map of `size` ranges of `size`, the outer pulled), `observe` (`observe_on` of a range of
//! `size` on a pool), `async` (a merge of `size` islands of `size` on a 2-thread pool, each
//! op's time and merge stats printed); and futures' `flat_map` on the same shapes, for counting the gap:
//! `fut-flatjust`, `fut-flat`.
// Bench code: std types are fine here.
#![allow(clippy::disallowed_types)]

use std::sync::Arc;
use std::time::Instant;

use futures::executor::block_on;
use futures::{future::ready, stream, StreamExt};
use rs_api::Publisher;
use rs_impl::flow::Flow;
use rs_impl::merge::{self, MergeExt};
use rs_impl::source::{from_iter, just, range};
use rs_impl::subscriber::{for_each, RequestStrategy};
use rs_impl::Runtime;

fn run<P: Publisher<u64>>(p: &P, sum: &Arc<std::sync::atomic::AtomicU64>) {
    let acc = sum.clone();
    let (s, h) = for_each(RequestStrategy::Unbounded, move |x: u64| {
        acc.fetch_add(x, std::sync::atomic::Ordering::Relaxed);
    });
    p.subscribe(Box::new(s));
    h.wait().expect("completes");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let shape = args.get(1).map_or("iter", String::as_str);
    let size: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let ops: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(20);
    let sum = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let runtime = Runtime::with_threads(2).expect("pool");
    let start = Instant::now();
    let mut elements = 0;
    for _ in 0..ops {
        match shape {
            "iter" => {
                run(
                    &merge::merge(
                        (0..size)
                            .map(|k| range(k * size..(k + 1) * size))
                            .collect::<Vec<_>>(),
                    ),
                    &sum,
                );
                elements += size * size;
            }
            "subscribed" => {
                let inners: Vec<Arc<dyn Publisher<u64> + Send + Sync>> = (0..size)
                    .map(|k| -> Arc<dyn Publisher<u64> + Send + Sync> {
                        Arc::new(range(k * size..(k + 1) * size))
                    })
                    .collect();
                run(&merge::merge(inners), &sum);
                elements += size * size;
            }
            "just" => {
                run(&merge::merge((0..size).map(just).collect::<Vec<_>>()), &sum);
                elements += size;
            }
            "flatjust" => {
                run(&range(0..size).flat_map(just, 128, 128), &sum);
                elements += size;
            }
            "flat" => {
                run(
                    &from_iter((0..size).map(move |k| k * size..(k + 1) * size))
                        .flat_map(range, 128, 128),
                    &sum,
                );
                elements += size * size;
            }
            "fut-flatjust" => {
                let acc = sum.clone();
                block_on(
                    stream::iter(0..size)
                        .flat_map(|x| stream::once(ready(x)))
                        .for_each(move |x| {
                            acc.fetch_add(x, std::sync::atomic::Ordering::Relaxed);
                            ready(())
                        }),
                );
                elements += size;
            }
            "fut-flat" => {
                let acc = sum.clone();
                block_on(
                    stream::iter((0..size).map(move |k| k * size..(k + 1) * size))
                        .flat_map(stream::iter)
                        .for_each(move |x| {
                            acc.fetch_add(x, std::sync::atomic::Ordering::Relaxed);
                            ready(())
                        }),
                );
                elements += size * size;
            }
            "observe" => {
                run(&range(0..size).observe_on(&runtime, 128), &sum);
                elements += size;
            }
            "async" => {
                let m = merge::merge(
                    (0..size)
                        .map(|k| Flow::from_iter(k * size..(k + 1) * size).into_publisher(&runtime))
                        .collect::<Vec<_>>(),
                );
                let t = Instant::now();
                run(&m, &sum);
                let st = m.stats();
                println!(
                    "op {:.2} ms: queues {} drain passes {} fast path {}",
                    t.elapsed().as_secs_f64() * 1e3,
                    st.queues,
                    st.drain_passes,
                    st.fast_path
                );
                elements += size * size;
            }
            other => panic!("unknown shape {other}"),
        }
    }
    let t = start.elapsed().as_secs_f64();
    println!(
        "{shape} {size}: {ops} ops, {:.1} M elements/s, {:.0} ops/s",
        elements as f64 / t / 1e6,
        ops as f64 / t
    );
}
