//! Islands on tokio: a `Runtime` made from a tokio handle's `spawn`, and an island future
//! spawned by hand. tokio treats a task that wakes itself inside `poll` as a yield, so the
//! island's default yield works there.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types)]

use rs_api::Publisher;
use rs_impl::flow::Flow;
use rs_impl::island::Runtime;
use rs_impl::source;
use rs_impl::subscriber::{collect, RequestStrategy};

fn tokio_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .expect("tokio runtime")
}

#[test]
fn a_flow_publisher_runs_on_tokio_through_a_spawner() {
    let tokio_rt = tokio_runtime(2);
    let handle = tokio_rt.handle().clone();
    let runtime = Runtime::from_spawner(move |island| {
        handle.spawn(island);
    });
    let p = Flow::from_publisher(source::range(0u64..10_000))
        .map(|x| x * 2)
        .filter(|x| x % 3 == 0)
        .into_publisher(&runtime);
    let (s, h) = collect(RequestStrategy::Prefetch(32));
    p.subscribe(Box::new(s));
    let expected: Vec<u64> = (0..10_000).map(|x| x * 2).filter(|x| x % 3 == 0).collect();
    assert_eq!(h.wait().unwrap(), expected);
}

#[test]
fn an_island_future_spawned_by_hand_on_tokio_completes() {
    let tokio_rt = tokio_runtime(1);
    let (s, h) = collect(RequestStrategy::OneByOne);
    let Ok(island) = Flow::from_iter(0u64..1000)
        .take(10)
        .into_island(Box::new(s))
    else {
        panic!("build")
    };
    let task = tokio_rt.spawn(island);
    tokio_rt.block_on(task).expect("the island task");
    assert_eq!(h.wait().unwrap(), (0..10).collect::<Vec<_>>());
}

#[test]
fn an_endless_island_yields_on_a_single_tokio_worker() {
    let tokio_rt = tokio_runtime(1);
    let handle = tokio_rt.handle().clone();
    let runtime = Runtime::from_spawner(move |island| {
        handle.spawn(island);
    });
    let (endless, stop) = collect::<u64>(RequestStrategy::Unbounded);
    Flow::from_iter(0u64..)
        .with_budget(64)
        .into_publisher(&runtime)
        .subscribe(Box::new(endless));
    let (s, h) = collect(RequestStrategy::OneByOne);
    Flow::from_iter(0u64..100)
        .into_publisher(&runtime)
        .subscribe(Box::new(s));
    let got = match h.wait_timeout(std::time::Duration::from_secs(60)) {
        Ok(r) => r.unwrap(),
        Err(_) => panic!("the finite island was starved on tokio"),
    };
    assert_eq!(got, (0..100).collect::<Vec<_>>());
    stop.cancel();
}
