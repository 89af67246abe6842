//! The async-Rust bridges (`rs_impl::compat`), the push source and the `Pull` wake-up, on the
//! futures executors and on tokio. Counts elements, requests, cancels and live items; never
//! time.
#![cfg(not(rs_loom))]
// Tests use std sync types directly.
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::executor::{block_on, LocalPool, ThreadPool};
use futures::{Future, Sink, SinkExt, Stream, StreamExt};
use rs_api::{
    BoxSubscriber, Error, Publisher, SpecViolation, Subscriber, Subscription, SubscriptionRef,
};
use rs_impl::compat::{
    blocking_iter, from_async, from_stream, from_stream_fn, from_try_stream, sink_subscriber,
    stream_subscriber, to_stream, AsyncSubscriber, CompatError, PublisherCompat,
};
use rs_impl::island::Runtime;
use rs_impl::source::{self, push, Pull, Pulled};
use rs_impl::subscriber::{collect, for_each, Cancelled, RequestStrategy};
use rs_impl::{ProducerError, TrySendError};

// ----- support ---------------------------------------------------------------------------------

/// A runtime whose tasks the test runs by hand on its own thread: what it spawns is queued,
/// and `run_until_stalled` moves it into a `LocalPool` and runs that until nothing can move.
struct ManualRuntime {
    pool: LocalPool,
    queue: Arc<Mutex<Vec<futures::future::BoxFuture<'static, ()>>>>,
    runtime: Runtime,
}

impl ManualRuntime {
    fn new() -> Self {
        let queue: Arc<Mutex<Vec<futures::future::BoxFuture<'static, ()>>>> = Arc::default();
        let q = queue.clone();
        ManualRuntime {
            pool: LocalPool::new(),
            queue,
            runtime: Runtime::from_spawner(move |task| q.lock().unwrap().push(task)),
        }
    }

    fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    fn run_until_stalled(&mut self) {
        use futures::task::SpawnExt;
        loop {
            let tasks = std::mem::take(&mut *self.queue.lock().unwrap());
            let none = tasks.is_empty();
            for t in tasks {
                self.pool.spawner().spawn(t).unwrap();
            }
            self.pool.run_until_stalled();
            if none && self.queue.lock().unwrap().is_empty() {
                return;
            }
        }
    }

    /// Runs everything spawned (and what it spawns) as far as it goes on this thread.
    fn run(&mut self) {
        self.run_until_stalled();
    }

    fn run_until<F: Future>(&mut self, f: F) -> F::Output {
        let mut f = std::pin::pin!(f);
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        for _ in 0..1_000 {
            self.run_until_stalled();
            if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
                return out;
            }
        }
        panic!("the future did not complete on the manual runtime");
    }
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

/// What a [`Spy`] saw of the calls made on its subscription.
#[derive(Debug, Default)]
struct Calls {
    requested: AtomicU64,
    requests: AtomicU64,
    cancels: AtomicU64,
    /// The subscriber was dropped by the publisher (3.13).
    subscriber_dropped: AtomicBool,
}

/// Wraps a publisher and records the calls made on its subscriptions.
struct Spy<P> {
    inner: P,
    calls: Arc<Calls>,
}

fn spy<P>(inner: P) -> (Spy<P>, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    (
        Spy {
            inner,
            calls: calls.clone(),
        },
        calls,
    )
}

struct SpySubscriber<T> {
    inner: BoxSubscriber<T>,
    calls: Arc<Calls>,
}

struct SpySubscription {
    inner: SubscriptionRef,
    calls: Arc<Calls>,
}

impl Subscription for SpySubscription {
    fn request(&self, n: u64) {
        self.calls.requests.fetch_add(1, Ordering::SeqCst);
        self.calls.requested.fetch_add(n, Ordering::SeqCst);
        self.inner.request(n);
    }
    fn cancel(&self) {
        self.calls.cancels.fetch_add(1, Ordering::SeqCst);
        self.inner.cancel();
    }
}

impl<T: Send> Subscriber<T> for SpySubscriber<T> {
    fn on_subscribe(&mut self, s: SubscriptionRef) {
        self.inner.on_subscribe(Arc::new(SpySubscription {
            inner: s,
            calls: self.calls.clone(),
        }));
    }
    fn on_next(&mut self, item: T) {
        self.inner.on_next(item);
    }
    fn on_error(&mut self, error: Error) {
        self.inner.on_error(error);
    }
    fn on_complete(&mut self) {
        self.inner.on_complete();
    }
}

impl<T> Drop for SpySubscriber<T> {
    fn drop(&mut self) {
        self.calls.subscriber_dropped.store(true, Ordering::SeqCst);
    }
}

impl<T: Send + 'static, P: Publisher<T>> Publisher<T> for Spy<P> {
    fn subscribe(&self, subscriber: BoxSubscriber<T>) {
        self.inner.subscribe(Box::new(SpySubscriber {
            inner: subscriber,
            calls: self.calls.clone(),
        }));
    }
}

/// An element that counts how many of its kind are alive (created, not yet dropped), and the
/// most ever alive at once: the number of elements buffered anywhere on the path.
#[derive(Debug)]
struct Counted {
    value: u64,
    live: Arc<Live>,
}

#[derive(Debug, Default)]
struct Live {
    now: AtomicUsize,
    max: AtomicUsize,
    made: AtomicU64,
}

impl Live {
    fn make(self: &Arc<Self>, value: u64) -> Counted {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        self.made.fetch_add(1, Ordering::SeqCst);
        Counted {
            value,
            live: self.clone(),
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.live.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `n` counted elements from a `Pull` source.
struct CountedSource {
    next: u64,
    end: Option<u64>,
    live: Arc<Live>,
}

impl Pull<Counted> for CountedSource {
    fn pull(&mut self) -> Pulled<Counted> {
        if Some(self.next) == self.end {
            return Pulled::Complete;
        }
        self.next += 1;
        Pulled::Next(self.live.make(self.next - 1))
    }
}

fn counted(end: Option<u64>, live: &Arc<Live>) -> impl Publisher<Counted> {
    let live = live.clone();
    source::from_pull(move || CountedSource {
        next: 0,
        end,
        live: live.clone(),
    })
}

// ----- Publisher → Stream ---------------------------------------------------------------------

#[test]
fn publisher_to_stream_counts_every_element_futures_executor() {
    for prefetch in [1, 2, 3, 16, 1000] {
        let stream = source::range(0u64..10_000).to_stream(prefetch);
        let items: Vec<u64> = block_on(stream.map(Result::unwrap).collect());
        assert_eq!(
            items,
            (0..10_000).collect::<Vec<_>>(),
            "prefetch {prefetch}"
        );
    }
}

#[test]
fn publisher_to_stream_on_tokio_across_threads() {
    // The publisher emits from a thread of its own (a push source fed by a std thread); the
    // stream is consumed by a tokio task: every element crosses threads through the ring.
    let rt = tokio_rt();
    let (producer, publisher) = push::<u64>(0);
    let stream = publisher.to_stream(64);
    let feeder = std::thread::spawn(move || {
        for i in 0..200_000 {
            producer.blocking_send(i).unwrap();
        }
        producer.complete();
    });
    let sum = rt.block_on(async move {
        tokio::spawn(stream.fold(0u64, |a, x| async move { a + x.unwrap() }))
            .await
            .unwrap()
    });
    feeder.join().unwrap();
    assert_eq!(sum, (0..200_000u64).sum::<u64>());
}

#[test]
fn publisher_to_stream_requests_lazily_and_in_halves() {
    let (p, calls) = spy(source::range(0u64..100));
    let mut stream = p.to_stream(8);
    assert_eq!(
        calls.requests.load(Ordering::SeqCst),
        0,
        "nothing before the first poll"
    );
    let first = block_on(stream.next()).unwrap().unwrap();
    assert_eq!(first, 0);
    assert_eq!(calls.requested.load(Ordering::SeqCst), 8);
    // 8 consumed in all: the replenishing requests of 4 are made only when the next element
    // is wanted.
    for _ in 1..8 {
        block_on(stream.next()).unwrap().unwrap();
    }
    assert_eq!(calls.requested.load(Ordering::SeqCst), 12);
    let mut consumed = 8;
    while let Some(x) = block_on(stream.next()) {
        x.unwrap();
        consumed += 1;
        let requested = calls.requested.load(Ordering::SeqCst);
        assert!(
            requested <= consumed + 8,
            "{requested} requested, {consumed} consumed"
        );
    }
    assert_eq!(consumed, 100);
    // 8, then 4 per 4 consumed; none once on_complete has arrived (rule 2.4).
    assert_eq!(calls.requested.load(Ordering::SeqCst), 100);
    assert_eq!(calls.requests.load(Ordering::SeqCst), 24);
}

#[test]
fn dropping_the_stream_mid_flight_cancels_and_leaks_nothing() {
    let live = Arc::new(Live::default());
    let (p, calls) = spy(counted(None, &live));
    let mut stream = p.to_stream(16);
    for i in 0..40 {
        assert_eq!(block_on(stream.next()).unwrap().unwrap().value, i);
    }
    assert!(live.now.load(Ordering::SeqCst) > 0, "elements buffered");
    drop(stream);
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
    assert!(calls.subscriber_dropped.load(Ordering::SeqCst), "3.13");
    assert_eq!(
        live.now.load(Ordering::SeqCst),
        0,
        "every buffered element dropped"
    );
}

#[test]
fn dropping_the_stream_on_tokio_while_parked_cancels_the_producer() {
    let rt = tokio_rt();
    let (producer, publisher) = push::<u64>(0);
    let (p, calls) = spy(publisher);
    let mut stream = p.to_stream(4);
    producer.try_send(0).unwrap_err(); // no demand before the first poll
    let task = rt.spawn(async move {
        let first = stream.next().await.unwrap().unwrap();
        // Parks here: nothing more is offered until the stream is dropped.
        let _ = tokio::time::timeout(Duration::from_millis(20), stream.next()).await;
        drop(stream);
        first
    });
    producer.blocking_send(7).unwrap();
    assert_eq!(rt.block_on(task).unwrap(), 7);
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
    assert!(matches!(producer.try_send(8), Err(TrySendError::Closed(8))));
    assert!(producer.is_closed());
}

#[test]
fn on_error_is_one_err_item_after_the_elements_then_the_end() {
    let (producer, publisher) = push::<u32>(4);
    for i in 0..3 {
        producer.try_send(i).unwrap();
    }
    producer.fail(Error::msg("sensor unplugged"));
    let items: Vec<_> = block_on(publisher.to_stream(2).collect());
    assert_eq!(items.len(), 4);
    assert_eq!(
        items[..3]
            .iter()
            .map(|r| *r.as_ref().unwrap())
            .collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_eq!(
        items[3].as_ref().unwrap_err().to_string(),
        "sensor unplugged"
    );
}

#[test]
fn ten_million_elements_with_bounded_memory() {
    let live = Arc::new(Live::default());
    let stream = counted(Some(10_000_000), &live).to_stream(64);
    let (n, sum) = block_on(stream.fold((0u64, 0u64), |(n, s), x| async move {
        (n + 1, s + x.unwrap().value)
    }));
    assert_eq!(n, 10_000_000);
    assert_eq!(sum, (0..10_000_000u64).sum::<u64>());
    // At most 64 buffered in the ring, one held ahead by the pull engine, one in the consumer.
    let max = live.max.load(Ordering::SeqCst);
    assert!(
        max <= 64 + 2,
        "at most prefetch + 2 alive at once, saw {max}"
    );
    assert_eq!(live.now.load(Ordering::SeqCst), 0);
}

/// A publisher that ignores demand: sends `n` elements at once (rule 1.1 broken).
struct Flood(u64);

impl Publisher<u64> for Flood {
    fn subscribe(&self, mut s: BoxSubscriber<u64>) {
        struct Nop;
        impl Subscription for Nop {
            fn request(&self, _: u64) {}
            fn cancel(&self) {}
        }
        s.on_subscribe(Arc::new(Nop));
        for i in 0..self.0 {
            s.on_next(i);
        }
        s.on_complete();
    }
}

#[test]
fn a_publisher_that_sends_more_than_requested_does_not_grow_the_buffer() {
    let (p, calls) = spy(Flood(1000));
    let items: Vec<_> = block_on(p.to_stream(8).collect());
    // The 8 that fit, then the typed error; the rest were dropped, not buffered.
    assert_eq!(items.len(), 9);
    let e = items[8].as_ref().unwrap_err();
    assert!(matches!(
        e.downcast_ref::<CompatError>(),
        Some(CompatError::Overflow { capacity: 8 })
    ));
    assert!(e.to_string().contains("rule 1.1"));
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
}

/// A subscription that counts its calls.
#[derive(Default)]
struct Counting(Calls);

impl Subscription for Counting {
    fn request(&self, n: u64) {
        self.0.requested.fetch_add(n, Ordering::SeqCst);
    }
    fn cancel(&self) {
        self.0.cancels.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn stream_subscriber_cancels_a_second_subscription_and_a_late_one() {
    let (mut subscriber, stream) = stream_subscriber::<u8>(2);
    let (first, second) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    subscriber.on_subscribe(first.clone());
    subscriber.on_subscribe(second.clone());
    assert_eq!(first.0.cancels.load(Ordering::SeqCst), 0);
    assert_eq!(second.0.cancels.load(Ordering::SeqCst), 1, "2.5");
    drop(stream); // never polled: the subscription it never took is cancelled
    assert_eq!(first.0.cancels.load(Ordering::SeqCst), 1);
    assert_eq!(
        first.0.requested.load(Ordering::SeqCst),
        0,
        "never polled, never requested"
    );

    let (mut subscriber, stream) = stream_subscriber::<u8>(2);
    drop(stream);
    let late = Arc::new(Counting::default());
    subscriber.on_subscribe(late.clone()); // the stream is gone already
    assert_eq!(late.0.cancels.load(Ordering::SeqCst), 1);
}

// ----- Stream → Publisher ---------------------------------------------------------------------

#[test]
fn stream_to_publisher_on_a_thread_pool() {
    let pool = ThreadPool::builder().pool_size(2).create().unwrap();
    for strategy in [
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(7),
        RequestStrategy::Unbounded,
    ] {
        let p = from_stream(
            futures::stream::iter(0..5000u32),
            &Runtime::from_spawn(pool.clone()),
        );
        let (s, result) = collect(strategy);
        p.subscribe(Box::new(s));
        assert_eq!(result.wait().unwrap(), (0..5000).collect::<Vec<_>>());
    }
}

#[test]
fn stream_to_publisher_on_tokio() {
    let rt = tokio_rt();
    let p = from_stream(
        futures::stream::iter(0..10_000u64),
        &Runtime::tokio(rt.handle().clone()),
    );
    let (s, result) = collect(RequestStrategy::Prefetch(32));
    p.subscribe(Box::new(s));
    let items = rt.block_on(result).unwrap(); // the handle is a future
    assert_eq!(items.len(), 10_000);
}

/// A stream that counts how often it is polled and how many elements are alive, and is
/// pending (woken from a timer thread) every `gap` elements.
struct Gappy {
    next: u64,
    end: u64,
    gap: u64,
    polls: Arc<AtomicU64>,
    live: Arc<Live>,
    armed: bool,
    dropped: Arc<AtomicBool>,
}

impl Stream for Gappy {
    type Item = Counted;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Counted>> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.next == self.end {
            return Poll::Ready(None);
        }
        if self.next % self.gap == 0 && !self.armed {
            self.armed = true;
            let waker = cx.waker().clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(2));
                waker.wake();
            });
            return Poll::Pending;
        }
        self.armed = false;
        self.next += 1;
        Poll::Ready(Some(self.live.make(self.next - 1)))
    }
}

impl Drop for Gappy {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_stream_pending_for_a_while_then_resuming_on_tokio() {
    let rt = tokio_rt();
    let live = Arc::new(Live::default());
    let polls = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let stream = Gappy {
        next: 0,
        end: 100,
        gap: 10,
        polls: polls.clone(),
        live: live.clone(),
        armed: false,
        dropped: dropped.clone(),
    };
    let p = from_stream(stream, &Runtime::tokio(rt.handle().clone()));
    let (s, result) = collect(RequestStrategy::Prefetch(4));
    p.subscribe(Box::new(s));
    let items = result.wait().unwrap();
    assert_eq!(
        items.iter().map(|c| c.value).collect::<Vec<_>>(),
        (0..100).collect::<Vec<_>>()
    );
    // 100 elements + 10 pending answers + the end: woken by the timer, never polled in a loop.
    assert_eq!(polls.load(Ordering::SeqCst), 111);
    assert!(dropped.load(Ordering::SeqCst), "dropped after its end");
}

#[test]
fn stream_to_publisher_polls_only_while_there_is_demand() {
    let polls = Arc::new(AtomicU64::new(0));
    let counting = {
        let polls = polls.clone();
        futures::stream::iter(0..1000u32).inspect(move |_| {
            polls.fetch_add(1, Ordering::SeqCst);
        })
    };
    let mut pool = ManualRuntime::new();
    let p = from_stream(counting, pool.runtime());
    let got = Arc::new(Mutex::new(Vec::new()));
    let sub = Arc::new(Mutex::new(None::<SubscriptionRef>));
    struct Manual(Arc<Mutex<Vec<u32>>>, Arc<Mutex<Option<SubscriptionRef>>>);
    impl Subscriber<u32> for Manual {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            *self.1.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, x: u32) {
            self.0.lock().unwrap().push(x);
        }
        fn on_error(&mut self, e: Error) {
            panic!("{e}");
        }
        fn on_complete(&mut self) {}
    }
    p.subscribe(Box::new(Manual(got.clone(), sub.clone())));
    pool.run_until_stalled();
    // No demand: one look-ahead poll (to learn an end without waiting for demand), whose
    // element is held, not delivered.
    assert_eq!(polls.load(Ordering::SeqCst), 1);
    assert!(got.lock().unwrap().is_empty());
    let s = sub.lock().unwrap().clone().unwrap();
    s.request(3);
    pool.run_until_stalled();
    assert_eq!(
        polls.load(Ordering::SeqCst),
        3 + 1,
        "the requested, then one ahead"
    );
    assert_eq!(*got.lock().unwrap(), vec![0, 1, 2]);
    s.request(2);
    pool.run_until_stalled();
    assert_eq!(polls.load(Ordering::SeqCst), 5 + 1);
    assert_eq!(*got.lock().unwrap(), vec![0, 1, 2, 3, 4]);
    s.cancel();
    pool.run_until_stalled();
    s.request(10); // 3.6: a no-op after cancel
    pool.run_until_stalled();
    assert_eq!(polls.load(Ordering::SeqCst), 6);
    assert_eq!(got.lock().unwrap().len(), 5);
}

#[test]
fn a_failed_or_finished_stream_ends_without_demand() {
    let mut pool = ManualRuntime::new();
    let (s, r) = collect::<u8>(RequestStrategy::Prefetch(1));
    struct NoRequest<S>(S);
    impl<S: Subscriber<u8>> Subscriber<u8> for NoRequest<S> {
        fn on_subscribe(&mut self, _s: SubscriptionRef) {} // never requests
        fn on_next(&mut self, x: u8) {
            self.0.on_next(x);
        }
        fn on_error(&mut self, e: Error) {
            self.0.on_error(e);
        }
        fn on_complete(&mut self) {
            self.0.on_complete();
        }
    }
    let failing = futures::stream::iter([Err::<u8, Error>(Error::msg("no disk"))]);
    from_try_stream(failing, pool.runtime()).subscribe(Box::new(NoRequest(s)));
    pool.run_until_stalled();
    assert_eq!(r.try_take().unwrap().unwrap_err().to_string(), "no disk");

    let (s, r) = collect::<u8>(RequestStrategy::Prefetch(1));
    from_stream(futures::stream::empty::<u8>(), pool.runtime()).subscribe(Box::new(NoRequest(s)));
    pool.run_until_stalled();
    assert_eq!(r.try_take().unwrap().unwrap(), Vec::<u8>::new());
}

/// Pending forever (never wakes); records its drop.
struct Forever(Arc<AtomicBool>);

impl Stream for Forever {
    type Item = u8;
    fn poll_next(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<u8>> {
        Poll::Pending
    }
}

impl Drop for Forever {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn cancel_drops_a_pending_stream_at_once() {
    let mut pool = ManualRuntime::new();
    let dropped = Arc::new(AtomicBool::new(false));
    let p = from_stream(Forever(dropped.clone()), pool.runtime());
    let (s, handle) = collect::<u8>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    pool.run_until_stalled();
    assert!(!dropped.load(Ordering::SeqCst));
    handle.cancel(); // wakes the parked task
    pool.run_until_stalled();
    assert!(
        dropped.load(Ordering::SeqCst),
        "3.13: dropped while pending"
    );
    assert!(handle.try_take().unwrap().unwrap_err().is::<Cancelled>());
}

#[test]
fn errors_cross_from_stream_to_publisher_and_the_stream_is_dropped() {
    #[derive(Debug, thiserror::Error)]
    #[error("disk full")]
    struct DiskFull;
    let mut pool = ManualRuntime::new();
    let items = futures::stream::iter(vec![Ok(1u8), Err(DiskFull), Ok(3)]);
    let p = from_try_stream(items, pool.runtime());
    let (s, handle) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    pool.run();
    let e = handle.wait().unwrap_err();
    assert!(e.is::<DiskFull>(), "the original error, downcastable");
}

#[test]
fn request_zero_on_a_stream_publisher_is_the_3_9_error() {
    let mut pool = ManualRuntime::new();
    let p = from_stream(futures::stream::iter(0..10u8), pool.runtime());
    struct Zero;
    impl Subscriber<u8> for Zero {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            s.request(0);
        }
        fn on_next(&mut self, _: u8) {
            panic!("no element after request(0)");
        }
        fn on_error(&mut self, e: Error) {
            assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
            ERRORS.fetch_add(1, Ordering::SeqCst);
        }
        fn on_complete(&mut self) {
            panic!("no completion after request(0)");
        }
    }
    static ERRORS: AtomicUsize = AtomicUsize::new(0);
    p.subscribe(Box::new(Zero));
    pool.run();
    assert_eq!(ERRORS.load(Ordering::SeqCst), 1);
}

#[test]
fn a_stream_publisher_serves_one_subscriber() {
    let mut pool = ManualRuntime::new();
    let p = from_stream(futures::stream::iter(0..3u8), pool.runtime());
    let (a, ra) = collect(RequestStrategy::Unbounded);
    let (b, rb) = collect::<u8>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(a));
    p.subscribe(Box::new(b));
    pool.run();
    assert_eq!(ra.wait().unwrap(), vec![0, 1, 2]);
    let e = rb.wait().unwrap_err();
    assert!(matches!(
        e.spec_violation(),
        Some(SpecViolation::Rejected { .. })
    ));
}

#[test]
fn a_cold_stream_publisher_makes_a_fresh_stream_per_subscriber() {
    let made = Arc::new(AtomicUsize::new(0));
    let m = made.clone();
    let p = from_stream_fn(
        move || {
            m.fetch_add(1, Ordering::SeqCst);
            futures::stream::iter(0..1000u32)
        },
        &Runtime::thread_per_task(),
    );
    assert_eq!(
        made.load(Ordering::SeqCst),
        0,
        "nothing made before a subscriber"
    );
    let results: Vec<_> = [
        RequestStrategy::OneByOne,
        RequestStrategy::Prefetch(7),
        RequestStrategy::Unbounded,
    ]
    .into_iter()
    .map(|strategy| {
        let (s, result) = collect(strategy);
        p.subscribe(Box::new(s));
        result
    })
    .collect();
    for result in results {
        assert_eq!(result.wait().unwrap(), (0..1000).collect::<Vec<_>>());
    }
    assert_eq!(made.load(Ordering::SeqCst), 3, "one stream per subscriber");
}

#[test]
fn a_panicking_stream_factory_is_on_subscribe_then_on_error() {
    let p = from_stream_fn(
        || -> futures::stream::Iter<std::ops::Range<u8>> { panic!("no device") },
        &Runtime::thread_per_task(),
    );
    let (s, result) = collect::<u8>(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s)); // the panic stays inside subscribe
    let e = result.wait().unwrap_err();
    assert!(e.to_string().contains("no device"), "{e}");
}

#[test]
fn a_panicking_stream_is_on_error_and_a_panicking_subscriber_is_cancelled() {
    let mut pool = ManualRuntime::new();
    let boom = futures::stream::iter(0..3u8).map(|x| if x == 2 { panic!("bad sector") } else { x });
    let p = from_stream(boom, pool.runtime());
    let (s, r) = collect(RequestStrategy::Unbounded);
    p.subscribe(Box::new(s));
    pool.run();
    let e = r.wait().unwrap_err();
    assert!(e.to_string().contains("bad sector"), "{e}");

    let dropped = Arc::new(AtomicBool::new(false));
    let counting = Gappy {
        next: 0,
        end: 1000,
        gap: u64::MAX,
        polls: Arc::new(AtomicU64::new(0)),
        live: Arc::new(Live::default()),
        armed: true,
        dropped: dropped.clone(),
    };
    let p = from_stream(counting, pool.runtime());
    let (s, r) = for_each(RequestStrategy::Unbounded, |c: Counted| {
        assert!(c.value < 5, "panics at 5");
    });
    p.subscribe(Box::new(s));
    pool.run();
    assert!(r.wait().unwrap_err().is::<rs_impl::subscriber::Panicked>());
    assert!(
        dropped.load(Ordering::SeqCst),
        "the stream is dropped with the subscriber"
    );
}

#[test]
fn ten_million_elements_stream_to_publisher_bounded_on_tokio() {
    let rt = tokio_rt();
    let live = Arc::new(Live::default());
    let l2 = live.clone();
    let stream = futures::stream::iter(0..10_000_000u64).map(move |i| l2.make(i));
    let p = from_stream(stream, &Runtime::tokio(rt.handle().clone()));
    let sum = Arc::new(AtomicU64::new(0));
    let s2 = sum.clone();
    let (s, done) = for_each(RequestStrategy::Prefetch(64), move |c: Counted| {
        s2.fetch_add(c.value, Ordering::Relaxed);
    });
    p.subscribe(Box::new(s));
    done.wait().unwrap();
    assert_eq!(sum.load(Ordering::SeqCst), (0..10_000_000u64).sum::<u64>());
    // Nothing buffered: each element polled goes straight to on_next and is dropped there,
    // but for the one a look-ahead poll may hold while demand is used up.
    assert!(live.max.load(Ordering::SeqCst) <= 2);
}

// ----- round trip -----------------------------------------------------------------------------

#[test]
fn round_trip_publisher_stream_operators_publisher_on_tokio() {
    let rt = tokio_rt();
    let doubled = source::range(0u64..1000)
        .to_stream(16)
        .map(|x| x.map(|x| x * 2))
        .filter(|x| futures::future::ready(x.as_ref().map_or(true, |x| x % 3 == 0)));
    let p = from_try_stream(doubled, &Runtime::tokio(rt.handle().clone()));
    let (s, result) = collect(RequestStrategy::Prefetch(8));
    p.subscribe(Box::new(s));
    let items = result.wait().unwrap();
    let expected: Vec<u64> = (0..1000).map(|x| x * 2).filter(|x| x % 3 == 0).collect();
    assert_eq!(items, expected);
}

// ----- Sink as subscriber ---------------------------------------------------------------------

/// A sink with room for `room` elements per flush, recording every call.
#[derive(Default)]
struct Recording {
    accepted: Vec<u32>,
    since_flush: usize,
    room: usize,
    ready_calls: usize,
    flushes: usize,
    closed: bool,
    fail_at: Option<u32>,
}

#[derive(Clone)]
struct RecordingSink(Arc<Mutex<Recording>>);

#[derive(Debug, thiserror::Error)]
#[error("sink rejected {0}")]
struct Rejected(u32);

impl Sink<u32> for RecordingSink {
    type Error = Rejected;
    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Rejected>> {
        let mut r = self.0.lock().unwrap();
        r.ready_calls += 1;
        if r.since_flush < r.room {
            Poll::Ready(Ok(()))
        } else {
            // Full until flushed: make room and wake (a flush "completes" later).
            r.since_flush = 0;
            r.flushes += 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
    fn start_send(self: Pin<&mut Self>, item: u32) -> Result<(), Rejected> {
        let mut r = self.0.lock().unwrap();
        if r.fail_at == Some(item) {
            return Err(Rejected(item));
        }
        r.accepted.push(item);
        r.since_flush += 1;
        Ok(())
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Rejected>> {
        let mut r = self.0.lock().unwrap();
        r.since_flush = 0;
        r.flushes += 1;
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Rejected>> {
        let mut r = self.0.lock().unwrap();
        r.closed = true;
        Poll::Ready(Ok(()))
    }
}

#[test]
fn sink_subscriber_requests_as_the_sink_has_room_and_closes_at_the_end() {
    let pool = ThreadPool::builder().pool_size(2).create().unwrap();
    let rec = Arc::new(Mutex::new(Recording {
        room: 3,
        ..Recording::default()
    }));
    let (p, calls) = spy(source::range(0u32..50));
    let (s, done) = sink_subscriber(
        RecordingSink(rec.clone()),
        &Runtime::from_spawn(pool.clone()),
    );
    p.subscribe(Box::new(s));
    done.wait().unwrap();
    let r = rec.lock().unwrap();
    assert_eq!(r.accepted, (0..50).collect::<Vec<_>>());
    assert!(r.closed, "closed on completion");
    // One request of 1 per ready sink, one per element; none after on_complete (rule 2.4).
    assert_eq!(calls.requested.load(Ordering::SeqCst), 50);
    assert_eq!(calls.requests.load(Ordering::SeqCst), 50);
    assert!(r.ready_calls >= 50);
}

#[test]
fn a_sink_error_cancels_upstream() {
    let pool = ThreadPool::builder().pool_size(2).create().unwrap();
    let rec = Arc::new(Mutex::new(Recording {
        room: 100,
        fail_at: Some(5),
        ..Recording::default()
    }));
    let (p, calls) = spy(source::range(0u32..));
    let (s, done) = sink_subscriber(
        RecordingSink(rec.clone()),
        &Runtime::from_spawn(pool.clone()),
    );
    p.subscribe(Box::new(s));
    let e = done.wait().unwrap_err();
    assert!(e.is::<Rejected>(), "{e}");
    // The completion resolves when the task ends; the cancel follows as the stream is dropped.
    for _ in 0..1000 {
        if calls.subscriber_dropped.load(Ordering::SeqCst) {
            break;
        }
        std::thread::yield_now();
    }
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
    assert!(calls.subscriber_dropped.load(Ordering::SeqCst));
    assert!(!rec.lock().unwrap().closed, "not closed after an error");
}

#[test]
fn sink_subscriber_into_a_bounded_futures_channel_on_tokio() {
    let rt = tokio_rt();
    let (tx, rx) = futures::channel::mpsc::channel::<u64>(2);
    let (s, done) = sink_subscriber(tx, &Runtime::tokio(rt.handle().clone()));
    source::range(0u64..10_000).subscribe(Box::new(s));
    let got: Vec<u64> = rt.block_on(rx.collect());
    rt.block_on(done).unwrap();
    assert_eq!(got.len(), 10_000);
}

#[test]
fn upstream_error_reaches_the_sink_subscribers_completion() {
    let mut pool = ManualRuntime::new();
    let (tx, _rx) = futures::channel::mpsc::channel::<u64>(2);
    let (s, done) = sink_subscriber(tx.sink_map_err(|_| Error::msg("closed")), pool.runtime());
    source::failed::<u64>(Error::msg("upstream broke")).subscribe(Box::new(s));
    assert_eq!(
        pool.run_until(done).unwrap_err().to_string(),
        "upstream broke"
    );
}

// ----- async subscriber -----------------------------------------------------------------------

struct Slow {
    seen: Arc<Mutex<Vec<u64>>>,
    outstanding_max: Arc<AtomicU64>,
    calls: Arc<Calls>,
    completed: Arc<AtomicBool>,
    panic_at: Option<u64>,
}

#[async_trait::async_trait]
impl AsyncSubscriber<u64> for Slow {
    async fn on_next(&mut self, item: u64) -> ControlFlow<()> {
        tokio::time::sleep(Duration::from_micros(50)).await;
        if Some(item) == self.panic_at {
            panic!("async callback failed at {item}");
        }
        let mut seen = self.seen.lock().unwrap();
        seen.push(item);
        let outstanding = self.calls.requested.load(Ordering::SeqCst) - seen.len() as u64;
        self.outstanding_max
            .fetch_max(outstanding, Ordering::SeqCst);
        ControlFlow::Continue(())
    }
    async fn on_complete(&mut self) {
        self.completed.store(true, Ordering::SeqCst);
    }
}

#[test]
fn async_subscriber_awaiting_is_backpressure_on_tokio() {
    let rt = tokio_rt();
    let (p, calls) = spy(source::range(0u64..200));
    let slow = Slow {
        seen: Arc::new(Mutex::new(Vec::new())),
        outstanding_max: Arc::new(AtomicU64::new(0)),
        calls: calls.clone(),
        completed: Arc::new(AtomicBool::new(false)),
        panic_at: None,
    };
    let (seen, max, completed) = (
        slow.seen.clone(),
        slow.outstanding_max.clone(),
        slow.completed.clone(),
    );
    let (s, done) = from_async(slow, 8, &Runtime::tokio(rt.handle().clone()));
    p.subscribe(Box::new(s));
    rt.block_on(done).unwrap();
    assert_eq!(*seen.lock().unwrap(), (0..200).collect::<Vec<_>>());
    assert!(completed.load(Ordering::SeqCst));
    assert!(
        max.load(Ordering::SeqCst) <= 8,
        "never more than prefetch outstanding"
    );
}

#[test]
fn a_panicking_async_subscriber_cancels_upstream() {
    let rt = tokio_rt();
    let (p, calls) = spy(source::range(0u64..));
    let slow = Slow {
        seen: Arc::new(Mutex::new(Vec::new())),
        outstanding_max: Arc::new(AtomicU64::new(0)),
        calls: calls.clone(),
        completed: Arc::new(AtomicBool::new(false)),
        panic_at: Some(3),
    };
    let (s, done) = from_async(slow, 4, &Runtime::tokio(rt.handle().clone()));
    p.subscribe(Box::new(s));
    let e = rt.block_on(done).unwrap_err();
    assert!(matches!(
        e.downcast_ref::<CompatError>(),
        Some(CompatError::SubscriberPanicked { .. })
    ));
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
}

#[test]
fn async_subscriber_break_cancels_and_completion_cancel_works() {
    struct Until(u64);
    #[async_trait::async_trait]
    impl AsyncSubscriber<u64> for Until {
        async fn on_next(&mut self, item: u64) -> ControlFlow<()> {
            if item == self.0 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
    }
    let pool = ThreadPool::builder().pool_size(1).create().unwrap();
    let (p, calls) = spy(source::range(0u64..));
    let (s, done) = from_async(Until(10), 4, &Runtime::from_spawn(pool.clone()));
    p.subscribe(Box::new(s));
    done.wait().unwrap();
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);

    let (p, calls) = spy(source::never::<u64>());
    let (s, done) = from_async(Until(10), 4, &Runtime::from_spawn(pool.clone()));
    p.subscribe(Box::new(s));
    done.cancel();
    assert!(done.wait().unwrap_err().is::<Cancelled>());
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
}

// ----- blocking iterator ----------------------------------------------------------------------

#[test]
fn blocking_iter_reads_a_publisher_from_another_thread_and_cancels_on_drop() {
    let (producer, publisher) = push::<u32>(0);
    let (p, calls) = spy(publisher);
    let feeder = std::thread::spawn(move || {
        let mut sent = 0;
        while producer.blocking_send(sent).is_ok() {
            sent += 1;
        }
        sent
    });
    let first: Vec<u32> = blocking_iter(&p, 4).take(100).map(Result::unwrap).collect();
    assert_eq!(first, (0..100).collect::<Vec<_>>());
    let sent = feeder.join().unwrap();
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
    // With capacity 0 only requested elements were taken: 100 + what was still requested.
    assert!(sent <= 100 + 4, "sent {sent}");
}

// ----- push source ----------------------------------------------------------------------------

#[test]
fn push_capacity_zero_waits_for_demand() {
    let (producer, publisher) = push::<u8>(0);
    assert!(matches!(producer.try_send(1), Err(TrySendError::Full(1))));
    let (s, handle) = collect(RequestStrategy::Prefetch(2));
    publisher.subscribe(Box::new(s));
    producer.try_send(1).unwrap();
    producer.try_send(2).unwrap();
    // Prefetch(2) replenishes 1 after each consumed: room for exactly one more each time.
    producer.try_send(3).unwrap();
    producer.complete();
    assert!(matches!(producer.try_send(4), Err(TrySendError::Closed(4))));
    assert_eq!(handle.wait().unwrap(), vec![1, 2, 3]);
}

#[test]
fn push_offer_without_demand_is_full_and_blocking_offer_waits() {
    let (producer, publisher) = push::<u64>(2);
    let sub = Arc::new(Mutex::new(None::<SubscriptionRef>));
    let got = Arc::new(Mutex::new(Vec::new()));
    struct Manual(Arc<Mutex<Vec<u64>>>, Arc<Mutex<Option<SubscriptionRef>>>);
    impl Subscriber<u64> for Manual {
        fn on_subscribe(&mut self, s: SubscriptionRef) {
            *self.1.lock().unwrap() = Some(s);
        }
        fn on_next(&mut self, x: u64) {
            self.0.lock().unwrap().push(x);
        }
        fn on_error(&mut self, e: Error) {
            panic!("{e}");
        }
        fn on_complete(&mut self) {
            self.0.lock().unwrap().push(u64::MAX);
        }
    }
    publisher.subscribe(Box::new(Manual(got.clone(), sub.clone())));
    producer.try_send(0).unwrap();
    producer.try_send(1).unwrap();
    assert!(matches!(producer.try_send(2), Err(TrySendError::Full(2))));
    let p2 = producer.clone();
    let blocked = std::thread::spawn(move || {
        p2.blocking_send(2).unwrap();
        p2.complete();
    });
    let s = sub.lock().unwrap().clone().unwrap();
    s.request(1);
    blocked.join().unwrap(); // room appeared: the blocked offer went through
    assert_eq!(*got.lock().unwrap(), vec![0]);
    s.request(5);
    assert_eq!(*got.lock().unwrap(), vec![0, 1, 2, u64::MAX]);
}

#[test]
fn push_async_offer_on_tokio_and_abandonment() {
    let rt = tokio_rt();
    let (producer, publisher) = push::<u64>(1);
    let (s, handle) = collect(RequestStrategy::OneByOne);
    publisher.subscribe(Box::new(s));
    rt.block_on(async move {
        for i in 0..1000 {
            producer.send(i).await.unwrap();
        }
        // dropped without complete: the producer vanished
    });
    let e = rt.block_on(handle).unwrap_err(); // awaited on tokio
    assert_eq!(
        e.downcast_ref::<ProducerError>(),
        Some(&ProducerError::Dropped),
        "{e}"
    );
}

#[test]
fn push_cancel_closes_the_producer_and_drops_the_queue() {
    let live = Arc::new(Live::default());
    let (producer, publisher) = push::<Counted>(8);
    for i in 0..5 {
        producer.try_send(live.make(i)).unwrap();
    }
    let (s, handle) = collect::<Counted>(RequestStrategy::Prefetch(2));
    handle.cancel(); // cancelled before subscribing: nothing is requested
    publisher.subscribe(Box::new(s));
    assert!(producer.is_closed());
    assert_eq!(
        live.now.load(Ordering::SeqCst),
        0,
        "queued elements dropped"
    );
    let back = producer.try_send(live.make(9)).unwrap_err().into_inner();
    assert_eq!(back.value, 9);
}

#[test]
fn push_serves_one_subscriber() {
    let (producer, publisher) = push::<u8>(1);
    let (a, ra) = collect(RequestStrategy::Unbounded);
    let (b, rb) = collect::<u8>(RequestStrategy::Unbounded);
    publisher.subscribe(Box::new(a));
    publisher.subscribe(Box::new(b));
    producer.try_send(1).unwrap();
    producer.complete();
    assert_eq!(ra.wait().unwrap(), vec![1]);
    assert!(matches!(
        rb.wait().unwrap_err().spec_violation(),
        Some(SpecViolation::Rejected { .. })
    ));
}

#[test]
fn push_from_many_threads_loses_nothing() {
    let (producer, publisher) = push::<u64>(4);
    let (s, handle) = collect(RequestStrategy::Prefetch(16));
    publisher.subscribe(Box::new(s));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let p = producer.clone();
            std::thread::spawn(move || {
                for i in 0..10_000 {
                    p.blocking_send(t * 10_000 + i).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    producer.complete();
    let mut items = handle.wait().unwrap();
    items.sort_unstable();
    assert_eq!(items, (0..40_000).collect::<Vec<_>>());
}

// ----- Pull: not ready, wake me later ---------------------------------------------------------

/// A one-slot mailbox (`Some(None)`: the end) and the engine's waker.
type Slot = Mutex<(Option<Option<u64>>, Option<std::task::Waker>)>;

/// A pull source fed one element at a time from another thread through a one-slot mailbox.
struct Mailbox(Arc<Slot>);

impl Pull<u64> for Mailbox {
    fn set_waker(&mut self, waker: std::task::Waker) {
        self.0.lock().unwrap().1 = Some(waker);
    }
    fn pull(&mut self) -> Pulled<u64> {
        match self.0.lock().unwrap().0.take() {
            Some(Some(x)) => Pulled::Next(x),
            Some(None) => Pulled::Complete,
            None => Pulled::NotReady,
        }
    }
}

#[test]
fn pull_not_ready_then_woken_from_another_thread_loses_no_wake_up() {
    let slot = Arc::new(Mutex::new((None, None)));
    let s2 = slot.clone();
    let p = source::from_pull(move || Mailbox(s2.clone()));
    let (subscriber, handle) = collect(RequestStrategy::Prefetch(4));
    p.subscribe(Box::new(subscriber));
    let feeder = std::thread::spawn(move || {
        for item in (0..20_000).map(Some).chain([None]) {
            loop {
                let mut g = slot.lock().unwrap();
                if g.0.is_none() {
                    g.0 = Some(item);
                    let w = g.1.clone().unwrap();
                    drop(g);
                    w.wake();
                    break;
                }
                drop(g);
                std::thread::yield_now();
            }
        }
    });
    feeder.join().unwrap();
    assert_eq!(handle.wait().unwrap(), (0..20_000).collect::<Vec<_>>());
}

// ----- open ranges ----------------------------------------------------------------------------

#[test]
fn open_ranges_run_to_the_maximum_then_complete() {
    let (s, r) = collect(RequestStrategy::Prefetch(16));
    source::range(-3i8..).subscribe(Box::new(s));
    assert_eq!(r.wait().unwrap(), (-3i8..=i8::MAX).collect::<Vec<_>>());
    let (s, r) = collect(RequestStrategy::Unbounded);
    source::range(1u16..=3).subscribe(Box::new(s));
    assert_eq!(r.wait().unwrap(), vec![1, 2, 3]);
    let first: Vec<u64> = source::range(u64::MAX - 2..)
        .blocking_iter(2)
        .map(Result::unwrap)
        .collect();
    assert_eq!(first, vec![u64::MAX - 2, u64::MAX - 1, u64::MAX]);
    let _ = to_stream::<u64, _>(&source::range(0u64..), 1);
}

// ----- handle as a future, externally driven subscriber --------------------------------------

#[test]
fn handle_future_wakes_on_completion_and_on_cancel() {
    let (producer, publisher) = push::<u8>(0);
    let (s, handle) = collect(RequestStrategy::Prefetch(2));
    publisher.subscribe(Box::new(s));
    let mut handle = Box::pin(handle);
    let woken = Arc::new(AtomicBool::new(false));
    struct Flag(Arc<AtomicBool>);
    impl std::task::Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let waker = std::task::Waker::from(Arc::new(Flag(woken.clone())));
    let mut cx = Context::from_waker(&waker);
    assert!(handle.as_mut().poll(&mut cx).is_pending());
    producer.try_send(1).unwrap();
    assert!(!woken.load(Ordering::SeqCst), "no wake-up before the end");
    producer.complete();
    assert!(woken.load(Ordering::SeqCst));
    assert!(matches!(handle.as_mut().poll(&mut cx), Poll::Ready(Ok(ref v)) if v == &vec![1]));
    // Taken once: a second poll says so instead of hanging.
    assert!(matches!(handle.as_mut().poll(&mut cx), Poll::Ready(Err(_))));
}

#[test]
fn external_subscriber_bounded_by_its_capacity_across_threads() {
    use rs_impl::subscriber::external;
    let (p, calls) = spy(source::range(0u64..100_000));
    let (s, requester, mut signals) = external::<u64>(16);
    p.subscribe(Box::new(s));
    let driver = std::thread::spawn(move || {
        let mut granted = 0;
        while granted < 100_000 {
            let g = requester.request(100_000 - granted);
            granted += g;
            if g == 0 {
                std::thread::yield_now();
            }
        }
        requester
    });
    let mut n = 0u64;
    while let Some(x) = signals.recv() {
        assert_eq!(x.unwrap(), n);
        n += 1;
    }
    assert_eq!(n, 100_000);
    let requester = driver.join().unwrap();
    assert_eq!(calls.requested.load(Ordering::SeqCst), 100_000);
    assert_eq!(
        requester.request(1),
        0,
        "after the end, nothing is requested"
    );
}

#[test]
fn external_subscriber_passes_request_zero_on_and_cancels_when_dropped() {
    use rs_impl::subscriber::external;
    let (s, requester, mut signals) = external::<u8>(4);
    requester.request(0); // before on_subscribe: kept
    source::range(0u8..10).subscribe(Box::new(s));
    let e = signals.recv().unwrap().unwrap_err();
    assert_eq!(e.spec_violation(), Some(&SpecViolation::NonPositiveRequest));
    assert!(signals.recv().is_none());

    let (p, calls) = spy(source::never::<u8>());
    let (s, requester, signals) = external::<u8>(4);
    p.subscribe(Box::new(s));
    assert_eq!(requester.request(2), 2);
    drop(signals);
    assert_eq!(calls.cancels.load(Ordering::SeqCst), 1);
    assert!(calls.subscriber_dropped.load(Ordering::SeqCst));
}

/// Issue 20 item 4 for the adapters' handle: dropping a [`Completion`] cancels the adapter
/// (the endless upstream is cancelled, the sink dropped), as dropping a subscriber's
/// `Handle` does; `detach` lets the adapter run to its end without it.
#[test]
fn dropping_a_completion_cancels_the_adapter_and_detach_does_not() {
    let pool = ThreadPool::builder().pool_size(1).create().unwrap();
    let runtime = Runtime::from_spawn(pool);
    // Dropped: the endless range is cancelled and the sink is dropped (the receiver ends).
    let (p, calls) = spy(source::range(0u64..));
    let (tx, rx) = futures::channel::mpsc::channel::<u64>(1);
    let (s, done) = sink_subscriber(tx, &runtime);
    p.subscribe(Box::new(s));
    let mut rx = futures::executor::block_on_stream(rx);
    assert_eq!(rx.by_ref().take(3).collect::<Vec<_>>(), vec![0, 1, 2]);
    drop(done);
    // The receiver ends once the cancelled task has dropped its sink (read at most 10,000, so
    // that an adapter that ignores the drop fails here instead of running forever).
    let rest = rx.take(10_000).count();
    assert!(rest <= 130, "at most one poll budget more: {rest}");
    assert_eq!(
        calls.cancels.load(Ordering::SeqCst),
        1,
        "upstream cancelled"
    );
    // Detached: the adapter runs to its end (every element, then the sink closed).
    let (tx, rx) = futures::channel::mpsc::channel::<u64>(1);
    let (s, done) = sink_subscriber(tx, &runtime);
    done.detach();
    source::range(0u64..100).subscribe(Box::new(s));
    assert_eq!(
        futures::executor::block_on_stream(rx).collect::<Vec<_>>(),
        (0..100).collect::<Vec<_>>()
    );
}

/// Issue 20, item 4, for the other adapter that hands out a [`Completion`](rs_impl::compat):
/// dropping the completion of [`from_async`] cancels its task (the endless source is cancelled,
/// the async subscriber dropped); a detached one runs to the end of its stream.
#[test]
fn dropping_an_async_subscribers_completion_cancels_it_and_detach_does_not() {
    /// Counts what it gets; says when it is dropped and whether it completed.
    struct Counting {
        seen: Arc<AtomicU64>,
        completed: Arc<AtomicBool>,
        dropped: std::sync::mpsc::Sender<()>,
    }
    impl Drop for Counting {
        fn drop(&mut self) {
            let _ = self.dropped.send(());
        }
    }
    #[async_trait::async_trait]
    impl AsyncSubscriber<u64> for Counting {
        async fn on_next(&mut self, _item: u64) -> ControlFlow<()> {
            self.seen.fetch_add(1, Ordering::SeqCst);
            ControlFlow::Continue(())
        }
        async fn on_complete(&mut self) {
            self.completed.store(true, Ordering::SeqCst);
        }
    }
    let pool = ThreadPool::builder().pool_size(1).create().unwrap();
    let runtime = Runtime::from_spawn(pool);
    let counting = || {
        let (tx, rx) = std::sync::mpsc::channel();
        let seen = Arc::new(AtomicU64::new(0));
        let completed = Arc::new(AtomicBool::new(false));
        let s = Counting {
            seen: seen.clone(),
            completed: completed.clone(),
            dropped: tx,
        };
        (s, seen, completed, rx)
    };
    // Dropped: the endless range is cancelled and the subscriber dropped, without completing.
    let (s, seen, completed, dropped) = counting();
    let (p, calls) = spy(source::range(0u64..));
    let (adapter, done) = from_async(s, 4, &runtime);
    p.subscribe(Box::new(adapter));
    while seen.load(Ordering::SeqCst) < 3 {
        std::thread::yield_now();
    }
    drop(done);
    dropped
        .recv_timeout(Duration::from_secs(30))
        .expect("dropping the completion ends the adapter's task (the subscriber is dropped)");
    // The task drops the subscriber, then its stream, whose drop cancels: wait for that (a
    // liveness bound, not a timing).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while calls.cancels.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        calls.cancels.load(Ordering::SeqCst),
        1,
        "upstream cancelled, once"
    );
    assert!(
        !completed.load(Ordering::SeqCst),
        "a cancelled stream does not complete"
    );
    // Detached: every element, then on_complete.
    let (s, seen, completed, dropped) = counting();
    let (adapter, done) = from_async(s, 4, &runtime);
    done.detach();
    source::range(0u64..100).subscribe(Box::new(adapter));
    dropped
        .recv_timeout(Duration::from_secs(30))
        .expect("a detached adapter runs to the end of its stream");
    assert_eq!(seen.load(Ordering::SeqCst), 100);
    assert!(completed.load(Ordering::SeqCst));
}
