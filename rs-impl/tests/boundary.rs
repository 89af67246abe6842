//! The batching async boundary: Pekko PR #3288's ten regression scenarios (Pekko's `FusingSpec`
//! additions), each on the default runtime and on tokio, then the
//! boundary subscriber on its own, the output side's flush points, and what is dropped when.
//!
//! Waits are bounded by a number of polls (`support::wait_until`) only so that a bug fails
//! instead of hanging; every assertion is on elements, signals and counts, never on time. The
//! few checks that nothing *more* arrives look again after a short pause: a pause too short
//! can only miss a bug, never fail a correct implementation.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rs_api::{Error, Publisher, Subscriber, Subscription, SubscriptionRef, UNBOUNDED};
use rs_impl::boundary::{BoundaryConfig, BoundarySubscriber};
use rs_impl::flow::Flow;
use rs_impl::island::{IslandError, Runtime};
use rs_impl::subscriber::{collect, RequestStrategy};
use rstest::rstest;
use support::wait_until;

/// Where the islands run.
#[derive(Debug, Clone, Copy)]
enum Rt {
    /// `Runtime::with_threads(2)`: futures' thread pool.
    Default,
    /// A 2-worker tokio runtime through `Runtime::from_spawner`.
    Tokio,
}

/// A runtime, and the tokio runtime behind it (kept alive with it).
struct Islands {
    runtime: Runtime,
    _tokio: Option<tokio::runtime::Runtime>,
}

fn islands(rt: Rt) -> Islands {
    match rt {
        Rt::Default => Islands {
            runtime: Runtime::with_threads(2).expect("thread pool"),
            _tokio: None,
        },
        Rt::Tokio => {
            let tokio = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .build()
                .expect("tokio");
            let handle = tokio.handle().clone();
            Islands {
                runtime: Runtime::from_spawner(move |island| {
                    handle.spawn(island);
                }),
                _tokio: Some(tokio),
            }
        }
    }
}

/// Pekko's `inputBuffer(16, 16)`.
fn sixteen() -> BoundaryConfig {
    BoundaryConfig::new().size(16)
}

/// A subscriber that records everything, requests from the test thread.
#[derive(Clone, Default)]
struct Recorder {
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    items: Arc<Mutex<Vec<u64>>>,
    error: Arc<Mutex<Option<Error>>>,
    completed: Arc<AtomicBool>,
    /// Signals after a terminal one (rule 1.7).
    late: Arc<AtomicU64>,
    initial: u64,
}

impl Recorder {
    fn requesting(initial: u64) -> Self {
        Recorder {
            initial,
            ..Recorder::default()
        }
    }
    fn ended(&self) -> bool {
        self.completed.load(Ordering::SeqCst) || self.error.lock().unwrap().is_some()
    }
    fn received(&self) -> usize {
        self.items.lock().unwrap().len()
    }
    fn subscription(&self) -> SubscriptionRef {
        wait_until("on_subscribe", || self.sub.lock().unwrap().is_some());
        self.sub.lock().unwrap().clone().unwrap()
    }
    fn items(&self) -> Vec<u64> {
        self.items.lock().unwrap().clone()
    }
    fn error(&self) -> Option<Error> {
        self.error.lock().unwrap().clone()
    }
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        if self.initial > 0 {
            s.request(self.initial);
        }
        *self.sub.lock().unwrap() = Some(s);
    }
    fn on_next(&mut self, x: u64) {
        if self.ended() {
            self.late.fetch_add(1, Ordering::SeqCst);
        }
        self.items.lock().unwrap().push(x);
    }
    fn on_error(&mut self, e: Error) {
        if self.ended() {
            self.late.fetch_add(1, Ordering::SeqCst);
        }
        *self.error.lock().unwrap() = Some(e);
    }
    fn on_complete(&mut self) {
        if self.ended() {
            self.late.fetch_add(1, Ordering::SeqCst);
        }
        self.completed.store(true, Ordering::SeqCst);
    }
}

/// A publisher driven from the test: it records demand and cancel, and the test signals its
/// subscriber (`offer`, `complete`, `fail`). Or, with `auto`, it answers each `request` at
/// once: the next elements, and `on_error` after `fail_after` elements.
#[derive(Default)]
struct Probe {
    subscriber: Mutex<Option<Box<dyn Subscriber<u64>>>>,
    requested: AtomicU64,
    sent: AtomicU64,
    cancelled: AtomicBool,
    auto: bool,
    fail_after: Option<u64>,
}

struct ProbeSub(Arc<Probe>);

impl Subscription for ProbeSub {
    fn request(&self, n: u64) {
        let p = &self.0;
        p.requested.fetch_add(n, Ordering::SeqCst);
        if !p.auto {
            return;
        }
        let mut guard = p.subscriber.lock().unwrap();
        let Some(s) = guard.as_mut() else { return };
        for _ in 0..n {
            let i = p.sent.load(Ordering::SeqCst);
            if Some(i) == p.fail_after {
                s.on_error(Error::msg("probe failed"));
                *guard = None;
                return;
            }
            p.sent.store(i + 1, Ordering::SeqCst);
            s.on_next(i);
        }
    }
    fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        self.0.subscriber.lock().unwrap().take();
    }
}

#[derive(Clone)]
struct ProbePublisher(Arc<Probe>);

impl Publisher<u64> for ProbePublisher {
    fn subscribe(&self, mut s: Box<dyn Subscriber<u64>>) {
        s.on_subscribe(Arc::new(ProbeSub(self.0.clone())));
        *self.0.subscriber.lock().unwrap() = Some(s);
    }
}

impl Probe {
    fn manual() -> Arc<Probe> {
        Arc::new(Probe::default())
    }
    fn answering(fail_after: Option<u64>) -> Arc<Probe> {
        Arc::new(Probe {
            auto: true,
            fail_after,
            ..Probe::default()
        })
    }
    fn publisher(self: &Arc<Self>) -> ProbePublisher {
        ProbePublisher(self.clone())
    }
    /// Sends the next element (the test keeps within the demand).
    fn offer(&self) -> u64 {
        let i = self.sent.fetch_add(1, Ordering::SeqCst);
        self.subscriber.lock().unwrap().as_mut().unwrap().on_next(i);
        i
    }
    fn subscribed(&self) -> bool {
        self.subscriber.lock().unwrap().is_some()
    }
}

// ---- Pekko PR #3288's regression scenarios, each on both runtimes ----

/// 1. Order is kept over 5,000 elements through one boundary (under three request patterns).
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_01_order_over_5000_elements_through_one_boundary(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(0u64..5_000)
        .map(|x| x * 3)
        .async_boundary_with(sixteen())
        .map(|x| x + 1)
        .into_publisher(&i.runtime);
    let expected: Vec<u64> = (0..5_000).map(|x| x * 3 + 1).collect();
    collects_in_order(&p, &expected);
}

/// Each of three request patterns gets `expected` from `p`.
fn collects_in_order(p: &impl Publisher<u64>, expected: &[u64]) {
    for strategy in [
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(7),
        RequestStrategy::Unbounded,
    ] {
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        assert_eq!(h.wait().unwrap(), expected, "{strategy:?}");
    }
}

/// 2. Order is kept over 5,000 elements through two chained boundaries.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_02_order_over_5000_elements_through_two_boundaries(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(0u64..5_000)
        .async_boundary_with(sixteen())
        .filter(|x| x % 7 != 0)
        .async_boundary_with(sixteen())
        .scan(0u64, |a, x| a + x)
        .into_publisher(&i.runtime);
    let expected: Vec<u64> = (0u64..5_000)
        .filter(|x| x % 7 != 0)
        .scan(0u64, |a, x| {
            *a += x;
            Some(*a)
        })
        .collect();
    collects_in_order(&p, &expected);
}

/// 3. The batch is flushed when the producing island parks with async input (Pekko: a
/// `Source.queue` with a sync-processing limit of 1 and 64 offers): 64 elements offered one
/// at a time by a foreign publisher into an island with a budget of 1 event, through a
/// boundary whose cap (128) no batch reaches and which never completes. Each element reaches
/// the subscriber before the next is offered: only the flushes at the end of a run move it.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_03_the_batch_is_flushed_when_the_island_parks_with_async_input(#[case] rt: Rt) {
    let i = islands(rt);
    let probe = Probe::manual();
    let p = Flow::from_publisher(probe.publisher())
        .map(|x| x * 2)
        .with_budget(1)
        .async_boundary_with(BoundaryConfig::new().size(256))
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(UNBOUNDED);
    p.subscribe(Box::new(r.clone()));
    wait_until("the input side's prefetch", || {
        probe.requested.load(Ordering::SeqCst) >= 16
    });
    for k in 0..64u64 {
        wait_until("demand for the next offer", || {
            probe.requested.load(Ordering::SeqCst) > k
        });
        probe.offer();
        wait_until("the offered element downstream", || {
            r.received() == k as usize + 1
        });
    }
    assert_eq!(r.items(), (0..64).map(|x| x * 2).collect::<Vec<_>>());
    assert!(!r.ended());
    r.subscription().cancel();
    wait_until("the cancel upstream", || {
        probe.cancelled.load(Ordering::SeqCst)
    });
}

/// 4. Batches are drained before completion: the producing island completes with a full
/// ring while the subscriber has asked for a tenth of it; completion comes after the rest,
/// once requested.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_04_batches_are_drained_before_completion(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(0u64..100)
        .async_boundary_with(BoundaryConfig::new().size(128))
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(10);
    p.subscribe(Box::new(r.clone()));
    wait_until("the first ten", || r.received() == 10);
    // The producer is done (its ring holds the other 90 and the completion); nothing more
    // comes without demand.
    thread::sleep(Duration::from_millis(20));
    assert_eq!(r.received(), 10);
    assert!(!r.ended());
    r.subscription().request(90);
    wait_until("completion", || r.ended());
    assert!(r.completed.load(Ordering::SeqCst));
    assert_eq!(r.items(), (0..100).collect::<Vec<_>>());
    assert_eq!(r.late.load(Ordering::SeqCst), 0);
}

/// 5. Batches are drained before failure: a probe publisher sends exactly what is requested,
/// then fails; all 64 elements arrive, in order, then the error.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_05_batches_are_drained_before_failure(#[case] rt: Rt) {
    let i = islands(rt);
    let probe = Probe::answering(Some(64));
    let p = Flow::from_publisher(probe.publisher())
        .async_boundary_with(sixteen())
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(UNBOUNDED);
    p.subscribe(Box::new(r.clone()));
    wait_until("the end", || r.ended());
    assert_eq!(r.items(), (0..64).collect::<Vec<_>>());
    assert_eq!(r.error().unwrap().to_string(), "probe failed");
    assert_eq!(r.late.load(Ordering::SeqCst), 0);
}

/// 6. No element is emitted after a failure (Pekko: a concat with a failed source): a strictly
/// ordered prefix, then the error, then nothing.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_06_no_element_after_a_failure(#[case] rt: Rt) {
    let i = islands(rt);
    for demand in [1, 7, UNBOUNDED] {
        let probe = Probe::answering(Some(300));
        let p = Flow::from_publisher(probe.publisher())
            .map(|x| x + 1)
            .async_boundary_with(sixteen())
            .async_boundary_with(sixteen())
            .into_publisher(&i.runtime);
        let r = Recorder::requesting(demand);
        p.subscribe(Box::new(r.clone()));
        if demand != UNBOUNDED {
            // Keep requesting until the error arrives (it does not need demand).
            while !r.ended() {
                r.subscription().request(demand);
                thread::yield_now();
            }
        }
        wait_until("the error", || r.error().is_some());
        let items = r.items();
        assert!(items.len() <= 300);
        assert_eq!(items, (1..=items.len() as u64).collect::<Vec<_>>());
        thread::sleep(Duration::from_millis(10));
        assert_eq!(r.items().len(), items.len(), "elements after the failure");
        assert_eq!(r.late.load(Ordering::SeqCst), 0);
        assert!(!r.completed.load(Ordering::SeqCst));
    }
}

/// 7. Cancellation propagates upstream with 16 elements in flight in the boundary.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_07_cancellation_propagates_upstream_with_16_in_flight(#[case] rt: Rt) {
    let i = islands(rt);
    let probe = Probe::answering(None);
    let p = Flow::from_publisher(probe.publisher())
        .async_boundary_with(sixteen())
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(4);
    p.subscribe(Box::new(r.clone()));
    wait_until("four elements", || r.received() == 4);
    // The upstream island keeps its boundary full: 16 elements are in flight in the ring.
    wait_until("the ring full", || {
        probe.sent.load(Ordering::SeqCst) >= 4 + 16
    });
    r.subscription().cancel();
    wait_until("the cancel upstream", || {
        probe.cancelled.load(Ordering::SeqCst)
    });
    assert!(!probe.subscribed());
    assert_eq!(r.received(), 4);
    assert!(!r.ended());
}

/// 8. Downstream demand is never exceeded: `request(1)` gives exactly 1, then `request(2)`
/// exactly 2 more, through a boundary whose producer could send far more.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_08_request_1_gives_exactly_1_and_request_2_exactly_2(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(0u64..)
        .async_boundary_with(sixteen())
        .async_boundary_with(sixteen())
        .into_publisher(&i.runtime);
    let r = Recorder::default();
    p.subscribe(Box::new(r.clone()));
    let s = r.subscription();
    s.request(1);
    wait_until("one element", || r.received() == 1);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(r.received(), 1);
    s.request(2);
    wait_until("three elements", || r.received() == 3);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(r.items(), vec![0, 1, 2]);
    s.cancel();
}

/// 9. A stage that fails (Pekko's supervision "stop") fails the stream across the boundary
/// after the elements before it: 1, 2, then the typed error.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_09_a_failing_stage_fails_downstream_after_the_elements_before_it(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(1u64..10)
        .map(|x| if x == 3 { panic!("bad element {x}") } else { x })
        .async_boundary_with(sixteen())
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(UNBOUNDED);
    p.subscribe(Box::new(r.clone()));
    wait_until("the error", || r.ended());
    assert_eq!(r.items(), vec![1, 2]);
    match r.error().unwrap().downcast_ref::<IslandError>() {
        Some(IslandError::StagePanicked { message, .. }) => assert_eq!(message, "bad element 3"),
        other => panic!("{other:?}"),
    }
}

/// 10. Each materialisation runs its stages afresh (Pekko's supervision "restart" resets a
/// `scan`'s state): a second subscription of a flow with a `scan` on each side of a boundary
/// sees the same sums as the first, and a panicking subscriber behind the boundary is
/// cancelled — which cancels the upstream across it — without touching the other run.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn b4_10_every_run_starts_fresh_and_a_panicking_subscriber_cancels_across(#[case] rt: Rt) {
    let i = islands(rt);
    let probe = Probe::answering(None);
    let panicky = Flow::from_publisher(probe.publisher())
        .async_boundary_with(sixteen())
        .into_publisher(&i.runtime);
    struct Panics(u64);
    impl Subscriber<u64> for Panics {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(UNBOUNDED);
        }
        fn on_next(&mut self, _: u64) {
            self.0 += 1;
            if self.0 == 5 {
                panic!("subscriber bug");
            }
        }
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {}
    }
    panicky.subscribe(Box::new(Panics(0)));
    let p = Flow::from_iter(1u64..=100)
        .scan(0u64, |a, x| a + x)
        .async_boundary_with(sixteen())
        .scan(0u64, |a, x| a + x)
        .into_publisher(&i.runtime);
    let expected: Vec<u64> = (1u64..=100)
        .scan(0u64, |a, x| {
            *a += x;
            Some(*a)
        })
        .scan(0u64, |a, x| {
            *a += x;
            Some(*a)
        })
        .collect();
    for _ in 0..2 {
        let (s, h) = collect(RequestStrategy::Prefetch(8));
        p.subscribe(Box::new(s));
        assert_eq!(h.wait().unwrap(), expected);
    }
    wait_until("the panicking subscriber's upstream cancelled", || {
        probe.cancelled.load(Ordering::SeqCst)
    });
}

// ---- the boundary subscriber on its own ----

/// It prefetches its size, requests size/2 after size/2 are *taken* (not received), and
/// completion waits for the island to take everything.
#[test]
fn the_boundary_subscriber_prefetches_its_size_and_requests_half_per_half_taken() {
    let i = islands(Rt::Default);
    let probe = Probe::manual();
    let (s, input) = BoundarySubscriber::<u64>::new(16);
    let stats = s.clone();
    probe.publisher().subscribe(Box::new(s));
    let r = Recorder::default();
    Flow::from_boundary(input)
        .into_publisher(&i.runtime)
        .subscribe(Box::new(r.clone()));
    wait_until("the prefetch", || {
        probe.requested.load(Ordering::SeqCst) == 16
    });
    for _ in 0..16 {
        probe.offer();
    }
    thread::sleep(Duration::from_millis(20));
    assert_eq!(
        probe.requested.load(Ordering::SeqCst),
        16,
        "received is not taken"
    );
    r.subscription().request(7);
    wait_until("seven taken", || r.received() == 7);
    thread::sleep(Duration::from_millis(20));
    assert_eq!(probe.requested.load(Ordering::SeqCst), 16);
    r.subscription().request(1);
    wait_until("the replenishment", || {
        probe.requested.load(Ordering::SeqCst) == 24
    });
    assert_eq!(stats.stats().grants, 1);
    // A foreign publisher: one event (flush) per element.
    assert_eq!(stats.stats().flushes, 16);
    assert_eq!(stats.stats().published, 16);
    probe.complete_now();
    thread::sleep(Duration::from_millis(20));
    assert!(
        !r.ended(),
        "completion waits until the island took everything"
    );
    r.subscription().request(8);
    wait_until("completion", || r.completed.load(Ordering::SeqCst));
    assert_eq!(r.items(), (0..16).collect::<Vec<_>>());
}

impl Probe {
    fn complete_now(&self) {
        if let Some(mut s) = self.subscriber.lock().unwrap().take() {
            s.on_complete();
        }
    }
}

/// A foreign publisher that emits one element and then waits must not leave it stuck: the
/// element reaches the island's subscriber while the publisher still waits (it is published
/// with its own wake-up), and the same through an internal boundary behind it (the producing
/// island flushes when it parks).
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn a_lone_element_from_a_waiting_publisher_is_not_stranded(#[case] rt: Rt) {
    let i = islands(rt);
    for boundaries in 0..3 {
        let probe = Probe::manual();
        let mut flow = Flow::from_publisher(probe.publisher()).boxed();
        for _ in 0..boundaries {
            flow = flow.async_boundary().boxed();
        }
        let r = Recorder::requesting(UNBOUNDED);
        flow.into_publisher(&i.runtime)
            .subscribe(Box::new(r.clone()));
        wait_until("demand upstream", || {
            probe.requested.load(Ordering::SeqCst) > 0
        });
        probe.offer();
        wait_until("the lone element", || r.received() == 1);
        assert_eq!(r.items(), vec![0]);
        assert!(!r.ended());
        // Still waiting, nothing else happened upstream.
        assert_eq!(probe.sent.load(Ordering::SeqCst), 1);
        r.subscription().cancel();
        wait_until("the cancel", || probe.cancelled.load(Ordering::SeqCst));
    }
}

/// An upstream that sends more than it was asked for overruns the ring: the island fails with
/// `InputOverrun` (an invariant failure, typed) and cancels it; nothing is written past the
/// ring.
#[test]
fn an_overrun_fails_the_island_with_a_typed_error_and_cancels_upstream() {
    let i = islands(Rt::Default);
    let probe = Probe::manual();
    let (s, input) = BoundarySubscriber::<u64>::new(4);
    probe.publisher().subscribe(Box::new(s));
    let r = Recorder::default();
    Flow::from_boundary(input)
        .into_publisher(&i.runtime)
        .subscribe(Box::new(r.clone()));
    wait_until("the prefetch", || {
        probe.requested.load(Ordering::SeqCst) == 4
    });
    for _ in 0..5 {
        probe.offer(); // one more than asked: rule 1.1 broken
    }
    wait_until("the failure", || r.error().is_some());
    assert!(matches!(
        r.error().unwrap().downcast_ref::<IslandError>(),
        Some(IslandError::InputOverrun { capacity: 4 })
    ));
    wait_until("the cancel", || probe.cancelled.load(Ordering::SeqCst));
    assert_eq!(
        r.received(),
        0,
        "the island failed without demand: nothing delivered"
    );
}

/// A second subscription is cancelled (rule 2.5), and so is one arriving after the island
/// cancelled; a clone is a handle on the same boundary.
#[test]
fn a_second_subscription_and_a_late_one_are_cancelled() {
    let i = islands(Rt::Default);
    let (s, input) = BoundarySubscriber::<u64>::new(8);
    let first = Probe::manual();
    let second = Probe::manual();
    first.publisher().subscribe(Box::new(s.clone()));
    second.publisher().subscribe(Box::new(s.clone()));
    assert!(second.cancelled.load(Ordering::SeqCst), "rule 2.5");
    assert!(!first.cancelled.load(Ordering::SeqCst));
    let r = Recorder::requesting(2);
    Flow::from_boundary(input)
        .into_publisher(&i.runtime)
        .subscribe(Box::new(r.clone()));
    wait_until("the prefetch", || {
        first.requested.load(Ordering::SeqCst) == 8
    });
    first.offer();
    wait_until("an element", || r.received() == 1);
    r.subscription().cancel();
    wait_until("the cancel upstream", || {
        first.cancelled.load(Ordering::SeqCst)
    });
    let late = Probe::manual();
    late.publisher().subscribe(Box::new(s));
    assert!(late.cancelled.load(Ordering::SeqCst), "the island is gone");
}

/// A flow read by a flow of ours (`Flow::from_publisher` of a `FlowPublisher`, where the
/// static type is known) gets batches written straight into its input ring: far fewer wake-ups
/// of its island than elements. Any other subscriber of the same publisher — a
/// `BoundarySubscriber` subscribed by hand, a user's own — gets every element through
/// `on_next`, one call each.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn only_internal_boundaries_batch(#[case] rt: Rt) {
    let i = islands(rt);
    let p = Flow::from_iter(0u64..100_000).into_publisher(&i.runtime);
    let (c, h) = collect(RequestStrategy::Unbounded);
    let mut island = Flow::from_publisher_with(p.clone(), 1024)
        .into_island(Box::new(c))
        .expect("one island");
    island.start();
    futures::executor::block_on(&mut island);
    assert_eq!(h.wait().unwrap(), (0..100_000).collect::<Vec<_>>());
    // At most one post to the reading island per flush (of up to 512 elements, half the
    // ring; posts to an island already scheduled coalesce): far fewer than the elements.
    let st = island.interpreter().stats();
    assert!(st.async_inputs > 0, "{st:?}");
    assert!(st.async_inputs * 8 < 100_000, "{st:?}");
    // A boundary subscriber subscribed by hand is a foreign subscriber: one `on_next`, and
    // one flush, per element.
    let (s, input) = BoundarySubscriber::<u64>::new(1024);
    let stats = s.clone();
    p.subscribe(Box::new(s));
    let (c, h) = collect(RequestStrategy::Unbounded);
    Flow::from_boundary(input)
        .into_publisher(&i.runtime)
        .subscribe(Box::new(c));
    assert_eq!(h.wait().unwrap().len(), 100_000);
    let st = stats.stats();
    assert_eq!(st.published, 100_000);
    assert_eq!(st.flushes, 100_000, "{st:?}");
    // A user subscriber: one on_next per element.
    struct Counting(Arc<AtomicU64>);
    impl Subscriber<u64> for Counting {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(UNBOUNDED);
        }
        fn on_next(&mut self, _: u64) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        fn on_error(&mut self, _: Error) {}
        fn on_complete(&mut self) {
            self.0.fetch_add(1 << 32, Ordering::SeqCst);
        }
    }
    let calls = Arc::new(AtomicU64::new(0));
    p.subscribe(Box::new(Counting(calls.clone())));
    wait_until("completion", || calls.load(Ordering::SeqCst) >> 32 == 1);
    assert_eq!(calls.load(Ordering::SeqCst) & 0xffff_ffff, 100_000);
}

/// The output side never writes beyond what the input side granted: through a chain of
/// boundaries, the source island produced at most what the consumer took plus one ring per
/// boundary (and the input side's buffer).
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn never_beyond_downstream_demand(#[case] rt: Rt) {
    let i = islands(rt);
    let produced = Arc::new(AtomicU64::new(0));
    let counter = produced.clone();
    let p = Flow::from_iter(0u64..)
        .map(move |x| {
            counter.fetch_add(1, Ordering::SeqCst);
            x
        })
        .async_boundary_with(BoundaryConfig::new().size(32))
        .async_boundary_with(BoundaryConfig::new().size(64))
        .into_publisher(&i.runtime);
    let r = Recorder::requesting(100);
    p.subscribe(Box::new(r.clone()));
    wait_until("100 elements", || r.received() == 100);
    thread::sleep(Duration::from_millis(30));
    let made = produced.load(Ordering::SeqCst);
    assert!(made >= 100);
    assert!(made <= 100 + 32 + 64, "produced {made} for a demand of 100");
    r.subscription().cancel();
}

/// The batch is dropped on cancel, and on a failure after the consumer left: every element
/// made is dropped exactly once, none leaks (an element type that counts its live values).
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn nothing_leaks_on_cancel_or_on_a_failure_after_it(#[case] rt: Rt) {
    /// Counts its live values.
    struct Tracked(u64, Arc<AtomicUsize>);
    impl Tracked {
        fn new(x: u64, live: &Arc<AtomicUsize>) -> Self {
            live.fetch_add(1, Ordering::SeqCst);
            Tracked(x, live.clone())
        }
    }
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.1.fetch_sub(1, Ordering::SeqCst);
        }
    }
    /// Counts what it got (the error in the high half).
    struct Take(Arc<AtomicU64>, Arc<Mutex<Option<SubscriptionRef>>>);
    impl Subscriber<Tracked> for Take {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(1_000);
            *self.1.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, t: Tracked) {
            assert_eq!(t.0, self.0.fetch_add(1, Ordering::SeqCst));
        }
        fn on_error(&mut self, _: Error) {
            self.0.fetch_add(1 << 32, Ordering::SeqCst);
        }
        fn on_complete(&mut self) {}
    }
    let i = islands(rt);
    // Without a failure; with one racing the cancel (the producers fill both rings past the
    // demand of 1,000, so element 1,100 is reached).
    for fail_at in [None, Some(1_100u64)] {
        let live = Arc::new(AtomicUsize::new(0));
        let made = live.clone();
        let p = Flow::from_iter(0u64..1_000_000)
            .map(move |x| {
                if Some(x) == fail_at {
                    panic!("late failure");
                }
                Tracked::new(x, &made)
            })
            .async_boundary_with(BoundaryConfig::new().size(256))
            .map(|t: Tracked| t)
            .async_boundary_with(BoundaryConfig::new().size(64))
            .into_publisher(&i.runtime);
        let got = Arc::new(AtomicU64::new(0));
        let sub: Arc<Mutex<Option<SubscriptionRef>>> = Arc::default();
        p.subscribe(Box::new(Take(got.clone(), sub.clone())));
        // 1,000 elements, or the failure overtaking what the full rings still held (eager).
        wait_until("1,000 elements or the error", || {
            let g = got.load(Ordering::SeqCst);
            g == 1_000 || g >> 32 == 1
        });
        let s = sub.lock().unwrap().clone().unwrap();
        s.cancel();
        drop(s);
        drop(p);
        // Both rings were full (and a batch unflushed) when the cancel came.
        wait_until("every element dropped", || live.load(Ordering::SeqCst) == 0);
    }
}

/// An island dropped unfinished (its runtime gone) fails the island downstream of its
/// boundary with `Abandoned`, instead of leaving it waiting forever.
#[test]
fn a_dropped_upstream_island_fails_its_boundary() {
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    let mut islands = Flow::from_iter(0u64..)
        .async_boundary_with(sixteen())
        .into_islands(Box::new(s))
        .unwrap();
    assert_eq!(islands.len(), 2);
    let consumer = islands.pop().unwrap();
    let mut producer = islands.pop().unwrap();
    producer.start();
    drop(producer);
    futures::executor::block_on(consumer);
    let e = h.wait().unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<IslandError>(),
            Some(IslandError::Abandoned)
        ),
        "{e}"
    );
}

/// With batching off every element is flushed on its own (one event each); with it on, a
/// producer that outpaces its consumer moves batches. Same elements either way.
#[rstest]
#[case::default(Rt::Default)]
#[case::tokio(Rt::Tokio)]
fn batching_off_moves_the_same_elements_one_event_each(#[case] rt: Rt) {
    let i = islands(rt);
    for batching in [true, false] {
        let p = Flow::from_iter(0u64..20_000)
            .async_boundary_with(BoundaryConfig::new().size(64).batching(batching))
            .map(|x| x * 2)
            .async_boundary_with(BoundaryConfig::new().size(64).batching(batching))
            .into_publisher(&i.runtime);
        let (s, h) = collect(RequestStrategy::Prefetch(100));
        p.subscribe(Box::new(s));
        assert_eq!(
            h.wait().unwrap(),
            (0..20_000).map(|x| x * 2).collect::<Vec<_>>()
        );
    }
}

/// A flow with boundaries is several islands: `into_island` says so (and gives the
/// subscriber back); `into_islands` builds them, one per segment.
#[test]
fn a_flow_with_boundaries_is_several_islands() {
    let flow = Flow::from_iter(0u64..10)
        .async_boundary()
        .map(|x| x)
        .async_boundary();
    assert_eq!(flow.islands(), 3);
    let (s, _h) = collect::<u64>(RequestStrategy::Unbounded);
    let e = flow.into_island(Box::new(s)).unwrap_err();
    assert!(e.error.to_string().contains("3 islands"), "{}", e.error);
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    let islands = flow.into_islands(Box::new(s)).unwrap();
    assert_eq!(islands.len(), 3);
    let threads: Vec<_> = islands
        .into_iter()
        .map(|i| thread::spawn(move || futures::executor::block_on(i)))
        .collect();
    assert_eq!(h.wait().unwrap(), (0..10).collect::<Vec<_>>());
    for t in threads {
        t.join().unwrap();
    }
}

/// A boundary input can be materialised once (one consumer per boundary).
#[test]
fn a_boundary_input_feeds_one_island() {
    let i = islands(Rt::Default);
    let (_s, input) = BoundarySubscriber::<u64>::new(8);
    let p = Flow::from_boundary(input).into_publisher(&i.runtime);
    let (a, _ha) = collect::<u64>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(a));
    let (b, hb) = collect::<u64>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(b));
    let e = hb.wait().unwrap_err();
    assert!(e.to_string().contains("materialised already"), "{e}");
}
