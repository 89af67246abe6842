//! Behaviour tests of islands on a runtime and the `Flow` builder: Reactive Streams rules at
//! the edges, prompt `request`/`cancel` (rule 3.4), fairness between islands, failures.
#![cfg(not(rs_loom))]
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use rs_api::{
    Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef, UNBOUNDED,
};
use rs_impl::flow::{BoxFlow, Flow, FromBoundary, IslandProcessor};
use rs_impl::island::{IslandError, Runtime};
use rs_impl::source;
use rs_impl::subscriber::{collect, RequestStrategy};

fn runtime() -> Runtime {
    Runtime::with_threads(2).expect("thread pool")
}

/// Generous: only a hang would reach it (the assertions are on counts and values).
const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn map_filter_take_skip_scan_fold_through_one_island() {
    let rt = runtime();
    let cases: Vec<(BoxFlow<u64>, Vec<u64>)> = vec![
        (
            Flow::from_publisher(source::range(0u64..10))
                .map(|x| x * 2)
                .boxed(),
            (0..10).map(|x| x * 2).collect(),
        ),
        (
            Flow::from_publisher(source::range(0u64..10))
                .filter(|x| x % 3 == 0)
                .boxed(),
            vec![0, 3, 6, 9],
        ),
        (
            Flow::from_publisher(source::range(0u64..10))
                .take(4)
                .boxed(),
            vec![0, 1, 2, 3],
        ),
        (
            Flow::from_publisher(source::range(0u64..10))
                .skip(7)
                .boxed(),
            vec![7, 8, 9],
        ),
        (
            Flow::from_publisher(source::range(1u64..5))
                .scan(0, |a, x| a + x)
                .boxed(),
            vec![1, 3, 6, 10],
        ),
        (
            Flow::from_publisher(source::range(1u64..5))
                .fold(0, |a, x| a + x)
                .boxed(),
            vec![10],
        ),
        (
            Flow::from_iter(0u64..1000)
                .identity()
                .identity()
                .take(2)
                .boxed(),
            vec![0, 1],
        ),
        (Flow::from_publisher(source::empty()).boxed(), vec![]),
    ];
    for (flow, expected) in cases {
        for strategy in [
            RequestStrategy::OneByOne,
            RequestStrategy::Prefetch(3),
            RequestStrategy::Unbounded,
        ] {
            let p = flow.clone().into_publisher(&rt);
            let (s, h) = collect(strategy);
            p.subscribe(Box::new(s));
            assert_eq!(h.wait().unwrap(), expected, "{flow:?} {strategy:?}");
        }
    }
}

#[test]
fn every_subscription_runs_its_own_island() {
    let rt = runtime();
    let p = Flow::from_publisher(source::range(0u64..100))
        .map(|x| x + 1)
        .into_publisher(&rt);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (s, h) = collect(RequestStrategy::Prefetch(7));
            p.subscribe(Box::new(s));
            h
        })
        .collect();
    for h in handles {
        assert_eq!(h.wait().unwrap(), (1..=100).collect::<Vec<_>>());
    }
}

/// Records on which thread each signal arrived, and requests from a test thread.
#[derive(Clone, Default)]
struct Watch {
    sub: Arc<Mutex<Option<SubscriptionRef>>>,
    received: Arc<AtomicU64>,
    threads: Arc<Mutex<Vec<thread::ThreadId>>>,
    error: Arc<Mutex<Option<Error>>>,
    completed: Arc<AtomicBool>,
}

impl Subscriber<u64> for Watch {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        *self.sub.lock().unwrap() = Some(s);
    }
    fn on_next(&mut self, _: u64) {
        let n = self.received.fetch_add(1, Ordering::SeqCst);
        if n < 64 {
            self.threads.lock().unwrap().push(thread::current().id());
        }
    }
    fn on_error(&mut self, e: Error) {
        *self.error.lock().unwrap() = Some(e);
    }
    fn on_complete(&mut self) {
        self.completed.store(true, Ordering::SeqCst);
    }
}

impl Watch {
    fn subscription(&self) -> SubscriptionRef {
        loop {
            if let Some(s) = self.sub.lock().unwrap().clone() {
                return s;
            }
            thread::yield_now();
        }
    }
    fn wait_for(&self, what: impl Fn(&Watch) -> bool) {
        support::wait_until("the watched condition", || what(self));
    }
}

#[test]
fn rule_3_4_unbounded_request_on_an_endless_source_returns_without_running_the_stream() {
    let rt = runtime();
    let endless = Flow::from_publisher(source::from_fn(|| 0u64..))
        .map(|x| x + 1)
        .into_publisher(&rt);
    let watch = Watch::default();
    endless.subscribe(Box::new(watch.clone()));
    let s = watch.subscription();
    s.request(UNBOUNDED); // returns: the stream runs on the island, not in here
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) > 10_000);
    s.cancel(); // also only a post
    let me = thread::current().id();
    assert!(
        watch.threads.lock().unwrap().iter().all(|t| *t != me),
        "an element was delivered on the requesting thread"
    );
}

#[test]
fn request_zero_ends_with_on_error_naming_rule_3_9() {
    let rt = runtime();
    let p = Flow::from_publisher(source::from_fn(|| 0u64..)).into_publisher(&rt);
    let watch = Watch::default();
    p.subscribe(Box::new(watch.clone()));
    watch.subscription().request(0);
    watch.wait_for(|w| w.error.lock().unwrap().is_some());
    let e = watch.error.lock().unwrap().clone().unwrap();
    assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
    assert!(e.to_string().contains("3.9"));
}

#[test]
fn demand_is_never_exceeded_request_1_gives_1_and_2_gives_2() {
    let rt = runtime();
    let p = Flow::from_publisher(source::from_fn(|| 0u64..))
        .map(|x| x)
        .into_publisher(&rt);
    let watch = Watch::default();
    p.subscribe(Box::new(watch.clone()));
    let s = watch.subscription();
    s.request(1);
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) == 1);
    s.request(2);
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) == 3);
    // A cancel posted after a round-trip through the island: the island has seen the
    // demand of 3 and no more; nothing beyond it arrives.
    s.cancel();
    thread::sleep(Duration::from_millis(20));
    assert_eq!(watch.received.load(Ordering::SeqCst), 3);
}

/// A publisher that records cancels and requests, and emits on request from the caller.
struct Upstream {
    cancelled: Arc<AtomicBool>,
    requested: Arc<AtomicU64>,
    overrun: bool,
    fail_after: Option<u64>,
}

struct UpstreamSub {
    cancelled: Arc<AtomicBool>,
    requested: Arc<AtomicU64>,
    target: Mutex<Option<Box<dyn Subscriber<u64>>>>,
    sent: AtomicU64,
    overrun: bool,
    fail_after: Option<u64>,
}

impl Subscription for UpstreamSub {
    fn request(&self, n: u64) {
        self.requested.fetch_add(n, Ordering::SeqCst);
        let mut target = self.target.lock().unwrap();
        let Some(t) = target.as_mut() else { return };
        let extra = if self.overrun { n + 1 } else { n };
        for _ in 0..extra {
            let i = self.sent.fetch_add(1, Ordering::SeqCst);
            if Some(i) == self.fail_after {
                t.on_error(Error::msg("upstream failed"));
                *target = None;
                return;
            }
            t.on_next(i);
        }
    }
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.target.lock().unwrap().take();
    }
}

impl Publisher<u64> for Upstream {
    fn subscribe(&self, mut s: Box<dyn Subscriber<u64>>) {
        let sub = Arc::new(UpstreamSub {
            cancelled: self.cancelled.clone(),
            requested: self.requested.clone(),
            target: Mutex::new(None),
            sent: AtomicU64::new(0),
            overrun: self.overrun,
            fail_after: self.fail_after,
        });
        s.on_subscribe(sub.clone());
        *sub.target.lock().unwrap() = Some(s);
    }
}

fn upstream(overrun: bool, fail_after: Option<u64>) -> (Upstream, Arc<AtomicBool>, Arc<AtomicU64>) {
    let c = Arc::new(AtomicBool::new(false));
    let r = Arc::new(AtomicU64::new(0));
    (
        Upstream {
            cancelled: c.clone(),
            requested: r.clone(),
            overrun,
            fail_after,
        },
        c,
        r,
    )
}

#[test]
fn cancel_downstream_cancels_upstream_and_a_take_cancels_it_early() {
    let rt = runtime();
    let (up, cancelled, _) = upstream(false, None);
    let p = Flow::from_publisher(up).take(5).into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), vec![0, 1, 2, 3, 4]);
    let w = Watch::default();
    w.wait_for(|_| cancelled.load(Ordering::SeqCst));

    let (up, cancelled, _) = upstream(false, None);
    let p = Flow::from_publisher(up).map(|x| x).into_publisher(&rt);
    let watch = Watch::default();
    p.subscribe(Box::new(watch.clone()));
    watch.subscription().request(3);
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) == 3);
    watch.subscription().cancel();
    watch.wait_for(|_| cancelled.load(Ordering::SeqCst));
}

#[test]
fn the_input_buffer_prefetches_its_size_and_replenishes_by_half() {
    let rt = runtime();
    let (up, _, requested) = upstream(false, None);
    let p = Flow::from_shared_publisher(Arc::new(up), 16).into_publisher(&rt);
    let watch = Watch::default();
    p.subscribe(Box::new(watch.clone()));
    watch.wait_for(|_| requested.load(Ordering::SeqCst) == 16);
    // Nothing requested downstream: the upstream got exactly the prefetch.
    thread::sleep(Duration::from_millis(20));
    assert_eq!(requested.load(Ordering::SeqCst), 16);
    watch.subscription().request(8);
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) == 8);
    watch.wait_for(|_| requested.load(Ordering::SeqCst) == 24);
    watch.subscription().cancel();
}

#[test]
fn an_upstream_error_overtakes_buffered_input() {
    let rt = runtime();
    let (up, _, _) = upstream(false, Some(5));
    let p = Flow::from_publisher(up).into_publisher(&rt);
    let watch = Watch::default();
    p.subscribe(Box::new(watch.clone()));
    // Demand 1: the island prefetched 16, got 5 and the error; it delivers the 1 requested at
    // most, then the error at once without waiting for more demand.
    watch.subscription().request(1);
    watch.wait_for(|w| w.error.lock().unwrap().is_some());
    assert!(watch.received.load(Ordering::SeqCst) <= 1);
    assert_eq!(
        watch.error.lock().unwrap().as_ref().unwrap().to_string(),
        "upstream failed"
    );
}

#[test]
fn an_upstream_that_sends_more_than_requested_fails_the_island_and_is_cancelled() {
    let rt = runtime();
    let (up, cancelled, _) = upstream(true, None);
    let p = Flow::from_publisher(up).into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<IslandError>(),
            Some(IslandError::InputOverrun { capacity: 16 })
        ),
        "{e}"
    );
    assert!(cancelled.load(Ordering::SeqCst));
}

struct Panicky {
    after: u64,
    seen: u64,
}

impl Subscriber<u64> for Panicky {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(UNBOUNDED);
    }
    fn on_next(&mut self, _: u64) {
        self.seen += 1;
        if self.seen == self.after {
            panic!("subscriber bug");
        }
    }
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {}
}

#[test]
fn a_panicking_subscriber_is_cancelled_and_the_others_keep_every_element() {
    let rt = runtime();
    let (up, cancelled, _) = upstream(false, None);
    let p = Flow::from_publisher(up).into_publisher(&rt);
    p.subscribe(Box::new(Panicky { after: 3, seen: 0 }));
    Watch::default().wait_for(|_| cancelled.load(Ordering::SeqCst));
    // Another subscription of a shared flow is unaffected.
    let shared = Flow::from_publisher(source::range(0u64..1000)).into_publisher(&rt);
    shared.subscribe(Box::new(Panicky { after: 10, seen: 0 }));
    let (s, h) = collect(RequestStrategy::Prefetch(8));
    shared.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), (0..1000).collect::<Vec<_>>());
}

#[test]
fn a_panicking_stage_fails_the_stream_with_a_typed_error() {
    let rt = runtime();
    let p = Flow::from_iter(0u64..10)
        .map(|x| if x == 3 { panic!("bad element {x}") } else { x })
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    match e.downcast_ref::<IslandError>() {
        Some(IslandError::StagePanicked { message, .. }) => assert_eq!(message, "bad element 3"),
        other => panic!("{other:?}"),
    }
}

/// An element that counts its drops.
struct Counted(u64, Arc<AtomicU64>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_stage_panicking_mid_run_drops_every_element_the_source_made_once() {
    // The iterator entry holds the element it read ahead in a local during a run: after an
    // operator's panic it is put back and dropped with the cancelled entry, once.
    let rt = runtime();
    let made = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicU64::new(0));
    let (m, d) = (made.clone(), dropped.clone());
    let p = Flow::from_iter((0u64..10).map(move |i| {
        m.fetch_add(1, Ordering::SeqCst);
        Counted(i, d.clone())
    }))
    .map(|c: Counted| {
        if c.0 == 3 {
            panic!("bad element {}", c.0)
        }
        c.0
    })
    .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    assert!(h.wait().is_err());
    // 0, 1, 2 passed, 3 panicked, 4 was read ahead; the rest was never made.
    assert_eq!(made.load(Ordering::SeqCst), 5);
    assert_eq!(dropped.load(Ordering::SeqCst), 5);
}

#[test]
fn an_endless_island_yields_so_others_on_its_worker_finish() {
    // One worker: the endless island must yield for the finite one to run at all.
    let rt = Runtime::with_threads(1).unwrap();
    let endless = Flow::from_iter(0u64..).with_budget(64).into_publisher(&rt);
    let watch = Watch::default();
    endless.subscribe(Box::new(watch.clone()));
    watch.subscription().request(UNBOUNDED);
    watch.wait_for(|w| w.received.load(Ordering::SeqCst) > 1000);
    let finite = Flow::from_iter(0u64..100).into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::OneByOne);
    finite.subscribe(Box::new(s));
    let got = match h.wait_timeout(PATIENCE) {
        Ok(r) => r.unwrap(),
        Err(_) => panic!("the finite island was starved"),
    };
    assert_eq!(got, (0..100).collect::<Vec<_>>());
    watch.subscription().cancel();
}

#[test]
fn islands_count_their_yields_and_parks() {
    let (s, h) = collect(RequestStrategy::Unbounded);
    let Ok(mut island) = Flow::from_iter(0u64..1_000_000)
        .with_budget(100)
        .into_island(Box::new(s))
    else {
        panic!("build")
    };
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    let mut polls = 0;
    while std::pin::Pin::new(&mut island).poll(&mut cx).is_pending() {
        polls += 1;
        assert!(polls < 1_000_000);
    }
    let stats = island.stats();
    // 1,000,000 elements at ≤ 100 events per poll, each event a batch of at most 1,024
    // elements (the fused segment comes back through its mailbox after each batch).
    assert!(stats.yields >= 5, "{stats:?}");
    assert_eq!(stats.polls, polls + 1);
    assert_eq!(h.wait().unwrap().len(), 1_000_000);
}

use std::future::Future as _;

#[test]
fn fused_operators_behave_like_their_stages_across_segment_cuts() {
    let rt = runtime();
    // 150 maps: three fused segments (64 + 64 + 22), then filter → skip → take → scan.
    let mut flow = Flow::from_publisher(source::range(0u64..10_000)).boxed();
    for _ in 0..150 {
        flow = flow.map(|x| x + 1).boxed();
    }
    let p = flow
        .filter(|x| x % 2 == 0)
        .skip(3)
        .take(4)
        .scan(0u64, |a, x| a + x)
        .into_publisher(&rt);
    // 150.. → evens 150, 152, 154, 156, 158, 160, 162 → skip 3 → 156, 158, 160, 162 → sums.
    let (s, h) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), vec![156, 314, 474, 636]);
}

#[test]
fn a_take_after_a_filter_completes_without_pushing_and_cancels_upstream() {
    let rt = runtime();
    let (up, cancelled, _) = upstream(false, None);
    // take(2) is reached by the 2nd element passing the filter; nothing is pushed beyond it.
    let p = Flow::from_publisher(up)
        .filter(|x| x % 5 == 0)
        .take(2)
        .map(|x| x * 10)
        .into_publisher(&rt);
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), vec![0, 50]);
    Watch::default().wait_for(|_| cancelled.load(Ordering::SeqCst));
}

#[test]
fn a_fused_chain_is_one_stage_and_a_via_stage_splits_it() {
    use rs_impl::flow::{ops::Identity, OperatorStage};
    let (s, _h) = collect::<u64>(RequestStrategy::Unbounded);
    let Ok(island) = Flow::from_iter(0u64..3)
        .map(|x| x)
        .filter(|_| true)
        .take(5)
        .into_island(Box::new(s))
    else {
        panic!("build")
    };
    // The iterator source, the operators and the subscriber: one fused stage.
    assert_eq!(island.interpreter().running_stages(), 1);
    let (s, _h) = collect::<u64>(RequestStrategy::Unbounded);
    let Ok(island) = Flow::from_iter(0u64..3)
        .map(|x| x)
        .via(|i, o| OperatorStage::new(i, o, Identity::new()))
        .map(|x| x)
        .into_island(Box::new(s))
    else {
        panic!("build")
    };
    // Source and map up to the via stage's in-port, the via stage, map and subscriber.
    assert_eq!(island.interpreter().running_stages(), 3);
}

#[test]
fn islands_feed_islands_across_threads_in_order() {
    // Three islands chained through their Reactive Streams edges: each island's input side
    // receives on_next from the upstream island's worker thread, concurrently with its own run.
    let rt = runtime();
    let first = Flow::from_iter(0u64..5_000)
        .map(|x| x * 2)
        .into_publisher(&rt);
    let second = Flow::from_publisher(first)
        .filter(|x| x % 3 != 0)
        .into_publisher(&rt);
    let third = Flow::from_shared_publisher(Arc::new(second), 4).scan(0u64, |a, x| a + x);
    for strategy in [
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(7),
        RequestStrategy::Unbounded,
    ] {
        let (s, h) = collect(strategy);
        third.clone().into_publisher(&rt).subscribe(Box::new(s));
        let expected: Vec<u64> = (0u64..5_000)
            .map(|x| x * 2)
            .filter(|x| x % 3 != 0)
            .scan(0u64, |a, x| {
                *a += x;
                Some(*a)
            })
            .collect();
        assert_eq!(h.wait().unwrap(), expected, "{strategy:?}");
    }
}

#[test]
fn an_island_processor_between_a_source_and_a_subscriber_on_other_threads() {
    let rt = runtime();
    let p = IslandProcessor::new(
        |f: Flow<FromBoundary<u64>>| f.map(|x| x + 1).take(1_000),
        8,
        &rt,
    );
    let (s, h) = collect(RequestStrategy::Prefetch(16));
    p.subscribe(Box::new(s));
    // The upstream runs on a thread of its own: its on_next calls race the island.
    let upstream = Flow::from_iter(0u64..).into_publisher(&rt);
    let p2 = p.clone();
    thread::spawn(move || upstream.subscribe(Box::new(p2)))
        .join()
        .unwrap();
    assert_eq!(h.wait().unwrap(), (1..=1_000).collect::<Vec<_>>());
    // Unicast: a second subscriber is refused with the 1.9 rejection.
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    let e = h.wait().unwrap_err();
    assert!(
        matches!(e.spec_violation(), Some(SpecViolation::Rejected { .. })),
        "{e}"
    );
}

/// A publisher whose signals come from the test thread; it records a request that starts after
/// its `on_complete` returned (rule 2.4, as the TCK's manual publisher does).
#[derive(Default)]
struct Driven {
    subscriber: Mutex<Option<Box<dyn Subscriber<u64>>>>,
    requested: AtomicU64,
    completed: AtomicBool,
    late_request: AtomicBool,
}

struct DrivenSub(Arc<Driven>);

impl Subscription for DrivenSub {
    fn request(&self, n: u64) {
        if self.0.completed.load(Ordering::SeqCst) {
            self.0.late_request.store(true, Ordering::SeqCst);
        }
        self.0.requested.fetch_add(n, Ordering::SeqCst);
    }
    fn cancel(&self) {}
}

struct DrivenPublisher(Arc<Driven>);

impl Publisher<u64> for DrivenPublisher {
    fn subscribe(&self, mut s: Box<dyn Subscriber<u64>>) {
        s.on_subscribe(Arc::new(DrivenSub(self.0.clone())));
        *self.0.subscriber.lock().unwrap() = Some(s);
    }
}

/// Requests 16; when element 4 arrives, completes the driven upstream from right there.
struct CompletesUpstream {
    driven: Arc<Driven>,
    received: Arc<AtomicU64>,
    completed: Arc<AtomicBool>,
}

impl Subscriber<u64> for CompletesUpstream {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(16);
    }
    fn on_next(&mut self, x: u64) {
        self.received.fetch_add(1, Ordering::SeqCst);
        if x == 4 {
            self.driven
                .subscriber
                .lock()
                .unwrap()
                .as_mut()
                .unwrap()
                .on_complete();
            self.driven.completed.store(true, Ordering::SeqCst);
        }
    }
    fn on_error(&mut self, _: Error) {}
    fn on_complete(&mut self) {
        self.completed.store(true, Ordering::SeqCst);
    }
}

#[test]
fn the_input_side_never_requests_after_the_upstream_completed() {
    // The island is polled by hand and the upstream's completion arrives while the island is
    // delivering (from inside the downstream's on_next of element 4): the island still holds
    // 11 elements, reaches its replenishing point (8 taken) after `on_complete` returned, and
    // must not request (rule 2.4).
    let driven = Arc::new(Driven::default());
    let flow = Flow::from_shared_publisher(Arc::new(DrivenPublisher(driven.clone())), 16);
    let received = Arc::new(AtomicU64::new(0));
    let completed = Arc::new(AtomicBool::new(false));
    let downstream = CompletesUpstream {
        driven: driven.clone(),
        received: received.clone(),
        completed: completed.clone(),
    };
    let Ok(mut island) = flow.into_island(Box::new(downstream)) else {
        panic!("build")
    };
    island.start();
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    assert!(std::pin::Pin::new(&mut island).poll(&mut cx).is_pending());
    assert_eq!(driven.requested.load(Ordering::SeqCst), 16, "the prefetch");
    {
        let mut s = driven.subscriber.lock().unwrap();
        let s = s.as_mut().unwrap();
        for i in 0..16 {
            s.on_next(i);
        }
    }
    assert!(std::pin::Pin::new(&mut island).poll(&mut cx).is_ready());
    assert_eq!(received.load(Ordering::SeqCst), 16);
    assert!(completed.load(Ordering::SeqCst));
    assert!(
        !driven.late_request.load(Ordering::SeqCst),
        "rule 2.4: the input side requested after on_complete returned"
    );
}

/// Issue 24: a subscriber requesting one element at a time from inside `on_next` costs no
/// mailbox round trip per element: the request is trampolined on the island's thread, and the
/// segment goes on in the same handler call (one event per batch of up to 1,024, as with
/// bulk demand), where every request used to be a post and an event of its own.
#[test]
fn request_one_from_on_next_is_no_mailbox_round_trip_per_element() {
    let n = 10_000u64;
    for strategy in [RequestStrategy::OneByOne, RequestStrategy::Unbounded] {
        let (s, h) = collect(strategy);
        let Ok(mut island) = Flow::from_iter(0..n).into_island(Box::new(s)) else {
            panic!("build")
        };
        let waker = futures::task::noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        let mut polls = 0;
        while std::pin::Pin::new(&mut island).poll(&mut cx).is_pending() {
            polls += 1;
            assert!(polls < 1_000_000);
        }
        assert_eq!(h.wait().unwrap(), (0..n).collect::<Vec<_>>());
        let stats = island.interpreter().stats();
        // The segment's own come-backs after each batch of 1,024, and the start: about
        // n / 1,024 + a few, for either strategy.
        assert!(
            stats.async_inputs <= n / 1_024 + 4,
            "{strategy:?}: {stats:?}"
        );
    }
}
