//! Allocation per element through batching boundaries, counted by a global allocator on every
//! thread: none in steady state.
//!
//! A flow of 1,100,000 elements crosses two boundaries into a subscriber that reads the
//! process-wide allocation counter when element 100,000 arrives (after the warm-up: islands,
//! rings, runtimes and the first wake-ups are made) and again at element 1,100,000. Between the
//! two, a million elements went through both boundaries — thousands of batches, flushes,
//! grants, parks and wake-ups — and the count of allocations must be exactly zero.
//!
//! The islands run on executors whose wake-up allocates nothing, so that the count is ours:
//! each island on a thread of its own under `futures::executor::block_on` (a wake-up is a
//! thread unpark), and a tokio multi-thread runtime (a wake-up pushes a task header it
//! already owns; the runtime is warmed up by a whole run first, as a worker allocates the list
//! in which it keeps yielding tasks' wakers the first time a task yields on it). The default runtime (futures' `ThreadPool`) is measured too, and is allowed
//! what its own queue costs: its wake-up sends a message on a `std::sync::mpsc` channel, which
//! allocates a block per 31 messages, and a yield spawns a task; that is the executor's, and
//! the test bounds it at one allocation per 1,000 elements.
//!
//! Its own test target (its own process): the global allocator counts everything.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use rs_api::{Error, Publisher, Subscriber, SubscriptionRef, UNBOUNDED};
use rs_impl::boundary::BoundaryConfig;
use rs_impl::flow::{Flow, Shape};
use rs_impl::island::Runtime;

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::ALLOCS;

/// The tests run one at a time: the counter sees every thread of the process.
static SERIAL: Mutex<()> = Mutex::new(());

const WARM_UP: u64 = 100_000;
const MEASURED: u64 = 1_000_000;

/// Reads the allocation counter at element `WARM_UP` and at the last element; allocates
/// nothing per element itself.
struct Window {
    seen: u64,
    at_start: Arc<AtomicU64>,
    at_end: Arc<AtomicU64>,
    done: Arc<AtomicU64>,
}

impl Subscriber<u64> for Window {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(UNBOUNDED);
    }
    fn on_next(&mut self, x: u64) {
        assert_eq!(x, self.seen + 1, "order");
        self.seen += 1;
        if self.seen == WARM_UP {
            self.at_start
                .store(ALLOCS.load(Ordering::SeqCst), Ordering::SeqCst);
        } else if self.seen == WARM_UP + MEASURED {
            self.at_end
                .store(ALLOCS.load(Ordering::SeqCst), Ordering::SeqCst);
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}");
    }
    fn on_complete(&mut self) {
        self.done.store(self.seen, Ordering::SeqCst);
    }
}

/// The flow: two boundaries (rings of 1024 and 256), a map on each island.
fn flow() -> Flow<impl Shape<Out = u64>> {
    Flow::from_iter(0..WARM_UP + MEASURED)
        .map(|x| x + 1)
        .async_boundary()
        .map(|x| x)
        .async_boundary_with(BoundaryConfig::new().size(256))
        .map(|x| x)
}

/// Runs the flow with `spawn` handing out its islands; returns the allocations in the window.
fn allocations_in_window(run: impl FnOnce(Window)) -> u64 {
    let at_start = Arc::new(AtomicU64::new(u64::MAX));
    let at_end = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicU64::new(0));
    run(Window {
        seen: 0,
        at_start: at_start.clone(),
        at_end: at_end.clone(),
        done: done.clone(),
    });
    // Polled without allocating (no channel, no lock with a waiter queue).
    while done.load(Ordering::SeqCst) == 0 {
        thread::yield_now();
    }
    assert_eq!(done.load(Ordering::SeqCst), WARM_UP + MEASURED);
    at_end.load(Ordering::SeqCst) - at_start.load(Ordering::SeqCst)
}

#[test]
fn zero_allocations_per_element_with_each_island_on_its_own_thread() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let threads = Mutex::new(Vec::new());
    let allocs = allocations_in_window(|w| {
        let mut islands = flow().into_islands(Box::new(w)).expect("three islands");
        assert_eq!(islands.len(), 3);
        for island in &mut islands {
            island.start();
        }
        for island in islands {
            threads
                .lock()
                .unwrap()
                .push(thread::spawn(move || futures::executor::block_on(island)));
        }
    });
    for t in threads.into_inner().unwrap() {
        t.join().unwrap();
    }
    assert_eq!(
        allocs, 0,
        "allocations over {MEASURED} elements in steady state"
    );
}

#[test]
fn zero_allocations_per_element_on_tokio() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("tokio");
    let handle = tokio.handle().clone();
    let runtime = Runtime::from_spawner(move |island| {
        handle.spawn(island);
    });
    // A whole run first: a tokio worker keeps the wakers of tasks that yield (as islands do
    // after their budget) in a `Vec` it allocates the first time one yields on it — once per
    // worker, the runtime's warm-up, not ours.
    allocations_in_window(|w| flow().into_publisher(&runtime).subscribe(Box::new(w)));
    let allocs = allocations_in_window(|w| flow().into_publisher(&runtime).subscribe(Box::new(w)));
    assert_eq!(
        allocs, 0,
        "allocations over {MEASURED} elements in steady state"
    );
}

#[test]
fn the_default_runtime_allocates_only_for_its_own_queue() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let runtime = Runtime::with_threads(2).expect("thread pool");
    let allocs = allocations_in_window(|w| flow().into_publisher(&runtime).subscribe(Box::new(w)));
    println!("default runtime: {allocs} allocations over {MEASURED} elements");
    assert!(
        allocs <= MEASURED / 1_000,
        "{allocs} allocations over {MEASURED} elements"
    );
}
