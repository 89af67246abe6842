//! The fanout allocates nothing per element in steady state: a counting global allocator
//! (every thread) sees the same number of allocations for `n` and for `2n` elements, through
//! the channel and through the processor, with continuous demand, with `request(1)` from inside
//! every `on_next`, and with a slow subscriber that parks and is woken by its requests.
//!
//! Everything measured runs on the test's thread, so only that thread's allocations are counted
//! (a thread-local switch): the test harness's own threads cannot disturb the count.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rs_api::{Error, Publisher, Subscriber, Subscription, SubscriptionRef, UNBOUNDED};
use rs_impl::fanout::{self, FanoutConfig, FanoutProcessor};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Whether this thread's allocations are being counted (const-initialised: reading it
    /// never allocates).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Requests unbounded, or `batch` from inside every `batch`-th `on_next`.
struct Sink {
    batch: u64,
    seen: u64,
    sum: Arc<AtomicU64>,
    sub: Option<SubscriptionRef>,
}

impl Subscriber<u64> for Sink {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(if self.batch == 0 {
            UNBOUNDED
        } else {
            self.batch
        });
        self.sub = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        self.sum.fetch_add(x, Ordering::Relaxed);
        self.seen += 1;
        if self.batch > 0 && self.seen % self.batch == 0 {
            if let Some(s) = &self.sub {
                s.request(self.batch);
            }
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("{e}")
    }
    fn on_complete(&mut self) {}
}

/// A subscriber that never requests by itself; the test requests for it.
struct Slow(Arc<Mutex<Option<SubscriptionRef>>>);

impl Subscriber<u64> for Slow {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        *self.0.lock().unwrap() = Some(s);
    }
    fn on_next(&mut self, _: u64) {}
    fn on_error(&mut self, e: Error) {
        panic!("{e}")
    }
    fn on_complete(&mut self) {}
}

#[derive(Default)]
struct Upstream(AtomicU64);

impl Subscription for Upstream {
    fn request(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
    fn cancel(&self) {}
}

/// Allocations made while running `n` elements through `body` (after a warm-up of `n`).
fn allocations(n: u64, body: &mut dyn FnMut(u64, u64)) -> u64 {
    body(0, n); // warm-up: the buffer grows, vectors reach their size
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    body(n, n);
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

/// Eight [`Sink`]s with `batch`.
fn subscribe_sinks(p: &dyn Publisher<u64>, batch: u64) {
    let sum = Arc::new(AtomicU64::new(0));
    for _ in 0..8 {
        p.subscribe(Box::new(Sink {
            batch,
            seen: 0,
            sum: sum.clone(),
            sub: None,
        }));
    }
}

fn channel_case(batch: u64, slow: bool) -> (u64, u64) {
    let (tx, p) = fanout::channel_with::<u64>(FanoutConfig::new(64).grow_from(2));
    subscribe_sinks(&p, batch);
    let handle = Arc::new(Mutex::new(None));
    if slow {
        p.subscribe(Box::new(Slow(handle.clone())));
    }
    let slow_sub = handle.lock().unwrap().clone();
    let mut body = |from: u64, n: u64| {
        for i in from..from + n {
            if tx.try_send(i).is_err() {
                // Full: the slow subscriber requests (un-parking it through the inbox).
                slow_sub
                    .as_ref()
                    .expect("only the slow one fills the buffer")
                    .request(32);
                tx.try_send(i).unwrap();
            }
        }
    };
    (
        allocations(10_000, &mut body),
        allocations(20_000, &mut body),
    )
}

fn processor_case(batch: u64) -> (u64, u64) {
    let p = FanoutProcessor::<u64>::with_config(FanoutConfig::new(64).grow_from(2));
    let up = Arc::new(Upstream::default());
    let mut upstream = p.clone();
    upstream.on_subscribe(up.clone());
    subscribe_sinks(&p, batch);
    let mut body = |from: u64, n: u64| {
        for i in from..from + n {
            assert!(
                up.0.load(Ordering::Relaxed) > i,
                "the processor keeps asking"
            );
            upstream.on_next(i);
        }
    };
    (
        allocations(10_000, &mut body),
        allocations(20_000, &mut body),
    )
}

#[test]
fn no_allocation_per_element_in_steady_state() {
    for (what, (n, twice_n)) in [
        ("channel, continuous demand", channel_case(0, false)),
        ("channel, request(1) per element", channel_case(1, false)),
        ("channel, request(4) per 4 elements", channel_case(4, false)),
        ("channel, a parked slow subscriber", channel_case(0, true)),
        ("processor, continuous demand", processor_case(0)),
        ("processor, request(1) per element", processor_case(1)),
    ] {
        assert_eq!(
            (n, twice_n),
            (0, 0),
            "{what}: allocations for 10,000 and 20,000 elements after a warm-up"
        );
    }
}
