//! merge, flat_map, concat_map and observe_on on plain publishers: what a subscriber sees, the
//! error modes, missing backpressure, the fast path and the inner queues (counted), and the
//! Flow operators (the hazard tests are in merge_hazard.rs, the scale tests in merge_scale.rs).
#![cfg(not(rs_loom))]
// Test code: std types are fine here (the disallowed-types list targets rs-impl).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rs_api::{
    BoxPublisher, BoxSubscriber, Error, Publisher, Subscriber, Subscription, SubscriptionRef,
};
use rs_impl::flow::Flow;
use rs_impl::merge::{self, MergeConfig, MergeError, Subscribed};
use rs_impl::subscriber::{collect, RequestStrategy};
use rs_impl::{source, Runtime};

fn sorted(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v
}

#[test]
fn merge_of_ranges_delivers_every_element_under_every_strategy() {
    for strategy in [
        RequestStrategy::Unbounded,
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(7),
    ] {
        let p = merge::merge(vec![
            source::range(0u64..100),
            source::range(100u64..250),
            source::range(250u64..251),
        ]);
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        assert_eq!(sorted(h.wait().unwrap()), (0..251).collect::<Vec<_>>());
    }
}

#[test]
fn flat_map_of_subscribed_inners_keeps_each_inner_in_order() {
    let p = source::range(0u64..20).flat_map(
        |i| -> BoxPublisher<u64> { Box::new(source::range(i * 1000..i * 1000 + 50)) },
        4,
        8,
    );
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(3)] {
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        let seen = h.wait().unwrap();
        assert_eq!(seen.len(), 20 * 50);
        for i in 0..20u64 {
            let inner: Vec<u64> = seen.iter().copied().filter(|x| x / 1000 == i).collect();
            assert_eq!(inner, (i * 1000..i * 1000 + 50).collect::<Vec<_>>());
        }
    }
    let stats = p.stats();
    assert_eq!(stats.subscriptions, 2);
    assert_eq!(stats.inner_subscriptions, 40);
    // Unbounded: every element on the fast path, no queue; Prefetch(3): queues only for the
    // inners that met a full demand.
    assert!(stats.queues <= 20, "{stats:?}");
}

#[test]
fn concat_map_keeps_the_order_of_the_outer() {
    let p = source::range(0u64..5).concat_map(
        |i| -> BoxPublisher<u64> { Box::new(source::range(i * 10..i * 10 + 3)) },
        2,
    );
    let (s, h) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(s));
    assert_eq!(
        h.wait().unwrap(),
        vec![0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42]
    );
}

#[test]
fn values_and_empties_are_merged_without_a_subscription() {
    let p = source::range(0u64..1000).flat_map(|i| if i % 3 == 0 { None } else { Some(i) }, 16, 16);
    let (s, h) = collect(RequestStrategy::Prefetch(5));
    p.subscribe(Box::new(s));
    let expected: Vec<u64> = (0..1000).filter(|i| i % 3 != 0).collect();
    assert_eq!(sorted(h.wait().unwrap()), expected);
    let stats = p.stats();
    assert_eq!((stats.inner_subscriptions, stats.queues), (0, 0));
}

#[test]
fn eager_error_ends_the_stream_at_once_and_cancels_the_others() {
    let endless_cancelled = Arc::new(AtomicBool::new(false));
    let flag = endless_cancelled.clone();
    let p = source::range(0u64..2).flat_map(
        move |i| -> BoxPublisher<u64> {
            if i == 0 {
                Box::new(Watched(source::never(), flag.clone()))
            } else {
                Box::new(source::failed(Error::msg("deliberate inner failure")))
            }
        },
        4,
        4,
    );
    let (s, h) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    assert_eq!(
        h.wait().unwrap_err().to_string(),
        "deliberate inner failure"
    );
    assert!(
        endless_cancelled.load(Ordering::SeqCst),
        "the other inner was cancelled"
    );
}

#[test]
fn delayed_errors_wait_for_the_other_inners() {
    let p = source::range(0u64..4).flat_map_with(
        |i| -> BoxPublisher<u64> {
            if i % 2 == 0 {
                Box::new(source::failed(Error::msg(format!("deliberate {i}"))))
            } else {
                Box::new(source::range(0u64..100))
            }
        },
        MergeConfig::new().delay_errors(true).prefetch(8),
    );
    let seen = Arc::new(AtomicU64::new(0));
    let s = Recorder::new(seen.clone(), u64::MAX);
    let end = s.end.clone();
    p.subscribe(Box::new(s));
    assert_eq!(
        seen.load(Ordering::SeqCst),
        200,
        "every element of the healthy inners"
    );
    let end = end.lock().unwrap().take().expect("terminated");
    let e = end.expect_err("failed");
    match e.downcast_ref::<MergeError>() {
        Some(MergeError::Composite { errors }) => assert_eq!(errors.len(), 2),
        other => panic!("expected a composite error, got {other:?} ({e})"),
    }
}

#[test]
fn an_inner_that_ignores_demand_is_a_missing_backpressure_error() {
    // The subscriber asks for 2; the inner was asked for 8 and sends 50: 2 go straight
    // downstream, 8 fill its queue, the next one finds it full.
    let p = source::range(0u64..1).flat_map(|_| Subscribed(Flood(50)), 1, 8);
    let seen = Arc::new(AtomicU64::new(0));
    let s = Recorder::new(seen.clone(), 2);
    let end = s.end.clone();
    p.subscribe(Box::new(s));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let e = end.lock().unwrap().take().expect("terminated").unwrap_err();
    assert!(
        matches!(
            e.downcast_ref::<MergeError>(),
            Some(MergeError::MissingBackpressure { capacity: 8 })
        ),
        "{e}"
    );
    assert_eq!(p.stats().queues, 1);
}

#[test]
fn request_zero_is_the_rule_3_9_error() {
    let p = merge::merge(vec![source::range(0u64..10)]);
    let s = BadRequester::default();
    let err = s.error.clone();
    p.subscribe(Box::new(s));
    let e = err.lock().unwrap().take().expect("on_error");
    assert!(e.to_string().contains("3.9"), "{e}");
}

#[test]
fn async_inners_from_islands_are_merged() {
    let runtime = Runtime::with_threads(2).unwrap();
    let inners: Vec<_> = (0..8u64)
        .map(|i| Flow::from_iter(i * 1000..i * 1000 + 500).into_publisher(&runtime))
        .collect();
    let p = merge::merge(inners);
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(16)] {
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        let seen = h.wait().unwrap();
        assert_eq!(seen.len(), 8 * 500);
        for i in 0..8u64 {
            let inner: Vec<u64> = seen.iter().copied().filter(|x| x / 1000 == i).collect();
            assert_eq!(inner, (i * 1000..i * 1000 + 500).collect::<Vec<_>>());
        }
    }
}

#[test]
fn observe_on_delivers_on_the_runtime_with_the_75_percent_replenish() {
    let runtime = Runtime::with_threads(1).unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let upstream = Logged {
        inner: source::range(0u64..1000),
        requests: requests.clone(),
    };
    let p = merge::observe_on(upstream, &runtime, 128);
    let caller = std::thread::current().id();
    let other_thread = Arc::new(AtomicBool::new(true));
    let flag = other_thread.clone();
    let (s, h) = rs_impl::subscriber::for_each(RequestStrategy::Unbounded, move |_x: u64| {
        if std::thread::current().id() == caller {
            flag.store(false, Ordering::SeqCst);
        }
    });
    p.subscribe(Box::new(s));
    h.wait().unwrap();
    assert!(
        other_thread.load(Ordering::SeqCst),
        "delivered on the runtime"
    );
    let requests = requests.lock().unwrap();
    assert_eq!(requests[0], 128, "the prefetch");
    assert!(requests[1..].iter().all(|&n| n == 96), "{requests:?}");
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// Marks its flag when cancelled.
struct Watched<P>(P, Arc<AtomicBool>);

impl<P: Publisher<u64>> Publisher<u64> for Watched<P> {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        struct Tap(BoxSubscriber<u64>, Arc<AtomicBool>);
        struct TapSub(SubscriptionRef, Arc<AtomicBool>);
        impl Subscription for TapSub {
            fn request(&self, n: u64) {
                self.0.request(n)
            }
            fn cancel(&self) {
                self.1.store(true, Ordering::SeqCst);
                self.0.cancel()
            }
        }
        impl Subscriber<u64> for Tap {
            fn on_subscribe(&mut self, s: SubscriptionRef) {
                self.0.on_subscribe(Arc::new(TapSub(s, self.1.clone())))
            }
            fn on_next(&mut self, x: u64) {
                self.0.on_next(x)
            }
            fn on_error(&mut self, e: Error) {
                self.0.on_error(e)
            }
            fn on_complete(&mut self) {
                self.0.on_complete()
            }
        }
        self.0.subscribe(Box::new(Tap(subscriber, self.1.clone())));
    }
}

/// Logs every request made to its inner publisher.
struct Logged<P> {
    inner: P,
    requests: Arc<Mutex<Vec<u64>>>,
}

impl<P: Publisher<u64>> Publisher<u64> for Logged<P> {
    fn subscribe(&self, subscriber: BoxSubscriber<u64>) {
        struct Tap(BoxSubscriber<u64>, Arc<Mutex<Vec<u64>>>);
        struct TapSub(SubscriptionRef, Arc<Mutex<Vec<u64>>>);
        impl Subscription for TapSub {
            fn request(&self, n: u64) {
                self.1.lock().unwrap().push(n);
                self.0.request(n)
            }
            fn cancel(&self) {
                self.0.cancel()
            }
        }
        impl Subscriber<u64> for Tap {
            fn on_subscribe(&mut self, s: SubscriptionRef) {
                self.0.on_subscribe(Arc::new(TapSub(s, self.1.clone())))
            }
            fn on_next(&mut self, x: u64) {
                self.0.on_next(x)
            }
            fn on_error(&mut self, e: Error) {
                self.0.on_error(e)
            }
            fn on_complete(&mut self) {
                self.0.on_complete()
            }
        }
        self.inner
            .subscribe(Box::new(Tap(subscriber, self.requests.clone())));
    }
}

/// A broken publisher: sends `n` elements at once, whatever was requested (rule 1.1 broken).
struct Flood(u64);

impl Publisher<u64> for Flood {
    fn subscribe(&self, mut subscriber: BoxSubscriber<u64>) {
        struct Ignore;
        impl Subscription for Ignore {
            fn request(&self, _: u64) {}
            fn cancel(&self) {}
        }
        subscriber.on_subscribe(Arc::new(Ignore));
        for i in 0..self.0 {
            subscriber.on_next(i);
        }
        subscriber.on_complete();
    }
}

/// Requests `limit` at once and counts elements; keeps the terminal signal.
struct Recorder {
    seen: Arc<AtomicU64>,
    limit: u64,
    end: Arc<Mutex<Option<Result<(), Error>>>>,
}

impl Recorder {
    fn new(seen: Arc<AtomicU64>, limit: u64) -> Self {
        Recorder {
            seen,
            limit,
            end: Arc::new(Mutex::new(None)),
        }
    }
}

impl Subscriber<u64> for Recorder {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(self.limit);
    }
    fn on_next(&mut self, _: u64) {
        self.seen.fetch_add(1, Ordering::SeqCst);
    }
    fn on_error(&mut self, e: Error) {
        *self.end.lock().unwrap() = Some(Err(e));
    }
    fn on_complete(&mut self) {
        *self.end.lock().unwrap() = Some(Ok(()));
    }
}

/// Requests 0 (rule 3.9 broken on purpose).
#[derive(Default)]
struct BadRequester {
    error: Arc<Mutex<Option<Error>>>,
}

impl Subscriber<u64> for BadRequester {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(0);
    }
    fn on_next(&mut self, _: u64) {}
    fn on_error(&mut self, e: Error) {
        *self.error.lock().unwrap() = Some(e);
    }
    fn on_complete(&mut self) {}
}

#[allow(dead_code)]
fn unused(_: AtomicUsize) {}

// ---------------------------------------------------------------------------------------------
// The Flow operators: inside the island, on the interpreter's fan-in.

#[test]
fn flow_flat_map_serves_values_iterators_and_subscribed_inners() {
    let runtime = Runtime::with_threads(2).unwrap();
    let inner_runtime = runtime.clone();
    let p = Flow::from_iter(0u64..30)
        .flat_map(
            move |i| -> merge::InnerSource<u64> {
                match i % 3 {
                    0 => merge::InnerSource::Just(i * 1000),
                    1 => merge::InnerSource::Iter(Box::new(i * 1000..i * 1000 + 40)),
                    _ => merge::InnerSource::Publisher(Box::new(
                        Flow::from_iter(i * 1000..i * 1000 + 40).into_publisher(&inner_runtime),
                    )),
                }
            },
            4,
            8,
        )
        .map(|x| x + 1)
        .into_publisher(&runtime);
    for strategy in [RequestStrategy::Unbounded, RequestStrategy::Prefetch(5)] {
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        let seen = h.wait().unwrap();
        for i in 0..30u64 {
            let inner: Vec<u64> = seen
                .iter()
                .map(|x| x - 1)
                .filter(|x| x / 1000 == i)
                .collect();
            let expected: Vec<u64> = if i % 3 == 0 {
                vec![i * 1000]
            } else {
                (i * 1000..i * 1000 + 40).collect()
            };
            assert_eq!(inner, expected, "inner {i}");
        }
    }
}

#[test]
fn flow_concat_map_and_merge() {
    let runtime = Runtime::with_threads(1).unwrap();
    let p = Flow::from_iter(0u64..4)
        .concat_map(
            |i| -> BoxPublisher<u64> { Box::new(source::range(i * 10..i * 10 + 3)) },
            2,
        )
        .into_publisher(&runtime);
    let (s, h) = collect(RequestStrategy::OneByOne);
    p.subscribe(Box::new(s));
    assert_eq!(
        h.wait().unwrap(),
        vec![0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]
    );
    let p = Flow::merge(vec![source::range(0u64..500), source::range(500u64..1000)])
        .into_publisher(&runtime);
    let (s, h) = collect(RequestStrategy::Prefetch(16));
    p.subscribe(Box::new(s));
    assert_eq!(sorted(h.wait().unwrap()), (0..1000).collect::<Vec<_>>());
}

#[test]
fn flow_flat_map_fails_eagerly_or_after_the_others() {
    let runtime = Runtime::with_threads(1).unwrap();
    let make = |delay: bool| {
        Flow::from_iter(0u64..4)
            .flat_map_with(
                |i| -> BoxPublisher<u64> {
                    if i == 1 {
                        Box::new(source::failed(Error::msg("deliberate")))
                    } else {
                        Box::new(source::range(0u64..50))
                    }
                },
                MergeConfig::new().delay_errors(delay).prefetch(8),
            )
            .into_publisher(&runtime)
    };
    let seen = Arc::new(AtomicU64::new(0));
    let s = Recorder::new(seen.clone(), u64::MAX);
    let end = s.end.clone();
    make(true).subscribe(Box::new(s));
    support::wait_until("the delayed error", || end.lock().unwrap().is_some());
    assert_eq!(seen.load(Ordering::SeqCst), 150);
    assert_eq!(
        end.lock().unwrap().take().unwrap().unwrap_err().to_string(),
        "deliberate"
    );
    let (s, h) = collect::<u64>(RequestStrategy::Unbounded);
    make(false).subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap_err().to_string(), "deliberate");
}

#[test]
fn flow_observe_on_moves_the_rest_of_the_flow_to_the_other_runtime() {
    let producer = Runtime::with_threads(1).unwrap();
    let consumer = Runtime::with_threads(1).unwrap();
    let producer_thread = Arc::new(Mutex::new(None));
    let consumer_thread = Arc::new(Mutex::new(None));
    let (pt, ct) = (producer_thread.clone(), consumer_thread.clone());
    let p = Flow::from_iter(0u64..2000)
        .map(move |x| {
            *pt.lock().unwrap() = Some(std::thread::current().id());
            x
        })
        .observe_on(&consumer, 64)
        .map(move |x| {
            *ct.lock().unwrap() = Some(std::thread::current().id());
            x
        })
        .into_publisher(&producer);
    assert_eq!(p_islands(&p), 2);
    let (s, h) = collect(RequestStrategy::Prefetch(32));
    p.subscribe(Box::new(s));
    assert_eq!(h.wait().unwrap(), (0..2000).collect::<Vec<_>>());
    let (a, b) = (
        producer_thread.lock().unwrap().unwrap(),
        consumer_thread.lock().unwrap().unwrap(),
    );
    assert_ne!(a, b, "the two sides ran on the two runtimes");
}

fn p_islands(p: &rs_impl::FlowPublisher<u64>) -> usize {
    format!("{p:?}")
        .split("islands: ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// Takes `take` elements (requesting `batch` at a time), then cancels from inside `on_next`,
/// or panics there.
struct StopAfter {
    take: usize,
    batch: u64,
    panic: bool,
    sub: Option<SubscriptionRef>,
    seen: Arc<Mutex<Vec<u64>>>,
    signals_after: Arc<AtomicUsize>,
}

impl Subscriber<u64> for StopAfter {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        s.request(self.batch);
        self.sub = Some(s);
    }

    fn on_next(&mut self, x: u64) {
        let mut seen = self.seen.lock().unwrap();
        if seen.len() >= self.take {
            self.signals_after.fetch_add(1, Ordering::SeqCst);
            return;
        }
        seen.push(x);
        let n = seen.len();
        drop(seen);
        if n == self.take {
            if self.panic {
                panic!("the subscriber fails at {n}");
            }
            self.sub.as_ref().unwrap().cancel();
        } else if n as u64 % self.batch == 0 {
            self.sub.as_ref().unwrap().request(self.batch);
        }
    }

    fn on_error(&mut self, _: Error) {
        self.signals_after.fetch_add(1, Ordering::SeqCst);
    }

    fn on_complete(&mut self) {
        self.signals_after.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_pulled_flat_map_of_values_and_ranges_keeps_demand_counts_and_the_cancel() {
    // Values (taken in runs by the pulled outer) mixed with known iterators (the typed lane)
    // and empties, under demands that cut the runs anywhere.
    let f = |i: u64| -> merge::InnerSource<u64> {
        match i % 5 {
            0 => merge::InnerSource::Iter(Box::new(i * 1000..i * 1000 + 3)),
            1 => merge::InnerSource::Empty,
            _ => merge::InnerSource::Just(i * 1000),
        }
    };
    let expected: Vec<u64> = (0..500u64)
        .flat_map(|i| match i % 5 {
            0 => (i * 1000..i * 1000 + 3).collect::<Vec<_>>(),
            1 => vec![],
            _ => vec![i * 1000],
        })
        .collect();
    for (mc, strategy) in [
        (128, RequestStrategy::Unbounded),
        (128, RequestStrategy::OneByOne),
        (4, RequestStrategy::Prefetch(7)),
        (3, RequestStrategy::Prefetch(64)),
    ] {
        let p = source::range(0u64..500).flat_map(f, mc, 16);
        let (s, h) = collect(strategy);
        p.subscribe(Box::new(s));
        let seen = h.wait().unwrap();
        assert_eq!(
            sorted(seen.clone()),
            sorted(expected.clone()),
            "{strategy:?}"
        );
        let stats = p.stats();
        assert_eq!((stats.inner_subscriptions, stats.queues), (0, 0));
        assert!(stats.fast_path <= 300, "{stats:?}");
        if matches!(strategy, RequestStrategy::Unbounded) {
            // Nothing waits: every value straight down, every range typed, in the outer's order.
            assert_eq!(seen, expected);
            assert_eq!((stats.fast_path, stats.typed_lane), (300, 300), "{stats:?}");
        }
    }
    // A cancel or a panic from inside `on_next`, in the middle of a run of values: nothing
    // more is delivered.
    for panic in [false, true] {
        for (take, batch) in [(1, 1), (5, 100), (37, 10), (100, u64::MAX)] {
            let p = source::range(0u64..1000).flat_map(source::just, 128, 16);
            let seen = Arc::new(Mutex::new(Vec::new()));
            let after = Arc::new(AtomicUsize::new(0));
            p.subscribe(Box::new(StopAfter {
                take,
                batch,
                panic,
                sub: None,
                seen: seen.clone(),
                signals_after: after.clone(),
            }));
            assert_eq!(*seen.lock().unwrap(), (0..take as u64).collect::<Vec<_>>());
            assert_eq!(after.load(Ordering::SeqCst), 0, "take {take} panic {panic}");
            assert_eq!(
                p.stats().fast_path,
                take as u64,
                "take {take} panic {panic}"
            );
        }
    }
}
